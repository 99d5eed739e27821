//===- fastmath.h - inline exp, tanh and erf for f32 ------------*- C++ -*-===//
//
// libm's expf/tanhf/erff are out-of-line calls, and GELU, softmax, SiLU and
// sigmoid spent a sixth of GPT-2's forward in them. These are inline float
// arithmetic instead of calls, written branch-free (selects, not control
// flow) so that with -fno-trapping-math the loops that call them vectorise
// (see simd.h). Accuracy against double precision: exp within 1e-7
// relative on [-87, 88]; tanh within 1e-7 absolute; erf (Abramowitz &
// Stegun 7.1.26) within 1.5e-7 absolute in exact arithmetic, 6e-7 in f32 —
// used only inside GELU; the standalone Erf op keeps libm.
//
//===----------------------------------------------------------------------===//
#ifndef PARC_RUNTIME_CPU_FASTMATH_H
#define PARC_RUNTIME_CPU_FASTMATH_H

#include <cmath>
#include <cstdint>
#include <cstring>

namespace parc::rt {

/// e^x: x = n·ln2 + r with |r| <= ln2/2 (Cody–Waite split of ln2), e^r by
/// its Taylor series to r^7 (remainder < 5e-9), 2^n from the exponent bits.
inline float fastExp(float x) {
  x = x < -87.0f ? -87.0f : x;
  x = x > 88.0f ? 88.0f : x;
  // n = round(x / ln2) by the 1.5·2^23 trick (no floor call).
  float n = (x * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  float r = x - n * 0.693359375f + n * 2.12194440e-4f;
  float p = 1.0f / 5040;
  p = p * r + 1.0f / 720;
  p = p * r + 1.0f / 120;
  p = p * r + 1.0f / 24;
  p = p * r + 1.0f / 6;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  int32_t bits = (int32_t(n) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, sizeof scale);
  return p * scale;
}

/// tanh x = sign(x)·(1 - e^{-2|x|}) / (1 + e^{-2|x|}); near 0, where the
/// difference cancels, its odd Taylor series to x^5 (error < 3e-10).
inline float fastTanh(float x) {
  float a = std::fabs(x);
  float t = fastExp(-2.0f * a);
  float big = (1.0f - t) / (1.0f + t);
  float x2 = x * x;
  float small = a * (1.0f + x2 * (-1.0f / 3 + x2 * (2.0f / 15)));
  // A select, not float(a < c) arithmetic: GCC if-converts the select
  // into a vector blend but keeps the bool-to-float conversion a branch.
  return std::copysign(a < 0.0625f ? small : big, x);
}

/// erf by Abramowitz & Stegun 7.1.26 (|error| <= 1.5e-7).
inline float fastErf(float x) {
  float a = std::fabs(x);
  float t = 1.0f / (1.0f + 0.3275911f * a);
  float p = 1.061405429f;
  p = p * t - 1.453152027f;
  p = p * t + 1.421413741f;
  p = p * t - 0.284496736f;
  p = p * t + 0.254829592f;
  return std::copysign(1.0f - p * t * fastExp(-a * a), x);
}

/// Kernels are templated on their compute type: f32 (and the half types,
/// which compute in f32) take the fast forms, f64 keeps libm.
inline float vexp(float x) { return fastExp(x); }
inline double vexp(double x) { return std::exp(x); }
inline float vtanh(float x) { return fastTanh(x); }
inline double vtanh(double x) { return std::tanh(x); }
inline float verfGelu(float x) { return fastErf(x); }
inline double verfGelu(double x) { return std::erf(x); }

} // namespace parc::rt

#endif // PARC_RUNTIME_CPU_FASTMATH_H
