//===- Planner.cpp - price and rank parallel configurations ---------------===//
//
// Ranks are laid out as `parc compile` builds them: tp innermost, then ep,
// pp, and dp outermost (each data-parallel replica on consecutive ranks), so
// a tp group is contiguous, an ep group strides by tp, and a pipeline
// crosses nodes as soon as one replica does. A row product's
// all-reduce overlaps its own pieces as dist-overlap cuts them (--overlap-
// chunks); other communication is on the critical path. Forward passes
// only: DP replicas never communicate.
//
//===----------------------------------------------------------------------===//

#include "parc/Plan/Planner.h"

#include "llvm/Support/FormatVariadic.h"

#include <algorithm>
#include <cmath>
#include <numeric>

using namespace parc::plan;

namespace {

std::vector<int64_t> divisors(int64_t n) {
  std::vector<int64_t> out;
  for (int64_t d = 1; d <= n; ++d)
    if (n % d == 0)
      out.push_back(d);
  return out;
}

std::string seconds(double s) {
  if (s >= 1)
    return llvm::formatv("{0:f3} s", s).str();
  if (s >= 1e-3)
    return llvm::formatv("{0:f2} ms", s * 1e3).str();
  return llvm::formatv("{0:f1} us", s * 1e6).str();
}

std::string gib(double b) { return llvm::formatv("{0:f1} GiB", b / (1 << 30)).str(); }

/// Everything about a configuration that does not depend on the micro-batch
/// count's effect on layout: per-op divisors and rates.
struct Context {
  const ModelProfile &profile;
  const Cluster &cluster;
  const Config &config;
  double flopRate, byteRate, bpe;
  /// Batch fraction one rank handles per micro-batch.
  double fraction;
  int64_t overlapChunks;

  double parts(Split s) const {
    switch (s) {
    case Split::None: return 1;
    case Split::Tp: return (double)config.tp;
    case Split::Kv:
      return (double)std::min<int64_t>(config.tp, profile.kvHeads ? profile.kvHeads
                                                                  : config.tp);
    }
    return 1;
  }

  /// Key/value heads per rank: split up to one per rank, then replicated.
  int64_t kvLocal() const { return profile.kvHeads / (int64_t)parts(Split::Kv); }

  /// One layer's attention over the cache in a decode step, per
  /// micro-batch: the step profiled has one key, the step run reads this
  /// rank's keys and values of `context` tokens and multiplies them with
  /// its query heads (QKᵀ and PV, 2 flops per multiply-add each).
  double cacheReadTime(int64_t context) const {
    double bytes = kvCacheBytes(profile.batch, context, 1, kvLocal(),
                                profile.headDim, bpe) *
                   fraction;
    double flops = 4.0 * (double)profile.batch * fraction *
                   ((double)profile.heads / parts(Split::Tp)) *
                   (double)context * (double)profile.headDim;
    return rooflineTime(flops, bytes, flopRate, byteRate, cluster.kernelLatency);
  }

  /// Into how many parts `op` is split (an output head that tp does not
  /// divide is padded by compile, so it splits too).
  double opParts(const OpCost &op) const {
    if (op.expert && config.ep > 1)
      return (double)config.ep;
    return parts(op.split);
  }

