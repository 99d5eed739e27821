//===- liveness.cpp - Heartbeats between the ranks over TCP ---------------===//

#include "liveness.h"

#include "comm_common.h"
#include "status.h"

#include <algorithm>
#include <arpa/inet.h>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fcntl.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <random>
#include <sys/resource.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>
#include <vector>

namespace parc::rt {

namespace {

//===----------------------------------------------------------------------===//
// The wire: every message is 16 bytes, a kind, a flag, two spare bytes and
// three big-endian words (a rank and two values).
//===----------------------------------------------------------------------===//

enum Kind : unsigned char {
  kJoin = 'J',   // rank -> 0: rank, token
  kAccept = 'A', // 0 -> rank: token
  kBeat = 'H',   // either way: alive
  kLost = 'L',   // 0 -> rank: rank lost, flag: exited, a: seconds silent
  kBye = 'B',    // either way: finished, stop watching me
};
constexpr size_t kMessageSize = 16;
/// A connection that has not joined within this is not one of the ranks.
constexpr double kJoinSeconds = 10;
/// A gap between this thread's own wake-ups that means it was not running.
constexpr double kStallSeconds = 1;

struct Message {
  unsigned char kind = 0, flag = 0;
  uint32_t rank = 0, a = 0, b = 0;
};

void put32(unsigned char *p, uint32_t v) {
  for (int i = 0; i < 4; ++i)
    p[i] = static_cast<unsigned char>(v >> (24 - 8 * i));
}

uint32_t get32(const unsigned char *p) {
  return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 |
         p[3];
}

Message withToken(Kind kind, uint32_t rank, uint64_t token) {
  return {kind, 0, rank, uint32_t(token >> 32), uint32_t(token)};
}

uint64_t tokenOf(const Message &m) { return uint64_t(m.a) << 32 | m.b; }

/// Never blocks and never raises SIGPIPE: a peer that is gone is seen when
/// its socket reads as closed.
bool sendMessage(int fd, const Message &m) {
  unsigned char bytes[kMessageSize] = {m.kind, m.flag};
  put32(bytes + 4, m.rank);
  put32(bytes + 8, m.a);
  put32(bytes + 12, m.b);
  return send(fd, bytes, sizeof(bytes), MSG_NOSIGNAL | MSG_DONTWAIT) ==
         ssize_t(sizeof(bytes));
}

/// Reads what `fd` holds, appending whole messages to `out` (a partial one
/// waits in `pending`); false once the peer closed or the socket failed.
bool receive(int fd, std::string &pending, std::vector<Message> &out) {
  char buffer[512];
  ssize_t n = recv(fd, buffer, sizeof(buffer), MSG_DONTWAIT);
  if (n == 0 ||
      (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR))
    return false;
  if (n > 0)
    pending.append(buffer, size_t(n));
  size_t used = 0;
  for (; pending.size() - used >= kMessageSize; used += kMessageSize) {
    const auto *p = reinterpret_cast<const unsigned char *>(&pending[used]);
    out.push_back({p[0], p[1], get32(p + 4), get32(p + 8), get32(p + 12)});
  }
  pending.erase(0, used);
  return true;
}

void closeFd(int &fd) {
  if (fd >= 0)
    close(fd);
  fd = -1;
}

//===----------------------------------------------------------------------===//
// Start-up: rank 0 listens on every interface; the others try each of its
// addresses at once, and keep the first that answers their join with the
// job's token.
//===----------------------------------------------------------------------===//

/// An IPv4 listening socket on an ephemeral port of every interface.
int listenAnywhere(uint16_t &port, std::string &error) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_ANY);
  socklen_t length = sizeof(a);
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr *>(&a), length) != 0 ||
      listen(fd, 256) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr *>(&a), &length) != 0) {
    error = std::strerror(errno);
    if (fd >= 0)
      close(fd);
    return -1;
  }
  port = ntohs(a.sin_port);
  return fd;
}

/// Rank 0 holds a socket per rank (a few per rank while they join): raise
/// the soft limit on open files to fit `size` ranks, as far as the hard
/// limit allows.
void fitDescriptors(int size) {
  rlimit r;
  const rlim_t want = rlim_t(size) * 8 + 256;
  if (getrlimit(RLIMIT_NOFILE, &r) == 0 && r.rlim_cur < want) {
    r.rlim_cur = std::min(r.rlim_max, want);
    setrlimit(RLIMIT_NOFILE, &r);
  }
}

