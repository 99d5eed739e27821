//===- Generate.h - compile options of generation (--max-seq) ---*- C++ -*-===//
#ifndef PARC_TOOLS_PARC_GENERATE_H
#define PARC_TOOLS_PARC_GENERATE_H

#include "parc/Import/Onnx/OnnxImporter.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace parc::driver {

/// Binds a decoder exported with its cache for one decode step: every past
/// input to maxSeq - 1 entries (so that Concat(past, new) has the cache's
/// capacity), `attention_mask` to maxSeq, the other symbolic dims to one
/// token; the batch is dim 0 of a shape the user bound (--input-shape), or
/// 1. Shapes the user bound are kept. `pairs` are --kv-cache's PAST=PRESENT.
llvm::Error bindDecodeStep(llvm::StringRef modelPath, int64_t maxSeq,
                           llvm::ArrayRef<std::string> pairs,
                           parc::OnnxImportOptions &options);

/// The bytes of the KV cache buffers `main` holds (its inputs nn-kv-cache
/// tagged as caches): a rank program's, after dist-partition gave them their
/// heads and dist-extract-stage kept its stage's layers.
int64_t kvCacheBytes(mlir::func::FuncOp main);

} // namespace parc::driver

#endif // PARC_TOOLS_PARC_GENERATE_H
