//===- RTOps.td - the rt dialect: one rank's program ------*- tablegen -*-===//
//
// A per-rank program over buffers: every tensor of the nn program becomes a
// memref view into one statically planned arena, a weight slot, or a program
// input; computation is a sequence of runtime kernel calls. Code generation
// turns each op into `parc_rt_*` calls, so the rt dialect is the contract
// between the compiler and the runtime.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_RT_OPS
#define PARC_RT_OPS

include "mlir/IR/OpBase.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def RT_Dialect : Dialect {
  let name = "rt";
  let cppNamespace = "::parc::rt";
  let summary = "Per-rank programs: planned buffers and runtime kernel calls";
  let description = [{
    The `rt` dialect describes what one rank executes. Values are static
    memrefs; each comes from `rt.alloc` (a slice of the rank's arena, placed
    by `rt-plan-memory`), `rt.weight` (a tensor of the rank's weight shard),
    `rt.input` (a program input) or `rt.view` (a reshaped alias). Ops that
    compute are `rt.kernel` calls named after runtime entry points;
    communication is a kernel too (blocking), or an `rt.start` / `rt.wait`
    pair whose `!rt.request` is the event between the two: on cuda the
    transfer runs on the comm stream and the wait makes the compute stream
    wait for it; on cpu it is an MPI request progressed between kernels.
  }];
  let useDefaultTypePrinterParser = 1;
  // A sharded rt.weight's cuts are #dist.sharding attributes.
  let dependentDialects = ["::parc::dist::DistDialect"];
}

class RT_Op<string mnemonic, list<Trait> traits = []>
    : Op<RT_Dialect, mnemonic, traits>;

def RT_Buffer : MemRefOf<[AnyType]>;

def RT_RequestType : TypeDef<RT_Dialect, "Request"> {
  let mnemonic = "request";
  let summary = "an asynchronous runtime call in flight";
  let description = [{
    Produced by `rt.start`, consumed by exactly one `rt.wait`. Between the
    two, the call's input buffers must not be written and its output
    buffers not read; memory planning keeps both alive until the wait.
  }];
}

def RT_AllocOp : RT_Op<"alloc", [Pure]> {
  let summary = "a buffer in the rank's arena";
  let description = [{
    Without `offset` the buffer is not placed yet; `rt-plan-memory` assigns
    every alloc a byte offset so that buffers whose lifetimes overlap never
    share bytes, and records the arena size on the function.

    ```mlir
    %b = rt.alloc {offset = 4096 : i64} : memref<2x8x32xf32>
    ```
  }];
  let arguments = (ins OptionalAttr<I64Attr>:$offset);
  let results = (outs RT_Buffer:$buffer);
  let assemblyFormat = "attr-dict `:` type($buffer)";
  let hasVerifier = 1;
}

