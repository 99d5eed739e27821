//===- broadcast_plan.h - checks and strides of broadcasting ops -*- C++ -*-===//
//
// Binary ops and where read K operands broadcast to one output. Their
// argument checks and the strides each operand is read with are worked out
// here for both backends, which differ only in the loop that follows (a
// LoopNest on the cpu, a kernel on the gpu).
//
//===----------------------------------------------------------------------===//
#ifndef PARC_RUNTIME_BROADCAST_PLAN_H
#define PARC_RUNTIME_BROADCAST_PLAN_H

#include "cpu/shape.h"
#include "status.h"

namespace parc::rt {

struct BroadcastOperand {
  const char *name;
  const void *data;
  int64_t rank;
  const int64_t *dims;
};

/// Checks the K operands and the output; on success `count` is the output's
/// element count (0: nothing to do), strides[0] the output's strides and
/// strides[1 + i] operand i's broadcast strides.
template <int K>
parc_rt_status_t planBroadcast(const char *op, parc_rt_dtype_t dtype,
                               const BroadcastOperand (&in)[K], void *out,
                               int64_t outRank, const int64_t *outDims,
                               int64_t &count,
                               int64_t (&strides)[K + 1][PARC_RT_MAX_RANK]) {
  count = 0;
  PARC_RT_RETURN_IF_ERROR(checkDtype(op, dtype));
  int64_t ranks[K];
  const int64_t *dims[K];
  for (int i = 0; i < K; ++i) {
    PARC_RT_RETURN_IF_ERROR(checkShape(op, in[i].name, in[i].rank, in[i].dims));
    ranks[i] = in[i].rank;
    dims[i] = in[i].dims;
  }
  PARC_RT_RETURN_IF_ERROR(checkShape(op, "out", outRank, outDims));
  PARC_RT_RETURN_IF_ERROR(
      checkBroadcastResult(op, K, ranks, dims, outRank, outDims));
  const int64_t n = numElements(outRank, outDims);
  if (n == 0)
    return PARC_RT_OK;
  for (int i = 0; i < K; ++i)
    PARC_RT_RETURN_IF_ERROR(checkData(op, in[i].name, in[i].data, n));
  PARC_RT_RETURN_IF_ERROR(checkData(op, "out", out, n));
  contiguousStrides(outRank, outDims, strides[0]);
  for (int i = 0; i < K; ++i)
    PARC_RT_RETURN_IF_ERROR(broadcastStrides(op, in[i].name, in[i].rank,
                                             in[i].dims, outRank, outDims,
                                             strides[i + 1]));
  count = n;
  return PARC_RT_OK;
}

/// The loop over out and the K operands of a plan with count > 0.
template <int K>
LoopNest<K + 1>
broadcastLoop(int64_t outRank, const int64_t *outDims,
              const int64_t (&strides)[K + 1][PARC_RT_MAX_RANK]) {
  std::array<const int64_t *, K + 1> s;
  for (int k = 0; k <= K; ++k)
    s[k] = strides[k];
  return LoopNest<K + 1>(outRank, outDims, s);
}

} // namespace parc::rt

#endif // PARC_RUNTIME_BROADCAST_PLAN_H
