//===- OnnxImporter.cpp - ONNX models into the nn dialect -------*- C++ -*-===//
//
// The importer trusts ONNX for what ONNX knows: the protobuf classes parse the
// file, the ONNX text parser reads lit inputs, and ONNX shape inference (with
// data propagation) types every value once the user has bound the dynamic
// input dims. What ONNX passes as data but parc needs as structure (Reshape's
// shape, Slice's bounds, TopK's k …) must fold to a constant: every op is
// built with createOrFold, so exporters' shape subgraphs collapse as they are
// imported.
//
//===----------------------------------------------------------------------===//

#include "parc/Import/Onnx/OnnxImporter.h"
#include "parc/Import/Onnx/OpTable.h"
#include "ContribOps.h"
#include "RawData.h"
#include "nn/NNOps.h"
#include "parc/Support/CommandLine.h"
#include "parc/Support/MappedFiles.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Utils/IndexingUtils.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Tools/mlir-translate/Translation.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/InterleavedRange.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"

#include "onnx/checker.h"
#include "onnx/defs/parser.h"
#include "onnx/defs/schema.h"
#include "onnx/defs/shape_inference.h"
#include "onnx/onnx_pb.h"
#include "onnx/shape_inference/implementation.h"

#include <cstring>
#include <memory>
#include <functional>
#include <map>
#include <queue>
#include <set>

#define DEBUG_TYPE "import-onnx"

using namespace mlir;
namespace nn = parc::nn;
namespace contrib = parc::contrib;
using parc::kMaxOnnxOpset;
using parc::kMinOnnxOpset;

namespace {

/// libonnx 1.12 knows opsets up to kOnnxOpset (and IR versions up to 8);
/// what the later ones up to kMaxOnnxOpset changed for the ops parc imports
/// is declared in OpsetRegistry.
constexpr int64_t kOnnxOpset = 17;
/// The IR version of opset kMaxOnnxOpset's release (onnx 1.16).
constexpr int64_t kMaxIrVersion = 10;
/// Appended to every broadcasting refusal: what ONNX accepts.
constexpr const char *kBroadcastRule =
    " (ONNX broadcasting aligns shapes from the last dim; each pair of dims "
    "must be equal or one of them 1)";

/// Small integer and bool tensors stay inline (readable shape constants);
/// everything else becomes a dense_resource blob.
bool keepInline(Type elementType, int64_t numElements) {
  if (elementType.isInteger(1))
    return true;
  if (isa<IntegerType>(elementType))
    return numElements <= 4096;
  return numElements <= 16;
}

/// Whether an external tensor is read at import (when its file is at hand)
/// instead of referenced: integer and bool tensors that keepInline keeps
/// inline (shape constants, masks, at most 64K elements) and float scalars
/// (a scale, an epsilon), so that they fold as embedded ones do.
bool readAtImport(RankedTensorType type) {
  Type et = type.getElementType();
  if (isa<FloatType>(et))
    return type.getNumElements() == 1;
  return keepInline(et, type.getNumElements()) &&
         type.getNumElements() <= (1 << 16);
}

/// A domain as the op table and the schemas name it ("ai.onnx" is the
/// default domain, "").
StringRef domainOf(StringRef domain) {
  return domain == "ai.onnx" ? StringRef() : domain;
}
StringRef domainOf(const onnx::NodeProto &node) {
  return domainOf(node.domain());
}

/// How messages and the op table name an op: `com.microsoft.Attention`,
/// or just `Softmax` in the default domain.
std::string qualifiedOp(StringRef domain, StringRef type) {
  return domain.empty() ? type.str() : (domain + "." + type).str();
}

std::string describe(const onnx::NodeProto &node) {
  return "node '" + node.name() + "' (" +
         qualifiedOp(domainOf(node), node.op_type()) + ")";
}

FailureOr<Type> elementType(MLIRContext *ctx, int32_t onnxType) {
  switch (onnxType) {
  case onnx::TensorProto::FLOAT:
    return Type(Float32Type::get(ctx));
  case onnx::TensorProto::FLOAT16:
    return Type(Float16Type::get(ctx));
  case onnx::TensorProto::BFLOAT16:
    return Type(BFloat16Type::get(ctx));
  case onnx::TensorProto::DOUBLE:
    return Type(Float64Type::get(ctx));
  case onnx::TensorProto::INT64:
    return Type(IntegerType::get(ctx, 64));
  case onnx::TensorProto::INT32:
    return Type(IntegerType::get(ctx, 32));
  case onnx::TensorProto::INT16:
    return Type(IntegerType::get(ctx, 16));
  case onnx::TensorProto::INT8:
    return Type(IntegerType::get(ctx, 8));
  case onnx::TensorProto::UINT8:
    return Type(IntegerType::get(ctx, 8, IntegerType::Unsigned));
  case onnx::TensorProto::BOOL:
    return Type(IntegerType::get(ctx, 1));
  default:
    return failure();
  }
}

/// `[a, b, c]`, as diagnostics quote a shape operand.
std::string printShape(ArrayRef<int64_t> dims) {
  std::string out;
  llvm::raw_string_ostream os(out);
  os << '[';
  llvm::interleaveComma(dims, os);
  os << ']';
  return out;
}

/// The size in bytes of a tensor of `shape` and `et`, or failure (with the
/// reason in `why`) when a dim is negative or the size overflows 64 bits.
/// Every shape the importer admits passes here, so that later code (the
/// memory planner, the weight writer, the manifest) can multiply dims freely.
FailureOr<int64_t> tensorBytes(ArrayRef<int64_t> shape, Type et,
                               std::string &why) {
  int64_t bytes = std::max<int64_t>(et.getIntOrFloatBitWidth() / 8, 1);
  for (auto [i, d] : llvm::enumerate(shape)) {
    if (d < 0) {
      why = "dim " + std::to_string(i) + " is " + std::to_string(d) +
            " (dims must be 0 or more)";
      return failure();
    }
  }
  // Zero dims are counted as 1, so that no product of a subset of the dims
  // (a Flatten's rows, a Reshape's known dims) overflows either.
  bool empty = false;
  for (int64_t d : shape) {
    empty |= d == 0;
    if (llvm::MulOverflow(bytes, std::max<int64_t>(d, 1), bytes)) {
      why = "its size overflows 64 bits (dims [";
      for (auto [i, x] : llvm::enumerate(shape))
        why += (i ? ", " : "") + std::to_string(x);
      why += "]; its size in bytes must fit int64)";
      return failure();
    }
  }
  return empty ? 0 : bytes;
}

std::string typeName(int32_t onnxType) {
  if (onnx::TensorProto::DataType_IsValid(onnxType))
    return onnx::TensorProto::DataType_Name(
        static_cast<onnx::TensorProto::DataType>(onnxType));
  // Types of IR versions 9 to 11, which libonnx 1.12 does not name.
  static const char *const newer[] = {
      "FLOAT8E4M3FN", "FLOAT8E4M3FNUZ", "FLOAT8E5M2", "FLOAT8E5M2FNUZ",
      "UINT4",        "INT4",           "FLOAT4E2M1"};
  if (onnxType >= 17 && onnxType < 17 + (int)std::size(newer))
    return newer[onnxType - 17];
  return "type " + std::to_string(onnxType);
}

/// What elementType accepts, for messages that refuse another type.
constexpr const char *kSupportedTypes =
    "parc supports FLOAT, FLOAT16, BFLOAT16, DOUBLE, INT64, INT32, INT16, "
    "INT8, UINT8 and BOOL";

void registerContribSchemas();

/// The default domain's schemas as of the model's opset. libonnx 1.12 stops
/// at opset kOnnxOpset; of the later versions of the ops parc imports, those
/// that changed inputs or attributes are declared here (Split-18's
/// num_outputs, Reduce*-18's axes input, Cast-19's saturate, Gelu-20). The
/// others only add element types (float8, int4 …), which
/// checkElementTypes refuses, so their opset-17 schema holds.
class OpsetRegistry final : public onnx::ISchemaRegistry {
public:
  static const OpsetRegistry &get() {
    static const OpsetRegistry registry;
    return registry;
  }
  const onnx::OpSchema *GetSchema(const std::string &op, int version,
                                  const std::string &domain) const override {
    if (domain.empty() && version > kOnnxOpset) {
      auto it = newer.find(op);
      if (it != newer.end())
        for (const auto &[since, schema] : llvm::reverse(it->second))
          if (since <= version)
            return &schema;
      version = kOnnxOpset;
    }
    return onnx::OpSchemaRegistry::Schema(op, version, domain);
  }

private:
  OpsetRegistry();
  /// `schema` is finalised: a copy of a registered one, or made so (a
  /// second Finalize would count its inputs again).
  void add(onnx::OpSchema schema) {
    int since = schema.SinceVersion();
    newer[schema.Name()].emplace(since, std::move(schema));
  }
  std::map<std::string, std::map<int, onnx::OpSchema>> newer;
};

/// Split-18: `num_outputs` pieces of ceil(dim / n), the last one smaller.
void inferSplit18(const onnx::InferenceFunction &split13,
                  onnx::InferenceContext &ctx) {
  const auto *num = ctx.getAttribute("num_outputs");
  bool sizes = ctx.getNumInputs() > 1 && ctx.getInputType(1);
  if (!num || sizes)
    return split13(ctx);
  int64_t n = num->i();
  if (n < 1 || (size_t)n != ctx.getNumOutputs())
    fail_shape_inference("num_outputs ", n, " must equal the ",
                         ctx.getNumOutputs(), " outputs");
  for (size_t i = 0; i < ctx.getNumOutputs(); ++i)
    onnx::propagateElemTypeFromInputToOutput(ctx, 0, i);
  if (!onnx::hasNInputShapes(ctx, 1))
    return;
  const auto &shape = ctx.getInputType(0)->tensor_type().shape();
  int64_t rank = shape.dim_size();
  const auto *axisAttr = ctx.getAttribute("axis");
  int64_t axis = axisAttr ? axisAttr->i() : 0;
  if (axis < -rank || axis >= rank)
    fail_shape_inference("axis ", axis, " is out of range for rank ", rank);
  axis = axis < 0 ? axis + rank : axis;
  if (!shape.dim(axis).has_dim_value())
    return;
  int64_t dim = shape.dim(axis).dim_value(), chunk = (dim + n - 1) / n;
  for (int64_t i = 0; i < n; ++i) {
    auto *out = ctx.getOutputType(i)->mutable_tensor_type()->mutable_shape();
    *out = shape;
    out->mutable_dim(axis)->set_dim_value(
        std::clamp<int64_t>(dim - i * chunk, 0, chunk));
  }
}

OpsetRegistry::OpsetRegistry() {
  auto at = [](const char *op, int version) {
    return *onnx::OpSchemaRegistry::Schema(op, version, "");
  };
  onnx::OpSchema split = at("Split", 13);
  onnx::InferenceFunction split13 = split.GetTypeAndShapeInferenceFunction();
  split.SinceVersion(18)
      .Attr("num_outputs", "", onnx::AttributeProto::INT, /*required=*/false)
      .TypeAndShapeInferenceFunction([split13](onnx::InferenceContext &ctx) {
        inferSplit18(split13, ctx);
      });
  add(std::move(split));
  // From 18 every reduction takes its axes as ReduceSum-13 does: an
  // optional input, with noop_with_empty_axes.
  for (const char *op :
       {"ReduceMean", "ReduceMax", "ReduceMin", "ReduceProd"}) {
    onnx::OpSchema reduce = at("ReduceSum", 13);
    reduce.SetName(op).SinceVersion(18);
    add(std::move(reduce));
  }
  onnx::OpSchema cast = at("Cast", 13);
  cast.SinceVersion(19).Attr("saturate", "", onnx::AttributeProto::INT,
                             /*required=*/false);
  add(std::move(cast));
  onnx::OpSchema gelu;
  gelu.SetName("Gelu")
      .SetDomain("")
      .SinceVersion(20)
      .Input(0, "X", "", "T")
      .Output(0, "Y", "", "T")
      .TypeConstraint("T",
                      {"tensor(float16)", "tensor(float)", "tensor(double)",
                       "tensor(bfloat16)"},
                      "")
      .Attr("approximate", "", onnx::AttributeProto::STRING,
            std::string("none"))
      .TypeAndShapeInferenceFunction(onnx::propagateShapeAndTypeFromFirstInput)
      .Finalize();
  add(std::move(gelu));
}

class GraphImporter {
public:
  GraphImporter(MLIRContext *ctx, StringRef path, onnx::ModelProto &model)
      : ctx(ctx), builder(ctx), path(path), model(model) {}

  /// Initializers whose raw_data splitRawData left in the model file, and
  /// the mapped file, when blobs may borrow from it instead of copying.
  void leaveRawDataInFile(ArrayRef<StringRef> raw,
                          std::shared_ptr<const llvm::MemoryBuffer> file) {
    for (auto [t, bytes] : llvm::zip(model.graph().initializer(), raw))
      if (!bytes.empty())
        rawData[&t] = bytes;
    mappedFile = std::move(file);
  }

  OwningOpRef<ModuleOp> run(const parc::OnnxImportOptions &options);

private:
  // --- diagnostics --------------------------------------------------------
  Location fileLoc() { return FileLineColLoc::get(ctx, path, 0, 0); }
  Location nodeLoc(const onnx::NodeProto &node) {
    return NameLoc::get(StringAttr::get(ctx, node.name()), fileLoc());
  }
  InFlightDiagnostic error() { return emitError(fileLoc()); }
  InFlightDiagnostic nodeError(const onnx::NodeProto &node) {
    auto diag = emitError(nodeLoc(node));
    diag << describe(node) << ": ";
    return diag;
  }
  LogicalResult undefinedInput(const onnx::NodeProto &node, StringRef name) {
    return nodeError(node) << "input '" << name
                           << "' is neither a graph input, an initializer nor "
                              "the output of another node";
  }

  // --- model-level steps ---------------------------------------------------
  LogicalResult checkOpsets();
  LogicalResult bindInputShapes(const parc::OnnxImportOptions &options);
  void findBatchDims();
  LogicalResult checkDataflow();
  LogicalResult sortNodes();
  LogicalResult checkAttributeTypes();
  LogicalResult checkElementTypes();
  LogicalResult checkModel();
  LogicalResult inferShapes();
  LogicalResult checkSupported();
  /// The type of a value ONNX typed with static dims; emits an error and
  /// fails on an unsupported element type or a bad shape.
  FailureOr<RankedTensorType> tensorType(const onnx::TypeProto &type,
                                         StringRef what);
  /// `shape` of `et` as a tensor type, after tensorBytes admits it; `what`
  /// starts the error (`initializer 'W'`, `node 'n' (Op): output 'y'`).
  FailureOr<RankedTensorType> checkedType(ArrayRef<int64_t> shape, Type et,
                                          const Twine &what, Location loc);

  // --- values ---------------------------------------------------------------
  FailureOr<Value> lookup(const std::string &name, const onnx::NodeProto &node);
  FailureOr<Value> importInitializer(const onnx::TensorProto &tensor,
                                     Location loc);
  FailureOr<Value> importExternal(const onnx::TensorProto &tensor,
                                  RankedTensorType type, Location loc);
  /// Raw little-endian bytes of a tensor's data, whatever field holds it
  /// (spelled out into `storage` for the typed fields).
  StringRef rawBytes(const onnx::TensorProto &t, Type et,
                     std::string &storage);
  FailureOr<Attribute> tensorAttr(const onnx::TensorProto &tensor,
                                  RankedTensorType type, bool inlineOnly);

  // --- nodes ---------------------------------------------------------------
  LogicalResult importNode(const onnx::NodeProto &node);

  MLIRContext *ctx;
  OpBuilder builder;
  std::string path;
  onnx::ModelProto &model;
  /// The default domain's opset, and every domain's by domainOf's name.
  int64_t opset = 0;
  llvm::StringMap<int64_t> opsets;
  int64_t maxConstantBytes = parc::kDefaultMaxConstantBytes;
  llvm::StringMap<Value> values;
  llvm::StringMap<const onnx::TensorProto *> initializers;
  /// See leaveRawDataInFile.
  llvm::DenseMap<const onnx::TensorProto *, StringRef> rawData;
  std::shared_ptr<const llvm::MemoryBuffer> mappedFile;
  llvm::StringMap<RankedTensorType> types;
  llvm::StringMap<onnx::TypeProto> inferred;
  /// Outputs of Constant nodes: with the initializers, the values a model
  /// states rather than computes.
  llvm::StringSet<> constantOutputs;
  /// Graph inputs and outputs whose batch is not dim 0 (findBatchDims).
  llvm::StringMap<int64_t> batchDims;
  bool warnedMissingData = false;
  /// The last weight created, so the next one goes after it.
  Operation *lastWeight = nullptr;