  /// Compute and communication time of one unit for one micro-batch, and
  /// the bytes this rank moves in its collectives.
  void unitTime(const Unit &u, double &compute, double &comm, double &bytes) const {
    compute = comm = bytes = 0;
    const Link &tpLink = cluster.linkFor(config.tp, 1);
    const Link &epLink = cluster.linkFor(config.ep, 1);
    bool ep = config.ep > 1;
    for (const OpCost &op : u.ops) {
      if (op.free)
        continue;
      // Experts split over ep ranks (all tokens, each rank its experts)
      // instead of by tp.
      double div = opParts(op);
      if (op.split == Split::None && config.sp && op.seqShardable)
        div = (double)config.tp;
      double wdiv = div;
      double flops = op.flops * fraction / div;
      double traffic = (op.actElems * fraction / div + op.weightReadElems / wdiv) * bpe;
      double t = rooflineTime(flops, traffic, flopRate, byteRate, cluster.kernelLatency);
      compute += t;
      if (op.comm && config.tp > 1 && !(op.expert && ep)) {
        double b = op.commElems * fraction * bpe, c;
        if (*op.comm == Collective::AllReduce && config.sp) {
          // Megatron-SP: reduce-scatter + all-gather around the sharded norm.
          c = collectiveTime(Collective::ReduceScatter, b, config.tp, tpLink) +
              collectiveTime(Collective::AllGather, b, config.tp, tpLink);
          bytes += (busFactor(Collective::ReduceScatter, config.tp) +
                    busFactor(Collective::AllGather, config.tp)) * b;
        } else {
          c = collectiveTime(*op.comm, b, config.tp, tpLink);
          bytes += busFactor(*op.comm, config.tp) * b;
        }
        // A row product's reduction hides behind its own pieces, cut as
        // dist-overlap cuts them (the cheapest count, or --overlap-chunks);
        // what stays exposed is communication time. Under SP the
        // all-gather is cut likewise, against a product of this size.
        if (*op.comm == Collective::AllReduce) {
          DeviceRates rates{flopRate, byteRate, cluster.kernelLatency};
          auto exposed = [&](Collective kind) {
            double act = op.actElems * fraction / div * bpe;
            CollectiveMatmul cm{kind, flops, act, op.weightReadElems / wdiv * bpe,
                                b, config.tp, act};
            double cut = overlapChunks > 0
                             ? collectiveMatmulTime(cm, overlapChunks, rates, tpLink)
                             : bestCollectiveMatmul(cm, kMaxOverlapChunks, rates, tpLink).time;
            return cut - collectiveMatmulTime(cm, 1, rates, tpLink) +
                   collectiveTime(kind, b, config.tp, tpLink);
          };
          c = config.sp ? exposed(Collective::ReduceScatter) + exposed(Collective::AllGather)
                        : exposed(Collective::AllReduce);
        }
        comm += c;
      }
      if (op.dispatchElems > 0 && ep) {
        // Each rank routes its 1/ep share of the tokens: rows (f32) to the
        // experts' ranks and back, two all-to-alls; then the shares are
        // all-gathered.
        double rows = op.dispatchElems * fraction * (double)op.topK /
                      (double)config.ep * 4;
        double shares = op.dispatchElems * fraction * bpe;
        comm += 2 * collectiveTime(Collective::AllToAll, rows, config.ep, epLink) +
                collectiveTime(Collective::AllGather, shares, config.ep, epLink);
        bytes += 2 * busFactor(Collective::AllToAll, config.ep) * rows +
                 busFactor(Collective::AllGather, config.ep) * shares;
      }
    }
  }

  double unitWeights(const Unit &u) const {
    double w = 0;
    for (const OpCost &op : u.ops)
      w += (op.weightElems - op.replicatedElems) / opParts(op) + op.replicatedElems;
    return w * bpe;
  }

