// RUN: parc-opt %s --split-input-file --dist-overlap='chunks=2 min-rows=2' | FileCheck %s
// RUN: parc-opt %s --split-input-file --dist-overlap='chunks=1' | FileCheck %s --check-prefix=PLACE
// RUN: parc-opt %s --split-input-file --dist-overlap='chunks=1 memory-budget=64' | FileCheck %s --check-prefix=BUDGET

// Row-parallel product + all-reduce, cut into two pieces of 4 rows: piece
// 1 is multiplied while piece 0 is reduced; the rows are concatenated back
// in order, and the bias added after the reduction stays where it was.
// CHECK-LABEL: func.func @row_all_reduce
// CHECK-SAME: (%[[X:.*]]: tensor<8x16xf32>
// CHECK: %[[P:.*]]:2 = nn.split %[[X]] {axis = 0 : i64} : tensor<8x16xf32> -> (tensor<4x16xf32>, tensor<4x16xf32>)
// CHECK: %[[Y0:.*]] = nn.linear %[[P]]#0, %{{.*}} : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
// CHECK: %[[T0:.*]] = dist.all_reduce_start %[[Y0]] on @mesh mesh_axes = ["tp"]
// CHECK: %[[Y1:.*]] = nn.linear %[[P]]#1
// CHECK: %[[T1:.*]] = dist.all_reduce_start %[[Y1]]
// CHECK: %[[R0:.*]] = dist.wait %[[T0]]
// CHECK: %[[R1:.*]] = dist.wait %[[T1]]
// CHECK: %[[C:.*]] = nn.concat %[[R0]], %[[R1]] {axis = 0 : i64} : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<8x8xf32>
// CHECK: nn.add %[[C]]
// CHECK-NOT: dist.all_reduce %
// PLACE-LABEL: func.func @row_all_reduce
// PLACE: nn.linear
// PLACE-NEXT: %[[T:.*]] = dist.all_reduce_start
// PLACE-NEXT: %[[R:.*]] = dist.wait %[[T]]
// PLACE-NEXT: nn.add %[[R]]
module {
  dist.mesh @mesh(shape = 2, axes = ["tp"])
  func.func @row_all_reduce(%x: tensor<8x16xf32>, %b: tensor<8xf32>) -> tensor<8x8xf32> {
    %w = arith.constant dense<0.5> : tensor<16x8xf32>
    %p = nn.linear %x, %w : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
    %s = dist.all_reduce %p on @mesh mesh_axes = ["tp"] : tensor<8x8xf32>
    %y = nn.add %s, %b : (tensor<8x8xf32>, tensor<8xf32>) -> tensor<8x8xf32>
    return %y : tensor<8x8xf32>
  }
}

// -----

// Sequence-parallel reduce-scatter over 2 ranks of 8 rows: each rank gets
// 4 rows, in two sub-blocks of 2. Piece k holds sub-block k of both
// ranks' blocks (rows {2k, 2k+1} and {4+2k, 4+2k+1}): the [2, 2, 2] grid
// of rows sliced at k.
// CHECK-LABEL: func.func @row_reduce_scatter
// CHECK: %[[G:.*]] = nn.reshape %{{.*}} : tensor<8x16xf32> to tensor<2x2x2x16xf32>
// CHECK: %[[S0:.*]] = nn.slice %[[G]] {starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 1, 1>} : tensor<2x2x2x16xf32> -> tensor<2x1x2x16xf32>
// CHECK: %[[X0:.*]] = nn.reshape %[[S0]] : tensor<2x1x2x16xf32> to tensor<4x16xf32>
// CHECK: %[[Y0:.*]] = nn.linear %[[X0]]
// CHECK: %[[T0:.*]] = dist.reduce_scatter_start %[[Y0]] on @mesh mesh_axes = ["tp"] scatter_axis = 0 : tensor<4x8xf32> -> !dist.async<tensor<2x8xf32>>
// CHECK: nn.slice %[[G]] {starts = array<i64: 0, 1, 0, 0>
// CHECK: dist.reduce_scatter_start
// CHECK: %[[R0:.*]] = dist.wait %[[T0]]
// CHECK: %[[R1:.*]] = dist.wait
// CHECK: nn.concat %[[R0]], %[[R1]] {axis = 0 : i64} : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<4x8xf32>
module {
  dist.mesh @mesh(shape = 2, axes = ["tp"])
  func.func @row_reduce_scatter(%x: tensor<8x16xf32>) -> tensor<4x8xf32> {
    %w = arith.constant dense<0.5> : tensor<16x8xf32>
    %p = nn.linear %x, %w : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
    %s = dist.reduce_scatter %p on @mesh mesh_axes = ["tp"] scatter_axis = 0 : tensor<8x8xf32> -> tensor<4x8xf32>
    return %s : tensor<4x8xf32>
  }
}

