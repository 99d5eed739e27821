//===- copy_ops.cpp - the movement ops: checks, then the backend ----------===//
//
// movement_plans.h checks each call; transpose, slice, concat, split and
// expand are nothing but strided copies it works out, run by the backend's
// runCopyPlans (a loop nest on the cpu, a kernel on the gpu); gather,
// scatter_elements and trilu go to their backend kernels (backend.h).
//
//===----------------------------------------------------------------------===//

#include "backend.h"
#include "device.h"
#include "kernel_tag.h"

#include <vector>

using namespace parc::rt;

extern "C" {

parc_rt_status_t parc_rt_transpose(parc_rt_dtype_t dtype, const void *x,
                                   int64_t rank, const int64_t *dims,
                                   const int64_t *perm, void *y) {
  tagKernel("movement");
  std::vector<StridedCopyPlan> plans;
  PARC_RT_RETURN_IF_ERROR(planTranspose(dtype, x, rank, dims, perm, y, plans));
  return runCopyPlans("transpose", dtype, plans);
}

parc_rt_status_t parc_rt_slice(parc_rt_dtype_t dtype, const void *x,
                               int64_t rank, const int64_t *dims,
                               const int64_t *starts, const int64_t *steps,
                               void *y, const int64_t *out_dims) {
  tagKernel("movement");
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
  tagKernel("movement");
  std::vector<StridedCopyPlan> plans;
  PARC_RT_RETURN_IF_ERROR(planPieces(/*concat=*/true, dtype, out, rank, out_dims,
                                     axis, n, axis_sizes, inputs, plans));
  return runCopyPlans("concat", dtype, plans);
}

parc_rt_status_t parc_rt_split(parc_rt_dtype_t dtype, const void *x,
                               int64_t rank, const int64_t *dims, int64_t axis,
                               int64_t n, const int64_t *axis_sizes,
                               void *const *outputs) {
  tagKernel("movement");
  std::vector<StridedCopyPlan> plans;
  PARC_RT_RETURN_IF_ERROR(planPieces(/*concat=*/false, dtype,
                                     const_cast<void *>(x), rank, dims, axis, n,
                                     axis_sizes, outputs, plans));
  return runCopyPlans("split", dtype, plans);
}

/* One strided copy of the update into the cache at the position (read
 * from the position buffer: on a device, one small download per call). */
parc_rt_status_t parc_rt_kv_cache_write(parc_rt_dtype_t dtype, void *cache,
                                        int64_t rank, const int64_t *dims,
                                        const void *update,
                                        const int64_t *update_dims,
                                        const void *position, int64_t axis) {
  tagKernel("movement");
  const char *op = "kv_cache_write";
  PARC_RT_RETURN_IF_ERROR(checkDtype(op, dtype));
  PARC_RT_RETURN_IF_ERROR(checkShape(op, "cache", rank, dims));
  PARC_RT_RETURN_IF_ERROR(checkShape(op, "update", rank, update_dims));
  int64_t a = 0;
  PARC_RT_RETURN_IF_ERROR(normalizeAxis(op, axis, rank, a));
  for (int64_t d = 0; d < rank; ++d)
    if (d == a ? update_dims[d] > dims[d] : update_dims[d] != dims[d])
      return fail(PARC_RT_INVALID_ARGUMENT,
                  "kv_cache_write: update %s does not fit cache %s",
                  shapeString(rank, update_dims).c_str(),
                  shapeString(rank, dims).c_str());
  int64_t pos = 0;
  if (deviceIsHost())
    pos = *static_cast<const int64_t *>(position);
  else
    PARC_RT_RETURN_IF_ERROR(copyToHost(&pos, position, sizeof pos));
  if (pos < 0 || pos + update_dims[a] > dims[a])
    return fail(PARC_RT_INVALID_ARGUMENT,
                "kv_cache_write: positions %lld to %lld do not fit a cache of "
                "%lld (compile with a larger --max-seq)",
                (long long)pos, (long long)(pos + update_dims[a] - 1),
                (long long)dims[a]);
  StridedCopyPlan p;
  p.rank = rank;
  std::copy(update_dims, update_dims + rank, p.dims);
  contiguousStrides(rank, dims, p.dstStrides);
  contiguousStrides(rank, update_dims, p.srcStrides);
  p.dst = static_cast<char *>(cache) +
          pos * p.dstStrides[a] * int64_t(parc_rt_dtype_size(dtype));
  p.src = update;
  return runCopyPlans(op, dtype, {p});
}

parc_rt_status_t parc_rt_expand(parc_rt_dtype_t dtype, const void *x,
                                int64_t rank, const int64_t *dims, void *y,
                                int64_t out_rank, const int64_t *out_dims) {
  tagKernel("movement");
  std::vector<StridedCopyPlan> plans;
  PARC_RT_RETURN_IF_ERROR(
      planExpand(dtype, x, rank, dims, y, out_rank, out_dims, plans));
  return runCopyPlans("expand", dtype, plans);
}

parc_rt_status_t parc_rt_gather(parc_rt_dtype_t dtype, const void *data,
                                int64_t rank, const int64_t *dims, int64_t axis,
                                parc_rt_dtype_t index_dtype,
                                const void *indices, int64_t index_rank,
                                const int64_t *index_dims, void *out) {
  tagKernel("movement");
  GatherPlan p;
  PARC_RT_RETURN_IF_ERROR(planGather(dtype, data, rank, dims, axis, index_dtype,
                                     indices, index_rank, index_dims, out, p));
  if (p.empty())
    return PARC_RT_OK;
  return runGather(dtype, p, data, axis, index_dtype, indices, out);
}

parc_rt_status_t
parc_rt_scatter_elements(parc_rt_dtype_t dtype, const void *data, int64_t rank,
                         const int64_t *dims, int64_t axis,
                         parc_rt_dtype_t index_dtype, const void *indices,
                         const int64_t *index_dims, const void *updates,
                         parc_rt_scatter_reduction_t reduction, void *out) {
  tagKernel("movement");
  ScatterPlan p;
  PARC_RT_RETURN_IF_ERROR(planScatterElements(dtype, data, rank, dims, axis,
                                              index_dtype, indices, index_dims,
                                              updates, reduction, out, p));
  return runScatterElements(dtype, p, data, rank, dims, axis, index_dtype,
                            indices, index_dims, updates, reduction, out);
}

parc_rt_status_t parc_rt_trilu(parc_rt_dtype_t dtype, const void *x,
                               int64_t rank, const int64_t *dims, int64_t k,
                               int upper, void *y) {
  tagKernel("movement");
  TriluPlan p;
  PARC_RT_RETURN_IF_ERROR(planTrilu(dtype, x, rank, dims, y, p));
  if (p.count() == 0)
    return PARC_RT_OK;
  return runTrilu(dtype, p, x, k, upper != 0, y);
}

} // extern "C"
