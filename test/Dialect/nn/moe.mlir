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

// At most 6 pairs per expert.
// CHECK-LABEL: func.func @capacity
func.func @capacity(%x: tensor<16x32xf32>, %l: tensor<16x8xf32>, %w1: tensor<8x32x48xf32>, %w2: tensor<8x48x32xf32>) -> tensor<16x32xf32> {
  // CHECK: nn.moe %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {capacity = 6 : i64, top_k = 2 : i64}
  %y = nn.moe %x, %l, %w1, %w2 {top_k = 2 : i64, capacity = 6 : i64} : (tensor<16x32xf32>, tensor<16x8xf32>, tensor<8x32x48xf32>, tensor<8x48x32xf32>) -> tensor<16x32xf32>
  return %y : tensor<16x32xf32>
}

// -----

// The local steps of an expert-parallel layer: 8 tokens of this rank, 4
// experts (2 per rank over 2 ranks), top-2; 32 received rows at most.
// CHECK-LABEL: func.func @ep_steps
// CHECK-SAME: (%[[L:.*]]: tensor<8x4xbf16>, %[[R:.*]]: tensor<32x16xf32>, %[[LAY:.*]]: tensor<2x2xi64>, %[[W1:.*]]: tensor<2x16x24xbf16>, %[[W2:.*]]: tensor<2x24x16xbf16>, %[[B:.*]]: tensor<16x16xf32>, %[[P:.*]]: tensor<16xi64>)
func.func @ep_steps(%l: tensor<8x4xbf16>, %rows: tensor<32x16xf32>, %layout: tensor<2x2xi64>, %w1: tensor<2x16x24xbf16>, %w2: tensor<2x24x16xbf16>, %back: tensor<16x16xf32>, %pairs: tensor<16xi64>) -> (tensor<8x2xi64>, tensor<4xi64>, tensor<32x16xf32>, tensor<8x16xbf16>) {
  // CHECK: %[[IDS:.*]], %[[W:.*]], %[[N:.*]] = nn.moe_route %[[L]] {normalize = false, top_k = 2 : i64} : tensor<8x4xbf16> -> (tensor<8x2xi64>, tensor<8x2xf32>, tensor<4xi64>)
  %ids, %w, %n = nn.moe_route %l {top_k = 2 : i64, normalize = false} : tensor<8x4xbf16> -> (tensor<8x2xi64>, tensor<8x2xf32>, tensor<4xi64>)
  // CHECK: %[[O:.*]] = nn.moe_experts %[[R]], %[[LAY]], %[[W1]], %[[W2]] {activation = #nn<moe_activation gelu>} : (tensor<32x16xf32>, tensor<2x2xi64>, tensor<2x16x24xbf16>, tensor<2x24x16xbf16>) -> tensor<32x16xf32>
  %o = nn.moe_experts %rows, %layout, %w1, %w2 {activation = #nn<moe_activation gelu>} : (tensor<32x16xf32>, tensor<2x2xi64>, tensor<2x16x24xbf16>, tensor<2x24x16xbf16>) -> tensor<32x16xf32>
  // CHECK: nn.moe_combine %[[B]], %[[P]], %[[W]] : (tensor<16x16xf32>, tensor<16xi64>, tensor<8x2xf32>) -> tensor<8x16xbf16>
  %y = nn.moe_combine %back, %pairs, %w : (tensor<16x16xf32>, tensor<16xi64>, tensor<8x2xf32>) -> tensor<8x16xbf16>
  return %ids, %n, %o, %y : tensor<8x2xi64>, tensor<4xi64>, tensor<32x16xf32>, tensor<8x16xbf16>
}
