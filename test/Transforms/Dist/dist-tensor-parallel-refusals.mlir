// RUN: parc-opt %s --split-input-file --dist-tensor-parallel="tp=2 explain=true" -o /dev/null 2>&1 | FileCheck %s

// Each op's sharding rule refuses a split it cannot carry: the region stays
// replicated (no all-reduce), and explain names the node and the reason.
// Every case is a column linear feeding a row linear through one op.

// Operands split on different dims meet in an add.
// CHECK: node 'mlp/add' (nn.add) stays replicated under tensor parallelism: its operands are split on different dims
func.func @main(%x: tensor<2x16x8xf32>) -> tensor<2x16x8xf32> {
  %w1 = arith.constant dense<0.5> : tensor<8x16xf32>
  %w2 = arith.constant dense<0.25> : tensor<16x8xf32>
  %h = nn.linear %x, %w1 : (tensor<2x16x8xf32>, tensor<8x16xf32>) -> tensor<2x16x16xf32>
  %t = nn.transpose %h {perm = array<i64: 0, 2, 1>} : tensor<2x16x16xf32> -> tensor<2x16x16xf32>
  %a = nn.add %h, %t : (tensor<2x16x16xf32>, tensor<2x16x16xf32>) -> tensor<2x16x16xf32> loc("mlp/add")
  %y = nn.linear %a, %w2 : (tensor<2x16x16xf32>, tensor<16x8xf32>) -> tensor<2x16x8xf32>
  return %y : tensor<2x16x8xf32>
}

// -----

// A product over the split dim leaves partial sums inside the region.
// CHECK: node 'attn/scores' (nn.matmul) stays replicated under tensor parallelism: it reduces along the split dim
func.func @main(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %w1 = arith.constant dense<0.5> : tensor<8x16xf32>
  %w2 = arith.constant dense<0.25> : tensor<4x8xf32>
  %h = nn.linear %x, %w1 : (tensor<2x4x8xf32>, tensor<8x16xf32>) -> tensor<2x4x16xf32>
  %t = nn.transpose %h {perm = array<i64: 0, 2, 1>} : tensor<2x4x16xf32> -> tensor<2x16x4xf32>
  %m = nn.matmul %h, %t : (tensor<2x4x16xf32>, tensor<2x16x4xf32>) -> tensor<2x4x4xf32> loc("attn/scores")
  %y = nn.linear %m, %w2 : (tensor<2x4x4xf32>, tensor<4x8xf32>) -> tensor<2x4x8xf32>
  return %y : tensor<2x4x8xf32>
}

// -----

// CHECK: node 'cat' (nn.concat) stays replicated under tensor parallelism: it concatenates along the split dim
func.func @main(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %w1 = arith.constant dense<0.5> : tensor<8x16xf32>
  %w2 = arith.constant dense<0.25> : tensor<32x8xf32>
  %a = nn.linear %x, %w1 : (tensor<2x4x8xf32>, tensor<8x16xf32>) -> tensor<2x4x16xf32>
  %b = nn.linear %x, %w1 : (tensor<2x4x8xf32>, tensor<8x16xf32>) -> tensor<2x4x16xf32>
  %c = nn.concat %a, %b {axis = 2 : i64} : (tensor<2x4x16xf32>, tensor<2x4x16xf32>) -> tensor<2x4x32xf32> loc("cat")
  %y = nn.linear %c, %w2 : (tensor<2x4x32xf32>, tensor<32x8xf32>) -> tensor<2x4x8xf32>
  return %y : tensor<2x4x8xf32>
}

// -----

// Only a column linear's output can be split blockwise along its split dim.
// CHECK: node 'chunk' (nn.split) stays replicated under tensor parallelism: it splits the split dim of a computed value
func.func @main(%x: tensor<2x4x8xf32>) -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>) {
  %w1 = arith.constant dense<0.5> : tensor<8x16xf32>
  %w2 = arith.constant dense<0.25> : tensor<8x8xf32>
  %h = nn.linear %x, %w1 : (tensor<2x4x8xf32>, tensor<8x16xf32>) -> tensor<2x4x16xf32>
  %r = nn.relu %h : tensor<2x4x16xf32>
  %p:2 = nn.split %r {axis = 2 : i64} : tensor<2x4x16xf32> -> (tensor<2x4x8xf32>, tensor<2x4x8xf32>) loc("chunk")
  %y = nn.linear %p#0, %w2 : (tensor<2x4x8xf32>, tensor<8x8xf32>) -> tensor<2x4x8xf32>
  return %y, %p#1 : tensor<2x4x8xf32>, tensor<2x4x8xf32>
}

