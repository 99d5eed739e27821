//===- device.cpp - Device state, memory and staging (cuda) ---------------===//
//
// One device per process (parc_rt_init picks local rank modulo the visible
// devices), one compute stream every kernel and copy is issued on in call
// order, and a comm stream for NCCL. The arena and driver buffers are
// cudaMalloc'd; scratch memory for kernels is stream-ordered
// (cudaMallocAsync) from a pool that keeps its memory between calls.
//
//===----------------------------------------------------------------------===//

#include "../device.h"
#include "../comm_common.h"
#include "cuda_common.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>

using namespace parc::rt;
using namespace parc::rt::cuda;

namespace parc::rt::cuda {

namespace {

State *theState = nullptr;
int selectedDevice = -1;

bool envFlag(const char *name) {
  const char *v = std::getenv(name);
  return v && *v && std::strcmp(v, "0") != 0;
}

parc_rt_status_t createState(const char *op, State *s) {
  int count = 0;
  cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess)
    return cudaFail(e, op, "no usable CUDA device (cudaGetDeviceCount)");
  if (count == 0)
    return fail(PARC_RT_UNSUPPORTED, "%s: no CUDA device is visible", op);
  s->device = selectedDevice >= 0 ? selectedDevice % count : 0;
  PARC_CUDA_RETURN_IF_ERROR(cudaSetDevice(s->device), op, "cudaSetDevice");
  PARC_CUDA_RETURN_IF_ERROR(
      cudaStreamCreateWithFlags(&s->compute, cudaStreamNonBlocking), op,
      "creating the compute stream");
  PARC_CUDA_RETURN_IF_ERROR(
      cudaStreamCreateWithFlags(&s->comm, cudaStreamNonBlocking), op,
      "creating the comm stream");
  PARC_CUDA_RETURN_IF_ERROR(
      cudaDeviceGetAttribute(&s->smCount, cudaDevAttrMultiProcessorCount,
                             s->device),
      op, "cudaDeviceGetAttribute");
  // Scratch memory returns to the pool, not to the driver, between calls
  // (an optimisation: without pools cudaMallocAsync still works).
  cudaMemPool_t pool;
  uint64_t keep = UINT64_MAX;
  if (cudaDeviceGetDefaultMemPool(&pool, s->device) != cudaSuccess ||
      cudaMemPoolSetAttribute(pool, cudaMemPoolAttrReleaseThreshold, &keep) !=
          cudaSuccess)
    cudaGetLastError();
  PARC_CUDA_RETURN_IF_ERROR(cudaMalloc(&s->error, sizeof(DeviceErrorRecord)),
                            op, "allocating the error record");
  PARC_CUDA_RETURN_IF_ERROR(
      cudaMemsetAsync(s->error, 0, sizeof(DeviceErrorRecord), s->compute), op,
      "clearing the error record");
  s->workspaceBytes = size_t(32) << 20;
  PARC_CUDA_RETURN_IF_ERROR(cudaMalloc(&s->workspace, s->workspaceBytes), op,
                            "allocating the cuBLAS workspace");
  PARC_BLAS_RETURN_IF_ERROR(cublasCreate(&s->blas), op, "cublasCreate");
  PARC_BLAS_RETURN_IF_ERROR(cublasSetStream(s->blas, s->compute), op,
                            "cublasSetStream");
  PARC_BLAS_RETURN_IF_ERROR(
      cublasSetWorkspace(s->blas, s->workspace, s->workspaceBytes), op,
      "cublasSetWorkspace");
  s->tf32 = envFlag("PARC_RT_CUDA_TF32");
  // f32 GEMMs stay IEEE f32 (results comparable with the cpu target)
  // unless TF32 is asked for.
  PARC_BLAS_RETURN_IF_ERROR(
      cublasSetMathMode(s->blas, s->tf32 ? CUBLAS_TF32_TENSOR_OP_MATH
                                         : CUBLAS_DEFAULT_MATH),
      op, "cublasSetMathMode");
  PARC_BLAS_RETURN_IF_ERROR(cublasLtCreate(&s->lt), op, "cublasLtCreate");
  s->syncEveryKernel = envFlag("PARC_RT_CUDA_SYNC");
  const char *lt = std::getenv("PARC_RT_CUDA_LT");
  s->useLt = !(lt && std::strcmp(lt, "0") == 0);
  return PARC_RT_OK;
}

void destroyState(State *s) {
  if (s->lt)
    cublasLtDestroy(s->lt);
  if (s->blas)
    cublasDestroy(s->blas);
  if (s->workspace)
    cudaFree(s->workspace);
  if (s->error)
    cudaFree(s->error);
  if (s->comm)
    cudaStreamDestroy(s->comm);
  if (s->compute)
    cudaStreamDestroy(s->compute);
  delete s;
}

const char *faultOpName(int op) {
  static const char *names[] = {"gather", "scatter_elements", "div"};
  return op >= 0 && op < int(FaultOp::Count) ? names[op] : "kernel";
}

/// Reads and clears the device error record (the streams are idle).
parc_rt_status_t checkErrorRecord(State *s) {
  DeviceErrorRecord r;
  PARC_CUDA_RETURN_IF_ERROR(
      cudaMemcpy(&r, s->error, sizeof(r), cudaMemcpyDeviceToHost),
      "synchronize", "reading the device error record");
  if (r.fault == int(DeviceFault::None))
    return PARC_RT_OK;
  PARC_CUDA_RETURN_IF_ERROR(cudaMemset(s->error, 0, sizeof(r)), "synchronize",
                            "clearing the device error record");
  if (r.fault == int(DeviceFault::DivisionByZero))
    return fail(PARC_RT_INVALID_ARGUMENT,
                "%s: integer division by zero (divisor element %lld)",
                faultOpName(r.op), r.position);
  return fail(PARC_RT_INVALID_ARGUMENT,
              "%s: index %lld at position %lld is out of range [%lld, %lld) "
              "for axis %lld",
              faultOpName(r.op), r.value, r.position, -r.bound, r.bound,
              r.axis);
}

/// Polls a stream until idle, a failure or the deadline (comm_common.h's
/// pollUntil, as the comm backends' waits).
parc_rt_status_t pollStream(cudaStream_t stream, const char *which,
                            double deadline, double timeout) {
  parc_rt_status_t status = PARC_RT_OK;
  bool idle = false;
  pollUntil(
      deadline,
      [&] {
        cudaError_t e = cudaStreamQuery(stream);
        if (e == cudaSuccess)
          return idle = true;
        if (e != cudaErrorNotReady) {
          status = fail(e == cudaErrorMemoryAllocation ? PARC_RT_OUT_OF_MEMORY
                                                       : PARC_RT_INTERNAL,
                        "a kernel on the %s stream failed: CUDA error %s: %s "
                        "(run with PARC_RT_CUDA_SYNC=1 to name the node)",
                        which, cudaGetErrorName(e), cudaGetErrorString(e));
          return true;
        }
        cudaGetLastError(); // "not ready" is recorded as the last error: clear
                            // it
        status = commAsyncError("synchronize");
        return status != PARC_RT_OK;
      },
      /*sleepMicros=*/50);
  if (idle || status != PARC_RT_OK)
    return status;
  return fail(PARC_RT_TIMEOUT,
              "work on the %s stream did not complete within %g s at world "
              "rank %d: a collective peer is hung, crashed or skipped it "
              "(PARC_RT_TIMEOUT_S sets the limit)",
              which, timeout, currentWorldRank());
}

} // namespace

