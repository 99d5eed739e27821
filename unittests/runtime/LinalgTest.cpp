//===- LinalgTest.cpp - matmul and gemm against naive loops ---------------===//

#include "TestUtil.h"

#include <cstring>
#include <tuple>

using namespace parc::test;

namespace {

/// Naive batched matmul with numpy broadcasting, in double. Rank-1 operands
/// are promoted as numpy does; the caller passes the expected out shape.
std::vector<double> naiveMatmul(const std::vector<float> &a, Shape as,
                                const std::vector<float> &b, Shape bs,
                                const Shape &os) {
  if (as.size() == 1)
    as.insert(as.begin(), 1);
  if (bs.size() == 1)
    bs.push_back(1);
  const int64_t m = as[as.size() - 2], k = as.back(), n = bs.back();
  Shape aBatch(as.begin(), as.end() - 2), bBatch(bs.begin(), bs.end() - 2);
  const size_t rank = std::max(aBatch.size(), bBatch.size());
  Shape batch(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da =
        i + aBatch.size() >= rank ? aBatch[i + aBatch.size() - rank] : 1;
    int64_t db =
        i + bBatch.size() >= rank ? bBatch[i + bBatch.size() - rank] : 1;
    batch[i] = std::max(da, db);
  }
  std::vector<double> out(size_t(numel(os)));
  for (int64_t t = 0; t < numel(batch); ++t) {
    Shape idx = unflatten(t, batch);
    const int64_t ao = broadcastOffset(idx, aBatch) * m * k;
    const int64_t bo = broadcastOffset(idx, bBatch) * k * n;
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j) {
        double s = 0;
        for (int64_t p = 0; p < k; ++p)
          s += double(a[ao + i * k + p]) * b[bo + p * n + j];
        out[size_t(t * m * n + i * n + j)] = s;
      }
  }
  return out;
}

void checkMatmul(const Shape &as, const Shape &bs, const Shape &os,
                 uint32_t seed) {
  auto a = randomFloats(size_t(numel(as)), seed);
  auto b = randomFloats(size_t(numel(bs)), seed + 100);
  std::vector<float> out(size_t(numel(os)), -7.0f);
  ASSERT_RT_OK(parc_rt_matmul(PARC_RT_F32, a.data(), int64_t(as.size()),
                              as.data(), b.data(), int64_t(bs.size()),
                              bs.data(), out.data(), int64_t(os.size()),
                              os.data()));
  EXPECT_TRUE(allClose(out, naiveMatmul(a, as, b, bs, os), 1e-5, 1e-5));
}

TEST(Matmul, Plain2D) { checkMatmul({7, 13}, {13, 5}, {7, 5}, 1); }
TEST(Matmul, SharedWeightFoldsBatchIntoRows) {
  checkMatmul({2, 3, 4}, {4, 5}, {2, 3, 5}, 2);
}
TEST(Matmul, BroadcastBatchDims) {
  checkMatmul({2, 1, 3, 4}, {3, 4, 5}, {2, 3, 3, 5}, 3);
  checkMatmul({1, 3, 4}, {6, 4, 2}, {6, 3, 2}, 4);
}
TEST(Matmul, VectorOperands) {
  checkMatmul({4}, {4, 5}, {5}, 5);
  checkMatmul({3, 4}, {4}, {3}, 6);
  checkMatmul({4}, {4}, {}, 7);
  checkMatmul({2, 3, 4}, {4}, {2, 3}, 8);
}
TEST(Matmul, EmptyContractionGivesZeros) {
  const Shape as = {2, 0}, bs = {0, 3}, os = {2, 3};
  std::vector<float> out(6, 5.0f);
  ASSERT_RT_OK(parc_rt_matmul(PARC_RT_F32, nullptr, 2, as.data(), nullptr, 2,
                              bs.data(), out.data(), 2, os.data()));
  EXPECT_EQ(out, std::vector<float>(6, 0.0f));
}

TEST(Matmul, IntegerIsExact) {
  int32_t a[6] = {1, 2, 3, 4, 5, 6}, b[6] = {7, 8, 9, 10, 11, 12}, out[4];
  const Shape as = {2, 3}, bs = {3, 2}, os = {2, 2};
  ASSERT_RT_OK(parc_rt_matmul(PARC_RT_I32, a, 2, as.data(), b, 2, bs.data(),
                              out, 2, os.data()));
  EXPECT_EQ(std::vector<int32_t>(out, out + 4),
            (std::vector<int32_t>{58, 64, 139, 154}));
}

TEST(Matmul, F16RoundsOnceFromF32Accumulation) {
  // Small integers are exact in f16, and so is the result.
  uint16_t a[4], b[4], out[4];
  float af[4] = {1, 2, 3, 4}, bf[4] = {5, 6, 7, 8};
  ASSERT_RT_OK(parc_rt_cast(PARC_RT_F32, af, PARC_RT_F16, a, 4));
  ASSERT_RT_OK(parc_rt_cast(PARC_RT_F32, bf, PARC_RT_F16, b, 4));
  const Shape s = {2, 2};
  ASSERT_RT_OK(parc_rt_matmul(PARC_RT_F16, a, 2, s.data(), b, 2, s.data(), out,
                              2, s.data()));
  float back[4];
  ASSERT_RT_OK(parc_rt_cast(PARC_RT_F16, out, PARC_RT_F32, back, 4));
  EXPECT_EQ(std::vector<float>(back, back + 4),
            (std::vector<float>{19, 22, 43, 50}));
}

