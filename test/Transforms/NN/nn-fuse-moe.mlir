// RUN: parc-opt %s --split-input-file --nn-fuse-moe | FileCheck %s

// Mixtral's form: renormalised top-k scattered into a dense routing
// tensor, SwiGLU experts, each scaled by its gathered column, summed. The
// experts' weights are stacked in expert order (the blobs below).
// CHECK-LABEL: func.func @scatter_swiglu
// CHECK-SAME: (%[[X:.*]]: tensor<3x2xf32>, %[[L:.*]]: tensor<3x2xf32>)
// CHECK: %[[W1:.*]] = arith.constant dense_resource<[[W1R:.*]]> : tensor<2x2x2xf32>
// CHECK: %[[W2:.*]] = arith.constant dense_resource<[[W2R:.*]]> : tensor<2x2x2xf32>
// CHECK: %[[W3:.*]] = arith.constant dense_resource<[[W3R:.*]]> : tensor<2x2x2xf32>
// CHECK: %[[Y:.*]] = nn.moe %[[X]], %[[L]], %[[W1]], %[[W2]], %[[W3]] {top_k = 1 : i64} : (tensor<3x2xf32>, tensor<3x2xf32>, tensor<2x2x2xf32>, tensor<2x2x2xf32>, tensor<2x2x2xf32>) -> tensor<3x2xf32>
// CHECK-NOT: nn.scatter_elements
// CHECK-NOT: nn.linear
// CHECK: return %[[Y]]
// f32 1, 2, 3, 4 (expert 0's w1), then 13, 14, 15, 16 (expert 1's).
// CHECK: [[W1R]]: "0x080000000000803F00000040000040400000804000005041000060410000704100008041"
// w2: 9..12, then 21..24.
// CHECK: [[W2R]]: "0x08000000000010410000204100003041000040410000A8410000B0410000B8410000C041"
// w3: 5..8, then 17..20.
// CHECK: [[W3R]]: "0x080000000000A0400000C0400000E040000000410000884100009041000098410000A041"
func.func @scatter_swiglu(%x: tensor<3x2xf32>, %logits: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %zeros = arith.constant dense<0.0> : tensor<3x2xf32>
  %zero = arith.constant dense<0.0> : tensor<f32>
  %e0 = arith.constant dense<0> : tensor<i64>
  %e1 = arith.constant dense<1> : tensor<i64>
  %w10 = arith.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %w30 = arith.constant dense<[[5.0, 6.0], [7.0, 8.0]]> : tensor<2x2xf32>
  %w20 = arith.constant dense<[[9.0, 10.0], [11.0, 12.0]]> : tensor<2x2xf32>
  %w11 = arith.constant dense<[[13.0, 14.0], [15.0, 16.0]]> : tensor<2x2xf32>
  %w31 = arith.constant dense<[[17.0, 18.0], [19.0, 20.0]]> : tensor<2x2xf32>
  %w21 = arith.constant dense<[[21.0, 22.0], [23.0, 24.0]]> : tensor<2x2xf32>
  %p = nn.softmax %logits {axis = 1 : i64} : tensor<3x2xf32>
  %v, %i = nn.topk %p {axis = 1 : i64, k = 1 : i64} : tensor<3x2xf32> -> (tensor<3x1xf32>, tensor<3x1xi64>)
  %s = nn.reduce_sum %v {axes = array<i64: 1>} : tensor<3x1xf32> -> tensor<3x1xf32>
  %w = nn.div %v, %s : (tensor<3x1xf32>, tensor<3x1xf32>) -> tensor<3x1xf32>
  %r = nn.scatter_elements %zeros, %i, %w {axis = 1 : i64} : (tensor<3x2xf32>, tensor<3x1xi64>, tensor<3x1xf32>) -> tensor<3x2xf32>
  %a0 = nn.linear %x, %w10 : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %g0 = nn.silu %a0 : tensor<3x2xf32>
  %u0 = nn.linear %x, %w30 : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %h0 = nn.mul %g0, %u0 : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  %y0 = nn.linear %h0, %w20 : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %c0 = nn.gather %r, %e0 {axis = 1 : i64} : (tensor<3x2xf32>, tensor<i64>) -> tensor<3xf32>
  %cr0 = nn.reshape %c0 : tensor<3xf32> to tensor<3x1xf32>
  %m0 = nn.mul %y0, %cr0 : (tensor<3x2xf32>, tensor<3x1xf32>) -> tensor<3x2xf32>
  %a1 = nn.linear %x, %w11 : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %g1 = nn.silu %a1 : tensor<3x2xf32>
  %u1 = nn.linear %x, %w31 : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %h1 = nn.mul %u1, %g1 : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  %y1 = nn.linear %h1, %w21 : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %c1 = nn.gather %r, %e1 {axis = 1 : i64} : (tensor<3x2xf32>, tensor<i64>) -> tensor<3xf32>
  %cr1 = nn.reshape %c1 : tensor<3xf32> to tensor<3x1xf32>
  %m1 = nn.mul %cr1, %y1 : (tensor<3x1xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  %sum = nn.add %m0, %m1 : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  return %sum : tensor<3x2xf32>
}

// -----

// Per-expert Equal/Where masks over raw top-1 probabilities, plain ReLU
// experts whose second weight is stored [out, in].
// CHECK-LABEL: func.func @where_plain
// CHECK: arith.constant dense_resource
// CHECK-NEXT: %[[W2:.*]] = arith.constant dense_resource<[[W2R:.*]]> : tensor<2x2x2xf32>
// CHECK: nn.moe %{{.*}}, %{{.*}}, %{{.*}}, %[[W2]] {activation = #nn<moe_activation relu>, normalize = false, top_k = 1 : i64} : (tensor<3x2xf32>, tensor<3x2xf32>, tensor<2x2x2xf32>, tensor<2x2x2xf32>) -> tensor<3x2xf32>
// CHECK-NOT: nn.where
// [out, in] weights are transposed as they are stacked: 9, 11, 10, 12.
// CHECK: [[W2R]]: "0x08000000000010410000304100002041000040410000A8410000B8410000B0410000C041"
func.func @where_plain(%x: tensor<3x2xf32>, %logits: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %zeros = arith.constant dense<0.0> : tensor<3x2xf32>
  %zero = arith.constant dense<0.0> : tensor<f32>
  %e0 = arith.constant dense<0> : tensor<i64>
  %e1 = arith.constant dense<1> : tensor<i64>
  %w10 = arith.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %w30 = arith.constant dense<[[5.0, 6.0], [7.0, 8.0]]> : tensor<2x2xf32>
  %w20 = arith.constant dense<[[9.0, 10.0], [11.0, 12.0]]> : tensor<2x2xf32>
  %w11 = arith.constant dense<[[13.0, 14.0], [15.0, 16.0]]> : tensor<2x2xf32>
  %w31 = arith.constant dense<[[17.0, 18.0], [19.0, 20.0]]> : tensor<2x2xf32>
  %w21 = arith.constant dense<[[21.0, 22.0], [23.0, 24.0]]> : tensor<2x2xf32>
  %p = nn.softmax %logits {axis = 1 : i64} : tensor<3x2xf32>
  %w, %i = nn.topk %p {axis = 1 : i64, k = 1 : i64} : tensor<3x2xf32> -> (tensor<3x1xf32>, tensor<3x1xi64>)
  %a0 = nn.linear %x, %w10 : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %g0 = nn.relu %a0 : tensor<3x2xf32>
  %y0 = nn.linear %g0, %w20 {transpose_weight = true} : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %q0 = nn.equal %i, %e0 : (tensor<3x1xi64>, tensor<i64>) -> tensor<3x1xi1>
  %k0 = nn.where %q0, %w, %zero : (tensor<3x1xi1>, tensor<3x1xf32>, tensor<f32>) -> tensor<3x1xf32>
  %cr0 = nn.reduce_sum %k0 {axes = array<i64: 1>} : tensor<3x1xf32> -> tensor<3x1xf32>
  %m0 = nn.mul %y0, %cr0 : (tensor<3x2xf32>, tensor<3x1xf32>) -> tensor<3x2xf32>
  %a1 = nn.linear %x, %w11 : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %g1 = nn.relu %a1 : tensor<3x2xf32>
  %y1 = nn.linear %g1, %w21 {transpose_weight = true} : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %q1 = nn.equal %i, %e1 : (tensor<3x1xi64>, tensor<i64>) -> tensor<3x1xi1>
  %k1 = nn.where %q1, %w, %zero : (tensor<3x1xi1>, tensor<3x1xf32>, tensor<f32>) -> tensor<3x1xf32>
  %cr1 = nn.reduce_sum %k1 {axes = array<i64: 1>} : tensor<3x1xf32> -> tensor<3x1xf32>
  %m1 = nn.mul %y1, %cr1 : (tensor<3x2xf32>, tensor<3x1xf32>) -> tensor<3x2xf32>
  %sum = nn.add %m0, %m1 : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  return %sum : tensor<3x2xf32>
}

// -----

// Top-k of the logits, then a softmax of the k values: renormalised.
// CHECK-LABEL: func.func @topk_softmax
// CHECK: nn.moe %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {top_k = 1 : i64}
// CHECK-NOT: nn.topk
func.func @topk_softmax(%x: tensor<3x2xf32>, %logits: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %zeros = arith.constant dense<0.0> : tensor<3x2xf32>
  %zero = arith.constant dense<0.0> : tensor<f32>
  %e0 = arith.constant dense<0> : tensor<i64>
  %e1 = arith.constant dense<1> : tensor<i64>
  %w10 = arith.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %w30 = arith.constant dense<[[5.0, 6.0], [7.0, 8.0]]> : tensor<2x2xf32>
  %w20 = arith.constant dense<[[9.0, 10.0], [11.0, 12.0]]> : tensor<2x2xf32>
  %w11 = arith.constant dense<[[13.0, 14.0], [15.0, 16.0]]> : tensor<2x2xf32>
  %w31 = arith.constant dense<[[17.0, 18.0], [19.0, 20.0]]> : tensor<2x2xf32>
  %w21 = arith.constant dense<[[21.0, 22.0], [23.0, 24.0]]> : tensor<2x2xf32>
  %v, %i = nn.topk %logits {axis = 1 : i64, k = 1 : i64} : tensor<3x2xf32> -> (tensor<3x1xf32>, tensor<3x1xi64>)
  %w = nn.softmax %v {axis = 1 : i64} : tensor<3x1xf32>
  %a0 = nn.linear %x, %w10 : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %g0 = nn.silu %a0 : tensor<3x2xf32>
  %u0 = nn.linear %x, %w30 : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %h0 = nn.mul %g0, %u0 : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  %y0 = nn.linear %h0, %w20 : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %q0 = nn.equal %i, %e0 : (tensor<3x1xi64>, tensor<i64>) -> tensor<3x1xi1>
  %k0 = nn.where %q0, %w, %zero : (tensor<3x1xi1>, tensor<3x1xf32>, tensor<f32>) -> tensor<3x1xf32>
  %cr0 = nn.reduce_sum %k0 {axes = array<i64: 1>} : tensor<3x1xf32> -> tensor<3x1xf32>
  %m0 = nn.mul %y0, %cr0 : (tensor<3x2xf32>, tensor<3x1xf32>) -> tensor<3x2xf32>
  %a1 = nn.linear %x, %w11 : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %g1 = nn.silu %a1 : tensor<3x2xf32>
  %u1 = nn.linear %x, %w31 : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %h1 = nn.mul %g1, %u1 : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  %y1 = nn.linear %h1, %w21 : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %q1 = nn.equal %i, %e1 : (tensor<3x1xi64>, tensor<i64>) -> tensor<3x1xi1>
  %k1 = nn.where %q1, %w, %zero : (tensor<3x1xi1>, tensor<3x1xf32>, tensor<f32>) -> tensor<3x1xf32>
  %cr1 = nn.reduce_sum %k1 {axes = array<i64: 1>} : tensor<3x1xf32> -> tensor<3x1xf32>
  %m1 = nn.mul %y1, %cr1 : (tensor<3x2xf32>, tensor<3x1xf32>) -> tensor<3x2xf32>
  %sum = nn.add %m0, %m1 : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  return %sum : tensor<3x2xf32>
}

// -----

// Both products read expert 0's column: not an MoE, left alone.
// CHECK-LABEL: func.func @same_column
// CHECK-NOT: nn.moe
// CHECK: nn.scatter_elements
func.func @same_column(%x: tensor<3x2xf32>, %logits: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %zeros = arith.constant dense<0.0> : tensor<3x2xf32>
  %zero = arith.constant dense<0.0> : tensor<f32>
  %e0 = arith.constant dense<0> : tensor<i64>
  %e1 = arith.constant dense<1> : tensor<i64>
  %w10 = arith.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %w30 = arith.constant dense<[[5.0, 6.0], [7.0, 8.0]]> : tensor<2x2xf32>
  %w20 = arith.constant dense<[[9.0, 10.0], [11.0, 12.0]]> : tensor<2x2xf32>
  %w11 = arith.constant dense<[[13.0, 14.0], [15.0, 16.0]]> : tensor<2x2xf32>
  %w31 = arith.constant dense<[[17.0, 18.0], [19.0, 20.0]]> : tensor<2x2xf32>
  %w21 = arith.constant dense<[[21.0, 22.0], [23.0, 24.0]]> : tensor<2x2xf32>
  %p = nn.softmax %logits {axis = 1 : i64} : tensor<3x2xf32>
  %v, %i = nn.topk %p {axis = 1 : i64, k = 1 : i64} : tensor<3x2xf32> -> (tensor<3x1xf32>, tensor<3x1xi64>)
  %s = nn.reduce_sum %v {axes = array<i64: 1>} : tensor<3x1xf32> -> tensor<3x1xf32>
  %w = nn.div %v, %s : (tensor<3x1xf32>, tensor<3x1xf32>) -> tensor<3x1xf32>
  %r = nn.scatter_elements %zeros, %i, %w {axis = 1 : i64} : (tensor<3x2xf32>, tensor<3x1xi64>, tensor<3x1xf32>) -> tensor<3x2xf32>
  %a0 = nn.linear %x, %w10 : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %g0 = nn.silu %a0 : tensor<3x2xf32>
  %u0 = nn.linear %x, %w30 : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %h0 = nn.mul %g0, %u0 : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  %y0 = nn.linear %h0, %w20 : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %c0 = nn.gather %r, %e0 {axis = 1 : i64} : (tensor<3x2xf32>, tensor<i64>) -> tensor<3xf32>
  %cr0 = nn.reshape %c0 : tensor<3xf32> to tensor<3x1xf32>
  %m0 = nn.mul %y0, %cr0 : (tensor<3x2xf32>, tensor<3x1xf32>) -> tensor<3x2xf32>
  %a1 = nn.linear %x, %w11 : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %g1 = nn.silu %a1 : tensor<3x2xf32>
  %u1 = nn.linear %x, %w31 : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %h1 = nn.mul %g1, %u1 : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  %y1 = nn.linear %h1, %w21 : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %c1 = nn.gather %r, %e0 {axis = 1 : i64} : (tensor<3x2xf32>, tensor<i64>) -> tensor<3xf32>
  %cr1 = nn.reshape %c1 : tensor<3xf32> to tensor<3x1xf32>
  %m1 = nn.mul %y1, %cr1 : (tensor<3x2xf32>, tensor<3x1xf32>) -> tensor<3x2xf32>
  %sum = nn.add %m0, %m1 : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  return %sum : tensor<3x2xf32>
}

// -----

// The scaled experts are multiplied, not summed: left alone.
// CHECK-LABEL: func.func @not_summed
// CHECK-NOT: nn.moe
// CHECK: nn.topk
func.func @not_summed(%x: tensor<3x2xf32>, %logits: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %zeros = arith.constant dense<0.0> : tensor<3x2xf32>
  %zero = arith.constant dense<0.0> : tensor<f32>
  %e0 = arith.constant dense<0> : tensor<i64>
  %e1 = arith.constant dense<1> : tensor<i64>
  %w10 = arith.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %w30 = arith.constant dense<[[5.0, 6.0], [7.0, 8.0]]> : tensor<2x2xf32>
  %w20 = arith.constant dense<[[9.0, 10.0], [11.0, 12.0]]> : tensor<2x2xf32>
  %w11 = arith.constant dense<[[13.0, 14.0], [15.0, 16.0]]> : tensor<2x2xf32>
  %w31 = arith.constant dense<[[17.0, 18.0], [19.0, 20.0]]> : tensor<2x2xf32>
  %w21 = arith.constant dense<[[21.0, 22.0], [23.0, 24.0]]> : tensor<2x2xf32>
  %p = nn.softmax %logits {axis = 1 : i64} : tensor<3x2xf32>
  %v, %i = nn.topk %p {axis = 1 : i64, k = 1 : i64} : tensor<3x2xf32> -> (tensor<3x1xf32>, tensor<3x1xi64>)
  %s = nn.reduce_sum %v {axes = array<i64: 1>} : tensor<3x1xf32> -> tensor<3x1xf32>
  %w = nn.div %v, %s : (tensor<3x1xf32>, tensor<3x1xf32>) -> tensor<3x1xf32>
  %r = nn.scatter_elements %zeros, %i, %w {axis = 1 : i64} : (tensor<3x2xf32>, tensor<3x1xi64>, tensor<3x1xf32>) -> tensor<3x2xf32>
  %a0 = nn.linear %x, %w10 : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %g0 = nn.silu %a0 : tensor<3x2xf32>
  %u0 = nn.linear %x, %w30 : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %h0 = nn.mul %g0, %u0 : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  %y0 = nn.linear %h0, %w20 : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %c0 = nn.gather %r, %e0 {axis = 1 : i64} : (tensor<3x2xf32>, tensor<i64>) -> tensor<3xf32>
  %cr0 = nn.reshape %c0 : tensor<3xf32> to tensor<3x1xf32>
  %m0 = nn.mul %y0, %cr0 : (tensor<3x2xf32>, tensor<3x1xf32>) -> tensor<3x2xf32>
  %a1 = nn.linear %x, %w11 : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %g1 = nn.silu %a1 : tensor<3x2xf32>
  %u1 = nn.linear %x, %w31 : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %h1 = nn.mul %g1, %u1 : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  %y1 = nn.linear %h1, %w21 : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %c1 = nn.gather %r, %e1 {axis = 1 : i64} : (tensor<3x2xf32>, tensor<i64>) -> tensor<3xf32>
  %cr1 = nn.reshape %c1 : tensor<3xf32> to tensor<3x1xf32>
  %m1 = nn.mul %y1, %cr1 : (tensor<3x2xf32>, tensor<3x1xf32>) -> tensor<3x2xf32>
  %sum = nn.mul %m0, %m1 : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  return %sum : tensor<3x2xf32>
}

// -----

// An expert with a bias is not the bias-free MLP nn.moe computes.
// CHECK-LABEL: func.func @expert_bias
// CHECK-NOT: nn.moe
func.func @expert_bias(%x: tensor<3x2xf32>, %logits: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %zeros = arith.constant dense<0.0> : tensor<3x2xf32>
  %zero = arith.constant dense<0.0> : tensor<f32>
  %e0 = arith.constant dense<0> : tensor<i64>
  %e1 = arith.constant dense<1> : tensor<i64>
  %w10 = arith.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %w30 = arith.constant dense<[[5.0, 6.0], [7.0, 8.0]]> : tensor<2x2xf32>
  %w20 = arith.constant dense<[[9.0, 10.0], [11.0, 12.0]]> : tensor<2x2xf32>
  %w11 = arith.constant dense<[[13.0, 14.0], [15.0, 16.0]]> : tensor<2x2xf32>
  %w31 = arith.constant dense<[[17.0, 18.0], [19.0, 20.0]]> : tensor<2x2xf32>
  %w21 = arith.constant dense<[[21.0, 22.0], [23.0, 24.0]]> : tensor<2x2xf32>
  %bias = arith.constant dense<[0.5, 0.25]> : tensor<2xf32>
  %p = nn.softmax %logits {axis = 1 : i64} : tensor<3x2xf32>
  %v, %i = nn.topk %p {axis = 1 : i64, k = 1 : i64} : tensor<3x2xf32> -> (tensor<3x1xf32>, tensor<3x1xi64>)
  %s = nn.reduce_sum %v {axes = array<i64: 1>} : tensor<3x1xf32> -> tensor<3x1xf32>
  %w = nn.div %v, %s : (tensor<3x1xf32>, tensor<3x1xf32>) -> tensor<3x1xf32>
  %r = nn.scatter_elements %zeros, %i, %w {axis = 1 : i64} : (tensor<3x2xf32>, tensor<3x1xi64>, tensor<3x1xf32>) -> tensor<3x2xf32>
  %a0 = nn.linear %x, %w10 : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %g0 = nn.silu %a0 : tensor<3x2xf32>
  %u0 = nn.linear %x, %w30 : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %h0 = nn.mul %g0, %u0 : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  %y0 = nn.linear %h0, %w20, %bias : (tensor<3x2xf32>, tensor<2x2xf32>, tensor<2xf32>) -> tensor<3x2xf32>
  %c0 = nn.gather %r, %e0 {axis = 1 : i64} : (tensor<3x2xf32>, tensor<i64>) -> tensor<3xf32>
  %cr0 = nn.reshape %c0 : tensor<3xf32> to tensor<3x1xf32>
  %m0 = nn.mul %y0, %cr0 : (tensor<3x2xf32>, tensor<3x1xf32>) -> tensor<3x2xf32>
  %a1 = nn.linear %x, %w11 : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %g1 = nn.silu %a1 : tensor<3x2xf32>
  %u1 = nn.linear %x, %w31 : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %h1 = nn.mul %g1, %u1 : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  %y1 = nn.linear %h1, %w21 : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %c1 = nn.gather %r, %e1 {axis = 1 : i64} : (tensor<3x2xf32>, tensor<i64>) -> tensor<3xf32>
  %cr1 = nn.reshape %c1 : tensor<3xf32> to tensor<3x1xf32>
  %m1 = nn.mul %y1, %cr1 : (tensor<3x2xf32>, tensor<3x1xf32>) -> tensor<3x2xf32>
  %sum = nn.add %m0, %m1 : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  return %sum : tensor<3x2xf32>
}

// -----

// torch's F.one_hot form: sum_k(cast(OneHot(indices)) * weights[..., None])
// as the importer spells OneHot, over raw top-1 probabilities.
// CHECK-LABEL: func.func @one_hot
// CHECK: nn.moe %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} {normalize = false, top_k = 1 : i64}
// CHECK-NOT: nn.reduce_sum
func.func @one_hot(%x: tensor<3x2xf32>, %logits: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %e0 = arith.constant dense<0> : tensor<i64>
  %e1 = arith.constant dense<1> : tensor<i64>
  %w10 = arith.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
  %w30 = arith.constant dense<[[5.0, 6.0], [7.0, 8.0]]> : tensor<2x2xf32>
  %w20 = arith.constant dense<[[9.0, 10.0], [11.0, 12.0]]> : tensor<2x2xf32>
  %w11 = arith.constant dense<[[13.0, 14.0], [15.0, 16.0]]> : tensor<2x2xf32>
  %w31 = arith.constant dense<[[17.0, 18.0], [19.0, 20.0]]> : tensor<2x2xf32>
  %w21 = arith.constant dense<[[21.0, 22.0], [23.0, 24.0]]> : tensor<2x2xf32>
  %p = nn.softmax %logits {axis = 1 : i64} : tensor<3x2xf32>
  %v, %i = nn.topk %p {axis = 1 : i64, k = 1 : i64} : tensor<3x2xf32> -> (tensor<3x1xf32>, tensor<3x1xi64>)
  %ri = nn.reshape %i : tensor<3x1xi64> to tensor<3x1x1xi64>
  %pos = arith.constant dense<[0, 1]> : tensor<2xi64>
  %neg = arith.constant dense<[-2, -1]> : tensor<2xi64>
  %eqp = nn.equal %ri, %pos : (tensor<3x1x1xi64>, tensor<2xi64>) -> tensor<3x1x2xi1>
  %eqn = nn.equal %ri, %neg : (tensor<3x1x1xi64>, tensor<2xi64>) -> tensor<3x1x2xi1>
  %hit = nn.or %eqp, %eqn : (tensor<3x1x2xi1>, tensor<3x1x2xi1>) -> tensor<3x1x2xi1>
  %on = arith.constant dense<1> : tensor<i64>
  %off = arith.constant dense<0> : tensor<i64>
  %oh = nn.where %hit, %on, %off : (tensor<3x1x2xi1>, tensor<i64>, tensor<i64>) -> tensor<3x1x2xi64>
  %ohf = nn.cast %oh : tensor<3x1x2xi64> to tensor<3x1x2xf32>
  %wu = nn.reshape %v : tensor<3x1xf32> to tensor<3x1x1xf32>
  %prod = nn.mul %ohf, %wu : (tensor<3x1x2xf32>, tensor<3x1x1xf32>) -> tensor<3x1x2xf32>
  %r = nn.reduce_sum %prod {axes = array<i64: 1>, keepdims = false} : tensor<3x1x2xf32> -> tensor<3x2xf32>
  %a0 = nn.linear %x, %w10 : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %g0 = nn.silu %a0 : tensor<3x2xf32>
  %u0 = nn.linear %x, %w30 : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %h0 = nn.mul %g0, %u0 : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  %y0 = nn.linear %h0, %w20 : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %c0 = nn.gather %r, %e0 {axis = 1 : i64} : (tensor<3x2xf32>, tensor<i64>) -> tensor<3xf32>
  %cr0 = nn.reshape %c0 : tensor<3xf32> to tensor<3x1xf32>
  %m0 = nn.mul %y0, %cr0 : (tensor<3x2xf32>, tensor<3x1xf32>) -> tensor<3x2xf32>
  %a1 = nn.linear %x, %w11 : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %g1 = nn.silu %a1 : tensor<3x2xf32>
  %u1 = nn.linear %x, %w31 : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %h1 = nn.mul %g1, %u1 : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  %y1 = nn.linear %h1, %w21 : (tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<3x2xf32>
  %c1 = nn.gather %r, %e1 {axis = 1 : i64} : (tensor<3x2xf32>, tensor<i64>) -> tensor<3xf32>
  %cr1 = nn.reshape %c1 : tensor<3xf32> to tensor<3x1xf32>
  %m1 = nn.mul %y1, %cr1 : (tensor<3x2xf32>, tensor<3x1xf32>) -> tensor<3x2xf32>
  %sum = nn.add %m0, %m1 : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  return %sum : tensor<3x2xf32>
}
