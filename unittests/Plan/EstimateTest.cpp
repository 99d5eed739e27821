//===- EstimateTest.cpp - composing the formulas for one configuration ----===//
//
// A hand-built profile (two identical blocks, each a column and a row
// linear) on a round-number cluster, so every expected time below is
// arithmetic on the numbers in this file.
//
//===----------------------------------------------------------------------===//

#include "parc/Plan/Planner.h"

#include <gtest/gtest.h>

using namespace parc::plan;

namespace {

Cluster roundCluster() {
  Cluster c;
  c.name = "round";
  c.peakFlops["bf16"] = 100e12;
  c.memoryBytes = 80.0 * (1 << 30);
  c.memoryBandwidth = 1e12;
  c.devicesPerNode = 8;
  c.intraNode = {"fast", 100e9, 0};
  c.interNode = {"slow", 10e9, 0};
  return c;
}

/// Batch 4; per block two linears of 8 TFLOP and 1G weights each; the row
/// one all-reduces 1G elements; 1M elements cross a block boundary.
ModelProfile twoBlocks() {
  ModelProfile p;
  p.batch = 4;
  p.seq = 1;
  p.blocks = p.layers = 2; // one attention per block
  Unit u;
  u.name = "layers.0";
  u.block = true;
  u.count = 2;
  u.boundaryElems = 1e6;
  OpCost column;
  column.op = "linear";
  column.flops = 8e12;
  column.weightElems = column.weightReadElems = 1e9;
  column.split = Split::Tp;
  OpCost row = column;
  row.comm = Collective::AllReduce;
  row.commElems = 1e9;
  u.ops = {column, row};
  p.units.push_back(u);
  return p;
}

Estimate run(const Config &c) {
  PlanOptions o;
  o.dtype = "bf16";
  o.devices = c.tp * c.pp * c.dp * c.ep;
  o.overlapChunks = 1; // collectives exposed: the times below add up
  return estimate(twoBlocks(), roundCluster(), o, c, 100e12);
}

} // namespace

TEST(Estimate, TensorParallel) {
  Config c;
  c.tp = 2;
  Estimate e = run(c);
  // Per op: 4e12 FLOP / 1e14 = 40 ms (weights 1 GB / 1 TB/s = 1 ms: compute
  // bound); 4 ops. Per block an all-reduce of 2 GB over 2 ranks at 100 GB/s
  // with factor 2(n-1)/n = 1: 20 ms.
  EXPECT_NEAR(e.computeTime, 0.16, 1e-9);
  EXPECT_NEAR(e.commTime, 0.04, 1e-9);
  EXPECT_NEAR(e.time, 0.20, 1e-9);
  // 4 matrices of 1G bf16 elements, halved.
  EXPECT_DOUBLE_EQ(e.weightBytes, 4e9);
  EXPECT_DOUBLE_EQ(e.commBytes, 2 * 2e9);
}

TEST(Estimate, PipelineWithMicroBatches) {
  Config c;
  c.pp = 2;
  c.microBatches = 2;
  Estimate e = run(c);
  // A stage holds one block; per micro-batch (half the batch) each linear
  // is 4e12 FLOP = 40 ms: 80 ms per stage. Schedule: 80 ms * (M + P - 1) =
  // 240 ms, plus one send of 1M * 1/2 * 2 B = 1 MB at 100 GB/s = 10 us.
  ASSERT_EQ(e.config.stageBlocks, (std::vector<int64_t>{1, 1}));
  EXPECT_NEAR(e.time, 0.24 + 10e-6, 1e-9);
  EXPECT_NEAR(e.bubble, 1.0 / 3.0, 1e-12);
  // Steady state: a forward every M * (stage + send) = 2 * 80.01 ms.
  EXPECT_NEAR(e.interval, 2 * (0.08 + 10e-6), 1e-9);
  EXPECT_DOUBLE_EQ(e.weightBytes, 2 * 2e9);
}

