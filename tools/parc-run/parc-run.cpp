//===- parc-run.cpp - run a compiled model on this node -------------------===//
//
// A thin launcher over mpirun: reads out/manifest.json, starts one process
// per rank (one mpirun app context per distinct program), and passes each
// the weights directory, the inputs and the run options. ONNX TensorProto
// (.pb) inputs, the format of ONNX's test data, are converted to .npy first.
// mpirun tears every rank down when one fails, and the runtime turns a hung
// collective into an error, so a run ends either way.
//
//===----------------------------------------------------------------------===//

#include "parc/Support/CommandLine.h"
#include "parc/runtime.h"

#include "onnx/onnx_pb.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/WithColor.h"

#include <map>
#include <unistd.h>

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
cl::opt<std::string> outputDir("output-dir",
                               cl::desc("Write outputs here as NAME.npy"),
                               cl::value_desc("dir"), cl::cat(ioCategory));
cl::opt<unsigned> repeat("repeat",
                         cl::desc("Run the forward N times and print latency"),
                         cl::init(1), cl::cat(benchCategory));
cl::opt<unsigned> warmup("warmup", cl::desc("Untimed runs before --repeat"),
                         cl::init(0), cl::cat(benchCategory));
cl::opt<unsigned> threads("kernel-threads", cl::desc("Kernel threads per rank"),
                          cl::init(1), cl::cat(launchCategory));
cl::opt<unsigned> timeout("timeout", cl::desc("Seconds a collective may wait"),
                          cl::init(300), cl::cat(launchCategory));
cl::opt<std::string> mpirun("mpirun", cl::desc("mpirun to use"),
                            cl::init("mpirun"), cl::cat(launchCategory));
