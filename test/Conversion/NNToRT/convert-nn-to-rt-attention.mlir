// RUN: parc-opt %s --split-input-file --convert-nn-to-rt | FileCheck %s --check-prefix=FUSED
// RUN: parc-opt %s --split-input-file --convert-nn-to-rt=fused-attention=false | FileCheck %s --check-prefix=UNFUSED

// Which score modifiers attention_fused runs itself; every other one keeps
// the score, modifier, softmax and value kernels (as fused-attention=false
// does for all).

// No modifier: fused, no mask, no causal offset.
// FUSED-LABEL: func.func @main()
// FUSED: %[[Q:.*]] = rt.input 0 "q"
// FUSED: %[[K:.*]] = rt.input 1 "k"
// FUSED: %[[V:.*]] = rt.input 2 "v"
// FUSED: %[[O:.*]] = rt.alloc : memref<1x2x4x8xf32>
// FUSED: rt.kernel "attention_fused" ins(%[[Q]], %[[K]], %[[V]] : memref<1x2x4x8xf32>, memref<1x2x4x8xf32>, memref<1x2x4x8xf32>) outs(%[[O]] : memref<1x2x4x8xf32>) {scale = 5.000000e-01 : f32}
// FUSED-NOT: attention_scores
// UNFUSED-LABEL: func.func @main()
// UNFUSED: rt.kernel "attention_scores"
// UNFUSED: rt.kernel "softmax"
// UNFUSED: rt.kernel "attention_values"
func.func @main(%q: tensor<1x2x4x8xf32> {onnx.name = "q"}, %k: tensor<1x2x4x8xf32> {onnx.name = "k"}, %v: tensor<1x2x4x8xf32> {onnx.name = "v"}) -> tensor<1x2x4x8xf32> {
  %o = nn.attention %q, %k, %v {scale = 0.5 : f32}
      : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  ^bb0(%s: tensor<1x2x4x4xf32>):
    nn.yield %s : tensor<1x2x4x4xf32>
  }
  return %o : tensor<1x2x4x8xf32>
}

// -----

// An additive mask operand: its buffer is the kernel's fourth operand.
// FUSED-LABEL: func.func @main()
// FUSED: %[[M:.*]] = rt.input 3 "m"
// FUSED: rt.kernel "attention_fused" ins(%{{.*}}, %{{.*}}, %{{.*}}, %[[M]] : memref<1x2x4x8xf32>, memref<1x2x4x8xf32>, memref<1x2x4x8xf32>, memref<2x1x4xf32>)
// FUSED-NOT: causal_offset
// UNFUSED-LABEL: func.func @main()
// UNFUSED: rt.kernel "attention_scores"
// UNFUSED: rt.kernel "add"
func.func @main(%q: tensor<1x2x4x8xf32> {onnx.name = "q"}, %k: tensor<1x2x4x8xf32> {onnx.name = "k"}, %v: tensor<1x2x4x8xf32> {onnx.name = "v"}, %m: tensor<2x1x4xf32> {onnx.name = "m"}) -> tensor<1x2x4x8xf32> {
  %o = nn.attention %q, %k, %v mask(%m : tensor<2x1x4xf32>) {scale = 0.5 : f32}
      : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  ^bb0(%s: tensor<1x2x4x4xf32>, %mk: tensor<2x1x4xf32>):
    %r = nn.add %mk, %s : (tensor<2x1x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
    nn.yield %r : tensor<1x2x4x4xf32>
  }
  return %o : tensor<1x2x4x8xf32>
}

// -----

// A constant causal mask added (0, and -1e4 above the diagonal): causal
// offset 0, and the constant is no weight.
// FUSED-LABEL: func.func @main()
// FUSED-NOT: rt.weight
// FUSED: rt.kernel "attention_fused" ins(%{{.*}}, %{{.*}}, %{{.*}} : memref<1x2x4x8xf32>, memref<1x2x4x8xf32>, memref<1x2x4x8xf32>) outs(%{{.*}} : memref<1x2x4x8xf32>) {causal_offset = 0 : i64, scale = 5.000000e-01 : f32}
// UNFUSED-LABEL: func.func @main()
// UNFUSED: rt.kernel "attention_scores"
// UNFUSED: rt.weight
func.func @main(%q: tensor<1x2x4x8xf32> {onnx.name = "q"}, %k: tensor<1x2x4x8xf32> {onnx.name = "k"}, %v: tensor<1x2x4x8xf32> {onnx.name = "v"}) -> tensor<1x2x4x8xf32> {
  %o = nn.attention %q, %k, %v {scale = 0.5 : f32}
      : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  ^bb0(%s: tensor<1x2x4x4xf32>):
    %c = arith.constant dense<[[0.000000e+00, -1.000000e+04, -1.000000e+04, -1.000000e+04], [0.000000e+00, 0.000000e+00, -1.000000e+04, -1.000000e+04], [0.000000e+00, 0.000000e+00, 0.000000e+00, -1.000000e+04], [0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00]]> : tensor<4x4xf32>
    %r = nn.add %s, %c : (tensor<1x2x4x4xf32>, tensor<4x4xf32>) -> tensor<1x2x4x4xf32>
    nn.yield %r : tensor<1x2x4x4xf32>
  }
  return %o : tensor<1x2x4x8xf32>
}

