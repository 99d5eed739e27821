//===- ConvTest.cpp - conv and max_pool against direct loops --------------===//

#include "TestUtil.h"

using namespace parc::test;

namespace {

struct ConvCase {
  Shape x, w; // NC..., [C_out, C_in/g, k...]
  int64_t group;
  Shape strides, pads, dilations;
  bool bias;
};

Shape outShape(const Shape &x, int64_t channels, const Shape &kernel,
               const Shape &strides, const Shape &pads, const Shape &dil) {
  const size_t S = x.size() - 2;
  Shape y = {x[0], channels};
  for (size_t s = 0; s < S; ++s)
    y.push_back(
        (x[2 + s] + pads[s] + pads[S + s] - dil[s] * (kernel[s] - 1) - 1) /
            strides[s] +
        1);
  return y;
}

/// Direct convolution: every output element is a sum over its window.
std::vector<double> refConv(const ConvCase &c, const std::vector<float> &x,
                            const std::vector<float> &w,
                            const std::vector<float> &b, const Shape &ys) {
  const size_t S = c.x.size() - 2;
  const int64_t cin = c.x[1], cout = c.w[0], cg = cin / c.group,
                og = cout / c.group;
  const Shape kernel(c.w.begin() + 2, c.w.end());
  const Shape inSpatial(c.x.begin() + 2, c.x.end());
  std::vector<double> y(size_t(numel(ys)));
  for (int64_t i = 0; i < numel(ys); ++i) {
    Shape yi = unflatten(i, ys);
    const int64_t n = yi[0], co = yi[1], g = co / og;
    double sum = c.bias ? b[co] : 0.0;
    for (int64_t ci = 0; ci < cg; ++ci)
      for (int64_t k = 0; k < numel(kernel); ++k) {
        Shape ki = unflatten(k, kernel);
        int64_t xo = n * cin + g * cg + ci;
        bool inside = true;
        for (size_t s = 0; s < S; ++s) {
          int64_t at =
              yi[2 + s] * c.strides[s] - c.pads[s] + ki[s] * c.dilations[s];
          inside &= at >= 0 && at < inSpatial[s];
          xo = xo * inSpatial[s] + at;
        }
        if (inside)
          sum += double(x[size_t(xo)]) *
                 w[size_t((co * cg + ci) * numel(kernel) + k)];
      }
    y[size_t(i)] = sum;
  }
  return y;
}

void runConv(const ConvCase &c, uint32_t seed) {
  const Shape kernel(c.w.begin() + 2, c.w.end());
  const Shape ys =
      outShape(c.x, c.w[0], kernel, c.strides, c.pads, c.dilations);
  auto x = randomFloats(size_t(numel(c.x)), seed);
  auto w = randomFloats(size_t(numel(c.w)), seed + 1);
  auto b = randomFloats(size_t(c.w[0]), seed + 2);
  std::vector<float> y(size_t(numel(ys)), -9.0f);
  ASSERT_RT_OK(parc_rt_conv(
      PARC_RT_F32, x.data(), int64_t(c.x.size()), c.x.data(), w.data(),
      c.w.data(), c.bias ? b.data() : nullptr, c.group, c.strides.data(),
      c.pads.data(), c.dilations.data(), y.data(), ys.data()));
  EXPECT_TRUE(allClose(y, refConv(c, x, w, b, ys), 1e-5, 1e-5));
}

TEST(Conv, TwoDPaddedStridedDilated) {
  runConv({{2, 3, 9, 8}, {4, 3, 3, 2}, 1, {2, 1}, {1, 0, 2, 1}, {1, 2}, true},
          1);
}
TEST(Conv, TwoDGroupsAndDepthwise) {
  runConv({{1, 4, 6, 6}, {6, 2, 3, 3}, 2, {1, 1}, {1, 1, 1, 1}, {1, 1}, true},
          2);
  runConv({{2, 3, 5, 7}, {3, 1, 3, 3}, 3, {1, 2}, {1, 1, 1, 1}, {1, 1}, false},
          3);
}
TEST(Conv, PointwiseTakesTheDirectPath) {
  runConv({{2, 5, 4, 3}, {7, 5, 1, 1}, 1, {1, 1}, {0, 0, 0, 0}, {1, 1}, true},
          4);
}
TEST(Conv, OneDAndThreeD) {
  runConv({{2, 3, 17}, {5, 3, 4}, 1, {3}, {2, 1}, {2}, true}, 5);
  runConv({{1, 2, 4, 5, 3},
           {3, 2, 2, 3, 2},
           1,
           {1, 2, 1},
           {1, 0, 1, 0, 1, 0},
           {1, 1, 2},
           true},
          6);
}

TEST(Conv, HandWorked1D) {
  // x = [1,2,3,4], w = [1,1], pad 1 each side -> [1,3,5,7,4]
  float x[4] = {1, 2, 3, 4}, w[2] = {1, 1}, y[5];
  const Shape xs = {1, 1, 4}, ws = {1, 1, 2}, ys = {1, 1, 5};
  const int64_t strides[1] = {1}, pads[2] = {1, 1}, dil[1] = {1};
  ASSERT_RT_OK(parc_rt_conv(PARC_RT_F32, x, 3, xs.data(), w, ws.data(), nullptr,
                            1, strides, pads, dil, y, ys.data()));
  EXPECT_EQ(std::vector<float>(y, y + 5), (std::vector<float>{1, 3, 5, 7, 4}));
  const Shape wrong = {1, 1, 4};
  EXPECT_RT_ERROR(parc_rt_conv(PARC_RT_F32, x, 3, xs.data(), w, ws.data(),
                               nullptr, 1, strides, pads, dil, y, wrong.data()),
                  PARC_RT_INVALID_ARGUMENT, "output size 4, expected 5");
}

/// Direct max pooling; windows clipped to the input.
std::vector<double> refMaxPool(const std::vector<float> &x, const Shape &xs,
                               const Shape &k, const Shape &st,
                               const Shape &pads, const Shape &dil,
                               const Shape &ys) {
  const size_t S = xs.size() - 2;
  std::vector<double> y(size_t(numel(ys)));
  for (int64_t i = 0; i < numel(ys); ++i) {
    Shape yi = unflatten(i, ys);
    double best = -INFINITY;
    for (int64_t kk = 0; kk < numel(k); ++kk) {
      Shape ki = unflatten(kk, k);
      int64_t xo = yi[0] * xs[1] + yi[1];
      bool inside = true;
      for (size_t s = 0; s < S; ++s) {
        int64_t at = yi[2 + s] * st[s] - pads[s] + ki[s] * dil[s];
        inside &= at >= 0 && at < xs[2 + s];
        xo = xo * xs[2 + s] + at;
      }
      if (inside)
        best = std::max(best, double(x[size_t(xo)]));
    }
    y[size_t(i)] = best;
  }
  return y;
}

TEST(MaxPool, TwoDFloorAndCeilModes) {
  const Shape xs = {2, 3, 7, 6}, k = {3, 2}, st = {2, 2}, pads = {1, 0, 1, 0},
              dil = {1, 2};
  auto x = randomFloats(size_t(numel(xs)), 7);
  // floor: (7+2-3)/2+1 = 4, (6-2-1)/2+1 = 2; ceil: 4, 3 (last window starts
  // at 4 < 6, so it is kept)
  for (const Shape &ys : {Shape{2, 3, 4, 2}, Shape{2, 3, 4, 3}}) {
    std::vector<float> y(size_t(numel(ys)));
    ASSERT_RT_OK(parc_rt_max_pool(PARC_RT_F32, x.data(), 4, xs.data(), k.data(),
                                  st.data(), pads.data(), dil.data(), y.data(),
                                  ys.data()));
    EXPECT_TRUE(allClose(y, refMaxPool(x, xs, k, st, pads, dil, ys), 0, 0));
  }
  const Shape bad = {2, 3, 4, 4};
  std::vector<float> y(size_t(numel(bad)));
  EXPECT_RT_ERROR(parc_rt_max_pool(PARC_RT_F32, x.data(), 4, xs.data(),
                                   k.data(), st.data(), pads.data(), dil.data(),
                                   y.data(), bad.data()),
                  PARC_RT_INVALID_ARGUMENT, "spatial dim 1: output size 4");
}

TEST(MaxPool, HandWorked1DPaddingNeverWins) {
  float x[4] = {-5, -1, -3, -2}, y[3];
  const Shape xs = {1, 1, 4}, ys = {1, 1, 3};
  const int64_t k[1] = {2}, st[1] = {2}, pads[2] = {1, 1}, dil[1] = {1};
  ASSERT_RT_OK(parc_rt_max_pool(PARC_RT_F32, x, 3, xs.data(), k, st, pads, dil,
                                y, ys.data()));
  EXPECT_EQ(std::vector<float>(y, y + 3), (std::vector<float>{-5, -1, -2}));
}

} // namespace
