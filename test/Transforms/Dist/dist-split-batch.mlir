// RUN: parc-opt %s --split-input-file --dist-split-batch="parts=2" | FileCheck %s

// A batch of 4 fixed in the graph: the head split and merge reshapes, the
// transpose, the [B·S, H] flattening (the batch outermost in dim 0) and the
// attention hold it, and each takes half of it; the weights keep theirs.
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%{{.*}}: tensor<2x3x8xf32>) -> tensor<6x8xf32>
func.func @main(%x: tensor<4x3x8xf32>) -> tensor<12x8xf32> {
  %w = arith.constant dense<0.5> : tensor<8x8xf32>
  // CHECK: nn.linear {{.*}} -> tensor<2x3x8xf32>
  %q = nn.linear %x, %w : (tensor<4x3x8xf32>, tensor<8x8xf32>) -> tensor<4x3x8xf32>
  // CHECK: nn.reshape {{.*}} : tensor<2x3x8xf32> to tensor<2x3x2x4xf32>
  %h = nn.reshape %q : tensor<4x3x8xf32> to tensor<4x3x2x4xf32>
  // CHECK: nn.transpose {{.*}} -> tensor<2x2x3x4xf32>
  %t = nn.transpose %h {perm = array<i64: 0, 2, 1, 3>} : tensor<4x3x2x4xf32> -> tensor<4x2x3x4xf32>
  // CHECK: nn.attention {{.*}} -> tensor<2x2x3x4xf32>
  // CHECK: ^bb0(%{{.*}}: tensor<2x2x3x3xf32>)
  %o = nn.attention %t, %t, %t {scale = 0.5 : f32} : (tensor<4x2x3x4xf32>, tensor<4x2x3x4xf32>, tensor<4x2x3x4xf32>) -> tensor<4x2x3x4xf32> {
  ^bb0(%s: tensor<4x2x3x3xf32>):
    %c = arith.constant dense<1.0> : tensor<3x3xf32>
    %m = nn.add %s, %c : (tensor<4x2x3x3xf32>, tensor<3x3xf32>) -> tensor<4x2x3x3xf32>
    nn.yield %m : tensor<4x2x3x3xf32>
  }
  %ot = nn.transpose %o {perm = array<i64: 0, 2, 1, 3>} : tensor<4x2x3x4xf32> -> tensor<4x3x2x4xf32>
  // CHECK: nn.reshape {{.*}} : tensor<2x3x2x4xf32> to tensor<6x8xf32>
  %f = nn.reshape %ot : tensor<4x3x2x4xf32> to tensor<12x8xf32>
  return %f : tensor<12x8xf32>
}

// -----

// A past that names its batch at dim 1 (onnx.batch_dim: K and V stacked
// first) is split there; the split along dim 0 takes K and V apart, not
// the batch, and the present output holds the batch on dim 1 too.
// CHECK-LABEL: func.func @main
// CHECK-SAME: (%{{.*}}: tensor<2x3x8xf32>, %{{.*}}: tensor<2x2x5x8xf32> {onnx.batch_dim = 1 : i64})
// CHECK-SAME: -> (tensor<2x3x8xf32>, tensor<2x2x5x8xf32> {onnx.batch_dim = 1 : i64})
func.func @main(%x: tensor<4x3x8xf32>, %past: tensor<2x4x5x8xf32> {onnx.batch_dim = 1 : i64}) -> (tensor<4x3x8xf32>, tensor<2x4x5x8xf32> {onnx.batch_dim = 1 : i64}) {
  // CHECK: nn.split {{.*}} : tensor<2x2x5x8xf32> -> (tensor<1x2x5x8xf32>, tensor<1x2x5x8xf32>)
  %k, %v = nn.split %past {axis = 0 : i64} : tensor<2x4x5x8xf32> -> (tensor<1x4x5x8xf32>, tensor<1x4x5x8xf32>)
  // CHECK: nn.concat {{.*}} -> tensor<2x2x5x8xf32>
  %present = nn.concat %k, %v {axis = 0 : i64} : (tensor<1x4x5x8xf32>, tensor<1x4x5x8xf32>) -> tensor<2x4x5x8xf32>
  return %x, %present : tensor<4x3x8xf32>, tensor<2x4x5x8xf32>
}
