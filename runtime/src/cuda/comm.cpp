//===- comm.cpp - Context, communicators and collectives over NCCL --------===//
//
// MPI starts the processes and carries the out-of-band traffic (the NCCL
// unique id, communicator splits, host barriers); NCCL moves the tensors,
// on the device's comm stream. A `_start` makes the comm stream wait for
// every kernel issued so far (so the send buffer is complete), enqueues the
// NCCL call and records an event; parc_rt_wait makes the compute stream
// wait for that event. Neither blocks the host, so collectives overlap with
// whatever compute the program issues between start and wait.
//
// Because waits do not block, a hung or failed peer shows up at the next
// synchronisation point (the end of a forward pass, a host barrier, a copy
// to the host): synchronize() polls the streams and the communicators'
// asynchronous NCCL errors and turns a stall longer than PARC_RT_TIMEOUT_S
// into PARC_RT_TIMEOUT, after which parc_rt_abort takes every rank down.
//
// A communicator of one rank (every single-GPU run) needs no NCCL: its
// collectives are device copies on the comm stream, so a one-GPU program
// neither pays for nor depends on NCCL's start-up. PARC_RT_NCCL_SINGLE=1
// gives such communicators NCCL anyway (to test NCCL on one GPU).
//
// Differences from the MPI backend, all inherent to NCCL: point-to-point
// tags are checked but not used for matching (messages between two ranks
// match in issue order), and a receive cannot check the sender's count.
//
//===----------------------------------------------------------------------===//

#include "../comm_backend.h"
#include "../comm_common.h"
#include "../mpi_process.h"
#include "cuda_common.h"

#include <nccl.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

using namespace parc::rt;
using namespace parc::rt::cuda;

struct parc_rt_comm_t : parc::rt::CommBase {
  MPI_Comm mpi = MPI_COMM_NULL;
  ncclComm_t nccl = nullptr; // null for one rank without NCCL
};

struct parc_rt_request_t {
  parc_rt_context_t *ctx = nullptr;
  cudaEvent_t done = nullptr; // recorded on the comm stream after the op
  std::string what;
};

struct parc_rt_context_t : parc::rt::ContextBase {
  cudaEvent_t ready = nullptr;         // compute -> comm ordering
  std::vector<cudaEvent_t> events;     // spare request events
  void *barrierWord = nullptr;         // device scratch of barrier_start
};

// comm_api.cpp sees the types through their bases.
parc::rt::ContextBase *parc::rt::contextBase(parc_rt_context_t *ctx) {
  return ctx;
}
const parc::rt::ContextBase *
parc::rt::contextBase(const parc_rt_context_t *ctx) {
  return ctx;
}
const parc::rt::CommBase *parc::rt::commBase(const parc_rt_comm_t *comm) {
  return comm;
}

