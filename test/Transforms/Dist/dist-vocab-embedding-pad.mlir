// RUN: parc-opt %s --split-input-file --dist-annotate=tp=4 | FileCheck %s --check-prefix=ANNOTATE
// RUN: parc-opt %s --split-input-file --dist-tensor-parallel=tp=4 | FileCheck %s

// A token embedding of 6 rows over 4 ranks: the table gets 2 zero rows
// (Megatron's padded vocabulary), the lookup records the vocabulary of 6,
// and each rank looks up its 2 rows of the 8.
// ANNOTATE-LABEL: func.func @main
// ANNOTATE: %[[T:.*]] = arith.constant dense_resource<{{.*}}> : tensor<8x4xf32>
// ANNOTATE: nn.gather %[[T]], %arg0 {{.*}}dist.vocab_parallel = 6 : i64} : (tensor<8x4xf32>, tensor<2x4xi64>) -> tensor<2x4x4xf32>

// Ids wrap by the 6 ids of the vocabulary (so -1 is row 5, not a zero
// row), not by the 8 rows of the padded table.
// CHECK-LABEL: func.func @main
// CHECK: %[[T:.*]] = dist.local_part %{{.*}} to <@mesh, {{\[\[}}"tp"]]> : tensor<8x4xf32> -> tensor<2x4xf32>
// CHECK: arith.constant dense<{{\[\[}}0, 0, 2], [2, 0, 2], [4, 0, 2], [6, 0, 2]]> : tensor<4x3xi64>
// CHECK: %[[IDENTITY:.*]] = arith.constant dense<[0, 1, 2, 3, 4, 5]> : tensor<6xi64>
// CHECK: nn.gather %[[IDENTITY]], %arg0 {axis = 0 : i64} : (tensor<6xi64>, tensor<2x4xi64>) -> tensor<2x4xi64>
// CHECK: nn.gather %[[T]], %{{.*}} {axis = 0 : i64} : (tensor<2x4xf32>, tensor<2x4xi64>) -> tensor<2x4x4xf32>
// CHECK: dist.all_reduce %{{.*}} on @mesh mesh_axes = ["tp"] : tensor<2x4x4xf32>
func.func @main(%ids: tensor<2x4xi64>) -> tensor<2x4x4xf32> {
  %table = arith.constant dense<0.5> : tensor<6x4xf32>
  %g = arith.constant dense<1.0> : tensor<4xf32>
  %e = nn.gather %table, %ids {axis = 0 : i64} : (tensor<6x4xf32>, tensor<2x4xi64>) -> tensor<2x4x4xf32>
  %n = nn.layer_norm %e, %g {axis = 2 : i64, epsilon = 1.0e-05 : f32} : (tensor<2x4x4xf32>, tensor<4xf32>) -> tensor<2x4x4xf32>
  return %n : tensor<2x4x4xf32>
}

// -----

// Tied to an LM head of 6 features: the head reads the embedding's padded
// table, so each rank holds one part of it (CSE merges the two cuts), and
// the head's 2 zero features are not gathered: the gather keeps each
// rank's leading entries (the last rank's part is all padding), no slice.
// ANNOTATE-LABEL: func.func @main
// ANNOTATE: %[[T:.*]] = arith.constant dense_resource<{{.*}}> : tensor<8x4xf32>
// ANNOTATE: nn.gather %[[T]], %arg0
// ANNOTATE: nn.linear %{{.*}}, %[[T]] {{.*}}transpose_weight = true} : (tensor<2x4x4xf32>, tensor<8x4xf32>) -> tensor<2x4x8xf32>

// CHECK-LABEL: func.func @main
// CHECK: %[[T:.*]] = dist.local_part %{{.*}} to <@mesh, {{\[\[}}"tp"]]> : tensor<8x4xf32> -> tensor<2x4xf32>
// CHECK: nn.gather %[[T]], %{{.*}} : (tensor<2x4xf32>, tensor<2x4xi64>) -> tensor<2x4x4xf32>
// CHECK-NOT: dist.local_part %{{.*}} : tensor<8x4xf32>
// CHECK: nn.linear %{{.*}}, %[[T]] {transpose_weight = true} : (tensor<2x4x4xf32>, tensor<2x4xf32>) -> tensor<2x4x2xf32>
// CHECK: dist.all_gather %{{.*}} gather_axis = 2 sizes = [2, 2, 2, 0] root = 0 : tensor<2x4x2xf32> -> tensor<2x4x6xf32>
// CHECK-NOT: nn.slice
func.func @main(%ids: tensor<2x4xi64>) -> tensor<2x4x6xf32> {
  %table = arith.constant dense<0.5> : tensor<6x4xf32>
  %g = arith.constant dense<1.0> : tensor<4xf32>
  %e = nn.gather %table, %ids {axis = 0 : i64} : (tensor<6x4xf32>, tensor<2x4xi64>) -> tensor<2x4x4xf32>
  %n = nn.layer_norm %e, %g {axis = 2 : i64, epsilon = 1.0e-05 : f32} : (tensor<2x4x4xf32>, tensor<4xf32>) -> tensor<2x4x4xf32>
  %y = nn.linear %n, %table {transpose_weight = true} : (tensor<2x4x4xf32>, tensor<6x4xf32>) -> tensor<2x4x6xf32>
  return %y : tensor<2x4x6xf32>
}
