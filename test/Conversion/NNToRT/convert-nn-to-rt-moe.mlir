// RUN: parc-opt %s --split-input-file --convert-nn-to-rt | FileCheck %s

// nn.moe becomes one "moe" kernel with its attributes; its stacked expert
// weights are weights like any other (fc3 optional).
// CHECK-LABEL: func.func @main()
// CHECK: %[[X:.*]] = rt.input 0 "x" : memref<16x32xf32>
// CHECK: %[[L:.*]] = rt.input 1 "logits" : memref<16x4xf32>
// CHECK: %[[W1:.*]] = rt.weight "const" {{.*}} : memref<4x32x64xf32>
// CHECK: %[[W2:.*]] = rt.weight "const_1" {{.*}} : memref<4x64x32xf32>
// CHECK: %[[Y:.*]] = rt.alloc : memref<16x32xf32>
// CHECK: rt.kernel "moe" ins(%[[X]], %[[L]], %[[W1]], %[[W2]] : memref<16x32xf32>, memref<16x4xf32>, memref<4x32x64xf32>, memref<4x64x32xf32>) outs(%[[Y]] : memref<16x32xf32>) {activation = #nn<moe_activation relu>, normalize = false, top_k = 2 : i64}
func.func @main(%x: tensor<16x32xf32> {onnx.name = "x"}, %l: tensor<16x4xf32> {onnx.name = "logits"}) -> (tensor<16x32xf32> {onnx.name = "y"}) {
  %w1 = arith.constant dense<0.5> : tensor<4x32x64xf32>
  %w2 = arith.constant dense<0.25> : tensor<4x64x32xf32>
  %y = nn.moe %x, %l, %w1, %w2 {top_k = 2 : i64, normalize = false, activation = #nn<moe_activation relu>} : (tensor<16x32xf32>, tensor<16x4xf32>, tensor<4x32x64xf32>, tensor<4x64x32xf32>) -> tensor<16x32xf32>
  return %y : tensor<16x32xf32>
}

// -----

// Under --etp, dist-expert-parallel leaves dist.ffn_shards on the op for
// the manifest (its expert weights are that fraction of the experts'):
// RTKernels.td declares it on "moe", so it is passed through; another
// dialect-prefixed attribute no later stage reads stays behind.
// CHECK-LABEL: func.func @main()
// CHECK: rt.kernel "moe" {{.*}} {activation = {{.*}}, dist.ffn_shards = 2 : i64, normalize = true, top_k = 2 : i64}
// CHECK-NOT: dist.region
func.func @main(%x: tensor<16x32xf32> {onnx.name = "x"}, %l: tensor<16x4xf32> {onnx.name = "logits"}) -> (tensor<16x32xf32> {onnx.name = "y"}) {
  %w1 = arith.constant dense<0.5> : tensor<4x32x64xf32>
  %w2 = arith.constant dense<0.25> : tensor<4x64x32xf32>
  %y = nn.moe %x, %l, %w1, %w2 {top_k = 2 : i64, dist.ffn_shards = 2 : i64, dist.region = 0 : i64} : (tensor<16x32xf32>, tensor<16x4xf32>, tensor<4x32x64xf32>, tensor<4x64x32xf32>) -> tensor<16x32xf32>
  return %y : tensor<16x32xf32>
}
