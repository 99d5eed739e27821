//===- plan.cpp - `parc plan` and `parc compile --auto` -------------------===//
//
// `parc plan model.onnx --devices N --cluster h100x8`: import (weights may
// be absent), fuse, profile, price every parallel configuration and print
// the ranked table, the chosen plan and why; `--json` for scripts, `--svg`
// for the predicted per-rank timeline.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "nn/NNOps.h"
#include "parc/Import/Onnx/OnnxImporter.h"
#include "parc/Pipelines/Pipelines.h"
#include "parc/Plan/Planner.h"
#include "parc/Support/CommandLine.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/WithColor.h"

#include <chrono>

using namespace mlir;
namespace cl = llvm::cl;
namespace plan = parc::plan;

llvm::cl::OptionCategory parc::driver::planCategory("Plan options");

namespace {

cl::SubCommand planCmd("plan", "Rank the parallel configurations of a model on a cluster");

cl::opt<std::string> modelPath(cl::Positional, cl::desc("<model.onnx>"),
                               cl::Required, cl::sub(planCmd),
                               cl::cat(parc::driver::planCategory));
cl::opt<int64_t> maxConstantBytes("max-constant-bytes",
                                  cl::desc(parc::kMaxConstantBytesHelp),
                                  cl::init(parc::kDefaultMaxConstantBytes),
                                  cl::value_desc("bytes"), cl::sub(planCmd),
                                  cl::cat(parc::driver::planCategory));
cl::opt<int64_t> devices("devices", cl::desc("Devices to plan for"),
                         cl::Required, cl::sub(planCmd),
                         cl::cat(parc::driver::planCategory));
cl::opt<std::string>
    clusterName("cluster",
                cl::desc("Cluster preset (h100x8, h200x8, a100x8, "
                         "h100-pcie-x8, cpu) or a cluster JSON file"),
                cl::Required, cl::sub(planCmd),
                cl::cat(parc::driver::planCategory));
cl::opt<int64_t> batch("batch",
                       cl::desc("Batch: binds input dims named 'batch' or "
                                "'batch_size'"),
                       cl::init(1), cl::sub(planCmd),
                       cl::cat(parc::driver::planCategory));
cl::opt<int64_t> seq("seq",
                     cl::desc("Sequence length: binds input dims named 'seq', "
                              "'sequence', 'seq_len', 'seqlen' or "
                              "'sequence_length'; at most the model's "
                              "positions)"),
                     cl::init(2048), cl::sub(planCmd),
                     cl::cat(parc::driver::planCategory));
cl::opt<int64_t> context("context",
                         cl::desc("Tokens the KV cache holds (0: --seq); with "
                                  "--seq 1, a decode-step plan: attention "
                                  "priced over the cache, ranked by per-token "
                                  "latency"),
                         cl::init(0), cl::sub(planCmd),
                         cl::cat(parc::driver::planCategory));
cl::list<std::string> inputShapes(
    "input-shape",
    cl::desc("Bind a graph input's dims: NAME=D0xD1x... (repeatable, each "
             "NAME once)"),
    cl::value_desc("name=shape"), cl::sub(planCmd),
    cl::cat(parc::driver::planCategory));
cl::opt<std::string> dtype("dtype",
                           cl::desc("Compute dtype priced, and given to the "
                                    "printed compile command: bf16, f16 or f32 "
                                    "(also bfloat16, float16, fp16, float32)"),
                           cl::init("bf16"), cl::sub(planCmd),
                           cl::cat(parc::driver::planCategory));
cl::opt<std::string>
    objective("objective",
              cl::desc("latency (time per forward) or throughput "
                       "(tokens per second in steady state)"),
              cl::init("latency"), cl::sub(planCmd),
              cl::cat(parc::driver::planCategory));
cl::opt<int64_t> maxMicroBatches(
    "max-micro-batches", cl::desc("Largest micro-batch count to consider"),
    cl::init(64), cl::sub(planCmd), cl::cat(parc::driver::planCategory));
cl::opt<int64_t> overlapChunks(
    "overlap-chunks",
    cl::desc("Pieces each row-parallel product and its all-reduce are cut into "
             "to overlap, as parc compile's dist-overlap does (0: the cheapest "
             "cut, as dist-overlap chooses by default; 1: no overlap, as with "
             "--no-overlap)"),
    cl::init(0), cl::sub(planCmd), cl::cat(parc::driver::planCategory));
cl::opt<bool>
    json("json", cl::desc("Print the ranked table and the chosen plan as JSON"),
         cl::sub(planCmd), cl::cat(parc::driver::planCategory));
cl::opt<std::string> svg("svg",
                         cl::desc("Write the chosen plan's predicted per-rank "
                                  "timeline as SVG"),
                         cl::value_desc("file"), cl::sub(planCmd),
                         cl::cat(parc::driver::planCategory));
cl::opt<int64_t> top("top", cl::desc("Rows of the table to print (0: all)"),
                     cl::init(20), cl::sub(planCmd),
                     cl::cat(parc::driver::planCategory));

int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "parc") << message << "\n";
  return 1;
}

