// RUN: parc-opt %s --convert-nn-to-rt | FileCheck %s
// RUN: parc-opt %s --pass-pipeline='builtin.module(convert-nn-to-rt, func.func(rt-plan-memory), convert-rt-to-emitc)' | parc-translate --mlir-to-cpp | FileCheck %s --check-prefix=CPP

// dist.all_to_all on 2 ranks. The runtime sends block j of the leading dim
// to rank j and stacks block i from rank i. Split on dim 1 of [4, 6], joined
// on dim 0: block j is x[:, 3j:3j+3], so x goes to [6, 4] and is viewed as
// [2 ranks, 3, 4]; each arrived [3, 4] block is transposed back to [4, 3]
// and the two are stacked on dim 0: [8, 3]. 12 elements per rank.
// CHECK-LABEL: func.func @main()
// CHECK: %[[X:.*]] = rt.input 0 "input_0" : memref<4x6xf32>
// CHECK: rt.kernel "transpose" ins(%[[X]] : memref<4x6xf32>) outs(%[[T:.*]] : memref<6x4xf32>) {perm = array<i64: 1, 0>}
// CHECK: %[[SEND:.*]] = rt.view %[[T]] : memref<6x4xf32> to memref<2x3x4xf32>
// CHECK: rt.kernel "all_to_all" ins(%[[SEND]] : memref<2x3x4xf32>) outs(%[[RECV:.*]] : memref<2x3x4xf32>) {concat_axis = 0 : i64, mesh = @mesh, mesh_axes = ["tp"], split_axis = 1 : i64}
// CHECK: rt.kernel "transpose" ins(%[[RECV]] : memref<2x3x4xf32>) outs(%[[BACK:.*]] : memref<2x4x3xf32>) {perm = array<i64: 0, 2, 1>}
// CHECK: %[[Y:.*]] = rt.view %[[BACK]] : memref<2x4x3xf32> to memref<8x3xf32>
// Split and joined on the leading dim: views only, and the started form
// waits before its result is read.
// CHECK: %[[SEND0:.*]] = rt.view %[[X]] : memref<4x6xf32> to memref<2x2x6xf32>
// CHECK: %[[REQ:.*]] = rt.start "all_to_all" ins(%[[SEND0]] : memref<2x2x6xf32>) outs(%[[RECV0:.*]] : memref<2x2x6xf32>)
// CHECK: rt.wait %[[REQ]]
// CHECK: %[[Z:.*]] = rt.view %[[RECV0]] : memref<2x2x6xf32> to memref<4x6xf32>
// CHECK: rt.output 0 "output_0", %[[Y]] : memref<8x3xf32>
// CHECK: rt.output 1 "output_1", %[[Z]] : memref<4x6xf32>

// CPP: parc_rt_all_to_all({{v[0-9]+}}, {{v[0-9]+}}, {{v[0-9]+}}, 12, PARC_RT_F32);
// CPP: parc_rt_all_to_all_start({{v[0-9]+}}, {{v[0-9]+}}, {{v[0-9]+}}, 12, PARC_RT_F32, {{v[0-9]+}});
dist.mesh @mesh(shape = 2, axes = ["tp"])
func.func @main(%x: tensor<4x6xf32>) -> (tensor<8x3xf32>, tensor<4x6xf32>) {
  %y = dist.all_to_all %x on @mesh mesh_axes = ["tp"] split_axis = 1 concat_axis = 0 : tensor<4x6xf32> -> tensor<8x3xf32>
  %a = dist.all_to_all_start %x on @mesh mesh_axes = ["tp"] split_axis = 0 concat_axis = 0 : tensor<4x6xf32> -> !dist.async<tensor<4x6xf32>>
  %z = dist.wait %a : !dist.async<tensor<4x6xf32>>
  return %y, %z : tensor<8x3xf32>, tensor<4x6xf32>
}
