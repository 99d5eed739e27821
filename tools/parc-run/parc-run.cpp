//===- parc-run.cpp - run a compiled model under mpirun or srun -----------===//
//
// A thin launcher: reads out/manifest.json, checks the inputs and options
// against it, and starts one process per rank under mpirun (one app
// context per run of ranks with the same program; --hostfile for several
// nodes) or srun (the same map as a --multi-prog task file), passing each
// the weights directory, the inputs and the run options by absolute path,
// so that every node resolves them alike. The launcher tears every rank
// down when one fails, the runtime turns a hung collective into an error,
// and a signal to parc-run goes to the launcher's process group, so a run
// ends either way and with parc-run.
//
//===----------------------------------------------------------------------===//

#include "Inputs.h"
#include "Launch.h"
#include "parc/Support/CommandLine.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/Threading.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/xxhash.h"

#include <cmath>
#include <csignal>
#include <cstdio>

namespace cl = llvm::cl;
using llvm::StringRef;

namespace {

// Groups of `parc-run --help`, printed in the order of their names.
cl::OptionCategory ioCategory("Input and output options");
cl::OptionCategory launchCategory("Launch options");
cl::OptionCategory benchCategory("Benchmark options");

cl::opt<std::string> outDir(cl::Positional, cl::desc("<compiled dir>"),
                            cl::Required, cl::cat(ioCategory));
cl::list<std::string>
    inputs("input",
           cl::desc("NAME=PATH (.npy, or ONNX TensorProto .pb; "
                    "each NAME once)"),
           cl::value_desc("name=path"), cl::cat(ioCategory));
cl::opt<std::string>
    outputDir("output-dir",
              cl::desc("Write each output here, as the file the manifest "
                       "records for it"),
              cl::value_desc("dir"), cl::cat(ioCategory));
cl::OptionCategory generateCategory("Generation options (a program compiled "
                                    "with parc compile --max-seq)");
cl::opt<std::string>
    prompt("prompt",
           cl::desc("Generate: i64 token ids [batch, prompt length] (.npy); "
                    "writes tokens.npy [batch, prompt + new] to --output-dir "
                    "(default: the current folder)"),
           cl::value_desc("ids.npy"), cl::cat(generateCategory));
cl::opt<std::string> promptLengths(
    "prompt-lengths",
    cl::desc("Generate: i64 [batch] prompt lengths (.npy): row b of --prompt "
             "is its first lengths[b] ids, the rest padding (default: every "
             "row the full width)"),
    cl::value_desc("lens.npy"), cl::cat(generateCategory));
cl::opt<unsigned> maxNewTokens("max-new-tokens",
                               cl::desc("Generate: tokens to add per sequence"),
                               cl::value_desc("N"), cl::init(0),
                               cl::cat(generateCategory));
cl::opt<bool> greedy("greedy",
                     cl::desc("Generate: pick the most likely token (the "
                              "default without --temperature or --top-k)"),
                     cl::cat(generateCategory));
cl::opt<double> temperature(
    "temperature",
    cl::desc("Generate: sample from softmax(logits / T) (0: greedy; 1 when "
             "only --top-k is given)"),
    cl::value_desc("T"), cl::init(0), cl::cat(generateCategory));
cl::opt<unsigned> topK("top-k",
                       cl::desc("Generate: sample among the K most likely "
                                "tokens only (0: all)"),
                       cl::value_desc("K"), cl::init(0),
                       cl::cat(generateCategory));
cl::opt<uint64_t> seed("seed",
                       cl::desc("Generate: the sampler's seed (default 0): "
                                "the same seed gives the same tokens"),
                       cl::value_desc("S"), cl::init(0),
                       cl::cat(generateCategory));
cl::opt<std::string>
    logits("logits",
           cl::desc("Generate: write every step's logits [steps, batch, "
                    "vocab] (f32 .npy; f16/bf16 logits widened) to this file"),
           cl::value_desc("logits.npy"), cl::cat(generateCategory));
cl::opt<int64_t> eos("eos",
                     cl::desc("Generate: a sequence stops at this token id"),
                     cl::value_desc("ID"), cl::init(-1),
                     cl::cat(generateCategory));
cl::opt<unsigned> repeat("repeat",
                         cl::desc("Run the forward N times and print latency"),
                         cl::init(1), cl::cat(benchCategory));
cl::opt<unsigned> warmup("warmup", cl::desc("Untimed runs before --repeat"),
                         cl::init(0), cl::cat(benchCategory));
cl::opt<unsigned> threads(
    "kernel-threads",
    cl::desc("Kernel threads per rank (default: OMP_NUM_THREADS if set, else "
             "this machine's cores divided by the ranks, at least 1; 1 with "
             "--hostfile or srun, whose nodes parc-run cannot see)"),
    cl::cat(launchCategory));
cl::opt<unsigned> timeout("timeout", cl::desc("Seconds a collective may wait"),
                          cl::init(300), cl::cat(launchCategory));
cl::opt<unsigned> livenessTimeout(
    "liveness-timeout",
    cl::desc("Seconds a rank on any node may send no heartbeat (stopped, "
             "hung) while others wait for it before the job ends, naming "
             "it (0: off)"),
    cl::init(30), cl::cat(launchCategory));
cl::opt<bool> verifyWeights("verify-weights",
                            cl::desc("Check every weight shard's data against "
                                     "its checksum before running"),
                            cl::cat(ioCategory));
cl::opt<std::string> mpirun("mpirun", cl::desc("mpirun to use"),
                            cl::init("mpirun"), cl::cat(launchCategory));
cl::opt<bool> dryRun("dry-run", cl::desc("Print the launch command and exit"),
                     cl::cat(launchCategory));
cl::opt<int> np("np",
                cl::desc("Ranks to start; must equal the compiled mesh's world "
                         "size (0: the manifest's)"),
                cl::init(0), cl::cat(launchCategory));
cl::opt<std::string>
    tracePath("trace",
              cl::desc("Write a Chrome trace-event timeline of the "
                       "timed runs (one row per rank) to this file"),
              cl::value_desc("trace.json"), cl::cat(benchCategory));
cl::opt<parc::run::Launcher> launcher(
    "launcher", cl::desc("How the ranks are started"),
    cl::values(clEnumValN(parc::run::Launcher::Mpirun, "mpirun",
                          "one mpirun app context per program (--hostfile for "
                          "several nodes)"),
               clEnumValN(parc::run::Launcher::Srun, "srun",
                          "srun --multi-prog, inside a Slurm allocation")),
    cl::init(parc::run::Launcher::Mpirun), cl::cat(launchCategory));
cl::opt<std::string>
    hostfile("hostfile",
             cl::desc("Hosts to start the ranks on (passed to mpirun)"),
             cl::value_desc("file"), cl::cat(launchCategory));
cl::opt<std::string> srun("srun", cl::desc("srun to use with --launcher srun"),
                          cl::init("srun"), cl::cat(launchCategory));
cl::opt<std::string>
    jsonPath("json",
             cl::desc("Write the run's figures (latency statistics, "
                      "tokens/s, per-rank communication) as JSON"),
             cl::value_desc("file"), cl::cat(benchCategory));

int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "parc-run") << message << "\n";
  return 1;
}