std::string gib(double b) { return llvm::formatv("{0:f1}", b / (1 << 30)).str(); }

/// Bytes in the largest binary unit that keeps them at 1 or more.
std::string size(int64_t bytes) {
  const char *units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double b = (double)bytes;
  int u = 0;
  for (; b >= 1024 && u < 4; ++u)
    b /= 1024;
  return u ? llvm::formatv("{0:f1} {1}", b, units[u]).str()
           : llvm::formatv("{0} B", bytes).str();
}

/// The weight bytes of the fullest rank: its stage's shard.
int64_t maxStageBytes(const plan::Estimate &e) {
  return e.stageWeightBytes.empty() ? 0 : *llvm::max_element(e.stageWeightBytes);
}

/// The ranked plans; a decode plan's forward is one token per sequence, and
/// "KV MiB" is the cache's part of the memory column.
void printTable(llvm::raw_ostream &os, const plan::PlanResult &r, int64_t rows,
                bool decode) {
  os << llvm::formatv("{0,-4} {1,-34} {2,12} {3,12} {4,9} {5,12} {6,9} {7,10} {8,12}  {9}\n",
                      "#", "configuration", decode ? "ms/token" : "ms/forward",
                      "tokens/s", "mem GiB", "weights/rank", "KV MiB", "comm MiB",
                      "layout", "");
  int64_t shown = 0;
  for (auto [i, e] : llvm::enumerate(r.ranked)) {
    if (rows && shown++ >= rows) {
      os << "  ... " << r.ranked.size() - (size_t)rows << " more (--top 0 shows all)\n";
      break;
    }
    os << llvm::formatv("{0,-4} {1,-34} {2,12:f3} {3,12:f0} {4,9} {5,12} {6,9:f1} "
                        "{7,10:f1} {8,12}  {9}\n",
                        i + 1, e.config.str(), e.time * 1e3, e.tokensPerSecond,
                        gib(e.memoryBytes), size(maxStageBytes(e)), e.kvBytes / (1 << 20),
                        e.commBytes / (1 << 20), e.config.layout(),
                        !e.fits ? "does not fit" : (r.chosen && *r.chosen == i) ? "<- chosen"
                                                                               : "");
  }
}

/// Writes `text` to `path` through a temporary file and a rename.
bool writeAtomic(llvm::StringRef path, llvm::StringRef text) {
  std::string tmp = (path + ".tmp").str();
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(tmp, ec);
    if (ec) {
      fail("cannot write '" + tmp + "': " + ec.message());
      return false;
    }
    os << text;
  }
  if (std::error_code ec = llvm::sys::fs::rename(tmp, path)) {
    llvm::sys::fs::remove(tmp);
    fail("cannot write '" + path + "': " + ec.message());
    return false;
  }
  return true;
}

} // namespace

bool parc::driver::prepareOutputFile(llvm::StringRef path, llvm::StringRef flag) {
  if (llvm::sys::fs::is_directory(path)) {
    fail(flag + " '" + path + "' is a folder; give a file path");
    return false;
  }
  llvm::StringRef parent = llvm::sys::path::parent_path(path);
  if (parent.empty())
    return true;
  std::error_code ec = llvm::sys::fs::create_directories(parent);
  // An existing file in the way counts as existing for create_directories.
  if (!ec && !llvm::sys::fs::is_directory(parent))
    ec = std::make_error_code(std::errc::not_a_directory);
  if (ec) {
    fail("cannot create the folder '" + parent + "' for " + flag + " '" + path +
         "': " + ec.message());
    return false;
  }
  return true;
}

