// Round trip of every nn op: print, parse the printed form again, check it.
// RUN: parc-opt %s --split-input-file | parc-opt --split-input-file | FileCheck %s

// CHECK-LABEL: func.func @unary
// CHECK-SAME: (%[[X:.*]]: tensor<2x8xf32>, %[[B:.*]]: tensor<2x8xi1>)
func.func @unary(%x: tensor<2x8xf32>, %b: tensor<2x8xi1>) -> (tensor<2x8xf32>, tensor<2x8xi1>) {
  // CHECK: %[[NEG:.*]] = nn.neg %[[X]] : tensor<2x8xf32>
  %0 = nn.neg %x : tensor<2x8xf32>
  // CHECK: %[[EXP:.*]] = nn.exp %[[NEG]] : tensor<2x8xf32>
  %1 = nn.exp %0 : tensor<2x8xf32>
  // CHECK: %[[LOG:.*]] = nn.log %[[EXP]] : tensor<2x8xf32>
  %2 = nn.log %1 : tensor<2x8xf32>
  // CHECK: %[[SQRT:.*]] = nn.sqrt %[[LOG]] : tensor<2x8xf32>
  %3 = nn.sqrt %2 : tensor<2x8xf32>
  // CHECK: %[[REC:.*]] = nn.reciprocal %[[SQRT]] : tensor<2x8xf32>
  %4 = nn.reciprocal %3 : tensor<2x8xf32>
  // CHECK: %[[TANH:.*]] = nn.tanh %[[REC]] : tensor<2x8xf32>
  %5 = nn.tanh %4 : tensor<2x8xf32>
  // CHECK: %[[ERF:.*]] = nn.erf %[[TANH]] : tensor<2x8xf32>
  %6 = nn.erf %5 : tensor<2x8xf32>
  // CHECK: %[[SIG:.*]] = nn.sigmoid %[[ERF]] : tensor<2x8xf32>
  %7 = nn.sigmoid %6 : tensor<2x8xf32>
  // CHECK: %[[RELU:.*]] = nn.relu %[[SIG]] : tensor<2x8xf32>
  %8 = nn.relu %7 : tensor<2x8xf32>
  // CHECK: %[[SILU:.*]] = nn.silu %[[RELU]] : tensor<2x8xf32>
  %9 = nn.silu %8 : tensor<2x8xf32>
  // CHECK: %[[NOT:.*]] = nn.not %[[B]] : tensor<2x8xi1>
  %10 = nn.not %b : tensor<2x8xi1>
  // CHECK: return %[[SILU]], %[[NOT]]
  return %9, %10 : tensor<2x8xf32>, tensor<2x8xi1>
}

// -----

