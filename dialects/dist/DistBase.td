//===- DistBase.td - the dist dialect and its enums -------*- tablegen -*-===//
//
// The dialect definition shared by the dist attributes, types and ops: the
// reduction kinds of collectives and partial values, and the side-effect
// resource that keeps communication in program order.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_DIST_BASE
#define PARC_DIST_BASE

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Dist_Dialect : Dialect {
  let name = "dist";
  let cppNamespace = "::parc::dist";
  let summary = "Device meshes, shardings, pipeline stages and collectives";
  let description = [{
    The `dist` dialect describes how a model is partitioned over a mesh of
    ranks and the communication that partitioning needs.

    * `dist.mesh` names a device mesh: an n-D grid of ranks whose axes carry
      names (`"dp"`, `"pp"`, `"tp"`, `"ep"` …). Everything else refers to
      mesh axes by name.
    * `#dist.sharding` says how a global tensor is laid out on a mesh: per
      tensor dimension the mesh axes it is split over (even or explicit
      uneven shard sizes), and whether the value is a pending partial
      reduction over some axes.
    * `dist.shard` attaches a sharding to a value; `dist-annotate` and
      `dist-propagate` write these, `dist-partition` consumes them.
    * `dist.local_part` is a rank's part of a replicated tensor laid out as
      a sharding (weights sliced per rank, no communication).
    * Collectives (`dist.all_reduce`, `dist.all_gather`,
      `dist.reduce_scatter`, `dist.all_to_all`, `dist.all_to_all_v`,
      `dist.send`, `dist.recv`) operate on rank-local
      tensors within the groups of ranks that share every coordinate except
      those on `mesh_axes`. `*_start` forms return a `!dist.async` value and
      `dist.wait` completes it, so `dist-overlap` can move compute between
      the two.

    Discardable attributes:

    * `dist.stage = N : i64` on any op: the pipeline stage (0-based) that
      executes it. `dist-pipeline` sets it; ops without it run on every
      stage. Tensors that cross stages go through `dist.send` / `dist.recv`.
    * `dist.sharding = #dist.sharding<...>` on function arguments and
      results: the sharding of the global value a per-rank argument or
      result holds, recorded by `dist-partition` for the manifest and the
      weight slicer.

    Both are verified where they appear (a sharding's mesh and axes must
    exist). Other `dist.*` discardable attributes are markers that passes
    leave for the driver (`dist.tp_regions`) and carry no IR meaning.

    All communicating ops read and write one `dist.comm` side-effect
    resource: they are never erased, merged or reordered relative to each
    other, because every rank must issue matching collectives in the same
    order.
  }];
  let discardableAttrs = (ins
    "::mlir::IntegerAttr":$stage,
    "::parc::dist::ShardingAttr":$sharding
  );
  let extraClassDeclaration = [{
    /// Registers the attributes (DistAttrs.cpp).
    void registerAttributes();
  }];
  let useDefaultAttributePrinterParser = 1;
  let useDefaultTypePrinterParser = 1;
  let hasOperationAttrVerify = 1;
  let hasRegionArgAttrVerify = 1;
  let hasRegionResultAttrVerify = 1;
}

def Dist_ReductionKind : I32EnumAttr<"ReductionKind",
    "how a reduction over ranks combines their values", [
      I32EnumAttrCase<"sum", 0>,
      I32EnumAttrCase<"max", 1>,
      I32EnumAttrCase<"min", 2>
    ]> {
  let cppNamespace = "::parc::dist";
}

// Communication is ordered: every rank must issue the same collectives in the
// same order, so no pass may drop, merge or swap them.
def Dist_CommResource : Resource<"::parc::dist::CommResource">;
def Dist_CommEffects : MemoryEffects<[MemRead<Dist_CommResource>,
                                      MemWrite<Dist_CommResource>]>;

#endif // PARC_DIST_BASE