  friend class NodeImporter;
  friend class ContribNode;
};

//===----------------------------------------------------------------------===//
// Model-level steps
//===----------------------------------------------------------------------===//

LogicalResult GraphImporter::checkOpsets() {
  for (const auto &imp : model.opset_import())
    opsets[domainOf(imp.domain())] = imp.version();
  // Other domains' ops are refused by checkSupported when the table lacks
  // them.
  opset = opsets.lookup("");
  if (opset < kMinOnnxOpset || opset > kMaxOnnxOpset)
    return error() << "unsupported opset " << opset
                   << " for the default ONNX domain (parc supports "
                   << kMinOnnxOpset << " to " << kMaxOnnxOpset << ")";
  return success();
}

/// The batch as the model names it: the symbol at dim 0 of its first
/// input with a symbolic dim 0. An input or output that holds it at another
/// dim (onnxruntime's pasts and presents, [2, batch_size, heads, seq, hd]
/// with K and V stacked first) is batched there: --micro-batches and
/// dist-split-batch read `onnx.batch_dim`. Read before --input-shape binds
/// the symbols away.
void GraphImporter::findBatchDims() {
  const auto &graph = model.graph();
  auto dims = [](const onnx::ValueInfoProto &v) -> const auto & {
    return v.type().tensor_type().shape().dim();
  };
  std::string batch;
  for (const auto &input : graph.input())
    if (!dims(input).empty() && !dims(input)[0].dim_param().empty()) {
      batch = dims(input)[0].dim_param();
      break;
    }
  if (batch.empty())
    return;
  auto record = [&](const onnx::ValueInfoProto &v) {
    for (auto [i, dim] : llvm::enumerate(dims(v)))
      if (dim.dim_param() == batch) {
        if (i)
          batchDims[v.name()] = i;
        return;
      }
  };
  llvm::for_each(graph.input(), record);
  llvm::for_each(graph.output(), record);
}

LogicalResult GraphImporter::bindInputShapes(
    const parc::OnnxImportOptions &options) {
  findBatchDims();
  llvm::StringSet<> known;
  for (const auto &init : model.graph().initializer())
    initializers[init.name()] = &init;
  std::vector<std::string> unbound;
  for (auto &input : *model.mutable_graph()->mutable_input()) {
    if (initializers.count(input.name()))
      continue;
    known.insert(input.name());
    if (!input.type().has_tensor_type())
      return error() << "graph input '" << input.name()
                     << "' is not a tensor (sequences and maps are unsupported)";
    // Read has_shape before mutable_shape() creates an empty (rank-0) one:
    // an input without a shape has unknown rank, not rank 0.
    bool ranked = input.type().tensor_type().has_shape();
    auto *shape = input.mutable_type()->mutable_tensor_type()->mutable_shape();
    auto it = options.inputShapes.find(input.name());
    if (it != options.inputShapes.end()) {
      if (ranked && shape->dim_size() != (int)it->second.size())
        return error() << "--input-shape " << input.name() << " has rank "
                       << it->second.size() << " but the model's input has rank "
                       << shape->dim_size();
      for (auto [i, d] : llvm::enumerate(it->second)) {
        if (i < (size_t)shape->dim_size() && shape->dim(i).has_dim_value() &&
            shape->dim(i).dim_value() != d)
          return error() << "--input-shape " << input.name() << " dim " << i
                         << " is " << d << " but the model fixes it to "
                         << shape->dim(i).dim_value();
      }
      shape->clear_dim();
      for (int64_t d : it->second)
        shape->add_dim()->set_dim_value(d);
      continue;
    }
    for (auto &dim : *shape->mutable_dim()) {
      auto bound = options.dimParams.find(dim.dim_param());
      if (!dim.has_dim_value() && bound != options.dimParams.end())
        dim.set_dim_value(bound->second);
    }
    std::string dynamic;
    for (auto [i, dim] : llvm::enumerate(shape->dim()))
      if (!dim.has_dim_value())
        dynamic += (dynamic.empty() ? "" : ", ") + std::to_string(i) +
                   (dim.dim_param().empty() ? "" : " ('" + dim.dim_param() + "')");
    if (!ranked)
      dynamic = "all (no shape given)";
    if (!dynamic.empty())
      unbound.push_back("'" + input.name() + "' dims " + dynamic);
  }
  for (const auto &entry : options.inputShapes)
    if (!known.contains(entry.getKey()))
      return error() << "--input-shape names '" << entry.getKey()
                     << "', which is not a graph input";
  if (!unbound.empty()) {
    auto diag = error() << "graph inputs have dynamic dims; bind them with "
                           "--input-shape NAME=D0xD1x...:";
    for (const auto &u : unbound)
      diag << "\n  " << u;
    return failure();
  }
  // Dims the model fixes are checked before ONNX inference multiplies them.
  for (const auto &input : model.graph().input())
    if (!initializers.count(input.name()) &&
        failed(tensorType(input.type(), "graph input '" + input.name() + "'")))
      return failure();
  return success();
}

/// SSA: one producer per value (the last of two writers would silently
/// win), and one for every value a node reads.
LogicalResult GraphImporter::checkDataflow() {
  llvm::StringMap<const onnx::NodeProto *> producer;
  llvm::StringSet<> inputs;
  for (const auto &input : model.graph().input())
    inputs.insert(input.name());
  for (const auto &node : model.graph().node())
    for (const auto &out : node.output()) {
      if (out.empty())
        continue;
      if (inputs.contains(out) || initializers.count(out))
        return error() << describe(node) << " writes '" << out
                       << "', which is a graph input or initializer; every "
                          "value must have one producer";
      auto [it, inserted] = producer.try_emplace(out, &node);
      if (!inserted)
        return error() << "value '" << out << "' is written by "
                       << describe(*it->second) << " and by "
                       << describe(node)
                       << "; every value must have one producer";
    }
  for (const auto &node : model.graph().node())
    for (const auto &in : node.input())
      if (!in.empty() && !inputs.contains(in) && !initializers.count(in) &&
          !producer.count(in))
        // Refused before shape inference: libonnx's Shape (and others)
        // dereference an undefined input's type.
        return undefinedInput(node, in);
  return success();
}

/// Element types of IR versions 9 and later (float8, int4 …) are refused
/// before libonnx 1.12, which has no name for them, checks the model.
LogicalResult GraphImporter::checkElementTypes() {
  auto refuse = [&](int32_t type) {
    return !onnx::TensorProto::DataType_IsValid(type);
  };
  for (const auto &init : model.graph().initializer())
    if (refuse(init.data_type()))
      return error() << "initializer '" << init.name()
                     << "' has unsupported data type "
                     << typeName(init.data_type()) << " (" << kSupportedTypes
                     << ")";
  for (const auto &node : model.graph().node())
    for (const auto &a : node.attribute()) {
      int32_t type = onnx::TensorProto::FLOAT;
      if (a.type() == onnx::AttributeProto::TENSOR)
        type = a.t().data_type();
      else if (a.name() == "to" && a.type() == onnx::AttributeProto::INT)
        type = a.i();
      if (refuse(type))
        return nodeError(node)
               << "unsupported data type " << typeName(type) << " (attribute '"
               << a.name() << "'; " << kSupportedTypes << ")";
    }
  return success();
}

/// Attributes of the type their schema declares; the checker would refuse
/// the others too, but this message names the node and the accepted type.
LogicalResult GraphImporter::checkAttributeTypes() {
  bool ok = true;
  for (const auto &node : model.graph().node()) {
    std::string domain = domainOf(node).str();
    const onnx::OpSchema *schema = OpsetRegistry::get().GetSchema(
        node.op_type(), opsets.lookup(domain), domain);
    if (!schema)
      continue;
    for (const auto &a : node.attribute()) {
      auto it = schema->attributes().find(a.name());
      if (it == schema->attributes().end() || it->second.type == a.type())
        continue;
      emitError(nodeLoc(node))
          << describe(node) << ": attribute '" << a.name() << "' is "
          << onnx::AttributeProto::AttributeType_Name(a.type()) << ", but "
          << node.op_type() << " takes "
          << onnx::AttributeProto::AttributeType_Name(it->second.type);
      ok = false;
    }
  }
  return success(ok);
}

/// onnx::checker on the sorted graph: what ONNX itself calls invalid is
/// refused before parc reads it.
LogicalResult GraphImporter::checkModel() {
  // The checker stats each external-data location relative to the working
  // directory (it has no model folder), which fails models whose data lies
  // beside them and would probe paths parc refuses to read. Locations are
  // parc's to check (importExternal); the checker sees "." meanwhile.
  std::vector<std::pair<std::string *, std::string>> locations;
  for (auto &init : *model.mutable_graph()->mutable_initializer())
    for (auto &kv : *init.mutable_external_data())
      if (kv.key() == "location")
        locations.emplace_back(kv.mutable_value(), std::exchange(*kv.mutable_value(), "."));
  // Weights left in the model file (leaveRawDataInFile) look to the checker
  // like external data at ".", which they are.
  std::vector<onnx::TensorProto *> leftInFile;
  for (auto &init : *model.mutable_graph()->mutable_initializer()) {
    if (!rawData.count(&init))
      continue;
    leftInFile.push_back(&init);
    init.clear_raw_data();
    init.set_data_location(onnx::TensorProto::EXTERNAL);
    auto *entry = init.add_external_data();
    entry->set_key("location");
    entry->set_value(".");
  }
  // ONNX 1.12's checker also wants a shape on every graph output and
  // value_info (later versions do not): parc recomputes those, so a missing
  // one is given an empty shape for the check only.
  std::vector<onnx::TypeProto_Tensor *> shapeless;
  auto *graph = model.mutable_graph();
  for (auto *infos : {graph->mutable_output(), graph->mutable_value_info()})
    for (auto &vi : *infos)
      if (vi.type().has_tensor_type() && !vi.type().tensor_type().has_shape()) {
        shapeless.push_back(vi.mutable_type()->mutable_tensor_type());
        shapeless.back()->mutable_shape();
      }
  llvm::scope_exit restore([&] {
    for (auto &[value, saved] : locations)
      *value = std::move(saved);
    for (auto *t : shapeless)
      t->clear_shape();
    for (auto *t : leftInFile) {
      t->clear_external_data();
      t->clear_data_location();
      t->set_raw_data("");
    }
  });
  try {
    // check_model without its registry and IR version: libonnx 1.12's stop
    // at opset 17 and IR 8, while OpsetRegistry knows up to kMaxOnnxOpset.
    if (model.ir_version() < 1 || model.ir_version() > kMaxIrVersion)
      return error() << "unsupported IR version " << model.ir_version()
                     << " (parc reads 1 to " << kMaxIrVersion << ")";
    onnx::checker::CheckerContext ctx;
    ctx.set_ir_version(std::min<int>(model.ir_version(), onnx::IR_VERSION));
    std::unordered_map<std::string, int> opsets;
    for (const auto &imp : model.opset_import())
      opsets[imp.domain()] = imp.version();
    ctx.set_opset_imports(opsets);
    ctx.set_schema_registry(&OpsetRegistry::get());
    onnx::checker::LexicalScopeContext lex;
    onnx::checker::check_graph(model.graph(), ctx, lex);
    if (model.ir_version() >= 8)
      onnx::checker::check_model_local_functions(model, ctx, lex);
  } catch (const std::exception &e) {
    // One line: "<what> (<context>)" instead of ONNX's two paragraphs.
    std::string message = e.what();
    static constexpr StringRef kContext = "\n\n==> Context: ";
    if (size_t at = message.find(kContext.str()); at != std::string::npos)
      message = message.substr(0, at) + " (" +
                message.substr(at + kContext.size()) + ")";
    return error() << "the ONNX checker rejects the model: " << message;
  }
  return success();
}

/// ONNX requires topological order, but real files break it (an offline edit
/// appends Constant nodes at the end); Kahn's algorithm restores it and
/// reports a cycle by the nodes on it. Ready nodes are taken lowest index
/// first, so a graph that is already sorted keeps the file's order.
LogicalResult GraphImporter::sortNodes() {
  auto *graph = model.mutable_graph();
  int n = graph->node_size();
  llvm::StringMap<int> producer;
  for (int i = 0; i < n; ++i)
    for (const auto &out : graph->node(i).output())
      if (!out.empty())
        producer[out] = i;
  std::vector<std::vector<int>> users(n);
  std::vector<int> pending(n, 0);
  for (int i = 0; i < n; ++i)
    for (const auto &in : graph->node(i).input()) {
      auto it = producer.find(in);
      if (in.empty() || it == producer.end())
        continue;
      users[it->second].push_back(i);
      ++pending[i];
    }
  std::priority_queue<int, std::vector<int>, std::greater<int>> ready;
  for (int i = 0; i < n; ++i)
    if (!pending[i])
      ready.push(i);
  std::vector<int> order;
  while (!ready.empty()) {
    int i = ready.top();
    ready.pop();
    order.push_back(i);
    for (int u : users[i])
      if (--pending[u] == 0)
        ready.push(u);
  }
  if ((int)order.size() != n) {
    // The unsorted nodes are the cycles and everything downstream of them;
    // peel off those none of the others read, leaving the cycles.
    std::vector<bool> onCycle(n);
    for (int i = 0; i < n; ++i)
      onCycle[i] = pending[i] != 0;
    for (bool changed = true; changed;) {
      changed = false;
      for (int i = 0; i < n; ++i)
        if (onCycle[i] &&
            llvm::none_of(users[i], [&](int u) { return onCycle[u]; })) {
          onCycle[i] = false;
          changed = true;
        }
    }
    auto diag = error() << "the graph has a cycle through:";
    StringRef sep = " ";
    for (int i = 0; i < n; ++i)
      if (onCycle[i]) {
        diag << sep << describe(graph->node(i));
        sep = ", ";
      }
    return failure();
  }
  google::protobuf::RepeatedPtrField<onnx::NodeProto> sorted;
  for (int i : order)
    *sorted.Add() = graph->node(i);
  graph->mutable_node()->Swap(&sorted);
  return success();
}

/// Schemas of the contrib ops the importer admits, so that ONNX shape
/// inference types their outputs (libonnx knows only the standard domains).
void registerContribSchemas() {
  static bool once = [] {
    auto &domains = onnx::OpSchemaRegistry::DomainToVersionRange::Instance();
    if (!domains.Map().count("com.microsoft"))
      domains.AddDomainToVersion("com.microsoft", 1, 1);
    onnx::OpSchema moe;
    moe.SetName("MoE").SetDomain("com.microsoft").SinceVersion(1)
        .Input(0, "input", "", "T")
        .Input(1, "router_probs", "", "T")
        .Input(2, "fc1_experts_weights", "", "T")
        .Input(3, "fc1_experts_bias", "", "T", onnx::OpSchema::Optional)
        .Input(4, "fc2_experts_weights", "", "T")
        .Input(5, "fc2_experts_bias", "", "T", onnx::OpSchema::Optional)
        .Input(6, "fc3_experts_weights", "", "T", onnx::OpSchema::Optional)
        .Input(7, "fc3_experts_bias", "", "T", onnx::OpSchema::Optional)
        .Output(0, "output", "", "T")
        .TypeConstraint("T", {"tensor(float)", "tensor(float16)", "tensor(bfloat16)"}, "")
        .AllowUncheckedAttributes()
        .TypeAndShapeInferenceFunction(onnx::propagateShapeAndTypeFromFirstInput);
    onnx::OpSchemaRegistry::OpSchemaRegisterOnce registered(moe);
    parc::contrib::registerContribOpSchemas();
    return true;
  }();
  (void)once;
}

/// libonnx 1.12's inference trusts attributes that a model controls: an axis
/// below -rank makes LayerNormalization's index out of bounds, a zero stride
/// makes Conv's and MaxPool's divide by zero, attributes longer than the
/// input's spatial dims make them read past it. Each check runs before that
/// op's inference (every schema of opsets kMinOnnxOpset to kMaxOnnxOpset)
/// and turns such a model into an inference error.
void guardInference(const char *op,
                    std::function<void(onnx::InferenceContext &)> check) {
  llvm::SmallPtrSet<const onnx::OpSchema *, 4> seen;
  for (int v = kMinOnnxOpset; v <= kMaxOnnxOpset; ++v) {
    auto *schema = const_cast<onnx::OpSchema *>(
        onnx::OpSchemaRegistry::Schema(op, v, ""));
    if (!schema || !seen.insert(schema).second)
      continue;
    auto infer = schema->GetTypeAndShapeInferenceFunction();
    schema->TypeAndShapeInferenceFunction(
        [infer, check](onnx::InferenceContext &ctx) {
          check(ctx);
          infer(ctx);
        });
  }
}

void checkAxisInRank(onnx::InferenceContext &ctx) {
  const auto *axis = ctx.getAttribute("axis");
  if (!axis || !onnx::hasNInputShapes(ctx, 1))
    return;
  int64_t rank = ctx.getInputType(0)->tensor_type().shape().dim_size();
  if (axis->i() < -rank || axis->i() >= rank)
    fail_shape_inference("axis ", axis->i(), " is out of range for rank ",
                         rank, " (accepted: ", -rank, " to ", rank - 1, ")");
}

/// Conv's and MaxPool's inference indexes the spatial dims by the
/// attributes' lengths and divides by strides: each must fit the input.
void checkConvPoolAttributes(onnx::InferenceContext &ctx) {
  auto ints = [&](const char *name) -> const onnx::AttributeProto * {
    return ctx.getAttribute(name);
  };
  for (const char *name : {"strides", "dilations", "kernel_shape"})
    if (const auto *a = ints(name))
      for (int64_t v : a->ints())
        if (v <= 0)
          fail_shape_inference(name, " must be positive, not ", v);
  if (!onnx::hasNInputShapes(ctx, 1))
    return;
  int64_t rank = ctx.getInputType(0)->tensor_type().shape().dim_size();
  if (rank < 3)
    fail_shape_inference("input rank ", rank,
                         " has no spatial dims (accepted: N, C and 1 or "
                         "more spatial dims)");
  int64_t spatial = rank - 2;
  for (const char *name : {"strides", "dilations", "kernel_shape"})
    if (const auto *a = ints(name); a && a->ints_size() != spatial)
      fail_shape_inference(name, " has ", a->ints_size(), " values for ",
                           spatial, " spatial dims (accepted: ", spatial, ")");
  if (const auto *pads = ints("pads"); pads && pads->ints_size() != 2 * spatial)
    fail_shape_inference("pads has ", pads->ints_size(), " values for ",
                         spatial, " spatial dims (accepted: ", 2 * spatial,
                         ")");
  if (ctx.getNumInputs() > 1 && onnx::hasInputShape(ctx, 1)) {
    int64_t wrank = ctx.getInputType(1)->tensor_type().shape().dim_size();
    if (wrank != rank)
      fail_shape_inference("weight rank ", wrank, " differs from input rank ",
                           rank, " (they must be equal)");
  }
}

void guardOnnxInference() {
  static bool once = [] {
    guardInference("LayerNormalization", checkAxisInRank);
    guardInference("Conv", checkConvPoolAttributes);
    guardInference("MaxPool", checkConvPoolAttributes);
    return true;
  }();
  (void)once;
}

LogicalResult GraphImporter::inferShapes() {
  // Declared intermediate and output shapes are sometimes stale (exporters'
  // symbolic names, edited models); with the inputs bound, inference
  // recomputes all of them, so only element types are kept.
  auto *graph = model.mutable_graph();
  graph->clear_value_info();
  for (auto &out : *graph->mutable_output())
    if (out.type().has_tensor_type())
      out.mutable_type()->mutable_tensor_type()->clear_shape();
  registerContribSchemas();
  guardOnnxInference();
  try {
    onnx::ShapeInferenceOptions opts(/*check_type=*/true, /*error_mode=*/1,
                                     /*data_prop=*/true);
    onnx::shape_inference::InferShapes(model, &OpsetRegistry::get(), opts);
  } catch (const std::exception &e) {
    return error() << "ONNX shape inference failed: " << e.what();
  }
  for (const auto &vi : graph->value_info())
    inferred[vi.name()] = vi.type();
  for (const auto &vi : graph->output())
    inferred[vi.name()] = vi.type();
  for (const auto &vi : graph->input())
    inferred[vi.name()] = vi.type();
  return success();
}

/// Whether ONNX gave every dim of `type` a value.
bool hasStaticShape(const onnx::TypeProto &type) {
  return type.has_tensor_type() && type.tensor_type().has_shape() &&
         llvm::all_of(type.tensor_type().shape().dim(),
                      [](const auto &d) { return d.has_dim_value(); });
}

FailureOr<RankedTensorType>
GraphImporter::tensorType(const onnx::TypeProto &type, StringRef what) {
  if (!type.has_tensor_type())
    return error() << what << " is not a tensor", failure();
  auto et = elementType(ctx, type.tensor_type().elem_type());
  if (failed(et))
    return error() << what << " has unsupported data type "
                   << typeName(type.tensor_type().elem_type()),
           failure();
  if (!hasStaticShape(type))
    return error() << what << " has no static shape", failure();
  SmallVector<int64_t> shape;
  for (const auto &d : type.tensor_type().shape().dim())
    shape.push_back(d.dim_value());
  return checkedType(shape, *et, what, fileLoc());
}

FailureOr<RankedTensorType> GraphImporter::checkedType(ArrayRef<int64_t> shape,
                                                       Type et,
                                                       const Twine &what,
                                                       Location loc) {
  std::string why;
  if (failed(tensorBytes(shape, et, why)))
    return emitError(loc) << what << " has a bad shape: " << why, failure();
  return RankedTensorType::get(shape, et);
}

//===----------------------------------------------------------------------===//
// Initializers
//===----------------------------------------------------------------------===//

StringRef GraphImporter::rawBytes(const onnx::TensorProto &t, Type et,
                                  std::string &out) {
  if (auto it = rawData.find(&t); it != rawData.end())
    return it->second;
  if (t.has_raw_data())
    return t.raw_data();
  auto append = [&](const void *p, size_t n) {
    out.append(static_cast<const char *>(p), n);
  };
  switch (t.data_type()) {
  case onnx::TensorProto::FLOAT:
    for (float v : t.float_data())
      append(&v, 4);
    break;
  case onnx::TensorProto::DOUBLE:
    for (double v : t.double_data())
      append(&v, 8);
    break;
  case onnx::TensorProto::INT64:
    for (int64_t v : t.int64_data())
      append(&v, 8);
    break;
  case onnx::TensorProto::INT32:
    for (int32_t v : t.int32_data())
      append(&v, 4);
    break;
  case onnx::TensorProto::INT16:
  case onnx::TensorProto::FLOAT16:
  case onnx::TensorProto::BFLOAT16:
    for (int32_t v : t.int32_data()) {
      uint16_t h = v;
      append(&h, 2);
    }
    break;
  case onnx::TensorProto::INT8:
  case onnx::TensorProto::UINT8:
  case onnx::TensorProto::BOOL:
    for (int32_t v : t.int32_data()) {
      uint8_t b = v;
      append(&b, 1);
    }
    break;
  default:
    break;
  }
  (void)et;
  return out;
}

FailureOr<Attribute> GraphImporter::tensorAttr(const onnx::TensorProto &t,
                                               RankedTensorType type,
                                               bool inlineOnly) {
  Type et = type.getElementType();
  int64_t n = type.getNumElements();
  std::string storage;
  StringRef bytes = rawBytes(t, et, storage);
  size_t width = std::max<size_t>(et.getIntOrFloatBitWidth() / 8, 1);
  if (bytes.size() != n * width)
    return error() << "tensor '" << t.name() << "' holds " << bytes.size()
                   << " bytes, but " << type << " needs " << n * width,
           failure();
  if (et.isInteger(1)) {
    SmallVector<bool> bits;
    for (char c : bytes)
      bits.push_back(c != 0);
    return Attribute(DenseElementsAttr::get(type, ArrayRef<bool>(bits)));
  }
  if (inlineOnly || keepInline(et, n)) {
    bool isSplat = false;
    if (!DenseElementsAttr::isValidRawBuffer(type, ArrayRef(bytes.data(), bytes.size()),
                                             isSplat))
      return error() << "tensor '" << t.name() << "' has malformed data",
             failure();
    return Attribute(DenseElementsAttr::getFromRawBuffer(
        type, ArrayRef(bytes.data(), bytes.size())));
  }
  // A weight left in the mapped model file is borrowed from it (its readers
  // memcpy, so any alignment does); the blob keeps the mapping alive.
  auto blob =
      mappedFile && bytes.begin() >= mappedFile->getBufferStart() &&
              bytes.end() <= mappedFile->getBufferEnd()
          ? AsmResourceBlob(ArrayRef(bytes.data(), bytes.size()),
                            /*dataAlignment=*/1,
                            [keep = mappedFile](void *, size_t, size_t) {},
                            /*dataIsMutable=*/false)
          : HeapAsmResourceBlob::allocateAndCopyWithAlign(
                ArrayRef(bytes.data(), bytes.size()), alignof(uint64_t));
  std::string key = t.name().empty() ? "weight" : t.name();
  return Attribute(DenseResourceElementsAttr::get(type, key, std::move(blob)));
}

/// Whether `file` resolves (through every symlink) to a path inside `dir`.
bool staysInside(StringRef dir, StringRef file) {
  SmallString<256> realDir, realFile;
  if (llvm::sys::fs::real_path(dir.empty() ? "." : dir, realDir) ||
      llvm::sys::fs::real_path(file, realFile))
    return false;
  llvm::sys::path::append(realDir, "");
  return StringRef(realFile).starts_with(realDir);
}

/// References the bytes of an initializer stored as ONNX external data,
/// after checking that they lie inside the model's folder and its file.
FailureOr<Value> GraphImporter::importExternal(const onnx::TensorProto &t,
                                               RankedTensorType type,
                                               Location loc) {
  auto refuse = [&]() {
    return error() << "initializer '" << t.name() << "' has external data ";
  };
  std::string location;
  int64_t offset = 0, length = -1;
  for (const auto &kv : t.external_data()) {
    if (kv.key() == "location") {
      location = kv.value();
      continue;
    }
    if (kv.key() != "offset" && kv.key() != "length")
      continue;
    int64_t v;
    if (StringRef(kv.value()).getAsInteger(10, v) || v < 0)
      return refuse() << "with " << kv.key() << " '" << kv.value()
                      << "' (expected a decimal byte count, 0 or more)",
             failure();
    (kv.key() == "offset" ? offset : length) = v;
  }
  // ONNX makes a location relative to the model's folder: a downloaded model
  // must not read (and ship as weights) a file outside it.
  if (std::string why = nn::externalLocationProblem(location); !why.empty())
    return refuse() << "that may not be read: " << why << " ('" << location
                    << "'); it must name a file inside the model's folder",
           failure();
  std::string why;
  int64_t bytes = *tensorBytes(type.getShape(), type.getElementType(), why);
  if (length >= 0 && length != bytes)
    return refuse() << "of length " << length << ", but " << type << " needs "
                    << bytes << " bytes",
           failure();
  length = bytes;
  StringRef dir = llvm::sys::path::parent_path(path);
  SmallString<256> file(dir);
  llvm::sys::path::append(file, location);
  uint64_t size = 0;
  bool present = !llvm::sys::fs::file_size(file, size);
  if (!present) {
    if (!warnedMissingData)
      emitWarning(fileLoc())
          << "external data file '" << file
          << "' is missing: the model imports for planning and inspection, "
             "but cannot be compiled to run";
    warnedMissingData = true;
  } else if (!staysInside(dir, file)) {
    return refuse() << "in '" << location
                    << "', which leads out of the model's folder through a "
                       "symlink; it must name a file inside the folder",
           failure();
  } else if (uint64_t end = (uint64_t)offset + (uint64_t)length; end > size) {
    // Both are below 2^63, so their sum does not wrap.
    return error() << "initializer '" << t.name() << "' reads bytes ["
                   << offset << ", " << end << ") of '" << file
                   << "', which has " << size
                   << " bytes (offset + length must lie within the file)",
           failure();
  }
  if (present && readAtImport(type)) {
    // A shape constant or mask the exporter moved out with the weights:
    // read it as if embedded, so that it folds the same way.
    auto buffer = llvm::MemoryBuffer::getFileSlice(file, length, offset);
    if (!buffer)
      return error() << "cannot read external data '" << file
                     << "': " << buffer.getError().message(),
             failure();
    onnx::TensorProto inlined = t;
    inlined.clear_external_data();
    inlined.set_data_location(onnx::TensorProto::DEFAULT);
    inlined.set_raw_data((*buffer)->getBufferStart(),
                         (*buffer)->getBufferSize());
    auto attr = tensorAttr(inlined, type, /*inlineOnly=*/true);
    if (failed(attr))
      return failure();
    return arith::ConstantOp::create(builder, loc, type, cast<TypedAttr>(*attr))
        .getResult();
  }
  return nn::ExternalWeightOp::create(builder, loc, type, t.name(), location,
                                      offset, length, DenseI64ArrayAttr(),
                                      DenseI64ArrayAttr())
      .getResult();
}

FailureOr<Value> GraphImporter::importInitializer(const onnx::TensorProto &t,
                                                  Location loc) {
  auto et = elementType(ctx, t.data_type());
  if (failed(et))
    return error() << "initializer '" << t.name() << "' has unsupported data type "
                   << typeName(t.data_type()),
           failure();
  auto type = checkedType(SmallVector<int64_t>(t.dims().begin(), t.dims().end()),
                          *et, "initializer '" + t.name() + "'", fileLoc());
  if (failed(type))
    return failure();
  if (t.data_location() == onnx::TensorProto::EXTERNAL)
    return importExternal(t, *type, loc);
  auto attr = tensorAttr(t, *type, /*inlineOnly=*/false);
  if (failed(attr))
    return failure();
  return arith::ConstantOp::create(builder, loc, *type, cast<TypedAttr>(*attr))
      .getResult();
}

FailureOr<Value> GraphImporter::lookup(const std::string &name,
                                       const onnx::NodeProto &node) {
  if (auto it = values.find(name); it != values.end())
    return it->second;
  if (auto it = initializers.find(name); it != initializers.end()) {
    // Weights are created at the top of the function in first-use order.
    OpBuilder::InsertionGuard guard(builder);
    if (lastWeight)
      builder.setInsertionPointAfter(lastWeight);
    else
      builder.setInsertionPointToStart(builder.getInsertionBlock());
    auto v = importInitializer(*it->second,
                               NameLoc::get(StringAttr::get(ctx, name), fileLoc()));
    if (succeeded(v)) {
      values[name] = *v;
      lastWeight = v->getDefiningOp();
    }
    return v;
  }
  return undefinedInput(node, name);
}

//===----------------------------------------------------------------------===//
// Nodes
//===----------------------------------------------------------------------===//

class NodeImporter;

/// One op of the importer's table: its domain, type and versions (OpTable.h)
/// and the handler that imports one node of it.
struct OpEntry : parc::OnnxOp {
  LogicalResult (NodeImporter::*handler)();
};

/// Per-node helpers: attributes, operands, constant operands, result types.
class NodeImporter {
public:
  NodeImporter(GraphImporter &g, const onnx::NodeProto &node)
      : g(g), node(node), b(g.builder), loc(g.nodeLoc(node)) {}