/// Merges the ranks' PATH.rank<R>.json timelines into PATH and removes them.
llvm::Error mergeTraces(StringRef path, size_t ranks) {
  llvm::json::Array events;
  for (size_t r = 0; r < ranks; ++r) {
    std::string part = (path + ".rank" + llvm::Twine(r) + ".json").str();
    auto text = llvm::MemoryBuffer::getFile(part);
    if (!text)
      return llvm::createStringError("rank " + std::to_string(r) +
                                     " wrote no trace '" + part + "'");
    auto parsed = llvm::json::parse((*text)->getBuffer());
    if (!parsed)
      return llvm::createStringError("'" + part + "' is not valid JSON: " +
                                     llvm::toString(parsed.takeError()));
    if (auto *obj = parsed->getAsObject())
      if (auto *list = obj->getArray("traceEvents"))
        for (auto &e : *list)
          events.push_back(std::move(e));
    llvm::sys::fs::remove(part);
  }
  std::string tmp = (path + ".tmp").str();
  std::error_code ec;
  {
    llvm::raw_fd_ostream os(tmp, ec);
    if (ec)
      return llvm::createStringError("cannot write '" + tmp + "': " + ec.message());
    os << llvm::json::Value(llvm::json::Object{{"displayTimeUnit", "ms"},
                                               {"traceEvents", std::move(events)}})
       << "\n";
  }
  if ((ec = llvm::sys::fs::rename(tmp, path)))
    return llvm::createStringError("cannot write '" + path + "': " + ec.message());
  return llvm::Error::success();
}

