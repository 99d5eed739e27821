// RUN: parc-opt %s --split-input-file --dist-overlap='chunks=1' | FileCheck %s
// RUN: parc-opt %s --split-input-file --dist-overlap='chunks=1 interleave=false' | FileCheck %s --check-prefix=OFF
// RUN: parc-opt %s --split-input-file --dist-overlap='chunks=1 memory-budget=512' | FileCheck %s --check-prefix=BUDGET
// RUN: parc-opt %s --split-input-file --dist-overlap='chunks=1 explain=true cluster=%S/Inputs/overlap-fast-link.json' -o /dev/null 2>&1 | FileCheck %s --check-prefix=WHY

// Two micro-batch chains (dist-micro-batch's tags), each a product, its
// all-reduce, a second product and its all-reduce. Chain 0 runs until it
// would wait for its first all-reduce; chain 1 computes its first product
// while that is in flight, then chain 0 resumes while chain 1's is, and so
// on: every all-reduce has the other chain's product behind it. The
// concat of both chains comes last. Four switches: 0→1, 1→0, 0→1, 1→0.
// With explain, on the fast-link cluster each all-reduce of 256 B over 2
// ranks takes 2 · 0.5 us + 256 B / 8 GB/s = 1.032 us, and all four are left
// in flight across a switch: 4.128 us (the tiny products hide little of it).
// WHY: remark: interleaved 2 micro-batch chains with 4 switch(es): the other chain's compute hides {{[0-9.]+}} us of the 4.13 us of collectives left in flight
// CHECK: module attributes {dist.overlap = {{{.*}}interleaved = 4
// CHECK-LABEL: func.func @two_chains
// CHECK: %[[X0:.*]] = nn.slice {{.*}}dist.micro_batch = 0
// CHECK-NEXT: %[[A0:.*]] = nn.linear %[[X0]]
// CHECK-NEXT: %[[S0:.*]] = dist.all_reduce_start %[[A0]] {{.*}}dist.micro_batch = 0
// CHECK-NEXT: %[[X1:.*]] = nn.slice {{.*}}dist.micro_batch = 1
// CHECK-NEXT: %[[A1:.*]] = nn.linear %[[X1]]
// CHECK-NEXT: %[[S1:.*]] = dist.all_reduce_start %[[A1]] {{.*}}dist.micro_batch = 1
// CHECK-NEXT: %[[R0:.*]] = dist.wait %[[S0]]
// CHECK-NEXT: %[[B0:.*]] = nn.relu %[[R0]]
// CHECK-NEXT: %[[C0:.*]] = nn.linear %[[B0]]
// CHECK-NEXT: %[[T0:.*]] = dist.all_reduce_start %[[C0]]
// CHECK-NEXT: %[[R1:.*]] = dist.wait %[[S1]]
// CHECK-NEXT: %[[B1:.*]] = nn.relu %[[R1]]
// CHECK-NEXT: %[[C1:.*]] = nn.linear %[[B1]]
// CHECK-NEXT: %[[T1:.*]] = dist.all_reduce_start %[[C1]]
// CHECK-NEXT: %[[U0:.*]] = dist.wait %[[T0]]
// CHECK-NEXT: %[[Y0:.*]] = nn.add %[[U0]], %[[X0]]
// CHECK-NEXT: %[[U1:.*]] = dist.wait %[[T1]]
// CHECK-NEXT: %[[Y1:.*]] = nn.add %[[U1]], %[[X1]]
// CHECK-NEXT: nn.concat %[[Y0]], %[[Y1]]
// Without interleaving, one chain after the other.
// OFF-LABEL: func.func @two_chains
// OFF: dist.all_reduce_start {{.*}}dist.micro_batch = 0
// OFF-NEXT: dist.wait
// OFF: dist.all_reduce_start {{.*}}dist.micro_batch = 0
// OFF-NEXT: dist.wait
// OFF-NEXT: nn.add
// OFF-NEXT: nn.slice {{.*}}dist.micro_batch = 1
// A budget of 512 B holds one all-reduce in flight (256 B in, 256 B out):
// chain 0 leaves its first one in flight, chain 1 then runs to its end
// (leaving a second in flight would exceed the budget), and chain 0
// finishes.
// BUDGET-LABEL: func.func @two_chains
// BUDGET: %[[S0:.*]] = dist.all_reduce_start {{.*}}dist.micro_batch = 0
// BUDGET-NEXT: nn.slice {{.*}}dist.micro_batch = 1
// BUDGET: dist.all_reduce_start {{.*}}dist.micro_batch = 1
// BUDGET-NEXT: dist.wait
// BUDGET: dist.all_reduce_start {{.*}}dist.micro_batch = 1
// BUDGET-NEXT: dist.wait
// BUDGET-NEXT: nn.add {{.*}}dist.micro_batch = 1
// BUDGET-NEXT: dist.wait %[[S0]]
module {
  dist.mesh @mesh(shape = 2, axes = ["tp"])
  func.func @two_chains(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
    %w = arith.constant dense<0.5> : tensor<16x16xf32>
    %x0 = nn.slice %x {dist.micro_batch = 0 : i64, starts = array<i64: 0, 0>, steps = array<i64: 1, 1>} : tensor<8x16xf32> -> tensor<4x16xf32>
    %a0 = nn.linear %x0, %w {dist.micro_batch = 0 : i64} : (tensor<4x16xf32>, tensor<16x16xf32>) -> tensor<4x16xf32>
    %r0 = dist.all_reduce %a0 on @mesh mesh_axes = ["tp"] {dist.micro_batch = 0 : i64} : tensor<4x16xf32>
    %b0 = nn.relu %r0 {dist.micro_batch = 0 : i64} : tensor<4x16xf32>
    %c0 = nn.linear %b0, %w {dist.micro_batch = 0 : i64} : (tensor<4x16xf32>, tensor<16x16xf32>) -> tensor<4x16xf32>
    %s0 = dist.all_reduce %c0 on @mesh mesh_axes = ["tp"] {dist.micro_batch = 0 : i64} : tensor<4x16xf32>
    %y0 = nn.add %s0, %x0 {dist.micro_batch = 0 : i64} : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
    %x1 = nn.slice %x {dist.micro_batch = 1 : i64, starts = array<i64: 4, 0>, steps = array<i64: 1, 1>} : tensor<8x16xf32> -> tensor<4x16xf32>
    %a1 = nn.linear %x1, %w {dist.micro_batch = 1 : i64} : (tensor<4x16xf32>, tensor<16x16xf32>) -> tensor<4x16xf32>
    %r1 = dist.all_reduce %a1 on @mesh mesh_axes = ["tp"] {dist.micro_batch = 1 : i64} : tensor<4x16xf32>
    %b1 = nn.relu %r1 {dist.micro_batch = 1 : i64} : tensor<4x16xf32>
    %c1 = nn.linear %b1, %w {dist.micro_batch = 1 : i64} : (tensor<4x16xf32>, tensor<16x16xf32>) -> tensor<4x16xf32>
    %s1 = dist.all_reduce %c1 on @mesh mesh_axes = ["tp"] {dist.micro_batch = 1 : i64} : tensor<4x16xf32>
    %y1 = nn.add %s1, %x1 {dist.micro_batch = 1 : i64} : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
    %y = nn.concat %y0, %y1 {axis = 0 : i64} : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<8x16xf32>
    return %y : tensor<8x16xf32>
  }
}

