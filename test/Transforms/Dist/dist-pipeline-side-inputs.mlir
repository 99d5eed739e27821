// RUN: parc-opt %s --split-input-file --dist-pipeline="pp=2 async=false" | FileCheck %s

// Without a fused attention, layers are found on the dataflow: a mask that
// every layer reads unchanged (its readers are one op at one operand, each
// after the one before) is a side input, not a second hidden state. The
// layers are still cut where only the hidden state and the mask are live,
// and stage 1 receives both.
// CHECK-LABEL: func.func @main
// CHECK-SAME: dist.pp_layout = array<i64: 1, 1>
// CHECK: %[[M:.*]] = nn.mul %arg1, %arg1 {dist.stage = 0 : i64}
// CHECK-NEXT: dist.send %[[M]] on @mesh mesh_axes = ["pp"] peer = 1 {dist.stage = 0 : i64} : tensor<4x8xf32>
// CHECK: nn.linear {{.*}}dist.stage = 0
// CHECK: %[[H0:.*]] = nn.gelu {{.*}}dist.stage = 0
// CHECK-NEXT: dist.send %[[H0]] on @mesh mesh_axes = ["pp"] peer = 1 {dist.stage = 0 : i64} : tensor<4x8xf32>
// CHECK-NEXT: %[[M1:.*]] = dist.recv on @mesh mesh_axes = ["pp"] peer = 0 {dist.stage = 1 : i64} : tensor<4x8xf32>
// CHECK-NEXT: %[[X1:.*]] = dist.recv on @mesh mesh_axes = ["pp"] peer = 0 {dist.stage = 1 : i64} : tensor<4x8xf32>
// CHECK-NEXT: %[[L1:.*]] = nn.linear %[[X1]], {{.*}}dist.stage = 1
// CHECK-NEXT: nn.add %[[L1]], %[[M1]] {dist.stage = 1 : i64}
func.func @main(%x: tensor<4x8xf32>, %mask: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %w0 = arith.constant dense<0.5> : tensor<8x8xf32>
  %w1 = arith.constant dense<0.25> : tensor<8x8xf32>
  %m = nn.mul %mask, %mask : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %l0 = nn.linear %x, %w0 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %a0 = nn.add %l0, %m : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %h0 = nn.gelu %a0 : tensor<4x8xf32>
  %l1 = nn.linear %h0, %w1 : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %a1 = nn.add %l1, %m : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %h1 = nn.gelu %a1 : tensor<4x8xf32>
  return %h1 : tensor<4x8xf32>
}
