// RUN: parc-opt %s --split-input-file --convert-nn-to-rt | FileCheck %s

// Inputs, weights, views, one kernel per op named after it with its
// attributes, and outputs by ONNX name.
// CHECK-LABEL: func.func @main()
// CHECK-NEXT: %[[X:.*]] = rt.input 0 "x" : memref<2x8xf32>
// CHECK-NEXT: %[[W:.*]] = rt.weight "const" {value = dense<5.000000e-01> : tensor<8x4xf32>} : memref<8x4xf32>
// CHECK-NEXT: %[[H:.*]] = rt.alloc : memref<2x4xf32>
// CHECK-NEXT: rt.kernel "linear" ins(%[[X]], %[[W]] : memref<2x8xf32>, memref<8x4xf32>) outs(%[[H]] : memref<2x4xf32>) {transpose_weight = false}
// CHECK-NEXT: %[[V:.*]] = rt.view %[[H]] : memref<2x4xf32> to memref<8xf32>
// CHECK-NEXT: %[[S:.*]] = rt.alloc : memref<8xf32>
// CHECK-NEXT: rt.kernel "softmax" ins(%[[V]] : memref<8xf32>) outs(%[[S]] : memref<8xf32>) {axis = 0 : i64}
// CHECK-NEXT: rt.output 0 "y", %[[S]] : memref<8xf32>
// CHECK-NEXT: return
func.func @main(%x: tensor<2x8xf32> {onnx.name = "x"}) -> (tensor<8xf32> {onnx.name = "y"}) {
  %w = arith.constant dense<0.5> : tensor<8x4xf32>
  %h = nn.linear %x, %w : (tensor<2x8xf32>, tensor<8x4xf32>) -> tensor<2x4xf32>
  %v = nn.reshape %h : tensor<2x4xf32> to tensor<8xf32>
  %s = nn.softmax %v {axis = 0 : i64} : tensor<8xf32>
  return %s : tensor<8xf32>
}

// -----

// An output that is an input (or published twice) is copied into its own
// buffer; external weights keep their reference.
// CHECK-LABEL: func.func @main()
// CHECK: %[[X:.*]] = rt.input 0 "input_0" : memref<4xf32>
// CHECK: %[[E:.*]] = rt.weight "w" {length = 16 : i64, location = "w.bin", offset = 32 : i64} : memref<4xf32>
// CHECK: %[[C:.*]] = rt.alloc : memref<4xf32>
// CHECK: rt.kernel "copy" ins(%[[X]] : memref<4xf32>) outs(%[[C]] : memref<4xf32>)
// CHECK: rt.output 0 "output_0", %[[C]]
// CHECK: %[[C2:.*]] = rt.alloc : memref<4xf32>
// CHECK: rt.kernel "copy" ins(%[[E]] : memref<4xf32>) outs(%[[C2]] : memref<4xf32>)
// CHECK: rt.output 1 "output_1", %[[C2]]
func.func @main(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %w = nn.external_weight {name = "w", location = "w.bin", offset = 32 : i64, length = 16 : i64} : tensor<4xf32>
  return %x, %w : tensor<4xf32>, tensor<4xf32>
}

// -----

// Attention with a modifier the fused kernel does not run (a multiplicative
// mask): scores, the modifier's own ops, softmax over the key axis, values;
// grouped-query heads stay un-repeated (4 query heads, 2 kv heads).
// CHECK-LABEL: func.func @main()
// CHECK: %[[Q:.*]] = rt.input 0 "q"
// CHECK: %[[K:.*]] = rt.input 1 "k"
// CHECK: %[[V:.*]] = rt.input 2 "v"
// CHECK: %[[M:.*]] = rt.input 3 "m"
// CHECK: %[[S:.*]] = rt.alloc : memref<1x4x8x8xf32>
// CHECK: rt.kernel "attention_scores" ins(%[[Q]], %[[K]] : memref<1x4x8x16xf32>, memref<1x2x8x16xf32>) outs(%[[S]] : memref<1x4x8x8xf32>) {scale = 2.500000e-01 : f32}
// CHECK: %[[A:.*]] = rt.alloc : memref<1x4x8x8xf32>
// CHECK: rt.kernel "mul" ins(%[[S]], %[[M]] : memref<1x4x8x8xf32>, memref<1x1x8x8xf32>) outs(%[[A]] : memref<1x4x8x8xf32>)
// CHECK: %[[P:.*]] = rt.alloc : memref<1x4x8x8xf32>
// CHECK: rt.kernel "softmax" ins(%[[A]] : memref<1x4x8x8xf32>) outs(%[[P]] : memref<1x4x8x8xf32>) {axis = 3 : i64}
// CHECK: %[[O:.*]] = rt.alloc : memref<1x4x8x16xf32>
// CHECK: rt.kernel "attention_values" ins(%[[P]], %[[V]] : memref<1x4x8x8xf32>, memref<1x2x8x16xf32>) outs(%[[O]] : memref<1x4x8x16xf32>)
// CHECK: rt.output 0 "o", %[[O]]
func.func @main(%q: tensor<1x4x8x16xf32> {onnx.name = "q"}, %k: tensor<1x2x8x16xf32> {onnx.name = "k"},
                %v: tensor<1x2x8x16xf32> {onnx.name = "v"}, %m: tensor<1x1x8x8xf32> {onnx.name = "m"})
    -> (tensor<1x4x8x16xf32> {onnx.name = "o"}) {
  %o = nn.attention %q, %k, %v mask(%m : tensor<1x1x8x8xf32>) {scale = 0.25 : f32}
      : (tensor<1x4x8x16xf32>, tensor<1x2x8x16xf32>, tensor<1x2x8x16xf32>) -> tensor<1x4x8x16xf32> {
  ^bb0(%s: tensor<1x4x8x8xf32>, %mk: tensor<1x1x8x8xf32>):
    %r = nn.mul %s, %mk : (tensor<1x4x8x8xf32>, tensor<1x1x8x8xf32>) -> tensor<1x4x8x8xf32>
    nn.yield %r : tensor<1x4x8x8xf32>
  }
  return %o : tensor<1x4x8x16xf32>
}

