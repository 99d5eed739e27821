//===- Generate.cpp - compile options of generation (--max-seq) -----------===//
//
// A decoder with its cache has symbolic past lengths; the decode program is
// the model bound at its largest past (capacity - 1) and one new token, the
// prefill program (--prefill-len P) at a past of capacity - P and P new
// tokens, so that nn-kv-cache finds present = Concat(past, new) at the
// cache's fixed capacity in both. The graph's inputs are read here, before the
// import, to bind them.
//
//===----------------------------------------------------------------------===//

#include "Generate.h"

#include "nn/NNOps.h"
#include "rt/RTDialect.h"

#include "mlir/IR/DialectResourceBlobManager.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Regex.h"

#include <fstream>
#include <onnx/onnx_pb.h>

using namespace llvm;

namespace {

Error error(const Twine &message) {
  return createStringError(inconvertibleErrorCode(), message);
}

/// The past inputs: --kv-cache's, or those named after the exporters'
/// conventions.
Expected<StringSet<>> pastInputs(StringRef modelPath, const onnx::GraphProto &g,
                                 ArrayRef<std::string> pairs) {
  StringSet<> inputs, outputs, pasts;
  for (const auto &in : g.input())
    inputs.insert(in.name());
  for (const auto &out : g.output())
    outputs.insert(out.name());
  for (const std::string &spec : pairs) {
    auto [past, present] = StringRef(spec).split('=');
    if (past.empty() || present.empty())
      return error(modelPath + ": --kv-cache: '" + spec +
                   "' is not PAST=PRESENT (e.g. past_0=present_0)");
    if (!inputs.count(past))
      return error(modelPath + ": --kv-cache: the model has no input '" + past +
                   "' (give a graph input holding a layer's past)");
    if (!outputs.count(present))
      return error(modelPath + ": --kv-cache: the model has no output '" +
                   present +
                   "' (give the graph output of that layer's present)");
    pasts.insert(past);
  }
  if (!pairs.empty())
    return pasts;
  Regex convention("^(past_key_values\\.[0-9]+\\.(key|value)|past_[0-9]+)$");
  for (const auto &in : g.input())
    if (convention.match(in.name()))
      pasts.insert(in.name());
  if (pasts.empty())
    return error(modelPath +
                 ": --max-seq: no KV cache found: no input is "
                 "named past_key_values.{i}.key/value or past_{i} (name the "
                 "pairs with --kv-cache past=present,...)");
  return pasts;
}

} // namespace

Error parc::driver::bindStep(StringRef modelPath, int64_t maxSeq,
                             int64_t tokens, int64_t groups,
                             ArrayRef<std::string> pairs,
                             parc::OnnxImportOptions &options) {
  if (maxSeq < 2)
    return error(formatv("--max-seq {0}: the cache needs room for at least 2 "
                         "tokens",
                         maxSeq));
  onnx::ModelProto model;
  std::ifstream file(modelPath.str(), std::ios::binary);
  if (!file || !model.ParseFromIstream(&file))
    return error(modelPath + ": --max-seq: cannot read the model's graph (a "
                             "binary ONNX file is needed)");
  const onnx::GraphProto &g = model.graph();
  auto pasts = pastInputs(modelPath, g, pairs);
  if (!pasts)
    return pasts.takeError();
  // --micro-batches: a forward takes one group of the bound batch.
  for (auto &entry : options.inputShapes) {
    auto &shape = entry.getValue();
    if (groups == 1 || shape.empty())
      continue;
    if (pasts->count(entry.getKey()))
      return error(formatv("{0}: --micro-batches {1}: bind the batch on the "
                           "token input (--input-shape input_ids=Bx1), not "
                           "on the cache input '{2}'",
                           modelPath, groups, entry.getKey()));
    if (shape.front() % groups)
      return error(formatv("{0}: --micro-batches {1} does not divide the "
                           "batch {2} of input '{3}' (each group of "
                           "sequences has the same size)",
                           modelPath, groups, shape.front(), entry.getKey()));
    shape.front() /= groups;
  }
  int64_t batch = 1;
  for (const auto &entry : options.inputShapes)
    if (!entry.getValue().empty())
      batch = entry.getValue().front();
  StringSet<> initializers;
  for (const auto &init : g.initializer())
    initializers.insert(init.name());
  for (const auto &in : g.input()) {
    auto bound = options.inputShapes.find(in.name());
    const bool past = pasts->count(in.name());
    const bool mask = in.name() == "attention_mask";
    // A prefill rebinds the token dim of a shape bound for a decode step.
    if (initializers.count(in.name()) ||
        (bound != options.inputShapes.end() && (tokens == 1 || past || mask)))
      continue;
    const auto &dims = in.type().tensor_type().shape().dim();
    SmallVector<int64_t> shape;
    int symbolic = 0, last = -1;
    for (int d = 0; d < dims.size(); ++d) {
      shape.push_back(dims[d].has_dim_value() ? dims[d].dim_value() : -1);
      if (shape.back() < 0 && symbolic++ == 0)
        shape.back() = batch;
      else if (shape.back() < 0)
        last = d;
    }
    for (int d = 0; d < (int)shape.size(); ++d)
      if (shape[d] < 0)
        shape[d] = d != last ? 1
                   : past    ? maxSeq - tokens
                   : mask    ? maxSeq
                             : tokens;
    options.inputShapes[in.name()] = shape;
  }
  return Error::success();
}

