//===- CostModelTest.cpp - the planner's formulas against hand values -----===//

#include "parc/Plan/CostModel.h"

#include <gtest/gtest.h>

using namespace parc::plan;

TEST(CostModel, RingFactors) {
  // 2(n-1)/n for all-reduce, (n-1)/n for the others, 1 for send/recv.
  EXPECT_DOUBLE_EQ(busFactor(Collective::AllReduce, 8), 1.75);
  EXPECT_DOUBLE_EQ(busFactor(Collective::AllReduce, 2), 1.0);
  EXPECT_DOUBLE_EQ(busFactor(Collective::AllGather, 4), 0.75);
  EXPECT_DOUBLE_EQ(busFactor(Collective::ReduceScatter, 4), 0.75);
  EXPECT_DOUBLE_EQ(busFactor(Collective::AllToAll, 8), 0.875);
  EXPECT_DOUBLE_EQ(busFactor(Collective::SendRecv, 2), 1.0);
  EXPECT_DOUBLE_EQ(busFactor(Collective::AllReduce, 1), 0.0);
  EXPECT_EQ(latencySteps(Collective::AllReduce, 8), 14);
  EXPECT_EQ(latencySteps(Collective::AllGather, 8), 7);
  EXPECT_EQ(latencySteps(Collective::SendRecv, 2), 1);
}

TEST(CostModel, CollectiveTime) {
  Link link{"test", 100e9, 10e-6};
  // 1 GB all-reduce over 8: 14 steps * 10 us + 1.75 * 1e9 / 1e11 s.
  EXPECT_NEAR(collectiveTime(Collective::AllReduce, 1e9, 8, link), 140e-6 + 0.0175, 1e-12);
  // All-gather of a 64 MB output over 4: 3 * 10 us + 0.75 * 64e6 / 1e11.
  EXPECT_NEAR(collectiveTime(Collective::AllGather, 64e6, 4, link), 30e-6 + 0.48e-3, 1e-12);
  // A 4 MB send: 10 us + 4e6 / 1e11 = 50 us.
  EXPECT_NEAR(collectiveTime(Collective::SendRecv, 4e6, 2, link), 50e-6, 1e-12);
  EXPECT_EQ(collectiveTime(Collective::AllReduce, 1e9, 1, link), 0.0);
}

TEST(CostModel, Roofline) {
  // A 4096^3 GEMM in bf16 on 989 TFLOP/s and 3.35 TB/s: compute-bound.
  double flops = 2.0 * 4096 * 4096 * 4096, bytes = 3.0 * 4096 * 4096 * 2;
  EXPECT_NEAR(rooflineTime(flops, bytes, 989e12, 3.35e12), flops / 989e12, 1e-15);
  // An elementwise add of 16M bf16 values: memory-bound, plus launch.
  EXPECT_NEAR(rooflineTime(16e6, 3 * 16e6 * 2, 989e12, 3.35e12, 4e-6),
              96e6 / 3.35e12 + 4e-6, 1e-15);
}

TEST(CostModel, PipelineBubble) {
  EXPECT_DOUBLE_EQ(pipelineBubble(1, 1), 0.0);
  EXPECT_DOUBLE_EQ(pipelineBubble(4, 8), 3.0 / 11.0);     // (P-1)/(M+P-1)
  EXPECT_DOUBLE_EQ(pipelineBubble(4, 8, 2), 3.0 / 19.0);  // (P-1)/(VM+P-1)
  EXPECT_DOUBLE_EQ(pipelineBubble(2, 1), 0.5);
  // stageTime * (M + (P-1)/V).
  EXPECT_DOUBLE_EQ(pipelineTime(1.0, 4, 8), 11.0);
  EXPECT_DOUBLE_EQ(pipelineTime(1.0, 4, 8, 2), 9.5);
  // The bubble is the idle share of that time.
  EXPECT_DOUBLE_EQ(1.0 - 8.0 / pipelineTime(1.0, 4, 8), pipelineBubble(4, 8));
}