// -----

// The -inf form, then a second causal mask that allows more: the stricter
// offset (0) wins.
// FUSED-LABEL: func.func @main()
// FUSED: rt.kernel "attention_fused" {{.*}} {causal_offset = 0 : i64, scale = 5.000000e-01 : f32}
func.func @main(%q: tensor<1x2x4x8xf32> {onnx.name = "q"}, %k: tensor<1x2x4x8xf32> {onnx.name = "k"}, %v: tensor<1x2x4x8xf32> {onnx.name = "v"}) -> tensor<1x2x4x8xf32> {
  %o = nn.attention %q, %k, %v {scale = 0.5 : f32}
      : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  ^bb0(%s: tensor<1x2x4x4xf32>):
    %c = arith.constant dense<[[[[0.000000e+00, 0xFF800000, 0xFF800000, 0xFF800000], [0.000000e+00, 0.000000e+00, 0xFF800000, 0xFF800000], [0.000000e+00, 0.000000e+00, 0.000000e+00, 0xFF800000], [0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00]]]]> : tensor<1x1x4x4xf32>
    %r = nn.add %s, %c : (tensor<1x2x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x2x4x4xf32>
    %c2 = arith.constant dense<[[0.000000e+00, 0.000000e+00, 0xFF800000, 0xFF800000], [0.000000e+00, 0.000000e+00, 0.000000e+00, 0xFF800000], [0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00], [0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00]]> : tensor<4x4xf32>
    %r2 = nn.add %c2, %r : (tensor<4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
    nn.yield %r2 : tensor<1x2x4x4xf32>
  }
  return %o : tensor<1x2x4x8xf32>
}

// -----

// Where(tril, scores, finfo.min) on 2 queries after 3 cached keys, plus a
// mask operand (the KV cache's position mask): offset 3 and the mask.
// FUSED-LABEL: func.func @main()
// FUSED: %[[M:.*]] = rt.input 3 "m"
// FUSED: rt.kernel "attention_fused" ins(%{{.*}}, %{{.*}}, %{{.*}}, %[[M]] : {{.*}}) outs(%{{.*}} : memref<1x2x2x8xf32>) {causal_offset = 3 : i64, scale = 5.000000e-01 : f32}
func.func @main(%q: tensor<1x2x2x8xf32> {onnx.name = "q"}, %k: tensor<1x2x5x8xf32> {onnx.name = "k"}, %v: tensor<1x2x5x8xf32> {onnx.name = "v"}, %m: tensor<1x1x2x5xf32> {onnx.name = "m"}) -> tensor<1x2x2x8xf32> {
  %o = nn.attention %q, %k, %v mask(%m : tensor<1x1x2x5xf32>) {scale = 0.5 : f32}
      : (tensor<1x2x2x8xf32>, tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32>) -> tensor<1x2x2x8xf32> {
  ^bb0(%s: tensor<1x2x2x5xf32>, %mk: tensor<1x1x2x5xf32>):
    %c = arith.constant dense<[[true, true, true, true, false], [true, true, true, true, true]]> : tensor<2x5xi1>
    %f = arith.constant dense<-3.40282347E+38> : tensor<1xf32>
    %w = nn.where %c, %s, %f : (tensor<2x5xi1>, tensor<1x2x2x5xf32>, tensor<1xf32>) -> tensor<1x2x2x5xf32>
    %r = nn.add %w, %mk : (tensor<1x2x2x5xf32>, tensor<1x1x2x5xf32>) -> tensor<1x2x2x5xf32>
    nn.yield %r : tensor<1x2x2x5xf32>
  }
  return %o : tensor<1x2x2x8xf32>
}

// -----

// GPT-2's export: Where(bias[:, :, :S, :S], scores, finfo.min) with the
// bool tril buffer larger than the folders cut, so the mask operand is
// slices of a constant: read through them, causal offset 0, no mask operand
// for the kernel.
// FUSED-LABEL: func.func @main()
// FUSED: rt.kernel "attention_fused" ins(%{{.*}}, %{{.*}}, %{{.*}} : memref<1x2x4x8xf32>, memref<1x2x4x8xf32>, memref<1x2x4x8xf32>) outs(%{{.*}} : memref<1x2x4x8xf32>) {causal_offset = 0 : i64, scale = 5.000000e-01 : f32}
func.func @main(%q: tensor<1x2x4x8xf32> {onnx.name = "q"}, %k: tensor<1x2x4x8xf32> {onnx.name = "k"}, %v: tensor<1x2x4x8xf32> {onnx.name = "v"}) -> tensor<1x2x4x8xf32> {
  %bias = arith.constant dense<[[[[true, false, false, false, false, false], [true, true, false, false, false, false], [true, true, true, false, false, false], [true, true, true, true, false, false], [true, true, true, true, true, false], [true, true, true, true, true, true]]]]> : tensor<1x1x6x6xi1>
  %rows = nn.slice %bias {starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 1, 1>} : tensor<1x1x6x6xi1> -> tensor<1x1x4x6xi1>
  %m = nn.slice %rows {starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 1, 1>} : tensor<1x1x4x6xi1> -> tensor<1x1x4x4xi1>
  %o = nn.attention %q, %k, %v mask(%m : tensor<1x1x4x4xi1>) {scale = 0.5 : f32}
      : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  ^bb0(%s: tensor<1x2x4x4xf32>, %mk: tensor<1x1x4x4xi1>):
    %f = arith.constant dense<-3.40282347E+38> : tensor<f32>
    %r = nn.where %mk, %s, %f : (tensor<1x1x4x4xi1>, tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
    nn.yield %r : tensor<1x2x4x4xf32>
  }
  return %o : tensor<1x2x4x8xf32>
}

// -----

// The slices' starts count: rows 2-5 of the tril show query i the keys
// j <= i + 2 (as after 2 cached tokens).
// FUSED-LABEL: func.func @main()
// FUSED: rt.kernel "attention_fused" {{.*}} {causal_offset = 2 : i64, scale = 5.000000e-01 : f32}
func.func @main(%q: tensor<1x2x4x8xf32> {onnx.name = "q"}, %k: tensor<1x2x4x8xf32> {onnx.name = "k"}, %v: tensor<1x2x4x8xf32> {onnx.name = "v"}) -> tensor<1x2x4x8xf32> {
  %bias = arith.constant dense<[[[[true, false, false, false, false, false], [true, true, false, false, false, false], [true, true, true, false, false, false], [true, true, true, true, false, false], [true, true, true, true, true, false], [true, true, true, true, true, true]]]]> : tensor<1x1x6x6xi1>
  %rows = nn.slice %bias {starts = array<i64: 0, 0, 2, 0>, steps = array<i64: 1, 1, 1, 1>} : tensor<1x1x6x6xi1> -> tensor<1x1x4x6xi1>
  %m = nn.slice %rows {starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 1, 1>} : tensor<1x1x4x6xi1> -> tensor<1x1x4x4xi1>
  %o = nn.attention %q, %k, %v mask(%m : tensor<1x1x4x4xi1>) {scale = 0.5 : f32}
      : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  ^bb0(%s: tensor<1x2x4x4xf32>, %mk: tensor<1x1x4x4xi1>):
    %f = arith.constant dense<-3.40282347E+38> : tensor<f32>
    %r = nn.where %mk, %s, %f : (tensor<1x1x4x4xi1>, tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
    nn.yield %r : tensor<1x2x4x4xf32>
  }
  return %o : tensor<1x2x4x8xf32>
}

// -----

// Not fused: columns 1-4 hide every key from query 0.
// FUSED-LABEL: func.func @main()
// FUSED-NOT: attention_fused
// FUSED: rt.kernel "attention_scores"
func.func @main(%q: tensor<1x2x4x8xf32> {onnx.name = "q"}, %k: tensor<1x2x4x8xf32> {onnx.name = "k"}, %v: tensor<1x2x4x8xf32> {onnx.name = "v"}) -> tensor<1x2x4x8xf32> {
  %bias = arith.constant dense<[[[[true, false, false, false, false, false], [true, true, false, false, false, false], [true, true, true, false, false, false], [true, true, true, true, false, false], [true, true, true, true, true, false], [true, true, true, true, true, true]]]]> : tensor<1x1x6x6xi1>
  %rows = nn.slice %bias {starts = array<i64: 0, 0, 0, 0>, steps = array<i64: 1, 1, 1, 1>} : tensor<1x1x6x6xi1> -> tensor<1x1x4x6xi1>
  %m = nn.slice %rows {starts = array<i64: 0, 0, 0, 1>, steps = array<i64: 1, 1, 1, 1>} : tensor<1x1x4x6xi1> -> tensor<1x1x4x4xi1>
  %o = nn.attention %q, %k, %v mask(%m : tensor<1x1x4x4xi1>) {scale = 0.5 : f32}
      : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  ^bb0(%s: tensor<1x2x4x4xf32>, %mk: tensor<1x1x4x4xi1>):
    %f = arith.constant dense<-3.40282347E+38> : tensor<f32>
    %r = nn.where %mk, %s, %f : (tensor<1x1x4x4xi1>, tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
    nn.yield %r : tensor<1x2x4x4xf32>
  }
  return %o : tensor<1x2x4x8xf32>
}

// -----

// Not fused: a multiplicative mask.
// FUSED-LABEL: func.func @main()
// FUSED: rt.kernel "attention_scores"
// FUSED: rt.kernel "mul"
func.func @main(%q: tensor<1x2x4x8xf32> {onnx.name = "q"}, %k: tensor<1x2x4x8xf32> {onnx.name = "k"}, %v: tensor<1x2x4x8xf32> {onnx.name = "v"}, %m: tensor<1x1x4x4xf32> {onnx.name = "m"}) -> tensor<1x2x4x8xf32> {
  %o = nn.attention %q, %k, %v mask(%m : tensor<1x1x4x4xf32>) {scale = 0.5 : f32}
      : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  ^bb0(%s: tensor<1x2x4x4xf32>, %mk: tensor<1x1x4x4xf32>):
    %r = nn.mul %s, %mk : (tensor<1x2x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x2x4x4xf32>
    nn.yield %r : tensor<1x2x4x4xf32>
  }
  return %o : tensor<1x2x4x8xf32>
}

// -----

// Not fused: an additive constant that is no causal pattern.
// FUSED-LABEL: func.func @main()
// FUSED: rt.kernel "attention_scores"
func.func @main(%q: tensor<1x2x4x8xf32> {onnx.name = "q"}, %k: tensor<1x2x4x8xf32> {onnx.name = "k"}, %v: tensor<1x2x4x8xf32> {onnx.name = "v"}) -> tensor<1x2x4x8xf32> {
  %o = nn.attention %q, %k, %v {scale = 0.5 : f32}
      : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  ^bb0(%s: tensor<1x2x4x4xf32>):
    %c = arith.constant dense<[[0.000000e+00, 0.000000e+00, -1.000000e+04, 0.000000e+00], [0.000000e+00, 0.000000e+00, -1.000000e+04, 0.000000e+00], [0.000000e+00, 0.000000e+00, -1.000000e+04, 0.000000e+00], [0.000000e+00, 0.000000e+00, -1.000000e+04, 0.000000e+00]]> : tensor<4x4xf32>
    %r = nn.add %s, %c : (tensor<1x2x4x4xf32>, tensor<4x4xf32>) -> tensor<1x2x4x4xf32>
    nn.yield %r : tensor<1x2x4x4xf32>
  }
  return %o : tensor<1x2x4x8xf32>
}

