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
  /// `padding_blocks`: (stored, zeros) pairs over dim `blockDim`.
  int64_t blockDim = -1;
  SmallVector<int64_t> blocks;
  /// The stored index of entry `g` of dim `d` of the global shape, or -1
  /// for a padding zero.
  int64_t storedAt(int64_t d, int64_t g) const {
    if (d != blockDim)
      return g < stored[d] ? g : -1;
    int64_t from = 0;
    for (size_t i = 0; i + 1 < blocks.size(); i += 2) {
      if (g < blocks[i])
        return from + g;
      g -= blocks[i];
      if (g < blocks[i + 1])
        return -1;
      g -= blocks[i + 1];
      from += blocks[i];
    }
    return -1;
  }
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
    for (auto [d, pad] : llvm::enumerate(padding.asArrayRef())) {
      src.stored[d] -= pad;
      if (pad > 0)
        src.blockDim = d;
    }
  if (auto blocks = op->getAttrOfType<DenseI64ArrayAttr>("padding_blocks"))
    src.blocks.assign(blocks.asArrayRef().begin(), blocks.asArrayRef().end());
  else
    src.blockDim = -1;
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

/// For each dim of the rank's part, the global index of each of its
/// entries, cut after cut (a nested "then" cuts the part again). A cut =
/// {dim, parts, axis, blocks, replicas}: the dim holds consecutive blocks
/// (one by default; a fused QKV projection has three), each split evenly
/// into `parts`; the rank keeps chunk `index` of every block, in block
/// order. A part shared by several ranks (replicas) goes to consecutive
/// ranks.
SmallVector<SmallVector<int64_t>>
partIndices(DictionaryAttr shard, ArrayRef<int64_t> global,
            llvm::function_ref<int64_t(StringRef)> coordinate) {
  SmallVector<SmallVector<int64_t>> index;
  for (int64_t size : global)
    index.push_back(llvm::to_vector(llvm::seq<int64_t>(0, size)));
  for (; shard; shard = dyn_cast_or_null<DictionaryAttr>(shard.get("then"))) {
    int64_t dim = cast<IntegerAttr>(shard.get("dim")).getInt();
    int64_t parts = cast<IntegerAttr>(shard.get("parts")).getInt();
    SmallVector<int64_t> blocks{(int64_t)index[dim].size()};
    if (auto b = dyn_cast_or_null<DenseI64ArrayAttr>(shard.get("blocks")))
      blocks.assign(b.asArrayRef().begin(), b.asArrayRef().end());
    int64_t replicas = 1;
    if (auto r = dyn_cast_or_null<IntegerAttr>(shard.get("replicas")))
      replicas = r.getInt();
    int64_t rank =
        coordinate(cast<StringAttr>(shard.get("axis")).getValue()) / replicas;
    SmallVector<int64_t> kept;
    int64_t blockStart = 0;
    for (int64_t block : blocks) {
      int64_t chunk = block / parts;
      auto from = index[dim].begin() + blockStart + rank * chunk;
      kept.append(from, from + chunk);
      blockStart += block;
    }
    index[dim] = std::move(kept);
  }
  return index;
}

/// The rank's part of `src`: for every row (all dims but the last) of the
/// part, runs of consecutive stored elements of the last dim are copied,
/// padding entries (past the stored size, or after a block) are zeros.
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
    int64_t from = src.storedAt(rank - 1, g);
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
      int64_t g = src.storedAt(d, index[d][at[d]]);
      zero |= g < 0;
      base += std::max<int64_t>(g, 0) * stride[d];
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
  auto shard = op->getAttrOfType<DictionaryAttr>("shard");
  // The global shape: the part's with every cut undone.
  SmallVector<int64_t> global(op.getType().getShape());
  for (auto s = shard; s; s = dyn_cast_or_null<DictionaryAttr>(s.get("then")))
    global[cast<IntegerAttr>(s.get("dim")).getInt()] *=
        cast<IntegerAttr>(s.get("parts")).getInt();
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
  return cutBytes(*src, partIndices(shard, src->global, coordinate),
                  elementBytes);
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
