//===- comm_common.h - What every comm backend checks the same way -*- C++ -*-===//
//
// Argument checks, operation descriptions for messages, polling with a
// deadline and the collective timeout setting, shared by the MPI (cpu) and
// NCCL (cuda) backends so that both accept and reject the same calls and
// report a bad call or a hung peer in the same words. A backend keeps only
// how it issues and completes an operation.
//
//===----------------------------------------------------------------------===//
#ifndef PARC_RUNTIME_COMM_COMMON_H
#define PARC_RUNTIME_COMM_COMMON_H

#include "status.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <sched.h>
#include <string>
#include <vector>

namespace parc::rt {

/// "all_reduce(sum, 1024 x f32)", for messages.
inline std::string describe(const char *op, int64_t count,
                            parc_rt_dtype_t dtype,
                            const char *detail = nullptr) {
  std::string s = std::string(op) + "(";
  if (detail)
    s += std::string(detail) + ", ";
  return s + std::to_string(count) + " x " + parc_rt_dtype_name(dtype) + ")";
}

inline const char *reduceOpName(parc_rt_reduce_op_t op) {
  switch (op) {
  case PARC_RT_REDUCE_SUM:
    return "sum";
  case PARC_RT_REDUCE_MAX:
    return "max";
  case PARC_RT_REDUCE_MIN:
    return "min";
  }
  return "invalid";
}

/// dtype valid, 0 <= count <= maxCount, buffer set when count > 0.
inline parc_rt_status_t checkBuffer(const std::string &what,
                                    parc_rt_dtype_t dtype, int64_t count,
                                    const void *buffer, const char *name,
                                    int64_t maxCount) {
  if (parc_rt_dtype_size(dtype) == 0)
    return fail(PARC_RT_INVALID_ARGUMENT, "%s: invalid dtype %d", what.c_str(),
                int(dtype));
  if (count < 0 || count > maxCount)
    return fail(count < 0 ? PARC_RT_INVALID_ARGUMENT : PARC_RT_UNSUPPORTED,
                "%s: count %lld is outside [0, %lld]", what.c_str(),
                (long long)count, (long long)maxCount);
  if (count > 0 && !buffer)
    return fail(PARC_RT_INVALID_ARGUMENT, "%s: %s buffer is null", what.c_str(),
                name);
  return PARC_RT_OK;
}

inline parc_rt_status_t checkPeer(const std::string &what, int commSize,
                                  int peer, const char *role) {
  if (peer < 0 || peer >= commSize)
    return fail(PARC_RT_INVALID_ARGUMENT,
                "%s: %s %d is not a rank of the communicator (size %d)",
                what.c_str(), role, peer, commSize);
  return PARC_RT_OK;
}

inline parc_rt_status_t checkOut(const char *op, parc_rt_request_t **out) {
  if (!out)
    return fail(PARC_RT_INVALID_ARGUMENT, "%s: out_request is null", op);
  *out = nullptr;
  return PARC_RT_OK;
}

/// What every `_start` checks first: out_request (then cleared), and a
/// communicator (`haveComm`: the backend's handle is set).
inline parc_rt_status_t checkStart(const char *op, parc_rt_request_t **out,
                                   bool haveComm) {
  PARC_RT_RETURN_IF_ERROR(checkOut(op, out));
  if (!haveComm)
    return fail(PARC_RT_INVALID_ARGUMENT, "%s: communicator is null", op);
  return PARC_RT_OK;
}

//===----------------------------------------------------------------------===//
// Each collective's arguments: `what` is set to the operation's description
// (for every later message) before the checks that quote it. `maxCount` is
// the backend's element-count limit (MPI counts are int, NCCL's size_t).
//===----------------------------------------------------------------------===//

/// The reduction: a valid op, and no sum of bool.
inline parc_rt_status_t checkReduceOp(const std::string &what,
                                      parc_rt_dtype_t dtype,
                                      parc_rt_reduce_op_t op) {
  if (unsigned(op) > PARC_RT_REDUCE_MIN)
    return fail(PARC_RT_INVALID_ARGUMENT, "%s: invalid reduce op %d",
                what.c_str(), int(op));
  if (dtype == PARC_RT_BOOL && op == PARC_RT_REDUCE_SUM)
    return fail(PARC_RT_UNSUPPORTED, "%s: sum of bool is not supported",
                what.c_str());
  return PARC_RT_OK;
}

/// all_gather and all_to_all (`count` per rank), all_reduce and
/// reduce_scatter (`reduce` set: its op is checked too).
inline parc_rt_status_t checkCollective(const char *op, int64_t count,
                                        parc_rt_dtype_t dtype,
                                        const parc_rt_reduce_op_t *reduce,
                                        const void *send, const void *recv,
                                        int64_t maxCount, std::string &what) {
  what = describe(op, count, dtype, reduce ? reduceOpName(*reduce) : nullptr);
  PARC_RT_RETURN_IF_ERROR(
      checkBuffer(what, dtype, count, send, "send", maxCount));
  PARC_RT_RETURN_IF_ERROR(
      checkBuffer(what, dtype, count, recv, "recv", maxCount));
  return reduce ? checkReduceOp(what, dtype, *reduce) : PARC_RT_OK;
}

/// Where all_gather_rows puts each rank's rows: recv row o holds, rank by
/// rank, the leading takes[q] elements of that rank's row o.
struct RowPlacement {
  int64_t rows = 1, rowCount = 0;
  std::vector<int64_t> takes; // one per rank, each in [0, rowCount]
  int64_t recvRow = 0;        // their sum
  int root = -1;              // the one rank that receives; -1: every rank
  /// Whether rank `rank` receives the gathered rows.
  bool receives(int rank) const { return root < 0 || rank == root; }
  /// Whether recv is the ranks' blocks back to back, as MPI and NCCL write.
  bool direct() const {
    return recvRow == rowCount * int64_t(takes.size()) &&
           (rows == 1 || takes.size() == 1);
  }
};

/// Checks all_gather_rows' shape and root and sets `placement` and `count`
/// (elements per rank). At least one row; a negative rowCount is left to
/// checkCollective's message, which the one-row (leading-dim) gather shares.
inline parc_rt_status_t planRows(int64_t rows, int64_t rowCount,
                                 const int64_t *rowTakes, int root, int size,
                                 int64_t maxCount, RowPlacement &placement,
                                 int64_t &count) {
  if (root < -1 || root >= size)
    return fail(PARC_RT_INVALID_ARGUMENT,
                "all_gather: root %d is neither -1 (every rank) nor a rank of "
                "the group of %d",
                root, size);
  placement.root = root;
  if (rows < 1 || (rowCount > 0 && rowCount > maxCount / rows))
    return fail(rows < 1 ? PARC_RT_INVALID_ARGUMENT : PARC_RT_UNSUPPORTED,
                "all_gather: %lld rows of %lld elements: rows must be at least "
                "1 and hold at most %lld elements in all",
                (long long)rows, (long long)rowCount, (long long)maxCount);
  placement.rows = rows;
  placement.rowCount = rowCount;
  placement.takes.assign(size_t(size), rowCount);
  if (rowTakes)
    placement.takes.assign(rowTakes, rowTakes + size);
  placement.recvRow = 0;
  for (int q = 0; q < size; ++q) {
    if (placement.takes[q] < 0 || placement.takes[q] > rowCount)
      return fail(PARC_RT_INVALID_ARGUMENT,
                  "all_gather: rank %d's row take %lld is outside [0, %lld]", q,
                  (long long)placement.takes[q], (long long)rowCount);
    placement.recvRow += placement.takes[q];
  }
  count = rows * rowCount;
  return PARC_RT_OK;
}

/// send (`isSend`) or recv of `count` elements to or from `peer`; tags in
/// [0, maxTag].
inline parc_rt_status_t checkPointToPoint(bool isSend, int64_t count,
                                          parc_rt_dtype_t dtype,
                                          const void *buf, int peer, int tag,
                                          int commSize, int maxTag,
                                          int64_t maxCount, std::string &what) {
  const char *op = isSend ? "send" : "recv";
  what = describe(op, count, dtype,
                  ((isSend ? "to rank " : "from rank ") + std::to_string(peer) +
                   ", tag " + std::to_string(tag))
                      .c_str());
  PARC_RT_RETURN_IF_ERROR(checkBuffer(what, dtype, count, buf, op, maxCount));
  PARC_RT_RETURN_IF_ERROR(
      checkPeer(what, commSize, peer, isSend ? "destination" : "source"));
  if (tag < 0 || tag > maxTag)
    return fail(PARC_RT_INVALID_ARGUMENT, "%s: tag outside [0, %d]",
                what.c_str(), maxTag);
  return PARC_RT_OK;
}

inline parc_rt_status_t checkBroadcast(int64_t count, parc_rt_dtype_t dtype,
                                       const void *buf, int root, int commSize,
                                       int64_t maxCount, std::string &what) {
  what = describe("broadcast", count, dtype,
                  ("root " + std::to_string(root)).c_str());
  PARC_RT_RETURN_IF_ERROR(
      checkBuffer(what, dtype, count, buf, "buf", maxCount));
  return checkPeer(what, commSize, root, "root");
}

/// all_to_all_v over `n` ranks: every count and displacement in [0,
/// maxCount]; the buffers must hold what the largest displacement + count
/// reaches.
inline parc_rt_status_t
checkAllToAllV(int n, const void *send, const int64_t *sendCounts,
               const int64_t *sendDispls, const void *recv,
               const int64_t *recvCounts, const int64_t *recvDispls,
               parc_rt_dtype_t dtype, int64_t maxCount, std::string &what) {
  if (!sendCounts || !sendDispls || !recvCounts || !recvDispls)
    return fail(PARC_RT_INVALID_ARGUMENT,
                "all_to_all_v: counts and displacements are required");
  const int64_t *arrays[4] = {sendCounts, sendDispls, recvCounts, recvDispls};
  static const char *names[4] = {"send count", "send displacement",
                                 "recv count", "recv displacement"};
  for (int a = 0; a < 4; ++a)
    for (int i = 0; i < n; ++i)
      if (arrays[a][i] < 0 || arrays[a][i] > maxCount)
        return fail(PARC_RT_INVALID_ARGUMENT,
                    "all_to_all_v: %s for rank %d is %lld, outside [0, %lld]",
                    names[a], i, (long long)arrays[a][i], (long long)maxCount);
  int64_t sendTotal = 0, recvTotal = 0;
  for (int i = 0; i < n; ++i) {
    sendTotal = std::max(sendTotal, sendDispls[i] + sendCounts[i]);
    recvTotal = std::max(recvTotal, recvDispls[i] + recvCounts[i]);
  }
  what = describe("all_to_all_v", sendTotal, dtype);
  PARC_RT_RETURN_IF_ERROR(
      checkBuffer(what, dtype, sendTotal, send, "send", maxCount));
  return checkBuffer(what, dtype, recvTotal, recv, "recv", maxCount);
}

/// Monotonic seconds.
inline double now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
}

