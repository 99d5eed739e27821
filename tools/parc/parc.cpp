//===- parc.cpp - the parc compiler driver --------------------------------===//
//
// `parc compile model.onnx -o out/`: import, optimise, lower, plan memory,
// write each rank's weights, emit and build one executable per distinct
// rank program, and describe it all in out/manifest.json. The output
// directory is assembled next to its destination and renamed into place, so
// it appears complete or not at all.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"
#include "CompileStats.h"
#include "Debugging.h"
#include "Generate.h"
#include "MoeManifest.h"
#include "OutputDir.h"
#include "nn/NNOps.h"
#include "nn/ShardingRules.h"
#include "parc/Conversion/Passes.h"
#include "parc/Import/Onnx/OnnxImporter.h"
#include "parc/Pipelines/Pipelines.h"
#include "parc/Plan/Cluster.h"
#include "parc/Support/CommandLine.h"
#include "parc/Support/Version.h"
#include "parc/Target/Cpp/Toolchain.h"
#include "parc/Target/Weights/Safetensors.h"
#include "parc/Transforms/Dist/Passes.h"
#include "parc/Transforms/NN/Passes.h"
#include "rt/RTDTypes.h"
#include "rt/RTDialect.h"
#include "io/formats.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/EmitC/IR/EmitC.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/Timing.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/WithColor.h"

#include <chrono>

using namespace mlir;
namespace cl = llvm::cl;

