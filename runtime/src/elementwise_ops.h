//===- elementwise_ops.h - Elementwise op names and support -----*- C++ -*-===//
//
// What the elementwise ABI accepts, for both backends: op names for
// messages, which op runs on which dtype, and the checks of the flat
// (count-based) kernels. A backend keeps only the loops or kernels; both
// accept and reject the same calls with the same words.
//
//===----------------------------------------------------------------------===//
#ifndef PARC_RUNTIME_ELEMENTWISE_OPS_H
#define PARC_RUNTIME_ELEMENTWISE_OPS_H

#include "broadcast_plan.h"
#include "shape_checks.h"
#include "status.h"

namespace parc::rt {

inline const char *unaryName(parc_rt_unary_op_t op) {
  static const char *names[] = {
      "neg",  "abs",       "exp",     "log",  "sqrt", "reciprocal",
      "tanh", "erf",       "sigmoid", "relu", "not",  "silu",
      "gelu", "gelu_tanh", "floor",   "ceil", "sin",  "cos"};
  return unsigned(op) < sizeof(names) / sizeof(names[0]) ? names[op] : "unary";
}

inline const char *binaryName(parc_rt_binary_op_t op) {
  static const char *names[] = {
      "add",     "sub",           "mul",   "div",  "pow",
      "min",     "max",           "equal", "less", "less_equal",
      "greater", "greater_equal", "and",   "or",   "xor"};
  return unsigned(op) < sizeof(names) / sizeof(names[0]) ? names[op] : "binary";
}

/// not on bool; neg, abs and relu on signed integers; every op but not on
/// floats; nothing on u8.
inline bool unarySupported(parc_rt_unary_op_t op, parc_rt_dtype_t dtype) {
  switch (dtype) {
  case PARC_RT_BOOL:
    return op == PARC_RT_UNARY_NOT;
  case PARC_RT_I64:
  case PARC_RT_I32:
  case PARC_RT_I8:
    return op == PARC_RT_UNARY_NEG || op == PARC_RT_UNARY_ABS ||
           op == PARC_RT_UNARY_RELU;
  case PARC_RT_U8:
    return false;
  default: // float types
    return unsigned(op) <= PARC_RT_UNARY_COS && op != PARC_RT_UNARY_NOT;
  }
}

inline parc_rt_status_t unaryUnsupported(parc_rt_unary_op_t op,
                                         parc_rt_dtype_t dtype) {
  return fail(PARC_RT_UNSUPPORTED, "unary '%s': dtype %s is not supported",
              unaryName(op), parc_rt_dtype_name(dtype));
}

inline bool isComparison(int op) {
  return op >= PARC_RT_BINARY_EQUAL && op <= PARC_RT_BINARY_GREATER_EQUAL;
}

/// Comparisons on every dtype; and, or, xor on bool only; arithmetic on
/// every dtype but bool.
inline bool binarySupported(parc_rt_binary_op_t op, parc_rt_dtype_t dtype) {
  if (isComparison(op))
    return true;
  if (dtype == PARC_RT_BOOL)
    return op == PARC_RT_BINARY_AND || op == PARC_RT_BINARY_OR ||
           op == PARC_RT_BINARY_XOR;
  return unsigned(op) <= PARC_RT_BINARY_MAX;
}

inline parc_rt_status_t binaryUnsupported(parc_rt_binary_op_t op,
                                          parc_rt_dtype_t dtype) {
  return fail(PARC_RT_UNSUPPORTED, "%s: dtype %s is not supported",
              binaryName(op), parc_rt_dtype_name(dtype));
}

/// A flat kernel over `count` elements of `dtype` in buffers a and b.
inline parc_rt_status_t checkFlat(const char *op, parc_rt_dtype_t dtype,
                                  int64_t count, const void *a,
                                  const char *aName, const void *b,
                                  const char *bName) {
  PARC_RT_RETURN_IF_ERROR(checkDtype(op, dtype));
  if (count < 0)
    return fail(PARC_RT_INVALID_ARGUMENT, "%s: negative count %lld", op,
                (long long)count);
  PARC_RT_RETURN_IF_ERROR(checkData(op, aName, a, count));
  return checkData(op, bName, b, count);
}

inline parc_rt_status_t checkUnary(parc_rt_unary_op_t op, parc_rt_dtype_t dtype,
                                   const void *x, void *y, int64_t count) {
  PARC_RT_RETURN_IF_ERROR(
      checkFlat(unaryName(op), dtype, count, x, "x", y, "y"));
  return unarySupported(op, dtype) ? PARC_RT_OK : unaryUnsupported(op, dtype);
}

inline parc_rt_status_t checkCast(parc_rt_dtype_t from, const void *x,
                                  parc_rt_dtype_t to, void *y, int64_t count) {
  PARC_RT_RETURN_IF_ERROR(checkDtype("cast", from));
  PARC_RT_RETURN_IF_ERROR(checkDtype("cast", to));
  return checkFlat("cast", from, count, x, "x", y, "y");
}

/// fill: `value` is one element, checked whenever dst has any.
inline parc_rt_status_t checkFill(parc_rt_dtype_t dtype, void *dst,
                                  int64_t count, const void *value) {
  return checkFlat("fill", dtype, count, dst, "dst", value, "value");
}

/// binary: a and b broadcast to out (planBroadcast's count and strides),
/// the op supported on dtype.
inline parc_rt_status_t
planBinary(parc_rt_binary_op_t op, parc_rt_dtype_t dtype, const void *a,
           int64_t aRank, const int64_t *aDims, const void *b, int64_t bRank,
           const int64_t *bDims, void *out, int64_t outRank,
           const int64_t *outDims, int64_t &count,
           int64_t (&strides)[3][PARC_RT_MAX_RANK]) {
  PARC_RT_RETURN_IF_ERROR(planBroadcast<2>(
      binaryName(op), dtype, {{"a", a, aRank, aDims}, {"b", b, bRank, bDims}},
      out, outRank, outDims, count, strides));
  if (count == 0 || binarySupported(op, dtype))
    return PARC_RT_OK;
  return binaryUnsupported(op, dtype);
}

/// where: cond (bool), x and y broadcast to out.
inline parc_rt_status_t planWhere(parc_rt_dtype_t dtype, const void *cond,
                                  int64_t condRank, const int64_t *condDims,
                                  const void *x, int64_t xRank,
                                  const int64_t *xDims, const void *y,
                                  int64_t yRank, const int64_t *yDims,
                                  void *out, int64_t outRank,
                                  const int64_t *outDims, int64_t &count,
                                  int64_t (&strides)[4][PARC_RT_MAX_RANK]) {
  return planBroadcast<3>("where", dtype,
                          {{"cond", cond, condRank, condDims},
                           {"x", x, xRank, xDims},
                           {"y", y, yRank, yDims}},
                          out, outRank, outDims, count, strides);
}

} // namespace parc::rt

#endif // PARC_RUNTIME_ELEMENTWISE_OPS_H