  LogicalResult import() {
    LogicalResult result = importOp();
    return success(succeeded(result) && badAttrs.empty());
  }

  /// The one table of the ops parc imports, of every domain: checkSupported
  /// admits exactly these, at the versions each entry names.
  static ArrayRef<OpEntry> table();
  /// The entry of `node`'s op, or null.
  static const OpEntry *find(const onnx::NodeProto &node);

private:
  LogicalResult importOp();
  /// Constants computed from a smaller description (ConstantOfShape, Range,
  /// OneHot) stay under --max-constant-bytes.
  LogicalResult checkConstantBytes(RankedTensorType type);
  LogicalResult refuseConstant(StringRef what);

  // Attributes, read only through `attr`, which checks the stored type: a
  // string `axis` must not read as 0. A mismatch is reported once per
  // attribute and fails the node after its handler ran on the default.
  using AttrType = onnx::AttributeProto::AttributeType;
  const onnx::AttributeProto *attr(StringRef name, AttrType type) {
    for (const auto &a : node.attribute()) {
      if (a.name() != name)
        continue;
      if (a.type() == type)
        return &a;
      if (badAttrs.insert(name).second)
        g.nodeError(node) << "attribute '" << name << "' is "
                          << onnx::AttributeProto::AttributeType_Name(a.type())
                          << ", but parc reads it as "
                          << onnx::AttributeProto::AttributeType_Name(type);
      return nullptr;
    }
    return nullptr;
  }
  int64_t intAttr(StringRef name, int64_t dflt) {
    auto *a = attr(name, onnx::AttributeProto::INT);
    return a ? a->i() : dflt;
  }
  float floatAttr(StringRef name, float dflt) {
    auto *a = attr(name, onnx::AttributeProto::FLOAT);
    return a ? a->f() : dflt;
  }
  std::string strAttr(StringRef name, StringRef dflt) {
    auto *a = attr(name, onnx::AttributeProto::STRING);
    return a ? a->s() : dflt.str();
  }
  std::optional<SmallVector<int64_t>> intsAttr(StringRef name) {
    auto *a = attr(name, onnx::AttributeProto::INTS);
    if (!a)
      return std::nullopt;
    return SmallVector<int64_t>(a->ints().begin(), a->ints().end());
  }
  const onnx::TensorProto *tensorValue(StringRef name) {
    auto *a = attr(name, onnx::AttributeProto::TENSOR);
    return a ? &a->t() : nullptr;
  }

  // Operands.
  bool has(int i) { return i < node.input_size() && !node.input(i).empty(); }
  FailureOr<Value> in(int i) {
    if (!has(i))
      return g.nodeError(node) << "missing required input " << i, failure();
    return g.lookup(node.input(i), node);
  }
  RankedTensorType typeOf(Value v) { return cast<RankedTensorType>(v.getType()); }

