//===- linalg.cu - matmul and gemm over cuBLAS / cuBLASLt -----------------===//
//
// Every product is a row-major GEMM handed to cuBLAS through the usual
// transposition (row-major C = A B is column-major Cᵀ = Bᵀ Aᵀ): f32 in
// IEEE f32 (TF32 only with PARC_RT_CUDA_TF32=1), f16/bf16 with f32
// accumulation, f64 in f64; integer matmul (rare: shape arithmetic) uses a
// plain kernel. Batches become one strided-batched call wherever the
// strides allow: broadcast batch dims get stride 0. The common linear
// layer (y = x Wᵀ + b) goes to cuBLASLt with the bias add fused as an
// epilogue. conv.cu and attention.cu run their products through
// cublasGemm (gemm.cuh).
//
//===----------------------------------------------------------------------===//

#include "../backend.h"
#include "gemm.cuh"

#include <map>
#include <tuple>

using namespace parc::rt;
using namespace parc::rt::cuda;

namespace {

//===----------------------------------------------------------------------===//
// GEMM dispatch
//===----------------------------------------------------------------------===//

cudaDataType_t cudaType(parc_rt_dtype_t t) {
  switch (t) {
  case PARC_RT_F16:
    return CUDA_R_16F;
  case PARC_RT_BF16:
    return CUDA_R_16BF;
  case PARC_RT_F64:
    return CUDA_R_64F;
  default:
    return CUDA_R_32F;
  }
}

cublasComputeType_t computeType(State *s, parc_rt_dtype_t t) {
  if (t == PARC_RT_F64)
    return CUBLAS_COMPUTE_64F;
  if (t == PARC_RT_F32 && s->tf32)
    return CUBLAS_COMPUTE_32F_FAST_TF32;
  return CUBLAS_COMPUTE_32F;
}

/// Integer GEMM: one thread per output element.
template <typename T>
__global__ void intGemmKernel(Gemm g) {
  const int64_t total = g.batch * g.m * g.n;
  const T *a = static_cast<const T *>(g.a);
  const T *b = static_cast<const T *>(g.b);
  T *c = static_cast<T *>(g.c);
  PARC_GRID_STRIDE(e, total) {
    const int64_t j = e % g.n, i = (e / g.n) % g.m, bi = e / (g.n * g.m);
    const T *ab = a + bi * g.strideA, *bb = b + bi * g.strideB;
    T acc = 0;
    for (int64_t p = 0; p < g.k; ++p)
      acc += (g.transA ? ab[p * g.lda + i] : ab[i * g.lda + p]) *
             (g.transB ? bb[j * g.ldb + p] : bb[p * g.ldb + j]);
    // matmul has alpha 1 and beta 0: keep integers exact then.
    T &out = c[bi * g.strideC + i * g.ldc + j];
    T v = g.alpha == 1 ? acc : T(double(acc) * g.alpha);
    if (g.beta != 0)
      v += T(double(out) * g.beta);
    out = v;
  }
}


//===----------------------------------------------------------------------===//
// cuBLASLt: GEMM with a fused bias epilogue
//===----------------------------------------------------------------------===//

/// Largest power of two (<= 256) dividing the address.
uint32_t alignmentOf(const void *p) {
  uintptr_t v = reinterpret_cast<uintptr_t>(p);
  uint32_t a = 256;
  while (a > 1 && (v % a))
    a /= 2;
  return a;
}

/// A planned cuBLASLt matmul: descriptors and the algorithm the heuristic
/// chose, kept per problem (shapes, types, alignments) for the process.
struct LtPlan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t aLayout = nullptr, bLayout = nullptr, dLayout = nullptr;
  cublasLtMatmulAlgo_t algo;
  bool usable = false;
};

using LtKey = std::tuple<int, bool, bool, int64_t, int64_t, int64_t, uint32_t,
                         uint32_t, uint32_t, uint32_t, int>;

std::map<LtKey, LtPlan> &ltPlans() {
  static std::map<LtKey, LtPlan> plans;
  return plans;
}