TEST(Estimate, DataParallelAndFit) {
  Config c;
  c.dp = 2;
  Estimate e = run(c);
  // Half the batch per replica: 4 ops * 40 ms, no communication.
  EXPECT_NEAR(e.time, 0.16, 1e-9);
  EXPECT_EQ(e.commBytes, 0.0);
  // All 8 GB of weights on every replica: fits in 80 GiB.
  EXPECT_DOUBLE_EQ(e.weightBytes, 8e9);
  EXPECT_TRUE(e.fits);
}

TEST(Estimate, CrossNodeTensorParallel) {
  Config c;
  c.tp = 16;
  Estimate e = run(c);
  // The group spans two nodes: 2 GB * 2*15/16 at 10 GB/s = 375 ms per block.
  EXPECT_NEAR(e.commTime, 2 * 0.375, 1e-9);
  EXPECT_TRUE(e.crossesNodes);
}

TEST(Plan, RanksAndSkips) {
  PlanOptions o;
  o.dtype = "bf16";
  o.devices = 4;
  ModelProfile p = twoBlocks();
  p.tpConstraints.push_back({6, "heads"});
  auto r = planParallelism(p, roundCluster(), o);
  ASSERT_TRUE(!!r) << llvm::toString(r.takeError());
  // tp=4 does not divide 6 heads; 4 stages exceed 2 blocks.
  ASSERT_EQ(r->skipped.size(), 2u);
  EXPECT_EQ(r->skipped[0], "pp=4: more stages than the 2 blocks");
  EXPECT_EQ(r->skipped[1], "tp=4: does not divide the 6 heads");
  for (const Estimate &e : r->ranked)
    EXPECT_NE(e.config.tp, 4);
  ASSERT_TRUE(r->chosen.has_value());
  // Sorted by time among the fitting ones.
  for (size_t i = 1; i < r->ranked.size(); ++i) {
    if (r->ranked[i].fits) {
      EXPECT_LE(r->ranked[i - 1].time, r->ranked[i].time * 1.001);
    }
  }
}

TEST(Estimate, TimeSharedSlots) {
  // Two compute slots on the node: 4 ranks run at half speed each.
  Cluster c = roundCluster();
  c.computeSlotsPerNode = 2;
  PlanOptions o;
  o.dtype = "bf16";
  Config cfg;
  cfg.tp = 4;
  Estimate e = estimate(twoBlocks(), c, o, cfg, 100e12);
  // Per op 2e12 FLOP at 50 TFLOP/s = 40 ms; 4 ops.
  EXPECT_NEAR(e.computeTime, 0.16, 1e-9);
  cfg.tp = 2;
  e = estimate(twoBlocks(), c, o, cfg, 100e12);
  EXPECT_NEAR(e.computeTime, 0.16, 1e-9); // 2 ranks fit 2 slots: full speed
  // 3 tensor-parallel ranks meet at every collective, so 2 slots run them
  // in 2 rounds: 8/3 TFLOP per op at 50 TFLOP/s = 53.3 ms; 4 ops.
  cfg.tp = 3;
  e = estimate(twoBlocks(), c, o, cfg, 100e12);
  EXPECT_NEAR(e.computeTime, 4 * (8e12 / 3) / 50e12, 1e-9);
}

TEST(Estimate, TimeSharedStages) {
  // 3 one-rank stages with 3 micro-batches in flight on 2 slots only meet
  // at their sends: they share the slots fairly, at 2/3 speed each. A stage
  // holds one block (2 ops of 8 TFLOP) on a third of the batch: 16/3 TFLOP
  // at 66.7 TFLOP/s = 80 ms per micro-batch, 3 micro-batches.
  Cluster c = roundCluster();
  c.computeSlotsPerNode = 2;
  ModelProfile p = twoBlocks();
  p.blocks = p.layers = p.units[0].count = 3;
  PlanOptions o;
  o.dtype = "bf16";
  Config cfg;
  cfg.pp = 3;
  cfg.microBatches = 3;
  Estimate e = estimate(p, c, o, cfg, 100e12);
  EXPECT_NEAR(e.computeTime, 3 * (16e12 / 3) / (100e12 * 2 / 3), 1e-9);
}

