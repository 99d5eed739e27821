//===- Matchers.h - small value matchers shared by the nn fusions ---------===//
//
// nn-fuse and nn-fuse-moe recognise exported subgraphs by the constants in
// them; these are the queries both ask.
//
//===----------------------------------------------------------------------===//
#ifndef PARC_TRANSFORMS_NN_MATCHERS_H
#define PARC_TRANSFORMS_NN_MATCHERS_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Matchers.h"

#include <optional>

namespace parc::nn {

inline mlir::RankedTensorType tensorType(mlir::Value v) {
  return mlir::cast<mlir::RankedTensorType>(v.getType());
}

/// The value of a constant whose elements are all equal. Exporters write
/// scalars with shape [] or [1]; callers check that the constant does not
/// broadcast the other operand.
inline std::optional<double> splatValue(mlir::Value v) {
  mlir::DenseElementsAttr attr;
  if (!v || !mlir::matchPattern(v, mlir::m_Constant(&attr)) || !attr.isSplat())
    return std::nullopt;
  mlir::Type et = attr.getElementType();
  if (mlir::isa<mlir::FloatType>(et))
    return attr.getSplatValue<llvm::APFloat>().convertToDouble();
  if (et.isSignlessInteger() && !et.isInteger(1))
    return (double)attr.getSplatValue<llvm::APInt>().getSExtValue();
  return std::nullopt;
}

} // namespace parc::nn

#endif // PARC_TRANSFORMS_NN_MATCHERS_H
