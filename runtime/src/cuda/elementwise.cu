//===- elementwise.cu - Unary, broadcasting binary, where, cast, fill -----===//
//
// One kernel per dtype for each family, with the op as a runtime switch:
// the switch is uniform across a launch, so it costs nothing next to the
// memory traffic, and it keeps the number of instantiations (and nvcc time)
// small. Which (op, dtype) pairs exist is decided on the host, with the cpu
// backend's messages, before anything is launched. Broadcasting uses the
// cpu backend's LoopNest to merge dims, then one flat index per element.
//
//===----------------------------------------------------------------------===//

#include "../backend.h"
#include "../elementwise_ops.h"
#include "kernels.cuh"

#include <cstring>

using namespace parc::rt;
using namespace parc::rt::cuda;

namespace {

//===----------------------------------------------------------------------===//
// Unary
//===----------------------------------------------------------------------===//

template <parc_rt_dtype_t D>
__device__ typename Dev<D>::Compute unaryOp(int op,
                                            typename Dev<D>::Compute v) {
  using C = typename Dev<D>::Compute;
  if constexpr (Dev<D>::kind == Kind::Bool) {
    return C(v == 0);
  } else if constexpr (Dev<D>::kind == Kind::Int) {
    using U = std::make_unsigned_t<C>;
    switch (op) {
    case PARC_RT_UNARY_NEG: // through unsigned: -INT_MIN wraps, not UB
      return C(U(0) - U(v));
    case PARC_RT_UNARY_ABS:
      if constexpr (std::is_signed_v<C>)
        return v < 0 ? C(U(0) - U(v)) : v;
      else
        return v;
    default: // RELU
      return v > 0 ? v : C(0);
    }
  } else {
    const C half = C(0.5), one = C(1);
    switch (op) {
    case PARC_RT_UNARY_NEG:
      return -v;
    case PARC_RT_UNARY_ABS:
      return mabs(v);
    case PARC_RT_UNARY_EXP:
      return mexp(v);
    case PARC_RT_UNARY_LOG:
      return mlog(v);
    case PARC_RT_UNARY_SQRT:
      return msqrt(v);
    case PARC_RT_UNARY_RECIPROCAL:
      return one / v;
    case PARC_RT_UNARY_TANH:
      return mtanh(v);
    case PARC_RT_UNARY_ERF:
      return merf(v);
    case PARC_RT_UNARY_SIGMOID:
      return one / (one + mexp(-v));
    case PARC_RT_UNARY_RELU:
      return v > C(0) ? v : C(0);
    case PARC_RT_UNARY_SILU:
      return v / (one + mexp(-v));
    case PARC_RT_UNARY_GELU:
      return half * v * (one + merf(v * C(0.70710678118654752440)));
    case PARC_RT_UNARY_GELU_TANH: {
      const C inner = C(0.79788456080286535588) * (v + C(0.044715) * v * v * v);
      return half * v * (one + mtanh(inner));
    }
    case PARC_RT_UNARY_FLOOR:
      return mfloor(v);
    case PARC_RT_UNARY_CEIL:
      return mceil(v);
    case PARC_RT_UNARY_SIN:
      return msin(v);
    default: // COS
      return mcos(v);
    }
  }
}

template <parc_rt_dtype_t D>
__global__ void unaryKernel(int op, const typename Dev<D>::Storage *x,
                            typename Dev<D>::Storage *y, int64_t n) {
  PARC_GRID_STRIDE(i, n) { y[i] = Dev<D>::store(unaryOp<D>(op, Dev<D>::load(x[i]))); }
}

//===----------------------------------------------------------------------===//
// Binary
//===----------------------------------------------------------------------===//

template <parc_rt_dtype_t D>
__device__ typename Dev<D>::Compute arith(int op, typename Dev<D>::Compute x,
                                          typename Dev<D>::Compute y,
                                          int64_t bIndex,
                                          DeviceErrorRecord *err) {
  using C = typename Dev<D>::Compute;
  switch (op) {
  case PARC_RT_BINARY_ADD:
    return C(x + y);
  case PARC_RT_BINARY_SUB:
    return C(x - y);
  case PARC_RT_BINARY_MUL:
    return C(x * y);
  case PARC_RT_BINARY_DIV:
    if constexpr (Dev<D>::kind == Kind::Int) {
      if (y == 0) {
        recordFault(err, DeviceFault::DivisionByZero, FaultOp::Div, 0, bIndex,
                    0, 0);
        return C(0);
      }
      if constexpr (std::is_signed_v<C>)
        if (y == C(-1)) // INT_MIN / -1 overflows
          return C(std::make_unsigned_t<C>(0) - std::make_unsigned_t<C>(x));
      return C(x / y);
    } else {
      return x / y;
    }
  case PARC_RT_BINARY_POW:
    if constexpr (Dev<D>::kind == Kind::Int)
      return intPow(x, y);
    else
      return mpow(x, y);
  case PARC_RT_BINARY_MIN: // NaN propagates, as in numpy and ONNX
    return (x < y || x != x) ? x : y;
  default: // MAX
    return (x > y || x != x) ? x : y;
  }
}

template <parc_rt_dtype_t D>
__global__ void binaryKernel(int op, Strided<3> s, int64_t n,
                             const typename Dev<D>::Storage *a,
                             const typename Dev<D>::Storage *b, void *out,
                             DeviceErrorRecord *err) {
  using C = typename Dev<D>::Compute;
  PARC_GRID_STRIDE(i, n) {
    int64_t off[3];
    s.offsets(i, off);
    const C x = Dev<D>::load(a[off[1]]), y = Dev<D>::load(b[off[2]]);
    if (op >= PARC_RT_BINARY_EQUAL) {
      bool r;
      switch (op) {
      case PARC_RT_BINARY_EQUAL:
        r = x == y;
        break;
      case PARC_RT_BINARY_LESS:
        r = x < y;
        break;
      case PARC_RT_BINARY_LESS_EQUAL:
        r = x <= y;
        break;
      case PARC_RT_BINARY_GREATER:
        r = x > y;
        break;
      case PARC_RT_BINARY_GREATER_EQUAL:
        r = x >= y;
        break;
      case PARC_RT_BINARY_AND:
        r = x && y;
        break;
      case PARC_RT_BINARY_OR:
        r = x || y;
        break;
      default: // XOR
        r = (x != 0) != (y != 0);
        break;
      }
      static_cast<uint8_t *>(out)[off[0]] = uint8_t(r);
    } else if constexpr (Dev<D>::kind != Kind::Bool) {
      static_cast<typename Dev<D>::Storage *>(out)[off[0]] =
          Dev<D>::store(arith<D>(op, x, y, off[2], err));
    }
  }
}

//===----------------------------------------------------------------------===//
// Where, cast, fill
//===----------------------------------------------------------------------===//

template <typename W>
__global__ void whereKernel(Strided<4> s, int64_t n, const uint8_t *cond,
                            const W *x, const W *y, W *out) {
  PARC_GRID_STRIDE(i, n) {
    int64_t off[4];
    s.offsets(i, off);
    out[off[0]] = cond[off[1]] ? x[off[2]] : y[off[3]];
  }
}

template <parc_rt_dtype_t From, parc_rt_dtype_t To>
__device__ void castOne(typename Dev<From>::Compute v, void *y, int64_t i) {
  using T = Dev<To>;
  using TS = typename T::Storage;
  using TC = typename T::Compute;
  TS *out = static_cast<TS *>(y);
  if constexpr (T::kind == Kind::Bool)
    out[i] = TS(v != 0);
  else if constexpr (T::kind == Kind::Int && Dev<From>::kind == Kind::Float)
    out[i] = saturatingFromDouble<TS>(double(v));
  else if constexpr (Dev<From>::kind == Kind::Bool)
    out[i] = T::store(TC(v != 0));
  else
    out[i] = T::store(TC(v));
}

/// Element i cast to the runtime dtype `to` (one of Tos).
template <parc_rt_dtype_t From, parc_rt_dtype_t... Tos>
__device__ void castTo(int to, typename Dev<From>::Compute v, void *y,
                       int64_t i) {
  ((to == Tos ? castOne<From, Tos>(v, y, i) : void()), ...);
}

template <parc_rt_dtype_t From>
__global__ void castKernel(const typename Dev<From>::Storage *x, int to,
                           void *y, int64_t n) {
  PARC_GRID_STRIDE(i, n) {
    castTo<From, PARC_RT_F32, PARC_RT_F16, PARC_RT_BF16, PARC_RT_F64,
           PARC_RT_I64, PARC_RT_I32, PARC_RT_I8, PARC_RT_U8, PARC_RT_BOOL>(
        to, Dev<From>::load(x[i]), y, i);
  }
}

/// `src` is the value on the device, or null for `value` (from the host).
template <typename W>
__global__ void fillKernel(W *dst, int64_t n, const W *src, W value) {
  const W v = src ? *src : value;
  PARC_GRID_STRIDE(i, n) { dst[i] = v; }
}

} // namespace

