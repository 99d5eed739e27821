// RUN: parc-opt %s --split-input-file --dist-annotate=tp=2 | FileCheck %s --check-prefix=PAD
// RUN: parc-opt %s --split-input-file --dist-tensor-parallel=tp=2 | FileCheck %s --check-prefix=TP
// RUN: parc-opt %s --split-input-file --dist-annotate=tp=5 | FileCheck %s --check-prefix=FIVE
// RUN: parc-opt %s --split-input-file --dist-annotate="tp=2 explain=true" -verify-diagnostics -o /dev/null

// An MLP of width 5 at --tp 2: padded to 6 (the next multiple of 2) with a
// zero column in the column weight, a zero bias entry and a zero row in the
// row weight; gelu(0) = 0, so the pad adds nothing. Each rank then holds 3
// features. At --tp 5 the width already divides: nothing is padded.
// The expected blobs are numpy's, not parc's: '0x08000000' (the alignment
// header) + np.pad(w, ...).astype(np.float32).tobytes().hex().
// PAD-LABEL: func.func @main
// PAD: %[[W1:.*]] = arith.constant dense_resource<[[W1B:.*]]> : tensor<4x6xf32>
// PAD: %[[B1:.*]] = arith.constant dense_resource<[[B1B:.*]]> : tensor<6xf32>
// PAD: %[[H:.*]] = nn.linear %{{.*}}, %[[W1]], %[[B1]] {dist.region = 0 : i64, dist.result_shardings = [#dist.sharding<@mesh, {{\[\[}}], [], ["tp"]]>]} : (tensor<2x3x4xf32>, tensor<4x6xf32>, tensor<6xf32>) -> tensor<2x3x6xf32>
// PAD: %[[G:.*]] = nn.gelu %[[H]] : tensor<2x3x6xf32>
// PAD: %[[W2:.*]] = arith.constant dense_resource<[[W2B:.*]]> : tensor<6x4xf32>
// PAD: nn.linear %[[G]], %[[W2]] {dist.region = 0 : i64, dist.result_shardings = [#dist.sharding<@mesh, [], partial = ["tp"]>]} : (tensor<2x3x6xf32>, tensor<6x4xf32>) -> tensor<2x3x4xf32>
// PAD: [[W1B]]: "0x080000000000803F0000004000004040000080400000A04000000000000080BF000000C0000040C0000080C00000A0C0000000000000003F0000803E0000003E000000400000804000000000000000410000C03F000000BF000000C10000404000000000"
// PAD: [[B1B]]: "0x080000000000803F0000004000004040000080400000A04000000000"
// PAD: [[W2B]]: "0x080000000000803F0000004000004040000080400000A0400000C0400000E04000000041000080BF000000C0000040C0000080C00000003F0000803E000000400000804000000041000000C100008041000080C100000000000000000000000000000000"

// After partitioning: each rank's part of the 6 features is 3.
// TP-LABEL: func.func @main
// TP: dist.local_part %{{.*}} to <@mesh, {{\[\[}}], ["tp"]]> : tensor<4x6xf32> -> tensor<4x3xf32>
// TP: dist.local_part %{{.*}} to <@mesh, {{\[\[}}"tp"]]> : tensor<6xf32> -> tensor<3xf32>
// TP: nn.linear {{.*}} -> tensor<2x3x3xf32>
// TP: nn.gelu %{{.*}} : tensor<2x3x3xf32>
// TP: dist.local_part %{{.*}} to <@mesh, {{\[\[}}"tp"]]> : tensor<6x4xf32> -> tensor<3x4xf32>
// TP: nn.linear %{{.*}}, %{{.*}} : (tensor<2x3x3xf32>, tensor<3x4xf32>) -> tensor<2x3x4xf32>
// TP: dist.all_reduce

