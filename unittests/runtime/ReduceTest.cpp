//===- ReduceTest.cpp - reductions over axes and TopK ---------------------===//

#include "TestUtil.h"

#include <set>

using namespace parc::test;

namespace {

/// Reference reduction: for every input element, fold it into the output
/// element whose index zeroes the reduced axes.
std::vector<double> refReduce(parc_rt_reduction_t r,
                              const std::vector<float> &x, const Shape &s,
                              const std::set<int64_t> &axes) {
  Shape os = s;
  int64_t count = 1;
  for (int64_t a : axes) {
    os[a] = 1;
    count *= s[a];
  }
  const double init = r == PARC_RT_REDUCTION_MAX    ? -INFINITY
                      : r == PARC_RT_REDUCTION_MIN  ? INFINITY
                      : r == PARC_RT_REDUCTION_PROD ? 1.0
                                                    : 0.0;
  std::vector<double> y(size_t(numel(os)), init);
  for (int64_t i = 0; i < numel(s); ++i) {
    Shape idx = unflatten(i, s);
    int64_t o = 0;
    for (size_t d = 0; d < s.size(); ++d)
      o = o * os[d] + (axes.count(int64_t(d)) ? 0 : idx[d]);
    double &acc = y[size_t(o)];
    const double v = x[size_t(i)];
    switch (r) {
    case PARC_RT_REDUCTION_MAX:
      acc = std::max(acc, v);
      break;
    case PARC_RT_REDUCTION_MIN:
      acc = std::min(acc, v);
      break;
    case PARC_RT_REDUCTION_PROD:
      acc *= v;
      break;
    default:
      acc += v;
    }
  }
  if (r == PARC_RT_REDUCTION_MEAN)
    for (double &v : y)
      v /= double(count);
  return y;
}

TEST(Reduce, AllKindsOverSeveralAxisSets) {
  const Shape s = {3, 4, 5};
  auto x = randomFloats(size_t(numel(s)), 1, 0.5f, 1.5f);
  const std::vector<std::vector<int64_t>> axisSets = {
      {2}, {1}, {0}, {0, 2}, {-1, 0}, {0, 1, 2}, {}};
  for (auto r :
       {PARC_RT_REDUCTION_SUM, PARC_RT_REDUCTION_MEAN, PARC_RT_REDUCTION_MAX,
        PARC_RT_REDUCTION_MIN, PARC_RT_REDUCTION_PROD})
    for (const auto &axes : axisSets) {
      std::set<int64_t> normalized;
      for (int64_t a : axes)
        normalized.insert(a < 0 ? a + 3 : a);
      auto want = refReduce(r, x, s, normalized);
      std::vector<float> y(want.size(), -1.0f);
      ASSERT_RT_OK(parc_rt_reduce(r, PARC_RT_F32, x.data(), 3, s.data(),
                                  int64_t(axes.size()), axes.data(), y.data()));
      EXPECT_TRUE(allClose(y, want, 1e-5, 1e-6))
          << "reduction " << r << " axes " << axes.size();
    }
}

TEST(Reduce, HandWorkedIntegers) {
  int64_t x[6] = {1, 2, 3, 4, 5, 6}, y[3];
  const Shape s = {2, 3};
  const int64_t axis0 = 0, axis1 = 1;
  ASSERT_RT_OK(parc_rt_reduce(PARC_RT_REDUCTION_SUM, PARC_RT_I64, x, 2,
                              s.data(), 1, &axis0, y));
  EXPECT_EQ(std::vector<int64_t>(y, y + 3), (std::vector<int64_t>{5, 7, 9}));
  ASSERT_RT_OK(parc_rt_reduce(PARC_RT_REDUCTION_PROD, PARC_RT_I64, x, 2,
                              s.data(), 1, &axis1, y));
  EXPECT_EQ(std::vector<int64_t>(y, y + 2), (std::vector<int64_t>{6, 120}));
  EXPECT_RT_ERROR(parc_rt_reduce(PARC_RT_REDUCTION_SUM, PARC_RT_I64, x, 2,
                                 s.data(), 1, &s[0], y),
                  PARC_RT_INVALID_ARGUMENT, "axis 2 is out of range");
  const int64_t twice[2] = {1, -1};
  EXPECT_RT_ERROR(parc_rt_reduce(PARC_RT_REDUCTION_SUM, PARC_RT_I64, x, 2,
                                 s.data(), 2, twice, y),
                  PARC_RT_INVALID_ARGUMENT, "listed twice");
}

TEST(TopK, LargestWithTiesKeepsLowerIndexFirst) {
  // ONNX: ties resolve to the lower index.
  float x[6] = {3, 1, 3, 2, 3, 0}, v[3];
  int64_t idx[3];
  const Shape s = {6};
  ASSERT_RT_OK(parc_rt_topk(PARC_RT_F32, x, 1, s.data(), 0, 3, 1, v, idx));
  EXPECT_EQ(std::vector<float>(v, v + 3), (std::vector<float>{3, 3, 3}));
  EXPECT_EQ(std::vector<int64_t>(idx, idx + 3),
            (std::vector<int64_t>{0, 2, 4}));
  ASSERT_RT_OK(parc_rt_topk(PARC_RT_F32, x, 1, s.data(), 0, 2, 0, v, idx));
  EXPECT_EQ(std::vector<float>(v, v + 2), (std::vector<float>{0, 1}));
  EXPECT_EQ(std::vector<int64_t>(idx, idx + 2), (std::vector<int64_t>{5, 1}));
}

TEST(TopK, AlongLeadingAxis) {
  // ONNX TopK example layout: [3,4], axis 0, k 2.
  float x[12] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, v[8];
  int64_t idx[8];
  const Shape s = {3, 4};
  ASSERT_RT_OK(parc_rt_topk(PARC_RT_F32, x, 2, s.data(), 0, 2, 1, v, idx));
  EXPECT_EQ(std::vector<float>(v, v + 8),
            (std::vector<float>{8, 9, 10, 11, 4, 5, 6, 7}));
  EXPECT_EQ(std::vector<int64_t>(idx, idx + 8),
            (std::vector<int64_t>{2, 2, 2, 2, 1, 1, 1, 1}));
  EXPECT_RT_ERROR(parc_rt_topk(PARC_RT_F32, x, 2, s.data(), 0, 4, 1, v, idx),
                  PARC_RT_INVALID_ARGUMENT, "k = 4 is out of range");
}

TEST(TopK, IntegersAndNaN) {
  int32_t x[4] = {5, -1, 7, 5}, v[2];
  int64_t idx[2];
  const Shape s = {4};
  ASSERT_RT_OK(parc_rt_topk(PARC_RT_I32, x, 1, s.data(), -1, 2, 1, v, idx));
  EXPECT_EQ(v[0], 7);
  EXPECT_EQ(v[1], 5);
  EXPECT_EQ(idx[0], 2);
  EXPECT_EQ(idx[1], 0);
  float f[3] = {1, std::nanf(""), 2}, fv[1];
  const Shape t = {3};
  ASSERT_RT_OK(parc_rt_topk(PARC_RT_F32, f, 1, t.data(), 0, 1, 1, fv, idx));
  EXPECT_EQ(idx[0], 1); // NaN is the largest
}

} // namespace