// -----

// Not fused: a where whose fill does not hide (-1 is a real score).
// FUSED-LABEL: func.func @main()
// FUSED: rt.kernel "attention_scores"
func.func @main(%q: tensor<1x2x4x8xf32> {onnx.name = "q"}, %k: tensor<1x2x4x8xf32> {onnx.name = "k"}, %v: tensor<1x2x4x8xf32> {onnx.name = "v"}) -> tensor<1x2x4x8xf32> {
  %o = nn.attention %q, %k, %v {scale = 0.5 : f32}
      : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  ^bb0(%s: tensor<1x2x4x4xf32>):
    %c = arith.constant dense<[[true, false, false, false], [true, true, false, false], [true, true, true, false], [true, true, true, true]]> : tensor<4x4xi1>
    %f = arith.constant dense<-1.0> : tensor<f32>
    %r = nn.where %c, %s, %f : (tensor<4x4xi1>, tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
    nn.yield %r : tensor<1x2x4x4xf32>
  }
  return %o : tensor<1x2x4x8xf32>
}

// -----

// Not fused: query 0 sees no key, where the unfused where averages the fills.
// FUSED-LABEL: func.func @main()
// FUSED: rt.kernel "attention_scores"
func.func @main(%q: tensor<1x2x4x8xf32> {onnx.name = "q"}, %k: tensor<1x2x4x8xf32> {onnx.name = "k"}, %v: tensor<1x2x4x8xf32> {onnx.name = "v"}) -> tensor<1x2x4x8xf32> {
  %o = nn.attention %q, %k, %v {scale = 0.5 : f32}
      : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  ^bb0(%s: tensor<1x2x4x4xf32>):
    %c = arith.constant dense<[[false, false, false, false], [true, false, false, false], [true, true, false, false], [true, true, true, false]]> : tensor<4x4xi1>
    %f = arith.constant dense<0xFF800000> : tensor<f32>
    %r = nn.where %c, %s, %f : (tensor<4x4xi1>, tensor<1x2x4x4xf32>, tensor<f32>) -> tensor<1x2x4x4xf32>
    nn.yield %r : tensor<1x2x4x4xf32>
  }
  return %o : tensor<1x2x4x8xf32>
}