/// One line per MoE layer from the ranks' routing reports (written by the
/// rank programs next to the outputs): the load balance over experts and
/// ranks, the dropped pairs and each rank's all-to-all bytes. Data-parallel
/// replicas route their own tokens: their counts are summed (each
/// replica's first rank reports its replica's).
void summarizeMoeReports(llvm::StringRef dir, size_t ranks, size_t replicas) {
  std::vector<llvm::json::Value> reports;
  for (size_t r = 0; r < ranks; ++r) {
    llvm::SmallString<256> path(dir);
    llvm::sys::path::append(path, "moe_report.rank" + std::to_string(r) + ".json");
    auto buf = llvm::MemoryBuffer::getFile(path);
    if (!buf)
      return; // not an MoE model
    auto v = llvm::json::parse((*buf)->getBuffer());
    if (!v) {
      llvm::consumeError(v.takeError());
      return;
    }
    reports.push_back(std::move(*v));
  }
  if (reports.empty())
    return;
  auto layersOf = [](llvm::json::Value &v) {
    auto *o = v.getAsObject();
    return o ? o->getArray("layers") : nullptr;
  };
  auto *layers = layersOf(reports[0]);
  if (!layers)
    return;
  const size_t perReplica = ranks / std::max<size_t>(replicas, 1);
  // A count field of layer i summed over the replicas' first ranks.
  auto summed = [&](size_t i, StringRef field) {
    std::vector<int64_t> sum;
    for (size_t r = 0; r < reports.size(); r += perReplica)
      if (auto *ls = layersOf(reports[r]); ls && i < ls->size())
        if (auto *o = (*ls)[i].getAsObject())
          if (auto *a = o->getArray(field))
            for (size_t j = 0; j < a->size(); ++j) {
              sum.resize(std::max(sum.size(), j + 1));
              sum[j] += (*a)[j].getAsInteger().value_or(0);
            }
    std::string s;
    for (int64_t x : sum)
      s += (s.empty() ? "" : " ") + std::to_string(x);
    return "[" + s + "]";
  };
  for (size_t i = 0; i < layers->size(); ++i) {
    auto *l = (*layers)[i].getAsObject();
    if (!l)
      continue;
    int64_t dropped = 0;
    for (size_t r = 0; r < reports.size(); r += perReplica)
      if (auto *ls = layersOf(reports[r]); ls && i < ls->size())
        if (auto *o = (*ls)[i].getAsObject())
          dropped += o->getInteger("dropped").value_or(0);
    std::string bytes;
    for (auto &rep : reports)
      if (auto *ls = layersOf(rep); ls && i < ls->size())
        if (auto *o = (*ls)[i].getAsObject())
          bytes += (bytes.empty() ? "" : " ") +
                   std::to_string(o->getInteger("all_to_all_bytes").value_or(0));
    llvm::errs() << "parc-run: moe " << l->getString("layer").value_or("?")
                 << ": tokens per expert " << summed(i, "tokens_per_expert")
                 << ", per rank " << summed(i, "tokens_per_rank")
                 << (replicas > 1 ? " (summed over " +
                                        std::to_string(replicas) + " replicas)"
                                  : std::string())
                 << ", dropped " << dropped << ", all-to-all bytes per rank ["
                 << bytes << "]\n";
  }
}

using parc::run::Launcher;

llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(message);
}

std::string absolute(StringRef path) {
  llvm::SmallString<256> p(path);
  llvm::sys::fs::make_absolute(p);
  llvm::sys::path::remove_dots(p, /*remove_dot_dot=*/true);
  return p.str().str();
}

/// --kernel-threads, or its default: a rank's share of the cores where all
/// ranks run here, so that one rank is not left on one core of many.
unsigned kernelThreads(const parc::run::Manifest &m) {
  if (threads.getNumOccurrences())
    return threads;
  if (const char *env = std::getenv("OMP_NUM_THREADS")) {
    unsigned n = 0;
    if (!llvm::StringRef(env).getAsInteger(10, n) && n >= 1 && n <= 1024)
      return n;
  }
  if (!hostfile.empty() || launcher == Launcher::Srun || m.worldSize < 1)
    return 1;
  const unsigned cores = llvm::hardware_concurrency().compute_thread_count();
  return std::max<unsigned>(1, cores / unsigned(m.worldSize));
}

