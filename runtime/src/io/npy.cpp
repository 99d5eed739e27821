//===- npy.cpp - Tensors in and out of parc-run (.npy) --------------------===//
//
// Format: "\x93NUMPY", major, minor, header length (u16 in 1.0, u32 in
// 2.0/3.0), then a Python dict literal
//   {'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }
// padded with spaces and a newline, then the raw C-order data.
//
//===----------------------------------------------------------------------===//

#include "../status.h"
#include "file.h"
#include "header_cursor.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace parc::rt;

namespace {

struct Descr {
  const char *code; // without the byte-order character
  parc_rt_dtype_t dtype;
};
// bf16 has no numpy type: numpy writes ml_dtypes.bfloat16 as a 2-byte void.
constexpr Descr kDescrs[] = {
    {"f4", PARC_RT_F32}, {"f2", PARC_RT_F16}, {"V2", PARC_RT_BF16},
    {"f8", PARC_RT_F64}, {"i8", PARC_RT_I64}, {"i4", PARC_RT_I32},
    {"i1", PARC_RT_I8},  {"u1", PARC_RT_U8},  {"b1", PARC_RT_BOOL}};

const char *descrFor(parc_rt_dtype_t dtype) {
  switch (dtype) {
  case PARC_RT_F32:
    return "<f4";
  case PARC_RT_F16:
    return "<f2";
  case PARC_RT_BF16:
    return "<V2";
  case PARC_RT_F64:
    return "<f8";
  case PARC_RT_I64:
    return "<i8";
  case PARC_RT_I32:
    return "<i4";
  case PARC_RT_I8:
    return "|i1";
  case PARC_RT_U8:
    return "|u1";
  case PARC_RT_BOOL:
    return "|b1";
  default:
    return nullptr;
  }
}

struct NpyHeader {
  parc_rt_dtype_t dtype = PARC_RT_DTYPE_COUNT;
  int64_t rank = 0;
  int64_t dims[PARC_RT_MAX_RANK] = {};
  size_t dataOffset = 0;
};

/// Reads the header dict; only the three keys numpy writes are accepted.
class DictParser : HeaderCursor {
public:
  DictParser(const char *p, const char *end) : HeaderCursor(p, end) {}

