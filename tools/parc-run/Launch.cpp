//===- Launch.cpp - the launch command of a run and its process -----------===//

#include "Launch.h"

#include "llvm/ADT/StringExtras.h"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <fcntl.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

using llvm::StringRef;

namespace parc::run {

namespace {

llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(message);
}

bool shellSafe(StringRef s) {
  return !s.empty() && llvm::all_of(s, [](char c) {
    return llvm::isAlnum(c) || StringRef("_@%+=:,./-").contains(c);
  });
}

/// "3", or "0-1": the task ranks of an app context in srun's syntax.
std::string taskRanks(const AppContext &app) {
  std::string first = std::to_string(app.first);
  return app.count == 1
             ? first
             : first + "-" + std::to_string(app.first + app.count - 1);
}

/// One word of srun's task map: single quotes keep blanks and `%t` as they
/// are; the format has no way to write a quote or a line break inside them.
llvm::Expected<std::string> taskMapWord(StringRef word) {
  if (word.find_first_of("'\n\r") != StringRef::npos)
    return error("srun's task map cannot hold the argument '" + word +
                 "' (it has a quote or a line break): use a path without them");
  if (!word.empty() && word.find_first_of(" \t%\"#\\") == StringRef::npos)
    return word.str();
  return "'" + word.str() + "'";
}

std::vector<std::string> mpirunCommand(const LaunchPlan &plan) {
  std::vector<std::string> args = {plan.program, "--oversubscribe", "--bind-to",
                                   "none"};
  if (geteuid() == 0)
    args.push_back("--allow-run-as-root");
  if (!plan.hostfile.empty())
    args.insert(args.end(), {"--hostfile", plan.hostfile});
  for (const AppContext &app : plan.apps) {
    if (&app != &plan.apps.front())
      args.push_back(":");
    // Open MPI applies -x to the app context it is given in: each gets them.
    for (const auto &[name, value] : plan.env)
      args.insert(args.end(), {"-x", name + "=" + value});
    args.insert(args.end(), {"-np", std::to_string(app.count), app.exe});
    args.insert(args.end(), app.args.begin(), app.args.end());
  }
  return args;
}

llvm::Expected<std::vector<std::string>> srunCommand(const LaunchPlan &plan,
                                                     StringRef taskMap) {
  std::string exports = "ALL";
  for (const auto &[name, value] : plan.env) {
    if (StringRef(value).contains(','))
      return error("srun --export cannot pass " + name + "='" + value +
                   "' (it has a comma): use a path without one");
    exports += "," + name + "=" + value;
  }
  // One failed rank ends the step, as under mpirun.
  return std::vector<std::string>{
      plan.program,           "--ntasks=" + std::to_string(plan.ranks()),
      "--kill-on-bad-exit=1", "--export=" + exports,
      "--multi-prog",         taskMap.str()};
}

} // namespace

llvm::Expected<std::string> srunTaskMap(const LaunchPlan &plan) {
  std::string map = "# srun --multi-prog task map written by parc-run: task "
                    "ranks, program, arguments\n";
  for (const AppContext &app : plan.apps) {
    std::string line = taskRanks(app);
    for (StringRef word : llvm::concat<const std::string>(
             llvm::ArrayRef<std::string>(app.exe), app.args)) {
      auto quoted = taskMapWord(word);
      if (!quoted)
        return quoted.takeError();
      line += " " + *quoted;
    }
    map += line + "\n";
  }
  return map;
}

llvm::Expected<std::vector<std::string>> launchCommand(const LaunchPlan &plan,
                                                       StringRef taskMap) {
  if (plan.launcher == Launcher::Srun)
    return srunCommand(plan, taskMap);
  return mpirunCommand(plan);
}

std::string shellJoin(llvm::ArrayRef<std::string> args) {
  std::string line;
  for (const std::string &a : args) {
    if (!line.empty())
      line += ' ';
    if (shellSafe(a)) {
      line += a;
      continue;
    }
    line += '\'';
    for (char c : a)
      line += c == '\'' ? std::string("'\\''") : std::string(1, c);
    line += '\'';
  }
  return line;
}

