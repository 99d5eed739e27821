//===- attention.cpp - attention products and full-width rotary -*- C++ -*-===//
//
// nn.attention lowers to scores = scale·q·kᵀ, the model's own score
// modifier, softmax, then ·v. The two products are batched GEMMs whose only
// twist is grouped-query attention: query head h reads key/value head
// h / (H / Hkv), so K and V are never materialised per query head.
//
//===----------------------------------------------------------------------===//

#include "../half.h"
#include "../kernel_tag.h"
#include "../linalg_shapes.h"
#include "../row_plans.h"
#include "blas.h"
#include "dnnl_matmul.h"
#include "shape.h"

using namespace parc::rt;

namespace {

/// out[b, h] = alpha · lhs[b, h] · op(rhs[b, h / group]) per batch and head.
void batched(const AttentionDims &d, bool transRhs, float alpha,
             const float *lhs, const float *rhs, float *out) {
  int64_t group = d.heads / d.kvHeads;
  int64_t rhsRows = transRhs ? d.cols : d.inner;
  int64_t rhsCols = transRhs ? d.inner : d.cols;
  for (int64_t b = 0; b < d.batch; ++b)
    for (int64_t h = 0; h < d.heads; ++h) {
      const float *l = lhs + (b * d.heads + h) * d.rows * d.inner;
      const float *r = rhs + (b * d.kvHeads + h / group) * rhsRows * rhsCols;
      float *o = out + (b * d.heads + h) * d.rows * d.cols;
      gemm(false, transRhs, d.rows, d.cols, d.inner, alpha, l, r, 0.0, o);
    }
}

/// The same through oneDNN's matmul on `dtype` storage, a primitive per
/// head shape (dnnl_sgemm re-plans every small call); false, with nothing
/// written, where it does not take the dtype.
bool batchedDnnl(parc_rt_dtype_t dtype, const AttentionDims &d, bool transRhs,
                 float alpha, const void *lhs, const void *rhs, void *out) {
  const int64_t size = int64_t(parc_rt_dtype_size(dtype));
  const int64_t group = d.heads / d.kvHeads;
  const int64_t rhsMat = d.cols * d.inner;
  auto at = [&](const void *base, int64_t elems) {
    return static_cast<const char *>(base) + elems * size;
  };
  for (int64_t b = 0; b < d.batch; ++b)
    for (int64_t h = 0; h < d.heads; ++h)
      if (!dnnlMatmul(dtype, false, transRhs, d.rows, d.cols, d.inner, alpha,
                      at(lhs, (b * d.heads + h) * d.rows * d.inner),
                      at(rhs, (b * d.kvHeads + h / group) * rhsMat), 0.0f,
                      const_cast<char *>(
                          at(out, (b * d.heads + h) * d.rows * d.cols))))
        return false; // the first call: every head has one shape
  return true;
}

} // namespace

extern "C" parc_rt_status_t
parc_rt_attention_scores(parc_rt_dtype_t dtype, const void *q, int64_t q_rank,
                         const int64_t *q_dims, const void *k, int64_t k_rank,
                         const int64_t *k_dims, void *out, int64_t out_rank,
                         const int64_t *out_dims, float scale) {
  const char *op = "attention_scores";
  AttentionDims d{};
  PARC_RT_RETURN_IF_ERROR(resolveScores(op, q_rank, q_dims, k_rank, k_dims,
                                        out_rank, out_dims, d));
  tagKernel("attention", 2.0 * d.batch * d.heads * d.rows * d.cols * d.inner,
            dtype);
  if (batchedDnnl(dtype, d, /*transRhs=*/true, scale, q, k, out))
    return PARC_RT_OK;
  if (dtype == PARC_RT_F16 || dtype == PARC_RT_BF16)
    return viaF32(dtype, numElements(4, q_dims), q, numElements(4, k_dims), k,
                  numElements(4, out_dims), out,
                  [&](const float *fq, const float *fk, float *fo) {
                    batched(d, /*transRhs=*/true, scale, fq, fk, fo);
                  });
  if (dtype != PARC_RT_F32)
    return unsupportedDtype(op, dtype);
  batched(d, /*transRhs=*/true, scale, static_cast<const float *>(q),
          static_cast<const float *>(k), static_cast<float *>(out));
  return PARC_RT_OK;
}

