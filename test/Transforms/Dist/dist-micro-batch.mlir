// RUN: parc-opt %s --split-input-file --dist-micro-batch=micro-batches=2 | FileCheck %s
// RUN: parc-opt %s --split-input-file --dist-micro-batch=micro-batches=1 | FileCheck %s --check-prefix=ONE

// A partitioned program imported for one micro-batch of 2 rows becomes the
// program of the batch of 4: the input sliced into rows 0-1 and 2-3, the
// product and its all-reduce cloned per micro-batch and tagged with it, the
// weight and its rank part kept once, the outputs stacked on dim 0.
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:.*]]: tensor<4x16xf32> {onnx.name = "x"}) -> (tensor<4x8xf32> {onnx.name = "y"})
// CHECK-SAME: dist.micro_batches = 2
// CHECK: %[[W:.*]] = arith.constant
// CHECK-NEXT: %[[WP:.*]] = dist.local_part %[[W]]
// CHECK-NEXT: %[[X0:.*]] = nn.slice %[[X]] {dist.micro_batch = 0 : i64, starts = array<i64: 0, 0>, steps = array<i64: 1, 1>} : tensor<4x16xf32> -> tensor<2x16xf32>
// CHECK-NEXT: %[[P0:.*]] = nn.linear %[[X0]], %[[WP]] {dist.micro_batch = 0 : i64}
// CHECK-NEXT: %[[R0:.*]] = dist.all_reduce %[[P0]] on @mesh mesh_axes = ["tp"] {dist.micro_batch = 0 : i64}
// CHECK-NEXT: %[[X1:.*]] = nn.slice %[[X]] {dist.micro_batch = 1 : i64, starts = array<i64: 2, 0>, steps = array<i64: 1, 1>} : tensor<4x16xf32> -> tensor<2x16xf32>
// CHECK-NEXT: %[[P1:.*]] = nn.linear %[[X1]], %[[WP]] {dist.micro_batch = 1 : i64}
// CHECK-NEXT: %[[R1:.*]] = dist.all_reduce %[[P1]] on @mesh mesh_axes = ["tp"] {dist.micro_batch = 1 : i64}
// CHECK-NEXT: %[[Y:.*]] = nn.concat %[[R0]], %[[R1]] {axis = 0 : i64} : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<4x8xf32>
// CHECK-NEXT: return %[[Y]]
// One micro-batch: nothing changes.
// ONE-LABEL: func.func @main
// ONE-SAME: (%{{.*}}: tensor<2x16xf32>
// ONE-NOT: dist.micro_batch
module {
  dist.mesh @mesh(shape = 2, axes = ["tp"])
  func.func @main(%x: tensor<2x16xf32> {onnx.name = "x"}) -> (tensor<2x8xf32> {onnx.name = "y"}) {
    %w = arith.constant dense<0.5> : tensor<16x16xf32>
    %wp = dist.local_part %w to <@mesh, [[], ["tp"]]> : tensor<16x16xf32> -> tensor<16x8xf32>
    %p = nn.linear %x, %wp : (tensor<2x16xf32>, tensor<16x8xf32>) -> tensor<2x8xf32>
    %r = dist.all_reduce %p on @mesh mesh_axes = ["tp"] : tensor<2x8xf32>
    return %r : tensor<2x8xf32>
  }
}
