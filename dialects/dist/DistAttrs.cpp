//===- DistAttrs.cpp - the dist sharding attribute --------------*- C++ -*-===//
//
// Syntax, structural verification and the local-shape arithmetic of
// `#dist.sharding`. The checks that need the mesh live in
// `verifyShardingUse`, called where the attribute is used.
//
//===----------------------------------------------------------------------===//

#include "dist/DistDialect.h"

#include "mlir/IR/DialectImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/ADT/TypeSwitch.h"

using namespace mlir;
using namespace parc::dist;

#define GET_ATTRDEF_CLASSES
#include "dist/DistAttrs.cpp.inc"

void DistDialect::registerAttributes() {
  addAttributes<
#define GET_ATTRDEF_LIST
#include "dist/DistAttrs.cpp.inc"
      >();
}

//===----------------------------------------------------------------------===//
// Syntax
//===----------------------------------------------------------------------===//

// #dist.sharding<@mesh, [[axes]...] (, partial = [kind] [axes])?
//                (, sizes = [[sizes]...])?>
Attribute ShardingAttr::parse(AsmParser &parser, Type type) {
  MLIRContext *ctx = parser.getContext();
  SMLoc loc = parser.getCurrentLocation();
  // `dist.shard %x to #dist.sharding<...> : tensor<...>` lands here with the
  // op's type taken as the attribute's.
  if (type) {
    parser.emitError(loc) << "#dist.sharding has no type; after dist.shard's "
                             "`to`, write the sharding as <@mesh, ...>";
    return {};
  }
  FlatSymbolRefAttr mesh;
  ArrayAttr split;
  if (parser.parseLess() || parser.parseAttribute(mesh) ||
      parser.parseComma() || parser.parseAttribute(split))
    return {};

  ArrayAttr partial;
  ReductionKind kind = ReductionKind::sum;
  ArrayAttr sizes;
  while (succeeded(parser.parseOptionalComma())) {
    SMLoc keyLoc = parser.getCurrentLocation();
    StringRef key;
    if (parser.parseKeyword(&key) || parser.parseEqual())
      return {};
    if (key == "partial" && !partial) {
      StringRef kindName;
      if (succeeded(parser.parseOptionalKeyword(&kindName))) {
        std::optional<ReductionKind> parsed = symbolizeReductionKind(kindName);
        if (!parsed) {
          parser.emitError(keyLoc) << "unknown reduction kind '" << kindName
                                   << "' (expected sum, max or min)";
          return {};
        }
        kind = *parsed;
      }
      if (parser.parseAttribute(partial))
        return {};
    } else if (key == "sizes" && !sizes) {
      SmallVector<Attribute> dims;
      auto parseDim = [&]() -> ParseResult {
        SmallVector<int64_t> dimSizes;
        if (parser.parseCommaSeparatedList(
                AsmParser::Delimiter::Square, [&]() -> ParseResult {
                  return parser.parseInteger(dimSizes.emplace_back());
                }))
          return failure();
        dims.push_back(DenseI64ArrayAttr::get(ctx, dimSizes));
        return success();
      };
      if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square,
                                         parseDim))
        return {};
      sizes = ArrayAttr::get(ctx, dims);
    } else {
      parser.emitError(keyLoc)
          << "expected 'partial' or 'sizes' (each at most once), got '" << key
          << "'";
      return {};
    }
  }
  if (parser.parseGreater())
    return {};
  if (!partial)
    partial = ArrayAttr::get(ctx, {});
  if (!sizes)
    sizes = ArrayAttr::get(ctx, {});
  return getChecked([&] { return parser.emitError(loc); }, ctx, mesh, split,
                    partial, kind, sizes);
}

