// RUN: parc-opt %s --split-input-file --dist-expert-parallel="ep=2 etp=true" -verify-diagnostics | FileCheck %s

// --ep 2 with --etp over the 2 tensor-parallel ranks: the mesh gains a
// major "ep" axis (2 x 2 = 4 ranks; the tensor-parallel collectives keep
// their "tp" groups). Each weight is cut twice: experts over "ep" (4 -> 2),
// then inside each expert over "tp" (fc1/fc3 by columns 64 -> 32, fc2 by
// rows). Routing, permutation and both all_to_all_v run over "ep" (ranks
// with the same "tp" index); each expert computes a partial sum, so the
// combined share is all-reduced over "tp" before the shares are gathered.
// CHECK: dist.mesh @mesh(shape = 2x2, axes = ["ep", "tp"])
// CHECK-LABEL: func.func @main
// CHECK-DAG: %[[E1:.*]] = dist.local_part %{{.*}} to <@mesh, {{\[\[}}"ep"]]> : tensor<4x32x64xf32> -> tensor<2x32x64xf32>
// CHECK-DAG: %[[W1:.*]] = dist.local_part %[[E1]] to <@mesh, {{\[\[}}], [], ["tp"]]> : tensor<2x32x64xf32> -> tensor<2x32x32xf32>
// CHECK-DAG: %[[E2:.*]] = dist.local_part %{{.*}} to <@mesh, {{\[\[}}"ep"]]> : tensor<4x64x32xf32> -> tensor<2x64x32xf32>
// CHECK-DAG: %[[W2:.*]] = dist.local_part %[[E2]] to <@mesh, {{\[\[}}], ["tp"]]> : tensor<2x64x32xf32> -> tensor<2x32x32xf32>
// CHECK: dist.local_part %{{.*}} to <@mesh, {{\[\[}}"ep"]]> : tensor<16x32xf32> -> tensor<8x32xf32>
// CHECK: dist.all_gather %{{.*}} on @mesh mesh_axes = ["ep"] gather_axis = 0 : tensor<4xi64> -> tensor<8xi64>
// CHECK: dist.moe_permute {{.*}} on @mesh mesh_axes = ["ep"]
// CHECK: dist.all_to_all_v {{.*}} on @mesh mesh_axes = ["ep"] axis = 0 : tensor<16x32xf32>, tensor<2xi64>, tensor<2xi64> -> tensor<32x32xf32>
// CHECK: nn.moe_experts %{{.*}}, %{{.*}}, %[[W1]], %[[W2]] {dist.ffn_shards = 2 : i64} : (tensor<32x32xf32>, tensor<2x2xi64>, tensor<2x32x32xf32>, tensor<2x32x32xf32>) -> tensor<32x32xf32>
// CHECK: dist.all_to_all_v {{.*}} on @mesh mesh_axes = ["ep"]
// CHECK: %[[PART:.*]] = nn.moe_combine {{.*}} -> tensor<8x32xf32>
// CHECK: %[[SUM:.*]] = dist.all_reduce %[[PART]] on @mesh mesh_axes = ["tp"] : tensor<8x32xf32>
// CHECK: %[[Y:.*]] = dist.all_gather %[[SUM]] on @mesh mesh_axes = ["ep"] gather_axis = 0 : tensor<8x32xf32> -> tensor<16x32xf32>
// CHECK: return %[[Y]]
dist.mesh @mesh(shape = 2, axes = ["tp"])
func.func @main(%x: tensor<16x32xf32>, %l: tensor<16x4xf32>) -> tensor<16x32xf32> {
  %w1 = arith.constant dense<0.5> : tensor<4x32x64xf32>
  %w2 = arith.constant dense<0.25> : tensor<4x64x32xf32>
  %y = nn.moe %x, %l, %w1, %w2 {top_k = 2 : i64} : (tensor<16x32xf32>, tensor<16x4xf32>, tensor<4x32x64xf32>, tensor<4x64x32xf32>) -> tensor<16x32xf32>
  return %y : tensor<16x32xf32>
}

// -----

// Without the tensor-parallel mesh there is nothing to split experts over.
// expected-error @+1 {{ep with etp needs the 1-D tensor-parallel mesh of dist-annotate's tp}}
module {
  func.func @main(%x: tensor<16x32xf32>, %l: tensor<16x4xf32>) -> tensor<16x32xf32> {
    %w1 = arith.constant dense<0.5> : tensor<4x32x64xf32>
    %w2 = arith.constant dense<0.25> : tensor<4x64x32xf32>
    %y = nn.moe %x, %l, %w1, %w2 {top_k = 2 : i64} : (tensor<16x32xf32>, tensor<16x4xf32>, tensor<4x32x64xf32>, tensor<4x64x32xf32>) -> tensor<16x32xf32>
    return %y : tensor<16x32xf32>
  }
}

// -----

// The tensor-parallel axis may not take the name of the new one.
// expected-error @+1 {{the tensor-parallel axis cannot be named "ep"}}
dist.mesh @mesh(shape = 2, axes = ["ep"])
func.func @main(%x: tensor<16x32xf32>, %l: tensor<16x4xf32>) -> tensor<16x32xf32> {
  %w1 = arith.constant dense<0.5> : tensor<4x32x64xf32>
  %w2 = arith.constant dense<0.25> : tensor<4x64x32xf32>
  %y = nn.moe %x, %l, %w1, %w2 {top_k = 2 : i64} : (tensor<16x32xf32>, tensor<16x4xf32>, tensor<4x32x64xf32>, tensor<4x64x32xf32>) -> tensor<16x32xf32>
  return %y : tensor<16x32xf32>
}

// -----

// An ffn of 30 does not split over 4 tensor-parallel ranks.
dist.mesh @mesh(shape = 4, axes = ["tp"])
func.func @main(%x: tensor<16x32xf32>, %l: tensor<16x4xf32>) -> tensor<16x32xf32> {
  %w1 = arith.constant dense<0.5> : tensor<4x32x30xf32>
  %w2 = arith.constant dense<0.25> : tensor<4x30x32xf32>
  // expected-error @+1 {{'nn.moe': option 'tp=4' does not fit this model: the experts' ffn of 30 does not divide}}
  %y = nn.moe %x, %l, %w1, %w2 {top_k = 2 : i64} : (tensor<16x32xf32>, tensor<16x4xf32>, tensor<4x32x30xf32>, tensor<4x30x32xf32>) -> tensor<16x32xf32>
  return %y : tensor<16x32xf32>
}
