//===- comm.cpp - Context, communicators and collectives over MPI ---------===//
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

#include "../comm_backend.h"
#include "../comm_common.h"
#include "../half.h"
#include "../mpi_process.h"
#include "../status.h"

#include <algorithm>
#include <climits>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

using namespace parc::rt;

struct parc_rt_comm_t : parc::rt::CommBase {
  MPI_Comm comm = MPI_COMM_NULL;
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
  // all_to_all_v and all_gather_rows: MPI reads the int arrays until
  // completion.
  std::vector<int> counts;
  // all_gather_rows not direct: the strided columns this rank sends (one
  // type, once per peer as alltoallw takes it) and those it receives from
  // each peer; freed with the request, once MPI no longer reads them.
  std::vector<MPI_Datatype> sendTypes, recvTypes;

  ~parc_rt_request_t() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (finalized)
      return;
    auto release = [](MPI_Datatype &t) {
      if (t != MPI_DATATYPE_NULL)
        MPI_Type_free(&t);
    };
    if (!sendTypes.empty())
      release(sendTypes.front()); // the others name the same type
    for (MPI_Datatype &t : recvTypes)
      release(t);
  }
};

/// Wall time during which at least one request was in flight: requests that
/// overlap count once, so it never exceeds the span they cover (a sum of
/// each request's time would). Intervals are merged when read, and in
/// batches so that memory stays bounded between reads.
class InFlightTime {
public:
  void add(double start, double end) {
    pending.emplace_back(start, end);
    if (pending.size() >= 4096)
      fold();
  }
  double seconds() {
    fold();
    return merged;
  }

private:
  void fold() {
    std::sort(pending.begin(), pending.end());
    double until = -1;
    for (auto [start, end] : pending) {
      start = std::max(start, until);
      if (end > start)
        merged += end - start;
      until = std::max(until, end);
    }
    pending.clear();
  }
  std::vector<std::pair<double, double>> pending;
  double merged = 0;
};

