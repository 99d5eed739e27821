// RUN: parc-opt %s --split-input-file --convert-nn-to-rt | FileCheck %s

// The steps of an expert-parallel nn.moe each become one kernel on their
// operands and results, attributes kept (the group of the permutation and
// the exchanges; counts are buffers, not attributes). 2 ranks, 8 tokens
// (4 per rank), top-2 of 4 experts (2 per rank): 8 rows out, at most
// 8 x min(2, 2) = 16 rows in.
// CHECK-LABEL: func.func @main()
// CHECK: %[[X:.*]] = rt.input 0 "x" : memref<8x16xf32>
// CHECK: %[[L:.*]] = rt.input 1 "logits" : memref<8x4xf32>
// CHECK: %[[W1:.*]] = rt.weight "const.part" {{.*}} : memref<2x16x24xf32>
// CHECK: %[[W2:.*]] = rt.weight "const.part_1" {{.*}} : memref<2x24x16xf32>
// CHECK: rt.kernel "local_chunk" ins(%[[X]] : memref<8x16xf32>) outs(%[[XS:.*]] : memref<4x16xf32>)
// CHECK: rt.kernel "local_chunk" ins(%[[L]] : memref<8x4xf32>) outs(%[[LS:.*]] : memref<4x4xf32>)
// CHECK: rt.kernel "moe_route" ins(%[[LS]] : memref<4x4xf32>) outs(%[[IDS:.*]], %[[W:.*]], %[[N:.*]] : memref<4x2xi64>, memref<4x2xf32>, memref<4xi64>) {normalize = true, top_k = 2 : i64}
// CHECK: rt.kernel "all_gather" ins(%[[N]] : memref<4xi64>) outs(%[[ALL:.*]] : memref<8xi64>) {gather_axis = 0 : i64
// CHECK: rt.kernel "moe_permute" ins(%[[XS]], %[[IDS]], %[[ALL]] : memref<4x16xf32>, memref<4x2xi64>, memref<8xi64>) outs(%[[ROWS:.*]], %[[SC:.*]], %[[LAY:.*]], %[[PAIRS:.*]], %[[RC:.*]] : memref<8x16xf32>, memref<2xi64>, memref<2x2xi64>, memref<8xi64>, memref<2xi64>) {capacity = 0 : i64, mesh = @mesh, mesh_axes = ["ep"]}
// CHECK: rt.kernel "all_to_all_v" ins(%[[ROWS]], %[[SC]], %[[RC]] : memref<8x16xf32>, memref<2xi64>, memref<2xi64>) outs(%[[IN:.*]] : memref<16x16xf32>) {axis = 0 : i64, mesh = @mesh, mesh_axes = ["ep"]}
// CHECK: rt.kernel "moe_experts" ins(%[[IN]], %[[LAY]], %[[W1]], %[[W2]] : memref<16x16xf32>, memref<2x2xi64>, memref<2x16x24xf32>, memref<2x24x16xf32>) outs(%[[OUT:.*]] : memref<16x16xf32>)
// The combine started (as dist-overlap places it): an rt.start on the same
// buffers, the result read after the rt.wait.
// CHECK: %[[REQ:.*]] = rt.start "all_to_all_v" ins(%[[OUT]], %[[RC]], %[[SC]] : memref<16x16xf32>, memref<2xi64>, memref<2xi64>) outs(%[[BACK:.*]] : memref<8x16xf32>) {axis = 0 : i64, mesh = @mesh, mesh_axes = ["ep"]}
// CHECK: rt.wait %[[REQ]]
// CHECK: rt.kernel "moe_combine" ins(%[[BACK]], %[[PAIRS]], %[[W]] : memref<8x16xf32>, memref<8xi64>, memref<4x2xf32>) outs(%[[MINE:.*]] : memref<4x16xf32>)
// CHECK: rt.kernel "all_gather" ins(%[[MINE]] : memref<4x16xf32>)
dist.mesh @mesh(shape = 2, axes = ["ep"])
func.func @main(%x: tensor<8x16xf32> {onnx.name = "x"}, %l: tensor<8x4xf32> {onnx.name = "logits"}) -> (tensor<8x16xf32> {onnx.name = "y"}) {
  %c1 = arith.constant dense<0.5> : tensor<4x16x24xf32>
  %c2 = arith.constant dense<0.25> : tensor<4x24x16xf32>
  %w1 = dist.local_part %c1 to <@mesh, [["ep"]]> : tensor<4x16x24xf32> -> tensor<2x16x24xf32>
  %w2 = dist.local_part %c2 to <@mesh, [["ep"]]> : tensor<4x24x16xf32> -> tensor<2x24x16xf32>
  %xs = dist.local_part %x to <@mesh, [["ep"]]> : tensor<8x16xf32> -> tensor<4x16xf32>
  %ls = dist.local_part %l to <@mesh, [["ep"]]> : tensor<8x4xf32> -> tensor<4x4xf32>
  %ids, %w, %n = nn.moe_route %ls {top_k = 2 : i64} : tensor<4x4xf32> -> (tensor<4x2xi64>, tensor<4x2xf32>, tensor<4xi64>)
  %all = dist.all_gather %n on @mesh mesh_axes = ["ep"] gather_axis = 0 : tensor<4xi64> -> tensor<8xi64>
  %rows, %sc, %lay, %pairs, %rc = dist.moe_permute %xs, %ids, %all on @mesh mesh_axes = ["ep"] : tensor<4x16xf32>, tensor<4x2xi64>, tensor<8xi64> -> tensor<8x16xf32>, tensor<2xi64>, tensor<2x2xi64>, tensor<8xi64>, tensor<2xi64>
  %in = dist.all_to_all_v %rows, %sc, %rc on @mesh mesh_axes = ["ep"] axis = 0 : tensor<8x16xf32>, tensor<2xi64>, tensor<2xi64> -> tensor<16x16xf32>
  %out = nn.moe_experts %in, %lay, %w1, %w2 : (tensor<16x16xf32>, tensor<2x2xi64>, tensor<2x16x24xf32>, tensor<2x24x16xf32>) -> tensor<16x16xf32>
  %a = dist.all_to_all_v_start %out, %rc, %sc on @mesh mesh_axes = ["ep"] axis = 0 : tensor<16x16xf32>, tensor<2xi64>, tensor<2xi64> -> !dist.async<tensor<8x16xf32>>
  %back = dist.wait %a : !dist.async<tensor<8x16xf32>>
  %mine = nn.moe_combine %back, %pairs, %w : (tensor<8x16xf32>, tensor<8xi64>, tensor<4x2xf32>) -> tensor<4x16xf32>
  %y = dist.all_gather %mine on @mesh mesh_axes = ["ep"] gather_axis = 0 : tensor<4x16xf32> -> tensor<8x16xf32>
  return %y : tensor<8x16xf32>
}

// -----

// A part of a part of a constant (an expert block, then its ffn columns) is
// one weight cut twice, inner cut first: no weight for the inner part.
// CHECK-LABEL: func.func @main()
// CHECK-NOT: rt.weight
// CHECK: %[[W:.*]] = rt.weight "const.part" {shard = [#dist.sharding<@mesh, {{\[\[}}"ep"]]>, #dist.sharding<@mesh, {{\[\[}}], [], ["tp"]]>], value = dense<5.000000e-01> : tensor<4x16x24xf32>} : memref<2x16x12xf32>
// CHECK-NOT: rt.weight
// CHECK: rt.kernel "copy" ins(%[[W]]
dist.mesh @mesh(shape = 2x2, axes = ["ep", "tp"])
func.func @main() -> (tensor<2x16x12xf32> {onnx.name = "w"}) {
  %c = arith.constant dense<0.5> : tensor<4x16x24xf32>
  %e = dist.local_part %c to <@mesh, [["ep"]]> : tensor<4x16x24xf32> -> tensor<2x16x24xf32>
  %w = dist.local_part %e to <@mesh, [[], [], ["tp"]]> : tensor<2x16x24xf32> -> tensor<2x16x12xf32>
  return %w : tensor<2x16x12xf32>
}
