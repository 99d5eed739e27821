//===- Passes.td - passes over the rt dialect -------------*- tablegen -*-===//

#ifndef PARC_TRANSFORMS_RT_PASSES
#define PARC_TRANSFORMS_RT_PASSES

include "mlir/Pass/PassBase.td"

def RTPlanMemory : InterfacePass<"rt-plan-memory", "::mlir::FunctionOpInterface"> {
  let summary = "Place every buffer in one statically planned arena";
  let description = [{
    Input: an rt function whose `rt.alloc` ops have no offset. Computes each
    buffer's live range over the op sequence (a buffer stays live while any
    `rt.view` of it is used; outputs live to the end) and places buffers by
    decreasing size at the lowest offset that no buffer with an overlapping
    live range occupies. Output: every alloc has an `offset`; the function
    gets `rt.arena_size` (the peak, bytes) and `rt.unplanned_size` (the sum
    of all buffers, for comparison).

    A program whose arena, or whose weights, exceed `max-bytes` (1 TiB by
    default: more memory than any one device has) is refused with its size:
    such sizes come from hostile or mistyped shapes, not from real models,
    and would overflow the planner's arithmetic or the runtime's allocator.
  }];
  let options = [
    Option<"alignment", "alignment", "int64_t", "64",
           "byte alignment of every buffer">,
    Option<"maxBytes", "max-bytes", "int64_t", "int64_t(1) << 40",
           "largest arena, and largest total of weights, one rank may hold">
  ];
}

def RTReroll : InterfacePass<"rt-reroll", "::mlir::FunctionOpInterface"> {
  let summary = "Roll repeated stretches of calls (a model's layers) into rt.repeat";
  let description = [{
    Input: a placed rt program (after `rt-plan-memory`). A model's layers
    lower to the same calls again and again, differing only in the buffers
    they read and write; emitted one after another, the C++ grows with the
    depth and so does its compile time. This pass finds each maximal run of
    consecutive, isomorphic stretches of `rt.kernel` / `rt.start` /
    `rt.wait` (the same callees, attributes and operand types in the same
    order, each stretch's buffers used in the same pattern, every request
    started in a stretch also waited for in it) and replaces the run with
    one `rt.repeat` whose body is the first stretch and whose bindings are
    every stretch's buffers. Of the periods that repeat from a point, the
    shortest wins, so a pipeline stage's micro-batches each become a loop
    over layers rather than one loop over micro-batches of unrolled layers.

    Buffer definitions (`rt.alloc`, `rt.weight`, `rt.input`, `rt.view`) are
    moved to the top of the function first: they are pure, and the loop
    reads every iteration's buffers. Calls keep their order, so the
    start/wait interleaving of `dist-overlap` is unchanged. Output: the
    same calls in the same order, some inside `rt.repeat`.
  }];
  let options = [
    Option<"minOps", "min-ops", "int64_t", "8",
           "fewest calls a run must cover to be rolled">
  ];
}

#endif // PARC_TRANSFORMS_RT_PASSES