/// Builds the plan; `usable` stays false when cuBLASLt has no algorithm.
void planLt(State *s, parc_rt_dtype_t dtype, const Gemm &g, const void *bias,
            LtPlan &p) {
  const cudaDataType_t type = cudaType(dtype);
  auto ok = [](cublasStatus_t st) { return st == CUBLAS_STATUS_SUCCESS; };
  if (!ok(cublasLtMatmulDescCreate(&p.desc, computeType(s, dtype),
                                   CUDA_R_32F)))
    return;
  // Operand order is swapped (column-major view): Lt's A is our B.
  cublasOperation_t opA = g.transB ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasOperation_t opB = g.transA ? CUBLAS_OP_T : CUBLAS_OP_N;
  cublasLtEpilogue_t epilogue = CUBLASLT_EPILOGUE_BIAS;
  if (!ok(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSA,
                                         &opA, sizeof(opA))) ||
      !ok(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_TRANSB,
                                         &opB, sizeof(opB))) ||
      !ok(cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_EPILOGUE,
                                         &epilogue, sizeof(epilogue))) ||
      !ok(cublasLtMatmulDescSetAttribute(
          p.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER, &bias, sizeof(bias))))
    return;
  // Stored matrices, column-major: B is (transB ? k x n : n x k), A is
  // (transA ? m x k : k x m), D is n x m.
  if (!ok(cublasLtMatrixLayoutCreate(&p.aLayout, type, g.transB ? g.k : g.n,
                                     g.transB ? g.n : g.k, g.ldb)) ||
      !ok(cublasLtMatrixLayoutCreate(&p.bLayout, type, g.transA ? g.m : g.k,
                                     g.transA ? g.k : g.m, g.lda)) ||
      !ok(cublasLtMatrixLayoutCreate(&p.dLayout, type, g.n, g.m, g.ldc)))
    return;
  cublasLtMatmulPreference_t pref = nullptr;
  if (!ok(cublasLtMatmulPreferenceCreate(&pref)))
    return;
  uint64_t workspace = s->workspaceBytes;
  uint32_t alignB = alignmentOf(g.b), alignA = alignmentOf(g.a),
           alignD = alignmentOf(g.c);
  // cuBLASLt's A is our B (the problem is transposed, see above).
  const struct {
    cublasLtMatmulPreferenceAttributes_t attribute;
    const void *value;
    size_t bytes;
  } preferences[] = {
      {CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &workspace, sizeof(workspace)},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_A_BYTES, &alignB, sizeof(alignB)},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_B_BYTES, &alignA, sizeof(alignA)},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_C_BYTES, &alignD, sizeof(alignD)},
      {CUBLASLT_MATMUL_PREF_MIN_ALIGNMENT_D_BYTES, &alignD, sizeof(alignD)}};
  bool preferred = true;
  for (const auto &a : preferences)
    preferred = preferred && ok(cublasLtMatmulPreferenceSetAttribute(
                                 pref, a.attribute, a.value, a.bytes));
  cublasLtMatmulHeuristicResult_t result = {};
  int found = 0;
  if (preferred &&
      ok(cublasLtMatmulAlgoGetHeuristic(s->lt, p.desc, p.aLayout, p.bLayout,
                                        p.dLayout, p.dLayout, pref, 1, &result,
                                        &found)) &&
      found > 0) {
    p.algo = result.algo;
    p.usable = true;
  }
  cublasLtMatmulPreferenceDestroy(pref);
}