namespace {

parc_rt_context_t *theContext = nullptr;

parc_rt_status_t ncclFail(ncclResult_t result, const char *what,
                          ncclComm_t comm) {
  const char *detail = comm ? ncclGetLastError(comm) : nullptr;
  return fail(PARC_RT_COMM_ERROR, "%s: NCCL error: %s%s%s", what,
              ncclGetErrorString(result), detail && *detail ? ": " : "",
              detail ? detail : "");
}

#define PARC_NCCL_RETURN_IF_ERROR(expr, what, comm)                            \
  do {                                                                         \
    ncclResult_t parc_nccl_result_ = (expr);                                   \
    if (parc_nccl_result_ != ncclSuccess)                                      \
      return ncclFail(parc_nccl_result_, (what), (comm));                      \
  } while (0)

bool ncclType(parc_rt_dtype_t dtype, ncclDataType_t &out) {
  switch (dtype) {
  case PARC_RT_F32:
    out = ncclFloat32;
    return true;
  case PARC_RT_F16:
    out = ncclFloat16;
    return true;
  case PARC_RT_BF16:
    out = ncclBfloat16;
    return true;
  case PARC_RT_F64:
    out = ncclFloat64;
    return true;
  case PARC_RT_I64:
    out = ncclInt64;
    return true;
  case PARC_RT_I32:
    out = ncclInt32;
    return true;
  case PARC_RT_I8:
    out = ncclInt8;
    return true;
  case PARC_RT_U8:
  case PARC_RT_BOOL: // one byte 0/1: MAX is "or", MIN is "and"
    out = ncclUint8;
    return true;
  default:
    return false;
  }
}

/// The NCCL op of a reduction comm_common.h's checkReduceOp accepted.
ncclRedOp_t ncclOp(parc_rt_reduce_op_t op) {
  return op == PARC_RT_REDUCE_SUM   ? ncclSum
         : op == PARC_RT_REDUCE_MAX ? ncclMax
                                    : ncclMin;
}

/// NCCL counts are size_t: no limit below int64. NCCL matches messages in
/// issue order, not by tag: any tag in the MPI range is accepted.
constexpr int64_t kMaxCount = INT64_MAX;
constexpr int kMaxTag = INT_MAX;

bool usable(const parc_rt_comm_t *comm) {
  return comm && comm->mpi != MPI_COMM_NULL;
}

/// The NCCL type of a dtype checkBuffer accepted.
ncclDataType_t ncclTypeOf(parc_rt_dtype_t dtype) {
  ncclDataType_t type = ncclFloat32;
  ncclType(dtype, type);
  return type;
}

/// Rank 0 makes the unique id, MPI carries it, every rank joins.
parc_rt_status_t initNccl(MPI_Comm mpi, int rank, int size, ncclComm_t *out,
                          const char *op) {
  struct {
    int ok;
    ncclUniqueId id;
  } message = {};
  ncclResult_t idResult = ncclSuccess;
  if (rank == 0) {
    idResult = ncclGetUniqueId(&message.id);
    message.ok = idResult == ncclSuccess;
  }
  int rc = MPI_Bcast(&message, sizeof(message), MPI_BYTE, 0, mpi);
  if (rc != MPI_SUCCESS)
    return mpiFail(PARC_RT_COMM_ERROR, rc, op);
  if (!message.ok)
    return rank == 0 ? ncclFail(idResult, op, nullptr)
                     : fail(PARC_RT_COMM_ERROR,
                            "%s: rank 0 could not create the NCCL unique id",
                            op);
  PARC_NCCL_RETURN_IF_ERROR(ncclCommInitRank(out, size, message.id, rank), op,
                            nullptr);
  return PARC_RT_OK;
}

parc_rt_status_t wrapComm(parc_rt_context_t *ctx, MPI_Comm mpi,
                          parc_rt_comm_t **out, const char *op) {
  auto comm = std::make_unique<parc_rt_comm_t>();
  comm->ctx = ctx;
  comm->mpi = mpi;
  MPI_Comm_rank(mpi, &comm->rank);
  MPI_Comm_size(mpi, &comm->size);
  const char *single = std::getenv("PARC_RT_NCCL_SINGLE");
  const bool useNccl =
      comm->size > 1 || (single && *single && std::string(single) != "0");
  parc_rt_status_t s =
      useNccl ? initNccl(mpi, comm->rank, comm->size, &comm->nccl, op)
              : PARC_RT_OK;
  if (s != PARC_RT_OK) {
    MPI_Comm_free(&comm->mpi);
    return s;
  }
  ctx->comms.push_back(comm.get());
  *out = comm.release();
  return PARC_RT_OK;
}

} // namespace

void parc::rt::destroyComm(parc_rt_comm_t *comm) {
  if (comm->nccl)
    ncclCommDestroy(comm->nccl);
  if (comm->mpi != MPI_COMM_NULL)
    MPI_Comm_free(&comm->mpi);
  delete comm;
}

