//===- conv.cu - N-d convolution and max pooling (cuda) -------------------===//
//
// Convolution is im2col + one GEMM per image, batched over groups (1x1
// stride-1 unpadded convolutions skip im2col: x already is that matrix);
// max pooling gives an output element to a thread.
//
//===----------------------------------------------------------------------===//

#include "../backend.h"
#include "gemm.cuh"

using namespace parc::rt;
using namespace parc::rt::cuda;

namespace {

/// y[i, c, :] += bias[c] over planes of `plane` elements.
template <parc_rt_dtype_t D>
__global__ void biasKernel(typename Dev<D>::Storage *y,
                           const typename Dev<D>::Storage *bias,
                           int64_t channels, int64_t plane, int64_t n) {
  using C = typename Dev<D>::Compute;
  PARC_GRID_STRIDE(i, n) {
    const int64_t c = (i / plane) % channels;
    y[i] = Dev<D>::store(C(Dev<D>::load(y[i]) + Dev<D>::load(bias[c])));
  }
}

/// A window's geometry in kernel arguments.
struct DevWindow {
  int spatial;
  int64_t in[PARC_RT_MAX_RANK], kernel[PARC_RT_MAX_RANK], out[PARC_RT_MAX_RANK];
  int64_t strides[PARC_RT_MAX_RANK], pads[PARC_RT_MAX_RANK],
      dilations[PARC_RT_MAX_RANK];
  int64_t inPlane, kernelCount, outCount;
};

DevWindow devWindow(const Window &w) {
  DevWindow d;
  d.spatial = int(w.spatial);
  for (int64_t s = 0; s < w.spatial; ++s) {
    d.in[s] = w.in[s];
    d.kernel[s] = w.kernel[s];
    d.out[s] = w.out[s];
    d.strides[s] = w.strides[s];
    d.pads[s] = w.padsBegin[s];
    d.dilations[s] = w.dilations[s];
  }
  d.inPlane = numElements(w.spatial, w.in);
  d.kernelCount = numElements(w.spatial, w.kernel);
  d.outCount = numElements(w.spatial, w.out);
  return d;
}

/// col[(c, kernel offset), out position] = x[c, window position] or 0.
template <typename W>
__global__ void im2colKernel(DevWindow w, int64_t channels, const W *x,
                             W *col) {
  const int64_t total = channels * w.kernelCount * w.outCount;
  PARC_GRID_STRIDE(e, total) {
    const int64_t o = e % w.outCount, row = e / w.outCount;
    int64_t kIndex = row % w.kernelCount;
    const int64_t c = row / w.kernelCount;
    int64_t oRest = o, offset = 0, stride = 1;
    bool inside = true;
    for (int s = w.spatial - 1; s >= 0; --s) {
      const int64_t os = oRest % w.out[s], ks = kIndex % w.kernel[s];
      oRest /= w.out[s];
      kIndex /= w.kernel[s];
      const int64_t at = os * w.strides[s] + ks * w.dilations[s] - w.pads[s];
      inside &= at >= 0 && at < w.in[s];
      offset += at * stride;
      stride *= w.in[s];
    }
    col[e] = inside ? x[c * w.inPlane + offset] : W{};
  }
}

/// Max over each window; padding never wins.
template <parc_rt_dtype_t D>
__global__ void maxPoolKernel(DevWindow w, int64_t planes,
                              const typename Dev<D>::Storage *x,
                              typename Dev<D>::Storage *y) {
  using C = typename Dev<D>::Compute;
  const int64_t total = planes * w.outCount;
  PARC_GRID_STRIDE(e, total) {
    const int64_t p = e / w.outCount, o = e % w.outCount;
    int64_t pos[PARC_RT_MAX_RANK]; // window origin, padding included
    int64_t oRest = o;
    for (int s = w.spatial - 1; s >= 0; --s) {
      pos[s] = (oRest % w.out[s]) * w.strides[s] - w.pads[s];
      oRest /= w.out[s];
    }
    const auto *plane = x + p * w.inPlane;
    C best = lowestOf<C>();
    for (int64_t kk = 0; kk < w.kernelCount; ++kk) {
      int64_t kRest = kk, offset = 0, stride = 1;
      bool inside = true;
      for (int s = w.spatial - 1; s >= 0; --s) {
        const int64_t at = pos[s] + (kRest % w.kernel[s]) * w.dilations[s];
        kRest /= w.kernel[s];
        inside &= at >= 0 && at < w.in[s];
        offset += at * stride;
        stride *= w.in[s];
      }
      if (inside) {
        const C v = Dev<D>::load(plane[offset]);
        if (v > best || v != v)
          best = v;
      }
    }
    y[e] = Dev<D>::store(best);
  }
}

} // namespace

