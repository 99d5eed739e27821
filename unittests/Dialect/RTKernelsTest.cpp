//===- RTKernelsTest.cpp - the compiler -> runtime contract -----*- C++ -*-===//
//
// Ties dialects/rt/RTKernels.td to the ops convert-nn-to-rt lowers: every
// kernel has a producer that exists, every nn/dist op has a kernel or says
// why it needs none, and a kernel named after its op takes exactly that
// op's attributes as parameters. (runtime.h is checked at build time by
// the generated RTABICheck.cpp.)
//
//===----------------------------------------------------------------------===//

#include "rt/RTKernels.h"
#include "dist/DistDialect.h"
#include "nn/NNDialect.h"
#include "rt/RTDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/StringSet.h"

#include <gtest/gtest.h>

using namespace mlir;
namespace rt = parc::rt;

namespace {

class RTKernelsTest : public ::testing::Test {
protected:
  RTKernelsTest() {
    ctx.loadDialect<parc::nn::NNDialect, parc::dist::DistDialect, rt::RTDialect,
                    func::FuncDialect>();
  }
  MLIRContext ctx;
};

TEST_F(RTKernelsTest, EveryKernelHasAProducerThatExists) {
  for (const rt::KernelDecl &k : rt::getKernels()) {
    EXPECT_FALSE(k.producers.empty()) << k.name.str() << " has no producer";
    for (StringRef producer : k.producers)
      EXPECT_TRUE(RegisteredOperationName::lookup(producer, &ctx))
          << k.name.str() << ": producer " << producer.str() << " is not an op";
  }
}

TEST_F(RTKernelsTest, EveryOpHasAKernelOrNeedsNone) {
  llvm::StringSet<> covered;
  for (const rt::KernelDecl &k : rt::getKernels())
    for (StringRef producer : k.producers)
      covered.insert(producer);
  for (const rt::NoKernelOp &op : rt::getOpsWithoutKernel()) {
    EXPECT_TRUE(RegisteredOperationName::lookup(op.op, &ctx)) << op.op.str();
    covered.insert(op.op);
  }
  for (RegisteredOperationName op : ctx.getRegisteredOperations()) {
    StringRef ns = op.getDialectNamespace();
    if (ns != "nn" && ns != "dist")
      continue;
    EXPECT_TRUE(covered.contains(op.getStringRef()))
        << op.getStringRef().str()
        << " has no runtime kernel in RTKernels.td (nor an RT_NoKernel)";
  }
}

/// A kernel lowered from the op of its name (nn.softmax, dist.all_gather)
/// gets that op's attributes: they must be its parameters, all of them.
TEST_F(RTKernelsTest, GenericLoweringsPassTheDeclaredParameters) {
  for (const rt::KernelDecl &k : rt::getKernels())
    for (StringRef producer : k.producers) {
      StringRef name = producer.split('.').second;
      name.consume_back("_start");
      if (name != k.name)
        continue;
      auto op = RegisteredOperationName::lookup(producer, &ctx);
      ASSERT_TRUE(op) << producer.str();
      llvm::StringSet<> attrs;
      for (StringAttr attr : op->getAttributeNames())
        if (attr.getValue() != "operandSegmentSizes")
          attrs.insert(attr.getValue());
      for (StringRef attr : attrs.keys())
        EXPECT_TRUE(k.lookupParam(attr))
            << producer.str() << " has attribute '" << attr.str()
            << "', which kernel " << k.name.str() << " does not declare";
      for (const rt::KernelParam &p : k.params)
        EXPECT_TRUE(p.annotation || attrs.contains(p.name))
            << k.name.str() << " declares parameter '" << p.name.str()
            << "', which " << producer.str() << " does not have";
    }
}

TEST_F(RTKernelsTest, EveryKernelCallsADeclaredEntry) {
  for (const rt::KernelDecl &k : rt::getKernels()) {
    EXPECT_TRUE(rt::getEntryArity(k.entry)) << k.entry.str();
    if (k.hasStart) {
      EXPECT_TRUE(rt::getEntryArity((k.entry + "_start").str()))
          << k.entry.str();
    }
    EXPECT_EQ(rt::lookupKernel(k.name), &k);
    EXPECT_EQ(rt::kernelName(k.kernel), k.name);
  }
  EXPECT_EQ(rt::getEntryArity("parc_rt_matmul"), 10u);
  EXPECT_EQ(rt::getEntryArity("parc_rt_all_reduce_start"), 7u);
  EXPECT_FALSE(rt::lookupKernel("fft"));
}

/// An annotation is a dialect-prefixed attribute of one of the kernel's
/// producers, never a parameter of the C call.
TEST_F(RTKernelsTest, AnnotationsAreDialectPrefixed) {
  for (const rt::KernelDecl &k : rt::getKernels())
    for (const rt::KernelParam &p : k.params) {
      auto [ns, rest] = p.name.split('.');
      EXPECT_EQ(p.annotation, !rest.empty())
          << k.name.str() << ": parameter '" << p.name.str()
          << "' must be an RT_Annotation exactly when it is prefixed";
      if (p.annotation) {
        EXPECT_TRUE(p.optional) << p.name.str();
        EXPECT_TRUE(ctx.getLoadedDialect(ns)) << p.name.str();
      }
    }
}

} // namespace
