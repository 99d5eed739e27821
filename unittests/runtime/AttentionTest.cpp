//===- AttentionTest.cpp - attention products against naive loops --------===//

#include "TestUtil.h"

#include "parc/program.h"

using namespace parc::test;

namespace {

/// Grouped-query attention's two products: query head h reads key/value
/// head h / (H / Hkv), as the kernels promise.
TEST(Attention, GroupedScoresAndValuesMatchNaive) {
  const int64_t b = 2, h = 6, hkv = 2, s = 9, t = 11, d = 8;
  const float scale = 0.35f;
  const Shape qs{b, h, s, d}, ks{b, hkv, t, d}, ss{b, h, s, t},
      vs{b, hkv, t, d}, os{b, h, s, d};
  auto q = randomFloats(size_t(numel(qs)), 1);
  auto k = randomFloats(size_t(numel(ks)), 2);
  auto v = randomFloats(size_t(numel(vs)), 3);
  std::vector<float> scores(size_t(numel(ss)), 9.0f), out(size_t(numel(os)));
  ASSERT_RT_OK(parc_rt_attention_scores(PARC_RT_F32, q.data(), 4, qs.data(),
                                        k.data(), 4, ks.data(), scores.data(),
                                        4, ss.data(), scale));
  ASSERT_RT_OK(parc_rt_attention_values(PARC_RT_F32, scores.data(), 4,
                                        ss.data(), v.data(), 4, vs.data(),
                                        out.data(), 4, os.data()));
  std::vector<double> wantScores(scores.size()), wantOut(out.size());
  for (int64_t bi = 0; bi < b; ++bi)
    for (int64_t hi = 0; hi < h; ++hi) {
      const int64_t kv = bi * hkv + hi / (h / hkv), bh = bi * h + hi;
      for (int64_t i = 0; i < s; ++i)
        for (int64_t j = 0; j < t; ++j) {
          double acc = 0;
          for (int64_t c = 0; c < d; ++c)
            acc += double(q[(bh * s + i) * d + c]) * k[(kv * t + j) * d + c];
          wantScores[size_t((bh * s + i) * t + j)] = scale * acc;
        }
      for (int64_t i = 0; i < s; ++i)
        for (int64_t c = 0; c < d; ++c) {
          double acc = 0;
          for (int64_t j = 0; j < t; ++j)
            acc += double(scores[(bh * s + i) * t + j]) *
                   v[(kv * t + j) * d + c];
          wantOut[size_t((bh * s + i) * d + c)] = acc;
        }
    }
  EXPECT_TRUE(allClose(scores, wantScores, 1e-5, 1e-6));
  EXPECT_TRUE(allClose(out, wantOut, 1e-5, 1e-6));
}

} // namespace
