// RUN: parc-opt %s --split-input-file --dist-overlap='chunks=1' | FileCheck %s
// RUN: parc-opt %s --split-input-file --dist-overlap='chunks=1 explain=true cluster=%S/Inputs/overlap-fast-link.json' -o /dev/null 2>&1 | FileCheck %s --check-prefix=WHY

// An expert-parallel MoE layer's two all_to_all_v (2 ranks, 4 experts, 4
// tokens top-2: 8 rows out, at most 16 in). Each is started as soon as its
// rows and both counts exist (right after the permutation, and after the
// experts) and waited just before its first use: the independent relu and
// tanh run while rows travel.
// CHECK-LABEL: func.func @moe_layer
// CHECK: %[[ROWS:.*]], %[[SC:.*]], %[[LAY:.*]], %[[PAIRS:.*]], %[[RC:.*]] = dist.moe_permute
// CHECK-NEXT: %[[D:.*]] = dist.all_to_all_v_start %[[ROWS]], %[[SC]], %[[RC]] on @mesh mesh_axes = ["ep"] axis = 0 : tensor<8x32xf32>, tensor<2xi64>, tensor<2xi64> -> !dist.async<tensor<16x32xf32>>
// CHECK-NEXT: nn.relu
// CHECK-NEXT: %[[IN:.*]] = dist.wait %[[D]] : !dist.async<tensor<16x32xf32>>
// CHECK-NEXT: %[[OUT:.*]] = nn.moe_experts %[[IN]], %[[LAY]]
// CHECK-NEXT: %[[C:.*]] = dist.all_to_all_v_start %[[OUT]], %[[RC]], %[[SC]] on @mesh mesh_axes = ["ep"] axis = 0 : tensor<16x32xf32>, tensor<2xi64>, tensor<2xi64> -> !dist.async<tensor<8x32xf32>>
// CHECK-NEXT: nn.tanh
// CHECK-NEXT: %[[BACK:.*]] = dist.wait %[[C]] : !dist.async<tensor<8x32xf32>>
// CHECK-NEXT: nn.moe_combine %[[BACK]], %[[PAIRS]]
// CHECK-NOT: dist.all_to_all_v %
// The cost model prices each as an all-to-all of its larger buffer, 16 x 32
// f32 = 2048 B, over 2 ranks on the fast link: 1 step of 0.5 us + 1/2 of
// 2048 B at 8 GB/s (0.128 us) = 0.63 us.
// WHY: remark: {{.*}}(2048 B): blocking 0.63 us exposed, started early {{[0-9.]+}} us exposed
// WHY: remark: {{.*}}(2048 B): blocking 0.63 us exposed, started early {{[0-9.]+}} us exposed
dist.mesh @mesh(shape = 2, axes = ["ep"])
func.func @moe_layer(%x: tensor<4x32xf32>, %ids: tensor<4x2xi64>, %counts: tensor<8xi64>, %w: tensor<4x2xf32>, %fc1: tensor<2x32x64xf32>, %fc2: tensor<2x64x32xf32>, %other: tensor<8x32xf32>) -> (tensor<4x32xf32>, tensor<8x32xf32>, tensor<8x32xf32>) {
  %rows, %sc, %lay, %pairs, %rc = dist.moe_permute %x, %ids, %counts on @mesh mesh_axes = ["ep"] : tensor<4x32xf32>, tensor<4x2xi64>, tensor<8xi64> -> tensor<8x32xf32>, tensor<2xi64>, tensor<2x2xi64>, tensor<8xi64>, tensor<2xi64>
  %in = dist.all_to_all_v %rows, %sc, %rc on @mesh mesh_axes = ["ep"] axis = 0 : tensor<8x32xf32>, tensor<2xi64>, tensor<2xi64> -> tensor<16x32xf32>
  %a = nn.relu %other : tensor<8x32xf32>
  %out = nn.moe_experts %in, %lay, %fc1, %fc2 : (tensor<16x32xf32>, tensor<2x2xi64>, tensor<2x32x64xf32>, tensor<2x64x32xf32>) -> tensor<16x32xf32>
  %back = dist.all_to_all_v %out, %rc, %sc on @mesh mesh_axes = ["ep"] axis = 0 : tensor<16x32xf32>, tensor<2xi64>, tensor<2xi64> -> tensor<8x32xf32>
  %b = nn.tanh %other : tensor<8x32xf32>
  %y = nn.moe_combine %back, %pairs, %w : (tensor<8x32xf32>, tensor<8xi64>, tensor<4x2xf32>) -> tensor<4x32xf32>
  return %y, %a, %b : tensor<4x32xf32>, tensor<8x32xf32>, tensor<8x32xf32>
}

