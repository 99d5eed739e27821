//===- arena.cpp - The planned memory arena -------------------------------===//
//
// The compiler plans every intermediate buffer as an offset into one arena,
// so a program makes a single allocation. The checks, the alignment of the
// base and the handle are the same on every backend; the memory itself
// comes from the backend (src/device.h): lazily zeroed anonymous pages on
// the cpu, zero-filled device memory on the gpu.
//
//===----------------------------------------------------------------------===//

#include "device.h"
#include "status.h"

#include <cstdint>
#include <new>

struct parc_rt_arena_t {
  void *mapping = nullptr;
  size_t mappingBytes = 0;
  void *base = nullptr;
  size_t bytes = 0;
};

using namespace parc::rt;

extern "C" {

parc_rt_status_t parc_rt_arena_create(size_t bytes, size_t alignment,
                                      parc_rt_arena_t **out_arena) {
  if (!out_arena)
    return fail(PARC_RT_INVALID_ARGUMENT, "arena_create: out_arena is null");
  *out_arena = nullptr;
  if (alignment == 0 || (alignment & (alignment - 1)))
    return fail(PARC_RT_INVALID_ARGUMENT,
                "arena_create: alignment %zu is not a power of two", alignment);
  // Alignments above what the memory already has need slack to round the
  // base up.
  const size_t slack = alignment > deviceArenaAlignment() ? alignment : 0;
  const size_t mappingBytes = (bytes ? bytes : 1) + slack;
  void *mapping = nullptr;
  PARC_RT_RETURN_IF_ERROR(deviceArenaMap(mappingBytes, bytes, &mapping));
  auto *arena = new (std::nothrow) parc_rt_arena_t;
  if (!arena) {
    deviceArenaUnmap(mapping, mappingBytes);
    return fail(PARC_RT_OUT_OF_MEMORY, "arena_create: out of memory");
  }
  arena->mapping = mapping;
  arena->mappingBytes = mappingBytes;
  uintptr_t p = reinterpret_cast<uintptr_t>(mapping);
  p = (p + alignment - 1) & ~uintptr_t(alignment - 1);
  arena->base = reinterpret_cast<void *>(p);
  arena->bytes = bytes;
  *out_arena = arena;
  return PARC_RT_OK;
}

void *parc_rt_arena_base(parc_rt_arena_t *arena) {
  return arena ? arena->base : nullptr;
}

size_t parc_rt_arena_size(const parc_rt_arena_t *arena) {
  return arena ? arena->bytes : 0;
}

void parc_rt_arena_release(parc_rt_arena_t *arena) {
  if (!arena)
    return;
  deviceArenaUnmap(arena->mapping, arena->mappingBytes);
  delete arena;
}

} // extern "C"