TEST(Matmul, ShapeErrors) {
  float x[12] = {};
  const Shape as = {3, 4}, bs = {5, 2}, os = {3, 2};
  EXPECT_RT_ERROR(parc_rt_matmul(PARC_RT_F32, x, 2, as.data(), x, 2, bs.data(),
                                 x, 2, os.data()),
                  PARC_RT_INVALID_ARGUMENT,
                  "contraction dims differ: a [3,4] and b [5,2]");
  const Shape b2 = {4, 2}, wrong = {3, 3};
  EXPECT_RT_ERROR(parc_rt_matmul(PARC_RT_F32, x, 2, as.data(), x, 2, b2.data(),
                                 x, 2, wrong.data()),
                  PARC_RT_INVALID_ARGUMENT,
                  "output shape [3,3] does not match [3,2]");
}

TEST(Gemm, TransposesAlphaBetaAndBias) {
  const int64_t m = 5, n = 4, k = 3;
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb)
      for (const Shape &cs : {Shape{n}, Shape{m, 1}, Shape{m, n}, Shape{}}) {
        auto a = randomFloats(size_t(m * k), 10 + ta);
        auto b = randomFloats(size_t(k * n), 20 + tb);
        auto c = randomFloats(size_t(numel(cs)), 30);
        const float alpha = 0.5f, beta = 2.0f;
        std::vector<float> y(size_t(m * n), 99.0f);
        ASSERT_RT_OK(parc_rt_gemm(PARC_RT_F32, a.data(), b.data(), c.data(),
                                  int64_t(cs.size()), cs.data(), y.data(), m, n,
                                  k, ta, tb, alpha, beta));
        std::vector<double> want(size_t(m * n));
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j) {
            double s = 0;
            for (int64_t p = 0; p < k; ++p) {
              double av = ta ? a[p * m + i] : a[i * k + p];
              double bv = tb ? b[j * k + p] : b[p * n + j];
              s += av * bv;
            }
            double cv = cs.empty()       ? c[0]
                        : cs.size() == 1 ? c[j]
                        : cs[1] == 1     ? c[i]
                                         : c[i * n + j];
            want[size_t(i * n + j)] = alpha * s + beta * cv;
          }
        EXPECT_TRUE(allClose(y, want, 1e-5, 1e-5))
            << "transA " << ta << " transB " << tb << " c rank " << cs.size();
      }
}

TEST(Gemm, NoBiasIgnoresOldOutput) {
  float a[2] = {1, 2}, b[2] = {3, 4}, y[4] = {100, 100, 100, 100};
  ASSERT_RT_OK(parc_rt_gemm(PARC_RT_F32, a, b, nullptr, 0, nullptr, y, 2, 2, 1,
                            0, 0, 1.0f, 1.0f));
  EXPECT_EQ(std::vector<float>(y, y + 4), (std::vector<float>{3, 4, 6, 8}));
}

TEST(Gemm, OddSizesHitEveryKernelEdge) {
  // Sizes that are not multiples of any register or cache block.
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{37, 45, 70},
                         {128, 200, 96},
                         {1, 3, 5}})
    for (int tw = 0; tw < 2; ++tw)
      for (const Shape &bs : {Shape{}, Shape{n}, Shape{m, 1}}) {
        auto x = randomFloats(size_t(m * k), 40);
        auto w = randomFloats(size_t(k * n), 41 + tw);
        auto bias = bs.empty() ? std::vector<float>{}
                               : randomFloats(size_t(numel(bs)), 42);
        std::vector<float> y(size_t(m * n), 99.0f);
        ASSERT_RT_OK(parc_rt_gemm(PARC_RT_F32, x.data(), w.data(),
                                  bs.empty() ? nullptr : bias.data(),
                                  int64_t(bs.size()), bs.data(), y.data(), m, n,
                                  k, 0, tw, 1.0f, 1.0f));
        EXPECT_TRUE(allClose(y, naiveLinear(x, w, tw, bias, bs, m, n, k), 1e-5,
                             1e-5))
            << m << "x" << k << "x" << n << " transB " << tw << " bias rank "
            << bs.size();
      }
}

TEST(Gemm, RowChunksEqualTheWholeBitwise) {
  // dist-overlap cuts a linear's rows into equal chunks and promises the
  // same bits as the uncut product: a row's sum must not depend on the rows
  // beside it.
  const int64_t m = 64, n = 96, k = 200;
  auto x = randomFloats(size_t(m * k), 50);
  auto w = randomFloats(size_t(k * n), 51);
  auto bias = randomFloats(size_t(n), 52);
  const int64_t bs[1] = {n};
  std::vector<float> whole(size_t(m * n));
  ASSERT_RT_OK(parc_rt_gemm(PARC_RT_F32, x.data(), w.data(), bias.data(), 1, bs,
                            whole.data(), m, n, k, 0, 0, 1.0f, 1.0f));
  for (int64_t chunks : {2, 4}) {
    std::vector<float> cut(size_t(m * n));
    const int64_t rows = m / chunks;
    for (int64_t c = 0; c < chunks; ++c)
      ASSERT_RT_OK(parc_rt_gemm(PARC_RT_F32, x.data() + c * rows * k, w.data(),
                                bias.data(), 1, bs, cut.data() + c * rows * n,
                                rows, n, k, 0, 0, 1.0f, 1.0f));
    EXPECT_EQ(0, std::memcmp(whole.data(), cut.data(), whole.size() * 4))
        << chunks << " chunks";
  }
}

} // namespace
