//===- row_ops.cpp - softmax, log_softmax, layer_norm, rms_norm -----------===//
//
// The row-normalising ops: row_plans.h checks the call and sizes the rows,
// the backend runs them (runSoftmax, runNorm).
//
//===----------------------------------------------------------------------===//

#include "kernel_tag.h"
#include "row_plans.h"

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

} // extern "C"