// -----

// Not fused: a constant that differs per head.
// FUSED-LABEL: func.func @main()
// FUSED: rt.kernel "attention_scores"
func.func @main(%q: tensor<1x2x4x8xf32> {onnx.name = "q"}, %k: tensor<1x2x4x8xf32> {onnx.name = "k"}, %v: tensor<1x2x4x8xf32> {onnx.name = "v"}) -> tensor<1x2x4x8xf32> {
  %o = nn.attention %q, %k, %v {scale = 0.5 : f32}
      : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  ^bb0(%s: tensor<1x2x4x4xf32>):
    %c = arith.constant dense<[[[0.000000e+00, -1.000000e+04, -1.000000e+04, -1.000000e+04], [0.000000e+00, 0.000000e+00, -1.000000e+04, -1.000000e+04], [0.000000e+00, 0.000000e+00, 0.000000e+00, -1.000000e+04], [0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00]], [[0.000000e+00, 0.000000e+00, -1.000000e+04, -1.000000e+04], [0.000000e+00, 0.000000e+00, 0.000000e+00, -1.000000e+04], [0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00], [0.000000e+00, 0.000000e+00, 0.000000e+00, 0.000000e+00]]]> : tensor<2x4x4xf32>
    %r = nn.add %s, %c : (tensor<1x2x4x4xf32>, tensor<2x4x4xf32>) -> tensor<1x2x4x4xf32>
    nn.yield %r : tensor<1x2x4x4xf32>
  }
  return %o : tensor<1x2x4x8xf32>
}