namespace {

/// The comm stream waits for every kernel issued so far.
parc_rt_status_t begin(State *s, parc_rt_context_t *ctx, const char *what) {
  PARC_CUDA_RETURN_IF_ERROR(cudaEventRecord(ctx->ready, s->compute), what,
                            "cudaEventRecord");
  PARC_CUDA_RETURN_IF_ERROR(cudaStreamWaitEvent(s->comm, ctx->ready, 0), what,
                            "cudaStreamWaitEvent");
  return PARC_RT_OK;
}

/// Records the op's completion and hands the request to the caller.
parc_rt_status_t started(State *s, parc_rt_comm_t *comm, std::string what,
                         parc_rt_request_t **out) {
  parc_rt_context_t *ctx = comm->ctx;
  auto r = std::make_unique<parc_rt_request_t>();
  r->ctx = ctx;
  r->what = std::move(what);
  if (!ctx->events.empty()) {
    r->done = ctx->events.back();
    ctx->events.pop_back();
  } else {
    PARC_CUDA_RETURN_IF_ERROR(
        cudaEventCreateWithFlags(&r->done, cudaEventDisableTiming),
        r->what.c_str(), "cudaEventCreate");
  }
  cudaError_t e = cudaEventRecord(r->done, s->comm);
  if (e != cudaSuccess) {
    ctx->events.push_back(r->done);
    return cudaFail(e, r->what.c_str(), "cudaEventRecord");
  }
  *out = r.release();
  return PARC_RT_OK;
}

/// A one-rank collective without NCCL: `bytes` from src to dst on the comm
/// stream (after begin(), like the NCCL call it stands for).
parc_rt_status_t localCopy(State *s, void *dst, const void *src, size_t bytes,
                           const std::string &what) {
  if (bytes == 0 || dst == src)
    return PARC_RT_OK;
  PARC_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(dst, src, bytes,
                                            cudaMemcpyDeviceToDevice, s->comm),
                            what.c_str(), "cudaMemcpyAsync");
  return PARC_RT_OK;
}

/// Later kernels wait for the op; the host does not.
parc_rt_status_t waitOne(parc_rt_request_t *raw) {
  std::unique_ptr<parc_rt_request_t> r(raw);
  State *s = nullptr;
  PARC_RT_RETURN_IF_ERROR(getState(r->what.c_str(), &s));
  cudaError_t e = cudaStreamWaitEvent(s->compute, r->done, 0);
  // The wait captured the event's state: it can be recorded again.
  r->ctx->events.push_back(r->done);
  if (e != cudaSuccess)
    return cudaFail(e, r->what.c_str(), "cudaStreamWaitEvent");
  return commAsyncError(r->what.c_str());
}

/// Common prologue of a `_start`: out cleared, communicator and state.
parc_rt_status_t prologue(const char *op, parc_rt_comm_t *comm,
                          parc_rt_request_t **out, State **s) {
  PARC_RT_RETURN_IF_ERROR(checkStart(op, out, usable(comm)));
  return getState(op, s);
}

/// all_reduce, all_gather, reduce_scatter and all_to_all of `count`
/// elements per rank: checked, ordered after the kernels issued so far,
/// then call(nccl, comm stream). A one-rank communicator without NCCL
/// copies send to recv instead (every such collective is that copy).
template <typename Call>
parc_rt_status_t startCollective(const char *op, parc_rt_comm_t *comm,
                                 const void *send, void *recv, int64_t count,
                                 parc_rt_dtype_t dtype,
                                 const parc_rt_reduce_op_t *reduce,
                                 parc_rt_request_t **out, Call &&call) {
  State *s = nullptr;
  PARC_RT_RETURN_IF_ERROR(prologue(op, comm, out, &s));
  std::string what;
  PARC_RT_RETURN_IF_ERROR(
      checkCollective(op, count, dtype, reduce, send, recv, kMaxCount, what));
  PARC_RT_RETURN_IF_ERROR(begin(s, comm->ctx, what.c_str()));
  if (!comm->nccl)
    PARC_RT_RETURN_IF_ERROR(localCopy(
        s, recv, send, size_t(count) * parc_rt_dtype_size(dtype), what));
  else
    PARC_NCCL_RETURN_IF_ERROR(call(comm->nccl, s->comm), what.c_str(),
                              comm->nccl);
  return started(s, comm, std::move(what), out);
}

