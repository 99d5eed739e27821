// RUN: parc-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(rt-reroll{min-ops=4}))' --mlir-print-local-scope | FileCheck %s

// Three identical layers (norm, linear, all-reduce started and waited, add),
// each on its own weights and arena buffers: one rt.repeat of the first
// layer's four calls, binding 3 x 6 buffers, with every layer's nodes kept.
// The buffer definitions move above it; the output stays after it.
// CHECK-LABEL: func.func @identical
// CHECK-COUNT-3: rt.weight "l{{[0-9]}}.norm"
// CHECK-NOT: rt.kernel
// CHECK: rt.repeat 3 bindings(
// CHECK-NEXT: ^bb0(%[[X:[a-z0-9]+]]: memref<4x8xf32>, %[[G:[a-z0-9]+]]: memref<8xf32>, %[[N:[a-z0-9]+]]: memref<4x8xf32>, %[[W:[a-z0-9]+]]: memref<8x8xf32>, %[[P:[a-z0-9]+]]: memref<4x8xf32>, %[[S:[a-z0-9]+]]: memref<4x8xf32>):
// CHECK-NEXT: rt.kernel "rms_norm" ins(%[[X]], %[[G]] : {{.*}}) outs(%[[N]] : {{.*}})
// CHECK-NEXT: rt.kernel "linear" ins(%[[N]], %[[W]] : {{.*}}) outs(%[[P]] : {{.*}})
// CHECK-NEXT: %[[R:.*]] = rt.start "all_reduce" ins(%[[P]] : {{.*}}) outs(%[[S]] : {{.*}})
// CHECK-NEXT: rt.wait %[[R]]
// CHECK-NEXT: rt.kernel "add" ins(%[[X]], %[[S]] : {{.*}}) outs(%[[X]] : {{.*}})
// CHECK-NEXT: } {locations = [loc("l0/norm"), loc("l0/fc"), loc("l0/ar"), loc("l0/ar"), loc("l0/add"), loc("l1/norm"), {{.*}}, loc("l2/add")]}
// CHECK-NOT: rt.kernel
// CHECK: rt.output 0 "y"
func.func @identical() attributes {rt.arena_size = 512 : i64} {
  %x = rt.input 0 "x" : memref<4x8xf32>
  %g0 = rt.weight "l0.norm" : memref<8xf32>
  %n0 = rt.alloc {offset = 128 : i64} : memref<4x8xf32>
  rt.kernel "rms_norm" ins(%x, %g0 : memref<4x8xf32>, memref<8xf32>) outs(%n0 : memref<4x8xf32>) {axis = 1 : i64, epsilon = 1.0e-05 : f32} loc("l0/norm")
  %w0 = rt.weight "l0.fc" : memref<8x8xf32>
  %p0 = rt.alloc {offset = 256 : i64} : memref<4x8xf32>
  rt.kernel "linear" ins(%n0, %w0 : memref<4x8xf32>, memref<8x8xf32>) outs(%p0 : memref<4x8xf32>) {transpose_weight = false} loc("l0/fc")
  %s0 = rt.alloc {offset = 384 : i64} : memref<4x8xf32>
  %r0 = rt.start "all_reduce" ins(%p0 : memref<4x8xf32>) outs(%s0 : memref<4x8xf32>) {mesh = @mesh, mesh_axes = ["tp"]} loc("l0/ar")
  rt.wait %r0 loc("l0/ar")
  rt.kernel "add" ins(%x, %s0 : memref<4x8xf32>, memref<4x8xf32>) outs(%x : memref<4x8xf32>) loc("l0/add")
  %g1 = rt.weight "l1.norm" : memref<8xf32>
  %n1 = rt.alloc {offset = 0 : i64} : memref<4x8xf32>
  rt.kernel "rms_norm" ins(%x, %g1 : memref<4x8xf32>, memref<8xf32>) outs(%n1 : memref<4x8xf32>) {axis = 1 : i64, epsilon = 1.0e-05 : f32} loc("l1/norm")
  %w1 = rt.weight "l1.fc" : memref<8x8xf32>
  %p1 = rt.alloc {offset = 128 : i64} : memref<4x8xf32>
  rt.kernel "linear" ins(%n1, %w1 : memref<4x8xf32>, memref<8x8xf32>) outs(%p1 : memref<4x8xf32>) {transpose_weight = false} loc("l1/fc")
  %s1 = rt.alloc {offset = 256 : i64} : memref<4x8xf32>
  %r1 = rt.start "all_reduce" ins(%p1 : memref<4x8xf32>) outs(%s1 : memref<4x8xf32>) {mesh = @mesh, mesh_axes = ["tp"]} loc("l1/ar")
  rt.wait %r1 loc("l1/ar")
  rt.kernel "add" ins(%x, %s1 : memref<4x8xf32>, memref<4x8xf32>) outs(%x : memref<4x8xf32>) loc("l1/add")
  %g2 = rt.weight "l2.norm" : memref<8xf32>
  %n2 = rt.alloc {offset = 128 : i64} : memref<4x8xf32>
  rt.kernel "rms_norm" ins(%x, %g2 : memref<4x8xf32>, memref<8xf32>) outs(%n2 : memref<4x8xf32>) {axis = 1 : i64, epsilon = 1.0e-05 : f32} loc("l2/norm")
  %w2 = rt.weight "l2.fc" : memref<8x8xf32>
  %p2 = rt.alloc {offset = 256 : i64} : memref<4x8xf32>
  rt.kernel "linear" ins(%n2, %w2 : memref<4x8xf32>, memref<8x8xf32>) outs(%p2 : memref<4x8xf32>) {transpose_weight = false} loc("l2/fc")
  %s2 = rt.alloc {offset = 384 : i64} : memref<4x8xf32>
  %r2 = rt.start "all_reduce" ins(%p2 : memref<4x8xf32>) outs(%s2 : memref<4x8xf32>) {mesh = @mesh, mesh_axes = ["tp"]} loc("l2/ar")
  rt.wait %r2 loc("l2/ar")
  rt.kernel "add" ins(%x, %s2 : memref<4x8xf32>, memref<4x8xf32>) outs(%x : memref<4x8xf32>) loc("l2/add")
  rt.output 0 "y", %x : memref<4x8xf32>
  return
}

