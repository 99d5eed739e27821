// RUN: parc-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(nn-kv-cache))' -verify-diagnostics | FileCheck %s

// A layer's present = Concat(past, new): the past becomes the cache (its
// type the concat's), the concat a write at the new cache_position input,
// the presents leave the outputs, and the attention gets a mask of -inf
// where key j - query i > position (here one query: j > position).
// CHECK-LABEL: func.func @main
// CHECK-SAME: %[[Q:[^:]*]]: tensor<1x2x1x4xf32>
// CHECK-SAME: %[[K:[^:]*]]: tensor<1x2x1x4xf32> {onnx.name = "input_ids"
// CHECK-SAME: %[[PK:[^:]*]]: tensor<1x2x8x4xf32> {onnx.name = "past_key_values.0.key", parc.kv_role = "cache"}
// CHECK-SAME: %[[PV:[^:]*]]: tensor<1x2x8x4xf32> {onnx.name = "past_key_values.0.value", parc.kv_role = "cache"}
// CHECK-SAME: %[[POS:[^:]*]]: tensor<1xi64> {onnx.name = "cache_position", parc.kv_role = "position"}
// CHECK-SAME: -> (tensor<1x2x1x4xf32> {onnx.name = "out"})
// CHECK-SAME: parc.kv_max_seq = 8 : i64
// CHECK: %[[WK:.*]] = nn.kv_cache_write %[[PK]], %[[K]], %[[POS]] {axis = 2 : i64}
// CHECK: %[[WV:.*]] = nn.kv_cache_write %[[PV]], %[[K]], %[[POS]] {axis = 2 : i64}
// CHECK: %[[REL:.*]] = arith.constant dense<{{\[\[\[}}[0, 1, 2, 3, 4, 5, 6, 7]]]]> : tensor<1x1x1x8xi64>
// CHECK: %[[FUT:.*]] = nn.greater %[[REL]], %[[POS]]
// CHECK: %[[NEG:.*]] = arith.constant dense<0xFF800000> : tensor<1xf32>
// CHECK: %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : tensor<1xf32>
// CHECK: %[[M:.*]] = nn.where %[[FUT]], %[[NEG]], %[[ZERO]]
// CHECK: nn.attention %[[Q]], %[[WK]], %[[WV]] mask(%[[M]] : tensor<1x1x1x8xf32>)
// CHECK: ^bb0(%[[S:.*]]: tensor<1x2x1x8xf32>, %[[MK:.*]]: tensor<1x1x1x8xf32>):
// CHECK: %[[SUM:.*]] = nn.add %[[S]], %[[MK]]
// CHECK: nn.yield %[[SUM]]
// CHECK: return %{{.*}} : tensor<1x2x1x4xf32>
func.func @main(%q: tensor<1x2x1x4xf32>, %k: tensor<1x2x1x4xf32> {onnx.name = "input_ids"},
                %pk: tensor<1x2x7x4xf32> {onnx.name = "past_key_values.0.key"},
                %pv: tensor<1x2x7x4xf32> {onnx.name = "past_key_values.0.value"})
    -> (tensor<1x2x1x4xf32> {onnx.name = "out"}, tensor<1x2x8x4xf32> {onnx.name = "present.0.key"},
        tensor<1x2x8x4xf32> {onnx.name = "present.0.value"}) {
  %ck = nn.concat %pk, %k {axis = 2 : i64} : (tensor<1x2x7x4xf32>, tensor<1x2x1x4xf32>) -> tensor<1x2x8x4xf32>
  %cv = nn.concat %pv, %k {axis = 2 : i64} : (tensor<1x2x7x4xf32>, tensor<1x2x1x4xf32>) -> tensor<1x2x8x4xf32>
  %o = nn.attention %q, %ck, %cv {scale = 0.5 : f32}
      : (tensor<1x2x1x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x1x4xf32> {
  ^bb0(%s: tensor<1x2x1x8xf32>):
    nn.yield %s : tensor<1x2x1x8xf32>
  }
  return %o, %ck, %cv : tensor<1x2x1x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>
}

// -----

// com.microsoft Attention's stacked past [2, B, N, P, D] (the importer's
// split into key and value halves, each Concat(half, new), restacked as
// present): the past becomes two caches, key and value, each written in
// place and read by the attention directly; the stacked past, its split
// and the present are gone.
// CHECK-LABEL: func.func @main
// CHECK-SAME: %[[Q:[^:]*]]: tensor<1x2x1x4xf32>
// CHECK-SAME: %[[K:[^:]*]]: tensor<1x2x1x4xf32> {onnx.name = "input_ids"
// CHECK-SAME: %[[V:[^:]*]]: tensor<1x2x1x4xf32>
// CHECK-SAME: %[[POS:[^:]*]]: tensor<1xi64> {onnx.name = "cache_position", parc.kv_role = "position"}
// CHECK-SAME: %[[CK:[^:]*]]: tensor<1x2x8x4xf32> {onnx.name = "past_0.key", parc.kv_role = "cache"}
// CHECK-SAME: %[[CV:[^:]*]]: tensor<1x2x8x4xf32> {onnx.name = "past_0.value", parc.kv_role = "cache"}
// CHECK-SAME: -> (tensor<1x2x1x4xf32> {onnx.name = "out"})
// CHECK-SAME: parc.kv_max_seq = 8 : i64
// CHECK-NOT: nn.split
// CHECK: %[[WK:.*]] = nn.kv_cache_write %[[CK]], %[[K]], %[[POS]] {axis = 2 : i64}
// CHECK: %[[WV:.*]] = nn.kv_cache_write %[[CV]], %[[V]], %[[POS]] {axis = 2 : i64}
// CHECK-NOT: nn.concat
// CHECK: nn.attention %[[Q]], %[[WK]], %[[WV]] mask(
// CHECK-NOT: nn.concat
// CHECK: return %{{.*}} : tensor<1x2x1x4xf32>
func.func @main(%q: tensor<1x2x1x4xf32>, %k: tensor<1x2x1x4xf32> {onnx.name = "input_ids"},
                %v: tensor<1x2x1x4xf32>,
                %p: tensor<2x1x2x7x4xf32> {onnx.name = "past_0"})
    -> (tensor<1x2x1x4xf32> {onnx.name = "out"}, tensor<2x1x2x8x4xf32> {onnx.name = "present_0"}) {
  %h:2 = nn.split %p {axis = 0 : i64} : tensor<2x1x2x7x4xf32> -> (tensor<1x1x2x7x4xf32>, tensor<1x1x2x7x4xf32>)
  %pk = nn.reshape %h#0 : tensor<1x1x2x7x4xf32> to tensor<1x2x7x4xf32>
  %pv = nn.reshape %h#1 : tensor<1x1x2x7x4xf32> to tensor<1x2x7x4xf32>
  %ck = nn.concat %pk, %k {axis = 2 : i64} : (tensor<1x2x7x4xf32>, tensor<1x2x1x4xf32>) -> tensor<1x2x8x4xf32>
  %cv = nn.concat %pv, %v {axis = 2 : i64} : (tensor<1x2x7x4xf32>, tensor<1x2x1x4xf32>) -> tensor<1x2x8x4xf32>
  %o = nn.attention %q, %ck, %cv {scale = 0.5 : f32}
      : (tensor<1x2x1x4xf32>, tensor<1x2x8x4xf32>, tensor<1x2x8x4xf32>) -> tensor<1x2x1x4xf32> {
  ^bb0(%s: tensor<1x2x1x8xf32>):
    nn.yield %s : tensor<1x2x1x8xf32>
  }
  %sk = nn.reshape %ck : tensor<1x2x8x4xf32> to tensor<1x1x2x8x4xf32>
  %sv = nn.reshape %cv : tensor<1x2x8x4xf32> to tensor<1x1x2x8x4xf32>
  %pr = nn.concat %sk, %sv {axis = 0 : i64} : (tensor<1x1x2x8x4xf32>, tensor<1x1x2x8x4xf32>) -> tensor<2x1x2x8x4xf32>
  return %o, %pr : tensor<1x2x1x4xf32>, tensor<2x1x2x8x4xf32>
}

// -----

// The halves swapped (value first) are not Attention's stacked present.
// expected-error @+1 {{output 'present_0' is not a KV cache of past 'past_0': neither Concat(past, new) nor com.microsoft Attention's stacked [2, batch, heads, seq, head] key/value present}}
func.func @main(%k: tensor<1x2x1x4xf32>, %p: tensor<2x1x2x7x4xf32> {onnx.name = "past_0"})
    -> (tensor<2x1x2x8x4xf32> {onnx.name = "present_0"}) {
  %h:2 = nn.split %p {axis = 0 : i64} : tensor<2x1x2x7x4xf32> -> (tensor<1x1x2x7x4xf32>, tensor<1x1x2x7x4xf32>)
  %pk = nn.reshape %h#0 : tensor<1x1x2x7x4xf32> to tensor<1x2x7x4xf32>
  %pv = nn.reshape %h#1 : tensor<1x1x2x7x4xf32> to tensor<1x2x7x4xf32>
  %ck = nn.concat %pv, %k {axis = 2 : i64} : (tensor<1x2x7x4xf32>, tensor<1x2x1x4xf32>) -> tensor<1x2x8x4xf32>
  %cv = nn.concat %pk, %k {axis = 2 : i64} : (tensor<1x2x7x4xf32>, tensor<1x2x1x4xf32>) -> tensor<1x2x8x4xf32>
  %sk = nn.reshape %ck : tensor<1x2x8x4xf32> to tensor<1x1x2x8x4xf32>
  %sv = nn.reshape %cv : tensor<1x2x8x4xf32> to tensor<1x1x2x8x4xf32>
  %pr = nn.concat %sk, %sv {axis = 0 : i64} : (tensor<1x1x2x8x4xf32>, tensor<1x1x2x8x4xf32>) -> tensor<2x1x2x8x4xf32>
  return %pr : tensor<2x1x2x8x4xf32>
}

// -----

// A stacked past read elsewhere too cannot leave the arguments.
// expected-error @+1 {{past 'past_0' is read outside its attention: a stacked past must feed only its key and value halves}}
func.func @main(%k: tensor<1x2x1x4xf32>, %p: tensor<2x1x2x7x4xf32> {onnx.name = "past_0"})
    -> (tensor<2x1x2x8x4xf32> {onnx.name = "present_0"}, tensor<2x1x2x7x4xf32> {onnx.name = "y"}) {
  %h:2 = nn.split %p {axis = 0 : i64} : tensor<2x1x2x7x4xf32> -> (tensor<1x1x2x7x4xf32>, tensor<1x1x2x7x4xf32>)
  %pk = nn.reshape %h#0 : tensor<1x1x2x7x4xf32> to tensor<1x2x7x4xf32>
  %pv = nn.reshape %h#1 : tensor<1x1x2x7x4xf32> to tensor<1x2x7x4xf32>
  %ck = nn.concat %pk, %k {axis = 2 : i64} : (tensor<1x2x7x4xf32>, tensor<1x2x1x4xf32>) -> tensor<1x2x8x4xf32>
  %cv = nn.concat %pv, %k {axis = 2 : i64} : (tensor<1x2x7x4xf32>, tensor<1x2x1x4xf32>) -> tensor<1x2x8x4xf32>
  %sk = nn.reshape %ck : tensor<1x2x8x4xf32> to tensor<1x1x2x8x4xf32>
  %sv = nn.reshape %cv : tensor<1x2x8x4xf32> to tensor<1x1x2x8x4xf32>
  %pr = nn.concat %sk, %sv {axis = 0 : i64} : (tensor<1x1x2x8x4xf32>, tensor<1x1x2x8x4xf32>) -> tensor<2x1x2x8x4xf32>
  %y = nn.neg %p : tensor<2x1x2x7x4xf32>
  return %pr, %y : tensor<2x1x2x8x4xf32>, tensor<2x1x2x7x4xf32>
}

// -----

// A present that is neither form is refused, naming both.
// expected-error @+1 {{output 'present_0' is not a KV cache of past 'past_0': neither Concat(past, new) nor com.microsoft Attention's stacked [2, batch, heads, seq, head] key/value present}}
func.func @main(%p: tensor<2x1x2x7x4xf32> {onnx.name = "past_0"})
    -> (tensor<2x1x2x7x4xf32> {onnx.name = "present_0"}) {
  %n = nn.neg %p : tensor<2x1x2x7x4xf32>
  return %n : tensor<2x1x2x7x4xf32>
}

// -----

// expected-error @+1 {{no KV cache found: no output is named present.{i}.key/value or present_{i} with its past input (name the pairs with option 'pairs=past=present,...')}}
func.func @main(%x: tensor<2xf32> {onnx.name = "x"}) -> (tensor<2xf32> {onnx.name = "y"}) {
  return %x : tensor<2xf32>
}
