//===- FusedAttentionTest.cpp - fused attention against naive loops -------===//
//
// The reference is numpy's formula in double: scores = scale·q·kᵀ + mask,
// -inf after i + offset when causal, softmax over the keys, ·v. Sizes are
// chosen off the kernel's 64-query and 256-key blocks.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include "half.h"
#include "parc/program.h"

#include <cmath>
#include <limits>

using namespace parc::test;

namespace {

struct Case {
  int64_t b, h, hkv, s, t, d, dv;
  Shape mask; // empty: no mask
  bool causal = false;
  int64_t offset = 0;
};

struct Data {
  std::vector<float> q, k, v, mask;
};

Data randomData(const Case &c) {
  Data x;
  x.q = randomFloats(size_t(c.b * c.h * c.s * c.d), 1, -2.0f, 2.0f);
  x.k = randomFloats(size_t(c.b * c.hkv * c.t * c.d), 2, -2.0f, 2.0f);
  x.v = randomFloats(size_t(c.b * c.hkv * c.t * c.dv), 3);
  if (!c.mask.empty()) {
    // A padding-style mask: about one entry in five hidden by -1e4 or -inf.
    x.mask = randomFloats(size_t(numel(c.mask)), 4);
    for (size_t i = 0; i < x.mask.size(); ++i)
      if (i % 5 == 3)
        x.mask[i] = i % 2 ? -10000.0f : -std::numeric_limits<float>::infinity();
  }
  return x;
}

std::vector<double> naive(const Case &c, const Data &x, float scale) {
  std::vector<double> out(size_t(c.b * c.h * c.s * c.dv));
  std::vector<double> p(size_t(c.t));
  for (int64_t bi = 0; bi < c.b; ++bi)
    for (int64_t hi = 0; hi < c.h; ++hi) {
      const int64_t kv = bi * c.hkv + hi / (c.h / c.hkv), bh = bi * c.h + hi;
      for (int64_t i = 0; i < c.s; ++i) {
        double mx = -INFINITY, sum = 0;
        for (int64_t j = 0; j < c.t; ++j) {
          double acc = 0;
          for (int64_t e = 0; e < c.d; ++e)
            acc += double(x.q[(bh * c.s + i) * c.d + e]) *
                   x.k[(kv * c.t + j) * c.d + e];
          acc *= scale;
          if (!c.mask.empty())
            acc += x.mask[size_t(broadcastOffset({bi, hi, i, j}, c.mask))];
          if (c.causal && j > i + c.offset)
            acc = -INFINITY;
          p[size_t(j)] = acc;
          mx = std::max(mx, acc);
        }
        for (double &e : p)
          sum += (e = std::exp(e - mx));
        for (int64_t e = 0; e < c.dv; ++e) {
          double acc = 0;
          for (int64_t j = 0; j < c.t; ++j)
            acc += p[size_t(j)] * x.v[(kv * c.t + j) * c.dv + e];
          out[size_t((bh * c.s + i) * c.dv + e)] = acc / sum;
        }
      }
    }
  return out;
}

parc_rt_status_t fused(parc_rt_dtype_t dtype, const Case &c, const void *q,
                       const void *k, const void *v, const void *mask,
                       void *out, float scale) {
  const Shape qs{c.b, c.h, c.s, c.d}, ks{c.b, c.hkv, c.t, c.d},
      vs{c.b, c.hkv, c.t, c.dv}, os{c.b, c.h, c.s, c.dv};
  return parc_rt_attention_fused(
      dtype, q, 4, qs.data(), k, 4, ks.data(), v, 4, vs.data(),
      c.mask.empty() ? nullptr : mask, int64_t(c.mask.size()), c.mask.data(),
      out, 4, os.data(), scale, c.causal, c.offset);
}

void expectMatchesNaive(const Case &c) {
  const float scale = 1.0f / std::sqrt(float(c.d));
  Data x = randomData(c);
  std::vector<float> out(size_t(c.b * c.h * c.s * c.dv), 7.0f);
  ASSERT_RT_OK(fused(PARC_RT_F32, c, x.q.data(), x.k.data(), x.v.data(),
                     x.mask.data(), out.data(), scale));
  EXPECT_TRUE(allClose(out, naive(c, x, scale), 1e-4, 1e-5));
}

TEST(FusedAttention, NoMaskGroupedOddSizes) {
  // 70 queries (one full block and 6), 300 keys (one full block and 44).
  expectMatchesNaive({2, 6, 2, 70, 300, 16, 12, {}});
}

TEST(FusedAttention, CausalSquare) {
  expectMatchesNaive({1, 4, 4, 130, 130, 8, 8, {}, true, 0});
}

TEST(FusedAttention, CausalAlignedToTheLastKeys) {
  // Decoding 5 new queries after 300 cached keys: offset T - S.
  expectMatchesNaive({1, 4, 1, 5, 305, 8, 8, {}, true, 300});
}

TEST(FusedAttention, PaddingMaskPerBatch) {
  expectMatchesNaive({3, 2, 2, 33, 270, 8, 8, {3, 1, 1, 270}});
}

TEST(FusedAttention, FullMaskPerHeadWithCausal) {
  expectMatchesNaive({2, 4, 2, 65, 65, 8, 4, {1, 4, 65, 65}, true, 0});
}

TEST(FusedAttention, LowRankMaskBroadcasts) {
  // [S, T]: the KV cache's position mask has this reach.
  expectMatchesNaive({2, 2, 1, 9, 17, 4, 4, {9, 17}});
}

TEST(FusedAttention, RowThatSeesNoKeyIsNaN) {
  // Offset -1: query 0 sees no key, as softmax over all -inf.
  Case c{1, 1, 1, 3, 3, 2, 2, {}, true, -1};
  Data x = randomData(c);
  std::vector<float> out(6);
  ASSERT_RT_OK(fused(PARC_RT_F32, c, x.q.data(), x.k.data(), x.v.data(),
                     nullptr, out.data(), 1.0f));
  EXPECT_TRUE(std::isnan(out[0]) && std::isnan(out[1]));
  const std::vector<double> want = naive(c, x, 1.0f);
  EXPECT_TRUE(allClose(std::vector<float>(out.begin() + 2, out.end()),
                       std::vector<double>(want.begin() + 2, want.end())));
}

TEST(FusedAttention, Bf16AccumulatesInF32) {
  Case c{1, 4, 2, 80, 290, 32, 32, {1, 1, 80, 290}, true, 210};
  const float scale = 1.0f / std::sqrt(32.0f);
  Data x = randomData(c);
  auto narrow = [](std::vector<float> &f) {
    std::vector<uint16_t> h(f.size());
    parc::rt::f32ToHalf(true, f.data(), h.data(), int64_t(f.size()));
    parc::rt::halfToF32(true, h.data(), f.data(), int64_t(f.size()));
    return h;
  };
  // The reference sees the bf16-rounded inputs.
  auto q = narrow(x.q), k = narrow(x.k), v = narrow(x.v), m = narrow(x.mask);
  std::vector<uint16_t> out(size_t(c.b * c.h * c.s * c.dv));
  ASSERT_RT_OK(fused(PARC_RT_BF16, c, q.data(), k.data(), v.data(), m.data(),
                     out.data(), scale));
  std::vector<float> wide(out.size());
  parc::rt::halfToF32(true, out.data(), wide.data(), int64_t(out.size()));
  // bf16 keeps 8 bits: the output's own rounding is 2^-9 relative.
  EXPECT_TRUE(allClose(wide, naive(c, x, scale), 8e-3, 2e-3));
}

TEST(FusedAttention, RejectsMismatchedValues) {
  const Shape qs{1, 2, 4, 8}, ks{1, 2, 6, 8}, vs{1, 2, 5, 8}, os{1, 2, 4, 8};
  std::vector<float> buf(512);
  parc_rt_status_t st = parc_rt_attention_fused(
      PARC_RT_F32, buf.data(), 4, qs.data(), buf.data(), 4, ks.data(),
      buf.data(), 4, vs.data(), nullptr, 0, nullptr, buf.data(), 4, os.data(),
      1.0f, 0, 0);
  EXPECT_EQ(st, PARC_RT_INVALID_ARGUMENT);
  EXPECT_NE(std::string(parc_rt_last_error()).find("attention_fused"),
            std::string::npos);
}

TEST(FusedAttention, RejectsMaskThatDoesNotBroadcast) {
  const Shape qs{1, 2, 4, 8}, ks{1, 2, 6, 8}, os{1, 2, 4, 8}, ms{1, 1, 4, 5};
  std::vector<float> buf(512);
  EXPECT_EQ(parc_rt_attention_fused(PARC_RT_F32, buf.data(), 4, qs.data(),
                                    buf.data(), 4, ks.data(), buf.data(), 4,
                                    ks.data(), buf.data(), 4, ms.data(),
                                    buf.data(), 4, os.data(), 1.0f, 0, 0),
            PARC_RT_INVALID_ARGUMENT);
}

} // namespace
