//===- DistOps.cpp - verifiers of the dist ops ------------------*- C++ -*-===//
//
// Traits check what they can (static tensors, non-empty axis lists,
// non-negative tensor axes); `verify` checks what an op says about itself,
// and `verifySymbolUses` resolves the mesh through the nearest symbol table
// and checks the shape arithmetic that the group size implies. The sync and
// `*_start` forms of a collective share one checker.
//
//===----------------------------------------------------------------------===//

#include "dist/DistDialect.h"

#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace parc::dist;

#define GET_OP_CLASSES
#include "dist/DistOps.cpp.inc"

namespace {

std::string shapeStr(ArrayRef<int64_t> shape) {
  std::string s = "[";
  llvm::raw_string_ostream os(s);
  llvm::interleave(shape, os, "x");
  os << "]";
  return s;
}

RankedTensorType tensorType(Type type) {
  if (auto async = dyn_cast<AsyncType>(type))
    type = async.getValueType();
  return cast<RankedTensorType>(type);
}

/// Axis names of a collective are distinct.
LogicalResult verifyAxesDistinct(Operation *op, ArrayAttr axes) {
  llvm::StringSet<> seen;
  for (StringRef axis : axes.getAsValueRange<StringAttr>()) {
    if (axis.empty())
      return op->emitOpError("mesh axis names must not be empty");
    if (!seen.insert(axis).second)
      return op->emitOpError()
             << "mesh axis \"" << axis << "\" is listed twice";
  }
  return success();
}

/// Resolves the collective's mesh and returns the size of its groups.
FailureOr<int64_t> resolveGroupSize(Operation *op,
                                    SymbolTableCollection &tables,
                                    FlatSymbolRefAttr meshRef, ArrayAttr axes) {
  Operation *symbol = tables.lookupNearestSymbolFrom(op, meshRef.getAttr());
  if (!symbol) {
    op->emitOpError() << "refers to unknown mesh " << meshRef;
    return failure();
  }
  auto mesh = dyn_cast<MeshOp>(symbol);
  if (!mesh) {
    op->emitOpError() << "refers to " << meshRef
                      << ", which is not a dist.mesh";
    return failure();
  }
  SmallVector<StringRef> names =
      llvm::to_vector(axes.getAsValueRange<StringAttr>());
  for (StringRef axis : names)
    if (!mesh.getAxisIndex(axis)) {
      op->emitOpError() << "mesh " << meshRef << " has no axis \"" << axis
                        << "\"";
      return failure();
    }
  return *mesh.getGroupSize(names);
}

LogicalResult verifyAxisInRange(Operation *op, StringRef name, int64_t axis,
                                RankedTensorType type) {
  if (axis >= type.getRank())
    return op->emitOpError() << name << " " << axis
                             << " is out of range for rank " << type.getRank();
  return success();
}

/// `result` has the rank and element type of `input` and its shape except
/// along `axes`.
LogicalResult verifySameExcept(Operation *op, RankedTensorType input,
                               RankedTensorType result, ArrayRef<int64_t> axes,
                               StringRef what) {
  if (input.getElementType() != result.getElementType())
    return op->emitOpError()
           << "result element type " << result.getElementType()
           << " differs from the input element type " << input.getElementType();
  if (input.getRank() != result.getRank())
    return op->emitOpError()
           << "result rank " << result.getRank()
           << " differs from the input rank " << input.getRank();
  for (int64_t dim = 0; dim < input.getRank(); ++dim)
    if (!llvm::is_contained(axes, dim) &&
        input.getDimSize(dim) != result.getDimSize(dim))
      return op->emitOpError()
             << "result shape " << shapeStr(result.getShape())
             << " must match the input shape " << shapeStr(input.getShape())
             << " except along " << what;
  return success();
}

/// Explicit per-member extents of an uneven gather or scatter: they sum to
/// the extent of the whole (`wholeName`) and this rank's extent (`localName`)
/// is one of them, or with `localPadded` (a gather of padded parts) bounds
/// every one.
LogicalResult verifySizes(Operation *op, ArrayRef<int64_t> sizes,
                          std::optional<int64_t> groupSize, StringRef axisName,
                          StringRef wholeName, int64_t whole,
                          StringRef localName, int64_t local,
                          bool localPadded = false) {
  if (llvm::any_of(sizes, [](int64_t s) { return s < 0; }))
    return op->emitOpError("sizes must be non-negative");
  int64_t sum = 0;
  for (int64_t s : sizes)
    sum += s;
  if (sum != whole)
    return op->emitOpError()
           << "sizes sum to " << sum << " but the " << wholeName
           << " extent along " << axisName << " is " << whole;
  if (localPadded && llvm::any_of(sizes, [&](int64_t s) { return s > local; }))
    return op->emitOpError()
           << localName << " extent " << local << " along " << axisName
           << " is less than the largest of sizes";
  if (!localPadded && !llvm::is_contained(sizes, local))
    return op->emitOpError() << localName << " extent " << local << " along "
                             << axisName << " is not one of sizes";
  if (groupSize && static_cast<int64_t>(sizes.size()) != *groupSize)
    return op->emitOpError()
           << "sizes has " << sizes.size() << " entries for a group of "
           << *groupSize << " ranks";
  return success();
}

/// all_gather: the result concatenates the group's inputs along `axis`.
LogicalResult verifyGather(Operation *op, Type inputType, Type resultType,
                           int64_t axis, std::optional<ArrayRef<int64_t>> sizes,
                           std::optional<int64_t> groupSize) {
  RankedTensorType input = tensorType(inputType);
  RankedTensorType result = tensorType(resultType);
  if (failed(verifyAxisInRange(op, "gather_axis", axis, input)) ||
      failed(verifySameExcept(op, input, result, {axis}, "gather_axis")))
    return failure();
  int64_t in = input.getDimSize(axis), out = result.getDimSize(axis);
  if (sizes)
    return verifySizes(op, *sizes, groupSize, "gather_axis", "result", out,
                       "input", in, /*localPadded=*/true);
  if (groupSize && out != in * *groupSize)
    return op->emitOpError()
           << "result extent along gather_axis must be " << in * *groupSize
           << " (input extent " << in << " x group size " << *groupSize
           << "), got " << out;
  return success();
}

/// reduce_scatter: the result is this member's slice along `axis`.
LogicalResult verifyScatter(Operation *op, Type inputType, Type resultType,
                            int64_t axis,
                            std::optional<ArrayRef<int64_t>> sizes,
                            std::optional<int64_t> groupSize) {
  RankedTensorType input = tensorType(inputType);
  RankedTensorType result = tensorType(resultType);
  if (failed(verifyAxisInRange(op, "scatter_axis", axis, input)) ||
      failed(verifySameExcept(op, input, result, {axis}, "scatter_axis")))
    return failure();
  int64_t in = input.getDimSize(axis), out = result.getDimSize(axis);
  if (sizes)
    return verifySizes(op, *sizes, groupSize, "scatter_axis", "input", in,
                       "result", out);
  if (!groupSize)
    return success();
  if (in % *groupSize != 0)
    return op->emitOpError() << "input extent " << in
                             << " along scatter_axis does not divide into "
                             << *groupSize << " shards";
  if (out != in / *groupSize)
    return op->emitOpError()
           << "result extent along scatter_axis must be " << in / *groupSize
           << " (input extent " << in << " / group size " << *groupSize
           << "), got " << out;
  return success();
}

/// all_to_all: split along one axis, concatenate along another.
LogicalResult verifyAllToAll(Operation *op, Type inputType, Type resultType,
                             int64_t splitAxis, int64_t concatAxis,
                             std::optional<int64_t> groupSize) {
  RankedTensorType input = tensorType(inputType);
  RankedTensorType result = tensorType(resultType);
  if (failed(verifyAxisInRange(op, "split_axis", splitAxis, input)) ||
      failed(verifyAxisInRange(op, "concat_axis", concatAxis, input)) ||
      failed(verifySameExcept(op, input, result, {splitAxis, concatAxis},
                              "split_axis and concat_axis")))
    return failure();
  if (!groupSize)
    return success();
  int64_t n = *groupSize;
  int64_t split = input.getDimSize(splitAxis);
  if (split % n != 0)
    return op->emitOpError()
           << "input extent " << split
           << " along split_axis does not divide into " << n << " slices";
  SmallVector<int64_t> expected(input.getShape());
  expected[splitAxis] /= n;
  expected[concatAxis] *= n;
  if (result.getShape() != ArrayRef<int64_t>(expected))
    return op->emitOpError() << "result shape must be " << shapeStr(expected)
                             << " for a group of " << n << " ranks, got "
                             << shapeStr(result.getShape());
  return success();
}

/// send/recv: exactly one of `peer` and `shift`, naming another member.
LogicalResult verifyPeer(Operation *op, std::optional<int64_t> peer,
                         std::optional<int64_t> shift,
                         std::optional<int64_t> groupSize) {
  if (peer.has_value() == shift.has_value())
    return op->emitOpError("needs exactly one of peer and shift");
  if (!groupSize)
    return success();
  if (peer && *peer >= *groupSize)
    return op->emitOpError()
           << "peer " << *peer << " is out of range for a group of "
           << *groupSize << " ranks";
  if (shift && *shift % *groupSize == 0)
    return op->emitOpError()
           << "shift " << *shift << " is a multiple of the group size "
           << *groupSize << ": a rank would talk to itself";
  return success();
}

std::optional<ArrayRef<int64_t>> optionalSizes(DenseI64ArrayAttr sizes) {
  if (!sizes)
    return std::nullopt;
  return sizes.asArrayRef();
}

} // namespace

