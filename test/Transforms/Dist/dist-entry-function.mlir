// RUN: parc-opt %s --split-input-file --dist-tensor-parallel=tp=2 | FileCheck %s
// RUN: parc-opt %s --split-input-file --dist-micro-batch=micro-batches=2 | FileCheck %s --check-prefix=MICRO

// The module passes work on the model's entry function whatever its name:
// the one public function with a body. A private callee beside it is left
// alone, and the rebuilt program keeps the entry's name.
// CHECK: dist.mesh @mesh(shape = 2, axes = ["tp"])
// CHECK-LABEL: func.func private @helper
// CHECK-NEXT: return %{{.*}} : tensor<4x16xf32>
// CHECK-LABEL: func.func @forward
// CHECK-SAME: dist.tp_regions = 1
// CHECK: nn.linear %{{.*}} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
// CHECK: dist.all_reduce
// MICRO-LABEL: func.func private @helper
// MICRO-LABEL: func.func @forward
// MICRO-SAME: tensor<8x8xf32>
// MICRO-SAME: dist.micro_batches = 2
// MICRO-NOT: func.func
module {
  func.func private @helper(%h: tensor<4x16xf32>) -> tensor<4x16xf32> {
    return %h : tensor<4x16xf32>
  }
  func.func @forward(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
    %w1 = arith.constant dense<0.5> : tensor<8x16xf32>
    %w2 = arith.constant dense<0.25> : tensor<16x8xf32>
    %h = nn.linear %x, %w1 : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
    %g = nn.gelu %h : tensor<4x16xf32>
    %y = nn.linear %g, %w2 : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
    return %y : tensor<4x8xf32>
  }
}

// -----

// With two public functions, `parc.entry` says which is the model: the
// other is not partitioned.
// CHECK-LABEL: func.func @unmarked
// CHECK-NOT: dist.
// CHECK: nn.linear %{{.*}} : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
// CHECK-LABEL: func.func @marked
// CHECK-SAME: dist.tp_regions = 1
// CHECK-SAME: parc.entry
// CHECK: nn.linear %{{.*}} : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
// MICRO-LABEL: func.func @unmarked
// MICRO-SAME: tensor<4x8xf32>
// MICRO-LABEL: func.func @marked
// MICRO-SAME: tensor<8x8xf32>
module {
  func.func @unmarked(%x: tensor<4x8xf32>) -> tensor<4x16xf32> {
    %w1 = arith.constant dense<0.5> : tensor<8x16xf32>
    %h = nn.linear %x, %w1 : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
    return %h : tensor<4x16xf32>
  }
  func.func @marked(%x: tensor<4x8xf32>) -> tensor<4x8xf32> attributes {parc.entry} {
    %w1 = arith.constant dense<0.5> : tensor<8x16xf32>
    %w2 = arith.constant dense<0.25> : tensor<16x8xf32>
    %h = nn.linear %x, %w1 : (tensor<4x8xf32>, tensor<8x16xf32>) -> tensor<4x16xf32>
    %g = nn.gelu %h : tensor<4x16xf32>
    %y = nn.linear %g, %w2 : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>
    return %y : tensor<4x8xf32>
  }
}
