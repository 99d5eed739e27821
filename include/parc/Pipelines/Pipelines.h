//===- Pipelines.h - pass pipelines shared by parc and parc-opt -*- C++ -*-===//

#ifndef PARC_PIPELINES_PIPELINES_H
#define PARC_PIPELINES_PIPELINES_H

#include "parc/Pipelines/CompileOptions.h"

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

/// A named stretch of a pipeline (what `parc compile --dump-ir` writes a
/// file after): its first and last top-level passes, an OpToOpPassAdaptor
/// for a nested pass. Instrumentation matches them by identity.
struct PipelineStage {
  std::string name;
  const mlir::Pass *first, *last;
};
using PipelineStages = llvm::SmallVectorImpl<PipelineStage>;

/// The whole-model part of `parc compile`, imported nn IR → one
/// partitioned program (pipeline stages marked, not cut): nn-optimize,
/// dist-split-batch (options.splitBatch), nn-kv-cache (maxSeq), then
/// buildParcPartitionPipeline. Adds every stage it builds to `stages`.
void buildParcPipeline(mlir::OpPassManager &pm, const CompileOptions &options,
                       PipelineStages *stages = nullptr);
/// Its first half: buildNNOptimizePipeline, dist-split-batch, nn-kv-cache
/// (what `--auto` plans on).
void buildParcOptimizePipeline(mlir::OpPassManager &pm,
                               const CompileOptions &options,
                               PipelineStages *stages = nullptr);
/// Its second half: nn-convert-dtype, the tensor-parallel passes,
/// dist-expert-parallel, dist-pipeline or dist-micro-batch.
void buildParcPartitionPipeline(mlir::OpPassManager &pm,
                                const CompileOptions &options,
                                PipelineStages *stages = nullptr);
/// One rank program from buildParcPipeline's output, to a planned rt
/// program: dist-extract-stage of `stage` (with pp > 1), dist-overlap,
/// buildLowerToRTPipeline. buildRTToEmitCPipeline follows.
void buildParcStagePipeline(mlir::OpPassManager &pm,
                            const CompileOptions &options, int64_t stage,
                            PipelineStages *stages = nullptr);
/// The name of stage `stage`'s program: "main" without pipeline stages.
std::string stageProgramName(const CompileOptions &options, int64_t stage);

/// Registers every pipeline under its `parc-…` name for parc-opt.
void registerPipelines();

} // namespace parc

#endif // PARC_PIPELINES_PIPELINES_H
