//===- IoTest.cpp - safetensors and npy round trips and errors; arena -----===//

#include "TestUtil.h"

#include <cstdio>
#include <cstring>
#include <dirent.h>
#include <fstream>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace parc::test;

namespace {

/// A fresh temporary directory per test, removed afterwards.
class IoTest : public ::testing::Test {
protected:
  void SetUp() override {
    char pattern[] = "/tmp/parc-rt-io-XXXXXX";
    ASSERT_NE(mkdtemp(pattern), nullptr);
    dir_ = pattern;
  }
  void TearDown() override {
    for (const std::string &f : files())
      std::remove((dir_ + "/" + f).c_str());
    rmdir(dir_.c_str());
  }
  std::string path(const std::string &name) const { return dir_ + "/" + name; }
  std::vector<std::string> files() const {
    std::vector<std::string> names;
    if (DIR *d = opendir(dir_.c_str())) {
      while (dirent *e = readdir(d))
        if (e->d_name[0] != '.')
          names.push_back(e->d_name);
      closedir(d);
    }
    return names;
  }
  static void writeBytes(const std::string &p, const std::string &bytes) {
    std::ofstream(p, std::ios::binary) << bytes;
  }
  static std::string readBytes(const std::string &p) {
    std::ifstream in(p, std::ios::binary);
    return std::string(std::istreambuf_iterator<char>(in), {});
  }

  std::string dir_;
};

TEST_F(IoTest, SafetensorsRoundTrip) {
  const std::vector<float> w = {1.5f, -2.0f, 3.25f, 4.0f, 5.0f, 6.0f};
  const std::vector<uint16_t> h = {0x3C00, 0xC000, 0x7BFF};
  const std::vector<int64_t> ids = {7, -1};
  const std::vector<uint8_t> mask = {1, 0, 1, 1};
  const uint16_t scalar = 0x3F80; // bf16 1.0
  const int64_t wDims[2] = {2, 3}, hDims[1] = {3}, idDims[1] = {2},
                maskDims[2] = {2, 2}, emptyDims[2] = {0, 3};
  const char *names[] = {"layers.0.attn/q_proj.weight",
                         "h \"quoted\" \\ é",
                         "ids",
                         "mask",
                         "scale",
                         "empty"};
  const parc_rt_dtype_t dtypes[] = {PARC_RT_F32,  PARC_RT_F16,  PARC_RT_I64,
                                    PARC_RT_BOOL, PARC_RT_BF16, PARC_RT_F32};
  const int64_t ranks[] = {2, 1, 1, 2, 0, 2};
  const int64_t *dims[] = {wDims, hDims, idDims, maskDims, nullptr, emptyDims};
  const void *data[] = {w.data(),    h.data(), ids.data(),
                        mask.data(), &scalar,  nullptr};
  const std::string file = path("rank0.safetensors");
  ASSERT_RT_OK(parc_rt_safetensors_write(file.c_str(), 6, names, dtypes, ranks,
                                         dims, data));
  EXPECT_EQ(files(), std::vector<std::string>{"rank0.safetensors"})
      << "the temporary file must be renamed away";

  parc_rt_weights_t *weights = nullptr;
  ASSERT_RT_OK(parc_rt_weights_open(file.c_str(), &weights));
  EXPECT_EQ(parc_rt_weights_count(weights), 6);
  for (int i = 0; i < 6; ++i) {
    const void *got;
    parc_rt_dtype_t dtype;
    int64_t rank, gotDims[PARC_RT_MAX_RANK];
    ASSERT_RT_OK(
        parc_rt_weights_get(weights, names[i], &got, &dtype, &rank, gotDims));
    EXPECT_EQ(dtype, dtypes[i]) << names[i];
    ASSERT_EQ(rank, ranks[i]) << names[i];
    int64_t count = 1;
    for (int64_t d = 0; d < rank; ++d) {
      EXPECT_EQ(gotDims[d], dims[i][d]);
      count *= dims[i][d];
    }
    const size_t bytes = size_t(count) * parc_rt_dtype_size(dtype);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(got) % parc_rt_dtype_size(dtype), 0u)
        << names[i] << " must be naturally aligned";
    if (bytes) {
      EXPECT_EQ(std::memcmp(got, data[i], bytes), 0) << names[i];
    }
  }
  const void *checked = nullptr;
  ASSERT_RT_OK(parc_rt_weights_get_checked(weights, "ids", PARC_RT_I64, 1,
                                           idDims, &checked));
  EXPECT_EQ(static_cast<const int64_t *>(checked)[0], 7);
  const int64_t wrongDims[2] = {3, 2};
  EXPECT_RT_ERROR(parc_rt_weights_get_checked(weights, names[0], PARC_RT_F16, 2,
                                              wrongDims, &checked),
                  PARC_RT_INVALID_ARGUMENT,
                  "expected f16[3,2], found f32[2,3]");
  EXPECT_RT_ERROR(parc_rt_weights_get(weights, "lm_head.weight", &checked,
                                      nullptr, nullptr, nullptr),
                  PARC_RT_INVALID_ARGUMENT,
                  "tensor 'lm_head.weight' is not in");
  EXPECT_NE(std::string(parc_rt_last_error()).find(file), std::string::npos);
  parc_rt_weights_release(weights);
}

