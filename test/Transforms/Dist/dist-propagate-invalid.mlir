// RUN: parc-opt %s --split-input-file --dist-propagate -verify-diagnostics

// Seeded for 4 ranks, but the head split reshape makes 6 heads of the 12
// features: 4 does not divide 6 (and without the query weight's bytes,
// dist-annotate could not have added zero heads).
module {
  dist.mesh @mesh(shape = 4, axes = ["tp"])
  func.func @main(%x: tensor<3x12xf32>) -> tensor<3x12xf32> {
    %wq = arith.constant dense_resource<__elided__> : tensor<12x12xf32>
    %wo = arith.constant dense<0.25> : tensor<12x12xf32>
    %q = nn.linear %x, %wq {dist.region = 0 : i64, dist.result_shardings = [#dist.sharding<@mesh, [[], ["tp"]]>]} : (tensor<3x12xf32>, tensor<12x12xf32>) -> tensor<3x12xf32>
    // expected-note @+2 {{option 'tp' values that fit every region of this model: 2, 3, 6}}
    // expected-error @+1 {{option 'tp=4' does not fit this model: 6 heads do not divide by option 'tp=4' (use a tp that divides 6)}}
    %qh = nn.reshape %q : tensor<3x12xf32> to tensor<1x3x6x2xf32>
    %qt = nn.transpose %qh {perm = array<i64: 0, 2, 1, 3>} : tensor<1x3x6x2xf32> -> tensor<1x6x3x2xf32>
    %o = nn.attention %qt, %qt, %qt {scale = 0.5 : f32} : (tensor<1x6x3x2xf32>, tensor<1x6x3x2xf32>, tensor<1x6x3x2xf32>) -> tensor<1x6x3x2xf32> {
    ^bb0(%s: tensor<1x6x3x3xf32>):
      nn.yield %s : tensor<1x6x3x3xf32>
    }
    %ot = nn.transpose %o {perm = array<i64: 0, 2, 1, 3>} : tensor<1x6x3x2xf32> -> tensor<1x3x6x2xf32>
    %of = nn.reshape %ot : tensor<1x3x6x2xf32> to tensor<3x12xf32>
    %y = nn.linear %of, %wo {dist.region = 0 : i64, dist.result_shardings = [#dist.sharding<@mesh, [], partial = ["tp"]>]} : (tensor<3x12xf32>, tensor<12x12xf32>) -> tensor<3x12xf32>
    return %y : tensor<3x12xf32>
  }
}

// -----

// The row linear's column is seeded with another region.
module {
  dist.mesh @mesh(shape = 2, axes = ["tp"])
  func.func @main(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
    %w1 = arith.constant dense<0.5> : tensor<8x16xf32>
    %w2 = arith.constant dense<0.5> : tensor<16x8xf32>
    %h = nn.linear %x, %w1 {dist.region = 1 : i64, dist.result_shardings = [#dist.sharding<@mesh, [[], ["tp"]]>]} : (tensor<2x8xf32>, tensor<8x16xf32>) -> tensor<2x16xf32>
    %g = nn.relu %h : tensor<2x16xf32>
    // expected-error @+1 {{'nn.linear': its column linears are not seeded with its region}}
    %y = nn.linear %g, %w2 {dist.region = 0 : i64, dist.result_shardings = [#dist.sharding<@mesh, [], partial = ["tp"]>]} : (tensor<2x16xf32>, tensor<16x8xf32>) -> tensor<2x8xf32>
    return %y : tensor<2x8xf32>
  }
}
