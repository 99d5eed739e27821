// RUN: parc-opt %s --split-input-file --dist-expert-parallel=ep=4 | FileCheck %s
// RUN: parc-opt %s --split-input-file --dist-expert-parallel="ep=1 capacity-factor=1.25" | FileCheck %s --check-prefix=CAP

// 8 experts over 4 ranks: each stacked weight is cut on the expert dim into
// 4 blocks of 2 over a new `ep` mesh, and the op says so.
// CHECK: dist.mesh @mesh(shape = 4, axes = ["ep"])
// CHECK-LABEL: func.func @main
// CHECK-DAG: %[[W1:.*]] = dist.local_part %{{.*}} dim = 0 parts = 4 axis = "ep" : tensor<8x32x64xf32> -> tensor<2x32x64xf32>
// CHECK-DAG: %[[W2:.*]] = dist.local_part %{{.*}} dim = 0 parts = 4 axis = "ep" : tensor<8x64x32xf32> -> tensor<2x64x32xf32>
// CHECK-DAG: %[[W3:.*]] = dist.local_part %{{.*}} dim = 0 parts = 4 axis = "ep" : tensor<8x32x64xf32> -> tensor<2x32x64xf32>
// CHECK: nn.moe %{{.*}}, %{{.*}}, %[[W1]], %[[W2]], %[[W3]] {ep_axis = "ep", expert_shards = 4 : i64, top_k = 2 : i64} : (tensor<16x32xf32>, tensor<16x8xf32>, tensor<2x32x64xf32>, tensor<2x64x32xf32>, tensor<2x32x64xf32>) -> tensor<16x32xf32>
// A capacity factor of 1.25 gives ceil(1.25 * 16 tokens * 2 / 8 experts) = 5
// pairs per expert; with ep=1 nothing is split.
// CAP-NOT: dist.mesh
// CAP-NOT: dist.local_part
// CAP: nn.moe {{.*}} {capacity = 5 : i64, top_k = 2 : i64}
func.func @main(%x: tensor<16x32xf32>, %l: tensor<16x8xf32>) -> tensor<16x32xf32> {
  %w1 = arith.constant dense<0.5> : tensor<8x32x64xf32>
  %w2 = arith.constant dense<0.25> : tensor<8x64x32xf32>
  %w3 = arith.constant dense<0.125> : tensor<8x32x64xf32>
  %y = nn.moe %x, %l, %w1, %w2, %w3 {top_k = 2 : i64} : (tensor<16x32xf32>, tensor<16x8xf32>, tensor<8x32x64xf32>, tensor<8x64x32xf32>, tensor<8x32x64xf32>) -> tensor<16x32xf32>
  return %y : tensor<16x32xf32>
}

// -----

// Under tensor parallelism the experts are split over the same ranks: the
// existing mesh's axis is used.
// CHECK: dist.mesh @mesh(shape = 4, axes = ["tp"])
// CHECK-NOT: dist.mesh
// CHECK: dist.local_part %{{.*}} dim = 0 parts = 4 axis = "tp"
// CHECK: nn.moe {{.*}}ep_axis = "tp", expert_shards = 4 : i64
dist.mesh @mesh(shape = 4, axes = ["tp"])
func.func @main(%x: tensor<16x32xf32>, %l: tensor<16x4xf32>) -> tensor<16x32xf32> {
  %w1 = arith.constant dense<0.5> : tensor<4x32x64xf32>
  %w2 = arith.constant dense<0.25> : tensor<4x64x32xf32>
  %y = nn.moe %x, %l, %w1, %w2 {top_k = 1 : i64} : (tensor<16x32xf32>, tensor<16x4xf32>, tensor<4x32x64xf32>, tensor<4x64x32xf32>) -> tensor<16x32xf32>
  return %y : tensor<16x32xf32>
}
