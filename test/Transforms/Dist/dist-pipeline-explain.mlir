// RUN: parc-opt %s --verify-diagnostics --dist-pipeline="pp=2 explain=true" -o /dev/null

// The costs of dist-pipeline.mlir's model, by hand (nn's CostOpInterface):
// an attention over 1·2·4·4 = 32 scores is 2·32·(8 + 8) + 7·32 = 1248, its
// residual add 64, so layers 2336, 1312, 1312, 5408 FLOPs (the first with
// the 2·64·8 = 1024-FLOP embedding linear, the last with the 4096-FLOP
// head); the cut sends one 1x2x4x8 f32 tensor (256 B).
// expected-remark @below {{pipeline stage 0: layers 0..2, 4960 FLOPs with the embedding}}
// expected-remark @below {{pipeline stage 1: layers 3..3, 5408 FLOPs with the head; 256 B live at its cut}}
func.func @main(%x: tensor<1x2x4x8xf32>) -> tensor<1x2x4x32xf32> {
  %w = arith.constant dense<0.5> : tensor<8x8xf32>
  %wh = arith.constant dense<0.25> : tensor<8x32xf32>
  %e = nn.linear %x, %w : (tensor<1x2x4x8xf32>, tensor<8x8xf32>) -> tensor<1x2x4x8xf32>
  %a0 = nn.attention %e, %e, %e {scale = 0.125 : f32} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  ^bb0(%s: tensor<1x2x4x4xf32>):
    nn.yield %s : tensor<1x2x4x4xf32>
  }
  %h0 = nn.add %e, %a0 : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  %a1 = nn.attention %h0, %h0, %h0 {scale = 0.125 : f32} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  ^bb0(%s: tensor<1x2x4x4xf32>):
    nn.yield %s : tensor<1x2x4x4xf32>
  }
  %h1 = nn.add %h0, %a1 : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  %a2 = nn.attention %h1, %h1, %h1 {scale = 0.125 : f32} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  ^bb0(%s: tensor<1x2x4x4xf32>):
    nn.yield %s : tensor<1x2x4x4xf32>
  }
  %h2 = nn.add %h1, %a2 : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  %a3 = nn.attention %h2, %h2, %h2 {scale = 0.125 : f32} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  ^bb0(%s: tensor<1x2x4x4xf32>):
    nn.yield %s : tensor<1x2x4x4xf32>
  }
  %h3 = nn.add %h2, %a3 : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  %y = nn.linear %h3, %wh : (tensor<1x2x4x8xf32>, tensor<8x32xf32>) -> tensor<1x2x4x32xf32>
  return %y : tensor<1x2x4x32xf32>
}
