//===- NNDialect.h - the nn dialect -----------------------------*- C++ -*-===//
//
// Declares the nn dialect, its enums and attributes.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_DIALECTS_NN_NNDIALECT_H
#define PARC_DIALECTS_NN_NNDIALECT_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Dialect.h"

#include "nn/NNDialect.h.inc"
#include "nn/NNEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "nn/NNAttrs.h.inc"

#endif // PARC_DIALECTS_NN_NNDIALECT_H
