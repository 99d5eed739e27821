//===- RTDTypes.cpp - the element types a rank program can hold -*- C++ -*-===//

#include "rt/RTDTypes.h"

#include "mlir/IR/BuiltinTypes.h"

using namespace mlir;

const parc::rt::DType *parc::rt::dtypeOf(Type t) {
  struct Entry {
    bool (*matches)(Type);
    DType dtype;
  };
  // Type::isInteger matches any signedness: u8 is tried before i8.
  static const Entry table[] = {
      {[](Type t) { return t.isF32(); }, {"f32", "PARC_RT_F32", "F32"}},
      {[](Type t) { return t.isF16(); }, {"f16", "PARC_RT_F16", "F16"}},
      {[](Type t) { return t.isBF16(); }, {"bf16", "PARC_RT_BF16", "BF16"}},
      {[](Type t) { return t.isF64(); }, {"f64", "PARC_RT_F64", "F64"}},
      {[](Type t) { return t.isInteger(64); }, {"i64", "PARC_RT_I64", "I64"}},
      {[](Type t) { return t.isInteger(32); }, {"i32", "PARC_RT_I32", "I32"}},
      {[](Type t) { return t.isUnsignedInteger(8); }, {"u8", "PARC_RT_U8", "U8"}},
      {[](Type t) { return t.isInteger(8); }, {"i8", "PARC_RT_I8", "I8"}},
      {[](Type t) { return t.isInteger(1); }, {"bool", "PARC_RT_BOOL", "BOOL"}},
  };
  for (const Entry &e : table)
    if (e.matches(t))
      return &e.dtype;
  return nullptr;
}
