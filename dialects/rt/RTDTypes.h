//===- RTDTypes.h - the element types a rank program can hold ---*- C++ -*-===//
//
// One table from an MLIR element type to its names: the runtime's
// parc_rt_dtype_t enumerator (generated code), the short name of
// runtime.h's parc_rt_dtype_name (manifests) and the safetensors dtype
// (weight shards). Codegen, the manifest and the shard writer read it, so
// a dtype the runtime gains is added in one place.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_DIALECTS_RT_RTDTYPES_H
#define PARC_DIALECTS_RT_RTDTYPES_H

#include "mlir/IR/Types.h"
#include "llvm/ADT/StringRef.h"

namespace parc::rt {

struct DType {
  llvm::StringLiteral name;        ///< "bf16", as parc_rt_dtype_name
  llvm::StringLiteral enumerator;  ///< "PARC_RT_BF16"
  llvm::StringLiteral safetensors; ///< "BF16"
};

/// The runtime dtype of element type `t`, or null when the runtime has none.
const DType *dtypeOf(mlir::Type t);

} // namespace parc::rt

#endif // PARC_DIALECTS_RT_RTDTYPES_H
