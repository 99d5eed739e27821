// RUN: parc-opt %s --dist-tensor-parallel="tp=2 sp=true" | FileCheck %s
// RUN: parc-opt %s --dist-tensor-parallel="tp=2 sp=true explain=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN

// Megatron-SP on one GPT-2 block (batch 2, sequence 4, hidden 8, 4 heads,
// MLP 32) over 2 ranks, after the four passes: the residual stream and the
// norms hold [2, 4 / 2, 8]; an all-gather along the sequence precedes each
// column linear and the output, a reduce-scatter along it follows each row
// linear (then its bias), and the block argument is sliced without
// communication. Attention and the MLP run on 2 of 4 heads and 16 of 32
// features as under plain tensor parallelism.
// CHECK-LABEL: func.func @main
// CHECK: %[[X:.*]] = dist.local_part %arg0 to <@mesh, {{\[\[}}], ["tp"]]> : tensor<2x4x8xf32> -> tensor<2x2x8xf32>
// CHECK: %[[LN1:.*]] = nn.layer_norm %[[X]], {{.*}} -> tensor<2x2x8xf32>
// CHECK: %[[A:.*]] = dist.all_gather %[[LN1]] on @mesh mesh_axes = ["tp"] gather_axis = 1 : tensor<2x2x8xf32> -> tensor<2x4x8xf32>
// CHECK: nn.linear %[[A]], {{.*}} -> tensor<2x4x12xf32>
// CHECK: nn.attention {{.*}} -> tensor<2x2x4x2xf32>
// CHECK: %[[Y:.*]] = nn.linear {{.*}} : (tensor<2x4x4xf32>, tensor<4x8xf32>) -> tensor<2x4x8xf32>
// CHECK: %[[YS:.*]] = dist.reduce_scatter %[[Y]] on @mesh mesh_axes = ["tp"] scatter_axis = 1 : tensor<2x4x8xf32> -> tensor<2x2x8xf32>
// CHECK: %[[YB:.*]] = nn.add %[[YS]], %{{.*}} : (tensor<2x2x8xf32>, tensor<8xf32>) -> tensor<2x2x8xf32>
// CHECK: %[[H:.*]] = nn.add %[[X]], %[[YB]]
// CHECK: %[[LN2:.*]] = nn.layer_norm %[[H]], {{.*}} -> tensor<2x2x8xf32>
// CHECK: %[[M:.*]] = dist.all_gather %[[LN2]] {{.*}} gather_axis = 1 : tensor<2x2x8xf32> -> tensor<2x4x8xf32>
// CHECK: nn.linear %[[M]], {{.*}} -> tensor<2x4x16xf32>
// CHECK: %[[Z:.*]] = nn.linear {{.*}} : (tensor<2x4x16xf32>, tensor<16x8xf32>) -> tensor<2x4x8xf32>
// CHECK: %[[ZS:.*]] = dist.reduce_scatter %[[Z]] {{.*}} scatter_axis = 1 : tensor<2x4x8xf32> -> tensor<2x2x8xf32>
// CHECK: %[[ZB:.*]] = nn.add %[[ZS]], %{{.*}}
// CHECK: %[[OUT:.*]] = nn.add %[[H]], %[[ZB]] : (tensor<2x2x8xf32>, tensor<2x2x8xf32>) -> tensor<2x2x8xf32>
// CHECK: %[[G:.*]] = dist.all_gather %[[OUT]] {{.*}} gather_axis = 1 root = 0 : tensor<2x2x8xf32> -> tensor<2x4x8xf32>
// CHECK: return %[[G]]

// With explain, every resharding is named with the ONNX nodes on both sides
// and the collective it needs.
// EXPLAIN-DAG: remark: {{.*}}node 'attn/c_proj' (nn.linear) is row-parallel over 2 ranks, fed by 1 column-parallel linear(s); one reduce-scatter of 'tensor<2x4x8xf32>' follows it
// EXPLAIN-DAG: remark: {{.*}}node 'add_1' (nn.add) reads the result of node 'attn/c_proj' (nn.linear) (partial sums) as split on dim 1: reduce-scatter along dim 1
// EXPLAIN-DAG: remark: {{.*}}node 'ln_1' (nn.layer_norm) reads a graph input (replicated) as split on dim 1: local slice along dim 1 (no communication)
// EXPLAIN-DAG: remark: {{.*}}node 'attn/c_attn' (nn.linear) reads the result of node 'ln_1' (nn.layer_norm) (split on dim 1) as replicated: all-gather along dim 1
// EXPLAIN-DAG: remark: {{.*}}node 'mlp/c_fc' (nn.linear) reads the result of node 'ln_2' (nn.layer_norm) (split on dim 1) as replicated: all-gather along dim 1
// EXPLAIN-DAG: remark: {{.*}}'func.return' reads the result of node 'add_2' (nn.add) (split on dim 1) as replicated: all-gather along dim 1
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
