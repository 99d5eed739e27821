// RUN: parc-opt %s --split-input-file --nn-fuse | FileCheck %s

//===----------------------------------------------------------------------===//
// LayerNorm
//===----------------------------------------------------------------------===//

// The torch form below opset 17: Pow 2, Div by Sqrt, Mul gamma, Add beta.
// CHECK-LABEL: func @layer_norm_div_affine
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x32xf32>, %[[G:.*]]: tensor<32xf32>, %[[B:.*]]: tensor<32xf32>)
// CHECK: %[[Y:.*]] = nn.layer_norm %[[X]], %[[G]], %[[B]] {axis = 2 : i64, epsilon = 9.99999974E-6 : f32}
// CHECK-NOT: nn.reduce_mean
// CHECK: return %[[Y]]
func.func @layer_norm_div_affine(%x: tensor<2x8x32xf32>, %g: tensor<32xf32>, %b: tensor<32xf32>) -> tensor<2x8x32xf32> {
  %two = arith.constant dense<2.0> : tensor<f32>
  %eps = arith.constant dense<1.0e-5> : tensor<f32>
  %mean = nn.reduce_mean %x {axes = array<i64: 2>} : tensor<2x8x32xf32> -> tensor<2x8x1xf32>
  %d = nn.sub %x, %mean : (tensor<2x8x32xf32>, tensor<2x8x1xf32>) -> tensor<2x8x32xf32>
  %sq = nn.pow %d, %two : (tensor<2x8x32xf32>, tensor<f32>) -> tensor<2x8x32xf32>
  %var = nn.reduce_mean %sq {axes = array<i64: 2>} : tensor<2x8x32xf32> -> tensor<2x8x1xf32>
  %ve = nn.add %var, %eps : (tensor<2x8x1xf32>, tensor<f32>) -> tensor<2x8x1xf32>
  %std = nn.sqrt %ve : tensor<2x8x1xf32>
  %n = nn.div %d, %std : (tensor<2x8x32xf32>, tensor<2x8x1xf32>) -> tensor<2x8x32xf32>
  %s = nn.mul %n, %g : (tensor<2x8x32xf32>, tensor<32xf32>) -> tensor<2x8x32xf32>
  %y = nn.add %s, %b : (tensor<2x8x32xf32>, tensor<32xf32>) -> tensor<2x8x32xf32>
  return %y : tensor<2x8x32xf32>
}

// -----

// Without CSE: x - mean computed twice, the square as d * d, eps first,
// Mul by Reciprocal(Sqrt), affine operands first, eps shaped [1].
// CHECK-LABEL: func @layer_norm_duplicated_sub_reciprocal
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x32xf32>, %[[G:.*]]: tensor<32xf32>, %[[B:.*]]: tensor<32xf32>)
// CHECK: %[[Y:.*]] = nn.layer_norm %[[X]], %[[G]], %[[B]] {axis = 2 : i64, epsilon = 9.99999996E-13 : f32}
// CHECK-NOT: nn.sub
// CHECK: return %[[Y]]
func.func @layer_norm_duplicated_sub_reciprocal(%x: tensor<2x8x32xf32>, %g: tensor<32xf32>, %b: tensor<32xf32>) -> tensor<2x8x32xf32> {
  %eps = arith.constant dense<1.0e-12> : tensor<1xf32>
  %mean = nn.reduce_mean %x {axes = array<i64: 2>} : tensor<2x8x32xf32> -> tensor<2x8x1xf32>
  %d0 = nn.sub %x, %mean : (tensor<2x8x32xf32>, tensor<2x8x1xf32>) -> tensor<2x8x32xf32>
  %sq = nn.mul %d0, %d0 : (tensor<2x8x32xf32>, tensor<2x8x32xf32>) -> tensor<2x8x32xf32>
  %var = nn.reduce_mean %sq {axes = array<i64: 2>} : tensor<2x8x32xf32> -> tensor<2x8x1xf32>
  %mean1 = nn.reduce_mean %x {axes = array<i64: 2>} : tensor<2x8x32xf32> -> tensor<2x8x1xf32>
  %d1 = nn.sub %x, %mean1 : (tensor<2x8x32xf32>, tensor<2x8x1xf32>) -> tensor<2x8x32xf32>
  %ve = nn.add %eps, %var : (tensor<1xf32>, tensor<2x8x1xf32>) -> tensor<2x8x1xf32>
  %std = nn.sqrt %ve : tensor<2x8x1xf32>
  %inv = nn.reciprocal %std : tensor<2x8x1xf32>
  %n = nn.mul %inv, %d1 : (tensor<2x8x1xf32>, tensor<2x8x32xf32>) -> tensor<2x8x32xf32>
  %s = nn.mul %g, %n : (tensor<32xf32>, tensor<2x8x32xf32>) -> tensor<2x8x32xf32>
  %y = nn.add %b, %s : (tensor<32xf32>, tensor<2x8x32xf32>) -> tensor<2x8x32xf32>
  return %y : tensor<2x8x32xf32>
}

// -----

// No affine: the scale is a ones constant and there is no bias.
// CHECK-LABEL: func @layer_norm_no_affine
// CHECK-DAG: %[[ONES:.*]] = arith.constant dense<1.000000e+00> : tensor<32xf32>
// CHECK: %[[Y:.*]] = nn.layer_norm %{{.*}}, %[[ONES]] {axis = 2 : i64, epsilon = 9.99999974E-6 : f32} : (tensor<2x8x32xf32>, tensor<32xf32>) -> tensor<2x8x32xf32>
// CHECK: return %[[Y]]
func.func @layer_norm_no_affine(%x: tensor<2x8x32xf32>) -> tensor<2x8x32xf32> {
  %two = arith.constant dense<2.0> : tensor<f32>
  %eps = arith.constant dense<1.0e-5> : tensor<f32>
  %mean = nn.reduce_mean %x {axes = array<i64: 2>} : tensor<2x8x32xf32> -> tensor<2x8x1xf32>
  %d = nn.sub %x, %mean : (tensor<2x8x32xf32>, tensor<2x8x1xf32>) -> tensor<2x8x32xf32>
  %sq = nn.pow %d, %two : (tensor<2x8x32xf32>, tensor<f32>) -> tensor<2x8x32xf32>
  %var = nn.reduce_mean %sq {axes = array<i64: 2>} : tensor<2x8x32xf32> -> tensor<2x8x1xf32>
  %ve = nn.add %var, %eps : (tensor<2x8x1xf32>, tensor<f32>) -> tensor<2x8x1xf32>
  %std = nn.sqrt %ve : tensor<2x8x1xf32>
  %n = nn.div %d, %std : (tensor<2x8x32xf32>, tensor<2x8x1xf32>) -> tensor<2x8x32xf32>
  return %n : tensor<2x8x32xf32>
}

// -----

// Statistics over the last two axes: axis 1; a [1, 8, 32] gamma loses its
// leading unit dim; Mul by Div(1, Sqrt).
// CHECK-LABEL: func @layer_norm_two_axes
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x32xf32>, %[[G:.*]]: tensor<1x8x32xf32>)
// CHECK: %[[G2:.*]] = nn.reshape %[[G]] : tensor<1x8x32xf32> to tensor<8x32xf32>
// CHECK: %[[Y:.*]] = nn.layer_norm %[[X]], %[[G2]] {axis = 1 : i64, epsilon = 9.99999974E-6 : f32} : (tensor<2x8x32xf32>, tensor<8x32xf32>) -> tensor<2x8x32xf32>
// CHECK: return %[[Y]]
func.func @layer_norm_two_axes(%x: tensor<2x8x32xf32>, %g: tensor<1x8x32xf32>) -> tensor<2x8x32xf32> {
  %two = arith.constant dense<2.0> : tensor<f32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %eps = arith.constant dense<1.0e-5> : tensor<f32>
  %mean = nn.reduce_mean %x {axes = array<i64: 1, 2>} : tensor<2x8x32xf32> -> tensor<2x1x1xf32>
  %d = nn.sub %x, %mean : (tensor<2x8x32xf32>, tensor<2x1x1xf32>) -> tensor<2x8x32xf32>
  %sq = nn.pow %d, %two : (tensor<2x8x32xf32>, tensor<f32>) -> tensor<2x8x32xf32>
  %var = nn.reduce_mean %sq {axes = array<i64: 1, 2>} : tensor<2x8x32xf32> -> tensor<2x1x1xf32>
  %ve = nn.add %var, %eps : (tensor<2x1x1xf32>, tensor<f32>) -> tensor<2x1x1xf32>
  %std = nn.sqrt %ve : tensor<2x1x1xf32>
  %inv = nn.div %one, %std : (tensor<f32>, tensor<2x1x1xf32>) -> tensor<2x1x1xf32>
  %n = nn.mul %d, %inv : (tensor<2x8x32xf32>, tensor<2x1x1xf32>) -> tensor<2x8x32xf32>
  %y = nn.mul %n, %g : (tensor<2x8x32xf32>, tensor<1x8x32xf32>) -> tensor<2x8x32xf32>
  return %y : tensor<2x8x32xf32>
}

