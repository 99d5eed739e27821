// RUN: parc-opt %s --dist-tensor-parallel="tp=2 explain=true" -verify-diagnostics

// With explain, each split region and each region kept replicated (with the
// reason) is reported at its op, and each resharding at the op that needs it.
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %w1 = arith.constant dense<0.5> : tensor<8x16xf32>
  %w2 = arith.constant dense<0.25> : tensor<16x8xf32>
  %w3 = arith.constant dense<0.5> : tensor<8x16xf32>
  %g1 = arith.constant dense<1.0> : tensor<16xf32>
  %w4 = arith.constant dense<0.25> : tensor<16x8xf32>
  %h = nn.linear %x, %w1 : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  %g = nn.relu %h : tensor<4x16xf32>
  // expected-remark @+1 {{is row-parallel over 2 ranks, fed by 1 column-parallel linear(s); one all-reduce of 'tensor<4x8xf32>' follows it}}
  %y = nn.linear %g, %w2 : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{'nn.linear' reads the result of 'nn.linear' (partial sums) as replicated: all-reduce}}
  %h2 = nn.linear %y, %w3 : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
  // expected-remark @+1 {{'nn.layer_norm' stays replicated under tensor parallelism: it normalises along the split dim}}
  %m = nn.layer_norm %h2, %g1 {axis = 1 : i64, epsilon = 1.0e-05 : f32} : (tensor<4x16xf32>, tensor<16xf32>) -> tensor<4x16xf32>
  %n = nn.relu %m : tensor<4x16xf32>
  // expected-remark @+1 {{is an output head split over 2 ranks by its 8 features, then all-gathered}}
  %z = nn.linear %n, %w4 : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
  // expected-remark @+1 {{'func.return' reads the result of 'nn.linear' (split on dim 1) as replicated: all-gather along dim 1}}
  return %z : tensor<4x8xf32>
}