namespace {

cl::SubCommand compileCmd("compile", "Compile an ONNX model into rank programs");

// Groups of `parc compile --help`, printed in the order of their names.
cl::OptionCategory ioCategory("Input and output options");
cl::OptionCategory parallelCategory("Parallelism options");
cl::OptionCategory plannerCategory("Planner and overlap options");
cl::OptionCategory reportCategory("Report and IR dump options");

cl::opt<std::string> modelPath(cl::Positional, cl::desc("<model.onnx>"),
                               cl::Required, cl::sub(compileCmd),
                               cl::cat(ioCategory));
cl::opt<std::string> outputDir("o",
                               cl::desc("Output folder, replaced as a whole; "
                                        "parc replaces only an empty folder or "
                                        "its own earlier output"),
                               cl::value_desc("dir"), cl::Required,
                               cl::sub(compileCmd), cl::cat(ioCategory));
cl::alias outputDirLong("output", cl::aliasopt(outputDir));
cl::opt<std::string> target("target",
                            cl::desc("Code generation target: cpu or cuda"),
                            cl::init("cpu"), cl::sub(compileCmd),
                            cl::cat(ioCategory));
cl::opt<std::string> dtype("dtype",
                           cl::desc("Compute dtype: f32, bf16 or f16 (also "
                                    "float32, bfloat16, float16, fp16)"),
                           cl::init("f32"), cl::sub(compileCmd),
                           cl::cat(ioCategory));
cl::list<std::string> inputShapes(
    "input-shape",
    cl::desc("Bind a graph input's dims: NAME=D0xD1x... (repeatable, "
             "each NAME once)"),
    cl::value_desc("name=shape"), cl::sub(compileCmd), cl::cat(ioCategory));
cl::opt<int64_t> maxSeq(
    "max-seq",
    cl::desc("Generation: compile the decode step of a decoder exported with "
             "its KV cache, keeping a cache of this many tokens per sequence "
             "on each rank (run it with parc-run --prompt)"),
    cl::value_desc("S"), cl::init(0), cl::sub(compileCmd), cl::cat(ioCategory));
cl::opt<int64_t> prefillLen(
    "prefill-len",
    cl::desc("Generation: also compile a prefill program that takes the "
             "first P tokens of a prompt in one forward, sharing the decode "
             "program's weights and cache (1 <= P <= --max-seq - 1)"),
    cl::value_desc("P"), cl::init(0), cl::sub(compileCmd), cl::cat(ioCategory));
cl::list<std::string> kvCache(
    "kv-cache",
    cl::desc("Generation: the cache's PAST=PRESENT input/output pairs "
             "(default: past_key_values.{i}.key/value -> present.{i}.key/value "
             "and past_{i} -> present_{i})"),
    cl::CommaSeparated, cl::value_desc("past=present,..."), cl::sub(compileCmd),
    cl::cat(ioCategory));
cl::opt<bool> quiet("quiet", cl::desc("Print only errors"), cl::sub(compileCmd),
                    cl::cat(ioCategory));
cl::opt<int64_t> jobs(
    "jobs",
    cl::desc("Rank programs built at once (C++ compiler runs, one per "
             "distinct program; the default is this machine's core count; "
             "also -j)"),
    cl::value_desc("N"),
    cl::init(int64_t(llvm::hardware_concurrency().compute_thread_count())),
    cl::sub(compileCmd), cl::cat(ioCategory));
cl::alias jobsShort("j", cl::aliasopt(jobs));
cl::opt<int64_t> maxConstantBytes("max-constant-bytes",
                                  cl::desc(parc::kMaxConstantBytesHelp),
                                  cl::init(parc::kDefaultMaxConstantBytes),
                                  cl::value_desc("bytes"), cl::sub(compileCmd),
                                  cl::cat(ioCategory));
cl::opt<int64_t> tp("tp",
                    cl::desc("Tensor-parallel degree (ranks per model replica; "
                             "also --tensor-parallel-size, -tp)"),
                    cl::value_desc("N"), cl::init(1), cl::sub(compileCmd),
                    cl::cat(parallelCategory));
// vLLM's spellings; `-tp` is --tp already (llvm::cl takes one dash or two).
cl::alias tpLong("tensor-parallel-size", cl::aliasopt(tp));
cl::opt<int64_t> ep("ep",
                    cl::desc("Expert-parallel degree: each MoE layer's experts "
                             "split over this many ranks (the --tp ranks when "
                             "both are given; also --expert-parallel-size)"),
                    cl::value_desc("N"), cl::init(1), cl::sub(compileCmd),
                    cl::cat(parallelCategory));
cl::alias epLong("expert-parallel-size", cl::aliasopt(ep));
cl::opt<double> capacityFactor(
    "capacity-factor",
    cl::desc("Expert capacity as a multiple of tokens*top_k/experts; pairs "
             "beyond it are dropped and counted (0: no drop)"),
    cl::value_desc("x"), cl::init(0.0), cl::sub(compileCmd),
    cl::cat(parallelCategory));
cl::opt<bool> etp("etp",
                  cl::desc("Expert tensor parallelism: split every expert's "
                           "ffn over the --tp ranks (with --ep E: E groups "
                           "of --tp ranks, experts over the groups)"),
                  cl::sub(compileCmd), cl::cat(parallelCategory));
cl::opt<bool> sp("sp",
                 cl::desc("Sequence parallelism (Megatron-SP) on top of --tp: "
                          "norms and residuals split along the sequence"),
                 cl::sub(compileCmd), cl::cat(parallelCategory));
cl::opt<int64_t> pp("pp",
                    cl::desc("Pipeline stages, each a program on tp ranks "
                             "(also --pipeline-parallel-size)"),
                    cl::value_desc("N"), cl::init(1), cl::sub(compileCmd),
                    cl::cat(parallelCategory));
cl::alias ppLong("pipeline-parallel-size", cl::aliasopt(pp));
cl::list<int64_t> ppLayout("pp-layout",
                           cl::desc("Layers per pipeline stage, e.g. 5,6,6,7 "
                                    "(default: balance the cost model)"),
                           cl::CommaSeparated, cl::value_desc("n,n,..."),
                           cl::sub(compileCmd), cl::cat(parallelCategory));
cl::opt<int64_t> ppVirtual("pp-virtual",
                           cl::desc("Virtual stages per pipeline stage "
                                    "(interleaved schedule)"),
                           cl::value_desc("N"), cl::init(1),
                           cl::sub(compileCmd), cl::cat(parallelCategory));
cl::opt<int64_t>
    microBatches("micro-batches",
                 cl::desc("Split the batch (dim 0 of every input) "
                          "into this many micro-batches (pipeline "
                          "micro-batches with --pp; without, "
                          "chains whose communication interleaves; "
                          "with --max-seq --pp, groups of sequences "
                          "whose decode steps interleave across the "
                          "stages)"),
                 cl::value_desc("N"), cl::init(1), cl::sub(compileCmd),
                 cl::cat(parallelCategory));
cl::opt<int64_t> dp("dp",
                    cl::desc("Data-parallel replicas: the partitioned model "
                             "runs this many times side by side, each on "
                             "its own ranks and on batch/N (dim 0 of every "
                             "input; also --data-parallel-size)"),
                    cl::value_desc("N"), cl::init(1), cl::sub(compileCmd),
                    cl::cat(parallelCategory));
cl::alias dpLong("data-parallel-size", cl::aliasopt(dp));
cl::opt<bool> autoPlan("auto",
                       cl::desc("Let the planner choose the parallel plan "
                                "(needs --devices and --cluster)"),
                       cl::sub(compileCmd), cl::cat(plannerCategory));
cl::opt<int64_t> autoDevices("devices", cl::desc("Devices --auto may use"),
                             cl::value_desc("N"), cl::init(0),
                             cl::sub(compileCmd), cl::cat(plannerCategory));
cl::opt<std::string>
    autoCluster("cluster",
                cl::desc("Cluster preset or JSON file for --auto "
                         "and for dist-overlap's cost model "
                         "(default: cpu)"),
                cl::sub(compileCmd), cl::cat(plannerCategory));
cl::opt<bool> noOverlap("no-overlap",
                        cl::desc("Keep every collective blocking where the "
                                 "partitioner put it (for comparison)"),
                        cl::sub(compileCmd), cl::cat(plannerCategory));
cl::opt<bool> noFusedAttention(
    "no-fused-attention",
    cl::desc("Lower every attention to score, softmax and value kernels "
             "over the whole [B, H, S, T] scores, never to the fused "
             "kernel (for comparison; --target cuda always does)"),
    cl::sub(compileCmd), cl::cat(plannerCategory));
cl::opt<int64_t> overlapChunks(
    "overlap-chunks",
    cl::desc("Pieces a product and its collective are cut into so that "
             "they overlap (collective matmul; 0 = the cheapest by the cost "
             "model on --cluster; 1 = no cutting)"),
    cl::value_desc("N"), cl::init(0), cl::sub(compileCmd),
    cl::cat(plannerCategory));
cl::opt<bool> explain("explain",
                      cl::desc("Explain the partitioning: each region split or "
                               "kept replicated, with its ONNX node, and each "
                               "pipeline stage's layers and cost"),
                      cl::sub(compileCmd), cl::cat(reportCategory));
cl::opt<std::string>
    dumpIR("dump-ir",
           cl::desc("Write the IR after every stage into this directory"),
           cl::value_desc("dir"), cl::sub(compileCmd), cl::cat(reportCategory));
cl::opt<std::string> explainJson(
    "explain-json",
    cl::desc("Also write --explain's report as JSON: each remark with its "
             "stage, ONNX node and text (implies --explain's analysis; the "
             "text is printed only with --explain)"),
    cl::value_desc("file"), cl::sub(compileCmd), cl::cat(reportCategory));

void progress(const Twine &message) {
  if (!quiet)
    llvm::errs() << "parc: " << message << "\n";
}

LogicalResult fail(const Twine &message) {
  llvm::WithColor::error(llvm::errs(), "parc") << message << "\n";
  return failure();
}

/// An option of parc::CompileOptions as `parc compile` spells it.
std::string flagSpelling(StringRef option) { return ("--" + option).str(); }

/// The pipeline's options from the flags (dtype already canonical).
parc::CompileOptions optionsFromFlags() {
  parc::CompileOptions o;
  o.target = target, o.dtype = dtype;
  o.tp = tp, o.pp = pp, o.dp = dp, o.ep = ep, o.sp = sp, o.etp = etp;
  o.capacityFactor = capacityFactor;
  o.ppLayout.assign(ppLayout.begin(), ppLayout.end());
  o.ppVirtual = ppVirtual, o.microBatches = microBatches;
  if (maxSeq.getNumOccurrences())
    o.maxSeq = maxSeq.getValue();
  if (prefillLen.getNumOccurrences())
    o.prefillLen = prefillLen.getValue();
  o.kvCache.assign(kvCache.begin(), kvCache.end());
  o.fusedAttention = !noFusedAttention;
  o.overlap = !noOverlap, o.overlapChunks = overlapChunks;
  // --explain-json runs --explain's analysis; its text only with --explain.
  o.explain = explain || !explainJson.empty();
  o.autoPlan = autoPlan;
  return o;
}

std::string dtypeName(Type t) {
  const parc::rt::DType *d = parc::rt::dtypeOf(t);
  return d ? d->name.str() : "unknown";
}

llvm::json::Object tensorJson(StringRef name, MemRefType type) {
  return llvm::json::Object{{"name", name},
                            {"dtype", dtypeName(type.getElementType())},
                            {"shape", llvm::json::Array(type.getShape())}};
}

/// The manifest's record of a program's prefill: what it shares with the
/// decode program (`arena`: the decode program's bytes) and what it holds.
llvm::json::Object prefillJson(const parc::driver::PrefillMerge &prefill,
                               int64_t length, int64_t arena) {
  return llvm::json::Object{
      {"length", length},
      {"arena_bytes", prefill.arenaBytes},
      // One arena serves both programs, which run one after the other.
      {"shared_arena_bytes", std::max(arena, prefill.arenaBytes)},
      {"shared_weights", prefill.sharedWeights},
      {"own_weights", prefill.ownWeights},
      {"own_weight_bytes", prefill.ownWeightBytes}};
}

/// The compilation of one model into a staging directory.
class Compilation {
public:
  Compilation(MLIRContext &ctx, StringRef staging, TimingScope &timing,
              parc::driver::ExplainLog *explainLog, parc::CompileOptions opts)
      : ctx(ctx), staging(staging), timing(timing), explainLog(explainLog),
        opts(std::move(opts)) {}

  LogicalResult run();

private:
  /// One distinct rank program: what the manifest says about it.
  struct ProgramInfo {
    llvm::json::Object json;
    llvm::json::Array inputs, outputs, moeLayers;
    int64_t commBytes = 0, sendBytes = 0;
    /// Per collective kind: how many, and the bytes each rank sends.
    llvm::StringMap<std::pair<int64_t, int64_t>> perCollective;
  };
  /// What every program adds to the manifest.
  struct Totals {
    llvm::json::Array programs, ranks, inputs, outputs, moeLayers;
    int64_t commBytes = 0, sendBytes = 0, weightBytes = 0, kvBytes = 0;
    llvm::StringMap<std::pair<int64_t, int64_t>> perCollective;
  };

