//===- Regions.h - Megatron regions and sharding helpers --------*- C++ -*-===//
//
// What the four tensor-parallel passes share: how a value's sharding is
// written in the IR between them, and the Megatron region planner (column
// linears feeding a row linear through ops that keep one dim split).
//
//===----------------------------------------------------------------------===//

#ifndef PARC_LIB_TRANSFORMS_DIST_REGIONS_H
#define PARC_LIB_TRANSFORMS_DIST_REGIONS_H

#include "dist/DistDialect.h"
#include "dist/DistInterfaces.h"
#include "nn/NNOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/SetVector.h"

namespace parc::dist {

/// The token embedding Megatron splits by vocabulary: among the gathers of
/// rows of a weight [vocab, hidden] table by a graph input, the one with
/// the most rows (token types and positions are smaller), if `tp` divides
/// them or its table can take zero rows up to a multiple of `tp`.
parc::nn::GatherOp vocabularyEmbedding(mlir::FunctionOpInterface main, int64_t tp);

/// The mesh and its one axis: other branches extend the mesh, not rename it.
constexpr llvm::StringLiteral kMeshName = "mesh";
constexpr llvm::StringLiteral kAxis = "tp";

/// Attributes the passes hand each other (see Passes.td).
constexpr llvm::StringLiteral kResultShardings = "dist.result_shardings";
constexpr llvm::StringLiteral kRegionAttr = "dist.region";
constexpr llvm::StringLiteral kSequenceParallelAttr = "dist.sequence_parallel";
constexpr llvm::StringLiteral kHeadAttr = "dist.output_head";
constexpr llvm::StringLiteral kVocabAttr = "dist.vocab_parallel";
constexpr llvm::StringLiteral kRegionsCountAttr = "dist.tp_regions";
/// The layout of a KV cache argument (nn::isKVCache): persistent state each
/// rank holds its part of, so dist-partition retypes the argument itself.
constexpr llvm::StringLiteral kArgSharding = "dist.sharding";
/// The micro-batch an op computes for (dist-pipeline, dist-micro-batch):
/// chains dist-overlap may interleave.
constexpr llvm::StringLiteral kMicroBatch = "dist.micro_batch";

inline mlir::RankedTensorType tensorOf(mlir::Value v) {
  return mlir::cast<mlir::RankedTensorType>(v.getType());
}
/// Bytes of a ranked tensor type (0 for anything else).
inline int64_t bytesOf(mlir::Type type) {
  auto t = mlir::dyn_cast<mlir::RankedTensorType>(type);
  return t ? t.getNumElements() * ((t.getElementTypeBitWidth() + 7) / 8) : 0;
}

/// The casts between the weight `weight` and its stored source
/// (nn::weightSource), applied again to `source`, a new form of that source
/// (padded, or a rank's part): casts keep their element types and take
/// `source`'s shape. `source` itself when `weight` has no cast.
mlir::Value recast(mlir::OpBuilder &b, mlir::Value weight, mlir::Value source);

/// This rank's part of `v` laid out as `s`: a dist.local_part typed by the
/// sharding's local shape on its mesh (the one nearest the insertion point).
mlir::Value localPart(mlir::OpBuilder &b, mlir::Location loc, mlir::Value v,
                      ShardingAttr s);

/// This rank's part of the weight `weight` laid out as `s`: the stored
/// source is cut, in its stored dtype, and cast afterwards.
mlir::Value cutWeight(mlir::OpBuilder &b, mlir::Location loc,
                      mlir::Value weight, ShardingAttr s);

/// "node 'NAME' (op)" for diagnostics: the ONNX node the op came from.
std::string nodeOf(mlir::Operation *op);

/// main's argument and result types with their batch dims (nn::batchDim)
/// multiplied by `m`: the signature of a program running m micro-batches of
/// main stacked on their batch dims. A scalar input or output cannot be
/// stacked: the error, at main, names it.
mlir::LogicalResult
stackedSignature(mlir::FunctionOpInterface main, int64_t m,
                 llvm::SmallVectorImpl<mlir::Type> &argTypes,
                 llvm::SmallVectorImpl<mlir::Type> &resultTypes);

/// A function `name` of main's kind with the given signature placed
/// before `main`, with main's attributes and an entry block; `b` is left at
/// the end of that block. The programs that dist-pipeline and
/// dist-micro-batch rebuild from main start this way.
mlir::FunctionOpInterface replacementOf(mlir::OpBuilder &b,
                                        mlir::FunctionOpInterface main,
                                        llvm::StringRef name,
                                        mlir::TypeRange argTypes,
                                        mlir::TypeRange resultTypes);

/// Shardings over the `tp` axis of @mesh.
ShardingAttr replicatedSharding(mlir::MLIRContext *ctx);
/// `dim` split over `tp`: blockwise with `blocks`, each chunk held by
/// `replicas` consecutive ranks.
ShardingAttr splitSharding(mlir::MLIRContext *ctx, int64_t dim,
                           llvm::ArrayRef<int64_t> blocks = {},
                           int64_t replicas = 1);
ShardingAttr partialSharding(mlir::MLIRContext *ctx);
/// The dim split over `tp`, if any.
std::optional<int64_t> splitDimOf(ShardingAttr s);

/// The layout of `v` as its producer leaves it: the `dist.result_shardings`
/// entry of its defining op, the sharding of a `dist.shard`, or a KV cache
/// argument's `dist.sharding`; null when replicated.
ShardingAttr shardingOf(mlir::Value v);
void setSharding(mlir::Value v, ShardingAttr s);

/// The sequence dim of an activation: the one before the features.
inline int64_t sequenceDim(mlir::RankedTensorType t) { return t.getRank() - 2; }
/// Error text when `tp` does not divide a sequence of `length`.
std::string sequenceMisfit(int64_t length, int64_t dim, int64_t tp);

/// A linear whose only use is a program output (possibly through the cast of
/// nn-convert-dtype), with constant weights and features `tp` divides.
bool isOutputHead(nn::LinearOp lin, int64_t tp);

/// One Megatron region: column linears feeding a row linear.
struct Region {
  nn::LinearOp row;
  llvm::SetVector<nn::LinearOp> columns;
  llvm::SetVector<mlir::Operation *> ops;
  /// The split dimension of every value computed in the region.
  llvm::DenseMap<mlir::Value, int64_t> split;
  /// Into how many distinct parts a value is split when fewer than tp:
  /// grouped-query key/value heads, each part held by tp / parts ranks.
  llvm::DenseMap<mlir::Value, int64_t> parts;
  int64_t partsOf(mlir::Value v, int64_t tp) const {
    auto it = parts.find(v);
    return it == parts.end() ? tp : it->second;
  }
  /// Column linears whose output is split again blockwise (fused QKV).
  llvm::DenseMap<mlir::Operation *, llvm::SmallVector<int64_t>> blocks;
  /// Constant operands to replace by this rank's part: operand → dim.
  llvm::SmallVector<std::pair<mlir::OpOperand *, int64_t>> sideParts;
  /// KV cache arguments the region writes and reads (nn::isKVCache), by
  /// the dim of the heads they are split on like the keys and values.
  llvm::DenseMap<mlir::Value, int64_t> caches;
};

class Planner {
public:
  Planner(int64_t tp, bool explain) : explain(explain), tp(tp) {}

