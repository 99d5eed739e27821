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

def DistExpertParallel : Pass<"dist-expert-parallel", "::mlir::ModuleOp"> {
  let summary = "Split every nn.moe's experts over the ranks (expert parallelism)";
  let description = [{
    Input: fused nn IR with `nn.moe` ops (after parc-nn-optimize, and after
    dist-tensor-parallel when both are used). With `ep` > 1 each nn.moe's
    stacked expert weights become `dist.local_part`s split on the expert
    dim into `ep` contiguous blocks, and the op is marked `expert_shards` =
    ep over mesh axis `ep_axis`: at run time each rank routes a contiguous
    share of the tokens (which every rank holds), dispatches each chosen
    (token, expert) pair to the expert's rank and combines the results back
    with all-to-all of data-dependent counts (counts first, then payloads),
    and the shares are all-gathered. The experts are split over a new 1-D
    mesh `ep`, or, when tensor parallelism already made a mesh, over its
    ranks: `ep` must then equal its size (attention and dense layers keep
    their tensor-parallel split, MoE layers are expert-parallel over the
    same ranks).

    With `etp` (expert tensor parallelism; needs the tensor-parallel mesh
    and `ep` = 1) every expert is split Megatron-style over the mesh's
    ranks instead: fc1 and fc3 by columns (the ffn dim), fc2 by rows, and
    the layer's output, a partial sum on each rank, is all-reduced. Every
    rank routes every token and computes its slice of every chosen expert.

    With `capacity-factor` F > 0 every nn.moe gets `capacity` =
    ceil(F · tokens · top_k / experts) pairs per expert; later pairs are
    dropped (the runtime counts them). An `ep` that does not divide the
    experts or the tokens is an error naming the node.
  }];
  let options = [
    Option<"ep", "ep", "int64_t", "2", "expert-parallel degree">,
    Option<"capacityFactor", "capacity-factor", "double", "0.0",
           "expert capacity as a multiple of tokens·top_k/experts (0: none)">,
    Option<"etp", "etp", "bool", "false",
           "split each expert's ffn over the tensor-parallel ranks instead">
  ];
  let dependentDialects = ["::parc::dist::DistDialect"];
}

#endif // PARC_TRANSFORMS_DIST_PASSES