  // The steps of run(), in order.
  /// Binds the shapes the flags ask for and imports the model.
  OwningOpRef<ModuleOp> importModel();
  /// The whole-model pipeline (--auto plans halfway); true when the plan
  /// changes the shapes the model is imported at, to start again.
  FailureOr<bool> optimizeAndPartition(ModuleOp module);
  /// --prefill-len: the model imported again, bound for the prefill, and
  /// partitioned as the decode program is (its stage layout too).
  LogicalResult preparePrefill();
  /// Every stage's program: cut, lowered, weights written, emitted.
  LogicalResult emitPrograms(OwningOpRef<ModuleOp> module);
  /// Builds the queued programs, --jobs at a time; every failure is
  /// reported with its program's name.
  LogicalResult buildPrograms();
  LogicalResult writeManifest();

  /// Runs the pipeline `build` adds on `module` with one pass manager:
  /// MLIR's pass-manager options, timing under `timingName`, and the
  /// driver's work at the boundaries of its stages (beginStage, endStage).
  LogicalResult
  runPipeline(ModuleOp module, StringRef timingName,
              llvm::function_ref<void(OpPassManager &, parc::PipelineStages &)>
                  build);
  void beginStage(StringRef stage, ModuleOp module);
  LogicalResult endStage(StringRef stage, ModuleOp module);
  LogicalResult dump(ModuleOp module, StringRef stage);

  /// Lowers stage `stage`'s program, writes the weights of the ranks that
  /// run it, emits it and queues its build.
  FailureOr<ProgramInfo> emitProgram(ModuleOp module, int64_t stage);
  /// Lowers stage `stage` of the prefill program and moves it into
  /// `module`, the stage's decode program, sharing its weights.
  FailureOr<parc::driver::PrefillMerge> lowerPrefill(ModuleOp module,
                                                     int64_t stage);
  /// Writes the weight files of stage `stage`'s ranks; `rankWeightBytes`
  /// the bytes each holds.
  LogicalResult writeStageWeights(ModuleOp program, StringRef name,
                                  int64_t stage, int64_t rankWeightBytes);
  /// The bytes `program` sends per forward, per collective kind.
  void countCommBytes(func::FuncOp program, ProgramInfo &info) const;
  void addProgram(ProgramInfo info, int64_t stage, int64_t stageKvBytes);
  /// What no batch split can mend comes first: more stages than layers.
  /// dist-pipeline finds the layers, on a copy of the whole batch's program.
  LogicalResult checkStagesFitWholeBatch(ModuleOp module);
  LogicalResult checkStackedOutputs(func::FuncOp main);
  void reportOverlap(ModuleOp program);
  /// With --auto: the plan, chosen on the optimized `module`.
  LogicalResult choosePlan(ModuleOp module);
  llvm::json::Object meshJson() const;
  /// --dp: a leading "dp" mesh axis, every replica's ranks (each reading
  /// the weight file of its rank in replica 0) and the whole batch's
  /// input and output shapes.
  LogicalResult replicate(llvm::json::Object &mesh, llvm::json::Array &ranks,
                          llvm::json::Array &inputs, llvm::json::Array &outputs);
  /// Binds every input's dim 0 to one micro-batch of one data-parallel
  /// replica (--micro-batches, --dp).
  LogicalResult bindMicroBatch(parc::OnnxImportOptions &options);
  std::string path(const Twine &rel) {
    SmallString<256> p(staging);
    llvm::sys::path::append(p, rel);
    return p.str().str();
  }