// -----

// Statistics over a non-trailing axis: not a LayerNorm.
// CHECK-LABEL: func @no_layer_norm_inner_axis
// CHECK-NOT: nn.layer_norm
// CHECK-NOT: nn.rms_norm
// CHECK: nn.div
func.func @no_layer_norm_inner_axis(%x: tensor<2x8x32xf32>) -> tensor<2x8x32xf32> {
  %two = arith.constant dense<2.0> : tensor<f32>
  %eps = arith.constant dense<1.0e-5> : tensor<f32>
  %mean = nn.reduce_mean %x {axes = array<i64: 1>} : tensor<2x8x32xf32> -> tensor<2x1x32xf32>
  %d = nn.sub %x, %mean : (tensor<2x8x32xf32>, tensor<2x1x32xf32>) -> tensor<2x8x32xf32>
  %sq = nn.pow %d, %two : (tensor<2x8x32xf32>, tensor<f32>) -> tensor<2x8x32xf32>
  %var = nn.reduce_mean %sq {axes = array<i64: 1>} : tensor<2x8x32xf32> -> tensor<2x1x32xf32>
  %ve = nn.add %var, %eps : (tensor<2x1x32xf32>, tensor<f32>) -> tensor<2x1x32xf32>
  %std = nn.sqrt %ve : tensor<2x1x32xf32>
  %n = nn.div %d, %std : (tensor<2x8x32xf32>, tensor<2x1x32xf32>) -> tensor<2x8x32xf32>
  return %n : tensor<2x8x32xf32>
}

// -----

// The variance of a different centred tensor: not a LayerNorm of x.
// CHECK-LABEL: func @no_layer_norm_other_variance
// CHECK-NOT: nn.layer_norm
// CHECK: nn.div
func.func @no_layer_norm_other_variance(%x: tensor<2x8x32xf32>, %z: tensor<2x8x32xf32>) -> tensor<2x8x32xf32> {
  %two = arith.constant dense<2.0> : tensor<f32>
  %eps = arith.constant dense<1.0e-5> : tensor<f32>
  %mean = nn.reduce_mean %x {axes = array<i64: 2>} : tensor<2x8x32xf32> -> tensor<2x8x1xf32>
  %d = nn.sub %x, %mean : (tensor<2x8x32xf32>, tensor<2x8x1xf32>) -> tensor<2x8x32xf32>
  %zmean = nn.reduce_mean %z {axes = array<i64: 2>} : tensor<2x8x32xf32> -> tensor<2x8x1xf32>
  %dz = nn.sub %z, %zmean : (tensor<2x8x32xf32>, tensor<2x8x1xf32>) -> tensor<2x8x32xf32>
  %sq = nn.pow %dz, %two : (tensor<2x8x32xf32>, tensor<f32>) -> tensor<2x8x32xf32>
  %var = nn.reduce_mean %sq {axes = array<i64: 2>} : tensor<2x8x32xf32> -> tensor<2x8x1xf32>
  %ve = nn.add %var, %eps : (tensor<2x8x1xf32>, tensor<f32>) -> tensor<2x8x1xf32>
  %std = nn.sqrt %ve : tensor<2x8x1xf32>
  %n = nn.div %d, %std : (tensor<2x8x32xf32>, tensor<2x8x1xf32>) -> tensor<2x8x32xf32>
  return %n : tensor<2x8x32xf32>
}

// -----

// A gamma that varies over the batch cannot be the norm's scale: the Mul stays.
// CHECK-LABEL: func @layer_norm_gamma_over_batch
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x32xf32>, %[[G:.*]]: tensor<2x1x32xf32>)
// CHECK: %[[ONES:.*]] = arith.constant dense<1.000000e+00> : tensor<32xf32>
// CHECK: %[[N:.*]] = nn.layer_norm %[[X]], %[[ONES]]
// CHECK: nn.mul %[[N]], %[[G]]
func.func @layer_norm_gamma_over_batch(%x: tensor<2x8x32xf32>, %g: tensor<2x1x32xf32>) -> tensor<2x8x32xf32> {
  %two = arith.constant dense<2.0> : tensor<f32>
  %eps = arith.constant dense<1.0e-5> : tensor<f32>
  %mean = nn.reduce_mean %x {axes = array<i64: 2>} : tensor<2x8x32xf32> -> tensor<2x8x1xf32>
  %d = nn.sub %x, %mean : (tensor<2x8x32xf32>, tensor<2x8x1xf32>) -> tensor<2x8x32xf32>
  %sq = nn.pow %d, %two : (tensor<2x8x32xf32>, tensor<f32>) -> tensor<2x8x32xf32>
  %var = nn.reduce_mean %sq {axes = array<i64: 2>} : tensor<2x8x32xf32> -> tensor<2x8x1xf32>
  %ve = nn.add %var, %eps : (tensor<2x8x1xf32>, tensor<f32>) -> tensor<2x8x1xf32>
  %std = nn.sqrt %ve : tensor<2x8x1xf32>
  %n = nn.div %d, %std : (tensor<2x8x32xf32>, tensor<2x8x1xf32>) -> tensor<2x8x32xf32>
  %y = nn.mul %n, %g : (tensor<2x8x32xf32>, tensor<2x1x32xf32>) -> tensor<2x8x32xf32>
  return %y : tensor<2x8x32xf32>
}

// -----

// GPT-NeoX's parallel residual: CSE leaves one normalised core feeding two
// affines; each becomes its own LayerNorm.
// CHECK-LABEL: func @layer_norm_shared_core
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x32xf32>, %[[G1:.*]]: tensor<32xf32>, %[[B1:.*]]: tensor<32xf32>, %[[G2:.*]]: tensor<32xf32>, %[[B2:.*]]: tensor<32xf32>)
// CHECK-DAG: %[[Y1:.*]] = nn.layer_norm %[[X]], %[[G1]], %[[B1]]
// CHECK-DAG: %[[Y2:.*]] = nn.layer_norm %[[X]], %[[G2]], %[[B2]]
// CHECK: return %[[Y1]], %[[Y2]]
func.func @layer_norm_shared_core(%x: tensor<2x8x32xf32>, %g1: tensor<32xf32>, %b1: tensor<32xf32>, %g2: tensor<32xf32>, %b2: tensor<32xf32>) -> (tensor<2x8x32xf32>, tensor<2x8x32xf32>) {
  %two = arith.constant dense<2.0> : tensor<f32>
  %eps = arith.constant dense<1.0e-5> : tensor<f32>
  %mean = nn.reduce_mean %x {axes = array<i64: 2>} : tensor<2x8x32xf32> -> tensor<2x8x1xf32>
  %d = nn.sub %x, %mean : (tensor<2x8x32xf32>, tensor<2x8x1xf32>) -> tensor<2x8x32xf32>
  %sq = nn.pow %d, %two : (tensor<2x8x32xf32>, tensor<f32>) -> tensor<2x8x32xf32>
  %var = nn.reduce_mean %sq {axes = array<i64: 2>} : tensor<2x8x32xf32> -> tensor<2x8x1xf32>
  %ve = nn.add %var, %eps : (tensor<2x8x1xf32>, tensor<f32>) -> tensor<2x8x1xf32>
  %std = nn.sqrt %ve : tensor<2x8x1xf32>
  %n = nn.div %d, %std : (tensor<2x8x32xf32>, tensor<2x8x1xf32>) -> tensor<2x8x32xf32>
  %s1 = nn.mul %n, %g1 : (tensor<2x8x32xf32>, tensor<32xf32>) -> tensor<2x8x32xf32>
  %y1 = nn.add %s1, %b1 : (tensor<2x8x32xf32>, tensor<32xf32>) -> tensor<2x8x32xf32>
  %s2 = nn.mul %n, %g2 : (tensor<2x8x32xf32>, tensor<32xf32>) -> tensor<2x8x32xf32>
  %y2 = nn.add %s2, %b2 : (tensor<2x8x32xf32>, tensor<32xf32>) -> tensor<2x8x32xf32>
  return %y1, %y2 : tensor<2x8x32xf32>, tensor<2x8x32xf32>
}