parc_rt_status_t getState(const char *op, State **out) {
  if (!theState) {
    auto *s = new (std::nothrow) State;
    if (!s)
      return fail(PARC_RT_OUT_OF_MEMORY, "%s: out of memory", op);
    parc_rt_status_t status = createState(op, s);
    if (status != PARC_RT_OK) {
      destroyState(s);
      return status;
    }
    theState = s;
  }
  // Every kernel entry point starts here: a last error that libraries left
  // behind (NCCL leaves peer-access errors, for one) must not be reported
  // by launched() as this kernel's launch failure. Sticky errors (a faulted
  // context) come back from the next call anyway.
  cudaGetLastError();
  *out = theState;
  return PARC_RT_OK;
}

parc_rt_status_t selectDevice(int device) {
  if (!theState)
    selectedDevice = device;
  return PARC_RT_OK;
}

State *existingState() { return theState; }

void releaseState() {
  if (!theState)
    return;
  destroyState(theState);
  theState = nullptr;
}

parc_rt_status_t cudaFail(cudaError_t error, const char *op, const char *what) {
  parc_rt_status_t status = PARC_RT_INTERNAL;
  if (error == cudaErrorMemoryAllocation)
    status = PARC_RT_OUT_OF_MEMORY;
  else if (error == cudaErrorNoDevice || error == cudaErrorInsufficientDriver ||
           error == cudaErrorNoKernelImageForDevice)
    status = PARC_RT_UNSUPPORTED;
  return fail(status, "%s: %s: CUDA error %s: %s", op, what,
              cudaGetErrorName(error), cudaGetErrorString(error));
}

