//===- parc-import-fuzzer.cpp - libFuzzer target on the ONNX importer -----===//
//
// Every byte of a model is untrusted: this target feeds arbitrary bytes to
// importOnnx (binary protobuf or ONNX text, as the driver reads them), then
// runs the nn verifier and nn-canonicalize, the folders an imported graph
// meets first. A diagnostic is a pass; a crash, a sanitizer report, a leak or
// a timeout is a bug. Creating a context (registering every op) costs more
// than importing a small model, so one context serves many inputs and is
// replaced now and then: what it interns and the weight blobs it holds would
// otherwise grow without bound.
//
//===----------------------------------------------------------------------===//

#include "nn/NNOps.h"
#include "parc/Import/Onnx/OnnxImporter.h"
#include "parc/Transforms/NN/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Pass/PassManager.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstdint>
#include <cstdlib>
#include <memory>

using namespace mlir;

namespace {
constexpr int kInputsPerContext = 256;

MLIRContext &freshEnoughContext() {
  static std::unique_ptr<MLIRContext> context;
  static int uses = 0;
  if (!context || ++uses == kInputsPerContext) {
    DialectRegistry registry;
    registry.insert<parc::nn::NNDialect, arith::ArithDialect,
                    func::FuncDialect>();
    context.reset();
    context = std::make_unique<MLIRContext>(registry,
                                            MLIRContext::Threading::DISABLED);
    context->loadAllAvailableDialects();
    uses = 0;
  }
  return *context;
}
} // namespace

// LLVM's BumpPtrAllocator poisons its slabs when inlined into instrumented
// code (parc's) but not inside libMLIR, which allocates from the same
// allocators: that poisoning reports libMLIR's own allocations as
// use-after-poison. ASan's own checks of heap, stack and globals stay on.
extern "C" const char *__asan_default_options() {
  return "allow_user_poisoning=0";
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  MLIRContext &context = freshEnoughContext();
  // Diagnostics are the expected outcome for most inputs; printing them
  // would dominate the run time. PARC_FUZZ_VERBOSE=1 shows them when
  // reproducing one input.
  static const bool verbose = std::getenv("PARC_FUZZ_VERBOSE");
  ScopedDiagnosticHandler quiet(&context, [](Diagnostic &) {
    return success(!verbose);
  });
  auto buffer = llvm::MemoryBuffer::getMemBuffer(
      llvm::StringRef(reinterpret_cast<const char *>(data), size), "fuzz.onnx",
      /*RequiresNullTerminator=*/false);
  // A folder that holds nothing: external data is looked up relative to it.
  OwningOpRef<ModuleOp> module =
      parc::importOnnx(*buffer, "/nonexistent/fuzz.onnx", &context, {});
  if (!module)
    return 0;
  PassManager pm(&context);
  pm.enableVerifier(true);
  pm.addPass(parc::nn::createNNCanonicalize());
  (void)pm.run(*module);
  return 0;
}
