//===- CostModel.cpp - analytic cost formulas -----------------------------===//

#include "parc/Plan/CostModel.h"

#include <algorithm>

using namespace parc::plan;

llvm::StringRef parc::plan::collectiveName(Collective kind) {
  switch (kind) {
  case Collective::AllReduce: return "all_reduce";
  case Collective::AllGather: return "all_gather";
  case Collective::ReduceScatter: return "reduce_scatter";
  case Collective::AllToAll: return "all_to_all";
  case Collective::SendRecv: return "send_recv";
  }
  return "unknown";
}

double parc::plan::busFactor(Collective kind, int64_t ranks) {
  if (kind == Collective::SendRecv)
    return 1;
  if (ranks <= 1)
    return 0;
  double n = (double)ranks;
  return kind == Collective::AllReduce ? 2 * (n - 1) / n : (n - 1) / n;
}

int64_t parc::plan::latencySteps(Collective kind, int64_t ranks) {
  if (kind == Collective::SendRecv)
    return 1;
  if (ranks <= 1)
    return 0;
  return kind == Collective::AllReduce ? 2 * (ranks - 1) : ranks - 1;
}

double parc::plan::collectiveTime(Collective kind, double bytes, int64_t ranks,
                                  const Link &link) {
  if (kind != Collective::SendRecv && ranks <= 1)
    return 0;
  return (double)latencySteps(kind, ranks) * link.latency +
         busFactor(kind, ranks) * bytes / link.bandwidth;
}

double parc::plan::rooflineTime(double flops, double bytes, double flopRate,
                                double byteRate, double launchLatency) {
  return std::max(flops / flopRate, bytes / byteRate) + launchLatency;
}

double parc::plan::pipelineBubble(int64_t stages, int64_t microBatches,
                                  int64_t virtualStages) {
  double idle = (double)(stages - 1);
  return idle / ((double)(virtualStages * microBatches) + idle);
}

double parc::plan::pipelineTime(double stageTime, int64_t stages,
                                int64_t microBatches, int64_t virtualStages) {
  return stageTime * ((double)microBatches +
                      (double)(stages - 1) / (double)virtualStages);
}

double parc::plan::overlappedTime(double compute, double comm, int64_t chunks) {
  if (chunks <= 1)
    return compute + comm;
  double c = (double)chunks;
  return compute / c + (c - 1) * std::max(compute, comm) / c + comm / c;
}

double parc::plan::pipelinedTime(double pieceCompute, double pieceComm,
                                 int64_t chunks) {
  if (chunks <= 1)
    return pieceCompute + pieceComm;
  return pieceCompute + (double)(chunks - 1) * std::max(pieceCompute, pieceComm) +
         pieceComm;
}

double parc::plan::collectiveMatmulTime(const CollectiveMatmul &cm, int64_t chunks,
                                        const DeviceRates &rates,
                                        const Link &link) {
  double c = (double)std::max<int64_t>(chunks, 1);
  double compute = rooflineTime(cm.flops / c, cm.actBytes / c + cm.weightBytes,
                                rates.flopRate, rates.byteRate,
                                rates.launchLatency);
  double comm = collectiveTime(cm.kind, cm.commBytes / c, cm.ranks, link);
  double reassembly = chunks > 1 ? 2 * rooflineTime(0, cm.copyBytes, 1, rates.byteRate,
                                                    rates.launchLatency)
                                 : 0;
  return pipelinedTime(compute, comm, chunks) + reassembly;
}

ChunkChoice parc::plan::bestCollectiveMatmul(
    const CollectiveMatmul &cm, int64_t maxChunks, const DeviceRates &rates,
    const Link &link, llvm::function_ref<bool(int64_t)> allowed) {
  ChunkChoice best{1, collectiveMatmulTime(cm, 1, rates, link)};
  for (int64_t c = 2; c <= maxChunks; c *= 2) {
    if (!allowed(c))
      continue;
    double t = collectiveMatmulTime(cm, c, rates, link);
    if (t < best.time)
      best = {c, t};
  }
  return best;
}

double parc::plan::kvCacheBytes(int64_t batch, int64_t context, int64_t layers,
                                int64_t kvHeads, int64_t headDim,
                                int64_t bytesPerElement) {
  return (double)batch * (double)context * (double)layers * (double)kvHeads *
         (double)headDim * 2.0 * (double)bytesPerElement;
}
