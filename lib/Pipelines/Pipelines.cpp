//===- Pipelines.cpp - pass pipelines shared by parc and parc-opt ---------===//

#include "parc/Pipelines/Pipelines.h"
#include "parc/Conversion/Passes.h"
#include "parc/Transforms/Dist/Passes.h"
#include "parc/Transforms/NN/Passes.h"
#include "parc/Transforms/RT/Passes.h"

#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;
using namespace parc;

namespace {

/// Records the passes added to `pm` between two end() calls as one named
/// stage. Adjacent nested passes are coalesced into one adaptor when the
/// pass manager runs, which would drop a stage boundary between them: no
/// two stages here end and begin with passes nested on the same op.
class StageMarker {
public:
  StageMarker(OpPassManager &pm, PipelineStages *stages)
      : pm(pm), stages(stages), begin(pm.size()) {}
  void end(const Twine &name) {
    if (stages && pm.size() > begin)
      stages->push_back({name.str(), &*std::next(pm.begin(), begin),
                         &*std::prev(pm.end())});
    begin = pm.size();
  }

private:
  OpPassManager &pm;
  PipelineStages *stages;
  size_t begin;
};

} // namespace

void parc::buildNNOptimizePipeline(OpPassManager &pm) {
  // CSE first: exporters duplicate subexpressions (LayerNorm's x - mean is
  // often computed twice), which would hide the patterns nn-fuse looks for.
  pm.addPass(nn::createNNCanonicalize());
  pm.addPass(createCSEPass());
  pm.addPass(nn::createNNFuse());
  // MoE blocks are found through the linears and SiLUs nn-fuse produced.
  pm.addPass(nn::createNNFuseMoE());
  pm.addPass(nn::createNNCanonicalize());
  pm.addPass(createCSEPass());
}

void parc::buildLowerToRTPipeline(OpPassManager &pm, bool fusedAttention) {
  ConvertNNToRTOptions options;
  options.fusedAttention = fusedAttention;
  pm.addPass(createConvertNNToRT(options));
  pm.addNestedPass<func::FuncOp>(rt::createRTPlanMemory());
}

void parc::buildRTToEmitCPipeline(OpPassManager &pm) {
  pm.addNestedPass<func::FuncOp>(rt::createRTReroll());
  pm.addPass(createConvertRTToEmitC());
}

void parc::buildTensorParallelPipeline(OpPassManager &pm,
                                       const TensorParallelOptions &options) {
  dist::DistAnnotateOptions annotate;
  annotate.tp = options.tp;
  annotate.sp = options.sp;
  annotate.explain = options.explain;
  pm.addPass(dist::createDistAnnotate(annotate));
  dist::DistPropagateOptions propagate;
  propagate.explain = options.explain;
  pm.addPass(dist::createDistPropagate(propagate));
  pm.addPass(dist::createDistPartition());
  // A table read by a vocabulary-parallel embedding and a tied LM head is
  // cut alike for both: one part per rank, not two.
  pm.addPass(createCSEPass());
  pm.addPass(dist::createDistComm());
}

void parc::buildParcOptimizePipeline(OpPassManager &pm,
                                     const CompileOptions &options,
                                     PipelineStages *stages) {
  StageMarker marker(pm, stages);
  buildNNOptimizePipeline(pm);
  marker.end("nn-optimized");
  if (options.splitBatch > 1) {
    dist::DistSplitBatchOptions split;
    split.parts = options.splitBatch;
    pm.addPass(dist::createDistSplitBatch(split));
    marker.end("dist-split-batch");
  }
  if (options.maxSeq) {
    nn::NNKVCacheOptions cache;
    cache.pairs.assign(options.kvCache.begin(), options.kvCache.end());
    pm.addNestedPass<func::FuncOp>(nn::createNNKVCache(cache));
    marker.end("nn-kv-cache");
  }
}

