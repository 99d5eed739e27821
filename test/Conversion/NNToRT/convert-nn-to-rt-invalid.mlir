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

// -----

// The runtime reduce-scatters even sums only.
module {
  dist.mesh @mesh(shape = 2, axes = ["tp"])
  func.func @main(%x: tensor<4x8xf32>) -> tensor<2x8xf32> {
    // expected-error @+1 {{only even sum reduce-scatters have a runtime kernel}}
    %y = dist.reduce_scatter %x on @mesh mesh_axes = ["tp"] scatter_axis = 0 reduction = max : tensor<4x8xf32> -> tensor<2x8xf32>
    return %y : tensor<2x8xf32>
  }
}

// -----

// A computed value is sliced evenly; replicated parts are for weights.
module {
  dist.mesh @mesh(shape = 4, axes = ["tp"])
  func.func @main(%x: tensor<4x8xf32>) -> tensor<2x8xf32> {
    // expected-error @+1 {{a computed value is sliced only evenly}}
    %y = dist.local_part %x to <@mesh, [["tp"]], replicas = [2]> : tensor<4x8xf32> -> tensor<2x8xf32>
    return %y : tensor<2x8xf32>
  }
}
