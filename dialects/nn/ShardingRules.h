//===- ShardingRules.h - sharding rules of the nn ops -----------*- C++ -*-===//
//
// Attaches dist's ShardingRuleOpInterface to the nn ops (ShardingRules.cpp).
// Every tool that runs the dist passes registers it with its dialects.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_DIALECTS_NN_SHARDINGRULES_H
#define PARC_DIALECTS_NN_SHARDINGRULES_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace parc::nn {

void registerShardingRuleModels(mlir::DialectRegistry &registry);

} // namespace parc::nn

#endif // PARC_DIALECTS_NN_SHARDINGRULES_H