// -----

// A pipeline stage (dist-pipeline's tags): chain 1 sends its input at
// once, chain 0 only at its end. Sends to one peer are matched in order,
// so chain 1's send must not overtake chain 0's: when chain 0 leaves its
// all-reduce in flight, chain 1 computes up to its send and no further,
// chain 0 finishes (sends), then chain 1 sends. The send waits stay last.
// CHECK-LABEL: func.func @sends_keep_their_order
// CHECK: %[[S0:.*]] = dist.all_reduce_start {{.*}}dist.micro_batch = 0
// CHECK-NEXT: %[[X1:.*]] = nn.slice {{.*}}dist.micro_batch = 1
// CHECK-NEXT: %[[R0:.*]] = dist.wait %[[S0]]
// CHECK-NEXT: nn.add %[[R0]]
// CHECK-NEXT: %[[T0:.*]] = dist.send_start {{.*}}dist.micro_batch = 0
// CHECK-NEXT: %[[T1:.*]] = dist.send_start %[[X1]] {{.*}}dist.micro_batch = 1
// CHECK: dist.wait %[[T0]]
// CHECK-NEXT: dist.wait %[[T1]]
module {
  dist.mesh @mesh(shape = 2x2, axes = ["pp", "tp"])
  func.func @sends_keep_their_order(%x: tensor<8x16xf32>) {
    %w = arith.constant dense<0.5> : tensor<16x16xf32>
    %x0 = nn.slice %x {dist.micro_batch = 0 : i64, starts = array<i64: 0, 0>, steps = array<i64: 1, 1>} : tensor<8x16xf32> -> tensor<4x16xf32>
    %a0 = nn.linear %x0, %w {dist.micro_batch = 0 : i64} : (tensor<4x16xf32>, tensor<16x16xf32>) -> tensor<4x16xf32>
    %r0 = dist.all_reduce %a0 on @mesh mesh_axes = ["tp"] {dist.micro_batch = 0 : i64} : tensor<4x16xf32>
    %y0 = nn.add %r0, %x0 {dist.micro_batch = 0 : i64} : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
    %t0 = dist.send_start %y0 on @mesh mesh_axes = ["pp"] peer = 1 {dist.micro_batch = 0 : i64} : tensor<4x16xf32> -> !dist.async
    %x1 = nn.slice %x {dist.micro_batch = 1 : i64, starts = array<i64: 4, 0>, steps = array<i64: 1, 1>} : tensor<8x16xf32> -> tensor<4x16xf32>
    %t1 = dist.send_start %x1 on @mesh mesh_axes = ["pp"] peer = 1 {dist.micro_batch = 1 : i64} : tensor<4x16xf32> -> !dist.async
    %a1 = nn.linear %x1, %w {dist.micro_batch = 1 : i64} : (tensor<4x16xf32>, tensor<16x16xf32>) -> tensor<4x16xf32>
    %r1 = dist.all_reduce %a1 on @mesh mesh_axes = ["tp"] {dist.micro_batch = 1 : i64} : tensor<4x16xf32>
    %t2 = dist.send_start %r1 on @mesh mesh_axes = ["pp"] peer = 1 {dist.micro_batch = 1 : i64} : tensor<4x16xf32> -> !dist.async
    dist.wait %t0 : !dist.async
    dist.wait %t1 : !dist.async
    dist.wait %t2 : !dist.async
    return
  }
}

