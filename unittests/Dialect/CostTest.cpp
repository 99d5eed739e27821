//===- CostTest.cpp - nn's CostOpInterface ----------------------*- C++ -*-===//
//
// FLOPs and traffic of each op family against counts worked out by hand in
// the comments (the conventions of NNInterfaces.td), and a check that no
// nn op is left without a cost model.
//
//===----------------------------------------------------------------------===//

#include "nn/NNCost.h"
#include "nn/NNDialect.h"
#include "nn/NNOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

#include <gtest/gtest.h>

using namespace mlir;
using parc::nn::CostOpInterface;
using parc::nn::Traffic;

namespace {

class CostTest : public ::testing::Test {
protected:
  CostTest() {
    ctx.loadDialect<parc::nn::NNDialect, func::FuncDialect,
                    arith::ArithDialect>();
  }

  /// The op named `name` in `func.func @f` of `body`'s module.
  CostOpInterface parse(StringRef body, StringRef name) {
    module = parseSourceString<ModuleOp>(body, &ctx);
    EXPECT_TRUE(module) << body.str();
    Operation *found = nullptr;
    if (module)
      module->walk([&](Operation *op) {
        if (!found && op->getName().getStringRef() == name)
          found = op;
      });
    EXPECT_TRUE(found) << name.str();
    auto cost = dyn_cast_or_null<CostOpInterface>(found);
    EXPECT_TRUE(cost) << name.str() << " has no cost model";
    return cost;
  }

  static Traffic traffic(int64_t act, int64_t weights, int64_t actBytes,
                         int64_t weightBytes) {
    return Traffic{act, weights, actBytes, weightBytes};
  }

  MLIRContext ctx;
  OwningOpRef<ModuleOp> module;
};

void expectTraffic(CostOpInterface op, Traffic want) {
  Traffic got = op.getTraffic();
  EXPECT_EQ(got.activationElems, want.activationElems);
  EXPECT_EQ(got.weightElems, want.weightElems);
  EXPECT_EQ(got.activationBytes, want.activationBytes);
  EXPECT_EQ(got.weightBytes, want.weightBytes);
}

TEST_F(CostTest, Linear) {
  auto op = parse(R"(
    func.func @f(%x: tensor<2x8x32xf32>, %w: tensor<32x128xf32>, %b: tensor<128xf32>) -> tensor<2x8x128xf32> {
      %y = nn.linear %x, %w, %b : (tensor<2x8x32xf32>, tensor<32x128xf32>, tensor<128xf32>) -> tensor<2x8x128xf32>
      return %y : tensor<2x8x128xf32>
    })",
                  "nn.linear");
  // 2 · (2·8·128 = 2048 outputs) · K 32.
  EXPECT_EQ(op.getFlops(), 131072);
  // Activations 512 in + 2048 out; weights 4096 + 128 bias; f32.
  expectTraffic(op, traffic(2560, 4224, 10240, 16896));
  EXPECT_EQ(op.getBytes(), 27136);
}

TEST_F(CostTest, LinearBytesAtIRWidth) {
  auto op = parse(R"(
    func.func @f(%x: tensor<4x16xbf16>, %w: tensor<8x16xbf16>) -> tensor<4x8xbf16> {
      %y = nn.linear %x, %w {transpose_weight = true} : (tensor<4x16xbf16>, tensor<8x16xbf16>) -> tensor<4x8xbf16>
      return %y : tensor<4x8xbf16>
    })",
                  "nn.linear");
  // 2 · 32 · 16; 64 + 32 activations and 128 weights, 2 bytes each.
  EXPECT_EQ(op.getFlops(), 1024);
  expectTraffic(op, traffic(96, 128, 192, 256));
}

TEST_F(CostTest, MatMulAndGemm) {
  auto mm = parse(R"(
    func.func @f(%q: tensor<2x4x8x16xf32>, %k: tensor<2x4x16x8xf32>) -> tensor<2x4x8x8xf32> {
      %s = nn.matmul %q, %k : (tensor<2x4x8x16xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x8x8xf32>
      return %s : tensor<2x4x8x8xf32>
    })",
                  "nn.matmul");
  // 2 · 512 outputs · K 16; both operands computed: 1024 + 1024 + 512.
  EXPECT_EQ(mm.getFlops(), 16384);
  expectTraffic(mm, traffic(2560, 0, 10240, 0));
  auto gemm = parse(R"(
    func.func @f(%a: tensor<32x2xf32>, %b: tensor<32x16xf32>) -> tensor<2x16xf32> {
      %y = nn.gemm %a, %b {trans_a = true} : (tensor<32x2xf32>, tensor<32x16xf32>) -> tensor<2x16xf32>
      return %y : tensor<2x16xf32>
    })",
                    "nn.gemm");
  // trans_a: K is a's dim 0 (32): 2 · 32 outputs · 32.
  EXPECT_EQ(gemm.getFlops(), 2048);
}

