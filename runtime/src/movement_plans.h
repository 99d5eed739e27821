//===- movement_plans.h - The movement ops' checks and plans ----*- C++ -*-===//
//
// These kernels move bytes without computing: transpose, slice, concat,
// split and expand are a few strided copies; gather, scatter_elements and
// trilu are index-driven copies. Their argument checks and the copies or
// extents they imply are worked out here, once, for both backends, which
// only differ in how the copy runs (a loop nest on the cpu, a kernel on the
// gpu) and so accept and reject exactly the same calls with the same words.
//
//===----------------------------------------------------------------------===//
#ifndef PARC_RUNTIME_MOVEMENT_PLANS_H
#define PARC_RUNTIME_MOVEMENT_PLANS_H

#include "shape_checks.h"
#include "status.h"

#include <algorithm>
#include <vector>

namespace parc::rt {

/// Write `dims` elements to dst (strides dstStrides) read from src (strides
/// srcStrides); strides count elements.
struct StridedCopyPlan {
  int64_t rank = 0;
  int64_t dims[PARC_RT_MAX_RANK], dstStrides[PARC_RT_MAX_RANK],
      srcStrides[PARC_RT_MAX_RANK];
  void *dst = nullptr;
  const void *src = nullptr;
};

/// y = x with dims permuted (y's dim i is x's dim perm[i]).
inline parc_rt_status_t planTranspose(parc_rt_dtype_t dtype, const void *x,
                                      int64_t rank, const int64_t *dims,
                                      const int64_t *perm, void *y,
                                      std::vector<StridedCopyPlan> &plans) {
  const char *op = "transpose";
  PARC_RT_RETURN_IF_ERROR(checkDtype(op, dtype));
  PARC_RT_RETURN_IF_ERROR(checkShape(op, "x", rank, dims));
  if (rank > 0 && !perm)
    return fail(PARC_RT_INVALID_ARGUMENT, "transpose: perm is null");
  bool seen[PARC_RT_MAX_RANK] = {};
  for (int64_t i = 0; i < rank; ++i) {
    if (perm[i] < 0 || perm[i] >= rank || seen[perm[i]])
      return fail(PARC_RT_INVALID_ARGUMENT,
                  "transpose: perm %s is not a permutation of rank %lld",
                  shapeString(rank, perm).c_str(), (long long)rank);
    seen[perm[i]] = true;
  }
  const int64_t count = numElements(rank, dims);
  PARC_RT_RETURN_IF_ERROR(checkData(op, "x", x, count));
  PARC_RT_RETURN_IF_ERROR(checkData(op, "y", y, count));
  if (count == 0)
    return PARC_RT_OK;
  // Iterate in y's order: y is written contiguously, x read through perm.
  StridedCopyPlan p;
  p.rank = rank;
  int64_t xStrides[PARC_RT_MAX_RANK];
  contiguousStrides(rank, dims, xStrides);
  for (int64_t i = 0; i < rank; ++i) {
    p.dims[i] = dims[perm[i]];
    p.srcStrides[i] = xStrides[perm[i]];
  }
  contiguousStrides(rank, p.dims, p.dstStrides);
  p.dst = y;
  p.src = x;
  plans.push_back(p);
  return PARC_RT_OK;
}

/// y[j...] = x[starts + j * steps ...] for y of out_dims.
inline parc_rt_status_t planSlice(parc_rt_dtype_t dtype, const void *x,
                                  int64_t rank, const int64_t *dims,
                                  const int64_t *starts, const int64_t *steps,
                                  void *y, const int64_t *out_dims,
                                  std::vector<StridedCopyPlan> &plans) {
  const char *op = "slice";
  PARC_RT_RETURN_IF_ERROR(checkDtype(op, dtype));
  PARC_RT_RETURN_IF_ERROR(checkShape(op, "x", rank, dims));
  PARC_RT_RETURN_IF_ERROR(checkShape(op, "out", rank, out_dims));
  if (rank > 0 && (!starts || !steps))
    return fail(PARC_RT_INVALID_ARGUMENT, "slice: starts or steps is null");
  const int64_t count = numElements(rank, out_dims);
  if (count == 0)
    return PARC_RT_OK;
  StridedCopyPlan p;
  p.rank = rank;
  int64_t xStrides[PARC_RT_MAX_RANK];
  contiguousStrides(rank, dims, xStrides);
  contiguousStrides(rank, out_dims, p.dstStrides);
  int64_t base = 0;
  for (int64_t i = 0; i < rank; ++i) {
    const int64_t last = starts[i] + (out_dims[i] - 1) * steps[i];
    if (steps[i] == 0 || starts[i] < 0 || starts[i] >= dims[i] || last < 0 ||
        last >= dims[i])
      return fail(PARC_RT_INVALID_ARGUMENT,
                  "slice: dim %lld: start %lld step %lld for %lld elements "
                  "leaves [0, %lld) of x %s",
                  (long long)i, (long long)starts[i], (long long)steps[i],
                  (long long)out_dims[i], (long long)dims[i],
                  shapeString(rank, dims).c_str());
    base += starts[i] * xStrides[i];
    p.srcStrides[i] = steps[i] * xStrides[i];
    p.dims[i] = out_dims[i];
  }
  PARC_RT_RETURN_IF_ERROR(checkData(op, "x", x, count));
  PARC_RT_RETURN_IF_ERROR(checkData(op, "y", y, count));
  p.dst = y;
  p.src = static_cast<const char *>(x) + base * int64_t(parc_rt_dtype_size(dtype));
  plans.push_back(p);
  return PARC_RT_OK;
}

/// Concat and split are the same copies in opposite directions: n pieces
/// of `axis_sizes[i]` along `axis` of the whole tensor (`dims`).
inline parc_rt_status_t planPieces(bool concat, parc_rt_dtype_t dtype,
                                   void *whole, int64_t rank,
                                   const int64_t *dims, int64_t axis, int64_t n,
                                   const int64_t *axis_sizes,
                                   const void *const *pieces,
                                   std::vector<StridedCopyPlan> &plans) {
  const char *op = concat ? "concat" : "split";
  const char *piece = concat ? "input" : "output";
  PARC_RT_RETURN_IF_ERROR(checkDtype(op, dtype));
  PARC_RT_RETURN_IF_ERROR(checkShape(op, concat ? "out" : "x", rank, dims));
  int64_t a = 0;
  PARC_RT_RETURN_IF_ERROR(normalizeAxis(op, axis, rank, a));
  if (n < 1 || !pieces || !axis_sizes)
    return fail(PARC_RT_INVALID_ARGUMENT, "%s: no %ss", op, piece);
  int64_t total = 0;
  for (int64_t i = 0; i < n; ++i) {
    if (axis_sizes[i] < 0)
      return fail(PARC_RT_INVALID_ARGUMENT, "%s: %s %lld has negative size %lld",
                  op, piece, (long long)i, (long long)axis_sizes[i]);
    total += axis_sizes[i];
  }
  if (total != dims[a])
    return fail(PARC_RT_INVALID_ARGUMENT,
                "%s: %s sizes along axis %lld sum to %lld, %s %s has %lld", op,
                piece, (long long)axis, (long long)total,
                concat ? "output" : "x", shapeString(rank, dims).c_str(),
                (long long)dims[a]);
  const int64_t elem = int64_t(parc_rt_dtype_size(dtype));
  int64_t wholeStrides[PARC_RT_MAX_RANK];
  contiguousStrides(rank, dims, wholeStrides);
  int64_t offset = 0;
  for (int64_t i = 0; i < n; ++i) {
    StridedCopyPlan p;
    p.rank = rank;
    std::copy(dims, dims + rank, p.dims);
    p.dims[a] = axis_sizes[i];
    if (numElements(rank, p.dims) > 0) {
      if (!pieces[i] || !whole)
        return fail(PARC_RT_INVALID_ARGUMENT, "%s: %s %lld is null", op, piece,
                    (long long)i);
      char *at = static_cast<char *>(whole) + offset * wholeStrides[a] * elem;
      int64_t pieceStrides[PARC_RT_MAX_RANK];
      contiguousStrides(rank, p.dims, pieceStrides);
      std::copy(wholeStrides, wholeStrides + rank, concat ? p.dstStrides : p.srcStrides);
      std::copy(pieceStrides, pieceStrides + rank, concat ? p.srcStrides : p.dstStrides);
      // Split's pieces are the caller's writable outputs.
      p.dst = concat ? at : const_cast<void *>(pieces[i]);
      p.src = concat ? pieces[i] : at;
      plans.push_back(p);
    }
    offset += axis_sizes[i];
  }
  return PARC_RT_OK;
}

/// y (out_dims) = x broadcast to it: x read with stride 0 along its
/// broadcast dims.
inline parc_rt_status_t planExpand(parc_rt_dtype_t dtype, const void *x,
                                   int64_t rank, const int64_t *dims, void *y,
                                   int64_t out_rank, const int64_t *out_dims,
                                   std::vector<StridedCopyPlan> &plans) {
  const char *op = "expand";
  PARC_RT_RETURN_IF_ERROR(checkDtype(op, dtype));
  PARC_RT_RETURN_IF_ERROR(checkShape(op, "x", rank, dims));
  PARC_RT_RETURN_IF_ERROR(checkShape(op, "out", out_rank, out_dims));
  StridedCopyPlan p;
  PARC_RT_RETURN_IF_ERROR(
      broadcastStrides(op, "x", rank, dims, out_rank, out_dims, p.srcStrides));
  const int64_t count = numElements(out_rank, out_dims);
  if (count == 0)
    return PARC_RT_OK;
  PARC_RT_RETURN_IF_ERROR(checkData(op, "x", x, count));
  PARC_RT_RETURN_IF_ERROR(checkData(op, "y", y, count));
  p.rank = out_rank;
  std::copy(out_dims, out_dims + out_rank, p.dims);
  contiguousStrides(out_rank, out_dims, p.dstStrides);
  p.dst = y;
  p.src = x;
  plans.push_back(p);
  return PARC_RT_OK;
}

inline parc_rt_status_t checkIndexDtype(const char *op, parc_rt_dtype_t dtype) {
  if (dtype != PARC_RT_I32 && dtype != PARC_RT_I64)
    return fail(PARC_RT_INVALID_ARGUMENT,
                "%s: indices must be i32 or i64, got %s", op,
                parc_rt_dtype_name(dtype));
  return PARC_RT_OK;
}

/// Gather as rows: out[o, j, :] = data[o, indices[j], :] for o < outer,
/// j < count, rows of `inner` elements; `size` is data's extent along the
/// axis (indices are checked against it as they are read).
struct GatherPlan {
  int64_t outer = 0, size = 0, inner = 0, count = 0;
  bool empty() const { return outer * count * inner == 0; }
};

inline parc_rt_status_t planGather(parc_rt_dtype_t dtype, const void *data,
                                   int64_t rank, const int64_t *dims,
                                   int64_t axis, parc_rt_dtype_t index_dtype,
                                   const void *indices, int64_t index_rank,
                                   const int64_t *index_dims, void *out,
                                   GatherPlan &p) {
  const char *op = "gather";
  PARC_RT_RETURN_IF_ERROR(checkDtype(op, dtype));
  PARC_RT_RETURN_IF_ERROR(checkShape(op, "data", rank, dims));
  PARC_RT_RETURN_IF_ERROR(checkShape(op, "indices", index_rank, index_dims));
  if (rank == 0)
    return fail(PARC_RT_INVALID_ARGUMENT, "gather: data must have rank >= 1");
  if (rank - 1 + index_rank > PARC_RT_MAX_RANK)
    return fail(PARC_RT_INVALID_ARGUMENT, "gather: output rank exceeds %d",
                PARC_RT_MAX_RANK);
  int64_t a = 0;
  PARC_RT_RETURN_IF_ERROR(normalizeAxis(op, axis, rank, a));
  PARC_RT_RETURN_IF_ERROR(checkIndexDtype(op, index_dtype));
  p.outer = numElements(a, dims);
  p.size = dims[a];
  p.inner = numElements(rank - a - 1, dims + a + 1);
  p.count = numElements(index_rank, index_dims);
  if (p.empty())
    return PARC_RT_OK;
  PARC_RT_RETURN_IF_ERROR(checkData(op, "indices", indices, p.count));
  PARC_RT_RETURN_IF_ERROR(
      checkData(op, "data", data, p.outer * p.size * p.inner));
  return checkData(op, "out", out, p.outer * p.count * p.inner);
}

/// ScatterElements: out = data, then updates (index_dims, like indices) at
/// their indexed positions along `axis` (normalised); `dataCount` and
/// `count` elements of data and of indices.
struct ScatterPlan {
  int64_t axis = 0, dataCount = 0, count = 0;
};

inline parc_rt_status_t planScatterElements(
    parc_rt_dtype_t dtype, const void *data, int64_t rank, const int64_t *dims,
    int64_t axis, parc_rt_dtype_t index_dtype, const void *indices,
    const int64_t *index_dims, const void *updates,
    parc_rt_scatter_reduction_t reduction, void *out, ScatterPlan &p) {
  const char *op = "scatter_elements";
  PARC_RT_RETURN_IF_ERROR(checkDtype(op, dtype));
  PARC_RT_RETURN_IF_ERROR(checkShape(op, "data", rank, dims));
  PARC_RT_RETURN_IF_ERROR(checkShape(op, "indices", rank, index_dims));
  if (rank == 0)
    return fail(PARC_RT_INVALID_ARGUMENT,
                "scatter_elements: data must have rank >= 1");
  if (unsigned(reduction) > PARC_RT_SCATTER_MIN)
    return fail(PARC_RT_INVALID_ARGUMENT,
                "scatter_elements: invalid reduction %d", int(reduction));
  PARC_RT_RETURN_IF_ERROR(normalizeAxis(op, axis, rank, p.axis));
  PARC_RT_RETURN_IF_ERROR(checkIndexDtype(op, index_dtype));
  for (int64_t i = 0; i < rank; ++i)
    if (index_dims[i] > dims[i] && i != p.axis)
      return fail(PARC_RT_INVALID_ARGUMENT,
                  "scatter_elements: indices %s exceed data %s outside axis "
                  "%lld",
                  shapeString(rank, index_dims).c_str(),
                  shapeString(rank, dims).c_str(), (long long)axis);
  p.dataCount = numElements(rank, dims);
  p.count = numElements(rank, index_dims);
  PARC_RT_RETURN_IF_ERROR(checkData(op, "data", data, p.dataCount));
  PARC_RT_RETURN_IF_ERROR(checkData(op, "out", out, p.dataCount));
  PARC_RT_RETURN_IF_ERROR(checkData(op, "indices", indices, p.count));
  PARC_RT_RETURN_IF_ERROR(checkData(op, "updates", updates, p.count));
  // Rejected before anything is written.
  if (dtype == PARC_RT_BOOL && reduction != PARC_RT_SCATTER_NONE)
    return unsupportedDtype(op, dtype);
  return PARC_RT_OK;
}

/// Trilu over `batch` matrices of rows x cols.
struct TriluPlan {
  int64_t batch = 0, rows = 0, cols = 0;
  int64_t count() const { return batch * rows * cols; }
};

inline parc_rt_status_t planTrilu(parc_rt_dtype_t dtype, const void *x,
                                  int64_t rank, const int64_t *dims, void *y,
                                  TriluPlan &p) {
  const char *op = "trilu";
  PARC_RT_RETURN_IF_ERROR(checkDtype(op, dtype));
  PARC_RT_RETURN_IF_ERROR(checkShape(op, "x", rank, dims));
  if (rank < 2)
    return fail(PARC_RT_INVALID_ARGUMENT,
                "trilu: x must have rank >= 2, got %s",
                shapeString(rank, dims).c_str());
  p.rows = dims[rank - 2];
  p.cols = dims[rank - 1];
  p.batch = numElements(rank - 2, dims);
  if (p.count() == 0)
    return PARC_RT_OK;
  PARC_RT_RETURN_IF_ERROR(checkData(op, "x", x, p.count()));
  return checkData(op, "y", y, p.count());
}

} // namespace parc::rt

#endif // PARC_RUNTIME_MOVEMENT_PLANS_H