// The default approximation is elided; the tanh form prints the enum.
// CHECK-LABEL: func.func @gelu
// CHECK-SAME: (%[[X:.*]]: tensor<2x32xf32>)
func.func @gelu(%x: tensor<2x32xf32>) -> (tensor<2x32xf32>, tensor<2x32xf32>, tensor<2x32xf32>) {
  // CHECK: %[[E:.*]] = nn.gelu %[[X]] : tensor<2x32xf32>
  %0 = nn.gelu %x : tensor<2x32xf32>
  // CHECK: %[[T:.*]] = nn.gelu %[[X]] {approximation = #nn<gelu_approximation tanh>} : tensor<2x32xf32>
  %1 = nn.gelu %x {approximation = #nn<gelu_approximation tanh>} : tensor<2x32xf32>
  // CHECK: %[[N:.*]] = nn.gelu %[[X]] : tensor<2x32xf32>
  %2 = nn.gelu %x {approximation = #nn<gelu_approximation none>} : tensor<2x32xf32>
  // CHECK: return %[[E]], %[[T]], %[[N]]
  return %0, %1, %2 : tensor<2x32xf32>, tensor<2x32xf32>, tensor<2x32xf32>
}

// -----

// CHECK-LABEL: func.func @binary
// CHECK-SAME: (%[[A:.*]]: tensor<2x8xf32>, %[[B:.*]]: tensor<8xf32>, %[[E:.*]]: tensor<f32>)
func.func @binary(%a: tensor<2x8xf32>, %b: tensor<8xf32>, %e: tensor<f32>) -> tensor<2x8xf32> {
  // CHECK: %[[ADD:.*]] = nn.add %[[A]], %[[B]] : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  %0 = nn.add %a, %b : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  // CHECK: %[[SUB:.*]] = nn.sub %[[B]], %[[ADD]] : (tensor<8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %1 = nn.sub %b, %0 : (tensor<8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  // CHECK: %[[MUL:.*]] = nn.mul %[[SUB]], %[[E]] : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %2 = nn.mul %1, %e : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  // CHECK: %[[DIV:.*]] = nn.div %[[MUL]], %[[A]] : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %3 = nn.div %2, %a : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  // CHECK: %[[MIN:.*]] = nn.min %[[DIV]], %[[B]] : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  %4 = nn.min %3, %b : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  // CHECK: %[[MAX:.*]] = nn.max %[[MIN]], %[[E]] : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %5 = nn.max %4, %e : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  // CHECK: return %[[MAX]]
  return %5 : tensor<2x8xf32>
}

// -----

// Pow is the one binary op whose exponent may have its own element type.
// CHECK-LABEL: func.func @pow
// CHECK-SAME: (%[[X:.*]]: tensor<2x8xf32>, %[[I:.*]]: tensor<i64>)
func.func @pow(%x: tensor<2x8xf32>, %i: tensor<i64>) -> (tensor<2x8xf32>, tensor<2x8xf32>) {
  // CHECK: %[[P:.*]] = nn.pow %[[X]], %[[X]] : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %0 = nn.pow %x, %x : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  // CHECK: %[[Q:.*]] = nn.pow %[[X]], %[[I]] : (tensor<2x8xf32>, tensor<i64>) -> tensor<2x8xf32>
  %1 = nn.pow %x, %i : (tensor<2x8xf32>, tensor<i64>) -> tensor<2x8xf32>
  // CHECK: return %[[P]], %[[Q]]
  return %0, %1 : tensor<2x8xf32>, tensor<2x8xf32>
}

// -----

// Comparisons and logic produce i1.
// CHECK-LABEL: func.func @predicates
// CHECK-SAME: (%[[A:.*]]: tensor<4x1xi64>, %[[B:.*]]: tensor<4xi64>)
func.func @predicates(%a: tensor<4x1xi64>, %b: tensor<4xi64>) -> tensor<4x4xi1> {
  // CHECK: %[[EQ:.*]] = nn.equal %[[A]], %[[B]] : (tensor<4x1xi64>, tensor<4xi64>) -> tensor<4x4xi1>
  %0 = nn.equal %a, %b : (tensor<4x1xi64>, tensor<4xi64>) -> tensor<4x4xi1>
  // CHECK: %[[LT:.*]] = nn.less %[[A]], %[[B]] : (tensor<4x1xi64>, tensor<4xi64>) -> tensor<4x4xi1>
  %1 = nn.less %a, %b : (tensor<4x1xi64>, tensor<4xi64>) -> tensor<4x4xi1>
  // CHECK: %[[GT:.*]] = nn.greater %[[A]], %[[B]] : (tensor<4x1xi64>, tensor<4xi64>) -> tensor<4x4xi1>
  %2 = nn.greater %a, %b : (tensor<4x1xi64>, tensor<4xi64>) -> tensor<4x4xi1>
  // CHECK: %[[AND:.*]] = nn.and %[[EQ]], %[[LT]] : (tensor<4x4xi1>, tensor<4x4xi1>) -> tensor<4x4xi1>
  %3 = nn.and %0, %1 : (tensor<4x4xi1>, tensor<4x4xi1>) -> tensor<4x4xi1>
  // CHECK: %[[OR:.*]] = nn.or %[[AND]], %[[GT]] : (tensor<4x4xi1>, tensor<4x4xi1>) -> tensor<4x4xi1>
  %4 = nn.or %3, %2 : (tensor<4x4xi1>, tensor<4x4xi1>) -> tensor<4x4xi1>
  // CHECK: return %[[OR]]
  return %4 : tensor<4x4xi1>
}

// -----

// CHECK-LABEL: func.func @where
// CHECK-SAME: (%[[M:.*]]: tensor<1x1x8x8xi1>, %[[S:.*]]: tensor<2x4x8x8xf32>, %[[N:.*]]: tensor<f32>)
func.func @where(%m: tensor<1x1x8x8xi1>, %s: tensor<2x4x8x8xf32>, %n: tensor<f32>) -> tensor<2x4x8x8xf32> {
  // CHECK: %[[W:.*]] = nn.where %[[M]], %[[S]], %[[N]] : (tensor<1x1x8x8xi1>, tensor<2x4x8x8xf32>, tensor<f32>) -> tensor<2x4x8x8xf32>
  %0 = nn.where %m, %s, %n : (tensor<1x1x8x8xi1>, tensor<2x4x8x8xf32>, tensor<f32>) -> tensor<2x4x8x8xf32>
  // CHECK: return %[[W]]
  return %0 : tensor<2x4x8x8xf32>
}

// -----

// CHECK-LABEL: func.func @cast
// CHECK-SAME: (%[[I:.*]]: tensor<2x8xi64>)
func.func @cast(%ids: tensor<2x8xi64>) -> (tensor<2x8xf32>, tensor<2x8xi1>) {
  // CHECK: %[[F:.*]] = nn.cast %[[I]] : tensor<2x8xi64> to tensor<2x8xf32>
  %0 = nn.cast %ids : tensor<2x8xi64> to tensor<2x8xf32>
  // CHECK: %[[B:.*]] = nn.cast %[[F]] : tensor<2x8xf32> to tensor<2x8xi1>
  %1 = nn.cast %0 : tensor<2x8xf32> to tensor<2x8xi1>
  // CHECK: return %[[F]], %[[B]]
  return %0, %1 : tensor<2x8xf32>, tensor<2x8xi1>
}

// -----

// MatMul: batched with broadcasting, and 1-D operands whose promoted dim is
// dropped ([16] x [16x8] -> [8]; [2x8x16] x [16] -> [2x8]).
// CHECK-LABEL: func.func @matmul
// CHECK-SAME: (%[[Q:.*]]: tensor<2x4x8x16xf32>, %[[K:.*]]: tensor<4x16x8xf32>, %[[V:.*]]: tensor<16xf32>, %[[W:.*]]: tensor<16x8xf32>, %[[X:.*]]: tensor<2x8x16xf32>)
func.func @matmul(%q: tensor<2x4x8x16xf32>, %k: tensor<4x16x8xf32>, %v: tensor<16xf32>,
                  %w: tensor<16x8xf32>, %x: tensor<2x8x16xf32>)
    -> (tensor<2x4x8x8xf32>, tensor<8xf32>, tensor<2x8xf32>) {
  // CHECK: %[[S:.*]] = nn.matmul %[[Q]], %[[K]] : (tensor<2x4x8x16xf32>, tensor<4x16x8xf32>) -> tensor<2x4x8x8xf32>
  %0 = nn.matmul %q, %k : (tensor<2x4x8x16xf32>, tensor<4x16x8xf32>) -> tensor<2x4x8x8xf32>
  // CHECK: %[[VW:.*]] = nn.matmul %[[V]], %[[W]] : (tensor<16xf32>, tensor<16x8xf32>) -> tensor<8xf32>
  %1 = nn.matmul %v, %w : (tensor<16xf32>, tensor<16x8xf32>) -> tensor<8xf32>
  // CHECK: %[[XV:.*]] = nn.matmul %[[X]], %[[V]] : (tensor<2x8x16xf32>, tensor<16xf32>) -> tensor<2x8xf32>
  %2 = nn.matmul %x, %v : (tensor<2x8x16xf32>, tensor<16xf32>) -> tensor<2x8xf32>
  // CHECK: return %[[S]], %[[VW]], %[[XV]]
  return %0, %1, %2 : tensor<2x4x8x8xf32>, tensor<8xf32>, tensor<2x8xf32>
}

// -----

// Gemm with and without c; defaults (alpha = beta = 1, no transposes) are
// elided, explicit values print.
// CHECK-LABEL: func.func @gemm
// CHECK-SAME: (%[[A:.*]]: tensor<2x32xf32>, %[[B:.*]]: tensor<16x32xf32>, %[[C:.*]]: tensor<16xf32>, %[[AT:.*]]: tensor<32x2xf32>, %[[BN:.*]]: tensor<32x16xf32>)
func.func @gemm(%a: tensor<2x32xf32>, %b: tensor<16x32xf32>, %c: tensor<16xf32>,
                %at: tensor<32x2xf32>, %bn: tensor<32x16xf32>) -> (tensor<2x16xf32>, tensor<2x16xf32>) {
  // CHECK: %[[Y0:.*]] = nn.gemm %[[A]], %[[B]], %[[C]] {trans_b = true} : (tensor<2x32xf32>, tensor<16x32xf32>, tensor<16xf32>) -> tensor<2x16xf32>
  %0 = nn.gemm %a, %b, %c {trans_b = true} : (tensor<2x32xf32>, tensor<16x32xf32>, tensor<16xf32>) -> tensor<2x16xf32>
  // CHECK: %[[Y1:.*]] = nn.gemm %[[AT]], %[[BN]] {alpha = 5.000000e-01 : f32, beta = 2.000000e+00 : f32, trans_a = true} : (tensor<32x2xf32>, tensor<32x16xf32>) -> tensor<2x16xf32>
  %1 = nn.gemm %at, %bn {alpha = 0.5 : f32, beta = 2.0 : f32, trans_a = true, trans_b = false} : (tensor<32x2xf32>, tensor<32x16xf32>) -> tensor<2x16xf32>
  // CHECK: return %[[Y0]], %[[Y1]]
  return %0, %1 : tensor<2x16xf32>, tensor<2x16xf32>
}

// -----

// CHECK-LABEL: func.func @linear
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x32xf32>, %[[W:.*]]: tensor<32x128xf32>, %[[B:.*]]: tensor<128xf32>, %[[WT:.*]]: tensor<128x32xf32>)
func.func @linear(%x: tensor<2x8x32xf32>, %w: tensor<32x128xf32>, %b: tensor<128xf32>,
                  %wt: tensor<128x32xf32>) -> (tensor<2x8x128xf32>, tensor<2x8x128xf32>) {
  // CHECK: %[[H0:.*]] = nn.linear %[[X]], %[[W]], %[[B]] : (tensor<2x8x32xf32>, tensor<32x128xf32>, tensor<128xf32>) -> tensor<2x8x128xf32>
  %0 = nn.linear %x, %w, %b : (tensor<2x8x32xf32>, tensor<32x128xf32>, tensor<128xf32>) -> tensor<2x8x128xf32>
  // CHECK: %[[H1:.*]] = nn.linear %[[X]], %[[WT]] {transpose_weight = true} : (tensor<2x8x32xf32>, tensor<128x32xf32>) -> tensor<2x8x128xf32>
  %1 = nn.linear %x, %wt {transpose_weight = true} : (tensor<2x8x32xf32>, tensor<128x32xf32>) -> tensor<2x8x128xf32>
  // CHECK: return %[[H0]], %[[H1]]
  return %0, %1 : tensor<2x8x128xf32>, tensor<2x8x128xf32>
}

// -----

// CHECK-LABEL: func.func @norms
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x32xf32>, %[[G:.*]]: tensor<32xf32>, %[[B:.*]]: tensor<32xf32>, %[[G2:.*]]: tensor<8x32xf32>)
func.func @norms(%x: tensor<2x8x32xf32>, %g: tensor<32xf32>, %b: tensor<32xf32>, %g2: tensor<8x32xf32>)
    -> (tensor<2x8x32xf32>, tensor<2x8x32xf32>, tensor<2x8x32xf32>, tensor<2x8x32xf32>) {
  // CHECK: %[[S:.*]] = nn.softmax %[[X]] {axis = 2 : i64} : tensor<2x8x32xf32>
  %0 = nn.softmax %x {axis = 2 : i64} : tensor<2x8x32xf32>
  // CHECK: %[[LN:.*]] = nn.layer_norm %[[X]], %[[G]], %[[B]] {axis = 2 : i64, epsilon = 9.99999974E-6 : f32} : (tensor<2x8x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<2x8x32xf32>
  %1 = nn.layer_norm %x, %g, %b {axis = 2 : i64, epsilon = 1.0e-05 : f32} : (tensor<2x8x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<2x8x32xf32>
  // Without bias, and normalising over the last two dims.
  // CHECK: %[[LN2:.*]] = nn.layer_norm %[[X]], %[[G2]] {axis = 1 : i64, epsilon = 1.000000e-03 : f32} : (tensor<2x8x32xf32>, tensor<8x32xf32>) -> tensor<2x8x32xf32>
  %2 = nn.layer_norm %x, %g2 {axis = 1 : i64, epsilon = 1.0e-03 : f32} : (tensor<2x8x32xf32>, tensor<8x32xf32>) -> tensor<2x8x32xf32>
  // CHECK: %[[RMS:.*]] = nn.rms_norm %[[X]], %[[G]] {axis = 2 : i64, epsilon = 9.99999997E-7 : f32} : (tensor<2x8x32xf32>, tensor<32xf32>) -> tensor<2x8x32xf32>
  %3 = nn.rms_norm %x, %g {axis = 2 : i64, epsilon = 1.0e-06 : f32} : (tensor<2x8x32xf32>, tensor<32xf32>) -> tensor<2x8x32xf32>
  // CHECK: return %[[S]], %[[LN]], %[[LN2]], %[[RMS]]
  return %0, %1, %2, %3 : tensor<2x8x32xf32>, tensor<2x8x32xf32>, tensor<2x8x32xf32>, tensor<2x8x32xf32>
}

// -----

// keepdims defaults to true and is elided; false prints.
// CHECK-LABEL: func.func @reductions
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x32xf32>)
func.func @reductions(%x: tensor<2x8x32xf32>)
    -> (tensor<2x8x1xf32>, tensor<2xf32>, tensor<1x8x1xf32>, tensor<f32>, tensor<2x8xf32>) {
  // CHECK: %[[SUM:.*]] = nn.reduce_sum %[[X]] {axes = array<i64: 2>} : tensor<2x8x32xf32> -> tensor<2x8x1xf32>
  %0 = nn.reduce_sum %x {axes = array<i64: 2>, keepdims = true} : tensor<2x8x32xf32> -> tensor<2x8x1xf32>
  // CHECK: %[[MEAN:.*]] = nn.reduce_mean %[[X]] {axes = array<i64: 1, 2>, keepdims = false} : tensor<2x8x32xf32> -> tensor<2xf32>
  %1 = nn.reduce_mean %x {axes = array<i64: 1, 2>, keepdims = false} : tensor<2x8x32xf32> -> tensor<2xf32>
  // CHECK: %[[MAX:.*]] = nn.reduce_max %[[X]] {axes = array<i64: 0, 2>} : tensor<2x8x32xf32> -> tensor<1x8x1xf32>
  %2 = nn.reduce_max %x {axes = array<i64: 0, 2>} : tensor<2x8x32xf32> -> tensor<1x8x1xf32>
  // CHECK: %[[MIN:.*]] = nn.reduce_min %[[X]] {axes = array<i64: 0, 1, 2>, keepdims = false} : tensor<2x8x32xf32> -> tensor<f32>
  %3 = nn.reduce_min %x {axes = array<i64: 0, 1, 2>, keepdims = false} : tensor<2x8x32xf32> -> tensor<f32>
  // CHECK: %[[PROD:.*]] = nn.reduce_prod %[[X]] {axes = array<i64: 2>, keepdims = false} : tensor<2x8x32xf32> -> tensor<2x8xf32>
  %4 = nn.reduce_prod %x {axes = array<i64: 2>, keepdims = false} : tensor<2x8x32xf32> -> tensor<2x8xf32>
  // CHECK: return %[[SUM]], %[[MEAN]], %[[MAX]], %[[MIN]], %[[PROD]]
  return %0, %1, %2, %3, %4 : tensor<2x8x1xf32>, tensor<2xf32>, tensor<1x8x1xf32>, tensor<f32>, tensor<2x8xf32>
}

