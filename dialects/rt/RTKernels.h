//===- RTKernels.h - the compiler -> runtime contract -----------*- C++ -*-===//
//
// The kernels rt.kernel / rt.start may call and the C entry points behind
// them, as dialects/rt/RTKernels.td declares them (parc-tblgen generates
// the table). The verifiers check every call against it; convert-nn-to-rt
// names kernels through `Kernel`, so a kernel removed from the contract no
// longer compiles there.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_DIALECTS_RT_RTKERNELS_H
#define PARC_DIALECTS_RT_RTKERNELS_H

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Operation.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"

#include <optional>

#include "rt/RTKernels.h.inc"

namespace parc::rt {

/// A kernel parameter: the attribute `name`, which `matches` accepts
/// (`kind` says what it must be). An `annotation` is a dialect-prefixed
/// attribute of the op that later stages read off the kernel; the C call
/// does not take it.
struct KernelParam {
  llvm::StringRef name;
  llvm::StringRef kind;
  bool (*matches)(mlir::Attribute);
  bool optional;
  bool annotation;
};

/// One rt kernel. Counts of -1 are unbounded.
struct KernelDecl {
  llvm::StringRef name;
  Kernel kernel;
  /// Which convert-rt-to-emitc emitter lays out its C call.
  KernelFamily family;
  /// The C entry point (`parc_rt_<entry>`), with a `_start` form if
  /// `hasStart`.
  llvm::StringRef entry;
  int64_t minIns, maxIns, minOuts, maxOuts;
  bool hasStart;
  /// Every buffer has the same element type.
  bool sameElementType;
  /// What the buffers are, when the counts do not say (may be empty).
  llvm::StringRef operands;
  llvm::ArrayRef<KernelParam> params;
  /// The nn/dist ops convert-nn-to-rt lowers to this kernel.
  llvm::ArrayRef<llvm::StringRef> producers;

  const KernelParam *lookupParam(llvm::StringRef param) const;
};

/// A C entry point and how many arguments it takes. A `support` entry is
/// called around kernels (checks, communicators, requests), not by one.
struct EntryDecl {
  llvm::StringRef symbol;
  unsigned arity;
  bool support;
};

/// A function of runtime.h / program.h that generated code does not call,
/// and who does.
struct RuntimeOnlyEntry {
  llvm::StringRef symbol;
  llvm::StringRef why;
};

/// An nn/dist op that lowers to no kernel, and what becomes of it.
struct NoKernelOp {
  llvm::StringRef op;
  llvm::StringRef how;
};

llvm::ArrayRef<KernelDecl> getKernels();
const KernelDecl &getKernel(Kernel kernel);
/// The declaration of kernel `name`, or null when the runtime has none.
const KernelDecl *lookupKernel(llvm::StringRef name);
inline llvm::StringRef kernelName(Kernel kernel) {
  return getKernel(kernel).name;
}
/// The argument count of C entry point `symbol` (a `_start` form's
/// includes its request), if generated code may call it.
std::optional<unsigned> getEntryArity(llvm::StringRef symbol);
llvm::ArrayRef<EntryDecl> getEntries();
llvm::ArrayRef<RuntimeOnlyEntry> getRuntimeOnlyEntries();
llvm::ArrayRef<NoKernelOp> getOpsWithoutKernel();

/// Checks a call of `callee` on `ins`/`outs` with parameters `params`
/// against its declaration; `started` for rt.start.
mlir::LogicalResult verifyKernelCall(mlir::Operation *op,
                                     llvm::StringRef callee,
                                     mlir::ValueRange ins,
                                     mlir::ValueRange outs,
                                     mlir::DictionaryAttr params, bool started);

} // namespace parc::rt

#endif // PARC_DIALECTS_RT_RTKERNELS_H
