//===- DistOps.td - the dist dialect: meshes and collectives -*- tablegen -*-===//
//
// Ops of the dist dialect. `dist.mesh` and `dist.shard` describe a global
// program's layout; the collectives describe the communication of per-rank
// programs, on rank-local tensor types. Every collective names its mesh and
// the mesh axes whose ranks form its groups; verifiers resolve the mesh
// through the nearest symbol table and check the shape arithmetic the group
// size implies.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_DIST_OPS
#define PARC_DIST_OPS

include "DistBase.td"
include "DistAttrs.td"
include "DistTypes.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// Base classes
//===----------------------------------------------------------------------===//

class Dist_Op<string mnemonic, list<Trait> traits = []>
    : Op<Dist_Dialect, mnemonic, traits>;

def Dist_Tensor : StaticShapeTensorOf<[AnyType]>;
def Dist_CountsTensor : 1DTensorOf<[I64]>;

def Dist_MeshAxesAttr : ConfinedAttr<StrArrayAttr, [ArrayMinCount<1>]>;
def Dist_TensorAxisAttr : ConfinedAttr<I64Attr, [IntNonNegative]>;
def Dist_ReductionAttr : DefaultValuedAttr<Dist_ReductionKind,
                                           "::parc::dist::ReductionKind::sum">;

// A communicating op over the groups of ranks of `mesh` that differ only in
// their coordinates on `mesh_axes`. The rank's index in its group is its
// coordinates on `mesh_axes` linearised major to minor, in the listed order;
// gathers concatenate and scatters split in that order.
class Dist_CommOp<string mnemonic, list<Trait> traits = []>
    : Dist_Op<mnemonic, !listconcat(traits, [Dist_CommEffects,
        DeclareOpInterfaceMethods<SymbolUserOpInterface>])> {
  dag commonArgs = (ins FlatSymbolRefAttr:$mesh, Dist_MeshAxesAttr:$mesh_axes);
  string meshFormat = "`on` $mesh `mesh_axes` `=` $mesh_axes";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The names in `mesh_axes`.
    ::llvm::SmallVector<::llvm::StringRef> getMeshAxisNames() {
      return ::llvm::to_vector(getMeshAxes().getAsValueRange<::mlir::StringAttr>());
    }
  }];
}

// Point-to-point: the peer is either an absolute index in the group (`peer`)
// or a cyclic shift of the rank's own index (`shift`); exactly one is given.
class Dist_P2POp<string mnemonic, list<Trait> traits = []>
    : Dist_CommOp<mnemonic, traits> {
  dag peerArgs = (ins OptionalAttr<ConfinedAttr<I64Attr, [IntNonNegative]>>:$peer,
                      OptionalAttr<I64Attr>:$shift);
  string peerFormat = "(`peer` `=` $peer^)? (`shift` `=` $shift^)?";
}

//===----------------------------------------------------------------------===//
// Mesh and sharding annotations
//===----------------------------------------------------------------------===//

