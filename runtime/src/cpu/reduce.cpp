//===- reduce.cpp - Reductions over axes, and TopK ------------------------===//
//
// Reductions walk x once in memory order; the output view has stride 0 on
// reduced axes, so the same LoopNest that drives broadcasting drives them.
// Accumulators are double (floats) or int64 (integers) in a scratch buffer,
// narrowed once at the end.
//
//===----------------------------------------------------------------------===//

#include "../dtype_traits.h"
#include "../backend.h"
#include "shape.h"

#include <algorithm>
#include <limits>
#include <vector>

using namespace parc::rt;

namespace {

template <typename Acc> Acc identity(parc_rt_reduction_t r) {
  switch (r) {
  case PARC_RT_REDUCTION_MAX:
    return std::numeric_limits<Acc>::has_infinity
               ? -std::numeric_limits<Acc>::infinity()
               : std::numeric_limits<Acc>::lowest();
  case PARC_RT_REDUCTION_MIN:
    return std::numeric_limits<Acc>::has_infinity
               ? std::numeric_limits<Acc>::infinity()
               : std::numeric_limits<Acc>::max();
  case PARC_RT_REDUCTION_PROD:
    return Acc(1);
  default:
    return Acc(0);
  }
}

/// `acc op= v`; max/min propagate NaN like numpy.
template <parc_rt_reduction_t R, typename Acc> Acc combine(Acc acc, Acc v) {
  if constexpr (R == PARC_RT_REDUCTION_MAX)
    return (v > acc || v != v) ? v : acc;
  else if constexpr (R == PARC_RT_REDUCTION_MIN)
    return (v < acc || v != v) ? v : acc;
  else if constexpr (R == PARC_RT_REDUCTION_PROD)
    return acc * v;
  else
    return acc + v;
}

template <parc_rt_dtype_t D, parc_rt_reduction_t R, typename Acc>
void accumulate(const LoopNest<2> &loop, const void *xv, Acc *acc) {
  using Tr = Traits<D>;
  using S = typename Tr::Storage;
  const S *x = static_cast<const S *>(xv);
  const int64_t so = loop.innerStride(0);
  // Serial: different runs may hit the same output element.
  loop.run(
      [&](const std::array<int64_t, 2> &off, int64_t n) {
        const S *xr = x + off[1];
        Acc *a = acc + off[0];
        if (so == 0) { // reducing along the run
          Acc r = *a;
          for (int64_t i = 0; i < n; ++i)
            r = combine<R>(r, Acc(Tr::load(xr[i])));
          *a = r;
        } else { // the run is a row of outputs
          for (int64_t i = 0; i < n; ++i)
            a[i] = combine<R>(a[i], Acc(Tr::load(xr[i])));
        }
      },
      std::numeric_limits<int64_t>::max());
}

template <parc_rt_dtype_t D>
parc_rt_status_t reduceTyped(parc_rt_reduction_t r, const LoopNest<2> &loop,
                             const void *x, int64_t outCount, int64_t reduced,
                             void *y) {
  using Tr = Traits<D>;
  using Acc = std::conditional_t<Tr::kind == Kind::Float, double, int64_t>;
  std::vector<Acc> acc(static_cast<size_t>(outCount), identity<Acc>(r));
  switch (r) {
  case PARC_RT_REDUCTION_SUM:
  case PARC_RT_REDUCTION_MEAN:
    accumulate<D, PARC_RT_REDUCTION_SUM>(loop, x, acc.data());
    break;
  case PARC_RT_REDUCTION_MAX:
    accumulate<D, PARC_RT_REDUCTION_MAX>(loop, x, acc.data());
    break;
  case PARC_RT_REDUCTION_MIN:
    accumulate<D, PARC_RT_REDUCTION_MIN>(loop, x, acc.data());
    break;
  case PARC_RT_REDUCTION_PROD:
    accumulate<D, PARC_RT_REDUCTION_PROD>(loop, x, acc.data());
    break;
  }
  auto *out = static_cast<typename Tr::Storage *>(y);
  const bool mean = r == PARC_RT_REDUCTION_MEAN;
  for (int64_t i = 0; i < outCount; ++i) {
    Acc v = acc[i];
    if (mean)
      v = reduced ? Acc(v / Acc(reduced)) : Acc(0);
    out[i] = Tr::store(typename Tr::Compute(v));
  }
  return PARC_RT_OK;
}

/// Strict total order for TopK: NaN above every number, ties by index.
template <typename C> bool greater(C a, C b) {
  if (a != a)
    return b == b;
  return b == b && a > b;
}

template <parc_rt_dtype_t D>
void topkTyped(int64_t outer, int64_t n, int64_t inner, int64_t k, bool largest,
               const void *xv, void *valuesv, int64_t *indices) {
  using Tr = Traits<D>;
  using S = typename Tr::Storage;
  using C = typename Tr::Compute;
  const S *x = static_cast<const S *>(xv);
  S *values = static_cast<S *>(valuesv);
  struct Entry {
    C value;
    int64_t index;
  };
  auto before = [largest](const Entry &a, const Entry &b) {
    const bool ab =
        largest ? greater(a.value, b.value) : greater(b.value, a.value);
    const bool ba =
        largest ? greater(b.value, a.value) : greater(a.value, b.value);
    return ab || (!ba && a.index < b.index);
  };
  parallelRanges(
      outer * inner, std::max<int64_t>(1, 4096 / std::max<int64_t>(n, 1)),
      [&](int64_t begin, int64_t end) {
        std::vector<Entry> row(static_cast<size_t>(n));
        for (int64_t line = begin; line < end; ++line) {
          const int64_t o = line / inner, j = line % inner;
          const S *xr = x + o * n * inner + j;
          for (int64_t i = 0; i < n; ++i)
            row[i] = {Tr::load(xr[i * inner]), i};
          std::partial_sort(row.begin(), row.begin() + k, row.end(), before);
          S *vr = values + o * k * inner + j;
          int64_t *ir = indices + o * k * inner + j;
          for (int64_t i = 0; i < k; ++i) {
            vr[i * inner] = xr[row[i].index * inner]; // bit-exact copy
            ir[i * inner] = row[i].index;
          }
        }
      });
}

} // namespace

