//===- file.cpp - Atomic writes and read-only mappings
//---------------------===//

#include "file.h"

#include "../status.h"

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

namespace parc::rt {

parc_rt_status_t writeFileAtomic(const char *op, const char *path,
                                 const std::vector<Chunk> &chunks) {
  static std::atomic<unsigned> counter{0};
  // Same directory as the target, so rename() stays within one filesystem.
  const std::string tmp = std::string(path) + ".tmp." +
                          std::to_string(getpid()) + "." +
                          std::to_string(counter++);
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0)
    return fail(PARC_RT_IO_ERROR, "%s: cannot create '%s': %s", op, tmp.c_str(),
                std::strerror(errno));
  auto abandon = [&](const char *what) {
    const int error = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    return fail(PARC_RT_IO_ERROR, "%s: cannot %s '%s': %s", op, what, path,
                std::strerror(error));
  };
  for (const Chunk &chunk : chunks) {
    const char *p = static_cast<const char *>(chunk.data);
    size_t left = chunk.bytes;
    while (left > 0) {
      ssize_t n = ::write(fd, p, left);
      if (n < 0 && errno == EINTR)
        continue;
      if (n <= 0)
        return abandon("write");
      p += n;
      left -= size_t(n);
    }
  }
  if (::fsync(fd) != 0)
    return abandon("sync");
  if (::close(fd) != 0) {
    const int error = errno;
    ::unlink(tmp.c_str());
    return fail(PARC_RT_IO_ERROR, "%s: cannot close '%s': %s", op, path,
                std::strerror(error));
  }
  if (std::rename(tmp.c_str(), path) != 0) {
    const int error = errno;
    ::unlink(tmp.c_str());
    return fail(PARC_RT_IO_ERROR, "%s: cannot rename '%s' to '%s': %s", op,
                tmp.c_str(), path, std::strerror(error));
  }
  return PARC_RT_OK;
}

MappedFile::~MappedFile() {
  if (data_)
    munmap(const_cast<unsigned char *>(data_), size_);
}

parc_rt_status_t MappedFile::open(const char *op, const char *path) {
  int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0)
    return fail(PARC_RT_IO_ERROR, "%s: cannot open '%s': %s", op, path,
                std::strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    ::close(fd);
    return fail(PARC_RT_IO_ERROR, "%s: '%s' is not a regular file", op, path);
  }
  size_ = size_t(st.st_size);
  if (size_ > 0) {
    void *p = mmap(nullptr, size_, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p == MAP_FAILED) {
      const int error = errno;
      ::close(fd);
      return fail(PARC_RT_IO_ERROR, "%s: cannot map '%s': %s", op, path,
                  std::strerror(error));
    }
    data_ = static_cast<const unsigned char *>(p);
  }
  ::close(fd); // the mapping keeps the file alive
  return PARC_RT_OK;
}

InputFile::~InputFile() {
  if (fd_ >= 0)
    ::close(fd_);
}

parc_rt_status_t InputFile::open(const char *op, const char *path) {
  fd_ = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd_ < 0)
    return fail(PARC_RT_IO_ERROR, "%s: cannot open '%s': %s", op, path,
                std::strerror(errno));
  struct stat st;
  if (fstat(fd_, &st) != 0 || !S_ISREG(st.st_mode))
    return fail(PARC_RT_IO_ERROR, "%s: '%s' is not a regular file", op, path);
  size_ = size_t(st.st_size);
  return PARC_RT_OK;
}

parc_rt_status_t InputFile::readAt(const char *op, const char *path,
                                   size_t offset, void *dst,
                                   size_t bytes) const {
  char *p = static_cast<char *>(dst);
  size_t done = 0;
  while (done < bytes) {
    ssize_t n = ::pread(fd_, p + done, bytes - done, off_t(offset + done));
    if (n < 0 && errno == EINTR)
      continue;
    if (n < 0)
      return fail(PARC_RT_IO_ERROR, "%s: cannot read '%s': %s", op, path,
                  std::strerror(errno));
    if (n == 0)
      return fail(PARC_RT_IO_ERROR,
                  "%s: '%s' is truncated: needed %zu bytes at offset %zu, the "
                  "file has %zu",
                  op, path, bytes, offset, size_);
    done += size_t(n);
  }
  return PARC_RT_OK;
}

} // namespace parc::rt
