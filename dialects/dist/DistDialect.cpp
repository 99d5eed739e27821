//===- DistDialect.cpp - the dist dialect -----------------------*- C++ -*-===//
//
// Registers the dist dialect and verifies its discardable attributes:
// `dist.stage` on ops and `dist.sharding` on function arguments and results.
//
//===----------------------------------------------------------------------===//

#include "dist/DistDialect.h"
#include "dist/DistInterfaces.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace parc::dist;

#include "dist/DistDialect.cpp.inc"
#include "dist/DistEnums.cpp.inc"
#include "dist/DistInterfaces.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "dist/DistTypes.cpp.inc"

void DistDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "dist/DistOps.cpp.inc"
      >();
  registerAttributes();
  addTypes<
#define GET_TYPEDEF_LIST
#include "dist/DistTypes.cpp.inc"
      >();
}

LogicalResult DistDialect::verifyOperationAttribute(Operation *op,
                                                    NamedAttribute attr) {
  if (attr.getName() == StageAttrHelper::getNameStr()) {
    auto stage = dyn_cast<IntegerAttr>(attr.getValue());
    if (!stage || !stage.getType().isInteger() || stage.getInt() < 0)
      return op->emitError()
             << "'" << attr.getName().getValue()
             << "' must be a non-negative integer, got " << attr.getValue();
    return success();
  }
  if (attr.getName() == ShardingAttrHelper::getNameStr())
    return op->emitError() << "'" << attr.getName().getValue()
                           << "' belongs on function arguments and results; "
                              "annotate values with dist.shard";
  // The layouts dist-annotate/dist-propagate leave for dist-partition.
  if (attr.getName() == "dist.result_shardings") {
    auto list = dyn_cast<ArrayAttr>(attr.getValue());
    if (!list || !llvm::all_of(list, llvm::IsaPred<ShardingAttr>) ||
        list.size() != op->getNumResults())
      return op->emitError() << "'dist.result_shardings' must list one "
                                "#dist.sharding per result ("
                             << op->getNumResults() << "), got "
                             << attr.getValue();
    return success();
  }
  // Other `dist.*` attributes are markers passes leave for the driver
  // (e.g. `dist.tp_regions`); they carry no IR semantics.
  return success();
}

/// `dist.sharding` on a region argument or result: the layout of the global
/// value it holds. The value may already have its local type, so only the
/// mesh and its axes are checked, not the shape.
static LogicalResult verifyBoundarySharding(Operation *op, NamedAttribute attr,
                                            StringRef what, unsigned index) {
  if (attr.getName() == DistDialect::StageAttrHelper::getNameStr())
    return op->emitError() << "'" << attr.getName().getValue()
                           << "' belongs on ops, not on " << what << " "
                           << index;
  if (attr.getName() != DistDialect::ShardingAttrHelper::getNameStr())
    return success();
  auto sharding = dyn_cast<ShardingAttr>(attr.getValue());
  if (!sharding)
    return op->emitError() << "'" << attr.getName().getValue() << "' on "
                           << what << " " << index
                           << " must be a #dist.sharding, got "
                           << attr.getValue();
  return verifyShardingUse(sharding, std::nullopt, op, /*tables=*/nullptr,
                           [&] { return op->emitError(); });
}

LogicalResult DistDialect::verifyRegionArgAttribute(Operation *op, unsigned,
                                                    unsigned argIndex,
                                                    NamedAttribute attr) {
  return verifyBoundarySharding(op, attr, "argument", argIndex);
}

LogicalResult DistDialect::verifyRegionResultAttribute(Operation *op, unsigned,
                                                       unsigned resultIndex,
                                                       NamedAttribute attr) {
  return verifyBoundarySharding(op, attr, "result", resultIndex);
}