parc_rt_status_t parc::rt::runUnary(parc_rt_unary_op_t op,
                                    parc_rt_dtype_t dtype, const void *x,
                                    void *y, int64_t count) {
  return launchTyped<Kinds::Any>(unaryName(op), dtype, [&](auto tag, State *s) {
    constexpr parc_rt_dtype_t D = decltype(tag)::value;
    using S = typename Dev<D>::Storage;
    unaryKernel<D><<<gridFor(count), 256, 0, s->compute>>>(
        int(op), static_cast<const S *>(x), static_cast<S *>(y), count);
  });
}

parc_rt_status_t parc::rt::runBinary(parc_rt_binary_op_t op,
                                     parc_rt_dtype_t dtype,
                                     const LoopNest<3> &loop, int64_t n,
                                     const void *a, const void *b, int64_t,
                                     void *out) {
  const Strided<3> strided = stridedFrom(loop);
  return launchTyped<Kinds::Any>(binaryName(op), dtype, [&](auto tag, State *s) {
    constexpr parc_rt_dtype_t D = decltype(tag)::value;
    using S = typename Dev<D>::Storage;
    binaryKernel<D><<<gridFor(n), 256, 0, s->compute>>>(
        int(op), strided, n, static_cast<const S *>(a),
        static_cast<const S *>(b), out, s->error);
  });
}