/// An MPI operation on `comm` polled to completion with the context's
/// deadline.
parc_rt_status_t mpiWait(parc_rt_comm_t *comm, MPI_Request request,
                         const char *what) {
  parc_rt_context_t *ctx = comm->ctx;
  int rc = MPI_SUCCESS, done = 0;
  parc_rt_status_t lost = PARC_RT_OK;
  const bool finished = pollUntil(now() + ctx->timeoutSeconds, [&] {
    rc = MPI_Test(&request, &done, MPI_STATUS_IGNORE);
    if (rc != MPI_SUCCESS || done)
      return true;
    lost = ctx->liveness.check(what, comm->size);
    return lost != PARC_RT_OK;
  });
  if (rc != MPI_SUCCESS)
    return mpiFail(PARC_RT_COMM_ERROR, rc, what);
  if (lost != PARC_RT_OK)
    return lost;
  if (!finished)
    return timedOut(what, comm->size, ctx->timeoutSeconds, ctx->rank);
  return PARC_RT_OK;
}

} // namespace

namespace parc::rt {

// ncclSend or ncclRecv on the comm stream.
parc_rt_status_t startPointToPoint(bool isSend, parc_rt_comm_t *comm, void *buf,
                                   int64_t count, parc_rt_dtype_t dtype,
                                   int peer, int tag, parc_rt_request_t **out) {
  State *s = nullptr;
  PARC_RT_RETURN_IF_ERROR(prologue(isSend ? "send" : "recv", comm, out, &s));
  std::string what;
  PARC_RT_RETURN_IF_ERROR(checkPointToPoint(isSend, count, dtype, buf, peer,
                                            tag, comm->size, kMaxTag, kMaxCount,
                                            what));
  if (!comm->nccl)
    return fail(PARC_RT_UNSUPPORTED,
                "%s: a one-rank communicator has no peer to %s "
                "(PARC_RT_NCCL_SINGLE=1 gives it NCCL)",
                what.c_str(), isSend ? "send to" : "receive from");
  PARC_RT_RETURN_IF_ERROR(begin(s, comm->ctx, what.c_str()));
  const ncclDataType_t type = ncclTypeOf(dtype);
  PARC_NCCL_RETURN_IF_ERROR(
      isSend ? ncclSend(buf, size_t(count), type, peer, comm->nccl, s->comm)
             : ncclRecv(buf, size_t(count), type, peer, comm->nccl, s->comm),
      what.c_str(), comm->nccl);
  return started(s, comm, std::move(what), out);
}

// Later kernels wait for the op; the host does not, blocking or not.
parc_rt_status_t waitRequest(parc_rt_request_t *request, bool) {
  return waitOne(request);
}

MPI_Comm worldMpiComm(parc_rt_context_t *ctx) { return ctx->world->mpi; }

// A new NCCL communicator must not be created while collectives of another
// one may still wait on a peer that is creating it.
parc_rt_status_t quiesceComms(parc_rt_context_t *ctx) {
  if (State *s = existingState())
    return synchronize(s, ctx->timeoutSeconds);
  return PARC_RT_OK;
}

parc_rt_status_t adoptSplitComm(parc_rt_context_t *ctx, MPI_Comm split,
                                parc_rt_comm_t **out) {
  MPI_Comm_set_errhandler(split, MPI_ERRORS_RETURN);
  return wrapComm(ctx, split, out, "comm_split");
}

} // namespace parc::rt

