// RUN: parc-opt %s --convert-rt-to-emitc | parc-translate --mlir-to-cpp | %python %S/Inputs/decode_strings.py | FileCheck %s

// A started all-reduce: the request lives in a variable the start fills,
// every kernel while it is in flight polls it (MPI progresses only inside its calls),
// and the wait completes it; each call is checked like a kernel.
// CHECK-LABEL: static void parc_forward(
// CHECK: parc_rt_request_t* [[REQ:v[0-9]+]] = nullptr;
// CHECK: parc_rt_request_t** [[ADDR:v[0-9]+]] = &[[REQ]];
// CHECK: parc_rt_all_reduce_start({{v[0-9]+}}, {{v[0-9]+}}, {{v[0-9]+}}, 8, PARC_RT_F32, PARC_RT_REDUCE_SUM, [[ADDR]]);
// CHECK: parc_rt_check_comm({{.*}}, "all_reduce_start");
// CHECK: parc_rt_unary(PARC_RT_UNARY_RELU
// CHECK: parc_rt_check(
// CHECK: parc_rt_test({{v[0-9]+}}, nullptr);
// CHECK: parc_rt_check(
// CHECK: parc_rt_wait(
// CHECK: parc_rt_check_comm({{.*}}, "all_reduce_wait");
// CHECK-NOT: parc_rt_test
// CHECK: parc_rt_publish
module {
  func.func @main() attributes {rt.arena_size = 128 : i64} {
    %x = rt.input 0 "x" : memref<8xf32>
    %s = rt.alloc {offset = 0 : i64} : memref<8xf32>
    %r = rt.start "all_reduce" ins(%x : memref<8xf32>) outs(%s : memref<8xf32>) {mesh = @mesh, mesh_axes = ["tp"]}
    %y = rt.alloc {offset = 64 : i64} : memref<8xf32>
    rt.kernel "relu" ins(%x : memref<8xf32>) outs(%y : memref<8xf32>)
    rt.wait %r
    rt.kernel "relu" ins(%s : memref<8xf32>) outs(%s : memref<8xf32>)
    rt.output 0 "y", %s : memref<8xf32>
    rt.output 1 "z", %y : memref<8xf32>
    return
  }
}
