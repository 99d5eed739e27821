//===- Launch.h - the launch command of a run and its process ---*- C++ -*-===//
//
// One run is one launcher process: mpirun (one app context per run of
// consecutive ranks with the same program, so that MPI rank r runs rank
// r's program) or srun (the same map as a --multi-prog task file). The
// launcher runs in its own process group, and parc-run forwards SIGINT,
// SIGTERM and SIGHUP to that group and waits for it: the job ends with
// parc-run.
//
//===----------------------------------------------------------------------===//
#ifndef PARC_RUN_LAUNCH_H
#define PARC_RUN_LAUNCH_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>
#include <utility>
#include <vector>

namespace parc::run {

enum class Launcher { Mpirun, Srun };

/// Ranks first .. first + count - 1 run `exe` with `args`.
struct AppContext {
  size_t first = 0, count = 0;
  std::string exe;
  std::vector<std::string> args;
};

struct LaunchPlan {
  Launcher launcher = Launcher::Mpirun;
  std::string program;  // the mpirun or srun to run
  std::string hostfile; // mpirun only
  std::vector<std::pair<std::string, std::string>> env; // on every rank
  std::vector<AppContext> apps;
  size_t ranks() const {
    return apps.empty() ? 0 : apps.back().first + apps.back().count;
  }
};

/// srun's --multi-prog task map of the plan: one line per app context.
llvm::Expected<std::string> srunTaskMap(const LaunchPlan &plan);

/// The launcher's command line; `taskMap`: the path of srun's task map.
llvm::Expected<std::vector<std::string>> launchCommand(const LaunchPlan &plan,
                                                       llvm::StringRef taskMap);

/// `args` as one line that a POSIX shell splits back into them.
std::string shellJoin(llvm::ArrayRef<std::string> args);

/// The outcome of a launcher process.
struct Exit {
  int code = 0;     // its exit code, or 128 + the signal that ended it
  int received = 0; // the signal parc-run received and forwarded, or 0
};

/// Runs `argv` (argv[0]: an absolute path) in its own process group and
/// waits for it; a SIGINT, SIGTERM or SIGHUP to parc-run meanwhile goes to
/// the whole group, and the group is killed if it outlives that by 10 s.
llvm::Expected<Exit> runLauncher(llvm::ArrayRef<std::string> argv);

} // namespace parc::run

#endif // PARC_RUN_LAUNCH_H
