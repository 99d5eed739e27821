//===- Safetensors.h - a rank's weight shard on disk ------------*- C++ -*-===//

#ifndef PARC_TARGET_WEIGHTS_SAFETENSORS_H
#define PARC_TARGET_WEIGHTS_SAFETENSORS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Support/LLVM.h"

namespace parc {

/// Writes every distinct `rt.weight` of `program` to a .safetensors file at
/// `path`: constants from their `value`, external weights by reading their
/// bytes from `modelDir`. A weight with a `shard` attribute stores its
/// global value and keeps the part of the rank whose coordinate on the
/// shard's mesh axis `coordinate(axis)` returns. Returns the bytes written,
/// or failure with a diagnostic on the weight op that could not be
/// materialised.
mlir::FailureOr<int64_t>
writeWeights(mlir::func::FuncOp program, llvm::StringRef modelDir,
             llvm::StringRef path,
             llvm::function_ref<int64_t(llvm::StringRef)> coordinate);

} // namespace parc

#endif // PARC_TARGET_WEIGHTS_SAFETENSORS_H
