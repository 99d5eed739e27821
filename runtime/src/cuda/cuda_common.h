//===- cuda_common.h - Device state and error reporting (cuda) --*- C++ -*-===//
//
// Host-side pieces every file of the cuda backend shares: the per-process
// device state (streams, cuBLAS handles, the device error record), the
// mapping of CUDA / cuBLAS failures onto fail(), and stream-ordered scratch
// memory. Plain C++ over the CUDA runtime API: .cpp and .cu files include it.
//
// Kernels run asynchronously on one compute stream in call order, so a
// kernel call returns before its result exists. Failures a kernel can only
// find on the device (an index out of range, an integer division by zero)
// go into a small device-side error record; deviceSynchronize() reports it.
//
//===----------------------------------------------------------------------===//
#ifndef PARC_RUNTIME_CUDA_COMMON_H
#define PARC_RUNTIME_CUDA_COMMON_H

#include "../status.h"

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <cstdint>

namespace parc::rt::cuda {

/// What a kernel found wrong, recorded once (the first failure wins).
enum class DeviceFault : int {
  None = 0,
  IndexOutOfRange,  // value at position is outside [-bound, bound)
  DivisionByZero,   // integer division, position of the divisor element
};

/// Kernels that can record a fault, for the message.
enum class FaultOp : int { Gather = 0, ScatterElements, Div, Count };

struct DeviceErrorRecord {
  int fault;      // DeviceFault, 0 while nothing went wrong
  int op;         // FaultOp
  long long value, position, bound, axis;
};

/// The device this process computes on and what is bound to it.
struct State {
  int device = 0;
  cudaStream_t compute = nullptr; // every kernel and copy, in call order
  cudaStream_t comm = nullptr;    // NCCL collectives (comm.cpp)
  cublasHandle_t blas = nullptr;
  cublasLtHandle_t lt = nullptr;
  void *workspace = nullptr; // cuBLAS / cuBLASLt workspace
  size_t workspaceBytes = 0;
  DeviceErrorRecord *error = nullptr; // device memory
  int smCount = 1;
  bool syncEveryKernel = false; // PARC_RT_CUDA_SYNC=1
  bool tf32 = false;            // PARC_RT_CUDA_TF32=1: f32 GEMMs on TF32 cores
  bool useLt = true;            // PARC_RT_CUDA_LT=0: gemm without cuBLASLt
};

/// The state, created on first use on the selected device. Fails (with
/// the CUDA error string) when there is no usable device.
parc_rt_status_t getState(const char *op, State **out);
/// Chooses the device before the state exists (parc_rt_init: local rank
/// modulo the visible devices). Later calls keep the device in use.
parc_rt_status_t selectDevice(int device);
/// Releases handles, streams and the error record (parc_rt_finalize).
void releaseState();
/// The state if it exists, else nullptr (abort paths).
State *existingState();

/// fail() with the CUDA / cuBLAS error string.
parc_rt_status_t cudaFail(cudaError_t error, const char *op, const char *what);
parc_rt_status_t blasFail(cublasStatus_t status, const char *op,
                          const char *what);

/// After a kernel launch: reports a launch failure, and with
/// PARC_RT_CUDA_SYNC=1 waits for the kernel and reports its faults too.
parc_rt_status_t launched(State *s, const char *op);

/// Waits for the compute and comm streams (polling, so that a hung
/// collective becomes PARC_RT_TIMEOUT after `timeoutSeconds`) and reports
/// the device error record. Defined in device.cpp.
parc_rt_status_t synchronize(State *s, double timeoutSeconds);

/// Stream-ordered scratch memory on the compute stream: valid for kernels
/// issued after scratchAlloc and before scratchFree.
parc_rt_status_t scratchAlloc(State *s, size_t bytes, const char *op,
                              void **out);
void scratchFree(State *s, void *ptr);

/// Elements per kernel launch grid: grid-stride loops cover the rest.
inline unsigned gridFor(int64_t n, int block = 256) {
  int64_t blocks = (n + block - 1) / block;
  if (blocks > (1 << 20))
    blocks = 1 << 20;
  return unsigned(blocks < 1 ? 1 : blocks);
}

/// The timeout synchronisation points use: the context's when one exists.
double currentTimeout();
/// The context's world rank (0 before parc_rt_init), for messages.
int currentWorldRank();
/// The first asynchronous error NCCL reports on any communicator.
parc_rt_status_t commAsyncError(const char *op);

} // namespace parc::rt::cuda

#define PARC_CUDA_RETURN_IF_ERROR(expr, op, what)                              \
  do {                                                                         \
    cudaError_t parc_cuda_error_ = (expr);                                     \
    if (parc_cuda_error_ != cudaSuccess)                                       \
      return ::parc::rt::cuda::cudaFail(parc_cuda_error_, (op), (what));       \
  } while (0)

#define PARC_BLAS_RETURN_IF_ERROR(expr, op, what)                              \
  do {                                                                         \
    cublasStatus_t parc_blas_status_ = (expr);                                 \
    if (parc_blas_status_ != CUBLAS_STATUS_SUCCESS)                            \
      return ::parc::rt::cuda::blasFail(parc_blas_status_, (op), (what));      \
  } while (0)

#endif // PARC_RUNTIME_CUDA_COMMON_H
