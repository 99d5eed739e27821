// RUN: parc-opt %s --convert-rt-to-emitc | parc-translate --mlir-to-cpp | FileCheck %s

// A generating program and its prefill (parc compile --prefill-len): two
// forwards indexing one weight table, the union of their weights by name
// ("w" shared, slot 0; "t.prefill" the prefill's own, slot 1), each with
// its own inputs and arena size; the decode program's table points to the
// prefill's, whose own prefill is null.
// CHECK: parc_weights[2] =
// CHECK-LABEL: static void parc_forward(
// CHECK-LABEL: static void parc_prefill_forward(
// CHECK: static const parc_rt_program_t parc_prefill_program = {{[{]}}{{.*}}, 8192, 3, parc_prefill_inputs, 2, parc_weights, 1, parc_prefill_outputs, parc_prefill_forward, 0, nullptr, 1, 1, 1, {{parc_dims_[0-9]+}}, 8};
// CHECK: static const parc_rt_program_t parc_program = {{[{]}}{{.*}}, 4096, 3, parc_inputs, 2, parc_weights, 1, parc_outputs, parc_forward, 0, nullptr, 1, 1, 1, {{parc_dims_[0-9]+}}, 8, &parc_prefill_program};
module {
  func.func @main() attributes {rt.arena_size = 4096 : i64, rt.max_seq = 8 : i64} {
    %x = rt.input 0 "input_ids" {role = "tokens"} : memref<1x1xi64>
    %c = rt.input 1 "past.key" {role = "cache"} : memref<1x8x4xf32>
    %p = rt.input 2 "cache_position" {role = "position"} : memref<1xi64>
    %w = rt.weight "w" : memref<4x4xf32>
    %o = rt.alloc {offset = 0 : i64} : memref<4x4xf32>
    rt.kernel "copy" ins(%w : memref<4x4xf32>) outs(%o : memref<4x4xf32>)
    rt.output 0 "logits", %o : memref<4x4xf32>
    return
  }
  func.func @prefill() attributes {rt.arena_size = 8192 : i64, rt.max_seq = 8 : i64} {
    %x = rt.input 0 "input_ids" {role = "tokens"} : memref<1x3xi64>
    %c = rt.input 1 "past.key" {role = "cache"} : memref<1x8x4xf32>
    %p = rt.input 2 "cache_position" {role = "position"} : memref<1xi64>
    %w = rt.weight "w" : memref<4x4xf32>
    %t = rt.weight "t.prefill" : memref<3xf32>
    %o = rt.alloc {offset = 0 : i64} : memref<4x4xf32>
    rt.kernel "copy" ins(%w : memref<4x4xf32>) outs(%o : memref<4x4xf32>)
    %o2 = rt.alloc {offset = 64 : i64} : memref<3xf32>
    rt.kernel "copy" ins(%t : memref<3xf32>) outs(%o2 : memref<3xf32>)
    rt.output 0 "logits", %o : memref<4x4xf32>
    return
  }
}
