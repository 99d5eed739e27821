// Every nn.moe verifier diagnostic.
// RUN: parc-opt %s --split-input-file --verify-diagnostics

func.func @weights_rank(%x: tensor<16x32xf32>, %l: tensor<16x4xf32>, %w1: tensor<32x64xf32>, %w2: tensor<4x64x32xf32>) -> tensor<16x32xf32> {
  // expected-error @+1 {{'nn.moe' op expert weights must be stacked [experts, in, out]}}
  %y = nn.moe %x, %l, %w1, %w2 {top_k = 1 : i64} : (tensor<16x32xf32>, tensor<16x4xf32>, tensor<32x64xf32>, tensor<4x64x32xf32>) -> tensor<16x32xf32>
  return %y : tensor<16x32xf32>
}

// -----

func.func @input_width(%x: tensor<16x24xf32>, %l: tensor<16x4xf32>, %w1: tensor<4x32x64xf32>, %w2: tensor<4x64x32xf32>) -> tensor<16x24xf32> {
  // expected-error @+1 {{'nn.moe' op input's last dim must be the experts' input width 32, got [16x24]}}
  %y = nn.moe %x, %l, %w1, %w2 {top_k = 1 : i64} : (tensor<16x24xf32>, tensor<16x4xf32>, tensor<4x32x64xf32>, tensor<4x64x32xf32>) -> tensor<16x24xf32>
  return %y : tensor<16x24xf32>
}

// -----

func.func @logits_shape(%x: tensor<16x32xf32>, %l: tensor<16x8xf32>, %w1: tensor<4x32x64xf32>, %w2: tensor<4x64x32xf32>) -> tensor<16x32xf32> {
  // expected-error @+1 {{'nn.moe' op router logits must be [16x4] (tokens x 4 experts), got [16x8]}}
  %y = nn.moe %x, %l, %w1, %w2 {top_k = 1 : i64} : (tensor<16x32xf32>, tensor<16x8xf32>, tensor<4x32x64xf32>, tensor<4x64x32xf32>) -> tensor<16x32xf32>
  return %y : tensor<16x32xf32>
}

// -----

func.func @fc2_shape(%x: tensor<16x32xf32>, %l: tensor<16x4xf32>, %w1: tensor<4x32x64xf32>, %w2: tensor<4x32x64xf32>) -> tensor<16x32xf32> {
  // expected-error @+1 {{'nn.moe' op fc2 must be [4x64x32], got [4x32x64]}}
  %y = nn.moe %x, %l, %w1, %w2 {top_k = 1 : i64} : (tensor<16x32xf32>, tensor<16x4xf32>, tensor<4x32x64xf32>, tensor<4x32x64xf32>) -> tensor<16x32xf32>
  return %y : tensor<16x32xf32>
}

// -----

func.func @fc3_shape(%x: tensor<16x32xf32>, %l: tensor<16x4xf32>, %w1: tensor<4x32x64xf32>, %w2: tensor<4x64x32xf32>, %w3: tensor<4x32x48xf32>) -> tensor<16x32xf32> {
  // expected-error @+1 {{'nn.moe' op fc3 must have fc1's shape [4x32x64], got [4x32x48]}}
  %y = nn.moe %x, %l, %w1, %w2, %w3 {top_k = 1 : i64} : (tensor<16x32xf32>, tensor<16x4xf32>, tensor<4x32x64xf32>, tensor<4x64x32xf32>, tensor<4x32x48xf32>) -> tensor<16x32xf32>
  return %y : tensor<16x32xf32>
}

// -----

func.func @element_type(%x: tensor<16x32xf32>, %l: tensor<16x4xf32>, %w1: tensor<4x32x64xbf16>, %w2: tensor<4x64x32xbf16>) -> tensor<16x32xf32> {
  // expected-error @+1 {{'nn.moe' op operands must share one element type}}
  %y = nn.moe %x, %l, %w1, %w2 {top_k = 1 : i64} : (tensor<16x32xf32>, tensor<16x4xf32>, tensor<4x32x64xbf16>, tensor<4x64x32xbf16>) -> tensor<16x32xf32>
  return %y : tensor<16x32xf32>
}

// -----

func.func @top_k_zero(%x: tensor<16x32xf32>, %l: tensor<16x4xf32>, %w1: tensor<4x32x64xf32>, %w2: tensor<4x64x32xf32>) -> tensor<16x32xf32> {
  // expected-error @+1 {{'nn.moe' op top_k 0 must be in [1, 4]}}
  %y = nn.moe %x, %l, %w1, %w2 {top_k = 0 : i64} : (tensor<16x32xf32>, tensor<16x4xf32>, tensor<4x32x64xf32>, tensor<4x64x32xf32>) -> tensor<16x32xf32>
  return %y : tensor<16x32xf32>
}

// -----

func.func @top_k_large(%x: tensor<16x32xf32>, %l: tensor<16x4xf32>, %w1: tensor<4x32x64xf32>, %w2: tensor<4x64x32xf32>) -> tensor<16x32xf32> {
  // expected-error @+1 {{'nn.moe' op top_k 5 must be in [1, 4]}}
  %y = nn.moe %x, %l, %w1, %w2 {top_k = 5 : i64} : (tensor<16x32xf32>, tensor<16x4xf32>, tensor<4x32x64xf32>, tensor<4x64x32xf32>) -> tensor<16x32xf32>
  return %y : tensor<16x32xf32>
}

// -----

func.func @result_type(%x: tensor<16x32xf32>, %l: tensor<16x4xf32>, %w1: tensor<4x32x64xf32>, %w2: tensor<4x64x32xf32>) -> tensor<2x8x32xf32> {
  // expected-error @+1 {{'nn.moe' op result type must equal the input type}}
  %y = nn.moe %x, %l, %w1, %w2 {top_k = 1 : i64} : (tensor<16x32xf32>, tensor<16x4xf32>, tensor<4x32x64xf32>, tensor<4x64x32xf32>) -> tensor<2x8x32xf32>
  return %y : tensor<2x8x32xf32>
}

// -----

func.func @shards_without_axis(%x: tensor<16x32xf32>, %l: tensor<16x4xf32>, %w1: tensor<2x32x64xf32>, %w2: tensor<2x64x32xf32>) -> tensor<16x32xf32> {
  // expected-error @+1 {{'nn.moe' op expert_shards needs the ep_axis it is split over}}
  %y = nn.moe %x, %l, %w1, %w2 {top_k = 1 : i64, expert_shards = 2 : i64} : (tensor<16x32xf32>, tensor<16x4xf32>, tensor<2x32x64xf32>, tensor<2x64x32xf32>) -> tensor<16x32xf32>
  return %y : tensor<16x32xf32>
}

// -----

// 2 of 4 experts per rank: the router must score all 4.
func.func @shard_router_width(%x: tensor<16x32xf32>, %l: tensor<16x2xf32>, %w1: tensor<2x32x64xf32>, %w2: tensor<2x64x32xf32>) -> tensor<16x32xf32> {
  // expected-error @+1 {{'nn.moe' op router logits must be [16x4] (tokens x 4 experts), got [16x2]}}
  %y = nn.moe %x, %l, %w1, %w2 {top_k = 1 : i64, expert_shards = 2 : i64, ep_axis = "ep"} : (tensor<16x32xf32>, tensor<16x2xf32>, tensor<2x32x64xf32>, tensor<2x64x32xf32>) -> tensor<16x32xf32>
  return %y : tensor<16x32xf32>
}
