//===- NNDialect.cpp - the nn dialect ---------------------------*- C++ -*-===//

#include "nn/NNDialect.h"
#include "nn/NNCost.h"
#include "nn/NNOps.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace parc::nn;

#include "nn/NNDialect.cpp.inc"
#include "nn/NNEnums.cpp.inc"

#define GET_ATTRDEF_CLASSES
#include "nn/NNAttrs.cpp.inc"

void NNDialect::initialize() {
  addOperations<
#define GET_OP_LIST
#include "nn/NNOps.cpp.inc"
      >();
  addAttributes<
#define GET_ATTRDEF_LIST
#include "nn/NNAttrs.cpp.inc"
      >();
  attachCostModels(getContext());
}

/// Folded values become arith.constant: weights and folded shape tensors
/// share one representation.
Operation *NNDialect::materializeConstant(OpBuilder &builder, Attribute value,
                                          Type type, Location loc) {
  auto typed = dyn_cast<TypedAttr>(value);
  if (!typed || typed.getType() != type)
    return nullptr;
  return arith::ConstantOp::create(builder, loc, type, typed);
}
