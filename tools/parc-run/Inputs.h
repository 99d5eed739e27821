//===- Inputs.h - a compiled model's manifest and the run's inputs -*- C++
//-*-===//
//
// What parc-run reads from out/manifest.json, and the checks of the user's
// --input files against it (names, count, dtype, shape), all done before
// any rank starts: a wrong input is one message here, not one per rank
// after launch.
//
//===----------------------------------------------------------------------===//
#ifndef PARC_RUN_INPUTS_H
#define PARC_RUN_INPUTS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace parc::run {

struct TensorSpec {
  std::string name, dtype; // dtype: the runtime's short name ("f32", "i64")
  std::vector<int64_t> shape;
  /// "i64[2,8]", as the runtime's messages show it.
  std::string describe() const;
};

struct Manifest {
  std::string path;
  int64_t worldSize = 0, outputRank = 0, dataParallel = 1;
  std::string mesh; // "2x2", empty without one
  std::vector<TensorSpec> inputs;
  /// Per rank, its program's binary (relative to the compiled folder).
  std::vector<std::string> rankBinaries;
  /// Each output's name and the file the compiler chose for it.
  std::vector<std::pair<std::string, std::string>> outputFiles;
  /// Compiled with --max-seq: the programs run parc-run --prompt's loop.
  bool generates = false;
};

/// Reads `dir`/manifest.json.
llvm::Expected<Manifest> readManifest(llvm::StringRef dir);

/// Checks each NAME=PATH of `specs` against the manifest's inputs and
/// returns the rank programs' --input=NAME=ABSPATH arguments; .pb files are
/// converted to .npy in `tmpDir` (created on first use, left to the caller
/// to remove).
llvm::Expected<std::vector<std::string>>
prepareInputs(const Manifest &manifest, llvm::ArrayRef<std::string> specs,
              llvm::SmallVectorImpl<char> &tmpDir);

} // namespace parc::run

#endif // PARC_RUN_INPUTS_H
