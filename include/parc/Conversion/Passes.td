//===- Passes.td - conversions between parc's dialects ----*- tablegen -*-===//

#ifndef PARC_CONVERSION_PASSES
#define PARC_CONVERSION_PASSES

include "mlir/Pass/PassBase.td"

def ConvertNNToRT : Pass<"convert-nn-to-rt", "::mlir::ModuleOp"> {
  let summary = "Lower nn tensor programs to rt buffer programs";
  let description = [{
    Input: a module whose `func.func @main` computes on nn ops over static
    tensors (after fusion and, for a partitioned model, after
    dist-partition). Output: the same function with no arguments or results:
    graph inputs become `rt.input`, constants and external weights become
    `rt.weight` (carrying their data source), reshapes become `rt.view`,
    every other nn op becomes an `rt.kernel` named after it with its
    attributes as kernel parameters and an unplaced `rt.alloc` per result,
    `nn.attention` becomes one `attention_fused` kernel when its score
    modifier is one the kernel runs itself (none, an additive mask operand
    broadcasting to the scores, a constant causal mask as an additive
    0 / -1e4..-inf tensor or a `where` with such a fill, or their sum) and
    score, modifier, softmax and value kernels otherwise, and results are
    published with `rt.output`.
  }];
  let options = [
    Option<"fusedAttention", "fused-attention", "bool", "true",
           "Lower recognised attention to the fused kernel (false: always "
           "materialise the [B, H, S, T] scores)">
  ];
  let dependentDialects = ["::parc::rt::RTDialect"];
}

def ConvertRTToEmitC : Pass<"convert-rt-to-emitc", "::mlir::ModuleOp"> {
  let summary = "Lower a planned rt program to emitc for C++ emission";
  let description = [{
    Input: a module holding one rank program as `func.func @main` on rt ops,
    every `rt.alloc` placed by rt-plan-memory. Output: an emitc module that
    `emitc::translateToCpp` prints as a complete C++ file: static shape and
    tensor-descriptor tables, `parc_forward` (one `parc_rt_*` call per
    kernel, each checked so a failure aborts every rank naming its ONNX
    node) and a `main` that runs the runtime's program driver. The program
    name is taken from the module's `rt.program` attribute. A generating
    program's prefill, `func.func @prefill` beside `@main` (parc compile
    --prefill-len), becomes `parc_prefill_forward` and a second program
    table that `@main`'s points to; both forwards index one weight table
    (the union of their weights, by name).
  }];
  let dependentDialects = ["::mlir::emitc::EmitCDialect"];
}

#endif // PARC_CONVERSION_PASSES
