//===- InstallLayout.cpp - where parc's own files lie ---------------------===//
//
// The prefix is two levels above the executable as the kernel reports it
// (/proc/self/exe: symlinks resolved), so a symlink to bin/parc from
// elsewhere still finds the prefix it points into.
//
//===----------------------------------------------------------------------===//

#include "parc/Support/InstallLayout.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

std::string parc::installPath(const llvm::Twine &relative) {
  static int anchor;
  std::string exe = llvm::sys::fs::getMainExecutable(nullptr, &anchor);
  llvm::SmallString<256> path(
      llvm::sys::path::parent_path(llvm::sys::path::parent_path(exe)));
  llvm::sys::path::append(path, relative);
  return path.str().str();
}
