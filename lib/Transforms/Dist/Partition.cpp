//===- Partition.cpp - dist-partition ---------------------------*- C++ -*-===//
//
// Global program with shardings → one SPMD rank program on local types.
// Constants annotated with a split become `dist.local_part`s (weights cut
// per rank at compile time); KV cache arguments take their part's type;
// every other layout change stays pending as a `dist.reshard` for dist-comm.
//
//===----------------------------------------------------------------------===//

#include "Padding.h"
#include "Regions.h"
#include "parc/Transforms/Dist/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "dist-partition"

namespace parc::dist {
#define GEN_PASS_DEF_DISTPARTITION
#include "parc/Transforms/Dist/Passes.h.inc"
} // namespace parc::dist

using namespace mlir;
namespace nn = parc::nn;
namespace dist = parc::dist;

namespace {

/// The local type of a value laid out as `s` on `mesh` (every rank's part
/// has the same shape); `t` itself where `s` does not fit it, for the
/// verifier to report.
RankedTensorType localType(RankedTensorType t, dist::ShardingAttr s,
                           dist::MeshOp mesh) {
  FailureOr<SmallVector<int64_t>> shape = s.getLocalShape(t.getShape(), mesh, 0);
  return succeeded(shape) ? RankedTensorType::get(*shape, t.getElementType()) : t;
}

/// ONNX Gather on the whole vocabulary of `vocab` rows: a negative id wraps
/// by `vocab`, one outside [-vocab, vocab) is an error. A lookup in the
/// identity table of the vocabulary does both, failing with the message
/// (node, id, size) of the unpartitioned gather, so that every degree
/// behaves alike.
Value wrapVocabularyIds(OpBuilder &b, nn::GatherOp g, int64_t vocab) {
  auto ids = dist::tensorOf(g.getIndices());
  auto index = cast<IntegerType>(ids.getElementType());
  SmallVector<APInt> rows;
  for (int64_t v = 0; v < vocab; ++v)
    rows.push_back(APInt(index.getWidth(), v));
  Value identity = arith::ConstantOp::create(
      b, g.getLoc(),
      DenseElementsAttr::get(RankedTensorType::get({vocab}, index), rows));
  return nn::GatherOp::create(b, g.getLoc(), ids, identity, g.getIndices(),
                              b.getI64IntegerAttr(0));
}

/// A vocabulary-parallel lookup on this rank's rows [r·n, (r+1)·n) of the
/// table: indices, wrapped by the whole vocabulary (dist.vocab_parallel's
/// size, without the zero rows of padding), are shifted by the
/// rank's first row, those outside its rows look up row 0, and their rows
/// are zeroed, so that the ranks' results sum to the whole lookup. The
/// rank's (first row, 0, n) is its part of one [tp, 3] constant: 3 indices
/// per rank, cut by the weight writer.
Value partitionEmbedding(OpBuilder &b, nn::GatherOp g, int64_t tp) {
  Location loc = g.getLoc();
  auto ids = dist::tensorOf(g.getIndices());
  auto index = cast<IntegerType>(ids.getElementType());
  int64_t rows = dist::tensorOf(g.getData()).getDimSize(0); // local already
  b.setInsertionPoint(g);
  SmallVector<APInt> bounds;
  for (int64_t r = 0; r < tp; ++r)
    for (int64_t v : {r * rows, int64_t(0), rows})
      bounds.push_back(APInt(index.getWidth(), v));
  Value all = arith::ConstantOp::create(
      b, loc,
      DenseElementsAttr::get(RankedTensorType::get({tp, 3}, index), bounds));
  Value mine =
      dist::localPart(b, loc, all, dist::splitSharding(b.getContext(), 0));
  auto bound = [&](int64_t k) -> Value {
    return nn::SliceOp::create(b, loc, RankedTensorType::get({1, 1}, index),
                               mine, b.getDenseI64ArrayAttr({0, k}),
                               b.getDenseI64ArrayAttr({1, 1}));
  };
  Value first = bound(0), zero = bound(1), limit = bound(2);
  Value wrapped = wrapVocabularyIds(
      b, g, g->getAttrOfType<IntegerAttr>(dist::kVocabAttr).getInt());
  Value local = nn::SubOp::create(b, loc, ids, wrapped, first);
  auto flags = RankedTensorType::get(ids.getShape(), b.getI1Type());
  Value below = nn::LessOp::create(b, loc, flags, local, zero);
  Value inside = nn::AndOp::create(
      b, loc, flags, nn::NotOp::create(b, loc, flags, below),
      nn::LessOp::create(b, loc, flags, local, limit));
  g.getIndicesMutable().assign(
      nn::WhereOp::create(b, loc, ids, inside, local, zero));
  b.setInsertionPointAfter(g);
  auto out = g.getType();
  SmallVector<int64_t> maskShape(ids.getShape());
  maskShape.push_back(1);
  Value mask = nn::CastOp::create(
      b, loc, RankedTensorType::get(ids.getShape(), out.getElementType()), inside);
  mask = nn::ReshapeOp::create(
      b, loc, RankedTensorType::get(maskShape, out.getElementType()), mask);
  Value masked = nn::MulOp::create(b, loc, out, g.getResult(), mask);
  g.getResult().replaceAllUsesExcept(masked, masked.getDefiningOp());
  dist::setSharding(masked, dist::partialSharding(b.getContext()));
  return masked;
}

struct DistPartitionPass : dist::impl::DistPartitionBase<DistPartitionPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    int64_t tp = dist::meshSize(module);
    if (tp == 1)
      return;
    FailureOr<FunctionOpInterface> entry =
        nn::entryFunction(module, getArgument());
    if (failed(entry))
      return signalPassFailure();
    FunctionOpInterface main = *entry;
    partitionCaches(main);
    if (failed(partition(main, tp)))
      return signalPassFailure();
    main.walk([](Operation *op) {
      for (StringRef a : {dist::kResultShardings, dist::kRegionAttr,
                          dist::kSequenceParallelAttr, dist::kHeadAttr,
                          dist::kVocabAttr})
        op->removeAttr(a);
    });
  }

  /// KV caches split with their heads: each rank's argument is its part,
  /// the persistent buffer the runtime keeps (no slice, no copy per step).
  void partitionCaches(FunctionOpInterface main) {
    auto mesh = getOperation().lookupSymbol<dist::MeshOp>(dist::kMeshName);
    for (BlockArgument arg : main.getArguments())
      if (dist::ShardingAttr s = dist::shardingOf(arg)) {
        arg.setType(localType(dist::tensorOf(arg), s, mesh));
        main.removeArgAttr(arg.getArgNumber(), dist::kArgSharding);
      }
    main.setType(FunctionType::get(&getContext(),
                                   main.getFunctionBody().getArgumentTypes(),
                                   main.getResultTypes()));
  }

  LogicalResult partition(FunctionOpInterface main, int64_t tp) {
    MLIRContext *ctx = &getContext();
    auto mesh = getOperation().lookupSymbol<dist::MeshOp>(dist::kMeshName);
    OpBuilder b(ctx);
    // Row linears whose bias waits for the reduction of their partial sums.
    llvm::DenseMap<Value, Value> pendingBias;
    SmallVector<Operation *> ops;
    for (Operation &op : main.getFunctionBody().front())
      ops.push_back(&op);
    for (Operation *op : ops) {
      if (auto shard = dyn_cast<dist::ShardOp>(op)) {
        if (!shard.getAnnotateForUsers())
          return shard.emitOpError("dist-partition expects only "
                                   "annotate_for_users shards (layouts of "
                                   "producers are in dist.result_shardings)");
        Value in = shard.getInput();
        dist::ShardingAttr to = shard.getSharding();
        dist::ShardingAttr from = dist::shardingOf(in);
        b.setInsertionPoint(shard);
        Value result;
        if (nn::isWeight(in) && !from) {
          // A weight: each rank's part is cut at compile time.
          if (!dist::splitDimOf(to))
            return shard.emitOpError("a constant can only be split, not ")
                   << to;
          result = dist::cutWeight(b, shard.getLoc(), in, to);
        } else {
          result = dist::ReshardOp::create(
              b, shard.getLoc(), localType(shard.getType(), to, mesh), in,
              from ? from : dist::replicatedSharding(ctx), to);
          if (Value bias = pendingBias.lookup(in)) {
            // The bias of a row-parallel linear, added once after the
            // reduction (broadcast over a sequence split).
            if (dist::splitDimOf(to) == dist::tensorOf(result).getRank() - 1)
              return shard.emitOpError("cannot add the bias of a row-parallel "
                                       "linear to its feature-split result");
            result = nn::AddOp::create(b, shard.getLoc(), result.getType(),
                                       result, bias);
            // A later shard of the sum (an output gathered after a
            // reduce-scatter) reads its layout from here.
            dist::setSharding(result, to);
          }
        }
        shard.getResult().replaceAllUsesWith(result);
        shard.erase();
        continue;
      }
      if (!op->hasAttr(dist::kResultShardings))
        continue;
      for (Value res : op->getResults())
        if (dist::ShardingAttr s = dist::shardingOf(res))
          res.setType(localType(dist::tensorOf(res), s, mesh));
      if (auto att = dyn_cast<nn::AttentionOp>(op))
        dist::retypeScoreModifier(att);
      if (auto g = dyn_cast<nn::GatherOp>(op); g && g->hasAttr(dist::kVocabAttr))
        partitionEmbedding(b, g, tp);
      auto lin = dyn_cast<nn::LinearOp>(op);
      dist::ShardingAttr s = lin ? dist::shardingOf(lin.getResult()) : nullptr;
      if (lin && s && s.isPartial() && lin.getBias()) {
        pendingBias[lin.getResult()] = lin.getBias();
        lin.getBiasMutable().clear();
      }
    }
    return success();
  }
};

} // namespace
