//===- LivenessTest.cpp - stopped and dead peers are told from busy ones --===//
//
// Each peer is a forked process that runs its rank's heartbeat over real
// TCP sockets, so that it can be stopped and killed. Peers are forked
// before this process starts a heartbeat thread; they learn rank 0's
// endpoint through a pipe.
//
//===----------------------------------------------------------------------===//

#include "liveness.h"

#include <gtest/gtest.h>

#include <arpa/inet.h>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <netinet/in.h>
#include <string>
#include <sys/socket.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace parc::rt;

namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// What a forked peer does once its heartbeat runs.
enum class Then { Spin, Finish, Exit };

/// A forked rank and the pipe to or from it.
struct Peer {
  pid_t pid = -1;
  int pipe = -1;
  ~Peer() {
    if (pid > 0) {
      kill(pid, SIGKILL);
      waitpid(pid, nullptr, 0);
    }
    if (pipe >= 0)
      close(pipe);
  }
};

[[noreturn]] void behave(Liveness &l, Then then) {
  if (then == Then::Finish) {
    l.stop(/*goodbye=*/true);
    _exit(0);
  }
  if (then == Then::Exit)
    _exit(0); // no goodbye: the connection just closes
  // Busy computing, never in a collective: the heartbeat thread beats.
  for (volatile unsigned long i = 0;; i = i + 1) {
  }
}

/// Forks rank `self` > 0: it reads rank 0's endpoint from the pipe, joins,
/// then does `then`.
void forkRank(Peer &p, int self, Then then) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  p.pid = fork();
  if (p.pid == 0) {
    close(fds[1]);
    LivenessEndpoint at;
    if (read(fds[0], &at, sizeof(at)) != ssize_t(sizeof(at)))
      _exit(2);
    Liveness l;
    if (l.join(self, at) != PARC_RT_OK)
      _exit(3);
    behave(l, then);
  }
  close(fds[0]);
  p.pipe = fds[1];
}

void tell(const Peer &p, const LivenessEndpoint &at) {
  ASSERT_EQ(write(p.pipe, &at, sizeof(at)), ssize_t(sizeof(at)));
}

/// Forks rank 0 of `size`, which serves and sends its endpoint back, then
/// idles, or (`exitOnLoss`) checks and exits with 4 once a rank is lost.
void forkRankZero(Peer &p, int size, double seconds, LivenessEndpoint &at,
                  bool exitOnLoss = false) {
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  p.pid = fork();
  if (p.pid == 0) {
    close(fds[0]);
    Liveness l;
    LivenessEndpoint mine;
    if (l.serve(size, seconds, mine) != PARC_RT_OK ||
        write(fds[1], &mine, sizeof(mine)) != ssize_t(sizeof(mine)))
      _exit(2);
    for (;;)
      if (!exitOnLoss)
        pause();
      else if (l.check("barrier", size) != PARC_RT_OK)
        _exit(4);
      else
        usleep(20000);
  }
  close(fds[1]);
  p.pipe = fds[0];
  ASSERT_EQ(read(p.pipe, &at, sizeof(at)), ssize_t(sizeof(at)));
}

