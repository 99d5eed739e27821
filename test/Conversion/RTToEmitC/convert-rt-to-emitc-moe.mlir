// RUN: parc-opt %s --split-input-file --convert-rt-to-emitc | parc-translate --mlir-to-cpp | %python %S/Inputs/decode_strings.py | FileCheck %s

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

// Expert-parallel steps, bf16 model over the "ep" axis of a ["pp", "ep"]
// mesh (mask 2: the ranks of this stage): 8 tokens per rank, top-1 of 8
// experts, 2 per rank over 4 ranks, capacity 3 (at most 2 x 3 = 6 rows in).
// CHECK: static void parc_forward(parc_rt_context_t* [[CTX:v[0-9]+]],
// route: dtype of the logits, tokens 8, experts 8, top_k 1, not renormalised.
// CHECK: parc_rt_moe_route(PARC_RT_BF16, [[L:v[0-9]+]], [[IDS:v[0-9]+]], [[W:v[0-9]+]], [[N:v[0-9]+]], 8, 8, 1, 0);
// CHECK: parc_rt_check([[CTX]], {{v[0-9]+}}, "ep/moe");
// permute: on the ep group; tokens 8, hidden 32, experts 4 x 2, top_k 1,
// capacity 3, and the layer name for the report.
// CHECK: parc_rt_comm_t* [[COMM:v[0-9]+]] = parc_rt_mesh_comm([[CTX]], 2);
// CHECK: parc_rt_moe_permute([[COMM]], PARC_RT_BF16, [[X:v[0-9]+]], [[IDS]], [[ALL:v[0-9]+]], [[ROWS:v[0-9]+]], [[SC:v[0-9]+]], [[LAY:v[0-9]+]], [[PAIRS:v[0-9]+]], [[RC:v[0-9]+]], 8, 32, 8, 1, 3, "ep/moe");
// all_to_all_v: 8 slices out with the send counts, 6 slices of room in
// with the receive counts, 32 elements a slice.
// CHECK: parc_rt_all_to_all_v_slices({{v[0-9]+}}, [[ROWS]], [[SC]], 8, [[IN:v[0-9]+]], [[RC]], 6, 32, PARC_RT_F32);
// CHECK: parc_rt_check_comm([[CTX]], {{v[0-9]+}}, "ep/moe", "all_to_all_v");
// experts: the weights' dtype; 6 rows, 4 senders, 2 local experts, 32 -> 64.
// CHECK: parc_rt_moe_experts(PARC_RT_BF16, [[IN]], [[LAY]], {{v[0-9]+}}, {{v[0-9]+}}, nullptr, [[OUT:v[0-9]+]], 6, 4, 2, 32, 64, PARC_RT_MOE_GELU);
// The combine started: the counts swapped, a request, then its wait.
// CHECK: parc_rt_request_t* [[REQ:v[0-9]+]] = nullptr;
// CHECK: parc_rt_request_t** [[ADDR:v[0-9]+]] = &[[REQ]];
// CHECK: parc_rt_all_to_all_v_slices_start({{v[0-9]+}}, [[OUT]], [[RC]], 6, [[BACK:v[0-9]+]], [[SC]], 8, 32, PARC_RT_F32, [[ADDR]]);
// CHECK: parc_rt_check_comm([[CTX]], {{v[0-9]+}}, "ep/moe", "all_to_all_v_start");
// CHECK: parc_rt_request_t* [[R:v[0-9]+]] = [[REQ]];
// CHECK: parc_rt_wait([[R]]);
// CHECK: parc_rt_check_comm([[CTX]], {{v[0-9]+}}, "ep/moe", "all_to_all_v_wait");
// combine: the output's dtype; 8 tokens, hidden 32, top_k 1.
// CHECK: parc_rt_moe_combine(PARC_RT_BF16, [[BACK]], [[PAIRS]], [[W]], {{v[0-9]+}}, 8, 32, 1);
module attributes {rt.mesh = {axes = ["pp", "ep"], shape = array<i64: 2, 4>, sym_name = "mesh"}} {
  func.func @main() attributes {rt.arena_size = 65536 : i64} {
    %x = rt.input 0 "x" : memref<8x32xbf16>
    %l = rt.input 1 "logits" : memref<8x8xbf16>
    %all = rt.input 2 "counts" : memref<32xi64>
    %w1 = rt.weight "w1" : memref<2x32x64xbf16>
    %w2 = rt.weight "w2" : memref<2x64x32xbf16>
    %ids = rt.alloc {offset = 0 : i64} : memref<8x1xi64>
    %w = rt.alloc {offset = 64 : i64} : memref<8x1xf32>
    %n = rt.alloc {offset = 128 : i64} : memref<8xi64>
    rt.kernel "moe_route" ins(%l : memref<8x8xbf16>) outs(%ids, %w, %n : memref<8x1xi64>, memref<8x1xf32>, memref<8xi64>) {top_k = 1 : i64, normalize = false} loc("ep/moe")
    %rows = rt.alloc {offset = 256 : i64} : memref<8x32xf32>
    %sc = rt.alloc {offset = 1280 : i64} : memref<4xi64>
    %lay = rt.alloc {offset = 1344 : i64} : memref<4x2xi64>
    %pairs = rt.alloc {offset = 1408 : i64} : memref<8xi64>
    %rc = rt.alloc {offset = 3072 : i64} : memref<4xi64>
    rt.kernel "moe_permute" ins(%x, %ids, %all : memref<8x32xbf16>, memref<8x1xi64>, memref<32xi64>) outs(%rows, %sc, %lay, %pairs, %rc : memref<8x32xf32>, memref<4xi64>, memref<4x2xi64>, memref<8xi64>, memref<4xi64>) {mesh = @mesh, mesh_axes = ["ep"], capacity = 3 : i64} loc("ep/moe")
    %in = rt.alloc {offset = 2048 : i64} : memref<6x32xf32>
    rt.kernel "all_to_all_v" ins(%rows, %sc, %rc : memref<8x32xf32>, memref<4xi64>, memref<4xi64>) outs(%in : memref<6x32xf32>) {mesh = @mesh, mesh_axes = ["ep"], axis = 0 : i64} loc("ep/moe")
    %out = rt.alloc {offset = 4096 : i64} : memref<6x32xf32>
    rt.kernel "moe_experts" ins(%in, %lay, %w1, %w2 : memref<6x32xf32>, memref<4x2xi64>, memref<2x32x64xbf16>, memref<2x64x32xbf16>) outs(%out : memref<6x32xf32>) {activation = #nn<moe_activation gelu>} loc("ep/moe")
    %back = rt.alloc {offset = 8192 : i64} : memref<8x32xf32>
    %q = rt.start "all_to_all_v" ins(%out, %rc, %sc : memref<6x32xf32>, memref<4xi64>, memref<4xi64>) outs(%back : memref<8x32xf32>) {mesh = @mesh, mesh_axes = ["ep"], axis = 0 : i64} loc("ep/moe")
    rt.wait %q loc("ep/moe")
    %y = rt.alloc {offset = 12288 : i64} : memref<8x32xbf16>
    rt.kernel "moe_combine" ins(%back, %pairs, %w : memref<8x32xf32>, memref<8xi64>, memref<8x1xf32>) outs(%y : memref<8x32xbf16>) loc("ep/moe")
    rt.output 0 "y", %y : memref<8x32xbf16>
    return
  }
}

