//===- MovementTest.cpp - transpose, slice, concat/split, gather, ... -----===//
//
// Expected values are hand-worked (several are the ONNX operator docs'
// examples) or follow from explicit index arithmetic.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

using namespace parc::test;

namespace {

TEST(Transpose, TwoD) {
  float x[6] = {1, 2, 3, 4, 5, 6}, y[6];
  const Shape s = {2, 3};
  const int64_t perm[2] = {1, 0};
  ASSERT_RT_OK(parc_rt_transpose(PARC_RT_F32, x, 2, s.data(), perm, y));
  EXPECT_EQ(std::vector<float>(y, y + 6),
            (std::vector<float>{1, 4, 2, 5, 3, 6}));
}

/// y[j] must equal x at the index whose perm[d]-th coordinate is j[d].
void checkTranspose(const Shape &s, const Shape &perm) {
  const int64_t rank = int64_t(s.size());
  Shape ys(s.size());
  for (int64_t d = 0; d < rank; ++d)
    ys[d] = s[perm[d]];
  std::vector<int32_t> x(size_t(numel(s))), y(x.size(), -1);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = int32_t(i);
  ASSERT_RT_OK(parc_rt_transpose(PARC_RT_I32, x.data(), rank, s.data(),
                                 perm.data(), y.data()));
  for (int64_t i = 0; i < numel(ys); ++i) {
    Shape yi = unflatten(i, ys), xi(s.size());
    for (int64_t d = 0; d < rank; ++d)
      xi[perm[d]] = yi[d];
    int64_t flat = 0;
    for (int64_t d = 0; d < rank; ++d)
      flat = flat * s[d] + xi[d];
    ASSERT_EQ(y[size_t(i)], flat) << "at " << i;
  }
}

TEST(Transpose, FourDByIndexArithmetic) {
  checkTranspose({2, 3, 4, 5}, {2, 0, 3, 1});
  // Large enough for the tiled path, with partial tiles.
  checkTranspose({2, 37, 3, 45}, {0, 3, 2, 1});
  checkTranspose({70, 33}, {1, 0});
  const Shape s = {2, 3};
  const int64_t bad[2] = {0, 0};
  int32_t x[6] = {}, y[6];
  EXPECT_RT_ERROR(parc_rt_transpose(PARC_RT_I32, x, 2, s.data(), bad, y),
                  PARC_RT_INVALID_ARGUMENT, "not a permutation");
}

TEST(Slice, StepsForwardAndBackward) {
  // x = 0..11 as [3,4]; rows 0 and 2, columns 3,1 (step -2).
  std::vector<float> x(12);
  for (int i = 0; i < 12; ++i)
    x[i] = float(i);
  const Shape s = {3, 4}, os = {2, 2};
  const int64_t starts[2] = {0, 3}, steps[2] = {2, -2};
  float y[4];
  ASSERT_RT_OK(parc_rt_slice(PARC_RT_F32, x.data(), 2, s.data(), starts, steps,
                             y, os.data()));
  EXPECT_EQ(std::vector<float>(y, y + 4), (std::vector<float>{3, 1, 11, 9}));
  const int64_t tooFar[2] = {2, 3};
  EXPECT_RT_ERROR(parc_rt_slice(PARC_RT_F32, x.data(), 2, s.data(), tooFar,
                                steps, y, os.data()),
                  PARC_RT_INVALID_ARGUMENT, "slice: dim 0");
}

TEST(ConcatSplit, MiddleAxisRoundTrip) {
  // a [2,1,2] and b [2,2,2] along axis 1.
  float a[4] = {1, 2, 3, 4}, b[8] = {10, 11, 12, 13, 14, 15, 16, 17}, out[12];
  const void *inputs[2] = {a, b};
  const int64_t sizes[2] = {1, 2};
  const Shape os = {2, 3, 2};
  ASSERT_RT_OK(
      parc_rt_concat(PARC_RT_F32, 2, inputs, sizes, 3, os.data(), 1, out));
  EXPECT_EQ(std::vector<float>(out, out + 12),
            (std::vector<float>{1, 2, 10, 11, 12, 13, 3, 4, 14, 15, 16, 17}));
  float a2[4], b2[8];
  void *outputs[2] = {a2, b2};
  ASSERT_RT_OK(
      parc_rt_split(PARC_RT_F32, out, 3, os.data(), -2, 2, sizes, outputs));
  EXPECT_EQ(std::vector<float>(a2, a2 + 4), std::vector<float>(a, a + 4));
  EXPECT_EQ(std::vector<float>(b2, b2 + 8), std::vector<float>(b, b + 8));
  const int64_t wrong[2] = {1, 1};
  EXPECT_RT_ERROR(
      parc_rt_concat(PARC_RT_F32, 2, inputs, wrong, 3, os.data(), 1, out),
      PARC_RT_INVALID_ARGUMENT, "sum to 2, output [2,3,2] has 3");
}

TEST(Gather, OnnxExamples) {
  // axis 0: data [3,2], indices [[0,1],[1,2]] -> [2,2,2]
  float data[6] = {1.0f, 1.2f, 2.3f, 3.4f, 4.5f, 5.7f}, out[8];
  const Shape ds = {3, 2}, is = {2, 2};
  int64_t idx[4] = {0, 1, 1, 2};
  ASSERT_RT_OK(parc_rt_gather(PARC_RT_F32, data, 2, ds.data(), 0, PARC_RT_I64,
                              idx, 2, is.data(), out));
  EXPECT_EQ(
      std::vector<float>(out, out + 8),
      (std::vector<float>{1.0f, 1.2f, 2.3f, 3.4f, 2.3f, 3.4f, 4.5f, 5.7f}));
  // axis 1: data [3,3], indices [[0,2]] -> [3,1,2]; also negative (-1 == 2).
  float d2[9] = {1.0f, 1.2f, 1.9f, 2.3f, 3.4f, 3.9f, 4.5f, 5.7f, 5.9f}, o2[6];
  const Shape d2s = {3, 3}, i2s = {1, 2};
  int32_t idx2[2] = {0, -1};
  ASSERT_RT_OK(parc_rt_gather(PARC_RT_F32, d2, 2, d2s.data(), 1, PARC_RT_I32,
                              idx2, 2, i2s.data(), o2));
  EXPECT_EQ(std::vector<float>(o2, o2 + 6),
            (std::vector<float>{1.0f, 1.9f, 2.3f, 3.9f, 4.5f, 5.9f}));
}

TEST(Gather, OutOfRangeIsReported) {
  float data[6] = {}, out[2];
  const Shape ds = {3, 2}, is = {2};
  int64_t idx[2] = {1, 3};
  EXPECT_RT_ERROR(parc_rt_gather(PARC_RT_F32, data, 2, ds.data(), 0,
                                 PARC_RT_I64, idx, 1, is.data(), out),
                  PARC_RT_INVALID_ARGUMENT,
                  "index 3 at position 1 is out of range [-3, 3)");
  int64_t neg[2] = {-4, 0};
  EXPECT_RT_ERROR(parc_rt_gather(PARC_RT_F32, data, 2, ds.data(), 0,
                                 PARC_RT_I64, neg, 1, is.data(), out),
                  PARC_RT_INVALID_ARGUMENT, "index -4");
}

TEST(ScatterElements, OnnxExamples) {
  // Example 1: axis 0 into zeros [3,3].
  float data[9] = {}, out[9];
  const Shape ds = {3, 3}, is = {2, 3};
  int64_t idx[6] = {1, 0, 2, 0, 2, 1};
  float upd[6] = {1.0f, 1.1f, 1.2f, 2.0f, 2.1f, 2.2f};
  ASSERT_RT_OK(parc_rt_scatter_elements(PARC_RT_F32, data, 2, ds.data(), 0,
                                        PARC_RT_I64, idx, is.data(), upd,
                                        PARC_RT_SCATTER_NONE, out));
  EXPECT_EQ(std::vector<float>(out, out + 9),
            (std::vector<float>{2.0f, 1.1f, 0.0f, 1.0f, 0.0f, 2.2f, 0.0f, 2.1f,
                                1.2f}));
  // Example 2: axis 1, in place.
  float d2[5] = {1, 2, 3, 4, 5};
  const Shape d2s = {1, 5}, i2s = {1, 2};
  int32_t idx2[2] = {1, 3};
  float upd2[2] = {1.1f, 2.1f};
  ASSERT_RT_OK(parc_rt_scatter_elements(PARC_RT_F32, d2, 2, d2s.data(), 1,
                                        PARC_RT_I32, idx2, i2s.data(), upd2,
                                        PARC_RT_SCATTER_NONE, d2));
  EXPECT_EQ(std::vector<float>(d2, d2 + 5),
            (std::vector<float>{1.0f, 1.1f, 3.0f, 2.1f, 5.0f}));
}

TEST(ScatterElements, Reductions) {
  // Duplicate index 1 with add / mul / max / min (ONNX 18 reductions).
  float data[3] = {1, 2, 3}, upd[3] = {10, 4, 20}, out[3];
  int64_t idx[3] = {1, 1, -1};
  const Shape s = {3};
  struct Case {
    parc_rt_scatter_reduction_t r;
    float want[3];
  } cases[] = {{PARC_RT_SCATTER_ADD, {1, 16, 23}},
               {PARC_RT_SCATTER_MUL, {1, 80, 60}},
               {PARC_RT_SCATTER_MAX, {1, 10, 20}},
               {PARC_RT_SCATTER_MIN, {1, 2, 3}}};
  for (const Case &c : cases) {
    ASSERT_RT_OK(parc_rt_scatter_elements(PARC_RT_F32, data, 1, s.data(), 0,
                                          PARC_RT_I64, idx, s.data(), upd, c.r,
                                          out));
    EXPECT_EQ(std::vector<float>(out, out + 3),
              std::vector<float>(c.want, c.want + 3))
        << "reduction " << c.r;
  }
  int64_t bad[3] = {0, 5, 0};
  EXPECT_RT_ERROR(parc_rt_scatter_elements(PARC_RT_F32, data, 1, s.data(), 0,
                                           PARC_RT_I64, bad, s.data(), upd,
                                           PARC_RT_SCATTER_NONE, out),
                  PARC_RT_INVALID_ARGUMENT, "index 5 at position 1");
}

TEST(ScatterElements, BoolReductionRejectedBeforeWriting) {
  // Bool takes no arithmetic: the call fails and out keeps what it held.
  uint8_t data[3] = {1, 0, 1}, upd[1] = {1}, out[3] = {7, 7, 7};
  int32_t idx[1] = {0};
  const Shape s = {3}, is = {1};
  EXPECT_RT_ERROR(parc_rt_scatter_elements(PARC_RT_BOOL, data, 1, s.data(), 0,
                                           PARC_RT_I32, idx, is.data(), upd,
                                           PARC_RT_SCATTER_ADD, out),
                  PARC_RT_UNSUPPORTED,
                  "scatter_elements: dtype bool is not supported");
  EXPECT_EQ(std::vector<uint8_t>(out, out + 3), (std::vector<uint8_t>{7, 7, 7}));
  ASSERT_RT_OK(parc_rt_scatter_elements(PARC_RT_BOOL, data, 1, s.data(), 0,
                                        PARC_RT_I32, idx, is.data(), upd,
                                        PARC_RT_SCATTER_NONE, out));
  EXPECT_EQ(std::vector<uint8_t>(out, out + 3), (std::vector<uint8_t>{1, 0, 1}));
}

TEST(Expand, BroadcastCopy) {
  uint16_t x[3] = {1, 2, 3}, y[6];
  const Shape xs = {3, 1}, ys = {2, 3, 2};
  uint16_t y12[12];
  ASSERT_RT_OK(parc_rt_expand(PARC_RT_F16, x, 2, xs.data(), y12, 3, ys.data()));
  EXPECT_EQ(std::vector<uint16_t>(y12, y12 + 12),
            (std::vector<uint16_t>{1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3}));
  const Shape bad = {2, 2};
  EXPECT_RT_ERROR(
      parc_rt_expand(PARC_RT_F16, x, 2, xs.data(), y, 2, bad.data()),
      PARC_RT_INVALID_ARGUMENT, "does not broadcast to output shape [2,2]");
}

TEST(Trilu, UpperAndLowerWithOffsets) {
  // 3x4 of ones-based values.
  float x[12], y[12];
  for (int i = 0; i < 12; ++i)
    x[i] = float(i + 1);
  const Shape s = {3, 4};
  ASSERT_RT_OK(parc_rt_trilu(PARC_RT_F32, x, 2, s.data(), 0, 1, y));
  EXPECT_EQ(std::vector<float>(y, y + 12),
            (std::vector<float>{1, 2, 3, 4, 0, 6, 7, 8, 0, 0, 11, 12}));
  ASSERT_RT_OK(parc_rt_trilu(PARC_RT_F32, x, 2, s.data(), 1, 1, y));
  EXPECT_EQ(std::vector<float>(y, y + 12),
            (std::vector<float>{0, 2, 3, 4, 0, 0, 7, 8, 0, 0, 0, 12}));
  ASSERT_RT_OK(parc_rt_trilu(PARC_RT_F32, x, 2, s.data(), -1, 0, y));
  EXPECT_EQ(std::vector<float>(y, y + 12),
            (std::vector<float>{0, 0, 0, 0, 5, 0, 0, 0, 9, 10, 0, 0}));
  ASSERT_RT_OK(parc_rt_trilu(PARC_RT_F32, x, 2, s.data(), 0, 0, y));
  EXPECT_EQ(std::vector<float>(y, y + 12),
            (std::vector<float>{1, 0, 0, 0, 5, 6, 0, 0, 9, 10, 11, 0}));
}

TEST(Rotary, RotateHalfWithPartialDimAndSeqAxis) {
  // x [B=2, S=3, H=2, D=6], rotary_dim 4, seq_axis 1.
  const Shape s = {2, 3, 2, 6};
  const int64_t rd = 4, half = 2;
  auto x = randomFloats(size_t(numel(s)), 5);
  auto cosT = randomFloats(size_t(3 * half), 6),
       sinT = randomFloats(size_t(3 * half), 7);
  std::vector<float> y(x.size());
  ASSERT_RT_OK(parc_rt_rotary(PARC_RT_F32, x.data(), 4, s.data(), 1, rd,
                              cosT.data(), sinT.data(), y.data()));
  std::vector<double> want(x.size());
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t p = 0; p < 3; ++p)
      for (int64_t h = 0; h < 2; ++h) {
        const int64_t base = ((b * 3 + p) * 2 + h) * 6;
        for (int64_t i = 0; i < 6; ++i) {
          double v = x[base + i];
          if (i < half)
            v = x[base + i] * double(cosT[p * half + i]) -
                x[base + i + half] * double(sinT[p * half + i]);
          else if (i < rd)
            v = x[base + i] * double(cosT[p * half + i - half]) +
                x[base + i - half] * double(sinT[p * half + i - half]);
          want[base + i] = v;
        }
      }
  EXPECT_TRUE(allClose(y, want, 1e-6, 1e-6));
  // In place gives the same result.
  ASSERT_RT_OK(parc_rt_rotary(PARC_RT_F32, x.data(), 4, s.data(), 1, rd,
                              cosT.data(), sinT.data(), x.data()));
  EXPECT_EQ(x, y);
}

} // namespace
