//===- row_ops.cpp - softmax, norms, reductions, topk, rotary -------------===//
//
// The ops over rows or along an axis: row_plans.h checks the call and sizes
// the rows, the backend runs them (backend.h: runSoftmax, runNorm,
// runReduce, runTopk, runRotary).
//
//===----------------------------------------------------------------------===//

#include "backend.h"
#include "kernel_tag.h"

using namespace parc::rt;

namespace {

parc_rt_status_t softmax(const char *op, bool log, parc_rt_dtype_t dtype,
                         const void *x, void *y, int64_t rank,
                         const int64_t *dims, int64_t axis) {
  AxisView v;
  PARC_RT_RETURN_IF_ERROR(planSoftmax(op, dtype, x, y, rank, dims, axis, v));
  if (v.empty())
    return PARC_RT_OK;
  return runSoftmax(op, log, dtype, v, x, y);
}

parc_rt_status_t norm(const char *op, bool rms, parc_rt_dtype_t dtype,
                      const void *x, const void *scale, const void *bias,
                      void *y, int64_t rank, const int64_t *dims, int64_t axis,
                      float epsilon) {
  NormPlan p;
  PARC_RT_RETURN_IF_ERROR(
      planNorm(op, dtype, x, scale, y, rank, dims, axis, epsilon, p));
  if (p.empty())
    return PARC_RT_OK;
  return runNorm(op, rms, dtype, p, x, scale, bias, y, epsilon);
}

} // namespace

extern "C" {

parc_rt_status_t parc_rt_softmax(parc_rt_dtype_t dtype, const void *x, void *y,
                                 int64_t rank, const int64_t *dims,
                                 int64_t axis) {
  tagKernel("softmax");
  return softmax("softmax", /*log=*/false, dtype, x, y, rank, dims, axis);
}

parc_rt_status_t parc_rt_log_softmax(parc_rt_dtype_t dtype, const void *x,
                                     void *y, int64_t rank, const int64_t *dims,
                                     int64_t axis) {
  tagKernel("softmax");
  return softmax("log_softmax", /*log=*/true, dtype, x, y, rank, dims, axis);
}

parc_rt_status_t parc_rt_layer_norm(parc_rt_dtype_t dtype, const void *x,
                                    const void *scale, const void *bias,
                                    void *y, int64_t rank, const int64_t *dims,
                                    int64_t axis, float epsilon) {
  tagKernel("norm");
  return norm("layer_norm", /*rms=*/false, dtype, x, scale, bias, y, rank, dims,
              axis, epsilon);
}

parc_rt_status_t parc_rt_rms_norm(parc_rt_dtype_t dtype, const void *x,
                                  const void *scale, const void *bias, void *y,
                                  int64_t rank, const int64_t *dims,
                                  int64_t axis, float epsilon) {
  tagKernel("norm");
  return norm("rms_norm", /*rms=*/true, dtype, x, scale, bias, y, rank, dims,
              axis, epsilon);
}

parc_rt_status_t parc_rt_reduce(parc_rt_reduction_t reduction,
                                parc_rt_dtype_t dtype, const void *x,
                                int64_t rank, const int64_t *dims,
                                int64_t num_axes, const int64_t *axes,
                                void *y) {
  tagKernel("reduce");
  ReducePlan p;
  PARC_RT_RETURN_IF_ERROR(
      planReduce(reduction, dtype, x, rank, dims, num_axes, axes, y, p));
  if (p.empty())
    return PARC_RT_OK;
  return runReduce(reduction, dtype, p, x, rank, dims, y);
}

parc_rt_status_t parc_rt_topk(parc_rt_dtype_t dtype, const void *x,
                              int64_t rank, const int64_t *dims, int64_t axis,
                              int64_t k, int largest, void *values,
                              void *indices_out) {
  tagKernel("reduce");
  int64_t *indices = static_cast<int64_t *>(indices_out);
  TopkPlan p;
  PARC_RT_RETURN_IF_ERROR(
      planTopk(dtype, x, rank, dims, axis, k, values, indices, p));
  if (p.empty())
    return PARC_RT_OK;
  return runTopk(dtype, p, x, largest != 0, values, indices);
}

parc_rt_status_t parc_rt_rotary(parc_rt_dtype_t dtype, const void *x,
                                int64_t rank, const int64_t *dims,
                                int64_t seq_axis, int64_t rotary_dim,
                                const void *cos, const void *sin, void *y) {
  tagKernel("rotary");
  RotaryPlan p;
  PARC_RT_RETURN_IF_ERROR(
      planRotary(dtype, x, rank, dims, seq_axis, rotary_dim, cos, sin, y, p));
  if (p.empty())
    return PARC_RT_OK;
  return runRotary(dtype, p, x, cos, sin, y);
}

} // extern "C"
