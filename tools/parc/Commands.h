//===- Commands.h - parc subcommands defined outside parc.cpp ---*- C++ -*-===//

#ifndef PARC_TOOLS_PARC_COMMANDS_H
#define PARC_TOOLS_PARC_COMMANDS_H

#include "parc/Plan/Planner.h"

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/CommandLine.h"

#include <string>

namespace parc::driver {

/// The groups of `parc plan --help` and `parc calibrate --help`.
extern llvm::cl::OptionCategory planCategory, calibrateCategory;

/// `parc plan`: true when it was the subcommand given, and its entry point.
bool planSelected();
int plan();

/// `parc calibrate`.
bool calibrateSelected();
int calibrate(const char *argv0);

/// Creates the folder that the file `path` (given with option `flag`) goes
/// in, before the work that fills it; false after an error naming the path.
bool prepareOutputFile(llvm::StringRef path, llvm::StringRef flag);

/// `parc compile --auto`: the plan the planner picks for the fused `module`
/// among those compile can build, on `devices` devices of `cluster` (a
/// preset name or file). Prints why. `stageWeightBytes`, when given, gets
/// the predicted weight bytes per rank of each of its pipeline stages.
mlir::FailureOr<parc::plan::Config>
autoPlan(mlir::ModuleOp module, int64_t devices, const std::string &cluster,
         const std::string &dtype, bool quiet,
         std::vector<int64_t> *stageWeightBytes = nullptr);

} // namespace parc::driver

#endif // PARC_TOOLS_PARC_COMMANDS_H