  /// A constant operand's values as int64 (shape-like inputs).
  FailureOr<SmallVector<int64_t>> constInts(int i, StringRef what) {
    auto v = in(i);
    if (failed(v))
      return failure();
    DenseElementsAttr attr;
    if (!matchPattern(*v, m_Constant(&attr)) ||
        !isa<IntegerType>(attr.getElementType()))
      return g.nodeError(node) << what << " (input " << i
                               << ") must be a compile-time constant integer "
                                  "tensor; it depends on runtime data",
             failure();
    SmallVector<int64_t> out;
    for (APInt x : attr.getValues<APInt>())
      out.push_back(x.getSExtValue());
    return out;
  }
  FailureOr<DenseElementsAttr> constAttr(int i, StringRef what) {
    auto v = in(i);
    if (failed(v))
      return failure();
    DenseElementsAttr attr;
    if (!matchPattern(*v, m_Constant(&attr)))
      return g.nodeError(node) << what << " (input " << i
                               << ") must be a compile-time constant",
             failure();
    return attr;
  }

  /// Input `i` is an initializer: a table of the model.
  bool isTable(int i) { return has(i) && g.initializers.count(node.input(i)); }
  /// Input `i` is computed, not stated (an initializer or a Constant).
  bool isComputed(int i) {
    return has(i) && !isTable(i) && !g.constantOutputs.contains(node.input(i));
  }
  /// A sequence longer than the model's position table reads past it
  /// (Gather of positions) or slices it short (Slice to the length), which
  /// would surface as a broadcast error far downstream, or not at all.
  LogicalResult positionsPastTable(int64_t length, int64_t rows, int64_t axis) {
    return g.nodeError(node)
           << "sequence length " << length << " exceeds the model's " << rows
           << " positions (initializer '" << node.input(0) << "' has " << rows
           << " on axis " << axis << ")";
  }
  LogicalResult checkGatherIndices(Value idx, int64_t rows, int64_t axis);

  /// The static type ONNX inferred for output `i`, or `fallback` when ONNX
  /// left it dynamic (parc's own rule for structural ops).
  FailureOr<RankedTensorType> outType(int i,
                                      std::optional<RankedTensorType> fallback = {}) {
    std::string what = describe(node) + ": output '" + node.output(i) + "'";
    auto it = g.inferred.find(node.output(i));
    if (it != g.inferred.end() && hasStaticShape(it->second)) {
      auto t = g.tensorType(it->second, what);
      if (failed(t))
        return failure();
      if (fallback && *fallback != *t)
        return g.nodeError(node) << "ONNX infers " << *t << " for output '"
                                 << node.output(i) << "' but the op computes "
                                 << *fallback
                                 << " (the model's shapes must be the ones "
                                    "the op computes from its inputs)",
               failure();
      return t;
    }
    if (fallback)
      return g.checkedType(fallback->getShape(), fallback->getElementType(),
                           what, loc);
    return g.nodeError(node) << "could not infer a static shape for output '"
                             << node.output(i)
                             << "'; bind the graph inputs' dynamic dims with "
                                "--input-shape NAME=D0,D1,...",
           failure();
  }

  static RankedTensorType shaped(ArrayRef<int64_t> shape, Type et) {
    return RankedTensorType::get(shape, et);
  }

  int64_t normAxis(int64_t axis, int64_t rank) {
    return axis < 0 ? axis + rank : axis;
  }
  LogicalResult checkAxis(int64_t axis, int64_t rank) {
    if (axis < 0 || axis >= rank)
      return g.nodeError(node) << "axis " << axis - (axis >= rank ? 0 : rank)
                               << " is out of range for rank " << rank
                               << " (accepted: " << -rank << " to "
                               << rank - 1 << ")";
    return success();
  }

  LogicalResult set(int i, Value v) {
    if (i < node.output_size() && !node.output(i).empty())
      g.values[node.output(i)] = v;
    return success();
  }
  /// Outputs beyond `n` must be unused (e.g. Dropout's mask).
  LogicalResult onlyOutputs(int n);

  // Handlers.
  LogicalResult gelu();
  LogicalResult power();
  LogicalResult where();
  LogicalResult castTo();
  LogicalResult identity();
  LogicalResult gemm();
  LogicalResult layerNorm();
  LogicalResult transpose();
  LogicalResult expand();
  LogicalResult concatenate();
  LogicalResult gather();
  LogicalResult scatterElements();
  LogicalResult trilu();
  LogicalResult topK();
  LogicalResult shapeOf();
  LogicalResult sizeOf();
  template <typename Op> LogicalResult unary();
  template <typename Op> LogicalResult binary();
  template <typename Op> LogicalResult binaryOf(Value lhs, Value rhs);
  template <typename Op> LogicalResult variadic();
  template <typename Op> LogicalResult reduce();
  LogicalResult constant();
  LogicalResult constantOfShape();
  LogicalResult range();
  LogicalResult softmax();
  LogicalResult reshapeLike();
  LogicalResult slice();
  LogicalResult split();
  LogicalResult conv();
  LogicalResult maxPool();
  LogicalResult contribMoE();
  /// onnxruntime's other ops: handler `H` of ContribOps.cpp on this node.
  template <contrib::Handler H> LogicalResult contribOp();
  friend class ContribNode;
  LogicalResult oneHot();
  LogicalResult einsum();
  FailureOr<Value> sumIndices(Value v, std::string &idx, StringRef other,
                              StringRef out);
  LogicalResult mod();
  FailureOr<Value> expertWeights(int i, bool outIn);

  GraphImporter &g;
  const onnx::NodeProto &node;
  OpBuilder &b;
  Location loc;
  llvm::StringSet<> badAttrs;
};

LogicalResult NodeImporter::checkConstantBytes(RankedTensorType type) {
  std::string why;
  auto bytes = tensorBytes(type.getShape(), type.getElementType(), why);
  if (failed(bytes))
    return g.nodeError(node) << "output has a bad shape: " << why;
  if (*bytes <= g.maxConstantBytes)
    return success();
  return refuseConstant(llvm::formatv("{0} of {1} bytes", type, *bytes).str());
}

LogicalResult NodeImporter::refuseConstant(StringRef what) {
  return g.nodeError(node) << "would make a constant " << what
                           << ", more than the limit of " << g.maxConstantBytes
                           << " bytes; raise it with --max-constant-bytes if "
                              "the model means it";
}

LogicalResult NodeImporter::onlyOutputs(int n) {
  for (int i = n; i < node.output_size(); ++i)
    if (!node.output(i).empty()) {
      for (const auto &other : g.model.graph().node())
        for (const auto &in : other.input())
          if (in == node.output(i))
            return g.nodeError(node) << "output " << i << " ('" << node.output(i)
                                     << "') is used, which parc does not support";
      for (const auto &out : g.model.graph().output())
        if (out.name() == node.output(i))
          return g.nodeError(node) << "output " << i << " ('" << node.output(i)
                                   << "') is a graph output, which parc does "
                                      "not support";
    }
  return success();
}

template <typename Op> LogicalResult NodeImporter::unary() {
  auto x = in(0);
  if (failed(x))
    return failure();
  return set(0, b.createOrFold<Op>(loc, x->getType(), *x));
}

template <typename Op> LogicalResult NodeImporter::binary() {
  auto l = in(0), r = in(1);
  if (failed(l) || failed(r))
    return failure();
  return binaryOf<Op>(*l, *r);
}

template <typename Op> LogicalResult NodeImporter::binaryOf(Value l, Value r) {
  auto shape = std::is_same_v<Op, nn::MatMulOp>
                   ? nn::matmulShape(typeOf(l).getShape(), typeOf(r).getShape())
                   : nn::broadcastShapes(typeOf(l).getShape(),
                                         typeOf(r).getShape());
  if (failed(shape))
    return g.nodeError(node) << "operand shapes " << typeOf(l) << " and "
                             << typeOf(r) << " are incompatible" << kBroadcastRule;
  bool predicate = llvm::is_one_of<Op, nn::EqualOp, nn::LessOp, nn::GreaterOp,
                                   nn::AndOp, nn::OrOp>::value;
  auto t = outType(0, shaped(*shape, predicate ? b.getI1Type()
                                                : typeOf(l).getElementType()));
  if (failed(t))
    return failure();
  return set(0, b.createOrFold<Op>(loc, *t, l, r));
}

/// Min/Max/Sum take any number of inputs; they chain pairwise.
template <typename Op> LogicalResult NodeImporter::variadic() {
  auto acc = in(0);
  if (failed(acc))
    return failure();
  Value v = *acc;
  for (int i = 1; i < node.input_size(); ++i) {
    auto next = in(i);
    if (failed(next))
      return failure();
    auto shape = nn::broadcastShapes(typeOf(v).getShape(),
                                     typeOf(*next).getShape());
    if (failed(shape))
      return g.nodeError(node) << "inputs do not broadcast" << kBroadcastRule,
             failure();
    v = b.createOrFold<Op>(
        loc, RankedTensorType::get(*shape, typeOf(v).getElementType()), v, *next);
  }
  return set(0, v);
}

template <typename Op> LogicalResult NodeImporter::reduce() {
  auto x = in(0);
  if (failed(x))
    return failure();
  int64_t rank = typeOf(*x).getRank();
  SmallVector<int64_t> axes;
  // ReduceSum takes axes as an input from opset 13 (the others from 18).
  if (has(1)) {
    auto a = constInts(1, "axes");
    if (failed(a))
      return failure();
    axes = *a;
  } else if (auto a = intsAttr("axes")) {
    axes = *a;
  }
  if (axes.empty()) {
    if (intAttr("noop_with_empty_axes", 0))
      return set(0, *x);
    axes = llvm::to_vector(llvm::seq<int64_t>(0, rank));
  }
  for (int64_t &a : axes) {
    a = normAxis(a, rank);
    if (failed(checkAxis(a, rank)))
      return failure();
  }
  llvm::sort(axes);
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  bool keep = intAttr("keepdims", 1);
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d)
    if (!llvm::is_contained(axes, d))
      shape.push_back(typeOf(*x).getDimSize(d));
    else if (keep)
      shape.push_back(1);
  auto t = outType(0, shaped(shape, typeOf(*x).getElementType()));
  if (failed(t))
    return failure();
  return set(0, b.createOrFold<Op>(loc, *t, *x, b.getDenseI64ArrayAttr(axes),
                                   b.getBoolAttr(keep)));
}

LogicalResult NodeImporter::constant() {
  using AP = onnx::AttributeProto;
  const onnx::TensorProto *tensor = tensorValue("value");
  const AP *f = attr("value_float", AP::FLOAT);
  const AP *fs = attr("value_floats", AP::FLOATS);
  const AP *i = attr("value_int", AP::INT);
  const AP *is = attr("value_ints", AP::INTS);
  std::optional<RankedTensorType> computed;
  if (tensor) {
    auto et = elementType(g.ctx, tensor->data_type());
    if (failed(et))
      return g.nodeError(node) << "unsupported data type "
                               << typeName(tensor->data_type());
    computed = shaped(SmallVector<int64_t>(tensor->dims().begin(),
                                           tensor->dims().end()), *et);
  } else if (f) {
    computed = shaped({}, b.getF32Type());
  } else if (fs) {
    computed = shaped({fs->floats_size()}, b.getF32Type());
  } else if (i) {
    computed = shaped({}, b.getI64Type());
  } else if (is) {
    computed = shaped({is->ints_size()}, b.getI64Type());
  }
  if (!computed)
    return g.nodeError(node) << "only tensor, float(s) and int(s) values are "
                                "supported";
  auto t = outType(0, computed);
  if (failed(t))
    return failure();
  Attribute value;
  if (tensor) {
    auto v = g.tensorAttr(*tensor, *t, /*inlineOnly=*/false);
    if (failed(v))
      return failure();
    value = *v;
  } else if (f) {
    value = DenseElementsAttr::get(*t, f->f());
  } else if (fs) {
    value = DenseElementsAttr::get(
        *t, ArrayRef<float>(fs->floats().data(), fs->floats_size()));
  } else if (i) {
    value = DenseElementsAttr::get(*t, (int64_t)i->i());
  } else {
    value = DenseElementsAttr::get(
        *t, ArrayRef<int64_t>(is->ints().data(), is->ints_size()));
  }
  return set(0, arith::ConstantOp::create(b, loc, *t, cast<TypedAttr>(value)));
}

LogicalResult NodeImporter::constantOfShape() {
  auto dims = constInts(0, "shape");
  if (failed(dims))
    return failure();
  const onnx::TensorProto *value = tensorValue("value");
  Type et = b.getF32Type();
  if (value) {
    auto vt = elementType(g.ctx, value->data_type());
    if (failed(vt))
      return g.nodeError(node) << "unsupported data type "
                               << typeName(value->data_type());
    et = *vt;
  }
  auto t = outType(0, shaped(*dims, et));
  if (failed(t) || failed(checkConstantBytes(*t)))
    return failure();
  Attribute splat;
  if (value) {
    auto v = g.tensorAttr(
        *value,
        shaped(SmallVector<int64_t>(value->dims_size(), 1), t->getElementType()),
        /*inlineOnly=*/true);
    if (failed(v))
      return failure();
    splat = DenseElementsAttr::get(
        *t, cast<DenseElementsAttr>(*v).getSplatValue<Attribute>());
  } else {
    splat = DenseElementsAttr::get(*t, 0.0f);
  }
  return set(0, arith::ConstantOp::create(b, loc, *t, cast<TypedAttr>(splat)));
}