// -----

// A later pipeline stage: each chain starts by waiting for its receive
// (posted up front). Switching to chain 1 before its data may have arrived
// would stall the stage, so the chains run one after the other.
// CHECK: module attributes {dist.overlap = {{{.*}}interleaved = 0
// CHECK-LABEL: func.func @receives_are_not_waited_early
// CHECK: %[[Q0:.*]] = dist.recv_start
// CHECK-NEXT: %[[Q1:.*]] = dist.recv_start
// CHECK-NEXT: dist.wait %[[Q0]]
// CHECK-NEXT: nn.linear
// CHECK-NEXT: %[[S0:.*]] = dist.all_reduce_start
// CHECK-NEXT: dist.wait %[[S0]]
// CHECK-NEXT: nn.relu
// CHECK-NEXT: dist.wait %[[Q1]]
module {
  dist.mesh @mesh(shape = 2x2, axes = ["pp", "tp"])
  func.func @receives_are_not_waited_early() -> tensor<8x16xf32> {
    %w = arith.constant dense<0.5> : tensor<16x16xf32>
    %q0 = dist.recv_start on @mesh mesh_axes = ["pp"] peer = 0 : !dist.async<tensor<4x16xf32>>
    %q1 = dist.recv_start on @mesh mesh_axes = ["pp"] peer = 0 : !dist.async<tensor<4x16xf32>>
    %x0 = dist.wait %q0 {dist.micro_batch = 0 : i64} : !dist.async<tensor<4x16xf32>>
    %a0 = nn.linear %x0, %w {dist.micro_batch = 0 : i64} : (tensor<4x16xf32>, tensor<16x16xf32>) -> tensor<4x16xf32>
    %r0 = dist.all_reduce %a0 on @mesh mesh_axes = ["tp"] {dist.micro_batch = 0 : i64} : tensor<4x16xf32>
    %y0 = nn.relu %r0 {dist.micro_batch = 0 : i64} : tensor<4x16xf32>
    %x1 = dist.wait %q1 {dist.micro_batch = 1 : i64} : !dist.async<tensor<4x16xf32>>
    %a1 = nn.linear %x1, %w {dist.micro_batch = 1 : i64} : (tensor<4x16xf32>, tensor<16x16xf32>) -> tensor<4x16xf32>
    %r1 = dist.all_reduce %a1 on @mesh mesh_axes = ["tp"] {dist.micro_batch = 1 : i64} : tensor<4x16xf32>
    %y1 = nn.relu %r1 {dist.micro_batch = 1 : i64} : tensor<4x16xf32>
    %y = nn.concat %y0, %y1 {axis = 0 : i64} : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<8x16xf32>
    return %y : tensor<8x16xf32>
  }
}

// -----

