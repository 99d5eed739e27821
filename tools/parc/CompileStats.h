//===- CompileStats.h - how fast and how big a compile was ------*- C++ -*-===//
//
// The figures of issue 16's "at disk speed": the time spent writing weight
// shards, the bytes written, the time building the rank programs, the compile's peak RSS next to the model's
// weight bytes. They go to the summary and to OUT/compile-stats.json, apart
// from manifest.json, which stays the same for the same inputs.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_TOOLS_PARC_COMPILESTATS_H
#define PARC_TOOLS_PARC_COMPILESTATS_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/StringRef.h"

#include <chrono>
#include <string>

namespace parc::driver {

struct CompileStats {
  double weightWriteSeconds = 0;
  int64_t weightBytesWritten = 0;
  /// The floating-point weights' bytes of the imported model.
  int64_t modelWeightBytes = 0;
  /// Wall time of building the rank programs, and the compilers run at once.
  double buildSeconds = 0;
  int64_t buildJobs = 1;
};

/// Bytes of every floating-point weight of the model as imported (constants
/// and external weights alike, before any split or padding); integer
/// tensors (shapes, indices) are not counted.
int64_t modelWeightBytes(mlir::ModuleOp module);

/// The process's peak resident set so far (children such as g++ excluded).
int64_t peakRssBytes();

/// The summary line: bytes, seconds, rate, peak RSS over the model's bytes.
std::string describe(const CompileStats &stats, int64_t peakRss);

/// Writes `path` (compile-stats.json) with llvm::json.
mlir::LogicalResult writeCompileStats(llvm::StringRef path,
                                      const CompileStats &stats,
                                      int64_t peakRss);

/// Times one program's weight writes into `stats` and, when `show` and
/// stderr is a terminal, keeps a line updated in place once writing has
/// lasted a second: bytes done / total, MB/s, ETA.
class WeightWriteMeter {
public:
  WeightWriteMeter(CompileStats &stats, llvm::StringRef program, int64_t total,
                   bool show);
  ~WeightWriteMeter() { finish(); }
  /// `bytes` more written.
  void advance(int64_t bytes);
  /// Stops the clock and ends the progress line, once.
  void finish();

private:
  using Clock = std::chrono::steady_clock;
  double elapsed() const;
  CompileStats &stats;
  std::string program;
  int64_t total, done = 0;
  bool show, shown = false, finished = false;
  Clock::time_point start, lastDraw;
};

} // namespace parc::driver

#endif // PARC_TOOLS_PARC_COMPILESTATS_H
