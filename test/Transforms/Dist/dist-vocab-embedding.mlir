// RUN: parc-opt %s --dist-annotate=tp=2 | FileCheck %s --check-prefix=ANNOTATE
// RUN: parc-opt %s --dist-annotate=tp=2 --dist-propagate | FileCheck %s --check-prefix=PROPAGATE
// RUN: parc-opt %s --dist-tensor-parallel=tp=2 | FileCheck %s
// RUN: parc-opt %s --dist-tensor-parallel="tp=2 sp=true" | FileCheck %s --check-prefix=SP

// A token embedding of 8 rows tied to the LM head, over 2 ranks
// (Megatron's vocabulary-parallel embedding): the lookup is seeded as a
// pending sum, its table is split by rows, each rank looks up only its 4
// rows, and the partial lookups are all-reduced (with sequence parallelism
// reduce-scattered along the sequence).
// ANNOTATE: nn.gather {{.*}}dist.result_shardings = [#dist.sharding<@mesh, [], partial = ["tp"]>], dist.vocab_parallel = 8 : i64}
// ANNOTATE: nn.linear {{.*}}dist.output_head

// PROPAGATE: %[[T:.*]] = dist.shard %{{.*}} to <@mesh, {{\[\[}}"tp"]]> annotate_for_users : tensor<8x4xf32>
// PROPAGATE: %[[E:.*]] = nn.gather %[[T]], %arg0
// PROPAGATE: dist.shard %[[E]] to <@mesh, []> annotate_for_users : tensor<2x4x4xf32>

// Rank r keeps rows [4r, 4r + 4): its (first row, 0, rows) is row r of the
// [[0, 0, 4], [4, 0, 4]] constant; ids, first wrapped by the whole
// vocabulary of 8 (a lookup in its identity table, which refuses ids
// outside [-8, 8) as the unpartitioned gather does), outside its rows look
// up row 0 and are zeroed by the mask. The tied LM head reads the same part
// of the table.
// CHECK-LABEL: func.func @main
// CHECK: %[[T:.*]] = dist.local_part %{{.*}} to <@mesh, {{\[\[}}"tp"]]> : tensor<8x4xf32> -> tensor<4x4xf32>
// CHECK: %[[B:.*]] = arith.constant dense<{{\[\[}}0, 0, 4], [4, 0, 4]]> : tensor<2x3xi64>
// CHECK: %[[MINE:.*]] = dist.local_part %[[B]] to <@mesh, {{\[\[}}"tp"]]> : tensor<2x3xi64> -> tensor<1x3xi64>
// CHECK: %[[FIRST:.*]] = nn.slice %[[MINE]] {starts = array<i64: 0, 0>, {{.*}} -> tensor<1x1xi64>
// CHECK: %[[ZERO:.*]] = nn.slice %[[MINE]] {starts = array<i64: 0, 1>,
// CHECK: %[[ROWS:.*]] = nn.slice %[[MINE]] {starts = array<i64: 0, 2>,
// CHECK: %[[IDENTITY:.*]] = arith.constant dense<[0, 1, 2, 3, 4, 5, 6, 7]> : tensor<8xi64>
// CHECK: %[[WRAPPED:.*]] = nn.gather %[[IDENTITY]], %arg0 {axis = 0 : i64} : (tensor<8xi64>, tensor<2x4xi64>) -> tensor<2x4xi64>
// CHECK: %[[LOCAL:.*]] = nn.sub %[[WRAPPED]], %[[FIRST]]
// CHECK: %[[BELOW:.*]] = nn.less %[[LOCAL]], %[[ZERO]]
// CHECK: %[[UNDER:.*]] = nn.less %[[LOCAL]], %[[ROWS]]
// CHECK: %[[NB:.*]] = nn.not %[[BELOW]]
// CHECK: %[[IN:.*]] = nn.and %[[NB]], %[[UNDER]]
// CHECK: %[[SAFE:.*]] = nn.where %[[IN]], %[[LOCAL]], %[[ZERO]]
// CHECK: %[[E:.*]] = nn.gather %[[T]], %[[SAFE]] {axis = 0 : i64} : (tensor<4x4xf32>, tensor<2x4xi64>) -> tensor<2x4x4xf32>
// CHECK: %[[M:.*]] = nn.cast %[[IN]] : tensor<2x4xi1> to tensor<2x4xf32>
// CHECK: %[[M3:.*]] = nn.reshape %[[M]] : tensor<2x4xf32> to tensor<2x4x1xf32>
// CHECK: %[[P:.*]] = nn.mul %[[E]], %[[M3]]
// CHECK: %[[S:.*]] = dist.all_reduce %[[P]] on @mesh mesh_axes = ["tp"] : tensor<2x4x4xf32>
// CHECK: %[[N:.*]] = nn.layer_norm %[[S]]
// CHECK: nn.linear %[[N]], %[[T]] {transpose_weight = true} : (tensor<2x4x4xf32>, tensor<4x4xf32>) -> tensor<2x4x4xf32>
// CHECK: dist.all_gather %{{.*}} gather_axis = 2 root = 0 : tensor<2x4x4xf32> -> tensor<2x4x8xf32>

// SP: dist.reduce_scatter %{{.*}} scatter_axis = 1 : tensor<2x4x4xf32> -> tensor<2x2x4xf32>
// SP-NEXT: nn.layer_norm {{.*}} -> tensor<2x2x4xf32>
// SP-NEXT: dist.all_gather %{{.*}} gather_axis = 1 : tensor<2x2x4xf32> -> tensor<2x4x4xf32>
func.func @main(%ids: tensor<2x4xi64>) -> tensor<2x4x8xf32> {
  %table = arith.constant dense<0.5> : tensor<8x4xf32>
  %g = arith.constant dense<1.0> : tensor<4xf32>
  %e = nn.gather %table, %ids {axis = 0 : i64} : (tensor<8x4xf32>, tensor<2x4xi64>) -> tensor<2x4x4xf32>
  %n = nn.layer_norm %e, %g {axis = 2 : i64, epsilon = 1.0e-05 : f32} : (tensor<2x4x4xf32>, tensor<4xf32>) -> tensor<2x4x4xf32>
  %y = nn.linear %n, %table {transpose_weight = true} : (tensor<2x4x4xf32>, tensor<8x4xf32>) -> tensor<2x4x8xf32>
  return %y : tensor<2x4x8xf32>
}
