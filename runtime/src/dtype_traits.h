//===- dtype_traits.h - Compile-time view of parc_rt_dtype_t ----*- C++ -*-===//
//
// visitDtype turns a runtime dtype into a Tag<D> so kernels are written once
// as templates; Traits<D> gives the storage type and how values widen to
// the type kernels compute in (f32 for the half types).
//
//===----------------------------------------------------------------------===//
#ifndef PARC_RUNTIME_DTYPE_TRAITS_H
#define PARC_RUNTIME_DTYPE_TRAITS_H

#include "half.h"
#include "parc/runtime.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

namespace parc::rt {

enum class Kind { Float, Int, Bool };

template <parc_rt_dtype_t D> struct Traits;

#define PARC_RT_PLAIN_TRAITS(D, S, K)                                          \
  template <> struct Traits<D> {                                               \
    using Storage = S;                                                         \
    using Compute = S;                                                         \
    static constexpr Kind kind = K;                                            \
    static constexpr bool isHalf = false;                                      \
    static Compute load(Storage v) { return v; }                               \
    static Storage store(Compute v) { return v; }                              \
  };
PARC_RT_PLAIN_TRAITS(PARC_RT_F32, float, Kind::Float)
PARC_RT_PLAIN_TRAITS(PARC_RT_F64, double, Kind::Float)
PARC_RT_PLAIN_TRAITS(PARC_RT_I64, int64_t, Kind::Int)
PARC_RT_PLAIN_TRAITS(PARC_RT_I32, int32_t, Kind::Int)
PARC_RT_PLAIN_TRAITS(PARC_RT_I8, int8_t, Kind::Int)
PARC_RT_PLAIN_TRAITS(PARC_RT_U8, uint8_t, Kind::Int)
PARC_RT_PLAIN_TRAITS(PARC_RT_BOOL, uint8_t, Kind::Bool)
#undef PARC_RT_PLAIN_TRAITS

template <> struct Traits<PARC_RT_F16> {
  using Storage = uint16_t;
  using Compute = float;
  static constexpr Kind kind = Kind::Float;
  static constexpr bool isHalf = true;
  static float load(uint16_t v) { return f16ToF32(v); }
  static uint16_t store(float v) { return f32ToF16(v); }
};
template <> struct Traits<PARC_RT_BF16> {
  using Storage = uint16_t;
  using Compute = float;
  static constexpr Kind kind = Kind::Float;
  static constexpr bool isHalf = true;
  static float load(uint16_t v) { return bf16ToF32(v); }
  static uint16_t store(float v) { return f32ToBf16(v); }
};

template <parc_rt_dtype_t D> struct Tag {
  static constexpr parc_rt_dtype_t value = D;
  using T = Traits<D>;
};

/// Calls f(Tag<D>{}) for the runtime dtype; `otherwise()` for invalid ones.
template <typename F, typename G>
auto visitDtype(parc_rt_dtype_t dtype, F &&f, G &&otherwise) {
  switch (dtype) {
  case PARC_RT_F32:
    return f(Tag<PARC_RT_F32>{});
  case PARC_RT_F16:
    return f(Tag<PARC_RT_F16>{});
  case PARC_RT_BF16:
    return f(Tag<PARC_RT_BF16>{});
  case PARC_RT_F64:
    return f(Tag<PARC_RT_F64>{});
  case PARC_RT_I64:
    return f(Tag<PARC_RT_I64>{});
  case PARC_RT_I32:
    return f(Tag<PARC_RT_I32>{});
  case PARC_RT_I8:
    return f(Tag<PARC_RT_I8>{});
  case PARC_RT_U8:
    return f(Tag<PARC_RT_U8>{});
  case PARC_RT_BOOL:
    return f(Tag<PARC_RT_BOOL>{});
  default:
    return otherwise();
  }
}

/// Unsigned integer of the given byte width, for dtype-agnostic copies.
template <size_t Bytes> struct Word;
template <> struct Word<1> { using type = uint8_t; };
template <> struct Word<2> { using type = uint16_t; };
template <> struct Word<4> { using type = uint32_t; };
template <> struct Word<8> { using type = uint64_t; };

/// Calls f(Word<N>::type{}) for the element size of dtype (1, 2, 4 or 8).
template <typename F> void visitWord(size_t bytes, F &&f) {
  switch (bytes) {
  case 1:
    return f(uint8_t{});
  case 2:
    return f(uint16_t{});
  case 4:
    return f(uint32_t{});
  default:
    return f(uint64_t{});
  }
}

// The scalar rules below run in cpu loops and cuda kernels alike.
#ifdef __CUDACC__
#define PARC_RT_HOST_DEVICE __host__ __device__
#else
#define PARC_RT_HOST_DEVICE
#endif

/// Float to integer the way parc_rt_cast documents: NaN -> 0, saturate,
/// truncate toward zero.
template <typename I> PARC_RT_HOST_DEVICE I saturatingFromDouble(double v) {
  if (v != v) // NaN
    return 0;
  if (v <= double(std::numeric_limits<I>::lowest()))
    return std::numeric_limits<I>::lowest();
  if (v >= double(std::numeric_limits<I>::max()))
    return std::numeric_limits<I>::max();
  return I(v);
}

/// Integer pow as parc_rt_binary documents: exact, wrapping; a negative
/// exponent gives 0 except for bases 1 and -1.
template <typename C> PARC_RT_HOST_DEVICE C intPow(C base, C exp) {
  if constexpr (std::is_signed_v<C>)
    if (exp < 0)
      return base == 1 ? 1 : base == C(-1) ? ((exp & 1) ? C(-1) : 1) : 0;
  C result = 1;
  while (exp) {
    if (exp & 1)
      result = C(result * base);
    base = C(base * base);
    exp >>= 1;
  }
  return result;
}

} // namespace parc::rt

#endif // PARC_RUNTIME_DTYPE_TRAITS_H
