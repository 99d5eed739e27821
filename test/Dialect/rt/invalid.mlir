// RUN: parc-opt %s -split-input-file -verify-diagnostics

func.func @negative_offset() {
  // expected-error @+1 {{offset must be non-negative}}
  %b = rt.alloc {offset = -8 : i64} : memref<4xf32>
  return
}

// -----

func.func @view_changes_count(%b: memref<4xf32>) {
  // expected-error @+1 {{a view keeps the element type and count}}
  %v = rt.view %b : memref<4xf32> to memref<5xf32>
  return
}

// -----

func.func @weight_value_mismatch() {
  // expected-error @+1 {{value must have the buffer's shape and element type}}
  %w = rt.weight "w" {value = dense<1.0> : tensor<3xf32>} : memref<4xf32>
  return
}

// -----

func.func @weight_stored_type_not_f32() {
  // expected-error @+1 {{stored_type is f32, on a bf16 or f16 buffer only}}
  %w = rt.weight "w" {stored_type = f16, value = dense<1.0> : tensor<4xf16>} : memref<4xbf16>
  return
}

// -----

func.func @weight_stored_type_on_f32() {
  // expected-error @+1 {{stored_type is f32, on a bf16 or f16 buffer only}}
  %w = rt.weight "w" {stored_type = f32, value = dense<1.0> : tensor<4xf32>} : memref<4xf32>
  return
}

// -----

func.func @weight_stored_type_value_mismatch() {
  // expected-error @+1 {{value must have the buffer's shape and element type}}
  %w = rt.weight "w" {stored_type = f32, value = dense<1.0> : tensor<4xbf16>} : memref<4xbf16>
  return
}

// -----