def RT_WeightOp : RT_Op<"weight", [Pure]> {
  let summary = "a tensor of the rank's weight shard";
  let description = [{
    Bound at start-up to the tensor `name` of the rank's safetensors file
    (memory-mapped, read-only). Until the compiler has written that file the
    op carries where the data comes from: `value` (the constant's elements)
    or an ONNX external-data reference (`location`, `offset`, `length`, and
    `padding`: zeros appended per dim, `padding_blocks`: spread over blocks
    of the padded dim as nn.external_weight has them). A rank's part of a
    sharded weight also carries `shard`, the list of `#dist.sharding`s that
    cut it (the whole weight's first, each next one of the part before:
    experts over `ep`, then each expert's ffn over `tp`) on the mesh of the
    module's `rt.mesh`, and keeps the global source, embedded or external:
    the weight writer cuts the part. `stored_type = f32` on a bf16/f16
    buffer: the source holds f32, which the writer rounds to the buffer's
    type (to nearest, ties to even) as it streams the shard; a compute
    dtype of bf16 costs no f32 copy in memory, on disk or on the rank.

    ```mlir
    %w = rt.weight "h.0.mlp.c_fc.weight" : memref<32x128xf32>
    %e = rt.weight "wte" {stored_type = f32, value = dense_resource<wte> : tensor<64x32xf32>} : memref<64x32xbf16>
    %q = rt.weight "h.0.attn.c_attn.weight.part" {shard = [#dist.sharding<@mesh, [[], ["tp"]], blocks = [[], [64, 64, 64]]>], value = dense_resource<w> : tensor<64x192xf32>} : memref<64x96xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name, OptionalAttr<ElementsAttr>:$value);
  let results = (outs RT_Buffer:$buffer);
  let assemblyFormat = "$name attr-dict `:` type($buffer)";
  let hasVerifier = 1;
}

def RT_InputOp : RT_Op<"input", [Pure]> {
  let summary = "a program input";
  let description = [{
    ```mlir
    %x = rt.input 0 "input_ids" : memref<2x8xi64>
    ```
  }];
  let arguments = (ins I64Attr:$index, StrAttr:$name);
  let results = (outs RT_Buffer:$buffer);
  let assemblyFormat = "$index $name attr-dict `:` type($buffer)";
}

def RT_OutputOp : RT_Op<"output"> {
  let summary = "publish a buffer as a program output";
  let description = [{
    ```mlir
    rt.output 0 "logits", %b : memref<2x8x64xf32>
    ```
  }];
  let arguments = (ins I64Attr:$index, StrAttr:$name, RT_Buffer:$buffer);
  let assemblyFormat = "$index $name `,` $buffer attr-dict `:` type($buffer)";
}

def RT_ViewOp : RT_Op<"view", [Pure]> {
  let summary = "the same bytes under another shape";
  let description = [{
    Reshapes cost nothing: the result aliases the source, and the memory plan
    keeps the source alive while any view of it is.

    ```mlir
    %v = rt.view %b : memref<2x8x32xf32> to memref<2x8x4x8xf32>
    ```
  }];
  let arguments = (ins RT_Buffer:$source);
  let results = (outs RT_Buffer:$result);
  let assemblyFormat = "$source attr-dict `:` type($source) `to` type($result)";
  let hasVerifier = 1;
}

def RT_KernelOp : RT_Op<"kernel", [AttrSizedOperandSegments]> {
  let summary = "call a runtime kernel";
  let description = [{
    Calls the runtime's kernel `callee` with `ins` read and `outs` written;
    the remaining attributes are the kernel's parameters (axes, epsilon …),
    passed through from the nn op. Only a `send` writes nothing.

    ```mlir
    rt.kernel "softmax" ins(%s : memref<2x4x8x8xf32>) outs(%p : memref<2x4x8x8xf32>) {axis = 3 : i64}
    ```
  }];
  let arguments = (ins StrAttr:$callee, Variadic<RT_Buffer>:$ins,
                   Variadic<RT_Buffer>:$outs);
  let assemblyFormat = [{
    $callee (`ins` `(` $ins^ `:` type($ins) `)`)?
    (`outs` `(` $outs^ `:` type($outs) `)`)? attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The kernel parameters: every attribute but the callee and segments.
    llvm::SmallVector<mlir::NamedAttribute> getParams();
  }];
}

def RT_StartOp : RT_Op<"start", [AttrSizedOperandSegments]> {
  let summary = "start an asynchronous runtime call";
  let description = [{
    Starts the runtime's `callee` (its `parc_rt_<callee>_start` form) on
    `ins` and `outs` with the remaining attributes as parameters, like
    `rt.kernel`, and returns the request that `rt.wait` completes.

    ```mlir
    %r = rt.start "all_reduce" ins(%p : memref<8x16xf32>) outs(%s : memref<8x16xf32>) {mesh = @mesh, mesh_axes = ["tp"]}
    rt.wait %r
    ```
  }];
  let arguments = (ins StrAttr:$callee, Variadic<RT_Buffer>:$ins,
                   Variadic<RT_Buffer>:$outs);
  let results = (outs RT_RequestType:$request);
  let assemblyFormat = [{
    $callee (`ins` `(` $ins^ `:` type($ins) `)`)? (`outs` `(` $outs^ `:` type($outs) `)`)?
    attr-dict
  }];
  let hasVerifier = 1;
}

def RT_WaitOp : RT_Op<"wait"> {
  let summary = "complete an asynchronous runtime call";
  let description = [{
    Blocks (cpu) or orders the compute stream after the call (cuda) until
    the request's outputs are ready; a call that does not complete within
    the runtime's timeout aborts every rank.
  }];
  let arguments = (ins RT_RequestType:$request);
  let assemblyFormat = "$request attr-dict";
  let hasVerifier = 1;
}

def RT_RepeatOp : RT_Op<"repeat", [IsolatedFromAbove, SingleBlock,
                                   NoTerminator]> {
  let summary = "run one body of calls several times on per-iteration buffers";
  let description = [{
    A rolled loop over identical stretches of a program (a model's layers):
    the body's calls run `count` times in order, iteration `i` binding the
    body's block arguments to `bindings[i * A .. (i + 1) * A)`, `A` the
    number of block arguments. The body holds only `rt.kernel`, `rt.start`
    and `rt.wait`; every request it starts it also waits for. `rt-reroll`
    builds it, and code generation emits the body once, looping over a
    table of the bindings' arena offsets and weight and input slots.

    `locations` keeps, for iteration `i` and body op `j`, the location
    (the ONNX node) of the op the iteration stands for, at `i * ops + j`:
    error messages and traces keep naming each layer's own node.

    ```mlir
    rt.repeat 2 bindings(%x0, %y0, %x1, %y1 : memref<8xf32>, memref<8xf32>, memref<8xf32>, memref<8xf32>) {
    ^bb0(%x: memref<8xf32>, %y: memref<8xf32>):
      rt.kernel "relu" ins(%x : memref<8xf32>) outs(%y : memref<8xf32>)
    } {locations = [loc("l0/relu"), loc("l1/relu")]}
    ```
  }];
  let arguments = (ins ConfinedAttr<I64Attr, [IntMinValue<1>]>:$count,
                   Variadic<RT_Buffer>:$bindings, ArrayAttr:$locations);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = [{
    $count (`bindings` `(` $bindings^ `:` type($bindings) `)`)? $body attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The buffers iteration `i` binds to the body's arguments.
    mlir::OperandRange getIteration(int64_t i);
  }];
}

#endif // PARC_RT_OPS
