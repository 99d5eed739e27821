//===- WeightShards.cpp - how a weight divides over the ranks -------------===//
//
// One rule for the partitioner's padding and the planner's shard bytes
// (WeightShards.h).
//
//===----------------------------------------------------------------------===//

#include "parc/Plan/WeightShards.h"

#include "llvm/ADT/DenseSet.h"

#include <algorithm>
#include <cassert>

using namespace mlir;
using namespace parc::plan;
namespace nn = parc::nn;

int64_t parc::plan::paddedWidth(int64_t n, int64_t tp) {
  return tp > 1 ? (n + tp - 1) / tp * tp : n;
}

std::pair<int64_t, int64_t> parc::plan::paddedHeads(int64_t heads, int64_t kvHeads,
                                                    int64_t tp) {
  int64_t group = heads / kvHeads;
  // kvHeads rounded up to a multiple of tp always fits: the loop ends.
  for (int64_t kv = kvHeads;; ++kv)
    if ((kv * group) % tp == 0 && (kv % tp == 0 || tp % kv == 0))
      return {kv * group, kv};
}

int64_t parc::plan::kvParts(int64_t kvHeads, int64_t tp) {
  return kvHeads > 0 ? std::min(tp, kvHeads) : tp;
}

int64_t parc::plan::shardBytes(const WeightShard &w, const ShardDegrees &d) {
  if (w.vocabLookup)
    return d.tp > 1 ? (w.shape[0] + 3) * w.elementBytes : 0;
  std::vector<int64_t> shape = w.shape;
  const int64_t rank = (int64_t)shape.size();
  if (w.experts && d.ep > 1 && rank > 0)
    shape[0] /= d.ep;
  // Experts split inside over tp only under --etp (ep == tp shares the
  // ranks instead).
  bool splits = w.tpDim >= 0 && w.tpDim < rank && d.tp > 1 && (!w.experts || d.etp);
  if (splits) {
    int64_t &dim = shape[w.tpDim];
    int64_t parts = d.tp;
    switch (w.pad) {
    case WeightShard::Pad::None:
      break;
    case WeightShard::Pad::Width:
      dim = paddedWidth(dim, d.tp);
      break;
    case WeightShard::Pad::Heads:
      if (d.kvHeads > 0) {
        // paddedHeads keeps the group size: every dim over heads grows by
        // the key/value heads' factor.
        int64_t kv = paddedHeads(d.heads, d.kvHeads, d.tp).second;
        dim = dim / d.kvHeads * kv;
        if (w.kv)
          parts = kvParts(kv, d.tp);
      }
      break;
    }
    if (w.kv && w.pad != WeightShard::Pad::Heads)
      parts = kvParts(d.kvHeads, d.tp);
    assert(dim % parts == 0 && "a split dim the ranks do not divide");
    dim /= parts;
  }
  int64_t elems = 1;
  for (int64_t s : shape)
    elems *= s;
  return elems * (w.isFloat ? std::min(w.elementBytes, d.computeBytes)
                            : w.elementBytes);
}

namespace {

/// Activations with act(0) = 0: a zero feature stays zero.
bool keepsZero(Operation *op) {
  return isa<nn::GeluOp, nn::ReluOp, nn::SiluOp, nn::TanhOp, nn::ErfOp,
             nn::NegOp, nn::CastOp>(op);
}

} // namespace

bool parc::plan::spansFeatures(Value c, int64_t width) {
  auto t = cast<RankedTensorType>(c.getType());
  return t.getRank() >= 1 && t.getShape().back() == width;
}

std::optional<PaddableMlp>
parc::plan::analyzePaddableMlp(nn::LinearOp row,
                               llvm::function_ref<bool(Value)> canPad) {
  PaddableMlp m;
  m.row = row;
  auto in = dyn_cast<RankedTensorType>(row.getInput().getType());
  if (!in || in.getRank() < 1 || !canPad(row.getWeight()))
    return std::nullopt;
  m.width = in.getShape().back();
  // Every value between the columns and the row holds the features in its
  // last dim: reshapes and transposes (attention heads) are not an MLP.
  auto features = [&](Value v) {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    return t && t.getRank() == in.getRank() && t.getShape().back() == m.width;
  };
  SmallVector<Value> work{row.getInput()};
  llvm::DenseSet<Value> seen;
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (!seen.insert(v).second)
      continue;
    Operation *def = v.getDefiningOp();
    if (!def || !features(v))
      return std::nullopt;
    if (auto col = dyn_cast<nn::LinearOp>(def)) {
      if (!canPad(col.getWeight()) ||
          (col.getBias() && !canPad(col.getBias())))
        return std::nullopt;
      m.columns.insert(col);
      continue;
    }
    if (!keepsZero(def) &&
        !isa<nn::SigmoidOp, nn::AddOp, nn::SubOp, nn::MulOp>(def))
      return std::nullopt;
    m.ops.insert(def);
    for (Value operand : def->getOperands()) {
      if (!nn::isWeight(operand))
        work.push_back(operand);
      else if (spansFeatures(operand, m.width) && !canPad(operand))
        return std::nullopt;
    }
  }
  // Which values are zero on the padded features, in program order.
  llvm::DenseSet<Value> zero;
  for (nn::LinearOp col : m.columns)
    zero.insert(col.getResult());
  SmallVector<Operation *> ordered(m.ops.begin(), m.ops.end());
  llvm::sort(ordered, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  for (Operation *op : ordered) {
    // A padded constant is zero there; a broadcast one is not.
    auto isZero = [&](Value v) {
      return zero.contains(v) || (nn::isWeight(v) && spansFeatures(v, m.width));
    };
    bool z;
    if (keepsZero(op))
      z = zero.contains(op->getOperand(0));
    else if (isa<nn::MulOp>(op))
      z = llvm::any_of(op->getOperands(), isZero);
    else if (isa<nn::AddOp, nn::SubOp>(op))
      z = llvm::all_of(op->getOperands(), isZero);
    else
      z = false; // sigmoid(0) = 1/2: only a zero factor makes it zero again
    if (z)
      zero.insert(op->getResult(0));
  }
  if (!zero.contains(row.getInput()))
    return std::nullopt;
  // Padding changes the type of every value in the MLP: none may be read
  // outside it.
  auto inside = [&](Operation *user) { return user == row || m.ops.contains(user); };
  for (nn::LinearOp col : m.columns)
    if (!llvm::all_of(col->getUsers(), inside))
      return std::nullopt;
  for (Operation *op : m.ops)
    if (!llvm::all_of(op->getUsers(), inside))
      return std::nullopt;
  return m;
}

