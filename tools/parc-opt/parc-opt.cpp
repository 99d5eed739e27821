//===- parc-opt.cpp - every parc dialect and pass, for lit tests ----------===//

#include "dist/DistDialect.h"
#include "nn/NNOps.h"
#include "nn/ShardingRules.h"
#include "parc/Conversion/Passes.h"
#include "parc/Pipelines/Pipelines.h"
#include "parc/Support/Version.h"
#include "parc/Transforms/Dist/Passes.h"
#include "parc/Transforms/NN/Passes.h"
#include "parc/Transforms/RT/Passes.h"
#include "rt/RTDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/EmitC/IR/EmitC.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  llvm::cl::SetVersionPrinter(
      [](llvm::raw_ostream &os) { parc::printVersion(os); });
  mlir::DialectRegistry registry;
  registry
      .insert<parc::nn::NNDialect, parc::dist::DistDialect, parc::rt::RTDialect,
              mlir::arith::ArithDialect, mlir::func::FuncDialect,
              mlir::memref::MemRefDialect, mlir::emitc::EmitCDialect>();
  parc::nn::registerShardingRuleModels(registry);
  mlir::registerTransformsPasses();
  parc::nn::registerNNPasses();
  parc::rt::registerRTPasses();
  parc::dist::registerDistPasses();
  parc::registerConversionPasses();
  parc::registerPipelines();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "parc optimizer driver\n", registry));
}
