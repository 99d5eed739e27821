// RUN: parc-opt %s --dist-tensor-parallel=tp=4 | FileCheck %s

// Grouped-query attention with 4 query heads and 2 key/value heads over 4
// ranks: each rank keeps one query head; the key and value projections are
// cut into 2 parts, each kept by 2 consecutive ranks (query heads 0-1 read
// key/value head 0, heads 2-3 head 1).
// CHECK-LABEL: func.func @main
// CHECK: dist.local_part %{{.*}} to <@mesh, {{\[\[}}], ["tp"]]> : tensor<8x8xf32> -> tensor<8x2xf32>
// CHECK: dist.local_part %{{.*}} to <@mesh, {{\[\[}}], ["tp"]], replicas = [1, 2]> : tensor<8x4xf32> -> tensor<8x2xf32>
// CHECK: dist.local_part %{{.*}} to <@mesh, {{\[\[}}], ["tp"]], replicas = [1, 2]> : tensor<8x4xf32> -> tensor<8x2xf32>
// CHECK: nn.attention {{.*}} : (tensor<1x1x3x2xf32>, tensor<1x1x3x2xf32>, tensor<1x1x3x2xf32>) -> tensor<1x1x3x2xf32>
// CHECK: dist.local_part %{{.*}} to <@mesh, {{\[\[}}"tp"]]> : tensor<8x8xf32> -> tensor<2x8xf32>
// CHECK: dist.all_reduce
func.func @main(%x: tensor<3x8xf32>) -> tensor<3x8xf32> {
  %wq = arith.constant dense<0.5> : tensor<8x8xf32>
  %wk = arith.constant dense<0.25> : tensor<8x4xf32>
  %wv = arith.constant dense<0.125> : tensor<8x4xf32>
  %wo = arith.constant dense<0.25> : tensor<8x8xf32>
  %q = nn.linear %x, %wq : (tensor<3x8xf32>, tensor<8x8xf32>) -> tensor<3x8xf32>
  %k = nn.linear %x, %wk : (tensor<3x8xf32>, tensor<8x4xf32>) -> tensor<3x4xf32>
  %v = nn.linear %x, %wv : (tensor<3x8xf32>, tensor<8x4xf32>) -> tensor<3x4xf32>
  %qh = nn.reshape %q : tensor<3x8xf32> to tensor<1x3x4x2xf32>
  %kh = nn.reshape %k : tensor<3x4xf32> to tensor<1x3x2x2xf32>
  %vh = nn.reshape %v : tensor<3x4xf32> to tensor<1x3x2x2xf32>
  %qt = nn.transpose %qh {perm = array<i64: 0, 2, 1, 3>} : tensor<1x3x4x2xf32> -> tensor<1x4x3x2xf32>
  %kt = nn.transpose %kh {perm = array<i64: 0, 2, 1, 3>} : tensor<1x3x2x2xf32> -> tensor<1x2x3x2xf32>
  %vt = nn.transpose %vh {perm = array<i64: 0, 2, 1, 3>} : tensor<1x3x2x2xf32> -> tensor<1x2x3x2xf32>
  %o = nn.attention %qt, %kt, %vt {scale = 0.5 : f32} : (tensor<1x4x3x2xf32>, tensor<1x2x3x2xf32>, tensor<1x2x3x2xf32>) -> tensor<1x4x3x2xf32> {
  ^bb0(%s: tensor<1x4x3x3xf32>):
    nn.yield %s : tensor<1x4x3x3xf32>
  }
  %ot = nn.transpose %o {perm = array<i64: 0, 2, 1, 3>} : tensor<1x4x3x2xf32> -> tensor<1x3x4x2xf32>
  %of = nn.reshape %ot : tensor<1x3x4x2xf32> to tensor<3x8xf32>
  %y = nn.linear %of, %wo : (tensor<3x8xf32>, tensor<8x8xf32>) -> tensor<3x8xf32>
  return %y : tensor<3x8xf32>
}
