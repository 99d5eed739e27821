//===- elementwise.cpp - Unary, broadcasting binary, where, cast, fill
//-----===//
//
// Each op is a lambda applied by one generic loop per arity, so adding an op
// is one line and the dtype handling (half types widen to f32 per element)
// lives in Traits, not in the ops.
//
//===----------------------------------------------------------------------===//

#include "../backend.h"
#include "../dtype_traits.h"
#include "../elementwise_ops.h"
#include "fastmath.h"
#include "shape.h"
#include "simd.h"

#include <cstring>
#include <type_traits>

using namespace parc::rt;

namespace {

constexpr int64_t kGrain = 1 << 15;

//===----------------------------------------------------------------------===//
// Unary
//===----------------------------------------------------------------------===//

template <parc_rt_dtype_t D, typename F>
parc_rt_status_t unaryLoop(const void *x, void *y, int64_t n, F f) {
  using Tr = Traits<D>;
  using S = typename Tr::Storage;
  // No __restrict: x == y is allowed.
  const S *in = static_cast<const S *>(x);
  S *out = static_cast<S *>(y);
  parallelRanges(n, kGrain, [&](int64_t begin, int64_t end) {
    mapLoop(in + begin, out + begin, end - begin,
            [f](S v) { return Tr::store(f(Tr::load(v))); });
  });
  return PARC_RT_OK;
}

template <parc_rt_dtype_t D>
parc_rt_status_t unaryTyped(parc_rt_unary_op_t op, const void *x, void *y,
                            int64_t n) {
  using Tr = Traits<D>;
  using C = typename Tr::Compute;
  auto run = [&](auto f) { return unaryLoop<D>(x, y, n, f); };
  if constexpr (Tr::kind == Kind::Bool) {
    if (op == PARC_RT_UNARY_NOT)
      return run([](C v) { return C(v == 0); });
  } else if constexpr (Tr::kind == Kind::Int) {
    if constexpr (std::is_signed_v<C>) {
      switch (op) {
      case PARC_RT_UNARY_NEG: // through unsigned: -INT_MIN wraps, not UB
        return run([](C v) {
          return C(std::make_unsigned_t<C>(0) - std::make_unsigned_t<C>(v));
        });
      case PARC_RT_UNARY_ABS:
        return run([](C v) {
          return v < 0 ? C(std::make_unsigned_t<C>(0) -
                           std::make_unsigned_t<C>(v))
                       : v;
        });
      case PARC_RT_UNARY_RELU:
        return run([](C v) { return v > 0 ? v : C(0); });
      default:
        break;
      }
    }
  } else {
    const C half = C(0.5), one = C(1);
    switch (op) {
    case PARC_RT_UNARY_NEG:
      return run([](C v) { return -v; });
    case PARC_RT_UNARY_ABS:
      return run([](C v) { return std::fabs(v); });
    case PARC_RT_UNARY_EXP:
      return run([](C v) { return vexp(v); });
    case PARC_RT_UNARY_LOG:
      return run([](C v) { return std::log(v); });
    case PARC_RT_UNARY_SQRT:
      return run([](C v) { return std::sqrt(v); });
    case PARC_RT_UNARY_RECIPROCAL:
      return run([=](C v) { return one / v; });
    case PARC_RT_UNARY_TANH:
      return run([](C v) { return vtanh(v); });
    case PARC_RT_UNARY_ERF:
      return run([](C v) { return std::erf(v); });
    case PARC_RT_UNARY_SIGMOID:
      // exp(-v) overflows to inf for very negative v: 1/inf = 0 is right.
      return run([=](C v) { return one / (one + vexp(-v)); });
    case PARC_RT_UNARY_RELU:
      return run([](C v) { return v > C(0) ? v : C(0); });
    case PARC_RT_UNARY_SILU:
      return run([=](C v) { return v / (one + vexp(-v)); });
    case PARC_RT_UNARY_GELU:
      return run([=](C v) {
        return half * v * (one + verfGelu(v * C(0.70710678118654752440)));
      });
    case PARC_RT_UNARY_GELU_TANH:
      return run([=](C v) {
        const C inner =
            C(0.79788456080286535588) * (v + C(0.044715) * v * v * v);
        return half * v * (one + vtanh(inner));
      });
    case PARC_RT_UNARY_FLOOR:
      return run([](C v) { return std::floor(v); });
    case PARC_RT_UNARY_CEIL:
      return run([](C v) { return std::ceil(v); });
    case PARC_RT_UNARY_SIN:
      return run([](C v) { return std::sin(v); });
    case PARC_RT_UNARY_COS:
      return run([](C v) { return std::cos(v); });
    case PARC_RT_UNARY_NOT:
      break;
    }
  }
  return unaryUnsupported(op, D);
}

//===----------------------------------------------------------------------===//
// Binary
//===----------------------------------------------------------------------===//

/// out = f(a, b) over a broadcast loop nest; the inner-stride cases are
/// split so that each inner loop is unit-strided or has a scalar operand.
template <typename S, typename O, typename F>
void binaryLoop(const LoopNest<3> &loop, const S *a, const S *b, O *out, F f) {
  const int64_t sa = loop.innerStride(1), sb = loop.innerStride(2);
  loop.run([&](const std::array<int64_t, 3> &off, int64_t n) {
    zipLoop(a + off[1], sa, b + off[2], sb, out + off[0], n, f);
  });
}

template <parc_rt_dtype_t D>
parc_rt_status_t binaryTyped(parc_rt_binary_op_t op, const LoopNest<3> &loop,
                             const void *av, const void *bv, int64_t bCount,
                             void *outv) {
  using Tr = Traits<D>;
  using S = typename Tr::Storage;
  using C = typename Tr::Compute;
  const S *a = static_cast<const S *>(av), *b = static_cast<const S *>(bv);
  auto arith = [&](auto f) {
    binaryLoop(loop, a, b, static_cast<S *>(outv), [f](S x, S y) {
      return Tr::store(f(Tr::load(x), Tr::load(y)));
    });
    return PARC_RT_OK;
  };
  auto compare = [&](auto f) {
    binaryLoop(loop, a, b, static_cast<uint8_t *>(outv),
               [f](S x, S y) { return uint8_t(f(Tr::load(x), Tr::load(y))); });
    return PARC_RT_OK;
  };
  switch (op) {
  case PARC_RT_BINARY_EQUAL:
    return compare([](C x, C y) { return x == y; });
  case PARC_RT_BINARY_LESS:
    return compare([](C x, C y) { return x < y; });
  case PARC_RT_BINARY_LESS_EQUAL:
    return compare([](C x, C y) { return x <= y; });
  case PARC_RT_BINARY_GREATER:
    return compare([](C x, C y) { return x > y; });
  case PARC_RT_BINARY_GREATER_EQUAL:
    return compare([](C x, C y) { return x >= y; });
  default:
    break;
  }
  if constexpr (Tr::kind == Kind::Bool) {
    switch (op) {
    case PARC_RT_BINARY_AND:
      return compare([](C x, C y) { return x && y; });
    case PARC_RT_BINARY_OR:
      return compare([](C x, C y) { return x || y; });
    case PARC_RT_BINARY_XOR:
      return compare([](C x, C y) { return (x != 0) != (y != 0); });
    default:
      break;
    }
  } else {
    switch (op) {
    case PARC_RT_BINARY_ADD:
      return arith([](C x, C y) { return C(x + y); });
    case PARC_RT_BINARY_SUB:
      return arith([](C x, C y) { return C(x - y); });
    case PARC_RT_BINARY_MUL:
      return arith([](C x, C y) { return C(x * y); });
    case PARC_RT_BINARY_DIV:
      if constexpr (Tr::kind == Kind::Int) {
        // Every element of b is used when out is non-empty, so scanning b
        // up front turns SIGFPE into an error before anything is written.
        for (int64_t i = 0; i < bCount; ++i)
          if (b[i] == 0)
            return fail(PARC_RT_INVALID_ARGUMENT,
                        "div: integer division by zero (divisor element %lld)",
                        (long long)i);
        return arith([](C x, C y) {
          if constexpr (std::is_signed_v<C>)
            if (y == C(-1)) // INT_MIN / -1 overflows
              return C(std::make_unsigned_t<C>(0) - std::make_unsigned_t<C>(x));
          return C(x / y);
        });
      } else {
        return arith([](C x, C y) { return x / y; });
      }
    case PARC_RT_BINARY_POW:
      if constexpr (Tr::kind == Kind::Int)
        return arith([](C x, C y) { return intPow(x, y); });
      else
        return arith([](C x, C y) { return C(std::pow(x, y)); });
    case PARC_RT_BINARY_MIN: // NaN propagates, as in numpy and ONNX
      return arith([](C x, C y) { return (x < y || x != x) ? x : y; });
    case PARC_RT_BINARY_MAX:
      return arith([](C x, C y) { return (x > y || x != x) ? x : y; });
    default:
      break;
    }
  }
  return binaryUnsupported(op, D);
}

//===----------------------------------------------------------------------===//
// Cast
//===----------------------------------------------------------------------===//

template <parc_rt_dtype_t From, parc_rt_dtype_t To>
void castLoop(const void *x, void *y, int64_t n) {
  using F = Traits<From>;
  using T = Traits<To>;
  using FS = typename F::Storage;
  using TS = typename T::Storage;
  using TC = typename T::Compute;
  const FS *in = static_cast<const FS *>(x);
  TS *out = static_cast<TS *>(y);
  parallelRanges(n, kGrain, [&](int64_t begin, int64_t end) {
    mapLoop(in + begin, out + begin, end - begin, [](FS s) -> TS {
      auto v = F::load(s);
      if constexpr (T::kind == Kind::Bool)
        return TS(v != 0);
      else if constexpr (T::kind == Kind::Int && F::kind == Kind::Float)
        return saturatingFromDouble<TS>(double(v));
      else if constexpr (F::kind == Kind::Bool)
        return T::store(TC(v != 0));
      else
        return T::store(TC(v));
    });
  });
}

} // namespace

