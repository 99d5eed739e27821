//===- linalg_shapes.h - matmul, attention and window problems --*- C++ -*-===//
//
// Argument checks and resolved dims of the GEMM-shaped kernels (numpy
// matmul with batch broadcasting, gemm, grouped-query attention products,
// N-d convolution / pooling windows), shared by the cpu and cuda backends so
// that both accept and reject exactly the same calls with the same words.
// What each backend supports beyond that (dtypes, mostly) stays with it.
//
//===----------------------------------------------------------------------===//
#ifndef PARC_RUNTIME_LINALG_SHAPES_H
#define PARC_RUNTIME_LINALG_SHAPES_H

#include "shape_checks.h"
#include "status.h"

#include <algorithm>
#include <limits>

namespace parc::rt {

//===----------------------------------------------------------------------===//
// matmul
//===----------------------------------------------------------------------===//

constexpr int64_t kBlasMax = std::numeric_limits<int32_t>::max();

inline parc_rt_status_t checkBlasDims(const char *op, int64_t m, int64_t n,
                                      int64_t k) {
  if (m > kBlasMax || n > kBlasMax || k > kBlasMax)
    return fail(PARC_RT_UNSUPPORTED,
                "%s: matrix dims %lldx%lldx%lld exceed the BLAS integer range",
                op, (long long)m, (long long)n, (long long)k);
  return PARC_RT_OK;
}

/// Resolved matmul problem: batch loop over matrices of MxK and KxN.
struct MatmulShape {
  int64_t m, n, k;
  int64_t batchRank;
  int64_t batch[PARC_RT_MAX_RANK];
  int64_t aStrides[PARC_RT_MAX_RANK], bStrides[PARC_RT_MAX_RANK],
      outStrides[PARC_RT_MAX_RANK];
  bool foldBatchIntoM; // a's batches are contiguous rows over one b
};

inline parc_rt_status_t resolveMatmul(int64_t aRank, const int64_t *aDims,
                                      int64_t bRank, const int64_t *bDims,
                                      int64_t outRank, const int64_t *outDims,
                                      MatmulShape &s) {
  const char *op = "matmul";
  if (aRank < 1 || bRank < 1)
    return fail(PARC_RT_INVALID_ARGUMENT,
                "matmul: operands must have rank >= 1, got a %s and b %s",
                shapeString(aRank, aDims).c_str(),
                shapeString(bRank, bDims).c_str());
  const bool aVec = aRank == 1, bVec = bRank == 1;
  s.m = aVec ? 1 : aDims[aRank - 2];
  s.k = aDims[aRank - 1];
  const int64_t kb = bVec ? bDims[0] : bDims[bRank - 2];
  s.n = bVec ? 1 : bDims[bRank - 1];
  if (s.k != kb)
    return fail(PARC_RT_INVALID_ARGUMENT,
                "matmul: contraction dims differ: a %s and b %s",
                shapeString(aRank, aDims).c_str(),
                shapeString(bRank, bDims).c_str());
  const int64_t aBatchRank = aVec ? 0 : aRank - 2;
  const int64_t bBatchRank = bVec ? 0 : bRank - 2;
  const int64_t ranks[] = {aBatchRank, bBatchRank};
  const int64_t *dims[] = {aDims, bDims};
  s.batchRank = std::max(aBatchRank, bBatchRank);
  std::fill(s.batch, s.batch + s.batchRank, int64_t(1));
  for (int i = 0; i < 2; ++i)
    for (int64_t j = 0; j < ranks[i]; ++j) {
      int64_t &d = s.batch[s.batchRank - ranks[i] + j];
      const int64_t e = dims[i][j];
      if (d == 1)
        d = e;
      else if (e != 1 && e != d)
        return fail(PARC_RT_INVALID_ARGUMENT,
                    "matmul: batch dims of a %s and b %s are not "
                    "broadcastable",
                    shapeString(aRank, aDims).c_str(),
                    shapeString(bRank, bDims).c_str());
    }
  int64_t expected[PARC_RT_MAX_RANK + 2];
  int64_t expectedRank = 0;
  for (int64_t i = 0; i < s.batchRank; ++i)
    expected[expectedRank++] = s.batch[i];
  if (!aVec)
    expected[expectedRank++] = s.m;
  if (!bVec)
    expected[expectedRank++] = s.n;
  if (expectedRank != outRank ||
      !std::equal(expected, expected + expectedRank, outDims))
    return fail(PARC_RT_INVALID_ARGUMENT,
                "matmul: output shape %s does not match %s for a %s and b %s",
                shapeString(outRank, outDims).c_str(),
                shapeString(expectedRank, expected).c_str(),
                shapeString(aRank, aDims).c_str(),
                shapeString(bRank, bDims).c_str());
  PARC_RT_RETURN_IF_ERROR(broadcastStrides(op, "a batch", aBatchRank, aDims,
                                           s.batchRank, s.batch, s.aStrides));
  PARC_RT_RETURN_IF_ERROR(broadcastStrides(op, "b batch", bBatchRank, bDims,
                                           s.batchRank, s.batch, s.bStrides));
  contiguousStrides(s.batchRank, s.batch, s.outStrides);
  const int64_t batchCount = numElements(s.batchRank, s.batch);
  s.foldBatchIntoM = !aVec && numElements(aBatchRank, aDims) == batchCount &&
                     numElements(bBatchRank, bDims) == 1 &&
                     s.m * batchCount <= kBlasMax;
  return checkBlasDims(op, s.m, s.n, s.k);
}

/// A matmul call: its shape and element counts; empty() when out has none.
struct MatmulPlan {
  MatmulShape shape;
  int64_t aCount = 0, bCount = 0, outCount = 0;
  bool empty() const { return outCount == 0; }
};

inline parc_rt_status_t planMatmul(parc_rt_dtype_t dtype, const void *a,
                                   int64_t aRank, const int64_t *aDims,
                                   const void *b, int64_t bRank,
                                   const int64_t *bDims, void *out,
                                   int64_t outRank, const int64_t *outDims,
                                   MatmulPlan &p) {
  const char *op = "matmul";
  PARC_RT_RETURN_IF_ERROR(checkDtype(op, dtype));
  PARC_RT_RETURN_IF_ERROR(checkShape(op, "a", aRank, aDims));
  PARC_RT_RETURN_IF_ERROR(checkShape(op, "b", bRank, bDims));
  PARC_RT_RETURN_IF_ERROR(checkShape(op, "out", outRank, outDims));
  PARC_RT_RETURN_IF_ERROR(
      resolveMatmul(aRank, aDims, bRank, bDims, outRank, outDims, p.shape));
  p.aCount = numElements(aRank, aDims);
  p.bCount = numElements(bRank, bDims);
  p.outCount = numElements(outRank, outDims);
  if (p.empty())
    return PARC_RT_OK;
  PARC_RT_RETURN_IF_ERROR(checkData(op, "a", a, p.aCount));
  PARC_RT_RETURN_IF_ERROR(checkData(op, "b", b, p.bCount));
  return checkData(op, "out", out, p.outCount);
}

/// gemm: y (m x n) = alpha op(a) op(b) + beta c, c broadcast to y (c_dims
/// checked when c is given). Nothing to do when m or n is 0.
inline parc_rt_status_t checkGemm(parc_rt_dtype_t dtype, const void *a,
                                  const void *b, const void *c, int64_t cRank,
                                  const int64_t *cDims, void *y, int64_t m,
                                  int64_t n, int64_t k) {
  const char *op = "gemm";
  PARC_RT_RETURN_IF_ERROR(checkDtype(op, dtype));
  if (m < 0 || n < 0 || k < 0)
    return fail(PARC_RT_INVALID_ARGUMENT,
                "gemm: negative size M=%lld N=%lld K=%lld", (long long)m,
                (long long)n, (long long)k);
  PARC_RT_RETURN_IF_ERROR(checkBlasDims(op, m, n, k));
  if (c) {
    const int64_t yDims[2] = {m, n};
    PARC_RT_RETURN_IF_ERROR(checkShape(op, "c", cRank, cDims));
    int64_t unused[2];
    PARC_RT_RETURN_IF_ERROR(
        broadcastStrides(op, "c", cRank, cDims, 2, yDims, unused));
  }
  if (m == 0 || n == 0)
    return PARC_RT_OK;
  PARC_RT_RETURN_IF_ERROR(checkData(op, "a", a, m * k));
  PARC_RT_RETURN_IF_ERROR(checkData(op, "b", b, k * n));
  return checkData(op, "y", y, m * n);
}

//===----------------------------------------------------------------------===//
// Attention products
//===----------------------------------------------------------------------===//

/// lhs [B, H, rows, inner] against rhs [B, Hkv, ...] -> [B, H, rows, cols].
struct AttentionDims {
  int64_t batch, heads, kvHeads, rows, inner, cols;
};

/// Checks lhs [B, H, S, X], rhs [B, Hkv, ·, ·] and out [B, H, S, Y].
inline parc_rt_status_t resolveAttention(const char *op, int64_t lr,
                                         const int64_t *ld, int64_t rr,
                                         const int64_t *rd, int64_t orank,
                                         const int64_t *od) {
  if (lr != 4 || rr != 4 || orank != 4)
    return fail(PARC_RT_INVALID_ARGUMENT, "%s: operands must be 4-D", op);
  if (ld[0] != rd[0] || od[0] != ld[0] || od[1] != ld[1] || od[2] != ld[2] ||
      rd[1] == 0 || ld[1] % rd[1])
    return fail(PARC_RT_INVALID_ARGUMENT,
                "%s: shapes %s, %s -> %s do not match (heads %lld must be a "
                "multiple of key/value heads %lld)",
                op, shapeString(lr, ld).c_str(), shapeString(rr, rd).c_str(),
                shapeString(orank, od).c_str(), (long long)ld[1],
                (long long)rd[1]);
  return PARC_RT_OK;
}

/// scores = scale q kᵀ: q [B, H, S, D], k [B, Hkv, T, D], out [B, H, S, T].
inline parc_rt_status_t resolveScores(const char *op, int64_t qRank,
                                      const int64_t *q, int64_t kRank,
                                      const int64_t *k, int64_t outRank,
                                      const int64_t *out, AttentionDims &d) {
  PARC_RT_RETURN_IF_ERROR(
      resolveAttention(op, qRank, q, kRank, k, outRank, out));
  if (k[3] != q[3] || out[3] != k[2])
    return fail(PARC_RT_INVALID_ARGUMENT, "%s: q %s and k %s give scores %s",
                op, shapeString(4, q).c_str(), shapeString(4, k).c_str(),
                shapeString(4, out).c_str());
  d = {q[0], q[1], k[1], q[2], q[3], k[2]};
  return PARC_RT_OK;
}

/// out = p v: p [B, H, S, T], v [B, Hkv, T, Dv], out [B, H, S, Dv].
inline parc_rt_status_t resolveValues(const char *op, int64_t pRank,
                                      const int64_t *p, int64_t vRank,
                                      const int64_t *v, int64_t outRank,
                                      const int64_t *out, AttentionDims &d) {
  PARC_RT_RETURN_IF_ERROR(
      resolveAttention(op, pRank, p, vRank, v, outRank, out));
  if (v[2] != p[3] || out[3] != v[3])
    return fail(PARC_RT_INVALID_ARGUMENT,
                "%s: probabilities %s and v %s give %s", op,
                shapeString(4, p).c_str(), shapeString(4, v).c_str(),
                shapeString(4, out).c_str());
  d = {p[0], p[1], v[1], p[2], p[3], v[3]};
  return PARC_RT_OK;
}

/// Fused attention: q [B, H, S, D], k [B, Hkv, T, D], v [B, Hkv, T, Dv],
/// out [B, H, S, Dv], an optional additive mask broadcast to [B, H, S, T]
/// (`maskStrides`, elements per dim; all 0 without a mask).
struct FusedAttentionPlan {
  int64_t batch, heads, kvHeads, queries, keys, depth, valueDepth;
  int64_t maskStrides[4];
};

inline parc_rt_status_t
resolveFusedAttention(const char *op, int64_t qRank, const int64_t *q,
                      int64_t kRank, const int64_t *k, int64_t vRank,
                      const int64_t *v, const void *mask, int64_t maskRank,
                      const int64_t *maskDims, int64_t outRank,
                      const int64_t *out, FusedAttentionPlan &p) {
  PARC_RT_RETURN_IF_ERROR(resolveAttention(op, qRank, q, kRank, k, outRank, out));
  if (vRank != 4 || k[3] != q[3] || v[0] != k[0] || v[1] != k[1] ||
      v[2] != k[2] || out[3] != v[3])
    return fail(PARC_RT_INVALID_ARGUMENT,
                "%s: q %s, k %s and v %s do not give %s", op,
                shapeString(4, q).c_str(), shapeString(4, k).c_str(),
                shapeString(vRank, v).c_str(), shapeString(outRank, out).c_str());
  p = {q[0], q[1], k[1], q[2], k[2], q[3], v[3], {0, 0, 0, 0}};
  if (!mask)
    return PARC_RT_OK;
  const int64_t scoreDims[4] = {q[0], q[1], q[2], k[2]};
  PARC_RT_RETURN_IF_ERROR(checkShape(op, "mask", maskRank, maskDims));
  return broadcastStrides(op, "mask", maskRank, maskDims, 4, scoreDims,
                          p.maskStrides);
}

//===----------------------------------------------------------------------===//
// Convolution and pooling windows
//===----------------------------------------------------------------------===//

struct Window {
  int64_t spatial; // number of spatial dims
  const int64_t *in, *kernel, *out, *strides, *padsBegin, *padsEnd, *dilations;
};

inline int64_t floorDiv(int64_t a, int64_t b) {
  return a >= 0 ? a / b : -((-a + b - 1) / b);
}
inline int64_t ceilDiv(int64_t a, int64_t b) { return -floorDiv(-a, b); }

/// Checks attributes and that out[s] is the floor (or, if allowed, ceil)
/// ONNX output size.
inline parc_rt_status_t checkWindow(const char *op, const Window &w,
                                    bool allowCeil) {
  for (int64_t s = 0; s < w.spatial; ++s) {
    if (w.strides[s] < 1 || w.dilations[s] < 1 || w.padsBegin[s] < 0 ||
        w.padsEnd[s] < 0 || w.kernel[s] < 1)
      return fail(PARC_RT_INVALID_ARGUMENT,
                  "%s: spatial dim %lld: kernel %lld, stride %lld, dilation "
                  "%lld and pads %lld/%lld must be positive (pads >= 0)",
                  op, (long long)s, (long long)w.kernel[s],
                  (long long)w.strides[s], (long long)w.dilations[s],
                  (long long)w.padsBegin[s], (long long)w.padsEnd[s]);
    const int64_t span = w.in[s] + w.padsBegin[s] + w.padsEnd[s] -
                         w.dilations[s] * (w.kernel[s] - 1) - 1;
    const int64_t floorOut = floorDiv(span, w.strides[s]) + 1;
    int64_t ceilOut = ceilDiv(span, w.strides[s]) + 1;
    // A last window starting inside the end padding is dropped (ONNX).
    if ((ceilOut - 1) * w.strides[s] >= w.in[s] + w.padsBegin[s])
      --ceilOut;
    const bool ok = w.out[s] == std::max<int64_t>(floorOut, 0) ||
                    (allowCeil && w.out[s] == std::max<int64_t>(ceilOut, 0));
    if (!ok)
      return fail(PARC_RT_INVALID_ARGUMENT,
                  "%s: spatial dim %lld: output size %lld, expected %lld for "
                  "input %lld, kernel %lld, stride %lld, dilation %lld, pads "
                  "%lld/%lld",
                  op, (long long)s, (long long)w.out[s], (long long)floorOut,
                  (long long)w.in[s], (long long)w.kernel[s],
                  (long long)w.strides[s], (long long)w.dilations[s],
                  (long long)w.padsBegin[s], (long long)w.padsEnd[s]);
  }
  return PARC_RT_OK;
}

inline parc_rt_status_t checkSpatialRank(const char *op, int64_t rank) {
  if (rank < 3 || rank > PARC_RT_MAX_RANK)
    return fail(PARC_RT_INVALID_ARGUMENT,
                "%s: rank %lld must be 2 + spatial dims (3..%d)", op,
                (long long)rank, PARC_RT_MAX_RANK);
  return PARC_RT_OK;
}

/// conv: checks x, w, y, group and the window; fills `win`.
inline parc_rt_status_t resolveConv(const char *op, int64_t rank,
                                    const int64_t *xDims, const int64_t *wDims,
                                    int64_t group, const int64_t *strides,
                                    const int64_t *pads,
                                    const int64_t *dilations,
                                    const int64_t *yDims, Window &win) {
  PARC_RT_RETURN_IF_ERROR(checkSpatialRank(op, rank));
  PARC_RT_RETURN_IF_ERROR(checkShape(op, "x", rank, xDims));
  PARC_RT_RETURN_IF_ERROR(checkShape(op, "w", rank, wDims));
  PARC_RT_RETURN_IF_ERROR(checkShape(op, "y", rank, yDims));
  if (!strides || !pads || !dilations)
    return fail(PARC_RT_INVALID_ARGUMENT,
                "conv: strides, pads and dilations are required");
  const int64_t batch = xDims[0], cIn = xDims[1], cOut = wDims[0];
  if (group < 1 || cIn % group || cOut % group || wDims[1] * group != cIn ||
      yDims[0] != batch || yDims[1] != cOut)
    return fail(PARC_RT_INVALID_ARGUMENT,
                "conv: x %s, w %s, y %s and group %lld are inconsistent",
                shapeString(rank, xDims).c_str(),
                shapeString(rank, wDims).c_str(),
                shapeString(rank, yDims).c_str(), (long long)group);
  const int64_t S = rank - 2;
  win = Window{S,       xDims + 2, wDims + 2, yDims + 2,
               strides, pads,      pads + S,  dilations};
  return checkWindow(op, win, false);
}

/// max_pool: checks x, y and the window; fills `win`.
inline parc_rt_status_t resolvePool(const char *op, int64_t rank,
                                    const int64_t *xDims,
                                    const int64_t *kernel,
                                    const int64_t *strides,
                                    const int64_t *pads,
                                    const int64_t *dilations,
                                    const int64_t *yDims, Window &win) {
  PARC_RT_RETURN_IF_ERROR(checkSpatialRank(op, rank));
  PARC_RT_RETURN_IF_ERROR(checkShape(op, "x", rank, xDims));
  PARC_RT_RETURN_IF_ERROR(checkShape(op, "y", rank, yDims));
  if (!kernel || !strides || !pads || !dilations)
    return fail(PARC_RT_INVALID_ARGUMENT,
                "max_pool: kernel, strides, pads and dilations are required");
  if (yDims[0] != xDims[0] || yDims[1] != xDims[1])
    return fail(PARC_RT_INVALID_ARGUMENT,
                "max_pool: y %s must keep the batch and channels of x %s",
                shapeString(rank, yDims).c_str(),
                shapeString(rank, xDims).c_str());
  const int64_t S = rank - 2;
  win = Window{S,       xDims + 2, kernel,   yDims + 2,
               strides, pads,      pads + S, dilations};
  return checkWindow(op, win, true);
}

/// A conv call: its window, channels and element counts; empty() when y
/// has none.
struct ConvPlan {
  Window win;
  int64_t batch = 0, cIn = 0, cOut = 0;
  int64_t xCount = 0, wCount = 0, yCount = 0;
  bool empty() const { return yCount == 0; }
};

inline parc_rt_status_t planConv(parc_rt_dtype_t dtype, const void *x,
                                 int64_t rank, const int64_t *xDims,
                                 const void *w, const int64_t *wDims,
                                 int64_t group, const int64_t *strides,
                                 const int64_t *pads, const int64_t *dilations,
                                 void *y, const int64_t *yDims, ConvPlan &p) {
  const char *op = "conv";
  PARC_RT_RETURN_IF_ERROR(checkDtype(op, dtype));
  PARC_RT_RETURN_IF_ERROR(resolveConv(op, rank, xDims, wDims, group, strides,
                                      pads, dilations, yDims, p.win));
  p.batch = xDims[0];
  p.cIn = xDims[1];
  p.cOut = wDims[0];
  p.xCount = numElements(rank, xDims);
  p.wCount = numElements(rank, wDims);
  p.yCount = numElements(rank, yDims);
  if (p.empty())
    return PARC_RT_OK;
  PARC_RT_RETURN_IF_ERROR(checkData(op, "x", x, p.xCount));
  PARC_RT_RETURN_IF_ERROR(checkData(op, "w", w, p.wCount));
  return checkData(op, "y", y, p.yCount);
}

/// A max_pool call: its window, the planes (batch x channels) it pools and
/// element counts; empty() when y has none.
struct PoolPlan {
  Window win;
  int64_t planes = 0, xCount = 0, yCount = 0;
  bool empty() const { return yCount == 0; }
};

inline parc_rt_status_t planMaxPool(parc_rt_dtype_t dtype, const void *x,
                                    int64_t rank, const int64_t *xDims,
                                    const int64_t *kernel,
                                    const int64_t *strides, const int64_t *pads,
                                    const int64_t *dilations, void *y,
                                    const int64_t *yDims, PoolPlan &p) {
  const char *op = "max_pool";
  PARC_RT_RETURN_IF_ERROR(checkDtype(op, dtype));
  PARC_RT_RETURN_IF_ERROR(resolvePool(op, rank, xDims, kernel, strides, pads,
                                      dilations, yDims, p.win));
  p.xCount = numElements(rank, xDims);
  p.yCount = numElements(rank, yDims);
  if (p.empty())
    return PARC_RT_OK;
  PARC_RT_RETURN_IF_ERROR(checkData(op, "x", x, p.xCount));
  PARC_RT_RETURN_IF_ERROR(checkData(op, "y", y, p.yCount));
  p.planes = xDims[0] * xDims[1];
  // max of bool is not a kernel either backend has.
  if (dtype == PARC_RT_BOOL)
    return unsupportedDtype(op, dtype);
  return PARC_RT_OK;
}

} // namespace parc::rt

#endif // PARC_RUNTIME_LINALG_SHAPES_H
