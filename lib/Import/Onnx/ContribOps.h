//===- ContribOps.h - onnxruntime's com.microsoft ops -----------*- C++ -*-===//
//
// The fused operators onnxruntime's transformer optimizer and
// onnxruntime-genai's model builder write (Attention, SkipLayerNormalization,
// FastGelu …), imported into the nn ops that parc's fusion and sharding
// already know. Each op's handler here takes the node through NodeContext,
// the importer's view of one node; the importer's op table names the
// handlers' ops, domains and versions. MoE stays in OnnxImporter.cpp.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_LIB_IMPORT_ONNX_CONTRIBOPS_H
#define PARC_LIB_IMPORT_ONNX_CONTRIBOPS_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace onnx {
class NodeProto;
} // namespace onnx

namespace parc::contrib {

/// What a contrib handler reads of one node and writes back: the importer's
/// operands, attributes (type-checked), inferred result types and values.
class NodeContext {
public:
  virtual ~NodeContext() = default;
  virtual const onnx::NodeProto &node() = 0;
  virtual mlir::OpBuilder &builder() = 0;
  virtual mlir::Location loc() = 0;
  /// An error at the node, starting "node 'n' (com.microsoft.Op): ".
  virtual mlir::InFlightDiagnostic error() = 0;
  /// Whether the node gives input `i` (a non-empty name).
  virtual bool has(int i) = 0;
  /// Input `i`; fails (with an error) when it is missing or undefined.
  virtual mlir::FailureOr<mlir::Value> input(int i) = 0;
  virtual int64_t intAttr(llvm::StringRef name, int64_t dflt) = 0;
  virtual float floatAttr(llvm::StringRef name, float dflt) = 0;
  virtual std::optional<llvm::SmallVector<int64_t>>
  intsAttr(llvm::StringRef name) = 0;
  /// The static type of output `i`: ONNX's inferred one, checked against
  /// `computed` when both exist.
  virtual mlir::FailureOr<mlir::RankedTensorType>
  outType(int i, mlir::RankedTensorType computed) = 0;
  /// Whether output `i` is read by a node or is a graph output.
  virtual bool outputUsed(int i) = 0;
  virtual void set(int i, mlir::Value v) = 0;
};

/// Imports one node of an op of onnxruntime's.
using Handler = mlir::LogicalResult (*)(NodeContext &);

/// The handlers, one per op (com.microsoft's, and SimplifiedLayerNormalization
/// which onnxruntime also registers in the default domain).
mlir::LogicalResult attention(NodeContext &c);
mlir::LogicalResult groupQueryAttention(NodeContext &c);
mlir::LogicalResult multiHeadAttention(NodeContext &c);
mlir::LogicalResult rotaryEmbedding(NodeContext &c);
mlir::LogicalResult matMulNBits(NodeContext &c);
mlir::LogicalResult skipLayerNorm(NodeContext &c);
mlir::LogicalResult skipSimplifiedLayerNorm(NodeContext &c);
mlir::LogicalResult simplifiedLayerNorm(NodeContext &c);
mlir::LogicalResult embedLayerNorm(NodeContext &c);
mlir::LogicalResult fastGelu(NodeContext &c);
mlir::LogicalResult biasGelu(NodeContext &c);
mlir::LogicalResult gelu(NodeContext &c);
mlir::LogicalResult quickGelu(NodeContext &c);

/// Registers the ONNX schemas (with shape inference) of those ops, so that
/// the checker and ONNX shape inference know them. Idempotent.
void registerContribOpSchemas();

} // namespace parc::contrib

#endif // PARC_LIB_IMPORT_ONNX_CONTRIBOPS_H
