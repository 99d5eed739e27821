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

// A present that is not Concat(past, new) is refused, naming both.
// expected-error @+1 {{output 'present_0' is not Concat(past 'past_0', new): only the concat form of the cache is supported (not com.microsoft Attention with past)}}
func.func @main(%p: tensor<2x1x2x7x4xf32> {onnx.name = "past_0"})
    -> (tensor<2x1x2x7x4xf32> {onnx.name = "present_0"}) {
  %n = nn.neg %p : tensor<2x1x2x7x4xf32>
  return %n : tensor<2x1x2x7x4xf32>
}

// -----

// expected-error @+1 {{no KV cache found: no output is named present.{i}.key/value or present_{i} with its past input (name the pairs with --kv-cache past=present,...)}}
func.func @main(%x: tensor<2xf32> {onnx.name = "x"}) -> (tensor<2xf32> {onnx.name = "y"}) {
  return %x : tensor<2xf32>
}
