//===- Padding.h - zero padding of widths tp does not divide ----*- C++ -*-===//
//
// Output heads and MLPs whose feature width tp does not divide get zero
// features up to the next multiple of tp, and attentions whose heads it
// does not fit get zero heads, on their weights at compile time (embedded
// or external), so that every rank holds an equal part.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_LIB_TRANSFORMS_DIST_PADDING_H
#define PARC_LIB_TRANSFORMS_DIST_PADDING_H

#include "nn/NNOps.h"
#include "parc/Plan/WeightShards.h"

#include "mlir/IR/BuiltinAttributeInterfaces.h"

namespace parc::dist {

/// `value` with `pad` zero entries appended along `dim`, or null when its
/// bytes are not at hand (a resource without its blob).
mlir::ElementsAttr padAlong(mlir::ElementsAttr value, int64_t dim, int64_t pad);
/// `value` with dim `dim` read as consecutive `blocks` (their sizes), each
/// followed by its entry of `pads` zeros (fused QKV: one block per
/// projection); null when its bytes are not at hand.
mlir::ElementsAttr padBlocks(mlir::ElementsAttr value, int64_t dim,
                             llvm::ArrayRef<int64_t> blocks,
                             llvm::ArrayRef<int64_t> pads);

/// Whether the weight `v` can take zero padding: an external weight always
/// (the padding is a description the weight writer applies), an embedded one
/// when its bytes are at hand.
bool canPadWeight(mlir::Value v);

/// The weight `v` with `pad` zero entries appended along `dim`, created at
/// `b`: an embedded weight gets padded elements, an external one records the
/// padding (its bytes stay in the file). Null when `v` cannot be padded.
mlir::Value padWeight(mlir::OpBuilder &b, mlir::Value v, int64_t dim,
                      int64_t pad);
/// padWeight by blocks (padBlocks); an external weight takes only one block
/// (zeros between blocks would move its stored bytes): null otherwise.
mlir::Value padWeightBlocks(mlir::OpBuilder &b, mlir::Value v, int64_t dim,
                            llvm::ArrayRef<int64_t> blocks,
                            llvm::ArrayRef<int64_t> pads);

/// Whether the MLP ending at the row linear `row` (column linears →
/// activations that map 0 to 0, gating products, constant biases → `row`)
/// can take zero features: each padded feature is then 0 up to `row`, whose
/// zero weight rows add nothing. False for anything else (attention heads,
/// reshapes, an activation such as sigmoid or exp alone).
bool isPaddableMlp(nn::LinearOp row);

/// Pads the features of the MLP ending at `row` to the next multiple of
/// `tp` if tp does not divide them and the MLP is paddable (its weights'
/// bytes at hand); returns whether it did.
bool padMlpWidth(nn::LinearOp row, int64_t tp);

/// Retypes an attention's score modifier (elementwise) from its scores,
/// after its heads changed (padded here, or a rank's part in
/// dist-partition).
void retypeScoreModifier(nn::AttentionOp att);

/// Whether the attention region ending at the row linear `row` (one
/// nn.attention between column linears and `row`, as dist-annotate plans
/// it) can take zero heads: its weights padded and nothing else spanning
/// the heads.
bool isPaddableAttention(nn::LinearOp row);

/// Pads the heads of the attention region ending at `row` to plan::paddedHeads
/// if tp does not fit them: zero columns in the query/key/value weights
/// (blockwise in a fused one) and zero rows in `row`'s weight. A zero head
/// meets zero rows of `row`, so the result is unchanged. Returns whether it
/// padded.
bool padAttentionHeads(nn::LinearOp row, int64_t tp);

} // namespace parc::dist

#endif // PARC_LIB_TRANSFORMS_DIST_PADDING_H