parc_rt_status_t blasFail(cublasStatus_t status, const char *op,
                          const char *what) {
  parc_rt_status_t s = PARC_RT_INTERNAL;
  if (status == CUBLAS_STATUS_ALLOC_FAILED)
    s = PARC_RT_OUT_OF_MEMORY;
  else if (status == CUBLAS_STATUS_NOT_SUPPORTED ||
           status == CUBLAS_STATUS_ARCH_MISMATCH)
    s = PARC_RT_UNSUPPORTED;
  return fail(s, "%s: %s: cuBLAS error %s: %s", op, what,
              cublasGetStatusName(status), cublasGetStatusString(status));
}

parc_rt_status_t launched(State *, const char *op) {
  cudaError_t e = cudaGetLastError();
  if (e != cudaSuccess)
    return cudaFail(e, op, "kernel launch");
  return PARC_RT_OK;
}

parc_rt_status_t synchronize(State *s, double timeout) {
  const double deadline = now() + timeout;
  PARC_RT_RETURN_IF_ERROR(pollStream(s->compute, "compute", deadline, timeout));
  PARC_RT_RETURN_IF_ERROR(pollStream(s->comm, "comm", deadline, timeout));
  PARC_RT_RETURN_IF_ERROR(commAsyncError("synchronize"));
  return checkErrorRecord(s);
}

parc_rt_status_t scratchAlloc(State *s, size_t bytes, const char *op,
                              void **out) {
  *out = nullptr;
  if (bytes == 0)
    return PARC_RT_OK;
  PARC_CUDA_RETURN_IF_ERROR(cudaMallocAsync(out, bytes, s->compute), op,
                            "allocating scratch memory");
  return PARC_RT_OK;
}

void scratchFree(State *s, void *ptr) {
  if (ptr)
    cudaFreeAsync(ptr, s->compute);
}

} // namespace parc::rt::cuda

//===----------------------------------------------------------------------===//
// device.h
//===----------------------------------------------------------------------===//

namespace parc::rt {

bool deviceIsHost() { return false; }

parc_rt_status_t deviceAlloc(size_t bytes, const char *what, void **out) {
  *out = nullptr;
  State *s = nullptr;
  PARC_RT_RETURN_IF_ERROR(getState(what, &s));
  const size_t rounded = bytes ? (bytes + 255) / 256 * 256 : 256;
  cudaError_t e = cudaMalloc(out, rounded);
  if (e != cudaSuccess) {
    *out = nullptr;
    return fail(PARC_RT_OUT_OF_MEMORY,
                "%s: cannot allocate %zu bytes of device memory: %s", what,
                bytes, cudaGetErrorString(e));
  }
  PARC_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(*out, 0, rounded, s->compute),
                            what, "cudaMemsetAsync");
  return PARC_RT_OK;
}

void deviceFree(void *ptr) {
  if (ptr)
    cudaFree(ptr);
}

