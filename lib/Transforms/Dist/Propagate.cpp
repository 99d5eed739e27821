//===- Propagate.cpp - dist-propagate ---------------------------*- C++ -*-===//
//
// Carries the seeds of dist-annotate to every op: each Megatron region is
// verified forwards by the per-op rules of the planner (Regions.cpp), and
// the sequence split of Megatron-SP flows from norms and reduce-scatters
// through elementwise ops. Where a consumer needs another layout than its
// producer's, a `dist.shard ... annotate_for_users` records the change.
//
//===----------------------------------------------------------------------===//

#include "Regions.h"
#include "parc/Transforms/Dist/Passes.h"

#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "dist-propagate"

namespace parc::dist {
#define GEN_PASS_DEF_DISTPROPAGATE
#include "parc/Transforms/Dist/Passes.h.inc"
} // namespace parc::dist

using namespace mlir;
namespace nn = parc::nn;
namespace dist = parc::dist;

namespace {

/// Elementwise ops with a sequence rule: binary ops that broadcast like
/// ONNX, and unary ones. Not casts: nn-convert-dtype puts them before the
/// outputs, whose readers want the whole value anyway, and gathering before
/// the cast lets them share one all-gather with the other readers.
bool isBroadcastElementwise(Operation *op) {
  return isa<nn::AddOp, nn::SubOp, nn::MulOp, nn::DivOp>(op) ||
         (op->hasTrait<OpTrait::Elementwise>() && op->getNumOperands() == 1 &&
          op->getNumResults() == 1 && !isa<nn::CastOp>(op));
}

/// Ops that run on Megatron-SP's sequence-split stream where their rule
/// keeps the split: elementwise ops and reductions over other dims (a norm
/// written from its moments). Products read the gathered stream, as
/// Megatron's linears do.
bool onSequenceStream(Operation *op) {
  return isBroadcastElementwise(op) ||
         isa<nn::ReduceSumOp, nn::ReduceMeanOp, nn::ReduceMaxOp,
             nn::ReduceMinOp, nn::ReduceProdOp>(op);
}

class Propagation {
public:
  Propagation(FunctionOpInterface main, int64_t tp, bool explain)
      : main(main), ctx(main.getContext()), tp(tp), explain(explain) {}

  LogicalResult run();

private:
  /// The region ending at seeded row `row`, verified; failure when it stays
  /// replicated (its seeds are dropped) or does not fit (a misfit).
  void planRegion(nn::LinearOp row, dist::Planner &planner);
  void applyRegion(dist::Region &r);
  void applyHead(nn::LinearOp head);
  void applyEmbedding(nn::GatherOp embedding);
  void propagateSequence();
  /// The dim each operand of `op` is split on (none: read whole) so that
  /// its result is split along the sequence, from its sharding rule; none
  /// when the rule refuses or would move the split of a value on the
  /// stream.
  std::optional<SmallVector<std::optional<int64_t>>>
  sequenceRule(Operation *op);

  /// A resharded copy of `v` for `use`'s owner (one per value and layout).
  void reshard(OpOperand &use, dist::ShardingAttr to);
  /// Annotates constant operand `use` with the split its consumer needs.
  dist::ShardOp annotateConstant(OpOperand &use, dist::ShardingAttr to);
  void dropSeeds(Operation *op) {
    for (StringRef a : {dist::kResultShardings, dist::kRegionAttr,
                        dist::kSequenceParallelAttr,
                        dist::kVocabAttr})
      op->removeAttr(a);
  }

