// RUN: parc-opt %s --dist-pipeline="pp=3 async=false" | FileCheck %s

// A value used on several later stages is sent to each of them directly
// (the "mask" %m, computed on stage 0 and read by every layer, goes to
// stages 1 and 2), and tensor-parallel collectives keep their group: the
// tp mesh gets a leading pp axis.
// CHECK-LABEL: dist.mesh @mesh(shape = 3x2, axes = ["pp", "tp"])
// CHECK: func.func @main
// CHECK-SAME: dist.pp_layout = array<i64: 1, 1, 1>
// CHECK: %[[M:.*]] = nn.mul %arg0, %arg0 {dist.stage = 0 : i64}
// CHECK-NEXT: dist.send %[[M]] on @mesh mesh_axes = ["pp"] peer = 1 {dist.stage = 0 : i64} : tensor<1x1x4x4xf32>
// CHECK-NEXT: dist.send %[[M]] on @mesh mesh_axes = ["pp"] peer = 2 {dist.stage = 0 : i64} : tensor<1x1x4x4xf32>
// CHECK: dist.all_reduce %{{.*}} on @mesh mesh_axes = ["tp"] {dist.stage = 0 : i64}
// CHECK: %[[H0:.*]] = nn.add {{.*}}dist.stage = 0
// CHECK-NEXT: dist.send %[[H0]] on @mesh mesh_axes = ["pp"] peer = 1 {dist.stage = 0 : i64}
// CHECK-NEXT: %[[M1:.*]] = dist.recv on @mesh mesh_axes = ["pp"] peer = 0 {dist.stage = 1 : i64} : tensor<1x1x4x4xf32>
// CHECK-NEXT: %[[X1:.*]] = dist.recv on @mesh mesh_axes = ["pp"] peer = 0 {dist.stage = 1 : i64} : tensor<1x2x4x8xf32>
// CHECK-NEXT: nn.attention %[[X1]], %[[X1]], %[[X1]] mask(%[[M1]] : tensor<1x1x4x4xf32>) {dist.stage = 1 : i64
// CHECK: dist.all_reduce %{{.*}} on @mesh mesh_axes = ["tp"] {dist.stage = 1 : i64}
// CHECK: %[[H1:.*]] = nn.add {{.*}}dist.stage = 1
// CHECK-NEXT: dist.send %[[H1]] on @mesh mesh_axes = ["pp"] peer = 2 {dist.stage = 1 : i64}
// CHECK-NEXT: %[[M2:.*]] = dist.recv on @mesh mesh_axes = ["pp"] peer = 0 {dist.stage = 2 : i64} : tensor<1x1x4x4xf32>
// CHECK-NEXT: %[[X2:.*]] = dist.recv on @mesh mesh_axes = ["pp"] peer = 1 {dist.stage = 2 : i64} : tensor<1x2x4x8xf32>
// CHECK-NEXT: nn.attention %[[X2]], %[[X2]], %[[X2]] mask(%[[M2]] : tensor<1x1x4x4xf32>) {dist.stage = 2 : i64
// CHECK: dist.all_reduce %{{.*}} on @mesh mesh_axes = ["tp"] {dist.stage = 2 : i64}
dist.mesh @mesh(shape = 2, axes = ["tp"])
func.func @main(%mask: tensor<1x1x4x4xf32>, %x: tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  %m = nn.mul %mask, %mask : (tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x1x4x4xf32>
  %a0 = nn.attention %x, %x, %x mask(%m : tensor<1x1x4x4xf32>) {scale = 0.125 : f32} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  ^bb0(%s: tensor<1x2x4x4xf32>, %mm: tensor<1x1x4x4xf32>):
    %r = nn.add %s, %mm : (tensor<1x2x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x2x4x4xf32>
    nn.yield %r : tensor<1x2x4x4xf32>
  }
  %s0 = dist.all_reduce %a0 on @mesh mesh_axes = ["tp"] : tensor<1x2x4x8xf32>
  %h0 = nn.add %x, %s0 : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  %a1 = nn.attention %h0, %h0, %h0 mask(%m : tensor<1x1x4x4xf32>) {scale = 0.125 : f32} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  ^bb0(%s: tensor<1x2x4x4xf32>, %mm: tensor<1x1x4x4xf32>):
    %r = nn.add %s, %mm : (tensor<1x2x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x2x4x4xf32>
    nn.yield %r : tensor<1x2x4x4xf32>
  }
  %s1 = dist.all_reduce %a1 on @mesh mesh_axes = ["tp"] : tensor<1x2x4x8xf32>
  %h1 = nn.add %h0, %s1 : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  %a2 = nn.attention %h1, %h1, %h1 mask(%m : tensor<1x1x4x4xf32>) {scale = 0.125 : f32} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  ^bb0(%s: tensor<1x2x4x4xf32>, %mm: tensor<1x1x4x4xf32>):
    %r = nn.add %s, %mm : (tensor<1x2x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x2x4x4xf32>
    nn.yield %r : tensor<1x2x4x4xf32>
  }
  %s2 = dist.all_reduce %a2 on @mesh mesh_axes = ["tp"] : tensor<1x2x4x8xf32>
  %h2 = nn.add %h1, %s2 : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  return %h2 : tensor<1x2x4x8xf32>
}