TEST(CostModel, Overlap) {
  EXPECT_DOUBLE_EQ(overlappedTime(1.0, 0.5, 1), 1.5); // exposed: the sum
  // Two pieces, equal times: 0.5 + 0.5 + 0.5.
  EXPECT_DOUBLE_EQ(overlappedTime(1.0, 1.0, 2), 1.5);
  // Four pieces of 0.25 compute and 0.125 comm: 0.25 + 3 * 0.25 + 0.125.
  EXPECT_DOUBLE_EQ(overlappedTime(1.0, 0.5, 4), 1.125);
  // Communication-bound: compute hides, not communication.
  EXPECT_DOUBLE_EQ(overlappedTime(0.5, 1.0, 2), 0.25 + 0.5 + 0.5);
}

TEST(CostModel, CollectiveMatmul) {
  // 8 MFLOP at 1 TFLOP/s (8 us), an all-reduce of 8000 B over 2 ranks on
  // 8 GB/s with 1 us per step: 2 steps + 8000/8e9 s = 3 us.
  CollectiveMatmul cm;
  cm.flops = 8e6;
  cm.commBytes = 8000;
  cm.ranks = 2;
  DeviceRates rates{1e12, 1e15, 0};
  Link link{"l", 8e9, 1e-6};
  EXPECT_NEAR(collectiveMatmulTime(cm, 1, rates, link), 11e-6, 1e-15);
  // Two pieces of 4 us and 2 + 0.5 us: 4 + 4 + 2.5.
  EXPECT_NEAR(collectiveMatmulTime(cm, 2, rates, link), 10.5e-6, 1e-15);
  // Four of 2 us and 2 + 0.25 us: the latency is paid per piece, 2 + 3 *
  // 2.25 + 2.25 = 11 us: more pieces lose.
  EXPECT_NEAR(collectiveMatmulTime(cm, 4, rates, link), 11e-6, 1e-15);
  ChunkChoice best = bestCollectiveMatmul(cm, 8, rates, link);
  EXPECT_EQ(best.chunks, 2);
  EXPECT_NEAR(best.time, 10.5e-6, 1e-15);
  // Pieces that do not divide the rows are skipped.
  EXPECT_EQ(bestCollectiveMatmul(cm, 8, rates, link,
                                 [](int64_t c) { return c != 2; })
                .chunks,
            1);
  // Every piece reads the whole weight: a memory-bound product (1 MB of
  // weights at 1 GB/s = 1 ms, compute negligible) only loses by cutting.
  cm.weightBytes = 1e6;
  DeviceRates slow{1e12, 1e9, 0};
  EXPECT_EQ(bestCollectiveMatmul(cm, 8, slow, link).chunks, 1);
  // Splitting and concatenating 1 MB (input and output) at 1e15 B/s: each
  // byte read and written once, 2 MB in 2 ns, plus two 1 us launches, on
  // top of the pipeline.
  cm.weightBytes = 0;
  cm.copyBytes = 1e6;
  DeviceRates launching{1e12, 1e15, 1e-6};
  // One piece: 8 us + 1 us launch, then 3 us: no copy.
  EXPECT_NEAR(collectiveMatmulTime(cm, 1, launching, link), 12e-6, 1e-15);
  // Two: (4 + 1) + 5 + 2.5 us, and 2 ns + 2 · 1 us.
  EXPECT_NEAR(collectiveMatmulTime(cm, 2, launching, link),
              12.5e-6 + 2e-9 + 2e-6, 1e-15);
  EXPECT_DOUBLE_EQ(pipelinedTime(1.0, 0.5, 1), 1.5);
  EXPECT_DOUBLE_EQ(pipelinedTime(1.0, 0.5, 3), 1.0 + 2 * 1.0 + 0.5);
}

TEST(CostModel, KvCache) {
  // Llama-3-70B at 8k context in bf16: 80 layers, 8 kv heads of 128:
  // 8192 * 80 * 8 * 128 * 2 * 2 B = 2.5 GiB (320 KiB per token).
  EXPECT_DOUBLE_EQ(kvCacheBytes(1, 8192, 80, 8, 128, 2), 2.5 * 1024 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(kvCacheBytes(1, 1, 80, 8, 128, 2), 320.0 * 1024);
  EXPECT_DOUBLE_EQ(kvCacheBytes(4, 8192, 80, 8, 128, 2), 10.0 * 1024 * 1024 * 1024);
}
