//===- MoeTest.cpp - sparse MoE against the dense reference ---------------===//

#include "MoeReference.h"
#include "TestUtil.h"

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