// -----

// CHECK-LABEL: func.func @data_movement
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x32xf32>, %[[KV:.*]]: tensor<2x2x1x8x16xf32>)
func.func @data_movement(%x: tensor<2x8x32xf32>, %kv: tensor<2x2x1x8x16xf32>)
    -> (tensor<2x4x8x8xf32>, tensor<2x2x2x8x16xf32>, tensor<2x8x4xf32>) {
  // CHECK: %[[R:.*]] = nn.reshape %[[X]] : tensor<2x8x32xf32> to tensor<2x8x4x8xf32>
  %0 = nn.reshape %x : tensor<2x8x32xf32> to tensor<2x8x4x8xf32>
  // CHECK: %[[T:.*]] = nn.transpose %[[R]] {perm = array<i64: 0, 2, 1, 3>} : tensor<2x8x4x8xf32> -> tensor<2x4x8x8xf32>
  %1 = nn.transpose %0 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x8x4x8xf32> -> tensor<2x4x8x8xf32>
  // CHECK: %[[E:.*]] = nn.expand %[[KV]] : tensor<2x2x1x8x16xf32> to tensor<2x2x2x8x16xf32>
  %2 = nn.expand %kv : tensor<2x2x1x8x16xf32> to tensor<2x2x2x8x16xf32>
  // Strided slice: dim 2 reads 1, 9, 17, 25 (start 1, step 8).
  // CHECK: %[[S:.*]] = nn.slice %[[X]] {starts = array<i64: 0, 0, 1>, steps = array<i64: 1, 1, 8>} : tensor<2x8x32xf32> -> tensor<2x8x4xf32>
  %3 = nn.slice %x {starts = array<i64: 0, 0, 1>, steps = array<i64: 1, 1, 8>} : tensor<2x8x32xf32> -> tensor<2x8x4xf32>
  // CHECK: return %[[T]], %[[E]], %[[S]]
  return %1, %2, %3 : tensor<2x4x8x8xf32>, tensor<2x2x2x8x16xf32>, tensor<2x8x4xf32>
}

