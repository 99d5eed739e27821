//===- NodeLocation.h - the ONNX node an op came from -----------*- C++ -*-===//
//
// The importer locates every op it builds at its ONNX node: a NameLoc of
// the node's name (fused with the file's location). Passes keep locations
// when they rewrite, so every later stage (dist rules, the planner, codegen,
// the driver's diagnostics) names a model's node through this one lookup.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_DIALECTS_NN_NODELOCATION_H
#define PARC_DIALECTS_NN_NODELOCATION_H

#include "mlir/IR/Location.h"
#include "mlir/IR/Operation.h"

#include <optional>
#include <string>

namespace parc::nn {

/// The ONNX node name in `loc` (its first NameLoc), if it has one. The
/// name is owned by the context.
inline std::optional<llvm::StringRef> onnxNode(mlir::Location loc) {
  std::optional<llvm::StringRef> node;
  loc->walk([&](mlir::Location inner) {
    if (auto name = llvm::dyn_cast<mlir::NameLoc>(inner)) {
      node = name.getName().getValue();
      return mlir::WalkResult::interrupt();
    }
    return mlir::WalkResult::advance();
  });
  return node;
}

/// The ONNX node name in `loc`, or `none` without one: what generated code
/// and manifests record of a node.
inline std::string nodeName(mlir::Location loc, llvm::StringRef none = "?") {
  return onnxNode(loc).value_or(none).str();
}

/// `node 'NAME' (op)` for diagnostics, or `'op'` for an op no node made.
inline std::string describeNode(mlir::Operation *op) {
  std::string kind = op->getName().getStringRef().str();
  if (std::optional<llvm::StringRef> node = onnxNode(op->getLoc()))
    return "node '" + node->str() + "' (" + kind + ")";
  return "'" + kind + "'";
}

} // namespace parc::nn

#endif // PARC_DIALECTS_NN_NODELOCATION_H
