//===- liveness.h - A stopped or dead peer, not a slow one ------*- C++ -*-===//
//
// A collective whose peer was stopped (SIGSTOP, a debugger) or died waits
// for the collective timeout (300 s), since MPI cannot tell a slow peer from
// a lost one. The ranks on one node can: at start-up they exchange their
// process ids (with the node's boot id and pid namespace, so that only
// peers whose /proc entries this rank sees are watched), and a rank that
// waits samples its peers' states about once a second. A peer seen
// stopped or gone for the whole liveness timeout ends the wait with an
// error naming it, and parc_rt_abort ends the job. A peer that is only
// busy or descheduled (more ranks than cores) is running or sleeping, never
// stopped, so oversubscription does not trip it. Peers on other nodes are
// not watched: for them the collective timeout remains.
//
//===----------------------------------------------------------------------===//
#ifndef PARC_RUNTIME_LIVENESS_H
#define PARC_RUNTIME_LIVENESS_H

#include "parc/runtime.h"

#include <string>
#include <vector>

namespace parc::rt {

class Liveness {
public:
  /// Watches `pids[r]` for every world rank r != `self` whose `nodes[r]`
  /// equals `nodes[self]`; `seconds` <= 0 watches nothing.
  void configure(int self, const std::vector<int> &pids,
                 const std::vector<std::string> &nodes, double seconds);

  /// During a wait on `what` (a communicator of `commSize` ranks): samples
  /// the peers once a second at most; PARC_RT_TIMEOUT once one has been
  /// seen stopped or gone for the limit, else PARC_RT_OK.
  parc_rt_status_t check(const std::string &what, int commSize);

  /// This process's node identity: boot id and pid namespace.
  static std::string nodeIdentity();

private:
  struct Peer {
    int rank, pid;
    double since = -1; // first sample of the current stop; -1: running
  };
  std::vector<Peer> peers_;
  int self_ = 0;
  double seconds_ = 0, nextSample_ = 0;
};

/// PARC_RT_LIVENESS_S, default 30 s; 0 turns the check off; a bad value is
/// reported and ignored.
double livenessFromEnv();

} // namespace parc::rt

#endif // PARC_RUNTIME_LIVENESS_H