// -----

// All-gather of 4 local rows from 2 ranks feeding two products: both
// pieces start at once; each arrives as [rank 0 rows, rank 1 rows] of 2
// rows and its products go to slot k of a [2, 2, 2] grid of rows; the
// second product's weight part moves up to where the first product was.
// CHECK-LABEL: func.func @gather_products
// CHECK: %[[P:.*]]:2 = nn.split %{{.*}} {axis = 0 : i64} : tensor<4x16xf32> -> (tensor<2x16xf32>, tensor<2x16xf32>)
// CHECK: %[[T0:.*]] = dist.all_gather_start %[[P]]#0 on @mesh mesh_axes = ["tp"] gather_axis = 0 : tensor<2x16xf32> -> !dist.async<tensor<4x16xf32>>
// CHECK: %[[T1:.*]] = dist.all_gather_start %[[P]]#1
// CHECK: %[[R0:.*]] = dist.wait %[[T0]]
// CHECK: %[[A0:.*]] = nn.linear %[[R0]], %{{.*}} : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
// CHECK: nn.reshape %[[A0]] : tensor<4x8xf32> to tensor<2x1x2x8xf32>
// CHECK: nn.linear %[[R0]], %{{.*}} : (tensor<4x16xf32>, tensor<16x4xf32>) -> tensor<4x4xf32>
// CHECK: %[[R1:.*]] = dist.wait %[[T1]]
// CHECK: nn.linear %[[R1]]
// CHECK: %[[GA:.*]] = nn.concat %{{.*}}, %{{.*}} {axis = 1 : i64} : (tensor<2x1x2x8xf32>, tensor<2x1x2x8xf32>) -> tensor<2x2x2x8xf32>
// CHECK: nn.reshape %[[GA]] : tensor<2x2x2x8xf32> to tensor<8x8xf32>
// CHECK-NOT: dist.all_gather %
module {
  dist.mesh @mesh(shape = 2, axes = ["tp"])
  func.func @gather_products(%x: tensor<4x16xf32>) -> (tensor<8x8xf32>, tensor<8x4xf32>) {
    %w = arith.constant dense<0.5> : tensor<16x8xf32>
    %v = arith.constant dense<0.25> : tensor<16x8xf32>
    %g = dist.all_gather %x on @mesh mesh_axes = ["tp"] gather_axis = 0 : tensor<4x16xf32> -> tensor<8x16xf32>
    %a = nn.linear %g, %w : (tensor<8x16xf32>, tensor<16x8xf32>) -> tensor<8x8xf32>
    %vp = dist.local_part %v to <@mesh, [[], ["tp"]]> : tensor<16x8xf32> -> tensor<16x4xf32>
    %c = nn.linear %g, %vp : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
    return %a, %c : tensor<8x8xf32>, tensor<8x4xf32>
  }
}

// -----

// Placement: the all-reduce starts right after its operand and waits
// before its first use, so the independent product runs in between. With
// a budget of 64 bytes its 2·64 bytes do not fit: it starts where it was.
// PLACE-LABEL: func.func @early_start
// PLACE: %[[P:.*]] = nn.relu
// PLACE-NEXT: %[[T:.*]] = dist.all_reduce_start %[[P]]
// PLACE-NEXT: nn.linear
// PLACE-NEXT: %[[R:.*]] = dist.wait %[[T]]
// PLACE-NEXT: nn.add %[[R]]
// BUDGET-LABEL: func.func @early_start
// BUDGET: nn.relu
// BUDGET-NEXT: nn.linear
// BUDGET-NEXT: %[[T:.*]] = dist.all_reduce_start
// BUDGET-NEXT: dist.wait %[[T]]
module {
  dist.mesh @mesh(shape = 2, axes = ["tp"])
  func.func @early_start(%x: tensor<4x4xf32>, %z: tensor<4x4xf32>) -> tensor<4x4xf32> {
    %w = arith.constant dense<0.5> : tensor<4x4xf32>
    %p = nn.relu %x : tensor<4x4xf32>
    %q = nn.linear %z, %w : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
    %s = dist.all_reduce %p on @mesh mesh_axes = ["tp"] : tensor<4x4xf32>
    %y = nn.add %s, %q : (tensor<4x4xf32>, tensor<4x4xf32>) -> tensor<4x4xf32>
    return %y : tensor<4x4xf32>
  }
}
