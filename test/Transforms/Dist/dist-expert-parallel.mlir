// RUN: parc-opt %s --split-input-file --dist-expert-parallel=ep=4 | FileCheck %s
// RUN: parc-opt %s --split-input-file --dist-expert-parallel="ep=1 capacity-factor=1.25" | FileCheck %s --check-prefix=CAP


// 8 experts over 4 ranks: each stacked weight is cut on the expert dim into
// 4 blocks of 2 over a new `ep` mesh, and the nn.moe (before) becomes its
// expert-parallel steps (after). 16 tokens: each rank routes its 4; rows
// out: 4 tokens x top-2 = 8; rows in at most 16 tokens x min(2, 2 local
// experts) = 32.
// CHECK: dist.mesh @mesh(shape = 4, axes = ["ep"])
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:.*]]: tensor<16x32xf32>, %[[L:.*]]: tensor<16x8xf32>)
// CHECK-DAG: %[[W1:.*]] = dist.local_part %{{.*}} to <@mesh, {{\[\[}}"ep"]]> : tensor<8x32x64xf32> -> tensor<2x32x64xf32>
// CHECK-DAG: %[[W2:.*]] = dist.local_part %{{.*}} to <@mesh, {{\[\[}}"ep"]]> : tensor<8x64x32xf32> -> tensor<2x64x32xf32>
// CHECK-DAG: %[[W3:.*]] = dist.local_part %{{.*}} to <@mesh, {{\[\[}}"ep"]]> : tensor<8x32x64xf32> -> tensor<2x32x64xf32>
// CHECK-NOT: nn.moe %
// CHECK: %[[XS:.*]] = dist.local_part %[[X]] to <@mesh, {{\[\[}}"ep"]]> : tensor<16x32xf32> -> tensor<4x32xf32>
// CHECK: %[[LS:.*]] = dist.local_part %[[L]] to <@mesh, {{\[\[}}"ep"]]> : tensor<16x8xf32> -> tensor<4x8xf32>
// CHECK: %[[IDS:.*]], %[[W:.*]], %[[N:.*]] = nn.moe_route %[[LS]] {top_k = 2 : i64} : tensor<4x8xf32> -> (tensor<4x2xi64>, tensor<4x2xf32>, tensor<8xi64>)
// CHECK: %[[ALL:.*]] = dist.all_gather %[[N]] on @mesh mesh_axes = ["ep"] gather_axis = 0 : tensor<8xi64> -> tensor<32xi64>
// The plan's counts feed both exchanges (swapped for the combine): no
// exchange sends counts of its own.
// CHECK: %[[ROWS:.*]], %[[SC:.*]], %[[LAY:.*]], %[[PAIRS:.*]], %[[RC:.*]] = dist.moe_permute %[[XS]], %[[IDS]], %[[ALL]] on @mesh mesh_axes = ["ep"] : tensor<4x32xf32>, tensor<4x2xi64>, tensor<32xi64> -> tensor<8x32xf32>, tensor<4xi64>, tensor<4x2xi64>, tensor<8xi64>, tensor<4xi64>
// CHECK: %[[IN:.*]] = dist.all_to_all_v %[[ROWS]], %[[SC]], %[[RC]] on @mesh mesh_axes = ["ep"] axis = 0 : tensor<8x32xf32>, tensor<4xi64>, tensor<4xi64> -> tensor<32x32xf32>
// CHECK: %[[OUT:.*]] = nn.moe_experts %[[IN]], %[[LAY]], %[[W1]], %[[W2]], %[[W3]] : (tensor<32x32xf32>, tensor<4x2xi64>, tensor<2x32x64xf32>, tensor<2x64x32xf32>, tensor<2x32x64xf32>) -> tensor<32x32xf32>
// CHECK: %[[BACK:.*]] = dist.all_to_all_v %[[OUT]], %[[RC]], %[[SC]] on @mesh mesh_axes = ["ep"] axis = 0 : tensor<32x32xf32>, tensor<4xi64>, tensor<4xi64> -> tensor<8x32xf32>
// CHECK: %[[MINE:.*]] = nn.moe_combine %[[BACK]], %[[PAIRS]], %[[W]] : (tensor<8x32xf32>, tensor<8xi64>, tensor<4x2xf32>) -> tensor<4x32xf32>
// CHECK: %[[Y:.*]] = dist.all_gather %[[MINE]] on @mesh mesh_axes = ["ep"] gather_axis = 0 : tensor<4x32xf32> -> tensor<16x32xf32>
// CHECK: return %[[Y]]

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
// existing mesh and its axis are used. Tokens [2, 8, 32] are flattened to
// [16, 32] for the split and the result reshaped back. Top-1 of 4 experts,
// one per rank: at most 16 x min(1, 1) = 16 rows in.
// CHECK: dist.mesh @tpmesh(shape = 4, axes = ["tp"])
// CHECK-NOT: dist.mesh
// CHECK-LABEL: func.func @main
// CHECK: dist.local_part %{{.*}} to <@tpmesh, {{\[\[}}"tp"]]> : tensor<4x32x64xf32> -> tensor<1x32x64xf32>
// CHECK: %[[FLAT:.*]] = nn.reshape %{{.*}} : tensor<2x8x32xf32> to tensor<16x32xf32>
// CHECK: dist.local_part %[[FLAT]] to <@tpmesh, {{\[\[}}"tp"]]> : tensor<16x32xf32> -> tensor<4x32xf32>
// CHECK: dist.all_gather %{{.*}} on @tpmesh mesh_axes = ["tp"] gather_axis = 0 : tensor<4xi64> -> tensor<16xi64>
// CHECK: dist.all_to_all_v {{.*}} on @tpmesh mesh_axes = ["tp"] axis = 0 : tensor<4x32xf32>, tensor<4xi64>, tensor<4xi64> -> tensor<16x32xf32>
// CHECK: %[[G:.*]] = dist.all_gather %{{.*}} on @tpmesh mesh_axes = ["tp"] gather_axis = 0 : tensor<4x32xf32> -> tensor<16x32xf32>
// CHECK: %[[Y:.*]] = nn.reshape %[[G]] : tensor<16x32xf32> to tensor<2x8x32xf32>
// CHECK: return %[[Y]]
dist.mesh @tpmesh(shape = 4, axes = ["tp"])
func.func @main(%x: tensor<2x8x32xf32>, %l: tensor<2x8x4xf32>) -> tensor<2x8x32xf32> {
  %w1 = arith.constant dense<0.5> : tensor<4x32x64xf32>
  %w2 = arith.constant dense<0.25> : tensor<4x64x32xf32>
  %y = nn.moe %x, %l, %w1, %w2 {top_k = 1 : i64} : (tensor<2x8x32xf32>, tensor<2x8x4xf32>, tensor<4x32x64xf32>, tensor<4x64x32xf32>) -> tensor<2x8x32xf32>
  return %y : tensor<2x8x32xf32>
}

