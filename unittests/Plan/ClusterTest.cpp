//===- ClusterTest.cpp - cluster JSON parsing and link choice -------------===//

#include "parc/Plan/Cluster.h"

#include <gtest/gtest.h>

using namespace parc::plan;

namespace {

const char *kValid = R"({
  "name": "t", "devices_per_node": 8,
  "device": {"name": "d", "peak_tflops": {"bf16": 100, "f32": 10},
             "memory_gib": 80, "memory_bandwidth_gb_s": 2000,
             "compute_efficiency": 0.5},
  "intra_node": {"name": "nvl", "bandwidth_gb_s": 300, "latency_us": 2},
  "inter_node": {"name": "ib", "bandwidth_gb_s": 25, "latency_us": 10}
})";

std::string errorOf(const char *text) {
  auto c = parseCluster(text, "f.json");
  if (c)
    return "";
  return llvm::toString(c.takeError());
}

} // namespace

TEST(Cluster, ParsesUnits) {
  auto c = parseCluster(kValid, "f.json");
  ASSERT_TRUE(!!c) << llvm::toString(c.takeError());
  EXPECT_EQ(c->name, "t");
  EXPECT_DOUBLE_EQ(c->memoryBytes, 80.0 * 1024 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(c->memoryBandwidth, 2000e9);
  EXPECT_DOUBLE_EQ(c->intraNode.bandwidth, 300e9);
  EXPECT_DOUBLE_EQ(c->interNode.latency, 10e-6);
  EXPECT_DOUBLE_EQ(c->computeEfficiency, 0.5);
  EXPECT_DOUBLE_EQ(c->memoryEfficiency, 1.0); // default
  EXPECT_DOUBLE_EQ(*c->flopsFor("bf16"), 100e12);
  auto missing = c->flopsFor("f16");
  ASSERT_FALSE(!!missing);
  EXPECT_EQ(llvm::toString(missing.takeError()),
            "cluster 't' gives no peak_tflops for dtype 'f16' (it has: bf16, f32)");
}

TEST(Cluster, LinkBySpan) {
  auto c = parseCluster(kValid, "f.json");
  ASSERT_TRUE(!!c);
  EXPECT_EQ(c->linkFor(8, 1).name, "nvl");  // one node
  EXPECT_EQ(c->linkFor(16, 1).name, "ib");  // two nodes
  EXPECT_EQ(c->linkFor(2, 4).name, "nvl");  // ranks 0 and 4
  EXPECT_EQ(c->linkFor(2, 8).name, "ib");   // ranks 0 and 8
  EXPECT_EQ(c->linkFor(1, 64).name, "nvl"); // alone
}

TEST(Cluster, ErrorsNameFileAndPath) {
  EXPECT_EQ(errorOf("{").rfind("f.json: not valid JSON: [1:", 0), 0u);
  EXPECT_EQ(errorOf(R"({"name": "x", "devices_per_node": 8})"),
            "f.json: missing required object at cluster.device");
  std::string text = kValid;
  text.replace(text.find("\"memory_gib\": 80"), 16, "\"memory_gib\": -1");
  EXPECT_EQ(errorOf(text.c_str()),
            "f.json: expected a positive number at cluster.device.memory_gib");
  text = kValid;
  text.replace(text.find("0.5"), 3, "1.5");
  EXPECT_EQ(errorOf(text.c_str()),
            "f.json: expected a fraction in (0, 1] at cluster.device.compute_efficiency");
  text = kValid;
  text.replace(text.find("\"devices_per_node\": 8"), 21,
               "\"devices_per_node\": 8, \"compute_slots_per_node\": -2");
  EXPECT_EQ(errorOf(text.c_str()), "f.json: expected 0 (all devices) or a positive "
                                   "integer at cluster.compute_slots_per_node");
  text = kValid;
  text.replace(text.find("\"inter_node\""), 12, "\"other_node\"");
  EXPECT_EQ(errorOf(text.c_str()),
            "f.json: missing required object (omit it only with \"nodes\": 1) at "
            "cluster.inter_node");
}

TEST(Cluster, RoundTrip) {
  auto c = parseCluster(kValid, "f.json");
  ASSERT_TRUE(!!c);
  std::string text;
  llvm::raw_string_ostream os(text);
  os << toJSON(*c);
  auto again = parseCluster(text, "round-trip");
  ASSERT_TRUE(!!again) << llvm::toString(again.takeError());
  EXPECT_DOUBLE_EQ(again->memoryBytes, c->memoryBytes);
  EXPECT_DOUBLE_EQ(again->interNode.bandwidth, c->interNode.bandwidth);
  EXPECT_DOUBLE_EQ(*again->flopsFor("f32"), 10e12);
}