/// The numeric options and the launcher's, against what a run can do.
llvm::Error checkOptions(const parc::run::Manifest &m) {
  constexpr unsigned kMaxRuns = 1000000;
  if (repeat < 1 || repeat > kMaxRuns)
    return error("--repeat " + llvm::Twine(repeat.getValue()) +
                 " is out of range: give 1 to " + llvm::Twine(kMaxRuns) + " timed runs");
  if (warmup > kMaxRuns)
    return error("--warmup " + llvm::Twine(warmup.getValue()) +
                 " is out of range: give 0 to " + llvm::Twine(kMaxRuns) + " untimed runs");
  if (threads.getNumOccurrences() && (threads < 1 || threads > 1024))
    return error("--kernel-threads " + llvm::Twine(threads.getValue()) +
                 " is out of range: give 1 to 1024 threads per rank");
  if (timeout < 1)
    return error("--timeout 0 is out of range: give the seconds a collective may "
                 "wait, at least 1");
  // The mesh needs exactly its world size: refuse a different --np here
  // rather than let the launcher start ranks that wait for peers.
  if (np.getNumOccurrences() && np != m.worldSize)
    return error("--np " + llvm::Twine(np.getValue()) +
                 " does not match the compiled mesh: '" + outDir + "' needs " +
                 llvm::Twine(m.worldSize) + " ranks" +
                 (m.mesh.empty() ? "" : " (mesh " + m.mesh + ")"));
  if ((int64_t)m.rankBinaries.size() != m.worldSize)
    return error("'" + m.path + "' maps " + llvm::Twine(m.rankBinaries.size()) +
                 " ranks to programs for a world of " + llvm::Twine(m.worldSize));
  if (!promptLengths.empty() && prompt.empty())
    return error("--prompt-lengths gives the lengths of --prompt's rows: add "
                 "--prompt ids.npy");
  if (!hostfile.empty() && launcher == Launcher::Srun)
    return error("--hostfile is for --launcher mpirun: under srun, the Slurm "
                 "allocation places the ranks");
  if (!hostfile.empty() && !llvm::sys::fs::is_regular_file(hostfile))
    return error("hostfile '" + hostfile + "' does not exist");
  return llvm::Error::success();
}

/// The launcher to run: found on PATH, or (for --dry-run) named as given.
llvm::Expected<std::string> launcherProgram() {
  const std::string &name = launcher == Launcher::Srun ? srun : mpirun;
  auto found = llvm::sys::findProgramByName(name);
  if (found && llvm::sys::fs::can_execute(*found))
    return absolute(*found);
  if (dryRun)
    return name;
  if (launcher == Launcher::Srun)
    return error("cannot find '" + name +
                 "' (run inside a Slurm allocation, or use --launcher mpirun)");
  return error("cannot find '" + name + "' (install openmpi-bin)");
}

