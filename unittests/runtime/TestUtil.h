//===- TestUtil.h - Helpers shared by the runtime unit tests ----*- C++ -*-===//
//
// Reference computations live in the tests themselves (naive loops in
// double precision); these helpers only index, fill and compare.
//
//===----------------------------------------------------------------------===//
#ifndef PARC_UNITTESTS_RUNTIME_TESTUTIL_H
#define PARC_UNITTESTS_RUNTIME_TESTUTIL_H

#include "parc/runtime.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#define ASSERT_RT_OK(expr)                                                     \
  do {                                                                         \
    parc_rt_status_t parc_test_status_ = (expr);                               \
    ASSERT_EQ(parc_test_status_, PARC_RT_OK)                                   \
        << parc_rt_status_string(parc_test_status_) << ": "                    \
        << parc_rt_last_error();                                               \
  } while (0)

#define EXPECT_RT_ERROR(expr, status, substring)                               \
  do {                                                                         \
    parc_rt_status_t parc_test_status_ = (expr);                               \
    EXPECT_EQ(parc_test_status_, status)                                       \
        << parc_rt_status_string(parc_test_status_);                           \
    EXPECT_NE(std::string(parc_rt_last_error()).find(substring),               \
              std::string::npos)                                               \
        << "message: " << parc_rt_last_error();                                \
  } while (0)

namespace parc::test {

using Shape = std::vector<int64_t>;

inline int64_t numel(const Shape &s) {
  int64_t n = 1;
  for (int64_t d : s)
    n *= d;
  return n;
}

/// Multi-index of flat position `flat` in row-major `shape`.
inline Shape unflatten(int64_t flat, const Shape &shape) {
  Shape index(shape.size());
  for (int64_t i = int64_t(shape.size()) - 1; i >= 0; --i) {
    index[i] = flat % shape[i];
    flat /= shape[i];
  }
  return index;
}

/// Flat offset in `in` of the element broadcast to out-index `index`.
inline int64_t broadcastOffset(const Shape &index, const Shape &in) {
  const size_t lead = index.size() - in.size();
  int64_t offset = 0;
  for (size_t i = 0; i < in.size(); ++i)
    offset = offset * in[i] + (in[i] == 1 ? 0 : index[lead + i]);
  return offset;
}

inline std::vector<float> randomFloats(size_t n, uint32_t seed,
                                       float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float &x : v)
    x = dist(gen);
  return v;
}

/// alpha · x [m,k] op(w) + bias in double; w is [k,n], or [n,k] if transW;
/// bias broadcasts from shape bs (empty: none).
inline std::vector<double> naiveLinear(const std::vector<float> &x,
                                       const std::vector<float> &w,
                                       bool transW,
                                       const std::vector<float> &bias,
                                       const Shape &bs, int64_t m, int64_t n,
                                       int64_t k, double alpha = 1.0) {
  std::vector<double> y(size_t(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double s = 0;
      for (int64_t p = 0; p < k; ++p)
        s += double(x[i * k + p]) * (transW ? w[j * k + p] : w[p * n + j]);
      s *= alpha;
      if (bs.size() == 1)
        s += bias[j];
      else if (bs.size() == 2)
        s += bias[(bs[0] == 1 ? 0 : i) * bs[1] + (bs[1] == 1 ? 0 : j)];
      y[size_t(i * n + j)] = s;
    }
  return y;
}

/// |got - want| <= atol + rtol * |want| element-wise, reporting the first
/// few mismatches.
template <typename A, typename B>
::testing::AssertionResult allClose(const std::vector<A> &got,
                                    const std::vector<B> &want,
                                    double rtol = 1e-5, double atol = 1e-6) {
  if (got.size() != want.size())
    return ::testing::AssertionFailure()
           << "size " << got.size() << " vs " << want.size();
  int bad = 0;
  std::string report;
  for (size_t i = 0; i < got.size(); ++i) {
    const double g = double(got[i]), w = double(want[i]);
    const bool ok = (std::isnan(g) && std::isnan(w)) || g == w ||
                    std::fabs(g - w) <= atol + rtol * std::fabs(w);
    if (!ok && bad++ < 5)
      report += " [" + std::to_string(i) + "] got " + std::to_string(g) +
                " want " + std::to_string(w) + ";";
  }
  if (bad)
    return ::testing::AssertionFailure() << bad << " mismatches:" << report;
  return ::testing::AssertionSuccess();
}

} // namespace parc::test

#endif // PARC_UNITTESTS_RUNTIME_TESTUTIL_H
