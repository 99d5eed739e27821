//===- rotary.cpp - Rotary position embedding (rotate-half form) ----------===//
//
// One kernel for both layouts exporters produce ([B, H, S, D] and
// [B, S, H, D]): the position of a row is its index along seq_axis, so the
// caller never transposes to match a fixed layout.
//
//===----------------------------------------------------------------------===//

#include "../dtype_traits.h"
#include "../backend.h"
#include "shape.h"

using namespace parc::rt;

namespace {

template <parc_rt_dtype_t D>
void rotaryTyped(int64_t rows, int64_t width, int64_t seqLen, int64_t seqStride,
                 int64_t half, const void *xv, const void *cosv,
                 const void *sinv, void *yv) {
  using Tr = Traits<D>;
  using S = typename Tr::Storage;
  using C = typename Tr::Compute;
  const S *x = static_cast<const S *>(xv);
  const S *cosTable = static_cast<const S *>(cosv);
  const S *sinTable = static_cast<const S *>(sinv);
  S *y = static_cast<S *>(yv);
  parallelRanges(rows, std::max<int64_t>(1, (1 << 14) / width),
                 [&](int64_t begin, int64_t end) {
                   for (int64_t r = begin; r < end; ++r) {
                     const int64_t pos = (r / seqStride) % seqLen;
                     const S *xr = x + r * width;
                     S *yr = y + r * width;
                     const S *c = cosTable + pos * half,
                             *s = sinTable + pos * half;
                     for (int64_t i = 0; i < half; ++i) {
                       // Read both halves before writing: y may alias x.
                       const C lo = Tr::load(xr[i]),
                               hi = Tr::load(xr[i + half]);
                       const C ci = Tr::load(c[i]), si = Tr::load(s[i]);
                       yr[i] = Tr::store(lo * ci - hi * si);
                       yr[i + half] = Tr::store(hi * ci + lo * si);
                     }
                     if (yr != xr)
                       for (int64_t i = 2 * half; i < width; ++i)
                         yr[i] = xr[i];
                   }
                 });
}

} // namespace

parc_rt_status_t parc::rt::runRotary(parc_rt_dtype_t dtype,
                                     const RotaryPlan &p, const void *x,
                                     const void *cos, const void *sin,
                                     void *y) {
  auto run = [&](auto tag) {
    constexpr parc_rt_dtype_t D = decltype(tag)::value;
    if constexpr (Traits<D>::kind != Kind::Float) {
      return unsupportedDtype("rotary", D);
    } else {
      rotaryTyped<D>(p.rows, p.width, p.seqLen, p.seqStride, p.half, x, cos,
                     sin, y);
      return PARC_RT_OK;
    }
  };
  return visitDtype(dtype, run, [] { return PARC_RT_INTERNAL; });
}
