// RUN: parc-opt %s --split-input-file --convert-nn-to-rt --allow-unregistered-dialect -verify-diagnostics

// An op outside the nn dialect has no runtime kernel.
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{has no runtime kernel}}
  %y = "test.unknown"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}

// -----

// expected-error @+1 {{expected a func.func @main with a body}}
module {
  func.func private @main(tensor<4xf32>) -> tensor<4xf32>
}