//===----------------------------------------------------------------------===//
// The launcher process
//===----------------------------------------------------------------------===//

namespace {

constexpr int kForwarded[] = {SIGINT, SIGTERM, SIGHUP};
volatile sig_atomic_t launcherGroup = 0;
volatile sig_atomic_t receivedSignal = 0;

void forwardSignal(int sig) {
  receivedSignal = sig;
  if (launcherGroup > 0)
    kill(-launcherGroup, sig);
}

/// In the child: its own group, default signal handling, then the launcher.
[[noreturn]] void execLauncher(llvm::ArrayRef<std::string> argv, pid_t parent,
                               const sigset_t &mask) {
  setpgid(0, 0);
#ifdef __linux__
  // The launcher dies with parc-run even when parc-run is killed outright.
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (getppid() != parent)
    _exit(127);
#endif
  // Out of the terminal's foreground group, a launcher that reads the
  // terminal (mpirun forwards stdin to rank 0) would stop on SIGTTIN; the
  // ranks take no input there.
  if (int null = open("/dev/null", O_RDONLY); null >= 0) {
    dup2(null, STDIN_FILENO);
    close(null);
  }
  for (int sig : kForwarded)
    std::signal(sig, SIG_DFL);
  sigprocmask(SIG_SETMASK, &mask, nullptr);
  std::vector<char *> cargv;
  for (const std::string &a : argv)
    cargv.push_back(const_cast<char *>(a.c_str()));
  cargv.push_back(nullptr);
  execv(cargv[0], cargv.data());
  _exit(127);
}

/// Waits for `pid`; after a forwarded signal, kills its group if it is
/// still there 10 s later.
llvm::Expected<int> waitForLauncher(pid_t pid) {
  using Clock = std::chrono::steady_clock;
  Clock::time_point deadline{};
  for (;;) {
    int status = 0;
    pid_t w = waitpid(pid, &status, receivedSignal ? WNOHANG : 0);
    if (w == pid)
      return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (w < 0 && errno != EINTR)
      return error("waiting for the launcher failed: " +
                   llvm::Twine(std::strerror(errno)));
    if (!receivedSignal)
      continue;
    if (deadline == Clock::time_point{})
      deadline = Clock::now() + std::chrono::seconds(10);
    else if (Clock::now() > deadline)
      kill(-pid, SIGKILL);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

} // namespace

llvm::Expected<Exit> runLauncher(llvm::ArrayRef<std::string> argv) {
  // Hold the signals until the child has its group, so that none is lost.
  sigset_t block, old;
  sigemptyset(&block);
  for (int sig : kForwarded)
    sigaddset(&block, sig);
  sigprocmask(SIG_BLOCK, &block, &old);
  struct sigaction action = {}, previous[3];
  action.sa_handler = forwardSignal; // no SA_RESTART: waitpid returns EINTR
  sigemptyset(&action.sa_mask);
  for (int i = 0; i < 3; ++i)
    sigaction(kForwarded[i], &action, &previous[i]);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  const int forkErrno = errno;
  if (pid == 0)
    execLauncher(argv, parent, old);
  if (pid > 0) {
    setpgid(pid, pid); // as the child does: whichever runs first
    launcherGroup = pid;
  }
  sigprocmask(SIG_SETMASK, &old, nullptr);
  llvm::Expected<int> code =
      pid > 0 ? waitForLauncher(pid)
              : llvm::Expected<int>(error("cannot start '" + argv.front() +
                                          "': " + std::strerror(forkErrno)));
  launcherGroup = 0;
  for (int i = 0; i < 3; ++i)
    sigaction(kForwarded[i], &previous[i], nullptr);
  if (!code)
    return code.takeError();
  return Exit{*code, receivedSignal};
}

} // namespace parc::run