  MLIRContext &ctx;
  std::string staging;
  /// --mlir-timing: one timer per pipeline (and per import and build).
  TimingScope &timing;
  /// --explain-json: records each stage's remarks.
  parc::driver::ExplainLog *explainLog;
  /// The flags as pipeline options, validated; --auto fills in its plan.
  parc::CompileOptions opts;
  std::vector<parc::BuildJob> builds;
  /// --auto: the planner's weight bytes per rank of each stage, recorded
  /// beside the bytes written.
  std::vector<int64_t> predictedStageBytes;
  SmallVector<int64_t> layersPerStage;
  /// The output shapes of the whole batch (with --micro-batches).
  SmallVector<SmallVector<int64_t>> wholeResults;
  int stageNo = 0;
  /// The stage program being cut and lowered, and its KV cache bytes.
  std::string programName;
  int64_t stageKvBytes = 0;
  /// New tokens per sequence the model is imported for (1: a decode step;
  /// --prefill-len while the prefill is compiled), and what its dumps'
  /// names start with.
  int64_t stepTokens = 1;
  std::string dumpPrefix;
  /// --prefill-len: the partitioned prefill program, whole model.
  OwningOpRef<ModuleOp> prefillModule;
  Totals totals;
  /// compile-stats.json: weight-writing time and bytes, the model's bytes.
  parc::driver::CompileStats stats;
};

LogicalResult Compilation::dump(ModuleOp module, StringRef stage) {
  if (dumpIR.empty())
    return success();
  if (std::error_code ec = llvm::sys::fs::create_directories(dumpIR))
    return fail("cannot create '" + dumpIR + "': " + ec.message());
  SmallString<256> file(dumpIR);
  llvm::sys::path::append(
      file,
      llvm::formatv("{0:2}-{1}{2}.mlir", stageNo++, dumpPrefix, stage).str());
  std::error_code ec;
  llvm::raw_fd_ostream os(file, ec);
  if (ec)
    return fail("cannot write '" + file + "': " + ec.message());
  // Weights elided: a dump shows structure, not megabytes of hex.
  module.print(os, OpPrintingFlags()
                       .elideLargeElementsAttrs(16)
                       .elideLargeResourceString(64)
                       .enableDebugInfo(true));
  return success();
}

LogicalResult Compilation::runPipeline(
    ModuleOp module, StringRef timingName,
    llvm::function_ref<void(OpPassManager &, parc::PipelineStages &)> build) {
  PassManager pm(&ctx);
  SmallVector<parc::PipelineStage> stages;
  build(pm, stages);
  // --mlir-print-ir-*, --mlir-pass-statistics, crash reproducers ...
  if (failed(applyPassManagerCLOptions(pm)))
    return failure();
  TimingScope pipelineTiming = timing.nest(timingName);
  pm.enableTiming(pipelineTiming);
  // A check that fails at a stage's end is reported there; the remaining
  // passes still run (instrumentation cannot stop them), and the pipeline
  // fails.
  bool checksFailed = false;
  pm.addInstrumentation(std::make_unique<parc::driver::StageInstrumentation>(
      std::move(stages),
      [&](const parc::PipelineStage &stage, ModuleOp m, bool begin) {
        if (begin)
          beginStage(stage.name, m);
        else if (failed(endStage(stage.name, m)))
          checksFailed = true;
      }));
  return success(succeeded(pm.run(module)) && !checksFailed);
}

void Compilation::beginStage(StringRef stage, ModuleOp module) {
  if (explainLog)
    explainLog->setStage(stage);
  if (stage == "nn-optimized")
    progress("optimizing (fold, fuse)");
  else if (stage == "nn-kv-cache")
    progress(llvm::formatv("keeping the KV cache on the rank ({0} tokens)",
                           *opts.maxSeq)
                 .str());
  else if (stage == "nn-" + opts.dtype)
    progress("converting compute to " + opts.dtype);
  else if (stage == "dist-annotate")
    progress(llvm::formatv("partitioning for tensor{0} parallelism over {1} ranks",
                           opts.sp ? " and sequence" : "", opts.tp)
                 .str());
  else if (stage == "dist-ep")
    progress(opts.etp
                 ? llvm::formatv("splitting every expert over {0} ranks", opts.tp).str()
                 : llvm::formatv("splitting experts over {0} rank(s)", opts.ep).str());
  else if (stage == "dist-pp")
    progress(llvm::formatv("cutting into {0} pipeline stages ({1} virtual each), "
                           "{2} micro-batch(es)",
                           opts.pp, opts.ppVirtual, opts.microBatches)
                 .str());
  else if (stage == "dist-micro-batch")
    progress(llvm::formatv("splitting the batch into {0} micro-batches",
                           opts.microBatches)
                 .str());
  else if (stage.starts_with("rt")) {
    // The caches this stage's ranks hold: their layers, their heads.
    stageKvBytes =
        parc::driver::kvCacheBytes(module.lookupSymbol<func::FuncOp>("main"));
    progress("lowering " + programName +
             " to the rank program and planning memory");
  }
}

LogicalResult Compilation::endStage(StringRef stage, ModuleOp module) {
  if (failed(dump(module, stage)))
    return failure();
  auto main = module.lookupSymbol<func::FuncOp>("main");
  if (stage == "dist-split-batch" && opts.dp > 1 && opts.microBatches == 1)
    return checkStackedOutputs(main);
  if (stage == "dist-comm") {
    auto regions = main->getAttrOfType<IntegerAttr>("dist.tp_regions");
    if (!regions || regions.getInt() == 0)
      llvm::WithColor::warning(llvm::errs(), "parc")
          << "no tensor-parallel region found: every rank computes the whole "
             "model (--explain says why)\n";
    else
      progress(llvm::formatv("{0} Megatron region(s) split over tp", regions.getInt()).str());
  } else if (stage == "dist-ep") {
    auto layers = module->getAttrOfType<IntegerAttr>("dist.moe_layers");
    if (!layers || layers.getInt() == 0)
      llvm::WithColor::warning(llvm::errs(), "parc")
          << "no mixture-of-experts layer found: --ep and --capacity-factor "
             "change nothing\n";
  } else if (stage == "dist-pp") {
    layersPerStage = llvm::to_vector(
        main->getAttrOfType<DenseI64ArrayAttr>("dist.pp_layout").asArrayRef());
    if (opts.microBatches > 1 && failed(checkStackedOutputs(main)))
      return failure();
    progress("layers per stage: " +
             llvm::join(llvm::map_range(layersPerStage,
                                        [](int64_t n) { return std::to_string(n); }),
                        ","));
  } else if (stage == "dist-micro-batch") {
    return checkStackedOutputs(main);
  } else if (stage == "dist-overlap") {
    reportOverlap(module);
  }
  return success();
}

void Compilation::reportOverlap(ModuleOp program) {
  auto stats = program->getAttrOfType<DictionaryAttr>("dist.overlap");
  std::string pieces;
  for (NamedAttribute p : stats.getAs<DictionaryAttr>("pieces"))
    pieces += llvm::formatv("{0}{1} into {2}", pieces.empty() ? " (" : ", ",
                            cast<IntegerAttr>(p.getValue()).getInt(),
                            p.getName().str())
                  .str();
  progress(llvm::formatv("{0}overlap: {1} collective matmul(s) cut{2}, "
                         "{3} collective(s) started early, {4} switch(es) "
                         "between micro-batches",
                         opts.pp > 1 ? programName + ": " : std::string(),
                         stats.getAs<IntegerAttr>("decomposed").getInt(),
                         pieces.empty() ? pieces : pieces + ")",
                         stats.getAs<IntegerAttr>("early_starts").getInt(),
                         stats.getAs<IntegerAttr>("interleaved").getInt())
               .str());
}

LogicalResult Compilation::bindMicroBatch(parc::OnnxImportOptions &options) {
  // The whole batch's shapes, as the user bound them, then dim 0 of each
  // divided by the micro-batch count. The first import gets a context of
  // its own: a second one into `ctx` would suffix the weights' resource
  // keys, and so their names.
  const int64_t dp = opts.dp, microBatches = opts.microBatches;
  MLIRContext scratch;
  scratch.getDiagEngine().registerHandler([](Diagnostic &) { return success(); });
  OwningOpRef<ModuleOp> whole = parc::importOnnxFile(modelPath, &scratch, options);
  if (!whole)
    return success(); // the import proper reports why
  auto main = whole->lookupSymbol<func::FuncOp>("main");
  wholeResults.clear();
  for (Type t : main.getResultTypes())
    wholeResults.push_back(llvm::to_vector(cast<RankedTensorType>(t).getShape()));
  for (auto [i, type] : llvm::enumerate(main.getArgumentTypes())) {
    auto t = cast<RankedTensorType>(type);
    auto nameAttr = main.getArgAttrOfType<StringAttr>(i, "onnx.name");
    std::string name = nameAttr ? nameAttr.str() : "input_" + std::to_string(i);
    const char *flag = dp > 1 ? "--dp" : "--micro-batches";
    if (t.getRank() == 0)
      return fail(modelPath + ": " + flag + " splits dim 0 of every input, but "
                  "input '" + name + "' is a scalar");
    // The batch dim the model names (a past's dim 1), else dim 0.
    int64_t d = parc::nn::batchDim(main, i);
    if (d && dp > 1)
      return fail(llvm::formatv("{0}: --dp splits dim 0 of every input across "
                                "replicas, but input '{1}' holds its batch on dim "
                                "{2} (as the model names its dims); "
                                "--micro-batches splits it there",
                                modelPath, name, d)
                      .str());
    if (t.getDimSize(d) % dp)
      return fail(llvm::formatv("{0}: --dp {1} does not divide the batch of "
                                "input '{2}' (dim 0 of {3} is {4})",
                                modelPath, dp, name, type, t.getDimSize(d))
                      .str());
    if (t.getDimSize(d) / dp % microBatches)
      return fail(llvm::formatv("{0}: --micro-batches {1} does not divide the batch "
                                "of input '{2}' (dim {6} of {3} is {4}{5})",
                                modelPath, microBatches, name, type,
                                t.getDimSize(d),
                                dp > 1 ? llvm::formatv(", {0} per --dp replica",
                                                       t.getDimSize(d) / dp)
                                             .str()
                                       : std::string(),
                                d)
                      .str());
    SmallVector<int64_t> shape(t.getShape());
    shape[d] /= dp * microBatches;
    options.inputShapes[name] = shape;
  }
  // A model that fixes its batch (static input dims, Reshape constants)
  // cannot be imported at one part's batch: it is imported whole and
  // dist-split-batch divides the batch where it provably is.
  parc::OnnxImportOptions part = options;
  if (parc::importOnnxFile(modelPath, &scratch, part))
    return success();
  opts.splitBatch = dp * microBatches;
  for (auto [i, type] : llvm::enumerate(main.getArgumentTypes())) {
    auto nameAttr = main.getArgAttrOfType<StringAttr>(i, "onnx.name");
    options.inputShapes[nameAttr ? nameAttr.str() : "input_" + std::to_string(i)] =
        llvm::to_vector(cast<RankedTensorType>(type).getShape());
  }
  return success();
}

OwningOpRef<ModuleOp> Compilation::importModel() {
  parc::OnnxImportOptions options;
  if (auto err = parc::parseInputShapes(inputShapes, options))
    return (void)fail(llvm::toString(std::move(err))), nullptr;
  options.maxConstantBytes = maxConstantBytes;
  // A generating program's micro-batches are groups the token loop steps
  // in turn: bindStep gives the program one group's batch.
  if (!opts.maxSeq && (opts.microBatches > 1 || opts.dp > 1) &&
      failed(bindMicroBatch(options)))
    return nullptr;
  if (opts.maxSeq)
    if (auto err = parc::driver::bindStep(modelPath, *opts.maxSeq, stepTokens,
                                          opts.microBatches, opts.kvCache,
                                          options))
      return (void)fail(llvm::toString(std::move(err))), nullptr;

  progress("importing " + modelPath);
  TimingScope importTiming = timing.nest("import");
  OwningOpRef<ModuleOp> module = parc::importOnnxFile(modelPath, &ctx, options);
  importTiming.stop();
  if (!module || failed(dump(*module, "import")))
    return nullptr;
  stats.modelWeightBytes = parc::driver::modelWeightBytes(*module);
  // A replica's outputs are stacked into the whole batch's on dim 0 (a
  // fixed batch is split, and checked, after optimizing).
  if (opts.dp > 1 && opts.microBatches == 1 && opts.splitBatch == 1 &&
      failed(checkStackedOutputs(module->lookupSymbol<func::FuncOp>("main"))))
    return nullptr;
  if (opts.splitBatch > 1 && opts.pp > 1 && failed(checkStagesFitWholeBatch(*module)))
    return nullptr;
  return module;
}

LogicalResult Compilation::checkStagesFitWholeBatch(ModuleOp module) {
  OwningOpRef<ModuleOp> whole = module.clone();
  parc::dist::DistPipelineOptions check;
  check.pp = opts.pp;
  check.layout.assign(opts.ppLayout.begin(), opts.ppLayout.end());
  check.virtualStages = opts.ppVirtual;
  PassManager pm(&ctx);
  parc::buildNNOptimizePipeline(pm);
  pm.addPass(parc::dist::createDistPipeline(check));
  return pm.run(*whole);
}

LogicalResult Compilation::choosePlan(ModuleOp module) {
  FailureOr<parc::plan::Config> chosen =
      parc::driver::autoPlan(module, autoDevices, opts.cluster, opts.dtype, quiet,
                             &predictedStageBytes);
  if (failed(chosen))
    return failure();
  // The stage layout is left to dist-pipeline's own balance.
  opts.tp = chosen->tp, opts.sp = chosen->sp, opts.pp = chosen->pp;
  opts.ep = chosen->ep, opts.etp = chosen->etp;
  opts.ppVirtual = chosen->virtualStages;
  opts.microBatches = chosen->microBatches, opts.dp = chosen->dp;
  opts.autoPlan = false;
  if (llvm::Error e = opts.validate(flagSpelling))
    return fail("--auto: " + llvm::toString(std::move(e)));
  return success();
}

FailureOr<bool> Compilation::optimizeAndPartition(ModuleOp module) {
  if (!opts.autoPlan) {
    if (failed(runPipeline(module, "pipeline",
                           [&](OpPassManager &pm, parc::PipelineStages &stages) {
                             parc::buildParcPipeline(pm, opts, &stages);
                           })))
      return failure();
    return false;
  }
  // --auto plans on the optimized model, then partitions by its plan.
  if (failed(runPipeline(module, "optimize",
                         [&](OpPassManager &pm, parc::PipelineStages &stages) {
                           parc::buildParcOptimizePipeline(pm, opts, &stages);
                         })) ||
      failed(choosePlan(module)))
    return failure();
  // Micro-batches and replicas change the shape the model is imported at:
  // again.
  if (opts.microBatches > 1 || opts.dp > 1)
    return true;
  if (failed(runPipeline(module, "partition",
                         [&](OpPassManager &pm, parc::PipelineStages &stages) {
                           parc::buildParcPartitionPipeline(pm, opts, &stages);
                         })))
    return failure();
  return false;
}

LogicalResult Compilation::run() {
  OwningOpRef<ModuleOp> module = importModel();
  if (!module)
    return failure();
  FailureOr<bool> again = optimizeAndPartition(*module);
  if (failed(again))
    return failure();
  if (*again)
    return run();
  if (opts.prefillLen && failed(preparePrefill()))
    return failure();
  if (failed(emitPrograms(std::move(module))) || failed(buildPrograms()))
    return failure();
  return writeManifest();
}

LogicalResult Compilation::preparePrefill() {
  progress(llvm::formatv("compiling the prefill program ({0} tokens per "
                         "sequence)",
                         *opts.prefillLen)
               .str());
  const parc::CompileOptions decodeOpts = opts;
  const int64_t modelBytes = stats.modelWeightBytes;
  // Each stage's prefill writes the caches of its decode stage's layers.
  if (opts.pp > 1)
    opts.ppLayout.assign(layersPerStage.begin(), layersPerStage.end());
  stepTokens = *opts.prefillLen;
  dumpPrefix = "prefill-";
  prefillModule = importModel();
  bool ok = prefillModule &&
            succeeded(runPipeline(
                *prefillModule, "prefill pipeline",
                [&](OpPassManager &pm, parc::PipelineStages &stages) {
                  parc::buildParcPipeline(pm, opts, &stages);
                }));
  opts = decodeOpts;
  stepTokens = 1;
  dumpPrefix.clear();
  stats.modelWeightBytes = modelBytes;
  return success(ok);
}

FailureOr<parc::driver::PrefillMerge> Compilation::lowerPrefill(ModuleOp module,
                                                                int64_t stage) {
  OwningOpRef<ModuleOp> prefill =
      stage + 1 < opts.pp ? prefillModule->clone() : prefillModule.release();
  const std::string decodeName = programName;
  const int64_t kvBytes = stageKvBytes;
  programName = decodeName + " (prefill)";
  dumpPrefix = "prefill-";
  LogicalResult lowered =
      runPipeline(*prefill, "pipeline " + decodeName + " prefill",
                  [&](OpPassManager &pm, parc::PipelineStages &stages) {
                    parc::buildParcStagePipeline(pm, opts, stage, &stages);
                  });
  programName = decodeName;
  stageKvBytes = kvBytes;
  dumpPrefix.clear();
  if (failed(lowered))
    return failure();
  return parc::driver::mergePrefill(module, *prefill);
}

LogicalResult Compilation::emitPrograms(OwningOpRef<ModuleOp> module) {
  for (StringRef dir : {"bin", "src", "weights"})
    if (std::error_code ec = llvm::sys::fs::create_directories(path(dir)))
      return fail("cannot create '" + path(dir) + "': " + ec.message());
  for (int64_t stage = 0; stage < opts.pp; ++stage) {
    OwningOpRef<ModuleOp> program = opts.pp > 1 ? module->clone() : module.release();
    FailureOr<ProgramInfo> info = emitProgram(*program, stage);
    if (failed(info))
      return failure();
    addProgram(std::move(*info), stage, stageKvBytes);
  }
  return success();
}

void Compilation::addProgram(ProgramInfo info, int64_t stage,
                             int64_t kvBytes) {
  // A rank holds a cache per group of sequences (--micro-batches).
  if (opts.maxSeq) {
    kvBytes *= opts.microBatches;
    info.json["kv_cache_bytes"] = kvBytes;
  }
  totals.kvBytes = std::max(totals.kvBytes, kvBytes);
  totals.commBytes += info.commBytes;
  totals.sendBytes += info.sendBytes;
  for (auto &entry : info.perCollective) {
    totals.perCollective[entry.getKey()].first += entry.getValue().first;
    totals.perCollective[entry.getKey()].second += entry.getValue().second;
  }
  if (stage == 0)
    totals.inputs = std::move(info.inputs);
  if (stage == opts.pp - 1)
    totals.outputs = std::move(info.outputs);
  for (llvm::json::Value &layer : info.moeLayers)
    totals.moeLayers.push_back(std::move(layer));
  totals.programs.push_back(std::move(info.json));
}

llvm::json::Object Compilation::meshJson() const {
  using llvm::json::Array;
  const int64_t width = opts.ranksPerStage();
  // The group inside a stage is "tp" (experts, if split, share it) or "ep".
  const char *inner = opts.tp > 1 ? "tp" : "ep";
  auto mesh = [](Array axes, Array shape) {
    return llvm::json::Object{{"axes", std::move(axes)}, {"shape", std::move(shape)}};
  };
  if (opts.pp > 1 && opts.expertMesh()) // dist-pipeline's leading axis on ["ep", "tp"]
    return mesh(Array{"pp", "ep", "tp"}, Array{opts.pp, opts.ep, opts.tp});
  if (opts.pp > 1)
    return mesh(Array{"pp", inner}, Array{opts.pp, width});
  if (opts.expertMesh())
    return mesh(Array{"ep", "tp"}, Array{opts.ep, opts.tp});
  if (width > 1)
    return mesh(Array{inner}, Array{width});
  return mesh(Array{}, Array{});
}

LogicalResult Compilation::writeManifest() {
  const int64_t dp = opts.dp, pp = opts.pp, width = opts.ranksPerStage(),
                replicaRanks = pp * width, world = dp * replicaRanks;
  llvm::json::Object mesh = meshJson();
  if (dp > 1 &&
      failed(replicate(mesh, totals.ranks, totals.inputs, totals.outputs)))
    return failure();
  llvm::json::Object manifest{
      {"format", 1},
      {"producer", parc::driver::kManifestProducer},
      {"parc_version", parc::version()},
      {"parc_commit", parc::commit()},
      {"model", modelPath},
      {"target", opts.target},
      {"dtype", opts.dtype},
      {"world_size", world},
      {"mesh", std::move(mesh)},
      {"programs", std::move(totals.programs)},
      {"ranks", std::move(totals.ranks)},
      {"inputs", std::move(totals.inputs)},
      {"outputs", std::move(totals.outputs)},
      {"output_rank", (pp - 1) * width},
      {"sequence_parallel", opts.sp},
      {"comm_bytes_per_forward", totals.commBytes},
      {"data_parallel", dp},
      {"ranks_per_replica", replicaRanks},
      {"comm_bytes_per_forward_all_replicas", dp * totals.commBytes},
      {"moe_layers", std::move(totals.moeLayers)}};
  llvm::json::Object commJson;
  for (auto &entry : totals.perCollective)
    commJson[entry.getKey()] = llvm::json::Object{
        {"count", entry.getValue().first}, {"bytes", entry.getValue().second}};
  manifest["comm_per_collective"] = std::move(commJson);
  if (pp == 1 && opts.microBatches > 1)
    manifest["micro_batches"] = opts.microBatches;
  if (opts.maxSeq)
    manifest["generation"] = llvm::json::Object{
        {"max_seq", *opts.maxSeq},
        {"kv_cache_bytes_per_rank", totals.kvBytes},
        {"groups", opts.microBatches}};
  if (opts.prefillLen)
    (*manifest.getObject("generation"))["prefill_len"] = *opts.prefillLen;
  if (pp > 1)
    manifest["pipeline"] = llvm::json::Object{
        {"stages", pp},
        {"micro_batches", opts.microBatches},
        {"schedule", opts.ppVirtual > 1 ? "interleaved" : "gpipe"},
        {"virtual_stages", opts.ppVirtual},
        {"layers_per_stage", llvm::json::Array(layersPerStage)},
        {"send_bytes_per_forward", totals.sendBytes},
        {"analytic_bubble", double(pp - 1) / double(opts.ppVirtual * opts.microBatches + pp - 1)}};
  std::error_code ec;
  llvm::raw_fd_ostream os(path("manifest.json"), ec);
  if (ec)
    return fail("cannot write the manifest: " + ec.message());
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(manifest))) << "\n";
  progress(llvm::formatv("{0} rank program(s) for {1} rank(s){4}, weights {2} B in all, "
                         "{3} B sent per tensor-parallel rank in collectives per forward",
                         pp, world, totals.weightBytes, totals.commBytes,
                         dp > 1 ? llvm::formatv(" ({0} replicas of {1})", dp, replicaRanks)
                                      .str()
                                : std::string())
               .str());
  // Apart from the manifest, which stays the same for the same inputs.
  int64_t peakRss = parc::driver::peakRssBytes();
  progress(parc::driver::describe(stats, peakRss));
  return parc::driver::writeCompileStats(path("compile-stats.json"), stats,
                                         peakRss);
}

