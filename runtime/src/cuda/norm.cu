//===- norm.cu - softmax, layer/RMS norm, reductions, TopK, rotary --------===//
//
// Row kernels give a row to a block (softmax, norms, long reductions) and
// combine per-thread partials with warp shuffles; rows whose elements are
// strided (softmax over a non-last axis, short reductions) give a line to a
// thread, so neighbouring threads read neighbouring addresses. Row
// statistics accumulate in f32 (f64 for f64 data); reductions accumulate in
// f64 / i64 like the cpu backend.
//
//===----------------------------------------------------------------------===//

#include "../backend.h"
#include "kernels.cuh"

using namespace parc::rt;
using namespace parc::rt::cuda;

namespace {

constexpr unsigned kMaxRowBlocks = 1u << 20;

/// Threads for a block that walks a row of n elements.
int rowThreads(int64_t n) {
  int64_t t = (n + 31) / 32 * 32;
  return int(std::min<int64_t>(512, std::max<int64_t>(32, t)));
}

unsigned rowBlocks(int64_t rows) {
  return unsigned(std::min<int64_t>(rows, kMaxRowBlocks));
}

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

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

template <typename Acc> __device__ Acc reduceIdentity(int r) {
  switch (r) {
  case PARC_RT_REDUCTION_MAX:
    return lowestOf<Acc>();
  case PARC_RT_REDUCTION_MIN:
    return highestOf<Acc>();
  case PARC_RT_REDUCTION_PROD:
    return Acc(1);
  default:
    return Acc(0);
  }
}

/// `acc op= v`; max/min propagate NaN like numpy.
template <typename Acc> __device__ Acc reduceCombine(int r, Acc acc, Acc v) {
  switch (r) {
  case PARC_RT_REDUCTION_MAX:
    return (v > acc || v != v) ? v : acc;
  case PARC_RT_REDUCTION_MIN:
    return (v < acc || v != v) ? v : acc;
  case PARC_RT_REDUCTION_PROD:
    return acc * v;
  default:
    return acc + v;
  }
}

template <parc_rt_dtype_t D>
using ReduceAcc =
    std::conditional_t<Traits<D>::kind == Kind::Float, double, int64_t>;

template <parc_rt_dtype_t D>
__device__ void storeReduced(typename Dev<D>::Storage *y, int64_t o,
                             ReduceAcc<D> v, int r, int64_t reduced) {
  using Acc = ReduceAcc<D>;
  if (r == PARC_RT_REDUCTION_MEAN)
    v = reduced ? Acc(v / Acc(reduced)) : Acc(0);
  y[o] = Dev<D>::store(typename Dev<D>::Compute(v));
}

/// One thread per output: short reductions.
template <parc_rt_dtype_t D>
__global__ void reduceThreadKernel(int r, const typename Dev<D>::Storage *x,
                                   typename Dev<D>::Storage *y, Strided<1> kept,
                                   int64_t outCount, Strided<1> red,
                                   int64_t reduced) {
  using Acc = ReduceAcc<D>;
  PARC_GRID_STRIDE(o, outCount) {
    int64_t base[1], off[1];
    kept.offsets(o, base);
    Acc acc = reduceIdentity<Acc>(r);
    for (int64_t i = 0; i < reduced; ++i) {
      red.offsets(i, off);
      acc = reduceCombine(r, acc, Acc(Dev<D>::load(x[base[0] + off[0]])));
    }
    storeReduced<D>(y, o, acc, r, reduced);
  }
}

/// One block per output: long reductions.
template <parc_rt_dtype_t D>
__global__ void reduceBlockKernel(int r, const typename Dev<D>::Storage *x,
                                  typename Dev<D>::Storage *y, Strided<1> kept,
                                  int64_t outCount, Strided<1> red,
                                  int64_t reduced) {
  using Acc = ReduceAcc<D>;
  __shared__ Acc shared[32];
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int warps = blockDim.x >> 5;
  for (int64_t o = blockIdx.x; o < outCount; o += gridDim.x) {
    int64_t base[1], off[1];
    kept.offsets(o, base);
    Acc acc = reduceIdentity<Acc>(r);
    for (int64_t i = threadIdx.x; i < reduced; i += blockDim.x) {
      red.offsets(i, off);
      acc = reduceCombine(r, acc, Acc(Dev<D>::load(x[base[0] + off[0]])));
    }
    for (int d = 16; d > 0; d >>= 1)
      acc = reduceCombine(r, acc, __shfl_xor_sync(0xffffffffu, acc, d));
    __syncthreads();
    if (lane == 0)
      shared[warp] = acc;
    __syncthreads();
    if (warp == 0) {
      acc = lane < warps ? shared[lane] : reduceIdentity<Acc>(r);
      for (int d = 16; d > 0; d >>= 1)
        acc = reduceCombine(r, acc, __shfl_xor_sync(0xffffffffu, acc, d));
      if (lane == 0)
        storeReduced<D>(y, o, acc, r, reduced);
    }
  }
}

//===----------------------------------------------------------------------===//
// TopK
//===----------------------------------------------------------------------===//

/// Strict total order: NaN above every number, then ties by index.
template <typename C>
__device__ bool before(bool largest, C a, int64_t ai, C b, int64_t bi) {
  auto greater = [](C u, C v) {
    if (u != u)
      return v == v;
    return v == v && u > v;
  };
  const bool ab = largest ? greater(a, b) : greater(b, a);
  const bool ba = largest ? greater(b, a) : greater(a, b);
  return ab || (!ba && ai < bi);
}

/// One thread per line: the t-th output is the first element (in the
/// order above) after output t-1. O(n k) per line, fine for routers.
template <parc_rt_dtype_t D>
__global__ void topkKernel(const typename Dev<D>::Storage *x,
                           typename Dev<D>::Storage *values, int64_t *indices,
                           int64_t outer, int64_t n, int64_t inner, int64_t k,
                           bool largest) {
  using C = typename Dev<D>::Compute;
  PARC_GRID_STRIDE(line, outer * inner) {
    const int64_t o = line / inner, j = line % inner;
    const auto *xl = x + o * n * inner + j;
    auto *vl = values + o * k * inner + j;
    int64_t *il = indices + o * k * inner + j;
    C prev = C(0);
    int64_t prevIndex = -1;
    for (int64_t t = 0; t < k; ++t) {
      C best = C(0);
      int64_t bestIndex = -1;
      for (int64_t i = 0; i < n; ++i) {
        const C v = Dev<D>::load(xl[i * inner]);
        if (prevIndex >= 0 && !before(largest, prev, prevIndex, v, i))
          continue;
        if (bestIndex < 0 || before(largest, v, i, best, bestIndex)) {
          best = v;
          bestIndex = i;
        }
      }
      vl[t * inner] = xl[bestIndex * inner]; // bit-exact copy
      il[t * inner] = bestIndex;
      prev = best;
      prevIndex = bestIndex;
    }
  }
}

//===----------------------------------------------------------------------===//
// Rotary embeddings
//===----------------------------------------------------------------------===//

/// rows x (half + tail) threads: pair i < half is rotated, the tail copied.
template <parc_rt_dtype_t D>
__global__ void rotaryKernel(const typename Dev<D>::Storage *x,
                             const typename Dev<D>::Storage *cosTable,
                             const typename Dev<D>::Storage *sinTable,
                             typename Dev<D>::Storage *y, int64_t rows,
                             int64_t width, int64_t half, int64_t tail,
                             int64_t seqLen, int64_t seqStride) {
  using C = typename Dev<D>::Compute;
  const int64_t per = half + tail;
  PARC_GRID_STRIDE(e, rows * per) {
    const int64_t r = e / per, i = e % per;
    const auto *xr = x + r * width;
    auto *yr = y + r * width;
    if (i < half) {
      const int64_t pos = (r / seqStride) % seqLen;
      const C lo = Dev<D>::load(xr[i]), hi = Dev<D>::load(xr[i + half]);
      const C c = Dev<D>::load(cosTable[pos * half + i]);
      const C s = Dev<D>::load(sinTable[pos * half + i]);
      yr[i] = Dev<D>::store(lo * c - hi * s);
      yr[i + half] = Dev<D>::store(hi * c + lo * s);
    } else {
      const int64_t at = 2 * half + (i - half);
      yr[at] = xr[at];
    }
  }
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

parc_rt_status_t parc::rt::runReduce(parc_rt_reduction_t reduction,
                                     parc_rt_dtype_t dtype, const ReducePlan &p,
                                     const void *x, int64_t rank,
                                     const int64_t *dims, void *y) {
  const char *op = reductionName(reduction);
  const bool *reducedAxis = p.reduced;
  int64_t xStrides[PARC_RT_MAX_RANK];
  contiguousStrides(rank, dims, xStrides);
  // x's dims split into kept (output order) and reduced ones.
  int64_t keptDims[PARC_RT_MAX_RANK], keptStrides[PARC_RT_MAX_RANK],
      redDims[PARC_RT_MAX_RANK], redStrides[PARC_RT_MAX_RANK];
  int64_t keptRank = 0, redRank = 0, outCount = 1, reduced = 1;
  for (int64_t i = 0; i < rank; ++i) {
    if (reducedAxis[i]) {
      redDims[redRank] = dims[i];
      redStrides[redRank++] = xStrides[i];
      reduced *= dims[i];
    } else {
      keptDims[keptRank] = dims[i];
      keptStrides[keptRank++] = xStrides[i];
      outCount *= dims[i];
    }
  }
  const Strided<1> kept =
      stridedFrom(LoopNest<1>(keptRank, keptDims, {keptStrides}));
  const Strided<1> red =
      stridedFrom(LoopNest<1>(redRank, redDims, {redStrides}));
  return launchTyped<Kinds::NotBool>(op, dtype, [&](auto tag, State *s) {
    constexpr parc_rt_dtype_t D = decltype(tag)::value;
    using S = typename Dev<D>::Storage;
    const S *xs = static_cast<const S *>(x);
    S *ys = static_cast<S *>(y);
    if (reduced >= 256)
      reduceBlockKernel<D><<<rowBlocks(outCount), 256, 0, s->compute>>>(
          int(reduction), xs, ys, kept, outCount, red, reduced);
    else
      reduceThreadKernel<D><<<gridFor(outCount, 128), 128, 0, s->compute>>>(
          int(reduction), xs, ys, kept, outCount, red, reduced);
  });
}

parc_rt_status_t parc::rt::runTopk(parc_rt_dtype_t dtype, const TopkPlan &p,
                                   const void *x, bool largest, void *values,
                                   int64_t *indices) {
  const char *op = "topk";
  const int64_t outer = p.outer, n = p.n, inner = p.inner, k = p.k;
  return launchTyped<Kinds::NotBool>(op, dtype, [&](auto tag, State *s) {
    constexpr parc_rt_dtype_t D = decltype(tag)::value;
    using S = typename Dev<D>::Storage;
    topkKernel<D><<<gridFor(outer * inner, 128), 128, 0, s->compute>>>(
        static_cast<const S *>(x), static_cast<S *>(values), indices, outer, n,
        inner, k, largest);
  });
}

parc_rt_status_t parc::rt::runRotary(parc_rt_dtype_t dtype,
                                     const RotaryPlan &p, const void *x,
                                     const void *cos, const void *sin,
                                     void *y) {
  const char *op = "rotary";
  const int64_t rows = p.rows, width = p.width, half = p.half,
                seqStride = p.seqStride;
  const int64_t tail = x == y ? 0 : width - 2 * half;
  return launchTyped<Kinds::Float>(op, dtype, [&](auto tag, State *s) {
    constexpr parc_rt_dtype_t D = decltype(tag)::value;
    using S = typename Dev<D>::Storage;
    rotaryKernel<D><<<gridFor(rows * (half + tail)), 256, 0, s->compute>>>(
        static_cast<const S *>(x), static_cast<const S *>(cos),
        static_cast<const S *>(sin), static_cast<S *>(y), rows, width, half,
        tail, p.seqLen, seqStride);
  });
}

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
