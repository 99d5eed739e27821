//===- comm_mpi.cpp - Context, communicators and collectives over MPI -----===//
//
// Every collective, blocking or not, is a non-blocking MPI call completed by
// a polling wait with a deadline: a hung or crashed peer then surfaces as
// PARC_RT_TIMEOUT naming the operation, instead of a silent hang, and the
// caller can bring all ranks down with parc_rt_abort. MPI errors are
// returned (MPI_ERRORS_RETURN), never fatal inside MPI, for the same reason.
//
// f16/bf16 travel as 2-byte MPI types; their reductions use user ops that
// widen to f32 (MPI has no half types).
//
//===----------------------------------------------------------------------===//

#include "../comm_common.h"
#include "../status.h"
#include "half.h"

// Only the C API: the deprecated MPI C++ bindings would add a link
// dependency on libmpi_cxx to every generated program.
#define OMPI_SKIP_MPICXX 1
#define MPICH_SKIP_MPICXX 1
#include <mpi.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <memory>
#include <sched.h>
#include <string>
#include <vector>

using namespace parc::rt;

struct parc_rt_comm_t {
  parc_rt_context_t *ctx = nullptr;
  MPI_Comm comm = MPI_COMM_NULL;
  int rank = 0, size = 1;
};

struct parc_rt_request_t {
  parc_rt_context_t *ctx = nullptr;
  MPI_Request request = MPI_REQUEST_NULL;
  std::string what; // "all_reduce(sum, 1024 x f32)", for messages
  int commSize = 0;
  bool completed = false;
  // Entering the start call, leaving it, completion as observed by a poll.
  double startedAt = 0, issuedAt = 0, completedAt = 0;
  bool blocking = false; // a blocking call: nothing ran beside it
  parc_rt_status_t result = PARC_RT_OK; // once completed
  // recv: the message must hold exactly this many elements.
  bool checkCount = false;
  int64_t expectedCount = 0;
  MPI_Datatype datatype = MPI_DATATYPE_NULL;
  // all_to_all_v: MPI reads the int arrays until completion.
  std::vector<int> counts;
};

struct parc_rt_context_t {
  int rank = 0, size = 1;
  bool ownsMpi = false;
  double timeoutSeconds = 300.0;
  int tagUpperBound = 32767;
  parc_rt_comm_t *world = nullptr;
  std::vector<parc_rt_comm_t *> comms; // world and splits, for finalize
  // Requests abandoned by a timed-out wait: MPI cannot cancel collectives,
  // so they stay here until finalize drains them.
  std::vector<std::unique_ptr<parc_rt_request_t>> orphans;
  // Seconds from starts to completions, and of them blocked in waits.
  double commSeconds = 0, exposedSeconds = 0;
};

