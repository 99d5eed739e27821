//===- Safetensors.cpp - a rank's weight shard on disk ----------*- C++ -*-===//
//
// The safetensors format (an 8-byte little-endian header length, a JSON
// header of dtype/shape/data_offsets per tensor, then the raw bytes) is what
// the runtime memory-maps at start-up. The header is written with llvm::json.
// Its __metadata__ says whose shard it is (parc.rank, parc.program) and
// holds CRC-32C checksums of the data section (parc.checksum) and of each
// tensor in data order (parc.tensor_checksums), computed by the runtime's
// own function so that the reader agrees.
//
//===----------------------------------------------------------------------===//

#include "parc/Target/Weights/Safetensors.h"
#include "io/formats.h"
#include "dist/DistDialect.h"
#include "rt/RTDialect.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace {

FailureOr<StringRef> safetensorsDtype(Type t) {
  if (t.isF32()) return StringRef("F32");
  if (t.isF16()) return StringRef("F16");
  if (t.isBF16()) return StringRef("BF16");
  if (t.isF64()) return StringRef("F64");
  if (t.isInteger(64)) return StringRef("I64");
  if (t.isInteger(32)) return StringRef("I32");
  if (t.isUnsignedInteger(8)) return StringRef("U8");
  if (t.isInteger(8)) return StringRef("I8");
  if (t.isInteger(1)) return StringRef("BOOL");
  return failure();
}

/// A weight's global bytes, row-major, one byte per bool: borrowed from the
/// IR's blob or from the mapped external file (only the pages a rank's part
/// touches are read), owned only where they must be spelled out (a splat,
/// bools).
struct Source {
  StringRef borrowed;
  std::optional<std::string> owned;
  std::unique_ptr<llvm::MemoryBuffer> mapped;
  StringRef bytes() const { return owned ? StringRef(*owned) : borrowed; }
  /// The shape `bytes` hold, and the one the cuts see: with zeros appended
  /// per dim (`padding` of an external weight) when they differ.
  SmallVector<int64_t> stored, global;
};

FailureOr<Source> embeddedSource(parc::rt::WeightOp op, ElementsAttr value) {
  Source src;
  auto type = cast<ShapedType>(value.getType());
  src.stored.assign(type.getShape().begin(), type.getShape().end());
  src.global = src.stored;
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(value)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return op.emitOpError("has no data for resource weight"), failure();
    src.borrowed = StringRef(blob->getData().data(), blob->getData().size());
    return src;
  }
  auto dense = dyn_cast<DenseElementsAttr>(value);
  if (!dense)
    return op.emitOpError("has an unsupported constant kind"), failure();
  int64_t n = type.getNumElements();
  ArrayRef<char> raw = dense.getRawData();
  if (type.getElementType().isInteger(1)) {
    std::string &out = src.owned.emplace();
    for (bool b : dense.getValues<bool>())
      out.push_back(b ? 1 : 0);
    if (dense.isSplat())
      out.assign(n, out.empty() ? 0 : out[0]);
  } else if (dense.isSplat()) {
    std::string &out = src.owned.emplace();
    for (int64_t i = 0; i < n; ++i)
      out.append(raw.data(), raw.size());
  } else {
    src.borrowed = StringRef(raw.data(), raw.size());
  }
  return src;
}

/// The external bytes of `op`, whose global shape (before any cut) is
/// `global`.
FailureOr<Source> externalSource(parc::rt::WeightOp op, StringRef modelDir,
                                 ArrayRef<int64_t> global) {
  auto location = op->getAttrOfType<StringAttr>("location");
  auto offset = op->getAttrOfType<IntegerAttr>("offset");
  auto length = op->getAttrOfType<IntegerAttr>("length");
  if (!location || !offset || !length)
    return op.emitOpError("has neither a value nor an external reference"),
           failure();
  Source src;
  src.global.assign(global.begin(), global.end());
  src.stored = src.global;
  if (auto padding = op->getAttrOfType<DenseI64ArrayAttr>("padding"))
    for (auto [d, pad] : llvm::enumerate(padding.asArrayRef()))
      src.stored[d] -= pad;
  SmallString<256> file(modelDir);
  llvm::sys::path::append(file, location.getValue());
  auto buffer = llvm::MemoryBuffer::getFileSlice(file, length.getInt(),
                                                 offset.getInt());
  if (!buffer)
    return op.emitOpError() << "cannot read external data '" << file
                            << "': " << buffer.getError().message(),
           failure();
  src.mapped = std::move(*buffer);
  src.borrowed = src.mapped->getBuffer();
  return src;
}

