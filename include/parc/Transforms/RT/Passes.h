//===- Passes.h - passes over the rt dialect --------------------*- C++ -*-===//

#ifndef PARC_TRANSFORMS_RT_PASSES_H
#define PARC_TRANSFORMS_RT_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace parc::rt {

#define GEN_PASS_DECL
#include "parc/Transforms/RT/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "parc/Transforms/RT/Passes.h.inc"

} // namespace parc::rt

#endif // PARC_TRANSFORMS_RT_PASSES_H