LogicalResult Compilation::buildPrograms() {
  stats.buildJobs = std::min<int64_t>(jobs, builds.size());
  progress(llvm::formatv("building {0} rank program(s) ({1}), {2} at a time",
                         builds.size(), opts.target, stats.buildJobs)
               .str());
  TimingScope buildTiming = timing.nest("build rank programs");
  auto start = std::chrono::steady_clock::now();
  SmallVector<parc::BuildFailure> failures =
      parc::buildExecutables(builds, opts.target, stats.buildJobs);
  stats.buildSeconds = std::chrono::duration<double>(
                           std::chrono::steady_clock::now() - start)
                           .count();
  for (const parc::BuildFailure &f : failures)
    (void)fail("building the rank program " + f.name + " failed:\n" + f.log);
  return success(failures.empty());
}

LogicalResult Compilation::replicate(llvm::json::Object &mesh,
                                     llvm::json::Array &ranks,
                                     llvm::json::Array &inputs,
                                     llvm::json::Array &outputs) {
  const int64_t dp = opts.dp;
  // Replicas are the outermost axis: replica k holds the consecutive ranks
  // k*R .. k*R+R-1, R the ranks of one replica.
  llvm::json::Array axes{"dp"}, shape{dp};
  for (auto &a : *mesh.getArray("axes"))
    axes.push_back(a);
  for (auto &d : *mesh.getArray("shape"))
    shape.push_back(d);
  mesh = llvm::json::Object{{"axes", std::move(axes)}, {"shape", std::move(shape)}};
  const int64_t replicaRanks = ranks.size();
  llvm::json::Array all;
  for (int64_t k = 0; k < dp; ++k)
    for (const llvm::json::Value &r : ranks) {
      llvm::json::Object entry = *r.getAsObject();
      const int64_t inReplica = *entry.getInteger("rank");
      entry["rank"] = k * replicaRanks + inReplica;
      entry["replica"] = k;
      // Weights are not duplicated on disk: the file of the same rank in
      // replica 0, which the program reads as rank mod ranks_per_replica.
      entry["replica_rank"] = inReplica;
      all.push_back(std::move(entry));
    }
  ranks = std::move(all);
  // parc-run takes and returns the whole batch; each replica reads its
  // slice of dim 0.
  for (llvm::json::Array *tensors : {&inputs, &outputs})
    for (llvm::json::Value &t : *tensors) {
      llvm::json::Array *dims = t.getAsObject()->getArray("shape");
      if (!dims || dims->empty())
        return fail("--dp: a program input or output has no batch dim");
      (*dims)[0] = dp * *(*dims)[0].getAsInteger();
    }
  return success();
}

