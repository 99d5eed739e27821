//===- Passes.td - distribution passes --------------------*- tablegen -*-===//
//
// Megatron tensor (and sequence) parallelism over the mesh axis `tp`, as four
// passes that hand each other shardings in the IR: `dist-annotate` seeds,
// `dist-propagate` carries, `dist-partition` makes types local and
// `dist-comm` turns layout changes into collectives. The pipeline
// `dist-tensor-parallel` (lib/Pipelines) runs the four.
//
// Between the passes a value's layout is the `#dist.sharding` its defining op
// lists in `dist.result_shardings` (one per result; a value without one is
// replicated), and a consumer that wants another layout reads it through a
// `dist.shard ... annotate_for_users` (a resharding).
//
// The module passes transform the model's entry function (nn::entryFunction:
// the one marked `parc.entry`, else the one public function with a body;
// `@main` in what the importer writes) and keep its name; "@main" below is
// that function.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_TRANSFORMS_DIST_PASSES
#define PARC_TRANSFORMS_DIST_PASSES

include "mlir/Pass/PassBase.td"

def DistAnnotate : Pass<"dist-annotate", "::mlir::ModuleOp"> {
  let summary = "seed Megatron shardings on the fused nn ops";
  let description = [{
    Input: fused nn IR (an entry function such as `func.func @main`, after
    parc-nn-optimize). Adds
    `dist.mesh @mesh` with the one axis `tp` of size `tp` and seeds shardings
    with Megatron's rules:

    * A row-parallel candidate is an `nn.linear` whose input is computed,
      through ops with a tensor-parallel rule (attention, rotary, reshapes,
      transposes, splits, slices, concats, elementwise activations and
      gating products), from the outputs of other `nn.linear`s: those are
      its column-parallel linears. The row linear's result is seeded
      `partial = ["tp"]`, each column linear's result split on its features
      (`dist.region` groups them). Grouped-query key/value columns with
      fewer heads than ranks are split with `replicas` = tp / key/value
      heads in their sharding (each head held by that many ranks).
    * An MLP (column linears → activations with act(0) = 0 — GELU, SiLU,
      ReLU, tanh — gating products and constant biases → row linear) whose
      width `tp` does not divide is first padded to the next multiple of
      `tp`: zero columns and bias entries in its column weights, zero rows
      in its row weight, so the padded features contribute nothing.
    * A linear with constant weights whose only use is a program output (an
      LM head) is vocabulary-parallel: its result is split on its features
      (padded with zero features, sliced off after the all-gather, when
      `tp` does not divide them).
    * The token embedding (the largest `nn.gather` of rows of a constant
      [vocab, hidden] table by a graph input) is vocabulary-parallel: its
      result is seeded `partial = ["tp"]` and marked `dist.vocab_parallel`
      with its vocabulary size. A vocabulary `tp` does not divide gets zero
      rows up to the next multiple (Megatron's padded vocabulary): ids wrap
      by the recorded size, so none reads them.
    * With `sp` (Megatron sequence parallelism), every `nn.layer_norm` /
      `nn.rms_norm` over the last dim is seeded split along the sequence
      (the dim before the features), and row linears are marked
      `dist.sequence_parallel`: their partial sums are reduce-scattered
      along the sequence instead of all-reduced.

    Errors (the spec does not fit the model): heads, key/value heads or
    column features of a region that cannot be padded (attention, an
    activation such as sigmoid alone) that `tp` does not divide, a sequence that `tp` does not divide
    under `sp`. Each names the ONNX node, the dim and what would work.
    With `explain`, a remark names each candidate that stays replicated.
  }];
  let options = [
    Option<"tp", "tp", "int64_t", "2", "tensor-parallel degree">,
    Option<"sp", "sp", "bool", "false",
           "sequence parallelism: norms and residuals split along the sequence">,
    Option<"explain", "explain", "bool", "false",
           "remark on every candidate region that stays replicated, and why">
  ];
  let dependentDialects = ["::parc::dist::DistDialect"];
}

def DistPropagate : Pass<"dist-propagate", "::mlir::ModuleOp"> {
  let summary = "carry seeded shardings through every op by per-op rules";
  let description = [{
    Input: the output of `dist-annotate`. For each seeded region the split
    of the column outputs is carried forward in program order by each op's
    rule (elementwise and broadcasting ops align dims from the right;
    reshapes follow the split where the prefix product is kept, which is a
    head split or merge; transposes permute it; attention needs query, key
    and value split on heads; rotary must not split the rotated dim; softmax
    and reductions keep it when they run along other dims; splits and
    slices keep it, or cut a column output blockwise for fused QKV; concats
    must join along another dim). A region an op cannot carry stays
    replicated (its seeds are removed; with `explain` a remark says which
    node and why); heads that `tp` does not divide are an error.

    With sequence parallelism, the sequence split is carried from each
    seeded norm and each row linear's reduce-scatter in program order
    through the elementwise ops and reductions whose sharding rule keeps it
    (a norm written from its moments); an operand that is not split along
    the sequence is sliced to this rank's part (constants and replicated
    values: no communication). A row linear without a bias whose result is
    only reshaped (TF's Tensordot on `[batch·seq, k]` rows) keeps its
    partial sums through the reshapes and is reduce-scattered along the
    sequence of the last one. Conflicts resolve deterministically: the
    sequence split wins over replication, and any op without a sequence
    rule (a column linear, a reshape, the return) reads a gathered copy.

    Output: `dist.result_shardings` on every op of a region or sequence
    stretch, constant weights and side inputs annotated with the split their
    consumer needs (in its sharding: `blocks` for fused QKV, `replicas`
    for grouped-query parts), and a `dist.shard ... annotate_for_users` at every
    layout change (one per value and layout). With `explain`, a remark names
    the ONNX node of every resharding and the collective it will need.
    `dist.tp_regions` on `@main` counts the regions and heads split.
  }];
  let options = [
    Option<"explain", "explain", "bool", "false",
           "remark on every resharding and every region kept replicated">
  ];
  let dependentDialects = ["::parc::dist::DistDialect"];
}

def DistPartition : Pass<"dist-partition", "::mlir::ModuleOp"> {
  let summary = "global types to per-rank local types; weights to local parts";
  let description = [{
    Input: the output of `dist-propagate`. Every value with a sharding gets
    its local type (its split dim divided by the number of parts), attention
    score modifiers are retyped from their scores, a constant annotated with
    a split becomes a `dist.local_part` (the weight writer cuts each rank's
    part at compile time: blockwise for fused QKV, replicated over ranks for
    grouped-query parts), and every other resharding becomes a
    `dist.reshard` on local types. A KV cache argument split with its
    attention's key/value heads (`dist.sharding` on the argument) takes its
    local type itself: each rank's cache buffer is its part, written in
    place. A row-parallel linear loses its bias,
    which is added once after the reduction. A vocabulary-parallel lookup
    reads this rank's rows only: indices are shifted by the rank's first row
    (its part of a [tp, 3] constant of bounds), indices outside its rows
    read row 0 and their rows are zeroed, leaving partial sums. The sharding
    annotations are removed: the output is one SPMD rank program with
    pending reshards.
  }];
  let dependentDialects = ["::parc::dist::DistDialect"];
}

def DistComm : Pass<"dist-comm", "::mlir::ModuleOp"> {
  let summary = "every resharding becomes its cheapest collective";
  let description = [{
    Input: the output of `dist-partition`. Each `dist.reshard` becomes:
    partial → replicated: `dist.all_reduce`; partial → split:
    `dist.reduce_scatter` along the split dim; split → replicated:
    `dist.all_gather` along it; split on one dim → another:
    `dist.all_to_all`; replicated → split: a `dist.local_part` of the value
    (this rank's slice, no communication); an unchanged layout: nothing.
    Any other change is an error naming the ONNX node. An all-gather whose
    only reader is an `nn.slice` keeping a leading part of the gathered
    axis becomes an uneven one (`sizes`) that gathers just that part.
  }];
  let dependentDialects = ["::parc::dist::DistDialect"];
}

def DistOverlap : Pass<"dist-overlap", "::mlir::ModuleOp"> {
  let summary = "Hide communication behind compute: collective matmul chosen by the cost model, early starts, late waits, interleaved micro-batches";
  let description = [{
    Input: a partitioned program (after the tensor-parallel passes, and
    after `dist-extract-stage` or `dist-micro-batch` when there are stages
    or micro-batches) with synchronous `dist` collectives.

    Collective matmul: a row-parallel `nn.linear` whose only use is a
    `dist.all_reduce` (or a `dist.reduce_scatter` along its rows) can be cut
    into pieces of rows; piece k's collective is started before piece k+1
    is multiplied. A `dist.all_gather` along rows whose users are all
    `nn.linear`s can be cut likewise: piece k+1 is gathered while piece k
    is multiplied. Static reshapes, slices and concats restore the row
    order, so results equal the undecomposed program's up to the reduction
    order inside the collective. A piece keeps at least `min-rows` rows.

    The cut is chosen with the cost model of lib/Plan on the cluster
    `cluster` (a cluster JSON file, as `parc compile` resolves `--cluster`
    once, or a preset name found in share/parc/clusters beside the running
    tool): the product's roofline
    time and the ring time of its collective, per piece, each piece paying
    a kernel launch and every step's link latency, plus the copies that
    split and concatenate (`parc::plan::collectiveMatmulTime`); the
    cheapest of no cut and 2, 4, 8 pieces wins, so cutting pays only when
    what the pieces hide outweighs the latency and copies they add. `chunks` > 0 overrides the choice (the most
    pieces that divide the rows, at most `chunks`).

    Placement: every other all_reduce, all_gather, reduce_scatter and
    all_to_all becomes its `*_start` right after its operand is defined and
    a `dist.wait` right before its first use. With `memory-budget` > 0, a
    collective whose window would put more than that many bytes of
    collective buffers in flight starts where it was instead.

    Interleaving (`interleave`): ops tagged `dist.micro_batch` (by
    `dist-pipeline` and `dist-micro-batch`) form independent chains, one per
    micro-batch, and ops computed from one chain's values belong to it.
    They are list-scheduled in pairs: chain i runs until it would wait for
    a collective it has just started, then chain i+1 runs (its attention,
    say) while that collective is in flight, and back; chain i+2 joins when
    chain i is done. A chain waiting on a pipeline receive is not switched
    to (it would stall the stage). The budget bounds the bytes of
    collectives left in flight across a switch. Ops of no chain run first,
    ops reading several chains (the stacked outputs, pipeline send waits)
    last.

    With `explain`, each collective gets a remark naming its ONNX node with
    the alternatives' predicted times and the choice. The module gets
    `dist.overlap = {decomposed, early_starts, interleaved}`.
  }];
  let options = [
    Option<"chunks", "chunks", "int64_t", "0",
           "pieces a collective matmul is cut into (0: the cheapest by the "
           "cost model; 1: no decomposition)">,
    Option<"minRows", "min-rows", "int64_t", "8",
           "fewest rows of a piece's product">,
    Option<"memoryBudget", "memory-budget", "int64_t", "0",
           "bytes of collective buffers allowed in flight (0: unlimited)">,
    Option<"cluster", "cluster", "std::string", "\"cpu\"",
           "cluster preset or JSON file the cost model prices on">,
    Option<"interleave", "interleave", "bool", "true",
           "interleave independent micro-batch chains">,
    Option<"explain", "explain", "bool", "false",
           "remark each collective's alternatives and the choice">
  ];
  let dependentDialects = ["::parc::dist::DistDialect", "::parc::nn::NNDialect"];
}

def DistSplitBatch : Pass<"dist-split-batch", "::mlir::ModuleOp"> {
  let summary = "Rewrite a batch fixed inside the graph to one part's batch";
  let description = [{
    Input: @main imported at the whole batch of a model that fixes it (static
    input dims, Reshape constants holding the batch), which cannot be
    imported at one micro-batch's shape. Output: @main at `parts` times
    smaller a batch, as if imported there, for `dist-micro-batch`,
    `dist-pipeline` and `--dp` to stack again.

    Dim 0 of every input is the batch, or the dim its `onnx.batch_dim`
    names (a past stacking K and V first holds it on dim 1); each op's rule
    places it in its
    result (elementwise and broadcasting ops align it, a reshape keeps it
    outermost in the output dim with the same prefix, a transpose moves
    it, norms, softmax, concat, split, slice and reductions keep it off
    their axes, attention on dim 0 of query, key, value and the batched
    masks). Every such dim is divided by `parts`; ops that read no batched
    value (weights) are untouched.

    Refused, naming the node: a constant or weight that spans the batch, a
    reshape that spreads the batch over several dims, an op working along
    the batch, an op without a rule, inputs of different batches, an output
    without the batch on dim 0 (or its `onnx.batch_dim`).

    ```mlir
    // parts=2, batch 4 fixed: [4, 16, 64] -> [4, 16, 4, 16] becomes
    %h = nn.reshape %x : tensor<2x16x64xf32> to tensor<2x16x4x16xf32>
    ```
  }];
  let options = [
    Option<"parts", "parts", "int64_t", "1",
           "parts the batch (dim 0 of every input) is divided into">
  ];
  let dependentDialects = ["::parc::nn::NNDialect"];
}

def DistMicroBatch : Pass<"dist-micro-batch", "::mlir::ModuleOp"> {
  let summary = "Split the batch into independent micro-batch chains (without pipeline stages)";
  let description = [{
    Input: @main of a (partitioned) program imported at the shape of one
    micro-batch. Output: @main over the whole batch (every input and output
    `micro-batches` times as long on its batch dim: dim 0, or the one its
    `onnx.batch_dim` names): each input is sliced along it, everything
    computed from the inputs is cloned once per micro-batch and tagged
    `dist.micro_batch = i`, the outputs are concatenated along theirs. Ops that do not depend on an input (weights and their parts) are
    kept once and shared. The chains are independent, so `dist-overlap`
    can interleave them: one micro-batch's collectives run while the next
    computes.

    Refused: a scalar input or output, or an output that does not depend
    on the inputs.

    ```mlir
    // micro-batches=2: %x : tensor<4x8xf32> of batch 4
    %x0 = nn.slice %x {starts = array<i64: 0, 0>, ...} : ... -> tensor<2x8xf32>
    %y0 = nn.relu %x0 {dist.micro_batch = 0 : i64} : tensor<2x8xf32>
    ...
    %y = nn.concat %y0, %y1 {axis = 0 : i64} : ... -> tensor<4x8xf32>
    ```
  }];
  let options = [
    Option<"microBatches", "micro-batches", "int64_t", "1",
           "micro-batches the batch (dim 0 of every input) is split into">
  ];
  let dependentDialects = ["::parc::dist::DistDialect", "::parc::nn::NNDialect"];
}

def DistPipeline : Pass<"dist-pipeline", "::mlir::ModuleOp"> {
  let summary = "Cut the model into pipeline stages with micro-batches and send/recv";
  let description = [{
    Input: fused nn IR (an entry function such as `func.func @main`, after
    parc-nn-optimize and, when
    composed with tensor parallelism, after dist-tensor-parallel), computing
    one micro-batch: every input and output carries the batch on dim 0 (or
    the dim its `onnx.batch_dim` names).

    Layers are the model's repeated block: one per `nn.attention`; without
    one, one per back-to-back repetition of a subgraph with one computed
    tensor live between repetitions, not counting the side inputs every
    layer reads unchanged (a mask read by one op of each layer, each after
    the one before), which are sent to every stage that reads them. The cut
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
    on their batch dims. Its body is the stage programs one after another (stage 0
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
    then keeps one stage. With several micro-batches, every op computed for
    micro-batch i (and its receive waits and sends) also carries
    `dist.micro_batch = i`: the chains `dist-overlap` may interleave.

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
    given them), except the KV caches (`parc.kv_role = "cache"`) of other
    stages' layers: each stage owns its own. Only the last stage keeps the
    outputs. The module records
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
    dim into `ep` contiguous blocks, and the op is replaced by its
    expert-parallel steps, with the collectives placed here (they come from
    the expert split, not from a resharding dist-comm would see): each rank
    takes its contiguous share of the tokens (which every rank holds,
    `dist.local_part`), routes it (`nn.moe_route`), the per-expert counts
    are all-gathered (`dist.all_gather`, counts first), `dist.moe_permute`
    applies the capacity and orders the kept pairs by expert, a
    `dist.all_to_all_v` carries the rows to the experts' ranks (static
    bound: tokens · min(top_k, experts/ep) rows, or experts/ep · capacity
    if smaller), `nn.moe_experts` runs the local experts, a second
    `dist.all_to_all_v` returns the results, `nn.moe_combine` weights and
    sums them per token, and the shares are all-gathered. The experts are
    split over a new 1-D
    mesh `ep`, or, when tensor parallelism already made a mesh, over its
    ranks: `ep` must then equal its size (attention and dense layers keep
    their tensor-parallel split, MoE layers are expert-parallel over the
    same ranks).

    With `etp` (expert tensor parallelism; needs the tensor-parallel mesh)
    and `ep` = 1 every expert is split Megatron-style over the mesh's
    ranks instead: fc1 and fc3 by columns (the ffn dim), fc2 by rows, and
    the layer's output, a partial sum on each rank, is all-reduced. Every
    rank routes every token and computes its slice of every chosen expert.
    With `etp` and `ep` > 1 the 1-D tensor-parallel mesh [N] becomes
    [ep, N] with a new major axis "ep" (its collectives keep their groups):
    the experts are split over "ep" as above and each expert's ffn over
    the tensor-parallel axis (a `dist.local_part` of a `dist.local_part`);
    the steps run over "ep" and the combined share, a partial sum, is
    all-reduced over the tensor-parallel axis before the all-gather.

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
