//===- kernels.cuh - Device-side building blocks of the cuda kernels -*- CUDA -*-===//
//
// Dev<D> is the device twin of the cpu backend's Traits<D>: storage type,
// compute type (f32 for the half types) and the conversions, bit-exact with
// the cpu backend's (bf16 rounding is the same code). Strided<K> is a
// LoopNest's merged dims and operand strides carried into a kernel: a flat
// index over the iteration space maps to one element offset per operand.
//
//===----------------------------------------------------------------------===//
#ifndef PARC_RUNTIME_CUDA_KERNELS_CUH
#define PARC_RUNTIME_CUDA_KERNELS_CUH

#include "../cpu/shape.h"
#include "../dtype_traits.h"
#include "cuda_common.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cfloat>
#include <cstdint>

namespace parc::rt::cuda {

//===----------------------------------------------------------------------===//
// Element types
//===----------------------------------------------------------------------===//

__device__ inline float f16Load(uint16_t v) {
  return __half2float(__ushort_as_half(v));
}
__device__ inline uint16_t f16Store(float v) {
  return __half_as_ushort(__float2half_rn(v));
}
__device__ inline float bf16Load(uint16_t v) {
  return __uint_as_float(uint32_t(v) << 16);
}
/// Round to nearest even, NaN kept quiet with its sign: the cpu's f32ToBf16.
__device__ inline uint16_t bf16Store(float f) {
  uint32_t u = __float_as_uint(f);
  if ((u & 0x7fffffffu) > 0x7f800000u)
    return uint16_t((u >> 16) | 0x0040u);
  u += 0x7fffu + ((u >> 16) & 1u);
  return uint16_t(u >> 16);
}

template <parc_rt_dtype_t D> struct Dev {
  using Storage = typename Traits<D>::Storage;
  using Compute = typename Traits<D>::Compute;
  static constexpr Kind kind = Traits<D>::kind;
  __device__ static Compute load(Storage v) { return v; }
  __device__ static Storage store(Compute v) { return v; }
};
template <> struct Dev<PARC_RT_F16> {
  using Storage = uint16_t;
  using Compute = float;
  static constexpr Kind kind = Kind::Float;
  __device__ static float load(uint16_t v) { return f16Load(v); }
  __device__ static uint16_t store(float v) { return f16Store(v); }
};
template <> struct Dev<PARC_RT_BF16> {
  using Storage = uint16_t;
  using Compute = float;
  static constexpr Kind kind = Kind::Float;
  __device__ static float load(uint16_t v) { return bf16Load(v); }
  __device__ static uint16_t store(float v) { return bf16Store(v); }
};

/// Accumulator of row statistics: f64 for f64 data, f32 otherwise.
template <parc_rt_dtype_t D>
using AccOf = std::conditional_t<D == PARC_RT_F64, double, float>;

// Float math for float and double (explicit names, no overload guessing).
__device__ inline float mexp(float v) { return expf(v); }
__device__ inline double mexp(double v) { return exp(v); }
__device__ inline float mlog(float v) { return logf(v); }
__device__ inline double mlog(double v) { return log(v); }
__device__ inline float msqrt(float v) { return sqrtf(v); }
__device__ inline double msqrt(double v) { return sqrt(v); }
__device__ inline float mtanh(float v) { return tanhf(v); }
__device__ inline double mtanh(double v) { return tanh(v); }
__device__ inline float merf(float v) { return erff(v); }
__device__ inline double merf(double v) { return erf(v); }
__device__ inline float mfloor(float v) { return floorf(v); }
__device__ inline double mfloor(double v) { return floor(v); }
__device__ inline float mceil(float v) { return ceilf(v); }
__device__ inline double mceil(double v) { return ceil(v); }
__device__ inline float msin(float v) { return sinf(v); }
__device__ inline double msin(double v) { return sin(v); }
__device__ inline float mcos(float v) { return cosf(v); }
__device__ inline double mcos(double v) { return cos(v); }
__device__ inline float mpow(float a, float b) { return powf(a, b); }
__device__ inline double mpow(double a, double b) { return pow(a, b); }
__device__ inline float mabs(float v) { return fabsf(v); }
__device__ inline double mabs(double v) { return fabs(v); }

template <typename C> __device__ inline C lowestOf() {
  if constexpr (std::is_same_v<C, float>)
    return -INFINITY;
  else if constexpr (std::is_same_v<C, double>)
    return -double(INFINITY);
  else
    return std::numeric_limits<C>::lowest();
}
template <typename C> __device__ inline C highestOf() {
  if constexpr (std::is_same_v<C, float>)
    return INFINITY;
  else if constexpr (std::is_same_v<C, double>)
    return double(INFINITY);
  else
    return std::numeric_limits<C>::max();
}

//===----------------------------------------------------------------------===//
// Iteration spaces
//===----------------------------------------------------------------------===//

/// Merged dims (row-major, the last is innermost) and K operand strides.
template <int K> struct Strided {
  int rank = 1;
  int64_t dims[PARC_RT_MAX_RANK];
  int64_t strides[K][PARC_RT_MAX_RANK];

  /// Element offset of every operand at flat index i.
  __device__ void offsets(int64_t i, int64_t (&off)[K]) const {
    if (rank == 1) {
      for (int k = 0; k < K; ++k)
        off[k] = i * strides[k][0];
      return;
    }
    for (int k = 0; k < K; ++k)
      off[k] = 0;
    for (int d = rank - 1; d >= 0; --d) {
      const int64_t q = i / dims[d], r = i - q * dims[d];
      i = q;
      for (int k = 0; k < K; ++k)
        off[k] += r * strides[k][d];
    }
  }
};

template <int K> Strided<K> stridedFrom(const LoopNest<K> &loop) {
  Strided<K> s;
  s.rank = loop.rank();
  for (int d = 0; d < s.rank; ++d) {
    s.dims[d] = loop.dim(d);
    for (int k = 0; k < K; ++k)
      s.strides[k][d] = loop.stride(k, d);
  }
  return s;
}

//===----------------------------------------------------------------------===//
// Launching a kernel per dtype
//===----------------------------------------------------------------------===//

/// The dtypes a kernel family is instantiated for.
enum class Kinds { Any, NotBool, Float };

/// Calls launch(Tag<D>{}, s) for the runtime dtype with the device state,
/// then checks the launch. Only dtypes of `K` are instantiated; the others
/// are unsupported (the message names `op`).
template <Kinds K, typename Launch>
parc_rt_status_t launchTyped(const char *op, parc_rt_dtype_t dtype,
                             Launch &&launch) {
  State *s = nullptr;
  parc_rt_status_t status = visitDtype(
      dtype,
      [&](auto tag) -> parc_rt_status_t {
        constexpr Kind kind = Traits<decltype(tag)::value>::kind;
        if constexpr ((K == Kinds::Float && kind != Kind::Float) ||
                      (K == Kinds::NotBool && kind == Kind::Bool)) {
          return unsupportedDtype(op, dtype);
        } else {
          PARC_RT_RETURN_IF_ERROR(getState(op, &s));
          launch(tag, s);
          return PARC_RT_OK;
        }
      },
      [&] { return unsupportedDtype(op, dtype); });
  PARC_RT_RETURN_IF_ERROR(status);
  return launched(s, op);
}

#define PARC_GRID_STRIDE(i, n)                                                 \
  for (int64_t i = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; i < (n);    \
       i += int64_t(gridDim.x) * blockDim.x)

//===----------------------------------------------------------------------===//
// Faults found on the device
//===----------------------------------------------------------------------===//

/// Records the first fault; later ones are dropped.
__device__ inline void recordFault(DeviceErrorRecord *r, DeviceFault fault,
                                   FaultOp op, long long value,
                                   long long position, long long bound,
                                   long long axis) {
  if (atomicCAS(&r->fault, 0, -1) == 0) {
    r->op = int(op);
    r->value = value;
    r->position = position;
    r->bound = bound;
    r->axis = axis;
    __threadfence();
    atomicExch(&r->fault, int(fault));
  }
}

/// An i32/i64 index, or -1 (and a recorded fault) when out of range.
__device__ inline int64_t loadIndex(const void *indices, bool i64,
                                    int64_t position, int64_t size,
                                    int64_t axis, FaultOp op,
                                    DeviceErrorRecord *err) {
  const int64_t v = i64 ? static_cast<const int64_t *>(indices)[position]
                        : static_cast<const int32_t *>(indices)[position];
  if (v < -size || v >= size) {
    recordFault(err, DeviceFault::IndexOutOfRange, op, v, position, size, axis);
    return -1;
  }
  return v < 0 ? v + size : v;
}

//===----------------------------------------------------------------------===//
// Block reductions
//===----------------------------------------------------------------------===//

template <typename T> __device__ inline T warpSum(T v) {
  for (int o = 16; o > 0; o >>= 1)
    v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}
template <typename T> __device__ inline T warpMax(T v) {
  for (int o = 16; o > 0; o >>= 1) {
    T w = __shfl_xor_sync(0xffffffffu, v, o);
    v = (w > v || w != w) ? w : v;
  }
  return v;
}

/// Sum (or NaN-propagating max) over the block; every thread gets it.
/// `shared` holds 32 values; blockDim.x is a multiple of 32.
template <bool Max, typename T> __device__ inline T blockReduce(T v, T *shared) {
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int warps = (blockDim.x + 31) >> 5;
  v = Max ? warpMax(v) : warpSum(v);
  __syncthreads(); // `shared` may still be read by a previous reduction
  if (lane == 0)
    shared[warp] = v;
  __syncthreads();
  T r = lane < warps ? shared[lane] : (Max ? lowestOf<T>() : T(0));
  return Max ? warpMax(r) : warpSum(r);
}

/// Row kernels (norm.cu, reduce.cu) give a row to a block.
inline constexpr unsigned kMaxRowBlocks = 1u << 20;

/// Threads for a block that walks a row of n elements.
inline int rowThreads(int64_t n) {
  int64_t t = (n + 31) / 32 * 32;
  return int(std::min<int64_t>(512, std::max<int64_t>(32, t)));
}

inline unsigned rowBlocks(int64_t rows) {
  return unsigned(std::min<int64_t>(rows, kMaxRowBlocks));
}

} // namespace parc::rt::cuda

#endif // PARC_RUNTIME_CUDA_KERNELS_CUH
