//===- shape_checks.h - Checks of shapes, axes, dtypes and data -*- C++ -*-===//
//
// The checks every kernel makes of its operands, in the same words on every
// backend: ranks and dims, null data, dtypes, axes, numpy broadcasting, and
// the contiguous and broadcast strides they imply.
//
//===----------------------------------------------------------------------===//
#ifndef PARC_RUNTIME_SHAPE_CHECKS_H
#define PARC_RUNTIME_SHAPE_CHECKS_H

#include "status.h"

#include <algorithm>
#include <string>

namespace parc::rt {

inline int64_t numElements(int64_t rank, const int64_t *dims) {
  int64_t n = 1;
  for (int64_t i = 0; i < rank; ++i)
    n *= dims[i];
  return n;
}

inline parc_rt_status_t checkShape(const char *op, const char *what,
                                   int64_t rank, const int64_t *dims) {
  if (rank < 0 || rank > PARC_RT_MAX_RANK)
    return fail(PARC_RT_INVALID_ARGUMENT, "%s: %s has rank %lld (max %d)", op,
                what, (long long)rank, PARC_RT_MAX_RANK);
  if (rank > 0 && !dims)
    return fail(PARC_RT_INVALID_ARGUMENT, "%s: %s has rank %lld but no dims",
                op, what, (long long)rank);
  for (int64_t i = 0; i < rank; ++i)
    if (dims[i] < 0)
      return fail(PARC_RT_INVALID_ARGUMENT, "%s: %s has negative dim in %s", op,
                  what, shapeString(rank, dims).c_str());
  return PARC_RT_OK;
}

inline parc_rt_status_t checkData(const char *op, const char *what,
                                  const void *ptr, int64_t count) {
  if (count > 0 && !ptr)
    return fail(PARC_RT_INVALID_ARGUMENT, "%s: %s is null", op, what);
  return PARC_RT_OK;
}

inline parc_rt_status_t checkDtype(const char *op, parc_rt_dtype_t dtype) {
  if (parc_rt_dtype_size(dtype) == 0)
    return fail(PARC_RT_INVALID_ARGUMENT, "%s: invalid dtype %d", op,
                int(dtype));
  return PARC_RT_OK;
}

inline parc_rt_status_t unsupportedDtype(const char *op,
                                         parc_rt_dtype_t dtype) {
  return fail(PARC_RT_UNSUPPORTED, "%s: dtype %s is not supported", op,
              parc_rt_dtype_name(dtype));
}

/// Maps a possibly negative axis into [0, rank).
inline parc_rt_status_t normalizeAxis(const char *op, int64_t axis,
                                      int64_t rank, int64_t &out) {
  if (axis < -rank || axis >= rank)
    return fail(PARC_RT_INVALID_ARGUMENT,
                "%s: axis %lld is out of range for rank %lld", op,
                (long long)axis, (long long)rank);
  out = axis < 0 ? axis + rank : axis;
  return PARC_RT_OK;
}

inline void contiguousStrides(int64_t rank, const int64_t *dims,
                              int64_t *strides) {
  int64_t s = 1;
  for (int64_t i = rank - 1; i >= 0; --i) {
    strides[i] = s;
    s *= dims[i];
  }
}

/// Strides (elements) reading an input of (rank, dims) broadcast to
/// (outRank, outDims), numpy rules: right-aligned, size-1 dims repeat.
inline parc_rt_status_t broadcastStrides(const char *op, const char *what,
                                         int64_t rank, const int64_t *dims,
                                         int64_t outRank,
                                         const int64_t *outDims,
                                         int64_t *strides) {
  if (rank > outRank)
    return fail(PARC_RT_INVALID_ARGUMENT,
                "%s: %s of shape %s does not broadcast to output shape %s", op,
                what, shapeString(rank, dims).c_str(),
                shapeString(outRank, outDims).c_str());
  int64_t inStrides[PARC_RT_MAX_RANK];
  contiguousStrides(rank, dims, inStrides);
  int64_t lead = outRank - rank;
  for (int64_t i = 0; i < outRank; ++i) {
    if (i < lead) {
      strides[i] = 0;
      continue;
    }
    int64_t d = dims[i - lead];
    if (d == outDims[i])
      strides[i] = d == 1 ? 0 : inStrides[i - lead];
    else if (d == 1)
      strides[i] = 0;
    else
      return fail(PARC_RT_INVALID_ARGUMENT,
                  "%s: %s of shape %s does not broadcast to output shape %s",
                  op, what, shapeString(rank, dims).c_str(),
                  shapeString(outRank, outDims).c_str());
  }
  return PARC_RT_OK;
}

/// Checks that out is exactly the numpy broadcast of the n input shapes.
inline parc_rt_status_t checkBroadcastResult(const char *op, int n,
                                             const int64_t *ranks,
                                             const int64_t *const *dims,
                                             int64_t outRank,
                                             const int64_t *outDims) {
  int64_t rank = 0;
  for (int i = 0; i < n; ++i)
    rank = std::max(rank, ranks[i]);
  int64_t shape[PARC_RT_MAX_RANK];
  std::fill(shape, shape + rank, int64_t(1));
  for (int i = 0; i < n; ++i) {
    for (int64_t j = 0; j < ranks[i]; ++j) {
      int64_t &d = shape[rank - ranks[i] + j];
      int64_t e = dims[i][j];
      if (d == 1)
        d = e;
      else if (e != 1 && e != d) {
        std::string shapes;
        for (int k = 0; k < n; ++k)
          shapes += (k ? " and " : "") + shapeString(ranks[k], dims[k]);
        return fail(PARC_RT_INVALID_ARGUMENT,
                    "%s: shapes %s are not broadcastable", op, shapes.c_str());
      }
    }
  }
  if (rank != outRank || !std::equal(shape, shape + rank, outDims))
    return fail(PARC_RT_INVALID_ARGUMENT,
                "%s: output shape %s does not match the broadcast shape %s", op,
                shapeString(outRank, outDims).c_str(),
                shapeString(rank, shape).c_str());
  return PARC_RT_OK;
}

} // namespace parc::rt

#endif // PARC_RUNTIME_SHAPE_CHECKS_H
