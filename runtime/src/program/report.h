//===- report.h - latency, throughput and communication of a run -*- C++
//-*-===//
//
// Rank 0's summary of the timed forward passes: latency statistics over the
// runs (each run is timed between barriers, so it is the slowest rank's),
// tokens per second, and per rank the mean of each measured figure per
// forward. Every figure is printed with the statistic it is; with
// PARC_RT_STATS=PATH the same figures (and each run's time) are written as
// JSON to PATH, which `parc-run --json` reads.
//
//===----------------------------------------------------------------------===//
#ifndef PARC_RT_PROGRAM_REPORT_H
#define PARC_RT_PROGRAM_REPORT_H

#include "parc/runtime.h"

#include <cstdint>
#include <string>
#include <vector>

namespace parc::rt {

/// One rank's means per timed forward in milliseconds; negative: not
/// measured (forward and own work are measured with pipeline stages,
/// communication on backends that time it).
struct RankFigures {
  std::string label;
  double forwardMs = -1, ownWorkMs = -1;
  /// Wall time with at least one request outstanding, and of it the time
  /// compute did not hide (in start calls and blocked in waits).
  double commInFlightMs = -1, commExposedMs = -1;
  /// Once per run, not per forward: getting the weights ready (open, map,
  /// check, upload to the device, and the packing of packed layouts, which
  /// the first forward triggers); of it the packing; the first forward's
  /// wall time on this rank without that packing.
  double loadMs = -1, packMs = -1, firstForwardMs = -1;
};

struct RunReport {
  long runs = 0, warmup = 0;
  std::vector<double> timesMs; // one per timed run
  /// Tokens per forward (batch x seq of the token-id input, every replica
  /// included); 0 when the program takes no integer input of rank >= 2.
  int64_t tokens = 0;
  std::string tokenInput;
  std::vector<int64_t> tokenShape;
  std::vector<RankFigures> ranks;
};

/// Latency statistics of a run; percentiles are nearest-rank (the
/// smallest time with at least p% of the runs at or below it).
struct LatencyStats {
  double min = 0, p50 = 0, p90 = 0, p99 = 0, mean = 0;
};
LatencyStats latencyStats(std::vector<double> timesMs);

/// Every rank's `mine` (the same number of figures on each), rank r's at
/// [r * mine.size()] of `all`: a collective, every rank of `world` calls it.
parc_rt_status_t gatherPerRank(parc_rt_comm_t *world,
                               const std::vector<double> &mine,
                               std::vector<double> &all);

/// Prints the report's lines on stdout.
void printReport(const RunReport &report);
/// Writes the report as JSON to `path`; false on an I/O error.
bool writeReport(const RunReport &report, const std::string &path);

} // namespace parc::rt

#endif // PARC_RT_PROGRAM_REPORT_H
