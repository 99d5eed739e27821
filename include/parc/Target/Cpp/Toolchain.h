//===- Toolchain.h - C++ for rank programs, and building it -----*- C++ -*-===//

#ifndef PARC_TARGET_CPP_TOOLCHAIN_H
#define PARC_TARGET_CPP_TOOLCHAIN_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <string>

namespace parc {

/// Prints an emitc module (the output of convert-rt-to-emitc) as C++ to
/// `path`.
mlir::LogicalResult writeCpp(mlir::ModuleOp program, llvm::StringRef path);

/// Compiles and links one generated C++ file against the runtime of
/// `target` ("cpu"). The compiler's output goes into `log` on failure.
mlir::LogicalResult buildExecutable(llvm::StringRef source,
                                    llvm::StringRef executable,
                                    llvm::StringRef target, std::string &log);

/// One rank program to build: its name (for messages), source and output.
struct BuildJob {
  std::string name, source, executable;
};

/// A job that failed to build, and the compiler's command and output.
struct BuildFailure {
  std::string name, log;
};

/// Builds every job with buildExecutable, at most `jobs` compilers at a
/// time (the distinct programs are independent). Returns the failures in
/// the order of `builds`, each named by its program; empty when all built.
llvm::SmallVector<BuildFailure>
buildExecutables(llvm::ArrayRef<BuildJob> builds, llvm::StringRef target,
                 unsigned jobs);

} // namespace parc

#endif // PARC_TARGET_CPP_TOOLCHAIN_H
