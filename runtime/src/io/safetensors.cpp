//===- safetensors.cpp - Per-rank weight shards (.safetensors) ------------===//
//
// Format: 8-byte little-endian header size N, N bytes of JSON
//   {"name": {"dtype": "F32", "shape": [2, 3], "data_offsets": [b, e]}, ...,
//    "__metadata__": {...}}
// then the data section; offsets are relative to its start.
//
// The file is mapped, not read: a rank touches only the pages of the
// tensors it uses, and several ranks on one node share the page cache. The
// header parser accepts exactly this JSON shape (the runtime must not pull
// in a JSON library), with full string escapes so any tensor name works.
//
//===----------------------------------------------------------------------===//

#include "safetensors.h"

#include "../constants.h"
#include "../status.h"
#include "file.h"
#include "formats.h"
#include "header_cursor.h"
#include "json_string.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

using namespace parc::rt;

namespace {

struct Tensor {
  std::string name;
  std::string dtypeName;                       // as in the file, for messages
  parc_rt_dtype_t dtype = PARC_RT_DTYPE_COUNT; // COUNT: not supported
  int64_t rank = 0;
  int64_t dims[PARC_RT_MAX_RANK] = {};
  uint64_t begin = 0, end = 0;
  const void *data = nullptr;
};

struct DtypeName {
  const char *name;
  parc_rt_dtype_t dtype;
};
constexpr DtypeName kDtypeNames[] = {
    {"F32", PARC_RT_F32}, {"F16", PARC_RT_F16}, {"BF16", PARC_RT_BF16},
    {"F64", PARC_RT_F64}, {"I64", PARC_RT_I64}, {"I32", PARC_RT_I32},
    {"I8", PARC_RT_I8},   {"U8", PARC_RT_U8},   {"BOOL", PARC_RT_BOOL}};

parc_rt_dtype_t dtypeFromName(const std::string &s) {
  for (const DtypeName &d : kDtypeNames)
    if (s == d.name)
      return d.dtype;
  return PARC_RT_DTYPE_COUNT;
}

const char *nameFromDtype(parc_rt_dtype_t dtype) {
  for (const DtypeName &d : kDtypeNames)
    if (d.dtype == dtype)
      return d.name;
  return nullptr;
}

/// Byte size of a tensor of a supported dtype; false on overflow.
bool byteSize(const Tensor &t, uint64_t &out) {
  uint64_t n = parc_rt_dtype_size(t.dtype);
  for (int64_t i = 0; i < t.rank; ++i)
    if (__builtin_mul_overflow(n, uint64_t(t.dims[i]), &n))
      return false;
  out = n;
  return true;
}

/// Recursive-descent reader for the header's JSON.
class HeaderParser : HeaderCursor {
public:
  HeaderParser(const char *begin, const char *end) : HeaderCursor(begin, end) {}

  bool parse(std::vector<Tensor> &tensors,
             std::map<std::string, std::string> &metadata) {
    if (!expect('{'))
      return false;
    if (peek('}'))
      return finish();
    for (;;) {
      std::string key;
      if (!string(key) || !expect(':'))
        return false;
      if (key == "__metadata__") {
        if (!stringMap(metadata))
          return false;
      } else {
        tensors.emplace_back();
        tensors.back().name = std::move(key);
        if (!tensor(tensors.back()))
          return false;
      }
      if (peek(','))
        continue;
      if (!expect('}'))
        return false;
      return finish();
    }
  }

  std::string error() const {
    return error_ + " at byte " + std::to_string(p_ - start_) +
           " of the header";
  }

private:
  bool finish() {
    skipSpace(); // writers pad the header with spaces
    return p_ == end_ || failAt("unexpected text after the header object");
  }

