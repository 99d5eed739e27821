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

/// The weight's bytes, row-major, one byte per bool.
FailureOr<std::string> weightBytes(parc::rt::WeightOp op, StringRef modelDir) {
  MemRefType type = op.getType();
  if (ElementsAttr value = op.getValueAttr()) {
    if (auto resource = dyn_cast<DenseResourceElementsAttr>(value)) {
      AsmResourceBlob *blob = resource.getRawHandle().getBlob();
      if (!blob)
        return op.emitOpError("has no data for resource weight"), failure();
      ArrayRef<char> data = blob->getData();
      return std::string(data.data(), data.size());
    }
    auto dense = dyn_cast<DenseElementsAttr>(value);
    if (!dense)
      return op.emitOpError("has an unsupported constant kind"), failure();
    std::string out;
    int64_t n = type.getNumElements();
    if (type.getElementType().isInteger(1)) {
      for (bool b : dense.getValues<bool>())
        out.push_back(b ? 1 : 0);
      if (dense.isSplat())
        out.assign(n, out.empty() ? 0 : out[0]);
      return out;
    }
    ArrayRef<char> raw = dense.getRawData();
    if (dense.isSplat()) {
      for (int64_t i = 0; i < n; ++i)
        out.append(raw.data(), raw.size());
      return out;
    }
    return std::string(raw.data(), raw.size());
  }
  auto location = op->getAttrOfType<StringAttr>("location");
  auto offset = op->getAttrOfType<IntegerAttr>("offset");
  auto length = op->getAttrOfType<IntegerAttr>("length");
  if (!location || !offset || !length)
    return op.emitOpError("has neither a value nor an external reference"),
           failure();
  SmallString<256> file(modelDir);
  llvm::sys::path::append(file, location.getValue());
  auto buffer = llvm::MemoryBuffer::getFileSlice(file, length.getInt(),
                                                 offset.getInt());
  if (!buffer)
    return op.emitOpError() << "cannot read external data '" << file
                            << "': " << buffer.getError().message(),
           failure();
  return (*buffer)->getBuffer().str();
}

/// The rank-local part of a sharded weight. `shard` = {dim, parts, index,
/// blocks}: the global tensor's `dim` holds consecutive blocks (one by
/// default; a fused QKV projection has three), each split evenly into
/// `parts`; this rank keeps chunk `index` of every block, in block order.
std::string sliceBytes(StringRef global, ArrayRef<int64_t> globalShape,
                       int64_t elementBytes, int64_t dim,
                       ArrayRef<int64_t> blocks, int64_t parts, int64_t index) {
  int64_t outer = 1, inner = elementBytes;
  for (int64_t d = 0; d < dim; ++d)
    outer *= globalShape[d];
  for (size_t d = dim + 1; d < globalShape.size(); ++d)
    inner *= globalShape[d];
  std::string out;
  for (int64_t o = 0; o < outer; ++o) {
    int64_t blockStart = 0;
    for (int64_t block : blocks) {
      int64_t chunk = block / parts;
      int64_t from = (o * globalShape[dim] + blockStart + index * chunk) * inner;
      out.append(global.substr(from, chunk * inner));
      blockStart += block;
    }
  }
  return out;
}

} // namespace

FailureOr<parc::WrittenShard>
parc::writeWeights(func::FuncOp program, StringRef modelDir, StringRef path,
                   llvm::function_ref<int64_t(StringRef)> coordinate,
                   const ShardIdentity &id) {
  llvm::json::Object header;
  std::string data, tensorChecksums;
  llvm::StringSet<> seen;
  bool failedAny = false;
  program.walk([&](rt::WeightOp op) {
    if (failedAny || !seen.insert(op.getName()).second)
      return;
    auto dtype = safetensorsDtype(op.getType().getElementType());
    auto bytes = weightBytes(op, modelDir);
    if (failed(dtype) || failed(bytes)) {
      if (failed(dtype))
        op.emitOpError() << "element type " << op.getType().getElementType()
                         << " cannot be stored";
      failedAny = true;
      return;
    }
    // A sharded weight stores its global value; keep this rank's part, cut
    // after cut (a nested "then" cuts the part again).
    auto global = cast<ShapedType>(op->getAttrOfType<ElementsAttr>("value")
                                       ? op.getValueAttr().getType()
                                       : op.getType());
    SmallVector<int64_t> shape(global.getShape());
    for (auto shard = op->getAttrOfType<DictionaryAttr>("shard"); shard;
         shard = dyn_cast_or_null<DictionaryAttr>(shard.get("then"))) {
      int64_t dim = cast<IntegerAttr>(shard.get("dim")).getInt();
      int64_t parts = cast<IntegerAttr>(shard.get("parts")).getInt();
      SmallVector<int64_t> blocks{shape[dim]};
      if (auto b = dyn_cast_or_null<DenseI64ArrayAttr>(shard.get("blocks")))
        blocks.assign(b.asArrayRef().begin(), b.asArrayRef().end());
      // A part shared by several ranks (replicas) goes to consecutive ranks.
      int64_t replicas = 1;
      if (auto r = dyn_cast_or_null<IntegerAttr>(shard.get("replicas")))
        replicas = r.getInt();
      int64_t index =
          coordinate(cast<StringAttr>(shard.get("axis")).getValue()) / replicas;
      int64_t elementBytes =
          std::max<int64_t>(global.getElementTypeBitWidth() / 8, 1);
      *bytes = sliceBytes(*bytes, shape, elementBytes, dim, blocks, parts,
                          index);
      shape[dim] /= parts;
    }
    // Keep every tensor 64-byte aligned inside the data section.
    data.resize(llvm::alignTo(data.size(), 64), '\0');
    int64_t begin = data.size();
    data += *bytes;
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
  return WrittenShard{(int64_t)(8 + json.size() + data.size()), checksum};
}
