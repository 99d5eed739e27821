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

func.func @route_top_k(%l: tensor<8x4xf32>) {
  // expected-error @+1 {{'nn.moe_route' op top_k 5 must be in [1, 4]}}
  %ids, %w, %n = nn.moe_route %l {top_k = 5 : i64} : tensor<8x4xf32> -> (tensor<8x5xi64>, tensor<8x5xf32>, tensor<4xi64>)
  return
}

// -----

func.func @route_logits(%l: tensor<2x8x4xf32>) {
  // expected-error @+1 {{'nn.moe_route' op router logits must be a [tokens, experts] float tensor}}
  %ids, %w, %n = nn.moe_route %l {top_k = 1 : i64} : tensor<2x8x4xf32> -> (tensor<8x1xi64>, tensor<8x1xf32>, tensor<4xi64>)
  return
}

// -----

func.func @route_ids(%l: tensor<8x4xf32>) {
  // expected-error @+1 {{'nn.moe_route' op expert_ids must be [8x2] of 'i64', got 'tensor<8x2xi32>'}}
  %ids, %w, %n = nn.moe_route %l {top_k = 2 : i64} : tensor<8x4xf32> -> (tensor<8x2xi32>, tensor<8x2xf32>, tensor<4xi64>)
  return
}

// -----

func.func @route_weights(%l: tensor<8x4xbf16>) {
  // expected-error @+1 {{'nn.moe_route' op weights must be [8x2] of 'f32', got 'tensor<8x2xbf16>'}}
  %ids, %w, %n = nn.moe_route %l {top_k = 2 : i64} : tensor<8x4xbf16> -> (tensor<8x2xi64>, tensor<8x2xbf16>, tensor<4xi64>)
  return
}

// -----

func.func @route_counts(%l: tensor<8x4xf32>) {
  // expected-error @+1 {{'nn.moe_route' op counts must be [4] of 'i64', got 'tensor<8xi64>'}}
  %ids, %w, %n = nn.moe_route %l {top_k = 2 : i64} : tensor<8x4xf32> -> (tensor<8x2xi64>, tensor<8x2xf32>, tensor<8xi64>)
  return
}

// -----

func.func @experts_weights(%r: tensor<32x16xf32>, %lay: tensor<2x2xi64>, %w1: tensor<16x24xf32>, %w2: tensor<2x24x16xf32>) {
  // expected-error @+1 {{'nn.moe_experts' op expert weights must be stacked [experts, in, out]}}
  %o = nn.moe_experts %r, %lay, %w1, %w2 : (tensor<32x16xf32>, tensor<2x2xi64>, tensor<16x24xf32>, tensor<2x24x16xf32>) -> tensor<32x16xf32>
  return
}

// -----

func.func @experts_rows(%r: tensor<32x16xbf16>, %lay: tensor<2x2xi64>, %w1: tensor<2x16x24xbf16>, %w2: tensor<2x24x16xbf16>) {
  // expected-error @+1 {{'nn.moe_experts' op rows must be [rows, 16] of f32, got 'tensor<32x16xbf16>'}}
  %o = nn.moe_experts %r, %lay, %w1, %w2 : (tensor<32x16xbf16>, tensor<2x2xi64>, tensor<2x16x24xbf16>, tensor<2x24x16xbf16>) -> tensor<32x16xbf16>
  return
}

// -----

func.func @experts_layout(%r: tensor<32x16xf32>, %lay: tensor<2x4xi64>, %w1: tensor<2x16x24xf32>, %w2: tensor<2x24x16xf32>) {
  // expected-error @+1 {{'nn.moe_experts' op layout must be [senders, 2] of i64 (one column per local expert), got 'tensor<2x4xi64>'}}
  %o = nn.moe_experts %r, %lay, %w1, %w2 : (tensor<32x16xf32>, tensor<2x4xi64>, tensor<2x16x24xf32>, tensor<2x24x16xf32>) -> tensor<32x16xf32>
  return
}