// -----

// A bf16 model: rows travel and experts compute into f32 buffers (the
// runtime computes in f32, as the one-rank kernel does); the combined
// share is bf16 again. Top-1 of 8 experts over 4 ranks.
// CHECK-LABEL: func.func @main
// CHECK: nn.moe_route %{{.*}} {normalize = false, top_k = 1 : i64} : tensor<4x8xbf16> -> (tensor<4x1xi64>, tensor<4x1xf32>, tensor<8xi64>)
// CHECK: dist.moe_permute {{.*}} : tensor<4x32xbf16>, tensor<4x1xi64>, tensor<32xi64> -> tensor<4x32xf32>, tensor<4xi64>, tensor<4x2xi64>, tensor<4xi64>
// CHECK: nn.moe_experts {{.*}} {activation = #nn<moe_activation gelu>} : (tensor<16x32xf32>, tensor<4x2xi64>, tensor<2x32x64xbf16>, tensor<2x64x32xbf16>) -> tensor<16x32xf32>
// CHECK: nn.moe_combine {{.*}} : (tensor<4x32xf32>, tensor<4xi64>, tensor<4x1xf32>) -> tensor<4x32xbf16>
// CHECK: dist.all_gather %{{.*}} : tensor<4x32xbf16> -> tensor<16x32xbf16>
// With ep=1 and capacity factor 1.25: ceil(1.25 * 16 * 1 / 8) = 3 pairs per expert.
// CAP: nn.moe {{.*}} {activation = #nn<moe_activation gelu>, capacity = 3 : i64, normalize = false, top_k = 1 : i64}
func.func @main(%x: tensor<16x32xbf16>, %l: tensor<16x8xbf16>) -> tensor<16x32xbf16> {
  %w1 = arith.constant dense<0.5> : tensor<8x32x64xbf16>
  %w2 = arith.constant dense<0.25> : tensor<8x64x32xbf16>
  %y = nn.moe %x, %l, %w1, %w2 {top_k = 1 : i64, normalize = false, activation = #nn<moe_activation gelu>} : (tensor<16x32xbf16>, tensor<16x8xbf16>, tensor<8x32x64xbf16>, tensor<8x64x32xbf16>) -> tensor<16x32xbf16>
  return %y : tensor<16x32xbf16>
}