/// Range(start, limit, delta) has max(ceil((limit - start) / delta), 0)
/// elements; the count is bounded before any is made, and integer elements
/// are computed without overflow.
LogicalResult NodeImporter::range() {
  SmallVector<DenseElementsAttr> args;
  const char *names[] = {"start", "limit", "delta"};
  for (auto [i, what] : llvm::enumerate(names)) {
    auto a = constAttr(i, what);
    if (failed(a))
      return failure();
    if (a->getNumElements() != 1)
      return g.nodeError(node) << what << " must be a scalar, got "
                               << a->getType();
    args.push_back(*a);
  }
  auto asDouble = [](DenseElementsAttr a) {
    return isa<FloatType>(a.getElementType())
               ? a.getSplatValue<APFloat>().convertToDouble()
               : (double)a.getSplatValue<APInt>().getSExtValue();
  };
  double start = asDouble(args[0]), delta = asDouble(args[2]);
  double steps = std::ceil((asDouble(args[1]) - start) / delta);
  if (delta == 0 || !std::isfinite(steps))
    return g.nodeError(node) << "start, limit and delta (" << start << ", "
                             << asDouble(args[1]) << ", " << delta
                             << ") give no finite element count; delta must "
                                "be non-zero and all finite";
  Type et = args[0].getElementType();
  // Bounded as doubles first: a count past 2^63 does not convert.
  int64_t width = std::max<unsigned>(et.getIntOrFloatBitWidth() / 8, 1);
  if (steps * width > (double)g.maxConstantBytes)
    return refuseConstant(
        llvm::formatv("of {0:e} elements of {1} bytes", steps, width).str());
  auto t = outType(0, shaped({std::max<int64_t>((int64_t)steps, 0)}, et));
  if (failed(t) || failed(checkConstantBytes(*t)))
    return failure();
  int64_t n = t->getNumElements();
  if (auto ft = dyn_cast<FloatType>(et)) {
    SmallVector<APFloat> vals;
    for (int64_t i = 0; i < n; ++i) {
      APFloat v(start + i * delta);
      bool lost;
      v.convert(ft.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
      vals.push_back(v);
    }
    return set(0, arith::ConstantOp::create(b, loc, *t,
                                            DenseElementsAttr::get(*t, vals)));
  }
  int64_t first = args[0].getSplatValue<APInt>().getSExtValue();
  int64_t step = args[2].getSplatValue<APInt>().getSExtValue();
  SmallVector<APInt> vals;
  for (int64_t i = 0, v = first; i < n; ++i) {
    vals.push_back(APInt(t->getElementTypeBitWidth(), v, /*isSigned=*/true,
                         /*implicitTrunc=*/true));
    if (i + 1 < n && llvm::AddOverflow(v, step, v))
      return g.nodeError(node) << "element " << i + 1
                               << " overflows int64 (every element must fit)";
  }
  return set(0, arith::ConstantOp::create(b, loc, *t,
                                          DenseElementsAttr::get(*t, vals)));
}

LogicalResult NodeImporter::softmax() {
  auto x = in(0);
  if (failed(x))
    return failure();
  auto type = typeOf(*x);
  int64_t rank = type.getRank();
  int64_t axis = normAxis(intAttr("axis", g.opset >= 13 ? -1 : 1), rank);
  if (failed(checkAxis(axis, rank)))
    return failure();
  if (g.opset >= 13 || axis == rank - 1)
    return set(0, nn::SoftmaxOp::create(b, loc, type, *x, axis));
  // Before opset 13 Softmax normalises the flattened [d0..axis-1, axis..]
  // matrix; express that with reshapes around a row softmax.
  int64_t rows = 1, cols = 1;
  for (int64_t d = 0; d < rank; ++d)
    (d < axis ? rows : cols) *= type.getDimSize(d);
  auto flat = RankedTensorType::get({rows, cols}, type.getElementType());
  Value r = nn::ReshapeOp::create(b, loc, flat, *x);
  r = nn::SoftmaxOp::create(b, loc, flat, r, 1);
  return set(0, nn::ReshapeOp::create(b, loc, type, r));
}

/// Reshape, Flatten, Squeeze and Unsqueeze: the target shape is the inferred
/// output type; for Reshape it is also computed from the constant shape
/// operand so that shapes ONNX could not propagate still import.
LogicalResult NodeImporter::reshapeLike() {
  auto x = in(0);
  if (failed(x))
    return failure();
  std::optional<RankedTensorType> computed;
  if (node.op_type() == "Reshape") {
    auto shape = constInts(1, "shape");
    if (failed(shape))
      return failure();
    auto inShape = typeOf(*x).getShape();
    SmallVector<int64_t> out;
    int64_t known = 1, inferAt = -1;
    bool allowZero = intAttr("allowzero", 0);
    for (auto [i, d] : llvm::enumerate(*shape)) {
      if (d == 0 && !allowZero) {
        if (i >= inShape.size())
          return g.nodeError(node) << "shape copies dim " << i
                                   << " that the input does not have";
        d = inShape[i];
      }
      if (d == -1) {
        if (inferAt >= 0)
          return g.nodeError(node) << "shape has more than one -1";
        inferAt = i;
      } else if (d < 0 || llvm::MulOverflow(known, d, known)) {
        return g.nodeError(node)
               << "shape dim " << i << " is " << d
               << (d < 0 ? "" : ", and the shape's element count overflows")
               << " (expected sizes of 0 or more whose product fits int64, "
                  "one -1 to infer, or 0 to copy an input dim)";
      }
      out.push_back(d);
    }
    int64_t total = typeOf(*x).getNumElements();
    // allowzero = 1 makes a 0 a zero-sized dim, not a copy of the input's.
    if (allowZero && llvm::is_contained(out, 0)) {
      if (inferAt >= 0)
        return g.nodeError(node) << "shape " << printShape(*shape)
                                 << " has both 0 and -1, which allowzero = 1 "
                                    "forbids";
      if (total != 0)
        return g.nodeError(node)
               << "shape " << printShape(*shape)
               << " with allowzero = 1 has a zero-sized dim, but the input "
               << typeOf(*x) << " has " << total
               << " elements; allowzero = 0 would copy the input's dim instead";
    }
    if (inferAt >= 0) {
      if (known == 0 || total % known)
        return g.nodeError(node) << "cannot infer the -1 dim of the shape";
      out[inferAt] = total / known;
    }
    computed = RankedTensorType::get(out, typeOf(*x).getElementType());
  } else {
    auto inShape = typeOf(*x).getShape();
    int64_t rank = inShape.size();
    SmallVector<int64_t> out;
    if (node.op_type() == "Flatten") {
      int64_t axis = normAxis(intAttr("axis", 1), rank), rows = 1;
      if (axis < 0 || axis > rank) // Flatten's axis may also be the rank
        return g.nodeError(node)
               << "axis " << intAttr("axis", 1) << " is out of range for rank "
               << rank << " (accepted: " << -rank << " to " << rank << ")";
      for (int64_t d = 0; d < axis; ++d)
        rows *= inShape[d];
      out = {rows, rows ? typeOf(*x).getNumElements() / rows : 0};
    } else {
      // Squeeze/Unsqueeze: axes from the input (opset 13) or the attribute.
      SmallVector<int64_t> axes;
      if (has(1)) {
        auto a = constInts(1, "axes");
        if (failed(a))
          return failure();
        axes = *a;
      } else if (auto a = intsAttr("axes")) {
        axes = *a;
      }
      bool unsqueeze = node.op_type() == "Unsqueeze";
      int64_t outRank = unsqueeze ? rank + axes.size() : rank;
      for (int64_t &a : axes) {
        a = normAxis(a, outRank);
        if (failed(checkAxis(a, outRank)))
          return failure();
        if (!unsqueeze && inShape[a] != 1)
          return g.nodeError(node) << "squeezes axis " << a << " of size "
                                   << inShape[a] << " (only size-1 axes squeeze)";
      }
      if (llvm::SmallDenseSet<int64_t>(axes.begin(), axes.end()).size() !=
          axes.size())
        return g.nodeError(node) << "axes repeat an axis (each may appear once)";
      if (unsqueeze) {
        for (int64_t d = 0, src = 0; d < outRank; ++d)
          out.push_back(llvm::is_contained(axes, d) ? 1 : inShape[src++]);
      } else {
        for (int64_t d = 0; d < rank; ++d)
          if (axes.empty() ? inShape[d] != 1 : !llvm::is_contained(axes, d))
            out.push_back(inShape[d]);
      }
    }
    computed = RankedTensorType::get(out, typeOf(*x).getElementType());
  }
  auto t = outType(0, computed);
  if (failed(t))
    return failure();
  if (t->getNumElements() != typeOf(*x).getNumElements())
    return g.nodeError(node) << "cannot reshape " << typeOf(*x) << " to " << *t
                             << " (the element counts must be equal)";
  return set(0, b.createOrFold<nn::ReshapeOp>(loc, *t, *x));
}

LogicalResult NodeImporter::slice() {
  auto x = in(0);
  if (failed(x))
    return failure();
  auto shape = typeOf(*x).getShape();
  int64_t rank = shape.size();
  auto starts = constInts(1, "starts"), ends = constInts(2, "ends");
  if (failed(starts) || failed(ends))
    return failure();
  SmallVector<int64_t> axes, steps;
  if (has(3)) {
    auto a = constInts(3, "axes");
    if (failed(a))
      return failure();
    axes = *a;
  } else {
    axes = llvm::to_vector(llvm::seq<int64_t>(0, starts->size()));
  }
  if (has(4)) {
    auto s = constInts(4, "steps");
    if (failed(s))
      return failure();
    steps = *s;
  } else {
    steps.assign(starts->size(), 1);
  }
  if (axes.size() != starts->size() || ends->size() != starts->size() ||
      steps.size() != starts->size())
    return g.nodeError(node) << "starts, ends, axes and steps differ in length "
                                "(each needs one entry per sliced axis)";
  SmallVector<int64_t> outStart(rank, 0), outStep(rank, 1), outShape(shape);
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t a = normAxis(axes[i], rank);
    if (failed(checkAxis(a, rank)))
      return failure();
    int64_t dim = shape[a], step = steps[i];
    if (step == 0)
      return g.nodeError(node) << "step of axis " << a
                               << " is zero (steps must be non-zero)";
    // ONNX clamps: starts to [0, dim] ([0, dim-1] backwards), ends likewise.
    auto clampIdx = [&](int64_t v, bool forward) {
      if (v < 0)
        v += dim;
      return forward ? std::clamp<int64_t>(v, 0, dim)
                     : std::clamp<int64_t>(v, -1, dim - 1);
    };
    // Computed ends (a sequence length from Shape) past a table.
    if (step > 0 && isTable(0) && isComputed(2) && (*ends)[i] > dim &&
        (*ends)[i] < std::numeric_limits<int32_t>::max())
      return positionsPastTable((*ends)[i], dim, a);
    int64_t s = clampIdx((*starts)[i], step > 0);
    int64_t e = clampIdx((*ends)[i], step > 0);
    // |step| as unsigned: -INT64_MIN does not fit int64.
    uint64_t stride = step > 0 ? uint64_t(step) : -uint64_t(step);
    int64_t span = step > 0 ? e - s : s - e; // both clamped to [-1, dim]
    int64_t count = span > 0 ? int64_t((uint64_t(span) - 1) / stride + 1) : 0;
    outStart[a] = std::max<int64_t>(count > 0 ? s : 0, 0);
    outStep[a] = step;
    outShape[a] = std::max<int64_t>(count, 0);
  }
  auto computed = RankedTensorType::get(outShape, typeOf(*x).getElementType());
  auto t = outType(0, computed);
  if (failed(t))
    return failure();
  return set(0, b.createOrFold<nn::SliceOp>(loc, *t, *x,
                                             b.getDenseI64ArrayAttr(outStart),
                                             b.getDenseI64ArrayAttr(outStep)));
}

LogicalResult NodeImporter::checkGatherIndices(Value idx, int64_t rows,
                                               int64_t axis) {
  DenseElementsAttr attr;
  if (!matchPattern(idx, m_Constant(&attr)) ||
      !isa<IntegerType>(attr.getElementType()))
    return success();
  int64_t lo = 0, hi = 0;
  for (APInt v : attr.getValues<APInt>()) {
    lo = std::min(lo, v.getSExtValue());
    hi = std::max(hi, v.getSExtValue());
  }
  // Computed indices are positions: 0 .. length-1 (a length below 2^31).
  if (hi >= rows && hi < std::numeric_limits<int32_t>::max() && isComputed(1))
    return positionsPastTable(hi + 1, rows, axis);
  if (hi >= rows || lo < -rows)
    return g.nodeError(node)
           << "index " << (hi >= rows ? hi : lo) << " is out of range for the "
           << rows << " entries of initializer '" << node.input(0)
           << "' on axis " << axis;
  return success();
}

LogicalResult NodeImporter::split() {
  auto x = in(0);
  if (failed(x))
    return failure();
  int64_t rank = typeOf(*x).getRank();
  int64_t axis = normAxis(intAttr("axis", 0), rank);
  if (failed(checkAxis(axis, rank)))
    return failure();
  // Piece sizes: the `split` input (opset 13) or attribute, else equal.
  SmallVector<int64_t> sizes;
  if (has(1)) {
    auto s = constInts(1, "split");
    if (failed(s))
      return failure();
    sizes = *s;
  } else if (auto s = intsAttr("split")) {
    sizes = *s;
  } else if (g.opset >= 18) {
    // Split-18: num_outputs pieces of ceil(dim / n), the last one smaller.
    int64_t dim = typeOf(*x).getDimSize(axis);
    int64_t n = intAttr("num_outputs", node.output_size());
    if (n != node.output_size())
      return g.nodeError(node) << "num_outputs " << n << " does not match its "
                               << node.output_size() << " outputs";
    for (int64_t i = 0, chunk = (dim + n - 1) / n; i < n; ++i)
      sizes.push_back(std::clamp<int64_t>(dim - i * chunk, 0, chunk));
  } else {
    int64_t dim = typeOf(*x).getDimSize(axis), n = node.output_size();
    for (int64_t i = 0; i < n; ++i)
      sizes.push_back(dim / n + (i < dim % n ? 1 : 0));
  }
  if ((int)sizes.size() != node.output_size())
    return g.nodeError(node) << sizes.size() << " split sizes for "
                             << node.output_size()
                             << " outputs (give one size per output)";
  SmallVector<Type> types;
  for (int i = 0; i < node.output_size(); ++i) {
    SmallVector<int64_t> shape(typeOf(*x).getShape());
    shape[axis] = sizes[i];
    auto t = outType(i, shaped(shape, typeOf(*x).getElementType()));
    if (failed(t))
      return failure();
    types.push_back(*t);
  }
  SmallVector<Value> pieces;
  b.createOrFold<nn::SplitOp>(pieces, loc, types, *x, axis);
  for (int i = 0; i < node.output_size(); ++i)
    (void)set(i, pieces[i]);
  return success();
}

