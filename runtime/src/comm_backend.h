//===- comm_backend.h - What a comm backend gives comm_api.cpp --*- C++ -*-===//
//
// Each comm backend (MPI on the cpu, NCCL on the gpu) defines the ABI's
// opaque context and communicator types, deriving them from the bases here,
// and the few hooks below. comm_api.cpp builds on them the ABI functions
// whose logic is the same everywhere: the accessors, communicator split and
// release, parc_rt_wait and parc_rt_wait_all, send/recv entry points and
// the blocking collectives.
//
//===----------------------------------------------------------------------===//
#ifndef PARC_RUNTIME_COMM_BACKEND_H
#define PARC_RUNTIME_COMM_BACKEND_H

#include "liveness.h"
#include "mpi_process.h" // <mpi.h>, C API only
#include "parc/runtime.h"

#include <vector>

namespace parc::rt {

/// The part of parc_rt_context_t every backend has.
struct ContextBase {
  int rank = 0, size = 1; // in the world
  bool ownsMpi = false;   // parc_rt_init initialised MPI
  double timeoutSeconds = 300.0;
  /// The heartbeat that tells a lost peer from a slow one (liveness.h).
  Liveness liveness;
  parc_rt_comm_t *world = nullptr;
  std::vector<parc_rt_comm_t *> comms; // world and splits, for finalize
};

/// The part of parc_rt_comm_t every backend has.
struct CommBase {
  parc_rt_context_t *ctx = nullptr;
  int rank = 0, size = 1;
};

/// Upcasts, defined where the backend's types are complete.
ContextBase *contextBase(parc_rt_context_t *ctx);
const ContextBase *contextBase(const parc_rt_context_t *ctx);
const CommBase *commBase(const parc_rt_comm_t *comm);

/// The world's MPI communicator, which parc_rt_comm_split splits.
MPI_Comm worldMpiComm(parc_rt_context_t *ctx);

/// Called before a communicator is created or destroyed: the gpu waits for
/// the device, so that no collective of another communicator still waits
/// on a peer that is creating this one.
parc_rt_status_t quiesceComms(parc_rt_context_t *ctx);

/// Wraps `split` (now owned) into a communicator registered with ctx.
parc_rt_status_t adoptSplitComm(parc_rt_context_t *ctx, MPI_Comm split,
                                parc_rt_comm_t **out);

/// Frees a communicator and its MPI (and NCCL) communicators.
void destroyComm(parc_rt_comm_t *comm);

/// Completes (or, on the gpu, orders later work after) a started request
/// and frees it; `blocking`: the caller started it in a blocking call, so
/// nothing ran beside it.
parc_rt_status_t waitRequest(parc_rt_request_t *request, bool blocking);

/// send_start (`isSend`) and recv_start, after their shared ABI entry.
parc_rt_status_t startPointToPoint(bool isSend, parc_rt_comm_t *comm, void *buf,
                                   int64_t count, parc_rt_dtype_t dtype,
                                   int peer, int tag, parc_rt_request_t **out);

/// A blocking operation: its `_start` form, then the backend's wait.
template <typename Start> parc_rt_status_t blocking(Start &&start) {
  parc_rt_request_t *r = nullptr;
  parc_rt_status_t s = start(&r);
  return s != PARC_RT_OK ? s : waitRequest(r, /*blocking=*/true);
}

} // namespace parc::rt

#endif // PARC_RUNTIME_COMM_BACKEND_H
