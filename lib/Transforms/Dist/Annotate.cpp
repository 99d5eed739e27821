//===- Annotate.cpp - dist-annotate -----------------------------*- C++ -*-===//
//
// Seeds Megatron's shardings on the fused nn ops: the column linears of each
// region split by features, the row linear a pending sum, output heads split
// by vocabulary and, with sequence parallelism, norms split along the
// sequence. dist-propagate carries them to every other op. MLPs and output
// heads whose width tp does not divide are first padded with zero features,
// attentions whose heads it does not fit with zero heads.
//
//===----------------------------------------------------------------------===//

#include "Padding.h"
#include "Regions.h"
#include "parc/Support/OptionRef.h"
#include "parc/Transforms/Dist/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "dist-annotate"

namespace parc::dist {
#define GEN_PASS_DEF_DISTANNOTATE
#include "parc/Transforms/Dist/Passes.h.inc"
} // namespace parc::dist

using namespace mlir;
namespace nn = parc::nn;
namespace dist = parc::dist;
using parc::optionRef;

namespace {

/// An output head whose features tp does not divide (GPT-2's vocabulary of
/// 50257) gets zero features up to the next multiple, and a slice drops
/// them again after the all-gather: every rank holds an equal part. A head
/// tied to the token embedding's table reads the table `tables` padded for
/// the embedding, so that the ranks hold one part of it, not two.
void padOutputHead(nn::LinearOp lin, int64_t tp,
                   const llvm::DenseMap<Value, Value> &tables) {
  auto type = lin.getType();
  int64_t features = type.getShape().back();
  int64_t pad = parc::plan::paddedWidth(features, tp) - features;
  if (!pad || !dist::isOutputHead(lin, 1))
    return;
  if (!dist::canPadWeight(lin.getWeight()) ||
      (lin.getBias() && !dist::canPadWeight(lin.getBias())))
    return;
  OpBuilder b(lin);
  Value tied = lin.getTransposeWeight() ? tables.lookup(lin.getWeight()) : Value();
  bool reuse = tied && dist::tensorOf(tied).getDimSize(0) == features + pad &&
               tied.getDefiningOp()->getBlock() == lin->getBlock() &&
               tied.getDefiningOp()->isBeforeInBlock(lin);
  Value newWeight =
      reuse ? tied
            : dist::padWeight(b, lin.getWeight(), lin.getTransposeWeight() ? 0 : 1, pad);
  Value newBias =
      lin.getBias() ? dist::padWeight(b, lin.getBias(), 0, pad) : Value();
  SmallVector<int64_t> shape(type.getShape());
  shape.back() += pad;
  auto head = nn::LinearOp::create(b, lin.getLoc(),
                                   RankedTensorType::get(shape, type.getElementType()),
                                   lin.getInput(), newWeight, newBias,
                                   lin.getTransposeWeightAttr());
  SmallVector<int64_t> starts(type.getRank(), 0), steps(type.getRank(), 1);
  Value sliced = nn::SliceOp::create(b, lin.getLoc(), type, head,
                                     b.getDenseI64ArrayAttr(starts),
                                     b.getDenseI64ArrayAttr(steps));
  lin.getResult().replaceAllUsesWith(sliced);
  lin.erase();
}

/// A token embedding whose vocabulary tp does not divide (50 rows over 4
/// ranks) gets zero rows up to the next multiple, as Megatron pads its
/// vocabulary: no id looks them up (ids wrap by the whole vocabulary, which
/// dist.vocab_parallel records), so every rank holds an equal part. The
/// padded table is recorded in `tables` by the original one.
void padEmbedding(nn::GatherOp embedding, int64_t tp,
                  llvm::DenseMap<Value, Value> &tables) {
  Value table = embedding.getData();
  int64_t rows = dist::tensorOf(table).getDimSize(0);
  if (int64_t pad = parc::plan::paddedWidth(rows, tp) - rows) {
    OpBuilder b(embedding);
    Value padded = dist::padWeight(b, table, 0, pad);
    embedding.getDataMutable().assign(padded);
    tables[table] = padded;
  }
}

/// The norm's input if it normalises only the last dim (what Megatron-SP
/// shards along the sequence), else null.
Value sequenceNormInput(Operation *op) {
  auto last = [](Value x, int64_t axis) {
    int64_t rank = dist::tensorOf(x).getRank();
    return rank >= 2 && (axis == rank - 1 || axis == -1);
  };
  if (auto ln = dyn_cast<nn::LayerNormOp>(op))
    return last(ln.getInput(), ln.getAxis()) ? ln.getInput() : Value();
  if (auto rms = dyn_cast<nn::RmsNormOp>(op))
    return last(rms.getInput(), rms.getAxis()) ? rms.getInput() : Value();
  return {};
}

struct DistAnnotatePass : dist::impl::DistAnnotateBase<DistAnnotatePass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    if (tp < 1) {
      module.emitError() << "tp must be at least 1, not " << int64_t(tp);
      return signalPassFailure();
    }
    if (tp == 1)
      return;
    FailureOr<FunctionOpInterface> entry =
        nn::entryFunction(module, getArgument());
    if (failed(entry))
      return signalPassFailure();
    FunctionOpInterface main = *entry;
    // MLP widths and attention heads tp does not fit take zero features
    // and zero heads first (Padding.cpp).
    SmallVector<nn::LinearOp> rows;
    main.walk([&](nn::LinearOp row) { rows.push_back(row); });
    for (nn::LinearOp row : rows) {
      int64_t width = dist::tensorOf(row.getInput()).getShape().back();
      bool mlp = dist::padMlpWidth(row, tp);
      if ((mlp || dist::padAttentionHeads(row, tp)) && explain)
        row->emitRemark() << dist::nodeOf(row) << " ends "
                          << (mlp ? "an MLP" : "an attention") << " of "
                          << width << " features, padded with zero "
                          << (mlp ? "features" : "heads") << " to "
                          << dist::tensorOf(row.getInput()).getShape().back()
                          << " for " << optionRef("tp", int64_t(tp));
    }
    // Discover every region first: a linear is in at most one of them.
    dist::Planner planner(tp, explain);
    SmallVector<dist::Region> regions;
    llvm::DenseSet<Operation *> taken;
    main.walk([&](nn::LinearOp row) {
      FailureOr<dist::Region> r = planner.discover(row);
      if (failed(r))
        return;
      bool overlaps = taken.contains(row);
      for (nn::LinearOp col : r->columns)
        overlaps |= taken.contains(col);
      if (overlaps)
        return;
      taken.insert(row);
      for (nn::LinearOp col : r->columns)
        taken.insert(col);
      regions.push_back(std::move(*r));
    });
    if (!planner.misfits.empty()) {
      (void)planner.reportMisfits(dist::fittingTpHint(main, sp));
      return signalPassFailure();
    }

