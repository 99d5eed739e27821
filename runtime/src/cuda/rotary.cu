//===- rotary.cu - rotary embeddings, rotate-half form (cuda) -------------===//
//
// One thread per rotated pair (and per copied tail element when x and y
// differ); the tables' row is the row's position along the sequence axis.
//
//===----------------------------------------------------------------------===//

#include "../backend.h"
#include "kernels.cuh"

using namespace parc::rt;
using namespace parc::rt::cuda;

namespace {

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

} // namespace

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