//===----------------------------------------------------------------------===//
// dist.mesh
//===----------------------------------------------------------------------===//

LogicalResult MeshOp::verify() {
  ArrayRef<int64_t> shape = getShape();
  if (shape.empty())
    return emitOpError("a mesh has at least one axis");
  if (shape.size() != getAxes().size())
    return emitOpError() << "shape has " << shape.size() << " dimensions but "
                         << getAxes().size() << " axis names are given";
  llvm::StringSet<> seen;
  for (auto [name, size] : llvm::zip(getAxisNames(), shape)) {
    if (name.empty())
      return emitOpError("mesh axis names must not be empty");
    if (!seen.insert(name).second)
      return emitOpError() << "mesh axis \"" << name << "\" is declared twice";
    if (size <= 0)
      return emitOpError() << "mesh axis \"" << name << "\" has size " << size
                           << "; sizes must be positive";
  }
  return success();
}

int64_t MeshOp::getNumRanks() {
  int64_t n = 1;
  for (int64_t size : getShape())
    n *= size;
  return n;
}

SmallVector<StringRef> MeshOp::getAxisNames() {
  return llvm::to_vector(getAxes().getAsValueRange<StringAttr>());
}

std::optional<unsigned> MeshOp::getAxisIndex(StringRef name) {
  for (auto [i, axis] :
       llvm::enumerate(getAxes().getAsValueRange<StringAttr>()))
    if (axis == name)
      return i;
  return std::nullopt;
}

