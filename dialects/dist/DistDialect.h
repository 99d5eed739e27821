//===- DistDialect.h - the dist dialect -------------------------*- C++ -*-===//
//
// Declares the dist dialect with its enums, the sharding attribute, the
// async type and the ops: the one header passes include.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_DIALECTS_DIST_DISTDIALECT_H
#define PARC_DIALECTS_DIST_DISTDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace parc::dist {

class MeshOp;

/// The side-effect resource every communicating op reads and writes, so
/// that collectives keep their program order on every rank.
struct CommResource : public mlir::SideEffects::Resource::Base<CommResource> {
  llvm::StringRef getName() final { return "dist.comm"; }
};

} // namespace parc::dist

#include "dist/DistEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "dist/DistAttrs.h.inc"

#define GET_TYPEDEF_CLASSES
#include "dist/DistTypes.h.inc"

#include "dist/DistDialect.h.inc"

#define GET_OP_CLASSES
#include "dist/DistOps.h.inc"

namespace parc::dist {

/// Checks `sharding` where it is used from `from`: its mesh resolves (through
/// `tables` when given) to a `dist.mesh` that has its axes. With the global
/// `shape` of the value, also ShardingAttr::verifyShape on that mesh.
/// Diagnostics go to `emitError`.
mlir::LogicalResult
verifyShardingUse(ShardingAttr sharding,
                  std::optional<llvm::ArrayRef<int64_t>> shape,
                  mlir::Operation *from, mlir::SymbolTableCollection *tables,
                  llvm::function_ref<mlir::InFlightDiagnostic()> emitError);

} // namespace parc::dist

#endif // PARC_DIALECTS_DIST_DISTDIALECT_H
