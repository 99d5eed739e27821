//===- trace.h - timeline and pipeline bubble of a run ----------*- C++ -*-===//
//
// What a rank did during its timed forward passes: each kernel's span (the
// time since the previous check, so kernels are back to back) on a compute
// or a communication track. PARC_RT_TRACE=PATH writes them as Chrome
// trace-event JSON to PATH.rank<R>.json; with pipeline stages the run also
// sums the time a rank spends on its own work, from which rank 0 reports the
// measured bubble.
//
//===----------------------------------------------------------------------===//
#ifndef PARC_RT_PROGRAM_TRACE_H
#define PARC_RT_PROGRAM_TRACE_H

#include <chrono>
#include <cstdio>
#include <string>
#include <vector>

namespace parc::rt {

class Trace {
public:
  /// Reads PARC_RT_TRACE; `measure`: keep the busy-time sums.
  void configure(bool measure);
  bool enabled() const { return !path.empty() || measure; }
  /// Marks the start and end of one forward pass (`timed`: counted).
  void beginForward(bool timed);
  /// The forward function returned: later checks are the driver's own.
  void stopRecording() { active = false; }
  void endForward(bool timed);
  /// One kernel ended now: `what` is null for compute.
  void record(const char *node, const char *what);
  /// Seconds per timed forward, and of them the time spent on the rank's
  /// own work (everything but waiting for pipeline sends and receives).
  double forwardSeconds() const { return forward; }
  double busySeconds() const { return busy; }
  /// Writes PATH.rank<rank>.json if tracing; false on an I/O error.
  bool write(int rank, const std::string &label) const;

private:
  struct Event {
    std::string name;
    int track;              // 0 compute, 1 communication
    double start, duration; // microseconds
  };
  static double now();

  std::string path;
  bool measure = false, active = false;
  double last = 0, begin = 0, forward = 0, busy = 0;
  std::vector<Event> events;
};

Trace &trace();

} // namespace parc::rt

#endif // PARC_RT_PROGRAM_TRACE_H
