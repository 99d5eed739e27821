//===- elementwise_ops.cpp - unary, binary, where, cast, fill -------------===//
//
// The elementwise entry points: elementwise_ops.h checks each call (and
// broadcast_plan.h plans the operands' strides), the backend computes it
// (backend.h). parc_rt_copy stays with the backends: only they know which
// memory a pointer is.
//
//===----------------------------------------------------------------------===//

#include "backend.h"
#include "elementwise_ops.h"
#include "kernel_tag.h"

using namespace parc::rt;

extern "C" {

parc_rt_status_t parc_rt_unary(parc_rt_unary_op_t op, parc_rt_dtype_t dtype,
                               const void *x, void *y, int64_t count) {
  tagKernel("elementwise");
  PARC_RT_RETURN_IF_ERROR(checkUnary(op, dtype, x, y, count));
  if (count == 0)
    return PARC_RT_OK;
  return runUnary(op, dtype, x, y, count);
}

parc_rt_status_t parc_rt_binary(parc_rt_binary_op_t op, parc_rt_dtype_t dtype,
                                const void *a, int64_t a_rank,
                                const int64_t *a_dims, const void *b,
                                int64_t b_rank, const int64_t *b_dims,
                                void *out, int64_t out_rank,
                                const int64_t *out_dims) {
  tagKernel("elementwise");
  int64_t n = 0;
  int64_t strides[3][PARC_RT_MAX_RANK];
  PARC_RT_RETURN_IF_ERROR(planBinary(op, dtype, a, a_rank, a_dims, b, b_rank,
                                     b_dims, out, out_rank, out_dims, n,
                                     strides));
  if (n == 0)
    return PARC_RT_OK;
  return runBinary(op, dtype, broadcastLoop<2>(out_rank, out_dims, strides), n,
                   a, b, numElements(b_rank, b_dims), out);
}

parc_rt_status_t parc_rt_where(parc_rt_dtype_t dtype, const void *cond,
                               int64_t cond_rank, const int64_t *cond_dims,
                               const void *x, int64_t x_rank,
                               const int64_t *x_dims, const void *y,
                               int64_t y_rank, const int64_t *y_dims, void *out,
                               int64_t out_rank, const int64_t *out_dims) {
  tagKernel("elementwise");
  int64_t n = 0;
  int64_t strides[4][PARC_RT_MAX_RANK];
  PARC_RT_RETURN_IF_ERROR(planWhere(dtype, cond, cond_rank, cond_dims, x,
                                    x_rank, x_dims, y, y_rank, y_dims, out,
                                    out_rank, out_dims, n, strides));
  if (n == 0)
    return PARC_RT_OK;
  return runWhere(dtype, broadcastLoop<3>(out_rank, out_dims, strides), n,
                  cond, x, y, out);
}

parc_rt_status_t parc_rt_cast(parc_rt_dtype_t from, const void *x,
                              parc_rt_dtype_t to, void *y, int64_t count) {
  tagKernel("elementwise");
  PARC_RT_RETURN_IF_ERROR(checkCast(from, x, to, y, count));
  if (count == 0)
    return PARC_RT_OK;
  if (from == to)
    return x == y ? PARC_RT_OK
                  : parc_rt_copy(y, x, size_t(count) * parc_rt_dtype_size(from));
  return runCast(from, x, to, y, count);
}

parc_rt_status_t parc_rt_fill(parc_rt_dtype_t dtype, void *dst, int64_t count,
                              const void *value) {
  PARC_RT_RETURN_IF_ERROR(checkFill(dtype, dst, count, value));
  if (count == 0)
    return PARC_RT_OK;
  return runFill(dtype, dst, count, value);
}

} // extern "C"
