//===- comm_common.h - What every comm backend checks the same way -*- C++ -*-===//
//
// Argument checks, operation descriptions for messages, and the collective
// timeout setting, shared by the MPI (cpu) and NCCL (cuda) backends so that
// both report a bad call or a hung peer in the same words.
//
//===----------------------------------------------------------------------===//
#ifndef PARC_RUNTIME_COMM_COMMON_H
#define PARC_RUNTIME_COMM_COMMON_H

#include "status.h"

#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>

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

/// Monotonic seconds.
inline double now() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
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