// A weight cut twice (experts over "ep", then each expert over "tp"):
// [4, 8] / 2 on dim 0 / 2 on dim 1 is [2, 4], not [2, 8].
module attributes {rt.mesh = {axes = ["ep", "tp"], shape = array<i64: 2, 2>, sym_name = "mesh"}} {
  func.func @weight_nested_shard_mismatch() {
    // expected-error @+1 {{value must have the buffer's shape and element type (its shard's part of them)}}
    %w = rt.weight "w" {value = dense<1.0> : tensor<4x8xf32>, shard = [#dist.sharding<@mesh, [["ep"]]>, #dist.sharding<@mesh, [[], ["tp"]]>]} : memref<2x8xf32>
    return
  }
}

// -----

func.func @weight_shard_not_shardings() {
  // expected-error @+1 {{shard must be a list of #dist.sharding, the whole weight's first}}
  %w = rt.weight "w" {value = dense<1.0> : tensor<4x8xf32>, shard = {axis = "tp", dim = 0 : i64, parts = 2 : i64}} : memref<2x8xf32>
  return
}

// -----

func.func @weight_shard_without_mesh() {
  // expected-error @+1 {{a sharded weight needs its module's rt.mesh}}
  %w = rt.weight "w" {value = dense<1.0> : tensor<4x8xf32>, shard = [#dist.sharding<@mesh, [["tp"]]>]} : memref<2x8xf32>
  return
}

// -----

module attributes {rt.mesh = {axes = ["tp"], shape = array<i64: 4>, sym_name = "mesh"}} {
  func.func @weight_shard_does_not_divide() {
    // expected-error @+1 {{dimension 0 of size 6 does not split evenly into 4 shards}}
    %w = rt.weight "w" {value = dense<1.0> : tensor<6x8xf32>, shard = [#dist.sharding<@mesh, [["tp"]]>]} : memref<2x8xf32>
    return
  }
}

// -----

module attributes {rt.mesh = {axes = ["tp"], shape = array<i64: 2>, sym_name = "mesh"}} {
  func.func @weight_shard_uneven() {
    // expected-error @+1 {{gives ranks parts of different shapes}}
    %w = rt.weight "w" {value = dense<1.0> : tensor<5x8xf32>, shard = [#dist.sharding<@mesh, [["tp"]], sizes = [[3, 2]]>]} : memref<3x8xf32>
    return
  }
}

// -----

func.func @kernel_without_outputs(%b: memref<4xf32>) {
  // expected-error @+1 {{relu takes 1 input and 1 output, not 1 and 0}}
  "rt.kernel"(%b) <{callee = "relu", operandSegmentSizes = array<i32: 1, 0>}> : (memref<4xf32>) -> ()
  return
}

// -----

func.func @start_without_wait(%x: memref<8xf32>, %s: memref<8xf32>) {
  // expected-error @+1 {{its request must be completed by exactly one rt.wait}}
  %r = rt.start "all_reduce" ins(%x : memref<8xf32>) outs(%s : memref<8xf32>)
  return
}

// -----

func.func @wait_twice(%x: memref<8xf32>, %s: memref<8xf32>) {
  // expected-error @+1 {{its request must be completed by exactly one rt.wait}}
  %r = rt.start "all_reduce" ins(%x : memref<8xf32>) outs(%s : memref<8xf32>)
  rt.wait %r
  rt.wait %r
  return
}

// -----

func.func @wait_foreign(%r: !rt.request) {
  // expected-error @+1 {{waits for a request that no rt.start made}}
  rt.wait %r
  return
}

// -----

func.func @repeat_binding_count(%a: memref<8xf32>) {
  // expected-error @+1 {{binds 3 buffers, not count x block arguments (2 x 1)}}
  rt.repeat 2 bindings(%a, %a, %a : memref<8xf32>, memref<8xf32>, memref<8xf32>) {
  ^bb0(%x: memref<8xf32>):
    rt.kernel "relu" ins(%x : memref<8xf32>) outs(%x : memref<8xf32>)
  } {locations = [loc("a"), loc("b")]}
  return
}

// -----

func.func @repeat_body_op(%a: memref<8xf32>) {
  rt.repeat 1 bindings(%a : memref<8xf32>) {
  ^bb0(%x: memref<8xf32>):
    // expected-error @+1 {{cannot be repeated: an rt.repeat body holds only rt.kernel, rt.start and rt.wait}}
    %v = rt.view %x : memref<8xf32> to memref<2x4xf32>
  } {locations = [loc("a")]}
  return
}

// -----

func.func @repeat_locations(%a: memref<8xf32>) {
  // expected-error @+1 {{needs one location per iteration and body op (2), has 1}}
  rt.repeat 2 bindings(%a, %a : memref<8xf32>, memref<8xf32>) {
  ^bb0(%x: memref<8xf32>):
    rt.kernel "relu" ins(%x : memref<8xf32>) outs(%x : memref<8xf32>)
  } {locations = [loc("a")]}
  return
}

// -----

// The kernel contract (dialects/rt/RTKernels.td): a callee is a declared
// kernel, with its buffer counts and typed parameters.

func.func @kernel_undeclared(%b: memref<4xf32>) {
  // expected-error @+1 {{no runtime kernel named 'fft'}}
  rt.kernel "fft" ins(%b : memref<4xf32>) outs(%b : memref<4xf32>)
  return
}

// -----

func.func @kernel_too_many_inputs(%a: memref<4xf32>, %b: memref<4xf32>) {
  // expected-error @+1 {{'rt.kernel' op matmul takes 2 inputs and 1 output, not 1 and 2}}
  rt.kernel "matmul" ins(%a : memref<4xf32>) outs(%a, %b : memref<4xf32>, memref<4xf32>)
  return
}

// -----

func.func @kernel_variadic_too_few(%a: memref<4xf32>) {
  // expected-error @+1 {{'rt.kernel' op concat takes at least 1 input and 1 output, not 0 and 1}}
  rt.kernel "concat" outs(%a : memref<4xf32>) {axis = 0 : i64}
  return
}

// -----

func.func @kernel_operands_described(%a: memref<4xf32>) {
  // expected-error @+1 {{'rt.kernel' op moe takes x, logits, fc1, fc2 (, fc3) and one output}}
  rt.kernel "moe" ins(%a : memref<4xf32>) outs(%a : memref<4xf32>) {top_k = 2 : i64}
  return
}

// -----

// An annotation a later stage reads (RT_Annotation) is typed like a
// parameter; any other dialect-prefixed attribute is undeclared.
func.func @kernel_annotation_kind(%x: memref<16x32xf32>, %l: memref<16x4xf32>, %w1: memref<4x32x64xf32>, %w2: memref<4x64x32xf32>, %y: memref<16x32xf32>) {
  // expected-error @+1 {{'rt.kernel' op parameter 'dist.ffn_shards' of moe must be a 64-bit integer, not "2"}}
  rt.kernel "moe" ins(%x, %l, %w1, %w2 : memref<16x32xf32>, memref<16x4xf32>, memref<4x32x64xf32>, memref<4x64x32xf32>) outs(%y : memref<16x32xf32>) {top_k = 2 : i64, dist.ffn_shards = "2"}
  return
}

// -----

func.func @kernel_undeclared_annotation(%x: memref<16x32xf32>, %l: memref<16x4xf32>, %w1: memref<4x32x64xf32>, %w2: memref<4x64x32xf32>, %y: memref<16x32xf32>) {
  // expected-error @+1 {{'rt.kernel' op moe takes no parameter 'dist.region'}}
  rt.kernel "moe" ins(%x, %l, %w1, %w2 : memref<16x32xf32>, memref<16x4xf32>, memref<4x32x64xf32>, memref<4x64x32xf32>) outs(%y : memref<16x32xf32>) {top_k = 2 : i64, dist.region = 0 : i64}
  return
}

// -----

func.func @kernel_missing_param(%a: memref<4xf32>, %b: memref<4xf32>) {
  // expected-error @+1 {{'rt.kernel' op softmax needs parameter 'axis' (a 64-bit integer)}}
  rt.kernel "softmax" ins(%a : memref<4xf32>) outs(%b : memref<4xf32>)
  return
}

// -----

func.func @kernel_param_kind(%a: memref<4xf32>, %b: memref<4xf32>) {
  // expected-error @+1 {{'rt.kernel' op parameter 'axis' of softmax must be a 64-bit integer, not 0.000000e+00 : f32}}
  rt.kernel "softmax" ins(%a : memref<4xf32>) outs(%b : memref<4xf32>) {axis = 0.0 : f32}
  return
}

// -----

func.func @kernel_param_array_kind(%a: memref<4x2xf32>, %b: memref<2x4xf32>) {
  // expected-error @+1 {{'rt.kernel' op parameter 'perm' of transpose must be an array<i64>, not [1, 0]}}
  rt.kernel "transpose" ins(%a : memref<4x2xf32>) outs(%b : memref<2x4xf32>) {perm = [1, 0]}
  return
}

// -----

func.func @kernel_enum_kind(%a: memref<4xf32>, %b: memref<4xf32>) {
  // expected-error @+1 {{'rt.kernel' op parameter 'approximation' of gelu must be a #nn.gelu_approximation, not "tanh"}}
  rt.kernel "gelu" ins(%a : memref<4xf32>) outs(%b : memref<4xf32>) {approximation = "tanh"}
  return
}

// -----

func.func @kernel_undeclared_param(%a: memref<4xf32>, %b: memref<4xf32>) {
  // expected-error @+1 {{'rt.kernel' op relu takes no parameter 'alpha'}}
  rt.kernel "relu" ins(%a : memref<4xf32>) outs(%b : memref<4xf32>) {alpha = 1.0 : f32}
  return
}

// -----

func.func @kernel_element_types(%a: memref<4xf32>, %b: memref<4xf16>) {
  // expected-error @+1 {{'rt.kernel' op relu needs one element type on every buffer}}
  rt.kernel "relu" ins(%a : memref<4xf32>) outs(%b : memref<4xf16>)
  return
}

// -----

func.func @start_without_start_form(%a: memref<8xf32>, %b: memref<2xf32>) {
  // expected-error @+1 {{'rt.start' op local_chunk has no asynchronous form (parc_rt_local_chunk_start)}}
  %r = rt.start "local_chunk" ins(%a : memref<8xf32>) outs(%b : memref<2xf32>)
  rt.wait %r
  return
}

// -----

func.func @start_of_compute(%a: memref<4xf32>, %b: memref<4xf32>) {
  // expected-error @+1 {{'rt.start' op relu has no asynchronous form (parc_rt_unary_start)}}
  %r = rt.start "relu" ins(%a : memref<4xf32>) outs(%b : memref<4xf32>)
  rt.wait %r
  return
}

// -----

func.func @start_undeclared(%a: memref<4xf32>) {
  // expected-error @+1 {{no runtime kernel named 'broadcast'}}
  %r = rt.start "broadcast" outs(%a : memref<4xf32>) {root = 0 : i64}
  rt.wait %r
  return
}

// -----

func.func @start_counts(%a: memref<4xf32>) {
  // expected-error @+1 {{'rt.start' op send takes 1 input and 0 outputs, not 1 and 1}}
  %r = rt.start "send" ins(%a : memref<4xf32>) outs(%a : memref<4xf32>) {peer = 1 : i64}
  rt.wait %r
  return
}
