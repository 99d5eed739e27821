// RUN: parc-opt %s --split-input-file --verify-diagnostics --dist-extract-stage=stage=2

// Two stages: there is no stage 2.
// expected-error @+1 {{stage 2 is out of range for 2 stage(s)}}
func.func @main(%x: tensor<4xf32>) attributes {dist.pp_layout = array<i64: 1, 1>} {
  return
}

// -----

// Only dist-pipeline's output has stages.
module {
  // expected-error @+1 {{expected a program from dist-pipeline (with dist.pp_layout)}}
  func.func @main(%x: tensor<4xf32>) {
    return
  }
}
