// The nn folders: shape arithmetic on constants, identities, compositions,
// and the cases that must stay.
// RUN: parc-opt %s --split-input-file --nn-canonicalize | FileCheck %s

//===----------------------------------------------------------------------===//
// Shape arithmetic (what exporters' Shape → Gather → Concat chains become)
//===----------------------------------------------------------------------===//

// Gather of a scalar index from a shape vector; a negative index counts from
// the end.
// CHECK-LABEL: func.func @gather_shape_dim
// CHECK-DAG: %[[D1:.*]] = arith.constant dense<8> : tensor<i64>
// CHECK-DAG: %[[DL:.*]] = arith.constant dense<32> : tensor<i64>
// CHECK-NOT: nn.gather
// CHECK: return %[[D1]], %[[DL]]
func.func @gather_shape_dim() -> (tensor<i64>, tensor<i64>) {
  %shape = arith.constant dense<[2, 8, 32]> : tensor<3xi64>
  %one = arith.constant dense<1> : tensor<i64>
  %last = arith.constant dense<-1> : tensor<i64>
  %0 = nn.gather %shape, %one {axis = 0 : i64} : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  %1 = nn.gather %shape, %last {axis = 0 : i64} : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  return %0, %1 : tensor<i64>, tensor<i64>
}

// -----

// Gather along axis 1 of a 2x3 table with indices [2, 0] (i32):
// [[1, 2, 3], [4, 5, 6]] -> [[3, 1], [6, 4]].
// CHECK-LABEL: func.func @gather_axis1
// CHECK: %[[C:.*]] = arith.constant dense<{{\[}}[3, 1], [6, 4]]> : tensor<2x2xi64>
// CHECK-NOT: nn.gather
// CHECK: return %[[C]]
func.func @gather_axis1() -> tensor<2x2xi64> {
  %t = arith.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi64>
  %i = arith.constant dense<[2, 0]> : tensor<2xi32>
  %0 = nn.gather %t, %i {axis = 1 : i64} : (tensor<2x3xi64>, tensor<2xi32>) -> tensor<2x2xi64>
  return %0 : tensor<2x2xi64>
}

// -----

// An out-of-range index (3 for a dim of 3) is left for the runtime.
// CHECK-LABEL: func.func @gather_out_of_range
// CHECK: %[[G:.*]] = nn.gather
// CHECK: return %[[G]]
func.func @gather_out_of_range() -> tensor<i64> {
  %shape = arith.constant dense<[2, 8, 32]> : tensor<3xi64>
  %three = arith.constant dense<3> : tensor<i64>
  %0 = nn.gather %shape, %three {axis = 0 : i64} : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  return %0 : tensor<i64>
}

// -----

// Gather from a dense_resource table reads the blob: rows 1 and 0 of
// [[1, 2], [3, 4]] (i32, little-endian after the 4-byte alignment header).
// CHECK-LABEL: func.func @gather_resource
// CHECK: %[[C:.*]] = arith.constant dense<{{\[}}[3, 4], [1, 2]]> : tensor<2x2xi32>
// CHECK-NOT: nn.gather
// CHECK: return %[[C]]
func.func @gather_resource() -> tensor<2x2xi32> {
  %t = arith.constant dense_resource<table> : tensor<2x2xi32>
  %i = arith.constant dense<[1, 0]> : tensor<2xi64>
  %0 = nn.gather %t, %i {axis = 0 : i64} : (tensor<2x2xi32>, tensor<2xi64>) -> tensor<2x2xi32>
  return %0 : tensor<2x2xi32>
}