parc_rt_status_t parc::rt::runWhere(parc_rt_dtype_t dtype,
                                    const LoopNest<4> &loop, int64_t n,
                                    const void *cond, const void *x,
                                    const void *y, void *out) {
  const char *name = "where";
  const Strided<4> strided = stridedFrom(loop);
  State *s = nullptr;
  PARC_RT_RETURN_IF_ERROR(getState(name, &s));
  visitWord(parc_rt_dtype_size(dtype), [&](auto word) {
    using W = decltype(word);
    whereKernel<W><<<gridFor(n), 256, 0, s->compute>>>(
        strided, n, static_cast<const uint8_t *>(cond),
        static_cast<const W *>(x), static_cast<const W *>(y),
        static_cast<W *>(out));
  });
  return launched(s, name);
}

parc_rt_status_t parc::rt::runCast(parc_rt_dtype_t from, const void *x,
                                   parc_rt_dtype_t to, void *y, int64_t count) {
  return launchTyped<Kinds::Any>("cast", from, [&](auto tag, State *s) {
    constexpr parc_rt_dtype_t D = decltype(tag)::value;
    castKernel<D><<<gridFor(count), 256, 0, s->compute>>>(
        static_cast<const typename Dev<D>::Storage *>(x), int(to), y, count);
  });
}

// `value` may be host or device memory (one element of dtype).
parc_rt_status_t parc::rt::runFill(parc_rt_dtype_t dtype, void *dst,
                                   int64_t count, const void *value) {
  State *s = nullptr;
  PARC_RT_RETURN_IF_ERROR(getState("fill", &s));
  cudaPointerAttributes attributes;
  bool onDevice = false;
  if (cudaPointerGetAttributes(&attributes, value) == cudaSuccess)
    onDevice = attributes.type == cudaMemoryTypeDevice ||
               attributes.type == cudaMemoryTypeManaged;
  else
    cudaGetLastError();
  visitWord(parc_rt_dtype_size(dtype), [&](auto word) {
    using W = decltype(word);
    W v{};
    if (!onDevice)
      std::memcpy(&v, value, sizeof(W));
    fillKernel<W><<<gridFor(count), 256, 0, s->compute>>>(
        static_cast<W *>(dst), count,
        onDevice ? static_cast<const W *>(value) : nullptr, v);
  });
  return launched(s, "fill");
}
