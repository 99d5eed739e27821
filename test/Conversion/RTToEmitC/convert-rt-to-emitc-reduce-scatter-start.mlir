// RUN: parc-opt %s --parc-lower-to-rt --convert-rt-to-emitc | parc-translate --mlir-to-cpp | FileCheck %s

// A started reduce-scatter of [4, 8] over 2 ranks calls the runtime's
// _start form with the block each rank keeps (2·8 = 16 elements) and a
// request it later waits on.
// CHECK: parc_rt_reduce_scatter_start({{v[0-9]+}}, {{v[0-9]+}}, {{v[0-9]+}}, 16, PARC_RT_F32, PARC_RT_REDUCE_SUM, {{v[0-9]+}});
// CHECK: parc_rt_wait(
module {
  dist.mesh @mesh(shape = 2, axes = ["tp"])
  func.func @main(%x: tensor<4x8xf32>) -> (tensor<2x8xf32>, tensor<4x8xf32>) {
    %t = dist.reduce_scatter_start %x on @mesh mesh_axes = ["tp"] scatter_axis = 0 : tensor<4x8xf32> -> !dist.async<tensor<2x8xf32>>
    %r = nn.relu %x : tensor<4x8xf32>
    %s = dist.wait %t : !dist.async<tensor<2x8xf32>>
    return %s, %r : tensor<2x8xf32>, tensor<4x8xf32>
  }
}