TEST_F(CostTest, GroupedQueryAttention) {
  auto op = parse(R"(
    func.func @f(%q: tensor<1x8x16x64xf32>, %k: tensor<1x2x32x64xf32>, %v: tensor<1x2x32x64xf32>) -> tensor<1x8x16x64xf32> {
      %o = nn.attention %q, %k, %v {scale = 0.125 : f32} : (tensor<1x8x16x64xf32>, tensor<1x2x32x64xf32>, tensor<1x2x32x64xf32>) -> tensor<1x8x16x64xf32> {
      ^bb0(%s: tensor<1x8x16x32xf32>):
        nn.yield %s : tensor<1x8x16x32xf32>
      }
      return %o : tensor<1x8x16x64xf32>
    })",
                  "nn.attention");
  // Over the 8 query heads (not the 2 kv heads): B·H·S·T = 1·8·16·32 =
  // 4096 scores; 2 · 4096 · (D 64 + Dv 64) + 7 · 4096 = 1048576 + 28672.
  EXPECT_EQ(op.getFlops(), 1077248);
  // q 8192 + k 4096 + v 4096 + out 8192.
  expectTraffic(op, traffic(24576, 0, 98304, 0));
}

TEST_F(CostTest, NormsAndSoftmax) {
  const char *ir = R"(
    func.func @f(%x: tensor<2x8x32xf32>, %s: tensor<2x4x8x8xf32>) -> (tensor<2x8x32xf32>, tensor<2x8x32xf32>, tensor<2x4x8x8xf32>) {
      %g = arith.constant dense<1.0> : tensor<32xf32>
      %b = arith.constant dense<0.0> : tensor<32xf32>
      %y = nn.layer_norm %x, %g, %b {axis = 2 : i64, epsilon = 1.0e-05 : f32} : (tensor<2x8x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<2x8x32xf32>
      %r = nn.rms_norm %x, %g {axis = 2 : i64, epsilon = 1.0e-06 : f32} : (tensor<2x8x32xf32>, tensor<32xf32>) -> tensor<2x8x32xf32>
      %p = nn.softmax %s {axis = 3 : i64} : tensor<2x4x8x8xf32>
      return %y, %r, %p : tensor<2x8x32xf32>, tensor<2x8x32xf32>, tensor<2x4x8x8xf32>
    })";
  // 5 per element of 2·8·32 = 512; x in and out, the constant scale and
  // bias as weights.
  auto ln = parse(ir, "nn.layer_norm");
  EXPECT_EQ(ln.getFlops(), 2560);
  expectTraffic(ln, traffic(1024, 64, 4096, 256));
  auto rms = parse(ir, "nn.rms_norm");
  EXPECT_EQ(rms.getFlops(), 2560);
  expectTraffic(rms, traffic(1024, 32, 4096, 128));
  // 5 per score of 2·4·8·8 = 512.
  auto sm = parse(ir, "nn.softmax");
  EXPECT_EQ(sm.getFlops(), 2560);
  expectTraffic(sm, traffic(1024, 0, 4096, 0));
}

TEST_F(CostTest, Elementwise) {
  const char *ir = R"(
    func.func @f(%x: tensor<2x8x32xf32>) -> (tensor<2x8x32xf32>, tensor<2x8x32xf32>, tensor<16x32xf32>, tensor<2x8x1xf32>) {
      %c = arith.constant dense<1.0> : tensor<32xf32>
      %a = nn.add %x, %c : (tensor<2x8x32xf32>, tensor<32xf32>) -> tensor<2x8x32xf32>
      %g = nn.gelu %x : tensor<2x8x32xf32>
      %r = nn.reshape %x : tensor<2x8x32xf32> to tensor<16x32xf32>
      %s = nn.reduce_sum %x {axes = array<i64: 2>, keepdims = true} : tensor<2x8x32xf32> -> tensor<2x8x1xf32>
      return %a, %g, %r, %s : tensor<2x8x32xf32>, tensor<2x8x32xf32>, tensor<16x32xf32>, tensor<2x8x1xf32>
    })";
  // One per output element; the broadcast constant is a weight.
  auto add = parse(ir, "nn.add");
  EXPECT_EQ(add.getFlops(), 512);
  expectTraffic(add, traffic(1024, 32, 4096, 128));
  // A transcendental activation: 8 per element.
  auto gelu = parse(ir, "nn.gelu");
  EXPECT_EQ(gelu.getFlops(), 4096);
  expectTraffic(gelu, traffic(1024, 0, 4096, 0));
  // A view: no kernel, nothing moved.
  auto view = parse(ir, "nn.reshape");
  EXPECT_EQ(view.getFlops(), 0);
  expectTraffic(view, Traffic());
  // A reduction: one per input element (512), not per output (16).
  auto sum = parse(ir, "nn.reduce_sum");
  EXPECT_EQ(sum.getFlops(), 512);
  expectTraffic(sum, traffic(528, 0, 2112, 0));
}

