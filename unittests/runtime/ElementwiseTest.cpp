//===- ElementwiseTest.cpp - unary, binary (broadcasting), where, cast ----===//

#include "TestUtil.h"

#include <cstring>
#include <limits>

using namespace parc::test;

namespace {

std::vector<float> binaryF32(parc_rt_binary_op_t op,
                             const std::vector<float> &a, const Shape &as,
                             const std::vector<float> &b, const Shape &bs,
                             const Shape &os) {
  std::vector<float> out(size_t(numel(os)), -999.0f);
  EXPECT_EQ(parc_rt_binary(op, PARC_RT_F32, a.data(), int64_t(as.size()),
                           as.data(), b.data(), int64_t(bs.size()), bs.data(),
                           out.data(), int64_t(os.size()), os.data()),
            PARC_RT_OK)
      << parc_rt_last_error();
  return out;
}

TEST(Binary, AddRowBroadcast) {
  // [2,3] + [3]: the row is added to every row.
  std::vector<float> a = {1, 2, 3, 4, 5, 6}, b = {10, 20, 30};
  EXPECT_EQ(binaryF32(PARC_RT_BINARY_ADD, a, {2, 3}, b, {3}, {2, 3}),
            (std::vector<float>{11, 22, 33, 14, 25, 36}));
}

TEST(Binary, MulOuterProduct) {
  // [2,1] * [1,3]: both operands broadcast.
  std::vector<float> a = {2, 3}, b = {1, 10, 100};
  EXPECT_EQ(binaryF32(PARC_RT_BINARY_MUL, a, {2, 1}, b, {1, 3}, {2, 3}),
            (std::vector<float>{2, 20, 200, 3, 30, 300}));
}

TEST(Binary, SubScalarAndDivColumn) {
  std::vector<float> a = {5, 6, 7, 8}, s = {1};
  EXPECT_EQ(binaryF32(PARC_RT_BINARY_SUB, a, {2, 2}, s, {}, {2, 2}),
            (std::vector<float>{4, 5, 6, 7}));
  EXPECT_EQ(binaryF32(PARC_RT_BINARY_SUB, s, {}, a, {2, 2}, {2, 2}),
            (std::vector<float>{-4, -5, -6, -7}));
  std::vector<float> col = {2, 4};
  EXPECT_EQ(binaryF32(PARC_RT_BINARY_DIV, a, {2, 2}, col, {2, 1}, {2, 2}),
            (std::vector<float>{2.5f, 3, 1.75f, 2}));
}

TEST(Binary, PowMinMaxPropagateNaN) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  std::vector<float> a = {2, 9, nan, -1}, b = {3, 0.5f, 1, 4};
  EXPECT_TRUE(allClose(binaryF32(PARC_RT_BINARY_POW, a, {4}, b, {4}, {4}),
                       std::vector<double>{8, 3, nan, 1}));
  EXPECT_TRUE(allClose(binaryF32(PARC_RT_BINARY_MIN, a, {4}, b, {4}, {4}),
                       std::vector<double>{2, 0.5, nan, -1}));
  EXPECT_TRUE(allClose(binaryF32(PARC_RT_BINARY_MAX, a, {4}, b, {4}, {4}),
                       std::vector<double>{3, 9, nan, 4}));
}

TEST(Binary, RandomBroadcastMatchesIndexReference) {
  // [4,1,5,3] op [3,1,1] -> [4,3,5,3], checked through explicit index math.
  const Shape as = {4, 1, 5, 3}, bs = {3, 1, 1}, os = {4, 3, 5, 3};
  auto a = randomFloats(size_t(numel(as)), 1);
  auto b = randomFloats(size_t(numel(bs)), 2, 0.5f, 2.0f);
  for (auto op : {PARC_RT_BINARY_ADD, PARC_RT_BINARY_SUB, PARC_RT_BINARY_MUL,
                  PARC_RT_BINARY_DIV}) {
    std::vector<double> want(size_t(numel(os)));
    for (int64_t i = 0; i < numel(os); ++i) {
      Shape idx = unflatten(i, os);
      double x = a[broadcastOffset(idx, as)], y = b[broadcastOffset(idx, bs)];
      want[i] = op == PARC_RT_BINARY_ADD   ? x + y
                : op == PARC_RT_BINARY_SUB ? x - y
                : op == PARC_RT_BINARY_MUL ? x * y
                                           : x / y;
    }
    EXPECT_TRUE(allClose(binaryF32(op, a, as, b, bs, os), want)) << op;
  }
}

