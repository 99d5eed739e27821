// RUN: parc-opt %s --dist-extract-stage=stage=0 | FileCheck %s --check-prefix=S0
// RUN: parc-opt %s --dist-extract-stage=stage=1 | FileCheck %s --check-prefix=S1
// RUN: sed 's/@main/@forward/' %s | parc-opt --dist-extract-stage=stage=1 | FileCheck %s --check-prefix=NAMED
// NAMED: func.func @forward(%arg0: tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>

// Input: dist-pipeline's output for two one-layer stages and two
// micro-batches. Each stage keeps its own ops and the constants they read;
// the inputs stay on every stage, the outputs only on the last.
// S0: module attributes {dist.pipeline = {micro_batches = 2 : i64, stage = 0 : i64, stages = 2 : i64, virtual_stages = 1 : i64}}
// S0: dist.mesh @mesh(shape = 2x1, axes = ["pp", "tp"])
// S0: func.func @main(%arg0: tensor<2x2x4x8xf32>) attributes
// S0-NOT: arith.constant
// S0: %[[X0:.*]] = nn.slice %arg0 {dist.stage = 0 : i64, starts = array<i64: 0, 0, 0, 0>
// S0: %[[T0:.*]] = dist.send_start
// S0: %[[T1:.*]] = dist.send_start
// S0-NEXT: dist.wait %[[T0]]
// S0-NEXT: dist.wait %[[T1]]
// S0-NEXT: return{{$}}
// S0-NOT: dist.stage = 1

// S1: module attributes {dist.pipeline = {micro_batches = 2 : i64, stage = 1 : i64, stages = 2 : i64, virtual_stages = 1 : i64}}
// S1: func.func @main(%arg0: tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32>
// S1-NEXT: %[[C:.*]] = arith.constant dense<1.000000e+00>
// S1-NEXT: %[[R0:.*]] = dist.recv_start on @mesh mesh_axes = ["pp"] peer = 0 {dist.stage = 1 : i64}
// S1-NEXT: %[[R1:.*]] = dist.recv_start
// S1-NEXT: %[[V0:.*]] = dist.wait %[[R0]]
// S1: nn.add %[[V0]], %[[C]]
// S1: %[[Y:.*]] = nn.concat
// S1-NEXT: return %[[Y]] : tensor<2x2x4x8xf32>
// S1-NOT: dist.stage = 0
dist.mesh @mesh(shape = 2x1, axes = ["pp", "tp"])
func.func @main(%arg0: tensor<2x2x4x8xf32>) -> tensor<2x2x4x8xf32> attributes {dist.micro_batches = 2 : i64, dist.pp_layout = array<i64: 1, 1>} {
  %cst = arith.constant dense<1.000000e+00> : tensor<1x2x4x8xf32>
  %0 = nn.slice %arg0 {dist.stage = 0 : i64, starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 1, 1>} : tensor<2x2x4x8xf32> -> tensor<1x2x4x8xf32>
  %1 = nn.attention %0, %0, %0 {dist.stage = 0 : i64, scale = 1.250000e-01 : f32} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  ^bb0(%arg1: tensor<1x2x4x4xf32>):
    nn.yield %arg1 : tensor<1x2x4x4xf32>
  }
  %2 = nn.add %0, %1 {dist.stage = 0 : i64} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  %3 = dist.send_start %2 on @mesh mesh_axes = ["pp"] peer = 1 {dist.stage = 0 : i64} : tensor<1x2x4x8xf32> -> !dist.async
  %4 = nn.slice %arg0 {dist.stage = 0 : i64, starts = array<i64: 1, 0, 0, 0>, steps = array<i64: 1, 1, 1, 1>} : tensor<2x2x4x8xf32> -> tensor<1x2x4x8xf32>
  %5 = nn.attention %4, %4, %4 {dist.stage = 0 : i64, scale = 1.250000e-01 : f32} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  ^bb0(%arg1: tensor<1x2x4x4xf32>):
    nn.yield %arg1 : tensor<1x2x4x4xf32>
  }
  %6 = nn.add %4, %5 {dist.stage = 0 : i64} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  %7 = dist.send_start %6 on @mesh mesh_axes = ["pp"] peer = 1 {dist.stage = 0 : i64} : tensor<1x2x4x8xf32> -> !dist.async
  dist.wait %3 {dist.stage = 0 : i64} : !dist.async
  dist.wait %7 {dist.stage = 0 : i64} : !dist.async
  %8 = dist.recv_start on @mesh mesh_axes = ["pp"] peer = 0 {dist.stage = 1 : i64} : !dist.async<tensor<1x2x4x8xf32>>
  %9 = dist.recv_start on @mesh mesh_axes = ["pp"] peer = 0 {dist.stage = 1 : i64} : !dist.async<tensor<1x2x4x8xf32>>
  %10 = dist.wait %8 {dist.stage = 1 : i64} : !dist.async<tensor<1x2x4x8xf32>>
  %11 = nn.attention %10, %10, %10 {dist.stage = 1 : i64, scale = 1.250000e-01 : f32} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  ^bb0(%arg1: tensor<1x2x4x4xf32>):
    nn.yield %arg1 : tensor<1x2x4x4xf32>
  }
  %12 = nn.add %10, %cst {dist.stage = 1 : i64} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  %13 = dist.wait %9 {dist.stage = 1 : i64} : !dist.async<tensor<1x2x4x8xf32>>
  %14 = nn.attention %13, %13, %13 {dist.stage = 1 : i64, scale = 1.250000e-01 : f32} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  ^bb0(%arg1: tensor<1x2x4x4xf32>):
    nn.yield %arg1 : tensor<1x2x4x4xf32>
  }
  %15 = nn.add %13, %14 {dist.stage = 1 : i64} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  %16 = nn.concat %12, %15 {axis = 0 : i64, dist.stage = 1 : i64} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<2x2x4x8xf32>
  return %16 : tensor<2x2x4x8xf32>
}
