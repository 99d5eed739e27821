//===- NNOps.h - ops of the nn dialect --------------------------*- C++ -*-===//

#ifndef PARC_DIALECTS_NN_NNOPS_H
#define PARC_DIALECTS_NN_NNOPS_H

#include "mlir/Dialect/Traits.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "nn/NNDialect.h"

#define GET_OP_CLASSES
#include "nn/NNOps.h.inc"

namespace parc::nn {

/// Shape of broadcasting `lhs` and `rhs` with numpy rules, or failure.
mlir::FailureOr<llvm::SmallVector<int64_t>>
broadcastShapes(llvm::ArrayRef<int64_t> lhs, llvm::ArrayRef<int64_t> rhs);

/// The result shape of ONNX MatMul on these operand shapes, or failure.
mlir::FailureOr<llvm::SmallVector<int64_t>>
matmulShape(llvm::ArrayRef<int64_t> lhs, llvm::ArrayRef<int64_t> rhs);

/// Why an ONNX external-data `location` may not be read (empty, a NUL byte,
/// an absolute path, a `..` component), or "" when it names a path inside
/// the model's folder. Symlinks are the importer's to resolve.
std::string externalLocationProblem(llvm::StringRef location);

/// While one lives, nn folders make no constant of more than `maxBytes`
/// (on top of their own element bound): the importer's
/// --max-constant-bytes, which also bounds what it computes itself.
class FoldBudget {
public:
  explicit FoldBudget(int64_t maxBytes);
  ~FoldBudget();
  FoldBudget(const FoldBudget &) = delete;
  FoldBudget &operator=(const FoldBudget &) = delete;

private:
  int64_t saved;
};

} // namespace parc::nn

#endif // PARC_DIALECTS_NN_NNOPS_H
