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
// Weights stream. A rank's part of a weight is planned from the IR as runs
// (offset, size) of the weight's stored bytes, or of zeros where it is
// padded; only then, off the IR and one thread per file, are the runs
// checksummed and written: long runs of an external file by the kernel
// (copy_file_range, checksummed through a mapping of one chunk at a time),
// long runs of the IR's blobs straight from the blob, short runs (a cut's
// rows) and zeros through a bounded buffer. The header, whose checksums are
// known last, goes over a placeholder of the same length at the end.
//
// A weight stored as f32 and computed in bf16/f16 (rt.weight's
// `stored_type`) is rounded as it streams, a mapped chunk at a time, by the
// runtime's own f32ToHalf (round to nearest even): the f32 bytes are never
// copied whole, and the shard holds half of them.
//
//===----------------------------------------------------------------------===//

#include "parc/Target/Weights/Safetensors.h"
#include "parc/Support/MappedFiles.h"
#include "half.h"
#include "io/formats.h"
#include "dist/DistDialect.h"
#include "rt/RTDTypes.h"
#include "rt/RTDialect.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ThreadPool.h"
#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <cstring>
#include <memory>
#include <mutex>

#include <fcntl.h>
#include <unistd.h>

using namespace mlir;

namespace {

/// What one file holds in memory at a time: the buffer each write drains.
constexpr int64_t kChunkBytes = 16 << 20;
/// File runs shorter than this (the rows of a cut on the last dim) are
/// gathered from one mapping of a window that holds several.
constexpr int64_t kDirectRead = 64 << 10;
constexpr int64_t kWindowBytes = 4 << 20;

/// A weight's stored bytes, row-major, one byte per bool: in memory (the
/// IR's blob; spelled out only for bools), one element repeated (a splat), or
/// a region of an external file that is read while the shard is written.
/// `stored` is the shape the bytes hold; `global`, the one the cuts see, has
/// zeros appended per dim (`padding` of an external weight) where they differ.
struct Source {
  StringRef memory;
  std::string owned, splat;
  std::string file;
  int64_t fileOffset = 0, size = 0;
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

FailureOr<std::shared_ptr<Source>> embeddedSource(parc::rt::WeightOp op,
                                                  ElementsAttr value) {
  auto src = std::make_shared<Source>();
  auto type = cast<ShapedType>(value.getType());
  src->stored.assign(type.getShape().begin(), type.getShape().end());
  src->global = src->stored;
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(value)) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return op.emitOpError("has no data for resource weight"), failure();
    src->memory = StringRef(blob->getData().data(), blob->getData().size());
    src->size = src->memory.size();
    // Borrowed from the mapped model file: read the file, as external data.
    if (auto span = parc::findMappedFile(src->memory)) {
      src->file = span->path;
      src->fileOffset = span->offset;
      src->memory = StringRef();
    }
    return src;
  }
  auto dense = dyn_cast<DenseElementsAttr>(value);
  if (!dense)
    return op.emitOpError("has an unsupported constant kind"), failure();
  int64_t n = type.getNumElements();
  ArrayRef<char> raw = dense.getRawData();
  if (type.getElementType().isInteger(1)) {
    for (bool b : dense.getValues<bool>())
      src->owned.push_back(b ? 1 : 0);
    if (dense.isSplat())
      src->owned.assign(n, src->owned.empty() ? 0 : src->owned[0]);
    src->memory = src->owned;
    src->size = src->owned.size();
  } else if (dense.isSplat()) {
    src->splat.assign(raw.data(), raw.size());
    src->size = n * raw.size();
  } else {
    src->memory = StringRef(raw.data(), raw.size());
    src->size = raw.size();
  }
  return src;
}