TEST(Estimate, OverlappedAllReduce) {
  PlanOptions o;
  o.dtype = "bf16";
  o.overlapChunks = 2;
  Config c;
  c.tp = 2;
  Estimate e = estimate(twoBlocks(), roundCluster(), o, c, 100e12);
  // The row product (40 ms) and its all-reduce (20 ms) in two pieces:
  // 20 + max(40, 20)/2 + 10 = 50 ms, so 10 ms of the 20 stay exposed.
  EXPECT_NEAR(e.commTime, 2 * 0.010, 1e-9);
  EXPECT_NEAR(e.time, 0.16 + 0.02, 1e-9);
}

TEST(Estimate, CheapestOverlapCut) {
  // overlapChunks 0: the cut dist-overlap would choose. The row product
  // (40 ms, its 1 GB weight half read in 1 ms by every piece) and its
  // all-reduce (20 ms, no latency) in c pieces: p + (c-1)·max(p, a) + a =
  // 60, 50, 45 and 42.5 ms for c = 1, 2, 4, 8 (no activations to copy).
  // Eight pieces win: 2.5 ms of the 20 stay exposed per block.
  PlanOptions o;
  o.dtype = "bf16";
  o.overlapChunks = 0;
  Config c;
  c.tp = 2;
  Estimate e = estimate(twoBlocks(), roundCluster(), o, c, 100e12);
  EXPECT_NEAR(e.commTime, 2 * 0.0025, 1e-9);
  EXPECT_NEAR(e.time, 0.16 + 0.005, 1e-9);
}

TEST(Estimate, ExpertParallelOwnRanks) {
  // One block whose second op is an expert (routed work 8 TFLOP, 1G expert
  // weights) with a dispatch of 1M tokens x hidden elements, top-2.
  ModelProfile p = twoBlocks();
  p.experts = 4;
  p.topK = 2;
  OpCost &expert = p.units[0].ops[1];
  expert.expert = true;
  expert.dispatchElems = 1e6;
  expert.topK = 2;
  PlanOptions o;
  o.dtype = "bf16";
  Config c;
  c.ep = 2; // tp = 1: two ranks, dense op replicated, experts halved
  Estimate e = estimate(p, roundCluster(), o, c, 100e12);
  // Dense 80 ms + expert 40 ms per block.
  EXPECT_NEAR(e.computeTime, 2 * 0.12, 1e-9);
  // Per block: 2 all-to-alls of 1e6/2 * 2 rows * 4 B = 4 MB (factor 1/2)
  // and an all-gather of 1e6 * 2 B (factor 1/2), at 100 GB/s.
  EXPECT_NEAR(e.commTime, 2 * (2 * 0.5 * 4e6 + 0.5 * 2e6) / 100e9, 1e-12);
  // Dense weights whole (2 GB), expert weights halved (1 GB), two blocks.
  EXPECT_DOUBLE_EQ(e.weightBytes, 2 * (2e9 + 1e9));
  EXPECT_EQ(c.world(), 2);
}

TEST(Estimate, BalancedLayout) {
  // Four identical blocks of one 1 TFLOP op (10 ms at 100 TFLOP/s) and a
  // head of 2 TFLOP (20 ms) after them: over two stages the slowest stage
  // is smallest with 3 blocks, then 1 block + head (30 ms each).
  ModelProfile p;
  p.batch = 1;
  p.seq = 1;
  p.blocks = p.layers = 4;
  OpCost op;
  op.op = "linear";
  op.flops = 1e12;
  Unit block;
  block.name = "layers.0";
  block.block = true;
  block.count = 4;
  block.ops = {op};
  Unit head;
  head.name = "post";
  op.flops = 2e12;
  head.ops = {op};
  p.units = {block, head};
  PlanOptions o;
  o.dtype = "bf16";
  Config c;
  c.pp = 2;
  Estimate e = estimate(p, roundCluster(), o, c, 100e12);
  EXPECT_EQ(e.config.stageBlocks, (std::vector<int64_t>{3, 1}));
  EXPECT_NEAR(e.stageCompute[0], 0.03, 1e-12);
  EXPECT_NEAR(e.stageCompute[1], 0.03, 1e-12);
  // One micro-batch: the stages run one after the other, plus no send
  // (no boundary elements).
  EXPECT_NEAR(e.time, 0.06 + 0.0, 1e-9);
}