TEST_F(IoTest, SafetensorsReadsAHandWrittenFile) {
  // As written by the Python safetensors library: metadata, key order by
  // name, header padded with spaces.
  const std::string header =
      R"({"__metadata__":{"format":"pt"},"b":{"dtype":"I32","shape":[2],)"
      R"("data_offsets":[8,16]},"a":{"dtype":"F64","shape":[],"data_offsets":[0,8]}}  )";
  std::string bytes(8, '\0');
  for (int i = 0; i < 8; ++i)
    bytes[i] = char((header.size() >> (8 * i)) & 0xFF);
  bytes += header;
  const double a = 0.5;
  const int32_t b[2] = {3, -4};
  bytes.append(reinterpret_cast<const char *>(&a), 8);
  bytes.append(reinterpret_cast<const char *>(b), 8);
  const std::string file = path("hand.safetensors");
  writeBytes(file, bytes);
  parc_rt_weights_t *weights = nullptr;
  ASSERT_RT_OK(parc_rt_weights_open(file.c_str(), &weights));
  const void *p;
  ASSERT_RT_OK(
      parc_rt_weights_get_checked(weights, "a", PARC_RT_F64, 0, nullptr, &p));
  EXPECT_EQ(*static_cast<const double *>(p), 0.5);
  const int64_t two = 2;
  ASSERT_RT_OK(
      parc_rt_weights_get_checked(weights, "b", PARC_RT_I32, 1, &two, &p));
  EXPECT_EQ(static_cast<const int32_t *>(p)[1], -4);
  parc_rt_weights_release(weights);
}

TEST_F(IoTest, SafetensorsErrors) {
  parc_rt_weights_t *weights = nullptr;
  const std::string missing = path("nope.safetensors");
  EXPECT_RT_ERROR(parc_rt_weights_open(missing.c_str(), &weights),
                  PARC_RT_IO_ERROR, "cannot open '" + missing + "'");

  const float v[4] = {1, 2, 3, 4};
  const int64_t dims[1] = {4}, rank = 1;
  const char *name = "w";
  const parc_rt_dtype_t f32 = PARC_RT_F32;
  const int64_t *dimsp[] = {dims};
  const void *data[] = {v};
  const std::string file = path("t.safetensors");
  ASSERT_RT_OK(parc_rt_safetensors_write(file.c_str(), 1, &name, &f32, &rank,
                                         dimsp, data));
  const std::string full = readBytes(file);
  writeBytes(file, full.substr(0, full.size() - 3)); // lose 3 data bytes
  EXPECT_RT_ERROR(parc_rt_weights_open(file.c_str(), &weights),
                  PARC_RT_IO_ERROR, "is truncated: tensor 'w' ends at byte 16");
  writeBytes(file, full.substr(0, 20)); // inside the header
  EXPECT_RT_ERROR(parc_rt_weights_open(file.c_str(), &weights),
                  PARC_RT_IO_ERROR, "is truncated: the header claims");
  writeBytes(file, full.substr(0, 5));
  EXPECT_RT_ERROR(parc_rt_weights_open(file.c_str(), &weights),
                  PARC_RT_IO_ERROR, "is truncated: 5 bytes");
  std::string broken = full;
  broken[8] = '['; // header must be an object
  writeBytes(file, broken);
  EXPECT_RT_ERROR(parc_rt_weights_open(file.c_str(), &weights),
                  PARC_RT_IO_ERROR, "malformed header: expected '{' at byte 0");
  EXPECT_EQ(weights, nullptr);
}

TEST_F(IoTest, NpyRoundTripEveryDtype) {
  const int64_t dims[3] = {2, 1, 3};
  const uint8_t raw[48] = {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12,
                           13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24,
                           25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36,
                           37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48};
  for (int d = 0; d < PARC_RT_DTYPE_COUNT; ++d) {
    const auto dtype = parc_rt_dtype_t(d);
    const std::string file =
        path(std::string(parc_rt_dtype_name(dtype)) + ".npy");
    ASSERT_RT_OK(parc_rt_npy_write(file.c_str(), dtype, 3, dims, raw));
    const std::string bytes = readBytes(file);
    const size_t headerEnd =
        10 + size_t(uint8_t(bytes[8])) + (size_t(uint8_t(bytes[9])) << 8);
    EXPECT_EQ(headerEnd % 64, 0u) << "data must start 64-byte aligned";
    EXPECT_EQ(bytes[headerEnd - 1], '\n');
    void *got = nullptr;
    parc_rt_dtype_t gotDtype;
    int64_t rank, gotDims[PARC_RT_MAX_RANK];
    ASSERT_RT_OK(
        parc_rt_npy_read(file.c_str(), &got, &gotDtype, &rank, gotDims));
    EXPECT_EQ(gotDtype, dtype);
    ASSERT_EQ(rank, 3);
    EXPECT_EQ(Shape(gotDims, gotDims + 3), Shape(dims, dims + 3));
    EXPECT_EQ(std::memcmp(got, raw, 6 * parc_rt_dtype_size(dtype)), 0);
    parc_rt_free(got);
  }
  const std::string want =
      "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 1, 3), }";
  EXPECT_EQ(readBytes(path("f32.npy")).substr(10, want.size()), want);
}

