//===- attention.cu - attention products and full-width rotary (cuda) -----===//
//
// The attention products are one strided-batched GEMM over (batch, kv
// head): grouped-query attention folds the query heads that share a
// key/value head into the rows of one GEMM, so K and V are never copied
// per query head. rotary_full (the exporters' form, tables as wide as the
// head) lives here as in the cpu backend's attention.cpp.
//
//===----------------------------------------------------------------------===//

#include "../backend.h"
#include "../kernel_tag.h"
#include "gemm.cuh"

using namespace parc::rt;
using namespace parc::rt::cuda;

namespace {

/// Attention products as one strided-batched GEMM over (batch, kv head):
/// the `group` query heads of a kv head are consecutive rows of lhs/out.
parc_rt_status_t attention(const char *op, parc_rt_dtype_t dtype,
                           const AttentionDims &d, bool transRhs, float alpha,
                           const void *lhs, const void *rhs, void *out) {
  if (!isFloat(dtype))
    return unsupportedDtype(op, dtype);
  const int64_t group = d.heads / d.kvHeads;
  const int64_t rows = group * d.rows;
  if (rows * d.cols == 0 || d.batch * d.kvHeads == 0)
    return PARC_RT_OK;
  PARC_RT_RETURN_IF_ERROR(checkData(op, "lhs", lhs, 1));
  PARC_RT_RETURN_IF_ERROR(checkData(op, "rhs", rhs, 1));
  PARC_RT_RETURN_IF_ERROR(checkData(op, "out", out, 1));
  State *s = nullptr;
  PARC_RT_RETURN_IF_ERROR(getState(op, &s));
  if (d.inner == 0) {
    PARC_CUDA_RETURN_IF_ERROR(
        cudaMemsetAsync(out, 0,
                        size_t(d.batch * d.heads * d.rows * d.cols) *
                            parc_rt_dtype_size(dtype),
                        s->compute),
        op, "cudaMemsetAsync");
    return PARC_RT_OK;
  }
  Gemm g = contiguous(false, transRhs, rows, d.cols, d.inner);
  g.a = lhs;
  g.b = rhs;
  g.c = out;
  g.batch = d.batch * d.kvHeads;
  g.alpha = alpha;
  g.beta = 0;
  return cublasGemm(s, op, dtype, g);
}

/// y = x cos + rotate_half(x) sin, tables broadcast to x.
template <parc_rt_dtype_t D>
__global__ void rotaryFullKernel(const typename Dev<D>::Storage *x,
                                 const typename Dev<D>::Storage *cosTable,
                                 const typename Dev<D>::Storage *sinTable,
                                 typename Dev<D>::Storage *y, int64_t rows,
                                 int64_t width, RotaryTablesPlan t) {
  using C = typename Dev<D>::Compute;
  const int64_t half = width / 2;
  PARC_GRID_STRIDE(e, rows * half) {
    const int64_t r = e / half, j = e % half;
    int64_t rem = r, co = 0, so = 0;
    for (int d = t.rank - 1; d >= 0; --d) {
      const int64_t i = rem % t.dims[d];
      rem /= t.dims[d];
      co += i * t.cosStrides[d];
      so += i * t.sinStrides[d];
    }
    const auto *xr = x + r * width;
    auto *yr = y + r * width;
    const C lo = Dev<D>::load(xr[j]), hi = Dev<D>::load(xr[j + half]);
    yr[j] = Dev<D>::store(lo * Dev<D>::load(cosTable[co + j]) -
                          hi * Dev<D>::load(sinTable[so + j]));
    yr[j + half] = Dev<D>::store(hi * Dev<D>::load(cosTable[co + j + half]) +
                                 lo * Dev<D>::load(sinTable[so + j + half]));
  }
}

} // namespace

extern "C" {

parc_rt_status_t parc_rt_attention_scores(
    parc_rt_dtype_t dtype, const void *q, int64_t q_rank, const int64_t *q_dims,
    const void *k, int64_t k_rank, const int64_t *k_dims, void *out,
    int64_t out_rank, const int64_t *out_dims, float scale) {
  const char *op = "attention_scores";
  AttentionDims d{};
  PARC_RT_RETURN_IF_ERROR(resolveScores(op, q_rank, q_dims, k_rank, k_dims,
                                        out_rank, out_dims, d));
  tagKernel("attention", 2.0 * d.batch * d.heads * d.rows * d.cols * d.inner,
            dtype);
  return attention(op, dtype, d, /*transRhs=*/true, scale, q, k, out);
}

parc_rt_status_t parc_rt_attention_values(
    parc_rt_dtype_t dtype, const void *p, int64_t p_rank, const int64_t *p_dims,
    const void *v, int64_t v_rank, const int64_t *v_dims, void *out,
    int64_t out_rank, const int64_t *out_dims) {
  const char *op = "attention_values";
  AttentionDims d{};
  PARC_RT_RETURN_IF_ERROR(resolveValues(op, p_rank, p_dims, v_rank, v_dims,
                                        out_rank, out_dims, d));
  tagKernel("attention", 2.0 * d.batch * d.heads * d.rows * d.cols * d.inner,
            dtype);
  return attention(op, dtype, d, /*transRhs=*/false, 1.0f, p, v, out);
}

} // extern "C"

extern "C" parc_rt_status_t
parc_rt_rotary_full(parc_rt_dtype_t dtype, const void *x, int64_t x_rank,
                    const int64_t *x_dims, const void *cos, int64_t cos_rank,
                    const int64_t *cos_dims, const void *sin, int64_t sin_rank,
                    const int64_t *sin_dims, void *y, int64_t y_rank,
                    const int64_t *y_dims) {
  const char *op = "rotary";
  RotaryTablesPlan t;
  PARC_RT_RETURN_IF_ERROR(planRotaryTables(x_rank, x_dims, cos_rank, cos_dims,
                                           sin_rank, sin_dims, y_rank, y_dims,
                                           t));
  if (t.empty())
    return PARC_RT_OK;
  const int64_t width = t.width, rows = t.rows;
  return launchTyped<Kinds::Float>(op, dtype, [&](auto tag, State *s) {
    constexpr parc_rt_dtype_t D = decltype(tag)::value;
    using S = typename Dev<D>::Storage;
    rotaryFullKernel<D><<<gridFor(rows * (width / 2)), 256, 0, s->compute>>>(
        static_cast<const S *>(x), static_cast<const S *>(cos),
        static_cast<const S *>(sin), static_cast<S *>(y), rows, width, t);
  });
}
