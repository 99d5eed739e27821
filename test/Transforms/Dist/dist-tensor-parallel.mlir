// RUN: parc-opt %s --split-input-file --dist-tensor-parallel=tp=2 | FileCheck %s

// MLP: the first linear is column-parallel (its weight and bias keep this
// rank's half of the 16 output features), the activation runs on the local
// half, the second linear is row-parallel (half of its 16 input rows), and
// its partial sums are all-reduced before the bias is added once.
// CHECK: dist.mesh @mesh(shape = 2, axes = ["tp"])
// CHECK-LABEL: func.func @main
// CHECK-SAME: dist.tp_regions = 1
// CHECK: %[[W1:.*]] = dist.local_part %{{.*}} to <@mesh, {{\[\[}}], ["tp"]]> : tensor<8x16xf32> -> tensor<8x8xf32>
// CHECK: %[[B1:.*]] = dist.local_part %{{.*}} to <@mesh, {{\[\[}}"tp"]]> : tensor<16xf32> -> tensor<8xf32>
// CHECK: %[[H:.*]] = nn.linear %arg0, %[[W1]], %[[B1]] : (tensor<4x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK: %[[G:.*]] = nn.gelu %[[H]] : tensor<4x8xf32>
// CHECK: %[[W2:.*]] = dist.local_part %{{.*}} to <@mesh, {{\[\[}}"tp"]]> : tensor<16x8xf32> -> tensor<8x8xf32>
// CHECK: %[[P:.*]] = nn.linear %[[G]], %[[W2]] : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
// CHECK: %[[S:.*]] = dist.all_reduce %[[P]] on @mesh mesh_axes = ["tp"] : tensor<4x8xf32>
// CHECK: %[[Y:.*]] = nn.add %[[S]], %{{.*}} : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
// CHECK: return %[[Y]]
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %w1 = arith.constant dense<0.5> : tensor<8x16xf32>
  %b1 = arith.constant dense<0.1> : tensor<16xf32>
  %w2 = arith.constant dense<0.25> : tensor<16x8xf32>
  %b2 = arith.constant dense<0.2> : tensor<8xf32>
  %h = nn.linear %x, %w1, %b1 : (tensor<4x8xf32>, tensor<8x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %g = nn.gelu %h : tensor<4x16xf32>
  %y = nn.linear %g, %w2, %b2 : (tensor<4x16xf32>, tensor<16x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// A fused QKV projection that is split into q, k and v is cut blockwise
// (each rank keeps its heads of every block); attention runs on 2 of 4
// heads; the output projection is row-parallel.
// CHECK-LABEL: func.func @main
// CHECK: dist.local_part %{{.*}} to <@mesh, {{\[\[}}], ["tp"]], blocks = {{\[\[}}], [8, 8, 8]]> : tensor<8x24xf32> -> tensor<8x12xf32>
// CHECK: nn.split %{{.*}} {axis = 1 : i64} : tensor<3x12xf32> -> (tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>)
// CHECK: nn.attention {{.*}} : (tensor<1x2x3x2xf32>, tensor<1x2x3x2xf32>, tensor<1x2x3x2xf32>) -> tensor<1x2x3x2xf32>
// CHECK: ^bb0(%{{.*}}: tensor<1x2x3x3xf32>):
// CHECK: dist.all_reduce
func.func @main(%x: tensor<3x8xf32>) -> tensor<3x8xf32> {
  %wqkv = arith.constant dense<0.5> : tensor<8x24xf32>
  %wo = arith.constant dense<0.25> : tensor<8x8xf32>
  %qkv = nn.linear %x, %wqkv : (tensor<3x8xf32>, tensor<8x24xf32>) -> tensor<3x24xf32>
  %q, %k, %v = nn.split %qkv {axis = 1 : i64} : tensor<3x24xf32> -> (tensor<3x8xf32>, tensor<3x8xf32>, tensor<3x8xf32>)
  %qh = nn.reshape %q : tensor<3x8xf32> to tensor<1x3x4x2xf32>
  %kh = nn.reshape %k : tensor<3x8xf32> to tensor<1x3x4x2xf32>
  %vh = nn.reshape %v : tensor<3x8xf32> to tensor<1x3x4x2xf32>
  %qt = nn.transpose %qh {perm = array<i64: 0, 2, 1, 3>} : tensor<1x3x4x2xf32> -> tensor<1x4x3x2xf32>
  %kt = nn.transpose %kh {perm = array<i64: 0, 2, 1, 3>} : tensor<1x3x4x2xf32> -> tensor<1x4x3x2xf32>
  %vt = nn.transpose %vh {perm = array<i64: 0, 2, 1, 3>} : tensor<1x3x4x2xf32> -> tensor<1x4x3x2xf32>
  %o = nn.attention %qt, %kt, %vt {scale = 0.5 : f32} : (tensor<1x4x3x2xf32>, tensor<1x4x3x2xf32>, tensor<1x4x3x2xf32>) -> tensor<1x4x3x2xf32> {
  ^bb0(%s: tensor<1x4x3x3xf32>):
    nn.yield %s : tensor<1x4x3x3xf32>
  }
  %ot = nn.transpose %o {perm = array<i64: 0, 2, 1, 3>} : tensor<1x4x3x2xf32> -> tensor<1x3x4x2xf32>
  %of = nn.reshape %ot : tensor<1x3x4x2xf32> to tensor<3x8xf32>
  %y = nn.linear %of, %wo : (tensor<3x8xf32>, tensor<8x8xf32>) -> tensor<3x8xf32>
  return %y : tensor<3x8xf32>
}

// -----

// A normalisation over the split features has no rule: that region stays
// replicated, which is always correct. The last linear is a program output
// (like an LM head): it is split by its output features and all-gathered.
// CHECK-LABEL: func.func @main
// CHECK-SAME: dist.tp_regions = 1
// CHECK-NOT: dist.all_reduce
// CHECK: nn.layer_norm %{{.*}} : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
// CHECK: %[[W:.*]] = dist.local_part %{{.*}} to <@mesh, {{\[\[}}], ["tp"]]> : tensor<16x8xf32> -> tensor<16x4xf32>
// CHECK: %[[Y:.*]] = nn.linear %{{.*}}, %[[W]] : (tensor<4x16xf32>, tensor<16x4xf32>) -> tensor<4x4xf32>
// CHECK: %[[G:.*]] = dist.all_gather %[[Y]] on @mesh mesh_axes = ["tp"] gather_axis = 1 root = 0 : tensor<4x4xf32> -> tensor<4x8xf32>
// CHECK: return %[[G]]
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %w1 = arith.constant dense<0.5> : tensor<8x16xf32>
  %g1 = arith.constant dense<1.0> : tensor<16xf32>
  %w2 = arith.constant dense<0.25> : tensor<16x8xf32>
  %h = nn.linear %x, %w1 : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %n = nn.layer_norm %h, %g1 {axis = 1 : i64, epsilon = 1.0e-05 : f32} : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %y = nn.linear %n, %w2 : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}