{-#
  dialect_resources: {
    builtin: {
      table: "0x0400000001000000020000000300000004000000"
    }
  }
#-}

// -----

// A bf16 initializer (a blob) cast to f32 stays a cast: folding it would
// make an f32 copy of twice the bytes, and its shards keep bf16. A small
// inline constant still folds.
// CHECK-LABEL: func.func @cast_of_initializer
// CHECK: %[[W:.*]] = arith.constant dense_resource<w_bf16> : tensor<2x2xbf16>
// CHECK: %[[C:.*]] = nn.cast %[[W]] : tensor<2x2xbf16> to tensor<2x2xf32>
// CHECK: %[[S:.*]] = arith.constant dense<1.000000e+00> : tensor<2xf32>
// CHECK: return %[[C]], %[[S]]
func.func @cast_of_initializer() -> (tensor<2x2xf32>, tensor<2xf32>) {
  %w = arith.constant dense_resource<w_bf16> : tensor<2x2xbf16>
  %0 = nn.cast %w : tensor<2x2xbf16> to tensor<2x2xf32>
  %s = arith.constant dense<1.0> : tensor<2xbf16>
  %1 = nn.cast %s : tensor<2xbf16> to tensor<2xf32>
  return %0, %1 : tensor<2x2xf32>, tensor<2xf32>
}

{-#
  dialect_resources: {
    builtin: {
      w_bf16: "0x02000000803F0040404080C0"
    }
  }
#-}

// -----

// The Unsqueeze + Concat of a shape: [2] ++ [8] ++ [4, 8] = [2, 8, 4, 8].
// CHECK-LABEL: func.func @concat_shape
// CHECK: %[[C:.*]] = arith.constant dense<[2, 8, 4, 8]> : tensor<4xi64>
// CHECK-NOT: nn.concat
// CHECK: return %[[C]]
func.func @concat_shape() -> tensor<4xi64> {
  %b = arith.constant dense<2> : tensor<1xi64>
  %s = arith.constant dense<8> : tensor<1xi64>
  %hd = arith.constant dense<[4, 8]> : tensor<2xi64>
  %0 = nn.concat %b, %s, %hd {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<2xi64>) -> tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

// Concat along axis 1 interleaves rows: [[1], [2]] ++ [[3, 4], [5, 6]]
// = [[1, 3, 4], [2, 5, 6]].
// CHECK-LABEL: func.func @concat_axis1
// CHECK: %[[C:.*]] = arith.constant dense<{{\[}}[1, 3, 4], [2, 5, 6]]> : tensor<2x3xi32>
// CHECK-NOT: nn.concat
// CHECK: return %[[C]]
func.func @concat_axis1() -> tensor<2x3xi32> {
  %a = arith.constant dense<[[1], [2]]> : tensor<2x1xi32>
  %b = arith.constant dense<[[3, 4], [5, 6]]> : tensor<2x2xi32>
  %0 = nn.concat %a, %b {axis = 1 : i64} : (tensor<2x1xi32>, tensor<2x2xi32>) -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}

// -----

// A single input of the result type is the input itself.
// CHECK-LABEL: func.func @concat_single
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NOT: nn.concat
// CHECK: return %[[X]]
func.func @concat_single(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = nn.concat %x {axis = 0 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// One constant input is not enough.
// CHECK-LABEL: func.func @concat_not_constant
// CHECK-SAME: (%[[X:.*]]: tensor<1xi64>)
// CHECK: %[[C:.*]] = nn.concat
// CHECK: return %[[C]]
func.func @concat_not_constant(%x: tensor<1xi64>) -> tensor<2xi64> {
  %c = arith.constant dense<4> : tensor<1xi64>
  %0 = nn.concat %x, %c {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>) -> tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

// Reshape of a constant is the constant with the new type.
// CHECK-LABEL: func.func @reshape_constant
// CHECK: %[[C:.*]] = arith.constant dense<{{\[}}[1, 2], [3, 4], [5, 6]]> : tensor<3x2xi64>
// CHECK-NOT: nn.reshape
// CHECK: return %[[C]]
func.func @reshape_constant() -> tensor<3x2xi64> {
  %c = arith.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi64>
  %0 = nn.reshape %c : tensor<2x3xi64> to tensor<3x2xi64>
  return %0 : tensor<3x2xi64>
}

// -----

// Integer shape arithmetic with broadcasting:
//   [[10, 20, 30], [40, 50, 60]] + [1, 2, 3]  = [[11, 22, 33], [41, 52, 63]]
//   [[10, 20, 30], [40, 50, 60]] - [[1], [2]] = [[9, 19, 29], [38, 48, 58]]
//   [2, 8] * 4 (scalar)                       = [8, 32]
// CHECK-LABEL: func.func @int_arith
// CHECK-DAG: %[[ADD:.*]] = arith.constant dense<{{\[}}[11, 22, 33], [41, 52, 63]]> : tensor<2x3xi64>
// CHECK-DAG: %[[SUB:.*]] = arith.constant dense<{{\[}}[9, 19, 29], [38, 48, 58]]> : tensor<2x3xi64>
// CHECK-DAG: %[[MUL:.*]] = arith.constant dense<[8, 32]> : tensor<2xi64>
// CHECK-NOT: nn.
// CHECK: return %[[ADD]], %[[SUB]], %[[MUL]]
func.func @int_arith() -> (tensor<2x3xi64>, tensor<2x3xi64>, tensor<2xi64>) {
  %m = arith.constant dense<[[10, 20, 30], [40, 50, 60]]> : tensor<2x3xi64>
  %row = arith.constant dense<[1, 2, 3]> : tensor<3xi64>
  %col = arith.constant dense<[[1], [2]]> : tensor<2x1xi64>
  %v = arith.constant dense<[2, 8]> : tensor<2xi64>
  %four = arith.constant dense<4> : tensor<i64>
  %0 = nn.add %m, %row : (tensor<2x3xi64>, tensor<3xi64>) -> tensor<2x3xi64>
  %1 = nn.sub %m, %col : (tensor<2x3xi64>, tensor<2x1xi64>) -> tensor<2x3xi64>
  %2 = nn.mul %v, %four : (tensor<2xi64>, tensor<i64>) -> tensor<2xi64>
  return %0, %1, %2 : tensor<2x3xi64>, tensor<2x3xi64>, tensor<2xi64>
}

// -----

// Integer division truncates toward zero (ONNX and C):
//   [7, -7, 7, -7] / [2, 2, -2, -2] = [3, -3, -3, 3]; 32 / 4 = 8 (head dim).
// CHECK-LABEL: func.func @int_div
// CHECK-DAG: %[[Q:.*]] = arith.constant dense<[3, -3, -3, 3]> : tensor<4xi64>
// CHECK-DAG: %[[H:.*]] = arith.constant dense<8> : tensor<1xi64>
// CHECK-NOT: nn.div
// CHECK: return %[[Q]], %[[H]]
func.func @int_div() -> (tensor<4xi64>, tensor<1xi64>) {
  %a = arith.constant dense<[7, -7, 7, -7]> : tensor<4xi64>
  %b = arith.constant dense<[2, 2, -2, -2]> : tensor<4xi64>
  %hidden = arith.constant dense<32> : tensor<1xi64>
  %heads = arith.constant dense<4> : tensor<i64>
  %0 = nn.div %a, %b : (tensor<4xi64>, tensor<4xi64>) -> tensor<4xi64>
  %1 = nn.div %hidden, %heads : (tensor<1xi64>, tensor<i64>) -> tensor<1xi64>
  return %0, %1 : tensor<4xi64>, tensor<1xi64>
}

// -----

// Integer division by zero is undefined: it does not fold.
// CHECK-LABEL: func.func @int_div_by_zero
// CHECK: %[[D:.*]] = nn.div
// CHECK: return %[[D]]
func.func @int_div_by_zero() -> tensor<2xi64> {
  %a = arith.constant dense<[6, 4]> : tensor<2xi64>
  %b = arith.constant dense<[3, 0]> : tensor<2xi64>
  %0 = nn.div %a, %b : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

// Float arithmetic: 1.5 * [2, -4] = [3, -6]; [1, 3] / 4 = [0.25, 0.75];
// 2 ^ [3, 0.5] = [8, 1.41421354] (sqrt(2) rounded to f32).
// CHECK-LABEL: func.func @float_arith
// CHECK-DAG: %[[M:.*]] = arith.constant dense<[3.000000e+00, -6.000000e+00]> : tensor<2xf32>
// CHECK-DAG: %[[D:.*]] = arith.constant dense<[2.500000e-01, 7.500000e-01]> : tensor<2xf32>
// CHECK-DAG: %[[P:.*]] = arith.constant dense<[8.000000e+00, 1.41421354]> : tensor<2xf32>
// CHECK-NOT: nn.
// CHECK: return %[[M]], %[[D]], %[[P]]
func.func @float_arith() -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
  %a = arith.constant dense<1.5> : tensor<f32>
  %b = arith.constant dense<[2.0, -4.0]> : tensor<2xf32>
  %c = arith.constant dense<[1.0, 3.0]> : tensor<2xf32>
  %four = arith.constant dense<4.0> : tensor<f32>
  %two = arith.constant dense<2.0> : tensor<f32>
  %e = arith.constant dense<[3.0, 0.5]> : tensor<2xf32>
  %0 = nn.mul %a, %b : (tensor<f32>, tensor<2xf32>) -> tensor<2xf32>
  %1 = nn.div %c, %four : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  %2 = nn.pow %two, %e : (tensor<f32>, tensor<2xf32>) -> tensor<2xf32>
  return %0, %1, %2 : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
}

// -----

// min/max, neg and integer pow: min([1, 5], [3, 2]) = [1, 2],
// max([1, 5], 4) = [4, 5], -[1, 5] = [-1, -5], [1, 5] ^ 2 = [1, 25].
// CHECK-LABEL: func.func @min_max_neg_pow
// CHECK-DAG: %[[MIN:.*]] = arith.constant dense<[1, 2]> : tensor<2xi64>
// CHECK-DAG: %[[MAX:.*]] = arith.constant dense<[4, 5]> : tensor<2xi64>
// CHECK-DAG: %[[NEG:.*]] = arith.constant dense<[-1, -5]> : tensor<2xi64>
// CHECK-DAG: %[[POW:.*]] = arith.constant dense<[1, 25]> : tensor<2xi64>
// CHECK-NOT: nn.
// CHECK: return %[[MIN]], %[[MAX]], %[[NEG]], %[[POW]]
func.func @min_max_neg_pow() -> (tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) {
  %a = arith.constant dense<[1, 5]> : tensor<2xi64>
  %b = arith.constant dense<[3, 2]> : tensor<2xi64>
  %four = arith.constant dense<4> : tensor<i64>
  %two = arith.constant dense<2> : tensor<i64>
  %0 = nn.min %a, %b : (tensor<2xi64>, tensor<2xi64>) -> tensor<2xi64>
  %1 = nn.max %a, %four : (tensor<2xi64>, tensor<i64>) -> tensor<2xi64>
  %2 = nn.neg %a : tensor<2xi64>
  %3 = nn.pow %a, %two : (tensor<2xi64>, tensor<i64>) -> tensor<2xi64>
  return %0, %1, %2, %3 : tensor<2xi64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>
}

// -----

// A negative integer exponent has no integer result: no fold.
// CHECK-LABEL: func.func @int_pow_negative
// CHECK: %[[P:.*]] = nn.pow
// CHECK: return %[[P]]
func.func @int_pow_negative() -> tensor<2xi64> {
  %a = arith.constant dense<[1, 5]> : tensor<2xi64>
  %m = arith.constant dense<-1> : tensor<i64>
  %0 = nn.pow %a, %m : (tensor<2xi64>, tensor<i64>) -> tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

// The causal-mask computation: positions [0, 1, 2] as a column against the
// row [0, 1, 2]. less(col, row)[i][j] = i < j:
//   [[F, T, T], [F, F, T], [F, F, F]]
// equal(col, row) is the identity pattern; greater(col, row) = i > j.
// CHECK-LABEL: func.func @compare
// CHECK-DAG: %[[LT:.*]] = arith.constant dense<{{\[}}[false, true, true], [false, false, true], [false, false, false]]> : tensor<3x3xi1>
// CHECK-DAG: %[[EQ:.*]] = arith.constant dense<{{\[}}[true, false, false], [false, true, false], [false, false, true]]> : tensor<3x3xi1>
// CHECK-DAG: %[[GT:.*]] = arith.constant dense<{{\[}}[false, false, false], [true, false, false], [true, true, false]]> : tensor<3x3xi1>
// CHECK-NOT: nn.
// CHECK: return %[[LT]], %[[EQ]], %[[GT]]
func.func @compare() -> (tensor<3x3xi1>, tensor<3x3xi1>, tensor<3x3xi1>) {
  %col = arith.constant dense<[[0], [1], [2]]> : tensor<3x1xi64>
  %row = arith.constant dense<[0, 1, 2]> : tensor<3xi64>
  %0 = nn.less %col, %row : (tensor<3x1xi64>, tensor<3xi64>) -> tensor<3x3xi1>
  %1 = nn.equal %col, %row : (tensor<3x1xi64>, tensor<3xi64>) -> tensor<3x3xi1>
  %2 = nn.greater %col, %row : (tensor<3x1xi64>, tensor<3xi64>) -> tensor<3x3xi1>
  return %0, %1, %2 : tensor<3x3xi1>, tensor<3x3xi1>, tensor<3x3xi1>
}

// -----

// Float comparison and logic: [0.5, 2.0] < 1.0 = [T, F];
// and([T, F], [T, T]) = [T, F]; or([T, F], [F, F]) = [T, F].
// CHECK-LABEL: func.func @compare_float_logic
// CHECK-DAG: %[[LT:.*]] = arith.constant dense<[true, false]> : tensor<2xi1>
// CHECK-NOT: nn.
// CHECK: return %[[LT]], %[[LT]], %[[LT]]
func.func @compare_float_logic() -> (tensor<2xi1>, tensor<2xi1>, tensor<2xi1>) {
  %x = arith.constant dense<[0.5, 2.0]> : tensor<2xf32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %tf = arith.constant dense<[true, false]> : tensor<2xi1>
  %tt = arith.constant dense<true> : tensor<2xi1>
  %ff = arith.constant dense<false> : tensor<2xi1>
  %0 = nn.less %x, %one : (tensor<2xf32>, tensor<f32>) -> tensor<2xi1>
  %1 = nn.and %tf, %tt : (tensor<2xi1>, tensor<2xi1>) -> tensor<2xi1>
  %2 = nn.or %tf, %ff : (tensor<2xi1>, tensor<2xi1>) -> tensor<2xi1>
  return %0, %1, %2 : tensor<2xi1>, tensor<2xi1>, tensor<2xi1>
}

// -----

// where(cond, x, y) with a broadcast condition column [[T], [F]] and a scalar
// else-branch: [[1, 2], [0, 0]]; the mask-building where with a float scalar:
// where([T, F], 0.0, -inf) = [0.0, -inf].
// CHECK-LABEL: func.func @where
// CHECK-DAG: %[[W:.*]] = arith.constant dense<{{\[}}[1, 2], [0, 0]]> : tensor<2x2xi64>
// CHECK-DAG: %[[M:.*]] = arith.constant dense<[0.000000e+00, 0xFF800000]> : tensor<2xf32>
// CHECK-NOT: nn.where
// CHECK: return %[[W]], %[[M]]
func.func @where() -> (tensor<2x2xi64>, tensor<2xf32>) {
  %c = arith.constant dense<[[true], [false]]> : tensor<2x1xi1>
  %x = arith.constant dense<[[1, 2], [3, 4]]> : tensor<2x2xi64>
  %zero = arith.constant dense<0> : tensor<i64>
  %0 = nn.where %c, %x, %zero : (tensor<2x1xi1>, tensor<2x2xi64>, tensor<i64>) -> tensor<2x2xi64>
  %tf = arith.constant dense<[true, false]> : tensor<2xi1>
  %fz = arith.constant dense<0.0> : tensor<f32>
  %ninf = arith.constant dense<0xFF800000> : tensor<f32>
  %1 = nn.where %tf, %fz, %ninf : (tensor<2xi1>, tensor<f32>, tensor<f32>) -> tensor<2xf32>
  return %0, %1 : tensor<2x2xi64>, tensor<2xf32>
}

// -----

// ONNX Cast: int -> float exactly; float -> int truncates toward zero
// ([2.7, -2.7, 0.5] -> [2, -2, 0]); anything -> bool is `!= 0` (all three
// floats are non-zero: a splat true; [5, 0] -> [true, false]).
// CHECK-LABEL: func.func @cast
// CHECK-DAG: %[[F:.*]] = arith.constant dense<[3.000000e+00, -1.000000e+00]> : tensor<2xf32>
// CHECK-DAG: %[[I:.*]] = arith.constant dense<[2, -2, 0]> : tensor<3xi32>
// CHECK-DAG: %[[B:.*]] = arith.constant dense<true> : tensor<3xi1>
// CHECK-DAG: %[[BI:.*]] = arith.constant dense<[true, false]> : tensor<2xi1>
// CHECK-NOT: nn.cast
// CHECK: return %[[F]], %[[I]], %[[B]], %[[BI]]
func.func @cast() -> (tensor<2xf32>, tensor<3xi32>, tensor<3xi1>, tensor<2xi1>) {
  %i = arith.constant dense<[3, -1]> : tensor<2xi64>
  %f = arith.constant dense<[2.7, -2.7, 0.5]> : tensor<3xf32>
  %0 = nn.cast %i : tensor<2xi64> to tensor<2xf32>
  %1 = nn.cast %f : tensor<3xf32> to tensor<3xi32>
  %2 = nn.cast %f : tensor<3xf32> to tensor<3xi1>
  %ib = arith.constant dense<[5, 0]> : tensor<2xi64>
  %3 = nn.cast %ib : tensor<2xi64> to tensor<2xi1>
  return %0, %1, %2, %3 : tensor<2xf32>, tensor<3xi32>, tensor<3xi1>, tensor<2xi1>
}

// -----

// A cast to the same type is the input.
// CHECK-LABEL: func.func @cast_identity
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NOT: nn.cast
// CHECK: return %[[X]]
func.func @cast_identity(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = nn.cast %x : tensor<2x3xf32> to tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// A cast of a non-constant to another type stays.
// CHECK-LABEL: func.func @cast_keep
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xi64>)
// CHECK: %[[C:.*]] = nn.cast %[[X]] : tensor<2x3xi64> to tensor<2x3xf32>
// CHECK: return %[[C]]
func.func @cast_keep(%x: tensor<2x3xi64>) -> tensor<2x3xf32> {
  %0 = nn.cast %x : tensor<2x3xi64> to tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

//===----------------------------------------------------------------------===//
// Slice, expand, transpose, reshape
//===----------------------------------------------------------------------===//

// [0..9] from 1 by 3 for 3 elements = [1, 4, 7]; from 8 by -2 = [8, 6, 4].
// The 2-D slice of [[1, 2, 3], [4, 5, 6]] rows from 1, columns from 2 going
// backwards by 2: row 1, columns 2 and 0 = [[6, 4]].
// CHECK-LABEL: func.func @slice_constant
// CHECK-DAG: %[[A:.*]] = arith.constant dense<[1, 4, 7]> : tensor<3xi64>
// CHECK-DAG: %[[B:.*]] = arith.constant dense<[8, 6, 4]> : tensor<3xi64>
// CHECK-DAG: %[[C:.*]] = arith.constant dense<{{\[}}[6, 4]]> : tensor<1x2xi64>
// CHECK-NOT: nn.slice
// CHECK: return %[[A]], %[[B]], %[[C]]
func.func @slice_constant() -> (tensor<3xi64>, tensor<3xi64>, tensor<1x2xi64>) {
  %r = arith.constant dense<[0, 1, 2, 3, 4, 5, 6, 7, 8, 9]> : tensor<10xi64>
  %0 = nn.slice %r {starts = array<i64: 1>, steps = array<i64: 3>} : tensor<10xi64> -> tensor<3xi64>
  %1 = nn.slice %r {starts = array<i64: 8>, steps = array<i64: -2>} : tensor<10xi64> -> tensor<3xi64>
  %m = arith.constant dense<[[1, 2, 3], [4, 5, 6]]> : tensor<2x3xi64>
  %2 = nn.slice %m {starts = array<i64: 1, 2>, steps = array<i64: 1, -2>} : tensor<2x3xi64> -> tensor<1x2xi64>
  return %0, %1, %2 : tensor<3xi64>, tensor<3xi64>, tensor<1x2xi64>
}

// -----

// A slice that takes everything is the input; one that does not stays.
// CHECK-LABEL: func.func @slice_identity
// CHECK-SAME: (%[[X:.*]]: tensor<4x8xf32>)
// CHECK: %[[S:.*]] = nn.slice %[[X]] {starts = array<i64: 0, 0>, steps = array<i64: 1, 2>}
// CHECK-NOT: nn.slice
// CHECK: return %[[X]], %[[S]]
func.func @slice_identity(%x: tensor<4x8xf32>) -> (tensor<4x8xf32>, tensor<4x4xf32>) {
  %0 = nn.slice %x {starts = array<i64: 0, 0>, steps = array<i64: 1, 1>} : tensor<4x8xf32> -> tensor<4x8xf32>
  %1 = nn.slice %x {starts = array<i64: 0, 0>, steps = array<i64: 1, 2>} : tensor<4x8xf32> -> tensor<4x4xf32>
  return %0, %1 : tensor<4x8xf32>, tensor<4x4xf32>
}

// -----

// Expand of a constant row [1, 2, 3] to 2x3, of a column [[1], [2]] to 2x2.
// CHECK-LABEL: func.func @expand_constant
// CHECK-DAG: %[[R:.*]] = arith.constant dense<{{\[}}[1, 2, 3], [1, 2, 3]]> : tensor<2x3xi64>
// CHECK-DAG: %[[C:.*]] = arith.constant dense<{{\[}}[1, 1], [2, 2]]> : tensor<2x2xi64>
// CHECK-NOT: nn.expand
// CHECK: return %[[R]], %[[C]]
func.func @expand_constant() -> (tensor<2x3xi64>, tensor<2x2xi64>) {
  %row = arith.constant dense<[1, 2, 3]> : tensor<3xi64>
  %col = arith.constant dense<[[1], [2]]> : tensor<2x1xi64>
  %0 = nn.expand %row : tensor<3xi64> to tensor<2x3xi64>
  %1 = nn.expand %col : tensor<2x1xi64> to tensor<2x2xi64>
  return %0, %1 : tensor<2x3xi64>, tensor<2x2xi64>
}

// -----

// CHECK-LABEL: func.func @expand_identity
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NOT: nn.expand
// CHECK: return %[[X]]
func.func @expand_identity(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = nn.expand %x : tensor<2x3xf32> to tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @transpose_identity
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK-NOT: nn.transpose
// CHECK: return %[[X]]
func.func @transpose_identity(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = nn.transpose %x {perm = array<i64: 0, 1, 2>} : tensor<2x3x4xf32> -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

// transpose(transpose(x, p), q) = transpose(x, [p[q[0]], p[q[1]], ...]).
// p = [0, 2, 1, 3] (split heads: [2,8,4,16] -> [2,4,8,16]),
// q = [0, 1, 3, 2] (k^T: -> [2,4,16,8]): composed [0, 2, 3, 1].
// CHECK-LABEL: func.func @transpose_compose
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x4x16xf32>)
// CHECK: %[[T:.*]] = nn.transpose %[[X]] {perm = array<i64: 0, 2, 3, 1>} : tensor<2x8x4x16xf32> -> tensor<2x4x16x8xf32>
// CHECK-NOT: nn.transpose
// CHECK: return %[[T]]
func.func @transpose_compose(%x: tensor<2x8x4x16xf32>) -> tensor<2x4x16x8xf32> {
  %0 = nn.transpose %x {perm = array<i64: 0, 2, 1, 3>} : tensor<2x8x4x16xf32> -> tensor<2x4x8x16xf32>
  %1 = nn.transpose %0 {perm = array<i64: 0, 1, 3, 2>} : tensor<2x4x8x16xf32> -> tensor<2x4x16x8xf32>
  return %1 : tensor<2x4x16x8xf32>
}

// -----

// A transpose and its inverse compose to the identity and vanish:
// p = [1, 2, 0], q = [2, 0, 1]: [p[2], p[0], p[1]] = [0, 1, 2].
// CHECK-LABEL: func.func @transpose_inverse
// CHECK-SAME: (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK-NOT: nn.transpose
// CHECK: return %[[X]]
func.func @transpose_inverse(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = nn.transpose %x {perm = array<i64: 1, 2, 0>} : tensor<2x3x4xf32> -> tensor<3x4x2xf32>
  %1 = nn.transpose %0 {perm = array<i64: 2, 0, 1>} : tensor<3x4x2xf32> -> tensor<2x3x4xf32>
  return %1 : tensor<2x3x4xf32>
}

// -----

// Transpose of a constant: [[1, 2, 3], [4, 5, 6]]^T = [[1, 4], [2, 5], [3, 6]].
// CHECK-LABEL: func.func @transpose_constant
// CHECK: %[[C:.*]] = arith.constant dense<{{\[}}[1.000000e+00, 4.000000e+00], [2.000000e+00, 5.000000e+00], [3.000000e+00, 6.000000e+00]]> : tensor<3x2xf32>
// CHECK-NOT: nn.transpose
// CHECK: return %[[C]]
func.func @transpose_constant() -> tensor<3x2xf32> {
  %c = arith.constant dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>
  %0 = nn.transpose %c {perm = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

// reshape(reshape(x)) = reshape(x); a reshape to the same type is x.
// CHECK-LABEL: func.func @reshape_reshape
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x32xf32>)
// CHECK: %[[R:.*]] = nn.reshape %[[X]] : tensor<2x8x32xf32> to tensor<16x4x8xf32>
// CHECK-NOT: nn.reshape
// CHECK: return %[[R]], %[[X]]
func.func @reshape_reshape(%x: tensor<2x8x32xf32>) -> (tensor<16x4x8xf32>, tensor<2x8x32xf32>) {
  %0 = nn.reshape %x : tensor<2x8x32xf32> to tensor<2x8x4x8xf32>
  %1 = nn.reshape %0 : tensor<2x8x4x8xf32> to tensor<16x4x8xf32>
  %2 = nn.reshape %x : tensor<2x8x32xf32> to tensor<2x8x32xf32>
  return %1, %2 : tensor<16x4x8xf32>, tensor<2x8x32xf32>
}

// -----

// Split and merge heads round trip: the chain collapses to x.
// CHECK-LABEL: func.func @reshape_round_trip
// CHECK-SAME: (%[[X:.*]]: tensor<2x8x32xf32>)
// CHECK-NOT: nn.reshape
// CHECK: return %[[X]]
func.func @reshape_round_trip(%x: tensor<2x8x32xf32>) -> tensor<2x8x32xf32> {
  %0 = nn.reshape %x : tensor<2x8x32xf32> to tensor<2x8x4x8xf32>
  %1 = nn.reshape %0 : tensor<2x8x4x8xf32> to tensor<2x8x32xf32>
  return %1 : tensor<2x8x32xf32>
}

// -----

//===----------------------------------------------------------------------===//
// Identities, only where the type does not change
//===----------------------------------------------------------------------===//

// x + 0, x - 0, x * 1, x / 1 with same-typed or broadcasting identities.
// CHECK-LABEL: func.func @identities
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xf32>)
// CHECK-NOT: nn.
// CHECK: return %[[X]], %[[X]], %[[X]], %[[X]]
func.func @identities(%x: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %zeros = arith.constant dense<0.0> : tensor<2x3xf32>
  %zero = arith.constant dense<0.0> : tensor<f32>
  %ones = arith.constant dense<1.0> : tensor<3xf32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %0 = nn.add %x, %zeros : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = nn.sub %x, %zero : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  %2 = nn.mul %x, %ones : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %3 = nn.div %x, %one : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  return %0, %1, %2, %3 : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// Add and Mul are commutative: the constant moves to the right and
// 0 + x, 1 * x fold too.
// CHECK-LABEL: func.func @identities_commuted
// CHECK-SAME: (%[[X:.*]]: tensor<2x3xi64>)
// CHECK-NOT: nn.
// CHECK: return %[[X]], %[[X]]
func.func @identities_commuted(%x: tensor<2x3xi64>) -> (tensor<2x3xi64>, tensor<2x3xi64>) {
  %zero = arith.constant dense<0> : tensor<i64>
  %one = arith.constant dense<1> : tensor<3xi64>
  %0 = nn.add %zero, %x : (tensor<i64>, tensor<2x3xi64>) -> tensor<2x3xi64>
  %1 = nn.mul %one, %x : (tensor<3xi64>, tensor<2x3xi64>) -> tensor<2x3xi64>
  return %0, %1 : tensor<2x3xi64>, tensor<2x3xi64>
}

// -----

// x + 0 where broadcasting widens x ([3] + [2x3] -> [2x3]) is a broadcast,
// not x: it must stay. Likewise x * 1 with a wider ones tensor.
// CHECK-LABEL: func.func @identities_broadcast
// CHECK-SAME: (%[[X:.*]]: tensor<3xf32>)
// CHECK: %[[A:.*]] = nn.add %[[X]], %{{.*}} : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK: %[[M:.*]] = nn.mul %[[X]], %{{.*}} : (tensor<3xf32>, tensor<4x1xf32>) -> tensor<4x3xf32>
// CHECK: return %[[A]], %[[M]]
func.func @identities_broadcast(%x: tensor<3xf32>) -> (tensor<2x3xf32>, tensor<4x3xf32>) {
  %zeros = arith.constant dense<0.0> : tensor<2x3xf32>
  %ones = arith.constant dense<1.0> : tensor<4x1xf32>
  %0 = nn.add %x, %zeros : (tensor<3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = nn.mul %x, %ones : (tensor<3xf32>, tensor<4x1xf32>) -> tensor<4x3xf32>
  return %0, %1 : tensor<2x3xf32>, tensor<4x3xf32>
}

// -----

// Not identities: x + 1, x * 0 (folding x * 0 to 0 would lose NaN/inf),
// 0 - x, 1 / x, and a non-splat [0, 1].
// CHECK-LABEL: func.func @not_identities
// CHECK-SAME: (%[[X:.*]]: tensor<2xf32>)
// CHECK: %[[A:.*]] = nn.add %[[X]]
// CHECK: %[[M:.*]] = nn.mul %[[X]]
// CHECK: %[[S:.*]] = nn.sub %{{.*}}, %[[X]]
// CHECK: %[[D:.*]] = nn.div %{{.*}}, %[[X]]
// CHECK: %[[N:.*]] = nn.mul %[[X]]
// CHECK: return %[[A]], %[[M]], %[[S]], %[[D]], %[[N]]
func.func @not_identities(%x: tensor<2xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
  %zero = arith.constant dense<0.0> : tensor<f32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %mixed = arith.constant dense<[0.0, 1.0]> : tensor<2xf32>
  %0 = nn.add %x, %one : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  %1 = nn.mul %x, %zero : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  %2 = nn.sub %zero, %x : (tensor<f32>, tensor<2xf32>) -> tensor<2xf32>
  %3 = nn.div %one, %x : (tensor<f32>, tensor<2xf32>) -> tensor<2xf32>
  %4 = nn.mul %x, %mixed : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  return %0, %1, %2, %3, %4 : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
}

// -----

// Constants above the folding limit (2^16 elements) stay: 300 * 300 = 90000.
// CHECK-LABEL: func.func @too_large
// CHECK: %[[A:.*]] = nn.add
// CHECK: return %[[A]]
func.func @too_large() -> tensor<300x300xf32> {
  %a = arith.constant dense<1.0> : tensor<300x300xf32>
  %b = arith.constant dense<2.0> : tensor<300x300xf32>
  %0 = nn.add %a, %b : (tensor<300x300xf32>, tensor<300x300xf32>) -> tensor<300x300xf32>
  return %0 : tensor<300x300xf32>
}

// -----

// A whole shape computation: the target shape of a head split, from the
// input's shape [2, 8, 32]: concat(gather(s, 0), gather(s, 1), [4],
// gather(s, 2) / 4) = [2, 8, 4, 8], gathered scalars unsqueezed by reshape.
// CHECK-LABEL: func.func @shape_chain
// CHECK: %[[C:.*]] = arith.constant dense<[2, 8, 4, 8]> : tensor<4xi64>
// CHECK-NOT: nn.
// CHECK: return %[[C]]
func.func @shape_chain() -> tensor<4xi64> {
  %s = arith.constant dense<[2, 8, 32]> : tensor<3xi64>
  %i0 = arith.constant dense<0> : tensor<i64>
  %i1 = arith.constant dense<1> : tensor<i64>
  %i2 = arith.constant dense<2> : tensor<i64>
  %heads = arith.constant dense<4> : tensor<1xi64>
  %b = nn.gather %s, %i0 {axis = 0 : i64} : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  %t = nn.gather %s, %i1 {axis = 0 : i64} : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  %h = nn.gather %s, %i2 {axis = 0 : i64} : (tensor<3xi64>, tensor<i64>) -> tensor<i64>
  %d = nn.div %h, %heads : (tensor<i64>, tensor<1xi64>) -> tensor<1xi64>
  %b1 = nn.reshape %b : tensor<i64> to tensor<1xi64>
  %t1 = nn.reshape %t : tensor<i64> to tensor<1xi64>
  %0 = nn.concat %b1, %t1, %heads, %d {axis = 0 : i64} : (tensor<1xi64>, tensor<1xi64>, tensor<1xi64>, tensor<1xi64>) -> tensor<4xi64>
  return %0 : tensor<4xi64>
}
