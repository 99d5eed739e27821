//===- LivenessTest.cpp - stopped and dead peers are told from slow ones --===//

#include "liveness.h"

#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <string>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace parc::rt;

namespace {

/// A child process that sleeps until killed: a peer that is alive but idle.
pid_t sleeper() {
  pid_t pid = fork();
  if (pid == 0) {
    for (;;)
      pause();
  }
  return pid;
}

/// Checks until the liveness check fails or `seconds` pass; the message.
std::string firstFailure(Liveness &l, double seconds) {
  auto end = std::chrono::steady_clock::now() +
             std::chrono::duration<double>(seconds);
  while (std::chrono::steady_clock::now() < end) {
    if (l.check("all_reduce(sum, 4 x f32)", 2) != PARC_RT_OK)
      return parc_rt_last_error();
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return "";
}

TEST(Liveness, AnIdlePeerIsAlive) {
  pid_t peer = sleeper();
  Liveness l;
  l.configure(0, {int(getpid()), int(peer)}, {"node", "node"}, 1.0);
  EXPECT_EQ(firstFailure(l, 2.5), "");
  kill(peer, SIGKILL);
  waitpid(peer, nullptr, 0);
}

TEST(Liveness, AStoppedPeerIsReportedAfterTheLimit) {
  pid_t peer = sleeper();
  kill(peer, SIGSTOP);
  Liveness l;
  l.configure(0, {int(getpid()), int(peer)}, {"node", "node"}, 1.0);
  const auto start = std::chrono::steady_clock::now();
  const std::string message = firstFailure(l, 5);
  const double waited = std::chrono::duration<double>(
                            std::chrono::steady_clock::now() - start)
                            .count();
  EXPECT_NE(message.find("all_reduce(sum, 4 x f32) on a communicator of 2 "
                         "ranks: world rank 1 (pid " +
                         std::to_string(peer) + ") has been stopped for"),
            std::string::npos)
      << message;
  EXPECT_GE(waited, 0.9);
  kill(peer, SIGKILL);
  waitpid(peer, nullptr, 0);
}

TEST(Liveness, ADeadPeerIsReported) {
  pid_t peer = sleeper();
  kill(peer, SIGKILL);
  waitpid(peer, nullptr, 0);
  Liveness l;
  l.configure(0, {int(getpid()), int(peer)}, {"node", "node"}, 1.0);
  EXPECT_NE(firstFailure(l, 5).find("has been gone (exited or killed)"),
            std::string::npos);
}

TEST(Liveness, PeersElsewhereOrOffAreNotWatched) {
  pid_t peer = sleeper();
  kill(peer, SIGSTOP);
  Liveness other, off;
  other.configure(0, {int(getpid()), int(peer)}, {"node", "other"}, 1.0);
  off.configure(0, {int(getpid()), int(peer)}, {"node", "node"}, 0);
  EXPECT_EQ(firstFailure(other, 2), "");
  EXPECT_EQ(firstFailure(off, 0.5), "");
  kill(peer, SIGKILL);
  waitpid(peer, nullptr, 0);
}

} // namespace
