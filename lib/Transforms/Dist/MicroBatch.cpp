//===- MicroBatch.cpp - dist-micro-batch ------------------------*- C++ -*-===//
//
// Without pipeline stages, micro-batches are still worth having: their
// chains are independent, so one micro-batch's collectives can run while
// the next one computes (dist-overlap interleaves them). @main, imported at
// one micro-batch's shape, is rebuilt over the whole batch: inputs sliced
// along dim 0, everything computed from them cloned once per micro-batch
// and tagged with it, outputs concatenated. Weights are kept once.
//
//===----------------------------------------------------------------------===//

#include "Regions.h"
#include "dist/DistDialect.h"
#include "nn/NNOps.h"
#include "parc/Transforms/Dist/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "dist-micro-batch"

namespace parc::dist {
#define GEN_PASS_DEF_DISTMICROBATCH
#include "parc/Transforms/Dist/Passes.h.inc"
} // namespace parc::dist

using namespace mlir;
namespace nn = parc::nn;
namespace dist = parc::dist;

namespace {

struct DistMicroBatchPass
    : parc::dist::impl::DistMicroBatchBase<DistMicroBatchPass> {
  using Base::Base;
  void runOnOperation() override;
};

void DistMicroBatchPass::runOnOperation() {
  ModuleOp module = getOperation();
  FailureOr<FunctionOpInterface> found =
      nn::entryFunction(module, getArgument());
  if (failed(found))
    return signalPassFailure();
  FunctionOpInterface main = *found;
  auto error = [&]() { return mlir::emitError(main.getLoc()); };
  const int64_t m = microBatches;
  if (m < 1) {
    error() << "micro-batches must be at least 1, got " << m;
    return signalPassFailure();
  }
  if (m == 1)
    return;
  Block &body = main.getFunctionBody().front();
  SmallVector<Type> argTypes, resultTypes;
  if (failed(dist::stackedSignature(main, m, argTypes, resultTypes)))
    return signalPassFailure();

  // Ops computed from an input (directly or through ops in their regions)
  // run once per micro-batch; the rest (weights, their parts) once.
  llvm::DenseSet<Operation *> perBatch;
  for (Operation &op : body.without_terminator()) {
    WalkResult r = op.walk([&](Operation *inner) {
      for (Value v : inner->getOperands()) {
        if (auto arg = dyn_cast<BlockArgument>(v);
            arg && arg.getOwner() == &body)
          return WalkResult::interrupt();
        Operation *def = v.getDefiningOp();
        Operation *top = def ? body.findAncestorOpInBlock(*def) : nullptr;
        if (top && top != &op && perBatch.contains(top))
          return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (r.wasInterrupted())
      perBatch.insert(&op);
  }
  Operation *ret = body.getTerminator();
  for (auto [k, v] : llvm::enumerate(ret->getOperands())) {
    Operation *def = v.getDefiningOp();
    if (def && !perBatch.contains(def)) {
      auto name = main.getResultAttrOfType<StringAttr>(k, "onnx.name");
      error() << "output "
              << (name ? "'" + name.str() + "'" : std::to_string(k))
              << " does not depend on the inputs: it cannot be stacked from "
                 "micro-batches";
      return signalPassFailure();
    }
  }

  LLVM_DEBUG(llvm::dbgs() << "dist-micro-batch: " << perBatch.size()
                          << " op(s) per micro-batch, "
                          << body.getOperations().size() - 1 - perBatch.size()
                          << " shared\n");
  OpBuilder b(main);
  auto fn = dist::replacementOf(b, main, "micro_batched", argTypes, resultTypes);
  Block *entry = &fn.front();

  IRMapping shared;
  for (Operation &op : body.without_terminator())
    if (!perBatch.contains(&op))
      b.clone(op, shared);
  SmallVector<SmallVector<Value>> outputs(ret->getNumOperands());
  for (int64_t i = 0; i < m; ++i) {
    IRMapping map = shared;
    auto chain = [&](Operation *op) {
      op->setAttr(dist::kMicroBatch, b.getI64IntegerAttr(i));
      return op;
    };
    for (BlockArgument arg : body.getArguments()) {
      auto t = cast<RankedTensorType>(arg.getType());
      SmallVector<int64_t> starts(t.getRank(), 0), steps(t.getRank(), 1);
      int64_t d = nn::batchDim(fn, arg.getArgNumber());
      starts[d] = i * t.getDimSize(d);
      map.map(arg,
              chain(nn::SliceOp::create(b, arg.getLoc(), t,
                                        entry->getArgument(arg.getArgNumber()),
                                        b.getDenseI64ArrayAttr(starts),
                                        b.getDenseI64ArrayAttr(steps)))
                  ->getResult(0));
    }
    for (Operation &op : body.without_terminator())
      if (perBatch.contains(&op))
        chain(b.clone(op, map));
    for (auto [k, v] : llvm::enumerate(ret->getOperands()))
      outputs[k].push_back(map.lookup(v));
  }
  SmallVector<Value> results;
  // Each output's concat is located at the node that computes it.
  for (auto [k, parts] : llvm::enumerate(outputs))
    results.push_back(nn::ConcatOp::create(
        b, parts.front().getLoc(), resultTypes[k], parts,
        b.getI64IntegerAttr(nn::batchDim(fn, k, /*result=*/true))));
  // The entry's own kind of return, of the new results.
  b.clone(*ret)->setOperands(results);
  fn->setAttr("dist.micro_batches", b.getI64IntegerAttr(m));
  // The program takes the entry's place, under its name.
  std::string name = main.getName().str();
  main.erase();
  fn.setName(name);
}

} // namespace