/// y = alpha op(a) op(b) + bias (bias: n elements, one per column of y).
/// False when cuBLASLt cannot do it; the caller falls back to cuBLAS.
bool tryLtBias(State *s, parc_rt_dtype_t dtype, const Gemm &g,
               const void *bias) {
  if (!s->useLt || g.batch != 1 ||
      (dtype != PARC_RT_F32 && dtype != PARC_RT_F16 && dtype != PARC_RT_BF16) ||
      g.m > kBlasMax || g.n > kBlasMax || g.k > kBlasMax || g.k == 0)
    return false;
  const LtKey key{int(dtype),         g.transA,          g.transB,
                  g.m,                g.n,               g.k,
                  alignmentOf(g.a),   alignmentOf(g.b),  alignmentOf(g.c),
                  alignmentOf(bias),  int(s->tf32)};
  auto [it, fresh] = ltPlans().try_emplace(key);
  LtPlan &p = it->second;
  if (fresh)
    planLt(s, dtype, g, bias, p);
  if (!p.usable)
    return false;
  if (cublasLtMatmulDescSetAttribute(p.desc, CUBLASLT_MATMUL_DESC_BIAS_POINTER,
                                     &bias,
                                     sizeof(bias)) != CUBLAS_STATUS_SUCCESS)
    return false;
  const float alpha = float(g.alpha), beta = 0.0f;
  if (cublasLtMatmul(s->lt, p.desc, &alpha, g.b, p.aLayout, g.a, p.bLayout,
                     &beta, g.c, p.dLayout, g.c, p.dLayout, &p.algo,
                     s->workspace, s->workspaceBytes,
                     s->compute) != CUBLAS_STATUS_SUCCESS) {
    p.usable = false; // do not try this problem again
    cudaGetLastError();
    return false;
  }
  cudaGetLastError(); // as after cuBLAS: nothing left behind is ours
  return true;
}

//===----------------------------------------------------------------------===//
// Small kernels around the GEMMs
//===----------------------------------------------------------------------===//

/// y *= beta (GEMMs with k = 0).
template <parc_rt_dtype_t D>
__global__ void scaleKernel(typename Dev<D>::Storage *y, int64_t n,
                            double beta) {
  using C = typename Dev<D>::Compute;
  PARC_GRID_STRIDE(i, n) { y[i] = Dev<D>::store(C(Dev<D>::load(y[i]) * beta)); }
}

} // namespace

parc_rt_status_t parc::rt::cuda::cublasGemm(State *s, const char *op,
                                           parc_rt_dtype_t dtype,
                                           const Gemm &g) {
  if (g.m == 0 || g.n == 0 || g.batch == 0)
    return PARC_RT_OK;
  if (dtype == PARC_RT_I32 || dtype == PARC_RT_I64) {
    const int64_t total = g.batch * g.m * g.n;
    if (dtype == PARC_RT_I32)
      intGemmKernel<int32_t><<<gridFor(total), 256, 0, s->compute>>>(g);
    else
      intGemmKernel<int64_t><<<gridFor(total), 256, 0, s->compute>>>(g);
    return launched(s, op);
  }
  PARC_RT_RETURN_IF_ERROR(checkBlasDims(op, g.m, g.n, g.k));
  if (g.lda > kBlasMax || g.ldb > kBlasMax || g.ldc > kBlasMax ||
      g.batch > kBlasMax)
    return fail(PARC_RT_UNSUPPORTED,
                "%s: leading dims or batch count exceed the cuBLAS integer "
                "range",
                op);
  const cudaDataType_t type = cudaType(dtype);
  const float alpha32 = float(g.alpha), beta32 = float(g.beta);
  const void *alpha = &alpha32, *beta = &beta32;
  if (dtype == PARC_RT_F64) {
    alpha = &g.alpha;
    beta = &g.beta;
  }
  // Column-major view: Cᵀ (n x m) = op(B)ᵀ op(A)ᵀ.
  PARC_BLAS_RETURN_IF_ERROR(
      cublasGemmStridedBatchedEx(
          s->blas, g.transB ? CUBLAS_OP_T : CUBLAS_OP_N,
          g.transA ? CUBLAS_OP_T : CUBLAS_OP_N, int(g.n), int(g.m), int(g.k),
          alpha, g.b, type, int(g.ldb), g.strideB, g.a, type, int(g.lda),
          g.strideA, beta, g.c, type, int(g.ldc), g.strideC, int(g.batch),
          computeType(s, dtype), CUBLAS_GEMM_DEFAULT),
      op, "cublasGemmStridedBatchedEx");
  cudaGetLastError(); // cuBLAS succeeded: nothing it left is ours to report
  return PARC_RT_OK;
}

