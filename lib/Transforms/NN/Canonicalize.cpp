//===- Canonicalize.cpp - nn-canonicalize -----------------------*- C++ -*-===//
//
// The upstream canonicalizer runs every dialect's patterns; this pass runs
// the nn dialect's folders alone so the pipeline's effect is predictable and
// its lit tests check exactly parc's folding rules.
//
//===----------------------------------------------------------------------===//

#include "nn/NNOps.h"
#include "parc/Transforms/NN/Passes.h"

#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

#define DEBUG_TYPE "nn-canonicalize"

namespace parc::nn {
#define GEN_PASS_DEF_NNCANONICALIZE
#include "parc/Transforms/NN/Passes.h.inc"
} // namespace parc::nn

using namespace mlir;

namespace {
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
    // Folding alone (ops with folders) happens inside the driver.
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