void parc::buildParcPartitionPipeline(OpPassManager &pm,
                                      const CompileOptions &options,
                                      PipelineStages *stages) {
  StageMarker marker(pm, stages);
  if (options.dtype != "f32") {
    nn::NNConvertDTypeOptions convert;
    convert.dtype = options.dtype;
    pm.addNestedPass<func::FuncOp>(nn::createNNConvertDType(convert));
    marker.end("nn-" + options.dtype);
  }
  if (options.tp > 1) {
    // buildTensorParallelPipeline, one stage per step.
    dist::DistAnnotateOptions annotate;
    annotate.tp = options.tp;
    annotate.sp = options.sp;
    annotate.explain = options.explain;
    pm.addPass(dist::createDistAnnotate(annotate));
    marker.end("dist-annotate");
    dist::DistPropagateOptions propagate;
    propagate.explain = options.explain;
    pm.addPass(dist::createDistPropagate(propagate));
    marker.end("dist-propagate");
    pm.addPass(dist::createDistPartition());
    pm.addPass(createCSEPass());
    marker.end("dist-partition");
    pm.addPass(dist::createDistComm());
    marker.end("dist-comm");
  }
  if (options.ep > 1 || options.capacityFactor != 0 || options.etp) {
    dist::DistExpertParallelOptions experts;
    experts.ep = options.ep;
    experts.capacityFactor = options.capacityFactor;
    experts.etp = options.etp;
    pm.addPass(dist::createDistExpertParallel(experts));
    marker.end("dist-ep");
  }
  if (options.pp > 1) {
    dist::DistPipelineOptions pipeline;
    pipeline.pp = options.pp;
    pipeline.layout.assign(options.ppLayout.begin(), options.ppLayout.end());
    // A generating program takes one group of sequences per forward; the
    // token loop interleaves the groups across steps.
    pipeline.microBatches = options.maxSeq ? 1 : options.microBatches;
    pipeline.virtualStages = options.ppVirtual;
    pipeline.explain = options.explain;
    pm.addPass(dist::createDistPipeline(pipeline));
    marker.end("dist-pp");
  } else if (options.microBatches > 1) {
    dist::DistMicroBatchOptions micro;
    micro.microBatches = options.microBatches;
    pm.addPass(dist::createDistMicroBatch(micro));
    marker.end("dist-micro-batch");
  }
}

void parc::buildParcPipeline(OpPassManager &pm, const CompileOptions &options,
                             PipelineStages *stages) {
  buildParcOptimizePipeline(pm, options, stages);
  buildParcPartitionPipeline(pm, options, stages);
}

std::string parc::stageProgramName(const CompileOptions &options,
                                   int64_t stage) {
  return options.pp > 1 ? "stage" + std::to_string(stage) : "main";
}

void parc::buildParcStagePipeline(OpPassManager &pm,
                                  const CompileOptions &options, int64_t stage,
                                  PipelineStages *stages) {
  StageMarker marker(pm, stages);
  std::string name = stageProgramName(options, stage);
  if (options.pp > 1) {
    dist::DistExtractStageOptions extract;
    extract.stage = stage;
    pm.addPass(dist::createDistExtractStage(extract));
    marker.end(name);
  }
  // After the cut: each stage program overlaps its own collectives,
  // whenever the stage has a group (tensor or expert parallel).
  if (options.ranksPerStage() > 1 && options.overlap) {
    dist::DistOverlapOptions overlap;
    overlap.chunks = options.overlapChunks;
    overlap.cluster = options.cluster;
    overlap.explain = options.explain;
    pm.addPass(dist::createDistOverlap(overlap));
    marker.end("dist-overlap");
  }
  // The fused attention kernel is the CPU runtime's.
  buildLowerToRTPipeline(pm, options.fusedAttention && options.target == "cpu");
  marker.end(name == "main" ? "rt" : "rt-" + name);
}

