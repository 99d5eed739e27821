//===- RTDialect.h - the rt dialect -----------------------------*- C++ -*-===//

#ifndef PARC_DIALECTS_RT_RTDIALECT_H
#define PARC_DIALECTS_RT_RTDIALECT_H

#include "mlir/Bytecode/BytecodeOpInterface.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "rt/RTDialect.h.inc"

#define GET_TYPEDEF_CLASSES
#include "rt/RTTypes.h.inc"

#define GET_OP_CLASSES
#include "rt/RTOps.h.inc"

#endif // PARC_DIALECTS_RT_RTDIALECT_H
