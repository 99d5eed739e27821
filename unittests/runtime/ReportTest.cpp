//===- ReportTest.cpp - latency statistics and the run's JSON figures -----===//

#include "program/report.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <sstream>

namespace {

// Nearest rank: the p-th percentile of n sorted times is the ceil(p/100*n)-th.
TEST(ReportTest, NearestRankPercentiles) {
  std::vector<double> times;
  for (int i = 100; i >= 1; --i) // unsorted on purpose
    times.push_back(i);
  parc::rt::LatencyStats s = parc::rt::latencyStats(times);
  EXPECT_EQ(s.min, 1);
  EXPECT_EQ(s.p50, 50);
  EXPECT_EQ(s.p90, 90);
  EXPECT_EQ(s.p99, 99);
  EXPECT_DOUBLE_EQ(s.mean, 50.5);
  // Ten runs: p99 is the slowest (ceil(9.9) = 10), p50 the 5th.
  s = parc::rt::latencyStats({3, 1, 4, 1.5, 9, 2.6, 5, 3.5, 8, 7});
  EXPECT_EQ(s.p50, 3.5);
  EXPECT_EQ(s.p90, 8);
  EXPECT_EQ(s.p99, 9);
  // One run: every statistic is that run.
  s = parc::rt::latencyStats({2.5});
  EXPECT_EQ(s.min, 2.5);
  EXPECT_EQ(s.p99, 2.5);
  EXPECT_EQ(s.mean, 2.5);
}

TEST(ReportTest, JsonNamesEveryStatistic) {
  parc::rt::RunReport r;
  r.runs = 2;
  r.timesMs = {1.0, 3.0};
  r.tokens = 16;
  r.tokenInput = "ids \"q\"";
  r.tokenShape = {2, 8};
  r.ranks = {{"rank 0", -1, -1, 0.5, 0.25}};
  std::string path = ::testing::TempDir() + "report.json";
  ASSERT_TRUE(parc::rt::writeReport(r, path));
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  const std::string s = text.str();
  EXPECT_NE(
      s.find("\"latency_ms\": {\"min\": 1, \"p50\": 1, \"p90\": 3, \"p99\": 3, "
             "\"mean\": 2}"),
      std::string::npos)
      << s;
  EXPECT_NE(s.find("\"runs_ms\": [1, 3]"), std::string::npos) << s;
  EXPECT_NE(s.find("\"token_input\": \"ids \\\"q\\\"\""), std::string::npos)
      << s;
  // 16 tokens per forward at a mean of 2 ms.
  EXPECT_NE(s.find("\"tokens_per_s\": 8000"), std::string::npos) << s;
  EXPECT_NE(s.find("\"mean_forward_ms\": null"), std::string::npos) << s;
  EXPECT_NE(s.find("\"mean_comm_exposed_ms\": 0.25"), std::string::npos) << s;
  std::remove(path.c_str());
}

} // namespace
