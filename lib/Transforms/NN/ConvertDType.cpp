//===- ConvertDType.cpp - nn-convert-dtype ----------------------*- C++ -*-===//
//
// Every nn op is generic in its float element type, so changing the compute
// dtype is a retyping of values plus a conversion of constant data; casts at
// the function boundary keep the program's interface in f32.
//
// A model's initializers (blobs, mapped from the model file, and external
// data) are not converted here: they keep their f32 and take a cast, which
// the lowering to rt folds into the weight (rt.weight's `stored_type`), so
// the shard writer rounds them as it streams and the compiler never holds
// a converted copy. Small inline constants are converted in place.
//
//===----------------------------------------------------------------------===//

#include "nn/NNOps.h"
#include "parc/Transforms/NN/Passes.h"

#include "mlir/IR/BuiltinAttributes.h"

#define DEBUG_TYPE "nn-convert-dtype"

namespace parc::nn {
#define GEN_PASS_DEF_NNCONVERTDTYPE
#include "parc/Transforms/NN/Passes.h.inc"
} // namespace parc::nn

using namespace mlir;
using namespace parc::nn;

namespace {

/// `type` with f32 elements replaced by `target`, or null if unchanged.
RankedTensorType retype(Type type, FloatType target) {
  auto t = dyn_cast<RankedTensorType>(type);
  if (!t || !t.getElementType().isF32())
    return {};
  return RankedTensorType::get(t.getShape(), target);
}

/// The elements of an f32 constant, rounded to `target`.
FailureOr<ElementsAttr> convertConstant(ElementsAttr value, RankedTensorType type) {
  auto et = cast<FloatType>(type.getElementType());
  SmallVector<APFloat> out;
  auto round = [&](float x) {
    APFloat v(x);
    bool lost;
    v.convert(et.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
    out.push_back(v);
  };
  if (auto dense = dyn_cast<DenseElementsAttr>(value)) {
    if (dense.isSplat())
      return ElementsAttr(DenseElementsAttr::get(
          type, [&] { round(dense.getSplatValue<float>()); return out[0]; }()));
    for (float x : dense.getValues<float>())
      round(x);
    return ElementsAttr(DenseElementsAttr::get(type, out));
  }
  return failure();
}

struct NNConvertDTypePass
    : parc::nn::impl::NNConvertDTypeBase<NNConvertDTypePass> {
  using Base::Base;

  void runOnOperation() override {
    FunctionOpInterface func = getOperation();
    if (func.isExternal())
      return;
    MLIRContext *ctx = &getContext();
    FloatType target;
    if (dtype == "bf16")
      target = BFloat16Type::get(ctx);
    else if (dtype == "f16")
      target = Float16Type::get(ctx);
    else {
      func.emitError() << "nn-convert-dtype: dtype must be bf16 or f16, not '"
                       << dtype << "'";
      return signalPassFailure();
    }

    // The boundary: f32 arguments are cast on entry, results on return.
    Block &entry = func.getFunctionBody().front();
    OpBuilder b(ctx);
    llvm::DenseSet<Value> boundary;
    b.setInsertionPointToStart(&entry);
    for (BlockArgument arg : entry.getArguments()) {
      RankedTensorType t = retype(arg.getType(), target);
      if (!t)
        continue;
      auto cast = CastOp::create(b, arg.getLoc(), arg.getType(), arg);
      arg.replaceAllUsesExcept(cast, cast);
      boundary.insert(arg);
    }
    Operation *ret = entry.getTerminator();
    b.setInsertionPoint(ret);
    for (OpOperand &operand : ret->getOpOperands()) {
      if (!retype(operand.get().getType(), target))
        continue;
      auto cast = CastOp::create(b, ret->getLoc(), operand.get().getType(),
                                 operand.get());
      operand.set(cast);
      boundary.insert(cast);
    }

    // Retype every other f32 value; constants convert their data.
    WalkResult result = func.walk([&](Operation *op) {
      for (Region &region : op->getRegions())
        for (Block &block : region)
          for (BlockArgument arg : block.getArguments())
            if (!boundary.contains(arg))
              if (RankedTensorType t = retype(arg.getType(), target))
                arg.setType(t);
      for (Value v : op->getResults()) {
        RankedTensorType t = retype(v.getType(), target);
        if (!t || boundary.contains(v))
          continue;
        ElementsAttr elements = weightElements(v);
        if (elements && !isa<DenseResourceElementsAttr>(elements)) {
          auto value = convertConstant(elements, t);
          if (failed(value)) {
            op->emitOpError("has a constant that cannot be converted to ") << target;
            return WalkResult::interrupt();
          }
          cast<arith::ConstantOp>(op).setValueAttr(cast<TypedAttr>(*value));
        } else if (weightSource(v) == v) {
          // An initializer, embedded or external: stored f32, rounded by
          // the shard writer (the cast folds into its rt.weight).
          b.setInsertionPointAfter(op);
          auto converted = CastOp::create(b, op->getLoc(), t, v);
          v.replaceAllUsesExcept(converted, converted);
          continue;
        }
        v.setType(t);
      }
      return WalkResult::advance();
    });
    if (result.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
