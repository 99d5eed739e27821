//===- Passes.td - passes over the rt dialect -------------*- tablegen -*-===//

#ifndef PARC_TRANSFORMS_RT_PASSES
#define PARC_TRANSFORMS_RT_PASSES

include "mlir/Pass/PassBase.td"

def RTPlanMemory : Pass<"rt-plan-memory", "::mlir::func::FuncOp"> {
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

#endif // PARC_TRANSFORMS_RT_PASSES
