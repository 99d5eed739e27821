//===- Version.h - parc's version and the commit it was built from -*- C++
//-*-===//
//
// The version comes from project(parc VERSION ...) and the commit from
// `git rev-parse --short HEAD` at configure time ("unknown" outside a git
// checkout, as in a build from a tarball). --version prints both, and every
// manifest.json records them.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_SUPPORT_VERSION_H
#define PARC_SUPPORT_VERSION_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/raw_ostream.h"

namespace parc {

/// "0.1.0".
llvm::StringRef version();
/// The short git commit parc was configured at, or "unknown".
llvm::StringRef commit();
/// What --version prints: parc's version, its commit and LLVM's version.
void printVersion(llvm::raw_ostream &os);

} // namespace parc

#endif // PARC_SUPPORT_VERSION_H
