//===- Planner.h - cost model over the fused graph and plan search -*- C++ -*-===//
//
// profileModel() reads fused nn IR once into per-op costs grouped by
// transformer block (identical blocks are kept once with a repeat count);
// planParallelism() enumerates TP × SP × PP (layout, micro-batches,
// interleaving) × EP × DP over a device count, prices each configuration on
// a Cluster with the formulas of CostModel.h, and ranks them.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_PLAN_PLANNER_H
#define PARC_PLAN_PLANNER_H

#include "parc/Plan/CostModel.h"
#include "parc/Plan/WeightShards.h"
#include "parc/Support/OptionRef.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

namespace parc::plan {

/// How an op's work divides under tensor parallelism.
enum class Split : uint8_t {
  None, ///< replicated (sequence-sharded under SP when `seqShardable`)
  Tp,   ///< split over all tp ranks (column/row linears, query heads)
  Kv    ///< split into min(tp, kv_heads) parts (grouped-query keys/values)
};

struct OpCost {
  std::string op;   ///< "linear", "attention", …
  std::string node; ///< the ONNX node
  /// Work for the profiled batch; weights do not scale with the batch.
  double flops = 0, actElems = 0, weightReadElems = 0, weightElems = 0;
  /// Part of `weightElems` every tp rank holds whole (a row linear's bias).
  double replicatedElems = 0;
  Split split = Split::None;
  /// A replicated op on the residual stream that SP shards by sequence.
  bool seqShardable = false;
  /// Row-parallel linears all-reduce their output (`commElems`) under TP; LM
  /// heads all-gather theirs.
  std::optional<Collective> comm;
  double commElems = 0;
  /// MoE: an expert's op (its cost already scaled to the routed tokens),
  /// whose weights divide over ep; the layer's dispatch point all-to-alls
  /// `dispatchElems` to the experts and back under EP.
  bool expert = false;
  double dispatchElems = 0; ///< the layer's tokens × hidden
  int64_t topK = 0;
  bool free = false; ///< a view (reshape): no kernel
};

/// A value's lifetime inside one unit, for the activation peak.
struct LiveValue {
  double elems = 0;
  Split split = Split::None;
  int def = 0, lastUse = 0;
};

/// A run of ops: the part before the first block, one transformer block
/// (repeated `count` times when identical), or the part after the last.
struct Unit {
  std::string name;
  int64_t count = 1;
  bool block = false;
  std::vector<OpCost> ops;
  std::vector<LiveValue> values;
  /// Elements of the activation handed to the next unit (a pipeline send).
  double boundaryElems = 0;
};

struct TpConstraint {
  int64_t dim;
  std::string what;
  bool kv = false; ///< kv heads: tp must divide it or be a multiple of it
  /// compile pads what tp does not divide with zeros (an MLP's features,
  /// attention heads: WeightShards.h), so any tp builds.
  bool paddable = false;
};

/// A weight as the shard writer stores it: how it divides over a stage's
/// ranks, and the blocks that read it (-1: the part before the first block,
/// `ModelProfile::blocks`: the part after the last), whose stages each hold
/// it.
struct WeightUse {
  WeightShard shard;
  std::vector<int64_t> blocks;
};

struct ModelProfile {
  std::vector<Unit> units;
  /// Every weight once (a tied table once), in program order.
  std::vector<WeightUse> weights;
  int64_t batch = 1, seq = 1, blocks = 0;
  /// Attention ops: the layers dist-pipeline cuts between (blocks are found
  /// by node names, so the two can differ).
  int64_t layers = 0;
  int64_t heads = 0, kvHeads = 0, headDim = 0, hidden = 0;
  bool decoder = false;
  int64_t experts = 0, topK = 0;
  double parameters = 0;
  std::vector<TpConstraint> tpConstraints;
  /// The graph inputs as imported (ONNX name, shape): what `--input-shape`
  /// binds in the compile command.
  std::vector<std::pair<std::string, std::vector<int64_t>>> inputs;
  /// Every input and output has the batch on dim 0, as --dp and
  /// --micro-batches need.
  bool batchOnDim0 = true;
  /// The first norm over the last dim, which --sp splits along the
  /// sequence (dim rank-2): its ONNX node (empty: none) and that length.
  std::string seqNormNode;
  int64_t seqNormLength = 0;
};

/// Profiles `func.func @main` of fused nn IR. `batch`, when given, overrides
/// the leading dim of the first input as the batch that DP and micro-batches
/// divide. Emits a diagnostic and fails on IR it cannot read.
mlir::FailureOr<ModelProfile> profileModel(mlir::ModuleOp module);

struct PlanOptions {
  std::string dtype = "bf16";
  /// For the compile command printed with the plan: the model path and
  /// the --cluster argument as given.
  std::string model, cluster;
  int64_t devices = 1;
  bool throughput = false;
  /// Tokens of context the KV cache holds (0: the profiled sequence).
  int64_t context = 0;
  int64_t maxMicroBatches = 64;
  /// Pieces each row-parallel product and its collective are cut into to
  /// overlap (dist-overlap's collective matmul); 1: collectives exposed;
  /// 0: the cheapest cut, as dist-overlap chooses it by default.
  int64_t overlapChunks = 0;
};

/// A decode-step plan (`--seq 1 --context S` on a decoder): a forward is one
/// token per sequence, so time per forward is the per-token latency that
/// ranks the plans, and each layer's attention is priced over the cache of
/// S tokens it reads.
inline bool isDecodePlan(const ModelProfile &profile, const PlanOptions &options) {
  return profile.decoder && profile.seq == 1 && options.context > 0;
}

/// One model replica runs on max(tp, ep) ranks per stage: expert
/// parallelism shares the tp ranks (ep == tp) or, without tp, has its own
/// (the dense layers replicated on them), as `parc compile --ep` builds it.
struct Config {
  int64_t tp = 1, pp = 1, ep = 1, dp = 1, microBatches = 1, virtualStages = 1;
  bool sp = false;
  /// Experts split inside over the tp ranks (compile's --etp).
  bool etp = false;
  int64_t stageRanks() const { return std::max(tp, ep) * dp; }
  int64_t world() const { return stageRanks() * pp; }
  /// Blocks per pipeline stage (the layout), first stage first.
  std::vector<int64_t> stageBlocks;
  std::string str() const;
  std::string layout() const;
  /// The `parc compile` parallelism options that build this plan.
  std::string compileFlags() const;
};

/// The configurations `parc compile` refuses whatever the model: option
/// combinations (sp without tp, ep other than tp without etp, ...), each
/// option named as `spell` says. compile refuses with this message.
llvm::Error checkFlags(const Config &config, OptionSpeller spell);

/// Whether `parc compile` builds `config` for the model of `profile`, and
/// why not: checkFlags, then the model's facts (heads and features tp must
/// divide, layers per stage, experts and tokens ep must divide, the batch
/// dp and micro-batches split, the sequence --sp splits). The planner ranks
/// only what passes. compile's passes refuse the same models naming the
/// ONNX node; test/Plan/plan-compiles.test checks that the two agree.
llvm::Error checkBuildable(const ModelProfile &profile, const Config &config);

/// The whole `parc compile` command that builds `config` as it was priced:
/// the model, `-o`, every input's shape, `--dtype`, `--cluster` and the
/// parallelism options, shell-quoted.
std::string compileCommand(const Config &config, const ModelProfile &profile,
                           const PlanOptions &options);

struct Estimate {
  Config config;
  double time = 0;     ///< one forward of the whole batch (s)
  double interval = 0; ///< between forwards in steady state (s)
  double tokensPerSecond = 0;
  double computeTime = 0, commTime = 0, p2pTime = 0, bubble = 0;
  /// Per pipeline stage, for one micro-batch: compute and exposed comm.
  std::vector<double> stageCompute, stageComm;
  double weightBytes = 0, activationBytes = 0, kvBytes = 0, memoryBytes = 0;
  /// Per pipeline stage, the weight bytes each of its ranks holds: exactly
  /// the tensor bytes of its shard (WeightShards.h's rules, the profile's
  /// weights), as `parc compile` writes them.
  std::vector<int64_t> stageWeightBytes;
  double commBytes = 0; ///< bytes each rank moves per forward
  bool fits = true;
  bool crossesNodes = false;
};

struct PlanResult {
  std::vector<Estimate> ranked; ///< fitting ones first, best first
  std::optional<size_t> chosen;
  int64_t considered = 0;
  /// Splits the model does not divide, e.g. "tp=3: 64 attention heads".
  std::vector<std::string> skipped;
  std::string explanation;
};

/// Prices one configuration.
Estimate estimate(const ModelProfile &profile, const Cluster &cluster,
                  const PlanOptions &options, const Config &config,
                  double flopRate);

/// Enumerates and ranks every configuration of `options.devices` devices.
llvm::Expected<PlanResult> planParallelism(const ModelProfile &profile,
                                           const Cluster &cluster,
                                           const PlanOptions &options);

/// The ranked table and the chosen plan as JSON.
llvm::json::Value planToJSON(const PlanResult &result, const ModelProfile &profile,
                             const Cluster &cluster, const PlanOptions &options);

/// The predicted per-rank timeline of `estimate` as SVG.
void writeTimelineSVG(llvm::raw_ostream &os, const Estimate &estimate,
                      const ModelProfile &profile, const Cluster &cluster);

int64_t bytesPerElement(llvm::StringRef dtype);

/// The weight bytes each rank of each pipeline stage of `config` holds
/// (`config.stageBlocks` the layout), predicted from the profile's weights
/// for the compute dtype `dtype`.
std::vector<int64_t> stageWeightBytes(const ModelProfile &profile,
                                      const Config &config, llvm::StringRef dtype);

} // namespace parc::plan

#endif // PARC_PLAN_PLANNER_H
