//===- profile.h - where a forward's time goes (PARC_RT_PROFILE) -*- C++ -*-===//
//
// PARC_RT_PROFILE=1: the time of each ONNX node (the 25 slowest; =all:
// every one) and of each op kind over the timed forward passes, the device
// synchronised after every node (so each is its own time, launch included,
// not the overlapped schedule of a normal run). GEMM and attention kinds also print their achieved GFLOP/s against
// the peak of a large square GEMM through the same parc_rt_gemm path,
// measured in the same process after the forwards; the one-time weight
// packing of the first forward is reported on its own line.
//
//===----------------------------------------------------------------------===//
#ifndef PARC_RT_PROGRAM_PROFILE_H
#define PARC_RT_PROGRAM_PROFILE_H

#include <chrono>
#include <string>
#include <vector>

namespace parc::rt {

class Profile {
public:
  /// Reads PARC_RT_PROFILE.
  void configure();
  bool active() const { return active_; }
  void start();
  void stop();
  /// A node ended now; `what` is set for a communication call.
  void record(const char *node, const char *what);
  /// Rank 0's tables (nothing unless enabled).
  void print();

private:
  struct Kind {
    std::string name; // "gemm", "attention", ... plus the dtype for GEMMs
    double ms = 0, flops = 0;
    int dtype = -1; // the GEMM dtype whose peak applies, -1: none
  };
  bool enabled = false, active_ = false;
  bool allNodes = false; // PARC_RT_PROFILE=all: every node, not the 25 slowest
  std::chrono::steady_clock::time_point last;
  std::vector<std::pair<std::string, double>> nodes; // first-seen order
  std::vector<Kind> kinds;
  long runs = 0;
};

Profile &profile();

} // namespace parc::rt

#endif // PARC_RT_PROGRAM_PROFILE_H
