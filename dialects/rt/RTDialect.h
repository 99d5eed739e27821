//===- RTDialect.h - the rt dialect -----------------------------*- C++ -*-===//

#ifndef PARC_DIALECTS_RT_RTDIALECT_H
#define PARC_DIALECTS_RT_RTDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "dist/DistDialect.h"

#include "rt/RTDialect.h.inc"

#define GET_TYPEDEF_CLASSES
#include "rt/RTTypes.h.inc"

#define GET_OP_CLASSES
#include "rt/RTOps.h.inc"

namespace parc::rt {

/// The mesh of a rank program: the `rt.mesh` attribute of its module (the
/// `dist.mesh` that lowering folds into it), which the shardings of its
/// weights' `shard` cuts name.
struct Mesh {
  llvm::SmallVector<llvm::StringRef> axes;
  llvm::SmallVector<int64_t> shape;
};
/// The mesh of the module around `op`, if it has one.
std::optional<Mesh> meshOf(mlir::Operation *op);

} // namespace parc::rt

#endif // PARC_DIALECTS_RT_RTDIALECT_H
