//===- half.h - f16 / bf16 <-> f32 conversions ------------------*- C++ -*-===//
//
// Bit-exact IEEE conversions without compiler extensions (_Float16/__bf16
// are not portable across the host compilers and nvcc). f16 follows
// M. Dukhan's FP16 library: round to nearest even via float arithmetic.
//
//===----------------------------------------------------------------------===//
#ifndef PARC_RUNTIME_HALF_H
#define PARC_RUNTIME_HALF_H

#include "parc/runtime.h"

#include <cstdint>
#include <cstring>
#include <vector>

namespace parc::rt {

inline uint32_t floatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}
inline float bitsFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, 4);
  return f;
}

inline float f16ToF32(uint16_t h) {
  const uint32_t w = uint32_t(h) << 16;
  const uint32_t sign = w & 0x80000000u;
  const uint32_t twoW = w + w;
  // Normal numbers: shift the exponent/mantissa into place and rescale.
  const float normalized = bitsFloat((twoW >> 4) + (0xE0u << 23)) * 0x1.0p-112f;
  // Subnormals: place the mantissa under a 0.5 bias and subtract it.
  const float denormalized = bitsFloat((twoW >> 17) | (126u << 23)) - 0.5f;
  const uint32_t result = sign | (twoW < (1u << 27) ? floatBits(denormalized)
                                                    : floatBits(normalized));
  return bitsFloat(result);
}

inline uint16_t f32ToF16(float f) {
  // Scaling by 2^112 then 2^-110 makes overflow become inf and lets the FPU
  // do the rounding of the dropped mantissa bits.
  float base = (__builtin_fabsf(f) * 0x1.0p+112f) * 0x1.0p-110f;
  const uint32_t w = floatBits(f);
  const uint32_t shl1W = w + w;
  const uint32_t sign = w & 0x80000000u;
  uint32_t bias = shl1W & 0xFF000000u;
  if (bias < 0x71000000u)
    bias = 0x71000000u;
  base = bitsFloat((bias >> 1) + 0x07800000u) + base;
  const uint32_t bits = floatBits(base);
  const uint32_t expBits = (bits >> 13) & 0x00007C00u;
  const uint32_t mantissaBits = bits & 0x00000FFFu;
  const uint32_t nonsign = expBits + mantissaBits;
  return uint16_t((sign >> 16) | (shl1W > 0xFF000000u ? 0x7E00u : nonsign));
}

inline float bf16ToF32(uint16_t h) { return bitsFloat(uint32_t(h) << 16); }

inline uint16_t f32ToBf16(float f) {
  uint32_t u = floatBits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) // NaN: keep it quiet, keep the sign
    return uint16_t((u >> 16) | 0x0040u);
  u += 0x7fffu + ((u >> 16) & 1u); // round to nearest even
  return uint16_t(u >> 16);
}

/// Bulk widening/narrowing used by kernels that compute half types in f32.
inline void halfToF32(bool bf16, const uint16_t *__restrict src,
                      float *__restrict dst, int64_t n) {
  if (bf16)
    for (int64_t i = 0; i < n; ++i)
      dst[i] = bf16ToF32(src[i]);
  else
    for (int64_t i = 0; i < n; ++i)
      dst[i] = f16ToF32(src[i]);
}
inline void f32ToHalf(bool bf16, const float *__restrict src,
                      uint16_t *__restrict dst, int64_t n) {
  if (bf16)
    for (int64_t i = 0; i < n; ++i)
      dst[i] = f32ToBf16(src[i]);
  else
    for (int64_t i = 0; i < n; ++i)
      dst[i] = f32ToF16(src[i]);
}

/// Half types: widen both operands, run the f32 path, narrow the result.
template <typename Body>
parc_rt_status_t viaF32(parc_rt_dtype_t dtype, int64_t aCount, const void *a,
                        int64_t bCount, const void *b, int64_t outCount,
                        void *out, Body &&body) {
  const bool bf16 = dtype == PARC_RT_BF16;
  std::vector<float> fa(static_cast<size_t>(aCount)),
      fb(static_cast<size_t>(bCount)), fo(static_cast<size_t>(outCount));
  halfToF32(bf16, static_cast<const uint16_t *>(a), fa.data(), aCount);
  halfToF32(bf16, static_cast<const uint16_t *>(b), fb.data(), bCount);
  body(fa.data(), fb.data(), fo.data());
  f32ToHalf(bf16, fo.data(), static_cast<uint16_t *>(out), outCount);
  return PARC_RT_OK;
}

} // namespace parc::rt

#endif // PARC_RUNTIME_HALF_H
