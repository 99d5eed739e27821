//===- linalg.cpp - matmul (numpy broadcasting) and ONNX Gemm via BLAS ----===//
//
// f32 and, on CPUs with bf16 instructions, bf16 go to oneDNN's matmul with
// weights packed once (dnnl_matmul.h); otherwise f32/f64 go to sgemm/dgemm
// and f16/bf16 widen to f32 around sgemm; i32/i64 use a plain loop. Batched
// matmul calls the GEMM once per batch, or once in total when a's batches
// are contiguous rows over a single shared b.
//
//===----------------------------------------------------------------------===//

#include "../backend.h"
#include "../dtype_traits.h"
#include "blas.h"
#include "dnnl_matmul.h"
#include "shape.h"

#include <limits>
#include <vector>

using namespace parc::rt;

namespace {

template <typename T>
void matmulTyped(const MatmulShape &s, const T *a, const T *b, T *out) {
  if (s.foldBatchIntoM) {
    gemm(false, false, s.m * numElements(s.batchRank, s.batch), s.n, s.k, 1.0,
         a, b, 0.0, out);
    return;
  }
  const int64_t aMat = s.m * s.k, bMat = s.k * s.n, oMat = s.m * s.n;
  LoopNest<3> loop(s.batchRank, s.batch,
                   {s.outStrides, s.aStrides, s.bStrides});
  const int64_t so = loop.innerStride(0), sa = loop.innerStride(1),
                sb = loop.innerStride(2);
  // Serial over batches: BLAS owns the threads.
  loop.run(
      [&](const std::array<int64_t, 3> &off, int64_t count) {
        for (int64_t i = 0; i < count; ++i)
          gemm(false, false, s.m, s.n, s.k, 1.0, a + (off[1] + i * sa) * aMat,
               b + (off[2] + i * sb) * bMat, 0.0,
               out + (off[0] + i * so) * oMat);
      },
      std::numeric_limits<int64_t>::max());
}

/// matmulTyped through oneDNN's matmul; false (nothing written) where it
/// does not take the dtype.
bool matmulDnnl(parc_rt_dtype_t dtype, const MatmulShape &s, const void *a,
                const void *b, void *out) {
  const size_t size = parc_rt_dtype_size(dtype);
  auto at = [&](const void *base, int64_t elems) {
    return static_cast<const char *>(base) + elems * int64_t(size);
  };
  if (s.foldBatchIntoM)
    return dnnlMatmul(dtype, false, false,
                      s.m * numElements(s.batchRank, s.batch), s.n, s.k, 1.0f,
                      a, b, 0.0f, out);
  const int64_t aMat = s.m * s.k, bMat = s.k * s.n, oMat = s.m * s.n;
  LoopNest<3> loop(s.batchRank, s.batch,
                   {s.outStrides, s.aStrides, s.bStrides});
  const int64_t so = loop.innerStride(0), sa = loop.innerStride(1),
                sb = loop.innerStride(2);
  bool ok = true;
  loop.run(
      [&](const std::array<int64_t, 3> &off, int64_t count) {
        for (int64_t i = 0; i < count && ok; ++i)
          ok = dnnlMatmul(dtype, false, false, s.m, s.n, s.k, 1.0f,
                          at(a, (off[1] + i * sa) * aMat),
                          at(b, (off[2] + i * sb) * bMat), 0.0f,
                          const_cast<char *>(at(out, (off[0] + i * so) * oMat)));
      },
      std::numeric_limits<int64_t>::max());
  return ok; // the first call fails or none: every batch has one shape
}

} // namespace