//===----------------------------------------------------------------------===//
// RMSNorm
//===----------------------------------------------------------------------===//

// -----

// Llama as torch exports it: rsqrt as Div(1, Sqrt), then weight * (x * inv).
// CHECK-LABEL: func @rms_norm_div_one
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x32xf32>, %[[W:.*]]: tensor<32xf32>)
// CHECK: %[[Y:.*]] = nn.rms_norm %[[X]], %[[W]] {axis = 2 : i64, epsilon = 9.99999997E-7 : f32}
// CHECK-NOT: nn.sqrt
// CHECK: return %[[Y]]
func.func @rms_norm_div_one(%x: tensor<2x8x32xf32>, %w: tensor<32xf32>) -> tensor<2x8x32xf32> {
  %two = arith.constant dense<2.0> : tensor<f32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %eps = arith.constant dense<1.0e-6> : tensor<f32>
  %sq = nn.pow %x, %two : (tensor<2x8x32xf32>, tensor<f32>) -> tensor<2x8x32xf32>
  %var = nn.reduce_mean %sq {axes = array<i64: 2>} : tensor<2x8x32xf32> -> tensor<2x8x1xf32>
  %ve = nn.add %var, %eps : (tensor<2x8x1xf32>, tensor<f32>) -> tensor<2x8x1xf32>
  %std = nn.sqrt %ve : tensor<2x8x1xf32>
  %inv = nn.div %one, %std : (tensor<f32>, tensor<2x8x1xf32>) -> tensor<2x8x1xf32>
  %n = nn.mul %x, %inv : (tensor<2x8x32xf32>, tensor<2x8x1xf32>) -> tensor<2x8x32xf32>
  %y = nn.mul %w, %n : (tensor<32xf32>, tensor<2x8x32xf32>) -> tensor<2x8x32xf32>
  return %y : tensor<2x8x32xf32>
}

// -----

// Reciprocal(Sqrt), the square as x * x, operands swapped.
// CHECK-LABEL: func @rms_norm_reciprocal
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x32xf32>, %[[W:.*]]: tensor<32xf32>)
// CHECK: %[[Y:.*]] = nn.rms_norm %[[X]], %[[W]] {axis = 2 : i64, epsilon = 9.99999997E-7 : f32}
// CHECK: return %[[Y]]
func.func @rms_norm_reciprocal(%x: tensor<2x8x32xf32>, %w: tensor<32xf32>) -> tensor<2x8x32xf32> {
  %eps = arith.constant dense<1.0e-6> : tensor<1xf32>
  %sq = nn.mul %x, %x : (tensor<2x8x32xf32>, tensor<2x8x32xf32>) -> tensor<2x8x32xf32>
  %var = nn.reduce_mean %sq {axes = array<i64: 2>} : tensor<2x8x32xf32> -> tensor<2x8x1xf32>
  %ve = nn.add %eps, %var : (tensor<1xf32>, tensor<2x8x1xf32>) -> tensor<2x8x1xf32>
  %std = nn.sqrt %ve : tensor<2x8x1xf32>
  %inv = nn.reciprocal %std : tensor<2x8x1xf32>
  %n = nn.mul %inv, %x : (tensor<2x8x1xf32>, tensor<2x8x32xf32>) -> tensor<2x8x32xf32>
  %y = nn.mul %n, %w : (tensor<2x8x32xf32>, tensor<32xf32>) -> tensor<2x8x32xf32>
  return %y : tensor<2x8x32xf32>
}

// -----

// x / sqrt(mean(x²) + eps) without a weight: a ones scale.
// CHECK-LABEL: func @rms_norm_div_no_weight
// CHECK: %[[ONES:.*]] = arith.constant dense<1.000000e+00> : tensor<32xf32>
// CHECK: nn.rms_norm %{{.*}}, %[[ONES]] {axis = 2 : i64, epsilon = 9.99999997E-7 : f32}
func.func @rms_norm_div_no_weight(%x: tensor<2x8x32xf32>) -> tensor<2x8x32xf32> {
  %two = arith.constant dense<2.0> : tensor<f32>
  %eps = arith.constant dense<1.0e-6> : tensor<f32>
  %sq = nn.pow %x, %two : (tensor<2x8x32xf32>, tensor<f32>) -> tensor<2x8x32xf32>
  %var = nn.reduce_mean %sq {axes = array<i64: 2>} : tensor<2x8x32xf32> -> tensor<2x8x1xf32>
  %ve = nn.add %var, %eps : (tensor<2x8x1xf32>, tensor<f32>) -> tensor<2x8x1xf32>
  %std = nn.sqrt %ve : tensor<2x8x1xf32>
  %n = nn.div %x, %std : (tensor<2x8x32xf32>, tensor<2x8x1xf32>) -> tensor<2x8x32xf32>
  return %n : tensor<2x8x32xf32>
}

// -----

// Normalising one tensor by another's statistics: not an RMSNorm.
// CHECK-LABEL: func @no_rms_norm_other_input
// CHECK-NOT: nn.rms_norm
// CHECK: nn.div
func.func @no_rms_norm_other_input(%x: tensor<2x8x32xf32>, %z: tensor<2x8x32xf32>) -> tensor<2x8x32xf32> {
  %two = arith.constant dense<2.0> : tensor<f32>
  %eps = arith.constant dense<1.0e-6> : tensor<f32>
  %sq = nn.pow %x, %two : (tensor<2x8x32xf32>, tensor<f32>) -> tensor<2x8x32xf32>
  %var = nn.reduce_mean %sq {axes = array<i64: 2>} : tensor<2x8x32xf32> -> tensor<2x8x1xf32>
  %ve = nn.add %var, %eps : (tensor<2x8x1xf32>, tensor<f32>) -> tensor<2x8x1xf32>
  %std = nn.sqrt %ve : tensor<2x8x1xf32>
  %n = nn.div %z, %std : (tensor<2x8x32xf32>, tensor<2x8x1xf32>) -> tensor<2x8x32xf32>
  return %n : tensor<2x8x32xf32>
}

//===----------------------------------------------------------------------===//
// GELU and SiLU
//===----------------------------------------------------------------------===//

// -----