  /// Activation peak of one unit by the values' lifetimes (a static arena).
  double unitPeak(const Unit &u) const {
    std::vector<double> delta(u.ops.size() + 2, 0);
    for (const LiveValue &v : u.values) {
      double div = v.split == Split::None ? (config.sp ? (double)config.tp : 1)
                                          : parts(v.split);
      double b = v.elems * fraction / div * bpe;
      delta[v.def] += b;
      delta[v.lastUse + 1] -= b;
    }
    double live = 0, peak = 0;
    for (double d : delta)
      peak = std::max(peak, live += d);
    return peak;
  }
};

/// Contiguous blocks per stage minimising the slowest stage (pre joins the
/// first stage, post the last): exact dynamic programme on prefix sums.
std::vector<int64_t> balance(const std::vector<double> &blocks, double pre,
                             double post, int64_t stages) {
  int64_t n = (int64_t)blocks.size();
  std::vector<double> prefix(n + 1, 0);
  for (int64_t i = 0; i < n; ++i)
    prefix[i + 1] = prefix[i] + blocks[i];
  const double inf = std::numeric_limits<double>::infinity();
  // best[s][i]: slowest stage when the first s stages hold blocks [0, i).
  std::vector<std::vector<double>> best(stages + 1, std::vector<double>(n + 1, inf));
  std::vector<std::vector<int64_t>> cut(stages + 1, std::vector<int64_t>(n + 1, 0));
  best[0][0] = 0;
  for (int64_t s = 1; s <= stages; ++s)
    for (int64_t i = s; i <= n - (stages - s); ++i)
      for (int64_t j = s - 1; j < i; ++j) {
        double t = prefix[i] - prefix[j] + (s == 1 ? pre : 0) + (s == stages ? post : 0);
        double m = std::max(best[s - 1][j], t);
        if (m < best[s][i]) {
          best[s][i] = m;
          cut[s][i] = j;
        }
      }
  std::vector<int64_t> layout(stages);
  for (int64_t s = stages, i = n; s > 0; --s) {
    layout[s - 1] = i - cut[s][i];
    i = cut[s][i];
  }
  return layout;
}

/// Prices every configuration of `options.devices` devices that compile
/// builds (checkBuildable) into `result`; the reasons the
/// others are refused go to `result.skipped`.
void search(const ModelProfile &profile, const Cluster &cluster,
            const PlanOptions &options, double flops, PlanResult &result) {
  int64_t n = options.devices;
  for (int64_t tp : divisors(n)) {
    for (int64_t pp : divisors(n / tp)) {
      // Expert parallelism over the tp ranks, or over its own ranks when
      // there is no tp.
      std::vector<int64_t> eps{1};
      if (profile.experts) {
        if (tp > 1)
          eps.push_back(tp);
        else
          for (int64_t e : divisors(n / pp))
            if (e > 1)
              eps.push_back(e);
      }
      for (int64_t ep : eps) {
        int64_t dp = n / (pp * std::max(tp, ep));
        int64_t local = profile.batch % dp ? 1 : profile.batch / dp;
        for (bool sp : {false, true}) {
          if (sp && tp == 1)
            continue;
          std::vector<int64_t> layout;
          for (int64_t m : pp > 1 ? divisors(local) : std::vector<int64_t>{1}) {
            if (m > options.maxMicroBatches)
              continue;
            for (int64_t v : {1, 2}) {
              // The interleaved schedule is modelled with equal chunks and
              // M a multiple of P (Megatron's condition).
              if (v > 1 &&
                  (pp == 1 || profile.blocks % (pp * v) != 0 || m % pp != 0))
                continue;
              Config c;
              c.tp = tp, c.pp = pp, c.ep = ep, c.dp = dp, c.sp = sp;
              c.microBatches = m, c.virtualStages = v;
              // Experts split inside under tp without ep.
              c.etp = profile.experts && tp > 1 && ep == 1;
              if (llvm::Error e = checkBuildable(profile, c)) {
                result.skipped.push_back(llvm::toString(std::move(e)));
                continue;
              }
              if (v > 1)
                c.stageBlocks.assign(pp, profile.blocks / pp);
              else
                c.stageBlocks = layout;
              Estimate e = estimate(profile, cluster, options, c, flops);
              if (v == 1 && layout.empty())
                layout = e.config.stageBlocks; // balanced once per split
              ++result.considered;
              result.ranked.push_back(std::move(e));
            }
          }
        }
      }
    }
  }
}

} // namespace

int64_t parc::plan::bytesPerElement(llvm::StringRef dtype) {
  return dtype == "f32" ? 4 : dtype == "f64" ? 8 : 2;
}

std::vector<int64_t> parc::plan::stageWeightBytes(const ModelProfile &profile,
                                                 const Config &config,
                                                 llvm::StringRef dtype) {
  const int64_t P = config.pp, V = config.virtualStages;
  // The stage of each block: the layout's runs, or with V chunks per stage
  // equal chunks dealt round-robin (compile's --pp-virtual).
  std::vector<int64_t> stageOf;
  if (V > 1) {
    int64_t chunk = std::max<int64_t>(1, profile.blocks / (P * V));
    for (int64_t b = 0; b < profile.blocks; ++b)
      stageOf.push_back(b / chunk % P);
  } else {
    for (int64_t s = 0; s < (int64_t)config.stageBlocks.size(); ++s)
      stageOf.insert(stageOf.end(), config.stageBlocks[s], s);
  }
  auto stage = [&](int64_t block) -> int64_t {
    if (block < 0)
      return 0;
    if (block >= (int64_t)stageOf.size())
      return P - 1;
    return stageOf[block];
  };
  ShardDegrees d{config.tp, config.ep, config.etp, profile.heads, profile.kvHeads,
                 bytesPerElement(dtype)};
  std::vector<int64_t> bytes(P, 0);
  for (const WeightUse &w : profile.weights) {
    // Each stage that reads the weight holds its own copy.
    llvm::SmallVector<int64_t, 4> stages;
    for (int64_t b : w.blocks)
      if (!llvm::is_contained(stages, stage(b)))
        stages.push_back(stage(b));
    int64_t part = shardBytes(w.shard, d);
    for (int64_t s : stages)
      bytes[s] += part;
  }
  return bytes;
}