/// Explicit begin/end pads per spatial dim, resolving auto_pad.
static FailureOr<SmallVector<int64_t>>
resolvePads(NodeImporter *self, StringRef autoPad, ArrayRef<int64_t> in,
            ArrayRef<int64_t> kernel, ArrayRef<int64_t> strides,
            ArrayRef<int64_t> dilations, std::optional<SmallVector<int64_t>> pads) {
  size_t n = in.size();
  if (autoPad == "NOTSET" || autoPad.empty())
    return pads ? *pads : SmallVector<int64_t>(2 * n, 0);
  SmallVector<int64_t> out(2 * n, 0);
  if (autoPad == "VALID")
    return out;
  for (size_t i = 0; i < n; ++i) {
    int64_t outSize = (in[i] + strides[i] - 1) / strides[i];
    int64_t total = std::max<int64_t>(
        (outSize - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1 - in[i], 0);
    int64_t small = total / 2, large = total - small;
    out[i] = autoPad == "SAME_UPPER" ? small : large;
    out[i + n] = autoPad == "SAME_UPPER" ? large : small;
  }
  (void)self;
  return out;
}

LogicalResult NodeImporter::conv() {
  auto x = in(0), w = in(1);
  if (failed(x) || failed(w))
    return failure();
  size_t spatial = typeOf(*x).getRank() - 2;
  auto kernel = typeOf(*w).getShape().drop_front(2);
  SmallVector<int64_t> strides = intsAttr("strides").value_or(
      SmallVector<int64_t>(spatial, 1));
  SmallVector<int64_t> dilations = intsAttr("dilations").value_or(
      SmallVector<int64_t>(spatial, 1));
  auto pads = resolvePads(this, strAttr("auto_pad", "NOTSET"),
                          typeOf(*x).getShape().drop_front(2), kernel, strides,
                          dilations, intsAttr("pads"));
  if (failed(pads))
    return failure();
  SmallVector<int64_t> shape{typeOf(*x).getDimSize(0), typeOf(*w).getDimSize(0)};
  for (size_t i = 0; i < spatial; ++i)
    shape.push_back((typeOf(*x).getDimSize(i + 2) + (*pads)[i] +
                     (*pads)[i + spatial] - dilations[i] * (kernel[i] - 1) - 1) /
                        strides[i] + 1);
  auto t = outType(0, shaped(shape, typeOf(*x).getElementType()));
  if (failed(t))
    return failure();
  Value bias;
  if (has(2)) {
    auto bv = in(2);
    if (failed(bv))
      return failure();
    bias = *bv;
  }
  return set(0, nn::ConvOp::create(b, loc, *t, *x, *w, bias,
                                   b.getDenseI64ArrayAttr(strides),
                                   b.getDenseI64ArrayAttr(*pads),
                                   b.getDenseI64ArrayAttr(dilations),
                                   intAttr("group", 1)));
}

LogicalResult NodeImporter::maxPool() {
  auto x = in(0);
  if (failed(x) || failed(onlyOutputs(1)))
    return failure();
  if (intAttr("storage_order", 0))
    return g.nodeError(node) << "storage_order = 1 is not supported";
  size_t spatial = typeOf(*x).getRank() - 2;
  auto kernel = intsAttr("kernel_shape");
  if (!kernel || kernel->size() != spatial)
    return g.nodeError(node) << "kernel_shape must have one entry per spatial dim";
  SmallVector<int64_t> strides = intsAttr("strides").value_or(
      SmallVector<int64_t>(spatial, 1));
  SmallVector<int64_t> dilations = intsAttr("dilations").value_or(
      SmallVector<int64_t>(spatial, 1));
  auto pads = resolvePads(this, strAttr("auto_pad", "NOTSET"),
                          typeOf(*x).getShape().drop_front(2), *kernel, strides,
                          dilations, intsAttr("pads"));
  if (failed(pads))
    return failure();
  SmallVector<int64_t> shape(typeOf(*x).getShape().take_front(2));
  bool ceilMode = intAttr("ceil_mode", 0);
  for (size_t i = 0; i < spatial; ++i) {
    int64_t span = typeOf(*x).getDimSize(i + 2) + (*pads)[i] +
                   (*pads)[i + spatial] - dilations[i] * ((*kernel)[i] - 1) - 1;
    int64_t n = (ceilMode ? (span + strides[i] - 1) / strides[i]
                          : span / strides[i]) + 1;
    // ONNX up to opset 17 (and its shape inference) keeps a last ceil-mode
    // window even when it starts in the end padding; the kernel clips it.
    shape.push_back(n);
  }
  auto t = outType(0, shaped(shape, typeOf(*x).getElementType()));
  if (failed(t))
    return failure();
  return set(0, nn::MaxPoolOp::create(b, loc, *t, *x,
                                      b.getDenseI64ArrayAttr(*kernel),
                                      b.getDenseI64ArrayAttr(strides),
                                      b.getDenseI64ArrayAttr(*pads),
                                      b.getDenseI64ArrayAttr(dilations)));
}

/// com.microsoft.MoE (onnxruntime's contrib op): input [rows, H] (or
/// [..., H]), router_probs [rows, E] (logits: the op applies the softmax),
/// fc1/fc3 [E, I, H] and fc2 [E, H, I] as onnxruntime stores them ([out,
/// in] per expert; the older [E, H, I] / [E, I, H] layout is told apart by
/// shape when H != I), attributes k, normalize_routing_weights,
/// activation_type. Biases, the sparse mixer and the fused SwiGLU layout
/// have no nn.moe form and are refused.
LogicalResult NodeImporter::contribMoE() {
  for (int i : {3, 5, 7})
    if (has(i))
      return g.nodeError(node) << "MoE expert biases are not supported (input "
                               << i << ")",
             failure();
  for (int i = 8; i < node.input_size(); ++i)
    if (has(i))
      return g.nodeError(node) << "MoE input " << i
                               << " (quantisation or router weights) is not supported",
             failure();
  if (intAttr("use_sparse_mixer", 0))
    return g.nodeError(node) << "MoE use_sparse_mixer is not supported", failure();
  std::string act = strAttr("activation_type", "relu");
  std::optional<nn::MoeActivation> activation = nn::symbolizeMoeActivation(act);
  if (!activation)
    return g.nodeError(node) << "MoE activation_type '" << act
                             << "' is not supported (relu, gelu, silu, identity)",
           failure();
  auto x = in(0), logits = in(1);
  if (failed(x) || failed(logits))
    return failure();
  auto fc1Raw = in(2);
  if (failed(fc1Raw))
    return failure();
  auto fc1Type = typeOf(*fc1Raw);
  int64_t hidden = typeOf(*x).getShape().back();
  // [E, I, H] (onnxruntime today) unless only [E, H, I] fits the input.
  bool outIn = fc1Type.getRank() != 3 || fc1Type.getDimSize(2) == hidden;
  auto fc1 = expertWeights(2, outIn), fc2 = expertWeights(4, outIn);
  if (failed(fc1) || failed(fc2))
    return failure();
  Value fc3;
  if (has(6)) {
    auto w = expertWeights(6, outIn);
    if (failed(w))
      return failure();
    fc3 = *w;
  }
  int64_t experts = typeOf(*fc1).getDimSize(0), k = intAttr("k", 1);
  if (k < 1 || k > experts)
    return g.nodeError(node) << "MoE k " << k << " must be in [1, " << experts
                             << "]",
           failure();
  auto t = outType(0, typeOf(*x));
  if (failed(t))
    return failure();
  auto moe = nn::MoeOp::create(
      b, loc, *t, *x, *logits, *fc1, *fc2, fc3, b.getI64IntegerAttr(k),
      b.getBoolAttr(intAttr("normalize_routing_weights", 0) != 0),
      nn::MoeActivationAttr::get(b.getContext(), *activation), IntegerAttr());
  if (failed(mlir::verify(moe)))
    return failure();
  return set(0, moe);
}

/// The importer's view of one node for the handlers in ContribOps.cpp.
class ContribNode : public contrib::NodeContext {
public:
  explicit ContribNode(NodeImporter &n) : n(n) {}
  const onnx::NodeProto &node() override { return n.node; }
  OpBuilder &builder() override { return n.b; }
  Location loc() override { return n.loc; }
  InFlightDiagnostic error() override { return n.g.nodeError(n.node); }
  bool has(int i) override { return n.has(i); }
  FailureOr<Value> input(int i) override { return n.in(i); }
  int64_t intAttr(StringRef name, int64_t dflt) override {
    return n.intAttr(name, dflt);
  }
  float floatAttr(StringRef name, float dflt) override {
    return n.floatAttr(name, dflt);
  }
  std::optional<SmallVector<int64_t>> intsAttr(StringRef name) override {
    return n.intsAttr(name);
  }
  FailureOr<RankedTensorType> outType(int i, RankedTensorType computed) override {
    if (i >= n.node.output_size() || n.node.output(i).empty())
      return computed;
    return n.outType(i, computed);
  }
  bool outputUsed(int i) override {
    if (i >= n.node.output_size() || n.node.output(i).empty())
      return false;
    const std::string &name = n.node.output(i);
    for (const auto &other : n.g.model.graph().node())
      if (llvm::is_contained(other.input(), name))
        return true;
    return llvm::any_of(n.g.model.graph().output(),
                        [&](const auto &out) { return out.name() == name; });
  }
  void set(int i, Value v) override { (void)n.set(i, v); }

private:
  NodeImporter &n;
};

template <contrib::Handler H> LogicalResult NodeImporter::contribOp() {
  ContribNode view(*this);
  return H(view);
}

/// Expert weights as nn.moe stacks them, [E, in, out]: a constant
/// initializer, transposed per expert at import when stored [E, out, in].
FailureOr<Value> NodeImporter::expertWeights(int i, bool outIn) {
  auto v = in(i);
  if (failed(v))
    return failure();
  auto type = typeOf(*v);
  if (type.getRank() != 3)
    return g.nodeError(node) << "MoE input " << i << " must be [experts, out, in], got "
                             << type,
           failure();
  if (!outIn)
    return *v;
  auto cst = v->getDefiningOp<arith::ConstantOp>();
  size_t width = type.getElementTypeBitWidth() / 8;
  int64_t e = type.getDimSize(0), rows = type.getDimSize(1),
          cols = type.getDimSize(2);
  std::vector<char> bytes;
  std::string key = node.input(i);
  if (auto res = cst ? dyn_cast<DenseResourceElementsAttr>(cst.getValue())
                     : DenseResourceElementsAttr()) {
    if (AsmResourceBlob *blob = res.getRawHandle().getBlob())
      bytes.assign(blob->getData().begin(), blob->getData().end());
    key = res.getRawHandle().getKey().str();
  } else if (auto dense = cst ? dyn_cast<DenseElementsAttr>(cst.getValue())
                              : DenseElementsAttr();
             dense && width) {
    ArrayRef<char> raw = dense.getRawData();
    for (int64_t n = 0; n < e * rows * cols; ++n)
      bytes.insert(bytes.end(), raw.begin() + (dense.isSplat() ? 0 : n * width),
                   raw.begin() + (dense.isSplat() ? 0 : n * width) + width);
  }
  if (width == 0 || bytes.size() != e * rows * cols * width)
    return g.nodeError(node) << "MoE input " << i
                             << " must be an initializer (its experts are "
                                "transposed at compile time)",
           failure();
  ArrayRef<char> in(bytes.data(), bytes.size());
  std::vector<char> out(in.size());
  for (int64_t x = 0; x < e; ++x)
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t c = 0; c < cols; ++c)
        std::memcpy(out.data() + ((x * cols + c) * rows + r) * width,
                    in.data() + ((x * rows + r) * cols + c) * width, width);
  auto outType = RankedTensorType::get({e, cols, rows}, type.getElementType());
  auto newBlob = HeapAsmResourceBlob::allocateAndCopyWithAlign(
      ArrayRef<char>(out.data(), out.size()), alignof(uint64_t));
  return arith::ConstantOp::create(
             b, loc, outType,
             DenseResourceElementsAttr::get(
                 outType, key + ".in_out",
                 std::move(newBlob)))
      .getResult();
}

/// OneHot(indices, depth, values = [off, on]) along `axis`: the indices,
/// given a unit dim at `axis`, are compared with 0..depth-1 (and with
/// -depth..-1, since negative indices count from the end), and the match
/// selects `on`. depth and values must be constants.
LogicalResult NodeImporter::oneHot() {
  auto idx = in(0), vals = in(2);
  auto depthV = constInts(1, "depth");
  if (failed(idx) || failed(depthV) || failed(vals))
    return failure();
  DenseElementsAttr values;
  if (!matchPattern(*vals, m_Constant(&values)) || values.getNumElements() != 2)
    return g.nodeError(node) << "values must be a constant [off, on] pair",
           failure();
  if (depthV->size() != 1)
    return g.nodeError(node) << "depth must hold one value, not "
                             << depthV->size(),
           failure();
  int64_t depth = depthV->front();
  if (depth < 1)
    return g.nodeError(node) << "depth " << depth << " must be positive",
           failure();
  // The two index ramps compared with the indices are constants.
  if (failed(checkConstantBytes(shaped({depth}, b.getI64Type()))))
    return failure();
  auto it = typeOf(*idx);
  int64_t rank = it.getRank() + 1;
  int64_t axis = normAxis(intAttr("axis", -1), rank);
  if (failed(checkAxis(axis, rank)))
    return failure();
  Value indices = *idx;
  if (!it.getElementType().isInteger(64))
    indices = nn::CastOp::create(b, loc, shaped(it.getShape(), b.getI64Type()),
                                 indices);
  SmallVector<int64_t> unit(it.getShape()), out(it.getShape()), iotaShape;
  unit.insert(unit.begin() + axis, 1);
  out.insert(out.begin() + axis, depth);
  iotaShape.push_back(depth);
  iotaShape.append(rank - axis - 1, 1);
  Value r = b.createOrFold<nn::ReshapeOp>(loc, shaped(unit, b.getI64Type()),
                                          indices);
  SmallVector<int64_t> pos, neg;
  for (int64_t i = 0; i < depth; ++i) {
    pos.push_back(i);
    neg.push_back(i - depth);
  }
  auto iotaType = shaped(iotaShape, b.getI64Type());
  Value iota = arith::ConstantOp::create(
      b, loc, iotaType, DenseElementsAttr::get(iotaType, ArrayRef(pos)));
  Value iotaNeg = arith::ConstantOp::create(
      b, loc, iotaType, DenseElementsAttr::get(iotaType, ArrayRef(neg)));
  auto boolType = shaped(out, b.getI1Type());
  Value hit = nn::OrOp::create(
      b, loc, boolType, nn::EqualOp::create(b, loc, boolType, r, iota),
      nn::EqualOp::create(b, loc, boolType, r, iotaNeg));
  Type et = values.getElementType();
  auto scalar = shaped({}, et);
  auto pick = [&](int64_t i) -> Value {
    return arith::ConstantOp::create(
        b, loc, scalar,
        DenseElementsAttr::get(scalar, values.getValues<Attribute>()[i]));
  };
  auto t = outType(0, shaped(out, et));
  if (failed(t))
    return failure();
  return set(0, nn::WhereOp::create(b, loc, *t, hit, pick(1), pick(0)));
}

/// A two-operand Einsum equation with its output spelled out: each index
/// is a batch index (both operands and the output), contracted (both
/// operands only), free (one operand and the output) or summed (one
/// operand only). Returns failure for what does not lower to nn.matmul
/// (one operand or three, '...', an index repeated in one operand).
struct EinsumSpec {
  std::string lhs, rhs, out;
};

static FailureOr<EinsumSpec> parseEinsum(StringRef equation) {
  std::string eq;
  for (char c : equation)
    if (!llvm::isSpace(c))
      eq += c;
  StringRef text(eq);
  if (text.contains("..."))
    return failure();
  auto [inputs, out] = text.split("->");
  auto [lhs, rhs] = inputs.split(',');
  if (rhs.empty() || rhs.contains(','))
    return failure();
  EinsumSpec spec{lhs.str(), rhs.str(), out.str()};
  auto distinctLetters = [](StringRef s) {
    return llvm::all_of(s, llvm::isAlpha) &&
           std::set<char>(s.begin(), s.end()).size() == s.size();
  };
  if (!distinctLetters(lhs) || !distinctLetters(rhs))
    return failure();
  if (!text.contains("->")) {
    // numpy's implicit output: the indices used once, in alphabetical order.
    for (char c = 'A'; c <= 'z'; ++c)
      if (llvm::count(inputs, c) == 1)
        spec.out += c;
  }
  if (!distinctLetters(spec.out) || llvm::any_of(spec.out, [&](char c) {
        return !StringRef(spec.lhs).contains(c) &&
               !StringRef(spec.rhs).contains(c);
      }))
    return failure();
  return spec;
}

/// `v` (indices `idx`) summed over the indices neither `other` nor `out`
/// holds; `idx` becomes the indices kept.
FailureOr<Value> NodeImporter::sumIndices(Value v, std::string &idx,
                                          StringRef other, StringRef out) {
  SmallVector<int64_t> axes, shape;
  std::string kept;
  for (auto [d, c] : llvm::enumerate(idx)) {
    if (!other.contains(c) && !out.contains(c)) {
      axes.push_back(d);
      continue;
    }
    kept += c;
    shape.push_back(typeOf(v).getDimSize(d));
  }
  idx = kept;
  if (axes.empty())
    return v;
  return b.createOrFold<nn::ReduceSumOp>(
      loc, shaped(shape, typeOf(v).getElementType()), v,
      b.getDenseI64ArrayAttr(axes), b.getBoolAttr(false));
}

/// Einsum as nn ops: indices summed in one operand are reduced first; then
/// lhs is transposed to [batch, free, contracted] and rhs to [batch,
/// contracted, free], both flattened to one M, K and N around an nn.matmul
/// (without batch indices lhs keeps its free dims, the form of a linear
/// layer), and the product is reshaped and transposed to the output.
LogicalResult NodeImporter::einsum() {
  std::string equation = strAttr("equation", "");
  auto spec = parseEinsum(equation);
  if (node.input_size() != 2 || failed(spec))
    return g.nodeError(node)
           << "equation '" << equation
           << "' is not supported (two operands, no '...', no index repeated "
              "in one operand)";
  auto l = in(0), r = in(1);
  if (failed(l) || failed(r))
    return failure();
  std::string lhs = spec->lhs, rhs = spec->rhs, out = spec->out;
  auto lv = sumIndices(*l, lhs, rhs, out), rv = sumIndices(*r, rhs, lhs, out);
  if (failed(lv) || failed(rv))
    return failure();
  std::string batch, lfree, rfree, contract;
  for (char c : lhs)
    (rhs.find(c) == std::string::npos   ? lfree
     : out.find(c) == std::string::npos ? contract
                                        : batch) += c;
  for (char c : rhs)
    if (lhs.find(c) == std::string::npos)
      rfree += c;
  llvm::StringMap<int64_t> size;
  for (auto [idx, v] : {std::pair(lhs, *lv), std::pair(rhs, *rv)})
    for (auto [d, c] : llvm::enumerate(idx)) {
      int64_t n = typeOf(v).getDimSize(d);
      auto [it, fresh] = size.try_emplace(StringRef(&c, 1), n);
      if (!fresh && it->second != n)
        return g.nodeError(node)
               << "index '" << c << "' is " << it->second
               << " in one operand and " << n << " in the other";
    }
  Type et = typeOf(*lv).getElementType();
  auto dims = [&](StringRef idx) {
    SmallVector<int64_t> s;
    for (char c : idx)
      s.push_back(size.lookup(StringRef(&c, 1)));
    return s;
  };
  auto prod = [&](StringRef idx) {
    int64_t p = 1;
    for (int64_t d : dims(idx))
      p *= d;
    return p;
  };
  // Transpose `v` (indices `idx`) to `order`, then reshape it to `shape`.
  auto arrange = [&](Value v, StringRef idx, StringRef order,
                     ArrayRef<int64_t> shape) {
    SmallVector<int64_t> perm;
    for (char c : order)
      perm.push_back(idx.find(c));
    v = b.createOrFold<nn::TransposeOp>(loc, shaped(dims(order), et), v,
                                        b.getDenseI64ArrayAttr(perm));
    return b.createOrFold<nn::ReshapeOp>(loc, shaped(shape, et), v);
  };
  SmallVector<int64_t> lshape = dims(batch), rshape = dims(batch);
  if (batch.empty())
    lshape = dims(lfree);
  else
    lshape.push_back(prod(lfree));
  lshape.push_back(prod(contract));
  rshape.append({prod(contract), prod(rfree)});
  Value a = arrange(*lv, lhs, batch + lfree + contract, lshape);
  Value c = arrange(*rv, rhs, batch + contract + rfree, rshape);
  auto mm = nn::matmulShape(lshape, rshape);
  if (failed(mm))
    return g.nodeError(node) << "operands do not multiply";
  Value p = b.createOrFold<nn::MatMulOp>(loc, shaped(*mm, et), a, c);
  std::string produced = batch + lfree + rfree;
  p = b.createOrFold<nn::ReshapeOp>(loc, shaped(dims(produced), et), p);
  auto t = outType(0, shaped(dims(out), et));
  if (failed(t))
    return failure();
  SmallVector<int64_t> perm;
  for (char ch : out)
    perm.push_back(produced.find(ch));
  return set(0, b.createOrFold<nn::TransposeOp>(loc, *t, p,
                                                b.getDenseI64ArrayAttr(perm)));
}

