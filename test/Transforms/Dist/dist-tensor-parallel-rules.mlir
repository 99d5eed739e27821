// RUN: parc-opt %s --split-input-file --dist-tensor-parallel=tp=2 | FileCheck %s
// RUN: parc-opt %s --split-input-file --dist-tensor-parallel="tp=2 explain=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=EXPLAIN

// Softmax and reductions over dims other than the split one keep it: the
// column output [2, 4, 16] is split on its 16 features (8 per rank); a
// softmax over the sequence (dim 1) and a mean over it (keepdims, [2, 1, 16])
// stay split on dim 2, and a sum over the sequence without keepdims moves
// the split to dim 1 of [2, 16].
// CHECK-LABEL: func.func @main
// CHECK: nn.linear {{.*}} -> tensor<2x4x8xf32>
// CHECK: nn.softmax {{.*}} : tensor<2x4x8xf32>
// CHECK: nn.reduce_mean {{.*}} -> tensor<2x1x8xf32>
// CHECK: nn.mul {{.*}} -> tensor<2x4x8xf32>
// CHECK: nn.linear {{.*}} : (tensor<2x4x8xf32>, tensor<8x8xf32>) -> tensor<2x4x8xf32>
// CHECK: dist.all_reduce
func.func @main(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %w1 = arith.constant dense<0.5> : tensor<8x16xf32>
  %w2 = arith.constant dense<0.25> : tensor<16x8xf32>
  %h = nn.linear %x, %w1 : (tensor<2x4x8xf32>, tensor<8x16xf32>) -> tensor<2x4x16xf32>
  %s = nn.softmax %h {axis = 1 : i64} : tensor<2x4x16xf32>
  %m = nn.reduce_mean %s {axes = array<i64: 1>} : tensor<2x4x16xf32> -> tensor<2x1x16xf32>
  %g = nn.mul %s, %m : (tensor<2x4x16xf32>, tensor<2x1x16xf32>) -> tensor<2x4x16xf32>
  %y = nn.linear %g, %w2 : (tensor<2x4x16xf32>, tensor<16x8xf32>) -> tensor<2x4x8xf32>
  return %y : tensor<2x4x8xf32>
}

// -----

// CHECK-LABEL: func.func @main
// CHECK: nn.reduce_sum {{.*}} -> tensor<2x8xf32>
// CHECK: nn.linear {{.*}} : (tensor<2x8xf32>, tensor<8x8xf32>) -> tensor<2x8xf32>
// CHECK: dist.all_reduce
func.func @main(%x: tensor<2x4x8xf32>) -> tensor<2x8xf32> {
  %w1 = arith.constant dense<0.5> : tensor<8x16xf32>
  %w2 = arith.constant dense<0.25> : tensor<16x8xf32>
  %h = nn.linear %x, %w1 : (tensor<2x4x8xf32>, tensor<8x16xf32>) -> tensor<2x4x16xf32>
  %r = nn.reduce_sum %h {axes = array<i64: 1>, keepdims = false} : tensor<2x4x16xf32> -> tensor<2x16xf32>
  %y = nn.linear %r, %w2 : (tensor<2x16xf32>, tensor<16x8xf32>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// A softmax or a reduction along the split features has no split form: the
// region stays replicated, and explain says why.
// CHECK-LABEL: func.func @main
// CHECK-NOT: dist.all_reduce
// CHECK: nn.softmax {{.*}} : tensor<2x4x16xf32>
// EXPLAIN: remark: 'nn.softmax' stays replicated under tensor parallelism: it normalises along the split dim
// EXPLAIN: remark: 'nn.reduce_max' stays replicated under tensor parallelism: it reduces along the split dim
func.func @main(%x: tensor<2x4x8xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>) {
  %w1 = arith.constant dense<0.5> : tensor<8x16xf32>
  %w2 = arith.constant dense<0.25> : tensor<16x8xf32>
  %h = nn.linear %x, %w1 : (tensor<2x4x8xf32>, tensor<8x16xf32>) -> tensor<2x4x16xf32>
  %s = nn.softmax %h {axis = 2 : i64} : tensor<2x4x16xf32>
  %y = nn.linear %s, %w2 : (tensor<2x4x16xf32>, tensor<16x8xf32>) -> tensor<2x4x8xf32>
  %h2 = nn.linear %x, %w1 : (tensor<2x4x8xf32>, tensor<8x16xf32>) -> tensor<2x4x16xf32>
  %m = nn.reduce_max %h2 {axes = array<i64: 2>} : tensor<2x4x16xf32> -> tensor<2x4x1xf32>
  %e = nn.sub %h2, %m : (tensor<2x4x16xf32>, tensor<2x4x1xf32>) -> tensor<2x4x16xf32>
  %z = nn.linear %e, %w2 : (tensor<2x4x16xf32>, tensor<16x8xf32>) -> tensor<2x4x8xf32>
  return %y, %z : tensor<2x4x8xf32>, tensor<2x4x8xf32>
}
