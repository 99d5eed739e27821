// RUN: parc-opt %s --split-input-file --dist-split-batch="parts=2" -verify-diagnostics

// A constant over the whole batch of 4: half of it belongs to each part,
// which a shared constant cannot say.
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %c = arith.constant dense<0.5> : tensor<4x8xf32>
  // expected-error @+1 {{'nn.add': an operand computed without the inputs spans the batch: the batch of 4 that this model fixes cannot be split into 2 parts (option 'parts'); a model with a dynamic batch dim can}}
  %y = nn.add %x, %c : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// A reshape that spreads the batch of 4 over two dims of 2.
func.func @main(%x: tensor<4x8xf32>) -> tensor<2x16xf32> {
  // expected-error @+1 {{'nn.reshape': it reshapes the batch of 4 across dims: the batch of 4}}
  %y = nn.reshape %x : tensor<4x8xf32> to tensor<2x16xf32>
  return %y : tensor<2x16xf32>
}

// -----

// A reduction over the batch mixes the parts.
func.func @main(%x: tensor<4x8xf32>) -> tensor<1x8xf32> {
  // expected-error @+1 {{'nn.reduce_sum': it reduces along the batch}}
  %y = nn.reduce_sum %x {axes = array<i64: 0>} : tensor<4x8xf32> -> tensor<1x8xf32>
  return %y : tensor<1x8xf32>
}

// -----

// An output without the batch on dim 0 cannot be stacked again.
// expected-error @+1 {{output 'y' does not hold the batch on dim 0}}
func.func @main(%x: tensor<4x8xf32>) -> (tensor<8x4xf32> {onnx.name = "y"}) {
  %y = nn.transpose %x {perm = array<i64: 1, 0>} : tensor<4x8xf32> -> tensor<8x4xf32>
  return %y : tensor<8x4xf32>
}
