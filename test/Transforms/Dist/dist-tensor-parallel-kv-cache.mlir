// RUN: parc-opt %s --dist-tensor-parallel=tp=2 | FileCheck %s --check-prefix=TP2
// RUN: parc-opt %s --dist-tensor-parallel=tp=4 | FileCheck %s --check-prefix=TP4

// A decode step of grouped-query attention (4 query heads, 2 key/value
// heads) on its KV caches (nn-kv-cache): the caches are split by heads as
// the keys and values they hold, on the arguments themselves, so that each
// rank's persistent buffer is its part and the writes stay in place.
// --tp 2: one key/value head per rank.
// TP2-LABEL: func.func @main
// TP2-SAME: tensor<1x1x8x2xf32> {onnx.name = "past_key_values.0.key", parc.kv_role = "cache"}
// TP2-SAME: tensor<1x1x8x2xf32> {onnx.name = "past_key_values.0.value", parc.kv_role = "cache"}
// TP2-NOT: dist.sharding
// TP2: nn.kv_cache_write %{{.*}} {axis = 2 : i64} : (tensor<1x1x8x2xf32>, tensor<1x1x1x2xf32>, tensor<1xi64>) -> tensor<1x1x8x2xf32>
// TP2: nn.attention {{.*}} : (tensor<1x2x1x2xf32>, tensor<1x1x8x2xf32>, tensor<1x1x8x2xf32>) -> tensor<1x2x1x2xf32>
// TP2: dist.all_reduce
// --tp 4: fewer key/value heads than ranks: each is held by 2 consecutive
// ranks, like the key/value projections (replicas = 2), its cache too.
// TP4-LABEL: func.func @main
// TP4-SAME: tensor<1x1x8x2xf32> {onnx.name = "past_key_values.0.key", parc.kv_role = "cache"}
// TP4: dist.local_part %{{.*}} to <@mesh, {{\[\[}}], ["tp"]], replicas = [1, 2]> : tensor<8x4xf32> -> tensor<8x2xf32>
// TP4: nn.kv_cache_write %{{.*}} : (tensor<1x1x8x2xf32>, tensor<1x1x1x2xf32>, tensor<1xi64>) -> tensor<1x1x8x2xf32>
// TP4: nn.attention {{.*}} : (tensor<1x1x1x2xf32>, tensor<1x1x8x2xf32>, tensor<1x1x8x2xf32>) -> tensor<1x1x1x2xf32>
// TP4: dist.all_reduce
func.func @main(%x: tensor<1x8xf32>,
                %pk: tensor<1x2x8x2xf32> {onnx.name = "past_key_values.0.key", parc.kv_role = "cache"},
                %pv: tensor<1x2x8x2xf32> {onnx.name = "past_key_values.0.value", parc.kv_role = "cache"},
                %pos: tensor<1xi64> {onnx.name = "cache_position", parc.kv_role = "position"})
    -> tensor<1x8xf32> {
  %wq = arith.constant dense<0.5> : tensor<8x8xf32>
  %wk = arith.constant dense<0.25> : tensor<8x4xf32>
  %wv = arith.constant dense<0.125> : tensor<8x4xf32>
  %wo = arith.constant dense<0.25> : tensor<8x8xf32>
  %q = nn.linear %x, %wq : (tensor<1x8xf32>, tensor<8x8xf32>) -> tensor<1x8xf32>
  %k = nn.linear %x, %wk : (tensor<1x8xf32>, tensor<8x4xf32>) -> tensor<1x4xf32>
  %v = nn.linear %x, %wv : (tensor<1x8xf32>, tensor<8x4xf32>) -> tensor<1x4xf32>
  %qh = nn.reshape %q : tensor<1x8xf32> to tensor<1x1x4x2xf32>
  %kh = nn.reshape %k : tensor<1x4xf32> to tensor<1x1x2x2xf32>
  %vh = nn.reshape %v : tensor<1x4xf32> to tensor<1x1x2x2xf32>
  %qt = nn.transpose %qh {perm = array<i64: 0, 2, 1, 3>} : tensor<1x1x4x2xf32> -> tensor<1x4x1x2xf32>
  %kt = nn.transpose %kh {perm = array<i64: 0, 2, 1, 3>} : tensor<1x1x2x2xf32> -> tensor<1x2x1x2xf32>
  %vt = nn.transpose %vh {perm = array<i64: 0, 2, 1, 3>} : tensor<1x1x2x2xf32> -> tensor<1x2x1x2xf32>
  %ck = nn.kv_cache_write %pk, %kt, %pos {axis = 2 : i64} : (tensor<1x2x8x2xf32>, tensor<1x2x1x2xf32>, tensor<1xi64>) -> tensor<1x2x8x2xf32>
  %cv = nn.kv_cache_write %pv, %vt, %pos {axis = 2 : i64} : (tensor<1x2x8x2xf32>, tensor<1x2x1x2xf32>, tensor<1xi64>) -> tensor<1x2x8x2xf32>
  %o = nn.attention %qt, %ck, %cv {scale = 0.5 : f32} : (tensor<1x4x1x2xf32>, tensor<1x2x8x2xf32>, tensor<1x2x8x2xf32>) -> tensor<1x4x1x2xf32> {
  ^bb0(%s: tensor<1x4x1x8xf32>):
    nn.yield %s : tensor<1x4x1x8xf32>
  }
  %ot = nn.transpose %o {perm = array<i64: 0, 2, 1, 3>} : tensor<1x4x1x2xf32> -> tensor<1x1x4x2xf32>
  %of = nn.reshape %ot : tensor<1x1x4x2xf32> to tensor<1x8xf32>
  %y = nn.linear %of, %wo : (tensor<1x8xf32>, tensor<8x8xf32>) -> tensor<1x8xf32>
  return %y : tensor<1x8xf32>
}
