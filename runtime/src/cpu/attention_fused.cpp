//===- attention_fused.cpp - attention without the score matrix -*- C++ -*-===//
//
// Flash attention's schedule on the CPU. Per (batch, head, block of query
// rows) the keys are visited in blocks: each block's scores are one GEMM
// into a small tile, which updates a running row max and row sum (online
// softmax) and, after the accumulator is rescaled by exp(old max - new
// max), a second GEMM adds p·v. The workspace is a query block by a key
// block plus the accumulator per thread, never S x T; causal attention
// skips the key blocks after a query block's last visible key. Half types
// are widened to f32 a block at a time and accumulated in f32.
//
//===----------------------------------------------------------------------===//

#include "../half.h"
#include "../kernel_tag.h"
#include "../linalg_shapes.h"
#include "blas.h"
#include "fastmath.h"
#include "simd.h"
#include "threads.h"

#include <limits>
#include <vector>

using namespace parc::rt;

namespace {

// 64 x 256 f32 scores (64 KiB) stay in L2 next to the K and V blocks.
constexpr int64_t kQueryBlock = 64;
constexpr int64_t kKeyBlock = 256;
constexpr float kNegInf = -std::numeric_limits<float>::infinity();

struct Problem {
  FusedAttentionPlan p;
  parc_rt_dtype_t dtype;
  const void *q, *k, *v, *mask;
  void *out;
  float scale;
  bool causal;
  int64_t offset;
};

/// `n` elements of `dtype` from element `at` of `base` as f32: in place for
/// f32, widened into `buf` otherwise.
const float *asF32(parc_rt_dtype_t dtype, const void *base, int64_t at,
                   int64_t n, std::vector<float> &buf) {
  if (dtype == PARC_RT_F32)
    return static_cast<const float *>(base) + at;
  buf.resize(size_t(n));
  halfToF32(dtype == PARC_RT_BF16, static_cast<const uint16_t *>(base) + at,
            buf.data(), n);
  return buf.data();
}

/// The largest of s[0, n); 8 partial maxima so that the loop vectorises.
PARC_RT_SIMD_CLONES float rowMax(const float *s, int64_t n) {
  float m[8] = {kNegInf, kNegInf, kNegInf, kNegInf,
                kNegInf, kNegInf, kNegInf, kNegInf};
  int64_t j = 0;
  for (; j + 8 <= n; j += 8)
    for (int l = 0; l < 8; ++l)
      m[l] = s[j + l] > m[l] ? s[j + l] : m[l];
  for (; j < n; ++j)
    m[0] = s[j] > m[0] ? s[j] : m[0];
  float r = m[0];
  for (int l = 1; l < 8; ++l)
    r = m[l] > r ? m[l] : r;
  return r;
}

/// s[j] = exp(s[j] - mx) for j < n and 0 up to `width`; returns the sum.
PARC_RT_SIMD_CLONES float expRow(float *s, int64_t n, int64_t width, float mx) {
  float acc[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  int64_t j = 0;
  for (; j + 8 <= n; j += 8)
    for (int l = 0; l < 8; ++l) {
      float e = fastExp(s[j + l] - mx);
      s[j + l] = e;
      acc[l] += e;
    }
  for (; j < n; ++j) {
    s[j] = fastExp(s[j] - mx);
    acc[0] += s[j];
  }
  for (; j < width; ++j)
    s[j] = 0.0f;
  float sum = 0;
  for (int l = 0; l < 8; ++l)
    sum += acc[l];
  return sum;
}

PARC_RT_SIMD_CLONES void scaleRow(float *x, int64_t n, float by) {
  for (int64_t j = 0; j < n; ++j)
    x[j] *= by;
}

PARC_RT_SIMD_CLONES void addRow(float *x, const float *y, int64_t n) {
  for (int64_t j = 0; j < n; ++j)
    x[j] += y[j];
}

/// Per-thread workspace of one query block.
struct Tile {
  std::vector<float> scores, acc, rowMax, rowSum, qBuf, kBuf, vBuf, maskBuf;
};

/// Adds mask[b, h, i, j0 .. j0 + n) to the row `s`.
void addMask(const Problem &pr, int64_t b, int64_t h, int64_t i, int64_t j0,
             int64_t n, float *s, Tile &t) {
  const int64_t *ms = pr.p.maskStrides;
  const int64_t at = b * ms[0] + h * ms[1] + i * ms[2] + j0 * ms[3];
  if (ms[3] == 1) {
    addRow(s, asF32(pr.dtype, pr.mask, at, n, t.maskBuf), n);
    return;
  }
  std::vector<float> one;
  for (int64_t j = 0; j < n; ++j)
    s[j] += *asF32(pr.dtype, pr.mask, at + j * ms[3], 1, one);
}

/// Online softmax over one key block [j0, j0 + n) of the tile's `rows`
/// queries from i0: masks the scores, turns them into exp(s - running
/// max), and rescales the accumulator rows to the new max.
void softmaxBlock(const Problem &pr, int64_t b, int64_t h, int64_t i0,
                  int64_t rows, int64_t j0, int64_t n, Tile &t) {
  const int64_t dv = pr.p.valueDepth;
  for (int64_t r = 0; r < rows; ++r) {
    float *s = t.scores.data() + r * n;
    if (pr.mask)
      addMask(pr, b, h, i0 + r, j0, n, s, t);
    // Keys j <= i + offset are visible: the first `seen` of the block.
    int64_t seen = n;
    if (pr.causal)
      seen = std::clamp<int64_t>(i0 + r + pr.offset - j0 + 1, 0, n);
    const float mx = std::max(t.rowMax[r], rowMax(s, seen));
    if (mx == kNegInf) { // nothing visible yet: contributes nothing
      expRow(s, 0, n, 0.0f);
      continue;
    }
    const float alpha = fastExp(t.rowMax[r] - mx);
    t.rowSum[r] = t.rowSum[r] * alpha + expRow(s, seen, n, mx);
    scaleRow(t.acc.data() + r * dv, dv, alpha);
    t.rowMax[r] = mx;
  }
}

/// Output rows [i0, i0 + rows) of head h in batch b.
void queryBlock(const Problem &pr, int64_t b, int64_t h, int64_t i0,
                int64_t rows, Tile &t) {
  const FusedAttentionPlan &p = pr.p;
  const int64_t d = p.depth, dv = p.valueDepth;
  const int64_t kvHead = b * p.kvHeads + h / (p.heads / p.kvHeads);
  const float *q = asF32(pr.dtype, pr.q, ((b * p.heads + h) * p.queries + i0) * d,
                         rows * d, t.qBuf);
  t.acc.assign(size_t(rows * dv), 0.0f);
  t.rowMax.assign(size_t(rows), kNegInf);
  t.rowSum.assign(size_t(rows), 0.0f);
  int64_t end = p.keys;
  if (pr.causal)
    end = std::clamp<int64_t>(i0 + rows - 1 + pr.offset + 1, 0, p.keys);
  for (int64_t j0 = 0; j0 < end; j0 += kKeyBlock) {
    const int64_t n = std::min(kKeyBlock, end - j0);
    const float *k = asF32(pr.dtype, pr.k, (kvHead * p.keys + j0) * d, n * d,
                           t.kBuf);
    const float *v = asF32(pr.dtype, pr.v, (kvHead * p.keys + j0) * dv,
                           n * dv, t.vBuf);
    gemm(false, true, rows, n, d, pr.scale, q, k, 0.0, t.scores.data());
    softmaxBlock(pr, b, h, i0, rows, j0, n, t);
    gemm(false, false, rows, dv, n, 1.0, t.scores.data(), v, 1.0,
         t.acc.data());
  }
  // 0 / 0 where a row saw no key: NaN, as the unfused softmax gives.
  for (int64_t r = 0; r < rows; ++r)
    scaleRow(t.acc.data() + r * dv, dv, 1.0f / t.rowSum[r]);
  const int64_t at = ((b * p.heads + h) * p.queries + i0) * dv;
  if (pr.dtype == PARC_RT_F32)
    std::copy(t.acc.begin(), t.acc.end(), static_cast<float *>(pr.out) + at);
  else
    f32ToHalf(pr.dtype == PARC_RT_BF16, t.acc.data(),
              static_cast<uint16_t *>(pr.out) + at, rows * dv);
}

void run(const Problem &pr) {
  const FusedAttentionPlan &p = pr.p;
  const int64_t blocks = (p.queries + kQueryBlock - 1) / kQueryBlock;
  parallelRanges(p.batch * p.heads * blocks, 1, [&](int64_t begin, int64_t end) {
    Tile t;
    t.scores.resize(size_t(kQueryBlock * kKeyBlock));
    for (int64_t task = begin; task < end; ++task) {
      const int64_t bh = task / blocks, i0 = (task % blocks) * kQueryBlock;
      queryBlock(pr, bh / p.heads, bh % p.heads, i0,
                 std::min(kQueryBlock, p.queries - i0), t);
    }
  });
}

} // namespace

extern "C" parc_rt_status_t parc_rt_attention_fused(
    parc_rt_dtype_t dtype, const void *q, int64_t q_rank, const int64_t *q_dims,
    const void *k, int64_t k_rank, const int64_t *k_dims, const void *v,
    int64_t v_rank, const int64_t *v_dims, const void *mask, int64_t mask_rank,
    const int64_t *mask_dims, void *out, int64_t out_rank,
    const int64_t *out_dims, float scale, int32_t causal,
    int64_t causal_offset) {
  const char *op = "attention_fused";
  Problem pr{{}, dtype, q, k, v, mask, out, scale, causal != 0, causal_offset};
  PARC_RT_RETURN_IF_ERROR(resolveFusedAttention(op, q_rank, q_dims, k_rank,
                                                k_dims, v_rank, v_dims, mask,
                                                mask_rank, mask_dims, out_rank,
                                                out_dims, pr.p));
  if (dtype != PARC_RT_F32 && dtype != PARC_RT_BF16 && dtype != PARC_RT_F16)
    return unsupportedDtype(op, dtype);
  const FusedAttentionPlan &p = pr.p;
  tagKernel("attention",
            2.0 * p.batch * p.heads * p.queries * p.keys *
                (p.depth + p.valueDepth),
            dtype);
  const int64_t outCount = numElements(4, out_dims);
  PARC_RT_RETURN_IF_ERROR(checkData(op, "q", q, numElements(4, q_dims)));
  PARC_RT_RETURN_IF_ERROR(checkData(op, "k", k, numElements(4, k_dims)));
  PARC_RT_RETURN_IF_ERROR(checkData(op, "v", v, numElements(4, v_dims)));
  PARC_RT_RETURN_IF_ERROR(checkData(op, "out", out, outCount));
  if (outCount > 0)
    run(pr);
  return PARC_RT_OK;
}
