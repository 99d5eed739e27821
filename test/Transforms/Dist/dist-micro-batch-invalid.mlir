// RUN: parc-opt %s --split-input-file --dist-micro-batch=micro-batches=2 -verify-diagnostics

// expected-error @+1 {{input 'n' is a scalar: option 'micro-batches' splits dim 0 of every input}}
func.func @main(%x: tensor<2x4xf32> {onnx.name = "x"}, %n: tensor<f32> {onnx.name = "n"}) -> tensor<2x4xf32> {
  %y = nn.mul %x, %n : (tensor<2x4xf32>, tensor<f32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}

// -----

// An output computed from weights alone has no micro-batches to stack.
// expected-error @+1 {{output 'table' does not depend on the inputs: it cannot be stacked from micro-batches}}
func.func @main(%x: tensor<2x4xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32> {onnx.name = "table"}) {
  %w = arith.constant dense<0.5> : tensor<2x4xf32>
  %t = nn.relu %w : tensor<2x4xf32>
  %y = nn.add %x, %w : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  return %y, %t : tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

// expected-error @+1 {{output 'loss' is a scalar: option 'micro-batches' stacks micro-batches on dim 0 of every output}}
func.func @main(%x: tensor<2x4xf32>) -> (tensor<f32> {onnx.name = "loss"}) {
  %s = nn.reduce_sum %x {axes = array<i64: 0, 1>, keepdims = false} : tensor<2x4xf32> -> tensor<f32>
  return %s : tensor<f32>
}
