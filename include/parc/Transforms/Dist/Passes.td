//===- Passes.td - distribution passes --------------------*- tablegen -*-===//

#ifndef PARC_TRANSFORMS_DIST_PASSES
#define PARC_TRANSFORMS_DIST_PASSES

include "mlir/Pass/PassBase.td"

def DistTensorParallel : Pass<"dist-tensor-parallel", "::mlir::ModuleOp"> {
  let summary = "Megatron tensor parallelism over a 1-D `tp` mesh";
  let description = [{
    Input: fused nn IR (`func.func @main`, after parc-nn-optimize). Finds
    the Megatron regions: a row-parallel `nn.linear` whose input is computed,
    through attention (split by heads), rotary embeddings, elementwise
    activations, gating products, reshapes, transposes and splits, from the
    outputs of column-parallel `nn.linear`s. Each region is checked by
    propagating the split dimension forward from the column outputs; a
    region whose values escape it or that contains an op without a rule
    stays replicated, and with `explain` the pass says why in a remark.

    A region that would split but whose heads or features `tp` does not
    divide is an error: the spec does not fit the model.

    Output: one SPMD rank program on local shapes. Column weights (and
    biases) become `dist.local_part`s split on their output dim (blockwise
    for fused QKV projections that are split afterwards), row weights are
    split on their input dim (grouped-query key/value projections with fewer
    heads than ranks are cut per head and each part replicated over
    tp / kv_heads ranks), every row-parallel product is followed by a
    `dist.all_reduce` over `tp` and then its bias, a linear whose only use
    is a program output (an LM head) is split by its output features and
    all-gathered, and the module gets
    `dist.mesh @mesh` with axis `tp`. The annotate, propagate, partition
    and communication steps of the design are one pass here; they separate
    when sequence parallelism needs them to.
  }];
  let options = [
    Option<"tp", "tp", "int64_t", "2", "tensor-parallel degree">,
    Option<"explain", "explain", "bool", "false",
           "remark on every region that stays replicated, and why">
  ];
  let dependentDialects = ["::parc::dist::DistDialect"];
}

def DistOverlap : Pass<"dist-overlap", "::mlir::ModuleOp"> {
  let summary = "Hide communication behind compute: collective matmul, early starts, late waits";
  let description = [{
    Input: a partitioned program (after the tensor-parallel passes) with
    synchronous `dist` collectives.

    Collective matmul: a row-parallel `nn.linear` whose only use is a
    `dist.all_reduce` (or a `dist.reduce_scatter` along its rows) is cut into
    up to `chunks` pieces of rows; piece k's collective is started before
    piece k+1 is multiplied. A `dist.all_gather` along rows whose users are
    all `nn.linear`s is cut likewise: piece k+1 is gathered while piece k
    is multiplied. Static reshapes, slices and concats restore the row
    order, so results equal the undecomposed program's up to the reduction
    order inside the collective. A piece keeps at least `min-rows` rows:
    thinner GEMMs run too far below peak to hide anything.

    Placement: every other all_reduce, all_gather, reduce_scatter and
    all_to_all becomes its `*_start` right after its operand is defined and
    a `dist.wait` right before its first use. With `memory-budget` > 0, a
    collective whose window would put more than that many bytes of
    collective buffers in flight starts where it was instead.

    The module gets `dist.overlap = {decomposed, early_starts}`.
  }];
  let options = [
    Option<"chunks", "chunks", "int64_t", "2",
           "pieces a collective matmul is cut into (1: no decomposition)">,
    Option<"minRows", "min-rows", "int64_t", "8",
           "fewest rows of a piece's product">,
    Option<"memoryBudget", "memory-budget", "int64_t", "0",
           "bytes of collective buffers allowed in flight (0: unlimited)">
  ];
  let dependentDialects = ["::parc::dist::DistDialect", "::parc::nn::NNDialect"];
}

#endif // PARC_TRANSFORMS_DIST_PASSES