FailureOr<int64_t> MeshOp::getGroupSize(ArrayRef<StringRef> axes) {
  int64_t n = 1;
  for (StringRef axis : axes) {
    std::optional<unsigned> i = getAxisIndex(axis);
    if (!i)
      return failure();
    n *= getShape()[*i];
  }
  return n;
}

SmallVector<int64_t> MeshOp::getCoordinates(int64_t rank) {
  ArrayRef<int64_t> shape = getShape();
  SmallVector<int64_t> coords(shape.size());
  for (int64_t i = shape.size() - 1; i >= 0; --i) {
    coords[i] = rank % shape[i];
    rank /= shape[i];
  }
  return coords;
}

int64_t MeshOp::getLinearRank(ArrayRef<int64_t> coords) {
  int64_t rank = 0;
  for (auto [coord, size] : llvm::zip(coords, getShape()))
    rank = rank * size + coord;
  return rank;
}

//===----------------------------------------------------------------------===//
// dist.shard
//===----------------------------------------------------------------------===//

LogicalResult ShardOp::verifySymbolUses(SymbolTableCollection &tables) {
  return verifyShardingUse(getSharding(), getInput().getType().getShape(),
                           *this, &tables, [&] { return emitOpError(); });
}

//===----------------------------------------------------------------------===//
// dist.local_part
//===----------------------------------------------------------------------===//