namespace {

//===----------------------------------------------------------------------===//
// Types and reduction ops
//===----------------------------------------------------------------------===//

// MPI handles are process-wide; so are these.
MPI_Datatype f16Type = MPI_DATATYPE_NULL, bf16Type = MPI_DATATYPE_NULL;
MPI_Op halfOps[3] = {MPI_OP_NULL, MPI_OP_NULL, MPI_OP_NULL};

template <int Op>
void halfReduce(void *in, void *inout, int *len, MPI_Datatype *type) {
  const bool bf16 = *type == bf16Type;
  const auto *a = static_cast<const uint16_t *>(in);
  auto *b = static_cast<uint16_t *>(inout);
  for (int i = 0; i < *len; ++i) {
    const float x = bf16 ? bf16ToF32(a[i]) : f16ToF32(a[i]);
    const float y = bf16 ? bf16ToF32(b[i]) : f16ToF32(b[i]);
    float r;
    if (Op == PARC_RT_REDUCE_SUM)
      r = x + y;
    else if (Op == PARC_RT_REDUCE_MAX)
      r = (x > y || x != x) ? x : y;
    else
      r = (x < y || x != x) ? x : y;
    b[i] = bf16 ? f32ToBf16(r) : f32ToF16(r);
  }
}

parc_rt_status_t mpiFail(parc_rt_status_t status, int code, const char *what) {
  char text[MPI_MAX_ERROR_STRING] = {0};
  int length = 0;
  MPI_Error_string(code, text, &length);
  return fail(status, "%s: MPI error: %s", what, text);
}

parc_rt_status_t createHalfTypes() {
  if (f16Type != MPI_DATATYPE_NULL)
    return PARC_RT_OK;
  // Two distinct committed types, so user ops can tell f16 from bf16.
  int rc = MPI_Type_contiguous(2, MPI_BYTE, &f16Type);
  if (rc == MPI_SUCCESS)
    rc = MPI_Type_commit(&f16Type);
  if (rc == MPI_SUCCESS)
    rc = MPI_Type_contiguous(2, MPI_BYTE, &bf16Type);
  if (rc == MPI_SUCCESS)
    rc = MPI_Type_commit(&bf16Type);
  if (rc == MPI_SUCCESS)
    rc = MPI_Op_create(&halfReduce<PARC_RT_REDUCE_SUM>, 1, &halfOps[0]);
  if (rc == MPI_SUCCESS)
    rc = MPI_Op_create(&halfReduce<PARC_RT_REDUCE_MAX>, 1, &halfOps[1]);
  if (rc == MPI_SUCCESS)
    rc = MPI_Op_create(&halfReduce<PARC_RT_REDUCE_MIN>, 1, &halfOps[2]);
  return rc == MPI_SUCCESS ? PARC_RT_OK
                           : mpiFail(PARC_RT_COMM_ERROR, rc, "init");
}

void freeHalfTypes() {
  for (MPI_Op &op : halfOps)
    if (op != MPI_OP_NULL)
      MPI_Op_free(&op);
  if (f16Type != MPI_DATATYPE_NULL)
    MPI_Type_free(&f16Type);
  if (bf16Type != MPI_DATATYPE_NULL)
    MPI_Type_free(&bf16Type);
}

MPI_Datatype mpiType(parc_rt_dtype_t dtype) {
  switch (dtype) {
  case PARC_RT_F32:
    return MPI_FLOAT;
  case PARC_RT_F64:
    return MPI_DOUBLE;
  case PARC_RT_I64:
    return MPI_INT64_T;
  case PARC_RT_I32:
    return MPI_INT32_T;
  case PARC_RT_I8:
    return MPI_INT8_T;
  case PARC_RT_U8:
  case PARC_RT_BOOL: // one byte 0/1: MAX is "or", MIN is "and"
    return MPI_UINT8_T;
  case PARC_RT_F16:
    return f16Type;
  case PARC_RT_BF16:
    return bf16Type;
  default:
    return MPI_DATATYPE_NULL;
  }
}

parc_rt_status_t mpiOp(const char *what, parc_rt_dtype_t dtype,
                       parc_rt_reduce_op_t op, MPI_Op &out) {
  if (unsigned(op) > PARC_RT_REDUCE_MIN)
    return fail(PARC_RT_INVALID_ARGUMENT, "%s: invalid reduce op %d", what,
                int(op));
  if (dtype == PARC_RT_BOOL && op == PARC_RT_REDUCE_SUM)
    return fail(PARC_RT_UNSUPPORTED, "%s: sum of bool is not supported", what);
  if (dtype == PARC_RT_F16 || dtype == PARC_RT_BF16) {
    out = halfOps[op];
    return PARC_RT_OK;
  }
  out = op == PARC_RT_REDUCE_SUM   ? MPI_SUM
        : op == PARC_RT_REDUCE_MAX ? MPI_MAX
                                   : MPI_MIN;
  return PARC_RT_OK;
}

//===----------------------------------------------------------------------===//
// Argument checks
//===----------------------------------------------------------------------===//

parc_rt_status_t checkComm(const char *op, parc_rt_comm_t *comm) {
  if (!comm || comm->comm == MPI_COMM_NULL)
    return fail(PARC_RT_INVALID_ARGUMENT, "%s: communicator is null", op);
  return PARC_RT_OK;
}

/// MPI counts are int.
parc_rt_status_t checkBuffer(const std::string &what, parc_rt_dtype_t dtype,
                             int64_t count, const void *buffer,
                             const char *name) {
  return parc::rt::checkBuffer(what, dtype, count, buffer, name, INT_MAX);
}

parc_rt_status_t checkPeer(const std::string &what, parc_rt_comm_t *comm,
                           int peer, const char *role) {
  return parc::rt::checkPeer(what, comm->size, peer, role);
}

//===----------------------------------------------------------------------===//
// Requests
//===----------------------------------------------------------------------===//

std::unique_ptr<parc_rt_request_t> newRequest(parc_rt_comm_t *comm,
                                              std::string what) {
  auto r = std::make_unique<parc_rt_request_t>();
  r->ctx = comm->ctx;
  r->what = std::move(what);
  r->commSize = comm->size;
  r->startedAt = now();
  return r;
}

/// Hands a started request to the caller, or reports the start's MPI error.
parc_rt_status_t started(int rc, std::unique_ptr<parc_rt_request_t> r,
                         parc_rt_request_t **out) {
  if (rc != MPI_SUCCESS)
    return mpiFail(PARC_RT_COMM_ERROR, rc, r->what.c_str());
  r->issuedAt = now();
  *out = r.release();
  return PARC_RT_OK;
}

/// Records the outcome of a request MPI reports complete.
void complete(parc_rt_request_t *r, int rc, const MPI_Status &status) {
  r->completed = true;
  r->completedAt = now();
  if (rc != MPI_SUCCESS) {
    r->result = mpiFail(PARC_RT_COMM_ERROR, rc, r->what.c_str());
    return;
  }
  if (r->checkCount) {
    int got = 0;
    MPI_Get_count(&status, r->datatype, &got);
    if (got != r->expectedCount)
      r->result = fail(PARC_RT_COMM_ERROR,
                       "%s: expected %lld elements, the message from rank %d "
                       "holds %d",
                       r->what.c_str(), (long long)r->expectedCount,
                       status.MPI_SOURCE, got);
  }
}

/// One poll; true once the request is complete.
bool poll(parc_rt_request_t *r) {
  if (r->completed)
    return true;
  int done = 0;
  MPI_Status status;
  int rc = MPI_Test(&r->request, &done, &status);
  if (rc != MPI_SUCCESS || done)
    complete(r, rc, status);
  return r->completed;
}

/// Polls until complete or the deadline: spin briefly for latency, then
/// yield and sleep so that ranks sharing cores leave them to the peers
/// they are waiting for.
bool pollUntil(parc_rt_request_t *r, double deadline) {
  const double start = now();
  for (;;) {
    if (poll(r))
      return true;
    const double t = now();
    if (t >= deadline)
      return false;
    if (t - start < 50e-6)
      continue;
    if (t - start < 2e-3) {
      sched_yield();
      continue;
    }
    timespec pause{0, 100 * 1000};
    nanosleep(&pause, nullptr);
  }
}

parc_rt_status_t waitOne(parc_rt_request_t *raw) {
  std::unique_ptr<parc_rt_request_t> r(raw);
  parc_rt_context_t *ctx = r->ctx;
  const double entered = now();
  if (!pollUntil(r.get(), entered + ctx->timeoutSeconds)) {
    parc_rt_status_t s = fail(
        PARC_RT_TIMEOUT,
        "%s on a communicator of %d ranks timed out after %g s at world rank "
        "%d: a peer is hung, crashed or skipped it (PARC_RT_TIMEOUT_S sets "
        "the limit)",
        r->what.c_str(), r->commSize, ctx->timeoutSeconds, ctx->rank);
    ctx->orphans.push_back(std::move(r));
    return s;
  }
  ctx->commSeconds += r->completedAt - r->startedAt;
  // Time inside the start call (MPI may do the whole transfer there) and
  // blocked in the wait is what compute did not hide.
  ctx->exposedSeconds += r->blocking ? r->completedAt - r->startedAt
                                     : (r->issuedAt - r->startedAt) +
                                           std::max(0.0, r->completedAt - entered);
  return r->result;
}

/// Starts a blocking operation through its `_start` form and waits.
template <typename Start> parc_rt_status_t blocking(Start &&start) {
  parc_rt_request_t *r = nullptr;
  PARC_RT_RETURN_IF_ERROR(start(&r));
  r->blocking = true;
  return waitOne(r);
}

parc_rt_status_t wrapComm(parc_rt_context_t *ctx, MPI_Comm mpiComm,
                          parc_rt_comm_t **out) {
  auto *comm = new parc_rt_comm_t;
  comm->ctx = ctx;
  comm->comm = mpiComm;
  MPI_Comm_rank(mpiComm, &comm->rank);
  MPI_Comm_size(mpiComm, &comm->size);
  ctx->comms.push_back(comm);
  *out = comm;
  return PARC_RT_OK;
}

} // namespace