parc_rt_status_t parc::rt::runReduce(parc_rt_reduction_t reduction,
                                     parc_rt_dtype_t dtype, const ReducePlan &p,
                                     const void *x, int64_t rank,
                                     const int64_t *dims, void *y) {
  // y viewed over x's dims: stride 0 along the reduced ones.
  int64_t outDims[PARC_RT_MAX_RANK], outStrides[PARC_RT_MAX_RANK],
      xStrides[PARC_RT_MAX_RANK];
  for (int64_t i = 0; i < rank; ++i)
    outDims[i] = p.reduced[i] ? 1 : dims[i];
  contiguousStrides(rank, outDims, outStrides);
  for (int64_t i = 0; i < rank; ++i)
    if (p.reduced[i])
      outStrides[i] = 0;
  contiguousStrides(rank, dims, xStrides);
  LoopNest<2> loop(rank, dims, {outStrides, xStrides});
  auto run = [&](auto tag) {
    constexpr parc_rt_dtype_t D = decltype(tag)::value;
    if constexpr (Traits<D>::kind == Kind::Bool) // the plan rejected bool
      return PARC_RT_INTERNAL;
    else
      return reduceTyped<D>(reduction, loop, x, p.outCount, p.reducedCount, y);
  };
  return visitDtype(dtype, run, [] { return PARC_RT_INTERNAL; });
}

parc_rt_status_t parc::rt::runTopk(parc_rt_dtype_t dtype, const TopkPlan &p,
                                   const void *x, bool largest, void *values,
                                   int64_t *indices) {
  const int64_t k = p.k;
  auto run = [&](auto tag) {
    constexpr parc_rt_dtype_t D = decltype(tag)::value;
    if constexpr (Traits<D>::kind == Kind::Bool) { // the plan rejected bool
      return PARC_RT_INTERNAL;
    } else {
      topkTyped<D>(p.outer, p.n, p.inner, k, largest, x, values, indices);
      return PARC_RT_OK;
    }
  };
  return visitDtype(dtype, run, [] { return PARC_RT_INTERNAL; });
}