std::string Config::str() const {
  std::string s = llvm::formatv("tp={0}{1} pp={2}", tp, sp ? "+sp" : "", pp).str();
  if (pp > 1)
    s += llvm::formatv(" (m={0}{1})", microBatches,
                       virtualStages > 1 ? llvm::formatv(", v={0}", virtualStages).str()
                                         : "")
             .str();
  return s + llvm::formatv(" ep={0} dp={1}", ep, dp).str();
}

std::string Config::layout() const {
  std::string s;
  for (int64_t b : stageBlocks)
    s += (s.empty() ? "" : ",") + std::to_string(b);
  return s;
}

std::string Config::compileFlags() const {
  std::string s = llvm::formatv("--tp {0}", tp).str();
  if (sp)
    s += " --sp";
  if (pp > 1) {
    // With interleaving the layout lists all P*V chunks.
    std::string chunks;
    for (int64_t b : stageBlocks)
      for (int64_t v = 0; v < virtualStages; ++v)
        chunks += (chunks.empty() ? "" : ",") + std::to_string(b / virtualStages);
    s += llvm::formatv(" --pp {0} --pp-layout {1} --micro-batches {2}", pp, chunks,
                       microBatches)
             .str();
    if (virtualStages > 1)
      s += llvm::formatv(" --pp-virtual {0}", virtualStages).str();
  }
  if (ep > 1)
    s += llvm::formatv(" --ep {0}", ep).str();
  if (etp)
    s += " --etp";
  if (dp > 1)
    s += llvm::formatv(" --dp {0}", dp).str();
  return s;
}

