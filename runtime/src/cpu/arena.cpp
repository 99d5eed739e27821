//===- arena.cpp - The planned memory arena ------------------------------===//
//
// The compiler plans every intermediate buffer as an offset into one arena,
// so a program makes a single allocation. Anonymous mmap gives page-aligned,
// lazily zeroed memory: untouched parts of a large plan cost nothing.
//
//===----------------------------------------------------------------------===//

#include "../status.h"

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <new>
#include <sys/mman.h>
#include <unistd.h>

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
  const size_t page = size_t(sysconf(_SC_PAGESIZE));
  // Alignments above a page need slack to round the base up.
  const size_t slack = alignment > page ? alignment : 0;
  const size_t mappingBytes = (bytes ? bytes : 1) + slack;
  void *mapping = mmap(nullptr, mappingBytes, PROT_READ | PROT_WRITE,
                       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (mapping == MAP_FAILED)
    return fail(PARC_RT_OUT_OF_MEMORY, "arena_create: cannot map %zu bytes: %s",
                bytes, std::strerror(errno));
  auto *arena = new (std::nothrow) parc_rt_arena_t;
  if (!arena) {
    munmap(mapping, mappingBytes);
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
  munmap(arena->mapping, arena->mappingBytes);
  delete arena;
}

} // extern "C"
