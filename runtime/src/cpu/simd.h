//===- simd.h - Inner loops compiled for the CPU that runs them -*- C++ -*-===//
//
// The runtime is built for a baseline ISA (x86-64-v2) so that one build runs
// on every node of a cluster. Its hot inner loops are also compiled for
// AVX2+FMA (v3) and AVX-512 (v4); the loader's ifunc resolver picks the
// widest clone the CPU has. Results do not depend on the clone: ISO C++
// mode keeps -ffp-contract=off and the loops have no reassociated
// reductions, so each clone computes the same IEEE operations per element.
//
//===----------------------------------------------------------------------===//
#ifndef PARC_RUNTIME_CPU_SIMD_H
#define PARC_RUNTIME_CPU_SIMD_H

#include <cstdint>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define PARC_RT_SIMD_CLONES                                                    \
  __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define PARC_RT_SIMD_CLONES
#endif

namespace parc::rt {

/// dst[i] = f(src[i]) for i in [0, n); dst may equal src.
template <typename S, typename D, typename F>
PARC_RT_SIMD_CLONES void mapLoop(const S *src, D *dst, int64_t n, F f) {
  for (int64_t i = 0; i < n; ++i)
    dst[i] = f(src[i]);
}

/// out[i] = f(a[i·sa], b[i·sb]) for i in [0, n); a stride of 0 broadcasts.
template <typename S, typename O, typename F>
PARC_RT_SIMD_CLONES void zipLoop(const S *a, int64_t sa, const S *b, int64_t sb,
                                 O *out, int64_t n, F f) {
  if (sa == 1 && sb == 1) {
    for (int64_t i = 0; i < n; ++i)
      out[i] = f(a[i], b[i]);
  } else if (sa == 1 && sb == 0) {
    const S vb = *b;
    for (int64_t i = 0; i < n; ++i)
      out[i] = f(a[i], vb);
  } else if (sa == 0 && sb == 1) {
    const S va = *a;
    for (int64_t i = 0; i < n; ++i)
      out[i] = f(va, b[i]);
  } else {
    for (int64_t i = 0; i < n; ++i)
      out[i] = f(a[i * sa], b[i * sb]);
  }
}

} // namespace parc::rt

#endif // PARC_RUNTIME_CPU_SIMD_H
