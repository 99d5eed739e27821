// RUN: parc-opt %s --convert-rt-to-emitc | parc-translate --mlir-to-cpp | FileCheck %s

// attention_fused: q, k, v, the mask or (nullptr, 0, nullptr), the output,
// the scale, then causal (1 with causal_offset, its value) or 0, 0.
// CHECK-DAG: static const int64_t [[DQ:parc_dims_[0-9]+]][4] = {1, 2, 4, 8};
// CHECK-DAG: static const int64_t [[DK:parc_dims_[0-9]+]][4] = {1, 1, 4, 8};
// CHECK-DAG: static const int64_t [[DM:parc_dims_[0-9]+]][4] = {1, 1, 1, 4};
// CHECK: void* [[Q:v[0-9]+]] = parc_rt_slot({{.*}}, 0);
// CHECK: void* [[K:v[0-9]+]] = parc_rt_slot({{.*}}, 1);
// CHECK: void* [[V:v[0-9]+]] = parc_rt_slot({{.*}}, 2);
// CHECK: void* [[M:v[0-9]+]] = parc_rt_slot({{.*}}, 3);
// CHECK: parc_rt_attention_fused(PARC_RT_F32, [[Q]], 4, [[DQ]], [[K]], 4, [[DK]], [[V]], 4, [[DK]], nullptr, 0, nullptr, {{v[0-9]+}}, 4, [[DQ]], 5.000000000e-01f, 1, 3);
// CHECK: parc_rt_attention_fused(PARC_RT_F32, [[Q]], 4, [[DQ]], [[K]], 4, [[DK]], [[V]], 4, [[DK]], [[M]], 4, [[DM]], {{v[0-9]+}}, 4, [[DQ]], 2.500000000e-01f, 0, 0);
module {
  func.func @main() attributes {rt.arena_size = 4096 : i64} {
    %q = rt.input 0 "q" : memref<1x2x4x8xf32>
    %k = rt.input 1 "k" : memref<1x1x4x8xf32>
    %v = rt.input 2 "v" : memref<1x1x4x8xf32>
    %m = rt.input 3 "m" : memref<1x1x1x4xf32>
    %o = rt.alloc {offset = 0 : i64} : memref<1x2x4x8xf32>
    rt.kernel "attention_fused" ins(%q, %k, %v : memref<1x2x4x8xf32>, memref<1x1x4x8xf32>, memref<1x1x4x8xf32>) outs(%o : memref<1x2x4x8xf32>) {causal_offset = 3 : i64, scale = 5.000000e-01 : f32}
    %o2 = rt.alloc {offset = 256 : i64} : memref<1x2x4x8xf32>
    rt.kernel "attention_fused" ins(%q, %k, %v, %m : memref<1x2x4x8xf32>, memref<1x1x4x8xf32>, memref<1x1x4x8xf32>, memref<1x1x1x4xf32>) outs(%o2 : memref<1x2x4x8xf32>) {scale = 2.500000e-01 : f32}
    rt.output 0 "o", %o : memref<1x2x4x8xf32>
    rt.output 1 "o2", %o2 : memref<1x2x4x8xf32>
    return
  }
}
