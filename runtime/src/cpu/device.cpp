//===- device.cpp - The cpu backend's device is the host ------------------===//

#include "../device.h"
#include "../status.h"

#include <cstdlib>
#include <cstring>

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

parc_rt_status_t copyToHost(void *dst, const void *src, size_t bytes) {
  if (bytes)
    std::memcpy(dst, src, bytes);
  return PARC_RT_OK;
}

parc_rt_status_t deviceSynchronize() { return PARC_RT_OK; }

parc_rt_status_t deviceCheckpoint() { return PARC_RT_OK; }

} // namespace parc::rt
