// RUN: parc-opt %s --verify-diagnostics --dist-pipeline="pp=2 micro-batches=2"

// Micro-batches stack on dim 0: a scalar input has none.
// expected-error @+1 {{input 0 is a scalar: option 'micro-batches' splits dim 0 of every input}}
func.func @main(%t: tensor<f32>, %x: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %a0 = nn.attention %x, %x, %x {scale = 0.125 : f32} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  ^bb0(%s: tensor<1x2x4x4xf32>):
    nn.yield %s : tensor<1x2x4x4xf32>
  }
  %h0 = nn.add %x, %a0 : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  %a1 = nn.attention %h0, %h0, %h0 {scale = 0.125 : f32} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  ^bb0(%s: tensor<1x2x4x4xf32>):
    nn.yield %s : tensor<1x2x4x4xf32>
  }
  return %a1 : tensor<1x2x4x8xf32>
}