Estimate parc::plan::estimate(const ModelProfile &profile, const Cluster &cluster,
                              const PlanOptions &options, const Config &config,
                              double flopRate) {
  Estimate e;
  e.config = config;
  // Ranks computing at once beyond a node's compute slots time-share them:
  // a stage's ranks, times the stages busy together (at most one per
  // micro-batch in flight). Ranks of a tensor-parallel group meet at every
  // collective, so the slots run them in rounds: the ranks that got a slot
  // finish their piece and wait while the rest compute theirs (3 ranks on
  // 2 slots take 2 rounds, not 1.5). Stages only meet at their sends.
  int64_t busy = config.stageRanks() *
                 std::min(config.pp, config.microBatches * config.virtualStages);
  int64_t onNode = std::min(busy, cluster.devicesPerNode);
  int64_t slots = cluster.computeSlotsPerNode;
  double share = 1.0;
  if (slots && onNode > slots)
    share = config.stageRanks() > 1
                ? 1.0 / (double)((onNode + slots - 1) / slots)
                : (double)slots / (double)onNode;
  Context ctx{profile,
              cluster,
              config,
              flopRate * cluster.computeEfficiency * share,
              cluster.memoryBandwidth * cluster.memoryEfficiency * share,
              (double)bytesPerElement(options.dtype),
              1.0 / (double)(config.dp * config.microBatches),
              options.overlapChunks};
  // Per-unit times, costed once however often the unit repeats.
  std::vector<double> blockTimes, blockComms, blockBytes, blockWeights, blockPeaks;
  double preT = 0, preC = 0, preB = 0, preW = 0, preP = 0;
  double postT = 0, postC = 0, postB = 0, postW = 0, postP = 0;
  double boundary = 0;
  bool seenBlock = false;
  const double cacheRead =
      isDecodePlan(profile, options) ? ctx.cacheReadTime(options.context) : 0;
  for (const Unit &u : profile.units) {
    double t, c, b;
    ctx.unitTime(u, t, c, b);
    if (u.block)
      t += cacheRead;
    double w = ctx.unitWeights(u), p = ctx.unitPeak(u);
    if (u.block) {
      seenBlock = true;
      boundary = std::max(boundary, u.boundaryElems);
      for (int64_t i = 0; i < u.count; ++i) {
        blockTimes.push_back(t);
        blockComms.push_back(c);
        blockBytes.push_back(b);
        blockWeights.push_back(w);
        blockPeaks.push_back(p);
      }
    } else if (!seenBlock) {
      preT += t, preC += c, preB += b, preW += w, preP = std::max(preP, p);
    } else {
      postT += t, postC += c, postB += b, postW += w, postP = std::max(postP, p);
    }
  }
  int64_t P = config.pp, M = config.microBatches, V = config.virtualStages;
  std::vector<int64_t> layout = config.stageBlocks;
  if ((int64_t)layout.size() != P) {
    std::vector<double> total(blockTimes.size());
    for (size_t i = 0; i < total.size(); ++i)
      total[i] = blockTimes[i] + blockComms[i];
    layout = P == 1 ? std::vector<int64_t>{(int64_t)blockTimes.size()}
                    : balance(total, preT + preC, postT + postC, P);
    e.config.stageBlocks = layout;
  }
  // Each stage's time per micro-batch and its memory.
  int64_t kvLocal = ctx.kvLocal();
  int64_t context = options.context ? options.context : profile.seq;
  int64_t localBatch = profile.batch / config.dp;
  size_t next = 0;
  double worst = 0, worstCompute = 0, worstComm = 0;
  for (int64_t s = 0; s < P; ++s) {
    double comp = s == 0 ? preT : 0, comm = s == 0 ? preC : 0;
    double bytes = s == 0 ? preB : 0, weights = s == 0 ? preW : 0;
    double peak = s == 0 ? preP : 0;
    for (int64_t i = 0; i < layout[s]; ++i, ++next) {
      comp += blockTimes[next];
      comm += blockComms[next];
      bytes += blockBytes[next];
      weights += blockWeights[next];
      peak = std::max(peak, blockPeaks[next]);
    }
    if (s == P - 1) {
      comp += postT, comm += postC, bytes += postB, weights += postW;
      peak = std::max(peak, postP);
    }
    e.stageCompute.push_back(comp);
    e.stageComm.push_back(comm);
    double kv = 0;
    if (profile.decoder && kvLocal > 0)
      kv = kvCacheBytes(localBatch, context, layout[s], kvLocal, profile.headDim,
                        bytesPerElement(options.dtype));
    double mem = weights + peak + kv;
    if (mem > e.memoryBytes) {
      e.memoryBytes = mem;
      e.weightBytes = weights;
      e.activationBytes = peak;
      e.kvBytes = kv;
    }
    e.commBytes = std::max(e.commBytes, bytes * (double)M);
    if (comp + comm > worst) {
      worst = comp + comm;
      worstCompute = comp;
      worstComm = comm;
    }
  }
  // One replica's ranks: its stages, each on max(tp, ep) ranks.
  const int64_t replica = P * std::max(config.tp, config.ep);
  e.crossesNodes = replica > cluster.devicesPerNode;
  double p2p = 0;
  if (P > 1) {
    double b = boundary * ctx.fraction * ctx.bpe / (config.sp ? config.tp : 1);
    const Link &link = cluster.linkFor(replica, 1);
    p2p = collectiveTime(Collective::SendRecv, b, 2, link);
    e.commBytes += b * (double)M * (double)V;
  }
  e.computeTime = worstCompute * (double)M;
  e.commTime = worstComm * (double)M;
  e.bubble = pipelineBubble(P, M, V);
  e.p2pTime = P > 1 ? (double)(P * V - 1) * p2p : 0;
  // GPipe: the first micro-batch crosses every stage, each later one
  // follows the slowest (exact for a forward chain, and below (M+P-1)·worst
  // when the end stages are lighter); interleaving keeps the standard form.
  double chain = 0;
  for (int64_t s = 0; s < P; ++s)
    chain += e.stageCompute[s] + e.stageComm[s];
  e.time = (V == 1 ? chain + (double)(M - 1) * worst : pipelineTime(worst, P, M, V)) +
           e.p2pTime;
  e.interval = P > 1 ? (double)M * (worst + p2p) : e.time;
  e.tokensPerSecond = (double)(profile.batch * profile.seq) / e.interval;
  e.fits = e.memoryBytes <= cluster.memoryBytes;
  e.stageWeightBytes = stageWeightBytes(profile, e.config, options.dtype);
  return e;
}