/// The external bytes of `op`, whose global shape (before any cut) is
/// `global`.
FailureOr<std::shared_ptr<Source>>
externalSource(parc::rt::WeightOp op, StringRef modelDir,
               ArrayRef<int64_t> global) {
  auto location = op->getAttrOfType<StringAttr>("location");
  auto offset = op->getAttrOfType<IntegerAttr>("offset");
  auto length = op->getAttrOfType<IntegerAttr>("length");
  if (!location || !offset || !length)
    return op.emitOpError("has neither a value nor an external reference"),
           failure();
  auto src = std::make_shared<Source>();
  src->global.assign(global.begin(), global.end());
  src->stored = src->global;
  if (auto padding = op->getAttrOfType<DenseI64ArrayAttr>("padding"))
    for (auto [d, pad] : llvm::enumerate(padding.asArrayRef())) {
      src->stored[d] -= pad;
      if (pad > 0)
        src->blockDim = d;
    }
  if (auto blocks = op->getAttrOfType<DenseI64ArrayAttr>("padding_blocks"))
    src->blocks.assign(blocks.asArrayRef().begin(), blocks.asArrayRef().end());
  else
    src->blockDim = -1;
  SmallString<256> file(modelDir);
  llvm::sys::path::append(file, location.getValue());
  src->file = file.str().str();
  src->fileOffset = offset.getInt();
  src->size = length.getInt();
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

/// `size` bytes from `offset` of a weight's stored bytes, or zeros where
/// `offset` < 0.
struct Range {
  int64_t offset, size;
};

/// The runs of the rank's part of `src`: for every row (all dims but the
/// last) of the part, runs of consecutive stored elements of the last dim;
/// entries past the stored size (padding) are zeros. Adjacent runs merge, so
/// an uncut weight or one cut on its first dim is one run.
std::vector<Range> cutRanges(const Source &src,
                             ArrayRef<SmallVector<int64_t>> index,
                             int64_t elementBytes) {
  std::vector<Range> out;
  auto add = [&](int64_t offset, int64_t size) {
    if (size == 0)
      return;
    if (!out.empty() && (offset < 0 ? out.back().offset < 0
                                    : out.back().offset >= 0 &&
                                          out.back().offset + out.back().size ==
                                              offset))
      out.back().size += size;
    else
      out.push_back({offset, size});
  };
  int64_t rank = src.global.size();
  if (rank == 0) {
    add(0, src.size);
    return out;
  }
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
    for (auto [from, length] : runs)
      add(zero || from < 0 ? -1 : base + from * elementBytes,
          length * elementBytes);
    // The next row, odometer order.
    int64_t d = rank - 2;
    for (; d >= 0 && ++at[d] == (int64_t)index[d].size(); --d)
      at[d] = 0;
    done = d < 0;
  }
  return out;
}

/// The file's element type where the stored one is f32 and it is not.
enum class Narrow { None, BF16, F16 };

/// One tensor of a rank's file: its header entry and the runs of its bytes.
struct TensorPlan {
  Operation *op; // for diagnostics, read on the planning thread only
  std::string name;
  StringRef dtype;
  SmallVector<int64_t> shape;
  std::shared_ptr<const Source> src;
  /// Runs of the stored bytes; with `narrow` they hold f32, which the file
  /// gets rounded to 2-byte elements.
  std::vector<Range> ranges;
  int64_t bytes = 0;
  Narrow narrow = Narrow::None;
};

/// What went wrong writing a file: in tensor `tensor` (an index into its
/// plan), or in the file itself when there is none.
struct StreamError {
  std::optional<size_t> tensor;
  std::string message;
};

