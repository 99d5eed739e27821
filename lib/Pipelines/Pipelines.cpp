//===- Pipelines.cpp - pass pipelines shared by parc and parc-opt ---------===//

#include "parc/Pipelines/Pipelines.h"
#include "parc/Conversion/Passes.h"
#include "parc/Transforms/Dist/Passes.h"
#include "parc/Transforms/NN/Passes.h"
#include "parc/Transforms/RT/Passes.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void parc::buildNNOptimizePipeline(OpPassManager &pm) {
  // CSE first: exporters duplicate subexpressions (LayerNorm's x - mean is
  // often computed twice), which would hide the patterns nn-fuse looks for.
  pm.addPass(nn::createNNCanonicalize());
  pm.addPass(createCSEPass());
  pm.addPass(nn::createNNFuse());
  // MoE blocks are found through the linears and SiLUs nn-fuse produced.
  pm.addPass(nn::createNNFuseMoE());
  pm.addPass(nn::createNNCanonicalize());
  pm.addPass(createCSEPass());
}

void parc::buildLowerToRTPipeline(OpPassManager &pm, bool fusedAttention) {
  ConvertNNToRTOptions options;
  options.fusedAttention = fusedAttention;
  pm.addPass(createConvertNNToRT(options));
  pm.addNestedPass<func::FuncOp>(rt::createRTPlanMemory());
}

void parc::buildRTToEmitCPipeline(OpPassManager &pm) {
  pm.addNestedPass<func::FuncOp>(rt::createRTReroll());
  pm.addPass(createConvertRTToEmitC());
}

void parc::buildTensorParallelPipeline(OpPassManager &pm,
                                       const TensorParallelOptions &options) {
  dist::DistAnnotateOptions annotate;
  annotate.tp = options.tp;
  annotate.sp = options.sp;
  annotate.explain = options.explain;
  pm.addPass(dist::createDistAnnotate(annotate));
  dist::DistPropagateOptions propagate;
  propagate.explain = options.explain;
  pm.addPass(dist::createDistPropagate(propagate));
  pm.addPass(dist::createDistPartition());
  // A table read by a vocabulary-parallel embedding and a tied LM head is
  // cut alike for both: one part per rank, not two.
  pm.addPass(createCSEPass());
  pm.addPass(dist::createDistComm());
}

void parc::registerPipelines() {
  PassPipelineRegistration<TensorParallelOptions>(
      "dist-tensor-parallel",
      "Megatron tensor (and with sp=true sequence) parallelism: "
      "dist-annotate, dist-propagate, dist-partition, dist-comm",
      buildTensorParallelPipeline);
  PassPipelineRegistration<>(
      "parc-nn-optimize",
      "Fold, deduplicate and fuse imported nn IR (what `parc` runs after import)",
      buildNNOptimizePipeline);
  PassPipelineRegistration<>(
      "parc-lower-to-rt",
      "Lower fused nn IR to a rank program with a planned arena",
      [](OpPassManager &pm) { buildLowerToRTPipeline(pm); });
  PassPipelineRegistration<>(
      "parc-rt-to-emitc",
      "Roll repeated layers and convert a rank program to emitc",
      buildRTToEmitCPipeline);
}
