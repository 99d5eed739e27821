//===- Safetensors.h - a rank's weight shard on disk ------------*- C++ -*-===//

#ifndef PARC_TARGET_WEIGHTS_SAFETENSORS_H
#define PARC_TARGET_WEIGHTS_SAFETENSORS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Support/LLVM.h"

#include <functional>
#include <string>

namespace parc {

/// Whose shard a file is, as its `__metadata__` records it: the rank
/// program checks rank and program on load, and the checksums with
/// --verify-weights.
struct ShardIdentity {
  int64_t rank = 0;
  std::string program;
};

/// What writeWeights wrote.
struct WrittenShard {
  int64_t bytes = 0;
  /// "crc32c:<8 hex digits>" of the data section (as in the header).
  std::string checksum;
};

/// One file writeWeights writes: its path, the rank's coordinate on each
/// mesh axis, and whose it is.
struct ShardRequest {
  std::string path;
  std::function<int64_t(llvm::StringRef)> coordinate;
  ShardIdentity id;
};

/// Writes every distinct `rt.weight` of `program` to one .safetensors file
/// per request, in parallel: constants from their `value`, external weights
/// by reading their bytes from `modelDir`. A weight with a `shard` attribute
/// (#dist.sharding cuts on the module's rt.mesh) refers to its global tensor
/// (embedded, or external with optional zero `padding`) and keeps the part of
/// the rank whose coordinate on each mesh axis `coordinate(axis)` returns;
/// only that part's bytes are read.
/// Bytes stream through a bounded buffer per file, so that memory does not
/// grow with the weights. The header's `__metadata__` holds `id` and the
/// CRC-32C of the data section and of each tensor
/// (runtime/src/io/formats.h). Returns, per request, the bytes written and
/// the checksum, or failure with a diagnostic on the weight op that could not
/// be read. `wrote`, when given, hears of bytes as they are laid down (from
/// one file's thread at a time); they add up to the WrittenShard::bytes.
mlir::FailureOr<llvm::SmallVector<WrittenShard>>
writeWeights(mlir::Operation *program, llvm::StringRef modelDir,
             llvm::ArrayRef<ShardRequest> shards,
             llvm::function_ref<void(int64_t)> wrote = {});

} // namespace parc

#endif // PARC_TARGET_WEIGHTS_SAFETENSORS_H
