// RUN: parc-opt %s --split-input-file --dist-pipeline="pp=2 async=false" | FileCheck %s --check-prefix=CUT
// RUN: parc-opt %s --split-input-file --dist-pipeline="pp=4 async=false" | FileCheck %s --check-prefix=FOUR
// RUN: parc-opt %s --split-input-file --dist-pipeline="pp=2 layout=2,2 micro-batches=2" | FileCheck %s --check-prefix=GPIPE
// RUN: parc-opt %s --split-input-file --dist-pipeline="pp=2 virtual=2 micro-batches=2" | FileCheck %s --check-prefix=VIRT
// The stages' program keeps the name of the function it was cut from.
// RUN: sed 's/@main/@forward/' %s | parc-opt --split-input-file --dist-pipeline="pp=2 async=false" | FileCheck %s --check-prefix=NAMED --implicit-check-not=@main --implicit-check-not=@pipelined
// NAMED: func.func @forward

// Four layers (one per attention). Costs by the pass's model: the
// "embedding" linear 2*64*8 = 1024, each attention 4*64*4 = 1024, each add
// 64, the head linear 2*256*8 = 4096. Layers: 1024+1024+64 = 2112, 1088,
// 1088, 1088+4096 = 5184. Two stages: 1|3 costs max(2112, 7360), 2|2
// max(3200, 6272), 3|1 max(4288, 5184) = 5184, the least: the stage with
// the head gets one layer.
// Each cut is where one tensor of 256 B is live, just before the next
// attention (after the residual add): only the residual stream is sent.
// CUT: dist.mesh @mesh(shape = 2x1, axes = ["pp", "tp"])
// CUT-LABEL: func.func @main
// CUT-SAME: dist.micro_batches = 1 : i64, dist.pp_layout = array<i64: 3, 1>
// CUT: %[[E:.*]] = nn.linear %arg0, %{{.*}} {dist.stage = 0 : i64}
// CUT: nn.attention %[[E]], %[[E]], %[[E]] {dist.stage = 0 : i64
// CUT: nn.attention {{.*}}dist.stage = 0 : i64
// CUT: nn.attention {{.*}}dist.stage = 0 : i64
// CUT: %[[H2:.*]] = nn.add {{.*}} {dist.stage = 0 : i64}
// CUT-NEXT: dist.send %[[H2]] on @mesh mesh_axes = ["pp"] peer = 1 {dist.stage = 0 : i64} : tensor<1x2x4x8xf32>
// CUT-NEXT: %[[R:.*]] = dist.recv on @mesh mesh_axes = ["pp"] peer = 0 {dist.stage = 1 : i64} : tensor<1x2x4x8xf32>
// CUT-NEXT: %[[A3:.*]] = nn.attention %[[R]], %[[R]], %[[R]] {dist.stage = 1 : i64
// CUT: %[[H3:.*]] = nn.add %[[R]], %[[A3]] {dist.stage = 1 : i64}
// CUT-NEXT: %[[Y:.*]] = nn.linear %[[H3]], %{{.*}} {dist.stage = 1 : i64}
// CUT-NEXT: return %[[Y]]
// CUT-NOT: dist.send

// Four stages: one layer each; stage s receives from s-1 and sends to s+1.
// FOUR: dist.pp_layout = array<i64: 1, 1, 1, 1>
// FOUR: dist.send %{{.*}} peer = 1 {dist.stage = 0 : i64}
// FOUR: dist.recv {{.*}} peer = 0 {dist.stage = 1 : i64}
// FOUR: dist.send %{{.*}} peer = 2 {dist.stage = 1 : i64}
// FOUR: dist.recv {{.*}} peer = 1 {dist.stage = 2 : i64}
// FOUR: dist.send %{{.*}} peer = 3 {dist.stage = 2 : i64}
// FOUR: dist.recv {{.*}} peer = 2 {dist.stage = 3 : i64}
// FOUR-NOT: dist.send

