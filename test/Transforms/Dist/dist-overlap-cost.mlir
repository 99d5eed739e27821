// The cut of each collective matmul is chosen with lib/Plan's cost model on
// a cluster file. Both clusters below compute 1 TFLOP/s (f32) with
// 1000 GB/s of memory and no launch latency, and move 8 GB/s per link;
// they differ only in the latency of one ring step: 0.5 us (fast) or 20 us
// (slow). A piece of c computes max(FLOPs/c / 1e12, bytes/1e12) (the
// activations divide, the 256 KiB weight is read by every piece) and then
// runs its collective of 1/c of the bytes, paying every step's latency;
// the pieces form a two-stage pipeline: p + (c-1)·max(p, a) + a. Cutting
// also copies the input into pieces and the results back together: each
// of those bytes is read and written once, at 1000 GB/s.
//
// RUN: parc-opt %s --split-input-file --dist-overlap="cluster=%S/Inputs/overlap-fast-link.json explain=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=FAST-WHY
// RUN: parc-opt %s --split-input-file --dist-overlap="cluster=%S/Inputs/overlap-fast-link.json" | FileCheck %s --check-prefix=FAST
// RUN: parc-opt %s --split-input-file --dist-overlap="cluster=%S/Inputs/overlap-slow-link.json explain=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=SLOW-WHY
// RUN: parc-opt %s --split-input-file --dist-overlap="cluster=%S/Inputs/overlap-slow-link.json" | FileCheck %s --check-prefix=SLOW
// RUN: parc-opt %s --split-input-file --dist-overlap="cluster=%S/Inputs/overlap-slow-link.json chunks=2 explain=true" -o /dev/null 2>&1 | FileCheck %s --check-prefix=FIXED

// Row-parallel product 64x256 · 256x256 (8388608 FLOPs: 8.388608 us) and
// the all-reduce of its 64x256 f32 result (65536 B; over 2 ranks a ring
// takes 2 steps and moves 2·(2-1)/2 = 1× the bytes: 65536/8e9 = 8.192 us).
// Cut, the 65536 B input and 65536 B result are copied: 2 · 131072 B at
// 1000 GB/s = 0.262144 us.
// Fast link (2 · 0.5 = 1 us of latency per all-reduce):
//   not cut   8.388608 + 9.192                            = 17.58 us
//   2 pieces  4.194304 + 2 · (1 + 4.096) + 0.262144       = 14.65 us
//   4 pieces  2.097152 + 4 · (1 + 2.048) + 0.262144       = 14.55 us  <- chosen
//   8 pieces  1.048576 + 8 · (1 + 1.024) + 0.262144       = 17.50 us
// (each piece's compute is above its bytes: 4 pieces read 32768 B of
// activations and the whole 262144 B weight, 0.29 us). Slow link (40 us
// per all-reduce): every piece pays 40 us more than it hides.
//   not cut   8.388608 + 48.192                           = 56.58 us  <- chosen
//   2 pieces  4.194304 + 2 · (40 + 4.096) + 0.262144      = 92.65 us
//   4 pieces  2.097152 + 4 · (40 + 2.048) + 0.262144      = 170.55 us
//   8 pieces  1.048576 + 8 · (40 + 1.024) + 0.262144      = 329.50 us
// FAST-WHY: remark: collective matmul of node 'h0/attn/c_proj' (nn.linear) and its all_reduce (65536 B over 2 ranks, 64 rows to cut): not cut 17.58 us, 2 pieces 14.65 us, 4 pieces 14.55 us, 8 pieces 17.50 us; chosen: 4 pieces
// SLOW-WHY: remark: collective matmul of node 'h0/attn/c_proj' (nn.linear) and its all_reduce (65536 B over 2 ranks, 64 rows to cut): not cut 56.58 us, 2 pieces 92.65 us, 4 pieces 170.55 us, 8 pieces 329.50 us; chosen: not cut
// With chunks=2 the cut is fixed whatever it costs.
// FIXED: remark: collective matmul of node 'h0/attn/c_proj' (nn.linear) and its all_reduce {{.*}}; chosen: 2 pieces (fixed by chunks=2)
// FAST-LABEL: func.func @row
// FAST: nn.split %{{.*}} {axis = 0 : i64} : tensor<64x256xf32> -> (tensor<16x256xf32>, tensor<16x256xf32>, tensor<16x256xf32>, tensor<16x256xf32>)
// FAST-COUNT-4: dist.all_reduce_start
// FAST-NOT: dist.all_reduce_start
// SLOW-LABEL: func.func @row
// SLOW-NOT: nn.split
// SLOW: %[[Y:.*]] = nn.linear %{{.*}} : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32>
// SLOW-NEXT: dist.all_reduce_start %[[Y]]
module {
  dist.mesh @mesh(shape = 2, axes = ["tp"])
  func.func @row(%x: tensor<64x256xf32>) -> tensor<64x256xf32> {
    %w = arith.constant dense<0.5> : tensor<256x256xf32>
    %p = nn.linear %x, %w : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32> loc("h0/attn/c_proj")
    %s = dist.all_reduce %p on @mesh mesh_axes = ["tp"] : tensor<64x256xf32>
    return %s : tensor<64x256xf32>
  }
}

// -----