namespace {

/// Imports and fuses `path` in `ctx`; diagnostics go to stderr.
OwningOpRef<ModuleOp> importAndFuse(MLIRContext &ctx, llvm::StringRef path,
                                    const parc::OnnxImportOptions &options) {
  OwningOpRef<ModuleOp> module = parc::importOnnxFile(path, &ctx, options);
  if (!module)
    return nullptr;
  PassManager pm(&ctx);
  parc::buildNNOptimizePipeline(pm);
  if (failed(pm.run(*module)))
    return nullptr;
  return module;
}

constexpr const char *kSeqDims[] = {"seq", "sequence", "seq_len", "seqlen",
                                    "sequence_length"};

/// Whether the model's attention is causal, read at two tokens: a one-token
/// step's 1x1 causal mask folds away, so a --seq 1 profile cannot tell.
FailureOr<bool> causalAtTwoTokens(MLIRContext &ctx, llvm::StringRef path,
                                  parc::OnnxImportOptions options) {
  for (const char *name : kSeqDims)
    options.dimParams[name] = 2;
  OwningOpRef<ModuleOp> module = importAndFuse(ctx, path, options);
  if (!module)
    return failure();
  FailureOr<plan::ModelProfile> profile = plan::profileModel(*module);
  if (failed(profile))
    return failure();
  return profile->decoder;
}

} // namespace

bool parc::driver::planSelected() { return static_cast<bool>(planCmd); }

int parc::driver::plan() {
  using Clock = std::chrono::steady_clock;
  if (objective != "latency" && objective != "throughput")
    return fail("--objective must be latency or throughput, not '" + objective + "'");
  std::optional<llvm::StringRef> canonical = parc::cli::canonicalDType(dtype);
  if (!canonical)
    return fail("--dtype must be " + parc::cli::dtypeSpellings() + ", not '" +
                dtype + "'");
  dtype = canonical->str();
  if (top < 0)
    return fail("--top must be 0 (all rows) or more");
  if (batch < 1 || seq < 1 || devices < 1 || context < 0 || overlapChunks < 0 ||
      maxMicroBatches < 1)
    return fail("--batch, --seq, --devices and --max-micro-batches must be at "
                "least 1, --overlap-chunks at least 0");
  auto cluster = plan::loadCluster(clusterName, {plan::presetDir()});
  if (!cluster)
    return fail(llvm::toString(cluster.takeError()));
  if (!svg.empty() && !parc::driver::prepareOutputFile(svg, "--svg"))
    return 1;

  DialectRegistry registry;
  registry.insert<parc::nn::NNDialect, arith::ArithDialect, func::FuncDialect>();
  MLIRContext ctx(registry);
  llvm::SourceMgr sourceMgr;
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &ctx);
  parc::OnnxImportOptions options;
  if (auto err = parc::parseInputShapes(inputShapes, options))
    return fail(llvm::toString(std::move(err)));
  if (maxConstantBytes < 0)
    return fail("--max-constant-bytes must be 0 or more");
  options.maxConstantBytes = maxConstantBytes;
  // The names exporters give these dims (torch.onnx dynamic_axes, HF).
  for (const char *name : {"batch", "batch_size"})
    options.dimParams[name] = batch;
  for (const char *name : kSeqDims)
    options.dimParams[name] = seq;
  auto t0 = Clock::now();
  OwningOpRef<ModuleOp> module = importAndFuse(ctx, modelPath, options);
  if (!module)
    return 1;
  auto t1 = Clock::now();
  FailureOr<plan::ModelProfile> profile = plan::profileModel(*module);
  if (failed(profile))
    return 1;
  if (seq == 1 && context > 0 && !profile->decoder) {
    FailureOr<bool> causal = causalAtTwoTokens(ctx, modelPath, options);
    if (failed(causal))
      return 1;
    if (!*causal)
      return fail("--seq 1 --context " + llvm::Twine(context.getValue()) +
                  " plans a decode step, but '" + modelPath +
                  "' has no causal attention (an encoder keeps no KV cache): "
                  "drop --context");
    profile->decoder = true;
  }
  plan::PlanOptions planOptions;
  planOptions.dtype = dtype;
  planOptions.model = modelPath;
  planOptions.cluster = clusterName;
  planOptions.devices = devices;
  planOptions.throughput = objective == "throughput";
  planOptions.context = context;
  planOptions.maxMicroBatches = maxMicroBatches;
  planOptions.overlapChunks = overlapChunks;
  auto result = plan::planParallelism(*profile, *cluster, planOptions);
  if (!result)
    return fail(llvm::toString(result.takeError()));
  auto t2 = Clock::now();
  double importS = std::chrono::duration<double>(t1 - t0).count();
  double planS = std::chrono::duration<double>(t2 - t1).count();

  if (json) {
    llvm::json::Value v = plan::planToJSON(*result, *profile, *cluster, planOptions);
    v.getAsObject()->try_emplace("model_path", modelPath);
    v.getAsObject()->try_emplace("import_seconds", importS);
    v.getAsObject()->try_emplace("planning_seconds", planS);
    llvm::outs() << llvm::formatv("{0:2}", v) << "\n";
  } else {
    auto &os = llvm::outs();
    size_t units = profile->units.size();
    os << llvm::formatv("{0}: {1} blocks ({2} distinct units costed), {3:f2}B "
                        "parameters, batch {4}, seq {5}, {6}{7}\n",
                        modelPath, profile->blocks, units, profile->parameters / 1e9,
                        profile->batch, profile->seq,
                        profile->decoder ? "decoder (KV cache counted)" : "encoder",
                        profile->experts ? llvm::formatv(", MoE {0} experts top-{1}",
                                                         profile->experts, profile->topK)
                                               .str()
                                         : "");
    os << llvm::formatv("cluster {0}: {1} devices of {2} GiB per node, {3}\n",
                        cluster->name, cluster->devicesPerNode,
                        gib(cluster->memoryBytes), cluster->device);
    const bool decode = plan::isDecodePlan(*profile, planOptions);
    if (decode)
      os << llvm::formatv("decode step: one token per sequence over a KV cache of "
                          "{0} tokens, ranked by per-token latency\n",
                          planOptions.context);
    printTable(os, *result, top, decode);
    if (!result->skipped.empty())
      os << result->skipped.size() << " split(s) skipped: " << result->skipped.front()
         << (result->skipped.size() > 1 ? "; ..." : "") << "\n";
    os << result->explanation;
    os << llvm::formatv("planned {0} configurations in {1:f3} s (import and fusion "
                        "{2:f3} s)\n",
                        result->considered, planS, importS);
  }
  if (!svg.empty() && result->chosen) {
    std::string text;
    llvm::raw_string_ostream os(text);
    plan::writeTimelineSVG(os, result->ranked[*result->chosen], *profile, *cluster);
    if (!writeAtomic(svg, text))
      return 1;
  }
  if (!result->chosen)
    return fail("no configuration of " + llvm::Twine(devices) +
                " device(s) fits: " + result->explanation);
  return 0;
}

