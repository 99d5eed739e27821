// RUN: parc-opt %s --split-input-file --convert-rt-to-emitc | parc-translate --mlir-to-cpp | FileCheck %s

// A "moe" kernel is one parc_rt_moe call: tokens = 16 rows of hidden 32,
// ffn 64, 4 experts (the router's width), top-2, renormalised (the default),
// SwiGLU, no capacity limit, and the node name for the routing report.
// CHECK: static void parc_forward(parc_rt_context_t* [[CTX:v[0-9]+]],
// CHECK: void* [[X:v[0-9]+]] = parc_rt_slot({{v[0-9]+}}, 0);
// CHECK: void* [[L:v[0-9]+]] = parc_rt_slot({{v[0-9]+}}, 1);
// CHECK: void* [[W1:v[0-9]+]] = parc_rt_slot({{v[0-9]+}}, 0);
// CHECK: void* [[W2:v[0-9]+]] = parc_rt_slot({{v[0-9]+}}, 1);
// CHECK: void* [[W3:v[0-9]+]] = parc_rt_slot({{v[0-9]+}}, 2);
// CHECK: void* [[Y:v[0-9]+]] = parc_rt_at({{v[0-9]+}}, 0);
// CHECK: parc_rt_status_t [[S:v[0-9]+]] = parc_rt_moe(PARC_RT_F32, [[X]], [[L]], [[W1]], [[W2]], [[W3]], [[Y]], 16, 32, 64, 4, 2, 1, PARC_RT_MOE_SILU, 0, "layers.0/moe");
// CHECK: parc_rt_check([[CTX]], [[S]], "layers.0/moe");
module {
  func.func @main() attributes {rt.arena_size = 2048 : i64} {
    %x = rt.input 0 "x" : memref<2x8x32xf32>
    %l = rt.input 1 "logits" : memref<2x8x4xf32>
    %w1 = rt.weight "w1" : memref<4x32x64xf32>
    %w2 = rt.weight "w2" : memref<4x64x32xf32>
    %w3 = rt.weight "w3" : memref<4x32x64xf32>
    %y = rt.alloc {offset = 0 : i64} : memref<2x8x32xf32>
    rt.kernel "moe" ins(%x, %l, %w1, %w2, %w3 : memref<2x8x32xf32>, memref<2x8x4xf32>, memref<4x32x64xf32>, memref<4x64x32xf32>, memref<4x32x64xf32>) outs(%y : memref<2x8x32xf32>) {top_k = 2 : i64} loc("layers.0/moe")
    rt.output 0 "y", %y : memref<2x8x32xf32>
    return
  }
}

// -----

// Expert-parallel: the weights hold this rank's 2 of 8 experts, the expert
// count comes from the router; the call runs over the group of its mesh
// axis (axis 1 of a ["pp", "ep"] mesh: mask 2, the ranks of its stage)
// with the capacity the compiler computed.
// CHECK: parc_rt_comm_t* [[COMM:v[0-9]+]] = parc_rt_mesh_comm([[CTX2:v[0-9]+]], 2);
// CHECK: parc_rt_moe_ep([[COMM]], PARC_RT_BF16, {{.*}}, nullptr, {{v[0-9]+}}, 16, 32, 64, 8, 1, 0, PARC_RT_MOE_GELU, 3, "ep/moe");
module attributes {rt.mesh = {axes = ["pp", "ep"], shape = array<i64: 2, 4>, sym_name = "mesh"}} {
  func.func @main() attributes {rt.arena_size = 2048 : i64} {
    %x = rt.input 0 "x" : memref<16x32xbf16>
    %l = rt.input 1 "logits" : memref<16x8xbf16>
    %w1 = rt.weight "w1" : memref<2x32x64xbf16>
    %w2 = rt.weight "w2" : memref<2x64x32xbf16>
    %y = rt.alloc {offset = 0 : i64} : memref<16x32xbf16>
    rt.kernel "moe" ins(%x, %l, %w1, %w2 : memref<16x32xbf16>, memref<16x8xbf16>, memref<2x32x64xbf16>, memref<2x64x32xbf16>) outs(%y : memref<16x32xbf16>) {top_k = 1 : i64, normalize = false, activation = #nn<moe_activation gelu>, capacity = 3 : i64, ep_axis = "ep"} loc("ep/moe")
    rt.output 0 "y", %y : memref<16x32xbf16>
    return
  }
}