TEST_F(IoTest, NpyReadsVersion2AndScalars) {
  // Version 2.0 header (u32 length), scalar shape ().
  std::string dict = "{'descr': '<i4', 'fortran_order': False, 'shape': (), }";
  dict.append((12 + dict.size() + 1 + 63) / 64 * 64 - 12 - dict.size() - 1,
              ' ');
  dict += '\n';
  std::string bytes = std::string("\x93NUMPY\x02\x00", 8);
  for (int i = 0; i < 4; ++i)
    bytes += char((dict.size() >> (8 * i)) & 0xFF);
  bytes += dict;
  const int32_t value = -12345;
  bytes.append(reinterpret_cast<const char *>(&value), 4);
  const std::string file = path("v2.npy");
  writeBytes(file, bytes);
  int32_t got = 0;
  ASSERT_RT_OK(
      parc_rt_npy_read_into(file.c_str(), PARC_RT_I32, 0, nullptr, &got));
  EXPECT_EQ(got, -12345);
  // A 1-d shape is written "(n,)".
  const int64_t n = 4;
  const float v[4] = {1, 2, 3, 4};
  ASSERT_RT_OK(parc_rt_npy_write(file.c_str(), PARC_RT_F32, 1, &n, v));
  EXPECT_NE(readBytes(file).find("'shape': (4,)"), std::string::npos);
}

TEST_F(IoTest, NpyErrors) {
  const int64_t dims[2] = {2, 2};
  const float v[4] = {1, 2, 3, 4};
  const std::string file = path("x.npy");
  ASSERT_RT_OK(parc_rt_npy_write(file.c_str(), PARC_RT_F32, 2, dims, v));
  float out[4];
  const int64_t other[2] = {4, 1};
  EXPECT_RT_ERROR(
      parc_rt_npy_read_into(file.c_str(), PARC_RT_F32, 2, other, out),
      PARC_RT_INVALID_ARGUMENT, "expected f32[4,1], found f32[2,2]");
  const std::string full = readBytes(file);
  writeBytes(file, full.substr(0, full.size() - 1));
  EXPECT_RT_ERROR(
      parc_rt_npy_read_into(file.c_str(), PARC_RT_F32, 2, dims, out),
      PARC_RT_IO_ERROR, "is truncated: f32 [2,2] needs 16 data bytes");
  std::string fortran = full;
  fortran.replace(fortran.find("False"), 5, "True ");
  writeBytes(file, fortran);
  EXPECT_RT_ERROR(parc_rt_npy_info(file.c_str(), nullptr, nullptr, nullptr),
                  PARC_RT_UNSUPPORTED, "Fortran order");
  std::string bigEndian = full;
  bigEndian.replace(bigEndian.find("<f4"), 3, ">f4");
  writeBytes(file, bigEndian);
  EXPECT_RT_ERROR(parc_rt_npy_info(file.c_str(), nullptr, nullptr, nullptr),
                  PARC_RT_UNSUPPORTED, "dtype '>f4'");
  writeBytes(file, "not numpy at all");
  EXPECT_RT_ERROR(parc_rt_npy_info(file.c_str(), nullptr, nullptr, nullptr),
                  PARC_RT_IO_ERROR, "bad magic");
  EXPECT_RT_ERROR(
      parc_rt_npy_info(path("absent.npy").c_str(), nullptr, nullptr, nullptr),
      PARC_RT_IO_ERROR, "absent.npy");
}

TEST(Arena, AlignedZeroedAndChecked) {
  for (size_t alignment : {size_t(64), size_t(1) << 16}) {
    parc_rt_arena_t *arena = nullptr;
    ASSERT_RT_OK(parc_rt_arena_create(1 << 20, alignment, &arena));
    auto *base = static_cast<unsigned char *>(parc_rt_arena_base(arena));
    ASSERT_NE(base, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(base) % alignment, 0u);
    EXPECT_EQ(parc_rt_arena_size(arena), size_t(1) << 20);
    EXPECT_EQ(base[0], 0);
    EXPECT_EQ(base[(1 << 20) - 1], 0);
    base[12345] = 7; // writable
    parc_rt_arena_release(arena);
  }
  parc_rt_arena_t *arena = nullptr;
  EXPECT_RT_ERROR(parc_rt_arena_create(64, 48, &arena),
                  PARC_RT_INVALID_ARGUMENT,
                  "alignment 48 is not a power of two");
}

} // namespace