TEST(Binary, ManyThreadsMatchOneThread) {
  const Shape as = {64, 1, 257}, bs = {33, 1}, os = {64, 33, 257};
  auto a = randomFloats(size_t(numel(as)), 3);
  auto b = randomFloats(size_t(numel(bs)), 4);
  std::vector<double> want(size_t(numel(os)));
  for (int64_t i = 0; i < numel(os); ++i) {
    Shape idx = unflatten(i, os);
    want[i] = double(a[broadcastOffset(idx, as)]) * b[broadcastOffset(idx, bs)];
  }
  const int before = parc_rt_num_threads();
  ASSERT_RT_OK(parc_rt_set_num_threads(4));
  auto got = binaryF32(PARC_RT_BINARY_MUL, a, as, b, bs, os);
  // One long row (same shapes coalesce to a single dim): split in pieces.
  const Shape flat = {3, 70001};
  auto c = randomFloats(size_t(numel(flat)), 5);
  auto sum = binaryF32(PARC_RT_BINARY_ADD, c, flat, c, flat, flat);
  std::vector<float> e(c.size());
  ASSERT_RT_OK(parc_rt_unary(PARC_RT_UNARY_EXP, PARC_RT_F32, c.data(), e.data(),
                             int64_t(c.size())));
  ASSERT_RT_OK(parc_rt_set_num_threads(before));
  EXPECT_EQ(parc_rt_num_threads(), before);
  EXPECT_TRUE(allClose(got, want));
  std::vector<double> twice(c.size()), exps(c.size());
  for (size_t i = 0; i < c.size(); ++i) {
    twice[i] = 2.0 * c[i];
    exps[i] = std::exp(double(c[i]));
  }
  EXPECT_TRUE(allClose(sum, twice, 0, 0));
  EXPECT_TRUE(allClose(e, exps, 2e-7, 0));
}

TEST(Binary, ComparisonsWriteBool) {
  std::vector<float> a = {1, 2, 3}, b = {2};
  const Shape s = {3}, one = {1};
  uint8_t out[3];
  struct Case {
    parc_rt_binary_op_t op;
    uint8_t want[3];
  } cases[] = {{PARC_RT_BINARY_EQUAL, {0, 1, 0}},
               {PARC_RT_BINARY_LESS, {1, 0, 0}},
               {PARC_RT_BINARY_LESS_EQUAL, {1, 1, 0}},
               {PARC_RT_BINARY_GREATER, {0, 0, 1}},
               {PARC_RT_BINARY_GREATER_EQUAL, {0, 1, 1}}};
  for (const Case &c : cases) {
    ASSERT_RT_OK(parc_rt_binary(c.op, PARC_RT_F32, a.data(), 1, s.data(),
                                b.data(), 1, one.data(), out, 1, s.data()));
    EXPECT_EQ(std::vector<uint8_t>(out, out + 3),
              std::vector<uint8_t>(c.want, c.want + 3))
        << c.op;
  }
}

TEST(Binary, LogicalOnBool) {
  uint8_t a[4] = {0, 0, 1, 1}, b[4] = {0, 1, 0, 1}, out[4];
  const Shape s = {4};
  ASSERT_RT_OK(parc_rt_binary(PARC_RT_BINARY_AND, PARC_RT_BOOL, a, 1, s.data(),
                              b, 1, s.data(), out, 1, s.data()));
  EXPECT_EQ(std::vector<uint8_t>(out, out + 4),
            (std::vector<uint8_t>{0, 0, 0, 1}));
  ASSERT_RT_OK(parc_rt_binary(PARC_RT_BINARY_OR, PARC_RT_BOOL, a, 1, s.data(),
                              b, 1, s.data(), out, 1, s.data()));
  EXPECT_EQ(std::vector<uint8_t>(out, out + 4),
            (std::vector<uint8_t>{0, 1, 1, 1}));
  ASSERT_RT_OK(parc_rt_binary(PARC_RT_BINARY_XOR, PARC_RT_BOOL, a, 1, s.data(),
                              b, 1, s.data(), out, 1, s.data()));
  EXPECT_EQ(std::vector<uint8_t>(out, out + 4),
            (std::vector<uint8_t>{0, 1, 1, 0}));
  float f[4] = {};
  EXPECT_RT_ERROR(parc_rt_binary(PARC_RT_BINARY_AND, PARC_RT_F32, f, 1,
                                 s.data(), f, 1, s.data(), f, 1, s.data()),
                  PARC_RT_UNSUPPORTED, "and");
}

