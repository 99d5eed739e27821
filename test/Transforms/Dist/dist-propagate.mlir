// RUN: parc-opt %s --split-input-file --dist-propagate | FileCheck %s

// The block of dist-annotate.mlir after dist-annotate (tp = 2). The split of
// the fused QKV output (dim 2 of 24 features) is carried by each op's rule:
// the split keeps it (and cuts the QKV weight blockwise, 8 + 8 + 8), the head
// split reshape [2,4,8] -> [2,4,4,2] moves it to the heads (dim 2), the
// transposes to dim 1 and back, attention keeps the heads, the merge moves it
// to the features again. Weights are annotated with the split their consumer
// needs (column: dim 1 of [in, out], bias dim 0; row: dim 0), and the row
// linears' partial sums are read replicated by their users.
// CHECK-LABEL: func.func @main
// CHECK-SAME: dist.tp_regions = 2
// CHECK: %[[WQKV:.*]] = dist.shard %{{.*}} to <@mesh, {{\[\[}}], ["tp"]], blocks = {{\[\[}}], [8, 8, 8]]> annotate_for_users : tensor<8x24xf32>
// CHECK: %[[BQKV:.*]] = dist.shard %{{.*}} to <@mesh, {{\[\[}}"tp"]], blocks = {{\[\[}}8, 8, 8]]> annotate_for_users : tensor<24xf32>
// CHECK: %[[QKV:.*]] = nn.linear %{{.*}}, %[[WQKV]], %[[BQKV]] {{.*}}dist.result_shardings = [#dist.sharding<@mesh, {{\[\[}}], [], ["tp"]]>]
// CHECK: nn.split %[[QKV]] {axis = 2 : i64, dist.result_shardings = [#dist.sharding<@mesh, {{\[\[}}], [], ["tp"]]>, #dist.sharding<@mesh, {{\[\[}}], [], ["tp"]]>, #dist.sharding<@mesh, {{\[\[}}], [], ["tp"]]>]}
// CHECK: nn.reshape {{.*}}dist.result_shardings = [#dist.sharding<@mesh, {{\[\[}}], [], ["tp"]]>]} : tensor<2x4x8xf32> to tensor<2x4x4x2xf32>
// CHECK: nn.transpose {{.*}}dist.result_shardings = [#dist.sharding<@mesh, {{\[\[}}], ["tp"]]>]
// CHECK: nn.attention {{.*}}dist.result_shardings = [#dist.sharding<@mesh, {{\[\[}}], ["tp"]]>]
// CHECK: nn.transpose {{.*}}dist.result_shardings = [#dist.sharding<@mesh, {{\[\[}}], [], ["tp"]]>]
// CHECK: nn.reshape {{.*}}dist.result_shardings = [#dist.sharding<@mesh, {{\[\[}}], [], ["tp"]]>]} : tensor<2x4x4x2xf32> to tensor<2x4x8xf32>
// CHECK: %[[WO:.*]] = dist.shard %{{.*}} to <@mesh, {{\[\[}}"tp"]]> annotate_for_users : tensor<8x8xf32>
// CHECK: %[[Y:.*]] = nn.linear %{{.*}}, %[[WO]], %{{.*}} {{.*}}partial = ["tp"]
// CHECK: %[[YR:.*]] = dist.shard %[[Y]] to <@mesh, []> annotate_for_users : tensor<2x4x8xf32>
// CHECK: %[[H:.*]] = nn.add %arg0, %[[YR]] : (
// CHECK: nn.gelu {{.*}}dist.result_shardings = [#dist.sharding<@mesh, {{\[\[}}], [], ["tp"]]>]
// CHECK: %[[Z:.*]] = nn.linear {{.*}}partial = ["tp"]
// CHECK: %[[ZR:.*]] = dist.shard %[[Z]] to <@mesh, []> annotate_for_users
// CHECK: %[[OUT:.*]] = nn.add %[[H]], %[[ZR]] : (
// CHECK: return %[[OUT]]
module {
  dist.mesh @mesh(shape = 2, axes = ["tp"])
  func.func @main(%arg0: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
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
    %1 = nn.linear %0, %cst_1, %cst_2 {dist.region = 0 : i64, dist.result_shardings = [#dist.sharding<@mesh, [[], [], ["tp"]]>]} : (tensor<2x4x8xf32>, tensor<8x24xf32>, tensor<24xf32>) -> tensor<2x4x24xf32>
    %2:3 = nn.split %1 {axis = 2 : i64} : tensor<2x4x24xf32> -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>)
    %3 = nn.reshape %2#0 : tensor<2x4x8xf32> to tensor<2x4x4x2xf32>
    %4 = nn.reshape %2#1 : tensor<2x4x8xf32> to tensor<2x4x4x2xf32>
    %5 = nn.reshape %2#2 : tensor<2x4x8xf32> to tensor<2x4x4x2xf32>
    %6 = nn.transpose %3 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x4x2xf32> -> tensor<2x4x4x2xf32>
    %7 = nn.transpose %4 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x4x2xf32> -> tensor<2x4x4x2xf32>
    %8 = nn.transpose %5 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x4x2xf32> -> tensor<2x4x4x2xf32>
    %9 = nn.attention %6, %7, %8 {scale = 5.000000e-01 : f32} : (tensor<2x4x4x2xf32>, tensor<2x4x4x2xf32>, tensor<2x4x4x2xf32>) -> tensor<2x4x4x2xf32> {
    ^bb0(%arg1: tensor<2x4x4x4xf32>):
      nn.yield %arg1 : tensor<2x4x4x4xf32>
    }
    %10 = nn.transpose %9 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x4x2xf32> -> tensor<2x4x4x2xf32>
    %11 = nn.reshape %10 : tensor<2x4x4x2xf32> to tensor<2x4x8xf32>
    %12 = nn.linear %11, %cst_3, %cst_4 {dist.region = 0 : i64, dist.result_shardings = [#dist.sharding<@mesh, [], partial = ["tp"]>]} : (tensor<2x4x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
    %13 = nn.add %arg0, %12 : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
    %14 = nn.layer_norm %13, %cst_5, %cst_6 {axis = 2 : i64, epsilon = 9.99999974E-6 : f32} : (tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
    %15 = nn.linear %14, %cst_7, %cst_8 {dist.region = 1 : i64, dist.result_shardings = [#dist.sharding<@mesh, [[], [], ["tp"]]>]} : (tensor<2x4x8xf32>, tensor<8x32xf32>, tensor<32xf32>) -> tensor<2x4x32xf32>
    %16 = nn.gelu %15 : tensor<2x4x32xf32>
    %17 = nn.linear %16, %cst_9, %cst_10 {dist.region = 1 : i64, dist.result_shardings = [#dist.sharding<@mesh, [], partial = ["tp"]>]} : (tensor<2x4x32xf32>, tensor<32x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
    %18 = nn.add %13, %17 : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
    return %18 : tensor<2x4x8xf32>
  }
}


// -----

// The same block after dist-annotate with sp = true. The sequence split
// (dim 1) enters at the first norm, whose replicated input is sliced
// (annotate_for_users on the block argument), flows through the residual
// adds and the second norm, and leaves through a gather (a replicated read)
// before each column linear and before the return; each row linear's
// partial sums are read split along the sequence (a reduce-scatter).
// CHECK-LABEL: func.func @main
// CHECK: %[[XS:.*]] = dist.shard %arg0 to <@mesh, {{\[\[}}], ["tp"]]> annotate_for_users : tensor<2x4x8xf32>
// CHECK: %[[LN1:.*]] = nn.layer_norm %[[XS]], {{.*}}dist.result_shardings = [#dist.sharding<@mesh, {{\[\[}}], ["tp"]]>]
// CHECK: %[[A:.*]] = dist.shard %[[LN1]] to <@mesh, []> annotate_for_users
// CHECK: nn.linear %[[A]],
// CHECK: %[[Y:.*]] = nn.linear {{.*}}partial = ["tp"]>], dist.sequence_parallel}
// CHECK: %[[YS:.*]] = dist.shard %[[Y]] to <@mesh, {{\[\[}}], ["tp"]]> annotate_for_users
// CHECK: %[[H:.*]] = nn.add %[[XS]], %[[YS]] {dist.result_shardings = [#dist.sharding<@mesh, {{\[\[}}], ["tp"]]>]}
// CHECK: %[[LN2:.*]] = nn.layer_norm %[[H]], {{.*}}dist.result_shardings = [#dist.sharding<@mesh, {{\[\[}}], ["tp"]]>]
// CHECK: %[[M:.*]] = dist.shard %[[LN2]] to <@mesh, []> annotate_for_users
// CHECK: nn.linear %[[M]],
// CHECK: %[[Z:.*]] = nn.linear {{.*}}partial = ["tp"]>], dist.sequence_parallel}
// CHECK: %[[ZS:.*]] = dist.shard %[[Z]] to <@mesh, {{\[\[}}], ["tp"]]> annotate_for_users
// CHECK: %[[OUT:.*]] = nn.add %[[H]], %[[ZS]] {dist.result_shardings = [#dist.sharding<@mesh, {{\[\[}}], ["tp"]]>]}
// CHECK: %[[G:.*]] = dist.shard %[[OUT]] to <@mesh, []> annotate_for_users
// CHECK: return %[[G]]
module {
  dist.mesh @mesh(shape = 2, axes = ["tp"])
  func.func @main(%arg0: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
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
    %0 = nn.layer_norm %arg0, %cst, %cst_0 {axis = 2 : i64, dist.result_shardings = [#dist.sharding<@mesh, [[], ["tp"]]>], epsilon = 9.99999974E-6 : f32} : (tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
    %1 = nn.linear %0, %cst_1, %cst_2 {dist.region = 0 : i64, dist.result_shardings = [#dist.sharding<@mesh, [[], [], ["tp"]]>]} : (tensor<2x4x8xf32>, tensor<8x24xf32>, tensor<24xf32>) -> tensor<2x4x24xf32>
    %2:3 = nn.split %1 {axis = 2 : i64} : tensor<2x4x24xf32> -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>, tensor<2x4x8xf32>)
    %3 = nn.reshape %2#0 : tensor<2x4x8xf32> to tensor<2x4x4x2xf32>
    %4 = nn.reshape %2#1 : tensor<2x4x8xf32> to tensor<2x4x4x2xf32>
    %5 = nn.reshape %2#2 : tensor<2x4x8xf32> to tensor<2x4x4x2xf32>
    %6 = nn.transpose %3 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x4x2xf32> -> tensor<2x4x4x2xf32>
    %7 = nn.transpose %4 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x4x2xf32> -> tensor<2x4x4x2xf32>
    %8 = nn.transpose %5 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x4x2xf32> -> tensor<2x4x4x2xf32>
    %9 = nn.attention %6, %7, %8 {scale = 5.000000e-01 : f32} : (tensor<2x4x4x2xf32>, tensor<2x4x4x2xf32>, tensor<2x4x4x2xf32>) -> tensor<2x4x4x2xf32> {
    ^bb0(%arg1: tensor<2x4x4x4xf32>):
      nn.yield %arg1 : tensor<2x4x4x4xf32>
    }
    %10 = nn.transpose %9 {perm = array<i64: 0, 2, 1, 3>} : tensor<2x4x4x2xf32> -> tensor<2x4x4x2xf32>
    %11 = nn.reshape %10 : tensor<2x4x4x2xf32> to tensor<2x4x8xf32>
    %12 = nn.linear %11, %cst_3, %cst_4 {dist.region = 0 : i64, dist.result_shardings = [#dist.sharding<@mesh, [], partial = ["tp"]>], dist.sequence_parallel} : (tensor<2x4x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
    %13 = nn.add %arg0, %12 : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
    %14 = nn.layer_norm %13, %cst_5, %cst_6 {axis = 2 : i64, dist.result_shardings = [#dist.sharding<@mesh, [[], ["tp"]]>], epsilon = 9.99999974E-6 : f32} : (tensor<2x4x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
    %15 = nn.linear %14, %cst_7, %cst_8 {dist.region = 1 : i64, dist.result_shardings = [#dist.sharding<@mesh, [[], [], ["tp"]]>]} : (tensor<2x4x8xf32>, tensor<8x32xf32>, tensor<32xf32>) -> tensor<2x4x32xf32>
    %16 = nn.gelu %15 : tensor<2x4x32xf32>
    %17 = nn.linear %16, %cst_9, %cst_10 {dist.region = 1 : i64, dist.result_shardings = [#dist.sharding<@mesh, [], partial = ["tp"]>], dist.sequence_parallel} : (tensor<2x4x32xf32>, tensor<32x8xf32>, tensor<8xf32>) -> tensor<2x4x8xf32>
    %18 = nn.add %13, %17 : (tensor<2x4x8xf32>, tensor<2x4x8xf32>) -> tensor<2x4x8xf32>
    return %18 : tensor<2x4x8xf32>
  }
}


// -----

// A seeded region that no rule carries (the mask varies over heads) stays
// replicated: its seeds are dropped and nothing is annotated.
// CHECK-LABEL: func.func @main
// CHECK-SAME: dist.tp_regions = 0
// CHECK-NOT: dist.shard
// CHECK-NOT: dist.result_shardings
// CHECK-NOT: dist.region
module {
  dist.mesh @mesh(shape = 2, axes = ["tp"])
  func.func @main(%x: tensor<3x8xf32>, %mask: tensor<1x4x3x3xf32>) -> tensor<3x8xf32> {
    %wq = arith.constant dense<0.5> : tensor<8x8xf32>
    %wo = arith.constant dense<0.25> : tensor<8x8xf32>
    %q = nn.linear %x, %wq {dist.region = 0 : i64, dist.result_shardings = [#dist.sharding<@mesh, [[], ["tp"]]>]} : (tensor<3x8xf32>, tensor<8x8xf32>) -> tensor<3x8xf32>
    %qh = nn.reshape %q : tensor<3x8xf32> to tensor<1x3x4x2xf32>
    %qt = nn.transpose %qh {perm = array<i64: 0, 2, 1, 3>} : tensor<1x3x4x2xf32> -> tensor<1x4x3x2xf32>
    %o = nn.attention %qt, %qt, %qt mask(%mask : tensor<1x4x3x3xf32>) {scale = 0.5 : f32} : (tensor<1x4x3x2xf32>, tensor<1x4x3x2xf32>, tensor<1x4x3x2xf32>) -> tensor<1x4x3x2xf32> {
    ^bb0(%s: tensor<1x4x3x3xf32>, %m: tensor<1x4x3x3xf32>):
      %sm = nn.add %s, %m : (tensor<1x4x3x3xf32>, tensor<1x4x3x3xf32>) -> tensor<1x4x3x3xf32>
      nn.yield %sm : tensor<1x4x3x3xf32>
    }
    %ot = nn.transpose %o {perm = array<i64: 0, 2, 1, 3>} : tensor<1x4x3x2xf32> -> tensor<1x3x4x2xf32>
    %of = nn.reshape %ot : tensor<1x3x4x2xf32> to tensor<3x8xf32>
    %y = nn.linear %of, %wo {dist.region = 0 : i64, dist.result_shardings = [#dist.sharding<@mesh, [], partial = ["tp"]>]} : (tensor<3x8xf32>, tensor<8x8xf32>) -> tensor<3x8xf32>
    %r = nn.relu %y : tensor<3x8xf32>
    return %r : tensor<3x8xf32>
  }
}

// -----

// Sequence parallelism: a cast (to an output's dtype) has no sequence rule,
// so it shares the one gather of the norm's output with the other reader.
// CHECK-LABEL: func.func @main
// CHECK: %[[N:.*]] = nn.layer_norm {{.*}}dist.result_shardings = [#dist.sharding<@mesh, {{\[\[}}], ["tp"]]>]
// CHECK: %[[G:.*]] = dist.shard %[[N]] to <@mesh, []> annotate_for_users
// CHECK-NOT: dist.shard
// CHECK: nn.cast %[[G]]
// CHECK: nn.reduce_sum %[[G]]
module {
  dist.mesh @mesh(shape = 2, axes = ["tp"])
  func.func @main(%x: tensor<2x4x8xbf16>) -> (tensor<2x4x8xf32>, tensor<2x1x8xbf16>) {
    %g = arith.constant dense<1.0> : tensor<8xbf16>
    %n = nn.layer_norm %x, %g {axis = 2 : i64, epsilon = 1.0e-05 : f32, dist.result_shardings = [#dist.sharding<@mesh, [[], ["tp"]]>]} : (tensor<2x4x8xbf16>, tensor<8xbf16>) -> tensor<2x4x8xbf16>
    %c = nn.cast %n : tensor<2x4x8xbf16> to tensor<2x4x8xf32>
    %s = nn.reduce_sum %n {axes = array<i64: 1>} : tensor<2x4x8xbf16> -> tensor<2x1x8xbf16>
    return %c, %s : tensor<2x4x8xf32>, tensor<2x1x8xbf16>
  }
}
