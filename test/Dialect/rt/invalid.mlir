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

// A weight cut twice (experts over "ep", then each expert over "tp"):
// [4, 8] / 2 on dim 0 / 2 on dim 1 is [2, 4], not [2, 8].
func.func @weight_nested_shard_mismatch() {
  // expected-error @+1 {{value must have the buffer's shape and element type (times the shard's parts)}}
  %w = rt.weight "w" {value = dense<1.0> : tensor<4x8xf32>, shard = {axis = "ep", dim = 0 : i64, parts = 2 : i64, then = {axis = "tp", dim = 1 : i64, parts = 2 : i64}}} : memref<2x8xf32>
  return
}

// -----

func.func @weight_nested_shard_incomplete() {
  // expected-error @+1 {{shard needs dim, parts and axis}}
  %w = rt.weight "w" {value = dense<1.0> : tensor<4x8xf32>, shard = {axis = "ep", dim = 0 : i64, parts = 2 : i64, then = {dim = 1 : i64, parts = 2 : i64}}} : memref<2x4xf32>
  return
}

// -----

func.func @kernel_without_outputs(%b: memref<4xf32>) {
  // expected-error @+1 {{a kernel writes at least one buffer}}
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