/// Integer Mod (fmod = 0: the result takes the divisor's sign, as Python's
/// %) as a - b·trunc(a / b), moved by b where it is non-zero and its sign
/// differs from b's. It is built from ops that fold, so the shape
/// arithmetic exporters write evaluates at import; parc has no Mod kernel
/// for runtime values.
LogicalResult NodeImporter::mod() {
  auto l = in(0), r = in(1);
  if (failed(l) || failed(r))
    return failure();
  Type et = typeOf(*l).getElementType();
  if (intAttr("fmod", 0) || !isa<IntegerType>(et) || et.isInteger(1))
    return g.nodeError(node) << "only integer Mod with fmod = 0 is supported";
  auto shape =
      nn::broadcastShapes(typeOf(*l).getShape(), typeOf(*r).getShape());
  if (failed(shape))
    return g.nodeError(node) << "operand shapes " << typeOf(*l) << " and "
                             << typeOf(*r) << " are incompatible";
  auto t = outType(0, shaped(*shape, et));
  if (failed(t))
    return failure();
  auto scalar = shaped({}, et);
  Value zero = arith::ConstantOp::create(
      b, loc, scalar,
      DenseElementsAttr::get(scalar, APInt(et.getIntOrFloatBitWidth(), 0)));
  auto bits = [&](Value v) {
    return shaped(typeOf(v).getShape(), b.getI1Type());
  };
  auto negative = [&](Value v) {
    return b.createOrFold<nn::LessOp>(loc, bits(v), v, zero);
  };
  Value q = b.createOrFold<nn::DivOp>(loc, *t, *l, *r);
  Value rem = b.createOrFold<nn::SubOp>(
      loc, *t, *l, b.createOrFold<nn::MulOp>(loc, *t, q, *r));
  Value nonzero = b.createOrFold<nn::NotOp>(
      loc, bits(rem), b.createOrFold<nn::EqualOp>(loc, bits(rem), rem, zero));
  Value signsDiffer = b.createOrFold<nn::NotOp>(
      loc, bits(rem),
      b.createOrFold<nn::EqualOp>(loc, bits(rem), negative(rem), negative(*r)));
  Value fix = b.createOrFold<nn::AndOp>(loc, bits(rem), nonzero, signsDiffer);
  Value v = b.createOrFold<nn::WhereOp>(
      loc, *t, fix, b.createOrFold<nn::AddOp>(loc, *t, rem, *r), rem);
  if (!matchPattern(v, m_Constant()))
    return g.nodeError(node) << "Mod of runtime values is not supported (parc "
                                "evaluates Mod when both operands are "
                                "compile-time constants)";
  return set(0, v);
}

LogicalResult NodeImporter::gelu() {
  auto x = in(0);
  std::string approx = strAttr("approximate", "none");
  auto mode = nn::symbolizeGeluApproximation(approx);
  if (failed(x))
    return failure();
  if (!mode)
    return g.nodeError(node) << "approximate '" << approx
                             << "' is not supported (none or tanh)";
  return set(0, nn::GeluOp::create(
                    b, loc, typeOf(*x), *x,
                    nn::GeluApproximationAttr::get(b.getContext(), *mode)));
}

LogicalResult NodeImporter::power() {
  // The runtime computes in the base's type: an exponent of another type
  // (ONNX allows any numeric pair) is cast to it first.
  auto base = in(0), exponent = in(1);
  if (failed(base) || failed(exponent))
    return failure();
  Type et = typeOf(*base).getElementType();
  Value e = *exponent;
  if (typeOf(e).getElementType() != et)
    e = b.createOrFold<nn::CastOp>(loc, shaped(typeOf(e).getShape(), et), e);
  return binaryOf<nn::PowOp>(*base, e);
}

LogicalResult NodeImporter::where() {
  auto c = in(0), l = in(1), r = in(2);
  if (failed(c) || failed(l) || failed(r))
    return failure();
  auto lr = nn::broadcastShapes(typeOf(*l).getShape(), typeOf(*r).getShape());
  FailureOr<SmallVector<int64_t>> all = failure();
  if (succeeded(lr))
    all = nn::broadcastShapes(typeOf(*c).getShape(), *lr);
  if (failed(all))
    return g.nodeError(node) << "operands do not broadcast" << kBroadcastRule;
  auto t = outType(0, shaped(*all, typeOf(*l).getElementType()));
  if (failed(t))
    return failure();
  return set(0, b.createOrFold<nn::WhereOp>(loc, *t, *c, *l, *r));
}

LogicalResult NodeImporter::castTo() {
  auto x = in(0);
  if (failed(x))
    return failure();
  auto et = elementType(g.ctx, intAttr("to", 0));
  if (failed(et))
    return g.nodeError(node) << "unsupported data type "
                             << typeName(intAttr("to", 0));
  auto t = outType(0, shaped(typeOf(*x).getShape(), *et));
  if (failed(t))
    return failure();
  return set(0, b.createOrFold<nn::CastOp>(loc, *t, *x));
}

LogicalResult NodeImporter::identity() {
  StringRef op = node.op_type();
  // Inference: Dropout is the identity; its mask output must be unused.
  auto x = in(0);
  if (failed(x) || failed(onlyOutputs(1)))
    return failure();
  if (op == "Dropout" && has(2)) {
    auto training = constAttr(2, "training_mode");
    if (failed(training))
      return failure();
    if (training->getSplatValue<bool>())
      return g.nodeError(node) << "training mode is not supported (parc "
                                  "compiles inference graphs)";
  }
  return set(0, *x);
}

LogicalResult NodeImporter::gemm() {
  auto a = in(0), bb = in(1);
  if (failed(a) || failed(bb))
    return failure();
  if (typeOf(*a).getRank() != 2 || typeOf(*bb).getRank() != 2)
    return g.nodeError(node) << "A and B must be 2-D";
  int64_t m = typeOf(*a).getDimSize(intAttr("transA", 0) ? 1 : 0);
  int64_t n = typeOf(*bb).getDimSize(intAttr("transB", 0) ? 0 : 1);
  auto t = outType(0, shaped({m, n}, typeOf(*a).getElementType()));
  if (failed(t))
    return failure();
  Value c;
  if (has(2)) {
    auto cv = in(2);
    if (failed(cv))
      return failure();
    c = *cv;
  }
  return set(0, nn::GemmOp::create(b, loc, *t, *a, *bb, c,
                                   b.getF32FloatAttr(floatAttr("alpha", 1.0f)),
                                   b.getF32FloatAttr(floatAttr("beta", 1.0f)),
                                   b.getBoolAttr(intAttr("transA", 0) != 0),
                                   b.getBoolAttr(intAttr("transB", 0) != 0)));
}

LogicalResult NodeImporter::layerNorm() {
  auto x = in(0), s = in(1);
  if (failed(x) || failed(s) || failed(onlyOutputs(1)))
    return failure();
  auto t = outType(0, typeOf(*x));
  if (failed(t))
    return failure();
  Value bias;
  if (has(2)) {
    auto bv = in(2);
    if (failed(bv))
      return failure();
    bias = *bv;
  }
  int64_t rank = typeOf(*x).getRank();
  int64_t axis = normAxis(intAttr("axis", -1), rank);
  if (failed(checkAxis(axis, rank)))
    return failure();
  return set(0, nn::LayerNormOp::create(
                    b, loc, *t, *x, *s, bias, b.getI64IntegerAttr(axis),
                    b.getF32FloatAttr(floatAttr("epsilon", 1e-5f))));
}

LogicalResult NodeImporter::transpose() {
  auto x = in(0);
  if (failed(x))
    return failure();
  int64_t rank = typeOf(*x).getRank();
  SmallVector<int64_t> perm = intsAttr("perm").value_or(
      llvm::to_vector(llvm::reverse(llvm::seq<int64_t>(0, rank))));
  if (!isPermutationVector(perm) || (int64_t)perm.size() != rank)
    return g.nodeError(node) << "perm is not a permutation (it must hold "
                                "each of 0 to "
                             << rank - 1 << " once)";
  SmallVector<int64_t> shape;
  for (int64_t p : perm)
    shape.push_back(typeOf(*x).getDimSize(p));
  auto t = outType(0, shaped(shape, typeOf(*x).getElementType()));
  if (failed(t))
    return failure();
  return set(0, b.createOrFold<nn::TransposeOp>(loc, *t, *x,
                                                b.getDenseI64ArrayAttr(perm)));
}

LogicalResult NodeImporter::expand() {
  auto x = in(0);
  auto target = constInts(1, "shape");
  if (failed(x) || failed(target))
    return failure();
  auto shape = nn::broadcastShapes(typeOf(*x).getShape(), *target);
  if (failed(shape))
    return g.nodeError(node) << "input does not broadcast to the shape"
                             << kBroadcastRule;
  auto t = outType(0, shaped(*shape, typeOf(*x).getElementType()));
  if (failed(t))
    return failure();
  return set(0, b.createOrFold<nn::ExpandOp>(loc, *t, *x));
}

LogicalResult NodeImporter::concatenate() {
  SmallVector<Value> inputs;
  for (int i = 0; i < node.input_size(); ++i) {
    auto v = in(i);
    if (failed(v))
      return failure();
    inputs.push_back(*v);
  }
  int64_t rank = typeOf(inputs.front()).getRank();
  int64_t axis = normAxis(intAttr("axis", 0), rank);
  if (failed(checkAxis(axis, rank)))
    return failure();
  SmallVector<int64_t> shape(typeOf(inputs.front()).getShape());
  shape[axis] = 0;
  for (Value v : inputs)
    shape[axis] += typeOf(v).getDimSize(axis);
  auto t = outType(0, shaped(shape, typeOf(inputs.front()).getElementType()));
  if (failed(t))
    return failure();
  // Zero-sized pieces (an empty KV past) contribute nothing.
  llvm::erase_if(inputs, [&](Value v) { return typeOf(v).getDimSize(axis) == 0; });
  if (inputs.empty())
    return g.nodeError(node) << "every input is empty";
  return set(0, b.createOrFold<nn::ConcatOp>(loc, *t, inputs, axis));
}

LogicalResult NodeImporter::gather() {
  auto data = in(0), idx = in(1);
  if (failed(data) || failed(idx))
    return failure();
  int64_t axis = normAxis(intAttr("axis", 0), typeOf(*data).getRank());
  if (failed(checkAxis(axis, typeOf(*data).getRank())))
    return failure();
  auto ds = typeOf(*data).getShape();
  if (isTable(0) && failed(checkGatherIndices(*idx, ds[axis], axis)))
    return failure();
  SmallVector<int64_t> shape(ds.take_front(axis));
  llvm::append_range(shape, typeOf(*idx).getShape());
  llvm::append_range(shape, ds.drop_front(axis + 1));
  auto t = outType(0, shaped(shape, typeOf(*data).getElementType()));
  if (failed(t))
    return failure();
  return set(0, b.createOrFold<nn::GatherOp>(loc, *t, *data, *idx, axis));
}

LogicalResult NodeImporter::scatterElements() {
  auto data = in(0), idx = in(1), upd = in(2);
  if (failed(data) || failed(idx) || failed(upd))
    return failure();
  auto t = outType(0, typeOf(*data));
  if (failed(t))
    return failure();
  auto reduction = nn::symbolizeScatterReduction(strAttr("reduction", "none"));
  if (!reduction)
    return g.nodeError(node) << "unsupported reduction '"
                             << strAttr("reduction", "none") << "'";
  int64_t axis = normAxis(intAttr("axis", 0), t->getRank());
  if (failed(checkAxis(axis, t->getRank())))
    return failure();
  return set(0, nn::ScatterElementsOp::create(b, loc, *t, *data, *idx, *upd,
                                              axis, *reduction));
}

LogicalResult NodeImporter::trilu() {
  auto x = in(0);
  if (failed(x))
    return failure();
  int64_t k = 0;
  if (has(1)) {
    auto kv = constInts(1, "k");
    if (failed(kv))
      return failure();
    k = kv->front();
  }
  return set(0, nn::TriluOp::create(b, loc, typeOf(*x), *x,
                                    intAttr("upper", 1) != 0, k));
}

LogicalResult NodeImporter::topK() {
  auto x = in(0);
  auto k = constInts(1, "k");
  if (failed(x) || failed(k))
    return failure();
  int64_t rank = typeOf(*x).getRank();
  int64_t axis = normAxis(intAttr("axis", -1), rank);
  if (failed(checkAxis(axis, rank)))
    return failure();
  SmallVector<int64_t> shape(typeOf(*x).getShape());
  shape[axis] = k->front();
  auto tv = outType(0, shaped(shape, typeOf(*x).getElementType()));
  auto ti = outType(1, shaped(shape, b.getI64Type()));
  if (failed(tv) || failed(ti))
    return failure();
  auto top = nn::TopKOp::create(b, loc, *tv, *ti, *x, k->front(), axis,
                                intAttr("largest", 1) != 0,
                                intAttr("sorted", 1) != 0);
  (void)set(0, top.getValues());
  return set(1, top.getIndices());
}

LogicalResult NodeImporter::shapeOf() {
  auto x = in(0);
  if (failed(x))
    return failure();
  auto shape = typeOf(*x).getShape();
  int64_t rank = shape.size();
  int64_t start = std::clamp<int64_t>(normAxis(intAttr("start", 0), rank), 0, rank);
  int64_t end = std::clamp<int64_t>(normAxis(intAttr("end", rank), rank), 0, rank);
  SmallVector<int64_t> dims(shape.begin() + start,
                            shape.begin() + std::max(start, end));
  auto t = outType(0, shaped({(int64_t)dims.size()}, b.getI64Type()));
  if (failed(t))
    return failure();
  return set(0, arith::ConstantOp::create(
                    b, loc, *t, DenseElementsAttr::get(*t, ArrayRef(dims))));
}

LogicalResult NodeImporter::sizeOf() {
  auto x = in(0);
  auto t = outType(0, shaped({}, b.getI64Type()));
  if (failed(x) || failed(t))
    return failure();
  return set(0, arith::ConstantOp::create(
                    b, loc, *t,
                    DenseElementsAttr::get(*t, typeOf(*x).getNumElements())));
}