LogicalResult ReshardOp::verify() {
  RankedTensorType input = getInput().getType();
  RankedTensorType result = getResult().getType();
  if (input.getRank() != result.getRank() ||
      input.getElementType() != result.getElementType())
    return emitOpError() << "must keep the rank and element type, got "
                         << input << " -> " << result;
  if (getFrom().getMesh() != getTo().getMesh())
    return emitOpError() << "reshards between meshes " << getFrom().getMesh()
                         << " and " << getTo().getMesh();
  return success();
}

LogicalResult LocalPartOp::verify() {
  RankedTensorType input = getInput().getType();
  RankedTensorType result = getResult().getType();
  if (input.getRank() != result.getRank() ||
      input.getElementType() != result.getElementType())
    return emitOpError() << "must keep the rank and element type, got "
                         << input << " -> " << result;
  ShardingAttr sharding = getSharding();
  if (sharding.isPartial())
    return emitOpError() << "takes a part of a whole value, not of a partial "
                            "one: "
                         << sharding;
  if (!sharding.getShardSizes().empty())
    return emitOpError() << "gives every rank a part of one type: its "
                            "sharding has no uneven sizes, got "
                         << sharding;
  return success();
}

LogicalResult LocalPartOp::verifySymbolUses(SymbolTableCollection &tables) {
  RankedTensorType input = getInput().getType();
  if (failed(verifyShardingUse(getSharding(), input.getShape(), *this, &tables,
                               [&] { return emitOpError(); })))
    return failure();
  auto mesh = cast<MeshOp>(
      tables.lookupNearestSymbolFrom(*this, getSharding().getMesh().getAttr()));
  FailureOr<SmallVector<int64_t>> local =
      getSharding().getLocalShape(input.getShape(), mesh, 0);
  if (failed(local) || ArrayRef(*local) != getResult().getType().getShape())
    return emitOpError() << "result must be "
                         << RankedTensorType::get(failed(local) ? input.getShape() : ArrayRef(*local),
                                                  input.getElementType())
                         << ", this rank's part of " << input << ", got "
                         << getResult().getType();
  return success();
}

//===----------------------------------------------------------------------===//
// Collectives
//===----------------------------------------------------------------------===//

// The op-specific checks of each collective, without the group size (from
// `verify`) and with it (from `verifySymbolUses`, once the mesh resolves).

static LogicalResult checkComm(AllReduceOp, std::optional<int64_t>) {
  return success();
}

static LogicalResult checkComm(AllReduceStartOp op, std::optional<int64_t>) {
  if (op.getResult().getType().getValueType() != op.getInput().getType())
    return op.emitOpError()
           << "result must be !dist.async<" << op.getInput().getType() << ">";
  return success();
}

template <typename OpT>
static LogicalResult checkGather(OpT op, std::optional<int64_t> groupSize) {
  if (std::optional<int64_t> root = op.getRoot();
      root && (*root < 0 || (groupSize && *root >= *groupSize)))
    return op.emitOpError()
           << "root " << *root << " is not a member of the "
           << (groupSize ? std::to_string(*groupSize) + "-member " : "")
           << "group";
  return verifyGather(op, op.getInput().getType(), op.getResult().getType(),
                      op.getGatherAxis(), optionalSizes(op.getSizesAttr()),
                      groupSize);
}
static LogicalResult checkComm(AllGatherOp op, std::optional<int64_t> n) {
  return checkGather(op, n);
}
static LogicalResult checkComm(AllGatherStartOp op, std::optional<int64_t> n) {
  return checkGather(op, n);
}

