//===- device.h - Where kernels find their buffers --------------*- C++ -*-===//
//
// The one internal interface between the device-independent parts of the
// runtime (the program driver, file formats) and a backend: the program
// driver stages weights, inputs and outputs through it, so the same
// main.cpp serves the cpu backend (buffers are host memory, staging is a
// no-op) and the cuda backend (buffers are device memory).
//
//===----------------------------------------------------------------------===//
#ifndef PARC_RUNTIME_DEVICE_H
#define PARC_RUNTIME_DEVICE_H

#include "parc/runtime.h"

#include <cstddef>

namespace parc::rt {

/// True when kernels take host pointers (cpu): the driver then hands the
/// mapped weight file and the input buffers to kernels directly.
bool deviceIsHost();

/// Memory kernels can read and write, at least 256-byte aligned and
/// zero-filled; released with deviceFree.
parc_rt_status_t deviceAlloc(size_t bytes, const char *what, void **out);
void deviceFree(void *ptr);

/// Host -> device and device -> host copies. Both are complete when they
/// return, after all kernels issued before them.
parc_rt_status_t copyToDevice(void *dst, const void *src, size_t bytes);
parc_rt_status_t copyToHost(void *dst, const void *src, size_t bytes);

/// One host range to copy to the device.
struct HostToDevice {
  void *dst;
  const void *src;
  size_t bytes;
};

/// Copies many read-only host ranges (the mapped weight file) to the
/// device, complete on return. The cuda backend streams them through two
/// pinned staging chunks, so the file's page-ins overlap the transfers and
/// no pageable transfer pins the whole range at once.
parc_rt_status_t uploadToDevice(const HostToDevice *copies, size_t count);

/// Waits for every kernel and collective issued so far and reports the
/// first failure that happened asynchronously (a kernel fault, an index out
/// of range found on the device, a collective error or timeout).
parc_rt_status_t deviceSynchronize();

/// The planned arena's memory (src/arena.cpp does the rest of
/// parc_rt_arena_*): `total` bytes, zero-filled, starting at a multiple of
/// deviceArenaAlignment(); `requested` is the caller's size, for messages.
size_t deviceArenaAlignment();
parc_rt_status_t deviceArenaMap(size_t total, size_t requested, void **out);
void deviceArenaUnmap(void *ptr, size_t total);

/// Called after each kernel of a generated program (parc_rt_check): cheap
/// unless the backend was asked to check every kernel (PARC_RT_CUDA_SYNC=1),
/// so that an asynchronous failure is reported with the node that caused it.
parc_rt_status_t deviceCheckpoint();

} // namespace parc::rt

#endif // PARC_RUNTIME_DEVICE_H
