// RUN: parc-opt %s --split-input-file --dist-partition | FileCheck %s

// The block of dist-annotate.mlir after dist-propagate (tp = 2): every value
// gets its local type (its split dim halved), annotated constants become
// this rank's parts (QKV blockwise: 8 of each of q, k, v's 8 + 8 + 8
// columns -> 4 + 4 + 4), the attention scores are [batch, heads / 2, seq,
// seq], and each row linear computes its partial sums without its bias,
// which is added once after the pending reshard.
// CHECK-LABEL: func.func @main
// CHECK-NOT: dist.result_shardings
// CHECK-NOT: dist.shard
// CHECK: %[[WQKV:.*]] = dist.local_part %{{.*}} to <@mesh, {{\[\[}}], ["tp"]], blocks = {{\[\[}}], [8, 8, 8]]> : tensor<8x24xf32> -> tensor<8x12xf32>
// CHECK: %[[BQKV:.*]] = dist.local_part %{{.*}} to <@mesh, {{\[\[}}"tp"]], blocks = {{\[\[}}8, 8, 8]]> : tensor<24xf32> -> tensor<12xf32>
// CHECK: nn.linear %{{.*}}, %[[WQKV]], %[[BQKV]] : (tensor<2x4x8xf32>, tensor<8x12xf32>, tensor<12xf32>) -> tensor<2x4x12xf32>
// CHECK: nn.split {{.*}} -> (tensor<2x4x4xf32>, tensor<2x4x4xf32>, tensor<2x4x4xf32>)
// CHECK: nn.reshape {{.*}} : tensor<2x4x4xf32> to tensor<2x4x2x2xf32>
// CHECK: nn.transpose {{.*}} : tensor<2x4x2x2xf32> -> tensor<2x2x4x2xf32>
// CHECK: nn.attention {{.*}} -> tensor<2x2x4x2xf32> {
// CHECK-NEXT: ^bb0(%{{.*}}: tensor<2x2x4x4xf32>):
// CHECK: nn.reshape {{.*}} : tensor<2x4x2x2xf32> to tensor<2x4x4xf32>
// CHECK: %[[WO:.*]] = dist.local_part %{{.*}} to <@mesh, {{\[\[}}"tp"]]> : tensor<8x8xf32> -> tensor<4x8xf32>
// CHECK: %[[Y:.*]] = nn.linear %{{.*}}, %[[WO]] : (tensor<2x4x4xf32>, tensor<4x8xf32>) -> tensor<2x4x8xf32>
// CHECK: %[[R:.*]] = dist.reshard %[[Y]] from <@mesh, [], partial = ["tp"]> to <@mesh, []> : tensor<2x4x8xf32> -> tensor<2x4x8xf32>
// CHECK: %[[YB:.*]] = nn.add %[[R]], %{{.*}} : (tensor<2x4x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
// CHECK: nn.add %arg0, %[[YB]]
// CHECK: nn.gelu %{{.*}} : tensor<2x4x16xf32>
// CHECK: dist.local_part %{{.*}} to <@mesh, {{\[\[}}"tp"]]> : tensor<32x8xf32> -> tensor<16x8xf32>
// CHECK: dist.reshard %{{.*}} from <@mesh, [], partial = ["tp"]> to <@mesh, []>
module {
  dist.mesh @mesh(shape = 2, axes = ["tp"])
  func.func @main(%arg0: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> attributes {dist.tp_regions = 2 : i64} {
    %cst = arith.constant dense<1.000000e+00> : tensor<8xf32>
    %cst_0 = arith.constant dense<0.000000e+00> : tensor<8xf32>
    %cst_1 = arith.constant dense<5.000000e-01> : tensor<8x24xf32>
    %cst_2 = arith.constant dense<1.000000e-01> : tensor<24xf32>
    %cst_3 = arith.constant dense<2.500000e-01> : tensor<8x8xf32>
    %cst_4 = arith.constant dense<2.000000e-01> : tensor<8xf32>
    %cst_5 = arith.constant dense<1.000000e+00> : tensor<8xf32>
    %cst_6 = arith.constant dense<0.000000e+00> : tensor<8xf32>
    %cst_7 = arith.constant dense<5.000000e-01> : tensor<8x32xf32>
    %cst_8 = arith.constant dense<1.000000e-01> : tensor<32xf32>
    %cst_9 = arith.constant dense<2.500000e-01> : tensor<32x8xf32>
    %cst_10 = arith.constant dense<2.000000e-01> : tensor<8xf32>
    %0 = nn.layer_norm %arg0, %cst, %cst_0 {axis = 2 : i64, epsilon = 9.99999974E-6 : f32} : (tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
    %1 = dist.shard %cst_1 to <@mesh, [[], ["tp"]], blocks = [[], [8, 8, 8]]> annotate_for_users : tensor<8x24xf32>
    %2 = dist.shard %cst_2 to <@mesh, [["tp"]], blocks = [[8, 8, 8]]> annotate_for_users : tensor<24xf32>
    %3 = nn.linear %0, %1, %2 {dist.region = 0 : i64, dist.result_shardings = [#dist.sharding<@mesh, [[], [], ["tp"]]>]} : (tensor<2x4x8xf32>, tensor<8x24xf32>, tensor<24xf32>) -> tensor<2x4x24xf32>
    %4:3 = nn.split %3 {axis = 2 : i64, dist.result_shardings = [#dist.sharding<@mesh, [[], [], ["tp"]]>, #dist.sharding<@mesh, [[], [], ["tp"]]>, #dist.sharding<@mesh, [[], [], ["tp"]]>]} : tensor<2x4x24xf32> -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>)
    %5 = nn.reshape %4#0 {dist.result_shardings = [#dist.sharding<@mesh, [[], [], ["tp"]]>]} : tensor<2x4x8xf32> to tensor<2x4x4x2xf32>
    %6 = nn.reshape %4#1 {dist.result_shardings = [#dist.sharding<@mesh, [[], [], ["tp"]]>]} : tensor<2x4x8xf32> to tensor<2x4x4x2xf32>
    %7 = nn.reshape %4#2 {dist.result_shardings = [#dist.sharding<@mesh, [[], [], ["tp"]]>]} : tensor<2x4x8xf32> to tensor<2x4x4x2xf32>
    %8 = nn.transpose %5 {dist.result_shardings = [#dist.sharding<@mesh, [[], ["tp"]]>], perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x4x2xf32> -> tensor<2x4x4x2xf32>
    %9 = nn.transpose %6 {dist.result_shardings = [#dist.sharding<@mesh, [[], ["tp"]]>], perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x4x2xf32> -> tensor<2x4x4x2xf32>
    %10 = nn.transpose %7 {dist.result_shardings = [#dist.sharding<@mesh, [[], ["tp"]]>], perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x4x2xf32> -> tensor<2x4x4x2xf32>
    %11 = nn.attention %8, %9, %10 {dist.result_shardings = [#dist.sharding<@mesh, [[], ["tp"]]>], scale = 5.000000e-01 : f32} : (tensor<2x4x4x2xf32>, tensor<2x4x4x2xf32>, tensor<2x4x4x2xf32>) -> tensor<2x4x4x2xf32> {
    ^bb0(%arg1: tensor<2x4x4x4xf32>):
      nn.yield %arg1 : tensor<2x4x4x4xf32>
    }
    %12 = nn.transpose %11 {dist.result_shardings = [#dist.sharding<@mesh, [[], [], ["tp"]]>], perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x4x2xf32> -> tensor<2x4x4x2xf32>
    %13 = nn.reshape %12 {dist.result_shardings = [#dist.sharding<@mesh, [[], [], ["tp"]]>]} : tensor<2x4x4x2xf32> to tensor<2x4x8xf32>
    %14 = dist.shard %cst_3 to <@mesh, [["tp"]]> annotate_for_users : tensor<8x8xf32>
    %15 = nn.linear %13, %14, %cst_4 {dist.region = 0 : i64, dist.result_shardings = [#dist.sharding<@mesh, [], partial = ["tp"]>]} : (tensor<2x4x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
    %16 = dist.shard %15 to <@mesh, []> annotate_for_users : tensor<2x4x8xf32>
    %17 = nn.add %arg0, %16 : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
    %18 = nn.layer_norm %17, %cst_5, %cst_6 {axis = 2 : i64, epsilon = 9.99999974E-6 : f32} : (tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
    %19 = dist.shard %cst_7 to <@mesh, [[], ["tp"]]> annotate_for_users : tensor<8x32xf32>
    %20 = dist.shard %cst_8 to <@mesh, [["tp"]]> annotate_for_users : tensor<32xf32>
    %21 = nn.linear %18, %19, %20 {dist.region = 1 : i64, dist.result_shardings = [#dist.sharding<@mesh, [[], [], ["tp"]]>]} : (tensor<2x4x8xf32>, tensor<8x32xf32>, tensor<32xf32>) -> tensor<2x4x32xf32>
    %22 = nn.gelu %21 {dist.result_shardings = [#dist.sharding<@mesh, [[], [], ["tp"]]>]} : tensor<2x4x32xf32>
    %23 = dist.shard %cst_9 to <@mesh, [["tp"]]> annotate_for_users : tensor<32x8xf32>
    %24 = nn.linear %22, %23, %cst_10 {dist.region = 1 : i64, dist.result_shardings = [#dist.sharding<@mesh, [], partial = ["tp"]>]} : (tensor<2x4x32xf32>, tensor<32x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
    %25 = dist.shard %24 to <@mesh, []> annotate_for_users : tensor<2x4x8xf32>
    %26 = nn.add %17, %25 : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
    return %26 : tensor<2x4x8xf32>
  }
}


// -----

// With sequence parallelism the residual stream is [2, 4 / 2, 8]: the block
// argument is resharded to it, the norms run on it, the column linears read
// it through a reshard back to replicated, and the row linears' partial
// sums are resharded to it before their bias.
// CHECK-LABEL: func.func @main
// CHECK: %[[XS:.*]] = dist.reshard %arg0 from <@mesh, []> to <@mesh, {{\[\[}}], ["tp"]]> : tensor<2x4x8xf32> -> tensor<2x2x8xf32>
// CHECK: %[[LN1:.*]] = nn.layer_norm %[[XS]], {{.*}} -> tensor<2x2x8xf32>
// CHECK: %[[A:.*]] = dist.reshard %[[LN1]] from <@mesh, {{\[\[}}], ["tp"]]> to <@mesh, []> : tensor<2x2x8xf32> -> tensor<2x4x8xf32>
// CHECK: nn.linear %[[A]],
// CHECK: %[[Y:.*]] = nn.linear {{.*}} -> tensor<2x4x8xf32>
// CHECK: %[[YS:.*]] = dist.reshard %[[Y]] from <@mesh, [], partial = ["tp"]> to <@mesh, {{\[\[}}], ["tp"]]> : tensor<2x4x8xf32> -> tensor<2x2x8xf32>
// CHECK: %[[YB:.*]] = nn.add %[[YS]], %{{.*}} : (tensor<2x2x8xf32>, tensor<8xf32>) -> tensor<2x2x8xf32>
// CHECK: nn.add %[[XS]], %[[YB]] : (tensor<2x2x8xf32>, tensor<2x2x8xf32>) -> tensor<2x2x8xf32>
// CHECK: dist.reshard %{{.*}} from <@mesh, {{\[\[}}], ["tp"]]> to <@mesh, []> : tensor<2x2x8xf32> -> tensor<2x4x8xf32>
// CHECK: return
module {
  dist.mesh @mesh(shape = 2, axes = ["tp"])
  func.func @main(%arg0: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> attributes {dist.tp_regions = 2 : i64} {
    %0 = dist.shard %arg0 to <@mesh, [[], ["tp"]]> annotate_for_users : tensor<2x4x8xf32>
    %cst = arith.constant dense<1.000000e+00> : tensor<8xf32>
    %cst_0 = arith.constant dense<0.000000e+00> : tensor<8xf32>
    %cst_1 = arith.constant dense<5.000000e-01> : tensor<8x24xf32>
    %cst_2 = arith.constant dense<1.000000e-01> : tensor<24xf32>
    %cst_3 = arith.constant dense<2.500000e-01> : tensor<8x8xf32>
    %cst_4 = arith.constant dense<2.000000e-01> : tensor<8xf32>
    %cst_5 = arith.constant dense<1.000000e+00> : tensor<8xf32>
    %cst_6 = arith.constant dense<0.000000e+00> : tensor<8xf32>
    %cst_7 = arith.constant dense<5.000000e-01> : tensor<8x32xf32>
    %cst_8 = arith.constant dense<1.000000e-01> : tensor<32xf32>
    %cst_9 = arith.constant dense<2.500000e-01> : tensor<32x8xf32>
    %cst_10 = arith.constant dense<2.000000e-01> : tensor<8xf32>
    %1 = nn.layer_norm %0, %cst, %cst_0 {axis = 2 : i64, dist.result_shardings = [#dist.sharding<@mesh, [[], ["tp"]]>], epsilon = 9.99999974E-6 : f32} : (tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
    %2 = dist.shard %1 to <@mesh, []> annotate_for_users : tensor<2x4x8xf32>
    %3 = dist.shard %cst_1 to <@mesh, [[], ["tp"]], blocks = [[], [8, 8, 8]]> annotate_for_users : tensor<8x24xf32>
    %4 = dist.shard %cst_2 to <@mesh, [["tp"]], blocks = [[8, 8, 8]]> annotate_for_users : tensor<24xf32>
    %5 = nn.linear %2, %3, %4 {dist.region = 0 : i64, dist.result_shardings = [#dist.sharding<@mesh, [[], [], ["tp"]]>]} : (tensor<2x4x8xf32>, tensor<8x24xf32>, tensor<24xf32>) -> tensor<2x4x24xf32>
    %6:3 = nn.split %5 {axis = 2 : i64, dist.result_shardings = [#dist.sharding<@mesh, [[], [], ["tp"]]>, #dist.sharding<@mesh, [[], [], ["tp"]]>, #dist.sharding<@mesh, [[], [], ["tp"]]>]} : tensor<2x4x24xf32> -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>)
    %7 = nn.reshape %6#0 {dist.result_shardings = [#dist.sharding<@mesh, [[], [], ["tp"]]>]} : tensor<2x4x8xf32> to tensor<2x4x4x2xf32>
    %8 = nn.reshape %6#1 {dist.result_shardings = [#dist.sharding<@mesh, [[], [], ["tp"]]>]} : tensor<2x4x8xf32> to tensor<2x4x4x2xf32>
    %9 = nn.reshape %6#2 {dist.result_shardings = [#dist.sharding<@mesh, [[], [], ["tp"]]>]} : tensor<2x4x8xf32> to tensor<2x4x4x2xf32>
    %10 = nn.transpose %7 {dist.result_shardings = [#dist.sharding<@mesh, [[], ["tp"]]>], perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x4x2xf32> -> tensor<2x4x4x2xf32>
    %11 = nn.transpose %8 {dist.result_shardings = [#dist.sharding<@mesh, [[], ["tp"]]>], perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x4x2xf32> -> tensor<2x4x4x2xf32>
    %12 = nn.transpose %9 {dist.result_shardings = [#dist.sharding<@mesh, [[], ["tp"]]>], perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x4x2xf32> -> tensor<2x4x4x2xf32>
    %13 = nn.attention %10, %11, %12 {dist.result_shardings = [#dist.sharding<@mesh, [[], ["tp"]]>], scale = 5.000000e-01 : f32} : (tensor<2x4x4x2xf32>, tensor<2x4x4x2xf32>, tensor<2x4x4x2xf32>) -> tensor<2x4x4x2xf32> {
    ^bb0(%arg1: tensor<2x4x4x4xf32>):
      nn.yield %arg1 : tensor<2x4x4x4xf32>
    }
    %14 = nn.transpose %13 {dist.result_shardings = [#dist.sharding<@mesh, [[], [], ["tp"]]>], perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x4x2xf32> -> tensor<2x4x4x2xf32>
    %15 = nn.reshape %14 {dist.result_shardings = [#dist.sharding<@mesh, [[], [], ["tp"]]>]} : tensor<2x4x4x2xf32> to tensor<2x4x8xf32>
    %16 = dist.shard %cst_3 to <@mesh, [["tp"]]> annotate_for_users : tensor<8x8xf32>
    %17 = nn.linear %15, %16, %cst_4 {dist.region = 0 : i64, dist.result_shardings = [#dist.sharding<@mesh, [], partial = ["tp"]>], dist.sequence_parallel} : (tensor<2x4x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
    %18 = dist.shard %17 to <@mesh, [[], ["tp"]]> annotate_for_users : tensor<2x4x8xf32>
    %19 = nn.add %0, %18 {dist.result_shardings = [#dist.sharding<@mesh, [[], ["tp"]]>]} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
    %20 = nn.layer_norm %19, %cst_5, %cst_6 {axis = 2 : i64, dist.result_shardings = [#dist.sharding<@mesh, [[], ["tp"]]>], epsilon = 9.99999974E-6 : f32} : (tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
    %21 = dist.shard %20 to <@mesh, []> annotate_for_users : tensor<2x4x8xf32>
    %22 = dist.shard %cst_7 to <@mesh, [[], ["tp"]]> annotate_for_users : tensor<8x32xf32>
    %23 = dist.shard %cst_8 to <@mesh, [["tp"]]> annotate_for_users : tensor<32xf32>
    %24 = nn.linear %21, %22, %23 {dist.region = 1 : i64, dist.result_shardings = [#dist.sharding<@mesh, [[], [], ["tp"]]>]} : (tensor<2x4x8xf32>, tensor<8x32xf32>, tensor<32xf32>) -> tensor<2x4x32xf32>
    %25 = nn.gelu %24 {dist.result_shardings = [#dist.sharding<@mesh, [[], [], ["tp"]]>]} : tensor<2x4x32xf32>
    %26 = dist.shard %cst_9 to <@mesh, [["tp"]]> annotate_for_users : tensor<32x8xf32>
    %27 = nn.linear %25, %26, %cst_10 {dist.region = 1 : i64, dist.result_shardings = [#dist.sharding<@mesh, [], partial = ["tp"]>], dist.sequence_parallel} : (tensor<2x4x32xf32>, tensor<32x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
    %28 = dist.shard %27 to <@mesh, [[], ["tp"]]> annotate_for_users : tensor<2x4x8xf32>
    %29 = nn.add %19, %28 {dist.result_shardings = [#dist.sharding<@mesh, [[], ["tp"]]>]} : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
    %30 = dist.shard %29 to <@mesh, []> annotate_for_users : tensor<2x4x8xf32>
    return %30 : tensor<2x4x8xf32>
  }
}