namespace parc::rt::cuda {

double currentTimeout() {
  static const double fromEnv = timeoutFromEnv();
  return theContext ? theContext->timeoutSeconds : fromEnv;
}

int currentWorldRank() { return theContext ? theContext->rank : 0; }

parc_rt_status_t commAsyncError(const char *op) {
  if (!theContext)
    return PARC_RT_OK;
  for (parc_rt_comm_t *comm : theContext->comms) {
    if (!comm->nccl)
      continue;
    ncclResult_t async = ncclSuccess;
    ncclResult_t r = ncclCommGetAsyncError(comm->nccl, &async);
    if (r != ncclSuccess)
      return ncclFail(r, op, comm->nccl);
    if (async != ncclSuccess && async != ncclInProgress)
      return fail(PARC_RT_COMM_ERROR,
                  "%s: NCCL reported an asynchronous error on a communicator "
                  "of %d ranks at world rank %d: %s: %s",
                  op, comm->size, theContext->rank, ncclGetErrorString(async),
                  ncclGetLastError(comm->nccl));
  }
  return PARC_RT_OK;
}

} // namespace parc::rt::cuda

extern "C" {

//===----------------------------------------------------------------------===//
// Context
//===----------------------------------------------------------------------===//

parc_rt_status_t parc_rt_init(int *argc, char ***argv,
                              parc_rt_context_t **out_ctx) {
  if (!out_ctx)
    return fail(PARC_RT_INVALID_ARGUMENT, "init: out_ctx is null");
  *out_ctx = nullptr;
  if (theContext)
    return fail(PARC_RT_INVALID_ARGUMENT,
                "init: the cuda runtime supports one context per process");
  auto ctx = std::make_unique<parc_rt_context_t>();
  MPI_Comm world = MPI_COMM_NULL;
  PARC_RT_RETURN_IF_ERROR(startMpi(argc, argv, ctx->ownsMpi, world));
  MPI_Comm_rank(world, &ctx->rank);
  MPI_Comm_size(world, &ctx->size);
  ctx->timeoutSeconds = timeoutFromEnv();
  PARC_RT_RETURN_IF_ERROR(startLiveness(world, ctx->liveness));
  // One device per rank on a node: local rank modulo the visible devices
  // (CUDA_VISIBLE_DEVICES narrows the choice).
  MPI_Comm node = MPI_COMM_NULL;
  int localRank = 0;
  if (MPI_Comm_split_type(world, MPI_COMM_TYPE_SHARED, ctx->rank,
                          MPI_INFO_NULL, &node) == MPI_SUCCESS) {
    MPI_Comm_rank(node, &localRank);
    MPI_Comm_free(&node);
  }
  selectDevice(localRank);
  State *s = nullptr;
  parc_rt_status_t status = getState("init", &s);
  if (status != PARC_RT_OK) {
    std::string message = parc_rt_last_error();
    return fail(status, "%s (rank %d)", message.c_str(), ctx->rank);
  }
  PARC_CUDA_RETURN_IF_ERROR(
      cudaEventCreateWithFlags(&ctx->ready, cudaEventDisableTiming), "init",
      "cudaEventCreate");
  PARC_CUDA_RETURN_IF_ERROR(cudaMalloc(&ctx->barrierWord, sizeof(float)),
                            "init", "cudaMalloc");
  PARC_CUDA_RETURN_IF_ERROR(
      cudaMemsetAsync(ctx->barrierWord, 0, sizeof(float), s->compute), "init",
      "cudaMemsetAsync");
  PARC_RT_RETURN_IF_ERROR(wrapComm(ctx.get(), world, &ctx->world, "init"));
  theContext = ctx.get();
  *out_ctx = ctx.release();
  return PARC_RT_OK;
}

parc_rt_status_t parc_rt_finalize(parc_rt_context_t *ctx) {
  if (!ctx)
    return fail(PARC_RT_INVALID_ARGUMENT, "finalize: context is null");
  if (State *s = existingState()) {
    parc_rt_status_t status = synchronize(s, ctx->timeoutSeconds);
    if (status != PARC_RT_OK) {
      std::string message = parc_rt_last_error();
      return fail(status,
                  "finalize: %s; work is still pending at world rank %d, "
                  "call parc_rt_abort",
                  message.c_str(), ctx->rank);
    }
  }
  for (parc_rt_comm_t *comm : ctx->comms)
    destroyComm(comm);
  ctx->comms.clear();
  for (cudaEvent_t e : ctx->events)
    cudaEventDestroy(e);
  if (ctx->ready)
    cudaEventDestroy(ctx->ready);
  if (ctx->barrierWord)
    cudaFree(ctx->barrierWord);
  releaseState();
  if (theContext == ctx)
    theContext = nullptr;
  const bool ownsMpi = ctx->ownsMpi;
  delete ctx;
  return finishMpi(ownsMpi);
}

//===----------------------------------------------------------------------===//
// Collectives (communicator split and release: comm_api.cpp)
//===----------------------------------------------------------------------===//

parc_rt_status_t parc_rt_all_reduce_start(parc_rt_comm_t *comm,
                                          const void *send, void *recv,
                                          int64_t count, parc_rt_dtype_t dtype,
                                          parc_rt_reduce_op_t op,
                                          parc_rt_request_t **out_request) {
  return startCollective(
      "all_reduce", comm, send, recv, count, dtype, &op, out_request,
      [&](ncclComm_t nccl, cudaStream_t stream) {
        return ncclAllReduce(send, recv, size_t(count), ncclTypeOf(dtype),
                             ncclOp(op), nccl, stream);
      });
}

parc_rt_status_t parc_rt_all_gather_rows_start(
    parc_rt_comm_t *comm, const void *send, void *recv, int64_t rows,
    int64_t row_count, const int64_t *row_takes, int root,
    parc_rt_dtype_t dtype, parc_rt_request_t **out_request) {
  RowPlacement p;
  int64_t count = 0;
  if (comm) // a null one is startCollective's error
    PARC_RT_RETURN_IF_ERROR(planRows(rows, row_count, row_takes, root,
                                     comm->size, kMaxCount, p, count));
  if (comm && !comm->nccl && !p.direct())
    return fail(PARC_RT_UNSUPPORTED,
                "all_gather: a one-rank group without NCCL keeps whole rows "
                "only");
  return startCollective(
      "all_gather", comm, send, recv, count, dtype, nullptr, out_request,
      [&](ncclComm_t nccl, cudaStream_t stream) {
        const ncclDataType_t type = ncclTypeOf(dtype);
        const size_t e = parc_rt_dtype_size(dtype),
                     block = size_t(count) * e;
        // The ranks' blocks back to back at `to`: all of them on every rank,
        // or with a root, sent to it alone (NCCL has no gather).
        auto gatherBlocks = [&](void *to) {
          if (root < 0)
            return ncclAllGather(send, to, size_t(count), type, nccl, stream);
          ncclResult_t result = ncclGroupStart();
          if (result != ncclSuccess)
            return result;
          ncclSend(send, size_t(count), type, root, nccl, stream);
          for (int q = 0; p.receives(comm->rank) && q < comm->size; ++q)
            ncclRecv(static_cast<char *>(to) + size_t(q) * block,
                     size_t(count), type, q, nccl, stream);
          return ncclGroupEnd();
        };
        // A rank that only sends needs no scratch and places nothing.
        if (p.direct() || !p.receives(comm->rank))
          return gatherBlocks(recv);
        // NCCL gathers whole blocks: rank-major into stream-ordered scratch,
        // then each rank's rows (their kept part) to their place in recv.
        void *stacked = nullptr;
        if (cudaMallocAsync(&stacked, block * p.takes.size(), stream) !=
            cudaSuccess)
          return ncclUnhandledCudaError;
        ncclResult_t result = gatherBlocks(stacked);
        size_t column = 0;
        for (size_t q = 0; result == ncclSuccess && q < p.takes.size(); ++q) {
          if (p.takes[q] > 0 &&
              cudaMemcpy2DAsync(static_cast<char *>(recv) + column,
                                size_t(p.recvRow) * e,
                                static_cast<char *>(stacked) + q * block,
                                size_t(p.rowCount) * e, size_t(p.takes[q]) * e,
                                size_t(p.rows), cudaMemcpyDeviceToDevice,
                                stream) != cudaSuccess)
            result = ncclUnhandledCudaError;
          column += size_t(p.takes[q]) * e;
        }
        cudaFreeAsync(stacked, stream);
        return result;
      });
}

parc_rt_status_t parc_rt_reduce_scatter_start(parc_rt_comm_t *comm,
                                              const void *send, void *recv,
                                              int64_t recv_count,
                                              parc_rt_dtype_t dtype,
                                              parc_rt_reduce_op_t op,
                                              parc_rt_request_t **out_request) {
  return startCollective(
      "reduce_scatter", comm, send, recv, recv_count, dtype, &op, out_request,
      [&](ncclComm_t nccl, cudaStream_t stream) {
        return ncclReduceScatter(send, recv, size_t(recv_count),
                                 ncclTypeOf(dtype), ncclOp(op), nccl, stream);
      });
}

parc_rt_status_t parc_rt_all_to_all_start(parc_rt_comm_t *comm,
                                          const void *send, void *recv,
                                          int64_t count, parc_rt_dtype_t dtype,
                                          parc_rt_request_t **out_request) {
  return startCollective(
      "all_to_all", comm, send, recv, count, dtype, nullptr, out_request,
      [&](ncclComm_t nccl, cudaStream_t stream) {
        if (count == 0)
          return ncclSuccess;
        const ncclDataType_t type = ncclTypeOf(dtype);
        const size_t block = size_t(count) * parc_rt_dtype_size(dtype);
        ncclResult_t result = ncclGroupStart();
        if (result != ncclSuccess)
          return result;
        for (int peer = 0; peer < comm->size; ++peer) {
          ncclSend(static_cast<const char *>(send) + peer * block,
                   size_t(count), type, peer, nccl, stream);
          ncclRecv(static_cast<char *>(recv) + peer * block, size_t(count),
                   type, peer, nccl, stream);
        }
        // Errors of the calls inside a group surface at ncclGroupEnd.
        return ncclGroupEnd();
      });
}

parc_rt_status_t parc_rt_all_to_all_v_start(
    parc_rt_comm_t *comm, const void *send, const int64_t *send_counts,
    const int64_t *send_displs, void *recv, const int64_t *recv_counts,
    const int64_t *recv_displs, parc_rt_dtype_t dtype,
    parc_rt_request_t **out_request) {
  State *s = nullptr;
  PARC_RT_RETURN_IF_ERROR(prologue("all_to_all_v", comm, out_request, &s));
  const int n = comm->size;
  std::string what;
  PARC_RT_RETURN_IF_ERROR(checkAllToAllV(n, send, send_counts, send_displs,
                                         recv, recv_counts, recv_displs, dtype,
                                         kMaxCount, what));
  const ncclDataType_t type = ncclTypeOf(dtype);
  const size_t elem = parc_rt_dtype_size(dtype);
  PARC_RT_RETURN_IF_ERROR(begin(s, comm->ctx, what.c_str()));
  if (!comm->nccl) {
    if (send_counts[0] != recv_counts[0])
      return fail(PARC_RT_COMM_ERROR,
                  "%s: rank 0 sends itself %lld elements but expects %lld",
                  what.c_str(), (long long)send_counts[0],
                  (long long)recv_counts[0]);
    PARC_RT_RETURN_IF_ERROR(
        localCopy(s, static_cast<char *>(recv) + recv_displs[0] * elem,
                  static_cast<const char *>(send) + send_displs[0] * elem,
                  size_t(send_counts[0]) * elem, what));
    return started(s, comm, std::move(what), out_request);
  }
  PARC_NCCL_RETURN_IF_ERROR(ncclGroupStart(), what.c_str(), comm->nccl);
  for (int peer = 0; peer < n; ++peer) {
    if (send_counts[peer] > 0)
      ncclSend(static_cast<const char *>(send) + send_displs[peer] * elem,
               size_t(send_counts[peer]), type, peer, comm->nccl, s->comm);
    if (recv_counts[peer] > 0)
      ncclRecv(static_cast<char *>(recv) + recv_displs[peer] * elem,
               size_t(recv_counts[peer]), type, peer, comm->nccl, s->comm);
  }
  PARC_NCCL_RETURN_IF_ERROR(ncclGroupEnd(), what.c_str(), comm->nccl);
  return started(s, comm, std::move(what), out_request);
}

// A device-side barrier: a one-word all-reduce on the comm stream.
parc_rt_status_t parc_rt_barrier_start(parc_rt_comm_t *comm,
                                       parc_rt_request_t **out_request) {
  State *s = nullptr;
  PARC_RT_RETURN_IF_ERROR(prologue("barrier", comm, out_request, &s));
  PARC_RT_RETURN_IF_ERROR(begin(s, comm->ctx, "barrier"));
  void *word = comm->ctx->barrierWord;
  if (comm->nccl)
    PARC_NCCL_RETURN_IF_ERROR(ncclAllReduce(word, word, 1, ncclFloat32,
                                            ncclSum, comm->nccl, s->comm),
                              "barrier", comm->nccl);
  return started(s, comm, "barrier", out_request);
}

// The host barrier the program driver times with: every rank's device work
// is complete, then the ranks meet over MPI.
parc_rt_status_t parc_rt_barrier(parc_rt_comm_t *comm) {
  if (!usable(comm))
    return fail(PARC_RT_INVALID_ARGUMENT, "barrier: communicator is null");
  parc_rt_context_t *ctx = comm->ctx;
  if (State *s = existingState())
    PARC_RT_RETURN_IF_ERROR(synchronize(s, ctx->timeoutSeconds));
  MPI_Request request = MPI_REQUEST_NULL;
  int rc = MPI_Ibarrier(comm->mpi, &request);
  if (rc != MPI_SUCCESS)
    return mpiFail(PARC_RT_COMM_ERROR, rc, "barrier");
  return mpiWait(comm, request, "barrier");
}

parc_rt_status_t parc_rt_broadcast_start(parc_rt_comm_t *comm, void *buf,
                                         int64_t count, parc_rt_dtype_t dtype,
                                         int root,
                                         parc_rt_request_t **out_request) {
  State *s = nullptr;
  PARC_RT_RETURN_IF_ERROR(prologue("broadcast", comm, out_request, &s));
  std::string what;
  PARC_RT_RETURN_IF_ERROR(
      checkBroadcast(count, dtype, buf, root, comm->size, kMaxCount, what));
  PARC_RT_RETURN_IF_ERROR(begin(s, comm->ctx, what.c_str()));
  if (comm->nccl)
    PARC_NCCL_RETURN_IF_ERROR(ncclBroadcast(buf, buf, size_t(count),
                                            ncclTypeOf(dtype), root, comm->nccl,
                                            s->comm),
                              what.c_str(), comm->nccl);
  return started(s, comm, std::move(what), out_request);
}

parc_rt_status_t parc_rt_test(parc_rt_request_t *request, int *out_done) {
  if (!request)
    return fail(PARC_RT_INVALID_ARGUMENT, "test: request is null");
  cudaError_t e = cudaEventQuery(request->done);
  if (e == cudaErrorNotReady) {
    cudaGetLastError(); // "not ready" is recorded as the last error: clear it
    if (out_done)
      *out_done = 0;
    return commAsyncError(request->what.c_str());
  }
  if (e != cudaSuccess)
    return cudaFail(e, request->what.c_str(), "cudaEventQuery");
  if (out_done)
    *out_done = 1;
  return PARC_RT_OK;
}

// Streams overlap on the device without the host seeing when: the split
// needs event timing, which this backend does not record yet.
parc_rt_status_t parc_rt_comm_time(const parc_rt_context_t *, double *,
                                   double *) {
  return fail(PARC_RT_UNSUPPORTED,
              "comm_time: the cuda backend does not time communication");
}

} // extern "C"
