//===- comm_api.cpp - The comm ABI every backend shares -------------------===//
//
// Context and communicator accessors, waits, the send/recv entry points and
// the blocking form of each collective: its `_start`, then a wait. The
// backends (comm_backend.h) supply the types, how a request completes and
// how a point-to-point transfer starts. The barrier stays with the
// backends: the cuda backend's blocking barrier is a host barrier.
//
//===----------------------------------------------------------------------===//

#include "comm_backend.h"
#include "mpi_process.h"
#include "status.h"

#include <algorithm>
#include <string>

using namespace parc::rt;

extern "C" {

int parc_rt_context_rank(const parc_rt_context_t *ctx) {
  return ctx ? contextBase(ctx)->rank : -1;
}

int parc_rt_context_size(const parc_rt_context_t *ctx) {
  return ctx ? contextBase(ctx)->size : 0;
}

parc_rt_status_t parc_rt_context_set_timeout(parc_rt_context_t *ctx,
                                             double seconds) {
  if (!ctx || !(seconds > 0))
    return fail(PARC_RT_INVALID_ARGUMENT,
                "context_set_timeout: need a context and seconds > 0 (got %g)",
                seconds);
  contextBase(ctx)->timeoutSeconds = seconds;
  return PARC_RT_OK;
}

parc_rt_comm_t *parc_rt_context_world(parc_rt_context_t *ctx) {
  return ctx ? contextBase(ctx)->world : nullptr;
}

int parc_rt_comm_rank(const parc_rt_comm_t *comm) {
  return comm ? commBase(comm)->rank : -1;
}

int parc_rt_comm_size(const parc_rt_comm_t *comm) {
  return comm ? commBase(comm)->size : 0;
}

parc_rt_status_t parc_rt_comm_split(parc_rt_context_t *ctx, int color, int key,
                                    parc_rt_comm_t **out_comm) {
  if (!ctx || !out_comm)
    return fail(PARC_RT_INVALID_ARGUMENT,
                "comm_split: context or out_comm is null");
  *out_comm = nullptr;
  PARC_RT_RETURN_IF_ERROR(quiesceComms(ctx));
  MPI_Comm split = MPI_COMM_NULL;
  int rc = MPI_Comm_split(worldMpiComm(ctx),
                          color < 0 ? MPI_UNDEFINED : color, key, &split);
  if (rc != MPI_SUCCESS)
    return mpiFail(PARC_RT_COMM_ERROR, rc, "comm_split");
  if (split == MPI_COMM_NULL)
    return PARC_RT_OK; // negative color: this rank is in no group
  return adoptSplitComm(ctx, split, out_comm);
}

parc_rt_status_t parc_rt_comm_release(parc_rt_comm_t *comm) {
  if (!comm)
    return PARC_RT_OK;
  parc_rt_context_t *ctx = commBase(comm)->ctx;
  ContextBase *base = contextBase(ctx);
  if (comm == base->world)
    return fail(PARC_RT_INVALID_ARGUMENT,
                "comm_release: the world communicator belongs to the context");
  PARC_RT_RETURN_IF_ERROR(quiesceComms(ctx));
  auto it = std::find(base->comms.begin(), base->comms.end(), comm);
  if (it != base->comms.end())
    base->comms.erase(it);
  destroyComm(comm);
  return PARC_RT_OK;
}

parc_rt_status_t parc_rt_wait(parc_rt_request_t *request) {
  if (!request)
    return fail(PARC_RT_INVALID_ARGUMENT, "wait: request is null");
  return waitRequest(request, /*blocking=*/false);
}

// Every request is waited for (and freed) even after a failure; the first
// failure is reported.
parc_rt_status_t parc_rt_wait_all(int64_t count,
                                  parc_rt_request_t *const *requests) {
  if (count < 0 || (count > 0 && !requests))
    return fail(PARC_RT_INVALID_ARGUMENT, "wait_all: no request array");
  parc_rt_status_t first = PARC_RT_OK;
  std::string firstMessage;
  for (int64_t i = 0; i < count; ++i) {
    if (!requests[i])
      continue;
    parc_rt_status_t s = waitRequest(requests[i], /*blocking=*/false);
    if (s != PARC_RT_OK && first == PARC_RT_OK) {
      first = s;
      firstMessage = parc_rt_last_error();
    }
  }
  if (first != PARC_RT_OK)
    return fail(first, "%s", firstMessage.c_str());
  return PARC_RT_OK;
}

parc_rt_status_t parc_rt_all_reduce(parc_rt_comm_t *comm, const void *send,
                                    void *recv, int64_t count,
                                    parc_rt_dtype_t dtype,
                                    parc_rt_reduce_op_t op) {
  return blocking([&](parc_rt_request_t **r) {
    return parc_rt_all_reduce_start(comm, send, recv, count, dtype, op, r);
  });
}

parc_rt_status_t parc_rt_all_gather(parc_rt_comm_t *comm, const void *send,
                                    void *recv, int64_t send_count,
                                    parc_rt_dtype_t dtype) {
  return blocking([&](parc_rt_request_t **r) {
    return parc_rt_all_gather_start(comm, send, recv, send_count, dtype, r);
  });
}

// The leading-dim gather is the one-row case of the backends' rows form.
parc_rt_status_t parc_rt_all_gather_start(parc_rt_comm_t *comm,
                                          const void *send, void *recv,
                                          int64_t send_count,
                                          parc_rt_dtype_t dtype,
                                          parc_rt_request_t **out_request) {
  return parc_rt_all_gather_rows_start(comm, send, recv, 1, send_count,
                                       nullptr, -1, dtype, out_request);
}

parc_rt_status_t parc_rt_all_gather_rows(parc_rt_comm_t *comm,
                                         const void *send, void *recv,
                                         int64_t rows, int64_t row_count,
                                         const int64_t *row_takes, int root,
                                         parc_rt_dtype_t dtype) {
  return blocking([&](parc_rt_request_t **r) {
    return parc_rt_all_gather_rows_start(comm, send, recv, rows, row_count,
                                         row_takes, root, dtype, r);
  });
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

parc_rt_status_t parc_rt_all_to_all(parc_rt_comm_t *comm, const void *send,
                                    void *recv, int64_t count,
                                    parc_rt_dtype_t dtype) {
  return blocking([&](parc_rt_request_t **r) {
    return parc_rt_all_to_all_start(comm, send, recv, count, dtype, r);
  });
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
  // The send buffer is only read.
  return startPointToPoint(/*isSend=*/true, comm, const_cast<void *>(buf),
                           count, dtype, peer, tag, out_request);
}

parc_rt_status_t parc_rt_recv_start(parc_rt_comm_t *comm, void *buf,
                                    int64_t count, parc_rt_dtype_t dtype,
                                    int peer, int tag,
                                    parc_rt_request_t **out_request) {
  return startPointToPoint(/*isSend=*/false, comm, buf, count, dtype, peer, tag,
                           out_request);
}

parc_rt_status_t parc_rt_send(parc_rt_comm_t *comm, const void *buf,
                              int64_t count, parc_rt_dtype_t dtype, int peer,
                              int tag) {
  return blocking([&](parc_rt_request_t **r) {
    return parc_rt_send_start(comm, buf, count, dtype, peer, tag, r);
  });
}

parc_rt_status_t parc_rt_recv(parc_rt_comm_t *comm, void *buf, int64_t count,
                              parc_rt_dtype_t dtype, int peer, int tag) {
  return blocking([&](parc_rt_request_t **r) {
    return parc_rt_recv_start(comm, buf, count, dtype, peer, tag, r);
  });
}

parc_rt_status_t parc_rt_broadcast(parc_rt_comm_t *comm, void *buf,
                                   int64_t count, parc_rt_dtype_t dtype,
                                   int root) {
  return blocking([&](parc_rt_request_t **r) {
    return parc_rt_broadcast_start(comm, buf, count, dtype, root, r);
  });
}

} // extern "C"
