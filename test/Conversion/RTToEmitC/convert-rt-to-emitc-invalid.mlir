// RUN: parc-opt %s --split-input-file --convert-rt-to-emitc -verify-diagnostics

func.func @main() {
  // expected-error @+1 {{is not placed: run rt-plan-memory first}}
  %b = rt.alloc : memref<4xf32>
  rt.output 0 "y", %b : memref<4xf32>
  return
}

// -----

func.func @main() {
  %b = rt.alloc {offset = 0 : i64} : memref<4xf32>
  // expected-error @+1 {{no runtime kernel named 'fft'}}
  rt.kernel "fft" ins(%b : memref<4xf32>) outs(%b : memref<4xf32>)
  return
}

// -----

func.func @main() {
  // expected-error @+1 {{element type 'complex<f32>' is not supported by the runtime}}
  %b = rt.alloc {offset = 0 : i64} : memref<4xcomplex<f32>>
  return
}

// -----

// The runtime exchanges slices of the leading dim only.
module attributes {rt.mesh = {axes = ["ep"], shape = array<i64: 2>, sym_name = "mesh"}} {
  func.func @main() attributes {rt.arena_size = 2048 : i64} {
    %x = rt.input 0 "x" : memref<4x8xf32>
    %c = rt.input 1 "c" : memref<2xi64>
    %y = rt.alloc {offset = 0 : i64} : memref<4x8xf32>
    // expected-error @+1 {{'rt.kernel' op all_to_all_v runs on the leading dim only}}
    rt.kernel "all_to_all_v" ins(%x, %c, %c : memref<4x8xf32>, memref<2xi64>, memref<2xi64>) outs(%y : memref<4x8xf32>) {mesh = @mesh, mesh_axes = ["ep"], axis = 1 : i64}
    rt.output 0 "y", %y : memref<4x8xf32>
    return
  }
}

// -----

// An all_to_all_v names both counts: the old self-describing form (counts
// out) has no runtime call.
module attributes {rt.mesh = {axes = ["ep"], shape = array<i64: 2>, sym_name = "mesh"}} {
  func.func @main() attributes {rt.arena_size = 2048 : i64} {
    %x = rt.input 0 "x" : memref<4x8xf32>
    %c = rt.input 1 "c" : memref<2xi64>
    %y = rt.alloc {offset = 0 : i64} : memref<4x8xf32>
    %rc = rt.alloc {offset = 1024 : i64} : memref<2xi64>
    // expected-error @+1 {{'rt.start' op all_to_all_v takes the input, send and receive counts, and one output}}
    %q = rt.start "all_to_all_v" ins(%x, %c : memref<4x8xf32>, memref<2xi64>) outs(%y, %rc : memref<4x8xf32>, memref<2xi64>) {mesh = @mesh, mesh_axes = ["ep"], axis = 0 : i64}
    rt.wait %q
    rt.output 0 "y", %y : memref<4x8xf32>
    return
  }
}
