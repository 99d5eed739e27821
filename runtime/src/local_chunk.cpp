//===- local_chunk.cpp - a rank's slice of a replicated tensor -----------===//
//
// Backend-independent: the rank comes from the communicator and the copy
// from the backend's parc_rt_copy (host or device memory alike).
//
//===----------------------------------------------------------------------===//

#include "status.h"

#include "parc/runtime.h"

using parc::rt::fail;

parc_rt_status_t parc_rt_local_chunk(parc_rt_comm_t *comm, const void *send,
                                     void *recv, int64_t count,
                                     parc_rt_dtype_t dtype) {
  int rank = parc_rt_comm_rank(comm);
  if (rank < 0)
    return fail(PARC_RT_INVALID_ARGUMENT, "local_chunk: null communicator");
  if (count < 0)
    return fail(PARC_RT_INVALID_ARGUMENT, "local_chunk: negative count %lld",
                static_cast<long long>(count));
  size_t bytes = size_t(count) * parc_rt_dtype_size(dtype);
  if (bytes == 0)
    return PARC_RT_OK;
  if (!send || !recv)
    return fail(PARC_RT_INVALID_ARGUMENT, "local_chunk: null %s buffer",
                send ? "recv" : "send");
  return parc_rt_copy(recv, static_cast<const char *>(send) + size_t(rank) * bytes,
                      bytes);
}