  FunctionOpInterface main;
  MLIRContext *ctx;
  int64_t tp;
  bool explain;
  SmallVector<dist::Region> regions;
  bool inconsistent = false;
  llvm::DenseMap<std::pair<Value, Attribute>, Value> reshards;
  /// Values split along the sequence (Megatron-SP's residual stream).
  llvm::DenseSet<Value> sequence;
};

void Propagation::reshard(OpOperand &use, dist::ShardingAttr to) {
  Value v = use.get();
  dist::ShardingAttr from = dist::shardingOf(v);
  if (!to)
    to = dist::replicatedSharding(ctx);
  Value &copy = reshards[{v, to}];
  if (!copy) {
    OpBuilder b(ctx);
    if (Operation *def = v.getDefiningOp())
      b.setInsertionPointAfter(def);
    else
      b.setInsertionPointToStart(v.getParentBlock());
    auto shard = dist::ShardOp::create(b, v.getLoc(), v, to,
                                       /*annotate_for_users=*/true);
    copy = shard.getResult();
  }
  Operation *user = use.getOwner();
  if (explain) {
    std::string producer = v.getDefiningOp()
                               ? "the result of " + dist::nodeOf(v.getDefiningOp())
                               : std::string("a graph input");
    user->emitRemark() << dist::nodeOf(user) << " reads " << producer << " (" << dist::describeSharding(from)
                       << ") as " << dist::describeSharding(to) << ": "
                       << dist::describeReshard(from, to);
  }
  use.set(copy);
}

dist::ShardOp Propagation::annotateConstant(OpOperand &use,
                                            dist::ShardingAttr to) {
  OpBuilder b(use.getOwner());
  auto shard = dist::ShardOp::create(b, use.get().getLoc(), use.get(), to,
                                     /*annotate_for_users=*/true);
  use.set(shard.getResult());
  return shard;
}

void Propagation::planRegion(nn::LinearOp row, dist::Planner &planner) {
  FailureOr<dist::Region> r = planner.discover(row);
  auto seeded = [&](nn::LinearOp col) {
    return col->getAttr(dist::kRegionAttr) == row->getAttr(dist::kRegionAttr);
  };
  if (succeeded(r) && !llvm::all_of(r->columns, seeded)) {
    row->emitError() << dist::nodeOf(row)
                     << ": its column linears are not seeded with its region";
    inconsistent = true;
    return;
  }
  if (succeeded(r) && succeeded(planner.propagate(*r))) {
    regions.push_back(std::move(*r));
    return;
  }
  // Replicated: the region's seeds go; its row may still be an output head.
  if (succeeded(r))
    for (nn::LinearOp col : r->columns)
      dropSeeds(col);
  dropSeeds(row);
  if (dist::isOutputHead(row, tp)) {
    dist::setSharding(row.getResult(),
                      dist::splitSharding(ctx, row.getType().getRank() - 1));
    row->setAttr(dist::kHeadAttr, UnitAttr::get(ctx));
  }
}

void Propagation::applyRegion(dist::Region &r) {
  for (auto &[value, dim] : r.split)
    dist::setSharding(value, dist::splitSharding(ctx, dim, {},
                                                 tp / r.partsOf(value, tp)));
  // Column weights by output features (blockwise for fused QKV).
  for (nn::LinearOp col : r.columns) {
    SmallVector<OpOperand *> operands{&col.getWeightMutable()};
    if (col.getBias())
      operands.push_back(&col.getBiasMutable()[0]);
    for (OpOperand *use : operands) {
      int64_t dim = use->getOperandNumber() == 1
                        ? (col.getTransposeWeight() ? 0 : 1)
                        : 0;
      auto blocks = r.blocks.lookup(col);
      annotateConstant(*use, dist::splitSharding(
                                 ctx, dim, blocks,
                                 tp / r.partsOf(col.getResult(), tp)));
    }
  }
  for (auto [operand, dim] : r.sideParts)
    annotateConstant(*operand, dist::splitSharding(ctx, dim));
  // The row product reduces this rank's rows of its weight.
  nn::LinearOp row = r.row;
  annotateConstant(row.getWeightMutable(),
                   dist::splitSharding(ctx, row.getTransposeWeight() ? 1 : 0));
  // Under SP the partial sums pass through reshapes (the reshaped sum is
  // the sum of the reshaped parts), so that TF's Tensordot, which flattens
  // [B, S, K] for its product, is reduce-scattered along the sequence it
  // restores. A bias is added after the reduction, at the row: none here.
  Value sum = row.getResult();
  SmallVector<Value> reshaped;
  if (row->hasAttr(dist::kSequenceParallelAttr) && !row.getBias())
    while (sum.hasOneUse() && isa<nn::ReshapeOp>(*sum.user_begin())) {
      sum = sum.user_begin()->getResult(0);
      reshaped.push_back(sum);
    }
  auto type = dist::tensorOf(sum);
  // The sequence split goes on only into ops with a sequence rule (the
  // residual add) or out of the program (gathered there); a row read
  // otherwise, such as by a reshape that merges the sequence with the
  // batch, is all-reduced instead.
  bool sp = row->hasAttr(dist::kSequenceParallelAttr) &&
            dist::sequenceDim(type) >= 0 &&
            type.getDimSize(dist::sequenceDim(type)) % tp == 0 &&
            llvm::all_of(sum.getUsers(), [&](Operation *user) {
              return isa<func::ReturnOp>(user) ||
                     (isBroadcastElementwise(user) &&
                      dist::tensorOf(user->getResult(0)).getRank() ==
                          type.getRank());
            });
  if (!sp) {
    sum = row.getResult();
    type = row.getType();
    reshaped.clear();
  }
  for (Value v : reshaped)
    dist::setSharding(v, dist::partialSharding(ctx));
  dist::ShardingAttr to =
      sp ? dist::splitSharding(ctx, dist::sequenceDim(type)) : dist::ShardingAttr();
  if (explain)
    row->emitRemark() << dist::nodeOf(row) << " is row-parallel over " << tp
                      << " ranks, fed by " << r.columns.size()
                      << " column-parallel linear(s); one "
                      << (sp ? "reduce-scatter" : "all-reduce") << " of "
                      << type << " follows it";
  for (OpOperand &use : llvm::make_early_inc_range(sum.getUses()))
    reshard(use, to);
  if (sp)
    sequence.insert(reshards.lookup({sum, to}));
}

void Propagation::applyEmbedding(nn::GatherOp embedding) {
  annotateConstant(embedding.getDataMutable(), dist::splitSharding(ctx, 0));
  bool sp = embedding->hasAttr(dist::kSequenceParallelAttr);
  auto type = embedding.getType();
  dist::ShardingAttr to = sp && dist::sequenceDim(type) >= 0 &&
                                  type.getDimSize(dist::sequenceDim(type)) % tp == 0
                              ? dist::splitSharding(ctx, dist::sequenceDim(type))
                              : dist::ShardingAttr();
  if (explain)
    embedding->emitRemark()
        << dist::nodeOf(embedding) << " is a vocabulary-parallel embedding: each of "
        << tp << " ranks holds " << dist::tensorOf(embedding.getData()).getDimSize(0) / tp
        << " rows and looks up only those";
  for (OpOperand &use : llvm::make_early_inc_range(embedding->getUses()))
    reshard(use, to);
  if (to)
    sequence.insert(reshards.lookup({embedding.getResult(), to}));
}

void Propagation::applyHead(nn::LinearOp head) {
  annotateConstant(head.getWeightMutable(),
                   dist::splitSharding(ctx, head.getTransposeWeight() ? 0 : 1));
  if (head.getBias())
    annotateConstant(head.getBiasMutable()[0], dist::splitSharding(ctx, 0));
  if (explain)
    head->emitRemark() << dist::nodeOf(head) << " is an output head split over "
                       << tp << " ranks by its "
                       << head.getType().getShape().back()
                       << " features, then all-gathered";
  for (OpOperand &use : llvm::make_early_inc_range(head->getUses()))
    reshard(use, dist::ShardingAttr());
}

std::optional<SmallVector<std::optional<int64_t>>>
Propagation::sequenceRule(Operation *op) {
  auto rule = dyn_cast<dist::ShardingRuleOpInterface>(op);
  if (!rule || op->getNumResults() != 1)
    return std::nullopt;
  auto out = dist::tensorOf(op->getResult(0));
  int64_t seq = dist::sequenceDim(out);
  if (seq < 0)
    return std::nullopt;
  dist::SplitRule back = rule.inferOperandSplits(0, seq);
  if (!back.ok() || back.splits.size() != op->getNumOperands())
    return std::nullopt;
  SmallVector<std::optional<int64_t>> dims;
  SmallVector<std::optional<dist::DimSplit>> in;
  for (auto [v, s] : llvm::zip(op->getOperands(), back.splits)) {
    // A value on the stream keeps its split: the rule must read it there.
    if (sequence.contains(v) &&
        (!s || s->dim != dist::sequenceDim(dist::tensorOf(v))))
      return std::nullopt;
    dims.push_back(s ? std::optional(s->dim) : std::nullopt);
    in.push_back(s ? std::optional(dist::DimSplit{s->dim, tp}) : std::nullopt);
  }
  dist::SplitRule fwd = rule.propagateSplit(in);
  if (!fwd.ok() || fwd.partial || fwd.splits.size() != 1 ||
      fwd.splits[0] != std::optional(dist::DimSplit{seq, tp}))
    return std::nullopt;
  return dims;
}

void Propagation::propagateSequence() {
  // Seeded norms join the stream; so do the ops on it whose rule keeps the
  // sequence split. Program order: an operand's layout is final before its
  // user is visited.
  SmallVector<Operation *> ops;
  for (Operation &op : main.getFunctionBody().front())
    if (!isa<dist::ShardOp>(op))
      ops.push_back(&op);
  for (Operation *op : ops) {
    bool seededNorm = isa<nn::LayerNormOp, nn::RmsNormOp>(op) &&
                      dist::splitDimOf(dist::shardingOf(op->getResult(0)));
    bool inRegion = op->hasAttr(dist::kRegionAttr) ||
                    llvm::any_of(regions, [&](dist::Region &r) {
                      return r.ops.contains(op);
                    });
    bool onStream = !inRegion && onSequenceStream(op) &&
                    llvm::any_of(op->getOperands(), [&](Value v) {
                      return sequence.contains(v);
                    });
    std::optional<SmallVector<std::optional<int64_t>>> dims;
    if (seededNorm || onStream)
      dims = sequenceRule(op);
    assert((dims || !seededNorm) && "a norm over the features keeps the "
                                    "sequence split dist-annotate seeds");
    if (!dims) {
      // No sequence rule: the op reads whole values.
      for (OpOperand &use : op->getOpOperands())
        if (sequence.contains(use.get()))
          reshard(use, dist::ShardingAttr());
      continue;
    }
    for (auto [use, d] : llvm::zip(op->getOpOperands(), *dims)) {
      Value v = use.get();
      if (!d || sequence.contains(v))
        continue; // broadcast along the sequence: every rank reads all of it
      if (nn::isWeight(v))
        annotateConstant(use, dist::splitSharding(ctx, *d));
      else
        reshard(use, dist::splitSharding(ctx, *d));
    }
    auto out = dist::tensorOf(op->getResult(0));
    dist::setSharding(op->getResult(0),
                      dist::splitSharding(ctx, dist::sequenceDim(out)));
    sequence.insert(op->getResult(0));
  }
}

LogicalResult Propagation::run() {
  dist::Planner planner(tp, explain);
  SmallVector<nn::LinearOp> rows;
  main.walk([&](nn::LinearOp lin) {
    dist::ShardingAttr s = dist::shardingOf(lin.getResult());
    if (s && s.isPartial() && lin->hasAttr(dist::kRegionAttr))
      rows.push_back(lin);
  });
  for (nn::LinearOp row : rows)
    planRegion(row, planner);
  if (!planner.misfits.empty()) {
    bool sp = llvm::any_of(rows, [](nn::LinearOp row) {
      return row->hasAttr(dist::kSequenceParallelAttr);
    });
    (void)planner.reportMisfits(dist::fittingTpHint(main, sp));
    return failure();
  }
  if (inconsistent)
    return failure();
  for (dist::Region &r : regions)
    applyRegion(r);
  SmallVector<nn::LinearOp> outputHeads;
  main.walk([&](nn::LinearOp lin) {
    if (lin->hasAttr(dist::kHeadAttr))
      outputHeads.push_back(lin);
  });
  for (nn::LinearOp head : outputHeads)
    applyHead(head);
  SmallVector<nn::GatherOp> embeddings;
  main.walk([&](nn::GatherOp g) {
    if (g->hasAttr(dist::kVocabAttr))
      embeddings.push_back(g);
  });
  for (nn::GatherOp g : embeddings)
    applyEmbedding(g);
  propagateSequence();
  main->setAttr(dist::kRegionsCountAttr,
                Builder(ctx).getI64IntegerAttr(regions.size() + outputHeads.size() +
                                                 embeddings.size()));
  return success();
}

struct DistPropagatePass : dist::impl::DistPropagateBase<DistPropagatePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    int64_t tp = dist::meshSize(module);
    if (tp == 1)
      return;
    FailureOr<FunctionOpInterface> main =
        nn::entryFunction(module, getArgument());
    if (failed(main) || failed(Propagation(*main, tp, explain).run()))
      signalPassFailure();
  }
};

} // namespace