// -----

// The last layer's norm has another epsilon: the first two layers roll, the
// third stays as it is.
// CHECK-LABEL: func.func @differs
// CHECK: rt.repeat 2 bindings(
// CHECK: } {locations = [loc("l0/norm"), loc("l0/fc"), loc("l1/norm"), loc("l1/fc")]}
// CHECK-NEXT: rt.kernel "rms_norm" {{.*}} {axis = 1 : i64, epsilon = 9.99999997E-7 : f32}
// CHECK-NEXT: rt.kernel "linear"
// CHECK-NEXT: rt.output
func.func @differs() attributes {rt.arena_size = 512 : i64} {
  %x = rt.input 0 "x" : memref<4x8xf32>
  %g0 = rt.weight "l0.norm" : memref<8xf32>
  %w0 = rt.weight "l0.fc" : memref<8x8xf32>
  %g1 = rt.weight "l1.norm" : memref<8xf32>
  %w1 = rt.weight "l1.fc" : memref<8x8xf32>
  %g2 = rt.weight "l2.norm" : memref<8xf32>
  %w2 = rt.weight "l2.fc" : memref<8x8xf32>
  %n = rt.alloc {offset = 0 : i64} : memref<4x8xf32>
  rt.kernel "rms_norm" ins(%x, %g0 : memref<4x8xf32>, memref<8xf32>) outs(%n : memref<4x8xf32>) {axis = 1 : i64, epsilon = 1.0e-05 : f32} loc("l0/norm")
  rt.kernel "linear" ins(%n, %w0 : memref<4x8xf32>, memref<8x8xf32>) outs(%x : memref<4x8xf32>) {transpose_weight = false} loc("l0/fc")
  rt.kernel "rms_norm" ins(%x, %g1 : memref<4x8xf32>, memref<8xf32>) outs(%n : memref<4x8xf32>) {axis = 1 : i64, epsilon = 1.0e-05 : f32} loc("l1/norm")
  rt.kernel "linear" ins(%n, %w1 : memref<4x8xf32>, memref<8x8xf32>) outs(%x : memref<4x8xf32>) {transpose_weight = false} loc("l1/fc")
  rt.kernel "rms_norm" ins(%x, %g2 : memref<4x8xf32>, memref<8xf32>) outs(%n : memref<4x8xf32>) {axis = 1 : i64, epsilon = 1.0e-06 : f32} loc("l2/norm")
  rt.kernel "linear" ins(%n, %w2 : memref<4x8xf32>, memref<8x8xf32>) outs(%x : memref<4x8xf32>) {transpose_weight = false} loc("l2/fc")
  rt.output 0 "y", %x : memref<4x8xf32>
  return
}

// -----