// -----

// Distribution ops: a rank part of a constant becomes a sharded weight (the
// global value plus where to cut it), an all-reduce a kernel, and an
// all-gather along dim 1 one kernel straight into the global shape (the
// runtime places each rank's rows; no transpose). The mesh becomes a module
// attribute.
// CHECK: module attributes {rt.mesh = {axes = ["tp"], shape = array<i64: 2>, sym_name = "mesh"}}
// CHECK-LABEL: func.func @main()
// CHECK: %[[W:.*]] = rt.weight "const.part" {shard = [#dist.sharding<@mesh, {{\[\[}}], ["tp"]]>], value = dense<5.000000e-01> : tensor<4x8xf32>} : memref<4x4xf32>
// CHECK: rt.kernel "all_reduce" ins(%{{.*}} : memref<2x4xf32>) outs(%{{.*}} : memref<2x4xf32>)
// CHECK: %[[ALL:.*]] = rt.alloc : memref<2x8xf32>
// CHECK: rt.kernel "all_gather" ins(%{{.*}} : memref<2x4xf32>) outs(%[[ALL]] : memref<2x8xf32>) {gather_axis = 1 : i64, mesh = @mesh, mesh_axes = ["tp"]}
// CHECK-NOT: transpose
// CHECK: rt.output 0 "output_0", %[[ALL]] : memref<2x8xf32>
module {
  dist.mesh @mesh(shape = 2, axes = ["tp"])
  func.func @main(%x: tensor<2x4xf32>) -> tensor<2x8xf32> {
    %w = arith.constant dense<0.5> : tensor<4x8xf32>
    %p = dist.local_part %w to <@mesh, [[], ["tp"]]> : tensor<4x8xf32> -> tensor<4x4xf32>
    %y = nn.linear %x, %p : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
    %s = dist.all_reduce %y on @mesh mesh_axes = ["tp"] : tensor<2x4xf32>
    %g = dist.all_gather %s on @mesh mesh_axes = ["tp"] gather_axis = 1 : tensor<2x4xf32> -> tensor<2x8xf32>
    return %g : tensor<2x8xf32>
  }
}

// -----

// A rank's part of an external weight is a sharded weight like a constant's:
// the rt.weight keeps the external reference (and the zero padding of a
// width tp does not divide) with the same shard description, for the
// weight writer to cut from the file. The whole tensor is never read here.
// CHECK-LABEL: func.func @main()
// CHECK: rt.weight "w.part" {length = 96 : i64, location = "w.bin", offset = 32 : i64, padding = array<i64: 0, 2>, shard = [#dist.sharding<@mesh, {{\[\[}}], ["tp"]]>]} : memref<4x4xf32>
// CHECK-NOT: rt.weight
module {
  dist.mesh @mesh(shape = 2, axes = ["tp"])
  func.func @main(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
    %w = nn.external_weight {name = "w", location = "w.bin", offset = 32 : i64, length = 96 : i64, padding = array<i64: 0, 2>} : tensor<4x8xf32>
    %p = dist.local_part %w to <@mesh, [[], ["tp"]]> : tensor<4x8xf32> -> tensor<4x4xf32>
    %y = nn.linear %x, %p : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
    return %y : tensor<2x4xf32>
  }
}

// -----

