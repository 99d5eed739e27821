//===- RTDialect.cpp - the rt dialect ---------------------------*- C++ -*-===//

#include "rt/RTDialect.h"
#include "rt/RTKernels.h"

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

std::optional<Mesh> parc::rt::meshOf(Operation *op) {
  auto module = isa<ModuleOp>(op) ? cast<ModuleOp>(op)
                                  : op->getParentOfType<ModuleOp>();
  auto mesh = module ? module->getAttrOfType<DictionaryAttr>("rt.mesh")
                     : DictionaryAttr();
  auto axes = mesh ? mesh.getAs<ArrayAttr>("axes") : ArrayAttr();
  auto shape = mesh ? mesh.getAs<DenseI64ArrayAttr>("shape") : DenseI64ArrayAttr();
  if (!axes || !shape || axes.size() != static_cast<size_t>(shape.size()) ||
      !llvm::all_of(axes, llvm::IsaPred<StringAttr>))
    return std::nullopt;
  return Mesh{llvm::to_vector(axes.getAsValueRange<StringAttr>()),
              llvm::to_vector(shape.asArrayRef())};
}

LogicalResult WeightOp::verify() {
  auto value = getValueAttr();
  // The element type the source holds: the buffer's, unless the writer
  // rounds f32 to it.
  Type stored = getType().getElementType();
  if (Attribute attr = (*this)->getAttr("stored_type")) {
    auto type = dyn_cast<TypeAttr>(attr);
    if (!type || !type.getValue().isF32() ||
        !isa<BFloat16Type, Float16Type>(stored))
      return emitOpError("stored_type is f32, on a bf16 or f16 buffer only");
    stored = type.getValue();
  }
  Attribute shardAttr = (*this)->getAttr("shard");
  SmallVector<int64_t> local;
  if (value)
    local.assign(cast<ShapedType>(value.getType()).getShape().begin(),
                 cast<ShapedType>(value.getType()).getShape().end());
  if (shardAttr) {
    // A sharded weight keeps its global value: the buffer is the rank's
    // part of it, cut by each sharding in turn (a part of a part).
    auto cuts = dyn_cast<ArrayAttr>(shardAttr);
    if (!cuts || cuts.empty() ||
        !llvm::all_of(cuts, llvm::IsaPred<parc::dist::ShardingAttr>))
      return emitOpError("shard must be a list of #dist.sharding, the whole "
                         "weight's first");
    std::optional<Mesh> mesh = meshOf(*this);
    if (!mesh)
      return emitOpError("a sharded weight needs its module's rt.mesh");
    SmallVector<int64_t> origin(mesh->shape.size(), 0);
    for (auto cut : cuts.getAsRange<parc::dist::ShardingAttr>()) {
      if (cut.isPartial() || !cut.getShardSizes().empty())
        return emitOpError() << "shard " << cut
                             << " gives ranks parts of different shapes";
      if (!value)
        continue;
      if (failed(cut.verifyShape(local, mesh->shape, mesh->axes,
                                 [&] { return emitOpError(); })))
        return failure();
      local = *cut.getLocalShape(local, mesh->shape, mesh->axes, origin);
    }
  }
  if (!value) {
    // An external part: the writer cuts it from the file's tensor, padded.
    auto padding = (*this)->getAttrOfType<DenseI64ArrayAttr>("padding");
    if (padding && (int64_t)padding.size() != getType().getRank())
      return emitOpError("padding needs one entry per dim");
    return success();
  }
  if (getType().getShape() != ArrayRef(local) ||
      cast<ShapedType>(value.getType()).getElementType() != stored)
    return emitOpError("value must have the buffer's shape and element type "
                       "(its shard's part of them)");
  return success();
}

LogicalResult ViewOp::verify() {
  if (getSource().getType().getNumElements() != getType().getNumElements() ||
      getSource().getType().getElementType() != getType().getElementType())
    return emitOpError("a view keeps the element type and count");
  return success();
}

LogicalResult KernelOp::verify() {
  return verifyKernelCall(*this, getCallee(), getIns(), getOuts(),
                          (*this)->getDiscardableAttrDictionary(),
                          /*started=*/false);
}

LogicalResult StartOp::verify() {
  if (getOuts().empty() && getIns().empty())
    return emitOpError("an asynchronous call moves at least one buffer");
  if (!getRequest().hasOneUse() || !isa<WaitOp>(*getRequest().getUsers().begin()))
    return emitOpError("its request must be completed by exactly one rt.wait");
  return verifyKernelCall(*this, getCallee(), getIns(), getOuts(),
                          (*this)->getDiscardableAttrDictionary(),
                          /*started=*/true);
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

OperandRange RepeatOp::getIteration(int64_t i) {
  int64_t width = getBody().getNumArguments();
  return getBindings().slice(i * width, width);
}

LogicalResult RepeatOp::verify() {
  Block &body = getBody().front();
  int64_t width = body.getNumArguments(), count = getCount();
  if (static_cast<int64_t>(getBindings().size()) != count * width)
    return emitOpError() << "binds " << getBindings().size()
                         << " buffers, not count x block arguments ("
                         << count << " x " << width << ")";
  for (int64_t i = 0; i < count; ++i)
    if (getIteration(i).getTypes() != body.getArgumentTypes())
      return emitOpError() << "iteration " << i
                           << " binds buffers of other types than the body's "
                              "arguments";
  for (Operation &op : body)
    if (!isa<KernelOp, StartOp, WaitOp>(op))
      return op.emitOpError("cannot be repeated: an rt.repeat body holds only "
                            "rt.kernel, rt.start and rt.wait");
  int64_t ops = std::distance(body.begin(), body.end());
  if (static_cast<int64_t>(getLocations().size()) != count * ops ||
      !llvm::all_of(getLocations(), llvm::IsaPred<LocationAttr>))
    return emitOpError() << "needs one location per iteration and body op ("
                         << count * ops << "), has "
                         << getLocations().size();
  // Requests do not outlive an iteration: the body is isolated and each
  // rt.wait follows its rt.start in the same block.
  return success();
}
