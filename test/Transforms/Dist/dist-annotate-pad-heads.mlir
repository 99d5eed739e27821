// RUN: parc-opt %s --split-input-file --dist-annotate="tp=4" | FileCheck %s

// 6 heads of 2 over 4 ranks, from a fused QKV linear with a bias: each
// projection's block of the weight and bias takes 2 zero heads (12 -> 16
// features, 36 -> 48 in all), the output projection 4 zero rows, and every
// value between them 8 heads; then 4 ranks split them evenly.
// CHECK-LABEL: func.func @main
func.func @main(%x: tensor<3x12xf32>) -> tensor<3x12xf32> {
  %wqkv = arith.constant dense<0.5> : tensor<12x36xf32>
  %bqkv = arith.constant dense<0.1> : tensor<36xf32>
  %wo = arith.constant dense<0.25> : tensor<12x12xf32>
  // CHECK: nn.linear {{.*}} : (tensor<3x12xf32>, tensor<12x48xf32>, tensor<48xf32>) -> tensor<3x48xf32>
  // CHECK: nn.split {{.*}} -> (tensor<3x16xf32>, tensor<3x16xf32>, tensor<3x16xf32>)
  // CHECK: nn.attention {{.*}} -> tensor<1x8x3x2xf32>
  // CHECK: ^bb0(%{{.*}}: tensor<1x8x3x3xf32>)
  // CHECK: nn.reshape %{{.*}} : tensor<1x3x8x2xf32> to tensor<3x16xf32>
  // CHECK: nn.linear {{.*}} : (tensor<3x16xf32>, tensor<16x12xf32>) -> tensor<3x12xf32>
  %qkv = nn.linear %x, %wqkv, %bqkv : (tensor<3x12xf32>, tensor<12x36xf32>, tensor<36xf32>) -> tensor<3x36xf32>
  %q, %k, %v = nn.split %qkv {axis = 1 : i64} : tensor<3x36xf32> -> (tensor<3x12xf32>, tensor<3x12xf32>, tensor<3x12xf32>)
  %qh = nn.reshape %q : tensor<3x12xf32> to tensor<1x3x6x2xf32>
  %kh = nn.reshape %k : tensor<3x12xf32> to tensor<1x3x6x2xf32>
  %vh = nn.reshape %v : tensor<3x12xf32> to tensor<1x3x6x2xf32>
  %qt = nn.transpose %qh {perm = array<i64: 0, 2, 1, 3>} : tensor<1x3x6x2xf32> -> tensor<1x6x3x2xf32>
  %kt = nn.transpose %kh {perm = array<i64: 0, 2, 1, 3>} : tensor<1x3x6x2xf32> -> tensor<1x6x3x2xf32>
  %vt = nn.transpose %vh {perm = array<i64: 0, 2, 1, 3>} : tensor<1x3x6x2xf32> -> tensor<1x6x3x2xf32>
  %o = nn.attention %qt, %kt, %vt {scale = 0.5 : f32} : (tensor<1x6x3x2xf32>, tensor<1x6x3x2xf32>, tensor<1x6x3x2xf32>) -> tensor<1x6x3x2xf32> {
  ^bb0(%s: tensor<1x6x3x3xf32>):
    %c = arith.constant dense<1.0> : tensor<3x3xf32>
    %m = nn.add %s, %c : (tensor<1x6x3x3xf32>, tensor<3x3xf32>) -> tensor<1x6x3x3xf32>
    nn.yield %m : tensor<1x6x3x3xf32>
  }
  %ot = nn.transpose %o {perm = array<i64: 0, 2, 1, 3>} : tensor<1x6x3x2xf32> -> tensor<1x3x6x2xf32>
  %of = nn.reshape %ot : tensor<1x3x6x2xf32> to tensor<3x12xf32>
  %y = nn.linear %of, %wo : (tensor<3x12xf32>, tensor<12x12xf32>) -> tensor<3x12xf32>
  return %y : tensor<3x12xf32>
}

// -----