// Zeros after each block of a fused weight (padding_blocks) travel with it.
// CHECK-LABEL: func.func @main()
// CHECK: rt.weight "w.part" {length = 96 : i64, location = "w.bin", offset = 32 : i64, padding = array<i64: 0, 2>, padding_blocks = array<i64: 3, 1, 3, 1>, shard = [#dist.sharding<@mesh, {{\[\[}}], ["tp"]]>]} : memref<4x4xf32>
module {
  dist.mesh @mesh(shape = 2, axes = ["tp"])
  func.func @main(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
    %w = nn.external_weight {name = "w", location = "w.bin", offset = 32 : i64, length = 96 : i64, padding = array<i64: 0, 2>, padding_blocks = array<i64: 3, 1, 3, 1>} : tensor<4x8xf32>
    %p = dist.local_part %w to <@mesh, [[], ["tp"]]> : tensor<4x8xf32> -> tensor<4x4xf32>
    %y = nn.linear %x, %p : (tensor<2x4xf32>, tensor<4x4xf32>) -> tensor<2x4xf32>
    return %y : tensor<2x4xf32>
  }
}

// -----

// The runtime reduce-scatters and slices along the leading dim: on dim 1
// of [2, 4, 8] the value is transposed to [4, 2, 8] first and the rank's
// [2, 2, 8] block transposed back; on dim 0 it is used as is.
// CHECK-LABEL: func.func @main()
// CHECK: %[[X:.*]] = rt.input 0
// CHECK: %[[T:.*]] = rt.input 1
// CHECK: %[[XT:.*]] = rt.alloc : memref<4x2x8xf32>
// CHECK: rt.kernel "transpose" ins(%[[X]] : memref<2x4x8xf32>) outs(%[[XT]] : memref<4x2x8xf32>) {perm = array<i64: 1, 0, 2>}
// CHECK: %[[S:.*]] = rt.alloc : memref<2x2x8xf32>
// CHECK: rt.kernel "reduce_scatter" ins(%[[XT]] : memref<4x2x8xf32>) outs(%[[S]] : memref<2x2x8xf32>) {mesh = @mesh, mesh_axes = ["tp"], reduction = 0 : i32, scatter_axis = 1 : i64}
// CHECK: %[[SB:.*]] = rt.alloc : memref<2x2x8xf32>
// CHECK: rt.kernel "transpose" ins(%[[S]] : memref<2x2x8xf32>) outs(%[[SB]] : memref<2x2x8xf32>) {perm = array<i64: 1, 0, 2>}
// CHECK: rt.kernel "transpose"
// CHECK: %[[P:.*]] = rt.alloc : memref<2x2x8xf32>
// CHECK: rt.kernel "local_chunk" ins(%{{.*}} : memref<4x2x8xf32>) outs(%[[P]] : memref<2x2x8xf32>) {mesh = @mesh, mesh_axes = ["tp"]}
// CHECK: %[[PB:.*]] = rt.alloc : memref<2x2x8xf32>
// CHECK: rt.kernel "transpose" ins(%[[P]] : memref<2x2x8xf32>) outs(%[[PB]] : memref<2x2x8xf32>) {perm = array<i64: 1, 0, 2>}
// CHECK: rt.kernel "reduce_scatter" ins(%[[T]] : memref<4x8xf32>) outs(%{{.*}} : memref<2x8xf32>)
// CHECK: rt.kernel "local_chunk" ins(%[[T]] : memref<4x8xf32>) outs(%{{.*}} : memref<2x8xf32>)
// CHECK: rt.output 0 "output_0", %[[SB]]
// CHECK: rt.output 1 "output_1", %[[PB]]
module {
  dist.mesh @mesh(shape = 2, axes = ["tp"])
  func.func @main(%x: tensor<2x4x8xf32>, %t: tensor<4x8xf32>) -> (tensor<2x2x8xf32>, tensor<2x2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>) {
    %s = dist.reduce_scatter %x on @mesh mesh_axes = ["tp"] scatter_axis = 1 : tensor<2x4x8xf32> -> tensor<2x2x8xf32>
    %p = dist.local_part %x to <@mesh, [[], ["tp"]]> : tensor<2x4x8xf32> -> tensor<2x2x8xf32>
    %s0 = dist.reduce_scatter %t on @mesh mesh_axes = ["tp"] scatter_axis = 0 : tensor<4x8xf32> -> tensor<2x8xf32>
    %p0 = dist.local_part %t to <@mesh, [["tp"]]> : tensor<4x8xf32> -> tensor<2x8xf32>
    return %s, %p, %s0, %p0 : tensor<2x2x8xf32>, tensor<2x2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>
  }
}

// -----