FailureOr<plan::Config> parc::driver::autoPlan(ModuleOp module, int64_t devices,
                                                const std::string &clusterName,
                                                const std::string &dtype, bool quiet,
                                                std::vector<int64_t> *stageWeightBytes) {
  auto cluster = plan::loadCluster(clusterName, {plan::presetDir()});
  if (!cluster)
    return fail(llvm::toString(cluster.takeError())), failure();
  FailureOr<plan::ModelProfile> profile = plan::profileModel(module);
  if (failed(profile))
    return failure();
  plan::PlanOptions options;
  options.dtype = dtype;
  // compile runs one SPMD program over all its ranks: try each device
  // count that divides N, leaving the rest idle. The planner ranks only
  // plans compile builds.
  std::optional<plan::Estimate> best;
  int64_t used = 0;
  std::string why;
  for (int64_t d = 1; d <= devices; ++d) {
    if (devices % d)
      continue;
    options.devices = d;
    auto result = plan::planParallelism(*profile, *cluster, options);
    if (!result)
      return fail(llvm::toString(result.takeError())), failure();
    why = result->explanation;
    if (result->chosen && (!best || result->ranked[*result->chosen].time < best->time)) {
      best = result->ranked[*result->chosen];
      used = d;
    }
  }
  if (!best)
    return fail(llvm::formatv("--auto: no plan that compile builds fits {0} "
                              "device(s) of cluster '{1}': {2}",
                              devices, cluster->name, llvm::StringRef(why).rtrim())
                    .str()),
           failure();
  if (!quiet)
    llvm::errs() << llvm::formatv(
        "parc: --auto chose {0} ({1:f3} ms predicted per forward on {2}){3}\n",
        best->config.str(), best->time * 1e3, cluster->name,
        used < devices ? llvm::formatv(" on {0} of the {1} devices: no plan on "
                                       "more of them is faster",
                                       used, devices)
                             .str()
                       : std::string());
  if (stageWeightBytes)
    *stageWeightBytes = best->stageWeightBytes;
  return best->config;
}
