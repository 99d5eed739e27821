//===- Version.cpp - parc's version and the commit it was built from ------===//

#include "parc/Support/Version.h"

#include "Version.inc"

#include "llvm/Config/llvm-config.h"

llvm::StringRef parc::version() { return PARC_VERSION_STRING; }

llvm::StringRef parc::commit() { return PARC_GIT_COMMIT; }

void parc::printVersion(llvm::raw_ostream &os) {
  os << "parc version " << version() << " (commit " << commit()
     << "), built with LLVM " << LLVM_VERSION_STRING << "\n";
}
