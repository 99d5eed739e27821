//===- constants.cpp - registered read-only memory and what is derived ----===//

#include "constants.h"

#include <chrono>
#include <map>
#include <mutex>

namespace parc::rt {

namespace {

struct Range {
  uintptr_t begin, end;
  std::map<std::pair<uintptr_t, std::string>, std::shared_ptr<void>> derived;
};

struct Registry {
  std::mutex mutex;
  uint64_t nextId = 1;
  std::map<uint64_t, Range> ranges;
  DerivedTime time;
};

Registry &registry() {
  static Registry r;
  return r;
}

} // namespace

ConstantRange::ConstantRange(const void *begin, size_t bytes) {
  if (!begin || !bytes)
    return;
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  id = r.nextId++;
  auto b = reinterpret_cast<uintptr_t>(begin);
  r.ranges.emplace(id, Range{b, b + bytes, {}});
}

ConstantRange &ConstantRange::operator=(ConstantRange &&o) noexcept {
  if (this != &o) {
    this->~ConstantRange();
    id = o.id;
    o.id = 0;
  }
  return *this;
}

ConstantRange::~ConstantRange() {
  if (!id)
    return;
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  r.ranges.erase(id);
  id = 0;
}

std::shared_ptr<void>
deriveFromConstant(const void *data, size_t bytes, const std::string &key,
                   const std::function<std::shared_ptr<void>()> &make) {
  Registry &r = registry();
  auto b = reinterpret_cast<uintptr_t>(data);
  std::lock_guard<std::mutex> lock(r.mutex);
  for (auto &[id, range] : r.ranges) {
    if (b < range.begin || b + bytes > range.end)
      continue;
    auto [it, inserted] = range.derived.try_emplace({b, key});
    if (inserted) {
      auto start = std::chrono::steady_clock::now();
      try {
        it->second = make();
      } catch (...) {
        range.derived.erase(it); // the next call tries again
        throw;
      }
      r.time.seconds += std::chrono::duration<double>(
                            std::chrono::steady_clock::now() - start)
                            .count();
      ++r.time.count;
      if (!it->second) {
        range.derived.erase(it);
        return nullptr;
      }
    }
    return it->second;
  }
  return nullptr;
}

DerivedTime constantsDerivedTime() {
  Registry &r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  return r.time;
}

} // namespace parc::rt