def Dist_MeshOp : Dist_Op<"mesh", [Symbol, HasParent<"::mlir::ModuleOp">]> {
  let summary = "a named n-D mesh of ranks";
  let description = [{
    Declares a mesh of `product(shape)` ranks with one named axis per
    dimension. Rank `r` sits at the row-major coordinates of `r` in `shape`
    (the last axis varies fastest), so with `pp` outermost and `tp`
    innermost the ranks of one tensor-parallel group are consecutive, which
    is what NVLink-local placement wants.

    ```mlir
    dist.mesh @mesh(shape = 2x4, axes = ["pp", "tp"])
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, StrArrayAttr:$axes,
                   DenseI64ArrayAttr:$shape);
  let assemblyFormat = [{
    $sym_name `(` `shape` `=` custom<DimensionList>($shape) `,` `axes` `=`
    $axes `)` attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The number of ranks on the mesh.
    int64_t getNumRanks();
    /// The axis names, in mesh order.
    ::llvm::SmallVector<::llvm::StringRef> getAxisNames();
    /// The position of axis `name`, if the mesh has it.
    std::optional<unsigned> getAxisIndex(::llvm::StringRef name);
    /// The number of ranks in a group spanning `axes`; fails on an unknown
    /// axis.
    ::mlir::FailureOr<int64_t> getGroupSize(::llvm::ArrayRef<::llvm::StringRef> axes);
    /// The coordinates of linear rank `rank` (row-major).
    ::llvm::SmallVector<int64_t> getCoordinates(int64_t rank);
    /// The linear rank at `coords` (row-major).
    int64_t getLinearRank(::llvm::ArrayRef<int64_t> coords);
  }];
}

def Dist_ShardOp : Dist_Op<"shard", [Pure, AllTypesMatch<["input", "result"]>,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "annotate the sharding of a global value";
  let description = [{
    The result is `input`, laid out as `sharding`. Without
    `annotate_for_users` the annotation describes the value as its defining
    op produces it; with it, the layout the users of the result want, so a
    value can be produced one way and consumed another (the difference
    becomes a collective in `dist-comm`). `dist-partition` removes these
    ops when it rewrites the program to local shapes.

    The sharding is written without its `#dist.sharding` prefix: a
    qualified attribute would take the `: type` that follows as its own.

    ```mlir
    %w1 = dist.shard %w to <@mesh, [[], ["tp"]]> : tensor<64x256xf32>
    %x1 = dist.shard %x to <@mesh, [["dp"]]> annotate_for_users : tensor<8x64xf32>
    ```
  }];
  let arguments = (ins Dist_Tensor:$input, Dist_ShardingAttr:$sharding,
                   UnitAttr:$annotate_for_users);
  let results = (outs Dist_Tensor:$result);
  let assemblyFormat = [{
    $input `to` $sharding
    (`annotate_for_users` $annotate_for_users^)? attr-dict `:` type($result)
  }];
}

