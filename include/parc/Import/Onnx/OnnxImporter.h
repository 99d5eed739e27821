//===- OnnxImporter.h - ONNX models into the nn dialect ---------*- C++ -*-===//

#ifndef PARC_IMPORT_ONNX_ONNXIMPORTER_H
#define PARC_IMPORT_ONNX_ONNXIMPORTER_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/StringMap.h"

namespace llvm {
class MemoryBuffer;
}

namespace parc {

/// The default bound on a constant the importer computes from a smaller
/// description (ConstantOfShape, Range, OneHot): 256 MiB.
constexpr int64_t kDefaultMaxConstantBytes = int64_t(256) << 20;
/// The help text of every tool's `--max-constant-bytes`.
constexpr const char *kMaxConstantBytesHelp =
    "Largest constant (bytes) a node may make the importer compute: "
    "ConstantOfShape, Range, OneHot (default 256 MiB)";

struct OnnxImportOptions {
  /// Binds every dim of a graph input: name → full static shape.
  llvm::StringMap<llvm::SmallVector<int64_t>> inputShapes;
  /// Binds symbolic input dims by their ONNX `dim_param` name (`batch` → 8),
  /// for inputs that `inputShapes` does not bind (the planner's --batch/--seq).
  llvm::StringMap<int64_t> dimParams;
  /// Largest constant, in bytes, a node may make the importer materialise
  /// (`--max-constant-bytes`): a few bytes of model must not become
  /// gigabytes of compile memory.
  int64_t maxConstantBytes = kDefaultMaxConstantBytes;
};

/// Parses `--input-shape` values of the form `name=2x16` into `options`.
/// Returns an error message on malformed text.
llvm::Error parseInputShapes(llvm::ArrayRef<std::string> specs,
                             OnnxImportOptions &options);

/// Imports an ONNX model (binary protobuf, or the ONNX text syntax) into a
/// module holding `func.func @main` on nn ops with static shapes. `path`
/// names the model in diagnostics and locates external data files. Returns
/// null after emitting diagnostics on failure.
mlir::OwningOpRef<mlir::ModuleOp>
importOnnx(const llvm::MemoryBuffer &buffer, llvm::StringRef path,
           mlir::MLIRContext *context, const OnnxImportOptions &options);

/// Reads the file at `path` and imports it.
mlir::OwningOpRef<mlir::ModuleOp>
importOnnxFile(llvm::StringRef path, mlir::MLIRContext *context,
               const OnnxImportOptions &options);

/// Registers `--import-onnx` (with `--input-shape`) for mlir-translate style
/// tools.
void registerOnnxImportTranslation();

} // namespace parc

#endif // PARC_IMPORT_ONNX_ONNXIMPORTER_H