/// Writes all of `bytes` to `fd`; false with errno set on failure.
bool writeAll(int fd, StringRef bytes) {
  while (!bytes.empty()) {
    ssize_t n = ::write(fd, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      return false;
    bytes = bytes.drop_front(n);
  }
  return true;
}

/// Appends `size` bytes at `offset` of `in` to `out` inside the kernel;
/// how many it moved (fewer where the file systems do not support it).
int64_t copyRange(int in, uint64_t offset, int out, int64_t size) {
  int64_t moved = 0;
#ifdef __linux__
  loff_t from = offset;
  while (moved < size) {
    ssize_t n = ::copy_file_range(in, &from, out, nullptr, size - moved, 0);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      break;
    moved += n;
  }
#endif
  return moved;
}

/// A shard file being written through one bounded buffer: bytes are
/// appended (copied from memory, read from files, or zeros), added to the
/// data section's checksum and the current tensor's, and written whenever
/// the buffer is full. Touches no IR, so that files are written in parallel.
class ShardStream {
public:
  ShardStream(int out, llvm::function_ref<void(int64_t)> wrote)
      : out(out), wrote(wrote), buffer(kChunkBytes) {}
  ~ShardStream() {
    for (auto &entry : files)
      llvm::sys::fs::closeFile(entry.second.fd);
  }

  void beginTensor() {
    tensorCrc = 0;
    crcFrom = used;
  }
  /// The CRC-32C of the bytes appended since beginTensor.
  uint32_t endTensor() {
    addToTensorCrc();
    return tensorCrc;
  }
  std::optional<std::string> append(const Source &src,
                                    ArrayRef<Range> ranges);
  /// Appends the f32 elements of `ranges` rounded to 2 bytes each.
  std::optional<std::string> appendNarrowed(const Source &src,
                                            ArrayRef<Range> ranges,
                                            Narrow to);
  void zeros(int64_t n) {
    for (int64_t done = 0; done < n;) {
      int64_t k = room(n - done);
      std::memset(buffer.data() + used, 0, k);
      used += k;
      done += k;
    }
  }
  /// Writes what the buffer holds; the data section's checksum.
  uint32_t finish() {
    drain();
    return dataCrc;
  }
  /// errno of the first failed write, 0 if none.
  int writeError = 0;

private:
  /// Room for up to `want` more bytes, draining the buffer when it is full.
  int64_t room(int64_t want) {
    if (used == (int64_t)buffer.size())
      drain();
    return std::min<int64_t>(want, buffer.size() - used);
  }
  void addToTensorCrc() {
    tensorCrc = parc::rt::crc32c(tensorCrc, buffer.data() + crcFrom,
                                 used - crcFrom);
    crcFrom = used;
  }
  void drain() {
    addToTensorCrc();
    dataCrc = parc::rt::crc32c(dataCrc, buffer.data(), used);
    write(StringRef(buffer.data(), used));
    used = crcFrom = 0;
  }
  void write(StringRef bytes) {
    if (!writeError && !writeAll(out, bytes))
      writeError = errno;
    if (wrote)
      wrote(bytes.size());
  }
  /// Writes long runs of memory (the IR's blobs) without the buffer.
  void direct(StringRef bytes) {
    drain();
    tensorCrc = parc::rt::crc32c(tensorCrc, bytes.data(), bytes.size());
    dataCrc = parc::rt::crc32c(dataCrc, bytes.data(), bytes.size());
    write(bytes);
  }
  struct OpenFile {
    llvm::sys::fs::file_t fd;
    uint64_t size;
  };
  FailureOr<OpenFile> open(const Source &src, std::string &error);
  std::optional<std::string> mapFile(const Source &src, int64_t offset,
                                     int64_t size,
                                     llvm::sys::fs::mapped_file_region &map,
                                     StringRef &bytes);
  std::optional<std::string> copyFileRun(const Source &src, int64_t offset,
                                         int64_t size);
  void read(const Source &src, int64_t offset, MutableArrayRef<char> out);
  void copy(const Source &src, int64_t offset, int64_t size);
  /// Appends the f32 elements of `f32` (whole elements) rounded.
  void narrow(StringRef f32, Narrow to);

  int out;
  llvm::function_ref<void(int64_t)> wrote;
  std::vector<char> buffer;
  int64_t used = 0, crcFrom = 0;
  uint32_t dataCrc = 0, tensorCrc = 0;
  llvm::StringMap<OpenFile> files;
};

FailureOr<ShardStream::OpenFile> ShardStream::open(const Source &src,
                                                   std::string &error) {
  if (auto it = files.find(src.file); it != files.end())
    return it->second;
  auto fd = llvm::sys::fs::openNativeFileForRead(src.file);
  if (!fd) {
    error = "cannot read external data '" + src.file +
            "': " + llvm::toString(fd.takeError());
    return failure();
  }
  llvm::sys::fs::file_status status;
  if (std::error_code ec = llvm::sys::fs::status(*fd, status)) {
    llvm::sys::fs::closeFile(*fd);
    error = "cannot read external data '" + src.file + "': " + ec.message();
    return failure();
  }
  return files[src.file] = OpenFile{*fd, status.getSize()};
}

/// Maps `size` bytes from `offset` of `src`'s file into `map`; `bytes` are
/// they.
std::optional<std::string>
ShardStream::mapFile(const Source &src, int64_t offset, int64_t size,
                     llvm::sys::fs::mapped_file_region &map, StringRef &bytes) {
  std::string error;
  auto file = open(src, error);
  if (failed(file))
    return error;
  using Region = llvm::sys::fs::mapped_file_region;
  uint64_t at = src.fileOffset + offset;
  if (at + size > file->size)
    return "external data '" + src.file + "' ends before byte " +
           std::to_string(at + size);
  uint64_t page = at & ~uint64_t(Region::alignment() - 1);
  std::error_code ec;
  map = Region(file->fd, Region::readonly, at - page + size, page, ec);
  if (ec)
    return "cannot read external data '" + src.file + "': " + ec.message();
  bytes = StringRef(map.const_data() + (at - page), size);
  return std::nullopt;
}

/// A long run of an external file: mapped a chunk at a time for the
/// checksums (no copy; unmapped after, so that RSS stays bounded), its bytes
/// moved into the shard by the kernel (copy_file_range, as cp does), or
/// written from the mapping where the kernel cannot.
std::optional<std::string> ShardStream::copyFileRun(const Source &src,
                                                    int64_t offset,
                                                    int64_t size) {
  drain();
  for (int64_t done = 0; done < size;) {
    int64_t k = std::min<int64_t>(size - done, kChunkBytes);
    llvm::sys::fs::mapped_file_region map;
    StringRef bytes;
    if (auto e = mapFile(src, offset + done, k, map, bytes))
      return e;
    tensorCrc = parc::rt::crc32c(tensorCrc, bytes.data(), k);
    dataCrc = parc::rt::crc32c(dataCrc, bytes.data(), k);
    int64_t moved = writeError ? k
                               : copyRange(files[src.file].fd,
                                           src.fileOffset + offset + done,
                                           out, k);
    write(bytes.drop_front(moved));
    if (wrote && moved)
      wrote(moved);
    done += k;
  }
  return std::nullopt;
}

/// `out.size()` bytes from `offset` of `src`'s stored bytes in memory.
void ShardStream::read(const Source &src, int64_t offset,
                       MutableArrayRef<char> out) {
  if (src.splat.empty()) {
    std::memcpy(out.data(), src.memory.data() + offset, out.size());
    return;
  }
  int64_t k = src.splat.size();
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = src.splat[(offset + i) % k];
}

/// Appends `size` bytes from `offset` of `src` (in memory), a buffer's
/// room at a time.
void ShardStream::copy(const Source &src, int64_t offset, int64_t size) {
  for (int64_t done = 0; done < size;) {
    int64_t k = room(size - done);
    read(src, offset + done, MutableArrayRef(buffer.data() + used, k));
    used += k;
    done += k;
  }
}

/// The end of the window of short file runs that starts at ranges[i]
/// (itself short): the runs after it that are short, ascending and within
/// kWindowBytes of its start, read through one mapping.
size_t windowEnd(ArrayRef<Range> ranges, size_t i) {
  size_t j = i + 1;
  while (j < ranges.size() && ranges[j].offset >= 0 &&
         ranges[j].size < kDirectRead &&
         ranges[j].offset + ranges[j].size - ranges[i].offset <= kWindowBytes &&
         ranges[j].offset >= ranges[j - 1].offset + ranges[j - 1].size)
    ++j;
  return j;
}

std::optional<std::string> ShardStream::append(const Source &src,
                                               ArrayRef<Range> ranges) {
  for (size_t i = 0; i < ranges.size();) {
    Range r = ranges[i];
    if (r.offset < 0) {
      zeros(r.size);
      ++i;
      continue;
    }
    if (!src.file.empty() && r.size < kDirectRead) {
      // Short runs of a file: one mapping of the window that holds several.
      size_t j = windowEnd(ranges, i);
      Range last = ranges[j - 1];
      Source inWindow;
      llvm::sys::fs::mapped_file_region map;
      if (auto e = mapFile(src, r.offset, last.offset + last.size - r.offset,
                           map, inWindow.memory))
        return e;
      for (; i < j; ++i)
        copy(inWindow, ranges[i].offset - r.offset, ranges[i].size);
      continue;
    }
    if (!src.file.empty()) {
      if (auto e = copyFileRun(src, r.offset, r.size))
        return e;
    } else if (src.splat.empty() && r.size >= kDirectRead) {
      direct(src.memory.substr(r.offset, r.size));
    } else {
      copy(src, r.offset, r.size);
    }
    ++i;
  }
  return std::nullopt;
}

void ShardStream::narrow(StringRef f32, Narrow to) {
  // Through aligned bounce buffers: the f32 bytes and the buffer's tail may
  // sit at any alignment.
  constexpr int64_t kBlock = 1024;
  float in[kBlock];
  uint16_t out[kBlock];
  for (int64_t done = 0, total = f32.size() / 4; done < total;) {
    int64_t n = std::min(total - done, kBlock);
    std::memcpy(in, f32.data() + 4 * done, 4 * n);
    parc::rt::f32ToHalf(to == Narrow::BF16, in, out, n);
    const char *bytes = reinterpret_cast<const char *>(out);
    for (int64_t put = 0; put < 2 * n;) {
      int64_t k = room(2 * n - put);
      std::memcpy(buffer.data() + used, bytes + put, k);
      used += k;
      put += k;
    }
    done += n;
  }
}

std::optional<std::string> ShardStream::appendNarrowed(const Source &src,
                                                       ArrayRef<Range> ranges,
                                                       Narrow to) {
  for (size_t i = 0; i < ranges.size();) {
    Range r = ranges[i];
    if (r.offset < 0 || src.file.empty()) {
      if (r.offset < 0)
        zeros(r.size / 2); // an f32 zero is a 2-byte zero
      else if (!src.splat.empty())
        for (int64_t done = 0; done < r.size; done += 4)
          narrow(StringRef(src.splat.data(), 4), to);
      else
        narrow(src.memory.substr(r.offset, r.size), to);
      ++i;
      continue;
    }
    if (r.size < kDirectRead) {
      // Short runs (a column cut's rows): one mapping per window of them.
      size_t j = windowEnd(ranges, i);
      Range last = ranges[j - 1];
      llvm::sys::fs::mapped_file_region map;
      StringRef window;
      if (auto e = mapFile(src, r.offset, last.offset + last.size - r.offset,
                           map, window))
        return e;
      for (size_t k = i; k < j; ++k)
        narrow(window.substr(ranges[k].offset - r.offset, ranges[k].size), to);
      i = j;
      continue;
    }
    // A long run: one mapped chunk at a time, unmapped after (bounded RSS).
    for (int64_t done = 0; done < r.size;) {
      int64_t k = std::min<int64_t>(r.size - done, kChunkBytes);
      llvm::sys::fs::mapped_file_region map;
      StringRef bytes;
      if (auto e = mapFile(src, r.offset + done, k, map, bytes))
        return e;
      narrow(bytes, to);
      done += k;
    }
    ++i;
  }
  return std::nullopt;
}

/// The header: every tensor's entry and the metadata with these checksums.
std::string headerJson(ArrayRef<TensorPlan> plans, ArrayRef<int64_t> begins,
                       const parc::ShardIdentity &id, StringRef checksum,
                       StringRef tensorChecksums) {
  llvm::json::Object header;
  for (auto [plan, begin] : llvm::zip_equal(plans, begins))
    header[plan.name] = llvm::json::Object{
        {"dtype", plan.dtype},
        {"shape", llvm::json::Array(plan.shape)},
        {"data_offsets", llvm::json::Array{begin, begin + plan.bytes}}};
  header["__metadata__"] =
      llvm::json::Object{{"parc.rank", std::to_string(id.rank)},
                         {"parc.program", id.program},
                         {"parc.checksum", checksum},
                         {"parc.tensor_checksums", tensorChecksums}};
  std::string json;
  llvm::raw_string_ostream(json) << llvm::json::Value(std::move(header));
  // Pad with spaces so that the data section starts 64-byte aligned.
  json.resize(llvm::alignTo(json.size() + 8, 64) - 8, ' ');
  uint64_t len = json.size();
  std::string out(8, '\0');
  for (int i = 0; i < 8; ++i)
    out[i] = (len >> (8 * i)) & 0xff;
  return out + json;
}

/// Streams one rank's file; touches no IR.
llvm::Expected<parc::WrittenShard>
writeShard(ArrayRef<TensorPlan> plans, StringRef path,
           const parc::ShardIdentity &id,
           llvm::function_ref<void(int64_t)> wrote,
           std::optional<StreamError> &error) {
  // Each tensor 64-byte aligned inside the data section.
  SmallVector<int64_t> begins;
  int64_t end = 0;
  for (const TensorPlan &plan : plans) {
    begins.push_back(llvm::alignTo(end, 64));
    end = begins.back() + plan.bytes;
  }
  std::string zeroCrc = parc::rt::crcHex(0), placeholders;
  for (size_t i = 0; i < plans.size(); ++i)
    placeholders += (i ? " " : "") + zeroCrc;
  std::string header = headerJson(plans, begins, id, "crc32c:" + zeroCrc,
                                  placeholders);
  auto fail = [&](std::optional<size_t> tensor, std::string message) {
    error = StreamError{tensor, std::move(message)};
    return llvm::createStringError(error->message);
  };
  int fd;
  if (std::error_code ec = llvm::sys::fs::openFileForWrite(path, fd))
    return fail(std::nullopt,
                "cannot write '" + path.str() + "': " + ec.message());
  llvm::scope_exit closeFd([&] { ::close(fd); });
  std::string tensorChecksums;
  uint32_t dataCrc;
  int writeError = 0;
  if (!writeAll(fd, header))
    writeError = errno;
  {
    ShardStream stream(fd, wrote);
    stream.writeError = writeError;
    int64_t at = 0;
    for (auto [i, plan] : llvm::enumerate(plans)) {
      stream.zeros(begins[i] - at);
      stream.beginTensor();
      auto e = plan.narrow == Narrow::None
                   ? stream.append(*plan.src, plan.ranges)
                   : stream.appendNarrowed(*plan.src, plan.ranges, plan.narrow);
      if (e)
        return fail(i, *e);
      tensorChecksums += (i ? " " : "") + parc::rt::crcHex(stream.endTensor());
      at = begins[i] + plan.bytes;
    }
    dataCrc = stream.finish();
    writeError = stream.writeError;
  }
  std::string checksum = "crc32c:" + parc::rt::crcHex(dataCrc);
  std::string final =
      headerJson(plans, begins, id, checksum, tensorChecksums);
  assert(final.size() == header.size() && "checksums have a fixed width");
  if (!writeError && ::pwrite(fd, final.data(), final.size(), 0) !=
                         (ssize_t)final.size())
    writeError = errno ? errno : EIO;
  closeFd.release();
  if (::close(fd) != 0 && !writeError)
    writeError = errno;
  if (writeError)
    return fail(std::nullopt, "cannot write '" + path.str() +
                                  "': " + std::strerror(writeError));
  if (wrote)
    wrote(header.size());
  return parc::WrittenShard{(int64_t)header.size() + end, checksum};
}

/// The plan of each distinct weight (by name) under `program`, a rank
/// program or a module of them (a decode and its prefill), for each shard.
FailureOr<std::vector<std::vector<TensorPlan>>>
planShards(Operation *program, StringRef modelDir,
           ArrayRef<parc::ShardRequest> shards) {
  std::vector<std::vector<TensorPlan>> plans(shards.size());
  llvm::StringSet<> seen;
  WalkResult walk = program->walk([&](parc::rt::WeightOp op) {
    if (!seen.insert(op.getName()).second)
      return WalkResult::advance();
    const parc::rt::DType *dtype =
        parc::rt::dtypeOf(op.getType().getElementType());
    if (!dtype) {
      op.emitOpError() << "element type " << op.getType().getElementType()
                       << " cannot be stored";
      return WalkResult::interrupt();
    }
    auto shard = op->getAttrOfType<ArrayAttr>("shard");
    // The global shape: the part's with every cut undone, the last first.
    SmallVector<int64_t> global(op.getType().getShape());
    std::optional<parc::rt::Mesh> mesh;
    if (shard) {
      mesh = parc::rt::meshOf(op);
      if (!mesh) {
        op.emitOpError("a sharded weight needs its module's rt.mesh");
        return WalkResult::interrupt();
      }
      for (auto cut :
           llvm::reverse(shard.getAsRange<parc::dist::ShardingAttr>())) {
        auto whole = cut.getGlobalShape(global, mesh->shape, mesh->axes);
        if (failed(whole)) {
          op.emitOpError() << "cannot undo the cut " << cut << " of "
                           << op.getType();
          return WalkResult::interrupt();
        }
        global = std::move(*whole);
      }
    }
    auto src = op.getValueAttr() ? embeddedSource(op, op.getValueAttr())
                                 : externalSource(op, modelDir, global);
    if (failed(src))
      return WalkResult::interrupt();
    // The source's elements: f32 where the writer rounds them.
    Narrow narrow = Narrow::None;
    int64_t fileElementBytes =
        std::max<unsigned>(op.getType().getElementTypeBitWidth() / 8, 1);
    int64_t elementBytes = fileElementBytes;
    if (op->hasAttr("stored_type")) {
      narrow = op.getType().getElementType().isBF16() ? Narrow::BF16
                                                      : Narrow::F16;
      elementBytes = 4;
    }
    int64_t storedBytes = elementBytes;
    for (int64_t d : (*src)->stored)
      storedBytes *= d;
    if ((*src)->size != storedBytes) {
      op.emitOpError() << "holds " << (*src)->size
                       << " bytes where its type needs " << storedBytes;
      return WalkResult::interrupt();
    }
    for (auto [request, plan] : llvm::zip_equal(shards, plans)) {
      TensorPlan &t = plan.emplace_back();
      t.op = op;
      t.name = op.getName().str();
      t.dtype = dtype->safetensors;
      t.shape.assign(op.getType().getShape().begin(),
                     op.getType().getShape().end());
      t.src = *src;
      t.narrow = narrow;
      t.bytes = op.getType().getNumElements() * fileElementBytes;
      if (!shard && (*src)->stored == (*src)->global) {
        t.ranges = {{0, (*src)->size}};
        continue;
      }
      SmallVector<SmallVector<int64_t>> index;
      if (shard) {
        RankOnMesh at{*mesh, {}};
        for (StringRef axis : at.mesh.axes)
          at.coords.push_back(request.coordinate(axis));
        auto cut = partIndices(shard, (*src)->global, at);
        if (failed(cut)) {
          op.emitOpError("its shard does not fit the mesh");
          return WalkResult::interrupt();
        }
        index = std::move(*cut);
      } else {
        for (int64_t size : (*src)->global)
          index.push_back(llvm::to_vector(llvm::seq<int64_t>(0, size)));
      }
      t.ranges = cutRanges(**src, index, elementBytes);
    }
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return failure();
  return plans;
}

} // namespace

FailureOr<SmallVector<parc::WrittenShard>>
parc::writeWeights(Operation *program, StringRef modelDir,
                   ArrayRef<ShardRequest> shards,
                   llvm::function_ref<void(int64_t)> wrote) {
  auto plans = planShards(program, modelDir, shards);
  if (failed(plans))
    return failure();
  // `wrote` hears from every file's thread, one at a time.
  std::mutex wroteMutex;
  auto report = [&](int64_t bytes) {
    std::lock_guard<std::mutex> lock(wroteMutex);
    if (wrote)
      wrote(bytes);
  };
  SmallVector<std::optional<llvm::Expected<WrittenShard>>> results(
      shards.size());
  SmallVector<std::optional<StreamError>> errors(shards.size());
  auto write = [&](size_t i) {
    results[i].emplace(writeShard((*plans)[i], shards[i].path, shards[i].id,
                                  report, errors[i]));
  };
  if (shards.size() == 1) {
    write(0);
  } else {
    llvm::ThreadPoolStrategy strategy = llvm::hardware_concurrency(shards.size());
    strategy.Limit = true;
    llvm::StdThreadPool pool(strategy);
    for (size_t i = 0; i < shards.size(); ++i)
      pool.async(write, i);
    pool.wait();
  }
  SmallVector<WrittenShard> written;
  bool ok = true;
  for (auto [i, result] : llvm::enumerate(results)) {
    if (*result) {
      written.push_back(**result);
      continue;
    }
    llvm::consumeError(result->takeError());
    ok = false;
    const StreamError &e = *errors[i];
    if (e.tensor)
      (*plans)[i][*e.tensor].op->emitOpError() << e.message;
    else
      program->emitError() << e.message;
  }
  if (!ok)
    return failure();
  return written;
}
