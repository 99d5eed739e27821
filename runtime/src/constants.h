//===- constants.h - memory kernels may derive cached data from -*- C++ -*-===//
//
// A rank's weights are mapped read-only and never change while they are
// open, so a kernel may derive something from them once (a GEMM's weights
// reordered into the library's blocked layout) and reuse it on every call.
// The weight reader registers its mapping here; what kernels derived from
// it is freed when it is unregistered.
//
//===----------------------------------------------------------------------===//
#ifndef PARC_RUNTIME_CONSTANTS_H
#define PARC_RUNTIME_CONSTANTS_H

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>

namespace parc::rt {

/// Marks [begin, begin + bytes) unchanging until the returned handle dies.
class ConstantRange {
public:
  ConstantRange() = default;
  ConstantRange(const void *begin, size_t bytes);
  ConstantRange(const ConstantRange &) = delete;
  ConstantRange &operator=(const ConstantRange &) = delete;
  ConstantRange(ConstantRange &&o) noexcept : id(o.id) { o.id = 0; }
  ConstantRange &operator=(ConstantRange &&o) noexcept;
  ~ConstantRange();

private:
  uint64_t id = 0;
};

/// The object cached under (`data`, `key`), built by `make` on first use;
/// null when [data, data + bytes) is not inside one registered range (the
/// caller then works on `data` as it is). `make` runs once per key, under
/// the registry's lock; the time it takes is added to constantsDerivedTime().
std::shared_ptr<void>
deriveFromConstant(const void *data, size_t bytes, const std::string &key,
                   const std::function<std::shared_ptr<void>()> &make);

/// Seconds spent in deriveFromConstant's `make` calls and how many ran:
/// the weight packing, reported apart from the forward.
struct DerivedTime {
  double seconds = 0;
  int64_t count = 0;
};
DerivedTime constantsDerivedTime();

} // namespace parc::rt

#endif // PARC_RUNTIME_CONSTANTS_H
