//===- liveness.cpp - Telling a stopped or dead peer from a slow one ------===//

#include "liveness.h"

#include "comm_common.h"
#include "status.h"

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <unistd.h>

namespace parc::rt {

namespace {

/// A peer's state from /proc/<pid>/stat: 'T'/'t' stopped, 'Z'/'X' dead,
/// '?' gone (no such process), else running or sleeping.
char processState(int pid) {
  char path[64];
  std::snprintf(path, sizeof(path), "/proc/%d/stat", pid);
  std::ifstream in(path);
  std::string text;
  if (!in || !std::getline(in, text))
    return '?';
  // "pid (comm) S ...": comm may hold ')' and spaces; the state follows
  // the last ')'.
  const size_t close = text.rfind(')');
  return close == std::string::npos || close + 2 >= text.size()
             ? '?'
             : text[close + 2];
}

const char *describe(char state) {
  switch (state) {
  case 'T':
  case 't':
    return "stopped";
  default:
    return "gone (exited or killed)";
  }
}

} // namespace

void Liveness::configure(int self, const std::vector<int> &pids,
                         const std::vector<std::string> &nodes,
                         double seconds) {
  self_ = self;
  seconds_ = seconds;
  peers_.clear();
  if (seconds <= 0 || nodes[size_t(self)].empty())
    return;
  for (size_t r = 0; r < pids.size(); ++r)
    if (int(r) != self && nodes[r] == nodes[size_t(self)])
      peers_.push_back({int(r), pids[r]});
}

parc_rt_status_t Liveness::check(const std::string &what, int commSize) {
  if (peers_.empty())
    return PARC_RT_OK;
  const double t = now();
  if (t < nextSample_)
    return PARC_RT_OK;
  nextSample_ = t + 1.0;
  for (Peer &p : peers_) {
    const char state = processState(p.pid);
    const bool lost = state == 'T' || state == 't' || state == 'Z' ||
                      state == 'X' || state == '?';
    if (!lost) {
      p.since = -1;
      continue;
    }
    if (p.since < 0)
      p.since = t;
    if (t - p.since >= seconds_)
      return fail(PARC_RT_TIMEOUT,
                  "%s on a communicator of %d ranks: world rank %d (pid %d) "
                  "has been %s for %.0f s while world rank %d waited; ending "
                  "the job (parc-run --liveness-timeout, PARC_RT_LIVENESS_S, "
                  "sets the limit)",
                  what.c_str(), commSize, p.rank, p.pid, describe(state),
                  t - p.since, self_);
  }
  return PARC_RT_OK;
}

std::string Liveness::nodeIdentity() {
  std::string boot;
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::getline(in, boot);
  char ns[128] = {0};
  const ssize_t n = readlink("/proc/self/ns/pid", ns, sizeof(ns) - 1);
  if (boot.empty() || n <= 0)
    return {}; // unknown: watch no one
  return boot + "/" + std::string(ns, size_t(n));
}

double livenessFromEnv() {
  const char *env = std::getenv("PARC_RT_LIVENESS_S");
  if (!env || !*env)
    return 30.0;
  char *end = nullptr;
  const double v = std::strtod(env, &end);
  if (end == env || *end != '\0' || !(v >= 0)) {
    std::fprintf(stderr,
                 "parc: ignoring PARC_RT_LIVENESS_S='%s' (not a number of "
                 "seconds >= 0); using 30\n",
                 env);
    return 30.0;
  }
  return v;
}

} // namespace parc::rt
