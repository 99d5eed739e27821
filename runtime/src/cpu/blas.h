//===- blas.h - GEMM over BLAS (floats) or a plain loop (integers) -*- C++
//-*-===//
//
// Shared by linalg.cpp and conv.cpp (im2col + GEMM).
//
//===----------------------------------------------------------------------===//
#ifndef PARC_RUNTIME_CPU_BLAS_H
#define PARC_RUNTIME_CPU_BLAS_H

#include <cblas.h>

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
