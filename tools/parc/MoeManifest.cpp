//===- MoeManifest.cpp - the manifest's description of MoE layers ---------===//
//
// What a user (or the planner) needs to check an expert-parallel layout
// without running it: how many experts each rank holds and what they weigh,
// and what the dispatch / combine exchanges can move at most. The actual
// per-run traffic depends on the routing; the runtime reports it.
//
//===----------------------------------------------------------------------===//

#include "MoeManifest.h"
#include "rt/RTDialect.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

namespace {

int64_t bytesOf(Value v) {
  auto t = cast<MemRefType>(v.getType());
  return t.getNumElements() *
         std::max<int64_t>(t.getElementTypeBitWidth() / 8, 1);
}

std::string nodeName(Location loc) {
  std::string name = "?";
  loc->walk([&](Location l) {
    if (auto n = dyn_cast<NameLoc>(l)) {
      name = n.getName().str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return name;
}

} // namespace

llvm::json::Array parc::describeMoeLayers(func::FuncOp program) {
  llvm::json::Array layers;
  program.walk([&](parc::rt::KernelOp k) {
    if (k.getCallee() != "moe")
      return;
    ValueRange ins = k.getIns();
    auto fc1 = cast<MemRefType>(ins[2].getType());
    int64_t local = fc1.getDimSize(0), hidden = fc1.getDimSize(1),
            ffn = fc1.getDimSize(2);
    int64_t experts = cast<MemRefType>(ins[1].getType()).getShape().back();
    int64_t tokens =
        cast<MemRefType>(ins[0].getType()).getNumElements() / hidden;
    int64_t shards = experts / local;
    int64_t topK = k->getAttrOfType<IntegerAttr>("top_k").getInt();
    auto cap = k->getAttrOfType<IntegerAttr>("capacity");
    int64_t capacity = cap ? cap.getInt() : 0;
    auto ffnShards = k->getAttrOfType<IntegerAttr>("dist.ffn_shards");
    int64_t etp = ffnShards ? ffnShards.getInt() : 1;
    int64_t weightBytes = 0;
    for (Value w : ins.drop_front(2))
      weightBytes += bytesOf(w);
    llvm::json::Object layer{
        {"layer", nodeName(k.getLoc())},
        {"tokens", tokens},
        {"hidden", hidden},
        {"ffn", ffn * etp},
        {"experts", experts},
        {"top_k", topK},
        {"capacity", capacity},
        {"ep", shards},
        {"experts_per_rank", local},
        {"expert_weight_bytes_per_rank", weightBytes},
        {"etp", etp},
                             {"expert_weight_bytes_total", weightBytes * shards * etp}};
    if (shards > 1) {
      // Rows travel as f32 with an 8-byte expert index on the way out. A
      // rank sends the pairs of its token share and the results for the
      // pairs it received (at most every pair of every rank, or its
      // experts' capacity).
      int64_t share = tokens / shards, sent = share * topK;
      int64_t received = tokens * topK;
      if (capacity)
        received = std::min(received, local * capacity);
      layer["all_to_all_bytes_sent_per_rank_max"] =
          sent * (hidden * 4 + 8) + received * hidden * 4;
      layer["count_exchange_bytes_per_rank"] = experts * 8;
      layer["all_gather_bytes_per_rank"] =
          share * hidden * bytesOf(ins[0]) /
          cast<MemRefType>(ins[0].getType()).getNumElements();
    }
    layers.push_back(std::move(layer));
  });
  return layers;
}