TEST(Binary, IntegerDivisionTruncatesAndRejectsZero) {
  int32_t a[4] = {7, -7, 7, INT32_MIN}, b[4] = {2, 2, -2, -1}, out[4];
  const Shape s = {4};
  ASSERT_RT_OK(parc_rt_binary(PARC_RT_BINARY_DIV, PARC_RT_I32, a, 1, s.data(),
                              b, 1, s.data(), out, 1, s.data()));
  EXPECT_EQ(std::vector<int32_t>(out, out + 4),
            (std::vector<int32_t>{3, -3, -3, INT32_MIN}));
  int64_t x[2] = {1, 2}, zero[2] = {1, 0}, y[2];
  const Shape t = {2};
  EXPECT_RT_ERROR(parc_rt_binary(PARC_RT_BINARY_DIV, PARC_RT_I64, x, 1,
                                 t.data(), zero, 1, t.data(), y, 1, t.data()),
                  PARC_RT_INVALID_ARGUMENT, "division by zero");
}

TEST(Binary, HalfTypesComputeInF32) {
  // 1.5 + 2.25 = 3.75 is exact in f16 (0x4380) and bf16 (0x4070).
  uint16_t a16 = 0x3E00, b16 = 0x4080, o16 = 0;
  ASSERT_RT_OK(parc_rt_binary(PARC_RT_BINARY_ADD, PARC_RT_F16, &a16, 0, nullptr,
                              &b16, 0, nullptr, &o16, 0, nullptr));
  EXPECT_EQ(o16, 0x4380);
  uint16_t abf = 0x3FC0, bbf = 0x4010, obf = 0;
  ASSERT_RT_OK(parc_rt_binary(PARC_RT_BINARY_ADD, PARC_RT_BF16, &abf, 0,
                              nullptr, &bbf, 0, nullptr, &obf, 0, nullptr));
  EXPECT_EQ(obf, 0x4070);
}

TEST(Binary, ShapeErrorsNameTheShapes) {
  float a[6] = {}, b[4] = {}, out[8] = {};
  const Shape as = {2, 3}, bs = {4}, os = {2, 3}, big = {2, 4};
  EXPECT_RT_ERROR(parc_rt_binary(PARC_RT_BINARY_ADD, PARC_RT_F32, a, 2,
                                 as.data(), b, 1, bs.data(), out, 2, os.data()),
                  PARC_RT_INVALID_ARGUMENT,
                  "[2,3] and [4] are not broadcastable");
  const Shape cs = {3};
  EXPECT_RT_ERROR(
      parc_rt_binary(PARC_RT_BINARY_ADD, PARC_RT_F32, a, 2, as.data(), b, 1,
                     cs.data(), out, 2, big.data()),
      PARC_RT_INVALID_ARGUMENT,
      "output shape [2,4] does not match the broadcast shape [2,3]");
}

