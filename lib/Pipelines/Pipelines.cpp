//===- Pipelines.cpp - pass pipelines shared by parc and parc-opt ---------===//

#include "parc/Pipelines/Pipelines.h"
#include "parc/Conversion/Passes.h"
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

void parc::buildLowerToRTPipeline(OpPassManager &pm) {
  pm.addPass(createConvertNNToRT());
  pm.addNestedPass<func::FuncOp>(rt::createRTPlanMemory());
}

void parc::registerPipelines() {
  PassPipelineRegistration<>(
      "parc-nn-optimize",
      "Fold, deduplicate and fuse imported nn IR (what `parc` runs after import)",
      buildNNOptimizePipeline);
  PassPipelineRegistration<>(
      "parc-lower-to-rt",
      "Lower fused nn IR to a rank program with a planned arena",
      buildLowerToRTPipeline);
}