llvm::Expected<PlanResult> parc::plan::planParallelism(const ModelProfile &profile,
                                                       const Cluster &cluster,
                                                       const PlanOptions &options) {
  llvm::Expected<double> flops = cluster.flopsFor(options.dtype);
  if (!flops)
    return flops.takeError();
  if (options.devices < 1)
    return llvm::createStringError(
        llvm::formatv("the device count must be at least 1, not {0}",
                      options.devices));
  if (cluster.nodes > 0 && options.devices > cluster.nodes * cluster.devicesPerNode)
    return llvm::createStringError(
        llvm::formatv("cluster '{0}' has {1} devices ({2} nodes of {3}), fewer "
                      "than --devices {4}",
                      cluster.name, cluster.nodes * cluster.devicesPerNode,
                      cluster.nodes, cluster.devicesPerNode, options.devices)
            .str());
  PlanResult result;
  int64_t n = options.devices;
  search(profile, cluster, options, *flops, result);
  auto metric = [&](const Estimate &e) {
    return options.throughput ? e.interval : e.time;
  };
  // Times within 0.1% rank as equal (buckets on a log scale keep the order
  // transitive); then the better other metric, then the simpler plan:
  // fewer stages, less tp.
  auto bucket = [](double t) { return (int64_t)std::floor(std::log(t) / std::log(1.001)); };
  auto key = [&](const Estimate &e) {
    double other = options.throughput ? e.time : e.interval;
    return std::make_tuple(!e.fits, bucket(metric(e)), bucket(other), e.config.pp,
                           e.config.tp);
  };
  std::stable_sort(result.ranked.begin(), result.ranked.end(),
                   [&](const Estimate &a, const Estimate &b) { return key(a) < key(b); });
  // A reason met under several outer splits is reported once.
  std::vector<std::string> reasons;
  for (std::string &r : result.skipped)
    if (!llvm::is_contained(reasons, r))
      reasons.push_back(std::move(r));
  result.skipped = std::move(reasons);
  if (!result.ranked.empty() && result.ranked.front().fits)
    result.chosen = 0;

  // Why: the chosen plan's breakdown, then what each close alternative pays.
  std::string why;
  llvm::raw_string_ostream os(why);
  const char *what = options.throughput ? "interval between forwards" : "time per forward";
  if (!result.chosen) {
    if (result.ranked.empty()) {
      os << "no configuration of " << n << " device(s) divides this model\n";
    } else {
      const Estimate &b = *llvm::min_element(
          result.ranked, [](const Estimate &x, const Estimate &y) {
            return x.memoryBytes < y.memoryBytes;
          });
      os << "no configuration fits: the smallest footprint, " << b.config.str()
         << ", needs " << gib(b.memoryBytes) << " per rank (weights "
         << gib(b.weightBytes) << ", activations " << gib(b.activationBytes)
         << ", KV cache " << gib(b.kvBytes) << ") but a device has "
         << gib(cluster.memoryBytes) << "\n";
    }
    result.explanation = why;
    return result;
  }
  const Estimate &c = result.ranked[*result.chosen];
  os << "chosen " << c.config.str() << ": " << seconds(metric(c)) << " " << what
     << " (compute " << seconds(c.computeTime) << ", tp/ep collectives "
     << seconds(c.commTime);
  if (c.config.pp > 1 && !options.throughput)
    os << ", pipeline bubble " << llvm::formatv("{0:f1}%", 100 * c.bubble)
       << ", stage sends " << seconds(c.p2pTime);
  if (c.config.pp > 1)
    os << ", layout " << c.config.layout();
  os << "); " << gib(c.memoryBytes) << " of " << gib(cluster.memoryBytes)
     << " per rank (weights " << gib(c.weightBytes) << ", activations "
     << gib(c.activationBytes) << ", KV cache " << gib(c.kvBytes) << ")";
  if (c.crossesNodes)
    os << "; spans nodes";
  os << "\n  compile it with: " << compileCommand(c.config, profile, options)
     << "\n";
  // The best alternative per (tp, pp, ep, dp) shape, up to three.
  auto reason = [&](const Estimate &a) {
    struct Part { const char *name; double delta; };
    // The metric split into compute, collectives, stage sends and (for a
    // single forward) the bubble: what remains.
    auto sends = [&](const Estimate &e) {
      if (!options.throughput || e.config.pp == 1)
        return e.p2pTime;
      return e.interval - e.computeTime - e.commTime;
    };
    auto bubble = [&](const Estimate &e) {
      return metric(e) - e.computeTime - e.commTime - sends(e);
    };
    Part parts[] = {{"compute", a.computeTime - c.computeTime},
                    {"collectives", a.commTime - c.commTime},
                    {"pipeline bubble", bubble(a) - bubble(c)},
                    {"stage sends", sends(a) - sends(c)}};
    const Part &worst = *std::max_element(
        std::begin(parts), std::end(parts),
        [](const Part &x, const Part &y) { return x.delta < y.delta; });
    std::string s = llvm::formatv("+{0} {1}", seconds(worst.delta), worst.name).str();
    if (worst.name == std::string("collectives") &&
        std::max(a.config.tp, a.config.ep) > cluster.devicesPerNode)
      s += " (its tp/ep group spans nodes: " + cluster.interNode.name + " at " +
           llvm::formatv("{0:f0}", cluster.interNode.bandwidth / 1e9).str() +
           " GB/s instead of " + cluster.intraNode.name + " at " +
           llvm::formatv("{0:f0}", cluster.intraNode.bandwidth / 1e9).str() + " GB/s)";
    return s;
  };
  int shown = 0;
  std::vector<std::string> seen{llvm::formatv("{0}/{1}/{2}/{3}", c.config.tp,
                                              c.config.pp, c.config.ep, c.config.dp)};
  for (const Estimate &a : result.ranked) {
    if (!a.fits || shown == 3)
      break;
    std::string key = llvm::formatv("{0}/{1}/{2}/{3}", a.config.tp, a.config.pp,
                                    a.config.ep, a.config.dp);
    if (llvm::is_contained(seen, key))
      continue;
    seen.push_back(key);
    ++shown;
    os << "  vs " << a.config.str() << ": " << seconds(metric(a)) << " ("
       << llvm::formatv("{0:f2}x", metric(a) / metric(c)) << "), " << reason(a) << "\n";
  }
  // The fastest that does not fit, when it would have won.
  for (const Estimate &a : result.ranked)
    if (!a.fits) {
      if (metric(a) < metric(c))
        os << "  " << a.config.str() << " would take " << seconds(metric(a))
           << " but needs " << gib(a.memoryBytes) << " per rank (weights "
           << gib(a.weightBytes) << ", KV cache " << gib(a.kvBytes) << ") > "
           << gib(cluster.memoryBytes) << "\n";
      break;
    }
  result.explanation = why;
  return result;
}

