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
//                (, sizes = [[sizes]...])? (, blocks = [[blocks]...])?
//                (, replicas = [counts])?>
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
  ArrayAttr sizes, blocks;
  DenseI64ArrayAttr replicas;
  auto parseInts = [&](SmallVectorImpl<int64_t> &ints) {
    return parser.parseCommaSeparatedList(
        AsmParser::Delimiter::Square,
        [&]() -> ParseResult { return parser.parseInteger(ints.emplace_back()); });
  };
  // [[ints], ...]: one list per dimension (sizes, blocks).
  auto parsePerDim = [&](ArrayAttr &into) -> ParseResult {
    SmallVector<Attribute> dims;
    auto parseDim = [&]() -> ParseResult {
      SmallVector<int64_t> ints;
      if (parseInts(ints))
        return failure();
      dims.push_back(DenseI64ArrayAttr::get(ctx, ints));
      return success();
    };
    if (parser.parseCommaSeparatedList(AsmParser::Delimiter::Square, parseDim))
      return failure();
    into = ArrayAttr::get(ctx, dims);
    return success();
  };
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
      if (parsePerDim(sizes))
        return {};
    } else if (key == "blocks" && !blocks) {
      if (parsePerDim(blocks))
        return {};
    } else if (key == "replicas" && !replicas) {
      SmallVector<int64_t> counts;
      if (parseInts(counts))
        return {};
      replicas = DenseI64ArrayAttr::get(ctx, counts);
    } else {
      parser.emitError(keyLoc) << "expected 'partial', 'sizes', 'blocks' or "
                                  "'replicas' (each at most once), got '"
                               << key << "'";
      return {};
    }
  }
  if (parser.parseGreater())
    return {};
  if (!partial)
    partial = ArrayAttr::get(ctx, {});
  if (!sizes)
    sizes = ArrayAttr::get(ctx, {});
  if (!blocks)
    blocks = ArrayAttr::get(ctx, {});
  if (!replicas)
    replicas = DenseI64ArrayAttr::get(ctx, {});
  return getChecked([&] { return parser.emitError(loc); }, ctx, mesh, split,
                    partial, kind, sizes, blocks, replicas);
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
  auto printPerDim = [&](StringRef key, ArrayAttr dims) {
    if (dims.empty())
      return;
    printer << ", " << key << " = [";
    llvm::interleaveComma(dims, printer, [&](Attribute dim) {
      printer << "[";
      llvm::interleaveComma(cast<DenseI64ArrayAttr>(dim).asArrayRef(), printer);
      printer << "]";
    });
    printer << "]";
  };
  printPerDim("sizes", getShardSizes());
  printPerDim("blocks", getBlocks());
  if (!getReplicas().empty()) {
    printer << ", replicas = [";
    llvm::interleaveComma(getReplicas().asArrayRef(), printer);
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
                                   ArrayAttr shardSizes, ArrayAttr blocks,
                                   DenseI64ArrayAttr replicas) {
  if (!mesh || !splitAxes || !partialAxes || !shardSizes || !blocks ||
      !replicas)
    return emitError() << "sharding needs a mesh, split axes, partial axes, "
                          "shard sizes, blocks and replicas";

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

  // sizes and blocks: empty, or one list of integers per listed dimension,
  // non-empty only on a split one.
  // `key` as written, `what` as said.
  auto checkPerDim = [&](ArrayAttr lists, StringRef key,
                         StringRef what) -> LogicalResult {
    if (lists.empty())
      return success();
    if (lists.size() != splitAxes.size())
      return emitError() << key << " has " << lists.size()
                         << " entries but the sharding lists "
                         << splitAxes.size() << " dimensions";
    for (auto [dim, entry] : llvm::enumerate(lists)) {
      auto list = dyn_cast<DenseI64ArrayAttr>(entry);
      if (!list)
        return emitError() << key << " of dimension " << dim
                           << " must be a list of integers";
      if (list.empty())
        continue;
      if (cast<ArrayAttr>(splitAxes[dim]).empty())
        return emitError() << "dimension " << dim << " has " << what
                           << " but is not split";
      if (llvm::any_of(list.asArrayRef(), [](int64_t s) { return s < 0; }))
        return emitError() << what << " of dimension " << dim
                           << " must be non-negative";
    }
    return success();
  };
  if (failed(checkPerDim(shardSizes, "sizes", "shard sizes")) ||
      failed(checkPerDim(blocks, "blocks", "blocks")))
    return failure();
  for (size_t dim = 0; dim < shardSizes.size() && dim < blocks.size(); ++dim)
    if (!cast<DenseI64ArrayAttr>(shardSizes[dim]).empty() &&
        !cast<DenseI64ArrayAttr>(blocks[dim]).empty())
      return emitError() << "dimension " << dim
                         << " has both sizes and blocks";

  if (replicas.empty())
    return success();
  if (replicas.size() != static_cast<int64_t>(splitAxes.size()))
    return emitError() << "replicas has " << replicas.size()
                       << " entries but the sharding lists " << splitAxes.size()
                       << " dimensions";
  for (auto [dim, count] : llvm::enumerate(replicas.asArrayRef())) {
    if (count < 1)
      return emitError() << "replicas of dimension " << dim
                         << " must be positive, got " << count;
    if (count > 1 && cast<ArrayAttr>(splitAxes[dim]).empty())
      return emitError() << "dimension " << dim
                         << " has replicas but is not split";
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
  return sharding.verifyShape(*shape, mesh.getShape(), mesh.getAxisNames(),
                              emitError);
}

/// Into how many ranks the split axes `axes` group, if they are all in
/// `axisNames`.
static std::optional<int64_t> groupSize(ArrayRef<StringRef> axes,
                                        ArrayRef<int64_t> meshShape,
                                        ArrayRef<StringRef> axisNames) {
  int64_t n = 1;
  for (StringRef axis : axes) {
    const auto *it = llvm::find(axisNames, axis);
    if (it == axisNames.end())
      return std::nullopt;
    n *= meshShape[it - axisNames.begin()];
  }
  return n;
}

static int64_t sum(ArrayRef<int64_t> values) {
  int64_t total = 0;
  for (int64_t v : values)
    total += v;
  return total;
}

LogicalResult
ShardingAttr::verifyShape(ArrayRef<int64_t> shape, ArrayRef<int64_t> meshShape,
                          ArrayRef<StringRef> axisNames,
                          function_ref<InFlightDiagnostic()> emitError) const {
  int64_t rank = shape.size();
  int64_t listed = getSplitAxes().size();
  if (listed > rank)
    return emitError() << "sharding lists " << listed
                       << " dimensions but the tensor has rank " << rank;
  for (int64_t dim = 0; dim < listed; ++dim) {
    SmallVector<StringRef> axes = getSplitAxes(dim);
    if (axes.empty())
      continue;
    std::optional<int64_t> ranks = groupSize(axes, meshShape, axisNames);
    if (!ranks)
      return emitError() << "the mesh has no axis of " << getSplitAxes()[dim];
    int64_t replicas = getReplicas(dim);
    if (*ranks % replicas != 0)
      return emitError() << "replicas " << replicas << " of dimension " << dim
                         << " do not divide its " << *ranks << " ranks";
    int64_t shards = *ranks / replicas;
    int64_t extent = shape[dim];
    if (ArrayRef<int64_t> sizes = getShardSizes(dim); !sizes.empty()) {
      if (static_cast<int64_t>(sizes.size()) != shards)
        return emitError() << "dimension " << dim << " has " << sizes.size()
                           << " shard sizes but is split into " << shards
                           << " shards";
      if (sum(sizes) != extent)
        return emitError() << "shard sizes of dimension " << dim << " sum to "
                           << sum(sizes) << ", not its size " << extent;
      continue;
    }
    if (ArrayRef<int64_t> blocks = getBlocks(dim); !blocks.empty()) {
      if (sum(blocks) != extent)
        return emitError() << "blocks of dimension " << dim << " sum to "
                           << sum(blocks) << ", not its size " << extent;
      for (int64_t block : blocks)
        if (block % shards != 0)
          return emitError() << "block of " << block << " of dimension " << dim
                             << " does not split evenly into " << shards
                             << " shards";
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

ArrayRef<int64_t> ShardingAttr::getBlocks(int64_t dim) const {
  if (dim < 0 || dim >= static_cast<int64_t>(getBlocks().size()))
    return {};
  return cast<DenseI64ArrayAttr>(getBlocks()[dim]).asArrayRef();
}

int64_t ShardingAttr::getReplicas(int64_t dim) const {
  if (dim < 0 || dim >= getReplicas().size())
    return 1;
  return getReplicas()[dim];
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
        getShardSizes(dim) != other.getShardSizes(dim) ||
        getBlocks(dim) != other.getBlocks(dim) ||
        getReplicas(dim) != other.getReplicas(dim))
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

FailureOr<SmallVector<SmallVector<ShardingAttr::Slice, 1>>>
ShardingAttr::getLocalSlices(ArrayRef<int64_t> globalShape,
                             ArrayRef<int64_t> meshShape,
                             ArrayRef<StringRef> axisNames,
                             ArrayRef<int64_t> coords) const {
  if (meshShape.size() != axisNames.size() ||
      coords.size() != meshShape.size() ||
      getSplitAxes().size() > globalShape.size())
    return failure();
  SmallVector<SmallVector<Slice, 1>> slices;
  for (auto [dim, extent] : llvm::enumerate(globalShape)) {
    SmallVector<StringRef> axes = getSplitAxes(dim);
    if (axes.empty()) {
      slices.push_back({{0, extent}});
      continue;
    }
    FailureOr<ShardPosition> pos =
        shardPosition(axes, meshShape, axisNames, coords);
    int64_t replicas = getReplicas(dim);
    if (failed(pos) || pos->count % replicas != 0)
      return failure();
    // Consecutive ranks share a chunk.
    int64_t index = pos->index / replicas, count = pos->count / replicas;
    if (ArrayRef<int64_t> sizes = getShardSizes(dim); !sizes.empty()) {
      if (static_cast<int64_t>(sizes.size()) != count)
        return failure();
      slices.push_back({{sum(sizes.take_front(index)), sizes[index]}});
      continue;
    }
    SmallVector<int64_t> blocks(getBlocks(dim));
    if (blocks.empty())
      blocks.push_back(extent);
    if (ShapedType::isDynamic(extent) || sum(blocks) != extent)
      return failure();
    SmallVector<Slice, 1> &runs = slices.emplace_back();
    int64_t blockStart = 0;
    for (int64_t block : blocks) {
      if (block % count != 0)
        return failure();
      int64_t chunk = block / count;
      runs.push_back({blockStart + index * chunk, chunk});
      blockStart += block;
    }
  }
  return slices;
}

FailureOr<SmallVector<int64_t>>
ShardingAttr::getGlobalShape(ArrayRef<int64_t> localShape,
                             ArrayRef<int64_t> meshShape,
                             ArrayRef<StringRef> axisNames) const {
  if (getSplitAxes().size() > localShape.size())
    return failure();
  SmallVector<int64_t> global(localShape);
  for (auto [dim, extent] : llvm::enumerate(global)) {
    SmallVector<StringRef> axes = getSplitAxes(dim);
    if (axes.empty())
      continue;
    std::optional<int64_t> ranks = groupSize(axes, meshShape, axisNames);
    int64_t replicas = getReplicas(dim);
    if (!ranks || *ranks % replicas != 0 || !getShardSizes(dim).empty())
      return failure();
    ArrayRef<int64_t> blocks = getBlocks(dim);
    extent = blocks.empty() ? extent * (*ranks / replicas) : sum(blocks);
  }
  return global;
}

FailureOr<SmallVector<int64_t>> ShardingAttr::getLocalShape(
    ArrayRef<int64_t> globalShape, ArrayRef<int64_t> meshShape,
    ArrayRef<StringRef> axisNames, ArrayRef<int64_t> coords) const {
  auto slices = getLocalSlices(globalShape, meshShape, axisNames, coords);
  if (failed(slices))
    return failure();
  return llvm::map_to_vector(*slices, [](ArrayRef<Slice> runs) {
    int64_t extent = 0;
    for (Slice run : runs)
      extent += run.second;
    return extent;
  });
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
  auto slices = getLocalSlices(globalShape, meshShape, axisNames, coords);
  if (failed(slices) ||
      llvm::any_of(*slices, [](ArrayRef<Slice> runs) { return runs.size() != 1; }))
    return failure();
  return llvm::map_to_vector(*slices,
                             [](ArrayRef<Slice> runs) { return runs[0].first; });
}
