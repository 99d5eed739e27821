// RUN: parc-opt %s --split-input-file --dist-comm | FileCheck %s

// Each layout change becomes its cheapest collective on the local types.
// CHECK-LABEL: func.func @partial_to_replicated
// CHECK: %[[R:.*]] = dist.all_reduce %arg0 on @mesh mesh_axes = ["tp"] : tensor<2x4x8xf32>
// CHECK: return %[[R]]
dist.mesh @mesh(shape = 2, axes = ["tp"])
func.func @partial_to_replicated(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %y = dist.reshard %x from <@mesh, [], partial = ["tp"]> to <@mesh, []> : tensor<2x4x8xf32> -> tensor<2x4x8xf32>
  return %y : tensor<2x4x8xf32>
}

// -----

// CHECK-LABEL: func.func @partial_to_sequence
// CHECK: dist.reduce_scatter %arg0 on @mesh mesh_axes = ["tp"] scatter_axis = 1 : tensor<2x4x8xf32> -> tensor<2x2x8xf32>
dist.mesh @mesh(shape = 2, axes = ["tp"])
func.func @partial_to_sequence(%x: tensor<2x4x8xf32>) -> tensor<2x2x8xf32> {
  %y = dist.reshard %x from <@mesh, [], partial = ["tp"]> to <@mesh, [[], ["tp"]]> : tensor<2x4x8xf32> -> tensor<2x2x8xf32>
  return %y : tensor<2x2x8xf32>
}

// -----

// CHECK-LABEL: func.func @split_to_replicated
// CHECK: dist.all_gather %arg0 on @mesh mesh_axes = ["tp"] gather_axis = 1 root = 0 : tensor<2x1x8xf32> -> tensor<2x4x8xf32>
dist.mesh @mesh(shape = 4, axes = ["tp"])
func.func @split_to_replicated(%x: tensor<2x1x8xf32>) -> tensor<2x4x8xf32> {
  %y = dist.reshard %x from <@mesh, [[], ["tp"]]> to <@mesh, []> : tensor<2x1x8xf32> -> tensor<2x4x8xf32>
  return %y : tensor<2x4x8xf32>
}

// -----

// CHECK-LABEL: func.func @split_to_split
// CHECK: dist.all_to_all %arg0 on @mesh mesh_axes = ["tp"] split_axis = 2 concat_axis = 1 : tensor<2x2x8xf32> -> tensor<2x4x4xf32>
dist.mesh @mesh(shape = 2, axes = ["tp"])
func.func @split_to_split(%x: tensor<2x2x8xf32>) -> tensor<2x4x4xf32> {
  %y = dist.reshard %x from <@mesh, [[], ["tp"]]> to <@mesh, [[], [], ["tp"]]> : tensor<2x2x8xf32> -> tensor<2x4x4xf32>
  return %y : tensor<2x4x4xf32>
}

// -----

// A replicated value is sliced: no communication.
// CHECK-LABEL: func.func @replicated_to_split
// CHECK: dist.local_part %arg0 to <@mesh, {{\[\[}}], ["tp"]]> : tensor<2x4x8xf32> -> tensor<2x2x8xf32>
// CHECK-NOT: dist.all
dist.mesh @mesh(shape = 2, axes = ["tp"])
func.func @replicated_to_split(%x: tensor<2x4x8xf32>) -> tensor<2x2x8xf32> {
  %y = dist.reshard %x from <@mesh, []> to <@mesh, [[], ["tp"]]> : tensor<2x4x8xf32> -> tensor<2x2x8xf32>
  return %y : tensor<2x2x8xf32>
}

// -----

// The same layout: nothing.
// CHECK-LABEL: func.func @unchanged
// CHECK-NEXT: return %arg0
dist.mesh @mesh(shape = 2, axes = ["tp"])
func.func @unchanged(%x: tensor<2x2x8xf32>) -> tensor<2x2x8xf32> {
  %y = dist.reshard %x from <@mesh, [[], ["tp"]]> to <@mesh, [[], ["tp"]]> : tensor<2x2x8xf32> -> tensor<2x2x8xf32>
  return %y : tensor<2x2x8xf32>
}