// An interleaved virtual stage: each chain sends its first chunk's output
// and later waits for what the other stage computed from it. Stage 1 sends
// micro-batch 0's reply only after it got both sends (the pipeline's
// order), so waiting for micro-batch 0's reply before micro-batch 1 has
// sent would deadlock: sends and receive waits keep their program order.
// CHECK-LABEL: func.func @receive_waits_keep_their_order
// CHECK: %[[Q0:.*]] = dist.recv_start
// CHECK: %[[T0:.*]] = dist.send_start {{.*}}dist.micro_batch = 0
// CHECK: %[[T1:.*]] = dist.send_start {{.*}}dist.micro_batch = 1
// CHECK-NEXT: %[[V0:.*]] = dist.wait %[[Q0]]
// CHECK-NEXT: nn.add %[[V0]]
module {
  dist.mesh @mesh(shape = 2x2, axes = ["pp", "tp"])
  func.func @receive_waits_keep_their_order(%x: tensor<8x16xf32>) -> tensor<8x16xf32> {
    %w = arith.constant dense<0.5> : tensor<16x16xf32>
    %q0 = dist.recv_start on @mesh mesh_axes = ["pp"] peer = 1 : !dist.async<tensor<4x16xf32>>
    %q1 = dist.recv_start on @mesh mesh_axes = ["pp"] peer = 1 : !dist.async<tensor<4x16xf32>>
    %x0 = nn.slice %x {dist.micro_batch = 0 : i64, starts = array<i64: 0, 0>, steps = array<i64: 1, 1>} : tensor<8x16xf32> -> tensor<4x16xf32>
    %a0 = nn.linear %x0, %w {dist.micro_batch = 0 : i64} : (tensor<4x16xf32>, tensor<16x16xf32>) -> tensor<4x16xf32>
    %r0 = dist.all_reduce %a0 on @mesh mesh_axes = ["tp"] {dist.micro_batch = 0 : i64} : tensor<4x16xf32>
    %t0 = dist.send_start %r0 on @mesh mesh_axes = ["pp"] peer = 1 {dist.micro_batch = 0 : i64} : tensor<4x16xf32> -> !dist.async
    %x1 = nn.slice %x {dist.micro_batch = 1 : i64, starts = array<i64: 4, 0>, steps = array<i64: 1, 1>} : tensor<8x16xf32> -> tensor<4x16xf32>
    %a1 = nn.linear %x1, %w {dist.micro_batch = 1 : i64} : (tensor<4x16xf32>, tensor<16x16xf32>) -> tensor<4x16xf32>
    %r1 = dist.all_reduce %a1 on @mesh mesh_axes = ["tp"] {dist.micro_batch = 1 : i64} : tensor<4x16xf32>
    %t1 = dist.send_start %r1 on @mesh mesh_axes = ["pp"] peer = 1 {dist.micro_batch = 1 : i64} : tensor<4x16xf32> -> !dist.async
    %v0 = dist.wait %q0 {dist.micro_batch = 0 : i64} : !dist.async<tensor<4x16xf32>>
    %y0 = nn.add %v0, %x0 {dist.micro_batch = 0 : i64} : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
    %v1 = dist.wait %q1 {dist.micro_batch = 1 : i64} : !dist.async<tensor<4x16xf32>>
    %y1 = nn.add %v1, %x1 {dist.micro_batch = 1 : i64} : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<4x16xf32>
    dist.wait %t0 : !dist.async
    dist.wait %t1 : !dist.async
    %y = nn.concat %y0, %y1 {axis = 0 : i64} : (tensor<4x16xf32>, tensor<4x16xf32>) -> tensor<8x16xf32>
    return %y : tensor<8x16xf32>
  }
}

// -----

// Tags that are no micro-batch index (written by hand, say) leave the
// order as placement left it.
// CHECK-LABEL: func.func @not_an_index
// CHECK: %[[A:.*]] = nn.linear {{.*}}dist.micro_batch = -3
// CHECK-NEXT: %[[S:.*]] = dist.all_reduce_start %[[A]]
// CHECK-NEXT: %[[B:.*]] = nn.relu {{.*}}dist.micro_batch = 1000000000
// CHECK-NEXT: dist.wait %[[S]]
module {
  dist.mesh @mesh(shape = 2, axes = ["tp"])
  func.func @not_an_index(%x: tensor<4x16xf32>) -> (tensor<4x16xf32>, tensor<4x16xf32>) {
    %w = arith.constant dense<0.5> : tensor<16x16xf32>
    %a = nn.linear %x, %w {dist.micro_batch = -3 : i64} : (tensor<4x16xf32>, tensor<16x16xf32>) -> tensor<4x16xf32>
    %b = nn.relu %x {dist.micro_batch = 1000000000 : i64} : tensor<4x16xf32>
    %r = dist.all_reduce %a on @mesh mesh_axes = ["tp"] : tensor<4x16xf32>
    return %r, %b : tensor<4x16xf32>, tensor<4x16xf32>
  }
}
