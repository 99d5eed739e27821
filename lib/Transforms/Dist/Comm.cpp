//===- Comm.cpp - dist-comm -------------------------------------*- C++ -*-===//
//
// Each pending layout change becomes the cheapest collective that performs
// it: a reduction of partial sums that every rank needs is an all-reduce,
// one split afterwards a reduce-scatter; a split that every rank needs
// whole is an all-gather, one re-split on another dim an all-to-all; a
// replicated value becomes split by a local slice, with no communication.
// An all-gather read only through a leading slice along its axis (a padded
// output head's padding dropped) gathers just what the slice keeps; one read
// only as an output goes to the output rank alone.
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
namespace nn = parc::nn;

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
                                     DenseI64ArrayAttr(), IntegerAttr())
        .getResult();
  if (a && c && *a != *c)
    return dist::AllToAllOp::create(b, loc, type, mesh, axes, in, axis(*c),
                                    axis(*a))
        .getResult();
  if (!a && c)
    return dist::LocalPartOp::create(b, loc, type, in, to).getResult();
  return in; // the same layout
}

/// When `gather`'s only reader is an nn.slice keeping a leading part of the
/// gathered axis (and everything else), gathers only that part: member q
/// contributes its first sizes[q] entries, and the slice's copy goes.
void gatherOnlyKept(dist::AllGatherOp gather) {
  if (gather.getSizesAttr() || !gather->hasOneUse())
    return;
  auto slice = dyn_cast<nn::SliceOp>(*gather->user_begin());
  auto is = [](int64_t v) { return [v](int64_t x) { return x == v; }; };
  if (!slice || !llvm::all_of(slice.getStarts(), is(0)) ||
      !llvm::all_of(slice.getSteps(), is(1)))
    return;
  int64_t axis = gather.getGatherAxis();
  ArrayRef<int64_t> all = gather.getType().getShape(),
                    kept = slice.getType().getShape();
  for (int64_t d = 0; d < int64_t(all.size()); ++d)
    if (d == axis ? all[d] == kept[d] : all[d] != kept[d])
      return;
  int64_t part = gather.getInput().getType().getDimSize(axis);
  int64_t members = all[axis] / std::max<int64_t>(part, 1);
  SmallVector<int64_t> sizes;
  for (int64_t q = 0; q < members; ++q)
    sizes.push_back(std::clamp<int64_t>(kept[axis] - q * part, 0, part));
  OpBuilder b(gather);
  auto only = dist::AllGatherOp::create(
      b, gather.getLoc(), slice.getType(), gather.getMeshAttr(),
      gather.getMeshAxesAttr(), gather.getInput(), gather.getGatherAxisAttr(),
      b.getDenseI64ArrayAttr(sizes), IntegerAttr());
  slice.replaceAllUsesWith(only.getResult());
  slice.erase();
  gather.erase();
}

/// A gather read only by the function's return goes to member 0 alone:
/// only the output rank keeps the outputs (writes them, chooses the next
/// token), and it is member 0 of its every group (tools/parc's
/// output_rank: the last stage's first rank). The others neither receive
/// nor copy the gathered tensor, the logits of a vocabulary-parallel head
/// the typical case.
void gatherOnlyToOutputRank(dist::AllGatherOp gather) {
  if (!gather->use_empty() &&
      llvm::all_of(gather->getUsers(), [](Operation *user) {
        return isa<func::ReturnOp>(user);
      }))
    gather.setRootAttr(OpBuilder(gather).getI64IntegerAttr(0));
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
    SmallVector<dist::AllGatherOp> gathers;
    module.walk([&](dist::AllGatherOp op) { gathers.push_back(op); });
    for (dist::AllGatherOp gather : gathers)
      gatherOnlyKept(gather);
    module.walk(gatherOnlyToOutputRank);
    LLVM_DEBUG(llvm::dbgs() << "dist-comm: " << reshards.size()
                            << " reshard(s) lowered\n");
  }
};

} // namespace
