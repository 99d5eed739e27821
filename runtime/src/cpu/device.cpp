//===- device.cpp - The cpu backend's device is the host ------------------===//

#include "../device.h"
#include "../status.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sys/mman.h>
#include <unistd.h>

namespace parc::rt {

bool deviceIsHost() { return true; }

parc_rt_status_t deviceAlloc(size_t bytes, const char *what, void **out) {
  *out = nullptr;
  // aligned_alloc wants a multiple of the alignment; never ask for 0 bytes.
  const size_t rounded = (bytes + 255) / 256 * 256;
  void *ptr = std::aligned_alloc(256, rounded ? rounded : 256);
  if (!ptr)
    return fail(PARC_RT_OUT_OF_MEMORY, "%s: cannot allocate %zu bytes", what,
                bytes);
  std::memset(ptr, 0, rounded ? rounded : 256);
  *out = ptr;
  return PARC_RT_OK;
}

void deviceFree(void *ptr) { std::free(ptr); }

parc_rt_status_t copyToDevice(void *dst, const void *src, size_t bytes) {
  if (bytes)
    std::memcpy(dst, src, bytes);
  return PARC_RT_OK;
}

parc_rt_status_t uploadToDevice(const HostToDevice *copies, size_t count) {
  for (size_t i = 0; i < count; ++i)
    PARC_RT_RETURN_IF_ERROR(
        copyToDevice(copies[i].dst, copies[i].src, copies[i].bytes));
  return PARC_RT_OK;
}

parc_rt_status_t copyToHost(void *dst, const void *src, size_t bytes) {
  if (bytes)
    std::memcpy(dst, src, bytes);
  return PARC_RT_OK;
}

// The arena is anonymous mmap: page-aligned, lazily zeroed memory, so that
// untouched parts of a large plan cost nothing.
size_t deviceArenaAlignment() { return size_t(sysconf(_SC_PAGESIZE)); }

parc_rt_status_t deviceArenaMap(size_t total, size_t requested, void **out) {
  void *mapping = mmap(nullptr, total, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapping == MAP_FAILED)
    return fail(PARC_RT_OUT_OF_MEMORY, "arena_create: cannot map %zu bytes: %s",
                requested, std::strerror(errno));
  *out = mapping;
  return PARC_RT_OK;
}

void deviceArenaUnmap(void *ptr, size_t total) { munmap(ptr, total); }

parc_rt_status_t deviceSynchronize() { return PARC_RT_OK; }

parc_rt_status_t deviceCheckpoint() { return PARC_RT_OK; }

} // namespace parc::rt
