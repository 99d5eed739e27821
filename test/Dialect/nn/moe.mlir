// Round trip of nn.moe: print, parse the printed form again, check it.
// RUN: parc-opt %s --split-input-file | parc-opt --split-input-file | FileCheck %s

// SwiGLU experts (Mixtral): fc1 = gate, fc3 = up, fc2 = down.
// CHECK-LABEL: func.func @swiglu
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x32xf32>, %[[L:.*]]: tensor<2x8x4xf32>, %[[W1:.*]]: tensor<4x32x64xf32>, %[[W2:.*]]: tensor<4x64x32xf32>, %[[W3:.*]]: tensor<4x32x64xf32>)
func.func @swiglu(%x: tensor<2x8x32xf32>, %l: tensor<2x8x4xf32>, %w1: tensor<4x32x64xf32>, %w2: tensor<4x64x32xf32>, %w3: tensor<4x32x64xf32>) -> tensor<2x8x32xf32> {
  // CHECK: nn.moe %[[X]], %[[L]], %[[W1]], %[[W2]], %[[W3]] {top_k = 2 : i64} : (tensor<2x8x32xf32>, tensor<2x8x4xf32>, tensor<4x32x64xf32>, tensor<4x64x32xf32>, tensor<4x32x64xf32>) -> tensor<2x8x32xf32>
  %y = nn.moe %x, %l, %w1, %w2, %w3 {top_k = 2 : i64, normalize = true, activation = #nn<moe_activation silu>} : (tensor<2x8x32xf32>, tensor<2x8x4xf32>, tensor<4x32x64xf32>, tensor<4x64x32xf32>, tensor<4x32x64xf32>) -> tensor<2x8x32xf32>
  return %y : tensor<2x8x32xf32>
}

// -----

// Plain two-layer experts, unnormalised top-1 weights.
// CHECK-LABEL: func.func @plain
func.func @plain(%x: tensor<16x32xf32>, %l: tensor<16x8xf32>, %w1: tensor<8x32x48xf32>, %w2: tensor<8x48x32xf32>) -> tensor<16x32xf32> {
  // CHECK: nn.moe %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {activation = #nn<moe_activation relu>, normalize = false, top_k = 1 : i64} : (tensor<16x32xf32>, tensor<16x8xf32>, tensor<8x32x48xf32>, tensor<8x48x32xf32>) -> tensor<16x32xf32>
  %y = nn.moe %x, %l, %w1, %w2 {top_k = 1 : i64, normalize = false, activation = #nn<moe_activation relu>} : (tensor<16x32xf32>, tensor<16x8xf32>, tensor<8x32x48xf32>, tensor<8x48x32xf32>) -> tensor<16x32xf32>
  return %y : tensor<16x32xf32>
}

// -----

// This rank's 2 of 8 experts (split over "ep"), at most 6 pairs per expert.
// CHECK-LABEL: func.func @sharded
func.func @sharded(%x: tensor<16x32xf32>, %l: tensor<16x8xf32>, %w1: tensor<2x32x48xf32>, %w2: tensor<2x48x32xf32>) -> tensor<16x32xf32> {
  // CHECK: nn.moe %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {capacity = 6 : i64, ep_axis = "ep", expert_shards = 4 : i64, top_k = 2 : i64}
  %y = nn.moe %x, %l, %w1, %w2 {top_k = 2 : i64, capacity = 6 : i64, expert_shards = 4 : i64, ep_axis = "ep"} : (tensor<16x32xf32>, tensor<16x8xf32>, tensor<2x32x48xf32>, tensor<2x48x32xf32>) -> tensor<16x32xf32>
  return %y : tensor<16x32xf32>
}
