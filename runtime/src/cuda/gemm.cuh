//===- gemm.cuh - cuBLAS GEMMs shared by the cuda kernels ------*- CUDA -*-===//
//
// linalg.cu, conv.cu and attention.cu describe their products as a Gemm
// (row-major, strided-batched) and run them with cublasGemm.
//
//===----------------------------------------------------------------------===//
#ifndef PARC_RUNTIME_CUDA_GEMM_CUH
#define PARC_RUNTIME_CUDA_GEMM_CUH

#include "kernels.cuh"

#include <algorithm>

namespace parc::rt::cuda {

/// C[b] = alpha op(A[b]) op(B[b]) + beta C[b], row-major, for b < batch.
struct Gemm {
  bool transA = false, transB = false;
  int64_t m = 0, n = 0, k = 0;
  const void *a = nullptr;
  int64_t lda = 0, strideA = 0;
  const void *b = nullptr;
  int64_t ldb = 0, strideB = 0;
  void *c = nullptr;
  int64_t ldc = 0, strideC = 0;
  int64_t batch = 1;
  double alpha = 1, beta = 0;
};

/// Row-major leading dims of contiguous operands.
inline Gemm contiguous(bool transA, bool transB, int64_t m, int64_t n, int64_t k) {
  Gemm g;
  g.transA = transA;
  g.transB = transB;
  g.m = m;
  g.n = n;
  g.k = k;
  g.lda = std::max<int64_t>(1, transA ? m : k);
  g.ldb = std::max<int64_t>(1, transB ? k : n);
  g.ldc = std::max<int64_t>(1, n);
  g.strideA = m * k;
  g.strideB = k * n;
  g.strideC = m * n;
  return g;
}

inline bool isFloat(parc_rt_dtype_t t) {
  return t == PARC_RT_F32 || t == PARC_RT_F16 || t == PARC_RT_BF16 ||
         t == PARC_RT_F64;
}

/// Runs g in `dtype` (integers by a plain kernel) on the compute stream.
parc_rt_status_t cublasGemm(State *s, const char *op, parc_rt_dtype_t dtype,
                            const Gemm &g);

} // namespace parc::rt::cuda

#endif // PARC_RUNTIME_CUDA_GEMM_CUH