// -----

// Earliest start: after the last of its operands. The rows are an argument
// but the counts come from the permutation, so the exchange starts after
// it, not at the top.
// CHECK-LABEL: func.func @counts_later
// CHECK: nn.relu
// CHECK-NEXT: %[[ROWS:.*]], %[[SC:.*]], %{{.*}}, %{{.*}}, %[[RC:.*]] = dist.moe_permute
// CHECK-NEXT: dist.all_to_all_v_start %{{.*}}, %[[SC]], %[[RC]]
// CHECK-NEXT: dist.wait
// CHECK-NEXT: return
dist.mesh @mesh(shape = 2, axes = ["ep"])
func.func @counts_later(%x: tensor<4x32xf32>, %ids: tensor<4x2xi64>, %counts: tensor<8xi64>, %rows: tensor<8x32xf32>) -> (tensor<16x32xf32>, tensor<4x32xf32>) {
  %a = nn.relu %x : tensor<4x32xf32>
  %r, %sc, %lay, %pairs, %rc = dist.moe_permute %a, %ids, %counts on @mesh mesh_axes = ["ep"] : tensor<4x32xf32>, tensor<4x2xi64>, tensor<8xi64> -> tensor<8x32xf32>, tensor<2xi64>, tensor<2x2xi64>, tensor<8xi64>, tensor<2xi64>
  %in = dist.all_to_all_v %rows, %sc, %rc on @mesh mesh_axes = ["ep"] axis = 0 : tensor<8x32xf32>, tensor<2xi64>, tensor<2xi64> -> tensor<16x32xf32>
  return %in, %a : tensor<16x32xf32>, tensor<4x32xf32>
}

// -----

