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

struct OnnxImportOptions {
  /// Binds every dim of a graph input: name → full static shape.
  llvm::StringMap<llvm::SmallVector<int64_t>> inputShapes;
  /// Binds symbolic input dims by their ONNX `dim_param` name (`batch` → 8),
  /// for inputs that `inputShapes` does not bind (the planner's --batch/--seq).
  llvm::StringMap<int64_t> dimParams;
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
