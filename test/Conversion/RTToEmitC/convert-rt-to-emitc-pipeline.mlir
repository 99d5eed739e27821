// RUN: parc-opt %s --convert-rt-to-emitc | parc-translate --mlir-to-cpp | %python %S/Inputs/decode_strings.py | FileCheck %s

// On a 2x2 ["pp", "tp"] mesh a collective over tp runs on the group of
// axis 1 (mask 2), pipeline traffic on the group of axis 0 (mask 1, where a
// rank's index is its stage); a started communication keeps its request in
// a variable; communication is checked with its kind for the trace; the
// program carries the mesh and the pipeline shape (stages, micro-batches,
// virtual stages).
// CHECK: static void parc_forward(parc_rt_context_t* [[CTX:v[0-9]+]],
// CHECK: [[B:v[0-9]+]] = parc_rt_at(
// CHECK: [[C:v[0-9]+]] = parc_rt_at(
// CHECK: parc_rt_comm_t* [[PP:v[0-9]+]] = parc_rt_mesh_comm([[CTX]], 1);
// CHECK-NEXT: parc_rt_request_t* [[Q0:v[0-9]+]] = nullptr;
// CHECK-NEXT: parc_rt_request_t** [[A0:v[0-9]+]] = &[[Q0]];
// CHECK-NEXT: parc_rt_status_t [[S:v[0-9]+]] = parc_rt_recv_start([[PP]], [[B]], 16, PARC_RT_F32, 0, 0, [[A0]]);
// CHECK-NEXT: parc_rt_check_comm([[CTX]], [[S]], "h0", "recv_start");
// CHECK-NEXT: parc_rt_request_t* [[L0:v[0-9]+]] = [[Q0]];
// CHECK-NEXT: parc_rt_wait([[L0]]);
// CHECK-NEXT: parc_rt_check_comm([[CTX]], {{v[0-9]+}}, "h0", "recv_wait");
// CHECK: parc_rt_comm_t* [[TP:v[0-9]+]] = parc_rt_mesh_comm([[CTX]], 2);
// CHECK-NEXT: parc_rt_all_reduce([[TP]], [[B]], [[C]], 16, PARC_RT_F32, PARC_RT_REDUCE_SUM);
// CHECK-NEXT: parc_rt_check_comm([[CTX]], {{v[0-9]+}}, "ar", "all_reduce");
// CHECK: parc_rt_comm_t* [[PP2:v[0-9]+]] = parc_rt_mesh_comm([[CTX]], 1);
// CHECK-NEXT: parc_rt_request_t* [[Q1:v[0-9]+]] = nullptr;
// CHECK-NEXT: parc_rt_request_t** [[A1:v[0-9]+]] = &[[Q1]];
// CHECK-NEXT: parc_rt_send_start([[PP2]], [[C]], 16, PARC_RT_F32, 2, 0, [[A1]]);
// CHECK: parc_rt_request_t* [[L1:v[0-9]+]] = [[Q1]];
// CHECK-NEXT: parc_rt_wait([[L1]]);
// CHECK: parc_rt_comm_t* [[PP3:v[0-9]+]] = parc_rt_mesh_comm([[CTX]], 1);
// CHECK-NEXT: parc_rt_send([[PP3]], [[C]], 16, PARC_RT_F32, 2, 0);
// CHECK: static const parc_rt_program_t parc_program = {"main", 128, 0, nullptr, 0, nullptr, 0, nullptr, parc_forward, 2, [[MESH:parc_dims_[0-9]+]], 3, 4, 2};
module attributes {rt.mesh = {axes = ["pp", "tp"], shape = array<i64: 3, 2>, sym_name = "mesh"}, rt.pipeline = {micro_batches = 4 : i64, stage = 1 : i64, stages = 3 : i64, virtual_stages = 2 : i64}} {
  func.func @main() attributes {rt.arena_size = 128 : i64} {
    %b = rt.alloc {offset = 0 : i64} : memref<16xf32>
    %c = rt.alloc {offset = 64 : i64} : memref<16xf32>
    %q0 = rt.start "recv" outs(%b : memref<16xf32>) {mesh = @mesh, mesh_axes = ["pp"], peer = 0 : i64} loc("h0")
    rt.wait %q0 loc("h0")
    rt.kernel "all_reduce" ins(%b : memref<16xf32>) outs(%c : memref<16xf32>) {mesh = @mesh, mesh_axes = ["tp"]} loc("ar")
    %q1 = rt.start "send" ins(%c : memref<16xf32>) {mesh = @mesh, mesh_axes = ["pp"], peer = 2 : i64} loc("h1")
    rt.wait %q1 loc("h1")
    rt.kernel "send" ins(%c : memref<16xf32>) {mesh = @mesh, mesh_axes = ["pp"], peer = 2 : i64} loc("h1")
    return
  }
}