/// An entry's versions are those OpsetRegistry resolves its op to at the
/// opsets parc reads (OpTableTest checks that they match); a handler that
/// reads g.opset tells them apart.
ArrayRef<OpEntry> NodeImporter::table() {
  static const OpEntry entries[] = {
      // Elementwise.
      {{"", "Neg", {6, 13}}, &NodeImporter::unary<nn::NegOp>},
      {{"", "Exp", {6, 13}}, &NodeImporter::unary<nn::ExpOp>},
      {{"", "Log", {6, 13}}, &NodeImporter::unary<nn::LogOp>},
      {{"", "Sqrt", {6, 13}}, &NodeImporter::unary<nn::SqrtOp>},
      {{"", "Reciprocal", {6, 13}}, &NodeImporter::unary<nn::ReciprocalOp>},
      {{"", "Tanh", {6, 13}}, &NodeImporter::unary<nn::TanhOp>},
      {{"", "Erf", {9, 13}}, &NodeImporter::unary<nn::ErfOp>},
      {{"", "Gelu", {20}}, &NodeImporter::gelu},
      {{"", "Sigmoid", {6, 13}}, &NodeImporter::unary<nn::SigmoidOp>},
      {{"", "Relu", {6, 13, 14}}, &NodeImporter::unary<nn::ReluOp>},
      {{"", "Not", {1}}, &NodeImporter::unary<nn::NotOp>},
      {{"", "Add", {7, 13, 14}}, &NodeImporter::binary<nn::AddOp>},
      {{"", "Sub", {7, 13, 14}}, &NodeImporter::binary<nn::SubOp>},
      {{"", "Mul", {7, 13, 14}}, &NodeImporter::binary<nn::MulOp>},
      {{"", "Div", {7, 13, 14}}, &NodeImporter::binary<nn::DivOp>},
      {{"", "Mod", {10, 13}}, &NodeImporter::mod},
      {{"", "Pow", {7, 12, 13, 15}}, &NodeImporter::power},
      {{"", "Equal", {11, 13}}, &NodeImporter::binary<nn::EqualOp>},
      {{"", "Less", {9, 13}}, &NodeImporter::binary<nn::LessOp>},
      {{"", "Greater", {9, 13}}, &NodeImporter::binary<nn::GreaterOp>},
      {{"", "And", {7}}, &NodeImporter::binary<nn::AndOp>},
      {{"", "Or", {7}}, &NodeImporter::binary<nn::OrOp>},
      {{"", "Min", {8, 12, 13}}, &NodeImporter::variadic<nn::MinOp>},
      {{"", "Max", {8, 12, 13}}, &NodeImporter::variadic<nn::MaxOp>},
      {{"", "Sum", {8, 13}}, &NodeImporter::variadic<nn::AddOp>},
      {{"", "Where", {9, 16}}, &NodeImporter::where},
      {{"", "OneHot", {11}}, &NodeImporter::oneHot},
      {{"", "Cast", {9, 13, 19}}, &NodeImporter::castTo},
      {{"", "Identity", {1, 13, 14, 16}}, &NodeImporter::identity},
      {{"", "Dropout", {10, 12, 13}}, &NodeImporter::identity},
      // Linear algebra.
      {{"", "MatMul", {9, 13}}, &NodeImporter::binary<nn::MatMulOp>},
      {{"", "Einsum", {12}}, &NodeImporter::einsum},
      {{"", "Gemm", {11, 13}}, &NodeImporter::gemm},
      // Normalisation and reductions.
      {{"", "Softmax", {11, 13}}, &NodeImporter::softmax},
      {{"", "LayerNormalization", {17}}, &NodeImporter::layerNorm},
      {{"", "ReduceMean", {11, 13, 18}},
       &NodeImporter::reduce<nn::ReduceMeanOp>},
      {{"", "ReduceSum", {11, 13}}, &NodeImporter::reduce<nn::ReduceSumOp>},
      {{"", "ReduceMax", {11, 12, 13, 18}},
       &NodeImporter::reduce<nn::ReduceMaxOp>},
      {{"", "ReduceMin", {11, 12, 13, 18}},
       &NodeImporter::reduce<nn::ReduceMinOp>},
      {{"", "ReduceProd", {11, 13, 18}},
       &NodeImporter::reduce<nn::ReduceProdOp>},
      // Data movement.
      {{"", "Reshape", {5, 13, 14}}, &NodeImporter::reshapeLike},
      {{"", "Flatten", {11, 13}}, &NodeImporter::reshapeLike},
      {{"", "Squeeze", {11, 13}}, &NodeImporter::reshapeLike},
      {{"", "Unsqueeze", {11, 13}}, &NodeImporter::reshapeLike},
      {{"", "Transpose", {1, 13}}, &NodeImporter::transpose},
      {{"", "Expand", {8, 13}}, &NodeImporter::expand},
      {{"", "Concat", {11, 13}}, &NodeImporter::concatenate},
      {{"", "Split", {11, 13, 18}}, &NodeImporter::split},
      {{"", "Slice", {11, 13}}, &NodeImporter::slice},
      {{"", "Gather", {11, 13}}, &NodeImporter::gather},
      {{"", "ScatterElements", {11, 13, 16}}, &NodeImporter::scatterElements},
      {{"", "Trilu", {14}}, &NodeImporter::trilu},
      {{"", "TopK", {11}}, &NodeImporter::topK},
      // Convolution.
      {{"", "Conv", {11}}, &NodeImporter::conv},
      {{"", "MaxPool", {11, 12}}, &NodeImporter::maxPool},
      // Ops whose value is known at compile time once shapes are static.
      {{"", "Constant", {11, 12, 13}}, &NodeImporter::constant},
      {{"", "Shape", {1, 13, 15}}, &NodeImporter::shapeOf},
      {{"", "Size", {1, 13}}, &NodeImporter::sizeOf},
      {{"", "ConstantOfShape", {9}}, &NodeImporter::constantOfShape},
      {{"", "Range", {11}}, &NodeImporter::range},
      // onnxruntime's ops (ContribOps.cpp, MoE above); it registers
      // SimplifiedLayerNormalization in the default domain too, where the
      // genai model builder writes it.
      {{"com.microsoft", "Attention", {1}},
       &NodeImporter::contribOp<contrib::attention>},
      {{"com.microsoft", "GroupQueryAttention", {1}},
       &NodeImporter::contribOp<contrib::groupQueryAttention>},
      {{"com.microsoft", "MultiHeadAttention", {1}},
       &NodeImporter::contribOp<contrib::multiHeadAttention>},
      {{"com.microsoft", "RotaryEmbedding", {1}},
       &NodeImporter::contribOp<contrib::rotaryEmbedding>},
      {{"com.microsoft", "MatMulNBits", {1}},
       &NodeImporter::contribOp<contrib::matMulNBits>},
      {{"com.microsoft", "SkipLayerNormalization", {1}},
       &NodeImporter::contribOp<contrib::skipLayerNorm>},
      {{"com.microsoft", "SkipSimplifiedLayerNormalization", {1}},
       &NodeImporter::contribOp<contrib::skipSimplifiedLayerNorm>},
      {{"com.microsoft", "SimplifiedLayerNormalization", {1}},
       &NodeImporter::contribOp<contrib::simplifiedLayerNorm>},
      {{"", "SimplifiedLayerNormalization", {1}},
       &NodeImporter::contribOp<contrib::simplifiedLayerNorm>},
      {{"com.microsoft", "EmbedLayerNormalization", {1}},
       &NodeImporter::contribOp<contrib::embedLayerNorm>},
      {{"com.microsoft", "FastGelu", {1}},
       &NodeImporter::contribOp<contrib::fastGelu>},
      {{"com.microsoft", "BiasGelu", {1}},
       &NodeImporter::contribOp<contrib::biasGelu>},
      {{"com.microsoft", "Gelu", {1}}, &NodeImporter::contribOp<contrib::gelu>},
      {{"com.microsoft", "QuickGelu", {1}},
       &NodeImporter::contribOp<contrib::quickGelu>},
      {{"com.microsoft", "MoE", {1}}, &NodeImporter::contribMoE},
  };
  return entries;
}

const OpEntry *NodeImporter::find(const onnx::NodeProto &node) {
  static const llvm::StringMap<const OpEntry *> byName = [] {
    llvm::StringMap<const OpEntry *> map;
    for (const OpEntry &entry : table())
      map[qualifiedOp(entry.domain, entry.type)] = &entry;
    return map;
  }();
  return byName.lookup(qualifiedOp(domainOf(node), node.op_type()));
}

LogicalResult NodeImporter::importOp() {
  const OpEntry *entry = find(node);
  assert(entry && "checkSupported admits only ops in the table");
  return (this->*entry->handler)();
}

/// Every node's op is in the table, at a version its entry names.
LogicalResult GraphImporter::checkSupported() {
  std::vector<const onnx::NodeProto *> unsupported;
  for (const auto &node : model.graph().node())
    if (!NodeImporter::find(node))
      unsupported.push_back(&node);
  if (!unsupported.empty()) {
    auto diag = error() << unsupported.size()
                        << " node(s) use ops parc does not support:";
    for (const auto *node : unsupported)
      diag << "\n  " << describe(*node);
    return failure();
  }
  bool ok = true;
  for (const auto &node : model.graph().node()) {
    const OpEntry &entry = *NodeImporter::find(node);
    if (auto why =
            parc::checkOnnxOpVersion(entry, opsets.lookup(entry.domain))) {
      nodeError(node) << *why;
      ok = false;
    }
  }
  return success(ok);
}

LogicalResult GraphImporter::importNode(const onnx::NodeProto &node) {
  if (node.op_type() == "Constant")
    constantOutputs.insert(node.output(0));
  return NodeImporter(*this, node).import();
}

OwningOpRef<ModuleOp> GraphImporter::run(const parc::OnnxImportOptions &options) {
  // Unnamed nodes get their op type and index, so diagnostics can name them.
  for (auto [i, node] : llvm::enumerate(*model.mutable_graph()->mutable_node()))
    if (node.name().empty())
      node.set_name(node.op_type() + "_" + std::to_string(i));
  maxConstantBytes = options.maxConstantBytes;
  // Every createOrFold evaluates a node whose inputs are all constants; the
  // constants it makes are bounded as the importer's own are.
  nn::FoldBudget budget(maxConstantBytes);
  registerContribSchemas();
  if (failed(checkOpsets()) || failed(checkSupported()) ||
      failed(checkElementTypes()) || failed(bindInputShapes(options)) ||
      failed(checkDataflow()) || failed(sortNodes()) ||
      failed(checkAttributeTypes()) || failed(checkModel()) ||
      failed(inferShapes()))
    return nullptr;

  const auto &graph = model.graph();
  SmallVector<Type> argTypes;
  SmallVector<std::string> argNames;
  for (const auto &input : graph.input()) {
    if (initializers.count(input.name()))
      continue;
    auto t = tensorType(input.type(), "graph input '" + input.name() + "'");
    if (failed(t))
      return nullptr;
    argTypes.push_back(*t);
    argNames.push_back(input.name());
  }
  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc());
  builder.setInsertionPointToEnd(module->getBody());
  // Result types are known once the body is built: ONNX inference may leave
  // outputs dynamic that folding made static.
  auto func = func::FuncOp::create(builder, fileLoc(), "main",
                                   builder.getFunctionType(argTypes, {}));
  Block *entry = func.addEntryBlock();
  for (auto [i, name] : llvm::enumerate(argNames)) {
    func.setArgAttr(i, "onnx.name", builder.getStringAttr(name));
    if (auto dim = batchDims.find(name); dim != batchDims.end())
      func.setArgAttr(i, "onnx.batch_dim", builder.getI64IntegerAttr(dim->second));
    // What reads a graph input directly is located at it, as at a node.
    entry->getArgument(i).setLoc(
        NameLoc::get(StringAttr::get(ctx, name), fileLoc()));
    values[name] = entry->getArgument(i);
  }
  builder.setInsertionPointToEnd(entry);
  for (const auto &node : graph.node())
    if (failed(importNode(node)))
      return nullptr;
  SmallVector<Value> results;
  for (auto [i, out] : llvm::enumerate(graph.output())) {
    auto it = values.find(out.name());
    if (it == values.end()) {
      if (!initializers.count(out.name()))
        return error() << "graph output '" << out.name()
                       << "' is produced by no node",
               nullptr;
      onnx::NodeProto none;
      none.set_name(out.name());
      auto v = lookup(out.name(), none);
      if (failed(v))
        return nullptr;
      it = values.find(out.name());
    }
    results.push_back(it->second);
  }
  func::ReturnOp::create(builder, fileLoc(), results);
  // Folding leaves the constants of exporters' shape subgraphs (and nodes
  // whose outputs nothing reads) unused; users come before producers in
  // reverse order, so one sweep removes whole dead chains.
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(*entry)))
    if (isOpTriviallyDead(&op))
      op.erase();
  func.setFunctionType(
      builder.getFunctionType(argTypes, ValueRange(results).getTypes()));
  for (auto [i, out] : llvm::enumerate(graph.output())) {
    func.setResultAttr(i, "onnx.name", builder.getStringAttr(out.name()));
    if (auto dim = batchDims.find(out.name()); dim != batchDims.end())
      func.setResultAttr(i, "onnx.batch_dim",
                         builder.getI64IntegerAttr(dim->second));
  }
  if (failed(verify(*module)))
    return nullptr;
  return module;
}

} // namespace

//===----------------------------------------------------------------------===//
// The op table
//===----------------------------------------------------------------------===//

std::vector<const parc::OnnxOp *> parc::onnxOpTable() {
  std::vector<const OnnxOp *> ops;
  for (const OpEntry &entry : NodeImporter::table())
    ops.push_back(&entry);
  return ops;
}

std::optional<int> parc::onnxSchemaVersion(const OnnxOp &op, int64_t opset) {
  registerContribSchemas();
  const onnx::OpSchema *schema =
      OpsetRegistry::get().GetSchema(op.type.str(), opset, op.domain.str());
  if (!schema)
    return std::nullopt;
  return schema->SinceVersion();
}

std::optional<std::string> parc::checkOnnxOpVersion(const OnnxOp &op,
                                                    int64_t opset) {
  std::optional<int> version = onnxSchemaVersion(op, opset);
  if (!version || llvm::is_contained(op.versions, *version))
    return std::nullopt;
  std::string message;
  llvm::raw_string_ostream os(message);
  os << "parc imports " << qualifiedOp(op.domain, op.type) << " version"
     << (op.versions.size() == 1 ? " " : "s ") << llvm::interleaved(op.versions)
     << "; ";
  if (!op.domain.empty())
    os << op.domain << " ";
  os << "opset " << opset << " resolves to version " << *version;
  return message;
}

//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

llvm::Error parc::parseInputShapes(ArrayRef<std::string> specs,
                                   OnnxImportOptions &options) {
  // Names may hold '=': a name ends at the last one.
  if (auto err = cli::checkDistinctNames("input-shape", specs,
                                         /*nameEndsAtLastEq=*/true))
    return err;
  for (const std::string &spec : specs) {
    auto [name, dims] = StringRef(spec).rsplit('=');
    if (name.empty() || dims.empty())
      return llvm::createStringError("--input-shape '" + spec +
                                     "' is not NAME=D0xD1x...");
    SmallVector<int64_t> shape;
    SmallVector<StringRef> parts;
    if (dims != "scalar")
      dims.split(parts, 'x');
    for (StringRef p : parts) {
      int64_t d;
      if (p.getAsInteger(10, d) || d < 0)
        return llvm::createStringError("--input-shape '" + spec +
                                       "' has a bad dimension '" + p + "'");
      shape.push_back(d);
    }
    options.inputShapes[name] = shape;
  }
  return llvm::Error::success();
}

namespace {

/// Imports `buffer`; a binary model's weights are left in it (borrowed from
/// `mapped` when it is the buffer, else copied once into blobs).
OwningOpRef<ModuleOp>
importModel(const llvm::MemoryBuffer &buffer, StringRef path,
            MLIRContext *context, const parc::OnnxImportOptions &options,
            std::shared_ptr<const llvm::MemoryBuffer> mapped) {
  context->loadDialect<nn::NNDialect, arith::ArithDialect, func::FuncDialect>();
  auto loc = FileLineColLoc::get(context, path, 0, 0);
  onnx::ModelProto model;
  StringRef text = buffer.getBuffer();
  // The ONNX text syntax starts with a `<...>` header or a graph name, after
  // any `#` comment lines (lit tests keep their RUN lines there); a binary
  // model starts with a protobuf field tag.
  StringRef head = text.ltrim();
  while (head.starts_with("#"))
    head = head.drop_until([](char c) { return c == '\n'; }).ltrim();
  bool isText =
      !head.empty() && (head.starts_with("<") || llvm::isAlpha(head.front()));
  std::optional<parc::onnx_import::SplitModel> split;
  if (isText) {
    auto status = onnx::OnnxParser::Parse(model, text.str().c_str());
    if (!status.IsOK())
      return emitError(loc) << "not a valid ONNX text model: "
                            << status.ErrorMessage(),
             nullptr;
  } else if (text.size() > INT_MAX ||
             !(split = parc::onnx_import::splitRawData(text)) ||
             !model.ParseFromString(split->proto)) {
    return emitError(loc) << "not a valid ONNX model (the protobuf does not "
                             "parse: truncated or not an ONNX file)",
           nullptr;
  }
  if (!model.has_graph() || model.graph().output_size() == 0)
    return emitError(loc) << "not a valid ONNX model (no graph with outputs; "
                             "truncated or not an ONNX file)",
           nullptr;
  GraphImporter importer(context, path, model);
  if (split) {
    split->proto.clear();
    split->proto.shrink_to_fit();
    importer.leaveRawDataInFile(split->rawData,
                                mapped.get() == &buffer ? mapped : nullptr);
  }
  return importer.run(options);
}

} // namespace

OwningOpRef<ModuleOp> parc::importOnnx(const llvm::MemoryBuffer &buffer,
                                       StringRef path, MLIRContext *context,
                                       const OnnxImportOptions &options) {
  return importModel(buffer, path, context, options, nullptr);
}

OwningOpRef<ModuleOp> parc::importOnnxFile(StringRef path, MLIRContext *context,
                                           const OnnxImportOptions &options) {
  // Mapped, not read: the weights' pages are touched only when the shard
  // writer streams them.
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer) {
    emitError(UnknownLoc::get(context))
        << "cannot read '" << path << "': " << buffer.getError().message();
    return nullptr;
  }
  // Remembered while blobs borrow from it, so that the weight writer reads
  // the file rather than the mapping.
  parc::rememberMappedFile(path, (*buffer)->getBuffer());
  std::shared_ptr<const llvm::MemoryBuffer> mapped(
      buffer->release(), [](const llvm::MemoryBuffer *b) {
        parc::forgetMappedFile(b->getBufferStart());
        delete b;
      });
  return importModel(*mapped, path, context, options, mapped);
}

void parc::registerOnnxImportTranslation() {
  static llvm::cl::list<std::string> inputShapes(
      "input-shape",
      llvm::cl::desc("Bind a graph input's dims: NAME=D0xD1x... (repeatable)"),
      llvm::cl::value_desc("name=shape"));
  static llvm::cl::opt<int64_t> maxConstantBytes(
      "max-constant-bytes", llvm::cl::desc(parc::kMaxConstantBytesHelp),
      llvm::cl::init(parc::kDefaultMaxConstantBytes),
      llvm::cl::value_desc("bytes"));
  TranslateToMLIRRegistration registration(
      "import-onnx", "Import an ONNX model (binary or text) into the nn dialect",
      [](llvm::SourceMgr &sourceMgr, MLIRContext *context) -> OwningOpRef<Operation *> {
        OnnxImportOptions options;
        if (auto err = parseInputShapes(inputShapes, options)) {
          emitError(UnknownLoc::get(context)) << llvm::toString(std::move(err));
          return nullptr;
        }
        if (maxConstantBytes < 0) {
          emitError(UnknownLoc::get(context))
              << "--max-constant-bytes must be 0 or more, not "
              << maxConstantBytes.getValue();
          return nullptr;
        }
        options.maxConstantBytes = maxConstantBytes;
        const llvm::MemoryBuffer *buffer =
            sourceMgr.getMemoryBuffer(sourceMgr.getMainFileID());
        auto module = importOnnx(*buffer, buffer->getBufferIdentifier(), context,
                                 options);
        return OwningOpRef<Operation *>(module.release());
      },
      [](DialectRegistry &registry) {
        registry.insert<nn::NNDialect, arith::ArithDialect, func::FuncDialect>();
      });
}