    // Sequence parallelism splits every norm's activation and every row
    // output along the sequence: tp must divide it.
    // One error names the first op that cannot split; the others would
    // repeat it.
    bool misfit = false;
    auto checkSequence = [&](Operation *op, RankedTensorType t) {
      int64_t d = dist::sequenceDim(t);
      if (misfit || d < 0 || t.getDimSize(d) % tp == 0)
        return;
      InFlightDiagnostic diag = op->emitError();
      diag << dist::nodeOf(op) << ": " << optionRef("tp", int64_t(tp))
           << " does not fit this model: "
           << dist::sequenceMisfit(t.getDimSize(d), d, tp);
      diag.attachNote() << dist::fittingTpHint(main, sp);
      // Every region fit (misfits are reported first): only the sequence
      // stands in the way.
      diag.attachNote() << optionRef("tp", int64_t(tp)) << " without "
                        << optionRef("sp") << " fits this model (the sequence "
                           "stays whole on every rank)";
      misfit = true;
    };
    SmallVector<Operation *> norms;
    if (sp) {
      main.walk([&](Operation *op) {
        if (Value x = sequenceNormInput(op)) {
          checkSequence(op, dist::tensorOf(x));
          norms.push_back(op);
        }
      });
      for (dist::Region &r : regions)
        checkSequence(r.row, r.row.getType());
      if (misfit)
        return signalPassFailure();
    }

    if (!module.lookupSymbol<dist::MeshOp>(dist::kMeshName)) {
      OpBuilder b(module.getBodyRegion());
      dist::MeshOp::create(b, module.getLoc(), dist::kMeshName,
                           b.getStrArrayAttr({dist::kAxis}),
                           b.getDenseI64ArrayAttr({tp}));
    }
    Builder b(ctx);
    for (auto [i, r] : llvm::enumerate(regions)) {
      for (nn::LinearOp col : r.columns) {
        dist::setSharding(col.getResult(),
                          dist::splitSharding(ctx, col.getType().getRank() - 1,
                                              {}, tp / r.partsOf(col.getResult(), tp)));
        col->setAttr(dist::kRegionAttr, b.getI64IntegerAttr(i));
      }
      dist::setSharding(r.row.getResult(), dist::partialSharding(ctx));
      r.row->setAttr(dist::kRegionAttr, b.getI64IntegerAttr(i));
      if (sp)
        r.row->setAttr(dist::kSequenceParallelAttr, b.getUnitAttr());
    }
    // The token embedding (vocabulary-parallel in Megatron): each rank looks
    // up the rows it holds, and the partial sums are reduced. Before the
    // heads: a tied head reads its padded table.
    llvm::DenseMap<Value, Value> tables;
    if (nn::GatherOp embedding = dist::vocabularyEmbedding(main, tp)) {
      int64_t vocab = dist::tensorOf(embedding.getData()).getDimSize(0);
      padEmbedding(embedding, tp, tables);
      dist::setSharding(embedding.getResult(), dist::partialSharding(ctx));
      embedding->setAttr(dist::kVocabAttr, b.getI64IntegerAttr(vocab));
      if (sp)
        embedding->setAttr(dist::kSequenceParallelAttr, b.getUnitAttr());
    }
    // Output heads (the LM head, vocabulary-parallel in Megatron).
    SmallVector<nn::LinearOp> unevenHeads;
    main.walk([&](nn::LinearOp lin) {
      if (!taken.contains(lin) && lin.getType().getShape().back() % tp)
        unevenHeads.push_back(lin);
    });
    for (nn::LinearOp lin : unevenHeads)
      padOutputHead(lin, tp, tables);
    main.walk([&](nn::LinearOp lin) {
      if (taken.contains(lin) || !dist::isOutputHead(lin, tp))
        return;
      dist::setSharding(lin.getResult(),
                        dist::splitSharding(ctx, lin.getType().getRank() - 1));
      lin->setAttr(dist::kHeadAttr, b.getUnitAttr());
    });
    for (Operation *norm : norms)
      dist::setSharding(norm->getResult(0),
                        dist::splitSharding(ctx, dist::sequenceDim(
                                                     dist::tensorOf(norm->getResult(0)))));
    LLVM_DEBUG(llvm::dbgs() << "dist-annotate: " << regions.size()
                            << " region(s), " << norms.size()
                            << " sequence-parallel norm(s)\n");
  }
};

} // namespace