// Grouped-query attention, 6 query heads in groups of 2 over 3 key/value
// heads, over 4 ranks: one zero key/value head with its group of 2 zero
// query heads gives 8/4, which 4 ranks split evenly, each query head still
// reading its own key/value head.
// CHECK-LABEL: func.func @main
func.func @main(%x: tensor<3x8xf32>) -> tensor<3x8xf32> {
  %wq = arith.constant dense<0.5> : tensor<8x12xf32>
  %wk = arith.constant dense<0.5> : tensor<8x6xf32>
  %wv = arith.constant dense<0.5> : tensor<8x6xf32>
  %wo = arith.constant dense<0.5> : tensor<12x8xf32>
  // CHECK-DAG: nn.linear {{.*}} : (tensor<3x8xf32>, tensor<8x16xf32>) -> tensor<3x16xf32>
  // CHECK-DAG: nn.linear {{.*}} : (tensor<3x8xf32>, tensor<8x8xf32>) -> tensor<3x8xf32>
  // CHECK: nn.attention {{.*}} : (tensor<1x8x3x2xf32>, tensor<1x4x3x2xf32>, tensor<1x4x3x2xf32>) -> tensor<1x8x3x2xf32>
  // CHECK: nn.linear {{.*}} : (tensor<3x16xf32>, tensor<16x8xf32>) -> tensor<3x8xf32>
  %q = nn.linear %x, %wq : (tensor<3x8xf32>, tensor<8x12xf32>) -> tensor<3x12xf32>
  %k = nn.linear %x, %wk : (tensor<3x8xf32>, tensor<8x6xf32>) -> tensor<3x6xf32>
  %v = nn.linear %x, %wv : (tensor<3x8xf32>, tensor<8x6xf32>) -> tensor<3x6xf32>
  %qh = nn.reshape %q : tensor<3x12xf32> to tensor<1x3x6x2xf32>
  %kh = nn.reshape %k : tensor<3x6xf32> to tensor<1x3x3x2xf32>
  %vh = nn.reshape %v : tensor<3x6xf32> to tensor<1x3x3x2xf32>
  %qt = nn.transpose %qh {perm = array<i64: 0, 2, 1, 3>} : tensor<1x3x6x2xf32> -> tensor<1x6x3x2xf32>
  %kt = nn.transpose %kh {perm = array<i64: 0, 2, 1, 3>} : tensor<1x3x3x2xf32> -> tensor<1x3x3x2xf32>
  %vt = nn.transpose %vh {perm = array<i64: 0, 2, 1, 3>} : tensor<1x3x3x2xf32> -> tensor<1x3x3x2xf32>
  %o = nn.attention %qt, %kt, %vt {scale = 0.5 : f32} : (tensor<1x6x3x2xf32>, tensor<1x3x3x2xf32>, tensor<1x3x3x2xf32>) -> tensor<1x6x3x2xf32> {
  ^bb0(%s: tensor<1x6x3x3xf32>):
    nn.yield %s : tensor<1x6x3x3xf32>
  }
  %ot = nn.transpose %o {perm = array<i64: 0, 2, 1, 3>} : tensor<1x6x3x2xf32> -> tensor<1x3x6x2xf32>
  %of = nn.reshape %ot : tensor<1x3x6x2xf32> to tensor<3x12xf32>
  %y = nn.linear %of, %wo : (tensor<3x12xf32>, tensor<12x8xf32>) -> tensor<3x8xf32>
  return %y : tensor<3x8xf32>
}

// -----

// The same with the weights stored as external data: their bytes stay in
// the file, and the zero heads are described. The fused QKV weight and
// bias take 2 zero heads (4 zeros) after each of their Q, K and V blocks
// (padding_blocks), the output projection 4 zero rows at the end.
// CHECK-LABEL: func.func @main
// CHECK-DAG: nn.external_weight {length = 1728 : i64, location = "m.data", name = "wqkv", offset = 0 : i64, padding = array<i64: 0, 12>, padding_blocks = array<i64: 12, 4, 12, 4, 12, 4>} : tensor<12x48xf32>
// CHECK-DAG: nn.external_weight {length = 144 : i64, location = "m.data", name = "bqkv", offset = 1728 : i64, padding = array<i64: 12>, padding_blocks = array<i64: 12, 4, 12, 4, 12, 4>} : tensor<48xf32>
// CHECK: nn.attention {{.*}} -> tensor<1x8x3x2xf32>
// CHECK: nn.external_weight {length = 576 : i64, location = "m.data", name = "wo", offset = 1872 : i64, padding = array<i64: 4, 0>} : tensor<16x12xf32>
func.func @main(%x: tensor<3x12xf32>) -> tensor<3x12xf32> {
  %wqkv = nn.external_weight {name = "wqkv", location = "m.data", offset = 0 : i64, length = 1728 : i64} : tensor<12x36xf32>
  %bqkv = nn.external_weight {name = "bqkv", location = "m.data", offset = 1728 : i64, length = 144 : i64} : tensor<36xf32>
  %wo = nn.external_weight {name = "wo", location = "m.data", offset = 1872 : i64, length = 576 : i64} : tensor<12x12xf32>
  %qkv = nn.linear %x, %wqkv, %bqkv : (tensor<3x12xf32>, tensor<12x36xf32>, tensor<36xf32>) -> tensor<3x36xf32>
  %q, %k, %v = nn.split %qkv {axis = 1 : i64} : tensor<3x36xf32> -> (tensor<3x12xf32>, tensor<3x12xf32>, tensor<3x12xf32>)
  %qh = nn.reshape %q : tensor<3x12xf32> to tensor<1x3x6x2xf32>
  %kh = nn.reshape %k : tensor<3x12xf32> to tensor<1x3x6x2xf32>
  %vh = nn.reshape %v : tensor<3x12xf32> to tensor<1x3x6x2xf32>
  %qt = nn.transpose %qh {perm = array<i64: 0, 2, 1, 3>} : tensor<1x3x6x2xf32> -> tensor<1x6x3x2xf32>
  %kt = nn.transpose %kh {perm = array<i64: 0, 2, 1, 3>} : tensor<1x3x6x2xf32> -> tensor<1x6x3x2xf32>
  %vt = nn.transpose %vh {perm = array<i64: 0, 2, 1, 3>} : tensor<1x3x6x2xf32> -> tensor<1x6x3x2xf32>
  %o = nn.attention %qt, %kt, %vt {scale = 0.5 : f32} : (tensor<1x6x3x2xf32>, tensor<1x6x3x2xf32>, tensor<1x6x3x2xf32>) -> tensor<1x6x3x2xf32> {
  ^bb0(%s: tensor<1x6x3x3xf32>):
    nn.yield %s : tensor<1x6x3x3xf32>
  }
  %ot = nn.transpose %o {perm = array<i64: 0, 2, 1, 3>} : tensor<1x6x3x2xf32> -> tensor<1x3x6x2xf32>
  %of = nn.reshape %ot : tensor<1x3x6x2xf32> to tensor<3x12xf32>
  %y = nn.linear %of, %wo : (tensor<3x12xf32>, tensor<12x12xf32>) -> tensor<3x12xf32>
  return %y : tensor<3x12xf32>
}