parc_rt_status_t parc::rt::runUnary(parc_rt_unary_op_t op,
                                    parc_rt_dtype_t dtype, const void *x,
                                    void *y, int64_t count) {
  return visitDtype(
      dtype,
      [&](auto tag) {
        return unaryTyped<decltype(tag)::value>(op, x, y, count);
      },
      [] { return PARC_RT_INTERNAL; });
}

parc_rt_status_t parc::rt::runBinary(parc_rt_binary_op_t op,
                                     parc_rt_dtype_t dtype,
                                     const LoopNest<3> &loop, int64_t,
                                     const void *a, const void *b,
                                     int64_t bCount, void *out) {
  return visitDtype(
      dtype,
      [&](auto tag) {
        return binaryTyped<decltype(tag)::value>(op, loop, a, b, bCount, out);
      },
      [] { return PARC_RT_INTERNAL; });
}

parc_rt_status_t parc::rt::runWhere(parc_rt_dtype_t dtype,
                                    const LoopNest<4> &loop, int64_t,
                                    const void *cond, const void *x,
                                    const void *y, void *out) {
  const int64_t sc = loop.innerStride(1), sx = loop.innerStride(2),
                sy = loop.innerStride(3);
  visitWord(parc_rt_dtype_size(dtype), [&](auto word) {
    using W = decltype(word);
    const uint8_t *c = static_cast<const uint8_t *>(cond);
    const W *px = static_cast<const W *>(x), *py = static_cast<const W *>(y);
    W *po = static_cast<W *>(out);
    loop.run([&](const std::array<int64_t, 4> &off, int64_t len) {
      const uint8_t *cc = c + off[1];
      const W *xx = px + off[2], *yy = py + off[3];
      W *oo = po + off[0];
      for (int64_t i = 0; i < len; ++i)
        oo[i] = cc[i * sc] ? xx[i * sx] : yy[i * sy];
    });
  });
  return PARC_RT_OK;
}

