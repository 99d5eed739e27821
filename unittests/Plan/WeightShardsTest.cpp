//===- WeightShardsTest.cpp - the rule for a rank's part of a weight ------===//

#include "parc/Plan/WeightShards.h"

#include <gtest/gtest.h>

using namespace parc::plan;
using Heads = std::pair<int64_t, int64_t>;

TEST(WeightShards, PaddedWidthIsTheNextMultiple) {
  EXPECT_EQ(paddedWidth(75, 2), 76);
  EXPECT_EQ(paddedWidth(128, 3), 129);
  EXPECT_EQ(paddedWidth(256, 4), 256);
  EXPECT_EQ(paddedWidth(7, 1), 7);
}

TEST(WeightShards, PaddedHeadsKeepTheGroups) {
  // 6 heads over tp 4: 8; grouped 6/3 over tp 4: 4 kv heads of 2 each.
  EXPECT_EQ(paddedHeads(6, 6, 4), Heads(8, 8));
  EXPECT_EQ(paddedHeads(6, 3, 4), Heads(8, 4));
  EXPECT_EQ(paddedHeads(32, 8, 4), Heads(32, 8));
  EXPECT_EQ(kvParts(2, 4), 2);
}

TEST(WeightShards, FusedQkvOverThreeRanks) {
  // GPT-2's c_attn [64, 3·64] of 4 heads at tp 3: 6 heads, 288 columns,
  // 96 per rank of 4-byte floats.
  WeightShard qkv{{64, 192}, 4, true, 1, WeightShard::Pad::Heads};
  ShardDegrees d{3, 1, false, 4, 4, 4};
  EXPECT_EQ(shardBytes(qkv, d), 64 * 96 * 4);
  d.tp = 1;
  EXPECT_EQ(shardBytes(qkv, d), 64 * 192 * 4);
}

TEST(WeightShards, VocabularyAndExperts) {
  // 128 rows over 3 ranks: 43 each; the lookup adds 128 + 3 int64s.
  WeightShard table{{128, 64}, 4, true, 0, WeightShard::Pad::Width};
  WeightShard lookup{{128}, 8, false};
  lookup.vocabLookup = true;
  ShardDegrees d{3, 1, false, 4, 4, 2};
  EXPECT_EQ(shardBytes(table, d), 43 * 64 * 2);
  EXPECT_EQ(shardBytes(lookup, d), 131 * 8);
  d.tp = 1;
  EXPECT_EQ(shardBytes(lookup, d), 0);
  // Stacked experts [4, 32, 64]: 2 over ep 2; the ffn over tp only with etp.
  WeightShard fc1{{4, 32, 64}, 4, true, 2};
  fc1.experts = true;
  ShardDegrees e{2, 2, false, 4, 2, 4};
  EXPECT_EQ(shardBytes(fc1, e), 2 * 32 * 64 * 4);
  ShardDegrees etp{2, 1, true, 4, 2, 4};
  EXPECT_EQ(shardBytes(fc1, etp), 4 * 32 * 32 * 4);
}

TEST(WeightShards, FloatsInTheNarrowerDtype) {
  // f32 under bf16 compute is rounded to 2 bytes; a bf16 checkpoint under
  // f32 compute stays 2 bytes; integers keep their width.
  WeightShard f32{{10}, 4, true}, bf16{{10}, 2, true}, ids{{10}, 8, false};
  ShardDegrees bf{1, 1, false, 0, 0, 2}, f{1, 1, false, 0, 0, 4};
  EXPECT_EQ(shardBytes(f32, bf), 20);
  EXPECT_EQ(shardBytes(bf16, f), 20);
  EXPECT_EQ(shardBytes(ids, bf), 80);
}
