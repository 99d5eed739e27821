// RUN: parc-opt %s --dist-overlap='cluster=%S/Inputs/overlap-fast-link.json' -verify-diagnostics

// The cluster gives an f32 peak only: a bf16 product cannot be priced.
module {
  dist.mesh @mesh(shape = 2, axes = ["tp"])
  func.func @f(%x: tensor<64x256xbf16>) -> tensor<64x256xbf16> {
    %w = arith.constant dense<0.5> : tensor<256x256xbf16>
    %p = nn.linear %x, %w : (tensor<64x256xbf16>, tensor<256x256xbf16>) -> tensor<64x256xbf16>
    // expected-error @+1 {{dist-overlap: cannot price 'dist.all_reduce': cluster 'overlap-fast-link' gives no peak_tflops for dtype 'bf16' (it has: f32)}}
    %s = dist.all_reduce %p on @mesh mesh_axes = ["tp"] : tensor<64x256xbf16>
    return %s : tensor<64x256xbf16>
  }
}