  /// dist-annotate: finds the columns of the region ending at `row` and the
  /// grouped-query parts; fails when `row` is no row-parallel candidate.
  mlir::FailureOr<Region> discover(nn::LinearOp row);
  /// dist-propagate: carries the column split forward through every op of
  /// the region by its rule; fails when the region stays replicated.
  mlir::LogicalResult propagate(Region &r);

  /// Remark on every region kept replicated.
  bool explain = false;
  /// Regions that `tp` does not divide: errors the pass reports.
  llvm::SmallVector<std::pair<mlir::Operation *, std::string>> misfits;
  /// Reports the misfits as errors, each with `hint` as a note when given;
  /// fails if there were any.
  mlir::LogicalResult reportMisfits(llvm::StringRef hint = {});

private:
  mlir::LogicalResult collect(Region &r);
  /// The region has no tensor-parallel form: it stays replicated.
  mlir::LogicalResult reject(mlir::Operation *op, const llvm::Twine &why);
  /// The region would split, but `tp` does not divide one of its dims: the
  /// spec does not fit the model, which is the user's to fix.
  mlir::LogicalResult misfit(mlir::Operation *op, const llvm::Twine &why) {
    misfits.push_back({op, why.str()});
    return mlir::failure();
  }
  mlir::LogicalResult planKeyValueParts(Region &r);
  /// Gives `op`'s results their splits by its sharding rule.
  mlir::LogicalResult apply(Region &r, mlir::Operation *op);
  /// The splits `op`'s operands have in `r`, as its rule reads them.
  llvm::SmallVector<std::optional<DimSplit>> operandSplits(Region &r,
                                                           mlir::Operation *op);
  std::string outsideReader(Region &r, mlir::Operation *user);

  int64_t tp;
};

/// How a layout reads in remarks ("split on dim 1", "partial sums").
std::string describeSharding(ShardingAttr s);
/// The collective dist-comm makes of a change from `from` to `to` (null:
/// replicated), for remarks; empty when there is none.
std::string describeReshard(ShardingAttr from, ShardingAttr to);

/// What would work, for a misfit's note: the tp values up to 64 for which
/// every region of `main` (and with `sp` every sequence) splits evenly, by
/// the same rules.
std::string fittingTpHint(mlir::FunctionOpInterface main, bool sp);

/// The tp of the module's @mesh, or 1 without one.
int64_t meshSize(mlir::ModuleOp module);

} // namespace parc::dist

#endif // PARC_LIB_TRANSFORMS_DIST_REGIONS_H
