//===- NNCost.h - the cost of an nn op --------------------------*- C++ -*-===//
//
// nn's CostOpInterface (NNInterfaces.td): FLOPs and memory traffic of one
// op, the single count dist-pipeline, dist-overlap and the planner read.
// The models, one per op family, are in NNCost.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_DIALECTS_NN_NNCOST_H
#define PARC_DIALECTS_NN_NNCOST_H

#include "mlir/IR/OpDefinition.h"

#include <cstdint>

namespace parc::nn {

/// Memory traffic of one op: activation elements read and written, weight
/// elements read; in elements (for pricing at another dtype) and in bytes
/// at the IR's element widths.
struct Traffic {
  int64_t activationElems = 0, weightElems = 0;
  int64_t activationBytes = 0, weightBytes = 0;

  /// Counts `v` `times` over as activation traffic.
  Traffic &activation(mlir::Value v, int64_t times = 1);
  /// Counts `v` once as weight traffic.
  Traffic &weight(mlir::Value v);
  /// Counts `v` as a weight when nn::isWeight says so, else an activation.
  Traffic &operand(mlir::Value v);
};

/// Attaches the cost models to the nn ops; NNDialect::initialize calls it.
void attachCostModels(mlir::MLIRContext *ctx);

/// The op's FLOPs through CostOpInterface; 0 for an op without it
/// (constants, function ops, collectives: no arithmetic of their own).
int64_t flopsOf(mlir::Operation *op);

/// The op's traffic through CostOpInterface; none for an op without it.
Traffic trafficOf(mlir::Operation *op);

} // namespace parc::nn

#include "nn/NNInterfaces.h.inc"

#endif // PARC_DIALECTS_NN_NNCOST_H
