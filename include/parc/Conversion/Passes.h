//===- Passes.h - conversions between parc's dialects -----------*- C++ -*-===//

#ifndef PARC_CONVERSION_PASSES_H
#define PARC_CONVERSION_PASSES_H

#include "rt/RTDialect.h"

#include "mlir/Dialect/EmitC/IR/EmitC.h"

#include "mlir/Pass/Pass.h"

namespace parc {

#define GEN_PASS_DECL
#include "parc/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "parc/Conversion/Passes.h.inc"

} // namespace parc

#endif // PARC_CONVERSION_PASSES_H