template <typename OpT>
static LogicalResult checkScatter(OpT op, std::optional<int64_t> groupSize) {
  return verifyScatter(op, op.getInput().getType(), op.getResult().getType(),
                       op.getScatterAxis(), optionalSizes(op.getSizesAttr()),
                       groupSize);
}
static LogicalResult checkComm(ReduceScatterOp op, std::optional<int64_t> n) {
  return checkScatter(op, n);
}
static LogicalResult checkComm(ReduceScatterStartOp op,
                               std::optional<int64_t> n) {
  return checkScatter(op, n);
}

template <typename OpT>
static LogicalResult checkAllToAll(OpT op, std::optional<int64_t> groupSize) {
  return verifyAllToAll(op, op.getInput().getType(), op.getResult().getType(),
                        op.getSplitAxis(), op.getConcatAxis(), groupSize);
}
static LogicalResult checkComm(AllToAllOp op, std::optional<int64_t> n) {
  return checkAllToAll(op, n);
}
static LogicalResult checkComm(AllToAllStartOp op, std::optional<int64_t> n) {
  return checkAllToAll(op, n);
}

template <typename OpT>
static LogicalResult checkP2P(OpT op, std::optional<int64_t> groupSize) {
  return verifyPeer(op, op.getPeer(), op.getShift(), groupSize);
}
static LogicalResult checkComm(SendOp op, std::optional<int64_t> n) {
  return checkP2P(op, n);
}
static LogicalResult checkComm(SendStartOp op, std::optional<int64_t> n) {
  return checkP2P(op, n);
}
static LogicalResult checkComm(RecvOp op, std::optional<int64_t> n) {
  return checkP2P(op, n);
}
static LogicalResult checkComm(RecvStartOp op, std::optional<int64_t> n) {
  return checkP2P(op, n);
}

/// all_to_all_v and its started form: `output` is the exchanged tensor.
template <typename OpTy>
static LogicalResult checkAllToAllV(OpTy op, RankedTensorType output,
                                    std::optional<int64_t> groupSize) {
  RankedTensorType input = op.getInput().getType();
  int64_t axis = op.getAxis();
  if (failed(verifyAxisInRange(op, "axis", axis, input)) ||
      failed(verifySameExcept(op, input, output, {axis}, "axis")))
    return failure();
  if (!groupSize)
    return success();
  for (auto [name, counts] :
       {std::pair<StringRef, Value>{"send_counts", op.getSendCounts()},
        {"recv_counts", op.getRecvCounts()}}) {
    int64_t n = cast<RankedTensorType>(counts.getType()).getDimSize(0);
    if (n != *groupSize)
      return op.emitOpError() << name << " must have one entry per group "
                              << "member (" << *groupSize << "), got " << n;
  }
  return success();
}
static LogicalResult checkComm(AllToAllVOp op,
                               std::optional<int64_t> groupSize) {
  return checkAllToAllV(op, op.getOutput().getType(), groupSize);
}
static LogicalResult checkComm(AllToAllVStartOp op,
                               std::optional<int64_t> groupSize) {
  auto output = dyn_cast_or_null<RankedTensorType>(
      cast<AsyncType>(op.getResult().getType()).getValueType());
  if (!output)
    return op.emitOpError("must yield a ranked tensor");
  return checkAllToAllV(op, output, groupSize);
}

