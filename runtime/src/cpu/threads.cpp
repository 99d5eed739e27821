//===- threads.cpp - PARC_RT_THREADS and BLAS threading
//--------------------===//

#include "threads.h"

#include "../status.h"

#include <atomic>
#include <cstdlib>
#include <mutex>

#ifdef PARC_RT_HAVE_OPENBLAS
extern "C" void openblas_set_num_threads(int);
#endif
#ifdef _OPENMP
#include <omp.h>
#endif

namespace parc::rt {

static std::atomic<int> threadCount{0};

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
