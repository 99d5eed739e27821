//===- threads.cpp - PARC_RT_THREADS and BLAS threading
//--------------------===//

#include "threads.h"

#include "../status.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>

#ifdef PARC_RT_HAVE_OPENBLAS
extern "C" void openblas_set_num_threads(int);
#endif
#ifdef _OPENMP
#include <omp.h>
#endif
#if defined(__SSE3__) || defined(__x86_64__)
#include <pmmintrin.h>
#include <xmmintrin.h>
#define PARC_RT_HAVE_MXCSR 1
#endif

namespace parc::rt {

static std::atomic<int> threadCount{0};

/// Denormal floats take a slow microcode path on x86 (a softmax's tiny
/// probabilities made the attention products 20x slower); flush them to
/// zero as onnxruntime's set_denormal_as_zero and torch.set_flush_denormal
/// do. Values below 1.2e-38 become 0, far inside every tolerance;
/// PARC_RT_FLUSH_DENORMALS=0 keeps IEEE gradual underflow.
static void flushDenormals() {
#ifdef PARC_RT_HAVE_MXCSR
  const char *env = std::getenv("PARC_RT_FLUSH_DENORMALS");
  if (env && std::strcmp(env, "0") == 0)
    return;
  auto set = [] {
    _MM_SET_FLUSH_ZERO_MODE(_MM_FLUSH_ZERO_ON);
    _MM_SET_DENORMALS_ZERO_MODE(_MM_DENORMALS_ZERO_ON);
  };
  set(); // threads started later inherit it
#ifdef _OPENMP
#pragma omp parallel
  set(); // the OpenMP team that already exists
#endif
#endif
}

static void applyThreads(int n) {
  threadCount.store(n);
#ifdef PARC_RT_HAVE_OPENBLAS
  // OpenBLAS otherwise starts one thread per core in every rank.
  openblas_set_num_threads(n);
#endif
#ifdef _OPENMP
  // oneDNN's kernels take OpenMP's default team size.
  omp_set_num_threads(n);
#endif
  flushDenormals();
}

int numThreads() {
  static std::once_flag once;
  std::call_once(once, [] {
    if (threadCount.load() != 0)
      return; // parc_rt_set_num_threads came first
    int n = 1;
    if (const char *env = std::getenv("PARC_RT_THREADS")) {
      char *end = nullptr;
      long v = std::strtol(env, &end, 10);
      if (end != env && *end == '\0' && v >= 1 && v <= 4096)
        n = int(v);
    }
    applyThreads(n);
  });
  return threadCount.load();
}

} // namespace parc::rt

extern "C" {

parc_rt_status_t parc_rt_set_num_threads(int n) {
  if (n < 1)
    return parc::rt::fail(PARC_RT_INVALID_ARGUMENT,
                          "set_num_threads: thread count %d is not positive",
                          n);
  // Set before the first numThreads() so the env default never overrides n.
  parc::rt::applyThreads(n);
  parc::rt::numThreads();
  return PARC_RT_OK;
}

int parc_rt_num_threads(void) { return parc::rt::numThreads(); }

} // extern "C"
