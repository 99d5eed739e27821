// RUN: parc-opt %s --split-input-file --dist-expert-parallel="ep=1 etp=true" -verify-diagnostics | FileCheck %s
// RUN: parc-opt %s --split-input-file --dist-expert-parallel="ep=1 etp=true capacity-factor=2.0" -verify-diagnostics | FileCheck %s --check-prefix=CAP

// Expert tensor parallelism over the 2 tp ranks: fc1 and fc3 split by
// columns (ffn 64 -> 32), fc2 by rows, and the partial output all-reduced.
// CHECK-LABEL: func.func @main
// CHECK-DAG: %[[W1:.*]] = dist.local_part %{{.*}} to <@mesh, {{\[\[}}], [], ["tp"]]> : tensor<4x32x64xf32> -> tensor<4x32x32xf32>
// CHECK-DAG: %[[W2:.*]] = dist.local_part %{{.*}} to <@mesh, {{\[\[}}], ["tp"]]> : tensor<4x64x32xf32> -> tensor<4x32x32xf32>
// CHECK-DAG: %[[W3:.*]] = dist.local_part %{{.*}} to <@mesh, {{\[\[}}], [], ["tp"]]> : tensor<4x32x64xf32> -> tensor<4x32x32xf32>
// CHECK: %[[P:.*]] = nn.moe %{{.*}}, %{{.*}}, %[[W1]], %[[W2]], %[[W3]] {dist.ffn_shards = 2 : i64, top_k = 2 : i64}
// CHECK: %[[S:.*]] = dist.all_reduce %[[P]] on @mesh mesh_axes = ["tp"]
// CHECK: return %[[S]]
// The capacity applies with etp too: ceil(2.0 * 16 tokens * 2 / 4) = 16.
// CAP: nn.moe {{.*}}capacity = 16 : i64
dist.mesh @mesh(shape = 2, axes = ["tp"])
func.func @main(%x: tensor<16x32xf32>, %l: tensor<16x4xf32>) -> tensor<16x32xf32> {
  %w1 = arith.constant dense<0.5> : tensor<4x32x64xf32>
  %w2 = arith.constant dense<0.25> : tensor<4x64x32xf32>
  %w3 = arith.constant dense<0.125> : tensor<4x32x64xf32>
  %y = nn.moe %x, %l, %w1, %w2, %w3 {top_k = 2 : i64} : (tensor<16x32xf32>, tensor<16x4xf32>, tensor<4x32x64xf32>, tensor<4x64x32xf32>, tensor<4x32x64xf32>) -> tensor<16x32xf32>
  return %y : tensor<16x32xf32>
}

// -----

// No tensor-parallel mesh to split over.
// expected-error @+1 {{expert tensor parallelism (etp) splits experts over the tensor-parallel ranks: it needs the mesh of dist-annotate with tp > 1}}
module {
  func.func @main(%x: tensor<16x32xf32>, %l: tensor<16x4xf32>) -> tensor<16x32xf32> {
    %w1 = arith.constant dense<0.5> : tensor<4x32x64xf32>
    %w2 = arith.constant dense<0.25> : tensor<4x64x32xf32>
    %y = nn.moe %x, %l, %w1, %w2 {top_k = 2 : i64} : (tensor<16x32xf32>, tensor<16x4xf32>, tensor<4x32x64xf32>, tensor<4x64x32xf32>) -> tensor<16x32xf32>
    return %y : tensor<16x32xf32>
  }
}

// -----

// An ffn of 30 does not split over 4 ranks.
dist.mesh @mesh(shape = 4, axes = ["tp"])
func.func @main(%x: tensor<16x32xf32>, %l: tensor<16x4xf32>) -> tensor<16x32xf32> {
  %w1 = arith.constant dense<0.5> : tensor<4x32x30xf32>
  %w2 = arith.constant dense<0.25> : tensor<4x30x32xf32>
  // expected-error @+1 {{'nn.moe': option 'tp=4' does not fit this model: the experts' ffn of 30 does not divide}}
  %y = nn.moe %x, %l, %w1, %w2 {top_k = 2 : i64} : (tensor<16x32xf32>, tensor<16x4xf32>, tensor<4x32x30xf32>, tensor<4x30x32xf32>) -> tensor<16x32xf32>
  return %y : tensor<16x32xf32>
}
