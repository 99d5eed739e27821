//===- NNConstants.h - reading constant elements ----------------*- C++ -*-===//
//
// The folders' reader of constant elements (dense or dense_resource), for
// code outside them that inspects a constant: a mask, say.
//
//===----------------------------------------------------------------------===//
#ifndef PARC_DIALECTS_NN_NNCONSTANTS_H
#define PARC_DIALECTS_NN_NNCONSTANTS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/Value.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace parc::nn {

/// The elements of a constant as doubles, integers and i1 widened; nullopt
/// past `limit` elements or for an element type it does not read.
std::optional<std::vector<double>> constantValues(mlir::Attribute attr,
                                                  int64_t limit);

/// The same for a value that is a constant or nn.slices of one (a mask cut
/// from a larger buffer, GPT-2's bias[:, :, :S, :S]), which the folders
/// keep as slices past their size limit; nullopt for anything else.
std::optional<std::vector<double>> constantValuesOf(mlir::Value v,
                                                    int64_t limit);

} // namespace parc::nn

#endif // PARC_DIALECTS_NN_NNCONSTANTS_H