/// Checks until the liveness check fails or `seconds` pass; the message.
std::string firstFailure(Liveness &l, double seconds) {
  const auto start = Clock::now();
  while (since(start) < seconds) {
    if (l.check("all_reduce(sum, 4 x f32)", 2) != PARC_RT_OK)
      return parc_rt_last_error();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return "";
}

/// Rank 0 here, rank 1 forked, a 1 s limit.
struct Star {
  Peer one;
  Liveness zero;
  explicit Star(Then then) {
    forkRank(one, 1, then);
    LivenessEndpoint at;
    EXPECT_EQ(zero.serve(2, 1.0, at), PARC_RT_OK) << parc_rt_last_error();
    tell(one, at);
  }
};

const char *kSilent = "all_reduce(sum, 4 x f32) on a communicator of 2 ranks: "
                      "world rank 1 has sent no heartbeat for ";

TEST(Liveness, ABusyPeerIsAlive) {
  Star s(Then::Spin);
  EXPECT_EQ(firstFailure(s.zero, 3.5), "");
  // Still spinning, so it did join (a failed join exits).
  EXPECT_EQ(waitpid(s.one.pid, nullptr, WNOHANG), 0);
}

TEST(Liveness, AStoppedPeerIsReportedAfterTheLimit) {
  Star s(Then::Spin);
  EXPECT_EQ(firstFailure(s.zero, 1.5), "");
  kill(s.one.pid, SIGSTOP);
  const auto start = Clock::now();
  const std::string message = firstFailure(s.zero, 6);
  EXPECT_NE(message.find(kSilent), std::string::npos) << message;
  EXPECT_NE(message.find("(stopped, hung or unreachable) while world rank 0 "
                         "waited; ending the job (parc-run "
                         "--liveness-timeout, PARC_RT_LIVENESS_S, sets the "
                         "limit)"),
            std::string::npos)
      << message;
  EXPECT_GE(since(start), 0.5);
  EXPECT_LT(since(start), 3.0);
}

TEST(Liveness, AKilledPeerIsReportedAtOnce) {
  Star s(Then::Spin);
  EXPECT_EQ(firstFailure(s.zero, 1.2), "");
  kill(s.one.pid, SIGKILL);
  const auto start = Clock::now();
  const std::string message = firstFailure(s.zero, 6);
  EXPECT_NE(message.find("world rank 1 exited (its heartbeat connection "
                         "closed) while world rank 0 waited; ending the job"),
            std::string::npos)
      << message;
  EXPECT_LT(since(start), 1.0);
}

TEST(Liveness, APeerThatExitsWithoutGoodbyeIsReported) {
  Star s(Then::Exit);
  EXPECT_NE(firstFailure(s.zero, 4).find("world rank 1 exited"),
            std::string::npos);
}

TEST(Liveness, APeerThatSaidGoodbyeIsNoLongerWatched) {
  Star s(Then::Finish);
  EXPECT_EQ(firstFailure(s.zero, 2.5), "");
}

TEST(Liveness, ALostRankZeroIsReportedByTheOthers) {
  for (int signal : {SIGSTOP, SIGKILL}) {
    Peer zero;
    LivenessEndpoint at;
    forkRankZero(zero, 2, 1.0, at);
    Liveness one;
    ASSERT_EQ(one.join(1, at), PARC_RT_OK) << parc_rt_last_error();
    EXPECT_EQ(firstFailure(one, 1.5), "");
    kill(zero.pid, signal);
    const std::string message = firstFailure(one, 6);
    EXPECT_NE(message.find(signal == SIGSTOP
                               ? "world rank 0 has sent no heartbeat for"
                               : "world rank 0 exited (its heartbeat"),
              std::string::npos)
        << message;
    EXPECT_NE(message.find("while world rank 1 waited"), std::string::npos);
  }
}

TEST(Liveness, RankZeroTellsTheOthersWhoIsLost) {
  Peer zero, one;
  LivenessEndpoint at;
  forkRankZero(zero, 3, 1.0, at);
  forkRank(one, 1, Then::Spin);
  tell(one, at);
  Liveness two;
  ASSERT_EQ(two.join(2, at), PARC_RT_OK) << parc_rt_last_error();
  EXPECT_EQ(firstFailure(two, 1.5), "");
  kill(one.pid, SIGSTOP);
  const std::string message = firstFailure(two, 6);
  EXPECT_NE(message.find("world rank 1 has sent no heartbeat for"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("while world rank 2 waited"), std::string::npos);
}

TEST(Liveness, AJobStoppedAndContinuedAsAWholeGoesOn) {
  Peer zero, one;
  LivenessEndpoint at;
  forkRankZero(zero, 2, 1.0, at, /*exitOnLoss=*/true);
  forkRank(one, 1, Then::Spin);
  tell(one, at);
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));
  kill(zero.pid, SIGSTOP);
  kill(one.pid, SIGSTOP);
  std::this_thread::sleep_for(std::chrono::seconds(3));
  kill(zero.pid, SIGCONT);
  kill(one.pid, SIGCONT);
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));
  EXPECT_EQ(waitpid(zero.pid, nullptr, WNOHANG), 0) << "rank 0 reported a loss";
  EXPECT_EQ(waitpid(one.pid, nullptr, WNOHANG), 0);
  // And it still watches: rank 1 stopped alone is reported.
  kill(one.pid, SIGSTOP);
  int status = 0;
  const auto start = Clock::now();
  while (waitpid(zero.pid, &status, WNOHANG) == 0 && since(start) < 6)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 4);
  zero.pid = -1; // reaped
}

TEST(Liveness, OffOrStoppedReportsNothing) {
  Liveness never;
  EXPECT_EQ(never.check("barrier", 2), PARC_RT_OK);
  Star s(Then::Spin);
  s.zero.stop();
  kill(s.one.pid, SIGKILL);
  EXPECT_EQ(firstFailure(s.zero, 1.5), "");
}

/// A port on loopback with nothing behind it, and one whose listener never
/// answers a join.
TEST(Liveness, JoinFailsWithinItsBound) {
  LivenessEndpoint at;
  at.seconds = 1;
  std::snprintf(at.hosts[0], sizeof(at.hosts[0]), "127.0.0.1");
  int quiet = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(a);
  ASSERT_EQ(bind(quiet, reinterpret_cast<sockaddr *>(&a), length), 0);
  ASSERT_EQ(listen(quiet, 4), 0);
  getsockname(quiet, reinterpret_cast<sockaddr *>(&a), &length);
  at.port = ntohs(a.sin_port);
  Liveness l;
  auto start = Clock::now();
  EXPECT_EQ(l.join(1, at, 1.0), PARC_RT_COMM_ERROR);
  EXPECT_LT(since(start), 2.0);
  EXPECT_EQ(std::string(parc_rt_last_error()),
            "init: liveness: world rank 1 cannot reach rank 0's heartbeat "
            "port " +
                std::to_string(at.port) + " at 127.0.0.1 within 1 s");
  close(quiet); // now refused
  start = Clock::now();
  EXPECT_EQ(l.join(1, at, 5.0), PARC_RT_COMM_ERROR);
  EXPECT_LT(since(start), 1.0);
}

} // namespace