// -----

// The sequence-parallel block of dist-partition.mlir after dist-partition:
// a slice in, a gather before each column linear, a reduce-scatter after
// each row linear, a gather out.
// CHECK-LABEL: func.func @main
// CHECK: dist.local_part %arg0 to <@mesh, {{\[\[}}], ["tp"]]> : tensor<2x4x8xf32> -> tensor<2x2x8xf32>
// CHECK: dist.all_gather %{{.*}} gather_axis = 1 : tensor<2x2x8xf32> -> tensor<2x4x8xf32>
// CHECK: dist.reduce_scatter %{{.*}} scatter_axis = 1 : tensor<2x4x8xf32> -> tensor<2x2x8xf32>
// CHECK: dist.all_gather %{{.*}} gather_axis = 1 : tensor<2x2x8xf32> -> tensor<2x4x8xf32>
// CHECK: dist.reduce_scatter %{{.*}} scatter_axis = 1 : tensor<2x4x8xf32> -> tensor<2x2x8xf32>
// CHECK: %[[OUT:.*]] = dist.all_gather %{{.*}} gather_axis = 1 root = 0 : tensor<2x2x8xf32> -> tensor<2x4x8xf32>
// CHECK-NOT: dist.reshard
// CHECK: return %[[OUT]]
module {
  dist.mesh @mesh(shape = 2, axes = ["tp"])
  func.func @main(%arg0: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> attributes {dist.tp_regions = 2 : i64} {
    %0 = dist.reshard %arg0 from <@mesh, []> to <@mesh, [[], ["tp"]]> : tensor<2x4x8xf32> -> tensor<2x2x8xf32>
    %cst = arith.constant dense<1.000000e+00> : tensor<8xf32>
    %cst_0 = arith.constant dense<0.000000e+00> : tensor<8xf32>
    %cst_1 = arith.constant dense<5.000000e-01> : tensor<8x24xf32>
    %cst_2 = arith.constant dense<1.000000e-01> : tensor<24xf32>
    %cst_3 = arith.constant dense<2.500000e-01> : tensor<8x8xf32>
    %cst_4 = arith.constant dense<2.000000e-01> : tensor<8xf32>
    %cst_5 = arith.constant dense<1.000000e+00> : tensor<8xf32>
    %cst_6 = arith.constant dense<0.000000e+00> : tensor<8xf32>
    %cst_7 = arith.constant dense<5.000000e-01> : tensor<8x32xf32>
    %cst_8 = arith.constant dense<1.000000e-01> : tensor<32xf32>
    %cst_9 = arith.constant dense<2.500000e-01> : tensor<32x8xf32>
    %cst_10 = arith.constant dense<2.000000e-01> : tensor<8xf32>
    %1 = nn.layer_norm %0, %cst, %cst_0 {axis = 2 : i64, epsilon = 9.99999974E-6 : f32} : (tensor<2x2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x2x8xf32>
    %2 = dist.reshard %1 from <@mesh, [[], ["tp"]]> to <@mesh, []> : tensor<2x2x8xf32> -> tensor<2x4x8xf32>
    %3 = dist.local_part %cst_1 to <@mesh, [[], ["tp"]], blocks = [[], [8, 8, 8]]> : tensor<8x24xf32> -> tensor<8x12xf32>
    %4 = dist.local_part %cst_2 to <@mesh, [["tp"]], blocks = [[8, 8, 8]]> : tensor<24xf32> -> tensor<12xf32>
    %5 = nn.linear %2, %3, %4 : (tensor<2x4x8xf32>, tensor<8x12xf32>, tensor<12xf32>) -> tensor<2x4x12xf32>
    %6:3 = nn.split %5 {axis = 2 : i64} : tensor<2x4x12xf32> -> (tensor<2x4x4xf32>, tensor<2x4x4xf32>, tensor<2x4x4xf32>)
    %7 = nn.reshape %6#0 : tensor<2x4x4xf32> to tensor<2x4x2x2xf32>
    %8 = nn.reshape %6#1 : tensor<2x4x4xf32> to tensor<2x4x2x2xf32>
    %9 = nn.reshape %6#2 : tensor<2x4x4xf32> to tensor<2x4x2x2xf32>
    %10 = nn.transpose %7 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x2x2xf32> -> tensor<2x2x4x2xf32>
    %11 = nn.transpose %8 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x2x2xf32> -> tensor<2x2x4x2xf32>
    %12 = nn.transpose %9 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x2x2xf32> -> tensor<2x2x4x2xf32>
    %13 = nn.attention %10, %11, %12 {scale = 5.000000e-01 : f32} : (tensor<2x2x4x2xf32>, tensor<2x2x4x2xf32>, tensor<2x2x4x2xf32>) -> tensor<2x2x4x2xf32> {
    ^bb0(%arg1: tensor<2x2x4x4xf32>):
      nn.yield %arg1 : tensor<2x2x4x4xf32>
    }
    %14 = nn.transpose %13 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x2x4x2xf32> -> tensor<2x4x2x2xf32>
    %15 = nn.reshape %14 : tensor<2x4x2x2xf32> to tensor<2x4x4xf32>
    %16 = dist.local_part %cst_3 to <@mesh, [["tp"]]> : tensor<8x8xf32> -> tensor<4x8xf32>
    %17 = nn.linear %15, %16 : (tensor<2x4x4xf32>, tensor<4x8xf32>) -> tensor<2x4x8xf32>
    %18 = dist.reshard %17 from <@mesh, [], partial = ["tp"]> to <@mesh, [[], ["tp"]]> : tensor<2x4x8xf32> -> tensor<2x2x8xf32>
    %19 = nn.add %18, %cst_4 : (tensor<2x2x8xf32>, tensor<8xf32>) -> tensor<2x2x8xf32>
    %20 = nn.add %0, %19 : (tensor<2x2x8xf32>, tensor<2x2x8xf32>) -> tensor<2x2x8xf32>
    %21 = nn.layer_norm %20, %cst_5, %cst_6 {axis = 2 : i64, epsilon = 9.99999974E-6 : f32} : (tensor<2x2x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x2x8xf32>
    %22 = dist.reshard %21 from <@mesh, [[], ["tp"]]> to <@mesh, []> : tensor<2x2x8xf32> -> tensor<2x4x8xf32>
    %23 = dist.local_part %cst_7 to <@mesh, [[], ["tp"]]> : tensor<8x32xf32> -> tensor<8x16xf32>
    %24 = dist.local_part %cst_8 to <@mesh, [["tp"]]> : tensor<32xf32> -> tensor<16xf32>
    %25 = nn.linear %22, %23, %24 : (tensor<2x4x8xf32>, tensor<8x16xf32>, tensor<16xf32>) -> tensor<2x4x16xf32>
    %26 = nn.gelu %25 : tensor<2x4x16xf32>
    %27 = dist.local_part %cst_9 to <@mesh, [["tp"]]> : tensor<32x8xf32> -> tensor<16x8xf32>
    %28 = nn.linear %26, %27 : (tensor<2x4x16xf32>, tensor<16x8xf32>) -> tensor<2x4x8xf32>
    %29 = dist.reshard %28 from <@mesh, [], partial = ["tp"]> to <@mesh, [[], ["tp"]]> : tensor<2x4x8xf32> -> tensor<2x2x8xf32>
    %30 = nn.add %29, %cst_10 : (tensor<2x2x8xf32>, tensor<8xf32>) -> tensor<2x2x8xf32>
    %31 = nn.add %20, %30 : (tensor<2x2x8xf32>, tensor<2x2x8xf32>) -> tensor<2x2x8xf32>
    %32 = dist.reshard %31 from <@mesh, [[], ["tp"]]> to <@mesh, []> : tensor<2x2x8xf32> -> tensor<2x4x8xf32>
    return %32 : tensor<2x4x8xf32>
  }
}


// -----

// A gather read only through a leading slice of its axis gathers just that
// part: 4 members of 4 rows keeping 10 rows contribute 4, 4, 2 and 0.
// CHECK-LABEL: func.func @gather_then_leading_slice
// CHECK: %[[G:.*]] = dist.all_gather %arg0 on @mesh mesh_axes = ["tp"] gather_axis = 0 sizes = [4, 4, 2, 0] root = 0 : tensor<4x8xf32> -> tensor<10x8xf32>
// CHECK-NOT: nn.slice
// CHECK: return %[[G]]
dist.mesh @mesh(shape = 4, axes = ["tp"])
func.func @gather_then_leading_slice(%x: tensor<4x8xf32>) -> tensor<10x8xf32> {
  %y = dist.reshard %x from <@mesh, [["tp"]]> to <@mesh, []> : tensor<4x8xf32> -> tensor<16x8xf32>
  %z = nn.slice %y {starts = array<i64: 0, 0>, steps = array<i64: 1, 1>} : tensor<16x8xf32> -> tensor<10x8xf32>
  return %z : tensor<10x8xf32>
}

// -----

// A slice that starts past 0, or that also cuts another axis, keeps the
// whole gather and the slice.
// CHECK-LABEL: func.func @gather_then_other_slices
// CHECK: dist.all_gather %arg0 on @mesh mesh_axes = ["tp"] gather_axis = 0 : tensor<4x8xf32> -> tensor<16x8xf32>
// CHECK: nn.slice
// CHECK: dist.all_gather %arg1 on @mesh mesh_axes = ["tp"] gather_axis = 0 : tensor<4x8xf32> -> tensor<16x8xf32>
// CHECK: nn.slice
dist.mesh @mesh(shape = 4, axes = ["tp"])
func.func @gather_then_other_slices(%x: tensor<4x8xf32>, %w: tensor<4x8xf32>) -> (tensor<10x8xf32>, tensor<10x4xf32>) {
  %y = dist.reshard %x from <@mesh, [["tp"]]> to <@mesh, []> : tensor<4x8xf32> -> tensor<16x8xf32>
  %z = nn.slice %y {starts = array<i64: 2, 0>, steps = array<i64: 1, 1>} : tensor<16x8xf32> -> tensor<10x8xf32>
  %v = dist.reshard %w from <@mesh, [["tp"]]> to <@mesh, []> : tensor<4x8xf32> -> tensor<16x8xf32>
  %u = nn.slice %v {starts = array<i64: 0, 0>, steps = array<i64: 1, 1>} : tensor<16x8xf32> -> tensor<10x4xf32>
  return %z, %u : tensor<10x8xf32>, tensor<10x4xf32>
}

// -----

// Only a gather whose every reader is the return goes to the output rank
// (member 0) alone; one that an op reads too, or that only an op reads,
// reaches every member.
// CHECK-LABEL: func.func @gather_to_the_output_rank
// CHECK: %[[A:.*]] = dist.all_gather %arg0 on @mesh mesh_axes = ["tp"] gather_axis = 0 root = 0 :
// CHECK: %[[B:.*]] = dist.all_gather %arg1 on @mesh mesh_axes = ["tp"] gather_axis = 0 :
// CHECK: %[[C:.*]] = dist.all_gather %arg2 on @mesh mesh_axes = ["tp"] gather_axis = 0 :
// CHECK: %[[D:.*]] = nn.add %[[B]], %[[C]]
// CHECK: return %[[A]], %[[A]], %[[B]], %[[D]]
dist.mesh @mesh(shape = 2, axes = ["tp"])
func.func @gather_to_the_output_rank(%x: tensor<2x8xf32>, %w: tensor<2x8xf32>, %v: tensor<2x8xf32>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %a = dist.reshard %x from <@mesh, [["tp"]]> to <@mesh, []> : tensor<2x8xf32> -> tensor<4x8xf32>
  %b = dist.reshard %w from <@mesh, [["tp"]]> to <@mesh, []> : tensor<2x8xf32> -> tensor<4x8xf32>
  %c = dist.reshard %v from <@mesh, [["tp"]]> to <@mesh, []> : tensor<2x8xf32> -> tensor<4x8xf32>
  %d = nn.add %b, %c : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  return %a, %a, %b, %d : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}