/// Each rank's program with its arguments, and the environment of all.
llvm::Expected<parc::run::LaunchPlan> planLaunch(const parc::run::Manifest &m,
                                                 llvm::ArrayRef<std::string> inputArgs) {
  parc::run::LaunchPlan plan;
  plan.launcher = launcher;
  auto program = launcherProgram();
  if (!program)
    return program.takeError();
  plan.program = *program;
  if (!hostfile.empty())
    plan.hostfile = absolute(hostfile);
  const std::string perRank = std::to_string(kernelThreads(m));
  plan.env = {{"PARC_RT_TIMEOUT_S", std::to_string(timeout)},
              {"PARC_RT_LIVENESS_S", std::to_string(livenessTimeout)},
              {"PARC_RT_THREADS", perRank},
              {"OMP_NUM_THREADS", perRank},
              {"OPENBLAS_NUM_THREADS", perRank}};
  if (!tracePath.empty())
    plan.env.push_back({"PARC_RT_TRACE", absolute(tracePath)});
  if (!jsonPath.empty())
    plan.env.push_back({"PARC_RT_STATS", absolute(jsonPath) + ".rank0.json"});
  llvm::SmallString<256> weights(absolute(outDir));
  llvm::sys::path::append(weights, "weights");
  for (size_t i = 0; i < m.rankBinaries.size();) {
    size_t j = i;
    while (j < m.rankBinaries.size() && m.rankBinaries[j] == m.rankBinaries[i])
      ++j;
    llvm::SmallString<256> exe(absolute(outDir));
    llvm::sys::path::append(exe, m.rankBinaries[i]);
    parc::run::AppContext app{i, j - i, exe.str().str(), {}};
    app.args = {"--weights-dir=" + weights.str().str(),
                "--repeat=" + std::to_string(repeat),
                "--warmup=" + std::to_string(warmup),
                "--output-rank=" + std::to_string(m.outputRank)};
    if (!outputDir.empty()) {
      app.args.push_back("--output-dir=" + absolute(outputDir));
      // Each output's file as the compiler recorded it.
      for (const auto &[name, file] : m.outputFiles)
        app.args.push_back("--output-file=" + name + "=" + file);
    }
    if (verifyWeights)
      app.args.push_back("--verify-weights");
    if (m.dataParallel > 1)
      app.args.push_back("--data-parallel=" + std::to_string(m.dataParallel));
    app.args.insert(app.args.end(), inputArgs.begin(), inputArgs.end());
    plan.apps.push_back(std::move(app));
    i = j;
  }
  return plan;
}

/// A file the run writes (`flag` names it): its folder is created now, so
/// that a bad path fails before any rank starts.
llvm::Error prepareFile(StringRef flag, StringRef path) {
  if (llvm::sys::fs::is_directory(path))
    return error(flag + " '" + path + "' is a folder: give the path of a file");
  std::string file = absolute(path);
  StringRef parent = llvm::sys::path::parent_path(file);
  std::error_code ec = llvm::sys::fs::create_directories(parent);
  if (!ec && !llvm::sys::fs::is_directory(parent))
    ec = std::make_error_code(std::errc::not_a_directory);
  if (ec)
    return error("cannot create the folder '" + parent + "' of " + flag + " '" + path +
                 "': " + ec.message());
  if (llvm::sys::fs::access(parent, llvm::sys::fs::AccessMode::Write))
    return error("cannot write " + flag + " '" + path + "': its folder '" + parent +
                 "' is not writable");
  return llvm::Error::success();
}

/// Every file and folder the run writes, before it starts.
llvm::Error prepareOutputs(size_t ranks) {
  if (!tracePath.empty())
    if (auto err = prepareFile("--trace", tracePath))
      return err;
  if (!jsonPath.empty())
    if (auto err = prepareFile("--json", jsonPath))
      return err;
  if (outputDir.empty())
    return llvm::Error::success();
  std::error_code ec = llvm::sys::fs::create_directories(outputDir);
  if (!ec && !llvm::sys::fs::is_directory(outputDir))
    ec = std::make_error_code(std::errc::not_a_directory);
  if (ec)
    return error("cannot create --output-dir '" + outputDir + "': " + ec.message());
  // A report left by an earlier run must not pass for this run's.
  for (size_t r = 0; r < ranks; ++r) {
    llvm::SmallString<256> old(outputDir);
    llvm::sys::path::append(old, "moe_report.rank" + std::to_string(r) + ".json");
    llvm::sys::fs::remove(old);
  }
  return llvm::Error::success();
}

/// Writes srun's task `map` into the compiled folder (every node sees it
/// there), named by its content so that runs of other inputs never share
/// one; returns its path.
llvm::Expected<std::string> writeTaskMap(StringRef map) {
  llvm::SmallString<256> path(absolute(outDir));
  llvm::sys::path::append(path, llvm::formatv("srun-tasks-{0:x-16}.conf",
                                              llvm::xxh3_64bits(map))
                                    .str());
  std::string tmp = (path + ".tmp").str();
  std::error_code ec;
  {
    llvm::raw_fd_ostream os(tmp, ec);
    if (!ec)
      os << map;
  }
  if (ec || (ec = llvm::sys::fs::rename(tmp, path)))
    return error("cannot write srun's task map '" + path + "': " + ec.message());
  return path.str().str();
}

