//===- CompileStats.cpp - how fast and how big a compile was --------------===//

#include "CompileStats.h"
#include "nn/NNOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <sys/resource.h>

using namespace mlir;
using parc::driver::CompileStats;
using parc::driver::WeightWriteMeter;

namespace {

/// Bytes of a floating-point tensor; integer constants are shapes and
/// indices, not weights.
int64_t floatTensorBytes(Type type) {
  auto t = dyn_cast<RankedTensorType>(type);
  if (!t || !t.hasStaticShape() || !isa<FloatType>(t.getElementType()))
    return 0;
  return t.getNumElements() *
         std::max<int64_t>(t.getElementTypeBitWidth() / 8, 1);
}

/// Decimal megabytes, as disks and `dd` quote rates.
double mb(double bytes) { return bytes / 1e6; }

/// Exact below a megabyte, where one decimal of MB would say 0.0.
std::string size(int64_t bytes) {
  if (bytes < 1000000)
    return llvm::formatv("{0} B", bytes).str();
  return llvm::formatv("{0:F1} MB", mb(bytes)).str();
}

} // namespace

int64_t parc::driver::modelWeightBytes(ModuleOp module) {
  int64_t bytes = 0;
  module.walk([&](Operation *op) {
    if (isa<parc::nn::ExternalWeightOp>(op) ||
        (isa<arith::ConstantOp>(op) &&
         isa<ElementsAttr>(cast<arith::ConstantOp>(op).getValue())))
      bytes += floatTensorBytes(op->getResult(0).getType());
  });
  return bytes;
}

int64_t parc::driver::peakRssBytes() {
  struct rusage usage;
  if (getrusage(RUSAGE_SELF, &usage) != 0)
    return 0;
  return int64_t(usage.ru_maxrss) * 1024; // KiB on Linux
}

std::string parc::driver::describe(const CompileStats &stats, int64_t peakRss) {
  double rate = stats.weightWriteSeconds > 0
                    ? mb(stats.weightBytesWritten) / stats.weightWriteSeconds
                    : 0;
  std::string ratio =
      stats.modelWeightBytes > 0
          ? llvm::formatv("{0:F2}x", double(peakRss) / stats.modelWeightBytes)
                .str()
          : std::string("n/a");
  return llvm::formatv("weights: {0} written in {1:F2} s ({2:F0} MB/s); "
                       "peak RSS {3}, {4} the model's {5} of weights",
                       size(stats.weightBytesWritten), stats.weightWriteSeconds,
                       rate, size(peakRss), ratio, size(stats.modelWeightBytes))
      .str();
}

LogicalResult parc::driver::writeCompileStats(StringRef path,
                                              const CompileStats &stats,
                                              int64_t peakRss) {
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec) {
    llvm::WithColor::error(llvm::errs(), "parc")
        << "cannot write '" << path << "': " << ec.message() << "\n";
    return failure();
  }
  llvm::json::Object json{{"weight_write_seconds", stats.weightWriteSeconds},
                          {"weight_bytes_written", stats.weightBytesWritten},
                          {"peak_rss_bytes", peakRss},
                          {"model_weight_bytes", stats.modelWeightBytes},
                          {"build_seconds", stats.buildSeconds},
                          {"build_jobs", stats.buildJobs}};
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(json))) << "\n";
  return success();
}

WeightWriteMeter::WeightWriteMeter(CompileStats &stats, StringRef program,
                                   int64_t total, bool show)
    : stats(stats), program(program.str()), total(total),
      show(show && llvm::sys::Process::StandardErrIsDisplayed()),
      start(Clock::now()), lastDraw(start) {}

double WeightWriteMeter::elapsed() const {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void WeightWriteMeter::advance(int64_t bytes) {
  done += bytes;
  stats.weightBytesWritten += bytes;
  double seconds = elapsed();
  // A short write shows nothing; a long one redraws a few times a second.
  if (!show || seconds < 1.0 ||
      Clock::now() - lastDraw < std::chrono::milliseconds(200))
    return;
  lastDraw = Clock::now();
  shown = true;
  double rate = done / seconds;
  double eta = rate > 0 && total > done ? (total - done) / rate : 0;
  // \r and a cleared tail: the line is rewritten in place.
  llvm::errs() << llvm::formatv(
      "\rparc: writing weights of {0}: {1:F1} / {2:F1} MB, "
      "{3:F0} MB/s, ETA {4:F0} s\x1b[K",
      program, mb(done), mb(std::max(total, done)), mb(rate), eta);
}

void WeightWriteMeter::finish() {
  if (finished)
    return;
  finished = true;
  stats.weightWriteSeconds += elapsed();
  if (shown)
    llvm::errs() << "\n";
}