/// This host's IPv4 addresses for `at.hosts`: the interfaces that are up,
/// then loopback (for ranks on this node, or a node with no network).
void listAddresses(LivenessEndpoint &at) {
  const size_t slots = sizeof(at.hosts) / sizeof(at.hosts[0]);
  size_t n = 0;
  ifaddrs *list = nullptr;
  if (getifaddrs(&list) == 0) {
    for (ifaddrs *i = list; i && n + 1 < slots; i = i->ifa_next)
      if (i->ifa_addr && i->ifa_addr->sa_family == AF_INET &&
          (i->ifa_flags & IFF_UP) && !(i->ifa_flags & IFF_LOOPBACK))
        inet_ntop(AF_INET,
                  &reinterpret_cast<sockaddr_in *>(i->ifa_addr)->sin_addr,
                  at.hosts[n++], sizeof(at.hosts[0]));
    freeifaddrs(list);
  }
  std::snprintf(at.hosts[n], sizeof(at.hosts[0]), "127.0.0.1");
}

/// A non-blocking connect to `host`:`port` under way, or -1.
int startConnect(const char *host, uint16_t port) {
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(port);
  if (inet_pton(AF_INET, host, &a.sin_addr) != 1)
    return -1;
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd >= 0 &&
      connect(fd, reinterpret_cast<sockaddr *>(&a), sizeof(a)) != 0 &&
      errno != EINPROGRESS)
    closeFd(fd);
  return fd;
}

/// One address being tried by dial().
struct Attempt {
  int fd = -1;
  bool joined = false; // connected and sent the join
  std::string in;
};

/// Advances `x` on a poll event: sends the join once connected, then
/// waits for rank 0's accept. True when accepted; `x.fd` < 0 once failed.
bool advance(Attempt &x, int self, uint64_t token) {
  if (!x.joined) {
    int error = 0;
    socklen_t length = sizeof(error);
    getsockopt(x.fd, SOL_SOCKET, SO_ERROR, &error, &length);
    x.joined = error == 0 && sendMessage(x.fd, withToken(kJoin, self, token));
    if (!x.joined)
      closeFd(x.fd);
    return false;
  }
  std::vector<Message> got;
  const bool open = receive(x.fd, x.in, got);
  if (!got.empty() && got[0].kind == kAccept && tokenOf(got[0]) == token)
    return true;
  if (!open || !got.empty())
    closeFd(x.fd);
  return false;
}

/// A connection to rank 0 that accepted rank `self` (with any bytes read
/// past the accept), or fd -1 after `seconds`.
Attempt dial(int self, const LivenessEndpoint &at, double seconds) {
  std::vector<Attempt> tries;
  for (const auto &host : at.hosts)
    if (host[0])
      if (int fd = startConnect(host, at.port); fd >= 0)
        tries.push_back({fd});
  Attempt winner;
  for (const double end = now() + seconds; winner.fd < 0 && now() < end;) {
    std::vector<pollfd> fds;
    for (const Attempt &x : tries)
      fds.push_back({x.fd, short(x.joined ? POLLIN : POLLOUT), 0});
    if (fds.empty())
      break;
    poll(fds.data(), fds.size(), 50);
    for (size_t i = 0; i < tries.size() && winner.fd < 0; ++i)
      if (fds[i].revents && advance(tries[i], self, at.token))
        std::swap(winner, tries[i]);
    tries.erase(std::remove_if(tries.begin(), tries.end(),
                               [](const Attempt &x) { return x.fd < 0; }),
                tries.end());
  }
  for (Attempt &x : tries)
    closeFd(x.fd);
  return winner;
}

std::string hostList(const LivenessEndpoint &at) {
  std::string s;
  for (const auto &host : at.hosts)
    if (host[0])
      s += (s.empty() ? "" : ", ") + std::string(host);
  return s;
}

} // namespace

//===----------------------------------------------------------------------===//
// The heartbeat thread. Rank 0 holds a connection per rank; every other
// rank holds one, to rank 0.
//===----------------------------------------------------------------------===//

struct Liveness::State {
  struct Peer {
    int fd = -1;
    int rank = -1;   // -1: connected, not yet joined (rank 0's side)
    double last = 0; // when it was last heard from
    std::string in;  // the start of a message still arriving
    bool done = false;
  };

  int self = 0, size = 1, joined = 0;
  double seconds = 0, interval = 1;
  uint64_t token = 0;
  int listener = -1, wake[2] = {-1, -1};
  std::vector<Peer> peers;
  std::thread thread;
  std::atomic<bool> goodbye{false};
  // The first lost rank; its fields are written before `lost` is set.
  std::atomic<bool> lost{false};
  int lostRank = -1;
  bool lostExited = false;
  double lostSeconds = 0;

