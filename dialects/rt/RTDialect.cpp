//===- RTDialect.cpp - the rt dialect ---------------------------*- C++ -*-===//

#include "rt/RTDialect.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace parc::rt;

#include "rt/RTDialect.cpp.inc"

#define GET_TYPEDEF_CLASSES
#include "rt/RTTypes.cpp.inc"

void RTDialect::initialize() {
  addTypes<
#define GET_TYPEDEF_LIST
#include "rt/RTTypes.cpp.inc"
      >();
  addOperations<
#define GET_OP_LIST
#include "rt/RTOps.cpp.inc"
      >();
}

LogicalResult AllocOp::verify() {
  if (!getType().hasStaticShape() || !getType().getLayout().isIdentity())
    return emitOpError("buffers are static, contiguous memrefs");
  if (getOffsetAttr() && getOffsetAttr().getInt() < 0)
    return emitOpError("offset must be non-negative");
  return success();
}

LogicalResult WeightOp::verify() {
  auto value = getValueAttr();
  if (!value && !(*this)->hasAttr("shard"))
    return success();
  SmallVector<int64_t> expected(getType().getShape());
  // A sharded weight keeps its global value: the buffer is one part of it
  // (a part of a part with a nested "then" cut).
  for (auto shard = (*this)->getAttrOfType<DictionaryAttr>("shard"); shard;
       shard = dyn_cast_or_null<DictionaryAttr>(shard.get("then"))) {
    auto dim = dyn_cast_or_null<IntegerAttr>(shard.get("dim"));
    auto parts = dyn_cast_or_null<IntegerAttr>(shard.get("parts"));
    if (!dim || !parts || !isa_and_nonnull<StringAttr>(shard.get("axis")) ||
        dim.getInt() < 0 || dim.getInt() >= getType().getRank() ||
        parts.getInt() < 1)
      return emitOpError("shard needs dim, parts and axis");
    expected[dim.getInt()] *= parts.getInt();
  }
  if (!value) {
    // An external part: the writer cuts it from the file's tensor, padded.
    auto padding = (*this)->getAttrOfType<DenseI64ArrayAttr>("padding");
    if (padding && (int64_t)padding.size() != getType().getRank())
      return emitOpError("padding needs one entry per dim");
    return success();
  }
  auto global = cast<ShapedType>(value.getType());
  if (global.getShape() != ArrayRef(expected) ||
      global.getElementType() != getType().getElementType())
    return emitOpError("value must have the buffer's shape and element type "
                       "(times the shard's parts)");
  return success();
}

LogicalResult ViewOp::verify() {
  if (getSource().getType().getNumElements() != getType().getNumElements() ||
      getSource().getType().getElementType() != getType().getElementType())
    return emitOpError("a view keeps the element type and count");
  return success();
}

LogicalResult KernelOp::verify() {
  // A send only reads its buffer.
  if (getOuts().empty() && getCallee() != "send")
    return emitOpError("a kernel writes at least one buffer");
  return success();
}

LogicalResult StartOp::verify() {
  if (getOuts().empty() && getIns().empty())
    return emitOpError("an asynchronous call moves at least one buffer");
  if (!getRequest().hasOneUse() || !isa<WaitOp>(*getRequest().getUsers().begin()))
    return emitOpError("its request must be completed by exactly one rt.wait");
  return success();
}

LogicalResult WaitOp::verify() {
  auto start = getRequest().getDefiningOp<StartOp>();
  if (!start)
    return emitOpError("waits for a request that no rt.start made");
  if (start->getBlock() != (*this)->getBlock() || !start->isBeforeInBlock(*this))
    return emitOpError("must follow its rt.start in the same block");
  return success();
}

SmallVector<NamedAttribute> KernelOp::getParams() {
  SmallVector<NamedAttribute> params;
  for (NamedAttribute attr : (*this)->getDiscardableAttrs())
    params.push_back(attr);
  return params;
}

#define GET_OP_CLASSES
#include "rt/RTOps.cpp.inc"