TEST(Unary, FloatOpsMatchDoubleFormulas) {
  const std::vector<float> x = {-3.5f, -1.0f, -0.25f, 0.0f, 0.5f, 1.0f, 2.75f};
  struct Case {
    parc_rt_unary_op_t op;
    double (*f)(double);
  } cases[] = {
      {PARC_RT_UNARY_NEG, [](double v) { return -v; }},
      {PARC_RT_UNARY_ABS, [](double v) { return std::fabs(v); }},
      {PARC_RT_UNARY_EXP, [](double v) { return std::exp(v); }},
      {PARC_RT_UNARY_TANH, [](double v) { return std::tanh(v); }},
      {PARC_RT_UNARY_ERF, [](double v) { return std::erf(v); }},
      {PARC_RT_UNARY_SIGMOID, [](double v) { return 1 / (1 + std::exp(-v)); }},
      {PARC_RT_UNARY_RELU, [](double v) { return v > 0 ? v : 0; }},
      {PARC_RT_UNARY_SILU, [](double v) { return v / (1 + std::exp(-v)); }},
      {PARC_RT_UNARY_GELU,
       [](double v) { return 0.5 * v * (1 + std::erf(v / std::sqrt(2.0))); }},
      {PARC_RT_UNARY_GELU_TANH,
       [](double v) {
         const double c = std::sqrt(2.0 / M_PI);
         return 0.5 * v * (1 + std::tanh(c * (v + 0.044715 * v * v * v)));
       }},
      {PARC_RT_UNARY_FLOOR, [](double v) { return std::floor(v); }},
      {PARC_RT_UNARY_CEIL, [](double v) { return std::ceil(v); }},
      {PARC_RT_UNARY_SIN, [](double v) { return std::sin(v); }},
      {PARC_RT_UNARY_COS, [](double v) { return std::cos(v); }},
  };
  for (const Case &c : cases) {
    std::vector<float> y(x.size());
    ASSERT_RT_OK(parc_rt_unary(c.op, PARC_RT_F32, x.data(), y.data(),
                               int64_t(x.size())));
    std::vector<double> want;
    for (float v : x)
      want.push_back(c.f(v));
    EXPECT_TRUE(allClose(y, want, 2e-6, 1e-6)) << "op " << c.op;
  }
  // Domain-restricted ops on positive inputs; in place.
  std::vector<float> p = {0.25f, 1.0f, 4.0f, 9.0f};
  for (auto [op, f] :
       {std::pair<parc_rt_unary_op_t, double (*)(double)>{
            PARC_RT_UNARY_LOG, [](double v) { return std::log(v); }},
        {PARC_RT_UNARY_SQRT, [](double v) { return std::sqrt(v); }},
        {PARC_RT_UNARY_RECIPROCAL, [](double v) { return 1 / v; }}}) {
    std::vector<float> y = p;
    ASSERT_RT_OK(parc_rt_unary(op, PARC_RT_F32, y.data(), y.data(), 4));
    std::vector<double> want;
    for (float v : p)
      want.push_back(f(v));
    EXPECT_TRUE(allClose(y, want, 1e-6, 0)) << "op " << op;
  }
}

TEST(Unary, IntegerAndBoolOps) {
  int32_t x[4] = {-5, 0, 3, INT32_MIN}, y[4];
  ASSERT_RT_OK(parc_rt_unary(PARC_RT_UNARY_NEG, PARC_RT_I32, x, y, 4));
  EXPECT_EQ(std::vector<int32_t>(y, y + 4),
            (std::vector<int32_t>{5, 0, -3, INT32_MIN}));
  ASSERT_RT_OK(parc_rt_unary(PARC_RT_UNARY_RELU, PARC_RT_I32, x, y, 4));
  EXPECT_EQ(std::vector<int32_t>(y, y + 4), (std::vector<int32_t>{0, 0, 3, 0}));
  uint8_t b[3] = {0, 1, 1}, nb[3];
  ASSERT_RT_OK(parc_rt_unary(PARC_RT_UNARY_NOT, PARC_RT_BOOL, b, nb, 3));
  EXPECT_EQ(std::vector<uint8_t>(nb, nb + 3), (std::vector<uint8_t>{1, 0, 0}));
  EXPECT_RT_ERROR(parc_rt_unary(PARC_RT_UNARY_EXP, PARC_RT_I32, x, y, 4),
                  PARC_RT_UNSUPPORTED, "unary 'exp': dtype i32");
}

TEST(Where, BroadcastsAllThree) {
  // cond [2,1], x [3], y scalar -> [2,3]
  uint8_t cond[2] = {1, 0};
  float x[3] = {1, 2, 3}, y = -1, out[6];
  const Shape cs = {2, 1}, xs = {3}, os = {2, 3};
  ASSERT_RT_OK(parc_rt_where(PARC_RT_F32, cond, 2, cs.data(), x, 1, xs.data(),
                             &y, 0, nullptr, out, 2, os.data()));
  EXPECT_EQ(std::vector<float>(out, out + 6),
            (std::vector<float>{1, 2, 3, -1, -1, -1}));
}