extern "C" {

//===----------------------------------------------------------------------===//
// Context
//===----------------------------------------------------------------------===//

parc_rt_status_t parc_rt_init(int *argc, char ***argv,
                              parc_rt_context_t **out_ctx) {
  if (!out_ctx)
    return fail(PARC_RT_INVALID_ARGUMENT, "init: out_ctx is null");
  *out_ctx = nullptr;
  int initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (finalized)
    return fail(PARC_RT_COMM_ERROR, "init: MPI was already finalized");
  auto ctx = std::make_unique<parc_rt_context_t>();
  if (!initialized) {
    // FUNNELED: kernels may use OpenMP threads, but only the thread that
    // called init talks to MPI.
    int provided = 0;
    int rc = MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided);
    if (rc != MPI_SUCCESS)
      return mpiFail(PARC_RT_COMM_ERROR, rc, "init");
    ctx->ownsMpi = true;
  }
  // A private copy of the world keeps runtime traffic apart from the
  // host's, and errors returned rather than fatal.
  MPI_Comm world = MPI_COMM_NULL;
  int rc = MPI_Comm_dup(MPI_COMM_WORLD, &world);
  if (rc != MPI_SUCCESS)
    return mpiFail(PARC_RT_COMM_ERROR, rc, "init");
  MPI_Comm_set_errhandler(world, MPI_ERRORS_RETURN);
  PARC_RT_RETURN_IF_ERROR(createHalfTypes());
  ctx->timeoutSeconds = timeoutFromEnv();
  void *tagUb = nullptr;
  int flag = 0;
  MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &tagUb, &flag);
  if (flag && tagUb)
    ctx->tagUpperBound = *static_cast<int *>(tagUb);
  PARC_RT_RETURN_IF_ERROR(wrapComm(ctx.get(), world, &ctx->world));
  ctx->rank = ctx->world->rank;
  ctx->size = ctx->world->size;
  *out_ctx = ctx.release();
  return PARC_RT_OK;
}