parc_rt_status_t parc::rt::runConv(parc_rt_dtype_t dtype, const ConvPlan &p,
                                   const void *x, const void *w,
                                   const void *bias, int64_t group, void *y) {
  const char *op = "conv";
  const Window &win = p.win;
  const int64_t batch = p.batch, cIn = p.cIn, cOut = p.cOut, yCount = p.yCount;
  State *s = nullptr;
  PARC_RT_RETURN_IF_ERROR(getState(op, &s));
  const int64_t S = win.spatial;
  const int64_t cInG = cIn / group, cOutG = cOut / group;
  const DevWindow dw = devWindow(win);
  const int64_t kDim = cInG * dw.kernelCount;
  const size_t elem = parc_rt_dtype_size(dtype);
  bool direct = true; // 1x1, stride 1, no padding: x already is im2col
  for (int64_t i = 0; i < S; ++i)
    direct &= win.kernel[i] == 1 && win.strides[i] == 1 &&
              win.padsBegin[i] == 0 && win.padsEnd[i] == 0;
  void *col = nullptr;
  if (!direct)
    PARC_RT_RETURN_IF_ERROR(
        scratchAlloc(s, size_t(cIn * dw.kernelCount * dw.outCount) * elem, op,
                     &col));
  parc_rt_status_t status = PARC_RT_OK;
  for (int64_t img = 0; img < batch && status == PARC_RT_OK; ++img) {
    const char *xi = static_cast<const char *>(x) + img * cIn * dw.inPlane * int64_t(elem);
    const void *matrix = xi;
    if (!direct) {
      visitWord(elem, [&](auto word) {
        using W = decltype(word);
        im2colKernel<W>
            <<<gridFor(cIn * dw.kernelCount * dw.outCount), 256, 0,
               s->compute>>>(dw, cIn, reinterpret_cast<const W *>(xi),
                             static_cast<W *>(col));
      });
      status = launched(s, op);
      if (status != PARC_RT_OK)
        break;
      matrix = col;
    }
    // y[img, g] (cOutG x out) = w[g] (cOutG x kDim) . col[g] (kDim x out).
    Gemm g = contiguous(false, false, cOutG, dw.outCount, kDim);
    g.a = w;
    g.strideA = cOutG * kDim;
    g.b = matrix;
    g.strideB = kDim * dw.outCount;
    g.c = static_cast<char *>(y) + img * cOut * dw.outCount * int64_t(elem);
    g.strideC = cOutG * dw.outCount;
    g.batch = group;
    if (kDim == 0) {
      status = cudaMemsetAsync(g.c, 0, size_t(cOut * dw.outCount) * elem,
                               s->compute) == cudaSuccess
                   ? PARC_RT_OK
                   : fail(PARC_RT_INTERNAL, "conv: cudaMemsetAsync failed");
    } else {
      status = cublasGemm(s, op, dtype, g);
    }
  }
  scratchFree(s, col);
  PARC_RT_RETURN_IF_ERROR(status);
  if (!bias)
    return PARC_RT_OK;
  visitDtype(
      dtype,
      [&](auto tag) {
        constexpr parc_rt_dtype_t D = decltype(tag)::value;
        if constexpr (Traits<D>::kind == Kind::Float) {
          using St = typename Dev<D>::Storage;
          biasKernel<D><<<gridFor(yCount), 256, 0, s->compute>>>(
              static_cast<St *>(y), static_cast<const St *>(bias), cOut,
              dw.outCount, yCount);
        }
      },
      [] {});
  return launched(s, op);
}

parc_rt_status_t parc::rt::runMaxPool(parc_rt_dtype_t dtype, const PoolPlan &p,
                                      const void *x, void *y) {
  const char *op = "max_pool";
  const DevWindow dw = devWindow(p.win);
  const int64_t planes = p.planes;
  return launchTyped<Kinds::NotBool>(op, dtype, [&](auto tag, State *s) {
    constexpr parc_rt_dtype_t D = decltype(tag)::value;
    using St = typename Dev<D>::Storage;
    maxPoolKernel<D><<<gridFor(planes * dw.outCount), 256, 0, s->compute>>>(
        dw, planes, static_cast<const St *>(x), static_cast<St *>(y));
  });
}
