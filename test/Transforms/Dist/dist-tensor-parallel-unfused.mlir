// RUN: parc-opt %s --split-input-file --dist-tensor-parallel=tp=2 | FileCheck %s

// Attention and MLPs that fusion did not recognise split through their
// primitive ops by the ops' sharding rules, as the fused forms do: one
// all-reduce after the row linear, weights cut per rank.

// Unfused attention, 4 heads of 4 over 2 ranks: the scale is a Div and K is
// transposed with perm [0, 2, 3, 1] before Q·K. Heads are dim 1 of Q, K, V,
// the scores and the context; 2 heads per rank.
// CHECK-LABEL: func.func @main
// CHECK-COUNT-3: nn.linear {{.*}} -> tensor<1x4x8xf32>
// CHECK: nn.transpose {{.*}} -> tensor<1x2x4x4xf32>
// CHECK: nn.transpose {{.*}} {perm = array<i64: 0, 2, 3, 1>} : tensor<1x4x2x4xf32> -> tensor<1x2x4x4xf32>
// CHECK: nn.matmul {{.*}} : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
// CHECK: nn.div {{.*}} -> tensor<1x2x4x4xf32>
// CHECK: nn.softmax {{.*}} : tensor<1x2x4x4xf32>
// CHECK: nn.matmul {{.*}} -> tensor<1x2x4x4xf32>
// CHECK: nn.reshape {{.*}} : tensor<1x4x2x4xf32> to tensor<1x4x8xf32>
// CHECK: nn.linear {{.*}} : (tensor<1x4x8xf32>, tensor<8x16xf32>) -> tensor<1x4x16xf32>
// CHECK: dist.all_reduce
// CHECK-NOT: dist.all_reduce
// CHECK-NOT: dist.all_gather
func.func @main(%x: tensor<1x4x16xf32>) -> tensor<1x4x16xf32> {
  %wq = arith.constant dense<0.5> : tensor<16x16xf32>
  %wk = arith.constant dense<0.25> : tensor<16x16xf32>
  %wv = arith.constant dense<0.125> : tensor<16x16xf32>
  %wo = arith.constant dense<0.0625> : tensor<16x16xf32>
  %c = arith.constant dense<2.0> : tensor<f32>
  %q = nn.linear %x, %wq : (tensor<1x4x16xf32>, tensor<16x16xf32>) -> tensor<1x4x16xf32>
  %k = nn.linear %x, %wk : (tensor<1x4x16xf32>, tensor<16x16xf32>) -> tensor<1x4x16xf32>
  %v = nn.linear %x, %wv : (tensor<1x4x16xf32>, tensor<16x16xf32>) -> tensor<1x4x16xf32>
  %q4 = nn.reshape %q : tensor<1x4x16xf32> to tensor<1x4x4x4xf32>
  %k4 = nn.reshape %k : tensor<1x4x16xf32> to tensor<1x4x4x4xf32>
  %v4 = nn.reshape %v : tensor<1x4x16xf32> to tensor<1x4x4x4xf32>
  %qh = nn.transpose %q4 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x4x4x4xf32> -> tensor<1x4x4x4xf32>
  %kt = nn.transpose %k4 {perm = array<i64: 0, 2, 3, 1>} : tensor<1x4x4x4xf32> -> tensor<1x4x4x4xf32>
  %vh = nn.transpose %v4 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x4x4x4xf32> -> tensor<1x4x4x4xf32>
  %s = nn.matmul %qh, %kt : (tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %d = nn.div %s, %c : (tensor<1x4x4x4xf32>, tensor<f32>) -> tensor<1x4x4x4xf32>
  %p = nn.softmax %d {axis = 3 : i64} : tensor<1x4x4x4xf32>
  %o = nn.matmul %p, %vh : (tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %ot = nn.transpose %o {perm = array<i64: 0, 2, 1, 3>} : tensor<1x4x4x4xf32> -> tensor<1x4x4x4xf32>
  %r = nn.reshape %ot : tensor<1x4x4x4xf32> to tensor<1x4x16xf32>
  %y = nn.linear %r, %wo : (tensor<1x4x16xf32>, tensor<16x16xf32>) -> tensor<1x4x16xf32>
  return %y : tensor<1x4x16xf32>
}

// -----

// The torch SDPA decomposition: Q and K each multiplied by √scale, K^T by
// perm [0, 1, 3, 2] after the head split, a causal mask added (it
// broadcasts over heads, so every rank reads all of it).
// CHECK-LABEL: func.func @main
// CHECK: nn.mul {{.*}} -> tensor<1x2x4x4xf32>
// CHECK: nn.mul {{.*}} -> tensor<1x2x4x4xf32>
// CHECK: nn.matmul {{.*}} -> tensor<1x2x4x4xf32>
// CHECK: nn.add {{.*}} : (tensor<1x2x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x2x4x4xf32>
// CHECK: nn.linear {{.*}} : (tensor<1x4x8xf32>, tensor<8x16xf32>) -> tensor<1x4x16xf32>
// CHECK: dist.all_reduce
// CHECK-NOT: dist.all_reduce
func.func @main(%x: tensor<1x4x16xf32>, %mask: tensor<1x1x4x4xf32>) -> tensor<1x4x16xf32> {
  %wq = arith.constant dense<0.5> : tensor<16x16xf32>
  %wk = arith.constant dense<0.25> : tensor<16x16xf32>
  %wv = arith.constant dense<0.125> : tensor<16x16xf32>
  %wo = arith.constant dense<0.0625> : tensor<16x16xf32>
  %c = arith.constant dense<0.7071> : tensor<f32>
  %q = nn.linear %x, %wq : (tensor<1x4x16xf32>, tensor<16x16xf32>) -> tensor<1x4x16xf32>
  %k = nn.linear %x, %wk : (tensor<1x4x16xf32>, tensor<16x16xf32>) -> tensor<1x4x16xf32>
  %v = nn.linear %x, %wv : (tensor<1x4x16xf32>, tensor<16x16xf32>) -> tensor<1x4x16xf32>
  %q4 = nn.reshape %q : tensor<1x4x16xf32> to tensor<1x4x4x4xf32>
  %k4 = nn.reshape %k : tensor<1x4x16xf32> to tensor<1x4x4x4xf32>
  %v4 = nn.reshape %v : tensor<1x4x16xf32> to tensor<1x4x4x4xf32>
  %qh = nn.transpose %q4 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x4x4x4xf32> -> tensor<1x4x4x4xf32>
  %kh = nn.transpose %k4 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x4x4x4xf32> -> tensor<1x4x4x4xf32>
  %vh = nn.transpose %v4 {perm = array<i64: 0, 2, 1, 3>} : tensor<1x4x4x4xf32> -> tensor<1x4x4x4xf32>
  %qs = nn.mul %qh, %c : (tensor<1x4x4x4xf32>, tensor<f32>) -> tensor<1x4x4x4xf32>
  %kt = nn.transpose %kh {perm = array<i64: 0, 1, 3, 2>} : tensor<1x4x4x4xf32> -> tensor<1x4x4x4xf32>
  %ks = nn.mul %kt, %c : (tensor<1x4x4x4xf32>, tensor<f32>) -> tensor<1x4x4x4xf32>
  %s = nn.matmul %qs, %ks : (tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %m = nn.add %s, %mask : (tensor<1x4x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x4x4x4xf32>
  %p = nn.softmax %m {axis = 3 : i64} : tensor<1x4x4x4xf32>
  %o = nn.matmul %p, %vh : (tensor<1x4x4x4xf32>, tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %ot = nn.transpose %o {perm = array<i64: 0, 2, 1, 3>} : tensor<1x4x4x4xf32> -> tensor<1x4x4x4xf32>
  %r = nn.reshape %ot : tensor<1x4x4x4xf32> to tensor<1x4x16xf32>
  %y = nn.linear %r, %wo : (tensor<1x4x16xf32>, tensor<16x16xf32>) -> tensor<1x4x16xf32>
  return %y : tensor<1x4x16xf32>
}

// -----

// An unfused MLP, GELU written out as x · 0.5 · (1 + erf(x / √2)) after a
// bias add: split by its 32 features (16 per rank); the bias is cut too.
// CHECK-LABEL: func.func @main
// CHECK: nn.linear {{.*}} -> tensor<2x4x16xf32>
// CHECK: dist.local_part {{.*}} -> tensor<16xf32>
// CHECK: nn.add {{.*}} : (tensor<2x4x16xf32>, tensor<16xf32>) -> tensor<2x4x16xf32>
// CHECK: nn.erf {{.*}} : tensor<2x4x16xf32>
// CHECK: nn.linear {{.*}} : (tensor<2x4x16xf32>, tensor<16x8xf32>) -> tensor<2x4x8xf32>
// CHECK: dist.all_reduce
// CHECK-NOT: dist.all_reduce
func.func @main(%x: tensor<2x4x8xf32>) -> tensor<2x4x8xf32> {
  %w1 = arith.constant dense<0.5> : tensor<8x32xf32>
  %b1 = arith.constant dense<0.1> : tensor<32xf32>
  %w2 = arith.constant dense<0.25> : tensor<32x8xf32>
  %half = arith.constant dense<0.5> : tensor<f32>
  %one = arith.constant dense<1.0> : tensor<f32>
  %sqrt2 = arith.constant dense<1.4142> : tensor<f32>
  %h = nn.linear %x, %w1 : (tensor<2x4x8xf32>, tensor<8x32xf32>) -> tensor<2x4x32xf32>
  %hb = nn.add %h, %b1 : (tensor<2x4x32xf32>, tensor<32xf32>) -> tensor<2x4x32xf32>
  %a = nn.div %hb, %sqrt2 : (tensor<2x4x32xf32>, tensor<f32>) -> tensor<2x4x32xf32>
  %e = nn.erf %a : tensor<2x4x32xf32>
  %e1 = nn.add %e, %one : (tensor<2x4x32xf32>, tensor<f32>) -> tensor<2x4x32xf32>
  %xh = nn.mul %hb, %half : (tensor<2x4x32xf32>, tensor<f32>) -> tensor<2x4x32xf32>
  %g = nn.mul %xh, %e1 : (tensor<2x4x32xf32>, tensor<2x4x32xf32>) -> tensor<2x4x32xf32>
  %y = nn.linear %g, %w2 : (tensor<2x4x32xf32>, tensor<32x8xf32>) -> tensor<2x4x8xf32>
  return %y : tensor<2x4x8xf32>
}