// HF BERT: x * 0.5 * (1 + erf(x / √2)), scalars shaped [1].
// CHECK-LABEL: func @gelu_erf_hf
// CHECK-SAME: (%[[X:.*]]: tensor<2x8xf32>)
// CHECK: %[[Y:.*]] = nn.gelu %[[X]] : tensor<2x8xf32>
// CHECK-NOT: nn.erf
// CHECK: return %[[Y]]
func.func @gelu_erf_hf(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %half = arith.constant dense<0.5> : tensor<1xf32>
  %sqrt2 = arith.constant dense<1.41421354> : tensor<1xf32>
  %one = arith.constant dense<1.0> : tensor<1xf32>
  %hx = nn.mul %x, %half : (tensor<2x8xf32>, tensor<1xf32>) -> tensor<2x8xf32>
  %s = nn.div %x, %sqrt2 : (tensor<2x8xf32>, tensor<1xf32>) -> tensor<2x8xf32>
  %e = nn.erf %s : tensor<2x8xf32>
  %p = nn.add %e, %one : (tensor<2x8xf32>, tensor<1xf32>) -> tensor<2x8xf32>
  %y = nn.mul %hx, %p : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// torch's F.gelu symbolic: (x * (1 + erf(x * 0.7071))) * 0.5.
// CHECK-LABEL: func @gelu_erf_torch
// CHECK-SAME: (%[[X:.*]]: tensor<2x8xf32>)
// CHECK: %[[Y:.*]] = nn.gelu %[[X]] : tensor<2x8xf32>
// CHECK: return %[[Y]]
func.func @gelu_erf_torch(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %half = arith.constant dense<0.5> : tensor<f32>
  %rsqrt2 = arith.constant dense<0.707106769> : tensor<f32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %s = nn.mul %x, %rsqrt2 : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %e = nn.erf %s : tensor<2x8xf32>
  %p = nn.add %one, %e : (tensor<f32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %xp = nn.mul %x, %p : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %y = nn.mul %xp, %half : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// x * (0.5 * (1 + erf(x / √2))).
// CHECK-LABEL: func @gelu_erf_nested
// CHECK-SAME: (%[[X:.*]]: tensor<2x8xf32>)
// CHECK: %[[Y:.*]] = nn.gelu %[[X]] : tensor<2x8xf32>
// CHECK: return %[[Y]]
func.func @gelu_erf_nested(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %half = arith.constant dense<0.5> : tensor<f32>
  %sqrt2 = arith.constant dense<1.41421354> : tensor<f32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %s = nn.div %x, %sqrt2 : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %e = nn.erf %s : tensor<2x8xf32>
  %p = nn.add %e, %one : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %hp = nn.mul %half, %p : (tensor<f32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %y = nn.mul %x, %hp : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// HF gelu_new: 0.5 * x * (1 + tanh(√(2/π) * (x + 0.044715 * x³))).
// CHECK-LABEL: func @gelu_tanh_hf
// CHECK-SAME: (%[[X:.*]]: tensor<2x8xf32>)
// CHECK: %[[Y:.*]] = nn.gelu %[[X]] {approximation = #nn<gelu_approximation tanh>} : tensor<2x8xf32>
// CHECK-NOT: nn.tanh
// CHECK: return %[[Y]]
func.func @gelu_tanh_hf(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %half = arith.constant dense<0.5> : tensor<f32>
  %three = arith.constant dense<3.0> : tensor<f32>
  %c = arith.constant dense<0.044715> : tensor<f32>
  %k = arith.constant dense<0.797884583> : tensor<f32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %hx = nn.mul %x, %half : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %cube = nn.pow %x, %three : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %cc = nn.mul %cube, %c : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %inner = nn.add %x, %cc : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %arg = nn.mul %inner, %k : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %t = nn.tanh %arg : tensor<2x8xf32>
  %p = nn.add %t, %one : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %y = nn.mul %hx, %p : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// Megatron: x * 0.5 * (1 + tanh(0.79788456 * x * (1 + 0.044715 * x * x))).
// CHECK-LABEL: func @gelu_tanh_megatron
// CHECK-SAME: (%[[X:.*]]: tensor<2x8xf32>)
// CHECK: %[[Y:.*]] = nn.gelu %[[X]] {approximation = #nn<gelu_approximation tanh>} : tensor<2x8xf32>
// CHECK: return %[[Y]]
func.func @gelu_tanh_megatron(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %half = arith.constant dense<0.5> : tensor<f32>
  %k = arith.constant dense<0.797884583> : tensor<f32>
  %c = arith.constant dense<0.044715> : tensor<f32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %hx = nn.mul %x, %half : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %kx = nn.mul %x, %k : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %cx = nn.mul %x, %c : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %cxx = nn.mul %cx, %x : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %q = nn.add %cxx, %one : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %arg = nn.mul %kx, %q : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %t = nn.tanh %arg : tensor<2x8xf32>
  %p = nn.add %t, %one : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %y = nn.mul %hx, %p : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// 0.05 where GELU has 0.044715: a lookalike, left alone.
// CHECK-LABEL: func @no_gelu_wrong_constant
// CHECK-NOT: nn.gelu
// CHECK: nn.tanh
func.func @no_gelu_wrong_constant(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %half = arith.constant dense<0.5> : tensor<f32>
  %three = arith.constant dense<3.0> : tensor<f32>
  %c = arith.constant dense<0.05> : tensor<f32>
  %k = arith.constant dense<0.797884583> : tensor<f32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %hx = nn.mul %x, %half : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %cube = nn.pow %x, %three : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %cc = nn.mul %cube, %c : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %inner = nn.add %x, %cc : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %arg = nn.mul %inner, %k : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %t = nn.tanh %arg : tensor<2x8xf32>
  %p = nn.add %t, %one : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %y = nn.mul %hx, %p : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// erf(x / 2): not GELU's √2.
// CHECK-LABEL: func @no_gelu_erf_wrong_scale
// CHECK-NOT: nn.gelu
// CHECK: nn.erf
func.func @no_gelu_erf_wrong_scale(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %half = arith.constant dense<0.5> : tensor<f32>
  %two = arith.constant dense<2.0> : tensor<f32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %hx = nn.mul %x, %half : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %s = nn.div %x, %two : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %e = nn.erf %s : tensor<2x8xf32>
  %p = nn.add %e, %one : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %y = nn.mul %hx, %p : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// The erf GELU's tail multiplied by another tensor: the region has two inputs.
// CHECK-LABEL: func @no_gelu_two_inputs
// CHECK-NOT: nn.gelu
// CHECK: nn.erf
func.func @no_gelu_two_inputs(%x: tensor<2x8xf32>, %z: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %half = arith.constant dense<0.5> : tensor<f32>
  %sqrt2 = arith.constant dense<1.41421354> : tensor<f32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %hz = nn.mul %z, %half : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %s = nn.div %x, %sqrt2 : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %e = nn.erf %s : tensor<2x8xf32>
  %p = nn.add %e, %one : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %y = nn.mul %hz, %p : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// CHECK-LABEL: func @silu
// CHECK-SAME: (%[[X:.*]]: tensor<2x8xf32>)
// CHECK: %[[Y:.*]] = nn.silu %[[X]] : tensor<2x8xf32>
// CHECK: %[[Z:.*]] = nn.silu %[[X]] : tensor<2x8xf32>
// CHECK: return %[[Y]], %[[Z]]
func.func @silu(%x: tensor<2x8xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  %s = nn.sigmoid %x : tensor<2x8xf32>
  %y = nn.mul %x, %s : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %s2 = nn.sigmoid %x : tensor<2x8xf32>
  %z = nn.mul %s2, %x : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  return %y, %z : tensor<2x8xf32>, tensor<2x8xf32>
}

// -----

// x * sigmoid(1.702 x) (quick GELU) is neither SiLU nor exact GELU.
// CHECK-LABEL: func @no_silu_quick_gelu
// CHECK-NOT: nn.silu
// CHECK-NOT: nn.gelu
// CHECK: nn.sigmoid
func.func @no_silu_quick_gelu(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %c = arith.constant dense<1.702> : tensor<f32>
  %cx = nn.mul %x, %c : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %s = nn.sigmoid %cx : tensor<2x8xf32>
  %y = nn.mul %x, %s : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

//===----------------------------------------------------------------------===//
// Linear layers
//===----------------------------------------------------------------------===//

// -----

// torch: MatMul against an [in, out] initializer, then Add(bias, y).
// CHECK-LABEL: func @linear_bias
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x32xf32>, %[[B:.*]]: tensor<16xf32>)
// CHECK: %[[W:.*]] = arith.constant dense<{{.*}}> : tensor<32x16xf32>
// CHECK: %[[Y:.*]] = nn.linear %[[X]], %[[W]], %[[B]] : (tensor<2x8x32xf32>, tensor<32x16xf32>, tensor<16xf32>) -> tensor<2x8x16xf32>
// CHECK: return %[[Y]]
func.func @linear_bias(%x: tensor<2x8x32xf32>, %b: tensor<16xf32>) -> tensor<2x8x16xf32> {
  %w = arith.constant dense<0.5> : tensor<32x16xf32>
  %m = nn.matmul %x, %w : (tensor<2x8x32xf32>, tensor<32x16xf32>) -> tensor<2x8x16xf32>
  %y = nn.add %b, %m : (tensor<16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  return %y : tensor<2x8x16xf32>
}

// -----

// An external weight, no bias; the residual Add is not a bias.
// CHECK-LABEL: func @linear_external_weight
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x32xf32>, %[[R:.*]]: tensor<2x8x16xf32>)
// CHECK: %[[W:.*]] = nn.external_weight
// CHECK: %[[L:.*]] = nn.linear %[[X]], %[[W]] : (tensor<2x8x32xf32>, tensor<32x16xf32>) -> tensor<2x8x16xf32>
// CHECK: nn.add %[[L]], %[[R]]
func.func @linear_external_weight(%x: tensor<2x8x32xf32>, %r: tensor<2x8x16xf32>) -> tensor<2x8x16xf32> {
  %w = nn.external_weight {name = "fc.weight", location = "model.data", offset = 0 : i64, length = 2048 : i64} : tensor<32x16xf32>
  %m = nn.matmul %x, %w : (tensor<2x8x32xf32>, tensor<32x16xf32>) -> tensor<2x8x16xf32>
  %y = nn.add %m, %r : (tensor<2x8x16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  return %y : tensor<2x8x16xf32>
}

// -----

// A torch [out, in] weight transposed at run time (Deeploy, tied LM heads).
// CHECK-LABEL: func @linear_transposed_weight
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x32xf32>)
// CHECK: %[[W:.*]] = nn.external_weight {{.*}} : tensor<16x32xf32>
// CHECK: %[[Y:.*]] = nn.linear %[[X]], %[[W]] {transpose_weight = true} : (tensor<2x8x32xf32>, tensor<16x32xf32>) -> tensor<2x8x16xf32>
// CHECK: return %[[Y]]
func.func @linear_transposed_weight(%x: tensor<2x8x32xf32>) -> tensor<2x8x16xf32> {
  %w = nn.external_weight {name = "fc.weight", location = "model.data", offset = 0 : i64, length = 2048 : i64} : tensor<16x32xf32>
  %wt = nn.transpose %w {perm = array<i64: 1, 0>} : tensor<16x32xf32> -> tensor<32x16xf32>
  %m = nn.matmul %x, %wt : (tensor<2x8x32xf32>, tensor<32x16xf32>) -> tensor<2x8x16xf32>
  return %m : tensor<2x8x16xf32>
}

// -----

// Two activations multiplied: no weight, no linear layer.
// CHECK-LABEL: func @no_linear_activation_rhs
// CHECK-NOT: nn.linear
// CHECK: nn.matmul
func.func @no_linear_activation_rhs(%x: tensor<2x8x32xf32>, %y: tensor<32x16xf32>) -> tensor<2x8x16xf32> {
  %m = nn.matmul %x, %y : (tensor<2x8x32xf32>, tensor<32x16xf32>) -> tensor<2x8x16xf32>
  return %m : tensor<2x8x16xf32>
}

// -----

// torch's Linear on a 2-D input: Gemm(transB = 1) against [out, in].
// CHECK-LABEL: func @gemm_trans_b
// CHECK-SAME: (%[[X:.*]]: tensor<2x32xf32>, %[[B:.*]]: tensor<16xf32>)
// CHECK: %[[W:.*]] = arith.constant
// CHECK: %[[Y:.*]] = nn.linear %[[X]], %[[W]], %[[B]] {transpose_weight = true} : (tensor<2x32xf32>, tensor<16x32xf32>, tensor<16xf32>) -> tensor<2x16xf32>
// CHECK: return %[[Y]]
func.func @gemm_trans_b(%x: tensor<2x32xf32>, %b: tensor<16xf32>) -> tensor<2x16xf32> {
  %w = arith.constant dense<0.25> : tensor<16x32xf32>
  %y = nn.gemm %x, %w, %b {trans_b = true} : (tensor<2x32xf32>, tensor<16x32xf32>, tensor<16xf32>) -> tensor<2x16xf32>
  return %y : tensor<2x16xf32>
}

// -----

// A [1, N] bias row becomes the [N] bias.
// CHECK-LABEL: func @gemm_bias_row
// CHECK-SAME: (%[[X:.*]]: tensor<2x32xf32>, %[[B:.*]]: tensor<1x16xf32>)
// CHECK: %[[B1:.*]] = nn.reshape %[[B]] : tensor<1x16xf32> to tensor<16xf32>
// CHECK: nn.linear %[[X]], %{{.*}}, %[[B1]] : (tensor<2x32xf32>, tensor<32x16xf32>, tensor<16xf32>) -> tensor<2x16xf32>
func.func @gemm_bias_row(%x: tensor<2x32xf32>, %b: tensor<1x16xf32>) -> tensor<2x16xf32> {
  %w = arith.constant dense<0.25> : tensor<32x16xf32>
  %y = nn.gemm %x, %w, %b : (tensor<2x32xf32>, tensor<32x16xf32>, tensor<1x16xf32>) -> tensor<2x16xf32>
  return %y : tensor<2x16xf32>
}

// -----

// trans_a, alpha != 1 and a full [M, N] c are not linear layers.
// CHECK-LABEL: func @no_linear_gemm
// CHECK-NOT: nn.linear
// CHECK: nn.gemm
// CHECK: nn.gemm
// CHECK: nn.gemm
func.func @no_linear_gemm(%x: tensor<2x32xf32>, %xt: tensor<32x2xf32>, %c: tensor<2x16xf32>) -> (tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>) {
  %w = arith.constant dense<0.25> : tensor<32x16xf32>
  %a = nn.gemm %xt, %w {trans_a = true} : (tensor<32x2xf32>, tensor<32x16xf32>) -> tensor<2x16xf32>
  %b = nn.gemm %x, %w {alpha = 2.0 : f32} : (tensor<2x32xf32>, tensor<32x16xf32>) -> tensor<2x16xf32>
  %d = nn.gemm %x, %w, %c : (tensor<2x32xf32>, tensor<32x16xf32>, tensor<2x16xf32>) -> tensor<2x16xf32>
  return %a, %b, %d : tensor<2x16xf32>, tensor<2x16xf32>, tensor<2x16xf32>
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

// -----

// BERT: K permuted (0, 2, 3, 1) from [B, S, H, D], Div by √d, additive mask.
// CHECK-LABEL: func @attention_additive_mask
// CHECK-SAME: (%[[Q:.*]]: tensor<2x4x8x16xf32>, %[[KR:.*]]: tensor<2x8x4x16xf32>, %[[V:.*]]: tensor<2x4x8x16xf32>, %[[M:.*]]: tensor<2x1x1x8xf32>)
// CHECK: %[[K:.*]] = nn.transpose %[[KR]] {perm = array<i64: 0, 2, 1, 3>} : tensor<2x8x4x16xf32> -> tensor<2x4x8x16xf32>
// CHECK: %[[O:.*]] = nn.attention %[[Q]], %[[K]], %[[V]] mask(%[[M]] : tensor<2x1x1x8xf32>) {scale = 2.500000e-01 : f32}
// CHECK-NEXT: ^bb0(%[[S:.*]]: tensor<2x4x8x8xf32>, %[[MA:.*]]: tensor<2x1x1x8xf32>):
// CHECK-NEXT: %[[R:.*]] = nn.add %[[S]], %[[MA]]
// CHECK-NEXT: nn.yield %[[R]]
// CHECK-NOT: nn.softmax
// CHECK: return %[[O]]
func.func @attention_additive_mask(%q: tensor<2x4x8x16xf32>, %k: tensor<2x8x4x16xf32>, %v: tensor<2x4x8x16xf32>, %mask: tensor<2x1x1x8xf32>) -> tensor<2x4x8x16xf32> {
  %c = arith.constant dense<4.0> : tensor<f32>
  %kt = nn.transpose %k {perm = array<i64: 0, 2, 3, 1>} : tensor<2x8x4x16xf32> -> tensor<2x4x16x8xf32>
  %s = nn.matmul %q, %kt : (tensor<2x4x8x16xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x8x8xf32>
  %sc = nn.div %s, %c : (tensor<2x4x8x8xf32>, tensor<f32>) -> tensor<2x4x8x8xf32>
  %sm = nn.add %sc, %mask : (tensor<2x4x8x8xf32>, tensor<2x1x1x8xf32>) -> tensor<2x4x8x8xf32>
  %p = nn.softmax %sm {axis = 3 : i64} : tensor<2x4x8x8xf32>
  %o = nn.matmul %p, %v : (tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
  return %o : tensor<2x4x8x16xf32>
}

// -----

// GPT-2: K given head-split and transposed (0, 1, 3, 2), Mul by 1/√d, causal
// Where against constants: they move into the region.
// CHECK-LABEL: func @attention_causal_where
// CHECK-SAME: (%[[Q:.*]]: tensor<2x4x8x16xf32>, %[[K:.*]]: tensor<2x4x8x16xf32>, %[[V:.*]]: tensor<2x4x8x16xf32>)
// CHECK-NOT: nn.transpose
// CHECK: %[[O:.*]] = nn.attention %[[Q]], %[[K]], %[[V]] {scale = 2.500000e-01 : f32}
// CHECK-NEXT: ^bb0(%[[S:.*]]: tensor<2x4x8x8xf32>):
// CHECK-DAG: %[[C:.*]] = arith.constant dense<{{.*}}> : tensor<1x1x8x8xi1>
// CHECK-DAG: %[[F:.*]] = arith.constant dense<-3.40282347E+38> : tensor<f32>
// CHECK: %[[R:.*]] = nn.where %[[C]], %[[S]], %[[F]]
// CHECK-NEXT: nn.yield %[[R]]
// CHECK: return %[[O]]
func.func @attention_causal_where(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>, %v: tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32> {
  %c = arith.constant dense<0.25> : tensor<f32>
  %causal = arith.constant dense<[[[[true, false, false, false, false, false, false, false],
                                    [true, true, false, false, false, false, false, false],
                                    [true, true, true, false, false, false, false, false],
                                    [true, true, true, true, false, false, false, false],
                                    [true, true, true, true, true, false, false, false],
                                    [true, true, true, true, true, true, false, false],
                                    [true, true, true, true, true, true, true, false],
                                    [true, true, true, true, true, true, true, true]]]]> : tensor<1x1x8x8xi1>
  %fill = arith.constant dense<-3.40282347E+38> : tensor<f32>
  %kt = nn.transpose %k {perm = array<i64: 0, 1, 3, 2>} : tensor<2x4x8x16xf32> -> tensor<2x4x16x8xf32>
  %s = nn.matmul %q, %kt : (tensor<2x4x8x16xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x8x8xf32>
  %sc = nn.mul %s, %c : (tensor<2x4x8x8xf32>, tensor<f32>) -> tensor<2x4x8x8xf32>
  %sm = nn.where %causal, %sc, %fill : (tensor<1x1x8x8xi1>, tensor<2x4x8x8xf32>, tensor<f32>) -> tensor<2x4x8x8xf32>
  %p = nn.softmax %sm {axis = 3 : i64} : tensor<2x4x8x8xf32>
  %o = nn.matmul %p, %v : (tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
  return %o : tensor<2x4x8x16xf32>
}

// -----

// Megatron GPT-2: q and kᵀ both divided by √√d, mask applied as
// s * m - (1 - m) * 10000 with a past of 4 (T = 12).
// CHECK-LABEL: func @attention_megatron_scaled_q_and_k
// CHECK-SAME: (%[[Q:.*]]: tensor<2x2x8x4xf32>, %[[K:.*]]: tensor<2x2x12x4xf32>, %[[V:.*]]: tensor<2x2x12x4xf32>, %[[M:.*]]: tensor<2x1x8x12xf32>)
// CHECK: %[[NEG:.*]] = nn.mul
// CHECK: %[[O:.*]] = nn.attention %[[Q]], %[[K]], %[[V]] mask(%[[M]], %[[NEG]] : tensor<2x1x8x12xf32>, tensor<2x1x8x12xf32>) {scale = 5.000000e-01 : f32}
// CHECK-NEXT: ^bb0(%[[S:.*]]: tensor<2x2x8x12xf32>, %[[MA:.*]]: tensor<2x1x8x12xf32>, %[[NA:.*]]: tensor<2x1x8x12xf32>):
// CHECK-NEXT: %[[A:.*]] = nn.mul %[[S]], %[[MA]]
// CHECK-NEXT: %[[R:.*]] = nn.sub %[[A]], %[[NA]]
// CHECK-NEXT: nn.yield %[[R]]
// CHECK: return %[[O]]
func.func @attention_megatron_scaled_q_and_k(%q: tensor<2x2x8x4xf32>, %k: tensor<2x2x12x4xf32>, %v: tensor<2x2x12x4xf32>, %m: tensor<2x1x8x12xf32>) -> tensor<2x2x8x4xf32> {
  %r = arith.constant dense<1.41421354> : tensor<f32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %big = arith.constant dense<10000.0> : tensor<f32>
  %qs = nn.div %q, %r : (tensor<2x2x8x4xf32>, tensor<f32>) -> tensor<2x2x8x4xf32>
  %kt = nn.transpose %k {perm = array<i64: 0, 1, 3, 2>} : tensor<2x2x12x4xf32> -> tensor<2x2x4x12xf32>
  %kts = nn.div %kt, %r : (tensor<2x2x4x12xf32>, tensor<f32>) -> tensor<2x2x4x12xf32>
  %s = nn.matmul %qs, %kts : (tensor<2x2x8x4xf32>, tensor<2x2x4x12xf32>) -> tensor<2x2x8x12xf32>
  %sm = nn.mul %s, %m : (tensor<2x2x8x12xf32>, tensor<2x1x8x12xf32>) -> tensor<2x2x8x12xf32>
  %inv = nn.sub %one, %m : (tensor<f32>, tensor<2x1x8x12xf32>) -> tensor<2x1x8x12xf32>
  %neg = nn.mul %inv, %big : (tensor<2x1x8x12xf32>, tensor<f32>) -> tensor<2x1x8x12xf32>
  %sd = nn.sub %sm, %neg : (tensor<2x2x8x12xf32>, tensor<2x1x8x12xf32>) -> tensor<2x2x8x12xf32>
  %p = nn.softmax %sd {axis = 3 : i64} : tensor<2x2x8x12xf32>
  %o = nn.matmul %p, %v : (tensor<2x2x8x12xf32>, tensor<2x2x12x4xf32>) -> tensor<2x2x8x4xf32>
  return %o : tensor<2x2x8x4xf32>
}

// -----

// ORT's Megatron test: no scale, the modifier is Div, Mul and Sub by a mask.
// CHECK-LABEL: func @attention_mask_div_mul_sub
// CHECK-SAME: (%[[Q:.*]]: tensor<2x2x3x2xf32>, %[[K:.*]]: tensor<2x3x2x2xf32>, %[[V:.*]]: tensor<2x2x3x2xf32>, %[[M:.*]]: tensor<2x1x3x3xf32>)
// CHECK: %[[KH:.*]] = nn.transpose %[[K]] {perm = array<i64: 0, 2, 1, 3>}
// CHECK: nn.attention %[[Q]], %[[KH]], %[[V]] mask(%[[M]] : tensor<2x1x3x3xf32>) {scale = 1.000000e+00 : f32}
// CHECK-NEXT: ^bb0(%[[S:.*]]: tensor<2x2x3x3xf32>, %[[MA:.*]]: tensor<2x1x3x3xf32>):
// CHECK-NEXT: %[[A:.*]] = nn.div %[[S]], %[[MA]]
// CHECK-NEXT: %[[B:.*]] = nn.mul %[[A]], %[[MA]]
// CHECK-NEXT: %[[C:.*]] = nn.sub %[[B]], %[[MA]]
// CHECK-NEXT: nn.yield %[[C]]
func.func @attention_mask_div_mul_sub(%q: tensor<2x2x3x2xf32>, %k: tensor<2x3x2x2xf32>, %v: tensor<2x2x3x2xf32>, %m: tensor<2x1x3x3xf32>) -> tensor<2x2x3x2xf32> {
  %kt = nn.transpose %k {perm = array<i64: 0, 2, 3, 1>} : tensor<2x3x2x2xf32> -> tensor<2x2x2x3xf32>
  %s = nn.matmul %q, %kt : (tensor<2x2x3x2xf32>, tensor<2x2x2x3xf32>) -> tensor<2x2x3x3xf32>
  %a = nn.div %s, %m : (tensor<2x2x3x3xf32>, tensor<2x1x3x3xf32>) -> tensor<2x2x3x3xf32>
  %b = nn.mul %a, %m : (tensor<2x2x3x3xf32>, tensor<2x1x3x3xf32>) -> tensor<2x2x3x3xf32>
  %c = nn.sub %b, %m : (tensor<2x2x3x3xf32>, tensor<2x1x3x3xf32>) -> tensor<2x2x3x3xf32>
  %p = nn.softmax %c {axis = 3 : i64} : tensor<2x2x3x3xf32>
  %o = nn.matmul %p, %v : (tensor<2x2x3x3xf32>, tensor<2x2x3x2xf32>) -> tensor<2x2x3x2xf32>
  return %o : tensor<2x2x3x2xf32>
}

// -----

// Llama GQA: K and V repeated from 2 to 4 heads by repeat_kv
// (Unsqueeze → Expand → Reshape); the fused op reads the 2 KV heads.
// CHECK-LABEL: func @attention_gqa
// CHECK-SAME: (%[[Q:.*]]: tensor<2x4x8x16xf32>, %[[K:.*]]: tensor<2x2x8x16xf32>, %[[V:.*]]: tensor<2x2x8x16xf32>)
// CHECK: %[[O:.*]] = nn.attention %[[Q]], %[[K]], %[[V]] {scale = 2.500000e-01 : f32} : (tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x16xf32>) -> tensor<2x4x8x16xf32>
// CHECK-NEXT: ^bb0(%[[S:.*]]: tensor<2x4x8x8xf32>):
// CHECK-NEXT: nn.yield %[[S]]
// CHECK-NOT: nn.expand
// CHECK: return %[[O]]
func.func @attention_gqa(%q: tensor<2x4x8x16xf32>, %k: tensor<2x2x8x16xf32>, %v: tensor<2x2x8x16xf32>) -> tensor<2x4x8x16xf32> {
  %c = arith.constant dense<4.0> : tensor<f32>
  %k1 = nn.reshape %k : tensor<2x2x8x16xf32> to tensor<2x2x1x8x16xf32>
  %k2 = nn.expand %k1 : tensor<2x2x1x8x16xf32> to tensor<2x2x2x8x16xf32>
  %k3 = nn.reshape %k2 : tensor<2x2x2x8x16xf32> to tensor<2x4x8x16xf32>
  %v1 = nn.reshape %v : tensor<2x2x8x16xf32> to tensor<2x2x1x8x16xf32>
  %v2 = nn.expand %v1 : tensor<2x2x1x8x16xf32> to tensor<2x2x2x8x16xf32>
  %v3 = nn.reshape %v2 : tensor<2x2x2x8x16xf32> to tensor<2x4x8x16xf32>
  %kt = nn.transpose %k3 {perm = array<i64: 0, 1, 3, 2>} : tensor<2x4x8x16xf32> -> tensor<2x4x16x8xf32>
  %s = nn.matmul %q, %kt : (tensor<2x4x8x16xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x8x8xf32>
  %sc = nn.div %s, %c : (tensor<2x4x8x8xf32>, tensor<f32>) -> tensor<2x4x8x8xf32>
  %p = nn.softmax %sc {axis = 3 : i64} : tensor<2x4x8x8xf32>
  %o = nn.matmul %p, %v3 : (tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
  return %o : tensor<2x4x8x16xf32>
}

// -----

// Heads repeated as a block (tile, not repeat_interleave): query head h reads
// KV head h mod 2, which nn.attention's grouping cannot express, so the
// repeated K and V are used as they are.
// CHECK-LABEL: func @attention_tiled_kv
// CHECK: %[[KR:.*]] = nn.reshape %{{.*}} : tensor<2x2x2x8x16xf32> to tensor<2x4x8x16xf32>
// CHECK: nn.attention %{{.*}}, %[[KR]], %{{.*}} {scale = 2.500000e-01 : f32} : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>)
func.func @attention_tiled_kv(%q: tensor<2x4x8x16xf32>, %k: tensor<2x2x8x16xf32>, %v: tensor<2x2x8x16xf32>) -> tensor<2x4x8x16xf32> {
  %c = arith.constant dense<4.0> : tensor<f32>
  %k1 = nn.reshape %k : tensor<2x2x8x16xf32> to tensor<2x1x2x8x16xf32>
  %k2 = nn.expand %k1 : tensor<2x1x2x8x16xf32> to tensor<2x2x2x8x16xf32>
  %k3 = nn.reshape %k2 : tensor<2x2x2x8x16xf32> to tensor<2x4x8x16xf32>
  %v1 = nn.reshape %v : tensor<2x2x8x16xf32> to tensor<2x1x2x8x16xf32>
  %v2 = nn.expand %v1 : tensor<2x1x2x8x16xf32> to tensor<2x2x2x8x16xf32>
  %v3 = nn.reshape %v2 : tensor<2x2x2x8x16xf32> to tensor<2x4x8x16xf32>
  %kt = nn.transpose %k3 {perm = array<i64: 0, 1, 3, 2>} : tensor<2x4x8x16xf32> -> tensor<2x4x16x8xf32>
  %s = nn.matmul %q, %kt : (tensor<2x4x8x16xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x8x8xf32>
  %sc = nn.div %s, %c : (tensor<2x4x8x8xf32>, tensor<f32>) -> tensor<2x4x8x8xf32>
  %p = nn.softmax %sc {axis = 3 : i64} : tensor<2x4x8x8xf32>
  %o = nn.matmul %p, %v3 : (tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
  return %o : tensor<2x4x8x16xf32>
}

// -----

// Softmax over the query axis is not attention.
// CHECK-LABEL: func @no_attention_softmax_axis
// CHECK-NOT: nn.attention
// CHECK: nn.softmax
func.func @no_attention_softmax_axis(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>, %v: tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32> {
  %kt = nn.transpose %k {perm = array<i64: 0, 1, 3, 2>} : tensor<2x4x8x16xf32> -> tensor<2x4x16x8xf32>
  %s = nn.matmul %q, %kt : (tensor<2x4x8x16xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x8x8xf32>
  %p = nn.softmax %s {axis = 2 : i64} : tensor<2x4x8x8xf32>
  %o = nn.matmul %p, %v : (tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
  return %o : tensor<2x4x8x16xf32>
}

// -----

// Scores also returned: the fused op could not replace them.
// CHECK-LABEL: func @no_attention_scores_escape
// CHECK-NOT: nn.attention
// CHECK: nn.softmax
func.func @no_attention_scores_escape(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>, %v: tensor<2x4x8x16xf32>, %mask: tensor<2x1x1x8xf32>) -> (tensor<2x4x8x16xf32>, tensor<2x4x8x8xf32>) {
  %kt = nn.transpose %k {perm = array<i64: 0, 1, 3, 2>} : tensor<2x4x8x16xf32> -> tensor<2x4x16x8xf32>
  %s = nn.matmul %q, %kt : (tensor<2x4x8x16xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x8x8xf32>
  %sm = nn.add %s, %mask : (tensor<2x4x8x8xf32>, tensor<2x1x1x8xf32>) -> tensor<2x4x8x8xf32>
  %p = nn.softmax %sm {axis = 3 : i64} : tensor<2x4x8x8xf32>
  %o = nn.matmul %p, %v : (tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
  return %o, %s : tensor<2x4x8x16xf32>, tensor<2x4x8x8xf32>
}

// -----

// A K shared by the batch (broadcast in the matmul) is not [B, H, T, D].
// CHECK-LABEL: func @no_attention_broadcast_key
// CHECK-NOT: nn.attention
func.func @no_attention_broadcast_key(%q: tensor<2x4x8x16xf32>, %kt: tensor<1x4x16x8xf32>, %v: tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32> {
  %s = nn.matmul %q, %kt : (tensor<2x4x8x16xf32>, tensor<1x4x16x8xf32>) -> tensor<2x4x8x8xf32>
  %p = nn.softmax %s {axis = 3 : i64} : tensor<2x4x8x8xf32>
  %o = nn.matmul %p, %v : (tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
  return %o : tensor<2x4x8x16xf32>
}

// -----

// Transposed square scores: the modifier would move scores between positions.
// CHECK-LABEL: func @no_attention_transposed_scores
// CHECK-NOT: nn.attention
// CHECK: nn.softmax
func.func @no_attention_transposed_scores(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>, %v: tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32> {
  %kt = nn.transpose %k {perm = array<i64: 0, 1, 3, 2>} : tensor<2x4x8x16xf32> -> tensor<2x4x16x8xf32>
  %s = nn.matmul %q, %kt : (tensor<2x4x8x16xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x8x8xf32>
  %st = nn.transpose %s {perm = array<i64: 0, 1, 3, 2>} : tensor<2x4x8x8xf32> -> tensor<2x4x8x8xf32>
  %p = nn.softmax %st {axis = 3 : i64} : tensor<2x4x8x8xf32>
  %o = nn.matmul %p, %v : (tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
  return %o : tensor<2x4x8x16xf32>
}

// -----

// A bias computed by a second product (relative positions): which product
// holds the scores is ambiguous, so nothing fuses.
// CHECK-LABEL: func @no_attention_two_products
// CHECK-NOT: nn.attention
// CHECK: nn.softmax
func.func @no_attention_two_products(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>, %v: tensor<2x4x8x16xf32>, %r: tensor<2x4x16x8xf32>) -> tensor<2x4x8x16xf32> {
  %kt = nn.transpose %k {perm = array<i64: 0, 1, 3, 2>} : tensor<2x4x8x16xf32> -> tensor<2x4x16x8xf32>
  %s = nn.matmul %q, %kt : (tensor<2x4x8x16xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x8x8xf32>
  %b = nn.matmul %q, %r : (tensor<2x4x8x16xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x8x8xf32>
  %sb = nn.add %s, %b : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
  %p = nn.softmax %sb {axis = 3 : i64} : tensor<2x4x8x8xf32>
  %o = nn.matmul %p, %v : (tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
  return %o : tensor<2x4x8x16xf32>
}

//===----------------------------------------------------------------------===//
// Rotary embedding
//===----------------------------------------------------------------------===//

// -----

// Llama: x * cos + concat(-x[..., 8:], x[..., :8]) * sin.
// CHECK-LABEL: func @rotary_slices
// CHECK-SAME: (%[[X:.*]]: tensor<2x4x8x16xf32>, %[[C:.*]]: tensor<1x1x8x16xf32>, %[[S:.*]]: tensor<1x1x8x16xf32>)
// CHECK: %[[Y:.*]] = nn.rotary %[[X]], %[[C]], %[[S]] : (tensor<2x4x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32>) -> tensor<2x4x8x16xf32>
// CHECK-NOT: nn.concat
// CHECK: return %[[Y]]
func.func @rotary_slices(%x: tensor<2x4x8x16xf32>, %cos: tensor<1x1x8x16xf32>, %sin: tensor<1x1x8x16xf32>) -> tensor<2x4x8x16xf32> {
  %xc = nn.mul %x, %cos : (tensor<2x4x8x16xf32>, tensor<1x1x8x16xf32>) -> tensor<2x4x8x16xf32>
  %lo = nn.slice %x {starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 1, 1>} : tensor<2x4x8x16xf32> -> tensor<2x4x8x8xf32>
  %hi = nn.slice %x {starts = array<i64: 0, 0, 0, 8>, steps = array<i64: 1, 1, 1, 1>} : tensor<2x4x8x16xf32> -> tensor<2x4x8x8xf32>
  %nh = nn.neg %hi : tensor<2x4x8x8xf32>
  %rot = nn.concat %nh, %lo {axis = 3 : i64} : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x16xf32>
  %rs = nn.mul %rot, %sin : (tensor<2x4x8x16xf32>, tensor<1x1x8x16xf32>) -> tensor<2x4x8x16xf32>
  %y = nn.add %xc, %rs : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
  return %y : tensor<2x4x8x16xf32>
}

// -----

// Halves from a Split, operands commuted everywhere.
// CHECK-LABEL: func @rotary_split_commuted
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x16xf32>, %[[C:.*]]: tensor<8x16xf32>, %[[S:.*]]: tensor<8x16xf32>)
// CHECK: %[[Y:.*]] = nn.rotary %[[X]], %[[C]], %[[S]]
// CHECK: return %[[Y]]
func.func @rotary_split_commuted(%x: tensor<2x8x16xf32>, %cos: tensor<8x16xf32>, %sin: tensor<8x16xf32>) -> tensor<2x8x16xf32> {
  %lo, %hi = nn.split %x {axis = 2 : i64} : tensor<2x8x16xf32> -> (tensor<2x8x8xf32>, tensor<2x8x8xf32>)
  %nh = nn.neg %hi : tensor<2x8x8xf32>
  %rot = nn.concat %nh, %lo {axis = 2 : i64} : (tensor<2x8x8xf32>, tensor<2x8x8xf32>) -> tensor<2x8x16xf32>
  %rs = nn.mul %sin, %rot : (tensor<8x16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  %xc = nn.mul %cos, %x : (tensor<8x16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  %y = nn.add %rs, %xc : (tensor<2x8x16xf32>, tensor<2x8x16xf32>) -> tensor<2x8x16xf32>
  return %y : tensor<2x8x16xf32>
}

// -----

// concat(-x1, x2) rotates the wrong way: not rotate_half.
// CHECK-LABEL: func @no_rotary_swapped_halves
// CHECK-NOT: nn.rotary
// CHECK: nn.concat
func.func @no_rotary_swapped_halves(%x: tensor<2x4x8x16xf32>, %cos: tensor<1x1x8x16xf32>, %sin: tensor<1x1x8x16xf32>) -> tensor<2x4x8x16xf32> {
  %xc = nn.mul %x, %cos : (tensor<2x4x8x16xf32>, tensor<1x1x8x16xf32>) -> tensor<2x4x8x16xf32>
  %lo = nn.slice %x {starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 1, 1>} : tensor<2x4x8x16xf32> -> tensor<2x4x8x8xf32>
  %hi = nn.slice %x {starts = array<i64: 0, 0, 0, 8>, steps = array<i64: 1, 1, 1, 1>} : tensor<2x4x8x16xf32> -> tensor<2x4x8x8xf32>
  %nl = nn.neg %lo : tensor<2x4x8x8xf32>
  %rot = nn.concat %nl, %hi {axis = 3 : i64} : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x16xf32>
  %rs = nn.mul %rot, %sin : (tensor<2x4x8x16xf32>, tensor<1x1x8x16xf32>) -> tensor<2x4x8x16xf32>
  %y = nn.add %xc, %rs : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
  return %y : tensor<2x4x8x16xf32>
}

// -----

// cos / sin that broadcast along the last dim do not span it.
// CHECK-LABEL: func @no_rotary_narrow_tables
// CHECK-NOT: nn.rotary
// CHECK: nn.concat
func.func @no_rotary_narrow_tables(%x: tensor<2x4x8x16xf32>, %cos: tensor<1x1x8x1xf32>, %sin: tensor<1x1x8x1xf32>) -> tensor<2x4x8x16xf32> {
  %xc = nn.mul %x, %cos : (tensor<2x4x8x16xf32>, tensor<1x1x8x1xf32>) -> tensor<2x4x8x16xf32>
  %lo = nn.slice %x {starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 1, 1>} : tensor<2x4x8x16xf32> -> tensor<2x4x8x8xf32>
  %hi = nn.slice %x {starts = array<i64: 0, 0, 0, 8>, steps = array<i64: 1, 1, 1, 1>} : tensor<2x4x8x16xf32> -> tensor<2x4x8x8xf32>
  %nh = nn.neg %hi : tensor<2x4x8x8xf32>
  %rot = nn.concat %nh, %lo {axis = 3 : i64} : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x16xf32>
  %rs = nn.mul %rot, %sin : (tensor<2x4x8x16xf32>, tensor<1x1x8x1xf32>) -> tensor<2x4x8x16xf32>
  %y = nn.add %xc, %rs : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32>
  return %y : tensor<2x4x8x16xf32>
}
