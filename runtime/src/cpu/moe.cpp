//===- moe.cpp - sparse mixture of experts, local and expert-parallel -----===//
//
// Routing (softmax, top-k, optional renormalisation) is computed per token;
// then every expert gathers the rows that chose it (token permutation),
// runs its MLP on just those rows with two or three GEMMs, and scatters the
// weighted result back (unpermutation). Experts no token chose cost
// nothing. Rows are accumulated into the output in expert order, the order
// in which the dense exported form sums its terms.
//
// Expert parallelism runs the same pieces as separate calls the compiler
// places around its all_to_all_v's (parc_rt_moe_route, _experts, _combine
// here; the plan, parc_rt_moe_permute, is shared with the cuda backend in
// ../moe_ep.cpp).
//
//===----------------------------------------------------------------------===//

#include "../backend.h"
#include "../moe_report.h"
#include "blas.h"
#include "dtype_traits.h"
#include "shape.h"
#include "threads.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

using namespace parc::rt;

namespace {

/// Widens n elements of a float dtype to f32.
void loadRows(parc_rt_dtype_t dtype, const void *src, int64_t n, float *dst) {
  switch (dtype) {
  case PARC_RT_F32:
    std::copy_n(static_cast<const float *>(src), n, dst);
    return;
  case PARC_RT_F16:
  case PARC_RT_BF16:
    halfToF32(dtype == PARC_RT_BF16, static_cast<const uint16_t *>(src), dst,
              n);
    return;
  default:
    return;
  }
}

void storeRows(parc_rt_dtype_t dtype, const float *src, int64_t n, void *dst) {
  switch (dtype) {
  case PARC_RT_F32:
    std::copy_n(src, n, static_cast<float *>(dst));
    return;
  case PARC_RT_F16:
  case PARC_RT_BF16:
    f32ToHalf(dtype == PARC_RT_BF16, src, static_cast<uint16_t *>(dst), n);
    return;
  default:
    return;
  }
}

float activate(parc_rt_moe_activation_t act, float v) {
  switch (act) {
  case PARC_RT_MOE_SILU:
    return v / (1.0f + std::exp(-v));
  case PARC_RT_MOE_GELU:
    return 0.5f * v * (1.0f + std::erf(v * 0.70710678118654752f));
  case PARC_RT_MOE_RELU:
    return v > 0 ? v : 0.0f;
  default:
    return v;
  }
}

/// One (token, expert) choice.
struct Choice {
  int64_t token;
  int64_t expert;
  float weight;
};

/// softmax(logits row) -> top-k (ties: lower index first) -> weights,
/// renormalised to sum 1 when asked. Appends k choices per token.
void route(const float *logits, int64_t tokens, int64_t experts, int64_t k,
           bool normalize, std::vector<Choice> &out) {
  std::vector<float> p(experts);
  std::vector<int64_t> order(experts);
  for (int64_t t = 0; t < tokens; ++t) {
    const float *row = logits + t * experts;
    float mx = row[0];
    for (int64_t e = 1; e < experts; ++e)
      mx = std::max(mx, row[e]);
    float sum = 0;
    for (int64_t e = 0; e < experts; ++e)
      sum += p[e] = std::exp(row[e] - mx);
    for (int64_t e = 0; e < experts; ++e)
      p[e] /= sum;
    for (int64_t e = 0; e < experts; ++e)
      order[e] = e;
    std::partial_sort(order.begin(), order.begin() + k, order.end(),
                      [&](int64_t a, int64_t b) {
                        return p[a] > p[b] || (p[a] == p[b] && a < b);
                      });
    float total = 0;
    for (int64_t j = 0; j < k; ++j)
      total += p[order[j]];
    for (int64_t j = 0; j < k; ++j)
      out.push_back({t, order[j],
                     normalize ? p[order[j]] / total : p[order[j]]});
  }
}

/// Expert MLPs on gathered rows. rows[i] (hidden wide, f32) was routed to
/// local expert expertOf[i]; out[i] receives that expert's output. Weights
/// are the local experts' stacked [n_local, in, out] tensors in `dtype`.
struct ExpertWeights {
  parc_rt_dtype_t dtype;
  const void *fc1, *fc2, *fc3;
  int64_t hidden, ffn;
  parc_rt_moe_activation_t act;
};

void runExperts(const ExpertWeights &w, int64_t localExperts,
                const float *rows, const std::vector<int64_t> &expertOf,
                float *out) {
  const int64_t h = w.hidden, f = w.ffn, n = (int64_t)expertOf.size();
  const size_t elem = parc_rt_dtype_size(w.dtype);
  std::fill_n(out, n * h, 0.0f);
  std::vector<float> x, a, b, y, w1(h * f), w2(f * h), w3;
  std::vector<int64_t> mine;
  for (int64_t e = 0; e < localExperts; ++e) {
    mine.clear();
    for (int64_t i = 0; i < n; ++i)
      if (expertOf[i] == e)
        mine.push_back(i);
    if (mine.empty())
      continue; // an expert nobody chose costs nothing
    const int64_t m = (int64_t)mine.size();
    x.resize(m * h);
    for (int64_t r = 0; r < m; ++r)
      std::copy_n(rows + mine[r] * h, h, x.data() + r * h);
    auto weight = [&](const void *base, int64_t count) {
      return static_cast<const char *>(base) + e * count * elem;
    };
    loadRows(w.dtype, weight(w.fc1, h * f), h * f, w1.data());
    loadRows(w.dtype, weight(w.fc2, f * h), f * h, w2.data());
    a.resize(m * f);
    gemm(false, false, m, f, h, 1.0, x.data(), w1.data(), 0.0, a.data());
    for (float &v : a)
      v = activate(w.act, v);
    if (w.fc3) {
      w3.resize(h * f);
      loadRows(w.dtype, weight(w.fc3, h * f), h * f, w3.data());
      b.resize(m * f);
      gemm(false, false, m, f, h, 1.0, x.data(), w3.data(), 0.0, b.data());
      for (int64_t i = 0; i < m * f; ++i)
        a[i] *= b[i];
    }
    y.resize(m * h);
    gemm(false, false, m, h, f, 1.0, a.data(), w2.data(), 0.0, y.data());
    for (int64_t r = 0; r < m; ++r)
      std::copy_n(y.data() + r * h, h, out + mine[r] * h);
  }
}

using LayerStats = MoeLayerStats;

void record(const char *layer, LayerStats s) {
  recordMoeStats(layer, std::move(s));
}

/// Keeps, per expert, the first `capacity` pairs in token order; returns
/// how many of counts[e] are kept.
std::vector<int64_t> keptCounts(const std::vector<int64_t> &counts,
                                int64_t capacity) {
  std::vector<int64_t> kept(counts);
  if (capacity > 0)
    for (int64_t &k : kept)
      k = std::min(k, capacity);
  return kept;
}

} // namespace