// Two micro-batch chains (dist-micro-batch's tags): chain 0 runs until it
// would wait for its dispatch; chain 1 plans and starts its own while chain
// 0's rows travel, then chain 0's experts run while chain 1's rows travel,
// and so on for the combines.
// CHECK-LABEL: func.func @two_chains
// CHECK: dist.moe_permute {{.*}}dist.micro_batch = 0
// CHECK-NEXT: %[[D0:.*]] = dist.all_to_all_v_start {{.*}}dist.micro_batch = 0
// CHECK-NEXT: dist.moe_permute {{.*}}dist.micro_batch = 1
// CHECK-NEXT: %[[D1:.*]] = dist.all_to_all_v_start {{.*}}dist.micro_batch = 1
// CHECK-NEXT: dist.wait %[[D0]]
// CHECK-NEXT: nn.moe_experts {{.*}}dist.micro_batch = 0
// CHECK-NEXT: %[[C0:.*]] = dist.all_to_all_v_start {{.*}}dist.micro_batch = 0
// CHECK-NEXT: dist.wait %[[D1]]
// CHECK-NEXT: nn.moe_experts {{.*}}dist.micro_batch = 1
// CHECK-NEXT: %[[C1:.*]] = dist.all_to_all_v_start {{.*}}dist.micro_batch = 1
// CHECK-NEXT: dist.wait %[[C0]]
// CHECK-NEXT: nn.moe_combine {{.*}}dist.micro_batch = 0
// CHECK-NEXT: dist.wait %[[C1]]
// CHECK-NEXT: nn.moe_combine {{.*}}dist.micro_batch = 1
// With explain: the four exchanges (0.63 us each, as above) are all left
// in flight across a switch: 2.51 us. What hides them is the other chain's
// experts, priced at their static bound: 16 rows through 2 products of
// 32 x 64, 2 · 2 · 16 · 32 · 64 = 131072 FLOP at 1 TFLOP/s = 0.131 us
// (above their 36896 B at 1000 GB/s), twice; plus a combine of 1.6 ns.
// WHY: remark: interleaved 2 micro-batch chains with 4 switch(es): the other chain's compute hides 0.26 us of the 2.51 us of collectives left in flight
dist.mesh @mesh(shape = 2, axes = ["ep"])
func.func @two_chains(%x0: tensor<4x32xf32>, %x1: tensor<4x32xf32>, %ids: tensor<4x2xi64>, %counts: tensor<8xi64>, %w: tensor<4x2xf32>, %fc1: tensor<2x32x64xf32>, %fc2: tensor<2x64x32xf32>) -> (tensor<4x32xf32>, tensor<4x32xf32>) {
  %rows0, %sc0, %lay0, %pairs0, %rc0 = dist.moe_permute %x0, %ids, %counts on @mesh mesh_axes = ["ep"] {dist.micro_batch = 0 : i64} : tensor<4x32xf32>, tensor<4x2xi64>, tensor<8xi64> -> tensor<8x32xf32>, tensor<2xi64>, tensor<2x2xi64>, tensor<8xi64>, tensor<2xi64>
  %in0 = dist.all_to_all_v %rows0, %sc0, %rc0 on @mesh mesh_axes = ["ep"] axis = 0 {dist.micro_batch = 0 : i64} : tensor<8x32xf32>, tensor<2xi64>, tensor<2xi64> -> tensor<16x32xf32>
  %out0 = nn.moe_experts %in0, %lay0, %fc1, %fc2 {dist.micro_batch = 0 : i64} : (tensor<16x32xf32>, tensor<2x2xi64>, tensor<2x32x64xf32>, tensor<2x64x32xf32>) -> tensor<16x32xf32>
  %back0 = dist.all_to_all_v %out0, %rc0, %sc0 on @mesh mesh_axes = ["ep"] axis = 0 {dist.micro_batch = 0 : i64} : tensor<16x32xf32>, tensor<2xi64>, tensor<2xi64> -> tensor<8x32xf32>
  %y0 = nn.moe_combine %back0, %pairs0, %w {dist.micro_batch = 0 : i64} : (tensor<8x32xf32>, tensor<8xi64>, tensor<4x2xf32>) -> tensor<4x32xf32>
  %rows1, %sc1, %lay1, %pairs1, %rc1 = dist.moe_permute %x1, %ids, %counts on @mesh mesh_axes = ["ep"] {dist.micro_batch = 1 : i64} : tensor<4x32xf32>, tensor<4x2xi64>, tensor<8xi64> -> tensor<8x32xf32>, tensor<2xi64>, tensor<2x2xi64>, tensor<8xi64>, tensor<2xi64>
  %in1 = dist.all_to_all_v %rows1, %sc1, %rc1 on @mesh mesh_axes = ["ep"] axis = 0 {dist.micro_batch = 1 : i64} : tensor<8x32xf32>, tensor<2xi64>, tensor<2xi64> -> tensor<16x32xf32>
  %out1 = nn.moe_experts %in1, %lay1, %fc1, %fc2 {dist.micro_batch = 1 : i64} : (tensor<16x32xf32>, tensor<2x2xi64>, tensor<2x32x64xf32>, tensor<2x64x32xf32>) -> tensor<16x32xf32>
  %back1 = dist.all_to_all_v %out1, %rc1, %sc1 on @mesh mesh_axes = ["ep"] axis = 0 {dist.micro_batch = 1 : i64} : tensor<16x32xf32>, tensor<2xi64>, tensor<2xi64> -> tensor<8x32xf32>
  %y1 = nn.moe_combine %back1, %pairs1, %w {dist.micro_batch = 1 : i64} : (tensor<8x32xf32>, tensor<8xi64>, tensor<4x2xf32>) -> tensor<4x32xf32>
  return %y0, %y1 : tensor<4x32xf32>, tensor<4x32xf32>
}