/// The rank's place on the program's mesh: what a shard's cuts read.
struct RankOnMesh {
  parc::rt::Mesh mesh;
  SmallVector<int64_t> coords;
};

/// For each dim of the rank's part, the global index of each of its
/// entries: each sharding of `shard` in turn keeps the rank's slices
/// (#dist.sharding's getLocalSlices) of what the cut before it kept.
FailureOr<SmallVector<SmallVector<int64_t>>>
partIndices(ArrayAttr shard, ArrayRef<int64_t> global, const RankOnMesh &at) {
  SmallVector<SmallVector<int64_t>> index;
  for (int64_t size : global)
    index.push_back(llvm::to_vector(llvm::seq<int64_t>(0, size)));
  for (auto cut : shard.getAsRange<parc::dist::ShardingAttr>()) {
    SmallVector<int64_t> shape =
        llvm::map_to_vector(index, [](auto &i) { return (int64_t)i.size(); });
    auto slices =
        cut.getLocalSlices(shape, at.mesh.shape, at.mesh.axes, at.coords);
    if (failed(slices))
      return failure();
    for (auto [dim, runs] : llvm::enumerate(*slices)) {
      SmallVector<int64_t> kept;
      for (auto [offset, size] : runs)
        kept.append(index[dim].begin() + offset,
                    index[dim].begin() + offset + size);
      index[dim] = std::move(kept);
    }
  }
  return index;
}

/// The rank's part of `src`: for every row (all dims but the last) of the
/// part, runs of consecutive stored elements of the last dim are copied,
/// entries past the stored size (padding) are zeros.
std::string cutBytes(const Source &src, ArrayRef<SmallVector<int64_t>> index,
                     int64_t elementBytes) {
  int64_t rank = src.global.size();
  if (rank == 0)
    return src.bytes().str();
  SmallVector<int64_t> stride(rank, elementBytes);
  for (int64_t d = rank - 2; d >= 0; --d)
    stride[d] = stride[d + 1] * src.stored[d + 1];
  // Runs of the last dim: (first stored entry or -1 for zeros, length).
  SmallVector<std::pair<int64_t, int64_t>> runs;
  for (int64_t g : index.back()) {
    int64_t from = g < src.stored.back() ? g : -1;
    bool extends =
        !runs.empty() &&
        (from < 0 ? runs.back().first < 0
                  : runs.back().first >= 0 &&
                        runs.back().first + runs.back().second == from);
    if (extends)
      runs.back().second++;
    else
      runs.emplace_back(from, 1);
  }
  std::string out;
  SmallVector<int64_t> at(rank - 1, 0);
  for (bool done = llvm::any_of(index, [](auto &i) { return i.empty(); });
       !done;) {
    int64_t base = 0;
    bool zero = false;
    for (int64_t d = 0; d + 1 < rank; ++d) {
      int64_t g = index[d][at[d]];
      zero |= g >= src.stored[d];
      base += g * stride[d];
    }
    for (auto [from, length] : runs) {
      if (zero || from < 0)
        out.append(length * elementBytes, '\0');
      else
        out.append(src.bytes().substr(base + from * elementBytes,
                                      length * elementBytes));
    }
    // The next row, odometer order.
    int64_t d = rank - 2;
    for (; d >= 0 && ++at[d] == (int64_t)index[d].size(); --d)
      at[d] = 0;
    done = d < 0;
  }
  return out;
}