// -----

// CHECK: node 'narrow' (nn.slice) stays replicated under tensor parallelism: it slices the split dim
func.func @main(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %w1 = arith.constant dense<0.5> : tensor<8x16xf32>
  %w2 = arith.constant dense<0.25> : tensor<8x8xf32>
  %h = nn.linear %x, %w1 : (tensor<2x4x8xf32>, tensor<8x16xf32>) -> tensor<2x4x16xf32>
  %s = nn.slice %h {starts = array<i64: 0, 0, 4>, steps = array<i64: 1, 1, 1>} : tensor<2x4x16xf32> -> tensor<2x4x8xf32> loc("narrow")
  %y = nn.linear %s, %w2 : (tensor<2x4x8xf32>, tensor<8x8xf32>) -> tensor<2x4x8xf32>
  return %y : tensor<2x4x8xf32>
}

// -----

// A softmax over the split features (a norm would say the same).
// CHECK: node 'attn/softmax' (nn.softmax) stays replicated under tensor parallelism: it normalises along the split dim
func.func @main(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %w1 = arith.constant dense<0.5> : tensor<8x16xf32>
  %w2 = arith.constant dense<0.25> : tensor<16x8xf32>
  %h = nn.linear %x, %w1 : (tensor<2x4x8xf32>, tensor<8x16xf32>) -> tensor<2x4x16xf32>
  %r = nn.relu %h : tensor<2x4x16xf32>
  %s = nn.softmax %r {axis = 2 : i64} : tensor<2x4x16xf32> loc("attn/softmax")
  %y = nn.linear %s, %w2 : (tensor<2x4x16xf32>, tensor<16x8xf32>) -> tensor<2x4x8xf32>
  return %y : tensor<2x4x8xf32>
}

// -----

// A max over the split features, read beside the region's path.
// CHECK: node 'max' (nn.reduce_max) stays replicated under tensor parallelism: it reduces along the split dim
func.func @main(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %w1 = arith.constant dense<0.5> : tensor<8x16xf32>
  %w2 = arith.constant dense<0.25> : tensor<16x8xf32>
  %h = nn.linear %x, %w1 : (tensor<2x4x8xf32>, tensor<8x16xf32>) -> tensor<2x4x16xf32>
  %m = nn.reduce_max %h {axes = array<i64: 2>} : tensor<2x4x16xf32> -> tensor<2x4x1xf32> loc("max")
  %e = nn.sub %h, %m : (tensor<2x4x16xf32>, tensor<2x4x1xf32>) -> tensor<2x4x16xf32>
  %y = nn.linear %e, %w2 : (tensor<2x4x16xf32>, tensor<16x8xf32>) -> tensor<2x4x8xf32>
  return %y : tensor<2x4x8xf32>
}

// -----

// A reshape that merges the split features with the sequence before them
// ([2, 4, 16] to [2, 64]): no rank holds a contiguous part of the 64.
// CHECK: node 'flat' (nn.reshape) stays replicated under tensor parallelism: it merges the split dim with the dims before it
func.func @main(%x: tensor<2x4x8xf32>) -> tensor<2x8xf32> {
  %w1 = arith.constant dense<0.5> : tensor<8x16xf32>
  %w2 = arith.constant dense<0.25> : tensor<64x8xf32>
  %h = nn.linear %x, %w1 : (tensor<2x4x8xf32>, tensor<8x16xf32>) -> tensor<2x4x16xf32>
  %r = nn.reshape %h : tensor<2x4x16xf32> to tensor<2x64xf32> loc("flat")
  %y = nn.linear %r, %w2 : (tensor<2x64xf32>, tensor<64x8xf32>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}