// Sequence-parallel all-gather of 32 local rows of 256 f32 from 2 ranks
// (64x256 gathered: 65536 B; a ring takes 1 step and moves (2-1)/2 of the
// bytes, 4.096 us) feeding the same product. Pieces cut the 32 local rows:
// 8 pieces would keep 4 rows, fewer than min-rows (8), so they are not
// priced. Cut, the 32768 B of local rows and the 65536 B result are
// copied: 2 · 98304 B at 1000 GB/s = 0.196608 us. Fast link (0.5 us per
// gather):
//   not cut   8.388608 + 4.596                                 = 12.98 us
//   2 pieces  4.194304 + 4.194304 + (0.5 + 2.048) + 0.196608   = 11.13 us
//   4 pieces  2.097152 + 3 · 2.097152 + (0.5 + 1.024) + 0.196608 = 10.11 us <- chosen
// Slow link (20 us per gather):
//   not cut   8.388608 + 24.096                                = 32.48 us <- chosen
//   2 pieces  4.194304 + 2 · (20 + 2.048) + 0.196608           = 48.49 us
//   4 pieces  2.097152 + 4 · (20 + 1.024) + 0.196608           = 86.39 us
// FAST-WHY: remark: collective matmul of node 'h0/mlp/c_fc' (nn.linear) and its all_gather (65536 B over 2 ranks, 32 rows to cut): not cut 12.98 us, 2 pieces 11.13 us, 4 pieces 10.11 us; chosen: 4 pieces
// SLOW-WHY: remark: collective matmul of node 'h0/mlp/c_fc' (nn.linear) and its all_gather (65536 B over 2 ranks, 32 rows to cut): not cut 32.48 us, 2 pieces 48.49 us, 4 pieces 86.39 us; chosen: not cut
// FAST-LABEL: func.func @gather
// FAST-COUNT-4: dist.all_gather_start %{{.*}} : tensor<8x256xf32> -> !dist.async<tensor<16x256xf32>>
// SLOW-LABEL: func.func @gather
// SLOW: dist.all_gather_start %{{.*}} : tensor<32x256xf32> -> !dist.async<tensor<64x256xf32>>
// SLOW-NOT: dist.all_gather_start
module {
  dist.mesh @mesh(shape = 2, axes = ["tp"])
  func.func @gather(%x: tensor<32x256xf32>) -> tensor<64x256xf32> {
    %w = arith.constant dense<0.5> : tensor<256x256xf32>
    %g = dist.all_gather %x on @mesh mesh_axes = ["tp"] gather_axis = 0 : tensor<32x256xf32> -> tensor<64x256xf32>
    %y = nn.linear %g, %w : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32> loc("h0/mlp/c_fc")
    return %y : tensor<64x256xf32>
  }
}

// -----

// Row-parallel product into a sequence-parallel reduce-scatter over 2
// ranks: each rank keeps 32 of the 64 rows, and the pieces cut those (8
// pieces would keep 4 rows, fewer than min-rows). The ring takes 1 step
// and moves (2-1)/2 of the 65536 B, 4.096 us; cut, the 65536 B input and
// the 32768 B result are copied, 0.196608 us. The product is the one above.
//   fast: not cut   8.388608 + 4.596                                 = 12.98 us
//         2 pieces  4.194304 + 4.194304 + (0.5 + 2.048) + 0.196608   = 11.13 us
//         4 pieces  4 · 2.097152 + (0.5 + 1.024) + 0.196608          = 10.11 us <- chosen
//   slow: not cut   8.388608 + 24.096                                = 32.48 us <- chosen
//         2 pieces  4.194304 + 2 · (20 + 2.048) + 0.196608           = 48.49 us
//         4 pieces  2.097152 + 4 · (20 + 1.024) + 0.196608           = 86.39 us
// FAST-WHY: remark: collective matmul of node 'h0/mlp/c_proj' (nn.linear) and its reduce_scatter (65536 B over 2 ranks, 32 rows to cut): not cut 12.98 us, 2 pieces 11.13 us, 4 pieces 10.11 us; chosen: 4 pieces
// SLOW-WHY: remark: collective matmul of node 'h0/mlp/c_proj' (nn.linear) and its reduce_scatter (65536 B over 2 ranks, 32 rows to cut): not cut 32.48 us, 2 pieces 48.49 us, 4 pieces 86.39 us; chosen: not cut
// FAST-LABEL: func.func @scatter
// FAST-COUNT-4: dist.reduce_scatter_start %{{.*}} scatter_axis = 0 : tensor<16x256xf32> -> !dist.async<tensor<8x256xf32>>
// SLOW-LABEL: func.func @scatter
// SLOW: dist.reduce_scatter_start %{{.*}} scatter_axis = 0 : tensor<64x256xf32> -> !dist.async<tensor<32x256xf32>>
// SLOW-NOT: dist.reduce_scatter_start
module {
  dist.mesh @mesh(shape = 2, axes = ["tp"])
  func.func @scatter(%x: tensor<64x256xf32>) -> tensor<32x256xf32> {
    %w = arith.constant dense<0.5> : tensor<256x256xf32>
    %p = nn.linear %x, %w : (tensor<64x256xf32>, tensor<256x256xf32>) -> tensor<64x256xf32> loc("h0/mlp/c_proj")
    %s = dist.reduce_scatter %p on @mesh mesh_axes = ["tp"] scatter_axis = 0 : tensor<64x256xf32> -> tensor<32x256xf32>
    return %s : tensor<32x256xf32>
  }
}