  ~State();
  parc_rt_status_t start();
  void run();
  void accept(double t);
  void read(Peer &p, double t);
  void handle(Peer &p, const Message &m, double t);
  void join(Peer &p, const Message &m, double t);
  void sweep(double t);
  void report(int rank, bool exited, double silent);
};

Liveness::State::~State() {
  for (Peer &p : peers)
    closeFd(p.fd);
  closeFd(listener);
  closeFd(wake[0]);
  closeFd(wake[1]);
}

parc_rt_status_t Liveness::State::start() {
  interval = std::min(1.0, seconds / 4);
  if (pipe(wake) != 0)
    return fail(PARC_RT_COMM_ERROR, "init: liveness: pipe: %s",
                std::strerror(errno));
  // The thread takes no signals: they stay with the rank's own threads.
  sigset_t all, old;
  sigfillset(&all);
  pthread_sigmask(SIG_BLOCK, &all, &old);
  try {
    thread = std::thread([this] { run(); });
  } catch (const std::exception &e) {
    pthread_sigmask(SIG_SETMASK, &old, nullptr);
    return fail(PARC_RT_COMM_ERROR, "init: liveness: %s", e.what());
  }
  pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return PARC_RT_OK;
}

void Liveness::State::run() {
  for (double nextBeat = 0, woke = now();;) {
    std::vector<pollfd> fds = {{wake[0], POLLIN, 0}, {listener, POLLIN, 0}};
    for (const Peer &p : peers)
      fds.push_back({p.fd, POLLIN, 0});
    const int ms = int(std::max(0.0, nextBeat - now()) * 1000) + 1;
    if (poll(fds.data(), fds.size(), ms) < 0) {
      // Nothing happened (never seen): keep beating, lest we be reported.
      for (pollfd &f : fds)
        f.revents = 0;
      if (errno != EINTR)
        std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (fds[0].revents)
      break; // stop()
    const double t = now();
    // This thread itself did not run (the whole job was stopped, or this
    // node stalled): it cannot tell who fell silent, so it starts afresh.
    if (t - woke > interval + kStallSeconds)
      for (Peer &p : peers)
        p.last = t;
    woke = t;
    for (size_t i = 2; i < fds.size(); ++i)
      if (fds[i].revents)
        read(peers[i - 2], t);
    if (fds[1].revents)
      accept(t);
    if (t >= nextBeat) {
      for (const Peer &p : peers)
        if (p.rank >= 0)
          sendMessage(p.fd, {kBeat});
      nextBeat = t + interval;
    }
    sweep(t);
  }
  for (const Peer &p : peers)
    if (goodbye && p.rank >= 0)
      sendMessage(p.fd, {kBye});
}

void Liveness::State::accept(double t) {
  for (;;) {
    int fd = accept4(listener, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR &&
        errno != ECONNABORTED)
      closeFd(listener); // out of descriptors: the rest cannot join, so
                         // start-up turns the check off for every rank
    if (fd < 0)
      return;
    Peer p;
    p.fd = fd;
    p.last = t;
    peers.push_back(std::move(p));
  }
}

void Liveness::State::read(Peer &p, double t) {
  std::vector<Message> got;
  const bool open = receive(p.fd, p.in, got);
  for (const Message &m : got)
    if (!p.done)
      handle(p, m, t);
  if (!open && !p.done) {
    if (p.rank >= 0)
      report(p.rank, /*exited=*/true, 0);
    p.done = true;
  }
}

void Liveness::State::handle(Peer &p, const Message &m, double t) {
  if (p.rank < 0)
    return join(p, m, t);
  switch (m.kind) {
  case kBeat:
    p.last = t;
    return;
  case kLost: // only rank 0 relays
    if (self != 0)
      report(int(m.rank), m.flag != 0, double(m.a));
    return;
  case kBye:
    p.done = true; // finished: no longer watched
    return;
  default:
    return; // from a newer or broken peer: ignored
  }
}

/// Rank 0: a connection becomes rank r's on a join with this job's token,
/// unless r already has one (the rank tried several of our addresses).
void Liveness::State::join(Peer &p, const Message &m, double t) {
  const int r = int(m.rank);
  bool taken = r <= 0 || r >= size;
  for (const Peer &q : peers)
    taken = taken || (q.rank == r && !q.done);
  if (m.kind != kJoin || tokenOf(m) != token || taken) {
    p.done = true;
    return;
  }
  p.rank = r;
  p.last = t;
  sendMessage(p.fd, withToken(kAccept, 0, token));
  if (++joined == size - 1)
    closeFd(listener); // everyone is here: no one else may connect
}

/// Reports peers silent for the limit, drops strangers that never joined,
/// and closes what is done.
void Liveness::State::sweep(double t) {
  for (Peer &p : peers) {
    if (p.done)
      continue;
    if (p.rank < 0 && t - p.last > kJoinSeconds)
      p.done = true;
    else if (p.rank >= 0 && t - p.last >= seconds)
      report(p.rank, /*exited=*/false, t - p.last);
  }
  for (Peer &p : peers)
    if (p.done)
      closeFd(p.fd);
  peers.erase(std::remove_if(peers.begin(), peers.end(),
                             [](const Peer &p) { return p.fd < 0; }),
              peers.end());
}

/// Records the first lost rank; rank 0 tells every other rank.
void Liveness::State::report(int rank, bool exited, double silent) {
  if (lost.load(std::memory_order_relaxed))
    return;
  lostRank = rank;
  lostExited = exited;
  lostSeconds = silent;
  lost.store(true, std::memory_order_release);
  if (self != 0)
    return;
  for (const Peer &p : peers)
    if (p.rank >= 0 && p.rank != rank && !p.done)
      sendMessage(p.fd, {kLost, exited, uint32_t(rank), uint32_t(silent)});
}

//===----------------------------------------------------------------------===//
// Liveness
//===----------------------------------------------------------------------===//

Liveness::Liveness() = default;

Liveness::~Liveness() { stop(); }

parc_rt_status_t Liveness::serve(int size, double seconds,
                                 LivenessEndpoint &out) {
  stop(false);
  auto s = std::make_unique<State>();
  std::string error;
  fitDescriptors(size);
  s->listener = listenAnywhere(out.port, error);
  if (s->listener < 0)
    return fail(PARC_RT_COMM_ERROR,
                "init: liveness: rank 0 cannot listen on a TCP port: %s",
                error.c_str());
  s->size = size;
  s->seconds = out.seconds = seconds;
  std::random_device random;
  s->token = out.token = uint64_t(random()) << 32 | random();
  listAddresses(out);
  PARC_RT_RETURN_IF_ERROR(s->start());
  state_ = std::move(s);
  return PARC_RT_OK;
}

parc_rt_status_t Liveness::join(int self, const LivenessEndpoint &at,
                                double connectSeconds) {
  stop(false);
  auto s = std::make_unique<State>();
  s->self = self;
  s->seconds = at.seconds;
  Attempt joined = dial(self, at, connectSeconds);
  State::Peer zero;
  zero.fd = joined.fd;
  zero.in = std::move(joined.in);
  if (zero.fd < 0)
    return fail(PARC_RT_COMM_ERROR,
                "init: liveness: world rank %d cannot reach rank 0's "
                "heartbeat port %u at %s within %g s",
                self, unsigned(at.port), hostList(at).c_str(), connectSeconds);
  zero.rank = 0;
  zero.last = now();
  s->peers.push_back(std::move(zero));
  PARC_RT_RETURN_IF_ERROR(s->start());
  state_ = std::move(s);
  return PARC_RT_OK;
}

void Liveness::stop(bool goodbye) {
  if (!state_)
    return;
  State &s = *state_;
  if (s.thread.joinable()) {
    s.goodbye = goodbye;
    const char byte = 0;
    if (write(s.wake[1], &byte, 1) != 1) {
      s.thread.detach(); // cannot be woken: it and its state end with us
      (void)state_.release();
      return;
    }
    s.thread.join();
  }
  state_.reset();
}

parc_rt_status_t Liveness::check(const std::string &what, int commSize) {
  if (!state_ || !state_->lost.load(std::memory_order_acquire))
    return PARC_RT_OK;
  const State &s = *state_;
  if (s.lostExited)
    return fail(PARC_RT_TIMEOUT,
                "%s on a communicator of %d ranks: world rank %d exited (its "
                "heartbeat connection closed) while world rank %d waited; "
                "ending the job",
                what.c_str(), commSize, s.lostRank, s.self);
  return fail(PARC_RT_TIMEOUT,
              "%s on a communicator of %d ranks: world rank %d has sent no "
              "heartbeat for %.0f s (stopped, hung or unreachable) while "
              "world rank %d waited; ending the job (parc-run "
              "--liveness-timeout, PARC_RT_LIVENESS_S, sets the limit)",
              what.c_str(), commSize, s.lostRank, s.lostSeconds, s.self);
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
