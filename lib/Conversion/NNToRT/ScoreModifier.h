//===- ScoreModifier.h - score modifiers the fused kernel runs --*- C++ -*-===//
//
// nn.attention keeps the exporter's score modifier as IR. The fused kernel
// runs a few of them itself (an additive mask, causal masking); this names
// which, so that convert-nn-to-rt lowers the rest as they are.
//
//===----------------------------------------------------------------------===//
#ifndef PARC_LIB_CONVERSION_NNTORT_SCOREMODIFIER_H
#define PARC_LIB_CONVERSION_NNTORT_SCOREMODIFIER_H

#include "nn/NNOps.h"

#include <optional>

namespace parc {

/// A score modifier as the fused kernel's parameters.
struct FusedScoreModifier {
  /// An additive mask broadcasting to the scores (an operand of the op of
  /// the scores' element type), or null.
  mlir::Value mask;
  /// Query i sees keys j <= i + offset; none: every key.
  std::optional<int64_t> causalOffset;
};

/// The modifier of `op` as kernel parameters when it is a chain, from the
/// scores, of: `add` of a mask operand; `add` of a constant whose entries
/// are 0 or hidden (<= -1e4, -inf included) in a causal pattern; `where`
/// of a causal condition (a constant, or a mask operand sliced from one)
/// with a hidden splat fill. Each row must see at least its first key,
/// where the unfused and fused forms could otherwise differ. nullopt for
/// anything else.
std::optional<FusedScoreModifier> classifyScoreModifier(nn::AttentionOp op);

} // namespace parc

#endif // PARC_LIB_CONVERSION_NNTORT_SCOREMODIFIER_H
