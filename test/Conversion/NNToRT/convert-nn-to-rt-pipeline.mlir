// RUN: parc-opt %s --split-input-file --convert-nn-to-rt | FileCheck %s

// A pipeline stage: started receives and sends are rt.start calls whose
// request rt.wait completes (the memory plan keeps their buffers alive
// until then); the received buffer is the wait's result. The pipeline
// shape moves to the module for code generation, like the mesh.
// CHECK: module attributes {rt.mesh = {axes = ["pp", "tp"], shape = array<i64: 2, 1>, sym_name = "mesh"}, rt.pipeline = {micro_batches = 1 : i64, stage = 1 : i64, stages = 2 : i64}}
// CHECK-LABEL: func.func @main()
// CHECK: %[[R:.*]] = rt.alloc : memref<2x8xf32>
// CHECK-NEXT: %[[Q0:.*]] = rt.start "recv" outs(%[[R]] : memref<2x8xf32>) {mesh = @mesh, mesh_axes = ["pp"], peer = 0 : i64}
// CHECK-NEXT: rt.wait %[[Q0]]
// CHECK: rt.kernel "gelu" ins(%[[R]] : memref<2x8xf32>) outs(%[[G:.*]] : memref<2x8xf32>)
// CHECK-NEXT: %[[Q1:.*]] = rt.start "send" ins(%[[G]] : memref<2x8xf32>) {mesh = @mesh, mesh_axes = ["pp"], peer = 1 : i64}
// CHECK-NEXT: rt.wait %[[Q1]]
module attributes {dist.pipeline = {micro_batches = 1 : i64, stage = 1 : i64, stages = 2 : i64}} {
  dist.mesh @mesh(shape = 2x1, axes = ["pp", "tp"])
  func.func @main() {
    %a = dist.recv_start on @mesh mesh_axes = ["pp"] peer = 0 : !dist.async<tensor<2x8xf32>>
    %x = dist.wait %a : !dist.async<tensor<2x8xf32>>
    %g = nn.gelu %x : tensor<2x8xf32>
    %t = dist.send_start %g on @mesh mesh_axes = ["pp"] peer = 1 : tensor<2x8xf32> -> !dist.async
    dist.wait %t : !dist.async
    return
  }
}

// -----

// Blocking forms: kernels.
// CHECK-LABEL: func.func @main()
// CHECK: %[[R:.*]] = rt.alloc : memref<4xf32>
// CHECK-NEXT: rt.kernel "recv" outs(%[[R]] : memref<4xf32>) {mesh = @mesh, mesh_axes = ["pp"], peer = 0 : i64}
// CHECK-NEXT: rt.kernel "send" ins(%[[R]] : memref<4xf32>) {mesh = @mesh, mesh_axes = ["pp"], peer = 2 : i64}
module {
  dist.mesh @mesh(shape = 3, axes = ["pp"])
  func.func @main() {
    %x = dist.recv on @mesh mesh_axes = ["pp"] peer = 0 : tensor<4xf32>
    dist.send %x on @mesh mesh_axes = ["pp"] peer = 2 : tensor<4xf32>
    return
  }
}
