// RUN: parc-opt %s --split-input-file --verify-diagnostics --dist-pipeline=pp=2

// Layers are attention blocks, or else subgraphs that repeat with one live
// tensor between them: a single linear has neither.
// expected-error @+1 {{found no repeated block to cut into pipeline stages: the model has no attention layer, and no subgraph repeats with one computed tensor live between its repetitions}}
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %w = arith.constant dense<0.5> : tensor<8x8xf32>
  %y = nn.linear %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  return %y : tensor<4x8xf32>
}

// -----

// More stages than layers.
// expected-error @+1 {{option 'pp=2' needs at least one layer per stage, but the model has 1 layer(s) (one per attention block)}}
func.func @main(%x: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %a0 = nn.attention %x, %x, %x {scale = 0.125 : f32} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  ^bb0(%s: tensor<1x2x4x4xf32>):
    nn.yield %s : tensor<1x2x4x4xf32>
  }
  return %a0 : tensor<1x2x4x8xf32>
}

// -----

// Already pipelined: the mesh has a pp axis.
// expected-error @+1 {{the mesh already has a 'pp' axis}}
dist.mesh @mesh(shape = 2x1, axes = ["pp", "tp"])
func.func @main(%x: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %a0 = nn.attention %x, %x, %x {scale = 0.125 : f32} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  ^bb0(%s: tensor<1x2x4x4xf32>):
    nn.yield %s : tensor<1x2x4x4xf32>
  }
  %a1 = nn.attention %a0, %a0, %a0 {scale = 0.125 : f32} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  ^bb0(%s: tensor<1x2x4x4xf32>):
    nn.yield %s : tensor<1x2x4x4xf32>
  }
  return %a1 : tensor<1x2x4x8xf32>
}
