//===- KVCacheTest.cpp - parc_rt_kv_cache_write ---------------------------===//
//
// The cache write of generation: the update lands at its position along the
// axis, every other entry keeps its value, and a position past the capacity
// is refused. Expected values are worked out by index arithmetic.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"
#include "parc/program.h"

#include <string>

using namespace parc::test;

namespace {

TEST(KVCacheWrite, WritesAtPositionInPlace) {
  // cache [2, 4, 2] (batch, seq, dim) = -1; update [2, 1, 2] at position 2.
  std::vector<float> cache(16, -1.0f), update = {10, 11, 20, 21};
  const int64_t dims[3] = {2, 4, 2}, udims[3] = {2, 1, 2}, pos = 2;
  ASSERT_EQ(parc_rt_kv_cache_write(PARC_RT_F32, cache.data(), 3, dims,
                                   update.data(), udims, &pos, 1),
            PARC_RT_OK)
      << parc_rt_last_error();
  std::vector<float> want(16, -1.0f);
  // Element (b, 2, d) sits at b*8 + 2*2 + d.
  want[4] = 10, want[5] = 11, want[12] = 20, want[13] = 21;
  EXPECT_EQ(cache, want);
}

TEST(KVCacheWrite, RefusesPositionPastCapacity) {
  std::vector<float> cache(8, 0.0f), update(4, 1.0f);
  const int64_t dims[3] = {1, 4, 2}, udims[3] = {1, 2, 2}, pos = 3;
  EXPECT_EQ(parc_rt_kv_cache_write(PARC_RT_F32, cache.data(), 3, dims,
                                   update.data(), udims, &pos, 1),
            PARC_RT_INVALID_ARGUMENT);
  EXPECT_NE(std::string(parc_rt_last_error())
                .find("positions 3 to 4 do not fit a cache of 4"),
            std::string::npos)
      << parc_rt_last_error();
  EXPECT_EQ(cache, std::vector<float>(8, 0.0f));
}

TEST(KVCacheWrite, RefusesMismatchedUpdate) {
  std::vector<float> cache(8, 0.0f), update(3, 1.0f);
  const int64_t dims[3] = {1, 4, 2}, udims[3] = {1, 1, 3}, pos = 0;
  EXPECT_EQ(parc_rt_kv_cache_write(PARC_RT_F32, cache.data(), 3, dims,
                                   update.data(), udims, &pos, 1),
            PARC_RT_INVALID_ARGUMENT);
}

} // namespace