TEST(Cast, FloatToIntTruncatesSaturatesAndZeroesNaN) {
  float x[6] = {2.9f, -2.9f, 1e20f, -1e20f, std::nanf(""), 0.5f};
  int32_t y[6];
  ASSERT_RT_OK(parc_rt_cast(PARC_RT_F32, x, PARC_RT_I32, y, 6));
  EXPECT_EQ(std::vector<int32_t>(y, y + 6),
            (std::vector<int32_t>{2, -2, INT32_MAX, INT32_MIN, 0, 0}));
  uint8_t b[6];
  ASSERT_RT_OK(parc_rt_cast(PARC_RT_F32, x, PARC_RT_BOOL, b, 6));
  EXPECT_EQ(std::vector<uint8_t>(b, b + 6),
            (std::vector<uint8_t>{1, 1, 1, 1, 1, 1}));
  int64_t big[2] = {(int64_t(1) << 40) + 1, -3};
  int32_t wrapped[2];
  ASSERT_RT_OK(parc_rt_cast(PARC_RT_I64, big, PARC_RT_I32, wrapped, 2));
  EXPECT_EQ(wrapped[0], 1);
  EXPECT_EQ(wrapped[1], -3);
  double d[2];
  ASSERT_RT_OK(parc_rt_cast(PARC_RT_I64, big, PARC_RT_F64, d, 2));
  EXPECT_EQ(d[0], 1099511627777.0);
}

TEST(Cast, HalfBitPatterns) {
  // f32 -> f16 reference bit patterns (IEEE binary16, round to nearest even).
  const float f[] = {1.0f,     -2.0f,           65504.0f,
                     65520.0f, 0x1p-24f,        0x1p-25f,
                     0.1f,     1.0f + 0x1p-11f, 1.0f + 0x1p-10f + 0x1p-11f};
  const uint16_t want16[] = {0x3C00, 0xC000, 0x7BFF, 0x7C00, 0x0001,
                             0x0000, 0x2E66, 0x3C00, 0x3C02};
  uint16_t h[9];
  ASSERT_RT_OK(parc_rt_cast(PARC_RT_F32, f, PARC_RT_F16, h, 9));
  for (int i = 0; i < 9; ++i)
    EXPECT_EQ(h[i], want16[i]) << "f16 of " << f[i];
  // bf16: ties to even on the dropped 16 bits.
  const float g[] = {1.0f, 1.0f + 0x1p-8f, 1.0f + 3 * 0x1p-8f, -0.0f, 3.0f};
  const uint16_t wantBf[] = {0x3F80, 0x3F80, 0x3F82, 0x8000, 0x4040};
  uint16_t bf[5];
  ASSERT_RT_OK(parc_rt_cast(PARC_RT_F32, g, PARC_RT_BF16, bf, 5));
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(bf[i], wantBf[i]) << "bf16 of " << g[i];
}

TEST(Cast, EveryF16RoundTripsThroughF32) {
  std::vector<uint16_t> all(65536), back(65536);
  for (uint32_t i = 0; i < 65536; ++i)
    all[i] = uint16_t(i);
  std::vector<float> wide(65536);
  ASSERT_RT_OK(
      parc_rt_cast(PARC_RT_F16, all.data(), PARC_RT_F32, wide.data(), 65536));
  ASSERT_RT_OK(
      parc_rt_cast(PARC_RT_F32, wide.data(), PARC_RT_F16, back.data(), 65536));
  for (uint32_t i = 0; i < 65536; ++i) {
    const bool nan = (i & 0x7C00) == 0x7C00 && (i & 0x3FF);
    if (nan)
      EXPECT_TRUE(std::isnan(wide[i])) << i;
    else
      ASSERT_EQ(back[i], all[i]) << "pattern " << i << " -> " << wide[i];
  }
  // Spot values computed by hand: smallest subnormal, max, -1.5.
  EXPECT_EQ(wide[0x0001], 0x1p-24f);
  EXPECT_EQ(wide[0x7BFF], 65504.0f);
  EXPECT_EQ(wide[0xBE00], -1.5f);
}

TEST(FillCopy, Basics) {
  float v = 2.5f, out[5];
  ASSERT_RT_OK(parc_rt_fill(PARC_RT_F32, out, 5, &v));
  EXPECT_EQ(std::vector<float>(out, out + 5), std::vector<float>(5, 2.5f));
  int64_t src[3] = {1, 2, 3}, dst[3] = {};
  ASSERT_RT_OK(parc_rt_copy(dst, src, sizeof(src)));
  EXPECT_EQ(std::vector<int64_t>(dst, dst + 3),
            (std::vector<int64_t>{1, 2, 3}));
  EXPECT_EQ(parc_rt_dtype_size(PARC_RT_BF16), 2u);
  EXPECT_STREQ(parc_rt_dtype_name(PARC_RT_BOOL), "bool");
  EXPECT_STREQ(parc_rt_status_string(PARC_RT_TIMEOUT), "PARC_RT_TIMEOUT");
}

} // namespace
