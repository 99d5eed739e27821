//===- reduce.cu - reductions and TopK (cuda) -----------------------------===//
//
// Long reductions give an output to a block (warp shuffles combine the
// threads' partials); short ones give an output to a thread. Reductions
// accumulate in f64 / i64 like the cpu backend.
//
//===----------------------------------------------------------------------===//

#include "../backend.h"
#include "kernels.cuh"

using namespace parc::rt;
using namespace parc::rt::cuda;

namespace {

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

} // namespace

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
