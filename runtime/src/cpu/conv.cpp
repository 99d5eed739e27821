//===- conv.cpp - N-d convolution (im2col + GEMM) and max pooling ---------===//
//
// Convolution lowers each (image, group) to one GEMM: weights
// [C_out/g, C_in/g * prod(kernel)] times the im2col matrix
// [C_in/g * prod(kernel), prod(out spatial)]. 1x1 stride-1 unpadded
// convolutions skip im2col: the input already is that matrix.
//
//===----------------------------------------------------------------------===//

#include "../backend.h"
#include "../dtype_traits.h"
#include "blas.h"
#include "shape.h"

#include <vector>

using namespace parc::rt;

namespace {

/// Fills col [channels * prod(kernel), prod(out)] from x [channels, in...].
template <typename T>
void im2col(const Window &w, int64_t channels, const T *x, T *col) {
  const int64_t S = w.spatial;
  const int64_t inPlane = numElements(S, w.in);
  const int64_t kernelCount = numElements(S, w.kernel);
  const int64_t outCount = numElements(S, w.out);
  const int64_t outInner = w.out[S - 1], outRows = outCount / outInner;
  int64_t inStrides[PARC_RT_MAX_RANK];
  contiguousStrides(S, w.in, inStrides);
  int64_t k[PARC_RT_MAX_RANK], o[PARC_RT_MAX_RANK];
  for (int64_t c = 0; c < channels; ++c) {
    const T *plane = x + c * inPlane;
    for (int64_t kIndex = 0; kIndex < kernelCount; ++kIndex) {
      for (int64_t s = S - 1, rem = kIndex; s >= 0; --s) {
        k[s] = rem % w.kernel[s];
        rem /= w.kernel[s];
      }
      T *dst = col + (c * kernelCount + kIndex) * outCount;
      // Along the innermost spatial dim the valid outputs are one interval.
      const int64_t st = w.strides[S - 1], n = w.in[S - 1];
      const int64_t base = k[S - 1] * w.dilations[S - 1] - w.padsBegin[S - 1];
      const int64_t lo =
          std::clamp<int64_t>(base >= 0 ? 0 : ceilDiv(-base, st), 0, outInner);
      const int64_t hi =
          std::clamp<int64_t>(ceilDiv(n - base, st), lo, outInner);
      std::fill(o, o + S, int64_t(0));
      for (int64_t row = 0; row < outRows; ++row, dst += outInner) {
        int64_t offset = 0;
        bool inside = true;
        for (int64_t s = 0; s + 1 < S; ++s) {
          const int64_t i =
              o[s] * w.strides[s] + k[s] * w.dilations[s] - w.padsBegin[s];
          inside &= i >= 0 && i < w.in[s];
          offset += i * inStrides[s];
        }
        if (!inside) {
          std::fill(dst, dst + outInner, T(0));
        } else {
          const T *src = plane + offset + base;
          std::fill(dst, dst + lo, T(0));
          for (int64_t j = lo; j < hi; ++j)
            dst[j] = src[j * st];
          std::fill(dst + hi, dst + outInner, T(0));
        }
        for (int64_t s = S - 2; s >= 0; --s) {
          if (++o[s] < w.out[s])
            break;
          o[s] = 0;
        }
      }
    }
  }
}

template <typename T>
void convTyped(const Window &w, int64_t batch, int64_t cIn, int64_t cOut,
               int64_t group, const T *x, const T *weights, const T *bias,
               T *y) {
  const int64_t S = w.spatial;
  const int64_t cInG = cIn / group, cOutG = cOut / group;
  const int64_t inPlane = numElements(S, w.in);
  const int64_t outCount = numElements(S, w.out);
  const int64_t kDim = cInG * numElements(S, w.kernel);
  bool direct = true; // 1x1, stride 1, no padding: x is already im2col
  for (int64_t s = 0; s < S; ++s)
    direct &= w.kernel[s] == 1 && w.strides[s] == 1 && w.padsBegin[s] == 0 &&
              w.padsEnd[s] == 0;
  std::vector<T> col(direct ? 0 : size_t(kDim * outCount));
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t g = 0; g < group; ++g) {
      const T *xg = x + (n * cIn + g * cInG) * inPlane;
      T *yg = y + (n * cOut + g * cOutG) * outCount;
      const T *matrix = xg;
      if (!direct) {
        im2col(w, cInG, xg, col.data());
        matrix = col.data();
      }
      gemm(false, false, cOutG, outCount, kDim, 1.0, weights + g * cOutG * kDim,
           matrix, 0.0, yg);
      if (bias)
        for (int64_t c = 0; c < cOutG; ++c) {
          const T b = bias[g * cOutG + c];
          T *row = yg + c * outCount;
          for (int64_t i = 0; i < outCount; ++i)
            row[i] += b;
        }
    }
}

