//===- blas.h - GEMM over oneDNN / BLAS or a plain loop -----*- C++ -*-===//
//
// Shared by linalg.cpp, conv.cpp (im2col + GEMM) and moe.cpp. f32 goes to
// oneDNN's sgemm where it was found: on a transformer's skinny products
// (128 rows against 768x768 ... 768x50257 weights) its AVX-512 kernels run
// 10-20% above OpenBLAS 0.3.21's. f64 stays on BLAS.
//
//===----------------------------------------------------------------------===//
#ifndef PARC_RUNTIME_CPU_BLAS_H
#define PARC_RUNTIME_CPU_BLAS_H

#include <cblas.h>
#ifdef PARC_RT_HAVE_DNNL
#include <dnnl.h>
#endif

#include <algorithm>
#include <cstdint>

namespace parc::rt {

struct GemmArgs {
  bool transA, transB;
  int64_t m, n, k;
  int64_t lda, ldb, ldc;
};

inline void gemmCall(const GemmArgs &g, float alpha, const float *a,
                     const float *b, float beta, float *c) {
#ifdef PARC_RT_HAVE_DNNL
  // Row-major like cblas; it fails only on arguments gemm() already vetted.
  if (dnnl_sgemm(g.transA ? 'T' : 'N', g.transB ? 'T' : 'N', g.m, g.n, g.k,
                 alpha, a, g.lda, b, g.ldb, beta, c, g.ldc) == dnnl_success)
    return;
#endif
  cblas_sgemm(CblasRowMajor, g.transA ? CblasTrans : CblasNoTrans,
              g.transB ? CblasTrans : CblasNoTrans, blasint(g.m), blasint(g.n),
              blasint(g.k), alpha, a, blasint(g.lda), b, blasint(g.ldb), beta,
              c, blasint(g.ldc));
}

inline void gemmCall(const GemmArgs &g, double alpha, const double *a,
                     const double *b, double beta, double *c) {
  cblas_dgemm(CblasRowMajor, g.transA ? CblasTrans : CblasNoTrans,
              g.transB ? CblasTrans : CblasNoTrans, blasint(g.m), blasint(g.n),
              blasint(g.k), alpha, a, blasint(g.lda), b, blasint(g.ldb), beta,
              c, blasint(g.ldc));
}

/// Integer GEMM: rare (shape arithmetic mostly folds away), kept simple.
template <typename T>
void gemmCall(const GemmArgs &g, double alpha, const T *a, const T *b,
              double beta, T *c) {
  for (int64_t i = 0; i < g.m; ++i) {
    T *row = c + i * g.ldc;
    for (int64_t j = 0; j < g.n; ++j)
      row[j] = beta == 0 ? T(0) : T(double(row[j]) * beta);
    for (int64_t p = 0; p < g.k; ++p) {
      T av = g.transA ? a[p * g.lda + i] : a[i * g.lda + p];
      av = T(double(av) * alpha);
      for (int64_t j = 0; j < g.n; ++j)
        row[j] += av * (g.transB ? b[j * g.ldb + p] : b[p * g.ldb + j]);
    }
  }
}

/// C = alpha op(A) op(B) + beta C with the degenerate sizes BLAS rejects
/// (leading dimensions of 0) handled here.
template <typename T>
void gemm(bool transA, bool transB, int64_t m, int64_t n, int64_t k,
          double alpha, const T *a, const T *b, double beta, T *c) {
  if (m == 0 || n == 0)
    return;
  GemmArgs g{transA, transB, m, n, k, 0, 0, 0};
  g.lda = std::max<int64_t>(1, transA ? m : k);
  g.ldb = std::max<int64_t>(1, transB ? k : n);
  g.ldc = n;
  gemmCall(g, T(alpha), a, b, T(beta), c);
}

} // namespace parc::rt

#endif // PARC_RUNTIME_CPU_BLAS_H
