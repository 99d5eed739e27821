// RUN: parc-opt %s --split-input-file --dist-annotate="tp=2 sp=true" -verify-diagnostics

// Sequence parallelism splits the norm's [2, 3, 8] activation along its
// sequence of 3, which 2 ranks cannot share evenly; 3 ranks could.
func.func @main(%x: tensor<2x3x8xf32>) -> tensor<2x3x8xf32> {
  %g = arith.constant dense<1.0> : tensor<8xf32>
  // expected-note @+3 {{option 'tp=2' without option 'sp' fits this model (the sequence stays whole on every rank)}}
  // expected-note @+2 {{option 'tp' values that fit every region of this model: 3}}
  // expected-error @+1 {{'nn.layer_norm': option 'tp=2' does not fit this model: option 'sp' splits the sequence (dim 1 of size 3) over option 'tp=2', which does not divide it (option 'tp' values that would: 3)}}
  %n = nn.layer_norm %x, %g {axis = 2 : i64, epsilon = 1.0e-05 : f32} : (tensor<2x3x8xf32>, tensor<8xf32>) -> tensor<2x3x8xf32>
  return %n : tensor<2x3x8xf32>
}

// -----

// A sequence of 7 (prime): only 7 would split it; the MLP's 16 features
// take zero padding to 21, so 7 fits; a row linear names the sequence
// when no norm comes first.
func.func @main(%x: tensor<7x8xf32>) -> tensor<7x8xf32> {
  %w1 = arith.constant dense<0.5> : tensor<8x16xf32>
  %w2 = arith.constant dense<0.5> : tensor<16x8xf32>
  %h = nn.linear %x, %w1 : (tensor<7x8xf32>, tensor<8x16xf32>) -> tensor<7x16xf32>
  %g = nn.relu %h : tensor<7x16xf32>
  // expected-note @+3 {{option 'tp=2' without option 'sp' fits this model (the sequence stays whole on every rank)}}
  // expected-note @+2 {{option 'tp' values that fit every region of this model: 7}}
  // expected-error @+1 {{'nn.linear': option 'tp=2' does not fit this model: option 'sp' splits the sequence (dim 0 of size 7) over option 'tp=2', which does not divide it (option 'tp' values that would: 7)}}
  %y = nn.linear %g, %w2 : (tensor<7x16xf32>, tensor<16x8xf32>) -> tensor<7x8xf32>
  return %y : tensor<7x8xf32>
}

// -----

// Grouped-query attention in a shape-only model: without the key weight's
// bytes no zero heads can be added, and 3 key/value heads can be neither
// split over nor replicated across 2 ranks. Only 3 divides the 6 heads, the
// 12 and 6 features, the 3 key/value heads and the sequence of 3 (--sp).
func.func @main(%x: tensor<3x8xf32>) -> tensor<3x8xf32> {
  %wq = arith.constant dense<0.5> : tensor<8x12xf32>
  %wk = arith.constant dense_resource<__elided__> : tensor<8x6xf32>
  %wo = arith.constant dense<0.5> : tensor<12x8xf32>
  %q = nn.linear %x, %wq : (tensor<3x8xf32>, tensor<8x12xf32>) -> tensor<3x12xf32>
  %k = nn.linear %x, %wk : (tensor<3x8xf32>, tensor<8x6xf32>) -> tensor<3x6xf32>
  %qh = nn.reshape %q : tensor<3x12xf32> to tensor<1x3x6x2xf32>
  %kh = nn.reshape %k : tensor<3x6xf32> to tensor<1x3x3x2xf32>
  %qt = nn.transpose %qh {perm = array<i64: 0, 2, 1, 3>} : tensor<1x3x6x2xf32> -> tensor<1x6x3x2xf32>
  %kt = nn.transpose %kh {perm = array<i64: 0, 2, 1, 3>} : tensor<1x3x3x2xf32> -> tensor<1x3x3x2xf32>
  // expected-note @+2 {{option 'tp' values that fit every region of this model: 3}}
  // expected-error @+1 {{'nn.attention': option 'tp=2' does not fit this model: its 3 key/value heads neither divide by nor divide option 'tp=2'}}
  %o = nn.attention %qt, %kt, %kt {scale = 0.5 : f32} : (tensor<1x6x3x2xf32>, tensor<1x3x3x2xf32>, tensor<1x3x3x2xf32>) -> tensor<1x6x3x2xf32> {
  ^bb0(%s: tensor<1x6x3x3xf32>):
    nn.yield %s : tensor<1x6x3x3xf32>
  }
  %ot = nn.transpose %o {perm = array<i64: 0, 2, 1, 3>} : tensor<1x6x3x2xf32> -> tensor<1x3x6x2xf32>
  %of = nn.reshape %ot : tensor<1x3x6x2xf32> to tensor<3x12xf32>
  %y = nn.linear %of, %wo : (tensor<3x12xf32>, tensor<12x8xf32>) -> tensor<3x8xf32>
  return %y : tensor<3x8xf32>
}

// -----

// Two public functions and neither marked: which is the model is unsaid.
// expected-error @+1 {{dist-annotate expects one entry function: 2 are public with a body (@encode, @decode); mark one with 'parc.entry'}}
module {
  func.func @encode() {
    return
  }
  func.func @decode() {
    return
  }
}

// -----

// expected-error @+1 {{dist-annotate expects one entry function: the module has no public function with a body}}
module {
  func.func private @helper() {
    return
  }
  func.func private @declared()
}

// -----

// The same with an activation that does not map 0 to 0 (sigmoid): the 16
// features are not padded, 7 does not divide them, so no tp > 1 fits.
func.func @main(%x: tensor<7x8xf32>) -> tensor<7x8xf32> {
  %w1 = arith.constant dense<0.5> : tensor<8x16xf32>
  %w2 = arith.constant dense<0.5> : tensor<16x8xf32>
  %h = nn.linear %x, %w1 : (tensor<7x8xf32>, tensor<8x16xf32>) -> tensor<7x16xf32>
  %g = nn.sigmoid %h : tensor<7x16xf32>
  // expected-note @+3 {{option 'tp=2' without option 'sp' fits this model (the sequence stays whole on every rank)}}
  // expected-note @+2 {{no option 'tp' from 2 to 64 fits every region of this model; option 'tp=1' runs it whole}}
  // expected-error @+1 {{'nn.linear': option 'tp=2' does not fit this model: option 'sp' splits the sequence (dim 0 of size 7) over option 'tp=2', which does not divide it (option 'tp' values that would: 7)}}
  %y = nn.linear %g, %w2 : (tensor<7x16xf32>, tensor<16x8xf32>) -> tensor<7x8xf32>
  return %y : tensor<7x8xf32>
}