parc_rt_status_t parc::rt::runMatmul(parc_rt_dtype_t dtype,
                                     const MatmulPlan &p, const void *a,
                                     const void *b, void *out) {
  const MatmulShape &s = p.shape;
  const int64_t aCount = p.aCount, bCount = p.bCount, outCount = p.outCount;
  numThreads(); // make sure BLAS threading is configured
  if (matmulDnnl(dtype, s, a, b, out))
    return PARC_RT_OK;
  switch (dtype) {
  case PARC_RT_F32:
    matmulTyped(s, static_cast<const float *>(a), static_cast<const float *>(b),
                static_cast<float *>(out));
    return PARC_RT_OK;
  case PARC_RT_F64:
    matmulTyped(s, static_cast<const double *>(a),
                static_cast<const double *>(b), static_cast<double *>(out));
    return PARC_RT_OK;
  case PARC_RT_F16:
  case PARC_RT_BF16:
    return viaF32(dtype, aCount, a, bCount, b, outCount, out,
                  [&](const float *fa, const float *fb, float *fo) {
                    matmulTyped(s, fa, fb, fo);
                  });
  case PARC_RT_I32:
    matmulTyped(s, static_cast<const int32_t *>(a),
                static_cast<const int32_t *>(b), static_cast<int32_t *>(out));
    return PARC_RT_OK;
  case PARC_RT_I64:
    matmulTyped(s, static_cast<const int64_t *>(a),
                static_cast<const int64_t *>(b), static_cast<int64_t *>(out));
    return PARC_RT_OK;
  default:
    return unsupportedDtype("matmul", dtype);
  }
}

parc_rt_status_t parc::rt::runGemm(const GemmCall &g) {
  const parc_rt_dtype_t dtype = g.dtype;
  const int64_t m = g.m, n = g.n, k = g.k, c_rank = g.cRank;
  const int64_t *c_dims = g.cDims;
  const int64_t yDims[2] = {m, n};
  numThreads();
  const bool useC = g.c && g.beta != 0.0f;
  if (dtype == PARC_RT_F32 || dtype == PARC_RT_BF16) {
    if (useC)
      PARC_RT_RETURN_IF_ERROR(
          parc_rt_expand(dtype, g.c, c_rank, c_dims, g.y, 2, yDims));
    if (dnnlMatmul(dtype, g.transA, g.transB, m, n, k, g.alpha, g.a, g.b,
                   useC ? g.beta : 0.0f, g.y))
      return PARC_RT_OK;
  }
  // y = broadcast(c), then BLAS accumulates alpha AB on top with beta.
  auto run = [&](auto *pa, auto *pb, auto *py, parc_rt_dtype_t cDtype,
                 const void *pc) -> parc_rt_status_t {
    if (useC)
      PARC_RT_RETURN_IF_ERROR(
          parc_rt_expand(cDtype, pc, c_rank, c_dims, py, 2, yDims));
    gemm(g.transA, g.transB, m, n, k, g.alpha, pa, pb,
         useC ? double(g.beta) : 0.0, py);
    return PARC_RT_OK;
  };
  switch (dtype) {
  case PARC_RT_F32:
    return run(static_cast<const float *>(g.a), static_cast<const float *>(g.b),
               static_cast<float *>(g.y), dtype, g.c);
  case PARC_RT_F64:
    return run(static_cast<const double *>(g.a),
               static_cast<const double *>(g.b), static_cast<double *>(g.y),
               dtype, g.c);
  case PARC_RT_F16:
  case PARC_RT_BF16: {
    std::vector<float> fc;
    if (useC) {
      const int64_t cCount = numElements(c_rank, c_dims);
      fc.resize(size_t(cCount));
      halfToF32(dtype == PARC_RT_BF16, static_cast<const uint16_t *>(g.c),
                fc.data(), cCount);
    }
    parc_rt_status_t status = PARC_RT_OK;
    viaF32(dtype, m * k, g.a, k * n, g.b, m * n, g.y,
           [&](const float *fa, const float *fb, float *fy) {
             status = run(fa, fb, fy, PARC_RT_F32, fc.data());
           });
    return status;
  }
  default:
    return unsupportedDtype("gemm", dtype);
  }
}
