//===- file.h - Atomic writes and read-only mappings ------------*- C++ -*-===//
//
// Artifacts are written to a temporary file in the target's directory and
// renamed over it, so a reader (another rank, a crashed run's successor)
// never sees a half-written weight shard or tensor.
//
//===----------------------------------------------------------------------===//
#ifndef PARC_RUNTIME_IO_FILE_H
#define PARC_RUNTIME_IO_FILE_H

#include "parc/runtime.h"

#include <cstddef>
#include <string>
#include <vector>

namespace parc::rt {

struct Chunk {
  const void *data;
  size_t bytes;
};

/// Writes the chunks, in order, to `path` via a temporary file + rename.
parc_rt_status_t writeFileAtomic(const char *op, const char *path,
                                 const std::vector<Chunk> &chunks);

/// A whole file mapped read-only (empty files map to nullptr).
class MappedFile {
public:
  MappedFile() = default;
  MappedFile(const MappedFile &) = delete;
  MappedFile &operator=(const MappedFile &) = delete;
  ~MappedFile();

  parc_rt_status_t open(const char *op, const char *path);
  const unsigned char *data() const { return data_; }
  size_t size() const { return size_; }

private:
  const unsigned char *data_ = nullptr;
  size_t size_ = 0;
};

/// An open file descriptor closed on destruction, for streaming reads.
class InputFile {
public:
  InputFile() = default;
  InputFile(const InputFile &) = delete;
  InputFile &operator=(const InputFile &) = delete;
  ~InputFile();

  parc_rt_status_t open(const char *op, const char *path);
  size_t size() const { return size_; }
  /// Reads exactly `bytes` at `offset`; a short file is a truncation error.
  parc_rt_status_t readAt(const char *op, const char *path, size_t offset,
                          void *dst, size_t bytes) const;

private:
  int fd_ = -1;
  size_t size_ = 0;
};

} // namespace parc::rt

#endif // PARC_RUNTIME_IO_FILE_H
