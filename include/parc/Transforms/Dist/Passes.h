//===- Passes.h - distribution passes ---------------------------*- C++ -*-===//

#ifndef PARC_TRANSFORMS_DIST_PASSES_H
#define PARC_TRANSFORMS_DIST_PASSES_H

#include "dist/DistDialect.h"

#include "mlir/Pass/Pass.h"

namespace parc::dist {

#define GEN_PASS_DECL
#include "parc/Transforms/Dist/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "parc/Transforms/Dist/Passes.h.inc"

} // namespace parc::dist

#endif // PARC_TRANSFORMS_DIST_PASSES_H
