//===- norm.cpp - softmax, log_softmax, layer_norm, rms_norm --------------===//
//
// Row statistics accumulate in double: rows of 4k-16k elements are common
// and the kernels are memory-bound, so the wider sum costs nothing visible
// and keeps f32 results within an ulp or two of a double reference.
//
//===----------------------------------------------------------------------===//

#include "../dtype_traits.h"
#include "../backend.h"
#include "fastmath.h"
#include "shape.h"
#include "simd.h"

#include <vector>

using namespace parc::rt;

namespace {

/// Softmax along a contiguous row (inner == 1), the attention hot path.
template <parc_rt_dtype_t D, bool Log>
void softmaxRows(const AxisView &v, const void *xv, void *yv) {
  using Tr = Traits<D>;
  using S = typename Tr::Storage;
  using C = typename Tr::Compute;
  const S *x = static_cast<const S *>(xv);
  S *y = static_cast<S *>(yv);
  const int64_t n = v.axis;
  parallelRanges(v.outer,
                 std::max<int64_t>(1, (1 << 14) / std::max<int64_t>(n, 1)),
                 [&](int64_t begin, int64_t end) {
                   std::vector<C> e(static_cast<size_t>(n));
                   for (int64_t r = begin; r < end; ++r) {
                     const S *xr = x + r * n;
                     S *yr = y + r * n;
                     C mx = -std::numeric_limits<C>::infinity();
                     for (int64_t i = 0; i < n; ++i)
                       mx = std::max(mx, Tr::load(xr[i]));
                     mapLoop(xr, e.data(), n, [mx](S v) {
                       return vexp(Tr::load(v) - mx);
                     });
                     double sum = 0;
                     for (int64_t i = 0; i < n; ++i)
                       sum += e[i];
                     if constexpr (Log) {
                       const C shift = mx + C(std::log(sum));
                       for (int64_t i = 0; i < n; ++i)
                         yr[i] = Tr::store(Tr::load(xr[i]) - shift);
                     } else {
                       const C inv = C(1.0 / sum);
                       for (int64_t i = 0; i < n; ++i)
                         yr[i] = Tr::store(e[i] * inv);
                     }
                   }
                 });
}

/// Softmax over a strided axis: the inner dim is the vector lane.
template <parc_rt_dtype_t D, bool Log>
void softmaxStrided(const AxisView &v, const void *xv, void *yv) {
  using Tr = Traits<D>;
  using S = typename Tr::Storage;
  using C = typename Tr::Compute;
  const S *x = static_cast<const S *>(xv);
  S *y = static_cast<S *>(yv);
  const int64_t n = v.axis, in = v.inner;
  parallelRanges(v.outer, 1, [&](int64_t begin, int64_t end) {
    std::vector<C> mx(static_cast<size_t>(in)), e(size_t(n * in));
    std::vector<double> sum(static_cast<size_t>(in));
    for (int64_t o = begin; o < end; ++o) {
      const S *xo = x + o * n * in;
      S *yo = y + o * n * in;
      std::fill(mx.begin(), mx.end(), -std::numeric_limits<C>::infinity());
      std::fill(sum.begin(), sum.end(), 0.0);
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < in; ++j)
          mx[j] = std::max(mx[j], Tr::load(xo[i * in + j]));
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < in; ++j) {
          e[i * in + j] = vexp(Tr::load(xo[i * in + j]) - mx[j]);
          sum[j] += e[i * in + j];
        }
      for (int64_t i = 0; i < n; ++i)
        for (int64_t j = 0; j < in; ++j) {
          if constexpr (Log)
            yo[i * in + j] = Tr::store(Tr::load(xo[i * in + j]) - mx[j] -
                                       C(std::log(sum[j])));
          else
            yo[i * in + j] = Tr::store(C(e[i * in + j] / sum[j]));
        }
    }
  });
}

/// Sum of f(x[i]) with four partial sums to break the add latency chain
/// (cloned too: normRow's clones call it, not inline it).
template <typename F> PARC_RT_SIMD_CLONES double sumOf(int64_t n, F f) {
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    s0 += f(i);
    s1 += f(i + 1);
    s2 += f(i + 2);
    s3 += f(i + 3);
  }
  for (; i < n; ++i)
    s0 += f(i);
  return (s0 + s1) + (s2 + s3);
}

