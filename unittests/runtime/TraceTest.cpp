//===- TraceTest.cpp - the run timeline and the pipeline busy time --------===//

#include "program/trace.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdlib.h>
#include <thread>

namespace {

void sleepMs(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

std::string slurp(const std::string &path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(TraceTest, BusyTimeLeavesOutPipelineWaitsOnly) {
  unsetenv("PARC_RT_TRACE");
  parc::rt::Trace t;
  t.configure(/*measure=*/true);
  // A kernel's span is the time since the previous check: 20 ms of
  // compute, then 30 ms waiting for a neighbour stage.
  t.beginForward(/*timed=*/true);
  sleepMs(20);
  t.record("n0", nullptr);      // compute
  t.record("n1", "all_reduce"); // a collective: the stage's own work
  sleepMs(30);
  t.record("n2", "recv_wait");  // waiting for a neighbour stage: idle
  t.record("n3", "recv_start"); // idle too
  t.stopRecording();
  sleepMs(10);
  t.record("late", nullptr); // after the forward: not counted as work
  t.endForward(/*timed=*/true);
  // Lower bounds only: a loaded machine only stretches the sleeps.
  EXPECT_GE(t.busySeconds(), 0.020);
  EXPECT_GE(t.forwardSeconds() - t.busySeconds(), 0.040);
  // Without PARC_RT_TRACE nothing is written.
  EXPECT_TRUE(t.write(0, "rank 0"));
}

TEST(TraceTest, UntimedRunsAreNotCounted) {
  unsetenv("PARC_RT_TRACE");
  parc::rt::Trace t;
  t.configure(/*measure=*/true);
  t.beginForward(/*timed=*/false);
  t.record("n0", nullptr);
  t.stopRecording();
  t.endForward(/*timed=*/false);
  EXPECT_EQ(t.forwardSeconds(), 0.0);
  EXPECT_EQ(t.busySeconds(), 0.0);
}

TEST(TraceTest, WritesChromeTraceEventsPerTrack) {
  char dir[] = "/tmp/parc-rt-trace-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  std::string prefix = std::string(dir) + "/t.json";
  setenv("PARC_RT_TRACE", prefix.c_str(), 1);
  parc::rt::Trace t;
  t.configure(/*measure=*/false);
  unsetenv("PARC_RT_TRACE");
  t.beginForward(/*timed=*/true);
  t.record("/h.0/attn \"q\"", nullptr);
  t.record("/h.0/send", "send_start");
  t.stopRecording();
  t.endForward(/*timed=*/true);
  ASSERT_TRUE(t.write(3, "rank 3 (stage 1, tp 1)"));
  std::string file = prefix + ".rank3.json";
  std::string json = slurp(file);
  // A row per rank (pid), named; compute on track 0, communication on 1;
  // node names escaped.
  EXPECT_NE(json.find("\"traceEvents\""), std::string::npos);
  EXPECT_NE(json.find("\"name\": \"rank 3 (stage 1, tp 1)\""), std::string::npos);
  EXPECT_NE(json.find("\"pid\": 3, \"tid\": 0, \"cat\": \"compute\""), std::string::npos);
  EXPECT_NE(json.find("\"pid\": 3, \"tid\": 1, \"cat\": \"comm\""), std::string::npos);
  EXPECT_NE(json.find("\"/h.0/attn \\\"q\\\"\""), std::string::npos);
  EXPECT_NE(json.find("\"send_start /h.0/send\""), std::string::npos);
  std::remove(file.c_str());
  std::remove(dir);
}

} // namespace
