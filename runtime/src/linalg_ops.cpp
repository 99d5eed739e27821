//===- linalg_ops.cpp - matmul, gemm, conv, max_pool ----------------------===//
//
// The GEMM-shaped ABI entry points: linalg_shapes.h checks and resolves the
// call, the backend computes it (backend.h). Attention products stay with
// the backends (cpu/attention.cpp, cuda/attention.cu).
//
//===----------------------------------------------------------------------===//

#include "backend.h"
#include "kernel_tag.h"

using namespace parc::rt;

namespace {

bool isFloatDtype(parc_rt_dtype_t t) {
  return t == PARC_RT_F32 || t == PARC_RT_F64 || t == PARC_RT_F16 ||
         t == PARC_RT_BF16;
}

} // namespace

extern "C" {

parc_rt_status_t parc_rt_matmul(parc_rt_dtype_t dtype, const void *a,
                                int64_t a_rank, const int64_t *a_dims,
                                const void *b, int64_t b_rank,
                                const int64_t *b_dims, void *out,
                                int64_t out_rank, const int64_t *out_dims) {
  MatmulPlan p;
  PARC_RT_RETURN_IF_ERROR(planMatmul(dtype, a, a_rank, a_dims, b, b_rank,
                                     b_dims, out, out_rank, out_dims, p));
  if (p.empty())
    return PARC_RT_OK;
  tagKernel("gemm", 2.0 * double(p.outCount) * double(p.shape.k), dtype);
  // Both backends: the float dtypes and i32/i64 (shape arithmetic).
  if (!isFloatDtype(dtype) && dtype != PARC_RT_I32 && dtype != PARC_RT_I64)
    return unsupportedDtype("matmul", dtype);
  return runMatmul(dtype, p, a, b, out);
}

parc_rt_status_t parc_rt_gemm(parc_rt_dtype_t dtype, const void *a,
                              const void *b, const void *c, int64_t c_rank,
                              const int64_t *c_dims, void *y, int64_t m,
                              int64_t n, int64_t k, int trans_a, int trans_b,
                              float alpha, float beta) {
  PARC_RT_RETURN_IF_ERROR(
      checkGemm(dtype, a, b, c, c_rank, c_dims, y, m, n, k));
  if (m == 0 || n == 0)
    return PARC_RT_OK;
  tagKernel("gemm", 2.0 * double(m) * double(n) * double(k), dtype);
  if (!isFloatDtype(dtype))
    return unsupportedDtype("gemm", dtype);
  return runGemm({dtype, a, b, c, c_rank, c_dims, y, m, n, k, trans_a != 0,
                  trans_b != 0, alpha, beta});
}

parc_rt_status_t parc_rt_conv(parc_rt_dtype_t dtype, const void *x,
                              int64_t rank, const int64_t *x_dims,
                              const void *w, const int64_t *w_dims,
                              const void *bias, int64_t group,
                              const int64_t *strides, const int64_t *pads,
                              const int64_t *dilations, void *y,
                              const int64_t *y_dims) {
  ConvPlan p;
  PARC_RT_RETURN_IF_ERROR(planConv(dtype, x, rank, x_dims, w, w_dims, group,
                                   strides, pads, dilations, y, y_dims, p));
  if (p.empty())
    return PARC_RT_OK;
  if (!isFloatDtype(dtype))
    return unsupportedDtype("conv", dtype);
  return runConv(dtype, p, x, w, bias, group, y);
}

parc_rt_status_t parc_rt_max_pool(parc_rt_dtype_t dtype, const void *x,
                                  int64_t rank, const int64_t *x_dims,
                                  const int64_t *kernel, const int64_t *strides,
                                  const int64_t *pads, const int64_t *dilations,
                                  void *y, const int64_t *y_dims) {
  PoolPlan p;
  PARC_RT_RETURN_IF_ERROR(planMaxPool(dtype, x, rank, x_dims, kernel, strides,
                                      pads, dilations, y, y_dims, p));
  if (p.empty())
    return PARC_RT_OK;
  return runMaxPool(dtype, p, x, y);
}

} // extern "C"