/// The rank programs' figures (rank 0 writes them) with what parc-run ran,
/// written to --json.
llvm::Error writeJson(const parc::run::LaunchPlan &plan) {
  std::string part = absolute(jsonPath) + ".rank0.json";
  auto text = llvm::MemoryBuffer::getFile(part);
  if (!text)
    return error("rank 0 wrote no figures '" + part + "'");
  auto parsed = llvm::json::parse((*text)->getBuffer());
  if (!parsed || !parsed->getAsObject())
    return error("'" + part + "' is not a JSON object" +
                 (parsed ? "" : ": " + llvm::toString(parsed.takeError())));
  llvm::json::Object figures = std::move(*parsed->getAsObject());
  figures["compiled"] = absolute(outDir);
  figures["launcher"] = plan.launcher == Launcher::Srun ? "srun" : "mpirun";
  figures["tokens_counted"] = "batch x seq of the first integer input of rank >= 2 "
                              "(token ids), every replica included";
  std::string tmp = absolute(jsonPath) + ".tmp";
  std::error_code ec;
  {
    llvm::raw_fd_ostream os(tmp, ec);
    if (!ec)
      os << llvm::formatv("{0:2}", llvm::json::Value(std::move(figures))) << "\n";
  }
  if (ec || (ec = llvm::sys::fs::rename(tmp, absolute(jsonPath))))
    return error("cannot write --json '" + jsonPath + "': " + ec.message());
  llvm::sys::fs::remove(part);
  return llvm::Error::success();
}

/// The sampler's arguments: --greedy excludes --temperature and --top-k;
/// --top-k alone samples at temperature 1.
llvm::Expected<std::vector<std::string>> samplingArgs() {
  const bool sampled =
      temperature.getNumOccurrences() || topK.getNumOccurrences();
  if (greedy && sampled)
    return error("--greedy picks the most likely token: drop it to sample "
                 "with --temperature or --top-k");
  if (!(temperature >= 0) || !std::isfinite(temperature)) {
    char text[64];
    std::snprintf(text, sizeof text, "%g", temperature.getValue());
    return error("--temperature " + llvm::Twine(text) +
                 " is not a temperature (give 0 for greedy, or more)");
  }
  double t = temperature;
  if (topK.getNumOccurrences() && !temperature.getNumOccurrences())
    t = 1;
  if (t == 0)
    return std::vector<std::string>{};
  // %.17g: the program reads back the very double given here.
  char text[64];
  std::snprintf(text, sizeof text, "--temperature=%.17g", t);
  return std::vector<std::string>{text, "--top-k=" + std::to_string(topK),
                                  "--seed=" + std::to_string(seed)};
}

/// The token loop's arguments (--prompt): the program feeds its own inputs.
llvm::Expected<std::vector<std::string>>
generateArgs(const parc::run::Manifest &m) {
  if (!inputs.empty())
    return error("--prompt feeds the program's inputs itself: drop --input");
  if (maxNewTokens < 1)
    return error("--prompt needs --max-new-tokens N (N >= 1)");
  if (eos < -1)
    return error("--eos " + llvm::Twine(eos.getValue()) +
                 " is not a token id (give 0 or more)");
  if (!llvm::sys::fs::is_regular_file(prompt))
    return error("--prompt '" + prompt + "' does not exist");
  if (!promptLengths.empty() && !llvm::sys::fs::is_regular_file(promptLengths))
    return error("--prompt-lengths '" + promptLengths + "' does not exist");
  auto sampling = samplingArgs();
  if (!sampling)
    return sampling.takeError();
  if (!m.generates)
    return error("'" + outDir +
                 "' keeps no KV cache: compile the model with "
                 "parc compile --max-seq S to generate");
  if (outputDir.empty())
    outputDir = ".";
  std::vector<std::string> args{"--prompt=" + absolute(prompt),
                                "--max-new-tokens=" +
                                    std::to_string(maxNewTokens)};
  if (!promptLengths.empty())
    args.push_back("--prompt-lengths=" + absolute(promptLengths));
  if (eos >= 0)
    args.push_back("--eos=" + std::to_string(eos));
  args.insert(args.end(), sampling->begin(), sampling->end());
  if (!logits.empty()) {
    if (llvm::sys::fs::is_directory(logits))
      return error("--logits '" + logits + "' is a folder; give a file path");
    args.push_back("--logits=" + absolute(logits));
  }
  return args;
}

