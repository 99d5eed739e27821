// RUN: parc-opt %s | parc-opt | FileCheck %s

// CHECK-LABEL: func.func @program
// CHECK: %[[X:.*]] = rt.input 0 "x" : memref<2x4xf32>
// CHECK: %[[W:.*]] = rt.weight "w" {value = dense<1.000000e+00> : tensor<4x3xf32>} : memref<4x3xf32>
// CHECK: %[[E:.*]] = rt.weight "ext" {length = 48 : i64, location = "w.bin", offset = 0 : i64} : memref<4x3xf32>
// CHECK: %[[B:.*]] = rt.alloc {offset = 64 : i64} : memref<2x3xf32>
// CHECK: rt.kernel "matmul" ins(%[[X]], %[[W]] : memref<2x4xf32>, memref<4x3xf32>) outs(%[[B]] : memref<2x3xf32>)
// CHECK: %[[V:.*]] = rt.view %[[B]] : memref<2x3xf32> to memref<6xf32>
// CHECK: rt.kernel "softmax" ins(%[[V]] : memref<6xf32>) outs(%[[V]] : memref<6xf32>) {axis = 0 : i64}
// CHECK: rt.output 0 "y", %[[V]] : memref<6xf32>
func.func @program() {
  %x = rt.input 0 "x" : memref<2x4xf32>
  %w = rt.weight "w" {value = dense<1.0> : tensor<4x3xf32>} : memref<4x3xf32>
  %e = rt.weight "ext" {location = "w.bin", offset = 0 : i64, length = 48 : i64} : memref<4x3xf32>
  %b = rt.alloc {offset = 64 : i64} : memref<2x3xf32>
  rt.kernel "matmul" ins(%x, %w : memref<2x4xf32>, memref<4x3xf32>) outs(%b : memref<2x3xf32>)
  %v = rt.view %b : memref<2x3xf32> to memref<6xf32>
  rt.kernel "softmax" ins(%v : memref<6xf32>) outs(%v : memref<6xf32>) {axis = 0 : i64}
  rt.output 0 "y", %v : memref<6xf32>
  return
}

// A weight cut twice: [4, 8] keeps half of dim 0 by "ep", then half of
// dim 1 by "tp", on the mesh of the program's module.
// CHECK-LABEL: module attributes {rt.mesh
// CHECK-LABEL: func.func @nested_shard
// CHECK: rt.weight "w" {shard = [#dist.sharding<@mesh, {{\[\[}}"ep"]]>, #dist.sharding<@mesh, {{\[\[}}], ["tp"]]>], value = dense<1.000000e+00> : tensor<4x8xf32>} : memref<2x4xf32>
module attributes {rt.mesh = {axes = ["ep", "tp"], shape = array<i64: 2, 2>, sym_name = "mesh"}} {
  func.func @nested_shard() {
    %w = rt.weight "w" {value = dense<1.0> : tensor<4x8xf32>, shard = [#dist.sharding<@mesh, [["ep"]]>, #dist.sharding<@mesh, [[], ["tp"]]>]} : memref<2x4xf32>
    return
  }
}

// An asynchronous call: the request is the event between start and wait.
// CHECK-LABEL: func.func @async
// CHECK: %[[R:.*]] = rt.start "all_reduce" ins(%{{.*}} : memref<8xf32>) outs(%{{.*}} : memref<8xf32>) {mesh = @mesh, mesh_axes = ["tp"]}
// CHECK: rt.kernel "relu"
// CHECK: rt.wait %[[R]]
func.func @async() {
  %x = rt.input 0 "x" : memref<8xf32>
  %s = rt.alloc : memref<8xf32>
  %r = rt.start "all_reduce" ins(%x : memref<8xf32>) outs(%s : memref<8xf32>) {mesh = @mesh, mesh_axes = ["tp"]}
  %y = rt.alloc : memref<8xf32>
  rt.kernel "relu" ins(%x : memref<8xf32>) outs(%y : memref<8xf32>)
  rt.wait %r
  rt.output 0 "y", %s : memref<8xf32>
  return
}

// A send writes nothing; started, its request keeps the buffer alive.
// CHECK-LABEL: func.func @send_only
// CHECK: rt.kernel "send" ins(%[[B:.*]] : memref<4xf32>) {peer = 1 : i64}
// CHECK-NEXT: %[[R:.*]] = rt.start "send" ins(%[[B]] : memref<4xf32>) {peer = 1 : i64}
// CHECK-NEXT: rt.wait %[[R]]
func.func @send_only() {
  %b = rt.alloc {offset = 0 : i64} : memref<4xf32>
  rt.kernel "send" ins(%b : memref<4xf32>) {peer = 1 : i64}
  %r = rt.start "send" ins(%b : memref<4xf32>) {peer = 1 : i64}
  rt.wait %r
  return
}
