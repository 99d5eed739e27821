// RUN: parc-opt %s --convert-rt-to-emitc | parc-translate --mlir-to-cpp | FileCheck %s

// Shape tables are shared by content, pointers come from the arena offset,
// weights and inputs come from their slots in table order, every kernel is
// checked with its node name, and main hands the tables to the driver.
// Names are bytes in one table, referred to by offset, never literals:
// "mm" 0, "?" 3 (no node), "x" 5, "w" 7, "y" 9, "main" 11.
// CHECK: #include "parc/program.h"
// CHECK: static const int8_t parc_strings[16] = {109, 109, 0, 63, 0, 120, 0, 119, 0, 121, 0, 109, 97, 105, 110, 0};
// CHECK-DAG: static const int64_t [[D24:parc_dims_[0-9]+]][2] = {2, 4};
// CHECK-DAG: static const int64_t [[D43:parc_dims_[0-9]+]][2] = {4, 3};
// CHECK-DAG: static const int64_t [[D23:parc_dims_[0-9]+]][2] = {2, 3};
// CHECK: static const parc_rt_tensor_desc_t parc_inputs[1] = {{[{][{]}}(const char *)parc_strings + 5, PARC_RT_F32, 2, [[D24]]}, };
// CHECK: static const parc_rt_tensor_desc_t parc_weights[1] = {{[{][{]}}(const char *)parc_strings + 7, PARC_RT_F32, 2, [[D43]]}, };
// CHECK: static const parc_rt_tensor_desc_t parc_outputs[1] = {{[{][{]}}(const char *)parc_strings + 9, PARC_RT_F32, 2, [[D23]]}, };
// CHECK: static void parc_forward(parc_rt_context_t* [[CTX:v[0-9]+]], void* [[ARENA:v[0-9]+]], void** [[IN:v[0-9]+]], void** [[W:v[0-9]+]], void** [[OUT:v[0-9]+]])
// CHECK: void* [[X:v[0-9]+]] = parc_rt_slot([[IN]], 0);
// CHECK: void* [[WP:v[0-9]+]] = parc_rt_slot([[W]], 0);
// CHECK: void* [[B:v[0-9]+]] = parc_rt_at([[ARENA]], 64);
// CHECK: parc_rt_status_t [[S:v[0-9]+]] = parc_rt_matmul(PARC_RT_F32, [[X]], 2, [[D24]], [[WP]], 2, [[D43]], [[B]], 2, [[D23]]);
// CHECK: parc_rt_check([[CTX]], [[S]], (const char *)parc_strings + 0);
// CHECK: parc_rt_status_t [[S2:v[0-9]+]] = parc_rt_unary(PARC_RT_UNARY_GELU_TANH, PARC_RT_F32, [[B]], [[B]], 6);
// CHECK: parc_rt_publish([[OUT]], 0, [[B]]);
// CHECK: static const parc_rt_program_t parc_program = {(const char *)parc_strings + 11, 128, 1, parc_inputs, 1, parc_weights, 1, parc_outputs, parc_forward};
// CHECK: int32_t main(int32_t [[ARGC:v[0-9]+]], char** [[ARGV:v[0-9]+]])
// CHECK: parc_rt_program_main([[ARGC]], [[ARGV]], &parc_program);
module {
  func.func @main() attributes {rt.arena_size = 128 : i64} {
    %x = rt.input 0 "x" : memref<2x4xf32>
    %w = rt.weight "w" {value = dense<1.0> : tensor<4x3xf32>} : memref<4x3xf32>
    %b = rt.alloc {offset = 64 : i64} : memref<2x3xf32>
    rt.kernel "matmul" ins(%x, %w : memref<2x4xf32>, memref<4x3xf32>) outs(%b : memref<2x3xf32>) loc("mm")
    rt.kernel "gelu" ins(%b : memref<2x3xf32>) outs(%b : memref<2x3xf32>) {approximation = #nn<gelu_approximation tanh>}
    rt.output 0 "y", %b : memref<2x3xf32>
    return
  }
}
