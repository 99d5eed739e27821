//===- rotary.cpp - Rotary position embedding (rotate-half form) ----------===//
//
// One kernel for both layouts exporters produce ([B, H, S, D] and
// [B, S, H, D]): the position of a row is its index along seq_axis, so the
// caller never transposes to match a fixed layout.
//
//===----------------------------------------------------------------------===//

#include "dtype_traits.h"
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

extern "C" {

parc_rt_status_t parc_rt_rotary(parc_rt_dtype_t dtype, const void *x,
                                int64_t rank, const int64_t *dims,
                                int64_t seq_axis, int64_t rotary_dim,
                                const void *cos, const void *sin, void *y) {
  const char *op = "rotary";
  PARC_RT_RETURN_IF_ERROR(checkDtype(op, dtype));
  PARC_RT_RETURN_IF_ERROR(checkShape(op, "x", rank, dims));
  if (rank < 2)
    return fail(PARC_RT_INVALID_ARGUMENT,
                "rotary: x must have rank >= 2, got %s",
                shapeString(rank, dims).c_str());
  int64_t seq = 0;
  PARC_RT_RETURN_IF_ERROR(normalizeAxis(op, seq_axis, rank, seq));
  if (seq == rank - 1)
    return fail(PARC_RT_INVALID_ARGUMENT,
                "rotary: seq_axis %lld is the feature axis of x %s",
                (long long)seq_axis, shapeString(rank, dims).c_str());
  const int64_t width = dims[rank - 1];
  if (rotary_dim <= 0 || rotary_dim % 2 || rotary_dim > width)
    return fail(PARC_RT_INVALID_ARGUMENT,
                "rotary: rotary_dim %lld must be even and in (0, %lld]",
                (long long)rotary_dim, (long long)width);
  const int64_t rows = numElements(rank - 1, dims);
  if (rows * width == 0)
    return PARC_RT_OK;
  const int64_t half = rotary_dim / 2;
  PARC_RT_RETURN_IF_ERROR(checkData(op, "x", x, rows * width));
  PARC_RT_RETURN_IF_ERROR(checkData(op, "y", y, rows * width));
  PARC_RT_RETURN_IF_ERROR(checkData(op, "cos", cos, dims[seq] * half));
  PARC_RT_RETURN_IF_ERROR(checkData(op, "sin", sin, dims[seq] * half));
  // Rows between consecutive positions: product of dims after seq, minus D.
  const int64_t seqStride = numElements(rank - 2 - seq, dims + seq + 1);
  auto run = [&](auto tag) {
    constexpr parc_rt_dtype_t D = decltype(tag)::value;
    if constexpr (Traits<D>::kind != Kind::Float) {
      return unsupportedDtype(op, D);
    } else {
      rotaryTyped<D>(rows, width, dims[seq], seqStride, half, x, cos, sin, y);
      return PARC_RT_OK;
    }
  };
  return visitDtype(dtype, run, [] { return PARC_RT_INTERNAL; });
}

} // extern "C"