void ShardingAttr::print(AsmPrinter &printer) const {
  printer << "<";
  printer.printAttribute(getMesh());
  printer << ", ";
  printer.printAttribute(getSplitAxes());
  if (isPartial()) {
    printer << ", partial = ";
    if (getPartialKind() != ReductionKind::sum)
      printer << stringifyReductionKind(getPartialKind()) << " ";
    printer.printAttribute(getPartialAxes());
  }
  if (!getShardSizes().empty()) {
    printer << ", sizes = [";
    llvm::interleaveComma(getShardSizes(), printer, [&](Attribute dim) {
      printer << "[";
      llvm::interleaveComma(cast<DenseI64ArrayAttr>(dim).asArrayRef(), printer);
      printer << "]";
    });
    printer << "]";
  }
  printer << ">";
}

//===----------------------------------------------------------------------===//
// Verification
//===----------------------------------------------------------------------===//

LogicalResult ShardingAttr::verify(function_ref<InFlightDiagnostic()> emitError,
                                   FlatSymbolRefAttr mesh, ArrayAttr splitAxes,
                                   ArrayAttr partialAxes,
                                   ReductionKind partialKind,
                                   ArrayAttr shardSizes) {
  if (!mesh || !splitAxes || !partialAxes || !shardSizes)
    return emitError() << "sharding needs a mesh, split axes, partial axes "
                          "and shard sizes";

  llvm::StringMap<size_t> splitSeen; // axis -> the dimension it splits
  for (auto [dim, axes] : llvm::enumerate(splitAxes)) {
    auto list = dyn_cast<ArrayAttr>(axes);
    if (!list || !llvm::all_of(list, llvm::IsaPred<StringAttr>))
      return emitError() << "split axes of dimension " << dim
                         << " must be a list of mesh axis names, got " << axes;
    for (StringRef axis : list.getAsValueRange<StringAttr>()) {
      if (axis.empty())
        return emitError() << "mesh axis names must not be empty";
      auto [it, inserted] = splitSeen.try_emplace(axis, dim);
      if (!inserted && it->second == dim)
        return emitError() << "mesh axis \"" << axis
                           << "\" is listed twice for dimension " << dim;
      if (!inserted)
        return emitError() << "mesh axis \"" << axis << "\" splits dimension "
                           << it->second << " and dimension " << dim
                           << "; an axis splits at most once";
    }
  }

  if (!llvm::all_of(partialAxes, llvm::IsaPred<StringAttr>))
    return emitError() << "partial axes must be mesh axis names, got "
                       << partialAxes;
  llvm::StringSet<> partialSeen;
  for (StringRef axis : partialAxes.getAsValueRange<StringAttr>()) {
    if (axis.empty())
      return emitError() << "mesh axis names must not be empty";
    if (splitSeen.contains(axis))
      return emitError() << "mesh axis \"" << axis
                         << "\" is both a split axis and a partial axis";
    if (!partialSeen.insert(axis).second)
      return emitError() << "partial axis \"" << axis << "\" is listed twice";
  }
  if (partialAxes.empty() && partialKind != ReductionKind::sum)
    return emitError() << "reduction kind '"
                       << stringifyReductionKind(partialKind)
                       << "' given without partial axes";

  if (shardSizes.empty())
    return success();
  if (shardSizes.size() != splitAxes.size())
    return emitError() << "sizes has " << shardSizes.size()
                       << " entries but the sharding lists " << splitAxes.size()
                       << " dimensions";
  for (auto [dim, entry] : llvm::enumerate(shardSizes)) {
    auto dimSizes = dyn_cast<DenseI64ArrayAttr>(entry);
    if (!dimSizes)
      return emitError() << "sizes of dimension " << dim
                         << " must be a list of integers";
    if (dimSizes.empty())
      continue;
    if (cast<ArrayAttr>(splitAxes[dim]).empty())
      return emitError() << "dimension " << dim
                         << " has shard sizes but is not split";
    if (llvm::any_of(dimSizes.asArrayRef(), [](int64_t s) { return s < 0; }))
      return emitError() << "shard sizes of dimension " << dim
                         << " must be non-negative";
  }
  return success();
}

