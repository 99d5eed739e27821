// RUN: parc-opt %s --split-input-file --dist-tensor-parallel=tp=4 -verify-diagnostics

// 6 heads over 4 ranks, in a shape-only model: without the query weight's
// bytes no zero heads can be added, so the spec does not fit the model.
// What would: a tp dividing both the 6 heads and the 12 features (2, 3 or 6).
func.func @main(%x: tensor<3x12xf32>) -> tensor<3x12xf32> {
  %wq = arith.constant dense_resource<__elided__> : tensor<12x12xf32>
  %wo = arith.constant dense<0.25> : tensor<12x12xf32>
  %q = nn.linear %x, %wq : (tensor<3x12xf32>, tensor<12x12xf32>) -> tensor<3x12xf32>
  // expected-note @+2 {{option 'tp' values that fit every region of this model: 2, 3, 6}}
  // expected-error @+1 {{option 'tp=4' does not fit this model: 6 heads do not divide by option 'tp=4' (use a tp that divides 6)}}
  %qh = nn.reshape %q : tensor<3x12xf32> to tensor<1x3x6x2xf32>
  %qt = nn.transpose %qh {perm = array<i64: 0, 2, 1, 3>} : tensor<1x3x6x2xf32> -> tensor<1x6x3x2xf32>
  %o = nn.attention %qt, %qt, %qt {scale = 0.5 : f32} : (tensor<1x6x3x2xf32>, tensor<1x6x3x2xf32>, tensor<1x6x3x2xf32>) -> tensor<1x6x3x2xf32> {
  ^bb0(%s: tensor<1x6x3x3xf32>):
    nn.yield %s : tensor<1x6x3x3xf32>
  }
  %ot = nn.transpose %o {perm = array<i64: 0, 2, 1, 3>} : tensor<1x6x3x2xf32> -> tensor<1x3x6x2xf32>
  %of = nn.reshape %ot : tensor<1x3x6x2xf32> to tensor<3x12xf32>
  %y = nn.linear %of, %wo : (tensor<3x12xf32>, tensor<12x12xf32>) -> tensor<3x12xf32>
  return %y : tensor<3x12xf32>
}

// -----

// An MLP of 6 features over 4 ranks whose activation does not map 0 to 0
// (sigmoid(0) = 1/2): zero padding would add 1/2 · w2's pad rows, so it is
// not padded and the width must divide (2, 3 or 6 would fit).
func.func @main(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %w1 = arith.constant dense<0.5> : tensor<8x6xf32>
  %w2 = arith.constant dense<0.5> : tensor<6x8xf32>
  // expected-note @+2 {{option 'tp' values that fit every region of this model: 2, 3, 6}}
  // expected-error @+1 {{option 'tp=4' does not fit this model: its 6 output features do not divide by option 'tp=4'}}
  %h = nn.linear %x, %w1 : (tensor<2x8xf32>, tensor<8x6xf32>) -> tensor<2x6xf32>
  %g = nn.sigmoid %h : tensor<2x6xf32>
  %y = nn.linear %g, %w2 : (tensor<2x6xf32>, tensor<6x8xf32>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// -----

// A bias broadcast over the features (x + 1): a padded feature would be 1,
// not 0, so this MLP of 6 features is not padded either.
func.func @main(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %w1 = arith.constant dense<0.5> : tensor<8x6xf32>
  %w2 = arith.constant dense<0.5> : tensor<6x8xf32>
  %one = arith.constant dense<1.0> : tensor<1xf32>
  // expected-note @+2 {{option 'tp' values that fit every region of this model: 2, 3, 6}}
  // expected-error @+1 {{option 'tp=4' does not fit this model: its 6 output features do not divide by option 'tp=4'}}
  %h = nn.linear %x, %w1 : (tensor<2x8xf32>, tensor<8x6xf32>) -> tensor<2x6xf32>
  %g = nn.relu %h : tensor<2x6xf32>
  %a = nn.add %g, %one : (tensor<2x6xf32>, tensor<1xf32>) -> tensor<2x6xf32>
  %y = nn.linear %a, %w2 : (tensor<2x6xf32>, tensor<6x8xf32>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}
