// RUN: parc-opt %s --verify-diagnostics --dist-pipeline="pp=2 layout=0,2"

// Every stage runs at least one layer.
// expected-error @+1 {{option 'layout' needs at least one layer per stage}}
func.func @main(%x: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %a0 = nn.attention %x, %x, %x {scale = 0.125 : f32} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  ^bb0(%s: tensor<1x2x4x4xf32>):
    nn.yield %s : tensor<1x2x4x4xf32>
  }
  %h0 = nn.add %x, %a0 : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  %a1 = nn.attention %h0, %h0, %h0 {scale = 0.125 : f32} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  ^bb0(%s: tensor<1x2x4x4xf32>):
    nn.yield %s : tensor<1x2x4x4xf32>
  }
  %h1 = nn.add %h0, %a1 : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %h1 : tensor<1x2x4x8xf32>
}