// Started collectives: rt.start moves the same buffers as the blocking
// kernel, rt.wait completes it, and the gathered buffer is read only after
// the wait.
// CHECK-LABEL: func.func @main()
// CHECK: %[[S:.*]] = rt.alloc : memref<2x4xf32>
// CHECK: %[[R:.*]] = rt.start "all_reduce" ins(%{{.*}} : memref<2x4xf32>) outs(%[[S]] : memref<2x4xf32>) {mesh = @mesh, mesh_axes = ["tp"], reduction = 0 : i32}
// CHECK: rt.kernel "relu"
// CHECK: rt.wait %[[R]]
// CHECK: %[[ALL:.*]] = rt.alloc : memref<2x8xf32>
// CHECK: %[[G:.*]] = rt.start "all_gather" ins(%[[S]] : memref<2x4xf32>) outs(%[[ALL]] : memref<2x8xf32>) {gather_axis = 1 : i64
// CHECK: rt.wait %[[G]]
// CHECK: rt.output 0 "output_0", %[[ALL]] : memref<2x8xf32>
module {
  dist.mesh @mesh(shape = 2, axes = ["tp"])
  func.func @main(%x: tensor<2x4xf32>) -> (tensor<2x8xf32>, tensor<2x4xf32>) {
    %t = dist.all_reduce_start %x on @mesh mesh_axes = ["tp"] : tensor<2x4xf32> -> !dist.async<tensor<2x4xf32>>
    %r = nn.relu %x : tensor<2x4xf32>
    %s = dist.wait %t : !dist.async<tensor<2x4xf32>>
    %u = dist.all_gather_start %s on @mesh mesh_axes = ["tp"] gather_axis = 1 : tensor<2x4xf32> -> !dist.async<tensor<2x8xf32>>
    %g = dist.wait %u : !dist.async<tensor<2x8xf32>>
    return %g, %r : tensor<2x8xf32>, tensor<2x4xf32>
  }
}

// -----

// A started reduce-scatter along dim 1: the input is moved to the leading
// dim before the start, the rank's block moved back only after the wait.
// CHECK-LABEL: func.func @main()
// CHECK: %[[XT:.*]] = rt.alloc : memref<4x2x8xf32>
// CHECK: rt.kernel "transpose" ins(%{{.*}} : memref<2x4x8xf32>) outs(%[[XT]] : memref<4x2x8xf32>) {perm = array<i64: 1, 0, 2>}
// CHECK: %[[S:.*]] = rt.alloc : memref<2x2x8xf32>
// CHECK: %[[R:.*]] = rt.start "reduce_scatter" ins(%[[XT]] : memref<4x2x8xf32>) outs(%[[S]] : memref<2x2x8xf32>)
// CHECK: rt.kernel "relu"
// CHECK: rt.wait %[[R]]
// CHECK: rt.kernel "transpose" ins(%[[S]] : memref<2x2x8xf32>) outs(%{{.*}} : memref<2x2x8xf32>) {perm = array<i64: 1, 0, 2>}
module {
  dist.mesh @mesh(shape = 2, axes = ["tp"])
  func.func @main(%x: tensor<2x4x8xf32>) -> (tensor<2x2x8xf32>, tensor<2x4x8xf32>) {
    %t = dist.reduce_scatter_start %x on @mesh mesh_axes = ["tp"] scatter_axis = 1 : tensor<2x4x8xf32> -> !dist.async<tensor<2x2x8xf32>>
    %r = nn.relu %x : tensor<2x4x8xf32>
    %s = dist.wait %t : !dist.async<tensor<2x2x8xf32>>
    return %s, %r : tensor<2x2x8xf32>, tensor<2x4x8xf32>
  }
}

// -----

// With a batch of one, moving the sequence to the leading dim moves only a
// dim of size 1: views instead of transposes.
// CHECK-LABEL: func.func @main()
// CHECK: %[[X:.*]] = rt.input 0
// CHECK: %[[V:.*]] = rt.view %[[X]] : memref<1x4x8xf32> to memref<4x1x8xf32>
// CHECK: %[[S:.*]] = rt.alloc : memref<2x1x8xf32>
// CHECK: rt.kernel "reduce_scatter" ins(%[[V]] : memref<4x1x8xf32>) outs(%[[S]] : memref<2x1x8xf32>)
// CHECK: %[[B:.*]] = rt.view %[[S]] : memref<2x1x8xf32> to memref<1x2x8xf32>
// CHECK-NOT: "transpose"
module {
  dist.mesh @mesh(shape = 2, axes = ["tp"])
  func.func @main(%x: tensor<1x4x8xf32>) -> tensor<1x2x8xf32> {
    %s = dist.reduce_scatter %x on @mesh mesh_axes = ["tp"] scatter_axis = 1 : tensor<1x4x8xf32> -> tensor<1x2x8xf32>
    return %s : tensor<1x2x8xf32>
  }
}