  bool parse(std::string &descr, bool &fortran, std::vector<int64_t> &shape) {
    bool haveDescr = false, haveFortran = false, haveShape = false;
    if (!expect('{'))
      return false;
    while (!peek('}')) {
      std::string key;
      if (!quoted(key) || !expect(':'))
        return false;
      if (key == "descr") {
        skipSpace();
        if (p_ < end_ && *p_ == '[')
          return failAt("structured dtypes are not supported");
        if (!quoted(descr))
          return false;
        haveDescr = true;
      } else if (key == "fortran_order") {
        skipSpace();
        if (matchWord("True"))
          fortran = true;
        else if (matchWord("False"))
          fortran = false;
        else
          return failAt("fortran_order must be True or False");
        haveFortran = true;
      } else if (key == "shape") {
        if (!tuple(shape))
          return false;
        haveShape = true;
      } else {
        return failAt("unexpected key '" + key + "'");
      }
      if (!peek(',')) {
        if (!expect('}'))
          return false;
        break;
      }
    }
    if (!haveDescr || !haveFortran || !haveShape)
      return failAt("the header lacks descr, fortran_order or shape");
    return true;
  }
  const std::string &error() const { return error_; }

private:
  bool matchWord(const char *word) {
    const size_t n = std::strlen(word);
    if (size_t(end_ - p_) >= n && std::strncmp(p_, word, n) == 0) {
      p_ += n;
      return true;
    }
    return false;
  }
  bool quoted(std::string &out) {
    skipSpace();
    if (p_ == end_ || (*p_ != '\'' && *p_ != '"'))
      return failAt("expected a quoted string");
    const char quote = *p_++;
    while (p_ < end_ && *p_ != quote)
      out += *p_++;
    if (p_ == end_)
      return failAt("unterminated string");
    ++p_;
    return true;
  }
  bool tuple(std::vector<int64_t> &out) {
    if (!expect('('))
      return false;
    while (!peek(')')) {
      skipSpace();
      if (p_ == end_ || *p_ < '0' || *p_ > '9')
        return failAt("shape entries must be non-negative integers");
      int64_t v = 0;
      while (p_ < end_ && *p_ >= '0' && *p_ <= '9') {
        if (v > (INT64_MAX - 9) / 10)
          return failAt("shape entry overflows");
        v = v * 10 + (*p_++ - '0');
      }
      if (p_ < end_ && *p_ == 'L') // Python 2 longs
        ++p_;
      out.push_back(v);
      if (!peek(',')) {
        if (!expect(')'))
          return false;
        break;
      }
    }
    return true;
  }
};

parc_rt_status_t readHeader(const char *op, const char *path,
                            const InputFile &file, NpyHeader &h) {
  unsigned char prefix[12];
  if (file.size() < 10)
    return fail(PARC_RT_IO_ERROR,
                "%s: '%s' is truncated: %zu bytes is shorter than an .npy "
                "preamble",
                op, path, file.size());
  PARC_RT_RETURN_IF_ERROR(file.readAt(op, path, 0, prefix, 10));
  if (std::memcmp(prefix, "\x93NUMPY", 6) != 0)
    return fail(PARC_RT_IO_ERROR, "%s: '%s' is not an .npy file (bad magic)",
                op, path);
  const int major = prefix[6];
  if (major < 1 || major > 3)
    return fail(PARC_RT_UNSUPPORTED, "%s: '%s' has .npy format %d.%d", op, path,
                major, int(prefix[7]));
  size_t headerLength, headerStart;
  if (major == 1) {
    headerLength = size_t(prefix[8]) | size_t(prefix[9]) << 8;
    headerStart = 10;
  } else {
    PARC_RT_RETURN_IF_ERROR(file.readAt(op, path, 10, prefix + 10, 2));
    headerLength = size_t(prefix[8]) | size_t(prefix[9]) << 8 |
                   size_t(prefix[10]) << 16 | size_t(prefix[11]) << 24;
    headerStart = 12;
  }
  if (headerStart + headerLength > file.size())
    return fail(PARC_RT_IO_ERROR,
                "%s: '%s' is truncated: the header claims %zu bytes, the file "
                "has %zu",
                op, path, headerLength, file.size());
  std::string text(headerLength, '\0');
  PARC_RT_RETURN_IF_ERROR(
      file.readAt(op, path, headerStart, text.data(), headerLength));
  std::string descr;
  bool fortran = false;
  std::vector<int64_t> shape;
  DictParser parser(text.data(), text.data() + text.size());
  if (!parser.parse(descr, fortran, shape))
    return fail(PARC_RT_IO_ERROR, "%s: '%s' has a malformed header: %s", op,
                path, parser.error().c_str());
  if (fortran)
    return fail(PARC_RT_UNSUPPORTED,
                "%s: '%s' is in Fortran order; save it C-contiguous", op, path);
  if (shape.size() > PARC_RT_MAX_RANK)
    return fail(PARC_RT_UNSUPPORTED, "%s: '%s' has rank %zu (max %d)", op, path,
                shape.size(), PARC_RT_MAX_RANK);
  // Byte order: '<' little, '|' not applicable, '=' native (little here).
  const char order = descr.empty() ? '?' : descr[0];
  const std::string code = descr.size() > 1 ? descr.substr(1) : "";
  for (const Descr &d : kDescrs)
    if (code == d.code) {
      const bool oneByte = parc_rt_dtype_size(d.dtype) == 1;
      if (order == '<' || order == '=' || order == '|' ||
          (order == '>' && oneByte))
        h.dtype = d.dtype;
    }
  if (h.dtype == PARC_RT_DTYPE_COUNT)
    return fail(PARC_RT_UNSUPPORTED,
                "%s: '%s' has dtype '%s'; parc reads little-endian f32, f16, "
                "bf16 (V2), f64, i64, i32, i8, u8 and bool",
                op, path, descr.c_str());
  h.rank = int64_t(shape.size());
  std::copy(shape.begin(), shape.end(), h.dims);
  h.dataOffset = headerStart + headerLength;
  return PARC_RT_OK;
}

parc_rt_status_t checkNpyBytes(const char *op, const char *path,
                               const InputFile &file, const NpyHeader &h,
                               size_t &bytes) {
  uint64_t n = parc_rt_dtype_size(h.dtype);
  for (int64_t i = 0; i < h.rank; ++i)
    if (__builtin_mul_overflow(n, uint64_t(h.dims[i]), &n))
      return fail(PARC_RT_IO_ERROR, "%s: '%s': shape %s overflows", op, path,
                  shapeString(h.rank, h.dims).c_str());
  if (file.size() - h.dataOffset < n)
    return fail(PARC_RT_IO_ERROR,
                "%s: '%s' is truncated: %s %s needs %llu data bytes, the file "
                "holds %zu",
                op, path, parc_rt_dtype_name(h.dtype),
                shapeString(h.rank, h.dims).c_str(), (unsigned long long)n,
                file.size() - h.dataOffset);
  bytes = size_t(n);
  return PARC_RT_OK;
}

} // namespace

