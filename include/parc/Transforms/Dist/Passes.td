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

def DistPipeline : Pass<"dist-pipeline", "::mlir::ModuleOp"> {
  let summary = "Cut the model into pipeline stages with micro-batches and send/recv";
  let description = [{
    Input: fused nn IR (`func.func @main`, after parc-nn-optimize and, when
    composed with tensor parallelism, after dist-tensor-parallel), computing
    one micro-batch: every input and output carries the batch on dim 0.

    Layers are the model's repeated block: one per `nn.attention`. The cut
    between layers k-1 and k is the point between their attentions where
    the fewest bytes of computed tensors are live (the residual stream), the
    latest such point on ties, so a layer ends with its residual add (pre-LN)
    or its norm (post-LN). The embedding joins the first layer and the final
    norm and head the last. Stages take consecutive layers: `layout` gives
    the count per stage; by default the partition minimises the largest
    stage cost, a stage's cost being the FLOPs of its ops (matrix products
    2·m·n·k, attention 4·b·h·s·t·d, one per element otherwise), so stages
    that hold the embedding or the head may get fewer layers.

    Output: `@main` takes and returns `micro-batches` micro-batches stacked
    on dim 0. Its body is the stage programs one after another (stage 0
    first, which is also a valid sequential order); every op carries
    `dist.stage`. A stage runs the GPipe forward schedule: it posts the
    receives of every micro-batch up front (`dist.recv_start`), then for
    each micro-batch in turn waits for its inputs where first used,
    computes, and starts a `dist.send_start` to each later stage that uses
    a value as soon as the value exists, so micro-batch i+1 computes while
    i is in flight; the sends are waited for at the end. Only values used on
    another stage are sent, directly to every stage that uses them;
    constants and program inputs are available on every stage. With
    `async=false` the same schedule uses blocking `dist.send` /
    `dist.recv`. The mesh becomes `["pp", "tp"]` (the tensor-parallel
    mesh, if any, gets a leading `pp` axis), so tensor-parallel
    collectives stay within a stage. `@main` records `dist.pp_layout`
    (layers per stage) and `dist.micro_batches`; `dist-extract-stage`
    then keeps one stage.

    With `virtual` = V > 1 (interleaved virtual stages), the layers are cut
    into pp·V chunks (`layout` then lists pp·V counts) and chunk c runs on
    stage c mod pp, so each stage holds V chunks pp apart and the last
    chunk's stage sends back to stage 0. A stage takes micro-batches in
    groups of pp and runs each of its chunks over the group before the next
    (Megatron's interleaved order, forward only); a value read by a later
    chunk of the stage that computed it is not sent.

    Errors: no attention layer to cut at, more stages (pp·V) than layers, a
    layout whose length is not pp·V or that does not sum to the layer count.
  }];
  let options = [
    Option<"pp", "pp", "int64_t", "2", "pipeline stages">,
    ListOption<"layout", "layout", "int64_t",
               "layers per stage, in stage order (default: balance the cost model)">,
    Option<"microBatches", "micro-batches", "int64_t", "1",
           "micro-batches per forward (the inputs' dim 0 is scaled by it)">,
    Option<"async", "async", "bool", "true",
           "asynchronous sends and receives (send_start/recv_start + wait)">,
    Option<"virtualStages", "virtual", "int64_t", "1",
           "virtual stages per stage (interleaved schedule)">,
    Option<"explain", "explain", "bool", "false",
           "remark on each stage: its layers, their FLOPs and the bytes its "
           "cut sends">
  ];
  let dependentDialects = ["::parc::dist::DistDialect", "::parc::nn::NNDialect"];
}

def DistExtractStage : Pass<"dist-extract-stage", "::mlir::ModuleOp"> {
  let summary = "Keep one pipeline stage's program";
  let description = [{
    Input: the output of dist-pipeline. Keeps the ops of `@main` tagged
    with `dist.stage` = `stage` and the untagged ops (constants) they use;
    every other stage's ops are erased. Program inputs stay (every rank is
    given them); only the last stage keeps the outputs. The module records
    `dist.pipeline = {stage, stages, micro_batches, virtual_stages}` for
    code generation.
  }];
  let options = [
    Option<"stage", "stage", "int64_t", "0", "the stage to keep">
  ];
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
