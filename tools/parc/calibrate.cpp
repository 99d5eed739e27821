//===- calibrate.cpp - `parc calibrate`: measure the local cpu target ----===//
//
// Starts parc-calibrate-probe (beside this binary) under mpirun, reads its
// measurements and writes them as a cluster JSON for `--cluster`: one device
// per rank, the runtime's measured GEMM rate as the peak (efficiency 1),
// the streaming bandwidth, and the link's latency and bus bandwidth solved
// from a small and a large ring all-reduce.
//
//===----------------------------------------------------------------------===//

#include "Commands.h"

#include "parc/Plan/CostModel.h"
#include "parc/Support/CommandLine.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/WithColor.h"

#include <thread>
#include <unistd.h>

namespace cl = llvm::cl;
namespace plan = parc::plan;

cl::OptionCategory parc::driver::calibrateCategory("Calibrate options");

namespace {

cl::SubCommand calibrateCmd("calibrate",
                            "Measure the local cpu target and write a cluster JSON");
cl::opt<std::string> output("o", cl::desc("Cluster JSON to write"),
                            cl::value_desc("file"), cl::Required,
                            cl::sub(calibrateCmd),
                            cl::cat(parc::driver::calibrateCategory));
cl::opt<int> ranks("ranks", cl::desc("Ranks for the collective measurement"),
                   cl::init(4), cl::sub(calibrateCmd),
                   cl::cat(parc::driver::calibrateCategory));
cl::opt<std::string> mpirun("mpirun", cl::desc("mpirun to use"),
                            cl::init("mpirun"), cl::sub(calibrateCmd),
                            cl::cat(parc::driver::calibrateCategory));
cl::opt<std::string> name("name", cl::desc("Name of the cluster in the file"),
                          cl::init("cpu-calibrated"), cl::sub(calibrateCmd),
                          cl::cat(parc::driver::calibrateCategory));

int fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "parc") << message << "\n";
  return 1;
}

} // namespace

bool parc::driver::calibrateSelected() { return static_cast<bool>(calibrateCmd); }

int parc::driver::calibrate(const char *argv0) {
  // Collectives need two ranks; more than a node's worth measure nothing new.
  if (auto err =
          parc::cli::checkRanges({parc::cli::intRange("ranks", ranks, 2, 256)}))
    return fail(llvm::toString(std::move(err)));
  static int anchor;
  std::string exe = llvm::sys::fs::getMainExecutable(argv0, &anchor);
  llvm::SmallString<256> probe(llvm::sys::path::parent_path(exe));
  llvm::sys::path::append(probe, "parc-calibrate-probe");
  if (!llvm::sys::fs::can_execute(probe))
    return fail("cannot find '" + probe + "' (it is built with parc)");
  auto launcher = llvm::sys::findProgramByName(mpirun);
  if (!launcher)
    return fail("cannot find '" + mpirun + "' (install openmpi-bin)");

  llvm::SmallString<128> out;
  if (llvm::sys::fs::createTemporaryFile("parc-calibrate", "json", out))
    return fail("cannot create a temporary file");
  std::string np = std::to_string(ranks);
  llvm::SmallVector<llvm::StringRef> args{*launcher, "-np", np, "--oversubscribe",
                                          "--bind-to", "none", probe};
  // OpenMPI refuses root without these; harmless otherwise.
  std::vector<llvm::StringRef> env;
  std::vector<std::string> envStore;
  for (char **e = environ; *e; ++e)
    envStore.push_back(*e);
  envStore.push_back("OMPI_ALLOW_RUN_AS_ROOT=1");
  envStore.push_back("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1");
  for (const std::string &e : envStore)
    env.push_back(e);
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, llvm::StringRef(out),
                                                std::nullopt};
  llvm::errs() << "parc: measuring GEMM, memory bandwidth and all-reduce on " << ranks
               << " ranks\n";
  std::string error;
  int rc = llvm::sys::ExecuteAndWait(*launcher, args, env, redirects, /*SecondsToWait=*/600,
                                     0, &error);
  auto buffer = llvm::MemoryBuffer::getFile(out);
  llvm::sys::fs::remove(out);
  if (rc != 0 || !buffer)
    return fail("the probe failed (" + (error.empty() ? "exit code " + std::to_string(rc) : error) +
                ")");
  llvm::StringRef text = (*buffer)->getBuffer();
  text = text.substr(text.find('{'));
  auto parsed = llvm::json::parse(text.take_until([](char c) { return c == '\n'; }));
  if (!parsed)
    return fail("the probe printed no measurements: " + llvm::toString(parsed.takeError()));
  const llvm::json::Object *m = parsed->getAsObject();
  auto num = [&](llvm::StringRef key) { return m->getNumber(key).value_or(0); };
  double f32 = num("gemm_f32_flops"), bf16 = num("gemm_bf16_flops");
  double stream = num("stream_bytes_per_s"), small = num("all_reduce_small_s");
  double large = num("all_reduce_large_s"), bytes = num("all_reduce_large_bytes");
  if (f32 <= 0 || stream <= 0 || small <= 0 || large <= small)
    return fail("the probe's measurements are not usable: " + text.str());

  plan::Cluster c;
  c.name = name;
  unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  c.description = llvm::formatv("measured by parc calibrate: one rank per device, {0} "
                                "core(s), all-reduce over {1} ranks",
                                cores, ranks.getValue())
                      .str();
  c.device = "cpu rank (runtime sgemm, 1 thread)";
  c.peakFlops["f32"] = f32;
  if (bf16 > 0)
    c.peakFlops["bf16"] = c.peakFlops["f16"] = bf16;
  c.memoryBandwidth = stream;
  c.kernelLatency = num("kernel_s");
  // Ranks may outnumber cores (mpirun --oversubscribe): a node holds as
  // many "devices" as were measured together.
  c.devicesPerNode = std::max<int64_t>(cores, ranks);
  c.computeSlotsPerNode = cores;
  c.nodes = 1;
  double pages = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGE_SIZE);
  c.memoryBytes = pages > 0 ? pages / (double)c.devicesPerNode : 4.0 * (1 << 30);
  // small ≈ steps·α; large = steps·α + factor·bytes/β.
  int64_t steps = plan::latencySteps(plan::Collective::AllReduce, ranks);
  double factor = plan::busFactor(plan::Collective::AllReduce, ranks);
  c.intraNode.name = "MPI (measured)";
  c.intraNode.latency = small / (double)steps;
  c.intraNode.bandwidth = factor * bytes / (large - small);
  c.interNode = c.intraNode;

  std::string tmp = output + ".tmp";
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(tmp, ec);
    if (ec)
      return fail("cannot write '" + tmp + "': " + ec.message());
    os << llvm::formatv("{0:2}", plan::toJSON(c)) << "\n";
  }
  if (std::error_code ec = llvm::sys::fs::rename(tmp, output))
    return fail("cannot write '" + output + "': " + ec.message());
  llvm::errs() << llvm::formatv(
      "parc: sgemm {0:f1} GFLOP/s f32, {1:f1} GFLOP/s bf16; stream {2:f1} GB/s; "
      "all-reduce latency {3:f1} us per step, bus bandwidth {4:f2} GB/s; wrote {5}\n",
      f32 / 1e9, bf16 / 1e9, stream / 1e9, c.intraNode.latency * 1e6,
      c.intraNode.bandwidth / 1e9, output);
  return 0;
}