TEST_F(CostTest, EmbeddingGatherReadsRows) {
  auto op = parse(R"(
    func.func @f(%ids: tensor<2x8xi64>) -> tensor<2x8x32xf32> {
      %t = arith.constant dense<1.0> : tensor<64x32xf32>
      %e = nn.gather %t, %ids {axis = 0 : i64} : (tensor<64x32xf32>, tensor<2x8xi64>) -> tensor<2x8x32xf32>
      return %e : tensor<2x8x32xf32>
    })",
                  "nn.gather");
  // 16 i64 indices, 512 rows read and 512 written; not the 2048 of the table.
  EXPECT_EQ(op.getFlops(), 0);
  expectTraffic(op, traffic(1040, 0, 16 * 8 + 1024 * 4, 0));
}

TEST_F(CostTest, Moe) {
  auto moe = parse(R"(
    func.func @f(%x: tensor<16x32xf32>, %l: tensor<16x4xf32>, %w1: tensor<4x32x64xf32>, %w2: tensor<4x64x32xf32>, %w3: tensor<4x32x64xf32>) -> tensor<16x32xf32> {
      %y = nn.moe %x, %l, %w1, %w2, %w3 {top_k = 2 : i64} : (tensor<16x32xf32>, tensor<16x4xf32>, tensor<4x32x64xf32>, tensor<4x64x32xf32>, tensor<4x32x64xf32>) -> tensor<16x32xf32>
      return %y : tensor<16x32xf32>
    })",
                   "nn.moe");
  // 16 tokens × top-2 through three [32, 64] products: 32 · 2·3·2048 =
  // 393216, plus 5 per router logit (16·4): 320.
  EXPECT_EQ(moe.getFlops(), 393536);
  // x 512 + logits 64 + out 512; every expert's three 2048-element
  // matrices: 4 · 3 · 2048.
  expectTraffic(moe, traffic(1088, 24576, 4352, 98304));
}

TEST_F(CostTest, ExpertParallelSteps) {
  const char *ir = R"(
    func.func @f(%rows: tensor<16x32xf32>, %layout: tensor<2x2xi64>, %w1: tensor<2x32x64xf32>, %w2: tensor<2x64x32xf32>, %pairs: tensor<16xi64>, %w: tensor<8x2xf32>) -> tensor<8x32xf32> {
      %o = nn.moe_experts %rows, %layout, %w1, %w2 : (tensor<16x32xf32>, tensor<2x2xi64>, tensor<2x32x64xf32>, tensor<2x64x32xf32>) -> tensor<16x32xf32>
      %y = nn.moe_combine %o, %pairs, %w : (tensor<16x32xf32>, tensor<16xi64>, tensor<8x2xf32>) -> tensor<8x32xf32>
      return %y : tensor<8x32xf32>
    })";
  // The static bound: 16 rows through two [32, 64] products: 16 · 2·2·2048.
  auto experts = parse(ir, "nn.moe_experts");
  EXPECT_EQ(experts.getFlops(), 131072);
  // rows 512 + layout 4 (i64) + out 512; 2 · 2 · 2048 weights.
  expectTraffic(experts, traffic(1028, 8192, 512 * 4 + 4 * 8 + 512 * 4,
                                 8192 * 4));
  // Each of 8·32 outputs sums top-2 weighted rows: 2 · 2 · 256.
  auto combine = parse(ir, "nn.moe_combine");
  EXPECT_EQ(combine.getFlops(), 1024);
}

TEST_F(CostTest, EveryOpHasACostModel) {
  int64_t ops = 0;
  for (RegisteredOperationName name : ctx.getRegisteredOperations()) {
    if (name.getDialectNamespace() != "nn")
      continue;
    ++ops;
    EXPECT_TRUE(name.hasInterface<CostOpInterface>())
        << name.getStringRef().str() << " has no cost model";
  }
  EXPECT_GT(ops, 50);
}

} // namespace
