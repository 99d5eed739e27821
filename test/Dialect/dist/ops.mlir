// RUN: parc-opt %s | parc-opt | FileCheck %s
// RUN: parc-opt %s -mlir-print-op-generic | parc-opt | FileCheck %s

// CHECK: dist.mesh @mesh(shape = 2x4, axes = ["pp", "tp"])
dist.mesh @mesh(shape = 2x4, axes = ["pp", "tp"])
// CHECK: dist.mesh @experts(shape = 4, axes = ["ep"])
dist.mesh @experts(shape = 4, axes = ["ep"])

// CHECK-LABEL: func.func @shardings
// CHECK-SAME: (%[[W:.*]]: tensor<64x256xf32> {dist.sharding = #dist.sharding<@mesh, {{\[\[}}], ["tp"]]>}, %[[X:.*]]: tensor<10x64xf32>)
// CHECK-SAME: -> (tensor<10x64xf32> {dist.sharding = #dist.sharding<@mesh, [], partial = ["tp"]>})
func.func @shardings(%w: tensor<64x256xf32> {dist.sharding = #dist.sharding<@mesh, [[], ["tp"]]>},
                     %x: tensor<10x64xf32>)
    -> (tensor<10x64xf32> {dist.sharding = #dist.sharding<@mesh, [], partial = ["tp"]>}) {
  // CHECK: dist.shard %[[W]] to <@mesh, {{\[\[}}], ["tp"]]> : tensor<64x256xf32>
  %0 = dist.shard %w to <@mesh, [[], ["tp"]]> : tensor<64x256xf32>
  // CHECK: dist.shard %[[X]] to <@mesh, {{\[\[}}"tp"]], sizes = {{\[\[}}3, 3, 2, 2]]> annotate_for_users : tensor<10x64xf32>
  %1 = dist.shard %x to <@mesh, [["tp"]], sizes = [[3, 3, 2, 2]]> annotate_for_users : tensor<10x64xf32>
  // CHECK: dist.shard %[[X]] to <@mesh, {{\[\[}}], []], partial = max ["tp"]> : tensor<10x64xf32>
  %2 = dist.shard %x to <@mesh, [[], []], partial = max ["tp"]> : tensor<10x64xf32>
  // CHECK: dist.shard %[[X]] to <@mesh, [], partial = min ["tp", "pp"]> : tensor<10x64xf32>
  %3 = dist.shard %x to <@mesh, [], partial = min ["tp", "pp"]> : tensor<10x64xf32>
  // `sum` is the default kind and is not printed.
  // CHECK: dist.shard %[[X]] to <@mesh, [], partial = ["tp"]> : tensor<10x64xf32>
  %4 = dist.shard %x to <@mesh, [], partial = sum ["tp"]> : tensor<10x64xf32>
  // Two axes on one dimension: 8 shards, `tp` varying fastest.
  // CHECK: dist.shard %[[X]] to <@mesh, {{\[\[}}"pp", "tp"]], sizes = {{\[\[}}2, 2, 1, 1, 1, 1, 1, 1]]> : tensor<10x64xf32>
  %5 = dist.shard %x to <@mesh, [["pp", "tp"]], sizes = [[2, 2, 1, 1, 1, 1, 1, 1]]> : tensor<10x64xf32>
  // An even dimension next to an uneven one.
  // CHECK: dist.shard %[[X]] to <@mesh, {{\[\[}}"pp"], ["tp"]], sizes = {{\[\[}}], [16, 16, 16, 16]]> : tensor<10x64xf32>
  %6 = dist.shard %x to <@mesh, [["pp"], ["tp"]], sizes = [[], [16, 16, 16, 16]]> : tensor<10x64xf32>
  return %1 : tensor<10x64xf32>
}

// CHECK-LABEL: func.func @pipeline_stages
func.func @pipeline_stages(%x: tensor<8x64xf32>) -> tensor<8x64xf32> {
  // CHECK: %[[H:.*]] = arith.addf %{{.*}} {dist.stage = 0 : i64} : tensor<8x64xf32>
  %h = arith.addf %x, %x {dist.stage = 0 : i64} : tensor<8x64xf32>
  // CHECK: dist.send %[[H]] on @mesh mesh_axes = ["pp"] peer = 1 {dist.stage = 0 : i64} : tensor<8x64xf32>
  dist.send %h on @mesh mesh_axes = ["pp"] peer = 1 {dist.stage = 0 : i64} : tensor<8x64xf32>
  // CHECK: %[[R:.*]] = dist.recv on @mesh mesh_axes = ["pp"] peer = 0 {dist.stage = 1 : i64} : tensor<8x64xf32>
  %r = dist.recv on @mesh mesh_axes = ["pp"] peer = 0 {dist.stage = 1 : i64} : tensor<8x64xf32>
  // CHECK: arith.mulf %[[R]], %[[R]] {dist.stage = 1 : i64}
  %y = arith.mulf %r, %r {dist.stage = 1 : i64} : tensor<8x64xf32>
  return %y : tensor<8x64xf32>
}

// Markers passes leave for the driver are accepted.
// CHECK-LABEL: func.func @local_parts
// CHECK-SAME: attributes {dist.tp_regions = 1 : i64}
func.func @local_parts(%w: tensor<64x256xf32>, %qkv: tensor<64x128xf32>, %kv: tensor<64x32xf32>) attributes {dist.tp_regions = 1 : i64} {
  // CHECK: dist.local_part %{{.*}} to <@mesh, {{\[\[}}], ["tp"]]> : tensor<64x256xf32> -> tensor<64x64xf32>
  %0 = dist.local_part %w to <@mesh, [[], ["tp"]]> : tensor<64x256xf32> -> tensor<64x64xf32>
  // CHECK: dist.local_part %{{.*}} to <@mesh, {{\[\[}}], ["tp"]], blocks = {{\[\[}}], [64, 32, 32]]> : tensor<64x128xf32> -> tensor<64x32xf32>
  %1 = dist.local_part %qkv to <@mesh, [[], ["tp"]], blocks = [[], [64, 32, 32]]> : tensor<64x128xf32> -> tensor<64x32xf32>
  // Grouped-query keys: 2 heads of 16 on the 4 "tp" ranks, 2 ranks each.
  // CHECK: dist.local_part %{{.*}} to <@mesh, {{\[\[}}], ["tp"]], replicas = [1, 2]> : tensor<64x32xf32> -> tensor<64x16xf32>
  %2 = dist.local_part %kv to <@mesh, [[], ["tp"]], replicas = [1, 2]> : tensor<64x32xf32> -> tensor<64x16xf32>
  return
}

// CHECK-LABEL: func.func @collectives
// CHECK-SAME: (%[[X:.*]]: tensor<8x16xf32>, %[[U:.*]]: tensor<3x8xf32>, %[[V:.*]]: tensor<10x8xf32>)
func.func @collectives(%x: tensor<8x16xf32>, %u: tensor<3x8xf32>, %v: tensor<10x8xf32>) {
  // CHECK: dist.all_reduce %[[X]] on @mesh mesh_axes = ["tp"] : tensor<8x16xf32>
  %0 = dist.all_reduce %x on @mesh mesh_axes = ["tp"] : tensor<8x16xf32>
  // CHECK: dist.all_reduce %[[X]] on @mesh mesh_axes = ["pp", "tp"] reduction = max : tensor<8x16xf32>
  %1 = dist.all_reduce %x on @mesh mesh_axes = ["pp", "tp"] reduction = max : tensor<8x16xf32>
  // CHECK: dist.all_gather %[[X]] on @mesh mesh_axes = ["tp"] gather_axis = 1 : tensor<8x16xf32> -> tensor<8x64xf32>
  %2 = dist.all_gather %x on @mesh mesh_axes = ["tp"] gather_axis = 1 : tensor<8x16xf32> -> tensor<8x64xf32>
  // CHECK: dist.all_gather %[[U]] on @mesh mesh_axes = ["tp"] gather_axis = 0 sizes = [3, 3, 2, 2] : tensor<3x8xf32> -> tensor<10x8xf32>
  %3 = dist.all_gather %u on @mesh mesh_axes = ["tp"] gather_axis = 0 sizes = [3, 3, 2, 2] : tensor<3x8xf32> -> tensor<10x8xf32>
  // CHECK: dist.all_gather %[[U]] on @mesh mesh_axes = ["tp"] gather_axis = 0 sizes = [3, 3, 2, 2] root = 3 : tensor<3x8xf32> -> tensor<10x8xf32>
  %root = dist.all_gather %u on @mesh mesh_axes = ["tp"] gather_axis = 0 sizes = [3, 3, 2, 2] root = 3 : tensor<3x8xf32> -> tensor<10x8xf32>
  // CHECK: dist.reduce_scatter %[[X]] on @mesh mesh_axes = ["tp"] scatter_axis = 0 : tensor<8x16xf32> -> tensor<2x16xf32>
  %4 = dist.reduce_scatter %x on @mesh mesh_axes = ["tp"] scatter_axis = 0 : tensor<8x16xf32> -> tensor<2x16xf32>
  // CHECK: dist.reduce_scatter %[[V]] on @mesh mesh_axes = ["tp"] scatter_axis = 0 reduction = min sizes = [3, 3, 2, 2] : tensor<10x8xf32> -> tensor<2x8xf32>
  %5 = dist.reduce_scatter %v on @mesh mesh_axes = ["tp"] scatter_axis = 0 reduction = min sizes = [3, 3, 2, 2] : tensor<10x8xf32> -> tensor<2x8xf32>
  // CHECK: dist.all_to_all %[[X]] on @mesh mesh_axes = ["tp"] split_axis = 1 concat_axis = 0 : tensor<8x16xf32> -> tensor<32x4xf32>
  %6 = dist.all_to_all %x on @mesh mesh_axes = ["tp"] split_axis = 1 concat_axis = 0 : tensor<8x16xf32> -> tensor<32x4xf32>
  // CHECK: dist.all_to_all %[[X]] on @mesh mesh_axes = ["tp"] split_axis = 0 concat_axis = 0 : tensor<8x16xf32> -> tensor<8x16xf32>
  %7 = dist.all_to_all %x on @mesh mesh_axes = ["tp"] split_axis = 0 concat_axis = 0 : tensor<8x16xf32> -> tensor<8x16xf32>
  // CHECK: dist.send %[[X]] on @mesh mesh_axes = ["tp"] shift = 1 : tensor<8x16xf32>
  dist.send %x on @mesh mesh_axes = ["tp"] shift = 1 : tensor<8x16xf32>
  // CHECK: dist.recv on @mesh mesh_axes = ["tp"] shift = 1 : tensor<8x16xf32>
  %9 = dist.recv on @mesh mesh_axes = ["tp"] shift = 1 : tensor<8x16xf32>
  return
}

// CHECK-LABEL: func.func @moe_dispatch_combine
// CHECK-SAME: (%[[T:.*]]: tensor<64x32xf32>, %[[S:.*]]: tensor<4xi64>, %[[R:.*]]: tensor<4xi64>)
func.func @moe_dispatch_combine(%tokens: tensor<64x32xf32>, %send: tensor<4xi64>, %recv: tensor<4xi64>) -> tensor<64x32xf32> {
  // CHECK: %[[E:.*]] = dist.all_to_all_v %[[T]], %[[S]], %[[R]] on @experts mesh_axes = ["ep"] axis = 0 : tensor<64x32xf32>, tensor<4xi64>, tensor<4xi64> -> tensor<96x32xf32>
  %expert_in = dist.all_to_all_v %tokens, %send, %recv on @experts mesh_axes = ["ep"] axis = 0 : tensor<64x32xf32>, tensor<4xi64>, tensor<4xi64> -> tensor<96x32xf32>
  // CHECK: %[[A:.*]] = dist.all_to_all_v_start %[[E]], %[[R]], %[[S]] on @experts mesh_axes = ["ep"] axis = 0 : tensor<96x32xf32>, tensor<4xi64>, tensor<4xi64> -> !dist.async<tensor<64x32xf32>>
  %a = dist.all_to_all_v_start %expert_in, %recv, %send on @experts mesh_axes = ["ep"] axis = 0 : tensor<96x32xf32>, tensor<4xi64>, tensor<4xi64> -> !dist.async<tensor<64x32xf32>>
  // CHECK: dist.wait %[[A]] : !dist.async<tensor<64x32xf32>>
  %back = dist.wait %a : !dist.async<tensor<64x32xf32>>
  return %back : tensor<64x32xf32>
}

// The dispatch plan of an expert-parallel layer: 8 tokens of this rank,
// top-2 of 8 experts, 2 local experts on each of the 4 ranks.
// CHECK-LABEL: func.func @moe_permute
// CHECK-SAME: (%[[X:.*]]: tensor<8x32xbf16>, %[[I:.*]]: tensor<8x2xi64>, %[[C:.*]]: tensor<32xi64>)
func.func @moe_permute(%x: tensor<8x32xbf16>, %ids: tensor<8x2xi64>, %counts: tensor<32xi64>) -> (tensor<16x32xf32>, tensor<4xi64>, tensor<4x2xi64>, tensor<16xi64>) {
  // CHECK: dist.moe_permute %[[X]], %[[I]], %[[C]] on @experts mesh_axes = ["ep"] capacity = 3 : tensor<8x32xbf16>, tensor<8x2xi64>, tensor<32xi64> -> tensor<16x32xf32>, tensor<4xi64>, tensor<4x2xi64>, tensor<16xi64>, tensor<4xi64>
  %rows, %sc, %layout, %pairs, %rc = dist.moe_permute %x, %ids, %counts on @experts mesh_axes = ["ep"] capacity = 3 : tensor<8x32xbf16>, tensor<8x2xi64>, tensor<32xi64> -> tensor<16x32xf32>, tensor<4xi64>, tensor<4x2xi64>, tensor<16xi64>, tensor<4xi64>
  // Without a capacity nothing is dropped.
  // CHECK: dist.moe_permute %[[X]], %[[I]], %[[C]] on @experts mesh_axes = ["ep"] : tensor<8x32xbf16>
  %r2, %sc2, %l2, %p2, %rc2 = dist.moe_permute %x, %ids, %counts on @experts mesh_axes = ["ep"] : tensor<8x32xbf16>, tensor<8x2xi64>, tensor<32xi64> -> tensor<16x32xf32>, tensor<4xi64>, tensor<4x2xi64>, tensor<16xi64>, tensor<4xi64>
  return %rows, %sc, %layout, %pairs : tensor<16x32xf32>, tensor<4xi64>, tensor<4x2xi64>, tensor<16xi64>
}

// CHECK-LABEL: func.func @async
// CHECK-SAME: (%[[X:.*]]: tensor<8x16xf32>)
func.func @async(%x: tensor<8x16xf32>) {
  // CHECK: %[[A:.*]] = dist.all_reduce_start %[[X]] on @mesh mesh_axes = ["tp"] reduction = max : tensor<8x16xf32> -> !dist.async<tensor<8x16xf32>>
  %a = dist.all_reduce_start %x on @mesh mesh_axes = ["tp"] reduction = max : tensor<8x16xf32> -> !dist.async<tensor<8x16xf32>>
  // CHECK: %[[G:.*]] = dist.all_gather_start %[[X]] on @mesh mesh_axes = ["tp"] gather_axis = 1 : tensor<8x16xf32> -> !dist.async<tensor<8x64xf32>>
  %g = dist.all_gather_start %x on @mesh mesh_axes = ["tp"] gather_axis = 1 : tensor<8x16xf32> -> !dist.async<tensor<8x64xf32>>
  // CHECK: %[[S:.*]] = dist.reduce_scatter_start %[[X]] on @mesh mesh_axes = ["tp"] scatter_axis = 0 : tensor<8x16xf32> -> !dist.async<tensor<2x16xf32>>
  %s = dist.reduce_scatter_start %x on @mesh mesh_axes = ["tp"] scatter_axis = 0 : tensor<8x16xf32> -> !dist.async<tensor<2x16xf32>>
  // CHECK: %[[T:.*]] = dist.all_to_all_start %[[X]] on @mesh mesh_axes = ["tp"] split_axis = 1 concat_axis = 0 : tensor<8x16xf32> -> !dist.async<tensor<32x4xf32>>
  %t = dist.all_to_all_start %x on @mesh mesh_axes = ["tp"] split_axis = 1 concat_axis = 0 : tensor<8x16xf32> -> !dist.async<tensor<32x4xf32>>
  // CHECK: %[[SEND:.*]] = dist.send_start %[[X]] on @mesh mesh_axes = ["pp"] peer = 1 : tensor<8x16xf32> -> !dist.async
  %send = dist.send_start %x on @mesh mesh_axes = ["pp"] peer = 1 : tensor<8x16xf32> -> !dist.async
  // CHECK: %[[RECV:.*]] = dist.recv_start on @mesh mesh_axes = ["pp"] peer = 0 : !dist.async<tensor<8x16xf32>>
  %recv = dist.recv_start on @mesh mesh_axes = ["pp"] peer = 0 : !dist.async<tensor<8x16xf32>>
  // CHECK: dist.wait %[[A]] : !dist.async<tensor<8x16xf32>>
  %0 = dist.wait %a : !dist.async<tensor<8x16xf32>>
  // CHECK: dist.wait %[[G]] : !dist.async<tensor<8x64xf32>>
  %1 = dist.wait %g : !dist.async<tensor<8x64xf32>>
  // CHECK: dist.wait %[[S]] : !dist.async<tensor<2x16xf32>>
  %2 = dist.wait %s : !dist.async<tensor<2x16xf32>>
  // CHECK: dist.wait %[[T]] : !dist.async<tensor<32x4xf32>>
  %3 = dist.wait %t : !dist.async<tensor<32x4xf32>>
  // CHECK: dist.wait %[[SEND]] : !dist.async
  dist.wait %send : !dist.async
  // CHECK: dist.wait %[[RECV]] : !dist.async<tensor<8x16xf32>>
  %4 = dist.wait %recv : !dist.async<tensor<8x16xf32>>
  return
}
