//===- Pipelines.h - pass pipelines shared by parc and parc-opt -*- C++ -*-===//

#ifndef PARC_PIPELINES_PIPELINES_H
#define PARC_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassManager.h"

namespace parc {

/// Imported nn IR → folded, deduplicated nn IR with fused blocks.
void buildNNOptimizePipeline(mlir::OpPassManager &pm);

/// Fused nn IR → one rank's rt program with a planned arena.
void buildLowerToRTPipeline(mlir::OpPassManager &pm);

/// Registers every pipeline under its `parc-…` name for parc-opt.
void registerPipelines();

} // namespace parc

#endif // PARC_PIPELINES_PIPELINES_H
