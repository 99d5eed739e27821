// RUN: parc-opt %s --convert-nn-to-rt | FileCheck %s

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
