//===- Canonicalize.cpp - nn-canonicalize -----------------------*- C++ -*-===//
//
// The upstream canonicalizer runs every dialect's patterns; this pass runs
// the nn dialect's folders alone so the pipeline's effect is predictable and
// its lit tests check exactly parc's folding rules.
//
//===----------------------------------------------------------------------===//

#include "nn/NNOps.h"
#include "parc/Transforms/NN/Passes.h"

#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#define DEBUG_TYPE "nn-canonicalize"

namespace parc::nn {
#define GEN_PASS_DEF_NNCANONICALIZE
#include "parc/Transforms/NN/Passes.h.inc"
} // namespace parc::nn

using namespace mlir;

namespace {
/// Shares equal constants of a block, as the greedy driver's constant CSE
/// does, but the kept one's location fuses those it replaces: the driver's
/// would be unknown, and the dumps would lose the nodes that use it.
void shareConstants(Operation *root) {
  root->walk([](Block *block) {
    llvm::DenseMap<std::tuple<OperationName, Attribute, Type>, Operation *>
        kept;
    for (Operation &op : llvm::make_early_inc_range(*block)) {
      Attribute value;
      if (op.getNumResults() != 1 || !matchPattern(&op, m_Constant(&value)))
        continue;
      auto [it, fresh] = kept.try_emplace(
          {op.getName(), value, op.getResult(0).getType()}, &op);
      if (fresh)
        continue;
      Operation *first = it->second;
      first->setLoc(FusedLoc::get(op.getContext(), {first->getLoc(), op.getLoc()}));
      op.replaceAllUsesWith(first);
      op.erase();
    }
  });
}

struct NNCanonicalizePass
    : parc::nn::impl::NNCanonicalizeBase<NNCanonicalizePass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    auto *nn = getContext().getLoadedDialect<parc::nn::NNDialect>();
    if (nn)
      nn->getCanonicalizationPatterns(patterns);
    for (RegisteredOperationName op : getContext().getRegisteredOperations())
      if (&op.getDialect() == nn)
        op.getCanonicalizationPatterns(patterns, &getContext());
    // Folding alone (ops with folders) happens inside the driver; constants
    // are shared after it, keeping their nodes (shareConstants).
    GreedyRewriteConfig config;
    config.enableConstantCSE(false);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns),
                                     config)))
      return signalPassFailure();
    shareConstants(getOperation());
  }
};
} // namespace
