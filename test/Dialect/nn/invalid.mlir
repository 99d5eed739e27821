// Every verifier diagnostic of the nn ops, one case each.
// RUN: parc-opt %s -split-input-file -verify-diagnostics

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

// Shapes that do not broadcast are caught by the ResultsBroadcastableShape
// trait before the op's own verifier runs.
func.func @binary_shapes(%a: tensor<2x3xf32>, %b: tensor<4xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'nn.add' op operands don't have broadcast-compatible shapes}}
  %0 = nn.add %a, %b : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @binary_result_shape(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<3x3xf32> {
  // expected-error @+1 {{'nn.sub' op result type '3x3' not broadcast compatible with broadcasted operands's shapes '2x3'}}
  %0 = nn.sub %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}

// -----

func.func @binary_element_types(%a: tensor<2x3xf32>, %b: tensor<3xi64>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'nn.mul' op operand element types differ: 'f32' vs 'i64'}}
  %0 = nn.mul %a, %b : (tensor<2x3xf32>, tensor<3xi64>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @arith_result_type(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf16> {
  // expected-error @+1 {{'nn.div' op result element type must be 'f32'}}
  %0 = nn.div %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf16>
  return %0 : tensor<2x3xf16>
}

// -----

func.func @predicate_result_type(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'nn.less' op result element type must be 'i1'}}
  %0 = nn.less %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @logic_operands(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x3xi1> {
  // expected-error @+1 {{'nn.and' op operands must be i1 tensors}}
  %0 = nn.and %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xi1>
  return %0 : tensor<2x3xi1>
}

// -----

func.func @dynamic_shape(%a: tensor<?x3xf32>) -> tensor<?x3xf32> {
  // expected-error @+1 {{'nn.exp' op operand #0 must be statically shaped tensor of any type values}}
  %0 = nn.exp %a : tensor<?x3xf32>
  return %0 : tensor<?x3xf32>
}

// -----

func.func @where_condition(%c: tensor<2x3xf32>, %a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'nn.where' op operand #0 must be statically shaped tensor of 1-bit signless integer values}}
  %0 = nn.where %c, %a, %a : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @where_shapes(%c: tensor<4xi1>, %a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'nn.where' op operands don't have broadcast-compatible shapes}}
  %0 = nn.where %c, %a, %a : (tensor<4xi1>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @where_branches(%c: tensor<2x3xi1>, %a: tensor<2x3xf32>, %b: tensor<f16>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'nn.where' op both branches must have the result element type}}
  %0 = nn.where %c, %a, %b : (tensor<2x3xi1>, tensor<2x3xf32>, tensor<f16>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

//===----------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------===//

// -----

func.func @matmul_inner(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) -> tensor<2x5xf32> {
  // expected-error @+1 {{'nn.matmul' op operand shapes [2x3] and [4x5] do not multiply}}
  %0 = nn.matmul %a, %b : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

// Batch dims broadcast: [2] with [3] does not.
func.func @matmul_batch(%a: tensor<2x4x3xf32>, %b: tensor<3x3x5xf32>) -> tensor<2x4x5xf32> {
  // expected-error @+1 {{'nn.matmul' op operand shapes [2x4x3] and [3x3x5] do not multiply}}
  %0 = nn.matmul %a, %b : (tensor<2x4x3xf32>, tensor<3x3x5xf32>) -> tensor<2x4x5xf32>
  return %0 : tensor<2x4x5xf32>
}

// -----

// [3] x [3x5] drops the promoted row: the result is [5], not [1x5].
func.func @matmul_result(%a: tensor<3xf32>, %b: tensor<3x5xf32>) -> tensor<1x5xf32> {
  // expected-error @+1 {{'nn.matmul' op result shape must be [5]}}
  %0 = nn.matmul %a, %b : (tensor<3xf32>, tensor<3x5xf32>) -> tensor<1x5xf32>
  return %0 : tensor<1x5xf32>
}

// -----

func.func @matmul_types(%a: tensor<2x3xf32>, %b: tensor<3x5xf16>) -> tensor<2x5xf32> {
  // expected-error @+1 {{'nn.matmul' op operand element types differ}}
  %0 = nn.matmul %a, %b : (tensor<2x3xf32>, tensor<3x5xf16>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

func.func @gemm_rank(%a: tensor<2x3x4xf32>, %b: tensor<4x5xf32>) -> tensor<2x5xf32> {
  // expected-error @+1 {{'nn.gemm' op a and b must be 2-D}}
  %0 = nn.gemm %a, %b : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

// With trans_b the inner dim of b is its dim 1 (5), not 4.
func.func @gemm_inner(%a: tensor<2x4xf32>, %b: tensor<4x5xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'nn.gemm' op inner dimensions differ: 4 vs 5}}
  %0 = nn.gemm %a, %b {trans_b = true} : (tensor<2x4xf32>, tensor<4x5xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// trans_a: a is [K, M] = [4, 2], so the result is [2, 5].
func.func @gemm_result(%a: tensor<4x2xf32>, %b: tensor<4x5xf32>) -> tensor<4x5xf32> {
  // expected-error @+1 {{'nn.gemm' op result shape must be [2x5]}}
  %0 = nn.gemm %a, %b {trans_a = true} : (tensor<4x2xf32>, tensor<4x5xf32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

func.func @gemm_c(%a: tensor<2x4xf32>, %b: tensor<4x5xf32>, %c: tensor<3xf32>) -> tensor<2x5xf32> {
  // expected-error @+1 {{'nn.gemm' op c does not broadcast to the result}}
  %0 = nn.gemm %a, %b, %c : (tensor<2x4xf32>, tensor<4x5xf32>, tensor<3xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

// -----

func.func @linear_rank(%x: tensor<f32>, %w: tensor<4x5xf32>) -> tensor<5xf32> {
  // expected-error @+1 {{'nn.linear' op weight must be 2-D and input at least 1-D}}
  %0 = nn.linear %x, %w : (tensor<f32>, tensor<4x5xf32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

// transpose_weight: the weight is [N, K] = [4, 5], so K is 5.
func.func @linear_features(%x: tensor<2x4xf32>, %w: tensor<4x5xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'nn.linear' op input feature size 4 does not match weight's 5}}
  %0 = nn.linear %x, %w {transpose_weight = true} : (tensor<2x4xf32>, tensor<4x5xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @linear_result(%x: tensor<2x8x4xf32>, %w: tensor<4x5xf32>) -> tensor<16x5xf32> {
  // expected-error @+1 {{'nn.linear' op result shape must be [2x8x5]}}
  %0 = nn.linear %x, %w : (tensor<2x8x4xf32>, tensor<4x5xf32>) -> tensor<16x5xf32>
  return %0 : tensor<16x5xf32>
}

// -----

func.func @linear_bias(%x: tensor<2x4xf32>, %w: tensor<4x5xf32>, %b: tensor<1x5xf32>) -> tensor<2x5xf32> {
  // expected-error @+1 {{'nn.linear' op bias must be [5]}}
  %0 = nn.linear %x, %w, %b : (tensor<2x4xf32>, tensor<4x5xf32>, tensor<1x5xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}

//===----------------------------------------------------------------------===//
// Normalisation and reductions
//===----------------------------------------------------------------------===//

// -----

func.func @softmax_axis(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'nn.softmax' op axis 2 is out of range for rank 2}}
  %0 = nn.softmax %x {axis = 2 : i64} : tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// Axes are normalised by the importer: a negative one is an error here.
func.func @softmax_negative_axis(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'nn.softmax' op axis -1 is out of range for rank 2}}
  %0 = nn.softmax %x {axis = -1 : i64} : tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

func.func @layer_norm_axis(%x: tensor<2x8xf32>, %g: tensor<8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'nn.layer_norm' op axis 3 is out of range for rank 2}}
  %0 = nn.layer_norm %x, %g {axis = 3 : i64, epsilon = 1.0e-05 : f32} : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

func.func @layer_norm_result(%x: tensor<2x8xf32>, %g: tensor<8xf32>) -> tensor<2x8xf16> {
  // expected-error @+1 {{'nn.layer_norm' op result type must equal the input type}}
  %0 = nn.layer_norm %x, %g {axis = 1 : i64, epsilon = 1.0e-05 : f32} : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf16>
  return %0 : tensor<2x8xf16>
}

// -----

// The scale spans dims 1..2 but statistics are over dim 2 only.
func.func @layer_norm_scale(%x: tensor<2x4x8xf32>, %g: tensor<4x8xf32>) -> tensor<2x4x8xf32> {
  // expected-error @+1 {{'nn.layer_norm' op scale and bias must broadcast over the normalised dims [8]}}
  %0 = nn.layer_norm %x, %g {axis = 2 : i64, epsilon = 1.0e-05 : f32} : (tensor<2x4x8xf32>, tensor<4x8xf32>) -> tensor<2x4x8xf32>
  return %0 : tensor<2x4x8xf32>
}

// -----

func.func @layer_norm_bias(%x: tensor<2x4x8xf32>, %g: tensor<8xf32>, %b: tensor<4xf32>) -> tensor<2x4x8xf32> {
  // expected-error @+1 {{'nn.layer_norm' op scale and bias must broadcast over the normalised dims [8]}}
  %0 = nn.layer_norm %x, %g, %b {axis = 2 : i64, epsilon = 1.0e-05 : f32} : (tensor<2x4x8xf32>, tensor<8xf32>, tensor<4xf32>) -> tensor<2x4x8xf32>
  return %0 : tensor<2x4x8xf32>
}

// -----

func.func @rms_norm_scale(%x: tensor<2x4x8xf32>, %g: tensor<4xf32>) -> tensor<2x4x8xf32> {
  // expected-error @+1 {{'nn.rms_norm' op scale and bias must broadcast over the normalised dims [4x8]}}
  %0 = nn.rms_norm %x, %g {axis = 1 : i64, epsilon = 1.0e-06 : f32} : (tensor<2x4x8xf32>, tensor<4xf32>) -> tensor<2x4x8xf32>
  return %0 : tensor<2x4x8xf32>
}

// -----

func.func @rms_norm_axis(%x: tensor<2x4x8xf32>, %g: tensor<8xf32>) -> tensor<2x4x8xf32> {
  // expected-error @+1 {{'nn.rms_norm' op axis -1 is out of range for rank 3}}
  %0 = nn.rms_norm %x, %g {axis = -1 : i64, epsilon = 1.0e-06 : f32} : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
  return %0 : tensor<2x4x8xf32>
}

// -----

func.func @reduce_unsorted(%x: tensor<2x4x8xf32>) -> tensor<2x1x1xf32> {
  // expected-error @+1 {{'nn.reduce_sum' op axes must be sorted, unique and in range}}
  %0 = nn.reduce_sum %x {axes = array<i64: 2, 1>} : tensor<2x4x8xf32> -> tensor<2x1x1xf32>
  return %0 : tensor<2x1x1xf32>
}

// -----

func.func @reduce_duplicate(%x: tensor<2x4x8xf32>) -> tensor<2x4x1xf32> {
  // expected-error @+1 {{'nn.reduce_max' op axes must be sorted, unique and in range}}
  %0 = nn.reduce_max %x {axes = array<i64: 2, 2>} : tensor<2x4x8xf32> -> tensor<2x4x1xf32>
  return %0 : tensor<2x4x1xf32>
}

// -----

func.func @reduce_out_of_range(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  // expected-error @+1 {{'nn.reduce_mean' op axes must be sorted, unique and in range}}
  %0 = nn.reduce_mean %x {axes = array<i64: 3>} : tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  return %0 : tensor<2x4x8xf32>
}

// -----

// keepdims = false drops the reduced axis: [2x4], not [2x4x1].
func.func @reduce_result(%x: tensor<2x4x8xf32>) -> tensor<2x4x1xf32> {
  // expected-error @+1 {{'nn.reduce_min' op result shape must be [2x4]}}
  %0 = nn.reduce_min %x {axes = array<i64: 2>, keepdims = false} : tensor<2x4x8xf32> -> tensor<2x4x1xf32>
  return %0 : tensor<2x4x1xf32>
}

// -----

func.func @reduce_prod_result(%x: tensor<2x4x8xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{'nn.reduce_prod' op result shape must be [1x4x1]}}
  %0 = nn.reduce_prod %x {axes = array<i64: 0, 2>} : tensor<2x4x8xf32> -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

// -----

func.func @reshape_count(%x: tensor<2x8xf32>) -> tensor<3x5xf32> {
  // expected-error @+1 {{'nn.reshape' op cannot reshape [2x8] to [3x5]}}
  %0 = nn.reshape %x : tensor<2x8xf32> to tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// -----

func.func @reshape_type(%x: tensor<2x8xf32>) -> tensor<16xi32> {
  // expected-error @+1 {{'nn.reshape' op element type must not change}}
  %0 = nn.reshape %x : tensor<2x8xf32> to tensor<16xi32>
  return %0 : tensor<16xi32>
}

// -----

func.func @transpose_perm_size(%x: tensor<2x8x4xf32>) -> tensor<8x2x4xf32> {
  // expected-error @+1 {{'nn.transpose' op perm must have one entry per dimension}}
  %0 = nn.transpose %x {perm = array<i64: 1, 0>} : tensor<2x8x4xf32> -> tensor<8x2x4xf32>
  return %0 : tensor<8x2x4xf32>
}

// -----

func.func @transpose_perm_repeat(%x: tensor<2x8x4xf32>) -> tensor<8x8x2xf32> {
  // expected-error @+1 {{'nn.transpose' op perm must be a permutation of 0..rank-1}}
  %0 = nn.transpose %x {perm = array<i64: 1, 1, 0>} : tensor<2x8x4xf32> -> tensor<8x8x2xf32>
  return %0 : tensor<8x8x2xf32>
}

// -----

func.func @transpose_perm_range(%x: tensor<2x8x4xf32>) -> tensor<8x2x4xf32> {
  // expected-error @+1 {{'nn.transpose' op perm must be a permutation of 0..rank-1}}
  %0 = nn.transpose %x {perm = array<i64: 1, 0, 3>} : tensor<2x8x4xf32> -> tensor<8x2x4xf32>
  return %0 : tensor<8x2x4xf32>
}

// -----

// perm [2, 0, 1] of [2x8x4] is [4x2x8].
func.func @transpose_result(%x: tensor<2x8x4xf32>) -> tensor<8x4x2xf32> {
  // expected-error @+1 {{'nn.transpose' op result shape must be [4x2x8]}}
  %0 = nn.transpose %x {perm = array<i64: 2, 0, 1>} : tensor<2x8x4xf32> -> tensor<8x4x2xf32>
  return %0 : tensor<8x4x2xf32>
}

// -----

func.func @expand_shape(%x: tensor<2x3xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{'nn.expand' op input does not broadcast to the result shape}}
  %0 = nn.expand %x : tensor<2x3xf32> to tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// Expand's result is the broadcast of both shapes: [2x3] to [1x3] would be
// [2x3], so the result [1x3] is wrong.
func.func @expand_shrink(%x: tensor<2x3xf32>) -> tensor<1x3xf32> {
  // expected-error @+1 {{'nn.expand' op input does not broadcast to the result shape}}
  %0 = nn.expand %x : tensor<2x3xf32> to tensor<1x3xf32>
  return %0 : tensor<1x3xf32>
}

// -----

func.func @concat_empty() -> tensor<2xf32> {
  // expected-error @+1 {{'nn.concat' op needs at least one input}}
  %0 = nn.concat {axis = 0 : i64} : () -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @concat_axis(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'nn.concat' op axis 2 is out of range for rank 2}}
  %0 = nn.concat %a {axis = 2 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @concat_rank(%a: tensor<2x3xf32>, %b: tensor<3xf32>) -> tensor<2x6xf32> {
  // expected-error @+1 {{'nn.concat' op inputs must match the result's rank and element type}}
  %0 = nn.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

func.func @concat_element_type(%a: tensor<2x3xf32>, %b: tensor<2x3xi64>) -> tensor<2x6xf32> {
  // expected-error @+1 {{'nn.concat' op inputs must match the result's rank and element type}}
  %0 = nn.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x3xi64>) -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

func.func @concat_other_dim(%a: tensor<2x3xf32>, %b: tensor<4x3xf32>) -> tensor<2x6xf32> {
  // expected-error @+1 {{'nn.concat' op inputs differ from the result in dim 0}}
  %0 = nn.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

// 3 + 4 = 7 along axis 1.
func.func @concat_sum(%a: tensor<2x3xf32>, %b: tensor<2x4xf32>) -> tensor<2x6xf32> {
  // expected-error @+1 {{'nn.concat' op inputs sum to 7 along axis, result has 6}}
  %0 = nn.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

func.func @split_axis(%x: tensor<2x6xf32>) -> tensor<2x6xf32> {
  // expected-error @+1 {{'nn.split' op axis -1 is out of range for rank 2}}
  %0 = nn.split %x {axis = -1 : i64} : tensor<2x6xf32> -> (tensor<2x6xf32>)
  return %0 : tensor<2x6xf32>
}

// -----

func.func @split_other_dim(%x: tensor<2x6xf32>) -> (tensor<2x3xf32>, tensor<1x3xf32>) {
  // expected-error @+1 {{'nn.split' op outputs differ from the input in dim 0}}
  %0:2 = nn.split %x {axis = 1 : i64} : tensor<2x6xf32> -> (tensor<2x3xf32>, tensor<1x3xf32>)
  return %0#0, %0#1 : tensor<2x3xf32>, tensor<1x3xf32>
}

// -----

// 2 + 3 = 5 along axis 1, the input has 6.
func.func @split_sum(%x: tensor<2x6xf32>) -> (tensor<2x2xf32>, tensor<2x3xf32>) {
  // expected-error @+1 {{'nn.split' op outputs sum to 5 along axis, input has 6}}
  %0:2 = nn.split %x {axis = 1 : i64} : tensor<2x6xf32> -> (tensor<2x2xf32>, tensor<2x3xf32>)
  return %0#0, %0#1 : tensor<2x2xf32>, tensor<2x3xf32>
}

// -----

func.func @split_rank(%x: tensor<2x6xf32>) -> (tensor<2x3xf32>, tensor<6xf32>) {
  // expected-error @+1 {{'nn.split' op outputs must match the input's rank and element type}}
  %0:2 = nn.split %x {axis = 1 : i64} : tensor<2x6xf32> -> (tensor<2x3xf32>, tensor<6xf32>)
  return %0#0, %0#1 : tensor<2x3xf32>, tensor<6xf32>
}

// -----

func.func @split_element_type(%x: tensor<2x6xf32>) -> (tensor<2x3xf32>, tensor<2x3xf16>) {
  // expected-error @+1 {{'nn.split' op outputs must match the input's rank and element type}}
  %0:2 = nn.split %x {axis = 1 : i64} : tensor<2x6xf32> -> (tensor<2x3xf32>, tensor<2x3xf16>)
  return %0#0, %0#1 : tensor<2x3xf32>, tensor<2x3xf16>
}

// -----

func.func @slice_attrs(%x: tensor<4x8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'nn.slice' op needs one start and one step per dimension}}
  %0 = nn.slice %x {starts = array<i64: 0>, steps = array<i64: 1, 1>} : tensor<4x8xf32> -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

func.func @slice_zero_step(%x: tensor<4x8xf32>) -> tensor<2x8xf32> {
  // expected-error @+1 {{'nn.slice' op step of dim 1 is zero}}
  %0 = nn.slice %x {starts = array<i64: 0, 0>, steps = array<i64: 1, 0>} : tensor<4x8xf32> -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// Start 2, 3 elements, step 1: reads 2, 3, 4 of a dim of size 4.
func.func @slice_past_end(%x: tensor<4x8xf32>) -> tensor<3x8xf32> {
  // expected-error @+1 {{'nn.slice' op dim 0 reads outside [0, 4)}}
  %0 = nn.slice %x {starts = array<i64: 2, 0>, steps = array<i64: 1, 1>} : tensor<4x8xf32> -> tensor<3x8xf32>
  return %0 : tensor<3x8xf32>
}

// -----

// Start 1, 2 elements, step -2: reads 1, -1.
func.func @slice_before_start(%x: tensor<4x8xf32>) -> tensor<4x2xf32> {
  // expected-error @+1 {{'nn.slice' op dim 1 reads outside [0, 8)}}
  %0 = nn.slice %x {starts = array<i64: 0, 1>, steps = array<i64: 1, -2>} : tensor<4x8xf32> -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

func.func @slice_rank(%x: tensor<4x8xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'nn.slice' op result must have the input's rank and element type}}
  %0 = nn.slice %x {starts = array<i64: 0, 0>, steps = array<i64: 1, 1>} : tensor<4x8xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @gather_axis(%t: tensor<64x32xf32>, %i: tensor<2xi64>) -> tensor<64x32xf32> {
  // expected-error @+1 {{'nn.gather' op axis 2 is out of range for rank 2}}
  %0 = nn.gather %t, %i {axis = 2 : i64} : (tensor<64x32xf32>, tensor<2xi64>) -> tensor<64x32xf32>
  return %0 : tensor<64x32xf32>
}

// -----

// axis 1: [64] + [2] + [] = [64x2].
func.func @gather_result(%t: tensor<64x32xf32>, %i: tensor<2xi64>) -> tensor<2x32xf32> {
  // expected-error @+1 {{'nn.gather' op result shape must be [64x2]}}
  %0 = nn.gather %t, %i {axis = 1 : i64} : (tensor<64x32xf32>, tensor<2xi64>) -> tensor<2x32xf32>
  return %0 : tensor<2x32xf32>
}

// -----

func.func @gather_indices(%t: tensor<64x32xf32>, %i: tensor<2xf32>) -> tensor<2x32xf32> {
  // expected-error @+1 {{'nn.gather' op operand #1 must be statically shaped tensor of 32-bit signless integer or 64-bit signless integer values}}
  %0 = nn.gather %t, %i {axis = 0 : i64} : (tensor<64x32xf32>, tensor<2xf32>) -> tensor<2x32xf32>
  return %0 : tensor<2x32xf32>
}

// -----

func.func @scatter_axis(%d: tensor<4x4xf32>, %i: tensor<4x2xi64>, %u: tensor<4x2xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'nn.scatter_elements' op axis 2 is out of range for rank 2}}
  %0 = nn.scatter_elements %d, %i, %u {axis = 2 : i64} : (tensor<4x4xf32>, tensor<4x2xi64>, tensor<4x2xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @scatter_updates(%d: tensor<4x4xf32>, %i: tensor<4x2xi64>, %u: tensor<4x3xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'nn.scatter_elements' op indices and updates must have the same shape}}
  %0 = nn.scatter_elements %d, %i, %u {axis = 1 : i64} : (tensor<4x4xf32>, tensor<4x2xi64>, tensor<4x3xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @scatter_rank(%d: tensor<4x4xf32>, %i: tensor<8xi64>, %u: tensor<8xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{'nn.scatter_elements' op indices must have data's rank and the result data's type}}
  %0 = nn.scatter_elements %d, %i, %u {axis = 1 : i64} : (tensor<4x4xf32>, tensor<8xi64>, tensor<8xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}

// -----

func.func @scatter_result(%d: tensor<4x4xf32>, %i: tensor<4x2xi64>, %u: tensor<4x2xf32>) -> tensor<4x2xf32> {
  // expected-error @+1 {{'nn.scatter_elements' op indices must have data's rank and the result data's type}}
  %0 = nn.scatter_elements %d, %i, %u {axis = 1 : i64} : (tensor<4x4xf32>, tensor<4x2xi64>, tensor<4x2xf32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

func.func @scatter_reduction_name(%d: tensor<4xf32>, %i: tensor<2xi64>, %u: tensor<2xf32>) -> tensor<4xf32> {
  // expected-error @+2 {{expected ::parc::nn::ScatterReduction to be one of: none, add, mul, max, min}}
  // expected-error @+1 {{failed to parse NN_ScatterReductionAttr parameter 'value'}}
  %0 = nn.scatter_elements %d, %i, %u {axis = 0 : i64, reduction = #nn<scatter_reduction sum>} : (tensor<4xf32>, tensor<2xi64>, tensor<2xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @trilu_rank(%x: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{'nn.trilu' op input must be at least 2-D}}
  %0 = nn.trilu %x {upper = true} : tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @topk_axis(%x: tensor<16x8xf32>) -> (tensor<16x2xf32>, tensor<16x2xi64>) {
  // expected-error @+1 {{'nn.topk' op axis 2 is out of range for rank 2}}
  %v, %i = nn.topk %x {axis = 2 : i64, k = 2 : i64} : tensor<16x8xf32> -> (tensor<16x2xf32>, tensor<16x2xi64>)
  return %v, %i : tensor<16x2xf32>, tensor<16x2xi64>
}

// -----

func.func @topk_k(%x: tensor<16x8xf32>) -> (tensor<16x9xf32>, tensor<16x9xi64>) {
  // expected-error @+1 {{'nn.topk' op k = 9 exceeds the axis size 8}}
  %v, %i = nn.topk %x {axis = 1 : i64, k = 9 : i64} : tensor<16x8xf32> -> (tensor<16x9xf32>, tensor<16x9xi64>)
  return %v, %i : tensor<16x9xf32>, tensor<16x9xi64>
}

// -----

func.func @topk_negative_k(%x: tensor<16x8xf32>) -> (tensor<16x8xf32>, tensor<16x8xi64>) {
  // expected-error @+1 {{'nn.topk' op k = -1 exceeds the axis size 8}}
  %v, %i = nn.topk %x {axis = 1 : i64, k = -1 : i64} : tensor<16x8xf32> -> (tensor<16x8xf32>, tensor<16x8xi64>)
  return %v, %i : tensor<16x8xf32>, tensor<16x8xi64>
}

// -----

func.func @topk_result(%x: tensor<16x8xf32>) -> (tensor<16x2xf32>, tensor<16x3xi64>) {
  // expected-error @+1 {{'nn.topk' op results must have shape [16x2]}}
  %v, %i = nn.topk %x {axis = 1 : i64, k = 2 : i64} : tensor<16x8xf32> -> (tensor<16x2xf32>, tensor<16x3xi64>)
  return %v, %i : tensor<16x2xf32>, tensor<16x3xi64>
}

//===----------------------------------------------------------------------===//
// Convolution and pooling
//===----------------------------------------------------------------------===//

// -----

func.func @conv_rank(%x: tensor<1x1x64xf32>, %w: tensor<8x1x1x3xf32>) -> tensor<1x8x62xf32> {
  // expected-error @+1 {{'nn.conv' op input and weight must be N-d with N >= 3 and equal rank}}
  %0 = nn.conv %x, %w {dilations = array<i64: 1>, group = 1 : i64, pads = array<i64: 0, 0>, strides = array<i64: 1>} : (tensor<1x1x64xf32>, tensor<8x1x1x3xf32>) -> tensor<1x8x62xf32>
  return %0 : tensor<1x8x62xf32>
}

// -----

func.func @conv_attrs(%x: tensor<1x1x1x64xf32>, %w: tensor<8x1x1x3xf32>) -> tensor<1x8x1x62xf32> {
  // expected-error @+1 {{'nn.conv' op strides/dilations need one entry per spatial dim, pads two}}
  %0 = nn.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x1x1x64xf32>, tensor<8x1x1x3xf32>) -> tensor<1x8x1x62xf32>
  return %0 : tensor<1x8x1x62xf32>
}

// -----

func.func @conv_zero_stride(%x: tensor<1x1x1x64xf32>, %w: tensor<8x1x1x3xf32>) -> tensor<1x8x1x62xf32> {
  // expected-error @+1 {{'nn.conv' op strides and dilations must be positive}}
  %0 = nn.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 0>} : (tensor<1x1x1x64xf32>, tensor<8x1x1x3xf32>) -> tensor<1x8x1x62xf32>
  return %0 : tensor<1x8x1x62xf32>
}

// -----

// Input channels 4 = weight channels 2 * group 2, but 3 output channels do
// not split into 2 groups.
func.func @conv_group(%x: tensor<1x4x1x8xf32>, %w: tensor<3x2x1x1xf32>) -> tensor<1x3x1x8xf32> {
  // expected-error @+1 {{'nn.conv' op channels do not match weight and group}}
  %0 = nn.conv %x, %w {dilations = array<i64: 1, 1>, group = 2 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x1x8xf32>, tensor<3x2x1x1xf32>) -> tensor<1x3x1x8xf32>
  return %0 : tensor<1x3x1x8xf32>
}

// -----

func.func @conv_channels(%x: tensor<1x4x1x8xf32>, %w: tensor<4x2x1x1xf32>) -> tensor<1x4x1x8xf32> {
  // expected-error @+1 {{'nn.conv' op channels do not match weight and group}}
  %0 = nn.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x4x1x8xf32>, tensor<4x2x1x1xf32>) -> tensor<1x4x1x8xf32>
  return %0 : tensor<1x4x1x8xf32>
}

// -----

// Width: (64 + 1 + 1 - 1 * (3 - 1) - 1) / 2 + 1 = 63 / 2 + 1 = 32.
func.func @conv_result(%x: tensor<1x1x1x64xf32>, %w: tensor<8x1x1x3xf32>) -> tensor<1x8x1x64xf32> {
  // expected-error @+1 {{'nn.conv' op result shape must be [1x8x1x32]}}
  %0 = nn.conv %x, %w {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 1, 0, 1>, strides = array<i64: 1, 2>} : (tensor<1x1x1x64xf32>, tensor<8x1x1x3xf32>) -> tensor<1x8x1x64xf32>
  return %0 : tensor<1x8x1x64xf32>
}

// -----

func.func @conv_bias(%x: tensor<1x1x1x64xf32>, %w: tensor<8x1x1x3xf32>, %b: tensor<4xf32>) -> tensor<1x8x1x62xf32> {
  // expected-error @+1 {{'nn.conv' op bias must have one entry per output channel}}
  %0 = nn.conv %x, %w, %b {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 1>} : (tensor<1x1x1x64xf32>, tensor<8x1x1x3xf32>, tensor<4xf32>) -> tensor<1x8x1x62xf32>
  return %0 : tensor<1x8x1x62xf32>
}

// -----

func.func @max_pool_attrs(%x: tensor<1x8x1x64xf32>) -> tensor<1x8x1x32xf32> {
  // expected-error @+1 {{'nn.max_pool' op kernel/strides/dilations need one entry per spatial dim, pads two}}
  %0 = nn.max_pool %x {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 2>} : tensor<1x8x1x64xf32> -> tensor<1x8x1x32xf32>
  return %0 : tensor<1x8x1x32xf32>
}

// -----

func.func @max_pool_zero_stride(%x: tensor<1x8x1x64xf32>) -> tensor<1x8x1x32xf32> {
  // expected-error @+1 {{'nn.max_pool' op kernel, strides and dilations must be positive}}
  %0 = nn.max_pool %x {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 1, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 0, 2>} : tensor<1x8x1x64xf32> -> tensor<1x8x1x32xf32>
  return %0 : tensor<1x8x1x32xf32>
}

// -----

func.func @max_pool_channels(%x: tensor<1x8x1x64xf32>) -> tensor<1x4x1x32xf32> {
  // expected-error @+1 {{'nn.max_pool' op batch and channel dims must be preserved}}
  %0 = nn.max_pool %x {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 1, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 2>} : tensor<1x8x1x64xf32> -> tensor<1x4x1x32xf32>
  return %0 : tensor<1x4x1x32xf32>
}

// -----

func.func @max_pool_rank(%x: tensor<1x8x1x64xf32>) -> tensor<1x8x32xf32> {
  // expected-error @+1 {{'nn.max_pool' op result must have the input's rank}}
  %0 = nn.max_pool %x {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 1, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 2>} : tensor<1x8x1x64xf32> -> tensor<1x8x32xf32>
  return %0 : tensor<1x8x32xf32>
}

// -----

// Width: (64 - 1 * (2 - 1) - 1) / 2 + 1 = 32 (33 with ceil_mode); 16 is wrong.
func.func @max_pool_size(%x: tensor<1x8x1x64xf32>) -> tensor<1x8x1x16xf32> {
  // expected-error @+1 {{'nn.max_pool' op spatial dim 1 must be 32 (or 33 with ceil_mode)}}
  %0 = nn.max_pool %x {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 1, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 2>} : tensor<1x8x1x64xf32> -> tensor<1x8x1x16xf32>
  return %0 : tensor<1x8x1x16xf32>
}

//===----------------------------------------------------------------------===//
// Transformer blocks
//===----------------------------------------------------------------------===//

// -----

func.func @attention_rank(%q: tensor<2x8x16xf32>, %k: tensor<2x4x8x16xf32>, %v: tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{'nn.attention' op query, key and value must be [B, heads, seq, dim]}}
  %0 = nn.attention %q, %k, %v {scale = 1.0 : f32} : (tensor<2x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32> {
  ^bb0(%s: tensor<2x8x8xf32>):
    nn.yield %s : tensor<2x8x8xf32>
  }
  return %0 : tensor<2x4x8x16xf32>
}

// -----

func.func @attention_batch(%q: tensor<2x4x8x16xf32>, %k: tensor<1x4x8x16xf32>, %v: tensor<1x4x8x16xf32>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{'nn.attention' op batch sizes differ}}
  %0 = nn.attention %q, %k, %v {scale = 1.0 : f32} : (tensor<2x4x8x16xf32>, tensor<1x4x8x16xf32>, tensor<1x4x8x16xf32>) -> tensor<2x4x8x16xf32> {
  ^bb0(%s: tensor<2x4x8x8xf32>):
    nn.yield %s : tensor<2x4x8x8xf32>
  }
  return %0 : tensor<2x4x8x16xf32>
}

// -----

// 3 key/value heads do not divide 4 query heads.
func.func @attention_heads(%q: tensor<2x4x8x16xf32>, %k: tensor<2x3x8x16xf32>, %v: tensor<2x3x8x16xf32>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{'nn.attention' op key/value heads (3) must be equal and divide query heads (4)}}
  %0 = nn.attention %q, %k, %v {scale = 1.0 : f32} : (tensor<2x4x8x16xf32>, tensor<2x3x8x16xf32>, tensor<2x3x8x16xf32>) -> tensor<2x4x8x16xf32> {
  ^bb0(%s: tensor<2x4x8x8xf32>):
    nn.yield %s : tensor<2x4x8x8xf32>
  }
  return %0 : tensor<2x4x8x16xf32>
}

// -----

func.func @attention_kv_heads(%q: tensor<2x4x8x16xf32>, %k: tensor<2x2x8x16xf32>, %v: tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{'nn.attention' op key/value heads (2) must be equal and divide query heads (4)}}
  %0 = nn.attention %q, %k, %v {scale = 1.0 : f32} : (tensor<2x4x8x16xf32>, tensor<2x2x8x16xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32> {
  ^bb0(%s: tensor<2x4x8x8xf32>):
    nn.yield %s : tensor<2x4x8x8xf32>
  }
  return %0 : tensor<2x4x8x16xf32>
}

// -----

func.func @attention_head_dim(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x8xf32>, %v: tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{'nn.attention' op query/key head dims or key/value lengths differ}}
  %0 = nn.attention %q, %k, %v {scale = 1.0 : f32} : (tensor<2x4x8x16xf32>, tensor<2x4x8x8xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32> {
  ^bb0(%s: tensor<2x4x8x8xf32>):
    nn.yield %s : tensor<2x4x8x8xf32>
  }
  return %0 : tensor<2x4x8x16xf32>
}

// -----

func.func @attention_kv_length(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>, %v: tensor<2x4x6x16xf32>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{'nn.attention' op query/key head dims or key/value lengths differ}}
  %0 = nn.attention %q, %k, %v {scale = 1.0 : f32} : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x6x16xf32>) -> tensor<2x4x8x16xf32> {
  ^bb0(%s: tensor<2x4x8x8xf32>):
    nn.yield %s : tensor<2x4x8x8xf32>
  }
  return %0 : tensor<2x4x8x16xf32>
}

// -----

// The result takes v's head dim (32).
func.func @attention_result(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x8x16xf32>, %v: tensor<2x4x8x32xf32>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{'nn.attention' op result shape must be [2x4x8x32]}}
  %0 = nn.attention %q, %k, %v {scale = 1.0 : f32} : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x32xf32>) -> tensor<2x4x8x16xf32> {
  ^bb0(%s: tensor<2x4x8x8xf32>):
    nn.yield %s : tensor<2x4x8x8xf32>
  }
  return %0 : tensor<2x4x8x16xf32>
}

// -----

func.func @attention_block_args(%q: tensor<2x4x8x16xf32>, %m: tensor<2x1x1x8xf32>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{'nn.attention' op score modifier takes the scores and one argument per mask}}
  %0 = nn.attention %q, %q, %q mask(%m : tensor<2x1x1x8xf32>) {scale = 1.0 : f32} : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32> {
  ^bb0(%s: tensor<2x4x8x8xf32>):
    nn.yield %s : tensor<2x4x8x8xf32>
  }
  return %0 : tensor<2x4x8x16xf32>
}

// -----

func.func @attention_score_type(%q: tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{'nn.attention' op score modifier's first argument must be 'tensor<2x4x8x8xf32>'}}
  %0 = nn.attention %q, %q, %q {scale = 1.0 : f32} : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32> {
  ^bb0(%s: tensor<2x4x8x16xf32>):
    nn.yield %s : tensor<2x4x8x16xf32>
  }
  return %0 : tensor<2x4x8x16xf32>
}

// -----

func.func @attention_mask_type(%q: tensor<2x4x8x16xf32>, %m: tensor<2x1x1x8xf32>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{'nn.attention' op score modifier arguments must match the mask types}}
  %0 = nn.attention %q, %q, %q mask(%m : tensor<2x1x1x8xf32>) {scale = 1.0 : f32} : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32> {
  ^bb0(%s: tensor<2x4x8x8xf32>, %mk: tensor<2x1x8x8xf32>):
    nn.yield %s : tensor<2x4x8x8xf32>
  }
  return %0 : tensor<2x4x8x16xf32>
}

// -----

// Yielding the broadcast mask instead of the scores.
func.func @attention_yield_type(%q: tensor<2x4x8x16xf32>, %m: tensor<2x1x1x8xf32>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{'nn.attention' op score modifier must yield 'tensor<2x4x8x8xf32>'}}
  %0 = nn.attention %q, %q, %q mask(%m : tensor<2x1x1x8xf32>) {scale = 1.0 : f32} : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32> {
  ^bb0(%s: tensor<2x4x8x8xf32>, %mk: tensor<2x1x1x8xf32>):
    nn.yield %mk : tensor<2x1x1x8xf32>
  }
  return %0 : tensor<2x4x8x16xf32>
}

// -----

// The modifier region is isolated: it cannot use the enclosing function's
// values, masks must come in as operands.
func.func @attention_isolated(%q: tensor<2x4x8x16xf32>, %m: tensor<2x4x8x8xf32>) -> tensor<2x4x8x16xf32> {
  // expected-note @+1 {{required by region isolation constraints}}
  %0 = nn.attention %q, %q, %q {scale = 1.0 : f32} : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32> {
  ^bb0(%s: tensor<2x4x8x8xf32>):
    // expected-error @+1 {{using value defined outside the region}}
    %r = nn.add %s, %m : (tensor<2x4x8x8xf32>, tensor<2x4x8x8xf32>) -> tensor<2x4x8x8xf32>
    nn.yield %r : tensor<2x4x8x8xf32>
  }
  return %0 : tensor<2x4x8x16xf32>
}

// -----

func.func @yield_parent(%x: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'nn.yield' op expects parent op 'nn.attention'}}
  nn.yield %x : tensor<2xf32>
}

// -----

func.func @rotary_odd(%x: tensor<2x4x8x15xf32>, %c: tensor<8x15xf32>) -> tensor<2x4x8x15xf32> {
  // expected-error @+1 {{'nn.rotary' op last dim must be even to rotate halves}}
  %0 = nn.rotary %x, %c, %c : (tensor<2x4x8x15xf32>, tensor<8x15xf32>, tensor<8x15xf32>) -> tensor<2x4x8x15xf32>
  return %0 : tensor<2x4x8x15xf32>
}

// -----

func.func @rotary_scalar(%x: tensor<f32>, %c: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{'nn.rotary' op last dim must be even to rotate halves}}
  %0 = nn.rotary %x, %c, %c : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// cos spans half the last dim only.
func.func @rotary_tables(%x: tensor<2x4x8x16xf32>, %c: tensor<8x8xf32>, %s: tensor<8x16xf32>) -> tensor<2x4x8x16xf32> {
  // expected-error @+1 {{'nn.rotary' op cos and sin must broadcast to the input and span its last dim}}
  %0 = nn.rotary %x, %c, %s : (tensor<2x4x8x16xf32>, tensor<8x8xf32>, tensor<8x16xf32>) -> tensor<2x4x8x16xf32>
  return %0 : tensor<2x4x8x16xf32>
}

// -----

func.func @rotary_result(%x: tensor<2x4x8x16xf32>, %c: tensor<8x16xf32>) -> tensor<2x4x8x16xf16> {
  // expected-error @+1 {{'nn.rotary' op result type must equal the input type}}
  %0 = nn.rotary %x, %c, %c : (tensor<2x4x8x16xf32>, tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<2x4x8x16xf16>
  return %0 : tensor<2x4x8x16xf16>
}

//===----------------------------------------------------------------------===//
// Weights
//===----------------------------------------------------------------------===//

// -----

func.func @external_weight_offset() -> tensor<4xf32> {
  // expected-error @+1 {{'nn.external_weight' op offset and length must be non-negative}}
  %0 = nn.external_weight {name = "w", location = "w.bin", offset = -1 : i64, length = 16 : i64} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @external_weight_length_sign() -> tensor<4xf32> {
  // expected-error @+1 {{'nn.external_weight' op offset and length must be non-negative}}
  %0 = nn.external_weight {name = "w", location = "w.bin", offset = 0 : i64, length = -16 : i64} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// 4 f32 need 16 bytes.
func.func @external_weight_length() -> tensor<4xf32> {
  // expected-error @+1 {{'nn.external_weight' op length 12 bytes does not hold 'tensor<4xf32>'}}
  %0 = nn.external_weight {name = "w", location = "w.bin", offset = 0 : i64, length = 12 : i64} : tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// With padding the file holds the type less the padding: 4x6 f32 padded to
// 4x8 is 96 bytes, not 128.
func.func @external_weight_padded_length() -> tensor<4x8xf32> {
  // expected-error @+1 {{'nn.external_weight' op length 128 bytes does not hold 'tensor<4x6xf32>'}}
  %0 = nn.external_weight {name = "w", location = "w.bin", offset = 0 : i64, length = 128 : i64, padding = array<i64: 0, 2>} : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @external_weight_padding_rank() -> tensor<4x8xf32> {
  // expected-error @+1 {{'nn.external_weight' op padding needs one entry per dim of 'tensor<4x8xf32>'}}
  %0 = nn.external_weight {name = "w", location = "w.bin", offset = 0 : i64, length = 96 : i64, padding = array<i64: 2>} : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @external_weight_padding_size() -> tensor<4x8xf32> {
  // expected-error @+1 {{'nn.external_weight' op padding 9 does not fit 'tensor<4x8xf32>'}}
  %0 = nn.external_weight {name = "w", location = "w.bin", offset = 0 : i64, length = 0 : i64, padding = array<i64: 0, 9>} : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

// Zeros spread over blocks: (stored, zeros) pairs that sum to the dim.
func.func @external_weight_padding_blocks_sum() -> tensor<4x8xf32> {
  // expected-error @+1 {{'nn.external_weight' op padding_blocks do not sum to dim 1 of 'tensor<4x8xf32>'}}
  %0 = nn.external_weight {name = "w", location = "w.bin", offset = 0 : i64, length = 96 : i64, padding = array<i64: 0, 2>, padding_blocks = array<i64: 3, 1, 3, 0>} : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @external_weight_padding_blocks_dim() -> tensor<4x8xf32> {
  // expected-error @+1 {{'nn.external_weight' op padding_blocks needs (stored, zeros) pairs over the one dim that padding pads}}
  %0 = nn.external_weight {name = "w", location = "w.bin", offset = 0 : i64, length = 128 : i64, padding_blocks = array<i64: 4, 4>} : tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}