// FIVE-LABEL: func.func @main
// FIVE-NOT: dense_resource
// FIVE: nn.linear {{.*}} -> tensor<2x3x5xf32>
func.func @main(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %w1 = arith.constant dense<[[1.0, 2.0, 3.0, 4.0, 5.0], [-1.0, -2.0, -3.0, -4.0, -5.0], [0.5, 0.25, 0.125, 2.0, 4.0], [8.0, 1.5, -0.5, -8.0, 3.0]]> : tensor<4x5xf32>
  %b1 = arith.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0]> : tensor<5xf32>
  %w2 = arith.constant dense<[[1.0, 2.0, 3.0, 4.0], [5.0, 6.0, 7.0, 8.0], [-1.0, -2.0, -3.0, -4.0], [0.5, 0.25, 2.0, 4.0], [8.0, -8.0, 16.0, -16.0]]> : tensor<5x4xf32>
  %h = nn.linear %x, %w1, %b1 : (tensor<2x3x4xf32>, tensor<4x5xf32>, tensor<5xf32>) -> tensor<2x3x5xf32>
  %g = nn.gelu %h : tensor<2x3x5xf32>
  // expected-remark @+1 {{'nn.linear' ends an MLP of 5 features, padded with zero features to 6 for option 'tp=2'}}
  %y = nn.linear %g, %w2 : (tensor<2x3x5xf32>, tensor<5x4xf32>) -> tensor<2x3x4xf32>
  return %y : tensor<2x3x4xf32>
}

// -----

// A gated MLP (SwiGLU, torch's [out, in] weights) of width 5: both column
// weights get a zero row, silu(0) · 0 = 0; the unfused form x · sigmoid(x)
// of the gate's activation is zero too (a zero factor), and a constant
// bias added on the features is padded with zero.
// PAD-LABEL: func.func @main
// PAD: nn.linear {{.*}} : (tensor<2x4xf32>, tensor<6x4xf32>) -> tensor<2x6xf32>
// PAD: nn.linear {{.*}} : (tensor<2x4xf32>, tensor<6x4xf32>) -> tensor<2x6xf32>
// PAD: nn.sigmoid %{{.*}} : tensor<2x6xf32>
// PAD: nn.mul {{.*}} -> tensor<2x6xf32>
// PAD: nn.add {{.*}} : (tensor<2x6xf32>, tensor<6xf32>) -> tensor<2x6xf32>
// PAD: nn.mul {{.*}} -> tensor<2x6xf32>
// PAD: nn.linear {{.*}} {dist.region = {{.*}}, transpose_weight = true} : (tensor<2x6xf32>, tensor<4x6xf32>) -> tensor<2x4xf32>
// TP-LABEL: func.func @main
// TP: nn.linear {{.*}} -> tensor<2x3xf32>
// TP: nn.linear {{.*}} -> tensor<2x3xf32>
// TP: nn.linear {{.*}} : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x4xf32>
// TP: dist.all_reduce
func.func @main(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %wg = arith.constant dense<0.5> : tensor<5x4xf32>
  %wu = arith.constant dense<0.25> : tensor<5x4xf32>
  %wd = arith.constant dense<0.125> : tensor<4x5xf32>
  %c = arith.constant dense<[1.0, 2.0, 3.0, 4.0, 5.0]> : tensor<5xf32>
  %g = nn.linear %x, %wg {transpose_weight = true} : (tensor<2x4xf32>, tensor<5x4xf32>) -> tensor<2x5xf32>
  %u = nn.linear %x, %wu {transpose_weight = true} : (tensor<2x4xf32>, tensor<5x4xf32>) -> tensor<2x5xf32>
  %s = nn.sigmoid %g : tensor<2x5xf32>
  %a = nn.mul %g, %s : (tensor<2x5xf32>, tensor<2x5xf32>) -> tensor<2x5xf32>
  %ub = nn.add %u, %c : (tensor<2x5xf32>, tensor<5xf32>) -> tensor<2x5xf32>
  %m = nn.mul %a, %ub : (tensor<2x5xf32>, tensor<2x5xf32>) -> tensor<2x5xf32>
  // expected-remark @+1 {{'nn.linear' ends an MLP of 5 features, padded with zero features to 6 for option 'tp=2'}}
  %y = nn.linear %m, %wd {transpose_weight = true} : (tensor<2x5xf32>, tensor<4x5xf32>) -> tensor<2x4xf32>
  return %y : tensor<2x4xf32>
}
