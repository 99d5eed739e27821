// RUN: parc-opt %s --split-input-file --dist-partition -verify-diagnostics

// Producers' layouts live in dist.result_shardings, not in dist.shard.
module {
  dist.mesh @mesh(shape = 2, axes = ["tp"])
  func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
    // expected-error @+1 {{dist-partition expects only annotate_for_users shards}}
    %s = dist.shard %x to <@mesh, [["tp"]]> : tensor<4x8xf32>
    return %s : tensor<4x8xf32>
  }
}

// -----

// A constant is the same on every rank: it can be cut, not be a pending sum.
module {
  dist.mesh @mesh(shape = 2, axes = ["tp"])
  func.func @main() -> tensor<4x8xf32> {
    %c = arith.constant dense<1.0> : tensor<4x8xf32>
    // expected-error @+1 {{a constant can only be split, not #dist.sharding<@mesh, [], partial = ["tp"]>}}
    %s = dist.shard %c to <@mesh, [], partial = ["tp"]> annotate_for_users : tensor<4x8xf32>
    return %s : tensor<4x8xf32>
  }
}

// -----

// The bias of a row-parallel linear is added after the reduction; a result
// split on its features would need the bias cut too.
module {
  dist.mesh @mesh(shape = 2, axes = ["tp"])
  func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
    %w = arith.constant dense<1.0> : tensor<8x8xf32>
    %b = arith.constant dense<1.0> : tensor<8xf32>
    %y = nn.linear %x, %w, %b {dist.result_shardings = [#dist.sharding<@mesh, [], partial = ["tp"]>]} : (tensor<4x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
    // expected-error @+1 {{cannot add the bias of a row-parallel linear to its feature-split result}}
    %s = dist.shard %y to <@mesh, [[], ["tp"]]> annotate_for_users : tensor<4x8xf32>
    %r = nn.relu %s : tensor<4x8xf32>
    return %r : tensor<4x8xf32>
  }
}
