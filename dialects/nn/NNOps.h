//===- NNOps.h - ops of the nn dialect --------------------------*- C++ -*-===//

#ifndef PARC_DIALECTS_NN_NNOPS_H
#define PARC_DIALECTS_NN_NNOPS_H

#include "mlir/Dialect/Traits.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributeInterfaces.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/Interfaces/ControlFlowInterfaces.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
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

/// Whether `v` is a model weight: a tensor fixed at compile time, held as
/// the elements of an arith.constant (an embedded initializer, or a value
/// folded from the graph) or referenced by an nn.external_weight (ONNX
/// external data, read only when the weight writer cuts it), possibly
/// through nn.cast ops (a bf16/f16 checkpoint cast to f32 before use). Every
/// rule that splits, pads, places or counts weights asks this, so an
/// external or cast weight is as constant as an embedded one.
bool isWeight(mlir::Value v);

/// The stored weight `v` is (the constant or nn.external_weight under its
/// casts; `v` itself when it has none), or null when `v` is no weight.
mlir::Value weightSource(mlir::Value v);

/// The embedded elements of the weight `v`; null for an external weight (its
/// bytes are not in the IR) and for a value that is no weight.
mlir::ElementsAttr weightElements(mlir::Value v);

/// The dim of graph input `k` of `main` (its output `k` with `result`) that
/// holds the batch: the importer's `onnx.batch_dim` where the model names
/// it at another dim (a past stacking K and V first), else 0.
int64_t batchDim(mlir::FunctionOpInterface main, unsigned k,
                 bool result = false);

/// The unit attribute that marks a module's entry function where it has
/// more than one public function.
inline constexpr llvm::StringLiteral kEntryAttr = "parc.entry";

/// The model's entry function in `module`, which whole-module passes
/// (`pass`, named in the error) transform: the one function marked
/// `parc.entry`, else the one public function with a body (what the ONNX
/// importer writes). An error on `module` when there is no such function.
mlir::FailureOr<mlir::FunctionOpInterface>
entryFunction(mlir::ModuleOp module, llvm::StringRef pass);

/// Whether `f` is a model's graph rather than a callee or a declaration:
/// it has a body and is public (function passes skip the others).
bool isGraphFunction(mlir::FunctionOpInterface f);

/// The argument attribute naming an input's part in the token loop
/// (nn-kv-cache: cache, position, tokens, positions, attention_mask).
inline constexpr llvm::StringLiteral kKVRoleAttr = "parc.kv_role";

/// Whether `v` is a KV cache: a function argument nn-kv-cache made the
/// persistent state of generation. Sharding passes split it as the
/// attention reading it is split, on its own argument, never by a copy.
bool isKVCache(mlir::Value v);

} // namespace parc::nn

#endif // PARC_DIALECTS_NN_NNOPS_H
