//===- DistAttrs.td - the dist sharding attribute ---------*- tablegen -*-===//
//
// `#dist.sharding` is the one description of how a global tensor lives on a
// mesh. Passes compare, propagate and partition with it; its C++ helpers are
// the only place the local-shape arithmetic is written.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_DIST_ATTRS
#define PARC_DIST_ATTRS

include "DistBase.td"

def Dist_ShardingAttr : AttrDef<Dist_Dialect, "Sharding"> {
  let mnemonic = "sharding";
  let summary = "how a global tensor is split and reduced over a mesh";
  let description = [{
    ```
    #dist.sharding<@mesh, [axes of dim 0, axes of dim 1, ...]
                   (, partial = [sum|max|min] [axes])?
                   (, sizes = [[sizes of dim 0], ...])?
                   (, blocks = [[blocks of dim 0], ...])?
                   (, replicas = [replicas of dim 0, ...])?>
    ```

    * Per tensor dimension, the list of mesh axes it is split over, major to
      minor: `[["dp"], [], ["tp"]]` splits dimension 0 over `dp` and
      dimension 2 over `tp`; `[["dp", "tp"]]` splits dimension 0 over
      `dp × tp` ranks, the `tp` coordinate varying fastest. Dimensions past
      the end of the list are replicated, so `[]` is fully replicated. No
      axis appears twice.
    * `partial = ["tp"]`: every rank holds an addend of the value, which is
      the sum (or `max` / `min`) of the rank values over those axes, pending
      a reduction (what a row-parallel linear produces). Partial axes are
      disjoint from split axes. `sum` is the default and is not printed.
    * `sizes`: explicit shard sizes for uneven splits, one list per entry of
      the axis list; a split dimension with `[]` is split evenly, and a
      non-empty list holds one size per shard (the number of shards is the
      product of the split axes' sizes) summing to the dimension. Shard `i`
      starts at the sum of the sizes before it. Without `sizes` a split
      dimension must divide evenly.
    * `blocks`: a dimension that is a concatenation of blocks (a fused QKV
      projection has three), one list per entry of the axis list like
      `sizes`: each block is split evenly into the shards, and shard `i`
      holds chunk `i` of every block, in block order. The blocks sum to the
      dimension; a dimension has `sizes` or `blocks`, not both.
    * `replicas`: one count per entry of the axis list (1 where absent):
      each chunk of that dimension is held by so many consecutive ranks of
      its split axes (rank `c` holds chunk `c / replicas`), so the dimension
      is cut into ranks / replicas shards. Grouped-query attention with
      fewer key/value heads than ranks holds each head on several ranks.

    `getLocalSlices` is where this arithmetic is written: for a rank's mesh
    coordinates, per dimension, which runs of the global dimension it keeps
    (one, or one per block). The weight writer cuts with it, and
    `getLocalShape` / `getGlobalShape` follow from it.

    The attribute itself checks only what it can see; where it is used
    (`dist.shard`, function argument and result attributes) the verifier
    also checks that the mesh exists, that its axes exist, and that the
    sizes fit the tensor.

    ```mlir
    // [16, 64] split by columns over tp, replicated over pp.
    #dist.sharding<@mesh, [[], ["tp"]]>
    // The output of a row-parallel linear before its all-reduce.
    #dist.sharding<@mesh, [[], []], partial = ["tp"]>
    // A dimension of size 10 over 4 ranks as 3 + 3 + 2 + 2.
    #dist.sharding<@mesh, [["tp"]], sizes = [[3, 3, 2, 2]]>
    // A fused QKV weight [64, 192] (q, k, v of 64 features each) over 2
    // ranks: rank 0 holds q[0:32], k[0:32], v[0:32], rank 1 the rest.
    #dist.sharding<@mesh, [[], ["tp"]], blocks = [[], [64, 64, 64]]>
    // 2 key/value heads of 16 features over 4 ranks: ranks 0 and 1 hold
    // features [0, 16), ranks 2 and 3 features [16, 32).
    #dist.sharding<@mesh, [[], ["tp"]], replicas = [1, 2]>
    ```
  }];
  let parameters = (ins
    "::mlir::FlatSymbolRefAttr":$mesh,
    "::mlir::ArrayAttr":$split_axes,
    "::mlir::ArrayAttr":$partial_axes,
    EnumParameter<Dist_ReductionKind>:$partial_kind,
    "::mlir::ArrayAttr":$shard_sizes,
    "::mlir::ArrayAttr":$blocks,
    "::mlir::DenseI64ArrayAttr":$replicas
  );
  let builders = [
    AttrBuilderWithInferredContext<(ins
        "::mlir::FlatSymbolRefAttr":$mesh,
        "::llvm::ArrayRef<::llvm::SmallVector<::llvm::StringRef>>":$splitAxes,
        CArg<"::llvm::ArrayRef<::llvm::StringRef>", "{}">:$partialAxes,
        CArg<"ReductionKind", "ReductionKind::sum">:$partialKind,
        CArg<"::llvm::ArrayRef<::llvm::SmallVector<int64_t>>", "{}">:$sizes,
        CArg<"::llvm::ArrayRef<::llvm::SmallVector<int64_t>>", "{}">:$blocks,
        CArg<"::llvm::ArrayRef<int64_t>", "{}">:$replicas), [{
      ::mlir::Builder b(mesh.getContext());
      ::llvm::SmallVector<::mlir::Attribute> split, shardSizes, dimBlocks;
      for (::llvm::ArrayRef<::llvm::StringRef> axes : splitAxes)
        split.push_back(b.getStrArrayAttr(axes));
      for (::llvm::ArrayRef<int64_t> dimSizes : sizes)
        shardSizes.push_back(b.getDenseI64ArrayAttr(dimSizes));
      for (::llvm::ArrayRef<int64_t> list : blocks)
        dimBlocks.push_back(b.getDenseI64ArrayAttr(list));
      return $_get(mesh.getContext(), mesh, b.getArrayAttr(split),
                   b.getStrArrayAttr(partialAxes), partialKind,
                   b.getArrayAttr(shardSizes), b.getArrayAttr(dimBlocks),
                   b.getDenseI64ArrayAttr(replicas));
    }]>
  ];
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// The mesh axes dimension `dim` is split over, major to minor; empty
    /// for a replicated dimension (including dimensions past the list).
    ::llvm::SmallVector<::llvm::StringRef> getSplitAxes(int64_t dim) const;
    /// The explicit shard sizes of dimension `dim`; empty for an even split.
    ::llvm::ArrayRef<int64_t> getShardSizes(int64_t dim) const;
    /// The blocks of dimension `dim`; empty for a dimension of one block.
    ::llvm::ArrayRef<int64_t> getBlocks(int64_t dim) const;
    /// How many consecutive ranks hold each chunk of dimension `dim` (1
    /// unless given).
    int64_t getReplicas(int64_t dim) const;
    /// The axes the value is a pending partial reduction over.
    ::llvm::SmallVector<::llvm::StringRef> getPartialAxesNames() const;
    /// Every split axis, in dimension order.
    ::llvm::SmallVector<::llvm::StringRef> getAllSplitAxes() const;

    /// No dimension is split and the value is not partial.
    bool isReplicated() const;
    /// The value is a pending reduction over at least one axis.
    bool isPartial() const { return !getPartialAxes().empty(); }
    /// Same layout, ignoring trailing replicated dimensions.
    bool isEquivalent(ShardingAttr other) const;

    /// Checks the sharding against the global `shape` of a value on a mesh
    /// of `meshShape` with axes `axisNames` (which has every axis the
    /// sharding names): no more dimensions than the shape has, replicas
    /// that divide the ranks, sizes that match the shard counts and sum to
    /// the dimension, blocks that sum to it and divide, even splits that
    /// divide. Diagnostics go to `emitError`.
    ::mlir::LogicalResult
    verifyShape(::llvm::ArrayRef<int64_t> shape,
                ::llvm::ArrayRef<int64_t> meshShape,
                ::llvm::ArrayRef<::llvm::StringRef> axisNames,
                ::llvm::function_ref<::mlir::InFlightDiagnostic()> emitError)
        const;

    /// A run [offset, offset + size) of one global dimension.
    using Slice = std::pair<int64_t, int64_t>;
    /// Per dimension of a tensor of `globalShape`, the runs of the global
    /// dimension that the shard at mesh coordinates `coords` (one per mesh
    /// axis, in `axisNames` order) keeps, in the order it holds them: one
    /// run, or one per block. The shard is their cross product. Fails when
    /// an axis is not in `axisNames`, when the sizes do not match the
    /// number of shards, or when an even split does not divide.
    ::mlir::FailureOr<::llvm::SmallVector<::llvm::SmallVector<Slice, 1>>>
    getLocalSlices(::llvm::ArrayRef<int64_t> globalShape,
                   ::llvm::ArrayRef<int64_t> meshShape,
                   ::llvm::ArrayRef<::llvm::StringRef> axisNames,
                   ::llvm::ArrayRef<int64_t> coords) const;
    /// The global shape of a tensor whose every shard has `localShape`
    /// (no uneven `sizes`): what getLocalShape undoes.
    ::mlir::FailureOr<::llvm::SmallVector<int64_t>>
    getGlobalShape(::llvm::ArrayRef<int64_t> localShape,
                   ::llvm::ArrayRef<int64_t> meshShape,
                   ::llvm::ArrayRef<::llvm::StringRef> axisNames) const;

    /// The shape of the shard at mesh coordinates `coords` (one per mesh
    /// axis, in `axisNames` order) of a tensor of `globalShape`. Fails when
    /// an axis is not in `axisNames`, when the sizes do not match the
    /// number of shards, or when an even split does not divide.
    ::mlir::FailureOr<::llvm::SmallVector<int64_t>>
    getLocalShape(::llvm::ArrayRef<int64_t> globalShape,
                  ::llvm::ArrayRef<int64_t> meshShape,
                  ::llvm::ArrayRef<::llvm::StringRef> axisNames,
                  ::llvm::ArrayRef<int64_t> coords) const;
    /// The same for the rank with linear index `rank` on `mesh`.
    ::mlir::FailureOr<::llvm::SmallVector<int64_t>>
    getLocalShape(::llvm::ArrayRef<int64_t> globalShape, MeshOp mesh,
                  int64_t rank) const;
    /// Where that shard starts in the global tensor, per dimension (fails
    /// for a dimension of several blocks, which has no one start).
    ::mlir::FailureOr<::llvm::SmallVector<int64_t>>
    getLocalOffsets(::llvm::ArrayRef<int64_t> globalShape,
                    ::llvm::ArrayRef<int64_t> meshShape,
                    ::llvm::ArrayRef<::llvm::StringRef> axisNames,
                    ::llvm::ArrayRef<int64_t> coords) const;
  }];
}

#endif // PARC_DIST_ATTRS
