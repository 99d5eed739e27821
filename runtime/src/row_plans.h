//===- row_plans.h - softmax, norms, reductions, topk, rotary ---*- C++ -*-===//
//
// Kernels that walk a tensor as rows or lines around one axis (softmax,
// layer/RMS norm, topk, rotary) or that reduce over a set of axes. Their
// argument checks and the extents they imply are worked out here, once, for
// both backends, which only differ in how the rows are walked (loops on the
// cpu, row-per-block or line-per-thread kernels on the gpu) and so accept
// and reject exactly the same calls with the same words.
//
// A plan that comes back with empty() has nothing to do; dtype support
// beyond "a valid dtype" is the backend's (the cpu has no f64 rotary_full).
//
//===----------------------------------------------------------------------===//
#ifndef PARC_RUNTIME_ROW_PLANS_H
#define PARC_RUNTIME_ROW_PLANS_H

#include "shape_checks.h"
#include "status.h"

#include <algorithm>

namespace parc::rt {

/// A tensor as outer x axis x inner around one axis.
struct AxisView {
  int64_t outer = 1, axis = 1, inner = 1;
  int64_t count() const { return outer * axis * inner; }
  bool empty() const { return count() == 0; }
};

inline parc_rt_status_t resolveAxis(const char *op, int64_t rank,
                                    const int64_t *dims, int64_t axis,
                                    AxisView &v) {
  PARC_RT_RETURN_IF_ERROR(checkShape(op, "x", rank, dims));
  int64_t a = 0;
  PARC_RT_RETURN_IF_ERROR(normalizeAxis(op, axis, rank, a));
  v.outer = numElements(a, dims);
  v.axis = dims[a];
  v.inner = numElements(rank - a - 1, dims + a + 1);
  return PARC_RT_OK;
}

/// softmax / log_softmax of x (rank, dims) along `axis` into y.
inline parc_rt_status_t planSoftmax(const char *op, parc_rt_dtype_t dtype,
                                    const void *x, void *y, int64_t rank,
                                    const int64_t *dims, int64_t axis,
                                    AxisView &v) {
  PARC_RT_RETURN_IF_ERROR(checkDtype(op, dtype));
  PARC_RT_RETURN_IF_ERROR(resolveAxis(op, rank, dims, axis, v));
  if (v.empty())
    return PARC_RT_OK;
  PARC_RT_RETURN_IF_ERROR(checkData(op, "x", x, v.count()));
  return checkData(op, "y", y, v.count());
}

/// layer_norm / rms_norm: `rows` rows of the `n` elements from `axis` on,
/// each normalised with scale (and bias, optional) of n elements.
struct NormPlan {
  int64_t rows = 0, n = 0;
  bool empty() const { return rows * n == 0; }
};

inline parc_rt_status_t planNorm(const char *op, parc_rt_dtype_t dtype,
                                 const void *x, const void *scale, void *y,
                                 int64_t rank, const int64_t *dims,
                                 int64_t axis, float epsilon, NormPlan &p) {
  PARC_RT_RETURN_IF_ERROR(checkDtype(op, dtype));
  PARC_RT_RETURN_IF_ERROR(checkShape(op, "x", rank, dims));
  int64_t a = 0;
  PARC_RT_RETURN_IF_ERROR(normalizeAxis(op, axis, rank, a));
  if (!(epsilon >= 0.0f))
    return fail(PARC_RT_INVALID_ARGUMENT, "%s: epsilon %g is not >= 0", op,
                double(epsilon));
  p.rows = numElements(a, dims);
  p.n = numElements(rank - a, dims + a);
  if (p.empty())
    return PARC_RT_OK;
  PARC_RT_RETURN_IF_ERROR(checkData(op, "x", x, p.rows * p.n));
  PARC_RT_RETURN_IF_ERROR(checkData(op, "scale", scale, p.n));
  return checkData(op, "y", y, p.rows * p.n);
}

/// "reduce_sum" etc., the op name of a reduction in messages.
inline const char *reductionName(parc_rt_reduction_t r) {
  switch (r) {
  case PARC_RT_REDUCTION_SUM:
    return "reduce_sum";
  case PARC_RT_REDUCTION_MEAN:
    return "reduce_mean";
  case PARC_RT_REDUCTION_MAX:
    return "reduce_max";
  case PARC_RT_REDUCTION_MIN:
    return "reduce_min";
  case PARC_RT_REDUCTION_PROD:
    return "reduce_prod";
  }
  return "reduce";
}

/// A reduction over `reduced[d]` axes of x: y keeps the other dims (in
/// order, outCount elements); `reducedCount` elements meet in each.
struct ReducePlan {
  bool reduced[PARC_RT_MAX_RANK] = {};
  int64_t outCount = 0, reducedCount = 1;
  bool empty() const { return outCount == 0; }
};

inline parc_rt_status_t planReduce(parc_rt_reduction_t reduction,
                                   parc_rt_dtype_t dtype, const void *x,
                                   int64_t rank, const int64_t *dims,
                                   int64_t num_axes, const int64_t *axes,
                                   void *y, ReducePlan &p) {
  const char *op = reductionName(reduction);
  PARC_RT_RETURN_IF_ERROR(checkDtype(op, dtype));
  PARC_RT_RETURN_IF_ERROR(checkShape(op, "x", rank, dims));
  if (unsigned(reduction) > PARC_RT_REDUCTION_PROD)
    return fail(PARC_RT_INVALID_ARGUMENT, "reduce: invalid reduction %d",
                int(reduction));
  if (num_axes < 0 || num_axes > rank || (num_axes > 0 && !axes))
    return fail(PARC_RT_INVALID_ARGUMENT, "%s: %lld axes given for rank %lld",
                op, (long long)num_axes, (long long)rank);
  for (int64_t i = 0; i < num_axes; ++i) {
    int64_t a = 0;
    PARC_RT_RETURN_IF_ERROR(normalizeAxis(op, axes[i], rank, a));
    if (p.reduced[a])
      return fail(PARC_RT_INVALID_ARGUMENT, "%s: axis %lld is listed twice", op,
                  (long long)axes[i]);
    p.reduced[a] = true;
  }
  p.outCount = 1;
  p.reducedCount = 1;
  for (int64_t i = 0; i < rank; ++i)
    (p.reduced[i] ? p.reducedCount : p.outCount) *= dims[i];
  PARC_RT_RETURN_IF_ERROR(checkData(op, "x", x, numElements(rank, dims)));
  PARC_RT_RETURN_IF_ERROR(checkData(op, "y", y, p.outCount));
  if (p.empty())
    return PARC_RT_OK;
  if (dtype == PARC_RT_BOOL)
    return unsupportedDtype(op, dtype);
  return PARC_RT_OK;
}

/// topk of k along `axis`: values and i64 indices of outer x k x inner
/// from x of outer x n x inner.
struct TopkPlan {
  int64_t outer = 0, n = 0, inner = 0, k = 0;
  bool empty() const { return outer * k * inner == 0; }
};

inline parc_rt_status_t planTopk(parc_rt_dtype_t dtype, const void *x,
                                 int64_t rank, const int64_t *dims,
                                 int64_t axis, int64_t k, void *values,
                                 void *indices, TopkPlan &p) {
  const char *op = "topk";
  PARC_RT_RETURN_IF_ERROR(checkDtype(op, dtype));
  PARC_RT_RETURN_IF_ERROR(checkShape(op, "x", rank, dims));
  if (rank == 0)
    return fail(PARC_RT_INVALID_ARGUMENT, "topk: x must have rank >= 1");
  AxisView v;
  PARC_RT_RETURN_IF_ERROR(resolveAxis(op, rank, dims, axis, v));
  if (k < 0 || k > v.axis)
    return fail(PARC_RT_INVALID_ARGUMENT,
                "topk: k = %lld is out of range for axis %lld of x %s",
                (long long)k, (long long)axis, shapeString(rank, dims).c_str());
  p.outer = v.outer;
  p.n = v.axis;
  p.inner = v.inner;
  p.k = k;
  if (p.empty())
    return PARC_RT_OK;
  const int64_t outCount = p.outer * k * p.inner;
  PARC_RT_RETURN_IF_ERROR(checkData(op, "x", x, v.count()));
  PARC_RT_RETURN_IF_ERROR(checkData(op, "values", values, outCount));
  PARC_RT_RETURN_IF_ERROR(checkData(op, "indices", indices, outCount));
  if (dtype == PARC_RT_BOOL)
    return unsupportedDtype(op, dtype);
  return PARC_RT_OK;
}

/// Rotary embedding (rotate-half form) over `rows` rows of `width`: the
/// first 2 * half features rotate, by the tables' row at the row's position
/// along the sequence axis (seqLen positions, seqStride rows apart).
struct RotaryPlan {
  int64_t rows = 0, width = 0, half = 0, seqLen = 0, seqStride = 1;
  bool empty() const { return rows * width == 0; }
};

inline parc_rt_status_t planRotary(parc_rt_dtype_t dtype, const void *x,
                                   int64_t rank, const int64_t *dims,
                                   int64_t seq_axis, int64_t rotary_dim,
                                   const void *cos, const void *sin, void *y,
                                   RotaryPlan &p) {
  const char *op = "rotary";
  PARC_RT_RETURN_IF_ERROR(checkDtype(op, dtype));
  PARC_RT_RETURN_IF_ERROR(checkShape(op, "x", rank, dims));
  if (rank < 2)
    return fail(PARC_RT_INVALID_ARGUMENT,
                "rotary: x must have rank >= 2, got %s",
                shapeString(rank, dims).c_str());
  int64_t seq = 0;
  PARC_RT_RETURN_IF_ERROR(normalizeAxis(op, seq_axis, rank, seq));
  if (seq == rank - 1)
    return fail(PARC_RT_INVALID_ARGUMENT,
                "rotary: seq_axis %lld is the feature axis of x %s",
                (long long)seq_axis, shapeString(rank, dims).c_str());
  p.width = dims[rank - 1];
  if (rotary_dim <= 0 || rotary_dim % 2 || rotary_dim > p.width)
    return fail(PARC_RT_INVALID_ARGUMENT,
                "rotary: rotary_dim %lld must be even and in (0, %lld]",
                (long long)rotary_dim, (long long)p.width);
  p.rows = numElements(rank - 1, dims);
  if (p.empty())
    return PARC_RT_OK;
  p.half = rotary_dim / 2;
  p.seqLen = dims[seq];
  // Rows between consecutive positions: the dims after seq but the last.
  p.seqStride = numElements(rank - 2 - seq, dims + seq + 1);
  PARC_RT_RETURN_IF_ERROR(checkData(op, "x", x, p.rows * p.width));
  PARC_RT_RETURN_IF_ERROR(checkData(op, "y", y, p.rows * p.width));
  PARC_RT_RETURN_IF_ERROR(checkData(op, "cos", cos, p.seqLen * p.half));
  return checkData(op, "sin", sin, p.seqLen * p.half);
}

/// rotary_full: y = x·cos + rotate_half(x)·sin with whole-width cos and sin
/// tables broadcast to x. Rows are x's leading dims (`rank` of them,
/// `dims`); a table's row for a row of x is at sum(index[d] * strides[d])
/// (stride 0 along the dims it broadcasts).
struct RotaryTablesPlan {
  int rank = 0;
  int64_t dims[PARC_RT_MAX_RANK];
  int64_t cosStrides[PARC_RT_MAX_RANK] = {}, sinStrides[PARC_RT_MAX_RANK] = {};
  int64_t rows = 0, width = 0;
  bool empty() const { return rows * width == 0; }
};

inline parc_rt_status_t
planRotaryTables(int64_t x_rank, const int64_t *x_dims, int64_t cos_rank,
                 const int64_t *cos_dims, int64_t sin_rank,
                 const int64_t *sin_dims, int64_t y_rank, const int64_t *y_dims,
                 RotaryTablesPlan &p) {
  const char *op = "rotary";
  PARC_RT_RETURN_IF_ERROR(checkShape(op, "x", x_rank, x_dims));
  PARC_RT_RETURN_IF_ERROR(checkShape(op, "cos", cos_rank, cos_dims));
  PARC_RT_RETURN_IF_ERROR(checkShape(op, "sin", sin_rank, sin_dims));
  if (x_rank < 1 || y_rank != x_rank || x_dims[x_rank - 1] % 2 ||
      !std::equal(x_dims, x_dims + x_rank, y_dims))
    return fail(PARC_RT_INVALID_ARGUMENT,
                "%s: x %s and y %s must match with an even last dim", op,
                shapeString(x_rank, x_dims).c_str(),
                shapeString(y_rank, y_dims).c_str());
  p.rank = int(x_rank - 1);
  std::copy(x_dims, x_dims + p.rank, p.dims);
  auto strides = [&](int64_t rank, const int64_t *dims, const char *what,
                     int64_t *out) {
    if (rank < 1 || rank > x_rank || dims[rank - 1] != x_dims[x_rank - 1])
      return fail(PARC_RT_INVALID_ARGUMENT,
                  "%s: %s %s must broadcast to %s and span its last dim", op,
                  what, shapeString(rank, dims).c_str(),
                  shapeString(x_rank, x_dims).c_str());
    int64_t s = 1;
    for (int64_t d = x_rank - 1; d >= 0; --d) {
      const int64_t td = d - (x_rank - rank);
      const int64_t size = td >= 0 ? dims[td] : 1;
      if (size != 1 && size != x_dims[d])
        return fail(PARC_RT_INVALID_ARGUMENT,
                    "%s: %s %s does not broadcast to %s", op, what,
                    shapeString(rank, dims).c_str(),
                    shapeString(x_rank, x_dims).c_str());
      if (d + 1 < x_rank)
        out[d] = size == 1 ? 0 : s;
      s *= size;
    }
    return PARC_RT_OK;
  };
  PARC_RT_RETURN_IF_ERROR(strides(cos_rank, cos_dims, "cos", p.cosStrides));
  PARC_RT_RETURN_IF_ERROR(strides(sin_rank, sin_dims, "sin", p.sinStrides));
  p.width = x_dims[x_rank - 1];
  p.rows = numElements(p.rank, p.dims);
  return PARC_RT_OK;
}

} // namespace parc::rt

#endif // PARC_RUNTIME_ROW_PLANS_H
