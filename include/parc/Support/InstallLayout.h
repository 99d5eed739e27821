//===- InstallLayout.h - where parc's own files lie -------------*- C++ -*-===//
//
// parc finds its files relative to the running tool, never through paths
// compiled in: under one prefix, the folder above the tool's bin/, lie the
// runtime's headers (include/parc/), its libraries (lib/) and the cluster
// presets (share/parc/clusters/). The build tree is laid out the same way,
// so one rule serves a build, an installed prefix and a moved one.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_SUPPORT_INSTALLLAYOUT_H
#define PARC_SUPPORT_INSTALLLAYOUT_H

#include "llvm/ADT/Twine.h"

#include <string>

namespace parc {

/// `relative` (a '/'-separated path such as "lib/libparc_runtime.a") under
/// the prefix of the running executable.
std::string installPath(const llvm::Twine &relative);

} // namespace parc

#endif // PARC_SUPPORT_INSTALLLAYOUT_H