parc_rt_status_t parc::rt::runCast(parc_rt_dtype_t from, const void *x,
                                   parc_rt_dtype_t to, void *y, int64_t count) {
  return visitDtype(
      from,
      [&](auto fromTag) {
        return visitDtype(
            to,
            [&](auto toTag) {
              castLoop<decltype(fromTag)::value, decltype(toTag)::value>(x, y,
                                                                         count);
              return PARC_RT_OK;
            },
            [] { return PARC_RT_INTERNAL; });
      },
      [] { return PARC_RT_INTERNAL; });
}

parc_rt_status_t parc::rt::runFill(parc_rt_dtype_t dtype, void *dst,
                                   int64_t count, const void *value) {
  visitWord(parc_rt_dtype_size(dtype), [&](auto word) {
    using W = decltype(word);
    W v;
    std::memcpy(&v, value, sizeof(W));
    W *out = static_cast<W *>(dst);
    parallelRanges(count, kGrain, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i)
        out[i] = v;
    });
  });
  return PARC_RT_OK;
}

extern "C" {

parc_rt_status_t parc_rt_copy(void *dst, const void *src, size_t bytes) {
  if (bytes == 0)
    return PARC_RT_OK;
  if (!dst || !src)
    return fail(PARC_RT_INVALID_ARGUMENT, "copy: null %s pointer",
                dst ? "source" : "destination");
  std::memmove(dst, src, bytes);
  return PARC_RT_OK;
}

} // extern "C"
