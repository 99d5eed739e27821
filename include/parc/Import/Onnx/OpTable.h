//===- OpTable.h - The ONNX ops parc imports, by version --------*- C++ -*-===//
//
// The importer keeps one table (OnnxImporter.cpp) from each op it imports,
// by domain and type, to its handler and to the schema versions whose
// semantics that handler implements. A node whose model opset resolves its
// op to any other version is refused: an opset that changes an op must not
// import with an older version's semantics unseen.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_IMPORT_ONNX_OPTABLE_H
#define PARC_IMPORT_ONNX_OPTABLE_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <optional>
#include <string>
#include <vector>

namespace parc {

/// The default-domain opsets parc reads.
constexpr int64_t kMinOnnxOpset = 11, kMaxOnnxOpset = 21;

/// One op of the table, without its handler.
struct OnnxOp {
  llvm::StringRef domain; ///< "" for ONNX's default domain.
  llvm::StringRef type;
  /// The SinceVersions of the op's schemas that its handler implements.
  llvm::SmallVector<int, 4> versions;
};

/// Every op of the importer's table.
std::vector<const OnnxOp *> onnxOpTable();

/// The SinceVersion of the schema that `opset` (the model's opset of
/// `op.domain`) resolves `op` to, as the importer resolves it; none when
/// `op` has no schema there.
std::optional<int> onnxSchemaVersion(const OnnxOp &op, int64_t opset);

/// Why `op` is refused at `opset`: the version it resolves to is not one of
/// `op.versions`. None when it is, or when there is no schema (which the
/// ONNX checker reports).
std::optional<std::string> checkOnnxOpVersion(const OnnxOp &op,
                                              int64_t opset);

} // namespace parc

#endif // PARC_IMPORT_ONNX_OPTABLE_H