LogicalResult
parc::dist::verifyShardingUse(ShardingAttr sharding,
                              std::optional<ArrayRef<int64_t>> shape,
                              Operation *from, SymbolTableCollection *tables,
                              function_ref<InFlightDiagnostic()> emitError) {
  FlatSymbolRefAttr meshRef = sharding.getMesh();
  Operation *symbol =
      tables ? tables->lookupNearestSymbolFrom(from, meshRef.getAttr())
             : SymbolTable::lookupNearestSymbolFrom(from, meshRef.getAttr());
  if (!symbol)
    return emitError() << "sharding refers to unknown mesh " << meshRef;
  auto mesh = dyn_cast<MeshOp>(symbol);
  if (!mesh)
    return emitError() << "sharding refers to " << meshRef
                       << ", which is not a dist.mesh";

  auto checkAxes = [&](ArrayRef<StringRef> axes) -> LogicalResult {
    for (StringRef axis : axes)
      if (!mesh.getAxisIndex(axis))
        return emitError() << "mesh " << meshRef << " has no axis \"" << axis
                           << "\"";
    return success();
  };
  if (failed(checkAxes(sharding.getAllSplitAxes())) ||
      failed(checkAxes(sharding.getPartialAxesNames())))
    return failure();
  if (!shape)
    return success();

  int64_t rank = shape->size();
  int64_t listed = sharding.getSplitAxes().size();
  if (listed > rank)
    return emitError() << "sharding lists " << listed
                       << " dimensions but the tensor has rank " << rank;
  for (int64_t dim = 0; dim < listed; ++dim) {
    SmallVector<StringRef> axes = sharding.getSplitAxes(dim);
    if (axes.empty())
      continue;
    int64_t shards = *mesh.getGroupSize(axes);
    int64_t extent = (*shape)[dim];
    ArrayRef<int64_t> sizes = sharding.getShardSizes(dim);
    if (!sizes.empty()) {
      if (static_cast<int64_t>(sizes.size()) != shards)
        return emitError() << "dimension " << dim << " has " << sizes.size()
                           << " shard sizes but is split into " << shards
                           << " shards";
      int64_t sum = 0;
      for (int64_t s : sizes)
        sum += s;
      if (sum != extent)
        return emitError() << "shard sizes of dimension " << dim << " sum to "
                           << sum << ", not its size " << extent;
      continue;
    }
    if (extent % shards != 0)
      return emitError() << "dimension " << dim << " of size " << extent
                         << " does not split evenly into " << shards
                         << " shards; give explicit sizes";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Queries
//===----------------------------------------------------------------------===//

SmallVector<StringRef> ShardingAttr::getSplitAxes(int64_t dim) const {
  if (dim < 0 || dim >= static_cast<int64_t>(getSplitAxes().size()))
    return {};
  return llvm::to_vector(
      cast<ArrayAttr>(getSplitAxes()[dim]).getAsValueRange<StringAttr>());
}

ArrayRef<int64_t> ShardingAttr::getShardSizes(int64_t dim) const {
  if (dim < 0 || dim >= static_cast<int64_t>(getShardSizes().size()))
    return {};
  return cast<DenseI64ArrayAttr>(getShardSizes()[dim]).asArrayRef();
}

SmallVector<StringRef> ShardingAttr::getPartialAxesNames() const {
  return llvm::to_vector(getPartialAxes().getAsValueRange<StringAttr>());
}

SmallVector<StringRef> ShardingAttr::getAllSplitAxes() const {
  SmallVector<StringRef> axes;
  for (Attribute dim : getSplitAxes())
    llvm::append_range(axes,
                       cast<ArrayAttr>(dim).getAsValueRange<StringAttr>());
  return axes;
}

bool ShardingAttr::isReplicated() const {
  return !isPartial() && llvm::all_of(getSplitAxes(), [](Attribute dim) {
    return cast<ArrayAttr>(dim).empty();
  });
}

bool ShardingAttr::isEquivalent(ShardingAttr other) const {
  if (getMesh() != other.getMesh() ||
      getPartialAxes() != other.getPartialAxes() ||
      (isPartial() && getPartialKind() != other.getPartialKind()))
    return false;
  int64_t dims = std::max(getSplitAxes().size(), other.getSplitAxes().size());
  for (int64_t dim = 0; dim < dims; ++dim)
    if (getSplitAxes(dim) != other.getSplitAxes(dim) ||
        getShardSizes(dim) != other.getShardSizes(dim))
      return false;
  return true;
}

namespace {
/// Where one rank's shard of one dimension sits: its index among the
/// dimension's shards and the number of shards.
struct ShardPosition {
  int64_t index = 0;
  int64_t count = 1;
};
} // namespace

static FailureOr<ShardPosition> shardPosition(ArrayRef<StringRef> axes,
                                              ArrayRef<int64_t> meshShape,
                                              ArrayRef<StringRef> axisNames,
                                              ArrayRef<int64_t> coords) {
  ShardPosition pos;
  for (StringRef axis : axes) {
    const auto *it = llvm::find(axisNames, axis);
    if (it == axisNames.end())
      return failure();
    size_t i = it - axisNames.begin();
    if (coords[i] < 0 || coords[i] >= meshShape[i])
      return failure();
    pos.index = pos.index * meshShape[i] + coords[i];
    pos.count *= meshShape[i];
  }
  return pos;
}

/// Per dimension, the extent and start of the shard at `coords`.
static FailureOr<SmallVector<std::pair<int64_t, int64_t>>>
localExtents(ShardingAttr sharding, ArrayRef<int64_t> globalShape,
             ArrayRef<int64_t> meshShape, ArrayRef<StringRef> axisNames,
             ArrayRef<int64_t> coords) {
  if (meshShape.size() != axisNames.size() ||
      coords.size() != meshShape.size() ||
      sharding.getSplitAxes().size() > globalShape.size())
    return failure();
  SmallVector<std::pair<int64_t, int64_t>> extents;
  for (auto [dim, extent] : llvm::enumerate(globalShape)) {
    SmallVector<StringRef> axes = sharding.getSplitAxes(dim);
    if (axes.empty()) {
      extents.push_back({extent, 0});
      continue;
    }
    FailureOr<ShardPosition> pos =
        shardPosition(axes, meshShape, axisNames, coords);
    if (failed(pos))
      return failure();
    ArrayRef<int64_t> sizes = sharding.getShardSizes(dim);
    if (!sizes.empty()) {
      if (static_cast<int64_t>(sizes.size()) != pos->count)
        return failure();
      int64_t start = 0;
      for (int64_t s : sizes.take_front(pos->index))
        start += s;
      extents.push_back({sizes[pos->index], start});
      continue;
    }
    if (ShapedType::isDynamic(extent) || extent % pos->count != 0)
      return failure();
    int64_t local = extent / pos->count;
    extents.push_back({local, local * pos->index});
  }
  return extents;
}

FailureOr<SmallVector<int64_t>> ShardingAttr::getLocalShape(
    ArrayRef<int64_t> globalShape, ArrayRef<int64_t> meshShape,
    ArrayRef<StringRef> axisNames, ArrayRef<int64_t> coords) const {
  auto extents = localExtents(*this, globalShape, meshShape, axisNames, coords);
  if (failed(extents))
    return failure();
  return llvm::to_vector(llvm::make_first_range(*extents));
}

FailureOr<SmallVector<int64_t>>
ShardingAttr::getLocalShape(ArrayRef<int64_t> globalShape, MeshOp mesh,
                            int64_t rank) const {
  if (rank < 0 || rank >= mesh.getNumRanks())
    return failure();
  return getLocalShape(globalShape, mesh.getShape(), mesh.getAxisNames(),
                       mesh.getCoordinates(rank));
}

FailureOr<SmallVector<int64_t>> ShardingAttr::getLocalOffsets(
    ArrayRef<int64_t> globalShape, ArrayRef<int64_t> meshShape,
    ArrayRef<StringRef> axisNames, ArrayRef<int64_t> coords) const {
  auto extents = localExtents(*this, globalShape, meshShape, axisNames, coords);
  if (failed(extents))
    return failure();
  return llvm::to_vector(llvm::make_second_range(*extents));
}
