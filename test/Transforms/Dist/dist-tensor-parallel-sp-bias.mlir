// RUN: parc-opt %s --dist-tensor-parallel="tp=2 sp=true" | FileCheck %s

// A row-parallel linear with a bias whose result is a program output, under
// --sp: its partial sums are reduce-scattered along dim 0 (4 → 2 rows per
// rank), the bias is added once to each rank's rows, and those rows are
// all-gathered back to the whole [4, 2] output (the pooler → classifier of
// BERT). The gather must read the layout of the biased sum.
// CHECK-LABEL: func.func @main
// CHECK: %[[P:.*]] = nn.linear {{.*}} : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
// CHECK: %[[S:.*]] = dist.reduce_scatter %[[P]] on @mesh mesh_axes = ["tp"] scatter_axis = 0 : tensor<4x2xf32> -> tensor<2x2xf32>
// CHECK: %[[B:.*]] = nn.add %[[S]], %{{.*}} : (tensor<2x2xf32>, tensor<2xf32>) -> tensor<2x2xf32>
// CHECK: %[[G:.*]] = dist.all_gather %[[B]] on @mesh mesh_axes = ["tp"] gather_axis = 0 root = 0 : tensor<2x2xf32> -> tensor<4x2xf32>
// CHECK: return %[[G]] : tensor<4x2xf32>
func.func @main(%x: tensor<4x8xf32>) -> tensor<4x2xf32> {
  %w1 = arith.constant dense<0.5> : tensor<8x6xf32>
  %w2 = arith.constant dense<0.25> : tensor<6x2xf32>
  %b2 = arith.constant dense<[1.0, 2.0]> : tensor<2xf32>
  %h = nn.linear %x, %w1 : (tensor<4x8xf32>, tensor<8x6xf32>) -> tensor<4x6xf32>
  %g = nn.tanh %h : tensor<4x6xf32>
  %y = nn.linear %g, %w2, %b2 : (tensor<4x6xf32>, tensor<6x2xf32>, tensor<2xf32>) -> tensor<4x2xf32>
  return %y : tensor<4x2xf32>
}
