//===- Comm.cpp - dist-comm -------------------------------------*- C++ -*-===//
//
// Each pending layout change becomes the cheapest collective that performs
// it: a reduction of partial sums that every rank needs is an all-reduce,
// one split afterwards a reduce-scatter; a split that every rank needs
// whole is an all-gather, one re-split on another dim an all-to-all; a
// replicated value becomes split by a local slice, with no communication.
//
//===----------------------------------------------------------------------===//

#include "Regions.h"
#include "parc/Transforms/Dist/Passes.h"

#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "dist-comm"

namespace parc::dist {
#define GEN_PASS_DEF_DISTCOMM
#include "parc/Transforms/Dist/Passes.h.inc"
} // namespace parc::dist

using namespace mlir;
namespace dist = parc::dist;

namespace {

FailureOr<Value> lower(dist::ReshardOp op, int64_t tp) {
  OpBuilder b(op);
  Location loc = op.getLoc();
  auto type = op.getType();
  Value in = op.getInput();
  dist::ShardingAttr from = op.getFrom(), to = op.getTo();
  FlatSymbolRefAttr mesh = from.getMesh();
  ArrayAttr axes = b.getStrArrayAttr({dist::kAxis});
  std::optional<int64_t> a = dist::splitDimOf(from), c = dist::splitDimOf(to);
  auto axis = [&](int64_t d) { return b.getI64IntegerAttr(d); };
  auto sum = dist::ReductionKindAttr::get(b.getContext(), dist::ReductionKind::sum);
  if (to.isPartial() || (from.isPartial() && (from.getPartialKind() != dist::ReductionKind::sum ||
                                              from.getPartialAxesNames() !=
                                                  ArrayRef<StringRef>{dist::kAxis}))) {
    op.emitOpError() << dist::nodeOf(op)
                     << ": no collective reshards from " << from << " to " << to;
    return failure();
  }
  if (from.isPartial() && !c)
    return dist::AllReduceOp::create(b, loc, type, mesh, axes, in, sum).getResult();
  if (from.isPartial())
    return dist::ReduceScatterOp::create(b, loc, type, mesh, axes, in, axis(*c),
                                         sum, DenseI64ArrayAttr())
        .getResult();
  if (a && !c)
    return dist::AllGatherOp::create(b, loc, type, mesh, axes, in, axis(*a),
                                     DenseI64ArrayAttr())
        .getResult();
  if (a && c && *a != *c)
    return dist::AllToAllOp::create(b, loc, type, mesh, axes, in, axis(*c),
                                    axis(*a))
        .getResult();
  if (!a && c)
    return dist::LocalPartOp::create(b, loc, type, in, to).getResult();
  return in; // the same layout
}

struct DistCommPass : dist::impl::DistCommBase<DistCommPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    int64_t tp = dist::meshSize(module);
    SmallVector<dist::ReshardOp> reshards;
    module.walk([&](dist::ReshardOp op) { reshards.push_back(op); });
    for (dist::ReshardOp op : reshards) {
      FailureOr<Value> v = lower(op, tp);
      if (failed(v))
        return signalPassFailure();
      op.getResult().replaceAllUsesWith(*v);
      op.erase();
    }
    LLVM_DEBUG(llvm::dbgs() << "dist-comm: " << reshards.size()
                            << " reshard(s) lowered\n");
  }
};

} // namespace