parc_rt_status_t parc_rt_finalize(parc_rt_context_t *ctx) {
  if (!ctx)
    return fail(PARC_RT_INVALID_ARGUMENT, "finalize: context is null");
  const double deadline = now() + ctx->timeoutSeconds;
  for (auto &r : ctx->orphans)
    if (!pollUntil(r.get(), deadline))
      return fail(PARC_RT_TIMEOUT,
                  "finalize: %s, abandoned after a timeout, is still pending "
                  "at world rank %d; call parc_rt_abort",
                  r->what.c_str(), ctx->rank);
  ctx->orphans.clear();
  for (parc_rt_comm_t *comm : ctx->comms) {
    MPI_Comm_free(&comm->comm);
    delete comm;
  }
  ctx->comms.clear();
  freeHalfTypes();
  int rc = MPI_SUCCESS;
  if (ctx->ownsMpi)
    rc = MPI_Finalize();
  delete ctx;
  return rc == MPI_SUCCESS ? PARC_RT_OK
                           : mpiFail(PARC_RT_COMM_ERROR, rc, "finalize");
}

int parc_rt_context_rank(const parc_rt_context_t *ctx) {
  return ctx ? ctx->rank : -1;
}

int parc_rt_context_size(const parc_rt_context_t *ctx) {
  return ctx ? ctx->size : 0;
}

parc_rt_status_t parc_rt_context_set_timeout(parc_rt_context_t *ctx,
                                             double seconds) {
  if (!ctx || !(seconds > 0))
    return fail(PARC_RT_INVALID_ARGUMENT,
                "context_set_timeout: need a context and seconds > 0 (got %g)",
                seconds);
  ctx->timeoutSeconds = seconds;
  return PARC_RT_OK;
}