struct parc_rt_context_t : parc::rt::ContextBase {
  int tagUpperBound = 32767;
  // Requests abandoned by a timed-out wait: MPI cannot cancel collectives,
  // so they stay here until finalize drains them.
  std::vector<std::unique_ptr<parc_rt_request_t>> orphans;
  // Seconds with requests in flight (from starts to completions), and of
  // them spent in start calls or blocked in waits. Reading merges: mutable.
  mutable InFlightTime inFlight;
  double exposedSeconds = 0;
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

/// The MPI op of a reduction comm_common.h's checkReduceOp accepted.
MPI_Op mpiOp(parc_rt_dtype_t dtype, parc_rt_reduce_op_t op) {
  if (dtype == PARC_RT_F16 || dtype == PARC_RT_BF16)
    return halfOps[op];
  return op == PARC_RT_REDUCE_SUM   ? MPI_SUM
         : op == PARC_RT_REDUCE_MAX ? MPI_MAX
                                    : MPI_MIN;
}

/// MPI counts are int.
constexpr int64_t kMaxCount = INT_MAX;

bool usable(const parc_rt_comm_t *comm) {
  return comm && comm->comm != MPI_COMM_NULL;
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

bool pollUntil(parc_rt_request_t *r, double deadline) {
  return parc::rt::pollUntil(deadline, [r] { return poll(r); });
}

parc_rt_status_t waitOne(parc_rt_request_t *raw) {
  std::unique_ptr<parc_rt_request_t> r(raw);
  parc_rt_context_t *ctx = r->ctx;
  const double entered = now();
  // Ends early once a peer is known stopped or gone (liveness.h).
  parc_rt_status_t lost = PARC_RT_OK;
  const bool done = parc::rt::pollUntil(entered + ctx->timeoutSeconds, [&] {
    if (poll(r.get()))
      return true;
    lost = ctx->liveness.check(r->what, r->commSize);
    return lost != PARC_RT_OK;
  });
  if (!done || lost != PARC_RT_OK) {
    parc_rt_status_t s =
        lost != PARC_RT_OK
            ? lost
            : timedOut(r->what, r->commSize, ctx->timeoutSeconds, ctx->rank);
    ctx->orphans.push_back(std::move(r));
    return s;
  }
  ctx->inFlight.add(r->startedAt, r->completedAt);
  // Time inside the start call (MPI may do the whole transfer there) and
  // blocked in the wait is what compute did not hide.
  ctx->exposedSeconds += r->blocking ? r->completedAt - r->startedAt
                                     : (r->issuedAt - r->startedAt) +
                                           std::max(0.0, r->completedAt - entered);
  return r->result;
}

/// Every `_start`'s first checks.
parc_rt_status_t prologue(const char *op, parc_rt_comm_t *comm,
                          parc_rt_request_t **out) {
  return checkStart(op, out, usable(comm));
}

/// all_reduce, all_gather, reduce_scatter and all_to_all of `count`
/// elements per rank: checked, then a request for the MPI call to start.
parc_rt_status_t newCollective(const char *op, parc_rt_comm_t *comm,
                               const void *send, const void *recv,
                               int64_t count, parc_rt_dtype_t dtype,
                               const parc_rt_reduce_op_t *reduce,
                               parc_rt_request_t **out,
                               std::unique_ptr<parc_rt_request_t> &r) {
  PARC_RT_RETURN_IF_ERROR(prologue(op, comm, out));
  std::string what;
  PARC_RT_RETURN_IF_ERROR(
      checkCollective(op, count, dtype, reduce, send, recv, kMaxCount, what));
  r = newRequest(comm, std::move(what));
  return PARC_RT_OK;
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

namespace parc::rt {

// MPI_Isend, or MPI_Irecv whose message must hold exactly `count` elements.
parc_rt_status_t startPointToPoint(bool isSend, parc_rt_comm_t *comm, void *buf,
                                   int64_t count, parc_rt_dtype_t dtype,
                                   int peer, int tag, parc_rt_request_t **out) {
  PARC_RT_RETURN_IF_ERROR(prologue(isSend ? "send" : "recv", comm, out));
  std::string what;
  PARC_RT_RETURN_IF_ERROR(
      checkPointToPoint(isSend, count, dtype, buf, peer, tag, comm->size,
                        comm->ctx->tagUpperBound, kMaxCount, what));
  auto r = newRequest(comm, std::move(what));
  r->datatype = mpiType(dtype);
  r->checkCount = !isSend;
  r->expectedCount = count;
  int rc = isSend ? MPI_Isend(buf, int(count), r->datatype, peer, tag,
                              comm->comm, &r->request)
                  : MPI_Irecv(buf, int(count), r->datatype, peer, tag,
                              comm->comm, &r->request);
  return started(rc, std::move(r), out);
}

parc_rt_status_t waitRequest(parc_rt_request_t *request, bool blocking) {
  request->blocking = blocking;
  return waitOne(request);
}

MPI_Comm worldMpiComm(parc_rt_context_t *ctx) { return ctx->world->comm; }

parc_rt_status_t quiesceComms(parc_rt_context_t *) { return PARC_RT_OK; }

parc_rt_status_t adoptSplitComm(parc_rt_context_t *ctx, MPI_Comm split,
                                parc_rt_comm_t **out) {
  return wrapComm(ctx, split, out);
}

void destroyComm(parc_rt_comm_t *comm) {
  MPI_Comm_free(&comm->comm);
  delete comm;
}

} // namespace parc::rt

extern "C" {

//===----------------------------------------------------------------------===//
// Context
//===----------------------------------------------------------------------===//

parc_rt_status_t parc_rt_init(int *argc, char ***argv,
                              parc_rt_context_t **out_ctx) {
  if (!out_ctx)
    return fail(PARC_RT_INVALID_ARGUMENT, "init: out_ctx is null");
  *out_ctx = nullptr;
  auto ctx = std::make_unique<parc_rt_context_t>();
  MPI_Comm world = MPI_COMM_NULL;
  PARC_RT_RETURN_IF_ERROR(startMpi(argc, argv, ctx->ownsMpi, world));
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
  PARC_RT_RETURN_IF_ERROR(startLiveness(world, ctx->liveness));
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
  for (parc_rt_comm_t *comm : ctx->comms)
    destroyComm(comm);
  ctx->comms.clear();
  freeHalfTypes();
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
  std::unique_ptr<parc_rt_request_t> r;
  PARC_RT_RETURN_IF_ERROR(newCollective("all_reduce", comm, send, recv, count,
                                        dtype, &op, out_request, r));
  int rc =
      MPI_Iallreduce(send == recv ? MPI_IN_PLACE : send, recv, int(count),
                     mpiType(dtype), mpiOp(dtype, op), comm->comm, &r->request);
  return started(rc, std::move(r), out_request);
}

parc_rt_status_t parc_rt_all_gather_rows_start(
    parc_rt_comm_t *comm, const void *send, void *recv, int64_t rows,
    int64_t row_count, const int64_t *row_takes, int root,
    parc_rt_dtype_t dtype, parc_rt_request_t **out_request) {
  RowPlacement placement;
  int64_t count = 0;
  if (comm) // a null one is newCollective's error
    PARC_RT_RETURN_IF_ERROR(planRows(rows, row_count, row_takes, root,
                                     comm->size, kMaxCount, placement, count));
  std::unique_ptr<parc_rt_request_t> r;
  PARC_RT_RETURN_IF_ERROR(newCollective("all_gather", comm, send, recv, count,
                                        dtype, nullptr, out_request, r));
  MPI_Datatype t = mpiType(dtype);
  if (placement.direct()) {
    int rc = root < 0 ? MPI_Iallgather(send, int(count), t, recv, int(count),
                                       t, comm->comm, &r->request)
                      : MPI_Igather(send, int(count), t, recv, int(count), t,
                                    root, comm->comm, &r->request);
    return started(rc, std::move(r), out_request);
  }
  // Every rank's columns land in place: its leading takes of each row are a
  // strided send type and, at their column in recv, a strided receive type.
  // Faster than a contiguous gather and a row-by-row copy after it once
  // pollUntil yields while MPI moves the fragments (README, Benchmarks).
  const int n = comm->size;
  const int64_t e = parc_rt_dtype_size(dtype);
  if (placement.recvRow > kMaxCount / e)
    return fail(PARC_RT_UNSUPPORTED, "%s: a gathered row exceeds %d bytes",
                r->what.c_str(), INT_MAX);
  auto strided = [&](int64_t take, int64_t stride, MPI_Datatype &out) {
    int rc = MPI_Type_vector(int(placement.rows), int(take), int(stride), t,
                             &out);
    return rc == MPI_SUCCESS ? MPI_Type_commit(&out) : rc;
  };
  r->sendTypes.assign(size_t(n), MPI_DATATYPE_NULL);
  r->recvTypes.assign(size_t(n), MPI_DATATYPE_NULL);
  int rc = strided(placement.takes[size_t(comm->rank)], placement.rowCount,
                   r->sendTypes.front());
  std::fill(r->sendTypes.begin() + 1, r->sendTypes.end(), r->sendTypes.front());
  // MPI reads the arrays until completion: send counts and displacements,
  // then receive counts and displacements (bytes, as alltoallw takes them).
  // With a root, a rank sends only to it and only it receives. A rank's own
  // rows are not MPI's: libnbc copies them through the datatype engine,
  // slower than a memcpy per row (12.9 MB of GPT-2 logits: README,
  // Benchmarks).
  r->counts.assign(size_t(4 * n), 0);
  int *c = r->counts.data();
  for (int q = 0, column = 0; q < n && rc == MPI_SUCCESS; ++q) {
    const bool peer = q != comm->rank;
    c[q] = peer && placement.receives(q);
    c[2 * n + q] = peer && placement.receives(comm->rank);
    c[3 * n + q] = int(column * e);
    rc = strided(placement.takes[size_t(q)], placement.recvRow,
                 r->recvTypes[size_t(q)]);
    column += int(placement.takes[size_t(q)]);
  }
  if (rc == MPI_SUCCESS)
    rc = MPI_Ialltoallw(send, c, c + n, r->sendTypes.data(), recv, c + 2 * n,
                        c + 3 * n, r->recvTypes.data(), comm->comm,
                        &r->request);
  // After the start, so that peers may read this rank's rows meanwhile; at
  // the displacement MPI would have written them to.
  if (rc == MPI_SUCCESS && placement.receives(comm->rank)) {
    const size_t rowBytes = size_t(placement.takes[size_t(comm->rank)] * e);
    char *own = static_cast<char *>(recv) + c[3 * n + comm->rank];
    for (int64_t i = 0; i < placement.rows && rowBytes; ++i)
      std::memcpy(own + i * placement.recvRow * e,
                  static_cast<const char *>(send) + i * placement.rowCount * e,
                  rowBytes);
  }
  return started(rc, std::move(r), out_request);
}

parc_rt_status_t parc_rt_reduce_scatter_start(parc_rt_comm_t *comm,
                                              const void *send, void *recv,
                                              int64_t recv_count,
                                              parc_rt_dtype_t dtype,
                                              parc_rt_reduce_op_t op,
                                              parc_rt_request_t **out_request) {
  std::unique_ptr<parc_rt_request_t> r;
  PARC_RT_RETURN_IF_ERROR(newCollective("reduce_scatter", comm, send, recv,
                                        recv_count, dtype, &op, out_request,
                                        r));
  if (recv_count * comm->size > kMaxCount)
    return fail(PARC_RT_UNSUPPORTED, "%s: total count exceeds %d",
                r->what.c_str(), INT_MAX);
  int rc =
      MPI_Ireduce_scatter_block(send, recv, int(recv_count), mpiType(dtype),
                                mpiOp(dtype, op), comm->comm, &r->request);
  return started(rc, std::move(r), out_request);
}

parc_rt_status_t parc_rt_all_to_all_start(parc_rt_comm_t *comm,
                                          const void *send, void *recv,
                                          int64_t count, parc_rt_dtype_t dtype,
                                          parc_rt_request_t **out_request) {
  std::unique_ptr<parc_rt_request_t> r;
  PARC_RT_RETURN_IF_ERROR(newCollective("all_to_all", comm, send, recv, count,
                                        dtype, nullptr, out_request, r));
  MPI_Datatype t = mpiType(dtype);
  int rc = MPI_Ialltoall(send, int(count), t, recv, int(count), t, comm->comm,
                         &r->request);
  return started(rc, std::move(r), out_request);
}

parc_rt_status_t parc_rt_all_to_all_v_start(
    parc_rt_comm_t *comm, const void *send, const int64_t *send_counts,
    const int64_t *send_displs, void *recv, const int64_t *recv_counts,
    const int64_t *recv_displs, parc_rt_dtype_t dtype,
    parc_rt_request_t **out_request) {
  PARC_RT_RETURN_IF_ERROR(prologue("all_to_all_v", comm, out_request));
  const int n = comm->size;
  std::string what;
  PARC_RT_RETURN_IF_ERROR(checkAllToAllV(n, send, send_counts, send_displs,
                                         recv, recv_counts, recv_displs, dtype,
                                         kMaxCount, what));
  auto r = newRequest(comm, std::move(what));
  // MPI takes int arrays, and reads them until completion.
  r->counts.resize(size_t(4 * n));
  const int64_t *arrays[4] = {send_counts, send_displs, recv_counts,
                              recv_displs};
  for (int a = 0; a < 4; ++a)
    for (int i = 0; i < n; ++i)
      r->counts[size_t(a * n + i)] = int(arrays[a][i]);
  MPI_Datatype t = mpiType(dtype);
  int *c = r->counts.data();
  int rc = MPI_Ialltoallv(send, c, c + n, t, recv, c + 2 * n, c + 3 * n, t,
                          comm->comm, &r->request);
  return started(rc, std::move(r), out_request);
}

parc_rt_status_t parc_rt_barrier_start(parc_rt_comm_t *comm,
                                       parc_rt_request_t **out_request) {
  PARC_RT_RETURN_IF_ERROR(prologue("barrier", comm, out_request));
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
  PARC_RT_RETURN_IF_ERROR(prologue("broadcast", comm, out_request));
  std::string what;
  PARC_RT_RETURN_IF_ERROR(
      checkBroadcast(count, dtype, buf, root, comm->size, kMaxCount, what));
  auto r = newRequest(comm, std::move(what));
  int rc = MPI_Ibcast(buf, int(count), mpiType(dtype), root, comm->comm,
                      &r->request);
  return started(rc, std::move(r), out_request);
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
  *out_total_s = ctx->inFlight.seconds();
  *out_exposed_s = ctx->exposedSeconds;
  return PARC_RT_OK;
}

} // extern "C"