/// One row of layer_norm (Rms: rms_norm), compiled per ISA: the statistics
/// in double, then (x - mean) / sqrt(var + epsilon) · scale (+ bias).
template <parc_rt_dtype_t D, bool Rms, typename S = typename Traits<D>::Storage>
PARC_RT_SIMD_CLONES void normRow(const S *xr, const S *scale, const S *bias,
                                 S *yr, int64_t n, float epsilon) {
  using Tr = Traits<D>;
  using C = typename Tr::Compute;
  C mean = 0;
  double meanSquare;
  if constexpr (Rms) {
    meanSquare = sumOf(n,
                       [&](int64_t i) {
                         double v = Tr::load(xr[i]);
                         return v * v;
                       }) /
                 double(n);
  } else {
    const double m =
        sumOf(n, [&](int64_t i) { return double(Tr::load(xr[i])); }) /
        double(n);
    meanSquare = sumOf(n,
                       [&](int64_t i) {
                         double d = double(Tr::load(xr[i])) - m;
                         return d * d;
                       }) /
                 double(n);
    mean = C(m);
  }
  const C inv = C(1.0 / std::sqrt(meanSquare + double(epsilon)));
  if (bias)
    for (int64_t i = 0; i < n; ++i)
      yr[i] = Tr::store((Tr::load(xr[i]) - mean) * inv * Tr::load(scale[i]) +
                        Tr::load(bias[i]));
  else
    for (int64_t i = 0; i < n; ++i)
      yr[i] = Tr::store((Tr::load(xr[i]) - mean) * inv * Tr::load(scale[i]));
}

template <parc_rt_dtype_t D, bool Rms>
void normRows(int64_t rows, int64_t n, const void *xv, const void *scalev,
              const void *biasv, void *yv, float epsilon) {
  using S = typename Traits<D>::Storage;
  const S *x = static_cast<const S *>(xv);
  const S *scale = static_cast<const S *>(scalev);
  const S *bias = static_cast<const S *>(biasv);
  S *y = static_cast<S *>(yv);
  parallelRanges(rows,
                 std::max<int64_t>(1, (1 << 14) / std::max<int64_t>(n, 1)),
                 [&](int64_t begin, int64_t end) {
                   for (int64_t r = begin; r < end; ++r)
                     normRow<D, Rms>(x + r * n, scale, bias, y + r * n, n,
                                     epsilon);
                 });
}

} // namespace

parc_rt_status_t parc::rt::runSoftmax(const char *op, bool log,
                                      parc_rt_dtype_t dtype, const AxisView &v,
                                      const void *x, void *y) {
  auto run = [&](auto tag) {
    constexpr parc_rt_dtype_t D = decltype(tag)::value;
    if constexpr (Traits<D>::kind != Kind::Float) {
      return unsupportedDtype(op, D);
    } else {
      // `log` picks an instantiation: the row loops do not test it.
      auto *rows =
          v.inner == 1
              ? (log ? &softmaxRows<D, true> : &softmaxRows<D, false>)
              : (log ? &softmaxStrided<D, true> : &softmaxStrided<D, false>);
      rows(v, x, y);
      return PARC_RT_OK;
    }
  };
  return visitDtype(dtype, run, [] { return PARC_RT_INTERNAL; });
}

parc_rt_status_t parc::rt::runNorm(const char *op, bool rms,
                                   parc_rt_dtype_t dtype, const NormPlan &p,
                                   const void *x, const void *scale,
                                   const void *bias, void *y, float epsilon) {
  auto run = [&](auto tag) {
    constexpr parc_rt_dtype_t D = decltype(tag)::value;
    if constexpr (Traits<D>::kind != Kind::Float) {
      return unsupportedDtype(op, D);
    } else {
      auto *rows = rms ? &normRows<D, true> : &normRows<D, false>;
      rows(p.rows, p.n, x, scale, bias, y, epsilon);
      return PARC_RT_OK;
    }
  };
  return visitDtype(dtype, run, [] { return PARC_RT_INTERNAL; });
}
