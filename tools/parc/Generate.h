//===- Generate.h - compile options of generation (--max-seq) ---*- C++ -*-===//
#ifndef PARC_TOOLS_PARC_GENERATE_H
#define PARC_TOOLS_PARC_GENERATE_H

#include "parc/Import/Onnx/OnnxImporter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace parc::driver {

/// Binds a decoder exported with its cache for one step of `tokens` new
/// tokens per sequence (1: a decode step; --prefill-len: the prefill):
/// every past input to maxSeq - tokens entries (so that Concat(past, new)
/// has the cache's capacity), `attention_mask` to maxSeq, the other
/// symbolic dims to `tokens`; the batch is dim 0 of a shape the user bound
/// (--input-shape), or 1, divided by `groups` (--micro-batches: a forward
/// takes one group of sequences). Shapes the user bound are kept, except
/// the sequence dim of a prefill's and the batch of a group. `pairs` are
/// --kv-cache's PAST=PRESENT.
llvm::Error bindStep(llvm::StringRef modelPath, int64_t maxSeq, int64_t tokens,
                     int64_t groups, llvm::ArrayRef<std::string> pairs,
                     parc::OnnxImportOptions &options);

/// The bytes of the KV cache buffers `main` holds (its inputs nn-kv-cache
/// tagged as caches): a rank program's, after dist-partition gave them their
/// heads and dist-extract-stage kept its stage's layers.
int64_t kvCacheBytes(mlir::func::FuncOp main);

/// What mergePrefill found: the prefill program's own arena, and its
/// weights shared with the decode program or held for it alone.
struct PrefillMerge {
  int64_t arenaBytes = 0, sharedWeights = 0, ownWeights = 0, ownWeightBytes = 0;
};

/// Moves the prefill program (`prefill`'s func @main, lowered to rt and
/// planned) into `decode` as func @prefill, sharing: each of its weights
/// whose bytes, type and cut are a decode weight's takes that weight's
/// name (one slot, one copy in the shard), the others names of their own;
/// its caches must be the decode program's, name and type.
mlir::FailureOr<PrefillMerge> mergePrefill(mlir::ModuleOp decode,
                                           mlir::ModuleOp prefill);

} // namespace parc::driver

#endif // PARC_TOOLS_PARC_GENERATE_H
