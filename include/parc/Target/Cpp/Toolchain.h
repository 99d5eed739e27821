//===- Toolchain.h - C++ for rank programs, and building it -----*- C++ -*-===//

#ifndef PARC_TARGET_CPP_TOOLCHAIN_H
#define PARC_TARGET_CPP_TOOLCHAIN_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

namespace parc {

/// Prints an emitc module (the output of convert-rt-to-emitc) as C++ to
/// `path`.
mlir::LogicalResult writeCpp(mlir::ModuleOp program, llvm::StringRef path);

/// Compiles and links one generated C++ file against the runtime of
/// `target` ("cpu"). The compiler's output goes into `log` on failure.
mlir::LogicalResult buildExecutable(llvm::StringRef source,
                                    llvm::StringRef executable,
                                    llvm::StringRef target, std::string &log);

} // namespace parc

#endif // PARC_TARGET_CPP_TOOLCHAIN_H