/// Calls done() until it returns true (then true) or the deadline passes
/// (then false): spin briefly for latency, then yield, then sleep
/// `sleepMicros`, so that ranks sharing cores leave them to the peers they
/// are waiting for. Yielding lasts 20 ms because MPI moves a large message
/// over shared memory in fragments, each needing a poll: with sleeps from
/// 2 ms on, GPT-2's 12.9 MB per-rank LM-head gather took 19 ms, not 3.5.
template <typename Done>
bool pollUntil(double deadline, Done &&done, long sleepMicros = 100) {
  const double start = now();
  for (;;) {
    if (done())
      return true;
    const double t = now();
    if (t >= deadline)
      return false;
    if (t - start < 50e-6)
      continue;
    if (t - start < 20e-3) {
      sched_yield();
      continue;
    }
    timespec pause{0, sleepMicros * 1000};
    nanosleep(&pause, nullptr);
  }
}

/// The timeout of an operation on a communicator of `commSize` ranks.
inline parc_rt_status_t timedOut(const std::string &what, int commSize,
                                 double seconds, int worldRank) {
  return fail(PARC_RT_TIMEOUT,
              "%s on a communicator of %d ranks timed out after %g s at world "
              "rank %d: a peer is hung, crashed or skipped it "
              "(PARC_RT_TIMEOUT_S sets the limit)",
              what.c_str(), commSize, seconds, worldRank);
}

/// PARC_RT_TIMEOUT_S, default 300 s; a bad value is reported and ignored.
inline double timeoutFromEnv() {
  const char *env = std::getenv("PARC_RT_TIMEOUT_S");
  if (!env || !*env)
    return 300.0;
  char *end = nullptr;
  double v = std::strtod(env, &end);
  if (end == env || *end != '\0' || !(v > 0)) {
    std::fprintf(stderr,
                 "parc: ignoring PARC_RT_TIMEOUT_S='%s' (not a positive "
                 "number of seconds); using 300\n",
                 env);
    return 300.0;
  }
  return v;
}

} // namespace parc::rt

#endif // PARC_RUNTIME_COMM_COMMON_H