template <parc_rt_dtype_t D>
void maxPoolTyped(const Window &w, int64_t planes, const void *xv, void *yv) {
  using Tr = Traits<D>;
  using S = typename Tr::Storage;
  using C = typename Tr::Compute;
  const S *x = static_cast<const S *>(xv);
  S *y = static_cast<S *>(yv);
  const int64_t SD = w.spatial;
  const int64_t inPlane = numElements(SD, w.in),
                outPlane = numElements(SD, w.out),
                kernelCount = numElements(SD, w.kernel);
  int64_t inStrides[PARC_RT_MAX_RANK];
  contiguousStrides(SD, w.in, inStrides);
  const C lowest = std::numeric_limits<C>::has_infinity
                       ? -std::numeric_limits<C>::infinity()
                       : std::numeric_limits<C>::lowest();
  parallelRanges(planes, 1, [&](int64_t begin, int64_t end) {
    int64_t o[PARC_RT_MAX_RANK], k[PARC_RT_MAX_RANK];
    for (int64_t p = begin; p < end; ++p) {
      const S *plane = x + p * inPlane;
      S *out = y + p * outPlane;
      std::fill(o, o + SD, int64_t(0));
      for (int64_t i = 0; i < outPlane; ++i) {
        C best = lowest;
        std::fill(k, k + SD, int64_t(0));
        for (int64_t kk = 0; kk < kernelCount; ++kk) {
          int64_t offset = 0;
          bool inside = true;
          for (int64_t s = 0; s < SD; ++s) {
            const int64_t at =
                o[s] * w.strides[s] + k[s] * w.dilations[s] - w.padsBegin[s];
            inside &= at >= 0 && at < w.in[s];
            offset += at * inStrides[s];
          }
          if (inside) {
            const C v = Tr::load(plane[offset]);
            if (v > best || v != v)
              best = v;
          }
          for (int64_t s = SD - 1; s >= 0; --s) {
            if (++k[s] < w.kernel[s])
              break;
            k[s] = 0;
          }
        }
        out[i] = Tr::store(best);
        for (int64_t s = SD - 1; s >= 0; --s) {
          if (++o[s] < w.out[s])
            break;
          o[s] = 0;
        }
      }
    }
  });
}

/// Half types: widen inputs, convolve in f32, narrow y.
parc_rt_status_t convViaF32(parc_rt_dtype_t dtype, const Window &w,
                            int64_t batch, int64_t cIn, int64_t cOut,
                            int64_t group, const void *x, const void *weights,
                            const void *bias, void *y, int64_t xCount,
                            int64_t wCount, int64_t yCount) {
  const bool bf16 = dtype == PARC_RT_BF16;
  std::vector<float> fx(static_cast<size_t>(xCount)),
      fw(static_cast<size_t>(wCount)), fb(bias ? size_t(cOut) : 0),
      fy(static_cast<size_t>(yCount));
  halfToF32(bf16, static_cast<const uint16_t *>(x), fx.data(), xCount);
  halfToF32(bf16, static_cast<const uint16_t *>(weights), fw.data(), wCount);
  if (bias)
    halfToF32(bf16, static_cast<const uint16_t *>(bias), fb.data(), cOut);
  convTyped<float>(w, batch, cIn, cOut, group, fx.data(), fw.data(),
                   bias ? fb.data() : nullptr, fy.data());
  f32ToHalf(bf16, fy.data(), static_cast<uint16_t *>(y), yCount);
  return PARC_RT_OK;
}

} // namespace

parc_rt_status_t parc::rt::runConv(parc_rt_dtype_t dtype, const ConvPlan &p,
                                   const void *x, const void *w,
                                   const void *bias, int64_t group, void *y) {
  const Window &win = p.win;
  const int64_t batch = p.batch, cIn = p.cIn, cOut = p.cOut;
  const int64_t xCount = p.xCount, wCount = p.wCount, yCount = p.yCount;
  numThreads();
  switch (dtype) {
  case PARC_RT_F32:
    convTyped(win, batch, cIn, cOut, group, static_cast<const float *>(x),
              static_cast<const float *>(w), static_cast<const float *>(bias),
              static_cast<float *>(y));
    return PARC_RT_OK;
  case PARC_RT_F64:
    convTyped(win, batch, cIn, cOut, group, static_cast<const double *>(x),
              static_cast<const double *>(w), static_cast<const double *>(bias),
              static_cast<double *>(y));
    return PARC_RT_OK;
  case PARC_RT_F16:
  case PARC_RT_BF16:
    return convViaF32(dtype, win, batch, cIn, cOut, group, x, w, bias, y,
                      xCount, wCount, yCount);
  default:
    return unsupportedDtype("conv", dtype);
  }
}

parc_rt_status_t parc::rt::runMaxPool(parc_rt_dtype_t dtype, const PoolPlan &p,
                                      const void *x, void *y) {
  auto run = [&](auto tag) {
    constexpr parc_rt_dtype_t D = decltype(tag)::value;
    if constexpr (Traits<D>::kind == Kind::Bool) { // the plan rejected bool
      return PARC_RT_INTERNAL;
    } else {
      maxPoolTyped<D>(p.win, p.planes, x, y);
      return PARC_RT_OK;
    }
  };
  return visitDtype(dtype, run, [] { return PARC_RT_INTERNAL; });
}