llvm::json::Value parc::plan::planToJSON(const PlanResult &result,
                                         const ModelProfile &profile,
                                         const Cluster &cluster,
                                         const PlanOptions &options) {
  auto config = [&](const Estimate &e) {
    return llvm::json::Object{
        {"tp", e.config.tp},
        {"sp", e.config.sp},
        {"pp", e.config.pp},
        {"ep", e.config.ep},
        {"dp", e.config.dp},
        {"micro_batches", e.config.microBatches},
        {"virtual_stages", e.config.virtualStages},
        {"stage_blocks", llvm::json::Array(e.config.stageBlocks)},
        {"compile_flags", e.config.compileFlags()},
        {"compile_command", compileCommand(e.config, profile, options)},
        {"time_s", e.time},
        {"interval_s", e.interval},
        {"tokens_per_s", e.tokensPerSecond},
        {"compute_s", e.computeTime},
        {"collectives_s", e.commTime},
        {"stage_sends_s", e.p2pTime},
        {"bubble", e.bubble},
        {"memory_per_rank",
         llvm::json::Object{{"weights", e.weightBytes},
                            {"activations", e.activationBytes},
                            {"kv_cache", e.kvBytes},
                            {"total", e.memoryBytes}}},
        {"comm_bytes_per_rank", e.commBytes},
        {"weight_bytes_per_stage", llvm::json::Array(e.stageWeightBytes)},
        {"fits", e.fits},
        {"spans_nodes", e.crossesNodes}};
  };
  llvm::json::Array table;
  for (const Estimate &e : result.ranked)
    table.push_back(config(e));
  return llvm::json::Object{
      {"model",
       llvm::json::Object{{"batch", profile.batch},
                          {"seq", profile.seq},
                          {"hidden", profile.hidden},
                          {"blocks", profile.blocks},
                          {"parameters", profile.parameters},
                          {"heads", profile.heads},
                          {"kv_heads", profile.kvHeads},
                          {"head_dim", profile.headDim},
                          {"decoder", profile.decoder},
                          {"experts", profile.experts},
                          {"top_k", profile.topK}}},
      {"cluster", cluster.name},
      {"device_memory_bytes", cluster.memoryBytes},
      {"devices", options.devices},
      {"dtype", options.dtype},
      {"objective", options.throughput ? "throughput" : "latency"},
      // A decode step: time_s is the per-token latency.
      {"decode", isDecodePlan(profile, options)},
      {"context", options.context ? options.context : profile.seq},
      {"considered", result.considered},
      {"skipped", llvm::json::Array(result.skipped)},
      {"configurations", std::move(table)},
      {"chosen", result.chosen ? llvm::json::Value(config(result.ranked[*result.chosen]))
                               : llvm::json::Value(nullptr)},
      {"explanation", result.explanation}};
}

