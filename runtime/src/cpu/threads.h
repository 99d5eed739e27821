//===- threads.h - Kernel thread count and parallel ranges ------*- C++ -*-===//
//
// One knob (PARC_RT_THREADS, default 1) for OpenMP loops and BLAS: several
// ranks usually share a node, so kernels stay serial unless asked.
//
//===----------------------------------------------------------------------===//
#ifndef PARC_RUNTIME_CPU_THREADS_H
#define PARC_RUNTIME_CPU_THREADS_H

#include <cstdint>

#ifdef _OPENMP
#include <omp.h>
#endif

namespace parc::rt {

/// Kernel threads; reads PARC_RT_THREADS and configures BLAS on first use.
int numThreads();

/// Calls body(begin, end) on disjoint ranges covering [0, total), one per
/// thread, or once serially when the work is below `grain` elements.
template <typename Body>
void parallelRanges(int64_t total, int64_t grain, Body &&body) {
  int threads = numThreads();
  if (threads <= 1 || total < grain || total < 2) {
    if (total > 0)
      body(int64_t(0), total);
    return;
  }
#ifdef _OPENMP
  if (threads > total)
    threads = int(total);
#pragma omp parallel num_threads(threads)
  {
    int64_t t = omp_get_thread_num(), n = omp_get_num_threads();
    int64_t begin = total * t / n, end = total * (t + 1) / n;
    if (begin < end)
      body(begin, end);
  }
#else
  body(int64_t(0), total);
#endif
}

} // namespace parc::rt

#endif // PARC_RUNTIME_CPU_THREADS_H
