//===- PackedGemmTest.cpp - GEMMs on weights in constant memory -----------===//
//
// parc_rt_gemm / parc_rt_matmul with b inside a registered ConstantRange
// (as a mapped weight shard is) take oneDNN's matmul with b packed once per
// shape: the results must match a naive loop, stay bitwise row-chunk
// invariant, pack once, and never outlive the memory they came from.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include "constants.h"
#include "half.h"

#include <cstdlib>
#include <cstring>
#include <tuple>

using namespace parc::test;
using parc::rt::ConstantRange;
using parc::rt::constantsDerivedTime;
using parc::rt::f32ToHalf;
using parc::rt::halfToF32;

namespace {

/// 64-byte aligned copy of v, as the weight reader aligns tensors.
template <typename T> struct Aligned {
  explicit Aligned(const std::vector<T> &v)
      : data(static_cast<T *>(std::aligned_alloc(64, (v.size() * sizeof(T) + 63) / 64 * 64))),
        size(v.size()) {
    std::memcpy(data, v.data(), v.size() * sizeof(T));
  }
  ~Aligned() { std::free(data); }
  size_t bytes() const { return size * sizeof(T); }
  T *data;
  size_t size;
};

TEST(PackedGemm, MatchesNaiveAtOddSizes) {
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{37, 45, 70},
                         {128, 200, 96},
                         {1, 3, 5}})
    for (int tw = 0; tw < 2; ++tw)
      for (bool withBias : {false, true}) {
        auto x = randomFloats(size_t(m * k), 60);
        Aligned<float> w(randomFloats(size_t(k * n), 61 + tw));
        ConstantRange constant(w.data, w.bytes());
        auto bias = withBias ? randomFloats(size_t(n), 62) : std::vector<float>{};
        const int64_t bs[1] = {n};
        std::vector<float> y(size_t(m * n), 99.0f);
        ASSERT_RT_OK(parc_rt_gemm(PARC_RT_F32, x.data(), w.data,
                                  withBias ? bias.data() : nullptr,
                                  withBias ? 1 : 0, bs, y.data(), m, n, k, 0,
                                  tw, 0.5f, 1.0f));
        std::vector<float> wv(w.data, w.data + w.size);
        std::vector<double> want = naiveLinear(
            x, wv, tw, bias, withBias ? Shape{n} : Shape{}, m, n, k, 0.5);
        EXPECT_TRUE(allClose(y, want, 1e-5, 1e-5))
            << m << "x" << k << "x" << n << " transB " << tw << " bias "
            << withBias;
      }
}

TEST(PackedGemm, PacksOncePerWeightAndShape) {
  const int64_t m = 16, n = 48, k = 32;
  auto x = randomFloats(size_t(m * k), 70);
  Aligned<float> w(randomFloats(size_t(k * n), 71));
  ConstantRange constant(w.data, w.bytes());
  std::vector<float> y(size_t(m * n));
  const int64_t before = constantsDerivedTime().count;
  for (int run = 0; run < 3; ++run)
    ASSERT_RT_OK(parc_rt_gemm(PARC_RT_F32, x.data(), w.data, nullptr, 0,
                              nullptr, y.data(), m, n, k, 0, 0, 1.0f, 0.0f));
  EXPECT_EQ(constantsDerivedTime().count - before, 1);
  // Another row count is another shape: one more packing.
  ASSERT_RT_OK(parc_rt_gemm(PARC_RT_F32, x.data(), w.data, nullptr, 0, nullptr,
                            y.data(), m / 2, n, k, 0, 0, 1.0f, 0.0f));
  EXPECT_EQ(constantsDerivedTime().count - before, 2);
  // Memory outside any range is used as it is.
  auto plain = randomFloats(size_t(k * n), 72);
  ASSERT_RT_OK(parc_rt_gemm(PARC_RT_F32, x.data(), plain.data(), nullptr, 0,
                            nullptr, y.data(), m, n, k, 0, 0, 1.0f, 0.0f));
  EXPECT_EQ(constantsDerivedTime().count - before, 2);
}

