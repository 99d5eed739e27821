//===- MoeManifest.cpp - the manifest's description of MoE layers ---------===//
//
// What a user (or the planner) needs to check an expert-parallel layout
// without running it: how many experts each rank holds and what they weigh,
// and what the dispatch / combine exchanges can move at most. The actual
// per-run traffic depends on the routing; the runtime reports it.
//
//===----------------------------------------------------------------------===//

#include "MoeManifest.h"
#include "nn/NodeLocation.h"
#include "rt/RTDialect.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;
using parc::nn::nodeName;

namespace {

int64_t bytesOf(Value v) {
  auto t = cast<MemRefType>(v.getType());
  return t.getNumElements() *
         std::max<int64_t>(t.getElementTypeBitWidth() / 8, 1);
}

} // namespace

llvm::json::Array parc::describeMoeLayers(func::FuncOp program) {
  llvm::json::Array layers;
  // An expert-parallel layer is several kernels from one ONNX node: its
  // permutation opens the entry, its experts and exchanges complete it.
  llvm::StringMap<llvm::json::Object *> open;
  auto describe = [&](Operation *k, ValueRange weights, int64_t tokens,
                      int64_t experts, int64_t topK, int64_t capacity) {
    auto fc1 = cast<MemRefType>(weights[0].getType());
    int64_t local = fc1.getDimSize(0), shards = experts / local;
    auto ffnShards = k->getAttrOfType<IntegerAttr>("dist.ffn_shards");
    int64_t etp = ffnShards ? ffnShards.getInt() : 1;
    int64_t weightBytes = 0;
    for (Value w : weights)
      weightBytes += bytesOf(w);
    return llvm::json::Object{
        {"layer", nodeName(k->getLoc())},
        {"tokens", tokens},
        {"hidden", fc1.getDimSize(1)},
        {"ffn", fc1.getDimSize(2) * etp},
        {"experts", experts},
        {"top_k", topK},
        {"capacity", capacity},
        {"ep", shards},
        {"experts_per_rank", local},
        {"expert_weight_bytes_per_rank", weightBytes},
        {"etp", etp},
        {"expert_weight_bytes_total", weightBytes * shards * etp}};
  };
  auto capacityOf = [](Operation *k) {
    auto cap = k->getAttrOfType<IntegerAttr>("capacity");
    return cap ? cap.getInt() : int64_t(0);
  };
  // A blocking kernel or a started exchange (dist-overlap's all_to_all_v).
  program.walk([&](Operation *k) {
    StringRef callee;
    ValueRange ins, outs;
    if (auto kernel = dyn_cast<parc::rt::KernelOp>(k)) {
      callee = kernel.getCallee();
      ins = kernel.getIns();
      outs = kernel.getOuts();
    } else if (auto start = dyn_cast<parc::rt::StartOp>(k)) {
      callee = start.getCallee();
      ins = start.getIns();
      outs = start.getOuts();
    } else {
      return;
    }
    std::string node = nodeName(k->getLoc());
    if (callee == "moe") {
      auto fc1 = cast<MemRefType>(ins[2].getType());
      int64_t experts = cast<MemRefType>(ins[1].getType()).getShape().back();
      layers.push_back(describe(
          k, ins.drop_front(2),
          cast<MemRefType>(ins[0].getType()).getNumElements() / fc1.getDimSize(1),
          experts, k->getAttrOfType<IntegerAttr>("top_k").getInt(),
          capacityOf(k)));
      return;
    }
    if (callee == "moe_permute") {
      // x [S, H], ids [S, k]; layout [P, L].
      auto x = cast<MemRefType>(ins[0].getType());
      auto layout = cast<MemRefType>(outs[2].getType());
      int64_t ranks = layout.getDimSize(0);
      llvm::json::Object layer{
          {"layer", node},
          {"tokens", x.getDimSize(0) * ranks},
          {"experts", ranks * layout.getDimSize(1)},
          {"top_k", cast<MemRefType>(ins[1].getType()).getDimSize(1)},
          {"capacity", capacityOf(k)},
          // The all-gather of every rank's per-expert counts.
          {"count_exchange_bytes_per_rank", bytesOf(ins[2]) / ranks},
          {"all_gather_bytes_per_rank", bytesOf(ins[0])},
          {"all_to_all_bytes_sent_per_rank_max", int64_t(0)}};
      layers.push_back(std::move(layer));
      open[node] = layers.back().getAsObject();
      return;
    }
    auto it = open.find(node);
    if (it == open.end())
      return;
    llvm::json::Object &layer = *it->second;
    if (callee == "moe_experts") {
      llvm::json::Object full =
          describe(k, ins.drop_front(2), *layer.getInteger("tokens"),
                   *layer.getInteger("experts"), *layer.getInteger("top_k"),
                   *layer.getInteger("capacity"));
      for (auto &kv : full)
        layer[kv.first] = std::move(kv.second);
      return;
    }
    if (callee == "all_to_all_v") {
      // The static bound: the whole send buffer. The counts are planned
      // (dist.moe_permute): the exchange sends no counts of its own.
      layer["all_to_all_bytes_sent_per_rank_max"] =
          *layer.getInteger("all_to_all_bytes_sent_per_rank_max") + bytesOf(ins[0]);
    }
  });
  return layers;
}
