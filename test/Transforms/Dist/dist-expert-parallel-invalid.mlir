// RUN: parc-opt %s --split-input-file --dist-expert-parallel=ep=4 -verify-diagnostics

// 6 experts do not split over 4 ranks.
func.func @main(%x: tensor<16x32xf32>, %l: tensor<16x6xf32>) -> tensor<16x32xf32> {
  %w1 = arith.constant dense<0.5> : tensor<6x32x64xf32>
  %w2 = arith.constant dense<0.25> : tensor<6x64x32xf32>
  // expected-error @+1 {{'nn.moe': option 'ep=4' does not fit this model: 6 experts and 16 tokens must both divide over the ranks}}
  %y = nn.moe %x, %l, %w1, %w2 {top_k = 1 : i64} : (tensor<16x32xf32>, tensor<16x6xf32>, tensor<6x32x64xf32>, tensor<6x64x32xf32>) -> tensor<16x32xf32>
  return %y : tensor<16x32xf32>
}

// -----

// 6 tokens do not split over 4 ranks for dispatch.
func.func @main(%x: tensor<6x32xf32>, %l: tensor<6x4xf32>) -> tensor<6x32xf32> {
  %w1 = arith.constant dense<0.5> : tensor<4x32x64xf32>
  %w2 = arith.constant dense<0.25> : tensor<4x64x32xf32>
  // expected-error @+1 {{option 'ep=4' does not fit this model: 4 experts and 6 tokens must both divide over the ranks}}
  %y = nn.moe %x, %l, %w1, %w2 {top_k = 1 : i64} : (tensor<6x32xf32>, tensor<6x4xf32>, tensor<4x32x64xf32>, tensor<4x64x32xf32>) -> tensor<6x32xf32>
  return %y : tensor<6x32xf32>
}

// -----

// Tensor parallelism over 2 ranks: --ep 4 cannot share them.
// expected-error @+1 {{option 'ep=4' must equal the tensor-parallel degree 2: experts are split over the same ranks}}
dist.mesh @mesh(shape = 2, axes = ["tp"])
func.func @main(%x: tensor<16x32xf32>, %l: tensor<16x4xf32>) -> tensor<16x32xf32> {
  %w1 = arith.constant dense<0.5> : tensor<4x32x64xf32>
  %w2 = arith.constant dense<0.25> : tensor<4x64x32xf32>
  %y = nn.moe %x, %l, %w1, %w2 {top_k = 1 : i64} : (tensor<16x32xf32>, tensor<16x4xf32>, tensor<4x32x64xf32>, tensor<4x64x32xf32>) -> tensor<16x32xf32>
  return %y : tensor<16x32xf32>
}

// -----

// Weights computed at run time cannot be cut at compile time.
func.func @main(%x: tensor<16x32xf32>, %l: tensor<16x4xf32>, %w1: tensor<4x32x64xf32>) -> tensor<16x32xf32> {
  %w2 = arith.constant dense<0.25> : tensor<4x64x32xf32>
  // expected-error @+1 {{expert weights must be constants to be split over ranks}}
  %y = nn.moe %x, %l, %w1, %w2 {top_k = 1 : i64} : (tensor<16x32xf32>, tensor<16x4xf32>, tensor<4x32x64xf32>, tensor<4x64x32xf32>) -> tensor<16x32xf32>
  return %y : tensor<16x32xf32>
}