LogicalResult Compilation::checkStackedOutputs(func::FuncOp main) {
  const int64_t dp = opts.dp, microBatches = opts.microBatches;
  // Micro-batches are stacked on dim 0: an output that is not batched there
  // (a KV cache stacked key/value first) would come back wrong.
  auto shape = [](ArrayRef<int64_t> dims) {
    if (dims.empty())
      return std::string("a scalar");
    return llvm::join(llvm::map_range(dims, [](int64_t d) { return std::to_string(d); }),
                      "x");
  };
  for (auto [i, type] : llvm::enumerate(main.getResultTypes())) {
    ArrayRef<int64_t> stacked = cast<RankedTensorType>(type).getShape();
    if (i >= wholeResults.size())
      continue;
    // With --dp the program computes one replica's share: 1/dp of dim 0.
    SmallVector<int64_t> share(wholeResults[i]);
    bool splits = dp == 1 || (!share.empty() && share[0] % dp == 0);
    if (!share.empty())
      share[0] /= dp;
    if (splits && stacked == ArrayRef<int64_t>(share))
      continue;
    auto name = main.getResultAttrOfType<StringAttr>(i, "onnx.name");
    if (microBatches == 1)
      return fail(llvm::formatv("{0}: --dp {1}: output '{2}' is {3} for the "
                                "whole batch but {4} for one replica: data "
                                "parallelism needs the batch on dim 0 of every "
                                "input and output",
                                modelPath, dp, name ? name.str() : "?",
                                shape(wholeResults[i]), shape(stacked))
                      .str());
    return fail(llvm::formatv("{0}: --micro-batches {1}: output '{2}' is {3} for "
                              "the whole batch{5} but {4} stacked from "
                              "micro-batches: micro-batching needs the batch on "
                              "dim 0 of every input and output, or on the "
                              "dim its shape names as the batch",
                              modelPath, microBatches, name ? name.str() : "?",
                              shape(wholeResults[i]), shape(stacked),
                              dp > 1 ? llvm::formatv(" ({0} per --dp replica)",
                                                     shape(share))
                                           .str()
                                     : std::string())
                    .str());
  }
  return success();
}

