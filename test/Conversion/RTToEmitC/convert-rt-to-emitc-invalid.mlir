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