extern "C" parc_rt_status_t
parc_rt_attention_values(parc_rt_dtype_t dtype, const void *p, int64_t p_rank,
                         const int64_t *p_dims, const void *v, int64_t v_rank,
                         const int64_t *v_dims, void *out, int64_t out_rank,
                         const int64_t *out_dims) {
  const char *op = "attention_values";
  AttentionDims d{};
  PARC_RT_RETURN_IF_ERROR(resolveValues(op, p_rank, p_dims, v_rank, v_dims,
                                        out_rank, out_dims, d));
  tagKernel("attention", 2.0 * d.batch * d.heads * d.rows * d.cols * d.inner,
            dtype);
  if (batchedDnnl(dtype, d, /*transRhs=*/false, 1.0f, p, v, out))
    return PARC_RT_OK;
  if (dtype == PARC_RT_F16 || dtype == PARC_RT_BF16)
    return viaF32(dtype, numElements(4, p_dims), p, numElements(4, v_dims), v,
                  numElements(4, out_dims), out,
                  [&](const float *fp, const float *fv, float *fo) {
                    batched(d, /*transRhs=*/false, 1.0f, fp, fv, fo);
                  });
  if (dtype != PARC_RT_F32)
    return unsupportedDtype(op, dtype);
  batched(d, /*transRhs=*/false, 1.0f, static_cast<const float *>(p),
          static_cast<const float *>(v), static_cast<float *>(out));
  return PARC_RT_OK;
}

/// y = x·cos + rotate_half(x)·sin with cos and sin broadcast to x: the form
/// nn.rotary keeps from exporters, whose tables span the whole last dim.
extern "C" parc_rt_status_t
parc_rt_rotary_full(parc_rt_dtype_t dtype, const void *x, int64_t x_rank,
                    const int64_t *x_dims, const void *cos, int64_t cos_rank,
                    const int64_t *cos_dims, const void *sin, int64_t sin_rank,
                    const int64_t *sin_dims, void *y, int64_t y_rank,
                    const int64_t *y_dims) {
  RotaryTablesPlan t;
  PARC_RT_RETURN_IF_ERROR(planRotaryTables(x_rank, x_dims, cos_rank, cos_dims,
                                           sin_rank, sin_dims, y_rank, y_dims,
                                           t));
  const int64_t *cs = t.cosStrides, *ss = t.sinStrides;
  const char *op = "rotary";
  // Half types widen to f32 (and the result narrows back) around the loop.
  const bool half = dtype == PARC_RT_F16 || dtype == PARC_RT_BF16;
  if (!half && dtype != PARC_RT_F32)
    return unsupportedDtype(op, dtype);
  int64_t xn = numElements(x_rank, x_dims), cn = numElements(cos_rank, cos_dims),
          sn = numElements(sin_rank, sin_dims);
  std::vector<float> wide;
  if (half) {
    wide.resize(2 * xn + cn + sn);
    const bool bf16 = dtype == PARC_RT_BF16;
    halfToF32(bf16, static_cast<const uint16_t *>(x), wide.data(), xn);
    halfToF32(bf16, static_cast<const uint16_t *>(cos), wide.data() + xn, cn);
    halfToF32(bf16, static_cast<const uint16_t *>(sin), wide.data() + xn + cn, sn);
  }
  const float *xf = half ? wide.data() : static_cast<const float *>(x);
  const float *cf = half ? wide.data() + xn : static_cast<const float *>(cos);
  const float *sf = half ? wide.data() + xn + cn : static_cast<const float *>(sin);
  float *yf = half ? wide.data() + xn + cn + sn : static_cast<float *>(y);
  const int64_t width = t.width, halfWidth = width / 2;
  for (int64_t r = 0; r < t.rows; ++r) {
    int64_t rem = r, co = 0, so = 0;
    for (int64_t d = t.rank - 1; d >= 0; --d) {
      int64_t i = rem % t.dims[d];
      rem /= t.dims[d];
      co += i * cs[d];
      so += i * ss[d];
    }
    const float *xr = xf + r * width;
    float *yr = yf + r * width;
    for (int64_t j = 0; j < width; ++j) {
      float rotated = j < halfWidth ? -xr[j + halfWidth] : xr[j - halfWidth];
      yr[j] = xr[j] * cf[co + j] + rotated * sf[so + j];
    }
  }
  if (half)
    f32ToHalf(dtype == PARC_RT_BF16, yf, static_cast<uint16_t *>(y), xn);
  return PARC_RT_OK;
}