def Dist_LocalPartOp : Dist_Op<"local_part", [Pure,
    DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "this rank's part of a replicated tensor";
  let description = [{
    The slice of `input` (the same on every rank, typically a weight
    constant) that this rank keeps when `input` is laid out as `sharding`:
    its chunk of every split dimension, of every block of a blockwise one
    (a fused QKV projection), a chunk shared by consecutive ranks where the
    sharding has replicas (grouped-query attention with fewer key/value
    heads than ranks). Every rank's part has the result type, so the
    sharding has no uneven `sizes` and is not partial. No data moves: on
    constants the weight writer cuts each rank's part at compile time; on a
    computed value (sequence parallelism slicing a replicated activation,
    evenly) each rank copies its chunk at run time.

    ```mlir
    %w1 = dist.local_part %w to <@mesh, [[], ["tp"]]> : tensor<64x256xf32> -> tensor<64x64xf32>
    %qkv1 = dist.local_part %qkv to <@mesh, [[], ["tp"]], blocks = [[], [64, 32, 32]]> : tensor<64x128xf32> -> tensor<64x32xf32>
    ```
  }];
  let arguments = (ins Dist_Tensor:$input, Dist_ShardingAttr:$sharding);
  let results = (outs Dist_Tensor:$result);
  let assemblyFormat = [{
    $input `to` $sharding attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Dist_ReshardOp : Dist_Op<"reshard", [Dist_CommEffects]> {
  let summary = "a pending layout change of a rank-local value";
  let description = [{
    The rank-local `input` holds its part of a global value laid out as
    `from`; the result holds its part of the same value laid out as `to`.
    `dist-partition` leaves one wherever a consumer wants another layout
    than its producer's, and `dist-comm` replaces each by the collective
    that performs it (or by a local slice, or by nothing). Both shardings
    are on the same mesh; the element type and rank do not change.

    ```mlir
    %y = dist.reshard %x from <@mesh, [], partial = ["tp"]> to <@mesh, [[], ["tp"]]> : tensor<2x8x64xf32> -> tensor<2x4x64xf32>
    ```
  }];
  let arguments = (ins Dist_Tensor:$input, Dist_ShardingAttr:$from,
                   Dist_ShardingAttr:$to);
  let results = (outs Dist_Tensor:$result);
  let assemblyFormat = [{
    $input `from` $from `to` $to attr-dict `:` type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

def Dist_AllReduceOp : Dist_CommOp<"all_reduce", [SameOperandsAndResultType]> {
  let summary = "reduce over each group; every member gets the result";
  let description = [{
    Elementwise `reduction` (default `sum`) of the input of every rank in
    the group; each rank receives the full result. Turns a `partial` value
    into a replicated one.

    ```mlir
    %y = dist.all_reduce %x on @mesh mesh_axes = ["tp"] : tensor<8x64xf32>
    %m = dist.all_reduce %x on @mesh mesh_axes = ["tp"] reduction = max : tensor<8x64xf32>
    ```
  }];
  let arguments = !con(commonArgs, (ins Dist_Tensor:$input,
                       Dist_ReductionAttr:$reduction));
  let results = (outs Dist_Tensor:$result);
  let assemblyFormat = "$input " # meshFormat #
    " (`reduction` `=` $reduction^)? attr-dict `:` type($input)";
  let builders = [
    OpBuilder<(ins "::mlir::Type":$result, "::mlir::FlatSymbolRefAttr":$mesh,
                   "::mlir::ArrayAttr":$meshAxes, "::mlir::Value":$input,
                   "::parc::dist::ReductionKind":$reduction), [{
      build($_builder, $_state, result, mesh, meshAxes, input,
            ::parc::dist::ReductionKindAttr::get($_builder.getContext(),
                                                 reduction));
    }]>
  ];
}

def Dist_AllGatherOp : Dist_CommOp<"all_gather"> {
  let summary = "concatenate the shards of each group along a tensor dimension";
  let description = [{
    Every rank receives the inputs of all group members concatenated along
    `gather_axis` in group order. Even: the result dimension is the input
    dimension times the group size. Uneven: every member's input has the
    same (padded) extent, and `sizes` gives how many of its leading entries
    along `gather_axis` each member contributes (in group order; each at
    most the input extent): the result's extent is their sum. A padded
    vocabulary gathered without its padding is the typical case.
    The other dimensions and the element type are unchanged.

    With `root`, only that group member (in group order) receives the
    result; on the others it is undefined. dist-comm sets root 0 on a gather
    read only by the function's return: the outputs are kept by the output
    rank alone, which is member 0 of each of its groups.

    ```mlir
    %y = dist.all_gather %x on @mesh mesh_axes = ["tp"] gather_axis = 1 : tensor<8x16xf32> -> tensor<8x64xf32>
    %z = dist.all_gather %u on @mesh mesh_axes = ["tp"] gather_axis = 0 sizes = [3, 3, 2, 2] : tensor<3x8xf32> -> tensor<10x8xf32>
    %w = dist.all_gather %x on @mesh mesh_axes = ["tp"] gather_axis = 1 root = 0 : tensor<8x16xf32> -> tensor<8x64xf32>
    ```
  }];
  let arguments = !con(commonArgs, (ins Dist_Tensor:$input,
                       Dist_TensorAxisAttr:$gather_axis,
                       OptionalAttr<DenseI64ArrayAttr>:$sizes,
                       OptionalAttr<I64Attr>:$root));
  let results = (outs Dist_Tensor:$result);
  let assemblyFormat = "$input " # meshFormat #
    " `gather_axis` `=` $gather_axis (`sizes` `=` $sizes^)?"
    " (`root` `=` $root^)? attr-dict `:` type($input) `->` type($result)";
}

def Dist_ReduceScatterOp : Dist_CommOp<"reduce_scatter"> {
  let summary = "reduce over each group, then split the result among it";
  let description = [{
    Elementwise `reduction` (default `sum`) over the group, after which
    member `i` keeps the `i`-th slice along `scatter_axis`. Even: the input
    dimension divides by the group size. Uneven: `sizes` gives each member's
    slice extent (in group order), summing to the input dimension; the
    result's extent is this rank's one. Sequence parallelism turns the
    all-reduce after a row-parallel linear into this.

    ```mlir
    %y = dist.reduce_scatter %x on @mesh mesh_axes = ["tp"] scatter_axis = 0 : tensor<8x64xf32> -> tensor<2x64xf32>
    ```
  }];
  let arguments = !con(commonArgs, (ins Dist_Tensor:$input,
                       Dist_TensorAxisAttr:$scatter_axis,
                       Dist_ReductionAttr:$reduction,
                       OptionalAttr<DenseI64ArrayAttr>:$sizes));
  let results = (outs Dist_Tensor:$result);
  let assemblyFormat = "$input " # meshFormat #
    " `scatter_axis` `=` $scatter_axis (`reduction` `=` $reduction^)?"
    " (`sizes` `=` $sizes^)? attr-dict `:` type($input) `->` type($result)";
}

def Dist_AllToAllOp : Dist_CommOp<"all_to_all"> {
  let summary = "re-split a tensor from one dimension to another";
  let description = [{
    Each rank splits its input evenly along `split_axis` into one slice per
    group member, sends slice `j` to member `j`, and concatenates the slices
    it receives along `concat_axis` in group order. The result's
    `split_axis` extent is divided by the group size and its `concat_axis`
    extent multiplied by it (the shape is unchanged when the two axes are
    the same). Moves a sequence-sharded activation to head-sharded
    (Ulysses attention).

    ```mlir
    %y = dist.all_to_all %x on @mesh mesh_axes = ["tp"] split_axis = 1 concat_axis = 0 : tensor<2x64xf32> -> tensor<8x16xf32>
    ```
  }];
  let arguments = !con(commonArgs, (ins Dist_Tensor:$input,
                       Dist_TensorAxisAttr:$split_axis,
                       Dist_TensorAxisAttr:$concat_axis));
  let results = (outs Dist_Tensor:$result);
  let assemblyFormat = "$input " # meshFormat #
    " `split_axis` `=` $split_axis `concat_axis` `=` $concat_axis attr-dict"
    " `:` type($input) `->` type($result)";
}

def Dist_AllToAllVOp : Dist_CommOp<"all_to_all_v"> {
  let summary = "exchange planned numbers of slices (MoE dispatch/combine)";
  let description = [{
    The input holds, along `axis`, consecutive runs of slices for the group
    members in group order: `send_counts[j]` slices for member `j`, starting
    at `send_counts[0] + … + send_counts[j-1]`. Slices past the sum of
    `send_counts` are not sent. Each rank stores, along `axis` of `output`,
    the `recv_counts[j]` slices member `j` sends it, for `j = 0, 1, …` in
    group order. The other dimensions and the element type are unchanged.

    Both counts are operands: the compiler has them before the exchange
    (from `dist.moe_permute`, which plans from the all-gathered per-expert
    counts), so only payloads travel. They must agree across the group
    (`send_counts[j]` of member `i` = `recv_counts[i]` of member `j`) and
    fit: the `axis` extents of `input` and `output` are static upper
    bounds, and the runtime fails when a count total exceeds its buffer.
    A combine is the same op with the two counts swapped. Output slices
    past the received total are unspecified.

    ```mlir
    %y = dist.all_to_all_v %x, %sc, %rc on @mesh mesh_axes = ["ep"] axis = 0 : tensor<64x32xf32>, tensor<4xi64>, tensor<4xi64> -> tensor<96x32xf32>
    ```
  }];
  let arguments = !con(commonArgs, (ins Dist_Tensor:$input,
                       Dist_CountsTensor:$send_counts,
                       Dist_CountsTensor:$recv_counts,
                       Dist_TensorAxisAttr:$axis));
  let results = (outs Dist_Tensor:$output);
  let assemblyFormat = "$input `,` $send_counts `,` $recv_counts " # meshFormat #
    " `axis` `=` $axis attr-dict `:` type($input) `,` type($send_counts) `,`"
    " type($recv_counts) `->` type($output)";
}

def Dist_MoePermuteOp : Dist_CommOp<"moe_permute"> {
  let summary = "expert-parallel dispatch plan: capacity cut and token permutation";
  let description = [{
    The step of an expert-parallel `nn.moe` between routing and dispatch.
    It moves no data between ranks; it needs the group only for the rank's
    own index `r`. `counts` (`[P·E]` i64) are every member's per-expert
    counts in group order (an all_gather of `nn.moe_route`'s counts), so all
    members apply `capacity` (> 0: at most that many pairs per expert, the
    first in (rank, token) order) identically. Experts are split into `P`
    contiguous blocks of `L = E / P`.

    Results: `rows` (`[T·k, H]` f32, T·k the static bound) hold the input
    rows of this rank's kept (token, expert) pairs ordered by expert, token
    order within (so by destination rank); `send_counts` (`[P]`) how many
    go to each member; `layout` (`[P, L]`) how many rows of each member
    this rank will receive for each of its local experts (what
    `nn.moe_experts` reads); `pair_rows` (`[T·k]`) the row each pair was
    put in, -1 if it was dropped (what `nn.moe_combine` reads);
    `recv_counts` (`[P]`) how many rows this rank will receive from each
    member (the rows of `layout` summed). With both counts known, the
    dispatch and combine `dist.all_to_all_v` send only payloads. The
    permutation also records the layer's routing statistics for the run's
    report.

    ```mlir
    %rows, %sc, %layout, %pairs, %rc = dist.moe_permute %x, %ids, %counts on @mesh mesh_axes = ["ep"] capacity = 4
        : tensor<8x32xf32>, tensor<8x2xi64>, tensor<8xi64> -> tensor<16x32xf32>, tensor<2xi64>, tensor<2x2xi64>, tensor<16xi64>, tensor<2xi64>
    ```
  }];
  let arguments = !con(commonArgs, (ins Dist_Tensor:$input,
                       Dist_Tensor:$expert_ids, Dist_CountsTensor:$counts,
                       DefaultValuedAttr<ConfinedAttr<I64Attr, [IntNonNegative]>, "0">:$capacity));
  let results = (outs Dist_Tensor:$rows, Dist_CountsTensor:$send_counts,
                 Dist_Tensor:$layout, Dist_CountsTensor:$pair_rows,
                 Dist_CountsTensor:$recv_counts);
  let assemblyFormat = "$input `,` $expert_ids `,` $counts " # meshFormat #
    " (`capacity` `=` $capacity^)? attr-dict `:` type($input) `,` type($expert_ids) `,` type($counts)"
    " `->` type($rows) `,` type($send_counts) `,` type($layout) `,` type($pair_rows)"
    " `,` type($recv_counts)";
}

def Dist_SendOp : Dist_P2POp<"send"> {
  let summary = "send a tensor to one member of the group";
  let description = [{
    Sends `input` to the group member with index `peer`, or with index
    `(i + shift) mod n` where `i` is this rank's index and `n` the group
    size. A `dist.recv` on the peer with the matching `peer` (or the same
    `shift`) receives it; messages between two ranks match in program order.

    Pipeline stages use absolute peers along the pipeline axis, on ops
    tagged with their stage; rings (collective matmul) use `shift`:

    ```mlir
    dist.send %h on @mesh mesh_axes = ["pp"] peer = 1 {dist.stage = 0 : i64} : tensor<8x64xf32>
    dist.send %k on @mesh mesh_axes = ["tp"] shift = 1 : tensor<8x16xf32>
    ```
  }];
  let arguments = !con(commonArgs, (ins Dist_Tensor:$input), peerArgs);
  let assemblyFormat = "$input " # meshFormat # " " # peerFormat #
    " attr-dict `:` type($input)";
}

def Dist_RecvOp : Dist_P2POp<"recv"> {
  let summary = "receive a tensor from one member of the group";
  let description = [{
    Receives the tensor that group member `peer` sends to this rank, or the
    one sent by member `(i - shift) mod n` (the rank whose `dist.send` with
    the same `shift` targets this one).

    ```mlir
    %h = dist.recv on @mesh mesh_axes = ["pp"] peer = 0 {dist.stage = 1 : i64} : tensor<8x64xf32>
    ```
  }];
  let arguments = !con(commonArgs, peerArgs);
  let results = (outs Dist_Tensor:$result);
  let assemblyFormat = "" # meshFormat # " " # peerFormat #
    " attr-dict `:` type($result)";
}

//===----------------------------------------------------------------------===//
// Asynchronous forms
//===----------------------------------------------------------------------===//

def Dist_AllReduceStartOp : Dist_CommOp<"all_reduce_start"> {
  let summary = "start a `dist.all_reduce`";
  let description = [{
    Same semantics as `dist.all_reduce`; the result becomes available at the
    `dist.wait` of the returned value.

    ```mlir
    %a = dist.all_reduce_start %x on @mesh mesh_axes = ["tp"] : tensor<8x64xf32> -> !dist.async<tensor<8x64xf32>>
    %y = dist.wait %a : !dist.async<tensor<8x64xf32>>
    ```
  }];
  let arguments = !con(commonArgs, (ins Dist_Tensor:$input,
                       Dist_ReductionAttr:$reduction));
  let results = (outs Dist_AsyncTensor:$result);
  let assemblyFormat = "$input " # meshFormat #
    " (`reduction` `=` $reduction^)? attr-dict `:` type($input) `->`"
    " qualified(type($result))";
}

def Dist_AllGatherStartOp : Dist_CommOp<"all_gather_start"> {
  let summary = "start a `dist.all_gather`";
  let description = [{
    ```mlir
    %a = dist.all_gather_start %x on @mesh mesh_axes = ["tp"] gather_axis = 1 : tensor<8x16xf32> -> !dist.async<tensor<8x64xf32>>
    ```
  }];
  let arguments = !con(commonArgs, (ins Dist_Tensor:$input,
                       Dist_TensorAxisAttr:$gather_axis,
                       OptionalAttr<DenseI64ArrayAttr>:$sizes,
                       OptionalAttr<I64Attr>:$root));
  let results = (outs Dist_AsyncTensor:$result);
  let assemblyFormat = "$input " # meshFormat #
    " `gather_axis` `=` $gather_axis (`sizes` `=` $sizes^)?"
    " (`root` `=` $root^)? attr-dict `:` type($input) `->`"
    " qualified(type($result))";
}

def Dist_ReduceScatterStartOp : Dist_CommOp<"reduce_scatter_start"> {
  let summary = "start a `dist.reduce_scatter`";
  let description = [{
    ```mlir
    %a = dist.reduce_scatter_start %x on @mesh mesh_axes = ["tp"] scatter_axis = 0 : tensor<8x64xf32> -> !dist.async<tensor<2x64xf32>>
    ```
  }];
  let arguments = !con(commonArgs, (ins Dist_Tensor:$input,
                       Dist_TensorAxisAttr:$scatter_axis,
                       Dist_ReductionAttr:$reduction,
                       OptionalAttr<DenseI64ArrayAttr>:$sizes));
  let results = (outs Dist_AsyncTensor:$result);
  let assemblyFormat = "$input " # meshFormat #
    " `scatter_axis` `=` $scatter_axis (`reduction` `=` $reduction^)?"
    " (`sizes` `=` $sizes^)? attr-dict `:` type($input) `->`"
    " qualified(type($result))";
}

def Dist_AllToAllStartOp : Dist_CommOp<"all_to_all_start"> {
  let summary = "start a `dist.all_to_all`";
  let description = [{
    ```mlir
    %a = dist.all_to_all_start %x on @mesh mesh_axes = ["tp"] split_axis = 1 concat_axis = 0 : tensor<2x64xf32> -> !dist.async<tensor<8x16xf32>>
    ```
  }];
  let arguments = !con(commonArgs, (ins Dist_Tensor:$input,
                       Dist_TensorAxisAttr:$split_axis,
                       Dist_TensorAxisAttr:$concat_axis));
  let results = (outs Dist_AsyncTensor:$result);
  let assemblyFormat = "$input " # meshFormat #
    " `split_axis` `=` $split_axis `concat_axis` `=` $concat_axis attr-dict"
    " `:` type($input) `->` qualified(type($result))";
}

def Dist_AllToAllVStartOp : Dist_CommOp<"all_to_all_v_start"> {
  let summary = "start a `dist.all_to_all_v`";
  let description = [{
    The counts are read when the exchange starts; the payload arrives at
    the `dist.wait`.

    ```mlir
    %a = dist.all_to_all_v_start %x, %sc, %rc on @mesh mesh_axes = ["ep"] axis = 0 : tensor<64x32xf32>, tensor<4xi64>, tensor<4xi64> -> !dist.async<tensor<96x32xf32>>
    ```
  }];
  let arguments = !con(commonArgs, (ins Dist_Tensor:$input,
                       Dist_CountsTensor:$send_counts,
                       Dist_CountsTensor:$recv_counts,
                       Dist_TensorAxisAttr:$axis));
  let results = (outs Dist_AsyncTensor:$result);
  let assemblyFormat = "$input `,` $send_counts `,` $recv_counts " # meshFormat #
    " `axis` `=` $axis attr-dict `:` type($input) `,` type($send_counts) `,`"
    " type($recv_counts) `->` qualified(type($result))";
}

def Dist_SendStartOp : Dist_P2POp<"send_start"> {
  let summary = "start a `dist.send`";
  let description = [{
    The returned value carries no tensor: its `dist.wait` marks where the
    send has completed and `input`'s buffer may be reused.

    ```mlir
    %t = dist.send_start %h on @mesh mesh_axes = ["pp"] peer = 1 : tensor<8x64xf32> -> !dist.async
    dist.wait %t : !dist.async
    ```
  }];
  let arguments = !con(commonArgs, (ins Dist_Tensor:$input), peerArgs);
  let results = (outs Dist_AsyncNone:$token);
  let assemblyFormat = "$input " # meshFormat # " " # peerFormat #
    " attr-dict `:` type($input) `->` qualified(type($token))";
}

def Dist_RecvStartOp : Dist_P2POp<"recv_start"> {
  let summary = "start a `dist.recv`";
  let description = [{
    ```mlir
    %a = dist.recv_start on @mesh mesh_axes = ["pp"] peer = 0 : !dist.async<tensor<8x64xf32>>
    ```
  }];
  let arguments = !con(commonArgs, peerArgs);
  let results = (outs Dist_AsyncTensor:$result);
  let assemblyFormat = "" # meshFormat # " " # peerFormat #
    " attr-dict `:` qualified(type($result))";
}

def Dist_WaitOp : Dist_Op<"wait", [Dist_CommEffects,
    DeclareOpInterfaceMethods<InferTypeOpInterface>]> {
  let summary = "complete an asynchronous communication";
  let description = [{
    Blocks until the communication that produced `async` has completed on
    this rank and yields its tensor; for a value-less `!dist.async` (a
    send) it yields nothing. Each `!dist.async` value is waited on exactly
    once; `dist-overlap` places the wait as late as the first use allows.

    ```mlir
    %y = dist.wait %a : !dist.async<tensor<8x64xf32>>
    dist.wait %t : !dist.async
    ```
  }];
  let arguments = (ins Dist_AnyAsync:$async);
  let results = (outs Optional<Dist_Tensor>:$result);
  let assemblyFormat = "$async attr-dict `:` qualified(type($async))";
}

#endif // PARC_DIST_OPS
