//===- MoeTest.cpp - sparse MoE against the dense reference ---------------===//

#include "MoeReference.h"
#include "TestUtil.h"

#include <algorithm>
#include <cmath>

using namespace parc::test;

namespace {

int64_t checkMoe(const MoeCase &c, uint32_t seed) {
  const int64_t T = c.tokens, H = c.hidden, F = c.ffn, E = c.experts;
  auto x = randomFloats(T * H, seed);
  auto logits = randomFloats(T * E, seed + 1, -3, 3);
  auto fc1 = randomFloats(E * H * F, seed + 2, -0.3f, 0.3f);
  auto fc2 = randomFloats(E * F * H, seed + 3, -0.3f, 0.3f);
  auto fc3 = randomFloats(E * H * F, seed + 4, -0.3f, 0.3f);
  std::vector<float> y(T * H, -7.0f);
  EXPECT_EQ(PARC_RT_OK,
            parc_rt_moe(PARC_RT_F32, x.data(), logits.data(), fc1.data(),
                        fc2.data(), c.gated ? fc3.data() : nullptr, y.data(), T,
                        H, F, E, c.topK, c.normalize, PARC_RT_MOE_SILU,
                        c.capacity, "test"))
      << parc_rt_last_error();
  int64_t dropped = 0;
  EXPECT_TRUE(
      allClose(y, denseMoe(c, x, logits, fc1, fc2, fc3, dropped), 1e-5, 1e-5));
  return dropped;
}

TEST(Moe, SwigluTop2Of4) { checkMoe({16, 24, 40, 4, 2, true, true, 0}, 1); }
TEST(Moe, SwigluTop1Of8) { checkMoe({13, 16, 32, 8, 1, true, true, 0}, 2); }
TEST(Moe, PlainTop2Unnormalised) {
  checkMoe({9, 8, 12, 4, 2, false, false, 0}, 3);
}
TEST(Moe, CapacityDropsLaterTokens) {
  // 32 tokens x top-2 over 4 experts average 16 pairs per expert: a
  // capacity of 6 must drop some.
  EXPECT_GT(checkMoe({32, 8, 16, 4, 2, true, true, 6}, 4), 0);
}

/// Half types compute in f32 and round inputs and output: the dense
/// reference on the rounded inputs, within bf16 / f16 output rounding.
void checkHalf(parc_rt_dtype_t dtype, double rtol) {
  const MoeCase c{16, 16, 24, 4, 2, true, true, 0};
  const int64_t T = c.tokens, H = c.hidden, F = c.ffn, E = c.experts;
  auto x = randomFloats(T * H, 21), logits = randomFloats(T * E, 22, -3, 3),
       fc1 = randomFloats(E * H * F, 23, -0.3f, 0.3f),
       fc2 = randomFloats(E * F * H, 24, -0.3f, 0.3f),
       fc3 = randomFloats(E * H * F, 25, -0.3f, 0.3f);
  auto toHalf = [&](std::vector<float> &v) {
    std::vector<uint16_t> h(v.size());
    std::vector<float> back(v.size());
    EXPECT_EQ(PARC_RT_OK, parc_rt_cast(PARC_RT_F32, v.data(), dtype, h.data(),
                                       int64_t(v.size())));
    EXPECT_EQ(PARC_RT_OK, parc_rt_cast(dtype, h.data(), PARC_RT_F32,
                                       back.data(), int64_t(v.size())));
    v = back; // the reference sees the rounded values
    return h;
  };
  auto hx = toHalf(x), hl = toHalf(logits), h1 = toHalf(fc1), h2 = toHalf(fc2),
       h3 = toHalf(fc3);
  std::vector<uint16_t> hy(T * H);
  ASSERT_RT_OK(parc_rt_moe(dtype, hx.data(), hl.data(), h1.data(), h2.data(),
                           h3.data(), hy.data(), T, H, F, E, c.topK, 1,
                           PARC_RT_MOE_SILU, 0, "half"));
  std::vector<float> y(T * H);
  ASSERT_RT_OK(parc_rt_cast(dtype, hy.data(), PARC_RT_F32, y.data(), T * H));
  int64_t dropped = 0;
  EXPECT_TRUE(allClose(y, denseMoe(c, x, logits, fc1, fc2, fc3, dropped), rtol,
                       rtol));
}

TEST(Moe, Bf16) { checkHalf(PARC_RT_BF16, 1e-2); }
TEST(Moe, F16) { checkHalf(PARC_RT_F16, 2e-3); }

// Sparse means sparse: an expert no token chooses is never evaluated, so
// NaN weights there cannot reach the output (the dense form gives NaN).
TEST(Moe, UnchosenExpertIsNotComputed) {
  const MoeCase c{8, 8, 16, 4, 2, true, true, 0};
  const int64_t T = c.tokens, H = c.hidden, F = c.ffn, E = c.experts;
  auto x = randomFloats(T * H, 31), logits = randomFloats(T * E, 32, -1, 1),
       fc1 = randomFloats(E * H * F, 33, -0.3f, 0.3f),
       fc2 = randomFloats(E * F * H, 34, -0.3f, 0.3f),
       fc3 = randomFloats(E * H * F, 35, -0.3f, 0.3f);
  for (int64_t t = 0; t < T; ++t)
    logits[t * E + 3] = -100.0f; // nobody picks expert 3
  int64_t dropped = 0;
  auto want = denseMoe(c, x, logits, fc1, fc2, fc3, dropped);
  std::fill(fc1.begin() + 3 * H * F, fc1.end(), NAN);
  std::fill(fc2.begin() + 3 * F * H, fc2.end(), NAN);
  std::vector<float> y(T * H);
  ASSERT_RT_OK(parc_rt_moe(PARC_RT_F32, x.data(), logits.data(), fc1.data(),
                           fc2.data(), fc3.data(), y.data(), T, H, F, E, 2, 1,
                           PARC_RT_MOE_SILU, 0, "sparse"));
  EXPECT_TRUE(allClose(y, want, 1e-5, 1e-5));
}

TEST(Moe, Errors) {
  float v[4] = {};
  EXPECT_RT_ERROR(parc_rt_moe(PARC_RT_F32, v, v, v, v, nullptr, v, 1, 1, 1, 2,
                              3, 1, PARC_RT_MOE_SILU, 0, "l"),
                  PARC_RT_INVALID_ARGUMENT, "top_k 3");
  EXPECT_RT_ERROR(parc_rt_moe(PARC_RT_I64, v, v, v, v, nullptr, v, 1, 1, 1, 2,
                              1, 1, PARC_RT_MOE_SILU, 0, "l"),
                  PARC_RT_UNSUPPORTED, "moe: dtype i64");
}

} // namespace