TEST(PackedGemm, ReleasedRangeDropsItsPackedCopy) {
  // New contents at the same address once the range is gone (a shard
  // released and another mapped there) must not meet the old packing.
  const int64_t m = 8, n = 24, k = 16;
  auto x = randomFloats(size_t(m * k), 80);
  Aligned<float> w(randomFloats(size_t(k * n), 81));
  std::vector<float> y(size_t(m * n));
  {
    ConstantRange constant(w.data, w.bytes());
    ASSERT_RT_OK(parc_rt_gemm(PARC_RT_F32, x.data(), w.data, nullptr, 0,
                              nullptr, y.data(), m, n, k, 0, 0, 1.0f, 0.0f));
  }
  auto fresh = randomFloats(size_t(k * n), 82);
  std::memcpy(w.data, fresh.data(), w.bytes());
  ConstantRange constant(w.data, w.bytes());
  ASSERT_RT_OK(parc_rt_gemm(PARC_RT_F32, x.data(), w.data, nullptr, 0, nullptr,
                            y.data(), m, n, k, 0, 0, 1.0f, 0.0f));
  EXPECT_TRUE(
      allClose(y, naiveLinear(x, fresh, false, {}, {}, m, n, k), 1e-5, 1e-5));
}

TEST(PackedGemm, RowChunksEqualTheWholeBitwise) {
  // dist-overlap's row chunks promise the bits of the uncut product, with
  // packed weights too (each chunk's row count is its own shape).
  const int64_t m = 64, n = 96, k = 200;
  auto x = randomFloats(size_t(m * k), 90);
  Aligned<float> w(randomFloats(size_t(k * n), 91));
  ConstantRange constant(w.data, w.bytes());
  auto bias = randomFloats(size_t(n), 92);
  const int64_t bs[1] = {n};
  std::vector<float> whole(size_t(m * n));
  ASSERT_RT_OK(parc_rt_gemm(PARC_RT_F32, x.data(), w.data, bias.data(), 1, bs,
                            whole.data(), m, n, k, 0, 0, 1.0f, 1.0f));
  for (int64_t chunks : {2, 4}) {
    std::vector<float> cut(size_t(m * n));
    const int64_t rows = m / chunks;
    for (int64_t c = 0; c < chunks; ++c)
      ASSERT_RT_OK(parc_rt_gemm(PARC_RT_F32, x.data() + c * rows * k, w.data,
                                bias.data(), 1, bs, cut.data() + c * rows * n,
                                rows, n, k, 0, 0, 1.0f, 1.0f));
    EXPECT_EQ(0, std::memcmp(whole.data(), cut.data(), whole.size() * 4))
        << chunks << " chunks";
  }
}

TEST(PackedGemm, Bf16AccumulatesInF32) {
  // bf16 operands, products summed in f32 and rounded once to bf16: within
  // bf16's half ulp (2^-9 relative) of the exact sum of the same operands.
  const int64_t m = 32, n = 80, k = 256;
  auto toBf16 = [](const std::vector<float> &v) {
    std::vector<uint16_t> h(v.size());
    f32ToHalf(true, v.data(), h.data(), int64_t(v.size()));
    return h;
  };
  auto widen = [](const std::vector<uint16_t> &h) {
    std::vector<float> v(h.size());
    halfToF32(true, h.data(), v.data(), int64_t(h.size()));
    return v;
  };
  auto xh = toBf16(randomFloats(size_t(m * k), 100));
  auto bias = toBf16(randomFloats(size_t(n), 102));
  for (int tw = 0; tw < 2; ++tw) {
    Aligned<uint16_t> w(toBf16(randomFloats(size_t(k * n), 101 + tw)));
    ConstantRange constant(w.data, w.bytes());
    const int64_t bs[1] = {n};
    std::vector<uint16_t> yh(size_t(m * n));
    ASSERT_RT_OK(parc_rt_gemm(PARC_RT_BF16, xh.data(), w.data, bias.data(), 1,
                              bs, yh.data(), m, n, k, 0, tw, 1.0f, 1.0f));
    std::vector<double> want =
        naiveLinear(widen(xh),
                    widen(std::vector<uint16_t>(w.data, w.data + w.size)), tw,
                    widen(bias), {n}, m, n, k);
    // Magnitudes reach ~10 with sums of 256 terms: f32 accumulation error
    // is ~1e-5 of that, bf16 rounding 2^-9 relative.
    EXPECT_TRUE(allClose(widen(yh), want, 1.0 / 256, 1e-3)) << "transB " << tw;
  }
}

} // namespace
