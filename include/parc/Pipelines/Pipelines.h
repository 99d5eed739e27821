//===- Pipelines.h - pass pipelines shared by parc and parc-opt -*- C++ -*-===//

#ifndef PARC_PIPELINES_PIPELINES_H
#define PARC_PIPELINES_PIPELINES_H

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"
#include "mlir/Pass/PassRegistry.h"

namespace parc {

/// Imported nn IR → folded, deduplicated nn IR with fused blocks.
void buildNNOptimizePipeline(mlir::OpPassManager &pm);

/// Fused nn IR → one rank's rt program with a planned arena; recognised
/// attention runs as one fused kernel unless `fusedAttention` is false.
void buildLowerToRTPipeline(mlir::OpPassManager &pm,
                            bool fusedAttention = true);

/// A planned rt program → emitc: repeated layers rolled into loops
/// (rt-reroll), then convert-rt-to-emitc.
void buildRTToEmitCPipeline(mlir::OpPassManager &pm);

/// Options of the tensor(+sequence)-parallel pipeline.
struct TensorParallelOptions
    : public mlir::PassPipelineOptions<TensorParallelOptions> {
  Option<int64_t> tp{*this, "tp", llvm::cl::desc("tensor-parallel degree"),
                     llvm::cl::init(2)};
  Option<bool> sp{*this, "sp",
                  llvm::cl::desc("sequence parallelism (Megatron-SP)"),
                  llvm::cl::init(false)};
  Option<bool> explain{*this, "explain",
                       llvm::cl::desc("remark on every region and resharding"),
                       llvm::cl::init(false)};
};

/// Fused nn IR → one SPMD rank program over a `tp` mesh: dist-annotate,
/// dist-propagate, dist-partition, dist-comm.
void buildTensorParallelPipeline(mlir::OpPassManager &pm,
                                 const TensorParallelOptions &options);

/// Registers every pipeline under its `parc-…` name for parc-opt.
void registerPipelines();

} // namespace parc

#endif // PARC_PIPELINES_PIPELINES_H
