//===- ScoreModifier.cpp - score modifiers the fused kernel runs ----------===//
//
// Exporters write causal masking three ways: an additive constant of 0 and
// -1e4 / finfo.min / -inf above the diagonal, Where(tril, scores, fill), or
// an additive mask input. All three hide a key from a query by making its
// weight exp(-1e4 - max) or less, which is 0 in f32; the fused kernel hides
// it outright, so the two agree wherever a row sees at least one key.
//
//===----------------------------------------------------------------------===//

#include "ScoreModifier.h"
#include "nn/NNConstants.h"

#include "mlir/IR/Matchers.h"

using namespace mlir;
namespace nn = parc::nn;

namespace {

/// Scores this far below the others weigh exp(-1e4) = 0 in f32.
constexpr double kHidden = -1e4;
/// A causal constant of a 4096-token context; larger ones are not read.
constexpr int64_t kMaxMaskElements = int64_t(1) << 24;

/// Whether a mask entry shows its key (true), hides it (false), or neither.
using Visibility = llvm::function_ref<std::optional<bool>(double)>;

/// The values of a constant in the modifier, or of a mask operand that is a
/// slice of one (GPT-2's causal bias, cut to the sequence).
std::optional<std::vector<double>> constantOf(Value v) {
  if (auto arg = dyn_cast<BlockArgument>(v)) {
    auto op = cast<nn::AttentionOp>(arg.getOwner()->getParentOp());
    if (arg.getArgNumber() == 0)
      return std::nullopt; // the scores
    v = op.getMasks()[arg.getArgNumber() - 1];
  }
  return nn::constantValuesOf(v, kMaxMaskElements);
}

/// The offset k of a constant that shows query i exactly the keys
/// j <= i + k, broadcast to `scores` [B, H, S, T]; T - 1 when it shows
/// every key. nullopt when it depends on batch or head, is no such
/// pattern, or hides some row's every key.
std::optional<int64_t> causalOffsetOf(Value mask, RankedTensorType scores,
                                      Visibility visible) {
  std::optional<std::vector<double>> values = constantOf(mask);
  auto type = dyn_cast<RankedTensorType>(mask.getType());
  if (!values || !type)
    return std::nullopt;
  ArrayRef<int64_t> shape = type.getShape();
  const int64_t rank = shape.size();
  for (int64_t d = 0; d + 2 < rank; ++d)
    if (shape[d] != 1)
      return std::nullopt;
  const int64_t queries = scores.getDimSize(2), keys = scores.getDimSize(3);
  const int64_t rows = rank >= 2 ? shape[rank - 2] : 1;
  const int64_t cols = rank >= 1 ? shape[rank - 1] : 1;
  std::optional<int64_t> offset;
  int64_t least = INT64_MIN; // the smallest offset the full rows allow
  for (int64_t i = 0; i < queries; ++i) {
    const double *row = values->data() + (rows == 1 ? 0 : i) * cols;
    int64_t seen = 0;
    for (int64_t j = 0; j < keys; ++j) {
      std::optional<bool> shown = visible(row[cols == 1 ? 0 : j]);
      if (!shown || (*shown && seen != j))
        return std::nullopt; // not a mask, or not a prefix of the keys
      seen += *shown;
    }
    if (seen == 0)
      return std::nullopt;
    if (seen == keys)
      least = std::max(least, keys - 1 - i);
    else if (offset && *offset != seen - 1 - i)
      return std::nullopt;
    else
      offset = seen - 1 - i;
  }
  if (!offset)
    return keys - 1;
  return *offset >= least ? offset : std::nullopt;
}

/// Whether `v` is read from outside the scores: a mask or a constant.
bool isLeaf(Value v) {
  if (auto arg = dyn_cast<BlockArgument>(v))
    return arg.getArgNumber() > 0;
  return matchPattern(v, m_Constant());
}

std::optional<bool> additive(double x) {
  if (x == 0)
    return true;
  if (x <= kHidden)
    return false;
  return std::nullopt;
}

} // namespace

std::optional<parc::FusedScoreModifier>
parc::classifyScoreModifier(nn::AttentionOp op) {
  Block &block = op.getScoreModBlock();
  RankedTensorType scores = op.getScoreType();
  const int64_t keys = scores.getDimSize(3);
  FusedScoreModifier mod;
  // Two causal masks: the stricter wins (their sum hides both sets).
  auto causal = [&](std::optional<int64_t> offset) {
    if (offset && *offset < keys - 1)
      mod.causalOffset = std::min(mod.causalOffset.value_or(*offset), *offset);
    return offset.has_value();
  };
  Value v = cast<nn::YieldOp>(block.getTerminator()).getValue();
  while (v != block.getArgument(0)) {
    Operation *def = v.getDefiningOp();
    if (!def || v.getType() != scores)
      return std::nullopt;
    if (auto add = dyn_cast<nn::AddOp>(def)) {
      Value chain = add.getLhs(), leaf = add.getRhs();
      if (isLeaf(chain))
        std::swap(chain, leaf);
      if (isLeaf(chain) || !isLeaf(leaf))
        return std::nullopt;
      if (auto arg = dyn_cast<BlockArgument>(leaf)) {
        auto type = cast<RankedTensorType>(arg.getType());
        if (mod.mask || type.getElementType() != scores.getElementType())
          return std::nullopt;
        mod.mask = op.getMasks()[arg.getArgNumber() - 1];
      } else if (!causal(causalOffsetOf(leaf, scores, additive))) {
        return std::nullopt;
      }
      v = chain;
      continue;
    }
    auto where = dyn_cast<nn::WhereOp>(def);
    if (!where || !isLeaf(where.getCondition()))
      return std::nullopt;
    // where(shown, scores, fill) or where(hidden, fill, scores).
    const bool shownIfTrue = !isLeaf(where.getLhs());
    Value chain = shownIfTrue ? where.getLhs() : where.getRhs();
    Value fill = shownIfTrue ? where.getRhs() : where.getLhs();
    std::optional<std::vector<double>> fills = constantOf(fill);
    if (isLeaf(chain) || !fills ||
        llvm::any_of(*fills, [](double x) { return !(x <= kHidden); }))
      return std::nullopt;
    auto shown = [&](double c) -> std::optional<bool> {
      return (c != 0) == shownIfTrue;
    };
    if (!causal(causalOffsetOf(where.getCondition(), scores, shown)))
      return std::nullopt;
    v = chain;
  }
  return mod;
}
