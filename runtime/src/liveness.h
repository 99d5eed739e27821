//===- liveness.h - A stopped or dead peer, not a slow one ------*- C++ -*-===//
//
// A collective whose peer was stopped (SIGSTOP, a debugger), hung or died
// waits for the collective timeout (300 s), since MPI cannot tell a slow
// peer from a lost one. A heartbeat can, on every node, as PyTorch's
// watchdog does over its TCPStore: each rank runs a small thread that
// trades a 16-byte message with rank 0 about once a second over plain TCP
// (a star). The thread beats while its rank computes, so a busy or
// descheduled rank (more ranks than cores) is never reported; SIGSTOP
// stops every thread, so a stopped rank falls silent. Rank 0 notes when it
// last heard each rank; one silent for the liveness timeout, or whose
// connection closes before it said goodbye, is reported to every other
// rank, and a rank that stops hearing rank 0 reports rank 0. A rank waiting
// in a collective then ends the wait with an error naming the lost rank and
// the collective, and parc_rt_abort ends the job. Nothing here depends on
// the ranks sharing a node (no pids, no /proc). A rank that cannot reach
// rank 0 at start-up (connects are bounded) turns the check off for the
// job with a warning; the collective timeout then remains. A rank that has
// said goodbye (parc_rt_finalize) is no longer watched; once rank 0 has,
// no one is.
//
//===----------------------------------------------------------------------===//
#ifndef PARC_RUNTIME_LIVENESS_H
#define PARC_RUNTIME_LIVENESS_H

#include "parc/runtime.h"

#include <cstdint>
#include <memory>
#include <string>

namespace parc::rt {

/// What rank 0 publishes at start-up (one MPI_Bcast of these bytes) so that
/// the others can reach it.
struct LivenessEndpoint {
  double seconds = 0; // rank 0's limit; <= 0: the check is off
  uint64_t token = 0; // tells this job's rank 0 from any other listener
  uint16_t port = 0;
  char hosts[8][16] = {}; // IPv4 addresses (dotted), loopback last
};

class Liveness {
public:
  Liveness();
  ~Liveness(); // stop()
  Liveness(const Liveness &) = delete;
  Liveness &operator=(const Liveness &) = delete;

  /// Rank 0 of `size` ranks: listens on every interface and starts the
  /// heartbeat thread; `out` says where.
  parc_rt_status_t serve(int size, double seconds, LivenessEndpoint &out);

  /// Rank `self` > 0: connects to rank 0 at `at` (within `connectSeconds`)
  /// and starts the heartbeat thread.
  parc_rt_status_t join(int self, const LivenessEndpoint &at,
                        double connectSeconds = 10);

  /// Ends the thread and closes the connections; `goodbye`: tells the peers
  /// first that this rank finished, so that they stop watching it.
  void stop(bool goodbye = true);

  /// During a wait on `what` (a communicator of `commSize` ranks):
  /// PARC_RT_TIMEOUT, naming the rank, once one is known lost; else
  /// PARC_RT_OK. Cheap: the thread does the watching.
  parc_rt_status_t check(const std::string &what, int commSize);

  struct State;

private:
  std::unique_ptr<State> state_;
};

/// PARC_RT_LIVENESS_S, default 30 s; 0 turns the check off; a bad value is
/// reported and ignored.
double livenessFromEnv();

} // namespace parc::rt

#endif // PARC_RUNTIME_LIVENESS_H
