//===- Passes.h - passes over the nn dialect --------------------*- C++ -*-===//

#ifndef PARC_TRANSFORMS_NN_PASSES_H
#define PARC_TRANSFORMS_NN_PASSES_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Pass/Pass.h"

namespace parc::nn {

#define GEN_PASS_DECL
#include "parc/Transforms/NN/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "parc/Transforms/NN/Passes.h.inc"

} // namespace parc::nn

#endif // PARC_TRANSFORMS_NN_PASSES_H