void parc::plan::writeTimelineSVG(llvm::raw_ostream &os, const Estimate &e,
                                  const ModelProfile &profile, const Cluster &cluster) {
  const Config &c = e.config;
  // Ranks as compile lays them out: replicas outermost, then stages.
  int64_t perStage = std::max(c.tp, c.ep), world = c.world();
  // One row per rank up to 64; beyond that one row per pipeline stage.
  bool byRank = world <= 64;
  int64_t rows = byRank ? world : c.pp;
  double width = 960, left = 150, rowH = 18, top = 40;
  double total = std::max(e.time, 1e-12), scale = (width - left - 10) / total;
  double p2p = c.pp > 1 ? e.p2pTime / (double)(c.pp * c.virtualStages - 1) : 0;
  os << llvm::formatv("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" "
                      "height=\"{1}\" font-family=\"sans-serif\" font-size=\"11\">\n",
                      width, top + rowH * (double)rows + 40);
  os << llvm::formatv("<text x=\"4\" y=\"16\">{0} on {1}: {2:f3} ms per forward "
                      "(predicted)</text>\n",
                      c.str(), cluster.name, e.time * 1e3);
  // Start of each (stage, micro-batch) in a non-interleaved schedule.
  std::vector<std::vector<double>> start(c.pp, std::vector<double>(c.microBatches, 0));
  for (int64_t s = 0; s < c.pp; ++s)
    for (int64_t m = 0; m < c.microBatches; ++m) {
      double t = 0;
      if (s > 0)
        t = start[s - 1][m] + e.stageCompute[s - 1] + e.stageComm[s - 1] + p2p;
      if (m > 0)
        t = std::max(t, start[s][m - 1] + e.stageCompute[s] + e.stageComm[s]);
      start[s][m] = t;
    }
  for (int64_t r = 0; r < rows; ++r) {
    int64_t s = byRank ? r / perStage % c.pp : r;
    double y = top + rowH * (double)r;
    os << llvm::formatv("<text x=\"4\" y=\"{0}\">{1} {2} (stage {3})</text>\n", y + 12,
                        byRank ? "rank" : "stage", r, s);
    for (int64_t m = 0; m < c.microBatches; ++m) {
      double x = left + start[s][m] * scale;
      double wc = e.stageCompute[s] * scale, wm = e.stageComm[s] * scale;
      os << llvm::formatv("<rect x=\"{0:f1}\" y=\"{1}\" width=\"{2:f1}\" height=\"{3}\" "
                          "fill=\"#4c78a8\"><title>micro-batch {4}: compute "
                          "{5:f3} ms</title></rect>\n",
                          x, y, std::max(wc, 0.5), rowH - 4, m, e.stageCompute[s] * 1e3);
      if (wm > 0)
        os << llvm::formatv("<rect x=\"{0:f1}\" y=\"{1}\" width=\"{2:f1}\" height=\"{3}\" "
                            "fill=\"#f58518\"><title>micro-batch {4}: collectives "
                            "{5:f3} ms</title></rect>\n",
                            x + wc, y, std::max(wm, 0.5), rowH - 4, m,
                            e.stageComm[s] * 1e3);
    }
  }
  double ly = top + rowH * (double)rows + 20;
  os << llvm::formatv("<rect x=\"4\" y=\"{0}\" width=\"10\" height=\"10\" fill=\"#4c78a8\"/>"
                      "<text x=\"18\" y=\"{1}\">compute</text>"
                      "<rect x=\"90\" y=\"{0}\" width=\"10\" height=\"10\" fill=\"#f58518\"/>"
                      "<text x=\"104\" y=\"{1}\">tp/ep collectives</text>"
                      "<text x=\"230\" y=\"{1}\">0 .. {2:f3} ms; idle = pipeline bubble "
                      "and stage sends</text>\n",
                      ly, ly + 9, total * 1e3);
  os << "</svg>\n";
  (void)profile;
}