// The same calls, but the second layer reads its input where the first
// reads its weight (another use pattern of the buffers): nothing rolls.
// CHECK-LABEL: func.func @pattern_differs
// CHECK-NOT: rt.repeat
func.func @pattern_differs() attributes {rt.arena_size = 512 : i64} {
  %x = rt.input 0 "x" : memref<8xf32>
  %a = rt.alloc {offset = 0 : i64} : memref<8xf32>
  %b = rt.alloc {offset = 64 : i64} : memref<8xf32>
  rt.kernel "add" ins(%x, %a : memref<8xf32>, memref<8xf32>) outs(%b : memref<8xf32>) loc("l0/a")
  rt.kernel "relu" ins(%b : memref<8xf32>) outs(%b : memref<8xf32>) loc("l0/b")
  rt.kernel "add" ins(%b, %b : memref<8xf32>, memref<8xf32>) outs(%a : memref<8xf32>) loc("l1/a")
  rt.kernel "relu" ins(%a : memref<8xf32>) outs(%a : memref<8xf32>) loc("l1/b")
  rt.output 0 "y", %a : memref<8xf32>
  return
}

// -----

// Each layer's all-reduce is waited for in the next layer (overlap across
// the layer boundary). A loop starting at l0's wait would hold a wait whose
// start is outside it, so the loop starts one call later: every start meets
// its wait inside one iteration, in the order dist-overlap placed them.
// CHECK-LABEL: func.func @overlap_across_layers
// CHECK: rt.kernel "relu"
// CHECK-NEXT: rt.start "all_reduce"
// CHECK-NEXT: rt.kernel "exp"
// CHECK-NEXT: rt.wait
// CHECK-NEXT: rt.repeat 2 bindings(
// CHECK-NEXT: ^bb0
// CHECK-NEXT: rt.kernel "exp"
// CHECK-NEXT: rt.kernel "relu"
// CHECK-NEXT: %[[R:.*]] = rt.start "all_reduce"
// CHECK-NEXT: rt.wait %[[R]]
// CHECK-NEXT: }
// CHECK-NEXT: rt.kernel "exp"
func.func @overlap_across_layers() attributes {rt.arena_size = 512 : i64} {
  %x = rt.input 0 "x" : memref<8xf32>
  %a = rt.alloc {offset = 0 : i64} : memref<8xf32>
  %s = rt.alloc {offset = 64 : i64} : memref<8xf32>
  %y = rt.alloc {offset = 128 : i64} : memref<8xf32>
  rt.kernel "relu" ins(%x : memref<8xf32>) outs(%a : memref<8xf32>) loc("l0/relu")
  %r0 = rt.start "all_reduce" ins(%a : memref<8xf32>) outs(%s : memref<8xf32>) {mesh = @mesh, mesh_axes = ["tp"]} loc("l0/ar")
  rt.kernel "exp" ins(%x : memref<8xf32>) outs(%y : memref<8xf32>) loc("l1/exp0")
  rt.wait %r0 loc("l0/ar")
  rt.kernel "exp" ins(%s : memref<8xf32>) outs(%x : memref<8xf32>) loc("l1/exp")
  rt.kernel "relu" ins(%x : memref<8xf32>) outs(%a : memref<8xf32>) loc("l1/relu")
  %r1 = rt.start "all_reduce" ins(%a : memref<8xf32>) outs(%s : memref<8xf32>) {mesh = @mesh, mesh_axes = ["tp"]} loc("l1/ar")
  rt.wait %r1 loc("l1/ar")
  rt.kernel "exp" ins(%s : memref<8xf32>) outs(%x : memref<8xf32>) loc("l2/exp")
  rt.kernel "relu" ins(%x : memref<8xf32>) outs(%a : memref<8xf32>) loc("l2/relu")
  %r2 = rt.start "all_reduce" ins(%a : memref<8xf32>) outs(%s : memref<8xf32>) {mesh = @mesh, mesh_axes = ["tp"]} loc("l2/ar")
  rt.wait %r2 loc("l2/ar")
  rt.kernel "exp" ins(%s : memref<8xf32>) outs(%x : memref<8xf32>) loc("l3/exp")
  rt.output 0 "y", %x : memref<8xf32>
  return
}

// -----

// Fewer calls than min-ops: left alone.
// CHECK-LABEL: func.func @too_short
// CHECK-NOT: rt.repeat
func.func @too_short() attributes {rt.arena_size = 128 : i64} {
  %x = rt.input 0 "x" : memref<8xf32>
  rt.kernel "relu" ins(%x : memref<8xf32>) outs(%x : memref<8xf32>) loc("a")
  rt.kernel "relu" ins(%x : memref<8xf32>) outs(%x : memref<8xf32>) loc("b")
  rt.output 0 "y", %x : memref<8xf32>
  return
}
