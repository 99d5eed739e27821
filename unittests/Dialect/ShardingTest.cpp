//===- ShardingTest.cpp - #dist.sharding's slices ---------------*- C++ -*-===//
//
// The slices a rank keeps under each kind of cut the weight writer sees
// (even, uneven, blockwise, replicated chunks, two axes), against offsets
// worked out by hand in the comments.
//
//===----------------------------------------------------------------------===//

#include "dist/DistDialect.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/IR/MLIRContext.h"

#include <gtest/gtest.h>

using namespace mlir;
using parc::dist::ShardingAttr;
using Runs = SmallVector<std::pair<int64_t, int64_t>>;

namespace {

class ShardingTest : public ::testing::Test {
protected:
  ShardingTest() { ctx.loadDialect<parc::dist::DistDialect>(); }

  ShardingAttr parse(StringRef text) {
    auto attr = dyn_cast_or_null<ShardingAttr>(parseAttribute(text, &ctx));
    EXPECT_TRUE(attr) << text.str();
    return attr;
  }

  /// Per dim, the (offset, size) runs the rank at `coords` keeps.
  SmallVector<Runs> slices(StringRef text, ArrayRef<int64_t> global,
                           ArrayRef<int64_t> meshShape,
                           ArrayRef<StringRef> axes, ArrayRef<int64_t> coords) {
    auto got = parse(text).getLocalSlices(global, meshShape, axes, coords);
    EXPECT_TRUE(succeeded(got)) << text.str();
    SmallVector<Runs> out;
    if (succeeded(got))
      for (auto &dim : *got)
        out.push_back(Runs(dim.begin(), dim.end()));
    return out;
  }

  MLIRContext ctx;
};

TEST_F(ShardingTest, EvenSplit) {
  // [8, 6] by columns over 2: rank 1 keeps columns [3, 6).
  auto s = slices("#dist.sharding<@mesh, [[], [\"tp\"]]>", {8, 6}, {2}, {"tp"},
                  {1});
  EXPECT_EQ(s, (SmallVector<Runs>{{{0, 8}}, {{3, 3}}}));
}

TEST_F(ShardingTest, UnevenSizes) {
  // 10 rows as 3 + 3 + 2 + 2: rank 2 starts at 6 and keeps 2.
  auto s = slices("#dist.sharding<@mesh, [[\"tp\"]], sizes = [[3, 3, 2, 2]]>",
                  {10}, {4}, {"tp"}, {2});
  EXPECT_EQ(s, (SmallVector<Runs>{{{6, 2}}}));
}

TEST_F(ShardingTest, BlocksKeepAChunkOfEachBlock) {
  // A fused QKV [4, 192] (three blocks of 64) over 2 ranks: rank 1 keeps
  // [32, 64) of each block, i.e. global [32, 64), [96, 128), [160, 192).
  StringRef qkv = "#dist.sharding<@mesh, [[], [\"tp\"]], blocks = [[], [64, 64, 64]]>";
  EXPECT_EQ(slices(qkv, {4, 192}, {2}, {"tp"}, {1}),
            (SmallVector<Runs>{{{0, 4}}, {{32, 32}, {96, 32}, {160, 32}}}));
  EXPECT_EQ(*parse(qkv).getLocalShape({4, 192}, {2}, {"tp"}, {1}),
            (SmallVector<int64_t>{4, 96}));
  EXPECT_EQ(*parse(qkv).getGlobalShape({4, 96}, {2}, {"tp"}),
            (SmallVector<int64_t>{4, 192}));
  // Several runs have no one start.
  EXPECT_TRUE(failed(parse(qkv).getLocalOffsets({4, 192}, {2}, {"tp"}, {1})));
  // Unequal blocks: [64, 32, 32] over 4 ranks, rank 3 keeps [48, 64),
  // [88, 96) and [120, 128).
  EXPECT_EQ(slices("#dist.sharding<@mesh, [[\"tp\"]], blocks = [[64, 32, 32]]>",
                   {128}, {4}, {"tp"}, {3}),
            (SmallVector<Runs>{{{48, 16}, {88, 8}, {120, 8}}}));
}

TEST_F(ShardingTest, ReplicasShareAChunk) {
  // 2 key/value heads of 16 over 4 ranks: ranks 0, 1 keep [0, 16), ranks
  // 2, 3 keep [16, 32).
  StringRef kv = "#dist.sharding<@mesh, [[], [\"tp\"]], replicas = [1, 2]>";
  for (int64_t rank = 0; rank < 4; ++rank)
    EXPECT_EQ(slices(kv, {8, 32}, {4}, {"tp"}, {rank}),
              (SmallVector<Runs>{{{0, 8}}, {{rank / 2 * 16, 16}}}))
        << "rank " << rank;
  EXPECT_EQ(*parse(kv).getGlobalShape({8, 16}, {4}, {"tp"}),
            (SmallVector<int64_t>{8, 32}));
  // Replicas that do not divide the ranks.
  EXPECT_TRUE(failed(
      parse("#dist.sharding<@mesh, [[\"tp\"]], replicas = [3]>")
          .getLocalSlices({12}, {4}, {"tp"}, {0})));
}

TEST_F(ShardingTest, TwoAxesMajorToMinor) {
  // 8 rows over ep x tp = 2 x 2, tp fastest: (ep 1, tp 0) is shard 2,
  // rows [4, 6); the pp axis of the mesh does not cut.
  auto s = slices("#dist.sharding<@mesh, [[\"ep\", \"tp\"]]>", {8}, {3, 2, 2},
                  {"pp", "ep", "tp"}, {2, 1, 0});
  EXPECT_EQ(s, (SmallVector<Runs>{{{4, 2}}}));
}

TEST_F(ShardingTest, WhatDoesNotFitFails) {
  // 30 does not split into 4; an axis the mesh lacks.
  EXPECT_TRUE(failed(
      parse("#dist.sharding<@mesh, [[\"tp\"]], blocks = [[64, 30, 34]]>")
          .getLocalSlices({128}, {4}, {"tp"}, {0})));
  EXPECT_TRUE(failed(parse("#dist.sharding<@mesh, [[\"ep\"]]>")
                         .getLocalSlices({8}, {4}, {"tp"}, {0})));
}

} // namespace
