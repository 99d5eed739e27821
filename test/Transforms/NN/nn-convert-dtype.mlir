// RUN: parc-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(nn-convert-dtype{dtype=bf16}))' | FileCheck %s
// RUN: parc-opt %s --split-input-file --pass-pipeline='builtin.module(func.func(nn-convert-dtype{dtype=f16}))' | FileCheck %s --check-prefix=F16

// The signature stays f32; computation, constants and region arguments move
// to bf16; integer tensors stay as they are. 0.1 rounds to the nearest bf16,
// 0.10009765625 (0x3DCD), printed as 1.000980e-01.
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%[[X:.*]]: tensor<2x4xf32>, %[[I:.*]]: tensor<2xi64>) -> tensor<2x4xf32>
// CHECK: %[[XB:.*]] = nn.cast %[[X]] : tensor<2x4xf32> to tensor<2x4xbf16>
// CHECK: %[[C:.*]] = arith.constant dense<1.000980e-01> : tensor<4xbf16>
// CHECK: %[[A:.*]] = nn.add %[[XB]], %[[C]] : (tensor<2x4xbf16>, tensor<4xbf16>) -> tensor<2x4xbf16>
// CHECK: %[[G:.*]] = nn.gather %[[A]], %[[I]] {axis = 0 : i64} : (tensor<2x4xbf16>, tensor<2xi64>) -> tensor<2x4xbf16>
// CHECK: %[[R:.*]] = nn.cast %[[G]] : tensor<2x4xbf16> to tensor<2x4xf32>
// CHECK: return %[[R]] : tensor<2x4xf32>
// F16-LABEL: func.func @main
// F16: arith.constant dense<9.997550e-02> : tensor<4xf16>
func.func @main(%x: tensor<2x4xf32>, %i: tensor<2xi64>) -> tensor<2x4xf32> {
  %c = arith.constant dense<0.1> : tensor<4xf32>
  %a = nn.add %x, %c : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %g = nn.gather %a, %i {axis = 0 : i64} : (tensor<2x4xf32>, tensor<2xi64>) -> tensor<2x4xf32>
  return %g : tensor<2x4xf32>
}

// -----

// External weights keep their f32 file data and are cast after loading.
// CHECK-LABEL: func.func @external
// CHECK: %[[W:.*]] = nn.external_weight {{.*}} : tensor<4xf32>
// CHECK: %[[WB:.*]] = nn.cast %[[W]] : tensor<4xf32> to tensor<4xbf16>
// CHECK: nn.mul %{{.*}}, %[[WB]]
func.func @external(%x: tensor<4xf32>) -> tensor<4xf32> {
  %w = nn.external_weight {name = "w", location = "w.bin", offset = 0 : i64, length = 16 : i64} : tensor<4xf32>
  %y = nn.mul %x, %w : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %y : tensor<4xf32>
}