/// This rank's bytes of the weight `op`, row-major, one byte per bool.
FailureOr<std::string>
weightBytes(parc::rt::WeightOp op, StringRef modelDir,
            llvm::function_ref<int64_t(StringRef)> coordinate) {
  auto shard = op->getAttrOfType<ArrayAttr>("shard");
  // The global shape: the part's with every cut undone, the last first.
  SmallVector<int64_t> global(op.getType().getShape());
  RankOnMesh at;
  if (shard) {
    std::optional<parc::rt::Mesh> mesh = parc::rt::meshOf(op);
    if (!mesh)
      return op.emitOpError("a sharded weight needs its module's rt.mesh"),
             failure();
    at.mesh = *mesh;
    for (StringRef axis : at.mesh.axes)
      at.coords.push_back(coordinate(axis));
    for (auto cut : llvm::reverse(shard.getAsRange<parc::dist::ShardingAttr>())) {
      auto whole = cut.getGlobalShape(global, at.mesh.shape, at.mesh.axes);
      if (failed(whole))
        return op.emitOpError() << "cannot undo the cut " << cut << " of "
                                << op.getType(),
               failure();
      global = std::move(*whole);
    }
  }
  FailureOr<Source> src = op.getValueAttr()
                              ? embeddedSource(op, op.getValueAttr())
                              : externalSource(op, modelDir, global);
  if (failed(src))
    return failure();
  int64_t elementBytes =
      std::max<unsigned>(op.getType().getElementTypeBitWidth() / 8, 1);
  int64_t storedBytes = elementBytes;
  for (int64_t d : src->stored)
    storedBytes *= d;
  if ((int64_t)src->bytes().size() != storedBytes)
    return op.emitOpError() << "holds " << src->bytes().size()
                            << " bytes where its type needs " << storedBytes,
           failure();
  if (!shard && src->stored == src->global)
    return src->bytes().str();
  SmallVector<SmallVector<int64_t>> index;
  if (shard) {
    auto cut = partIndices(shard, src->global, at);
    if (failed(cut))
      return op.emitOpError("its shard does not fit the mesh"), failure();
    index = std::move(*cut);
  } else {
    for (int64_t size : src->global)
      index.push_back(llvm::to_vector(llvm::seq<int64_t>(0, size)));
  }
  return cutBytes(*src, index, elementBytes);
}

} // namespace

FailureOr<parc::WrittenShard>
parc::writeWeights(func::FuncOp program, StringRef modelDir, StringRef path,
                   llvm::function_ref<int64_t(StringRef)> coordinate,
                   const ShardIdentity &id,
                   llvm::function_ref<void(int64_t)> wrote) {
  auto report = [&](int64_t bytes) {
    if (wrote)
      wrote(bytes);
  };
  llvm::json::Object header;
  std::string data, tensorChecksums;
  llvm::StringSet<> seen;
  bool failedAny = false;
  program.walk([&](rt::WeightOp op) {
    if (failedAny || !seen.insert(op.getName()).second)
      return;
    auto dtype = safetensorsDtype(op.getType().getElementType());
    if (failed(dtype)) {
      op.emitOpError() << "element type " << op.getType().getElementType()
                       << " cannot be stored";
      failedAny = true;
      return;
    }
    auto bytes = weightBytes(op, modelDir, coordinate);
    if (failed(bytes)) {
      failedAny = true;
      return;
    }
    // Keep every tensor 64-byte aligned inside the data section.
    int64_t before = data.size();
    data.resize(llvm::alignTo(data.size(), 64), '\0');
    int64_t begin = data.size();
    data += *bytes;
    report(data.size() - before);
    tensorChecksums += (tensorChecksums.empty() ? "" : " ") +
                       rt::crcHex(rt::crc32c(0, bytes->data(), bytes->size()));
    header[op.getName()] = llvm::json::Object{
        {"dtype", *dtype},
        {"shape", llvm::json::Array(op.getType().getShape())},
        {"data_offsets", llvm::json::Array{begin, (int64_t)data.size()}}};
  });
  if (failedAny)
    return failure();
  std::string checksum =
      "crc32c:" + rt::crcHex(rt::crc32c(0, data.data(), data.size()));
  header["__metadata__"] =
      llvm::json::Object{{"parc.rank", std::to_string(id.rank)},
                         {"parc.program", id.program},
                         {"parc.checksum", checksum},
                         {"parc.tensor_checksums", tensorChecksums}};
  std::string json;
  llvm::raw_string_ostream(json) << llvm::json::Value(std::move(header));
  // Pad the header with spaces so the data section starts 64-byte aligned.
  json.resize(llvm::alignTo(json.size() + 8, 64) - 8, ' ');
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec);
  if (ec)
    return program.emitError() << "cannot write '" << path << "': " << ec.message(),
           failure();
  uint64_t len = json.size();
  char lenBytes[8];
  for (int i = 0; i < 8; ++i)
    lenBytes[i] = (len >> (8 * i)) & 0xff;
  os.write(lenBytes, 8);
  os << json << data;
  os.close();
  if (os.has_error())
    return program.emitError() << "cannot write '" << path << "'", failure();
  report(8 + json.size());
  return WrittenShard{(int64_t)(8 + json.size() + data.size()), checksum};
}
