//===- moe_report.h - routing statistics of MoE layers ----------*- C++ -*-===//
//
// Backend-independent: each backend's MoE kernels record what their last
// call of every layer routed, and parc_rt_moe_report_write (moe_report.cpp)
// writes it out for the per-run report.
//
//===----------------------------------------------------------------------===//
#ifndef PARC_RUNTIME_MOE_REPORT_H
#define PARC_RUNTIME_MOE_REPORT_H

#include <cstdint>
#include <vector>

namespace parc::rt {

struct MoeLayerStats {
  std::vector<int64_t> perExpert; // chosen (token, expert) pairs, all ranks
  std::vector<int64_t> perRank;   // pairs each rank's experts computed
  int64_t dropped = 0;
  int64_t capacity = 0;
  int64_t bytesSent = 0; // this rank's all-to-all payload, both directions
};

/// Replaces the statistics of `layer` (thread-safe).
void recordMoeStats(const char *layer, MoeLayerStats stats);

} // namespace parc::rt

#endif // PARC_RUNTIME_MOE_REPORT_H