static LogicalResult checkComm(MoePermuteOp op,
                               std::optional<int64_t> groupSize) {
  RankedTensorType input = op.getInput().getType();
  auto ids = cast<RankedTensorType>(op.getExpertIds().getType());
  auto layout = cast<RankedTensorType>(op.getLayout().getType());
  if (input.getRank() != 2 || !isa<FloatType>(input.getElementType()))
    return op.emitOpError() << "input must be [tokens, hidden] of a float "
                               "type, got "
                            << input;
  int64_t tokens = input.getDimSize(0), hidden = input.getDimSize(1);
  if (ids.getRank() != 2 || ids.getDimSize(0) != tokens ||
      !ids.getElementType().isInteger(64))
    return op.emitOpError() << "expert_ids must be [" << tokens
                            << ", top_k] of i64, got " << ids;
  int64_t pairs = tokens * ids.getDimSize(1);
  if (layout.getRank() != 2 || !layout.getElementType().isInteger(64))
    return op.emitOpError() << "layout must be [members, local experts] of "
                               "i64, got "
                            << layout;
  int64_t members = layout.getDimSize(0), local = layout.getDimSize(1);
  auto size = [](Value v) {
    return cast<RankedTensorType>(v.getType()).getDimSize(0);
  };
  if (size(op.getCounts()) != members * members * local)
    return op.emitOpError()
           << "counts must hold every member's count of every expert ("
           << members * members * local << "), got " << size(op.getCounts());
  if (size(op.getSendCounts()) != members)
    return op.emitOpError() << "send_counts must have one entry per member ("
                            << members << "), got " << size(op.getSendCounts());
  if (size(op.getRecvCounts()) != members)
    return op.emitOpError() << "recv_counts must have one entry per member ("
                            << members << "), got " << size(op.getRecvCounts());
  RankedTensorType rows = op.getRows().getType();
  if (rows.getShape() != ArrayRef<int64_t>{pairs, hidden} ||
      !rows.getElementType().isF32())
    return op.emitOpError() << "rows must be [" << pairs << ", " << hidden
                            << "] of f32 (one per pair), got " << rows;
  if (size(op.getPairRows()) != pairs)
    return op.emitOpError() << "pair_rows must have one entry per pair ("
                            << pairs << "), got " << size(op.getPairRows());
  if (groupSize && members != *groupSize)
    return op.emitOpError() << "layout must have one row per group member ("
                            << *groupSize << "), got " << members;
  return success();
}

template <typename OpT> static LogicalResult verifyComm(OpT op) {
  if (failed(verifyAxesDistinct(op, op.getMeshAxes())))
    return failure();
  return checkComm(op, std::nullopt);
}

template <typename OpT>
static LogicalResult verifyCommUses(OpT op, SymbolTableCollection &tables) {
  FailureOr<int64_t> groupSize =
      resolveGroupSize(op, tables, op.getMeshAttr(), op.getMeshAxes());
  if (failed(groupSize))
    return failure();
  return checkComm(op, *groupSize);
}

#define DIST_COMM_VERIFIERS(OP)                                                \
  LogicalResult OP::verify() { return verifyComm(*this); }                     \
  LogicalResult OP::verifySymbolUses(SymbolTableCollection &tables) {          \
    return verifyCommUses(*this, tables);                                      \
  }
DIST_COMM_VERIFIERS(AllReduceOp)
DIST_COMM_VERIFIERS(AllReduceStartOp)
DIST_COMM_VERIFIERS(AllGatherOp)
DIST_COMM_VERIFIERS(AllGatherStartOp)
DIST_COMM_VERIFIERS(ReduceScatterOp)
DIST_COMM_VERIFIERS(ReduceScatterStartOp)
DIST_COMM_VERIFIERS(AllToAllOp)
DIST_COMM_VERIFIERS(AllToAllStartOp)
DIST_COMM_VERIFIERS(AllToAllVOp)
DIST_COMM_VERIFIERS(AllToAllVStartOp)
DIST_COMM_VERIFIERS(MoePermuteOp)
DIST_COMM_VERIFIERS(SendOp)
DIST_COMM_VERIFIERS(SendStartOp)
DIST_COMM_VERIFIERS(RecvOp)
DIST_COMM_VERIFIERS(RecvStartOp)
#undef DIST_COMM_VERIFIERS

//===----------------------------------------------------------------------===//
// dist.wait
//===----------------------------------------------------------------------===//

LogicalResult WaitOp::inferReturnTypes(
    MLIRContext *, std::optional<Location>, ValueRange operands, DictionaryAttr,
    OpaqueProperties, RegionRange, SmallVectorImpl<Type> &inferredReturnTypes) {
  auto async = dyn_cast<AsyncType>(operands.front().getType());
  if (!async)
    return failure();
  if (Type value = async.getValueType())
    inferredReturnTypes.push_back(value);
  return success();
}
