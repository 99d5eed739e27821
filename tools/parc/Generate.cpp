//===- Generate.cpp - compile options of generation (--max-seq) -----------===//
//
// A decoder with its cache has symbolic past lengths; the decode program is
// the model bound at its largest past (capacity - 1) and one new token, so
// that nn-kv-cache finds present = Concat(past, new) at the cache's fixed
// capacity. The graph's inputs are read here, before the import, to bind
// them.
//
//===----------------------------------------------------------------------===//

#include "Generate.h"

#include "nn/NNOps.h"

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

Error parc::driver::bindDecodeStep(StringRef modelPath, int64_t maxSeq,
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
  int64_t batch = 1;
  for (const auto &entry : options.inputShapes)
    if (!entry.getValue().empty())
      batch = entry.getValue().front();
  StringSet<> initializers;
  for (const auto &init : g.initializer())
    initializers.insert(init.name());
  for (const auto &in : g.input()) {
    if (initializers.count(in.name()) || options.inputShapes.count(in.name()))
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
    const bool past = pasts->count(in.name());
    for (int d = 0; d < (int)shape.size(); ++d)
      if (shape[d] < 0)
        shape[d] = d != last                       ? 1
                   : past                          ? maxSeq - 1
                   : in.name() == "attention_mask" ? maxSeq
                                                   : 1;
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