int64_t parc::driver::kvCacheBytes(mlir::func::FuncOp main) {
  int64_t bytes = 0;
  for (mlir::BlockArgument arg : main.getArguments()) {
    if (!parc::nn::isKVCache(arg))
      continue;
    auto t = cast<mlir::RankedTensorType>(arg.getType());
    bytes += t.getNumElements() * ((t.getElementTypeBitWidth() + 7) / 8);
  }
  return bytes;
}

namespace {

using namespace mlir;
namespace rt = parc::rt;

/// Whether two weights' elements are the same bytes: one attribute, or two
/// resources (each import of the model has its own) holding equal data.
bool sameElements(ElementsAttr a, ElementsAttr b) {
  if (a == b)
    return true;
  auto ra = dyn_cast_or_null<DenseResourceElementsAttr>(a);
  auto rb = dyn_cast_or_null<DenseResourceElementsAttr>(b);
  if (!ra || !rb || ra.getType() != rb.getType())
    return false;
  AsmResourceBlob *x = ra.getRawHandle().getBlob();
  AsmResourceBlob *y = rb.getRawHandle().getBlob();
  return x && y && x->getData() == y->getData();
}

/// Whether `a` and `b` are one tensor of the rank's shard: the same type,
/// source (external reference, padding, elements) and cuts.
bool sameWeight(rt::WeightOp a, rt::WeightOp b) {
  if (a.getType() != b.getType() ||
      a->getAttrs().size() != b->getAttrs().size())
    return false;
  for (NamedAttribute attr : a->getAttrs()) {
    StringRef key = attr.getName().getValue();
    if (key != "name" && key != "value" && b->getAttr(key) != attr.getValue())
      return false;
  }
  return sameElements(a.getValueAttr(), b.getValueAttr());
}

/// The prefill's caches are the decode program's buffers: same names,
/// same types (each rank's heads, each stage's layers).
LogicalResult checkCaches(func::FuncOp decode, func::FuncOp prefill) {
  llvm::StringMap<Type> caches;
  decode.walk([&](rt::InputOp in) { caches[in.getName()] = in.getType(); });
  WalkResult walk = prefill.walk([&](rt::InputOp in) {
    auto role = in->getAttrOfType<StringAttr>("role");
    if (!role || role.getValue() != "cache")
      return WalkResult::advance();
    auto it = caches.find(in.getName());
    if (it != caches.end() && it->second == in.getType())
      return WalkResult::advance();
    in.emitError() << "--prefill-len: the prefill program's cache '"
                   << in.getName() << "' (" << in.getType()
                   << ") is not a cache of the decode program"
                   << (it == caches.end()
                           ? std::string()
                           : " (there " +
                                 llvm::formatv("{0}", it->second).str() + ")");
    return WalkResult::interrupt();
  });
  return failure(walk.wasInterrupted());
}

} // namespace

FailureOr<parc::driver::PrefillMerge>
parc::driver::mergePrefill(ModuleOp decode, ModuleOp prefill) {
  auto main = decode.lookupSymbol<func::FuncOp>("main");
  auto pre = prefill.lookupSymbol<func::FuncOp>("main");
  if (!main || !pre || failed(checkCaches(main, pre)))
    return failure();
  // Decode weights by type: the candidates a prefill weight may be.
  llvm::DenseMap<Type, SmallVector<rt::WeightOp>> byType;
  llvm::StringSet<> names;
  main.walk([&](rt::WeightOp w) {
    if (names.insert(w.getName()).second)
      byType[w.getType()].push_back(w);
  });
  PrefillMerge merge;
  if (auto arena = pre->getAttrOfType<IntegerAttr>("rt.arena_size"))
    merge.arenaBytes = arena.getInt();
  // Each distinct prefill name once: its decode twin's name, or its own.
  llvm::StringMap<std::string> renamed;
  pre.walk([&](rt::WeightOp w) {
    auto [it, fresh] = renamed.try_emplace(w.getName(), "");
    if (fresh) {
      for (rt::WeightOp d : byType.lookup(w.getType()))
        if (sameWeight(w, d)) {
          it->second = d.getName().str();
          break;
        }
      if (!it->second.empty()) {
        ++merge.sharedWeights;
      } else {
        // Bytes of the prefill's shapes (a folded table of P positions).
        std::string base = (w.getName() + ".prefill").str();
        it->second = base;
        for (int i = 1; names.contains(it->second); ++i)
          it->second = base + "_" + std::to_string(i);
        names.insert(it->second);
        ++merge.ownWeights;
        merge.ownWeightBytes += w.getType().getNumElements() *
                                w.getType().getElementTypeBitWidth() / 8;
      }
    }
    w.setName(it->second);
  });
  pre->remove();
  pre.setSymName("prefill");
  decode.push_back(pre);
  return merge;
}
