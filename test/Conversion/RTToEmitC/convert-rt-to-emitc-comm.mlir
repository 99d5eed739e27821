// RUN: parc-opt %s --parc-lower-to-rt --convert-rt-to-emitc | parc-translate --mlir-to-cpp | FileCheck %s

// Collectives run on the communicator of their mesh axes (bit 0: "tp") with
// per-rank element counts:
// an all-reduce its whole input (2·8 = 16), a reduce-scatter and a local
// chunk the block each rank keeps (2·8 / 2 = 8), an all-gather its own
// part as rows of the gathered axis: along axis 0 one row of 8, along axis 1
// of a 2x3x4 part 2 rows (the dims before the axis) of 3·4 = 12, and an
// uneven one (sizes [3, 1]) keeps per row 3·4 and 1·4 of them; each to
// every rank (-1) but the last, to member 0 (root = 0).
// CHECK: static const int64_t [[TAKES:parc_dims_[0-9]+]][2] = {12, 4};
// CHECK: parc_rt_comm_t* [[C1:v[0-9]+]] = parc_rt_mesh_comm({{v[0-9]+}}, 1);
// CHECK: parc_rt_all_reduce([[C1]], {{v[0-9]+}}, {{v[0-9]+}}, 16, PARC_RT_F32, PARC_RT_REDUCE_SUM);
// CHECK: parc_rt_comm_t* [[C2:v[0-9]+]] = parc_rt_mesh_comm({{v[0-9]+}}, 1);
// CHECK: parc_rt_reduce_scatter([[C2]], {{v[0-9]+}}, {{v[0-9]+}}, 8, PARC_RT_F32, PARC_RT_REDUCE_SUM);
// CHECK: parc_rt_comm_t* [[C3:v[0-9]+]] = parc_rt_mesh_comm({{v[0-9]+}}, 1);
// CHECK: parc_rt_local_chunk([[C3]], {{v[0-9]+}}, {{v[0-9]+}}, 8, PARC_RT_F32);
// CHECK: parc_rt_all_gather_rows({{v[0-9]+}}, {{v[0-9]+}}, {{v[0-9]+}}, 1, 8, nullptr, -1, PARC_RT_F32);
// CHECK: parc_rt_all_gather_rows({{v[0-9]+}}, {{v[0-9]+}}, {{v[0-9]+}}, 2, 12, nullptr, -1, PARC_RT_F32);
// CHECK: parc_rt_all_gather_rows({{v[0-9]+}}, {{v[0-9]+}}, {{v[0-9]+}}, 2, 12, [[TAKES]], 0, PARC_RT_F32);
module {
  dist.mesh @mesh(shape = 2, axes = ["tp"])
  func.func @main(%x: tensor<2x8xf32>, %y: tensor<2x3x4xf32>) -> (tensor<4x8xf32>, tensor<2x6x4xf32>, tensor<2x4x4xf32>) {
    %r = dist.all_reduce %x on @mesh mesh_axes = ["tp"] : tensor<2x8xf32>
    %s = dist.reduce_scatter %r on @mesh mesh_axes = ["tp"] scatter_axis = 0 : tensor<2x8xf32> -> tensor<1x8xf32>
    %p = dist.local_part %r to <@mesh, [["tp"]]> : tensor<2x8xf32> -> tensor<1x8xf32>
    %a = nn.add %s, %p : (tensor<1x8xf32>, tensor<1x8xf32>) -> tensor<1x8xf32>
    %g = dist.all_gather %a on @mesh mesh_axes = ["tp"] gather_axis = 0 : tensor<1x8xf32> -> tensor<2x8xf32>
    %c = nn.concat %g, %g {axis = 0 : i64} : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<4x8xf32>
    %h = dist.all_gather %y on @mesh mesh_axes = ["tp"] gather_axis = 1 : tensor<2x3x4xf32> -> tensor<2x6x4xf32>
    %u = dist.all_gather %y on @mesh mesh_axes = ["tp"] gather_axis = 1 sizes = [3, 1] root = 0 : tensor<2x3x4xf32> -> tensor<2x4x4xf32>
    return %c, %h, %u : tensor<4x8xf32>, tensor<2x6x4xf32>, tensor<2x4x4xf32>
  }
}
