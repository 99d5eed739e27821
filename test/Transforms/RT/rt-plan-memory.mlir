// RUN: parc-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(rt-plan-memory))' | FileCheck %s

// Live ranges (op indices): a [2,5], b [4,7], c [6,9], d [8,end].
// Largest first: b -> 0; a overlaps b -> 128; c overlaps b only -> 128;
// d overlaps c only -> 0. Peak 192 bytes; the four buffers sum to 320.
// CHECK-LABEL: func.func @chain()
// CHECK-SAME: rt.arena_size = 192 : i64, rt.unplanned_size = 320 : i64
// CHECK: %[[A:.*]] = rt.alloc {offset = 128 : i64} : memref<16xf32>
// CHECK: %[[B:.*]] = rt.alloc {offset = 0 : i64} : memref<32xf32>
// CHECK: %[[C:.*]] = rt.alloc {offset = 128 : i64} : memref<16xf32>
// CHECK: %[[D:.*]] = rt.alloc {offset = 0 : i64} : memref<16xf32>
func.func @chain() {
  %x = rt.input 0 "x" : memref<16xf32>
  %a = rt.alloc : memref<16xf32>
  rt.kernel "relu" ins(%x : memref<16xf32>) outs(%a : memref<16xf32>)
  %b = rt.alloc : memref<32xf32>
  rt.kernel "concat" ins(%a, %a : memref<16xf32>, memref<16xf32>) outs(%b : memref<32xf32>) {axis = 0 : i64}
  %c = rt.alloc : memref<16xf32>
  rt.kernel "reduce_sum" ins(%b : memref<32xf32>) outs(%c : memref<16xf32>) {axes = array<i64: 0>}
  %d = rt.alloc : memref<16xf32>
  rt.kernel "relu" ins(%c : memref<16xf32>) outs(%d : memref<16xf32>)
  rt.output 0 "y", %d : memref<16xf32>
  return
}

// -----

// A view keeps its source alive: a is read through %v by the last kernel,
// so c cannot reuse a's bytes (a [2,8], b [5,8], c [7,end]).
// CHECK-LABEL: func.func @view()
// CHECK-SAME: rt.arena_size = 192 : i64
// CHECK: rt.alloc {offset = 0 : i64}
// CHECK: rt.alloc {offset = 64 : i64}
// CHECK: rt.alloc {offset = 128 : i64}
func.func @view() {
  %x = rt.input 0 "x" : memref<16xf32>
  %a = rt.alloc : memref<16xf32>
  rt.kernel "relu" ins(%x : memref<16xf32>) outs(%a : memref<16xf32>)
  %v = rt.view %a : memref<16xf32> to memref<4x4xf32>
  %b = rt.alloc : memref<4x4xf32>
  rt.kernel "relu" ins(%x : memref<16xf32>) outs(%b : memref<4x4xf32>)
  %c = rt.alloc : memref<4x4xf32>
  rt.kernel "add" ins(%v, %b : memref<4x4xf32>, memref<4x4xf32>) outs(%c : memref<4x4xf32>)
  rt.output 0 "y", %c : memref<4x4xf32>
  return
}

// -----

// An asynchronous call keeps its buffers until its wait: %t would reuse
// the bytes of %a (last read by the start) but must not, since the
// all-reduce still reads %a while relu writes %t (a [2,8], s [3,end],
// t [6,9]): three buffers of 64 bytes side by side.
// CHECK-LABEL: func.func @async()
// CHECK-SAME: rt.arena_size = 192 : i64
func.func @async() {
  %x = rt.input 0 "x" : memref<16xf32>
  %a = rt.alloc : memref<16xf32>
  %s = rt.alloc : memref<16xf32>
  rt.kernel "relu" ins(%x : memref<16xf32>) outs(%a : memref<16xf32>)
  %r = rt.start "all_reduce" ins(%a : memref<16xf32>) outs(%s : memref<16xf32>) {mesh = @mesh, mesh_axes = ["tp"]}
  %t = rt.alloc : memref<16xf32>
  rt.kernel "relu" ins(%x : memref<16xf32>) outs(%t : memref<16xf32>)
  rt.wait %r
  rt.kernel "add" ins(%s, %t : memref<16xf32>, memref<16xf32>) outs(%s : memref<16xf32>)
  rt.output 0 "y", %s : memref<16xf32>
  return
}
