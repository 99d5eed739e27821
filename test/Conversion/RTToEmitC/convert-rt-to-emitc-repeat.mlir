// RUN: parc-opt %s --convert-rt-to-emitc | parc-translate --mlir-to-cpp | %python %S/Inputs/decode_strings.py | FileCheck %s

// An rt.repeat is its body once, in a loop over a static table: row i holds
// iteration i's bindings (the input slot 0, the weight slots 0 and 1, the
// arena offsets 64 and 128) and the string-table offsets of its calls'
// nodes, so a failing call still names its own layer's node. The names
// are the string table's first strings, NUL-terminated: "l0/add" at 0,
// "l0/relu" at 7, "l1/add" at 15, "l1/relu" at 22.
// CHECK: static const int64_t [[T:parc_repeat_0]][2][4] = {0, 0, 0, 7, 0, 1, 15, 22};
// CHECK-LABEL: static void parc_forward(
// CHECK: for (size_t [[I:i[0-9]+]] = 0; [[I]] < 2; [[I]] += 1) {
// CHECK: int64_t [[X:v[0-9]+]] = [[T]][[[I]]][0];
// CHECK: parc_rt_slot({{v[0-9]+}}, [[X]]);
// CHECK: int64_t [[W:v[0-9]+]] = [[T]][[[I]]][1];
// CHECK: parc_rt_slot({{v[0-9]+}}, [[W]]);
// CHECK: int64_t [[NAME:v[0-9]+]] = [[T]][[[I]]][2];
// CHECK: parc_rt_string(parc_strings, [[NAME]]);
// CHECK: parc_rt_binary(PARC_RT_BINARY_ADD
// CHECK: parc_rt_check(
// CHECK: }
// CHECK: parc_rt_publish
module {
  func.func @main() attributes {rt.arena_size = 128 : i64} {
    %x = rt.input 0 "x" : memref<8xf32>
    %w0 = rt.weight "l0.bias" : memref<8xf32>
    %w1 = rt.weight "l1.bias" : memref<8xf32>
    rt.repeat 2 bindings(%x, %w0, %x, %w1 : memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>) {
    ^bb0(%a: memref<8xf32>, %b: memref<8xf32>):
      rt.kernel "add" ins(%a, %b : memref<8xf32>, memref<8xf32>) outs(%a : memref<8xf32>)
      rt.kernel "relu" ins(%a : memref<8xf32>) outs(%a : memref<8xf32>)
    } {locations = [loc("l0/add"), loc("l0/relu"), loc("l1/add"), loc("l1/relu")]}
    rt.output 0 "y", %x : memref<8xf32>
    return
  }
}
