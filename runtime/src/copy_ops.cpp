//===- copy_ops.cpp - transpose, slice, concat, split, expand -------------===//
//
// The movement ops that are nothing but strided copies: movement_plans.h
// checks the call and works out the copies, the backend runs them
// (runCopyPlans: a loop nest on the cpu, a kernel on the gpu).
//
//===----------------------------------------------------------------------===//

#include "movement_plans.h"

#include <vector>

using namespace parc::rt;

extern "C" {

parc_rt_status_t parc_rt_transpose(parc_rt_dtype_t dtype, const void *x,
                                   int64_t rank, const int64_t *dims,
                                   const int64_t *perm, void *y) {
  std::vector<StridedCopyPlan> plans;
  PARC_RT_RETURN_IF_ERROR(planTranspose(dtype, x, rank, dims, perm, y, plans));
  return runCopyPlans("transpose", dtype, plans);
}

parc_rt_status_t parc_rt_slice(parc_rt_dtype_t dtype, const void *x,
                               int64_t rank, const int64_t *dims,
                               const int64_t *starts, const int64_t *steps,
                               void *y, const int64_t *out_dims) {
  std::vector<StridedCopyPlan> plans;
  PARC_RT_RETURN_IF_ERROR(
      planSlice(dtype, x, rank, dims, starts, steps, y, out_dims, plans));
  return runCopyPlans("slice", dtype, plans);
}

parc_rt_status_t parc_rt_concat(parc_rt_dtype_t dtype, int64_t n,
                                const void *const *inputs,
                                const int64_t *axis_sizes, int64_t rank,
                                const int64_t *out_dims, int64_t axis,
                                void *out) {
  std::vector<StridedCopyPlan> plans;
  PARC_RT_RETURN_IF_ERROR(planPieces(/*concat=*/true, dtype, out, rank, out_dims,
                                     axis, n, axis_sizes, inputs, plans));
  return runCopyPlans("concat", dtype, plans);
}

parc_rt_status_t parc_rt_split(parc_rt_dtype_t dtype, const void *x,
                               int64_t rank, const int64_t *dims, int64_t axis,
                               int64_t n, const int64_t *axis_sizes,
                               void *const *outputs) {
  std::vector<StridedCopyPlan> plans;
  PARC_RT_RETURN_IF_ERROR(planPieces(/*concat=*/false, dtype,
                                     const_cast<void *>(x), rank, dims, axis, n,
                                     axis_sizes, outputs, plans));
  return runCopyPlans("split", dtype, plans);
}

parc_rt_status_t parc_rt_expand(parc_rt_dtype_t dtype, const void *x,
                                int64_t rank, const int64_t *dims, void *y,
                                int64_t out_rank, const int64_t *out_dims) {
  std::vector<StridedCopyPlan> plans;
  PARC_RT_RETURN_IF_ERROR(
      planExpand(dtype, x, rank, dims, y, out_rank, out_dims, plans));
  return runCopyPlans("expand", dtype, plans);
}

} // extern "C"
