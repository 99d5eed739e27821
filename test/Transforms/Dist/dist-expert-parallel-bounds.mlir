// The static bound of what a rank receives in the dispatch all_to_all_v.
// RUN: parc-opt %s --dist-expert-parallel="ep=2 capacity-factor=0.5" | FileCheck %s
// RUN: parc-opt %s --dist-expert-parallel="ep=2" | FileCheck %s --check-prefix=NOCAP
// RUN: parc-opt %s --dist-expert-parallel="ep=4" | FileCheck %s --check-prefix=FEW

// 16 tokens, top-2 of 8 experts over 2 ranks (4 local experts). With a
// capacity factor of 0.5 the capacity is ceil(0.5 * 16 * 2 / 8) = 2 pairs
// per expert, so a rank receives at most 4 experts x 2 = 8 rows, fewer than
// 16 tokens x min(2, 4) = 32; each rank sends 8 tokens x 2 = 16 rows.
// CHECK: dist.moe_permute {{.*}} capacity = 2 : tensor<8x32xf32>, tensor<8x2xi64>, tensor<16xi64> -> tensor<16x32xf32>, tensor<2xi64>, tensor<2x4xi64>, tensor<16xi64>
// CHECK: dist.all_to_all_v {{.*}} : tensor<16x32xf32>, tensor<2xi64>, tensor<2xi64> -> tensor<8x32xf32>
// CHECK: nn.moe_experts {{.*}} -> tensor<8x32xf32>
// CHECK: dist.all_to_all_v {{.*}} : tensor<8x32xf32>, tensor<2xi64>, tensor<2xi64> -> tensor<16x32xf32>
// Without a capacity: every token may send both of its pairs to one rank,
// 16 x 2 = 32 rows.
// NOCAP: dist.moe_permute {{.*}} -> tensor<16x32xf32>, tensor<2xi64>, tensor<2x4xi64>, tensor<16xi64>
// NOCAP: dist.all_to_all_v {{.*}} : tensor<16x32xf32>, tensor<2xi64>, tensor<2xi64> -> tensor<32x32xf32>
// Over 4 ranks each holds 2 experts: still min(2, 2) = 2 rows per token;
// over 8 ranks it would be 1 (see the tp case in dist-expert-parallel.mlir).
// FEW: dist.all_to_all_v {{.*}} : tensor<8x32xf32>, tensor<4xi64>, tensor<4xi64> -> tensor<32x32xf32>
func.func @main(%x: tensor<16x32xf32>, %l: tensor<16x8xf32>) -> tensor<16x32xf32> {
  %w1 = arith.constant dense<0.5> : tensor<8x32x64xf32>
  %w2 = arith.constant dense<0.25> : tensor<8x64x32xf32>
  %y = nn.moe %x, %l, %w1, %w2 {top_k = 2 : i64} : (tensor<16x32xf32>, tensor<16x8xf32>, tensor<8x32x64xf32>, tensor<8x64x32xf32>) -> tensor<16x32xf32>
  return %y : tensor<16x32xf32>
}
