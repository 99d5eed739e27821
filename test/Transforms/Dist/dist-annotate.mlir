// RUN: parc-opt %s --dist-annotate=tp=2 | FileCheck %s --check-prefix=TP
// RUN: parc-opt %s --dist-annotate="tp=2 sp=true" | FileCheck %s --check-prefix=SP
// RUN: parc-opt %s --dist-annotate=tp=1 | FileCheck %s --check-prefix=ONE

// One GPT-2 block (hidden 8, 4 heads, MLP 32, batch 2, sequence 4) before
// dist-annotate. Megatron's seeds: the fused QKV projection and the first MLP
// linear are column-parallel (results split on their features, the last
// dim), the attention output projection and the second MLP linear are
// row-parallel (results pending sums over tp), one region each; nothing else
// is annotated yet.
// TP: dist.mesh @mesh(shape = 2, axes = ["tp"])
// TP-LABEL: func.func @main
// TP: nn.layer_norm
// TP-NOT: dist.result_shardings
// TP-SAME: -> tensor<2x4x8xf32>
// TP: nn.linear {{.*}} {dist.region = 0 : i64, dist.result_shardings = [#dist.sharding<@mesh, {{\[\[}}], [], ["tp"]]>]} : {{.*}} -> tensor<2x4x24xf32>
// TP: nn.split %{{.*}} {axis = 2 : i64} :
// TP: nn.linear {{.*}} {dist.region = 0 : i64, dist.result_shardings = [#dist.sharding<@mesh, [], partial = ["tp"]>]} : {{.*}} -> tensor<2x4x8xf32>
// TP: nn.add %{{.*}}, %{{.*}} : (
// TP: nn.linear {{.*}} {dist.region = 1 : i64, dist.result_shardings = [#dist.sharding<@mesh, {{\[\[}}], [], ["tp"]]>]} : {{.*}} -> tensor<2x4x32xf32>
// TP: nn.gelu %{{.*}} : tensor<2x4x32xf32>
// TP: nn.linear {{.*}} {dist.region = 1 : i64, dist.result_shardings = [#dist.sharding<@mesh, [], partial = ["tp"]>]} : {{.*}} -> tensor<2x4x8xf32>

// With sequence parallelism the norms are split along the sequence (dim 1
// of [batch, sequence, hidden]) and the row linears are marked for a
// reduce-scatter.
// SP-LABEL: func.func @main
// SP: nn.layer_norm {{.*}}dist.result_shardings = [#dist.sharding<@mesh, {{\[\[}}], ["tp"]]>]
// SP: nn.linear {{.*}}dist.result_shardings = [#dist.sharding<@mesh, [], partial = ["tp"]>], dist.sequence_parallel}
// SP: nn.layer_norm {{.*}}dist.result_shardings = [#dist.sharding<@mesh, {{\[\[}}], ["tp"]]>]
// SP: nn.linear {{.*}}dist.result_shardings = [#dist.sharding<@mesh, [], partial = ["tp"]>], dist.sequence_parallel}

// One rank: nothing to do.
// ONE-NOT: dist.
func.func @main(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %g1 = arith.constant dense<1.0> : tensor<8xf32>
  %b1 = arith.constant dense<0.0> : tensor<8xf32>
  %wqkv = arith.constant dense<0.5> : tensor<8x24xf32>
  %bqkv = arith.constant dense<0.1> : tensor<24xf32>
  %wo = arith.constant dense<0.25> : tensor<8x8xf32>
  %bo = arith.constant dense<0.2> : tensor<8xf32>
  %g2 = arith.constant dense<1.0> : tensor<8xf32>
  %b2 = arith.constant dense<0.0> : tensor<8xf32>
  %w1 = arith.constant dense<0.5> : tensor<8x32xf32>
  %bb1 = arith.constant dense<0.1> : tensor<32xf32>
  %w2 = arith.constant dense<0.25> : tensor<32x8xf32>
  %bb2 = arith.constant dense<0.2> : tensor<8xf32>
  %a = nn.layer_norm %x, %g1, %b1 {axis = 2 : i64, epsilon = 1.0e-05 : f32} : (tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32> loc("ln_1")
  %qkv = nn.linear %a, %wqkv, %bqkv : (tensor<2x4x8xf32>, tensor<8x24xf32>, tensor<24xf32>) -> tensor<2x4x24xf32> loc("attn/c_attn")
  %q, %k, %v = nn.split %qkv {axis = 2 : i64} : tensor<2x4x24xf32> -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>)
  %qh = nn.reshape %q : tensor<2x4x8xf32> to tensor<2x4x4x2xf32>
  %kh = nn.reshape %k : tensor<2x4x8xf32> to tensor<2x4x4x2xf32>
  %vh = nn.reshape %v : tensor<2x4x8xf32> to tensor<2x4x4x2xf32>
  %qt = nn.transpose %qh {perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x4x2xf32> -> tensor<2x4x4x2xf32>
  %kt = nn.transpose %kh {perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x4x2xf32> -> tensor<2x4x4x2xf32>
  %vt = nn.transpose %vh {perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x4x2xf32> -> tensor<2x4x4x2xf32>
  %o = nn.attention %qt, %kt, %vt {scale = 0.5 : f32} : (tensor<2x4x4x2xf32>, tensor<2x4x4x2xf32>, tensor<2x4x4x2xf32>) -> tensor<2x4x4x2xf32> {
  ^bb0(%s: tensor<2x4x4x4xf32>):
    nn.yield %s : tensor<2x4x4x4xf32>
  }
  %ot = nn.transpose %o {perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x4x2xf32> -> tensor<2x4x4x2xf32>
  %of = nn.reshape %ot : tensor<2x4x4x2xf32> to tensor<2x4x8xf32>
  %y = nn.linear %of, %wo, %bo : (tensor<2x4x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32> loc("attn/c_proj")
  %h = nn.add %x, %y : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32> loc("add_1")
  %m = nn.layer_norm %h, %g2, %b2 {axis = 2 : i64, epsilon = 1.0e-05 : f32} : (tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32> loc("ln_2")
  %f = nn.linear %m, %w1, %bb1 : (tensor<2x4x8xf32>, tensor<8x32xf32>, tensor<32xf32>) -> tensor<2x4x32xf32> loc("mlp/c_fc")
  %ga = nn.gelu %f : tensor<2x4x32xf32>
  %z = nn.linear %ga, %w2, %bb2 : (tensor<2x4x32xf32>, tensor<32x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32> loc("mlp/c_proj")
  %out = nn.add %h, %z : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32> loc("add_2")
  return %out : tensor<2x4x8xf32>
}
