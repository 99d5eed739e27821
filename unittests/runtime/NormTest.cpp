//===- NormTest.cpp - softmax, layer_norm, rms_norm vs double references --===//

#include "TestUtil.h"
#include "parc/program.h"

using namespace parc::test;

namespace {

/// Softmax over `axis` in double, written the textbook way.
std::vector<double> refSoftmax(const std::vector<float> &x, const Shape &s,
                               int64_t axis, bool log) {
  int64_t outer = 1, inner = 1;
  for (int64_t i = 0; i < axis; ++i)
    outer *= s[i];
  for (size_t i = size_t(axis) + 1; i < s.size(); ++i)
    inner *= s[i];
  const int64_t n = s[axis];
  std::vector<double> y(x.size());
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < inner; ++j) {
      auto at = [&](int64_t i) { return size_t((o * n + i) * inner + j); };
      double mx = -INFINITY, sum = 0;
      for (int64_t i = 0; i < n; ++i)
        mx = std::max(mx, double(x[at(i)]));
      for (int64_t i = 0; i < n; ++i)
        sum += std::exp(double(x[at(i)]) - mx);
      for (int64_t i = 0; i < n; ++i)
        y[at(i)] = log ? double(x[at(i)]) - mx - std::log(sum)
                       : std::exp(double(x[at(i)]) - mx) / sum;
    }
  return y;
}

TEST(Softmax, LastAxis) {
  const Shape s = {3, 7, 33};
  auto x = randomFloats(size_t(numel(s)), 1, -8, 8);
  std::vector<float> y(x.size());
  ASSERT_RT_OK(
      parc_rt_softmax(PARC_RT_F32, x.data(), y.data(), 3, s.data(), -1));
  EXPECT_TRUE(allClose(y, refSoftmax(x, s, 2, false), 1e-5, 1e-7));
}

TEST(Softmax, MiddleAxisInPlace) {
  const Shape s = {2, 5, 6};
  auto x = randomFloats(size_t(numel(s)), 2, -4, 4);
  auto want = refSoftmax(x, s, 1, false);
  ASSERT_RT_OK(
      parc_rt_softmax(PARC_RT_F32, x.data(), x.data(), 3, s.data(), 1));
  EXPECT_TRUE(allClose(x, want, 1e-5, 1e-7));
}

TEST(Softmax, HandWorked) {
  // softmax([0, ln 3]) = [1/4, 3/4]
  float x[2] = {0.0f, float(std::log(3.0))}, y[2];
  const Shape s = {2};
  ASSERT_RT_OK(parc_rt_softmax(PARC_RT_F32, x, y, 1, s.data(), 0));
  EXPECT_NEAR(y[0], 0.25, 1e-7);
  EXPECT_NEAR(y[1], 0.75, 1e-7);
}

TEST(Softmax, LogSoftmaxBothLayouts) {
  const Shape s = {4, 3, 5};
  auto x = randomFloats(size_t(numel(s)), 3, -5, 5);
  for (int64_t axis : {0, 2}) {
    std::vector<float> y(x.size());
    ASSERT_RT_OK(parc_rt_log_softmax(PARC_RT_F32, x.data(), y.data(), 3,
                                     s.data(), axis));
    EXPECT_TRUE(allClose(y, refSoftmax(x, s, axis, true), 1e-5, 1e-6))
        << "axis " << axis;
  }
}

TEST(Softmax, Bf16WithinBf16Precision) {
  const Shape s = {4, 16};
  auto x = randomFloats(size_t(numel(s)), 4, -3, 3);
  std::vector<uint16_t> xb(x.size()), yb(x.size());
  ASSERT_RT_OK(parc_rt_cast(PARC_RT_F32, x.data(), PARC_RT_BF16, xb.data(),
                            int64_t(x.size())));
  std::vector<float> xr(x.size()), y(x.size());
  ASSERT_RT_OK(parc_rt_cast(PARC_RT_BF16, xb.data(), PARC_RT_F32, xr.data(),
                            int64_t(x.size())));
  ASSERT_RT_OK(
      parc_rt_softmax(PARC_RT_BF16, xb.data(), yb.data(), 2, s.data(), 1));
  ASSERT_RT_OK(parc_rt_cast(PARC_RT_BF16, yb.data(), PARC_RT_F32, y.data(),
                            int64_t(x.size())));
  EXPECT_TRUE(allClose(y, refSoftmax(xr, s, 1, false), 1.0 / 128, 1e-6));
}

std::vector<double> refNorm(const std::vector<float> &x, int64_t rows,
                            int64_t n, const std::vector<float> &scale,
                            const std::vector<float> *bias, double eps,
                            bool rms) {
  std::vector<double> y(x.size());
  for (int64_t r = 0; r < rows; ++r) {
    double mean = 0, var = 0;
    for (int64_t i = 0; i < n; ++i)
      mean += x[r * n + i];
    mean /= n;
    for (int64_t i = 0; i < n; ++i) {
      const double d = rms ? x[r * n + i] : x[r * n + i] - mean;
      var += d * d;
    }
    var /= n;
    for (int64_t i = 0; i < n; ++i) {
      const double centered = rms ? x[r * n + i] : x[r * n + i] - mean;
      y[r * n + i] = centered / std::sqrt(var + eps) * scale[i] +
                     (bias ? (*bias)[i] : 0.0);
    }
  }
  return y;
}

