//===- kernel_tag.h - what the last kernel was, for the profile -*- C++ -*-===//
//
// PARC_RT_PROFILE=1 sums each generated kernel call's time by op kind. The
// driver only sees the ONNX node after the call, so entry points name their
// kind (and a GEMM its floating-point operations) here; a store to a
// thread-local, cheap enough to leave on.
//
//===----------------------------------------------------------------------===//
#ifndef PARC_RUNTIME_KERNEL_TAG_H
#define PARC_RUNTIME_KERNEL_TAG_H

#include "parc/runtime.h"

namespace parc::rt {

struct KernelTag {
  const char *kind = nullptr; // null: an untagged entry point ("other")
  parc_rt_dtype_t dtype = PARC_RT_F32;
  double flops = 0;
};

inline thread_local KernelTag currentKernelTag;

/// Names the running kernel; the first tag after a check wins, so that the
/// entry point a program called is not renamed by those it calls itself.
inline void tagKernel(const char *kind, double flops = 0,
                      parc_rt_dtype_t dtype = PARC_RT_F32) {
  if (!currentKernelTag.kind)
    currentKernelTag = {kind, dtype, flops};
}

/// The tag since the last call, cleared.
inline KernelTag takeKernelTag() {
  KernelTag t = currentKernelTag;
  currentKernelTag = {};
  return t;
}

} // namespace parc::rt

#endif // PARC_RUNTIME_KERNEL_TAG_H