parc_rt_status_t parc::rt::moeScatterRows(parc_rt_dtype_t dtype, const void *x,
                                          const int64_t *pairRows, float *rows,
                                          int64_t tokens, int64_t topK,
                                          int64_t hidden) {
  if (dtype != PARC_RT_F32 && dtype != PARC_RT_F16 && dtype != PARC_RT_BF16)
    return unsupportedDtype("moe_permute", dtype);
  const size_t elem = parc_rt_dtype_size(dtype);
  for (int64_t p = 0; p < tokens * topK; ++p)
    if (pairRows[p] >= 0)
      loadRows(dtype, static_cast<const char *>(x) + (p / topK) * hidden * elem,
               hidden, rows + pairRows[p] * hidden);
  return PARC_RT_OK;
}

parc_rt_status_t parc::rt::runMoe(const MoeCall &c) {
  const parc_rt_dtype_t dtype = c.dtype;
  const int64_t tokens = c.tokens, hidden = c.hidden, experts = c.experts;
  numThreads(); // configure BLAS threads
  std::vector<float> lg(tokens * experts), rows(tokens * hidden), out;
  loadRows(dtype, c.logits, tokens * experts, lg.data());
  loadRows(dtype, c.x, tokens * hidden, rows.data());
  std::vector<Choice> choices;
  route(lg.data(), tokens, experts, c.topK, c.normalize, choices);

  // One rank: capacity keeps each expert's first pairs in token order.
  std::vector<int64_t> counts(experts, 0);
  for (const Choice &ch : choices)
    ++counts[ch.expert];
  std::vector<int64_t> kept = keptCounts(counts, c.capacity);
  LayerStats s;
  s.perExpert = counts;
  s.capacity = c.capacity;
  std::vector<int64_t> seen(experts, 0), expertOf;
  std::vector<float> gathered;
  std::vector<const Choice *> live;
  for (const Choice &ch : choices) {
    if (seen[ch.expert]++ >= kept[ch.expert]) {
      ++s.dropped;
      continue;
    }
    live.push_back(&ch);
    expertOf.push_back(ch.expert);
    gathered.insert(gathered.end(), rows.begin() + ch.token * hidden,
                    rows.begin() + (ch.token + 1) * hidden);
  }
  s.perRank = {(int64_t)live.size()};
  ExpertWeights w{dtype, c.fc1, c.fc2, c.fc3, hidden, c.ffn, c.activation};
  out.resize(expertOf.size() * hidden);
  runExperts(w, experts, gathered.data(), expertOf, out.data());

  // Combine in expert order per token, as the dense form sums its terms.
  std::vector<float> acc(tokens * hidden, 0.0f);
  std::vector<size_t> byExpert(live.size());
  for (size_t i = 0; i < live.size(); ++i)
    byExpert[i] = i;
  std::stable_sort(byExpert.begin(), byExpert.end(), [&](size_t a, size_t b) {
    return live[a]->expert < live[b]->expert;
  });
  for (size_t i : byExpert) {
    float *dst = acc.data() + live[i]->token * hidden;
    const float *src = out.data() + i * hidden;
    for (int64_t j = 0; j < hidden; ++j)
      dst[j] += live[i]->weight * src[j];
  }
  storeRows(dtype, acc.data(), tokens * hidden, c.y);
  record(c.layer, std::move(s));
  return PARC_RT_OK;
}

