//===- CostModel.h - analytic cost formulas ---------------------*- C++ -*-===//
//
// The formulas the planner composes, kept free of IR so that unit tests can
// check each against hand-computed values: roofline time of a kernel, ring
// collectives (latency per step plus bytes over bus bandwidth with the
// standard algorithm factors), pipeline schedules and the KV cache size.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_PLAN_COSTMODEL_H
#define PARC_PLAN_COSTMODEL_H

#include "parc/Plan/Cluster.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <cstdint>

namespace parc::plan {

enum class Collective { AllReduce, AllGather, ReduceScatter, AllToAll, SendRecv };

llvm::StringRef collectiveName(Collective kind);

/// Fraction of the tensor each rank moves over its link: ring all-reduce
/// 2(n-1)/n, all-gather / reduce-scatter / all-to-all (n-1)/n, send/recv 1.
double busFactor(Collective kind, int64_t ranks);

/// Sequential algorithm steps, each paying the link latency: 2(n-1) for a
/// ring all-reduce, n-1 for all-gather, reduce-scatter and all-to-all, 1 for
/// send/recv.
int64_t latencySteps(Collective kind, int64_t ranks);

/// Time of one collective on `bytes` (the whole tensor: an all-reduce's
/// buffer, an all-gather's output, the message of a send) over `ranks`
/// ranks: steps * latency + factor * bytes / bandwidth. 0 for one rank.
double collectiveTime(Collective kind, double bytes, int64_t ranks,
                      const Link &link);

/// Roofline: the slower of compute (flops / flopRate) and memory traffic
/// (bytes / byteRate), plus a fixed launch latency.
double rooflineTime(double flops, double bytes, double flopRate,
                    double byteRate, double launchLatency = 0);

/// Idle fraction of a pipeline of `stages` stages running `microBatches`
/// micro-batches with `virtualStages` model chunks per stage (1: GPipe /
/// 1F1B; more: the interleaved schedule): (P-1) / (V*M + P-1).
double pipelineBubble(int64_t stages, int64_t microBatches,
                      int64_t virtualStages = 1);

/// Time of the schedule when the slowest stage takes `stageTime` per
/// micro-batch: stageTime * (M + (P-1)/V), i.e. M*stageTime / (1 - bubble).
double pipelineTime(double stageTime, int64_t stages, int64_t microBatches,
                    int64_t virtualStages = 1);

/// A product taking `compute` and its collective taking `comm`, cut into
/// `chunks` pieces so that piece k's collective runs while piece k+1 is
/// computed (dist-overlap's collective matmul): a two-stage pipeline,
/// compute/c + (c-1) * max(compute, comm)/c + comm/c. One chunk: the sum.
double overlappedTime(double compute, double comm, int64_t chunks);

/// The same two-stage pipeline from the times of one piece: each of the
/// `chunks` pieces computes for `pieceCompute`, then its collective runs for
/// `pieceComm` while the next piece computes. Unlike overlappedTime, a
/// piece pays the fixed costs (kernel launch, per-step link latency) in
/// full, which is what makes too many pieces lose:
/// pieceCompute + (c-1) * max(pieceCompute, pieceComm) + pieceComm.
double pipelinedTime(double pieceCompute, double pieceComm, int64_t chunks);

/// What dist-overlap weighs for one product and its collective: the
/// product's work (`flops`, activation bytes `actBytes` that divide among
/// pieces, `weightBytes` every piece reads again), the collective's whole
/// tensor (`commBytes`) over `ranks` ranks of `link`, and the bytes split
/// into pieces and concatenated back when cut (`copyBytes`, each read and
/// written once by a copy kernel).
struct CollectiveMatmul {
  Collective kind = Collective::AllReduce;
  double flops = 0, actBytes = 0, weightBytes = 0, commBytes = 0;
  int64_t ranks = 1;
  double copyBytes = 0;
};

/// Rates of one device: effective FLOP/s, bytes/s and the launch latency.
struct DeviceRates {
  double flopRate = 0, byteRate = 0, launchLatency = 0;
};

/// Time of `cm` cut into `chunks` pieces (1: the product, then its
/// collective: nothing overlaps), the split and the concatenation included
/// (two copy kernels moving 2 · copyBytes).
double collectiveMatmulTime(const CollectiveMatmul &cm, int64_t chunks,
                            const DeviceRates &rates, const Link &link);

/// The most pieces dist-overlap weighs when it chooses the cut.
constexpr int64_t kMaxOverlapChunks = 8;

/// The cheapest cut of `cm` among 1, 2, 4, … `maxChunks` pieces for which
/// `allowed(chunks)` holds (rows must divide); ties go to fewer pieces.
struct ChunkChoice {
  int64_t chunks = 1;
  double time = 0;
};
ChunkChoice bestCollectiveMatmul(const CollectiveMatmul &cm, int64_t maxChunks,
                                 const DeviceRates &rates, const Link &link,
                                 llvm::function_ref<bool(int64_t)> allowed =
                                     [](int64_t) { return true; });

/// KV cache of a decoder: batch * context * layers * kvHeads * headDim * 2
/// (keys and values) * bytesPerElement.
double kvCacheBytes(int64_t batch, int64_t context, int64_t layers,
                    int64_t kvHeads, int64_t headDim, int64_t bytesPerElement);

} // namespace parc::plan

#endif // PARC_PLAN_COSTMODEL_H
