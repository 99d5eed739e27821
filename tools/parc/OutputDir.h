//===- OutputDir.h - the -o folder of parc compile --------------*- C++ -*-===//
//
// A compile is assembled in DIR.parc-tmp-PID beside DIR and renamed into
// place, so DIR appears complete or not at all. What DIR held before is
// replaced only when it is a previous parc output (its manifest.json says
// "producer": "parc", or has the form of one written before that field)
// or an empty folder, and never when it holds the input model. The staging
// folder is removed on every exit path: a failed compile, exit(), a crash,
// SIGINT and SIGTERM; a later compile removes the staging folders of processes
// that died before they could.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_TOOLS_PARC_OUTPUTDIR_H
#define PARC_TOOLS_PARC_OUTPUTDIR_H

#include "mlir/Support/LogicalResult.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace parc::driver {

/// What manifest.json's "producer" says of a folder parc compile wrote.
inline constexpr const char *kManifestProducer = "parc";

class OutputDir {
public:
  /// Checks that `out` may be replaced by the compile of `model` (say why
  /// not on stderr), removes stale staging folders beside it and creates
  /// this process's, armed for removal on any exit. One per process.
  static mlir::FailureOr<OutputDir> prepare(llvm::StringRef out,
                                            llvm::StringRef model);

  llvm::StringRef staging() const { return stagingPath; }
  llvm::StringRef path() const { return outPath; }

  /// Moves the staging folder to the -o path, replacing what was there.
  mlir::LogicalResult publish();
  /// Removes the staging folder (after a failure).
  void discard();

private:
  OutputDir(std::string out, std::string staging)
      : outPath(std::move(out)), stagingPath(std::move(staging)) {}
  std::string outPath, stagingPath;
};

} // namespace parc::driver

#endif // PARC_TOOLS_PARC_OUTPUTDIR_H
