//===- MoeManifest.h - the manifest's description of MoE layers -*- C++ -*-===//
#ifndef PARC_TOOLS_PARC_MOEMANIFEST_H
#define PARC_TOOLS_PARC_MOEMANIFEST_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/JSON.h"

namespace parc {

/// One entry per "moe" kernel of the rank program: sizes, the experts a
/// rank holds and their weight bytes, and the static bounds of its
/// expert-parallel traffic.
llvm::json::Array describeMoeLayers(mlir::func::FuncOp program);

} // namespace parc

#endif // PARC_TOOLS_PARC_MOEMANIFEST_H
