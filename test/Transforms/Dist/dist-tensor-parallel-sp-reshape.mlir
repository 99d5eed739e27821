// RUN: parc-opt %s --split-input-file --dist-tensor-parallel="tp=2 sp=true" | FileCheck %s

// TF's Tensordot under --sp: the MLP runs on [B·S, K] rows between two
// reshapes. The row's partial sums pass through the reshape back to
// [2, 4, 8] and are reduce-scattered along its sequence there; the
// residual add and a norm written from its moments (a mean over the
// features, keepdims) stay on the sequence-split stream, which is
// all-gathered only at the output.
// CHECK-LABEL: func.func @main
// CHECK: %[[X:.*]] = dist.local_part %arg0 to <@mesh, {{\[\[}}], ["tp"]]> : tensor<2x4x8xf32> -> tensor<2x2x8xf32>
// CHECK: nn.tanh
// CHECK: %[[Y:.*]] = nn.linear {{.*}} -> tensor<8x8xf32>
// CHECK: %[[Y3:.*]] = nn.reshape %[[Y]] : tensor<8x8xf32> to tensor<2x4x8xf32>
// CHECK: %[[S:.*]] = dist.reduce_scatter %[[Y3]] on @mesh mesh_axes = ["tp"] scatter_axis = 1 : tensor<2x4x8xf32> -> tensor<2x2x8xf32>
// CHECK: %[[R:.*]] = nn.add %[[S]], %[[X]] : (tensor<2x2x8xf32>, tensor<2x2x8xf32>) -> tensor<2x2x8xf32>
// CHECK: %[[M:.*]] = nn.reduce_mean %[[R]] {{.*}} : tensor<2x2x8xf32> -> tensor<2x2x1xf32>
// CHECK: %[[D:.*]] = nn.sub %[[R]], %[[M]] : (tensor<2x2x8xf32>, tensor<2x2x1xf32>) -> tensor<2x2x8xf32>
// CHECK: %[[G:.*]] = dist.all_gather %[[D]] on @mesh mesh_axes = ["tp"] gather_axis = 1 root = 0 : tensor<2x2x8xf32> -> tensor<2x4x8xf32>
// CHECK: return %[[G]]
func.func @main(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %w1 = arith.constant dense<0.5> : tensor<8x16xf32>
  %w2 = arith.constant dense<0.25> : tensor<16x8xf32>
  %flat = nn.reshape %x : tensor<2x4x8xf32> to tensor<8x8xf32>
  %h = nn.linear %flat, %w1 : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %a = nn.tanh %h : tensor<8x16xf32>
  %y = nn.linear %a, %w2 : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
  %y3 = nn.reshape %y : tensor<8x8xf32> to tensor<2x4x8xf32>
  %r = nn.add %y3, %x : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %m = nn.reduce_mean %r {axes = array<i64: 2>, keepdims = true} : tensor<2x4x8xf32> -> tensor<2x4x1xf32>
  %d = nn.sub %r, %m : (tensor<2x4x8xf32>, tensor<2x4x1xf32>) -> tensor<2x4x8xf32>
  return %d : tensor<2x4x8xf32>
}

// -----

// A row with a bias adds it once after the reduction, at the row: its sums
// do not pass through the reshape and are all-reduced where they are.
// CHECK-LABEL: func.func @main
// CHECK: nn.tanh
// CHECK: %[[Y:.*]] = nn.linear {{.*}} -> tensor<8x8xf32>
// CHECK: %[[A:.*]] = dist.all_reduce %[[Y]] on @mesh mesh_axes = ["tp"] : tensor<8x8xf32>
// CHECK: %[[B:.*]] = nn.add %[[A]], %{{.*}} : (tensor<8x8xf32>, tensor<8xf32>) -> tensor<8x8xf32>
// CHECK: nn.reshape %[[B]] : tensor<8x8xf32> to tensor<2x4x8xf32>
// CHECK-NOT: dist.reduce_scatter
func.func @main(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %w1 = arith.constant dense<0.5> : tensor<8x16xf32>
  %w2 = arith.constant dense<0.25> : tensor<16x8xf32>
  %b2 = arith.constant dense<0.1> : tensor<8xf32>
  %flat = nn.reshape %x : tensor<2x4x8xf32> to tensor<8x8xf32>
  %h = nn.linear %flat, %w1 : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %a = nn.tanh %h : tensor<8x16xf32>
  %y = nn.linear %a, %w2, %b2 : (tensor<8x16xf32>, tensor<16x8xf32>, tensor<8xf32>) -> tensor<8x8xf32>
  %y3 = nn.reshape %y : tensor<8x8xf32> to tensor<2x4x8xf32>
  %r = nn.add %y3, %x : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  return %r : tensor<2x4x8xf32>
}

// -----

// A mean over the sequence itself has no sequence rule: it reads the
// gathered stream.
// CHECK-LABEL: func.func @main
// CHECK: %[[R:.*]] = nn.add {{.*}} -> tensor<2x2x8xf32>
// CHECK: %[[G:.*]] = dist.all_gather %[[R]] on @mesh mesh_axes = ["tp"] gather_axis = 1 : tensor<2x2x8xf32> -> tensor<2x4x8xf32>
// CHECK: nn.reduce_mean %[[G]] {{.*}} : tensor<2x4x8xf32> -> tensor<2x1x8xf32>
func.func @main(%x: tensor<2x4x8xf32>) -> tensor<2x1x8xf32> {
  %w1 = arith.constant dense<0.5> : tensor<8x16xf32>
  %w2 = arith.constant dense<0.25> : tensor<16x8xf32>
  %flat = nn.reshape %x : tensor<2x4x8xf32> to tensor<8x8xf32>
  %h = nn.linear %flat, %w1 : (tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %a = nn.tanh %h : tensor<8x16xf32>
  %y = nn.linear %a, %w2 : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
  %y3 = nn.reshape %y : tensor<8x8xf32> to tensor<2x4x8xf32>
  %r = nn.add %y3, %x : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
  %m = nn.reduce_mean %r {axes = array<i64: 1>, keepdims = true} : tensor<2x4x8xf32> -> tensor<2x1x8xf32>
  return %m : tensor<2x1x8xf32>
}
