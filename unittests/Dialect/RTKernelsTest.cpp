//===- RTKernelsTest.cpp - the compiler -> runtime contract -----*- C++ -*-===//
//
// Ties dialects/rt/RTKernels.td to the ops convert-nn-to-rt lowers: every
// kernel has a producer that exists, every nn/dist op has a kernel or says
// why it needs none, and a kernel named after its op takes exactly that
// op's attributes as parameters, and every function of runtime.h /
// program.h is an entry generated code calls or deliberately runtime-only.
// (The entries' signatures are checked at build time by the generated
// RTABICheck.cpp.)
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

#include <algorithm>
#include <cctype>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

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

/// Every entry is called by a kernel or around kernels, and a `_start`
/// form is reached by a started producer (`dist.<op>_start`).
TEST_F(RTKernelsTest, EveryEntryHasACaller) {
  llvm::StringSet<> called, started;
  for (const rt::KernelDecl &k : rt::getKernels()) {
    called.insert(k.entry);
    if (llvm::any_of(k.producers,
                     [](StringRef p) { return p.ends_with("_start"); }))
      started.insert((k.entry + "_start").str());
  }
  for (const rt::EntryDecl &e : rt::getEntries()) {
    if (e.support)
      continue;
    StringRef symbol = e.symbol;
    if (symbol.ends_with("_start"))
      EXPECT_TRUE(started.contains(symbol))
          << symbol.str() << ": no producer starts it (declare the entry "
          << "without hasStart, or the runtime function RT_RuntimeOnly)";
    else
      EXPECT_TRUE(called.contains(symbol))
          << symbol.str() << " is called by no kernel";
  }
}

/// The text of a C header without comments and preprocessor lines.
std::string codeOf(const std::string &path) {
  std::ifstream in(path);
  EXPECT_TRUE(in) << "cannot read " << path;
  std::string text((std::istreambuf_iterator<char>(in)),
                   std::istreambuf_iterator<char>());
  std::string code;
  bool lineStart = true;
  for (size_t i = 0; i < text.size();) {
    if (text.compare(i, 2, "/*") == 0) {
      i = std::min(text.find("*/", i + 2), text.size() - 2) + 2;
    } else if (text.compare(i, 2, "//") == 0 || (lineStart && text[i] == '#')) {
      // To the end of the line, continued ones included.
      while (i < text.size() && !(text[i] == '\n' && text[i - 1] != '\\'))
        ++i;
    } else {
      if (text[i] == '\n')
        lineStart = true;
      else if (!isspace(text[i]))
        lineStart = false;
      code += text[i++];
    }
  }
  return code;
}

/// The functions a header declares: with comments and preprocessor lines
/// gone, every `parc_rt_x(` left is a declaration.
std::vector<std::string> declaredFunctions(const std::string &path) {
  std::string code = codeOf(path);
  std::vector<std::string> names;
  for (size_t at = code.find("parc_rt_"); at != std::string::npos;
       at = code.find("parc_rt_", at + 1)) {
    if (at > 0 && (isalnum(code[at - 1]) || code[at - 1] == '_'))
      continue;
    size_t end = at;
    while (end < code.size() && (isalnum(code[end]) || code[end] == '_'))
      ++end;
    size_t paren = code.find_first_not_of(" \t\n", end);
    if (paren != std::string::npos && code[paren] == '(')
      names.push_back(code.substr(at, end - at));
  }
  return names;
}

/// runtime.h and program.h against the contract: each function is an
/// entry generated code calls (whose signature RTABICheck.cpp checks) or
/// deliberately runtime-only, and each runtime-only name still exists.
TEST(RTKernelsABITest, EveryRuntimeFunctionIsAccountedFor) {
  llvm::StringSet<> entries, runtimeOnly, declared;
  for (const rt::EntryDecl &e : rt::getEntries())
    entries.insert(e.symbol);
  for (const rt::RuntimeOnlyEntry &e : rt::getRuntimeOnlyEntries()) {
    EXPECT_TRUE(runtimeOnly.insert(e.symbol).second) << e.symbol.str();
    EXPECT_FALSE(entries.contains(e.symbol))
        << e.symbol.str() << " is both an RT_Entry and RT_RuntimeOnly";
  }
  for (const char *header : {"runtime.h", "program.h"})
    for (const std::string &name : declaredFunctions(
             std::string(PARC_RUNTIME_INCLUDE_DIR) + "/" + header)) {
      declared.insert(name);
      EXPECT_TRUE(entries.contains(name) || runtimeOnly.contains(name))
          << header << " declares " << name
          << ", which no kernel calls: declare its producer in "
             "RTKernels.td, or list it RT_RuntimeOnly with who calls it";
    }
  EXPECT_GT(declared.size(), 50u) << "the header scan found too little";
  for (StringRef name : runtimeOnly.keys())
    EXPECT_TRUE(declared.contains(name))
        << name.str() << " is RT_RuntimeOnly but not in the runtime headers";
}

} // namespace