std::string why(const ModelProfile &p, const Config &c) {
  llvm::Error e = checkBuildable(p, c);
  return e ? llvm::toString(std::move(e)) : "builds";
}

TEST(Plan, CheckBuildable) {
  ModelProfile p = twoBlocks();
  Config c;
  EXPECT_EQ(why(p, c), "builds");
  // Flag combinations compile refuses whatever the model.
  c.sp = true;
  // The library names its options; the driver spells them as flags.
  EXPECT_EQ(why(p, c), "sp splits the sequence over the tp ranks: give tp > 1");
  c = Config();
  c.tp = 2, c.ep = 4;
  EXPECT_EQ(why(p, c), "ep 4 must equal tp 2: experts are split over the "
                       "tensor-parallel ranks (or add etp for ep groups of "
                       "tp ranks)");
  // --sp splits the sequence (6 positions) over tp: 2 and 3 divide it, 4
  // does not.
  p.seq = p.seqNormLength = 6;
  p.seqNormNode = "ln_1";
  c = Config();
  c.tp = 2, c.sp = true;
  EXPECT_EQ(why(p, c), "builds");
  c.tp = 4;
  EXPECT_EQ(why(p, c), "tp=4+sp: does not divide the sequence of 6 that node "
                       "'ln_1' normalises");
  c.sp = false;
  EXPECT_EQ(why(p, c), "builds");
  // Stages cut between attention layers: as many as the blocks found by
  // name, and at least one per (virtual) stage.
  c = Config();
  c.pp = 2;
  EXPECT_EQ(why(p, c), "builds");
  p.layers = 3;
  EXPECT_EQ(why(p, c), "pp=2: the 2 blocks found by node name are not the 3 "
                       "attention layers compile's pp-layout counts");
  p.layers = 2;
  c.virtualStages = 2;
  EXPECT_EQ(why(p, c), "pp=2 v=2: needs at least one layer per stage, but the "
                       "model has 2 layer(s) (one per attention block)");
  // Micro-batches and replicas split dim 0 of every input and output.
  c = Config();
  c.dp = 2, c.pp = 2, c.microBatches = 2;
  EXPECT_EQ(why(p, c), "builds");
  p.batchOnDim0 = false;
  EXPECT_EQ(why(p, c), "dp and micro-batches split dim 0 of every input and "
                       "output: not the batch in this model");
}

TEST(Plan, NeverRanksWhatCompileRefuses) {
  // At seq 6 on 4 devices tp=4+sp is refused; tp=4 and tp=2+sp are ranked.
  ModelProfile p = twoBlocks();
  p.seq = p.seqNormLength = 6;
  p.seqNormNode = "ln_1";
  PlanOptions o;
  o.dtype = "bf16";
  o.devices = 4;
  auto r = planParallelism(p, roundCluster(), o);
  ASSERT_TRUE(!!r) << llvm::toString(r.takeError());
  bool tp4 = false, tp2sp = false;
  for (const Estimate &e : r->ranked) {
    EXPECT_FALSE(e.config.tp == 4 && e.config.sp);
    EXPECT_FALSE(checkBuildable(p, e.config)) << e.config.str();
    tp4 |= e.config.tp == 4 && !e.config.sp;
    tp2sp |= e.config.tp == 2 && e.config.sp;
  }
  EXPECT_TRUE(tp4 && tp2sp);
  EXPECT_TRUE(
      llvm::is_contained(r->skipped, "tp=4+sp: does not divide the sequence of "
                                     "6 that node 'ln_1' normalises"));
}