LogicalResult Compilation::writeStageWeights(ModuleOp program, StringRef name,
                                             int64_t stage,
                                             int64_t rankWeightBytes) {
  progress("writing weights of " + name);
  // Rank = stage·width + index in the stage (mesh ["pp", "tp"|"ep"]).
  const int64_t width = opts.ranksPerStage(), tp = opts.tp;
  const bool expertMesh = opts.expertMesh();
  parc::driver::WeightWriteMeter meter(stats, name, width * rankWeightBytes,
                                       /*show=*/!quiet);
  auto weightsFile = [&](int64_t rank) {
    return "weights/rank" + std::to_string(rank) + ".safetensors";
  };
  SmallVector<parc::ShardRequest> requests;
  for (int64_t t = 0; t < width; ++t) {
    int64_t rank = stage * width + t;
    requests.push_back(parc::ShardRequest{
        path(weightsFile(rank)),
        [stage, t, tp, expertMesh](StringRef axis) -> int64_t {
          if (axis == "pp")
            return stage;
          if (expertMesh) // ["ep", "tp"]: ep major
            return axis == "ep" ? t / tp : t % tp;
          return t;
        },
        parc::ShardIdentity{rank, name.str()}});
  }
  auto shards = parc::writeWeights(
      program, llvm::sys::path::parent_path(modelPath), requests,
      [&](int64_t bytes) { meter.advance(bytes); });
  if (failed(shards))
    return failure();
  for (auto [t, shard] : llvm::enumerate(*shards)) {
    int64_t rank = stage * width + t;
    totals.weightBytes += shard.bytes;
    totals.ranks.push_back(llvm::json::Object{{"rank", rank},
                                              {"program", name.str()},
                                              {"weights", weightsFile(rank)},
                                              {"weights_checksum", shard.checksum},
                                              {"weight_bytes", rankWeightBytes},
                                              {"weight_file_bytes", shard.bytes}});
    if (stage < (int64_t)predictedStageBytes.size())
      totals.ranks.back().getAsObject()->try_emplace("predicted_weight_bytes",
                                                     predictedStageBytes[stage]);
  }
  meter.finish();
  return success();
}

void Compilation::countCommBytes(func::FuncOp program, ProgramInfo &info) const {
  // Bytes each rank sends in one forward pass: to other stages, and in
  // collectives under ring algorithms, S the whole tensor's bytes and n the
  // group: all-reduce 2(n-1)/n·S, all-gather and reduce-scatter (n-1)/n·S
  // each, so sequence parallelism's all-gather + reduce-scatter pair costs
  // what the all-reduce does; an all-to-all sends (n-1)/n of its input.
  // Blocking (rt.kernel) or started (rt.start) alike; the first operand is
  // this rank's input.
  const int64_t n = opts.ranksPerStage();
  program.walk([&](Operation *op) {
    auto callee = op->getAttrOfType<StringAttr>("callee");
    if (!isa<parc::rt::KernelOp, parc::rt::StartOp>(op) || !callee)
      return;
    auto t = cast<MemRefType>(op->getOperand(0).getType());
    int64_t in = t.getNumElements() * t.getElementTypeBitWidth() / 8;
    int64_t sent;
    if (callee == "send") {
      info.sendBytes += in;
      return;
    }
    // On the ["ep", "tp"] mesh of --ep with --etp a group is one axis.
    int64_t g = n;
    if (auto axes = op->getAttrOfType<ArrayAttr>("mesh_axes");
        opts.expertMesh() && axes && axes.size() == 1)
      g = cast<StringAttr>(axes[0]).getValue() == "ep" ? opts.ep : opts.tp;
    if (callee == "all_reduce")
      sent = 2 * (g - 1) * in / g;
    else if (callee == "all_gather")
      // To a root, a rank sends its block once (the root sends none).
      sent = op->hasAttr("root") ? in : (g - 1) * in;
    else if (callee == "reduce_scatter" || callee == "all_to_all")
      sent = (g - 1) * in / g; // every block but its own
    else
      return;
    info.commBytes += sent;
    auto &entry = info.perCollective[callee.getValue()];
    entry.first += 1;
    entry.second += sent;
  });
}

