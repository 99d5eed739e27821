// RUN: parc-opt %s --dist-overlap='cluster=nosuch' -verify-diagnostics

// The cost model needs a cluster: neither a preset nor a file.
// expected-error @+1 {{dist-overlap: no cluster preset 'nosuch' (presets: }}
module {
  dist.mesh @mesh(shape = 2, axes = ["tp"])
  func.func @f(%x: tensor<64x256xf32>) -> tensor<64x256xf32> {
    %w = arith.constant dense<0.5> : tensor<256x256xf32>
    %p = nn.linear %x, %w : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
    %s = dist.all_reduce %p on @mesh mesh_axes = ["tp"] : tensor<64x256xf32>
    return %s : tensor<64x256xf32>
  }
}
