//===- OutputDir.cpp - the -o folder of parc compile ----------------------===//

#include "OutputDir.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/WithColor.h"

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <unistd.h>

using namespace mlir;
namespace fs = llvm::sys::fs;
using parc::driver::OutputDir;

namespace {

LogicalResult fail(const llvm::Twine &message) {
  llvm::WithColor::error(llvm::errs(), "parc") << message << "\n";
  return failure();
}

//===----------------------------------------------------------------------===//
// Removal on any exit. A signal handler may not allocate, lock or call
// llvm::sys::fs (nor nftw): the paths live in fixed buffers and the tree is
// removed with system calls only.
//===----------------------------------------------------------------------===//

char stagingToRemove[PATH_MAX]; // the staging folder, while it exists
char previousOutput[PATH_MAX];  // the old -o folder, while moved aside
char outputPath[PATH_MAX];      // where to put it back
constexpr int kInterrupts[] = {SIGINT, SIGTERM};
struct sigaction previousActions[std::size(kInterrupts)];

bool isDotOrDotDot(const char *n) {
  return n[0] == '.' && (n[1] == 0 || (n[1] == '.' && n[2] == 0));
}

/// Removes `name` in the folder `dirFd` and all it holds.
void removeTreeAt(int dirFd, const char *name, int depth) {
  if (unlinkat(dirFd, name, 0) == 0 || errno == ENOENT || depth > 16)
    return;
  int fd = openat(dirFd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
  if (fd < 0)
    return;
  alignas(struct dirent64) char buffer[2048];
  // Entries removed while reading can hide others: read again until empty
  // (a child process may still be adding files).
  for (int pass = 0; pass < 8; ++pass) {
    bool any = false;
    lseek(fd, 0, SEEK_SET);
    for (ssize_t n; (n = getdents64(fd, buffer, sizeof buffer)) > 0;)
      for (ssize_t at = 0; at < n;) {
        auto *entry = reinterpret_cast<struct dirent64 *>(buffer + at);
        at += entry->d_reclen;
        if (isDotOrDotDot(entry->d_name))
          continue;
        any = true;
        removeTreeAt(fd, entry->d_name, depth + 1);
      }
    if (!any)
      break;
  }
  close(fd);
  unlinkat(dirFd, name, AT_REMOVEDIR);
}

/// Async-signal-safe: removes the staging folder, puts a previous output
/// moved aside back.
void removeStaging() {
  int savedErrno = errno;
  if (stagingToRemove[0])
    removeTreeAt(AT_FDCWD, stagingToRemove, 0);
  stagingToRemove[0] = 0;
  if (previousOutput[0] && rename(previousOutput, outputPath) == 0)
    previousOutput[0] = 0;
  errno = savedErrno;
}

/// SIGINT, SIGTERM: clean up, then let the handler that was there before
/// (LLVM's, or the default) end the process with the same signal.
void onInterrupt(int sig) {
  removeStaging();
  for (size_t i = 0; i < std::size(kInterrupts); ++i)
    if (kInterrupts[i] == sig)
      sigaction(sig, &previousActions[i], nullptr);
  raise(sig); // delivered when this handler returns
}

/// The interrupts ignored when the process started (nohup, `cmd &` in a
/// script): read before main, before LLVM installs its handlers over them.
struct IgnoredAtStart {
  bool ignored[std::size(kInterrupts)] = {};
  IgnoredAtStart() {
    for (size_t i = 0; i < std::size(kInterrupts); ++i) {
      struct sigaction current;
      ignored[i] = sigaction(kInterrupts[i], nullptr, &current) == 0 &&
                   current.sa_handler == SIG_IGN;
    }
  }
} ignoredAtStart;

void armRemoval() {
  static bool armed = false;
  if (armed)
    return;
  armed = true;
  struct sigaction action = {};
  action.sa_handler = onInterrupt;
  sigemptyset(&action.sa_mask);
  for (int sig : kInterrupts)
    sigaddset(&action.sa_mask, sig);
  // An interrupt ignored at start stays without effect: the compile goes on.
  for (size_t i = 0; i < std::size(kInterrupts); ++i)
    if (!ignoredAtStart.ignored[i])
      sigaction(kInterrupts[i], &action, &previousActions[i]);
  // Crashes (LLVM's handler runs these) and exit() deep in a library.
  llvm::sys::AddSignalHandler([](void *) { removeStaging(); }, nullptr);
  std::atexit(removeStaging);
}

/// Copies `path` into a handler's buffer (empty when it does not fit).
void setSignalPath(char (&buffer)[PATH_MAX], llvm::StringRef path) {
  buffer[0] = 0;
  if (path.size() + 1 < sizeof buffer) {
    std::copy(path.begin(), path.end(), buffer);
    buffer[path.size()] = 0;
  }
}

//===----------------------------------------------------------------------===//
// What -o may replace.
//===----------------------------------------------------------------------===//

bool isParcOutput(llvm::StringRef dir) {
  llvm::SmallString<256> manifest(dir);
  llvm::sys::path::append(manifest, "manifest.json");
  auto text = llvm::MemoryBuffer::getFile(manifest);
  if (!text)
    return false;
  llvm::Expected<llvm::json::Value> json =
      llvm::json::parse((*text)->getBuffer());
  if (!json)
    return llvm::consumeError(json.takeError()), false;
  const llvm::json::Object *object = json->getAsObject();
  if (!object)
    return false;
  if (object->getString("producer") == parc::driver::kManifestProducer)
    return true;
  // Written before manifests named their producer (work folders of earlier
  // test and demo runs): format 1 with programs, ranks and a world size.
  return !object->get("producer") && object->getInteger("format") == 1 &&
         object->getArray("programs") && object->getArray("ranks") &&
         object->getInteger("world_size");
}

bool isEmptyDir(llvm::StringRef dir) {
  std::error_code ec;
  return fs::directory_iterator(dir, ec) == fs::directory_iterator() && !ec;
}

/// True when `inner` is `outer` or lies inside it (both real paths).
bool contains(llvm::StringRef outer, llvm::StringRef inner) {
  if (!inner.starts_with(outer))
    return false;
  return inner.size() == outer.size() || outer.ends_with("/") ||
         llvm::sys::path::is_separator(inner[outer.size()]);
}

LogicalResult checkReplaceable(llvm::StringRef out, llvm::StringRef model) {
  if (!fs::exists(out) && !fs::is_symlink_file(out))
    return success();
  llvm::SmallString<256> realOut, realModelDir;
  llvm::StringRef modelDir = llvm::sys::path::parent_path(model);
  if (!fs::real_path(out, realOut) &&
      !fs::real_path(modelDir.empty() ? "." : modelDir, realModelDir) &&
      contains(realOut, realModelDir))
    return fail("-o '" + out + "' holds the input model '" + model +
                "': give an output folder that does not contain it");
  if (fs::is_symlink_file(out))
    return fail("-o '" + out + "' is a symbolic link: give the folder itself");
  if (!fs::is_directory(out))
    return fail("-o '" + out +
                "' exists and is not a folder: remove it or "
                "give another output folder");
  if (!isEmptyDir(out) && !isParcOutput(out))
    return fail("-o '" + out +
                "' exists and is not the output of parc compile "
                "(no manifest.json with \"producer\": \"parc\"): parc replaces "
                "only its own output; remove it or give another folder");
  return success();
}

/// Removes DIR.parc-tmp-PID and DIR.parc-old-PID folders beside `out`
/// whose process is gone (killed before it could clean up).
void removeStale(llvm::StringRef out) {
  llvm::StringRef parent = llvm::sys::path::parent_path(out);
  std::string prefix = llvm::sys::path::filename(out).str() + ".parc-";
  std::error_code ec;
  for (fs::directory_iterator it(parent.empty() ? "." : parent, ec), end;
       it != end && !ec; it.increment(ec)) {
    llvm::StringRef name = llvm::sys::path::filename(it->path());
    if (!name.consume_front(prefix) ||
        !(name.consume_front("tmp-") || name.consume_front("old-")))
      continue;
    int pid;
    if (name.getAsInteger(10, pid) || pid <= 0)
      continue;
    // Our own pid: a folder of a dead process whose pid we were given.
    bool dead = pid == llvm::sys::Process::getProcessId() ||
                (kill(pid, 0) != 0 && errno == ESRCH);
    if (dead)
      fs::remove_directories(it->path());
  }
}

} // namespace

FailureOr<OutputDir> OutputDir::prepare(llvm::StringRef outArg,
                                        llvm::StringRef model) {
  llvm::SmallString<256> out(outArg);
  if (out.empty() || fs::make_absolute(out))
    return (void)fail("-o names no folder"), failure();
  llvm::sys::path::remove_dots(out, /*remove_dot_dot=*/true);
  if (llvm::sys::path::filename(out).empty())
    return (void)fail("-o '" + outArg + "' names no folder parc may replace"),
           failure();
  if (failed(checkReplaceable(out, model)))
    return failure();
  removeStale(out);
  std::string staging =
      (out + ".parc-tmp-" + llvm::Twine(llvm::sys::Process::getProcessId()))
          .str();
  armRemoval();
  setSignalPath(stagingToRemove, staging);
  if (std::error_code ec = fs::create_directories(staging))
    return (void)fail("cannot create '" + staging + "': " + ec.message()),
           failure();
  return OutputDir(out.str().str(), staging);
}

LogicalResult OutputDir::publish() {
  std::string old;
  if (fs::exists(outPath)) {
    old = (outPath + ".parc-old-" +
           llvm::Twine(llvm::sys::Process::getProcessId()))
              .str();
    setSignalPath(outputPath, outPath);
    setSignalPath(previousOutput, old);
    if (std::error_code ec = fs::rename(outPath, old)) {
      previousOutput[0] = 0;
      return fail("cannot replace '" + outPath + "': " + ec.message());
    }
  }
  if (std::error_code ec = fs::rename(stagingPath, outPath))
    return fail("cannot move the output into '" + outPath +
                "': " + ec.message());
  stagingToRemove[0] = 0;
  previousOutput[0] = 0;
  if (!old.empty())
    fs::remove_directories(old);
  return success();
}

void OutputDir::discard() {
  fs::remove_directories(stagingPath);
  removeStaging(); // puts a previous output moved aside back
}