/// A staging copy, ordered after the kernels issued so far and complete on
/// return.
static parc_rt_status_t copyAndWait(void *dst, const void *src, size_t bytes,
                                    cudaMemcpyKind kind, const char *what) {
  State *s = nullptr;
  PARC_RT_RETURN_IF_ERROR(getState(what, &s));
  if (bytes == 0)
    return PARC_RT_OK;
  PARC_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(dst, src, bytes, kind, s->compute),
                            what, "cudaMemcpyAsync");
  return synchronize(s, cuda::currentTimeout());
}

parc_rt_status_t copyToDevice(void *dst, const void *src, size_t bytes) {
  return copyAndWait(dst, src, bytes, cudaMemcpyHostToDevice, "copy to device");
}

parc_rt_status_t copyToHost(void *dst, const void *src, size_t bytes) {
  return copyAndWait(dst, src, bytes, cudaMemcpyDeviceToHost, "copy to host");
}

namespace {

/// Two pinned chunks the upload alternates between: while the device reads
/// one, the host fills the other from the mapped file.
class PinnedStaging {
public:
  static constexpr size_t kChunkBytes = size_t(32) << 20;

  ~PinnedStaging() {
    for (Chunk &c : chunks) {
      if (c.done)
        cudaEventDestroy(c.done);
      if (c.host)
        cudaFreeHost(c.host);
    }
  }

  parc_rt_status_t create(const char *what) {
    for (Chunk &c : chunks) {
      PARC_CUDA_RETURN_IF_ERROR(cudaMallocHost(&c.host, kChunkBytes), what,
                                "cudaMallocHost");
      PARC_CUDA_RETURN_IF_ERROR(
          cudaEventCreateWithFlags(&c.done, cudaEventDisableTiming), what,
          "cudaEventCreate");
    }
    return PARC_RT_OK;
  }

  /// Stages `bytes` (at most kChunkBytes) of `src` and queues their copy to
  /// `dst` on `stream`, once the chunk's previous copy has finished.
  parc_rt_status_t copy(char *dst, const char *src, size_t bytes,
                        cudaStream_t stream, const char *what) {
    Chunk &c = chunks[next];
    next ^= 1;
    if (c.used)
      PARC_CUDA_RETURN_IF_ERROR(cudaEventSynchronize(c.done), what,
                                "cudaEventSynchronize");
    std::memcpy(c.host, src, bytes);
    PARC_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(dst, c.host, bytes,
                                              cudaMemcpyHostToDevice, stream),
                              what, "cudaMemcpyAsync");
    PARC_CUDA_RETURN_IF_ERROR(cudaEventRecord(c.done, stream), what,
                              "cudaEventRecord");
    c.used = true;
    return PARC_RT_OK;
  }

private:
  struct Chunk {
    void *host = nullptr;
    cudaEvent_t done = nullptr;
    bool used = false;
  };
  Chunk chunks[2];
  int next = 0;
};

} // namespace

parc_rt_status_t uploadToDevice(const HostToDevice *copies, size_t count) {
  const char *what = "weights upload";
  State *s = nullptr;
  PARC_RT_RETURN_IF_ERROR(getState(what, &s));
  PinnedStaging staging;
  if (staging.create(what) != PARC_RT_OK) {
    // Pinned memory can be capped (ulimit -l, containers): pageable copies
    // are slower but correct; the failed allocation is not sticky.
    cudaGetLastError();
    for (size_t i = 0; i < count; ++i)
      PARC_RT_RETURN_IF_ERROR(
          copyToDevice(copies[i].dst, copies[i].src, copies[i].bytes));
    return PARC_RT_OK;
  }
  for (size_t i = 0; i < count; ++i) {
    auto *dst = static_cast<char *>(copies[i].dst);
    auto *src = static_cast<const char *>(copies[i].src);
    for (size_t at = 0; at < copies[i].bytes;
         at += PinnedStaging::kChunkBytes) {
      size_t n = std::min(PinnedStaging::kChunkBytes, copies[i].bytes - at);
      PARC_RT_RETURN_IF_ERROR(
          staging.copy(dst + at, src + at, n, s->compute, what));
    }
  }
  return synchronize(s, cuda::currentTimeout());
}

