// RUN: parc-opt %s --dist-pipeline="pp=2 async=false" | FileCheck %s

// --ep 2 --etp --tp 2 under --pp 2: the 2-D ["ep", "tp"] mesh of
// dist-expert-parallel gets the leading pp axis (2 x 2 x 2 = 8 ranks), each
// stage is one such 2-D group, and the collectives over "tp" (the experts'
// ffn shards) and over "ep" (the experts' groups) keep their groups; the
// stages talk over "pp" (ranks with the same ep and tp index).
// CHECK-LABEL: dist.mesh @mesh(shape = 2x2x2, axes = ["pp", "ep", "tp"])
// CHECK: dist.all_reduce %{{.*}} on @mesh mesh_axes = ["tp"] {dist.stage = 0 : i64}
// CHECK: dist.all_reduce %{{.*}} on @mesh mesh_axes = ["ep"] {dist.stage = 0 : i64}
// CHECK: dist.send %{{.*}} on @mesh mesh_axes = ["pp"] peer = 1 {dist.stage = 0 : i64}
// CHECK: dist.recv on @mesh mesh_axes = ["pp"] peer = 0 {dist.stage = 1 : i64}
// CHECK: dist.all_reduce %{{.*}} on @mesh mesh_axes = ["tp"] {dist.stage = 1 : i64}
// CHECK: dist.all_reduce %{{.*}} on @mesh mesh_axes = ["ep"] {dist.stage = 1 : i64}
dist.mesh @mesh(shape = 2x2, axes = ["ep", "tp"])
func.func @main(%x: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %a0 = nn.attention %x, %x, %x {scale = 0.125 : f32} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  ^bb0(%s: tensor<1x2x4x4xf32>):
    nn.yield %s : tensor<1x2x4x4xf32>
  }
  %s0 = dist.all_reduce %a0 on @mesh mesh_axes = ["tp"] : tensor<1x2x4x8xf32>
  %e0 = dist.all_reduce %s0 on @mesh mesh_axes = ["ep"] : tensor<1x2x4x8xf32>
  %h0 = nn.add %x, %e0 : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  %a1 = nn.attention %h0, %h0, %h0 {scale = 0.125 : f32} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  ^bb0(%s: tensor<1x2x4x4xf32>):
    nn.yield %s : tensor<1x2x4x4xf32>
  }
  %s1 = dist.all_reduce %a1 on @mesh mesh_axes = ["tp"] : tensor<1x2x4x8xf32>
  %e1 = dist.all_reduce %s1 on @mesh mesh_axes = ["ep"] : tensor<1x2x4x8xf32>
  %h1 = nn.add %h0, %e1 : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %h1 : tensor<1x2x4x8xf32>
}