// -----

func.func @experts_fc2(%r: tensor<32x16xf32>, %lay: tensor<2x2xi64>, %w1: tensor<2x16x24xf32>, %w2: tensor<2x16x24xf32>) {
  // expected-error @+1 {{'nn.moe_experts' op fc2 must be [2x24x16] of 'f32', got 'tensor<2x16x24xf32>'}}
  %o = nn.moe_experts %r, %lay, %w1, %w2 : (tensor<32x16xf32>, tensor<2x2xi64>, tensor<2x16x24xf32>, tensor<2x16x24xf32>) -> tensor<32x16xf32>
  return
}

// -----

func.func @experts_fc3(%r: tensor<32x16xf32>, %lay: tensor<2x2xi64>, %w1: tensor<2x16x24xf32>, %w2: tensor<2x24x16xf32>, %w3: tensor<2x16x8xf32>) {
  // expected-error @+1 {{'nn.moe_experts' op fc3 must be [2x16x24] of 'f32', got 'tensor<2x16x8xf32>'}}
  %o = nn.moe_experts %r, %lay, %w1, %w2, %w3 : (tensor<32x16xf32>, tensor<2x2xi64>, tensor<2x16x24xf32>, tensor<2x24x16xf32>, tensor<2x16x8xf32>) -> tensor<32x16xf32>
  return
}

// -----

func.func @experts_result(%r: tensor<32x16xf32>, %lay: tensor<2x2xi64>, %w1: tensor<2x16x24xf32>, %w2: tensor<2x24x16xf32>) {
  // expected-error @+1 {{'nn.moe_experts' op result type must equal the rows' type}}
  %o = nn.moe_experts %r, %lay, %w1, %w2 : (tensor<32x16xf32>, tensor<2x2xi64>, tensor<2x16x24xf32>, tensor<2x24x16xf32>) -> tensor<16x16xf32>
  return
}

// -----

func.func @combine_weights(%b: tensor<16x16xf32>, %p: tensor<16xi64>, %w: tensor<8x2xbf16>) {
  // expected-error @+1 {{'nn.moe_combine' op weights must be [tokens, top_k] of f32, got 'tensor<8x2xbf16>'}}
  %y = nn.moe_combine %b, %p, %w : (tensor<16x16xf32>, tensor<16xi64>, tensor<8x2xbf16>) -> tensor<8x16xf32>
  return
}

// -----

func.func @combine_results(%b: tensor<8x16xf32>, %p: tensor<16xi64>, %w: tensor<8x2xf32>) {
  // expected-error @+1 {{'nn.moe_combine' op results must be [16, hidden] of f32 (one row per pair), got 'tensor<8x16xf32>'}}
  %y = nn.moe_combine %b, %p, %w : (tensor<8x16xf32>, tensor<16xi64>, tensor<8x2xf32>) -> tensor<8x16xf32>
  return
}

// -----

func.func @combine_pairs(%b: tensor<16x16xf32>, %p: tensor<8xi64>, %w: tensor<8x2xf32>) {
  // expected-error @+1 {{'nn.moe_combine' op pair_rows must be [16] of 'i64', got 'tensor<8xi64>'}}
  %y = nn.moe_combine %b, %p, %w : (tensor<16x16xf32>, tensor<8xi64>, tensor<8x2xf32>) -> tensor<8x16xf32>
  return
}

// -----

func.func @combine_result(%b: tensor<16x16xf32>, %p: tensor<16xi64>, %w: tensor<8x2xf32>) {
  // expected-error @+1 {{'nn.moe_combine' op result must be [8, 16] of a float type, got 'tensor<8x16xi64>'}}
  %y = nn.moe_combine %b, %p, %w : (tensor<16x16xf32>, tensor<16xi64>, tensor<8x2xf32>) -> tensor<8x16xi64>
  return
}