parc_rt_status_t parc::rt::runMatmul(parc_rt_dtype_t dtype,
                                     const MatmulPlan &p, const void *a,
                                     const void *b, void *out) {
  const char *op = "matmul";
  const MatmulShape &ms = p.shape;
  const int64_t outCount = p.outCount;
  State *s = nullptr;
  PARC_RT_RETURN_IF_ERROR(getState(op, &s));
  if (ms.k == 0) {
    PARC_CUDA_RETURN_IF_ERROR(
        cudaMemsetAsync(out, 0, size_t(outCount) * parc_rt_dtype_size(dtype),
                        s->compute),
        op, "cudaMemsetAsync");
    return PARC_RT_OK;
  }
  const size_t elem = parc_rt_dtype_size(dtype);
  if (ms.foldBatchIntoM) {
    Gemm g = contiguous(false, false, ms.m * numElements(ms.batchRank, ms.batch),
                        ms.n, ms.k);
    g.a = a;
    g.b = b;
    g.c = out;
    return cublasGemm(s, op, dtype, g);
  }
  // Broadcast batches: each run of the merged batch loop is one
  // strided-batched call (stride 0 along a broadcast operand).
  const int64_t aMat = ms.m * ms.k, bMat = ms.k * ms.n, oMat = ms.m * ms.n;
  LoopNest<3> loop(ms.batchRank, ms.batch,
                   {ms.outStrides, ms.aStrides, ms.bStrides});
  const int64_t so = loop.innerStride(0), sa = loop.innerStride(1),
                sb = loop.innerStride(2);
  parc_rt_status_t status = PARC_RT_OK;
  loop.run(
      [&](const std::array<int64_t, 3> &off, int64_t count) {
        if (status != PARC_RT_OK)
          return;
        Gemm g = contiguous(false, false, ms.m, ms.n, ms.k);
        g.a = static_cast<const char *>(a) + off[1] * aMat * int64_t(elem);
        g.b = static_cast<const char *>(b) + off[2] * bMat * int64_t(elem);
        g.c = static_cast<char *>(out) + off[0] * oMat * int64_t(elem);
        g.strideA = sa * aMat;
        g.strideB = sb * bMat;
        g.strideC = so * oMat;
        g.batch = count;
        status = cublasGemm(s, op, dtype, g);
      },
      std::numeric_limits<int64_t>::max());
  return status;
}

parc_rt_status_t parc::rt::runGemm(const GemmCall &call) {
  const char *op = "gemm";
  const parc_rt_dtype_t dtype = call.dtype;
  const int64_t m = call.m, n = call.n, k = call.k, c_rank = call.cRank;
  const int64_t *c_dims = call.cDims;
  const void *c = call.c;
  void *y = call.y;
  const float beta = call.beta;
  const int64_t yDims[2] = {m, n};
  State *s = nullptr;
  PARC_RT_RETURN_IF_ERROR(getState(op, &s));
  const bool useC = c && beta != 0.0f;
  Gemm g = contiguous(call.transA, call.transB, m, n, k);
  g.a = call.a;
  g.b = call.b;
  g.c = y;
  g.alpha = call.alpha;
  // The linear layer: a bias row added to every row of y, fused.
  const bool biasRow = useC && beta == 1.0f && c_rank >= 1 &&
                       numElements(c_rank, c_dims) == n &&
                       c_dims[c_rank - 1] == n;
  if (biasRow && tryLtBias(s, dtype, g, c))
    return PARC_RT_OK;
  // y = broadcast(c), then the GEMM accumulates alpha AB on top with beta.
  if (useC)
    PARC_RT_RETURN_IF_ERROR(parc_rt_expand(dtype, c, c_rank, c_dims, y, 2, yDims));
  if (k == 0) {
    if (!useC) {
      PARC_CUDA_RETURN_IF_ERROR(
          cudaMemsetAsync(y, 0, size_t(m * n) * parc_rt_dtype_size(dtype),
                          s->compute),
          op, "cudaMemsetAsync");
      return PARC_RT_OK;
    }
    visitDtype(
        dtype,
        [&](auto tag) {
          constexpr parc_rt_dtype_t D = decltype(tag)::value;
          if constexpr (Traits<D>::kind == Kind::Float)
            scaleKernel<D><<<gridFor(m * n), 256, 0, s->compute>>>(
                static_cast<typename Dev<D>::Storage *>(y), m * n,
                double(beta));
        },
        [] {});
    return launched(s, op);
  }
  g.beta = useC ? beta : 0.0;
  return cublasGemm(s, op, dtype, g);
}
