//===- OpTableTest.cpp - the importer's op table vs ONNX --------*- C++ -*-===//
//
// Each entry of the op table names the schema versions its handler
// implements. They must be exactly the versions the importer's schemas
// resolve the op to at the opsets parc reads: a kMaxOnnxOpset bump that
// brings a new version of an op fails here until its entry declares it (and
// its handler implements it), and a version no opset reaches is dead.
//
//===----------------------------------------------------------------------===//

#include "parc/Import/Onnx/OpTable.h"

#include "llvm/ADT/Twine.h"

#include <gtest/gtest.h>

#include <set>

using namespace parc;

namespace {

/// The opsets a model may import for `domain`: the default domain's that
/// parc reads; another domain's from its first version (onnxruntime's
/// com.microsoft has only 1).
std::pair<int64_t, int64_t> opsets(llvm::StringRef domain) {
  if (domain.empty())
    return {kMinOnnxOpset, kMaxOnnxOpset};
  return {1, kMaxOnnxOpset};
}

std::string name(const OnnxOp &op) {
  return op.domain.empty() ? op.type.str() : (op.domain + "." + op.type).str();
}

TEST(OpTable, EntriesDeclareExactlyTheResolvedVersions) {
  for (const OnnxOp *op : onnxOpTable()) {
    auto [from, to] = opsets(op->domain);
    std::set<int> resolved;
    for (int64_t opset = from; opset <= to; ++opset) {
      if (std::optional<int> version = onnxSchemaVersion(*op, opset))
        resolved.insert(*version);
      EXPECT_EQ(checkOnnxOpVersion(*op, opset), std::nullopt) << name(*op);
    }
    EXPECT_FALSE(resolved.empty()) << name(*op) << " has no schema";
    for (int version : op->versions)
      EXPECT_TRUE(resolved.count(version))
          << name(*op) << " declares version " << version
          << ", which no opset from " << from << " to " << to << " reaches";
  }
}

TEST(OpTable, EntriesAreDistinct) {
  std::set<std::string> seen;
  for (const OnnxOp *op : onnxOpTable())
    EXPECT_TRUE(seen.insert(name(*op)).second) << name(*op) << " twice";
}

TEST(OpTable, RefusesAnUndeclaredVersion) {
  OnnxOp split{"", "Split", {11, 13}};
  EXPECT_EQ(checkOnnxOpVersion(split, 17), std::nullopt);
  EXPECT_EQ(checkOnnxOpVersion(split, 18),
            "parc imports Split versions 11, 13; opset 18 resolves to "
            "version 18");
  OnnxOp attention{"com.microsoft", "Attention", {2}};
  EXPECT_EQ(checkOnnxOpVersion(attention, 1),
            "parc imports com.microsoft.Attention version 2; com.microsoft "
            "opset 1 resolves to version 1");
}

TEST(OpTable, NoSchemaIsLeftToTheChecker) {
  // Gelu has no schema before opset 20; the ONNX checker names that.
  EXPECT_EQ(checkOnnxOpVersion(OnnxOp{"", "Gelu", {20}}, 17), std::nullopt);
}

} // namespace