extern "C" {

parc_rt_status_t parc_rt_npy_info(const char *path, parc_rt_dtype_t *out_dtype,
                                  int64_t *out_rank, int64_t *out_dims) {
  const char *op = "npy_info";
  if (!path)
    return fail(PARC_RT_INVALID_ARGUMENT, "%s: path is null", op);
  InputFile file;
  PARC_RT_RETURN_IF_ERROR(file.open(op, path));
  NpyHeader h;
  PARC_RT_RETURN_IF_ERROR(readHeader(op, path, file, h));
  if (out_dtype)
    *out_dtype = h.dtype;
  if (out_rank)
    *out_rank = h.rank;
  if (out_dims)
    std::copy(h.dims, h.dims + h.rank, out_dims);
  return PARC_RT_OK;
}

parc_rt_status_t parc_rt_npy_read_into(const char *path, parc_rt_dtype_t dtype,
                                       int64_t rank, const int64_t *dims,
                                       void *dst) {
  const char *op = "npy_read";
  if (!path)
    return fail(PARC_RT_INVALID_ARGUMENT, "%s: path is null", op);
  InputFile file;
  PARC_RT_RETURN_IF_ERROR(file.open(op, path));
  NpyHeader h;
  PARC_RT_RETURN_IF_ERROR(readHeader(op, path, file, h));
  if (h.dtype != dtype || h.rank != rank ||
      (rank > 0 && (!dims || !std::equal(h.dims, h.dims + rank, dims))))
    return fail(PARC_RT_INVALID_ARGUMENT, "%s: '%s': expected %s%s, found %s%s",
                op, path, parc_rt_dtype_name(dtype),
                shapeString(rank, dims).c_str(), parc_rt_dtype_name(h.dtype),
                shapeString(h.rank, h.dims).c_str());
  size_t bytes;
  PARC_RT_RETURN_IF_ERROR(checkNpyBytes(op, path, file, h, bytes));
  if (bytes > 0 && !dst)
    return fail(PARC_RT_INVALID_ARGUMENT, "%s: destination is null", op);
  return file.readAt(op, path, h.dataOffset, dst, bytes);
}

parc_rt_status_t parc_rt_npy_read(const char *path, void **out_data,
                                  parc_rt_dtype_t *out_dtype, int64_t *out_rank,
                                  int64_t *out_dims) {
  const char *op = "npy_read";
  if (!path || !out_data)
    return fail(PARC_RT_INVALID_ARGUMENT, "%s: path or out_data is null", op);
  *out_data = nullptr;
  InputFile file;
  PARC_RT_RETURN_IF_ERROR(file.open(op, path));
  NpyHeader h;
  PARC_RT_RETURN_IF_ERROR(readHeader(op, path, file, h));
  size_t bytes;
  PARC_RT_RETURN_IF_ERROR(checkNpyBytes(op, path, file, h, bytes));
  void *data = nullptr;
  if (posix_memalign(&data, 64, bytes ? bytes : 64) != 0)
    return fail(PARC_RT_OUT_OF_MEMORY, "%s: '%s': cannot allocate %zu bytes",
                op, path, bytes);
  parc_rt_status_t s = file.readAt(op, path, h.dataOffset, data, bytes);
  if (s != PARC_RT_OK) {
    std::free(data);
    return s;
  }
  *out_data = data;
  if (out_dtype)
    *out_dtype = h.dtype;
  if (out_rank)
    *out_rank = h.rank;
  if (out_dims)
    std::copy(h.dims, h.dims + h.rank, out_dims);
  return PARC_RT_OK;
}

parc_rt_status_t parc_rt_npy_write(const char *path, parc_rt_dtype_t dtype,
                                   int64_t rank, const int64_t *dims,
                                   const void *data) {
  const char *op = "npy_write";
  const char *descr = descrFor(dtype);
  if (!path || !descr)
    return fail(PARC_RT_INVALID_ARGUMENT, "%s: null path or invalid dtype %d",
                op, int(dtype));
  if (rank < 0 || rank > PARC_RT_MAX_RANK || (rank > 0 && !dims))
    return fail(PARC_RT_INVALID_ARGUMENT, "%s: '%s': bad rank %lld", op, path,
                (long long)rank);
  int64_t count = 1;
  std::string shape = "(";
  for (int64_t i = 0; i < rank; ++i) {
    if (dims[i] < 0)
      return fail(PARC_RT_INVALID_ARGUMENT, "%s: '%s': negative dim in %s", op,
                  path, shapeString(rank, dims).c_str());
    count *= dims[i];
    shape += std::to_string(dims[i]) + (rank == 1      ? ",)"
                                        : i + 1 < rank ? ", "
                                                       : ")");
  }
  if (rank == 0)
    shape += ")";
  const size_t bytes = size_t(count) * parc_rt_dtype_size(dtype);
  if (bytes > 0 && !data)
    return fail(PARC_RT_INVALID_ARGUMENT, "%s: '%s': data is null", op, path);
  std::string header = std::string("{'descr': '") + descr +
                       "', 'fortran_order': False, 'shape': " + shape + ", }";
  // numpy pads so the data starts 64-byte aligned, ending with '\n'.
  const size_t total = (10 + header.size() + 1 + 63) / 64 * 64;
  header.append(total - 10 - header.size() - 1, ' ');
  header += '\n';
  if (header.size() > 65535)
    return fail(PARC_RT_INTERNAL, "%s: header too long for format 1.0", op);
  unsigned char preamble[10] = {
      0x93,
      'N',
      'U',
      'M',
      'P',
      'Y',
      1,
      0,
      static_cast<unsigned char>(header.size() & 0xFF),
      static_cast<unsigned char>(header.size() >> 8)};
  return writeFileAtomic(
      op, path,
      {{preamble, 10}, {header.data(), header.size()}, {data, bytes}});
}

// Host memory from parc_rt_npy_read; here, not with the arena, so that every
// backend shares it.
void parc_rt_free(void *ptr) { std::free(ptr); }

} // extern "C"