TEST(LayerNorm, LastAxisWithAndWithoutBias) {
  const Shape s = {6, 48};
  auto x = randomFloats(size_t(numel(s)), 5, -2, 3);
  auto scale = randomFloats(48, 6, 0.5, 1.5), bias = randomFloats(48, 7);
  std::vector<float> y(x.size());
  ASSERT_RT_OK(parc_rt_layer_norm(PARC_RT_F32, x.data(), scale.data(),
                                  bias.data(), y.data(), 2, s.data(), -1,
                                  1e-5f));
  EXPECT_TRUE(
      allClose(y, refNorm(x, 6, 48, scale, &bias, 1e-5, false), 1e-5, 1e-5));
  ASSERT_RT_OK(parc_rt_layer_norm(PARC_RT_F32, x.data(), scale.data(), nullptr,
                                  y.data(), 2, s.data(), 1, 1e-5f));
  EXPECT_TRUE(
      allClose(y, refNorm(x, 6, 48, scale, nullptr, 1e-5, false), 1e-5, 1e-5));
}

TEST(LayerNorm, TrailingDimsFromAxis) {
  // axis 1 of [3, 4, 5] normalises over 20 elements per row.
  const Shape s = {3, 4, 5};
  auto x = randomFloats(size_t(numel(s)), 8);
  auto scale = randomFloats(20, 9, 0.5, 1.5), bias = randomFloats(20, 10);
  auto want = refNorm(x, 3, 20, scale, &bias, 1e-6, false);
  ASSERT_RT_OK(parc_rt_layer_norm(PARC_RT_F32, x.data(), scale.data(),
                                  bias.data(), x.data(), 3, s.data(), 1,
                                  1e-6f));
  EXPECT_TRUE(allClose(x, want, 1e-5, 1e-5));
}

TEST(LayerNorm, HandWorked) {
  // [1, 3]: mean 2, var 1 -> [-1, 1] (eps 0)
  float x[2] = {1, 3}, scale[2] = {1, 2}, bias[2] = {0, 10}, y[2];
  const Shape s = {2};
  ASSERT_RT_OK(
      parc_rt_layer_norm(PARC_RT_F32, x, scale, bias, y, 1, s.data(), 0, 0.0f));
  EXPECT_FLOAT_EQ(y[0], -1.0f);
  EXPECT_FLOAT_EQ(y[1], 12.0f);
}

TEST(RmsNorm, MatchesReference) {
  const Shape s = {2, 3, 64};
  auto x = randomFloats(size_t(numel(s)), 11, -3, 3);
  auto scale = randomFloats(64, 12, 0.5, 1.5);
  std::vector<float> y(x.size());
  ASSERT_RT_OK(parc_rt_rms_norm(PARC_RT_F32, x.data(), scale.data(), nullptr,
                                y.data(), 3, s.data(), 2, 1e-6f));
  EXPECT_TRUE(
      allClose(y, refNorm(x, 6, 64, scale, nullptr, 1e-6, true), 1e-5, 1e-5));
  // rms([3, 4]) = sqrt(12.5)
  float h[2] = {3, 4}, one[2] = {1, 1}, out[2];
  const Shape t = {2};
  ASSERT_RT_OK(parc_rt_rms_norm(PARC_RT_F32, h, one, nullptr, out, 1, t.data(),
                                0, 0.0f));
  EXPECT_NEAR(out[0], 3 / std::sqrt(12.5), 1e-6);
  EXPECT_NEAR(out[1], 4 / std::sqrt(12.5), 1e-6);
}

TEST(Norm, Errors) {
  float x[4] = {};
  const Shape s = {2, 2};
  EXPECT_RT_ERROR(
      parc_rt_layer_norm(PARC_RT_F32, x, x, nullptr, x, 2, s.data(), 2, 1e-5f),
      PARC_RT_INVALID_ARGUMENT, "axis 2 is out of range for rank 2");
  int32_t i[4] = {};
  EXPECT_RT_ERROR(parc_rt_softmax(PARC_RT_I32, i, i, 2, s.data(), 1),
                  PARC_RT_UNSUPPORTED, "softmax: dtype i32");
}

TEST(RotaryFull, TableShapeErrors) {
  // x and y [2, 4]: a table must end in the whole last dim, 4, and a
  // rank-0 table has no last dim at all.
  float x[8] = {}, y[8], table[4] = {};
  const Shape xs = {2, 4}, narrow = {2}, wide = {3, 4};
  EXPECT_RT_ERROR(parc_rt_rotary_full(PARC_RT_F32, x, 2, xs.data(), table, 0,
                                      nullptr, table, 1, xs.data() + 1, y, 2,
                                      xs.data()),
                  PARC_RT_INVALID_ARGUMENT,
                  "rotary: cos [] must broadcast to [2,4] and span its last "
                  "dim");
  EXPECT_RT_ERROR(parc_rt_rotary_full(PARC_RT_F32, x, 2, xs.data(), table, 1,
                                      xs.data() + 1, table, 1, narrow.data(),
                                      y, 2, xs.data()),
                  PARC_RT_INVALID_ARGUMENT, "rotary: sin [2] must broadcast");
  EXPECT_RT_ERROR(parc_rt_rotary_full(PARC_RT_F32, x, 2, xs.data(), table, 2,
                                      wide.data(), table, 1, xs.data() + 1, y,
                                      2, xs.data()),
                  PARC_RT_INVALID_ARGUMENT,
                  "rotary: cos [3,4] does not broadcast to [2,4]");
}

} // namespace