cl::opt<bool> dryRun("dry-run", cl::desc("Print the mpirun command and exit"),
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

/// Converts an ONNX TensorProto file to .npy through the runtime's writer,
/// for an input the program declares as `dtype` (a manifest name).
llvm::Error pbToNpy(StringRef pb, StringRef npy, StringRef dtype) {
  auto buffer = llvm::MemoryBuffer::getFile(pb);
  if (!buffer)
    return llvm::createStringError("cannot read '" + pb + "'");
  onnx::TensorProto t;
  if (!t.ParseFromArray((*buffer)->getBufferStart(), (*buffer)->getBufferSize()))
    return llvm::createStringError("'" + pb + "' is not an ONNX TensorProto");
  struct Kind {
    parc_rt_dtype_t dtype;
    size_t size;
  };
  static const std::map<int, Kind> kinds = {
      {onnx::TensorProto::FLOAT, {PARC_RT_F32, 4}},
      {onnx::TensorProto::DOUBLE, {PARC_RT_F64, 8}},
      {onnx::TensorProto::FLOAT16, {PARC_RT_F16, 2}},
      {onnx::TensorProto::BFLOAT16, {PARC_RT_BF16, 2}},
      {onnx::TensorProto::INT64, {PARC_RT_I64, 8}},
      {onnx::TensorProto::INT32, {PARC_RT_I32, 4}},
      {onnx::TensorProto::INT8, {PARC_RT_I8, 1}},
      {onnx::TensorProto::UINT8, {PARC_RT_U8, 1}},
      {onnx::TensorProto::BOOL, {PARC_RT_BOOL, 1}}};
  // ONNX's own test data (before 1.14) stores bfloat16 as uint16 words.
  int type = t.data_type();
  if (type == onnx::TensorProto::UINT16 && dtype == "bf16")
    type = onnx::TensorProto::BFLOAT16;
  auto kind = kinds.find(type);
  if (kind == kinds.end())
    return llvm::createStringError("'" + pb + "' has a data type parc-run cannot convert");
  std::vector<int64_t> dims(t.dims().begin(), t.dims().end());
  int64_t n = 1;
  for (int64_t d : dims)
    n *= d;
  std::string bytes = t.raw_data();
  if (!t.has_raw_data()) {
    auto put = [&](const void *p, size_t size) {
      bytes.append(static_cast<const char *>(p), size);
    };
    for (float v : t.float_data()) put(&v, 4);
    for (double v : t.double_data()) put(&v, 8);
    for (int64_t v : t.int64_data()) put(&v, 8);
    // int32_data also carries the narrower types, one element per entry.
    for (int32_t v : t.int32_data()) {
      if (kind->second.size == 4) {
        put(&v, 4);
      } else if (kind->second.size == 2) {
        uint16_t h = v;
        put(&h, 2);
      } else {
        int8_t b = v;
        put(&b, 1);
      }
    }
  }
  if ((int64_t)bytes.size() != n * (int64_t)kind->second.size)
    return llvm::createStringError("'" + pb + "' holds " + std::to_string(bytes.size()) +
                                   " bytes for " + std::to_string(n) + " elements");
  std::string path = npy.str();
  if (parc_rt_npy_write(path.c_str(), kind->second.dtype, dims.size(), dims.data(),
                        bytes.data()) != PARC_RT_OK)
    return llvm::createStringError(parc_rt_last_error());
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

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  parc::cli::parseCommandLine(argc, argv,
                              "parc-run: run a compiled model with mpirun\n",
                              {&ioCategory, &launchCategory, &benchCategory});
  if (auto err = parc::cli::checkDistinctNames("input", inputs))
    return fail(llvm::toString(std::move(err)));

  llvm::SmallString<256> manifestPath(outDir);
  llvm::sys::path::append(manifestPath, "manifest.json");
  auto text = llvm::MemoryBuffer::getFile(manifestPath);
  if (!text)
    return fail("cannot read '" + manifestPath + "': " + text.getError().message() +
                " (is '" + outDir + "' the output of `parc compile`?)");
  auto parsed = llvm::json::parse((*text)->getBuffer());
  if (!parsed)
    return fail("'" + manifestPath + "' is not valid JSON: " +
                llvm::toString(parsed.takeError()));
  const llvm::json::Object *manifest = parsed->getAsObject();
  const llvm::json::Array *ranks = manifest ? manifest->getArray("ranks") : nullptr;
  const llvm::json::Array *programs = manifest ? manifest->getArray("programs") : nullptr;
  if (!ranks || !programs || ranks->empty())
    return fail("'" + manifestPath + "' lists no ranks or programs");

  // The mesh needs exactly its world size: refuse a different --np here
  // rather than let mpirun start ranks that wait for peers.
  int64_t world = manifest->getInteger("world_size").value_or(ranks->size());
  if (np.getNumOccurrences() && np != world) {
    std::string mesh;
    if (auto *m = manifest->getObject("mesh"))
      if (auto *shape = m->getArray("shape"))
        for (auto &d : *shape)
          mesh += (mesh.empty() ? "" : "x") + std::to_string(d.getAsInteger().value_or(0));
    return fail("--np " + std::to_string(np) + " does not match the compiled mesh: '" +
                outDir + "' needs " + std::to_string(world) + " ranks" +
                (mesh.empty() ? "" : " (mesh " + mesh + ")"));
  }

  // Inputs: known names only; .pb files are converted next to a temp dir.
  llvm::StringMap<std::string> known; // name -> dtype
  if (auto *ins = manifest->getArray("inputs"))
    for (const auto &in : *ins)
      if (auto name = in.getAsObject()->getString("name"))
        known[*name] = in.getAsObject()->getString("dtype").value_or("").str();
  llvm::SmallString<128> tmp;
  std::vector<std::string> inputArgs;
  for (const std::string &spec : inputs) {
    auto [name, file] = StringRef(spec).split('=');
    if (name.empty() || file.empty())
      return fail("--input '" + spec + "' is not NAME=PATH");
    if (!known.contains(name))
      return fail("the model has no input '" + name + "' (inputs: " +
                  llvm::join(llvm::map_range(known.keys(), [](StringRef k) { return k.str(); }), ", ") +
                  ")");
    if (!llvm::sys::fs::exists(file))
      return fail("input file '" + file + "' does not exist");
    std::string path = file.str();
    if (file.ends_with(".pb")) {
      if (tmp.empty() && llvm::sys::fs::createUniqueDirectory("parc-run", tmp))
        return fail("cannot create a temporary directory");
      llvm::SmallString<256> npy(tmp);
      llvm::sys::path::append(npy, name + ".npy");
      if (auto err = pbToNpy(file, npy, known.lookup(name)))
        return fail(llvm::toString(std::move(err)));
      path = npy.str().str();
    }
    inputArgs.push_back("--input=" + name.str() + "=" + path);
  }

  auto launcher = llvm::sys::findProgramByName(mpirun);
  if (!launcher)
    return fail("cannot find '" + mpirun + "' (install openmpi-bin)");
  llvm::SmallString<256> weightsDir(outDir);
  llvm::sys::path::append(weightsDir, "weights");
  int64_t outputRank = manifest->getInteger("output_rank").value_or(0);
  // Data-parallel replicas run the same programs: they learn their count here.
  int64_t dataParallel = manifest->getInteger("data_parallel").value_or(1);

  // One app context per run of consecutive ranks with the same program.
  std::vector<std::string> args = {*launcher, "--oversubscribe", "--bind-to", "none"};
  if (geteuid() == 0)
    args.push_back("--allow-run-as-root");
  // Open MPI applies -x to the app context it is given in: each gets them.
  std::vector<std::string> env = {"-x", "PARC_RT_TIMEOUT_S=" + std::to_string(timeout),
                                  "-x", "PARC_RT_THREADS=" + std::to_string(threads),
                                  "-x", "OMP_NUM_THREADS=" + std::to_string(threads),
                                  "-x", "OPENBLAS_NUM_THREADS=" + std::to_string(threads)};
  llvm::SmallString<256> traceAbs(tracePath);
  if (!tracePath.empty()) {
    llvm::sys::fs::make_absolute(traceAbs);
    env.insert(env.end(), {"-x", "PARC_RT_TRACE=" + traceAbs.str().str()});
  }
  for (size_t i = 0; i < ranks->size();) {
    StringRef program = *(*ranks)[i].getAsObject()->getString("program");
    size_t j = i;
    while (j < ranks->size() && *(*ranks)[j].getAsObject()->getString("program") == program)
      ++j;
    std::string binary;
    for (const auto &p : *programs)
      if (p.getAsObject()->getString("name") == program)
        binary = p.getAsObject()->getString("binary")->str();
    llvm::SmallString<256> exe(outDir);
    llvm::sys::path::append(exe, binary);
    if (i)
      args.push_back(":");
    args.insert(args.end(), env.begin(), env.end());
    args.insert(args.end(), {"-np", std::to_string(j - i), exe.str().str(),
                             "--weights-dir=" + weightsDir.str().str(),
                             "--repeat=" + std::to_string(repeat),
                             "--warmup=" + std::to_string(warmup),
                             "--output-rank=" + std::to_string(outputRank)});
    if (!outputDir.empty())
      args.push_back("--output-dir=" + outputDir);
    if (dataParallel > 1)
      args.push_back("--data-parallel=" + std::to_string(dataParallel));
    args.insert(args.end(), inputArgs.begin(), inputArgs.end());
    i = j;
  }
  if (dryRun) {
    llvm::outs() << llvm::join(args, " ") << "\n";
    return 0;
  }
  if (!outputDir.empty()) {
    if (std::error_code ec = llvm::sys::fs::create_directories(outputDir))
      return fail("cannot create '" + outputDir + "': " + ec.message());
    // A report left by an earlier run must not pass for this run's.
    for (size_t r = 0; r < ranks->size(); ++r) {
      llvm::SmallString<256> old(outputDir);
      llvm::sys::path::append(old, "moe_report.rank" + std::to_string(r) + ".json");
      llvm::sys::fs::remove(old);
    }
  }
  llvm::SmallVector<StringRef> argRefs(args.begin(), args.end());
  std::string error;
  int rc = llvm::sys::ExecuteAndWait(*launcher, argRefs, std::nullopt, {}, 0, 0, &error);
  if (!tmp.empty())
    llvm::sys::fs::remove_directories(tmp);
  if (rc != 0)
    return fail("the run failed (mpirun exit code " + std::to_string(rc) + ")" +
                (error.empty() ? "" : ": " + error));
  if (!tracePath.empty()) {
    if (auto err = mergeTraces(traceAbs, ranks->size()))
      return fail(llvm::toString(std::move(err)));
    llvm::errs() << "parc-run: wrote the timeline of " << ranks->size()
                 << " rank(s) to " << tracePath << " (open it in Perfetto)\n";
  }
  if (!outputDir.empty())
    summarizeMoeReports(outputDir, ranks->size(), dataParallel);
  return 0;
}
