//===- SplitBatch.cpp - dist-split-batch ------------------------*- C++ -*-===//
//
// A graph that fixes its batch inside it (TF exports: static input dims and
// Reshape constants holding the batch) cannot be imported at one
// micro-batch's shape. It is imported whole instead, and the batch is found
// by propagation: dim 0 of every input is the batch (or the dim the model
// names so, nn::batchDim: a past's dim 1), and each op's rule
// says which dim of its result holds it as its outermost factor (a reshape
// that merges the batch into [B·S, H] keeps it outermost). Every such dim is
// then divided by the number of parts; ops without a batched operand
// (weights) keep their types. An op whose rule cannot place the batch (a
// constant spanning it, a reduction over it) refuses, naming the node.
//
//===----------------------------------------------------------------------===//

#include "Padding.h"
#include "Regions.h"
#include "parc/Support/OptionRef.h"
#include "parc/Transforms/Dist/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Debug.h"

#include <variant>

#define DEBUG_TYPE "dist-split-batch"

namespace parc::dist {
#define GEN_PASS_DEF_DISTSPLITBATCH
#include "parc/Transforms/Dist/Passes.h.inc"
} // namespace parc::dist

using namespace mlir;
namespace nn = parc::nn;
namespace dist = parc::dist;

namespace {

/// The dim of each batched value whose outermost factor is the batch.
using BatchDims = llvm::DenseMap<Value, int64_t>;

/// Why an op cannot carry the batch, for the error that names it.
struct Refusal {
  std::string why;
};
using DimOrRefusal = std::variant<int64_t, Refusal>;

int64_t rankOf(Value v) { return dist::tensorOf(v).getRank(); }

/// An I64 axis attribute, made non-negative for rank `rank`.
int64_t axisOf(Operation *op, int64_t rank, StringRef name = "axis") {
  int64_t a = op->getAttrOfType<IntegerAttr>(name).getInt();
  return a < 0 ? a + rank : a;
}

/// Broadcasting ops: every batched operand aligned on one result dim, the
/// others broadcast along it (size 1 or absent there).
DimOrRefusal broadcastRule(Operation *op, const BatchDims &dims) {
  int64_t rank = rankOf(op->getResult(0));
  std::optional<int64_t> dim;
  for (Value v : op->getOperands())
    if (auto it = dims.find(v); it != dims.end()) {
      int64_t d = it->second + rank - rankOf(v);
      if (dim && *dim != d)
        return Refusal{"its operands hold the batch on different dims"};
      dim = d;
    }
  for (Value v : op->getOperands()) {
    int64_t d = *dim - (rank - rankOf(v));
    if (!dims.count(v) && d >= 0 && dist::tensorOf(v).getDimSize(d) != 1)
      return Refusal{"an operand computed without the inputs spans the batch"};
  }
  return *dim;
}

/// A reshape keeps the batch outermost in the output dim with the same
/// prefix product whose size the batch divides.
DimOrRefusal reshapeRule(nn::ReshapeOp op, int64_t d, int64_t batch) {
  ArrayRef<int64_t> in = op.getInput().getType().getShape();
  ArrayRef<int64_t> out = op.getType().getShape();
  int64_t prefix = 1, outPrefix = 1;
  for (int64_t i = 0; i < d; ++i)
    prefix *= in[i];
  for (auto [j, size] : llvm::enumerate(out)) {
    if (outPrefix == prefix && size % batch == 0)
      return int64_t(j);
    outPrefix *= size;
  }
  return Refusal{"it reshapes the batch of " + std::to_string(batch) +
                 " across dims"};
}

/// A rule for ops that only need the batch off the axis they work along.
DimOrRefusal offAxis(int64_t d, int64_t axis, StringRef what) {
  if (d == axis)
    return Refusal{("it " + what + " along the batch").str()};
  return d;
}

DimOrRefusal gatherRule(nn::GatherOp op, const BatchDims &dims) {
  int64_t axis = axisOf(op, rankOf(op.getData()));
  auto data = dims.find(op.getData()), idx = dims.find(op.getIndices());
  if (data != dims.end() && idx != dims.end())
    return Refusal{"both its table and its indices hold the batch"};
  if (idx != dims.end())
    return axis + idx->second;
  if (data->second == axis)
    return Refusal{"it gathers along the batch"};
  return data->second < axis ? data->second
                             : data->second + rankOf(op.getIndices()) - 1;
}

DimOrRefusal attentionRule(nn::AttentionOp op, const BatchDims &dims) {
  for (Value v : {op.getQuery(), op.getKey(), op.getValue()})
    if (dims.lookup(v) != 0 || !dims.count(v))
      return Refusal{"its query, key and value must hold the batch on dim 0"};
  for (Value m : op.getMasks())
    if (!dims.count(m) && rankOf(m) == 4 &&
        dist::tensorOf(m).getDimSize(0) != 1)
      return Refusal{"a mask computed without the inputs spans the batch"};
  // Constants of the score modifier broadcast along the batch, or it holds.
  Block &mod = op.getScoreModBlock();
  int64_t rank = op.getScoreType().getRank();
  for (Operation &inner : mod.without_terminator())
    if (inner.getNumOperands() == 0 && inner.getNumResults() == 1 &&
        rankOf(inner.getResult(0)) == rank &&
        dist::tensorOf(inner.getResult(0)).getDimSize(0) != 1)
      return Refusal{
          "its score modifier holds a constant that spans the batch"};
  return int64_t(0);
}

/// Which dim of `op`'s results holds the batch, given its operands'.
DimOrRefusal batchRule(Operation *op, const BatchDims &dims, int64_t batch) {
  auto at = [&](Value v) { return dims.lookup(v); };
  Value x = op->getNumOperands() ? op->getOperand(0) : Value();
  bool first = x && dims.count(x);
  if (op->hasTrait<OpTrait::Elementwise>() ||
      op->hasTrait<OpTrait::ResultsBroadcastableShape>() ||
      isa<nn::RotaryOp>(op))
    return broadcastRule(op, dims);
  if (auto att = dyn_cast<nn::AttentionOp>(op))
    return attentionRule(att, dims);
  if (auto g = dyn_cast<nn::GatherOp>(op))
    return gatherRule(g, dims);
  if (!first)
    return Refusal{"only its side operands hold the batch"};
  int64_t d = at(x), rank = rankOf(x);
  if (isa<nn::LinearOp>(op))
    return d < rank - 1 ? DimOrRefusal(d)
                        : Refusal{"its features are the batch"};
  if (auto mm = dyn_cast<nn::MatMulOp>(op)) {
    Value rhs = mm->getOperand(1);
    if (d >= rank - 1 || (dims.count(rhs) && at(rhs) + rank - rankOf(rhs) != d))
      return Refusal{"it contracts along the batch"};
    int64_t rd = d - (rank - rankOf(rhs));
    if (!dims.count(rhs) && rankOf(rhs) > 2 && rd >= 0 &&
        dist::tensorOf(rhs).getDimSize(rd) != 1)
      return Refusal{"an operand computed without the inputs spans the batch"};
    return d + rankOf(op->getResult(0)) - rank;
  }
  if (auto gemm = dyn_cast<nn::GemmOp>(op))
    return !gemm.getTransA() && !dims.count(gemm.getB())
               ? DimOrRefusal(int64_t(0))
               : Refusal{"it contracts along the batch"};
  if (auto r = dyn_cast<nn::ReshapeOp>(op))
    return reshapeRule(r, d, batch);
  if (auto t = dyn_cast<nn::TransposeOp>(op))
    return int64_t(llvm::find(t.getPerm(), d) - t.getPerm().begin());
  if (isa<nn::ExpandOp>(op))
    return d + rankOf(op->getResult(0)) - rank;
  if (isa<nn::LayerNormOp, nn::RmsNormOp>(op))
    return d < axisOf(op, rank) ? DimOrRefusal(d)
                                : Refusal{"it normalises along the batch"};
  if (isa<nn::ConcatOp>(op) && llvm::any_of(op->getOperands(), [&](Value v) {
        return at(v) != d || !dims.count(v);
      }))
    return Refusal{"its inputs do not all hold the batch on one dim"};
  if (isa<nn::SoftmaxOp, nn::ConcatOp, nn::SplitOp, nn::TopKOp>(op))
    return offAxis(d, axisOf(op, rank), "works");
  if (auto s = dyn_cast<nn::SliceOp>(op))
    return s.getStarts()[d] == 0 && s.getSteps()[d] == 1 &&
                   s.getType().getDimSize(d) == dist::tensorOf(x).getDimSize(d)
               ? DimOrRefusal(d)
               : Refusal{"it slices the batch"};
  if (isa<nn::TriluOp>(op))
    return d < rank - 2 ? DimOrRefusal(d) : Refusal{"it masks along the batch"};
  if (isa<nn::ConvOp, nn::MaxPoolOp>(op))
    return d == 0 ? DimOrRefusal(d) : Refusal{"its batch is not dim 0"};
  if (isa<nn::ReduceSumOp, nn::ReduceMeanOp, nn::ReduceMaxOp, nn::ReduceMinOp,
          nn::ReduceProdOp>(op)) {
    auto keep = op->getAttrOfType<BoolAttr>("keepdims");
    int64_t before = 0;
    for (int64_t a :
         op->getAttrOfType<DenseI64ArrayAttr>("axes").asArrayRef()) {
      a = a < 0 ? a + rank : a;
      if (a == d)
        return Refusal{"it reduces along the batch"};
      before += a < d;
    }
    return (!keep || keep.getValue()) ? d : d - before;
  }
  return Refusal{"'" + op->getName().getStringRef().str() +
                 "' has no rule for the batch"};
}

struct DistSplitBatchPass : dist::impl::DistSplitBatchBase<DistSplitBatchPass> {
  using Base::Base;
  void runOnOperation() override;
  LogicalResult findBatch(FunctionOpInterface main, BatchDims &dims, int64_t &batch);
};

LogicalResult DistSplitBatchPass::findBatch(FunctionOpInterface main, BatchDims &dims,
                                            int64_t &batch) {
  Block &body = main.getFunctionBody().front();
  auto refuse = [&](Location loc, const Twine &what) {
    emitError(loc) << what << ": the batch of " << batch
                   << " that this model fixes cannot be split into "
                   << int64_t(parts)
                   << " parts (" << parc::optionRef("parts")
                   << "); a model with a dynamic batch dim can";
    return failure();
  };
  batch = 0;
  for (BlockArgument arg : body.getArguments()) {
    auto t = dist::tensorOf(arg);
    int64_t d = nn::batchDim(main, arg.getArgNumber());
    if (t.getRank() <= d || (batch && t.getDimSize(d) != batch))
      return refuse(arg.getLoc(), "the inputs do not share a batch");
    batch = t.getDimSize(d);
    dims[arg] = d;
  }
  if (batch % int64_t(parts))
    return refuse(main.getLoc(), "the parts do not divide the batch");
  for (Operation &op : body.without_terminator()) {
    if (llvm::none_of(op.getOperands(), [&](Value v) { return dims.count(v); }))
      continue; // weights and what is computed from them alone
    DimOrRefusal d = batchRule(&op, dims, batch);
    if (auto *r = std::get_if<Refusal>(&d))
      return refuse(op.getLoc(), dist::nodeOf(&op) + ": " + r->why);
    for (Value res : op.getResults()) {
      int64_t dim = std::get<int64_t>(d);
      if (dist::tensorOf(res).getDimSize(dim) % batch)
        return refuse(op.getLoc(), dist::nodeOf(&op) +
                                       ": its result does not hold the batch");
      dims[res] = dim;
    }
  }
  for (auto [k, v] : llvm::enumerate(body.getTerminator()->getOperands()))
    if (int64_t d = nn::batchDim(main, k, /*result=*/true);
        !dims.count(v) || dims.lookup(v) != d) {
      auto name = main.getResultAttrOfType<StringAttr>(k, "onnx.name");
      return refuse(main.getLoc(), "output '" + (name ? name.str() : "?") +
                                       "' does not hold the batch on dim " +
                                       std::to_string(d));
    }
  return success();
}

void DistSplitBatchPass::runOnOperation() {
  FailureOr<FunctionOpInterface> entry =
      nn::entryFunction(getOperation(), getArgument());
  if (failed(entry))
    return signalPassFailure();
  FunctionOpInterface main = *entry;
  if (parts == 1)
    return;
  BatchDims dims;
  int64_t batch;
  if (failed(findBatch(main, dims, batch)))
    return signalPassFailure();
  for (auto [v, d] : dims) {
    auto t = dist::tensorOf(v);
    SmallVector<int64_t> shape(t.getShape());
    shape[d] /= parts;
    v.setType(RankedTensorType::get(shape, t.getElementType()));
  }
  // Attentions' score modifiers follow their (now smaller) scores and masks.
  main.walk([](nn::AttentionOp att) {
    Block &mod = att.getScoreModBlock();
    for (auto [arg, mask] :
         llvm::zip(mod.getArguments().drop_front(), att.getMasks()))
      arg.setType(mask.getType());
    dist::retypeScoreModifier(att);
  });
  Block &body = main.getFunctionBody().front();
  main.setType(
      FunctionType::get(&getContext(), body.getArgumentTypes(),
                        body.getTerminator()->getOperandTypes()));
  LLVM_DEBUG(llvm::dbgs() << "dist-split-batch: " << dims.size()
                          << " value(s) hold the batch of " << batch << "\n");
}

} // namespace