// -----

// A backwards slice: dim 0 reads 7, 5, 3 (start 7, step -2).
// CHECK-LABEL: func.func @slice_backwards
// CHECK-SAME: (%[[X:.*]]: tensor<8x4xf32>)
func.func @slice_backwards(%x: tensor<8x4xf32>) -> tensor<3x4xf32> {
  // CHECK: %[[S:.*]] = nn.slice %[[X]] {starts = array<i64: 7, 0>, steps = array<i64: -2, 1>} : tensor<8x4xf32> -> tensor<3x4xf32>
  %0 = nn.slice %x {starts = array<i64: 7, 0>, steps = array<i64: -2, 1>} : tensor<8x4xf32> -> tensor<3x4xf32>
  // CHECK: return %[[S]]
  return %0 : tensor<3x4xf32>
}

// -----

// CHECK-LABEL: func.func @concat_split
// CHECK-SAME: (%[[A:.*]]: tensor<2x4x3x8xf32>, %[[B:.*]]: tensor<2x4x5x8xf32>, %[[QKV:.*]]: tensor<2x8x96xf32>)
func.func @concat_split(%a: tensor<2x4x3x8xf32>, %b: tensor<2x4x5x8xf32>, %qkv: tensor<2x8x96xf32>)
    -> (tensor<2x4x8x8xf32>, tensor<2x8x32xf32>, tensor<2x8x64xf32>) {
  // CHECK: %[[C:.*]] = nn.concat %[[A]], %[[B]] {axis = 2 : i64} : (tensor<2x4x3x8xf32>, tensor<2x4x5x8xf32>) -> tensor<2x4x8x8xf32>
  %0 = nn.concat %a, %b {axis = 2 : i64} : (tensor<2x4x3x8xf32>, tensor<2x4x5x8xf32>) -> tensor<2x4x8x8xf32>
  // CHECK: %[[Q:.*]]:2 = nn.split %[[QKV]] {axis = 2 : i64} : tensor<2x8x96xf32> -> (tensor<2x8x32xf32>, tensor<2x8x64xf32>)
  %1:2 = nn.split %qkv {axis = 2 : i64} : tensor<2x8x96xf32> -> (tensor<2x8x32xf32>, tensor<2x8x64xf32>)
  // CHECK: return %[[C]], %[[Q]]#0, %[[Q]]#1
  return %0, %1#0, %1#1 : tensor<2x4x8x8xf32>, tensor<2x8x32xf32>, tensor<2x8x64xf32>
}