parc_rt_status_t parc::rt::runMoeRoute(parc_rt_dtype_t dtype,
                                       const void *logits, int64_t *ids,
                                       float *weights, int64_t *counts,
                                       int64_t tokens, int64_t experts,
                                       int64_t topK, bool normalize) {
  std::vector<float> lg(tokens * experts);
  loadRows(dtype, logits, tokens * experts, lg.data());
  std::vector<Choice> choices;
  route(lg.data(), tokens, experts, topK, normalize, choices);
  std::fill_n(counts, experts, 0);
  for (size_t i = 0; i < choices.size(); ++i) {
    ids[i] = choices[i].expert;
    weights[i] = choices[i].weight;
    ++counts[choices[i].expert];
  }
  return PARC_RT_OK;
}

parc_rt_status_t parc::rt::runMoeExperts(
    parc_rt_dtype_t dtype, const std::vector<MoeRun> &runs, const void *rows,
    const void *fc1, const void *fc2, const void *fc3, void *out,
    int64_t local_experts, int64_t hidden, int64_t ffn,
    parc_rt_moe_activation_t activation) {
  numThreads();
  std::vector<int64_t> expertOf;
  for (const MoeRun &run : runs)
    expertOf.insert(expertOf.end(), run.count, run.expert);
  ExpertWeights w{dtype, fc1, fc2, fc3, hidden, ffn, activation};
  runExperts(w, local_experts, static_cast<const float *>(rows), expertOf,
             static_cast<float *>(out));
  return PARC_RT_OK;
}

parc_rt_status_t parc::rt::runMoeCombine(parc_rt_dtype_t dtype,
                                         const float *res,
                                         const int64_t *rowOf, const float *w,
                                         void *y, int64_t tokens,
                                         int64_t hidden, int64_t top_k) {
  std::vector<float> acc(tokens * hidden, 0.0f);
  std::vector<int64_t> mine;
  for (int64_t t = 0; t < tokens; ++t) {
    // Rows are in expert order: summing in row order is the dense form's.
    mine.clear();
    for (int64_t j = 0; j < top_k; ++j)
      if (rowOf[t * top_k + j] >= 0)
        mine.push_back(t * top_k + j);
    std::sort(mine.begin(), mine.end(),
              [&](int64_t a, int64_t b) { return rowOf[a] < rowOf[b]; });
    float *dst = acc.data() + t * hidden;
    for (int64_t p : mine) {
      const float *src = res + rowOf[p] * hidden;
      for (int64_t i = 0; i < hidden; ++i)
        dst[i] += w[p] * src[i];
    }
  }
  storeRows(dtype, acc.data(), tokens * hidden, y);
  return PARC_RT_OK;
}