// -----

// Not fused: two mask operands (the kernel takes one).
// FUSED-LABEL: func.func @main()
// FUSED: rt.kernel "attention_scores"
func.func @main(%q: tensor<1x2x4x8xf32> {onnx.name = "q"}, %k: tensor<1x2x4x8xf32> {onnx.name = "k"}, %v: tensor<1x2x4x8xf32> {onnx.name = "v"}, %m: tensor<1x1x4x4xf32> {onnx.name = "m"}) -> tensor<1x2x4x8xf32> {
  %o = nn.attention %q, %k, %v mask(%m, %m : tensor<1x1x4x4xf32>, tensor<1x1x4x4xf32>) {scale = 0.5 : f32}
      : (tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>, tensor<1x2x4x8xf32>) -> tensor<1x2x4x8xf32> {
  ^bb0(%s: tensor<1x2x4x4xf32>, %a: tensor<1x1x4x4xf32>, %b: tensor<1x1x4x4xf32>):
    %r = nn.add %s, %a : (tensor<1x2x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x2x4x4xf32>
    %r2 = nn.add %r, %b : (tensor<1x2x4x4xf32>, tensor<1x1x4x4xf32>) -> tensor<1x2x4x4xf32>
    nn.yield %r2 : tensor<1x2x4x4xf32>
  }
  return %o : tensor<1x2x4x8xf32>
}