  static void appendUtf8(std::string &out, uint32_t cp) {
    if (cp < 0x80) {
      out += char(cp);
    } else if (cp < 0x800) {
      out += char(0xC0 | (cp >> 6));
      out += char(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += char(0xE0 | (cp >> 12));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    } else {
      out += char(0xF0 | (cp >> 18));
      out += char(0x80 | ((cp >> 12) & 0x3F));
      out += char(0x80 | ((cp >> 6) & 0x3F));
      out += char(0x80 | (cp & 0x3F));
    }
  }
  bool hex4(uint32_t &out) {
    if (end_ - p_ < 4)
      return failAt("truncated \\u escape");
    out = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = *p_++;
      out <<= 4;
      if (c >= '0' && c <= '9')
        out |= uint32_t(c - '0');
      else if (c >= 'a' && c <= 'f')
        out |= uint32_t(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        out |= uint32_t(c - 'A' + 10);
      else
        return failAt("bad \\u escape");
    }
    return true;
  }
  bool string(std::string &out) {
    if (!expect('"'))
      return false;
    while (p_ < end_ && *p_ != '"') {
      char c = *p_++;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (p_ == end_)
        break;
      c = *p_++;
      switch (c) {
      case '"':
      case '\\':
      case '/':
        out += c;
        break;
      case 'b':
        out += '\b';
        break;
      case 'f':
        out += '\f';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 't':
        out += '\t';
        break;
      case 'u': {
        uint32_t cp;
        if (!hex4(cp))
          return false;
        if (cp >= 0xD800 && cp < 0xDC00) { // surrogate pair
          uint32_t low;
          if (end_ - p_ < 2 || p_[0] != '\\' || p_[1] != 'u')
            return failAt("unpaired surrogate in \\u escape");
          p_ += 2;
          if (!hex4(low) || low < 0xDC00 || low >= 0xE000)
            return failAt("bad surrogate pair in \\u escape");
          cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
        }
        appendUtf8(out, cp);
        break;
      }
      default:
        return failAt("bad escape in string");
      }
    }
    if (p_ == end_)
      return failAt("unterminated string");
    ++p_;
    return true;
  }
  bool integer(uint64_t &out) {
    skipSpace();
    if (p_ == end_ || *p_ < '0' || *p_ > '9')
      return failAt("expected a non-negative integer");
    out = 0;
    while (p_ < end_ && *p_ >= '0' && *p_ <= '9') {
      const uint64_t digit = uint64_t(*p_++ - '0');
      if (out > (UINT64_MAX - digit) / 10)
        return failAt("integer overflow");
      out = out * 10 + digit;
    }
    return true;
  }
  bool integers(std::vector<uint64_t> &out) {
    if (!expect('['))
      return false;
    if (peek(']'))
      return true;
    do {
      uint64_t v;
      if (!integer(v))
        return false;
      out.push_back(v);
    } while (peek(','));
    return expect(']');
  }
  /// The metadata object: its string values (others are skipped).
  bool stringMap(std::map<std::string, std::string> &out) {
    if (!expect('{'))
      return false;
    if (peek('}'))
      return true;
    do {
      std::string key;
      if (!string(key) || !expect(':'))
        return false;
      skipSpace();
      if (p_ < end_ && *p_ == '"') {
        std::string value;
        if (!string(value))
          return false;
        out[key] = std::move(value);
      } else if (!skipValue(1)) {
        return false;
      }
    } while (peek(','));
    return expect('}');
  }
  /// Skips any JSON value (unknown fields).
  bool skipValue(int depth) {
    if (depth > 64)
      return failAt("nesting too deep");
    skipSpace();
    if (p_ == end_)
      return failAt("expected a value");
    if (*p_ == '"') {
      std::string ignored;
      return string(ignored);
    }
    if (*p_ == '{' || *p_ == '[') {
      const char close = *p_ == '{' ? '}' : ']';
      const bool object = *p_ == '{';
      ++p_;
      if (peek(close))
        return true;
      do {
        if (object) {
          std::string ignored;
          if (!string(ignored) || !expect(':'))
            return false;
        }
        if (!skipValue(depth + 1))
          return false;
      } while (peek(','));
      return expect(close);
    }
    // number, true, false, null
    const char *start = p_;
    while (p_ < end_ && *p_ && std::strchr("+-.0123456789eEtruefalsn", *p_))
      ++p_;
    return p_ != start || failAt("expected a value");
  }
  bool tensor(Tensor &t) {
    if (!expect('{'))
      return false;
    bool haveDtype = false, haveShape = false, haveOffsets = false;
    if (!peek('}')) {
      do {
        std::string key;
        if (!string(key) || !expect(':'))
          return false;
        if (key == "dtype") {
          if (!string(t.dtypeName))
            return false;
          t.dtype = dtypeFromName(t.dtypeName);
          haveDtype = true;
        } else if (key == "shape") {
          std::vector<uint64_t> dims;
          if (!integers(dims))
            return false;
          if (dims.size() > PARC_RT_MAX_RANK)
            return failAt("tensor '" + t.name + "' has rank above " +
                          std::to_string(PARC_RT_MAX_RANK));
          t.rank = int64_t(dims.size());
          for (size_t i = 0; i < dims.size(); ++i) {
            if (dims[i] > uint64_t(INT64_MAX))
              return failAt("tensor '" + t.name + "' has a huge dim");
            t.dims[i] = int64_t(dims[i]);
          }
          haveShape = true;
        } else if (key == "data_offsets") {
          std::vector<uint64_t> offsets;
          if (!integers(offsets))
            return false;
          if (offsets.size() != 2)
            return failAt("tensor '" + t.name +
                          "': data_offsets needs two entries");
          t.begin = offsets[0];
          t.end = offsets[1];
          haveOffsets = true;
        } else if (!skipValue(0)) {
          return false;
        }
      } while (peek(','));
      if (!expect('}'))
        return false;
    }
    if (!haveDtype || !haveShape || !haveOffsets)
      return failAt("tensor '" + t.name +
                    "' lacks dtype, shape or data_offsets");
    return true;
  }
};

} // namespace

struct parc_rt_weights_t {
  std::string path;
  MappedFile file;
  std::vector<Tensor> tensors;
  std::unordered_map<std::string, size_t> byName;
  std::map<std::string, std::string> metadata;
  const unsigned char *dataStart = nullptr;
  uint64_t dataSize = 0;
  // Only when a writer left a tensor misaligned for its element type.
  std::unique_ptr<unsigned char, void (*)(void *)> alignedCopy{nullptr,
                                                               std::free};
  // Last: kernels' packed copies of the tensors go before the data does.
  ConstantRange constant;
};

namespace {

const std::string *metadataEntry(const parc_rt_weights_t *w, const char *key) {
  auto it = w->metadata.find(key);
  return it == w->metadata.end() ? nullptr : &it->second;
}

/// With --verify-weights: the data section against parc.checksum, then,
/// to name the damaged tensor, each against parc.tensor_checksums.
parc_rt_status_t verifyData(const parc_rt_weights_t *w) {
  const char *op = "weights";
  const std::string *whole = metadataEntry(w, "parc.checksum");
  const std::string *each = metadataEntry(w, "parc.tensor_checksums");
  if (!whole || !each)
    return fail(PARC_RT_IO_ERROR,
                "%s: '%s' has no parc.checksum to verify (written by an older "
                "parc: recompile)",
                op, w->path.c_str());
  const std::string found =
      "crc32c:" + crcHex(crc32c(0, w->dataStart, size_t(w->dataSize)));
  if (found == *whole)
    return PARC_RT_OK;
  // The tensors in data order, as the writer listed their checksums.
  std::vector<const Tensor *> order;
  for (const Tensor &t : w->tensors)
    order.push_back(&t);
  std::stable_sort(
      order.begin(), order.end(),
      [](const Tensor *a, const Tensor *b) { return a->begin < b->begin; });
  for (size_t i = 0; i < order.size(); ++i) {
    const Tensor &t = *order[i];
    const std::string stored =
        each->size() >= 9 * i + 8 ? each->substr(9 * i, 8) : "";
    const std::string got =
        crcHex(crc32c(0, w->dataStart + t.begin, size_t(t.end - t.begin)));
    if (got != stored)
      return fail(PARC_RT_IO_ERROR,
                  "%s: '%s': tensor '%s' does not match its checksum (crc32c "
                  "%s, the header records %s): the file is damaged; recompile",
                  op, w->path.c_str(), t.name.c_str(), got.c_str(),
                  stored.c_str());
  }
  return fail(PARC_RT_IO_ERROR,
              "%s: '%s': the data section does not match its checksum (%s, "
              "the header records %s): the file is damaged; recompile",
              op, w->path.c_str(), found.c_str(), whole->c_str());
}

} // namespace

parc_rt_status_t parc::rt::checkShard(const parc_rt_weights_t *w, int rank,
                                      const char *program, bool verify) {
  const std::string *r = metadataEntry(w, "parc.rank");
  const std::string *p = metadataEntry(w, "parc.program");
  if (!r || !p)
    return fail(PARC_RT_IO_ERROR,
                "weights: '%s' has no parc shard header (parc.rank, "
                "parc.program in __metadata__): it was not written by parc "
                "compile; recompile",
                w->path.c_str());
  if (*r != std::to_string(rank) || *p != program)
    return fail(PARC_RT_IO_ERROR,
                "weights: '%s' is the shard of rank %s of program '%s', but "
                "it was loaded by rank %d of program '%s': weight files were "
                "swapped or copied from another compile",
                w->path.c_str(), r->c_str(), p->c_str(), rank, program);
  return verify ? verifyData(w) : PARC_RT_OK;
}

extern "C" {

parc_rt_status_t parc_rt_weights_open(const char *path,
                                      parc_rt_weights_t **out_weights) {
  const char *op = "weights_open";
  if (!path || !out_weights)
    return fail(PARC_RT_INVALID_ARGUMENT, "%s: path or out_weights is null",
                op);
  *out_weights = nullptr;
  auto w = std::make_unique<parc_rt_weights_t>();
  w->path = path;
  PARC_RT_RETURN_IF_ERROR(w->file.open(op, path));
  const size_t size = w->file.size();
  const unsigned char *bytes = w->file.data();
  if (size < 8)
    return fail(PARC_RT_IO_ERROR,
                "%s: '%s' is truncated: %zu bytes, less than the 8-byte "
                "header size",
                op, path, size);
  uint64_t headerSize = 0;
  for (int i = 7; i >= 0; --i)
    headerSize = (headerSize << 8) | bytes[i];
  if (headerSize > size - 8)
    return fail(PARC_RT_IO_ERROR,
                "%s: '%s' is truncated: the header claims %llu bytes, the "
                "file has %zu after the size field",
                op, path, (unsigned long long)headerSize, size - 8);
  const char *header = reinterpret_cast<const char *>(bytes + 8);
  HeaderParser parser(header, header + headerSize);
  if (!parser.parse(w->tensors, w->metadata))
    return fail(PARC_RT_IO_ERROR, "%s: '%s' has a malformed header: %s", op,
                path, parser.error().c_str());
  const unsigned char *dataStart = bytes + 8 + headerSize;
  const uint64_t dataSize = size - 8 - headerSize;
  w->dataStart = dataStart;
  w->dataSize = dataSize;
  bool misaligned = false;
  for (size_t i = 0; i < w->tensors.size(); ++i) {
    Tensor &t = w->tensors[i];
    if (!w->byName.emplace(t.name, i).second)
      return fail(PARC_RT_IO_ERROR, "%s: '%s' lists tensor '%s' twice", op,
                  path, t.name.c_str());
    if (t.begin > t.end)
      return fail(PARC_RT_IO_ERROR,
                  "%s: '%s': tensor '%s' has data_offsets [%llu, %llu]", op,
                  path, t.name.c_str(), (unsigned long long)t.begin,
                  (unsigned long long)t.end);
    if (t.end > dataSize)
      return fail(PARC_RT_IO_ERROR,
                  "%s: '%s' is truncated: tensor '%s' ends at byte %llu of "
                  "the data section, which holds %llu bytes",
                  op, path, t.name.c_str(), (unsigned long long)t.end,
                  (unsigned long long)dataSize);
    if (t.dtype != PARC_RT_DTYPE_COUNT) {
      uint64_t expected = 0;
      if (!byteSize(t, expected) || t.end - t.begin != expected)
        return fail(PARC_RT_IO_ERROR,
                    "%s: '%s': tensor '%s' (%s %s) needs %llu bytes, "
                    "data_offsets give %llu",
                    op, path, t.name.c_str(), t.dtypeName.c_str(),
                    shapeString(t.rank, t.dims).c_str(),
                    (unsigned long long)expected,
                    (unsigned long long)(t.end - t.begin));
      misaligned |= reinterpret_cast<uintptr_t>(dataStart + t.begin) %
                        parc_rt_dtype_size(t.dtype) !=
                    0;
    }
    t.data = dataStart + t.begin;
  }
  if (misaligned) {
    // Kernels may assume natural alignment; copy once rather than fault.
    size_t total = 0;
    for (const Tensor &t : w->tensors)
      total += (t.end - t.begin + 63) & ~size_t(63);
    void *copy = nullptr;
    if (posix_memalign(&copy, 64, std::max<size_t>(total, 64)) != 0)
      return fail(PARC_RT_OUT_OF_MEMORY,
                  "%s: '%s': cannot allocate %zu bytes to realign tensors", op,
                  path, total);
    w->alignedCopy.reset(static_cast<unsigned char *>(copy));
    size_t offset = 0;
    for (Tensor &t : w->tensors) {
      std::memcpy(w->alignedCopy.get() + offset, t.data, t.end - t.begin);
      t.data = w->alignedCopy.get() + offset;
      offset += (t.end - t.begin + 63) & ~size_t(63);
    }
    w->constant = ConstantRange(w->alignedCopy.get(), total);
  } else {
    w->constant = ConstantRange(dataStart, dataSize);
  }
  *out_weights = w.release();
  return PARC_RT_OK;
}

void parc_rt_weights_release(parc_rt_weights_t *weights) { delete weights; }

int64_t parc_rt_weights_count(const parc_rt_weights_t *weights) {
  return weights ? int64_t(weights->tensors.size()) : 0;
}

const char *parc_rt_weights_name(const parc_rt_weights_t *weights, int64_t i) {
  if (!weights || i < 0 || i >= int64_t(weights->tensors.size()))
    return nullptr;
  return weights->tensors[size_t(i)].name.c_str();
}

parc_rt_status_t parc_rt_weights_get(const parc_rt_weights_t *weights,
                                     const char *name, const void **out_data,
                                     parc_rt_dtype_t *out_dtype,
                                     int64_t *out_rank, int64_t *out_dims) {
  const char *op = "weights_get";
  if (!weights || !name)
    return fail(PARC_RT_INVALID_ARGUMENT, "%s: weights or name is null", op);
  auto it = weights->byName.find(name);
  if (it == weights->byName.end())
    return fail(PARC_RT_INVALID_ARGUMENT,
                "%s: tensor '%s' is not in '%s' (%zu tensors)", op, name,
                weights->path.c_str(), weights->tensors.size());
  const Tensor &t = weights->tensors[it->second];
  if (t.dtype == PARC_RT_DTYPE_COUNT)
    return fail(PARC_RT_UNSUPPORTED,
                "%s: tensor '%s' in '%s' has dtype %s, which parc does not "
                "support",
                op, name, weights->path.c_str(), t.dtypeName.c_str());
  if (out_data)
    *out_data = t.data;
  if (out_dtype)
    *out_dtype = t.dtype;
  if (out_rank)
    *out_rank = t.rank;
  if (out_dims)
    std::copy(t.dims, t.dims + t.rank, out_dims);
  return PARC_RT_OK;
}

parc_rt_status_t parc_rt_weights_get_checked(const parc_rt_weights_t *weights,
                                             const char *name,
                                             parc_rt_dtype_t dtype,
                                             int64_t rank, const int64_t *dims,
                                             const void **out_data) {
  parc_rt_dtype_t gotDtype;
  int64_t gotRank;
  int64_t gotDims[PARC_RT_MAX_RANK];
  const void *data;
  PARC_RT_RETURN_IF_ERROR(
      parc_rt_weights_get(weights, name, &data, &gotDtype, &gotRank, gotDims));
  if (gotDtype != dtype || gotRank != rank ||
      (rank > 0 && (!dims || !std::equal(gotDims, gotDims + rank, dims))))
    return fail(PARC_RT_INVALID_ARGUMENT,
                "weights_get: tensor '%s' in '%s': expected %s%s, found %s%s",
                name, weights->path.c_str(), parc_rt_dtype_name(dtype),
                shapeString(rank, dims).c_str(), parc_rt_dtype_name(gotDtype),
                shapeString(gotRank, gotDims).c_str());
  if (out_data)
    *out_data = data;
  return PARC_RT_OK;
}

parc_rt_status_t
parc_rt_safetensors_write(const char *path, int64_t n, const char *const *names,
                          const parc_rt_dtype_t *dtypes, const int64_t *ranks,
                          const int64_t *const *dims, const void *const *data) {
  const char *op = "safetensors_write";
  if (!path || n < 0 ||
      (n > 0 && (!names || !dtypes || !ranks || !dims || !data)))
    return fail(PARC_RT_INVALID_ARGUMENT, "%s: missing arguments", op);
  std::vector<size_t> order(static_cast<size_t>(n));
  std::vector<uint64_t> bytes(static_cast<size_t>(n));
  std::unordered_map<std::string, int64_t> seen;
  for (int64_t i = 0; i < n; ++i) {
    if (!names[i])
      return fail(PARC_RT_INVALID_ARGUMENT, "%s: tensor %lld has no name", op,
                  (long long)i);
    if (!seen.emplace(names[i], i).second ||
        std::strcmp(names[i], "__metadata__") == 0)
      return fail(PARC_RT_INVALID_ARGUMENT,
                  "%s: tensor name '%s' is duplicated or reserved", op,
                  names[i]);
    if (!isValidUtf8(names[i]))
      return fail(PARC_RT_INVALID_ARGUMENT,
                  "%s: tensor name '%s' is not valid UTF-8, which a "
                  "safetensors header (JSON) cannot carry",
                  op, names[i]);
    if (!nameFromDtype(dtypes[i]))
      return fail(PARC_RT_INVALID_ARGUMENT,
                  "%s: tensor '%s' has invalid dtype %d", op, names[i],
                  int(dtypes[i]));
    if (ranks[i] < 0 || ranks[i] > PARC_RT_MAX_RANK ||
        (ranks[i] > 0 && !dims[i]))
      return fail(PARC_RT_INVALID_ARGUMENT, "%s: tensor '%s' has bad rank %lld",
                  op, names[i], (long long)ranks[i]);
    int64_t count = 1;
    for (int64_t d = 0; d < ranks[i]; ++d) {
      if (dims[i][d] < 0)
        return fail(PARC_RT_INVALID_ARGUMENT,
                    "%s: tensor '%s' has negative dim in %s", op, names[i],
                    shapeString(ranks[i], dims[i]).c_str());
      count *= dims[i][d];
    }
    bytes[size_t(i)] = uint64_t(count) * parc_rt_dtype_size(dtypes[i]);
    if (bytes[size_t(i)] > 0 && !data[i])
      return fail(PARC_RT_INVALID_ARGUMENT, "%s: tensor '%s' has no data", op,
                  names[i]);
    order[size_t(i)] = size_t(i);
  }
  // Widest elements first: with a 64-byte aligned data section every tensor
  // is then naturally aligned, and the section has no holes (which the
  // reference reader rejects).
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return parc_rt_dtype_size(dtypes[a]) > parc_rt_dtype_size(dtypes[b]);
  });
  std::string header = "{";
  uint64_t offset = 0;
  for (size_t k = 0; k < order.size(); ++k) {
    const size_t i = order[k];
    if (k)
      header += ',';
    appendJsonString(header, names[i]);
    header += ":{\"dtype\":\"";
    header += nameFromDtype(dtypes[i]);
    header += "\",\"shape\":[";
    for (int64_t d = 0; d < ranks[i]; ++d) {
      if (d)
        header += ',';
      header += std::to_string(dims[i][d]);
    }
    header += "],\"data_offsets\":[" + std::to_string(offset) + "," +
              std::to_string(offset + bytes[i]) + "]}";
    offset += bytes[i];
  }
  header += '}';
  while ((8 + header.size()) % 64)
    header += ' ';
  unsigned char sizeField[8];
  for (int b = 0; b < 8; ++b)
    sizeField[b] = (uint64_t(header.size()) >> (8 * b)) & 0xFF;
  std::vector<Chunk> chunks = {{sizeField, 8}, {header.data(), header.size()}};
  for (size_t i : order)
    chunks.push_back({data[i], size_t(bytes[i])});
  return writeFileAtomic(op, path, chunks);
}

} // extern "C"
