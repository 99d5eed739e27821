//===- DistInterfaces.h - sharding rules of ops -----------------*- C++ -*-===//
//
// The answer of a sharding rule (DistInterfaces.td) and the interface.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_DIALECTS_DIST_DISTINTERFACES_H
#define PARC_DIALECTS_DIST_DISTINTERFACES_H

#include "mlir/IR/OpDefinition.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/Twine.h"

#include <optional>
#include <string>

namespace parc::dist {

/// A value split along `dim` into `parts` distinct parts.
struct DimSplit {
  int64_t dim;
  int64_t parts;
  bool operator==(const DimSplit &o) const {
    return dim == o.dim && parts == o.parts;
  }
  bool operator!=(const DimSplit &o) const { return !(*this == o); }
};

/// What a sharding rule answers: the splits of the other side of the op,
/// or why it has none.
struct SplitRule {
  enum class Status { Ok, Refused, Misfit };
  Status status = Status::Ok;
  /// Per result (forwards) or operand (backwards): its split, none if whole.
  llvm::SmallVector<std::optional<DimSplit>> splits;
  /// The results hold partial sums over the parts.
  bool partial = false;
  /// Constant side operands to cut so that each rank holds its part:
  /// operand number and dim.
  llvm::SmallVector<std::pair<unsigned, int64_t>> cuts;
  /// Set by an operand split along a dim the op divides into pieces (Split):
  /// it holds only if the operand is cut blockwise, piece by piece.
  bool blockwise = false;
  /// Why the op cannot take the split (refused or misfit).
  std::string why;

  static SplitRule refuse(const llvm::Twine &why) {
    SplitRule r;
    r.status = Status::Refused;
    r.why = why.str();
    return r;
  }
  static SplitRule misfit(const llvm::Twine &why) {
    SplitRule r = refuse(why);
    r.status = Status::Misfit;
    return r;
  }
  bool ok() const { return status == Status::Ok; }
};

} // namespace parc::dist

#include "dist/DistInterfaces.h.inc"

#endif // PARC_DIALECTS_DIST_DISTINTERFACES_H