void parc_rt_abort(parc_rt_context_t *ctx, parc_rt_status_t status) {
  int rank = ctx ? ctx->rank : -1, initialized = 0, finalized = 0;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (!ctx && initialized && !finalized)
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  const char *message = parc_rt_last_error();
  if (!message || !*message)
    message = parc_rt_status_string(status);
  if (rank >= 0)
    std::fprintf(stderr, "parc: rank %d: %s\n", rank, message);
  else
    std::fprintf(stderr, "parc: %s\n", message);
  std::fflush(stderr);
  const int code = status == PARC_RT_OK ? 1 : int(status);
  if (initialized && !finalized)
    MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

parc_rt_comm_t *parc_rt_context_world(parc_rt_context_t *ctx) {
  return ctx ? ctx->world : nullptr;
}

//===----------------------------------------------------------------------===//
// Communicators
//===----------------------------------------------------------------------===//

parc_rt_status_t parc_rt_comm_split(parc_rt_context_t *ctx, int color, int key,
                                    parc_rt_comm_t **out_comm) {
  if (!ctx || !out_comm)
    return fail(PARC_RT_INVALID_ARGUMENT,
                "comm_split: context or out_comm is null");
  *out_comm = nullptr;
  MPI_Comm split = MPI_COMM_NULL;
  int rc = MPI_Comm_split(ctx->world->comm, color < 0 ? MPI_UNDEFINED : color,
                          key, &split);
  if (rc != MPI_SUCCESS)
    return mpiFail(PARC_RT_COMM_ERROR, rc, "comm_split");
  if (split == MPI_COMM_NULL)
    return PARC_RT_OK; // negative color: this rank is in no group
  return wrapComm(ctx, split, out_comm);
}

int parc_rt_comm_rank(const parc_rt_comm_t *comm) {
  return comm ? comm->rank : -1;
}

int parc_rt_comm_size(const parc_rt_comm_t *comm) {
  return comm ? comm->size : 0;
}

parc_rt_status_t parc_rt_comm_release(parc_rt_comm_t *comm) {
  if (!comm)
    return PARC_RT_OK;
  parc_rt_context_t *ctx = comm->ctx;
  if (comm == ctx->world)
    return fail(PARC_RT_INVALID_ARGUMENT,
                "comm_release: the world communicator belongs to the context");
  auto it = std::find(ctx->comms.begin(), ctx->comms.end(), comm);
  if (it != ctx->comms.end())
    ctx->comms.erase(it);
  MPI_Comm_free(&comm->comm);
  delete comm;
  return PARC_RT_OK;
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

parc_rt_status_t parc_rt_all_reduce_start(parc_rt_comm_t *comm,
                                          const void *send, void *recv,
                                          int64_t count, parc_rt_dtype_t dtype,
                                          parc_rt_reduce_op_t op,
                                          parc_rt_request_t **out_request) {
  PARC_RT_RETURN_IF_ERROR(checkOut("all_reduce", out_request));
  PARC_RT_RETURN_IF_ERROR(checkComm("all_reduce", comm));
  std::string what = describe("all_reduce", count, dtype, reduceOpName(op));
  PARC_RT_RETURN_IF_ERROR(checkBuffer(what, dtype, count, send, "send"));
  PARC_RT_RETURN_IF_ERROR(checkBuffer(what, dtype, count, recv, "recv"));
  MPI_Op mop = MPI_OP_NULL;
  PARC_RT_RETURN_IF_ERROR(mpiOp(what.c_str(), dtype, op, mop));
  auto r = newRequest(comm, std::move(what));
  int rc = MPI_Iallreduce(send == recv ? MPI_IN_PLACE : send, recv, int(count),
                          mpiType(dtype), mop, comm->comm, &r->request);
  return started(rc, std::move(r), out_request);
}

parc_rt_status_t parc_rt_all_reduce(parc_rt_comm_t *comm, const void *send,
                                    void *recv, int64_t count,
                                    parc_rt_dtype_t dtype,
                                    parc_rt_reduce_op_t op) {
  return blocking([&](parc_rt_request_t **r) {
    return parc_rt_all_reduce_start(comm, send, recv, count, dtype, op, r);
  });
}

parc_rt_status_t parc_rt_all_gather_start(parc_rt_comm_t *comm,
                                          const void *send, void *recv,
                                          int64_t send_count,
                                          parc_rt_dtype_t dtype,
                                          parc_rt_request_t **out_request) {
  PARC_RT_RETURN_IF_ERROR(checkOut("all_gather", out_request));
  PARC_RT_RETURN_IF_ERROR(checkComm("all_gather", comm));
  std::string what = describe("all_gather", send_count, dtype);
  PARC_RT_RETURN_IF_ERROR(checkBuffer(what, dtype, send_count, send, "send"));
  PARC_RT_RETURN_IF_ERROR(checkBuffer(what, dtype, send_count, recv, "recv"));
  auto r = newRequest(comm, std::move(what));
  MPI_Datatype t = mpiType(dtype);
  int rc = MPI_Iallgather(send, int(send_count), t, recv, int(send_count), t,
                          comm->comm, &r->request);
  return started(rc, std::move(r), out_request);
}

parc_rt_status_t parc_rt_all_gather(parc_rt_comm_t *comm, const void *send,
                                    void *recv, int64_t send_count,
                                    parc_rt_dtype_t dtype) {
  return blocking([&](parc_rt_request_t **r) {
    return parc_rt_all_gather_start(comm, send, recv, send_count, dtype, r);
  });
}

parc_rt_status_t parc_rt_reduce_scatter_start(parc_rt_comm_t *comm,
                                              const void *send, void *recv,
                                              int64_t recv_count,
                                              parc_rt_dtype_t dtype,
                                              parc_rt_reduce_op_t op,
                                              parc_rt_request_t **out_request) {
  PARC_RT_RETURN_IF_ERROR(checkOut("reduce_scatter", out_request));
  PARC_RT_RETURN_IF_ERROR(checkComm("reduce_scatter", comm));
  std::string what =
      describe("reduce_scatter", recv_count, dtype, reduceOpName(op));
  PARC_RT_RETURN_IF_ERROR(checkBuffer(what, dtype, recv_count, send, "send"));
  PARC_RT_RETURN_IF_ERROR(checkBuffer(what, dtype, recv_count, recv, "recv"));
  if (recv_count * comm->size > INT_MAX)
    return fail(PARC_RT_UNSUPPORTED, "%s: total count exceeds %d", what.c_str(),
                INT_MAX);
  MPI_Op mop = MPI_OP_NULL;
  PARC_RT_RETURN_IF_ERROR(mpiOp(what.c_str(), dtype, op, mop));
  auto r = newRequest(comm, std::move(what));
  int rc =
      MPI_Ireduce_scatter_block(send, recv, int(recv_count), mpiType(dtype),
                                mop, comm->comm, &r->request);
  return started(rc, std::move(r), out_request);
}

parc_rt_status_t parc_rt_reduce_scatter(parc_rt_comm_t *comm, const void *send,
                                        void *recv, int64_t recv_count,
                                        parc_rt_dtype_t dtype,
                                        parc_rt_reduce_op_t op) {
  return blocking([&](parc_rt_request_t **r) {
    return parc_rt_reduce_scatter_start(comm, send, recv, recv_count, dtype, op,
                                        r);
  });
}

parc_rt_status_t parc_rt_all_to_all_start(parc_rt_comm_t *comm,
                                          const void *send, void *recv,
                                          int64_t count, parc_rt_dtype_t dtype,
                                          parc_rt_request_t **out_request) {
  PARC_RT_RETURN_IF_ERROR(checkOut("all_to_all", out_request));
  PARC_RT_RETURN_IF_ERROR(checkComm("all_to_all", comm));
  std::string what = describe("all_to_all", count, dtype);
  PARC_RT_RETURN_IF_ERROR(checkBuffer(what, dtype, count, send, "send"));
  PARC_RT_RETURN_IF_ERROR(checkBuffer(what, dtype, count, recv, "recv"));
  auto r = newRequest(comm, std::move(what));
  MPI_Datatype t = mpiType(dtype);
  int rc = MPI_Ialltoall(send, int(count), t, recv, int(count), t, comm->comm,
                         &r->request);
  return started(rc, std::move(r), out_request);
}

parc_rt_status_t parc_rt_all_to_all(parc_rt_comm_t *comm, const void *send,
                                    void *recv, int64_t count,
                                    parc_rt_dtype_t dtype) {
  return blocking([&](parc_rt_request_t **r) {
    return parc_rt_all_to_all_start(comm, send, recv, count, dtype, r);
  });
}

parc_rt_status_t parc_rt_all_to_all_v_start(
    parc_rt_comm_t *comm, const void *send, const int64_t *send_counts,
    const int64_t *send_displs, void *recv, const int64_t *recv_counts,
    const int64_t *recv_displs, parc_rt_dtype_t dtype,
    parc_rt_request_t **out_request) {
  PARC_RT_RETURN_IF_ERROR(checkOut("all_to_all_v", out_request));
  PARC_RT_RETURN_IF_ERROR(checkComm("all_to_all_v", comm));
  if (!send_counts || !send_displs || !recv_counts || !recv_displs)
    return fail(PARC_RT_INVALID_ARGUMENT,
                "all_to_all_v: counts and displacements are required");
  int64_t sendTotal = 0, recvTotal = 0;
  const int n = comm->size;
  auto r = newRequest(comm, "");
  r->counts.resize(size_t(4 * n));
  const int64_t *arrays[4] = {send_counts, send_displs, recv_counts,
                              recv_displs};
  static const char *names[4] = {"send count", "send displacement",
                                 "recv count", "recv displacement"};
  for (int a = 0; a < 4; ++a)
    for (int i = 0; i < n; ++i) {
      const int64_t v = arrays[a][i];
      if (v < 0 || v > INT_MAX)
        return fail(PARC_RT_INVALID_ARGUMENT,
                    "all_to_all_v: %s for rank %d is %lld, outside [0, %d]",
                    names[a], i, (long long)v, INT_MAX);
      r->counts[size_t(a * n + i)] = int(v);
    }
  for (int i = 0; i < n; ++i) {
    sendTotal = std::max(sendTotal, send_displs[i] + send_counts[i]);
    recvTotal = std::max(recvTotal, recv_displs[i] + recv_counts[i]);
  }
  r->what = describe("all_to_all_v", sendTotal, dtype);
  PARC_RT_RETURN_IF_ERROR(checkBuffer(r->what, dtype, sendTotal, send, "send"));
  PARC_RT_RETURN_IF_ERROR(checkBuffer(r->what, dtype, recvTotal, recv, "recv"));
  MPI_Datatype t = mpiType(dtype);
  int *c = r->counts.data();
  int rc = MPI_Ialltoallv(send, c, c + n, t, recv, c + 2 * n, c + 3 * n, t,
                          comm->comm, &r->request);
  return started(rc, std::move(r), out_request);
}

parc_rt_status_t parc_rt_all_to_all_v(parc_rt_comm_t *comm, const void *send,
                                      const int64_t *send_counts,
                                      const int64_t *send_displs, void *recv,
                                      const int64_t *recv_counts,
                                      const int64_t *recv_displs,
                                      parc_rt_dtype_t dtype) {
  return blocking([&](parc_rt_request_t **r) {
    return parc_rt_all_to_all_v_start(comm, send, send_counts, send_displs,
                                      recv, recv_counts, recv_displs, dtype, r);
  });
}

parc_rt_status_t parc_rt_send_start(parc_rt_comm_t *comm, const void *buf,
                                    int64_t count, parc_rt_dtype_t dtype,
                                    int peer, int tag,
                                    parc_rt_request_t **out_request) {
  PARC_RT_RETURN_IF_ERROR(checkOut("send", out_request));
  PARC_RT_RETURN_IF_ERROR(checkComm("send", comm));
  std::string what = describe(
      "send", count, dtype,
      ("to rank " + std::to_string(peer) + ", tag " + std::to_string(tag))
          .c_str());
  PARC_RT_RETURN_IF_ERROR(checkBuffer(what, dtype, count, buf, "send"));
  PARC_RT_RETURN_IF_ERROR(checkPeer(what, comm, peer, "destination"));
  if (tag < 0 || tag > comm->ctx->tagUpperBound)
    return fail(PARC_RT_INVALID_ARGUMENT, "%s: tag outside [0, %d]",
                what.c_str(), comm->ctx->tagUpperBound);
  auto r = newRequest(comm, std::move(what));
  int rc = MPI_Isend(buf, int(count), mpiType(dtype), peer, tag, comm->comm,
                     &r->request);
  return started(rc, std::move(r), out_request);
}

parc_rt_status_t parc_rt_send(parc_rt_comm_t *comm, const void *buf,
                              int64_t count, parc_rt_dtype_t dtype, int peer,
                              int tag) {
  return blocking([&](parc_rt_request_t **r) {
    return parc_rt_send_start(comm, buf, count, dtype, peer, tag, r);
  });
}

parc_rt_status_t parc_rt_recv_start(parc_rt_comm_t *comm, void *buf,
                                    int64_t count, parc_rt_dtype_t dtype,
                                    int peer, int tag,
                                    parc_rt_request_t **out_request) {
  PARC_RT_RETURN_IF_ERROR(checkOut("recv", out_request));
  PARC_RT_RETURN_IF_ERROR(checkComm("recv", comm));
  std::string what = describe(
      "recv", count, dtype,
      ("from rank " + std::to_string(peer) + ", tag " + std::to_string(tag))
          .c_str());
  PARC_RT_RETURN_IF_ERROR(checkBuffer(what, dtype, count, buf, "recv"));
  PARC_RT_RETURN_IF_ERROR(checkPeer(what, comm, peer, "source"));
  if (tag < 0 || tag > comm->ctx->tagUpperBound)
    return fail(PARC_RT_INVALID_ARGUMENT, "%s: tag outside [0, %d]",
                what.c_str(), comm->ctx->tagUpperBound);
  auto r = newRequest(comm, std::move(what));
  r->checkCount = true;
  r->expectedCount = count;
  r->datatype = mpiType(dtype);
  int rc = MPI_Irecv(buf, int(count), r->datatype, peer, tag, comm->comm,
                     &r->request);
  return started(rc, std::move(r), out_request);
}

parc_rt_status_t parc_rt_recv(parc_rt_comm_t *comm, void *buf, int64_t count,
                              parc_rt_dtype_t dtype, int peer, int tag) {
  return blocking([&](parc_rt_request_t **r) {
    return parc_rt_recv_start(comm, buf, count, dtype, peer, tag, r);
  });
}

parc_rt_status_t parc_rt_barrier_start(parc_rt_comm_t *comm,
                                       parc_rt_request_t **out_request) {
  PARC_RT_RETURN_IF_ERROR(checkOut("barrier", out_request));
  PARC_RT_RETURN_IF_ERROR(checkComm("barrier", comm));
  auto r = newRequest(comm, "barrier");
  int rc = MPI_Ibarrier(comm->comm, &r->request);
  return started(rc, std::move(r), out_request);
}

parc_rt_status_t parc_rt_barrier(parc_rt_comm_t *comm) {
  return blocking(
      [&](parc_rt_request_t **r) { return parc_rt_barrier_start(comm, r); });
}

parc_rt_status_t parc_rt_broadcast_start(parc_rt_comm_t *comm, void *buf,
                                         int64_t count, parc_rt_dtype_t dtype,
                                         int root,
                                         parc_rt_request_t **out_request) {
  PARC_RT_RETURN_IF_ERROR(checkOut("broadcast", out_request));
  PARC_RT_RETURN_IF_ERROR(checkComm("broadcast", comm));
  std::string what = describe("broadcast", count, dtype,
                              ("root " + std::to_string(root)).c_str());
  PARC_RT_RETURN_IF_ERROR(checkBuffer(what, dtype, count, buf, "buf"));
  PARC_RT_RETURN_IF_ERROR(checkPeer(what, comm, root, "root"));
  auto r = newRequest(comm, std::move(what));
  int rc = MPI_Ibcast(buf, int(count), mpiType(dtype), root, comm->comm,
                      &r->request);
  return started(rc, std::move(r), out_request);
}

parc_rt_status_t parc_rt_broadcast(parc_rt_comm_t *comm, void *buf,
                                   int64_t count, parc_rt_dtype_t dtype,
                                   int root) {
  return blocking([&](parc_rt_request_t **r) {
    return parc_rt_broadcast_start(comm, buf, count, dtype, root, r);
  });
}

parc_rt_status_t parc_rt_wait(parc_rt_request_t *request) {
  if (!request)
    return fail(PARC_RT_INVALID_ARGUMENT, "wait: request is null");
  return waitOne(request);
}

parc_rt_status_t parc_rt_wait_all(int64_t count,
                                  parc_rt_request_t *const *requests) {
  if (count < 0 || (count > 0 && !requests))
    return fail(PARC_RT_INVALID_ARGUMENT, "wait_all: no request array");
  parc_rt_status_t first = PARC_RT_OK;
  std::string firstMessage;
  for (int64_t i = 0; i < count; ++i) {
    if (!requests[i])
      continue;
    parc_rt_status_t s = waitOne(requests[i]);
    if (s != PARC_RT_OK && first == PARC_RT_OK) {
      first = s;
      firstMessage = parc_rt_last_error();
    }
  }
  if (first != PARC_RT_OK)
    return fail(first, "%s", firstMessage.c_str());
  return PARC_RT_OK;
}

parc_rt_status_t parc_rt_test(parc_rt_request_t *request, int *out_done) {
  if (!request)
    return fail(PARC_RT_INVALID_ARGUMENT, "test: request is null");
  const bool done = poll(request);
  if (out_done)
    *out_done = done ? 1 : 0;
  return PARC_RT_OK;
}

parc_rt_status_t parc_rt_comm_time(const parc_rt_context_t *ctx,
                                   double *out_total_s, double *out_exposed_s) {
  if (!ctx || !out_total_s || !out_exposed_s)
    return fail(PARC_RT_INVALID_ARGUMENT, "comm_time: null argument");
  *out_total_s = ctx->commSeconds;
  *out_exposed_s = ctx->exposedSeconds;
  return PARC_RT_OK;
}

} // extern "C"