// cudaMalloc aligns to 256 bytes.
size_t deviceArenaAlignment() { return 256; }

parc_rt_status_t deviceArenaMap(size_t total, size_t requested, void **out) {
  State *s = nullptr;
  PARC_RT_RETURN_IF_ERROR(getState("arena_create", &s));
  void *allocation = nullptr;
  cudaError_t e = cudaMalloc(&allocation, total);
  if (e != cudaSuccess)
    return fail(PARC_RT_OUT_OF_MEMORY,
                "arena_create: cannot allocate %zu bytes of device memory: %s",
                requested, cudaGetErrorString(e));
  e = cudaMemsetAsync(allocation, 0, total, s->compute);
  if (e != cudaSuccess) {
    cudaFree(allocation);
    return cudaFail(e, "arena_create", "cudaMemsetAsync");
  }
  *out = allocation;
  return PARC_RT_OK;
}

void deviceArenaUnmap(void *ptr, size_t) {
  cudaFree(ptr); // waits for kernels still using it
}

parc_rt_status_t deviceSynchronize() {
  State *s = existingState();
  return s ? synchronize(s, cuda::currentTimeout()) : PARC_RT_OK;
}

parc_rt_status_t deviceCheckpoint() {
  State *s = existingState();
  if (!s || !s->syncEveryKernel)
    return PARC_RT_OK;
  return synchronize(s, cuda::currentTimeout());
}

} // namespace parc::rt

//===----------------------------------------------------------------------===//
// Copies
//===----------------------------------------------------------------------===//

namespace {

bool isHostPointer(const void *p) {
  cudaPointerAttributes a;
  if (cudaPointerGetAttributes(&a, p) != cudaSuccess) {
    cudaGetLastError(); // older drivers fail for plain host memory
    return true;
  }
  return a.type == cudaMemoryTypeUnregistered || a.type == cudaMemoryTypeHost;
}

} // namespace

extern "C" {

// Any mix of host and device pointers (unified addressing). A copy that
// involves host memory is complete when the call returns; device to device
// copies are ordered on the compute stream like kernels.
parc_rt_status_t parc_rt_copy(void *dst, const void *src, size_t bytes) {
  if (bytes == 0 || dst == src)
    return PARC_RT_OK;
  if (!dst || !src)
    return fail(PARC_RT_INVALID_ARGUMENT, "copy: null %s pointer",
                dst ? "source" : "destination");
  State *s = nullptr;
  PARC_RT_RETURN_IF_ERROR(getState("copy", &s));
  const bool host = isHostPointer(dst) || isHostPointer(src);
  const char *d = static_cast<const char *>(dst);
  const char *c = static_cast<const char *>(src);
  const bool overlap = d < c + bytes && c < d + bytes;
  if (overlap && !host) {
    // memmove semantics: cudaMemcpy does not allow overlapping ranges.
    void *tmp = nullptr;
    PARC_RT_RETURN_IF_ERROR(scratchAlloc(s, bytes, "copy", &tmp));
    PARC_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(tmp, src, bytes,
                                              cudaMemcpyDeviceToDevice,
                                              s->compute),
                              "copy", "cudaMemcpyAsync");
    PARC_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(dst, tmp, bytes,
                                              cudaMemcpyDeviceToDevice,
                                              s->compute),
                              "copy", "cudaMemcpyAsync");
    scratchFree(s, tmp);
    return PARC_RT_OK;
  }
  if (overlap) { // both on the host
    PARC_RT_RETURN_IF_ERROR(synchronize(s, cuda::currentTimeout()));
    std::memmove(dst, src, bytes);
    return PARC_RT_OK;
  }
  PARC_CUDA_RETURN_IF_ERROR(
      cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault, s->compute), "copy",
      "cudaMemcpyAsync");
  return host ? synchronize(s, cuda::currentTimeout()) : PARC_RT_OK;
}

} // extern "C"
