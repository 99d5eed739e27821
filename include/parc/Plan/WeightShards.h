//===- WeightShards.h - how a weight divides over the ranks -----*- C++ -*-===//
//
// The rules that decide how many bytes of a weight each rank holds, shared
// by the partitioner (lib/Transforms/Dist: dist-annotate pads with them) and
// the planner (which predicts the shard bytes `parc compile` writes without
// compiling). A width tp does not divide is zero-padded to the next
// multiple (MLP features, output heads, the vocabulary), attention heads to
// paddedHeads, and the padded dim splits evenly. Which MLPs take zero
// features is analyzePaddableMlp's answer, for both.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_PLAN_WEIGHTSHARDS_H
#define PARC_PLAN_WEIGHTSHARDS_H

#include "nn/NNOps.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SetVector.h"

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace parc::plan {

/// The width `n` features (an MLP's, an output head's, a vocabulary's
/// rows) are zero-padded to so that `tp` divides them.
int64_t paddedWidth(int64_t n, int64_t tp);

/// The head counts an attention of `heads` query and `kvHeads` key/value
/// heads is padded to for `tp`: the fewest zero key/value heads, each with
/// its group of heads / kvHeads zero query heads, after which tp divides
/// the query heads and the key/value heads divide by or divide tp.
std::pair<int64_t, int64_t> paddedHeads(int64_t heads, int64_t kvHeads,
                                        int64_t tp);

/// Parts grouped-query key/value heads split into: one per rank up to the
/// head count, then replicated.
int64_t kvParts(int64_t kvHeads, int64_t tp);

/// How one weight divides over the ranks of its pipeline stage.
struct WeightShard {
  enum class Pad : uint8_t {
    None,  ///< tp divides the dim (or it does not split)
    Width, ///< paddedWidth: MLP features, output heads, the vocabulary
    Heads  ///< the dim spans attention heads: scaled by paddedHeads
  };
  std::vector<int64_t> shape;
  /// Bytes per element as stored in the model. A float weight is written
  /// in the narrower of that and the compute dtype (f32 rounded to bf16
  /// while streaming; a bf16 checkpoint stays bf16 under f32 compute).
  int64_t elementBytes = 0;
  bool isFloat = false;
  /// The dim tp splits (-1: every tp rank holds it whole) and how.
  int64_t tpDim = -1;
  Pad pad = Pad::None;
  /// Split into kvParts instead of tp parts (key/value projections).
  bool kv = false;
  /// Stacked experts: dim 0 splits over ep; `tpDim` is the expert ffn that
  /// splits over tp only under --etp.
  bool experts = false;
  /// Not a model weight: the tables a vocabulary-parallel lookup of
  /// `shape[0]` rows adds under tp, the vocabulary's identity table and
  /// each rank's 3 lookup bounds, in the ids' integers (dist-partition's
  /// partitionEmbedding). Held where the lookup runs.
  bool vocabLookup = false;
};

/// The parallel degrees a shard's bytes depend on, and the model's heads.
struct ShardDegrees {
  int64_t tp = 1, ep = 1;
  bool etp = false;
  int64_t heads = 0, kvHeads = 0;
  int64_t computeBytes = 4; ///< bytes of a float element in the compute dtype
};

/// The bytes one rank of its stage holds of `w`.
int64_t shardBytes(const WeightShard &w, const ShardDegrees &d);

/// The ops of one MLP between its column linears and its row linear.
struct PaddableMlp {
  nn::LinearOp row;
  llvm::SetVector<nn::LinearOp> columns;
  llvm::SetVector<mlir::Operation *> ops;
  int64_t width = 0;
};

/// The MLP ending at the row linear `row` (column linears → activations
/// that map 0 to 0, gating products, constant biases → `row`) if it can take
/// zero features: each padded feature is then 0 up to `row`, whose zero
/// weight rows add nothing. `canPad` says whether a weight can take zeros
/// (the partitioner: its bytes are at hand; the planner: always). None for
/// anything else (attention heads, reshapes, sigmoid or exp alone).
std::optional<PaddableMlp>
analyzePaddableMlp(nn::LinearOp row, llvm::function_ref<bool(mlir::Value)> canPad);

/// A constant operand that spans an MLP's `width` features (a bias), as
/// opposed to one broadcast along them; only those are padded.
bool spansFeatures(mlir::Value c, int64_t width);

} // namespace parc::plan

#endif // PARC_PLAN_WEIGHTSHARDS_H