// GPipe with two micro-batches: the input is two micro-batches stacked on
// dim 0; stage 0 computes micro-batch 0 and starts its send before it
// computes micro-batch 1, and waits for both sends at the end; stage 1
// posts both receives first, waits for each where it is first used, and
// stacks the outputs.
// GPIPE-LABEL: func.func @main(%arg0: tensor<2x2x4x8xf32>) -> tensor<2x2x4x32xf32>
// GPIPE-SAME: dist.micro_batches = 2 : i64, dist.pp_layout = array<i64: 2, 2>
// GPIPE: %[[X0:.*]] = nn.slice %arg0 {dist.micro_batch = 0 : i64, dist.stage = 0 : i64, starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 1, 1>} : tensor<2x2x4x8xf32> -> tensor<1x2x4x8xf32>
// GPIPE: nn.attention {{.*}}dist.stage = 0
// GPIPE: nn.attention {{.*}}dist.stage = 0
// GPIPE: %[[H0:.*]] = nn.add {{.*}}dist.stage = 0
// GPIPE-NEXT: %[[T0:.*]] = dist.send_start %[[H0]] on @mesh mesh_axes = ["pp"] peer = 1 {dist.micro_batch = 0 : i64, dist.stage = 0 : i64} : tensor<1x2x4x8xf32> -> !dist.async
// GPIPE-NEXT: %[[X1:.*]] = nn.slice %arg0 {dist.micro_batch = 1 : i64, dist.stage = 0 : i64, starts = array<i64: 1, 0, 0, 0>
// GPIPE: nn.attention {{.*}}dist.stage = 0
// GPIPE: nn.attention {{.*}}dist.stage = 0
// GPIPE: %[[H1:.*]] = nn.add {{.*}}dist.stage = 0
// GPIPE-NEXT: %[[T1:.*]] = dist.send_start %[[H1]] {{.*}} peer = 1 {dist.micro_batch = 1 : i64, dist.stage = 0 : i64}
// GPIPE-NEXT: dist.wait %[[T0]] {dist.stage = 0 : i64} : !dist.async
// GPIPE-NEXT: dist.wait %[[T1]] {dist.stage = 0 : i64} : !dist.async
// GPIPE-NEXT: %[[R0:.*]] = dist.recv_start on @mesh mesh_axes = ["pp"] peer = 0 {dist.stage = 1 : i64} : !dist.async<tensor<1x2x4x8xf32>>
// GPIPE-NEXT: %[[R1:.*]] = dist.recv_start on @mesh mesh_axes = ["pp"] peer = 0 {dist.stage = 1 : i64} : !dist.async<tensor<1x2x4x8xf32>>
// GPIPE-NEXT: %[[V0:.*]] = dist.wait %[[R0]] {dist.micro_batch = 0 : i64, dist.stage = 1 : i64} : !dist.async<tensor<1x2x4x8xf32>>
// GPIPE-NEXT: nn.attention %[[V0]], %[[V0]], %[[V0]] {dist.micro_batch = 0 : i64, dist.stage = 1 : i64
// GPIPE: %[[Y0:.*]] = nn.linear {{.*}}dist.stage = 1
// GPIPE-NEXT: %[[V1:.*]] = dist.wait %[[R1]] {dist.micro_batch = 1 : i64, dist.stage = 1 : i64}
// GPIPE-NEXT: nn.attention %[[V1]], %[[V1]], %[[V1]] {dist.micro_batch = 1 : i64, dist.stage = 1 : i64
// GPIPE: %[[Y1:.*]] = nn.linear {{.*}}dist.stage = 1
// GPIPE-NEXT: %[[Y:.*]] = nn.concat %[[Y0]], %[[Y1]] {axis = 0 : i64, dist.stage = 1 : i64} : (tensor<1x2x4x32xf32>, tensor<1x2x4x32xf32>) -> tensor<2x2x4x32xf32>
// GPIPE-NEXT: return %[[Y]]
// Interleaved: four chunks of one layer, chunk c on stage c mod 2. Stage 0
// runs chunk 0 for micro-batches 0 and 1, then chunk 2 for both (its input
// comes back from stage 1); stage 1 runs chunk 1 for both, then chunk 3 (its
// input from stage 0, which sent it after computing chunk 2). Receives are
// posted in the order the peer sends.
// VIRT-LABEL: func.func @main(%arg0: tensor<2x2x4x8xf32>)
// VIRT-SAME: dist.pp_layout = array<i64: 1, 1, 1, 1>, dist.pp_virtual = 2 : i64
// VIRT-NEXT: arith.constant
// VIRT-NEXT: arith.constant
// VIRT-NEXT: %[[B0:.*]] = dist.recv_start on @mesh mesh_axes = ["pp"] peer = 1 {dist.stage = 0 : i64}
// VIRT-NEXT: %[[B1:.*]] = dist.recv_start on @mesh mesh_axes = ["pp"] peer = 1 {dist.stage = 0 : i64}
// VIRT-NEXT: nn.slice %arg0 {dist.micro_batch = 0 : i64, dist.stage = 0 : i64, starts = array<i64: 0, 0, 0, 0>
// VIRT: dist.send_start {{.*}} peer = 1 {dist.micro_batch = 0 : i64, dist.stage = 0 : i64}
// VIRT-NEXT: nn.slice %arg0 {dist.micro_batch = 1 : i64, dist.stage = 0 : i64, starts = array<i64: 1, 0, 0, 0>
// VIRT: dist.send_start {{.*}} peer = 1 {dist.micro_batch = 1 : i64, dist.stage = 0 : i64}
// VIRT-NEXT: %[[C0:.*]] = dist.wait %[[B0]] {dist.micro_batch = 0 : i64, dist.stage = 0 : i64}
// VIRT-NEXT: nn.attention %[[C0]], %[[C0]], %[[C0]] {dist.micro_batch = 0 : i64, dist.stage = 0 : i64
// VIRT: dist.send_start {{.*}} peer = 1 {dist.micro_batch = 0 : i64, dist.stage = 0 : i64}
// VIRT-NEXT: %[[C1:.*]] = dist.wait %[[B1]] {dist.micro_batch = 1 : i64, dist.stage = 0 : i64}
// VIRT: dist.send_start {{.*}} peer = 1 {dist.micro_batch = 1 : i64, dist.stage = 0 : i64}
// VIRT-COUNT-4: dist.wait %{{.*}} {dist.stage = 0 : i64} : !dist.async
// VIRT-NEXT: %[[A0:.*]] = dist.recv_start on @mesh mesh_axes = ["pp"] peer = 0 {dist.stage = 1 : i64}
// VIRT-NEXT: %[[A1:.*]] = dist.recv_start {{.*}}peer = 0 {dist.stage = 1 : i64}
// VIRT-NEXT: %[[A2:.*]] = dist.recv_start {{.*}}peer = 0 {dist.stage = 1 : i64}
// VIRT-NEXT: %[[A3:.*]] = dist.recv_start {{.*}}peer = 0 {dist.stage = 1 : i64}
// VIRT-NEXT: dist.wait %[[A0]] {dist.micro_batch = 0 : i64, dist.stage = 1 : i64}
// VIRT: dist.send_start {{.*}} peer = 0 {dist.micro_batch = 0 : i64, dist.stage = 1 : i64}
// VIRT-NEXT: dist.wait %[[A1]] {dist.micro_batch = 1 : i64, dist.stage = 1 : i64}
// VIRT: dist.send_start {{.*}} peer = 0 {dist.micro_batch = 1 : i64, dist.stage = 1 : i64}
// VIRT-NEXT: dist.wait %[[A2]] {dist.micro_batch = 0 : i64, dist.stage = 1 : i64}
// VIRT: %[[Y0:.*]] = nn.linear {{.*}}dist.stage = 1
// VIRT-NEXT: dist.wait %[[A3]] {dist.micro_batch = 1 : i64, dist.stage = 1 : i64}
// VIRT: %[[Y1:.*]] = nn.linear {{.*}}dist.stage = 1
// VIRT: nn.concat %[[Y0]], %[[Y1]]
func.func @main(%x: tensor<1x2x4x8xf32>) -> tensor<1x2x4x32xf32> {
  %w = arith.constant dense<0.5> : tensor<8x8xf32>
  %wh = arith.constant dense<0.25> : tensor<8x32xf32>
  %e = nn.linear %x, %w : (tensor<1x2x4x8xf32>, tensor<8x8xf32>) -> tensor<1x2x4x8xf32>
  %a0 = nn.attention %e, %e, %e {scale = 0.125 : f32} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  ^bb0(%s: tensor<1x2x4x4xf32>):
    nn.yield %s : tensor<1x2x4x4xf32>
  }
  %h0 = nn.add %e, %a0 : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  %a1 = nn.attention %h0, %h0, %h0 {scale = 0.125 : f32} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  ^bb0(%s: tensor<1x2x4x4xf32>):
    nn.yield %s : tensor<1x2x4x4xf32>
  }
  %h1 = nn.add %h0, %a1 : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  %a2 = nn.attention %h1, %h1, %h1 {scale = 0.125 : f32} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  ^bb0(%s: tensor<1x2x4x4xf32>):
    nn.yield %s : tensor<1x2x4x4xf32>
  }
  %h2 = nn.add %h1, %a2 : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  %a3 = nn.attention %h2, %h2, %h2 {scale = 0.125 : f32} : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  ^bb0(%s: tensor<1x2x4x4xf32>):
    nn.yield %s : tensor<1x2x4x4xf32>
  }
  %h3 = nn.add %h2, %a3 : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32>
  %y = nn.linear %h3, %wh : (tensor<1x2x4x8xf32>, tensor<8x32xf32>) -> tensor<1x2x4x32xf32>
  return %y : tensor<1x2x4x32xf32>
}