// -----

// CHECK-LABEL: func.func @gather_scatter
// CHECK-SAME: (%[[T:.*]]: tensor<64x32xf32>, %[[IDS:.*]]: tensor<2x8xi64>, %[[Z:.*]]: tensor<16x4xf32>, %[[IDX:.*]]: tensor<16x2xi32>, %[[W:.*]]: tensor<16x2xf32>)
func.func @gather_scatter(%table: tensor<64x32xf32>, %ids: tensor<2x8xi64>, %zeros: tensor<16x4xf32>,
                          %idx: tensor<16x2xi32>, %w: tensor<16x2xf32>)
    -> (tensor<2x8x32xf32>, tensor<64x2x8xf32>, tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x4xf32>) {
  // CHECK: %[[E:.*]] = nn.gather %[[T]], %[[IDS]] {axis = 0 : i64} : (tensor<64x32xf32>, tensor<2x8xi64>) -> tensor<2x8x32xf32>
  %0 = nn.gather %table, %ids {axis = 0 : i64} : (tensor<64x32xf32>, tensor<2x8xi64>) -> tensor<2x8x32xf32>
  // CHECK: %[[G1:.*]] = nn.gather %[[T]], %[[IDS]] {axis = 1 : i64} : (tensor<64x32xf32>, tensor<2x8xi64>) -> tensor<64x2x8xf32>
  %1 = nn.gather %table, %ids {axis = 1 : i64} : (tensor<64x32xf32>, tensor<2x8xi64>) -> tensor<64x2x8xf32>
  // The default reduction (none) is elided.
  // CHECK: %[[S0:.*]] = nn.scatter_elements %[[Z]], %[[IDX]], %[[W]] {axis = 1 : i64} : (tensor<16x4xf32>, tensor<16x2xi32>, tensor<16x2xf32>) -> tensor<16x4xf32>
  %2 = nn.scatter_elements %zeros, %idx, %w {axis = 1 : i64} : (tensor<16x4xf32>, tensor<16x2xi32>, tensor<16x2xf32>) -> tensor<16x4xf32>
  // CHECK: %[[S1:.*]] = nn.scatter_elements %[[Z]], %[[IDX]], %[[W]] {axis = 1 : i64, reduction = #nn<scatter_reduction add>} : (tensor<16x4xf32>, tensor<16x2xi32>, tensor<16x2xf32>) -> tensor<16x4xf32>
  %3 = nn.scatter_elements %zeros, %idx, %w {axis = 1 : i64, reduction = #nn<scatter_reduction add>} : (tensor<16x4xf32>, tensor<16x2xi32>, tensor<16x2xf32>) -> tensor<16x4xf32>
  // CHECK: %[[S2:.*]] = nn.scatter_elements %[[Z]], %[[IDX]], %[[W]] {axis = 1 : i64, reduction = #nn<scatter_reduction max>} : (tensor<16x4xf32>, tensor<16x2xi32>, tensor<16x2xf32>) -> tensor<16x4xf32>
  %4 = nn.scatter_elements %zeros, %idx, %w {axis = 1 : i64, reduction = #nn<scatter_reduction max>} : (tensor<16x4xf32>, tensor<16x2xi32>, tensor<16x2xf32>) -> tensor<16x4xf32>
  // CHECK: return %[[E]], %[[G1]], %[[S0]], %[[S1]], %[[S2]]
  return %0, %1, %2, %3, %4 : tensor<2x8x32xf32>, tensor<64x2x8xf32>, tensor<16x4xf32>, tensor<16x4xf32>, tensor<16x4xf32>
}

// -----

// The remaining scatter reductions round-trip too.
// CHECK-LABEL: func.func @scatter_reductions
func.func @scatter_reductions(%d: tensor<4xf32>, %i: tensor<2xi64>, %u: tensor<2xf32>) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  // CHECK: nn.scatter_elements {{.*}} {axis = 0 : i64, reduction = #nn<scatter_reduction mul>}
  %0 = nn.scatter_elements %d, %i, %u {axis = 0 : i64, reduction = #nn<scatter_reduction mul>} : (tensor<4xf32>, tensor<2xi64>, tensor<2xf32>) -> tensor<4xf32>
  // CHECK: nn.scatter_elements {{.*}} {axis = 0 : i64, reduction = #nn<scatter_reduction min>}
  %1 = nn.scatter_elements %d, %i, %u {axis = 0 : i64, reduction = #nn<scatter_reduction min>} : (tensor<4xf32>, tensor<2xi64>, tensor<2xf32>) -> tensor<4xf32>
  // CHECK: nn.scatter_elements {{.*}} {axis = 0 : i64} :
  %2 = nn.scatter_elements %d, %i, %u {axis = 0 : i64, reduction = #nn<scatter_reduction none>} : (tensor<4xf32>, tensor<2xi64>, tensor<2xf32>) -> tensor<4xf32>
  return %0, %1, %2 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @trilu_topk
// CHECK-SAME: (%[[ONES:.*]]: tensor<8x8xf32>, %[[L:.*]]: tensor<16x8xf32>)
func.func @trilu_topk(%ones: tensor<8x8xf32>, %logits: tensor<16x8xf32>)
    -> (tensor<8x8xf32>, tensor<8x8xf32>, tensor<16x2xf32>, tensor<16x2xi64>, tensor<16x3xf32>, tensor<16x3xi32>) {
  // k = 0 is the default and is elided.
  // CHECK: %[[LO:.*]] = nn.trilu %[[ONES]] {upper = false} : tensor<8x8xf32>
  %0 = nn.trilu %ones {upper = false, k = 0 : i64} : tensor<8x8xf32>
  // CHECK: %[[UP:.*]] = nn.trilu %[[ONES]] {k = -1 : i64, upper = true} : tensor<8x8xf32>
  %1 = nn.trilu %ones {upper = true, k = -1 : i64} : tensor<8x8xf32>
  // CHECK: %[[V:.*]], %[[I:.*]] = nn.topk %[[L]] {axis = 1 : i64, k = 2 : i64} : tensor<16x8xf32> -> (tensor<16x2xf32>, tensor<16x2xi64>)
  %v, %i = nn.topk %logits {axis = 1 : i64, k = 2 : i64} : tensor<16x8xf32> -> (tensor<16x2xf32>, tensor<16x2xi64>)
  // CHECK: %[[V2:.*]], %[[I2:.*]] = nn.topk %[[L]] {axis = 1 : i64, k = 3 : i64, largest = false, sorted = false} : tensor<16x8xf32> -> (tensor<16x3xf32>, tensor<16x3xi32>)
  %v2, %i2 = nn.topk %logits {axis = 1 : i64, k = 3 : i64, largest = false, sorted = false} : tensor<16x8xf32> -> (tensor<16x3xf32>, tensor<16x3xi32>)
  // CHECK: return %[[LO]], %[[UP]], %[[V]], %[[I]], %[[V2]], %[[I2]]
  return %0, %1, %v, %i, %v2, %i2 : tensor<8x8xf32>, tensor<8x8xf32>, tensor<16x2xf32>, tensor<16x2xi64>, tensor<16x3xf32>, tensor<16x3xi32>
}

// -----

// Conv with and without bias; max_pool whose result uses ceil_mode's extra
// window: (64 + 0 + 0 - 1 * (3 - 1) - 1) / 2 + 1 = 31 with floor, 32 with ceil.
// CHECK-LABEL: func.func @conv_pool
// CHECK-SAME: (%[[X:.*]]: tensor<1x1x1x64xf32>, %[[W:.*]]: tensor<8x1x1x3xf32>, %[[B:.*]]: tensor<8xf32>, %[[GW:.*]]: tensor<8x4x1x1xf32>)
func.func @conv_pool(%x: tensor<1x1x1x64xf32>, %w: tensor<8x1x1x3xf32>, %b: tensor<8xf32>, %gw: tensor<8x4x1x1xf32>)
    -> (tensor<1x8x1x32xf32>, tensor<1x8x1x62xf32>, tensor<1x8x1x32xf32>) {
  // CHECK: %[[C:.*]] = nn.conv %[[X]], %[[W]], %[[B]] {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 1, 0, 1>, strides = array<i64: 1, 1>} : (tensor<1x1x1x64xf32>, tensor<8x1x1x3xf32>, tensor<8xf32>) -> tensor<1x8x1x64xf32>
  %0 = nn.conv %x, %w, %b {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 1, 0, 1>, strides = array<i64: 1, 1>} : (tensor<1x1x1x64xf32>, tensor<8x1x1x3xf32>, tensor<8xf32>) -> tensor<1x8x1x64xf32>
  // CHECK: %[[C2:.*]] = nn.conv %[[X]], %[[W]] {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x1x1x64xf32>, tensor<8x1x1x3xf32>) -> tensor<1x8x1x62xf32>
  %1 = nn.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x1x1x64xf32>, tensor<8x1x1x3xf32>) -> tensor<1x8x1x62xf32>
  // Grouped 1x1 conv: 8 input channels in 2 groups of 4.
  // CHECK: %[[G:.*]] = nn.conv %[[C]], %[[GW]] {dilations = array<i64: 1, 1>, group = 2 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x8x1x64xf32>, tensor<8x4x1x1xf32>) -> tensor<1x8x1x64xf32>
  %2 = nn.conv %0, %gw {dilations = array<i64: 1, 1>, group = 2 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x8x1x64xf32>, tensor<8x4x1x1xf32>) -> tensor<1x8x1x64xf32>
  // CHECK: %[[P:.*]] = nn.max_pool %[[G]] {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 1, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 2>} : tensor<1x8x1x64xf32> -> tensor<1x8x1x32xf32>
  %3 = nn.max_pool %2 {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 1, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 2>} : tensor<1x8x1x64xf32> -> tensor<1x8x1x32xf32>
  // CHECK: %[[PC:.*]] = nn.max_pool %[[G]] {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 1, 3>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 2>} : tensor<1x8x1x64xf32> -> tensor<1x8x1x32xf32>
  %4 = nn.max_pool %2 {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 1, 3>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 2>} : tensor<1x8x1x64xf32> -> tensor<1x8x1x32xf32>
  // CHECK: return %[[P]], %[[C2]], %[[PC]]
  return %3, %1, %4 : tensor<1x8x1x32xf32>, tensor<1x8x1x62xf32>, tensor<1x8x1x32xf32>
}

// -----

// Grouped-query attention (4 query heads over 2 key/value heads) with two
// masks: a causal i1 mask applied with where, then an additive padding mask.
// CHECK-LABEL: func.func @attention
// CHECK-SAME: (%[[Q:.*]]: tensor<2x4x8x16xf32>, %[[K:.*]]: tensor<2x2x8x16xf32>, %[[V:.*]]: tensor<2x2x8x32xf32>, %[[C:.*]]: tensor<1x1x8x8xi1>, %[[P:.*]]: tensor<2x1x1x8xf32>)
func.func @attention(%q: tensor<2x4x8x16xf32>, %k: tensor<2x2x8x16xf32>, %v: tensor<2x2x8x32xf32>,
                     %causal: tensor<1x1x8x8xi1>, %pad: tensor<2x1x1x8xf32>) -> tensor<2x4x8x32xf32> {
  // CHECK: %[[O:.*]] = nn.attention %[[Q]], %[[K]], %[[V]] mask(%[[C]], %[[P]] : tensor<1x1x8x8xi1>, tensor<2x1x1x8xf32>) {scale = 2.500000e-01 : f32} : (tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x32xf32>) -> tensor<2x4x8x32xf32> {
  // CHECK-NEXT: ^bb0(%[[S:.*]]: tensor<2x4x8x8xf32>, %[[MC:.*]]: tensor<1x1x8x8xi1>, %[[MP:.*]]: tensor<2x1x1x8xf32>):
  // CHECK-NEXT:   %[[NEG:.*]] = arith.constant dense<-1.000000e+04> : tensor<f32>
  // CHECK-NEXT:   %[[W:.*]] = nn.where %[[MC]], %[[S]], %[[NEG]] : (tensor<1x1x8x8xi1>, tensor<2x4x8x8xf32>, tensor<f32>) -> tensor<2x4x8x8xf32>
  // CHECK-NEXT:   %[[R:.*]] = nn.add %[[W]], %[[MP]] : (tensor<2x4x8x8xf32>, tensor<2x1x1x8xf32>) -> tensor<2x4x8x8xf32>
  // CHECK-NEXT:   nn.yield %[[R]] : tensor<2x4x8x8xf32>
  // CHECK-NEXT: }
  %0 = nn.attention %q, %k, %v mask(%causal, %pad : tensor<1x1x8x8xi1>, tensor<2x1x1x8xf32>) {scale = 0.25 : f32}
      : (tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x2x8x32xf32>) -> tensor<2x4x8x32xf32> {
  ^bb0(%s: tensor<2x4x8x8xf32>, %mc: tensor<1x1x8x8xi1>, %mp: tensor<2x1x1x8xf32>):
    %neg = arith.constant dense<-1.0e4> : tensor<f32>
    %w = nn.where %mc, %s, %neg : (tensor<1x1x8x8xi1>, tensor<2x4x8x8xf32>, tensor<f32>) -> tensor<2x4x8x8xf32>
    %r = nn.add %w, %mp : (tensor<2x4x8x8xf32>, tensor<2x1x1x8xf32>) -> tensor<2x4x8x8xf32>
    nn.yield %r : tensor<2x4x8x8xf32>
  }
  // CHECK: return %[[O]]
  return %0 : tensor<2x4x8x32xf32>
}

// -----

// No masks and an identity score modifier; key length (12) differs from the
// query length (8), so the scores are [2, 4, 8, 12].
// CHECK-LABEL: func.func @attention_no_mask
// CHECK-SAME: (%[[Q:.*]]: tensor<2x4x8x16xf32>, %[[K:.*]]: tensor<2x4x12x16xf32>, %[[V:.*]]: tensor<2x4x12x16xf32>)
func.func @attention_no_mask(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x12x16xf32>, %v: tensor<2x4x12x16xf32>) -> tensor<2x4x8x16xf32> {
  // CHECK: %[[O:.*]] = nn.attention %[[Q]], %[[K]], %[[V]] {scale = 1.250000e-01 : f32} : (tensor<2x4x8x16xf32>, tensor<2x4x12x16xf32>, tensor<2x4x12x16xf32>) -> tensor<2x4x8x16xf32> {
  // CHECK-NEXT: ^bb0(%[[S:.*]]: tensor<2x4x8x12xf32>):
  // CHECK-NEXT:   nn.yield %[[S]] : tensor<2x4x8x12xf32>
  // CHECK-NEXT: }
  %0 = nn.attention %q, %k, %v {scale = 0.125 : f32}
      : (tensor<2x4x8x16xf32>, tensor<2x4x12x16xf32>, tensor<2x4x12x16xf32>) -> tensor<2x4x8x16xf32> {
  ^bb0(%s: tensor<2x4x8x12xf32>):
    nn.yield %s : tensor<2x4x8x12xf32>
  }
  // CHECK: return %[[O]]
  return %0 : tensor<2x4x8x16xf32>
}

// -----

// CHECK-LABEL: func.func @rotary
// CHECK-SAME: (%[[X:.*]]: tensor<2x4x8x16xf32>, %[[COS:.*]]: tensor<1x1x8x16xf32>, %[[SIN:.*]]: tensor<8x16xf32>)
func.func @rotary(%x: tensor<2x4x8x16xf32>, %cos: tensor<1x1x8x16xf32>, %sin: tensor<8x16xf32>) -> tensor<2x4x8x16xf32> {
  // CHECK: %[[R:.*]] = nn.rotary %[[X]], %[[COS]], %[[SIN]] : (tensor<2x4x8x16xf32>, tensor<1x1x8x16xf32>, tensor<8x16xf32>) -> tensor<2x4x8x16xf32>
  %0 = nn.rotary %x, %cos, %sin : (tensor<2x4x8x16xf32>, tensor<1x1x8x16xf32>, tensor<8x16xf32>) -> tensor<2x4x8x16xf32>
  // CHECK: return %[[R]]
  return %0 : tensor<2x4x8x16xf32>
}

// -----

// 32 * 64 f32 = 4 * 2048 = 8192 bytes; 3 bf16 = 6 bytes.
// CHECK-LABEL: func.func @external_weight
func.func @external_weight() -> (tensor<32x64xf32>, tensor<3xbf16>) {
  // CHECK: %[[W:.*]] = nn.external_weight {length = 8192 : i64, location = "model.data", name = "layers.0.mlp.w1", offset = 0 : i64} : tensor<32x64xf32>
  %0 = nn.external_weight {name = "layers.0.mlp.w1", location = "model.data", offset = 0 : i64, length = 8192 : i64} : tensor<32x64xf32>
  // CHECK: %[[H:.*]] = nn.external_weight {length = 6 : i64, location = "model.data", name = "h", offset = 8192 : i64} : tensor<3xbf16>
  %1 = nn.external_weight {name = "h", location = "model.data", offset = 8192 : i64, length = 6 : i64} : tensor<3xbf16>
  // CHECK: return %[[W]], %[[H]]
  return %0, %1 : tensor<32x64xf32>, tensor<3xbf16>
}
