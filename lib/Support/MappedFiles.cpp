//===- MappedFiles.cpp - files whose mapping the IR borrows ---------------===//

#include "parc/Support/MappedFiles.h"

#include <map>
#include <mutex>

namespace {

struct Mapping {
  std::string path;
  size_t size;
};

/// Mappings by their first byte; the weight writer's threads read it.
std::mutex mutex;
std::map<const char *, Mapping> &mappings() {
  static std::map<const char *, Mapping> all;
  return all;
}

} // namespace

void parc::rememberMappedFile(llvm::StringRef path, llvm::StringRef bytes) {
  std::lock_guard<std::mutex> lock(mutex);
  mappings()[bytes.data()] = Mapping{path.str(), bytes.size()};
}

void parc::forgetMappedFile(const char *start) {
  std::lock_guard<std::mutex> lock(mutex);
  mappings().erase(start);
}

std::optional<parc::FileSpan> parc::findMappedFile(llvm::StringRef bytes) {
  std::lock_guard<std::mutex> lock(mutex);
  auto &all = mappings();
  auto it = all.upper_bound(bytes.data());
  if (it == all.begin())
    return std::nullopt;
  --it;
  uint64_t offset = bytes.data() - it->first;
  if (offset + bytes.size() > it->second.size)
    return std::nullopt;
  return FileSpan{it->second.path, offset};
}