FailureOr<Compilation::ProgramInfo>
Compilation::emitProgram(ModuleOp module, int64_t stage) {
  const std::string name = parc::stageProgramName(opts, stage);
  programName = name;
  stageKvBytes = 0;
  if (failed(runPipeline(module, "pipeline " + name,
                         [&](OpPassManager &pm, parc::PipelineStages &stages) {
                           parc::buildParcStagePipeline(pm, opts, stage, &stages);
                         })))
    return failure();
  std::optional<parc::driver::PrefillMerge> prefill;
  if (prefillModule) {
    FailureOr<parc::driver::PrefillMerge> merged = lowerPrefill(module, stage);
    if (failed(merged))
      return failure();
    prefill = *merged;
  }

  ProgramInfo info;
  auto program = module.lookupSymbol<func::FuncOp>("main");
  program.walk([&](parc::rt::InputOp op) {
    info.inputs.push_back(tensorJson(op.getName(), op.getType()));
  });
  program.walk([&](parc::rt::OutputOp op) {
    // The output's file, decided here once: parc-run passes it to the
    // program, and readers take it from the manifest.
    llvm::json::Object t = tensorJson(op.getName(), op.getBuffer().getType());
    t["file"] = parc::rt::outputFileName(op.getName().str());
    info.outputs.push_back(std::move(t));
  });
  int64_t arena = 0, unplanned = 0;
  if (auto a = program->getAttrOfType<IntegerAttr>("rt.arena_size"))
    arena = a.getInt();
  if (auto u = program->getAttrOfType<IntegerAttr>("rt.unplanned_size"))
    unplanned = u.getInt();
  // Weight bytes each rank of this program holds (its parts of sharded
  // weights included).
  int64_t rankWeightBytes = 0;
  program.walk([&](parc::rt::WeightOp w) {
    auto t = cast<MemRefType>(w.getType());
    rankWeightBytes += t.getNumElements() * t.getElementTypeBitWidth() / 8;
  });
  // The prefill's weights are the decode program's, but for its own.
  if (prefill)
    rankWeightBytes += prefill->ownWeightBytes;
  if (failed(writeStageWeights(module, name, stage, rankWeightBytes)))
    return failure();
  countCommBytes(program, info);
  info.moeLayers = parc::describeMoeLayers(program);

  module->setAttr("rt.program", StringAttr::get(&ctx, name));
  const std::string emitcStage = name == "main" ? "emitc" : "emitc-" + name;
  if (failed(runPipeline(module, emitcStage,
                         [&](OpPassManager &pm, parc::PipelineStages &stages) {
                           parc::buildRTToEmitCPipeline(pm);
                           stages.push_back({emitcStage, &*pm.begin(),
                                             &*std::prev(pm.end())});
                         })))
    return failure();
  std::string source = "src/" + name + ".cpp";
  std::string binary = "bin/" + name;
  if (failed(parc::writeCpp(module, path(source))))
    return failure();
  // Built with the other programs, in parallel (buildPrograms).
  builds.push_back(parc::BuildJob{binary, path(source), path(binary)});
  info.json = llvm::json::Object{{"name", name},
                                 {"binary", binary},
                                 {"source", source},
                                 {"arena_bytes", arena},
                                 {"unplanned_bytes", unplanned},
                                 {"collective_bytes_per_forward", info.commBytes},
                                 {"send_bytes_per_forward", info.sendBytes}};
  if (prefill)
    info.json["prefill"] = prefillJson(*prefill, *opts.prefillLen, arena);
  return info;
}

/// The checks that need no model: before any work starts. The pipeline's
/// own options are checked whole by CompileOptions::validate.
FailureOr<parc::CompileOptions> checkFlags() {
  std::optional<StringRef> canonical = parc::cli::canonicalDType(dtype);
  if (target == "cpu" || target == "cuda") {
    if (!canonical)
      return fail("--dtype must be " + parc::cli::dtypeSpellings() + ", not '" +
                  dtype + "'");
    dtype = canonical->str();
  }
  using parc::cli::intRange;
  if (auto err = parc::cli::checkRanges(
          {intRange("max-constant-bytes", maxConstantBytes, 0, INT64_MAX),
           intRange("devices", autoDevices, 0, parc::CompileOptions::kMaxRanks),
           intRange("jobs", jobs, 1, 1024)}))
    return fail(llvm::toString(std::move(err)));
  parc::CompileOptions options = optionsFromFlags();
  if (llvm::Error err = options.validate(flagSpelling))
    return fail(llvm::toString(std::move(err)));
  if (autoPlan &&
      (tp.getNumOccurrences() || pp.getNumOccurrences() || ep.getNumOccurrences() ||
       microBatches.getNumOccurrences() || ppVirtual.getNumOccurrences() ||
       ppLayout.getNumOccurrences() || dp.getNumOccurrences() ||
       sp.getNumOccurrences() || etp.getNumOccurrences() || autoDevices < 1))
    return fail("--auto needs --devices N, and replaces --tp, --sp, --pp, "
                "--pp-layout, --pp-virtual, --micro-batches, --ep, --etp and --dp");
  // The cluster dist-overlap and the planner price with, found once.
  llvm::Expected<std::string> cluster = parc::plan::findCluster(
      autoCluster.empty() ? "cpu" : autoCluster.getValue(),
      {parc::plan::presetDir()});
  if (!cluster)
    return fail("--cluster: " + llvm::toString(cluster.takeError()));
  options.cluster = *cluster;
  return options;
}

int compile() {
  FailureOr<parc::CompileOptions> options = checkFlags();
  if (failed(options))
    return 1;
  DialectRegistry registry;
  registry.insert<parc::nn::NNDialect, parc::rt::RTDialect, arith::ArithDialect,
                  func::FuncDialect, memref::MemRefDialect, emitc::EmitCDialect>();
  parc::nn::registerShardingRuleModels(registry);
  MLIRContext ctx(registry);
  ctx.loadAllAvailableDialects();
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &ctx);

  std::string error;
  if (!dumpIR.empty() && failed(parc::driver::clearStageDumps(dumpIR, error)))
    return (void)fail("--dump-ir: " + error), 1;
  // --explain-json runs --explain's analysis; its text only with --explain.
  std::optional<parc::driver::ExplainLog> explainLog;
  if (!explainJson.empty()) {
    StringRef parent = llvm::sys::path::parent_path(explainJson);
    if (std::error_code ec = parent.empty()
                                 ? std::error_code()
                                 : llvm::sys::fs::create_directories(parent))
      return (void)fail("--explain-json: cannot create '" + parent +
                        "': " + ec.message()),
             1;
    explainLog.emplace(ctx, /*print=*/explain.getValue());
  }
  // Last: the passes' messages reach the others in the words of the flags.
  parc::driver::FlagWording flagWording(ctx);
  FailureOr<parc::driver::OutputDir> out =
      parc::driver::OutputDir::prepare(outputDir, modelPath);
  if (failed(out))
    return 1;
  DefaultTimingManager timingManager;
  applyDefaultTimingManagerCLOptions(timingManager);
  TimingScope timing = timingManager.getRootScope();
  bool ok = succeeded(Compilation(ctx, out->staging(), timing,
                                  explainLog ? &*explainLog : nullptr,
                                  std::move(*options))
                          .run());
  // Written even after a failure (it may say why); the output only after it.
  if (explainLog && failed(explainLog->write(explainJson, modelPath, error))) {
    (void)fail("--explain-json: " + error);
    ok = false;
  }
  if (!ok || failed(out->publish())) {
    out->discard();
    return 1;
  }
  progress("wrote " + outputDir);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  parc::driver::registerIRDebugOptions(compileCmd);
  parc::cli::parseCommandLine(
      argc, argv, "parc: compiler for partitioned neural networks\n",
      {&ioCategory, &parallelCategory, &plannerCategory, &reportCategory,
       &parc::driver::irDebugCategory(), &parc::driver::planCategory,
       &parc::driver::calibrateCategory});
  if (compileCmd) {
    parc::driver::elideWeightsByDefault(compileCmd);
    return compile();
  }
  if (parc::driver::planSelected())
    return parc::driver::plan();
  if (parc::driver::calibrateSelected())
    return parc::driver::calibrate(argv[0]);
  cl::PrintHelpMessage(/*Hidden=*/false, /*Categorized=*/true);
  return 1;
}
