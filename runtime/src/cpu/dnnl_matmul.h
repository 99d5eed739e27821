//===- dnnl_matmul.h - GEMMs through oneDNN's matmul primitive -*- C++ -*-===//
//
// f32 and bf16 products as dnnl::matmul: bf16 operands with f32
// accumulation where the CPU has bf16 instructions (avx512_bf16, AMX), and
// a weight operand that lies in registered constant memory (src/constants.h)
// reordered once into the layout the primitive prefers and reused on every
// call. Primitives are cached per shape, never built per call.
//
//===----------------------------------------------------------------------===//
#ifndef PARC_RUNTIME_CPU_DNNL_MATMUL_H
#define PARC_RUNTIME_CPU_DNNL_MATMUL_H

#include "parc/runtime.h"

#include <cstdint>

namespace parc::rt {

/// y = alpha op(a) op(b) + beta y, row-major, a, b and y all of `dtype`
/// (f32 or bf16). False when oneDNN cannot take it (not built in, bf16 on a
/// CPU without bf16 instructions, PARC_RT_DNNL_MATMUL=0): the caller's own
/// path runs then.
bool dnnlMatmul(parc_rt_dtype_t dtype, bool transA, bool transB, int64_t m,
                int64_t n, int64_t k, float alpha, const void *a,
                const void *b, float beta, void *y);

/// Whether bf16 products run natively (the CPU has bf16 instructions).
bool dnnlHasBf16();

} // namespace parc::rt

#endif // PARC_RUNTIME_CPU_DNNL_MATMUL_H
