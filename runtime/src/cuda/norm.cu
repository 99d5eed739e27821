//===- norm.cu - softmax, layer and RMS norm (cuda) -----------------------===//
//
// Row kernels give a row to a block and combine per-thread partials with
// warp shuffles; softmax over a non-last axis gives a line to a thread, so
// neighbouring threads read neighbouring addresses. Row statistics
// accumulate in f32 (f64 for f64 data).
//
//===----------------------------------------------------------------------===//

#include "../backend.h"
#include "kernels.cuh"

using namespace parc::rt;
using namespace parc::rt::cuda;

namespace {

//===----------------------------------------------------------------------===//
// Softmax
//===----------------------------------------------------------------------===//

template <parc_rt_dtype_t D, bool Log>
__global__ void softmaxRowsKernel(const typename Dev<D>::Storage *x,
                                  typename Dev<D>::Storage *y, int64_t rows,
                                  int64_t n) {
  using A = AccOf<D>;
  __shared__ A shared[32];
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const auto *xr = x + row * n;
    auto *yr = y + row * n;
    A mx = lowestOf<A>();
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
      const A v = A(Dev<D>::load(xr[i]));
      mx = (v > mx || v != v) ? v : mx;
    }
    mx = blockReduce<true>(mx, shared);
    A sum = 0;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
      sum += mexp(A(Dev<D>::load(xr[i])) - mx);
    sum = blockReduce<false>(sum, shared);
    // Each element is read, then written, by the same thread: y may be x.
    if constexpr (Log) {
      const A shift = mx + mlog(sum);
      for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
        yr[i] = Dev<D>::store(
            typename Dev<D>::Compute(A(Dev<D>::load(xr[i])) - shift));
    } else {
      const A inv = A(1) / sum;
      for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
        yr[i] = Dev<D>::store(typename Dev<D>::Compute(
            mexp(A(Dev<D>::load(xr[i])) - mx) * inv));
    }
  }
}

/// Softmax over a strided axis: one thread per (outer, inner) line.
template <parc_rt_dtype_t D, bool Log>
__global__ void softmaxStridedKernel(const typename Dev<D>::Storage *x,
                                     typename Dev<D>::Storage *y, int64_t outer,
                                     int64_t n, int64_t inner) {
  using A = AccOf<D>;
  PARC_GRID_STRIDE(line, outer * inner) {
    const int64_t o = line / inner, j = line % inner;
    const auto *xl = x + o * n * inner + j;
    auto *yl = y + o * n * inner + j;
    A mx = lowestOf<A>();
    for (int64_t i = 0; i < n; ++i) {
      const A v = A(Dev<D>::load(xl[i * inner]));
      mx = (v > mx || v != v) ? v : mx;
    }
    A sum = 0;
    for (int64_t i = 0; i < n; ++i)
      sum += mexp(A(Dev<D>::load(xl[i * inner])) - mx);
    const A shift = mx + mlog(sum), inv = A(1) / sum;
    for (int64_t i = 0; i < n; ++i) {
      const A v = A(Dev<D>::load(xl[i * inner]));
      yl[i * inner] = Dev<D>::store(
          typename Dev<D>::Compute(Log ? v - shift : mexp(v - mx) * inv));
    }
  }
}

//===----------------------------------------------------------------------===//
// LayerNorm / RMSNorm
//===----------------------------------------------------------------------===//

template <parc_rt_dtype_t D, bool Rms>
__global__ void normKernel(const typename Dev<D>::Storage *x,
                           const typename Dev<D>::Storage *scale,
                           const typename Dev<D>::Storage *bias,
                           typename Dev<D>::Storage *y, int64_t rows,
                           int64_t n, float epsilon) {
  using A = AccOf<D>;
  using C = typename Dev<D>::Compute;
  __shared__ A shared[32];
  for (int64_t row = blockIdx.x; row < rows; row += gridDim.x) {
    const auto *xr = x + row * n;
    auto *yr = y + row * n;
    A mean = 0;
    if constexpr (!Rms) {
      A sum = 0;
      for (int64_t i = threadIdx.x; i < n; i += blockDim.x)
        sum += A(Dev<D>::load(xr[i]));
      mean = blockReduce<false>(sum, shared) / A(n);
    }
    A squares = 0;
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
      const A d = A(Dev<D>::load(xr[i])) - mean;
      squares += d * d;
    }
    const A meanSquare = blockReduce<false>(squares, shared) / A(n);
    const A inv = A(1) / msqrt(meanSquare + A(epsilon));
    for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
      A v = (A(Dev<D>::load(xr[i])) - mean) * inv * A(Dev<D>::load(scale[i]));
      if (bias)
        v += A(Dev<D>::load(bias[i]));
      yr[i] = Dev<D>::store(C(v));
    }
  }
}

} // namespace

parc_rt_status_t parc::rt::runSoftmax(const char *op, bool log,
                                      parc_rt_dtype_t dtype, const AxisView &v,
                                      const void *x, void *y) {
  const int64_t outer = v.outer, n = v.axis, inner = v.inner;
  return launchTyped<Kinds::Float>(op, dtype, [&](auto tag, State *s) {
    constexpr parc_rt_dtype_t D = decltype(tag)::value;
    using S = typename Dev<D>::Storage;
    const S *xs = static_cast<const S *>(x);
    S *ys = static_cast<S *>(y);
    // `log` picks an instantiation: the kernels do not test it.
    if (inner == 1) {
      auto *kernel =
          log ? &softmaxRowsKernel<D, true> : &softmaxRowsKernel<D, false>;
      kernel<<<rowBlocks(outer), rowThreads(n), 0, s->compute>>>(xs, ys, outer,
                                                                 n);
    } else {
      auto *kernel = log ? &softmaxStridedKernel<D, true>
                         : &softmaxStridedKernel<D, false>;
      kernel<<<gridFor(outer * inner, 128), 128, 0, s->compute>>>(xs, ys, outer,
                                                                  n, inner);
    }
  });
}

parc_rt_status_t parc::rt::runNorm(const char *op, bool rms,
                                   parc_rt_dtype_t dtype, const NormPlan &p,
                                   const void *x, const void *scale,
                                   const void *bias, void *y, float epsilon) {
  const int64_t rows = p.rows, n = p.n;
  return launchTyped<Kinds::Float>(op, dtype, [&](auto tag, State *s) {
    constexpr parc_rt_dtype_t D = decltype(tag)::value;
    using S = typename Dev<D>::Storage;
    auto *kernel = rms ? &normKernel<D, true> : &normKernel<D, false>;
    kernel<<<rowBlocks(rows), rowThreads(n), 0, s->compute>>>(
        static_cast<const S *>(x), static_cast<const S *>(scale),
        static_cast<const S *>(bias), static_cast<S *>(y), rows, n, epsilon);
  });
}