namespace {

/// `parc-pipeline`'s options: CompileOptions as pass-pipeline options.
struct ParcPipelineOptions : public PassPipelineOptions<ParcPipelineOptions> {
  Option<std::string> target{*this, "target", llvm::cl::desc("cpu or cuda"),
                             llvm::cl::init("cpu")};
  Option<std::string> dtype{*this, "dtype",
                            llvm::cl::desc("compute dtype: f32, bf16 or f16"),
                            llvm::cl::init("f32")};
  Option<int64_t> tp{*this, "tp", llvm::cl::desc("tensor-parallel degree"),
                     llvm::cl::init(1)};
  Option<bool> sp{*this, "sp", llvm::cl::desc("sequence parallelism"),
                  llvm::cl::init(false)};
  Option<int64_t> pp{*this, "pp", llvm::cl::desc("pipeline stages"),
                     llvm::cl::init(1)};
  ListOption<int64_t> ppLayout{*this, "pp-layout",
                               llvm::cl::desc("layers per pipeline stage")};
  Option<int64_t> ppVirtual{*this, "pp-virtual",
                            llvm::cl::desc("virtual stages per stage"),
                            llvm::cl::init(1)};
  Option<int64_t> microBatches{*this, "micro-batches",
                               llvm::cl::desc("micro-batches"),
                               llvm::cl::init(1)};
  Option<int64_t> dp{*this, "dp", llvm::cl::desc("data-parallel replicas"),
                     llvm::cl::init(1)};
  Option<int64_t> ep{*this, "ep", llvm::cl::desc("expert-parallel degree"),
                     llvm::cl::init(1)};
  Option<bool> etp{*this, "etp", llvm::cl::desc("expert tensor parallelism"),
                   llvm::cl::init(false)};
  Option<double> capacityFactor{*this, "capacity-factor",
                                llvm::cl::desc("expert capacity factor"),
                                llvm::cl::init(0.0)};
  Option<int64_t> splitBatch{
      *this, "split-batch",
      llvm::cl::desc("parts dist-split-batch cuts a fixed batch into"),
      llvm::cl::init(1)};
  Option<int64_t> maxSeq{*this, "max-seq",
                         llvm::cl::desc("KV cache tokens (0: no generation)"),
                         llvm::cl::init(0)};
  ListOption<std::string> kvCache{*this, "kv-cache",
                                  llvm::cl::desc("past=present pairs")};
  Option<bool> fusedAttention{*this, "fused-attention",
                              llvm::cl::desc("fused attention kernel"),
                              llvm::cl::init(true)};
  Option<bool> overlap{*this, "overlap", llvm::cl::desc("run dist-overlap"),
                       llvm::cl::init(true)};
  Option<int64_t> overlapChunks{*this, "overlap-chunks",
                                llvm::cl::desc("collective matmul pieces"),
                                llvm::cl::init(0)};
  Option<std::string> cluster{*this, "cluster",
                              llvm::cl::desc("cluster preset or file"),
                              llvm::cl::init("cpu")};
  Option<bool> explain{*this, "explain", llvm::cl::desc("remarks"),
                       llvm::cl::init(false)};
  Option<int64_t> stage{
      *this, "stage",
      llvm::cl::desc("continue with this stage's program down to emitc "
                     "(-1: the whole model's with pp=1, none with pp>1)"),
      llvm::cl::init(-1)};

  CompileOptions toCompileOptions() const {
    CompileOptions o;
    o.target = target, o.dtype = dtype, o.tp = tp, o.sp = sp, o.pp = pp;
    o.ppLayout.assign(ppLayout.begin(), ppLayout.end());
    o.ppVirtual = ppVirtual, o.microBatches = microBatches, o.dp = dp;
    o.ep = ep, o.etp = etp, o.capacityFactor = capacityFactor;
    o.splitBatch = splitBatch;
    if (maxSeq > 0)
      o.maxSeq = int64_t(maxSeq);
    o.kvCache.assign(kvCache.begin(), kvCache.end());
    o.fusedAttention = fusedAttention, o.overlap = overlap;
    o.overlapChunks = overlapChunks, o.cluster = cluster, o.explain = explain;
    return o;
  }
};

LogicalResult
buildRegisteredParcPipeline(OpPassManager &pm, StringRef text,
                            function_ref<LogicalResult(const Twine &)> error) {
  ParcPipelineOptions options;
  if (failed(options.parseFromString(text)))
    return failure();
  CompileOptions o = options.toCompileOptions();
  if (llvm::Error e = o.validate())
    return error("parc-pipeline: " + llvm::toString(std::move(e)));
  if (options.stage >= o.pp)
    return error("parc-pipeline: stage must be less than pp");
  buildParcPipeline(pm, o);
  if (o.pp == 1 || options.stage >= 0) {
    buildParcStagePipeline(pm, o, std::max<int64_t>(options.stage, 0));
    buildRTToEmitCPipeline(pm);
  }
  return success();
}

} // namespace

void parc::registerPipelines() {
  registerPassPipeline(
      "parc-pipeline",
      "What `parc compile` runs on imported nn IR, with its options: the "
      "whole model's passes, then (pp=1, or stage=N) one rank program's "
      "down to emitc",
      buildRegisteredParcPipeline,
      [](function_ref<void(const detail::PassOptions &)> handler) {
        handler(ParcPipelineOptions());
      });
  PassPipelineRegistration<TensorParallelOptions>(
      "dist-tensor-parallel",
      "Megatron tensor (and with sp=true sequence) parallelism: "
      "dist-annotate, dist-propagate, dist-partition, dist-comm",
      buildTensorParallelPipeline);
  PassPipelineRegistration<>(
      "parc-nn-optimize",
      "Fold, deduplicate and fuse imported nn IR (what `parc` runs after import)",
      buildNNOptimizePipeline);
  PassPipelineRegistration<>(
      "parc-lower-to-rt",
      "Lower fused nn IR to a rank program with a planned arena",
      [](OpPassManager &pm) { buildLowerToRTPipeline(pm); });
  PassPipelineRegistration<>(
      "parc-rt-to-emitc",
      "Roll repeated layers and convert a rank program to emitc",
      buildRTToEmitCPipeline);
}