/// Runs the launch command, then merges what the ranks wrote.
int launchAndReport(const parc::run::Manifest &m, const parc::run::LaunchPlan &plan,
                    llvm::ArrayRef<std::string> command) {
  const char *name = plan.launcher == Launcher::Srun ? "srun" : "mpirun";
  auto exit = parc::run::runLauncher(command);
  if (!exit)
    return fail(llvm::toString(exit.takeError()));
  if (exit->received) {
    const int sig = exit->received;
    fail(llvm::Twine("interrupted by ") +
         (sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "SIGHUP") +
         ": stopped " + name + " and the ranks it started");
    return 128 + sig;
  }
  if (exit->code != 0)
    return fail(llvm::Twine("the run failed (") + name + " exit code " +
                llvm::Twine(exit->code) + ")");
  const size_t ranks = m.rankBinaries.size();
  if (!tracePath.empty()) {
    if (auto err = mergeTraces(absolute(tracePath), ranks))
      return fail(llvm::toString(std::move(err)));
    llvm::errs() << "parc-run: wrote the timeline of " << ranks << " rank(s) to "
                 << tracePath << " (open it in Perfetto)\n";
  }
  if (!jsonPath.empty())
    if (auto err = writeJson(plan))
      return fail(llvm::toString(std::move(err)));
  if (!outputDir.empty())
    summarizeMoeReports(outputDir, ranks, m.dataParallel);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  parc::cli::parseCommandLine(
      argc, argv,
      "parc-run: run a compiled model with mpirun or srun\n\n"
      "  Environment the ranks read (runtime/README.md has them all):\n"
      "    PARC_RT_PROFILE=1          time per ONNX node and per op kind, "
      "GEMM GFLOP/s\n"
      "                               against a 2048^3 GEMM's, weight "
      "packing time\n"
      "    PARC_RT_PACK_WEIGHTS=0     cpu: keep GEMM weights in their "
      "stored layout\n"
      "    PARC_RT_DNNL_MATMUL=0      cpu: sgemm and f32 widening instead "
      "of oneDNN's matmul\n"
      "    PARC_RT_FLUSH_DENORMALS=0  cpu: keep denormal floats (flushed to "
      "zero by default)\n",
      {&ioCategory, &generateCategory, &launchCategory, &benchCategory});
  // prepareInputs refuses a NAME given twice, naming both files.
  auto manifest = parc::run::readManifest(outDir);
  if (!manifest)
    return fail(llvm::toString(manifest.takeError()));
  if (auto err = checkOptions(*manifest))
    return fail(llvm::toString(std::move(err)));
  llvm::SmallString<128> tmp; // converted .pb inputs
  llvm::scope_exit removeTmp([&] {
    if (!tmp.empty())
      llvm::sys::fs::remove_directories(tmp);
  });
  auto inputArgs = prompt.empty()
                       ? parc::run::prepareInputs(*manifest, inputs, tmp)
                       : generateArgs(*manifest);
  if (!inputArgs)
    return fail(llvm::toString(inputArgs.takeError()));
  auto plan = planLaunch(*manifest, *inputArgs);
  if (!plan)
    return fail(llvm::toString(plan.takeError()));
  if (!dryRun)
    if (auto err = prepareOutputs(plan->ranks()))
      return fail(llvm::toString(std::move(err)));
  std::string taskMap, taskMapPath;
  if (launcher == Launcher::Srun) {
    auto map = parc::run::srunTaskMap(*plan);
    if (!map)
      return fail(llvm::toString(map.takeError()));
    taskMap = std::move(*map);
    auto path = writeTaskMap(taskMap);
    if (!path)
      return fail(llvm::toString(path.takeError()));
    taskMapPath = *path;
  }
  auto command = parc::run::launchCommand(*plan, taskMapPath);
  if (!command)
    return fail(llvm::toString(command.takeError()));
  if (!dryRun)
    return launchAndReport(*manifest, *plan, *command);
  llvm::outs() << parc::run::shellJoin(*command) << "\n";
  if (!taskMapPath.empty()) {
    llvm::outs() << "# " << taskMapPath << ":\n";
    for (StringRef line : llvm::split(StringRef(taskMap).rtrim(), '\n'))
      llvm::outs() << "#   " << line << "\n";
  }
  return 0;
}
