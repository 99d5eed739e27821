//===- moe.cpp - sparse mixture of experts, local and expert-parallel -----===//
//
// Routing (softmax, top-k, optional renormalisation) is computed per token;
// then every expert gathers the rows that chose it (token permutation),
// runs its MLP on just those rows with two or three GEMMs, and scatters the
// weighted result back (unpermutation). Experts no token chose cost
// nothing. Rows are accumulated into the output in expert order, the order
// in which the dense exported form sums its terms.
//
// Expert parallelism (parc_rt_moe_ep) splits the tokens, which every rank
// of the group holds, into contiguous shares; each rank routes its share,
// the per-expert counts are all-gathered (so every rank knows what every
// other will send, and capacity drops are decided identically everywhere),
// rows travel to the experts' ranks with all_to_all_v, come back the same
// way, are combined into the rank's share of the output, and the shares are
// all-gathered. Routing statistics of the last call of every layer are kept
// for the per-run report.
//
//===----------------------------------------------------------------------===//

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
           bool normalize, int64_t tokenBase, std::vector<Choice> &out) {
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
      out.push_back({tokenBase + t, order[j],
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
                const std::vector<float> &rows,
                const std::vector<int64_t> &expertOf, std::vector<float> &out) {
  const int64_t h = w.hidden, f = w.ffn, n = (int64_t)expertOf.size();
  const size_t elem = parc_rt_dtype_size(w.dtype);
  out.assign(n * h, 0.0f);
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
      std::copy_n(rows.data() + mine[r] * h, h, x.data() + r * h);
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
      std::copy_n(y.data() + r * h, h, out.data() + mine[r] * h);
  }
}

using LayerStats = MoeLayerStats;

void record(const char *layer, LayerStats s) {
  recordMoeStats(layer, std::move(s));
}

parc_rt_status_t checkArgs(const char *op, parc_rt_dtype_t dtype, const void *x,
                           const void *logits, const void *fc1, const void *fc2,
                           void *y, int64_t tokens, int64_t hidden, int64_t ffn,
                           int64_t experts, int64_t topK, int64_t capacity) {
  if (dtype != PARC_RT_F32 && dtype != PARC_RT_F16 && dtype != PARC_RT_BF16)
    return unsupportedDtype(op, dtype);
  if (tokens < 0 || hidden < 1 || ffn < 1 || experts < 1 || topK < 1 ||
      topK > experts || capacity < 0)
    return fail(PARC_RT_INVALID_ARGUMENT,
                "%s: bad sizes (tokens %lld, hidden %lld, ffn %lld, experts "
                "%lld, top_k %lld, capacity %lld)",
                op, (long long)tokens, (long long)hidden, (long long)ffn,
                (long long)experts, (long long)topK, (long long)capacity);
  if (tokens && (!x || !logits || !fc1 || !fc2 || !y))
    return fail(PARC_RT_INVALID_ARGUMENT, "%s: a required buffer is null", op);
  return PARC_RT_OK;
}

/// Keeps, per expert, the first `capacity` pairs in (rank, token) order.
/// counts[r * experts + e] is what rank r routes to expert e; returns how
/// many of them are kept.
std::vector<int64_t> keptCounts(const std::vector<int64_t> &counts,
                                int64_t ranks, int64_t experts,
                                int64_t capacity) {
  std::vector<int64_t> kept(counts);
  if (capacity == 0)
    return kept;
  for (int64_t e = 0; e < experts; ++e) {
    int64_t used = 0;
    for (int64_t r = 0; r < ranks; ++r) {
      int64_t &k = kept[r * experts + e];
      k = std::max<int64_t>(0, std::min(k, capacity - used));
      used += k;
    }
  }
  return kept;
}

} // namespace

extern "C" {

parc_rt_status_t parc_rt_moe(parc_rt_dtype_t dtype, const void *x,
                             const void *logits, const void *fc1,
                             const void *fc2, const void *fc3, void *y,
                             int64_t tokens, int64_t hidden, int64_t ffn,
                             int64_t experts, int64_t top_k, int normalize,
                             parc_rt_moe_activation_t activation,
                             int64_t capacity, const char *layer) {
  const char *op = "moe";
  PARC_RT_RETURN_IF_ERROR(checkArgs(op, dtype, x, logits, fc1, fc2, y, tokens,
                                    hidden, ffn, experts, top_k, capacity));
  numThreads(); // configure BLAS threads
  std::vector<float> lg(tokens * experts), rows(tokens * hidden), out;
  loadRows(dtype, logits, tokens * experts, lg.data());
  loadRows(dtype, x, tokens * hidden, rows.data());
  std::vector<Choice> choices;
  route(lg.data(), tokens, experts, top_k, normalize, 0, choices);

  // One rank: capacity keeps each expert's first pairs in token order.
  std::vector<int64_t> counts(experts, 0);
  for (const Choice &c : choices)
    ++counts[c.expert];
  std::vector<int64_t> kept = keptCounts(counts, 1, experts, capacity);
  LayerStats s;
  s.perExpert = counts;
  s.capacity = capacity;
  std::vector<int64_t> seen(experts, 0), expertOf;
  std::vector<float> gathered;
  std::vector<const Choice *> live;
  for (const Choice &c : choices) {
    if (seen[c.expert]++ >= kept[c.expert]) {
      ++s.dropped;
      continue;
    }
    live.push_back(&c);
    expertOf.push_back(c.expert);
    gathered.insert(gathered.end(), rows.begin() + c.token * hidden,
                    rows.begin() + (c.token + 1) * hidden);
  }
  s.perRank = {(int64_t)live.size()};
  ExpertWeights w{dtype, fc1, fc2, fc3, hidden, ffn, activation};
  runExperts(w, experts, gathered, expertOf, out);

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
  storeRows(dtype, acc.data(), tokens * hidden, y);
  record(layer, std::move(s));
  return PARC_RT_OK;
}

parc_rt_status_t parc_rt_moe_ep(parc_rt_comm_t *comm, parc_rt_dtype_t dtype,
                                const void *x, const void *logits,
                                const void *fc1, const void *fc2,
                                const void *fc3, void *y, int64_t tokens,
                                int64_t hidden, int64_t ffn, int64_t experts,
                                int64_t top_k, int normalize,
                                parc_rt_moe_activation_t activation,
                                int64_t capacity, const char *layer) {
  const char *op = "moe_ep";
  PARC_RT_RETURN_IF_ERROR(checkArgs(op, dtype, x, logits, fc1, fc2, y, tokens,
                                    hidden, ffn, experts, top_k, capacity));
  if (!comm)
    return fail(PARC_RT_INVALID_ARGUMENT, "%s: null communicator", op);
  const int64_t ranks = parc_rt_comm_size(comm), me = parc_rt_comm_rank(comm);
  if (experts % ranks || tokens % ranks)
    return fail(PARC_RT_INVALID_ARGUMENT,
                "%s: %lld experts and %lld tokens must divide over %lld ranks",
                op, (long long)experts, (long long)tokens, (long long)ranks);
  numThreads();
  const int64_t local = experts / ranks, share = tokens / ranks,
                first = me * share;
  const size_t elem = parc_rt_dtype_size(dtype);

  // Route this rank's share of the (replicated) tokens.
  std::vector<float> lg(share * experts), rows(share * hidden);
  loadRows(dtype, static_cast<const char *>(logits) + first * experts * elem,
           share * experts, lg.data());
  loadRows(dtype, static_cast<const char *>(x) + first * hidden * elem,
           share * hidden, rows.data());
  std::vector<Choice> choices;
  route(lg.data(), share, experts, top_k, normalize, first, choices);

  // Counts first: every rank learns every rank's per-expert counts, so the
  // capacity cut is the same everywhere without a second exchange.
  std::vector<int64_t> mine(experts, 0), counts(ranks * experts);
  for (const Choice &c : choices)
    ++mine[c.expert];
  PARC_RT_RETURN_IF_ERROR(parc_rt_all_gather(comm, mine.data(), counts.data(),
                                             experts, PARC_RT_I64));
  std::vector<int64_t> kept = keptCounts(counts, ranks, experts, capacity);

  // Permute: kept pairs ordered by destination rank, then expert, then
  // token; each row carries its local expert index in a side channel.
  LayerStats s;
  s.capacity = capacity;
  s.perExpert.assign(experts, 0);
  s.perRank.assign(ranks, 0);
  for (int64_t r = 0; r < ranks; ++r)
    for (int64_t e = 0; e < experts; ++e) {
      s.perExpert[e] += counts[r * experts + e];
      s.perRank[e / local] += kept[r * experts + e];
      s.dropped += counts[r * experts + e] - kept[r * experts + e];
    }
  std::vector<const Choice *> sendList;
  {
    std::vector<int64_t> seen(experts, 0);
    std::vector<const Choice *> keptChoices;
    for (const Choice &c : choices)
      if (seen[c.expert]++ < kept[me * experts + c.expert])
        keptChoices.push_back(&c);
    std::stable_sort(
        keptChoices.begin(), keptChoices.end(),
        [](const Choice *a, const Choice *b) { return a->expert < b->expert; });
    sendList = std::move(keptChoices);
  }
  const int64_t nSend = (int64_t)sendList.size();
  std::vector<float> sendRows(nSend * hidden);
  std::vector<int64_t> sendExpert(nSend);
  for (int64_t i = 0; i < nSend; ++i) {
    const Choice &c = *sendList[i];
    std::copy_n(rows.data() + (c.token - first) * hidden, hidden,
                sendRows.data() + i * hidden);
    sendExpert[i] = c.expert % local;
  }
  std::vector<int64_t> sendCounts(ranks, 0), recvCounts(ranks, 0),
      sendDispl(ranks, 0), recvDispl(ranks, 0);
  for (int64_t r = 0; r < ranks; ++r)
    for (int64_t j = 0; j < local; ++j) {
      sendCounts[r] += kept[me * experts + r * local + j];
      recvCounts[r] += kept[r * experts + me * local + j];
    }
  for (int64_t r = 1; r < ranks; ++r) {
    sendDispl[r] = sendDispl[r - 1] + sendCounts[r - 1];
    recvDispl[r] = recvDispl[r - 1] + recvCounts[r - 1];
  }
  const int64_t nRecv = recvDispl[ranks - 1] + recvCounts[ranks - 1];
  auto scaled = [&](std::vector<int64_t> v, int64_t by) {
    for (int64_t &i : v)
      i *= by;
    return v;
  };

  // Dispatch: rows, and which local expert each is for.
  std::vector<float> recvRows(nRecv * hidden);
  std::vector<int64_t> recvExpert(nRecv);
  PARC_RT_RETURN_IF_ERROR(parc_rt_all_to_all_v(
      comm, sendExpert.data(), sendCounts.data(), sendDispl.data(),
      recvExpert.data(), recvCounts.data(), recvDispl.data(), PARC_RT_I64));
  PARC_RT_RETURN_IF_ERROR(parc_rt_all_to_all_v(
      comm, sendRows.data(), scaled(sendCounts, hidden).data(),
      scaled(sendDispl, hidden).data(), recvRows.data(),
      scaled(recvCounts, hidden).data(), scaled(recvDispl, hidden).data(),
      PARC_RT_F32));

  std::vector<float> computed;
  ExpertWeights w{dtype, fc1, fc2, fc3, hidden, ffn, activation};
  runExperts(w, local, recvRows, recvExpert, computed);

  // Combine: results return along the reverse routes, then are summed into
  // this rank's rows in expert order (sendList is sorted by expert).
  std::vector<float> back(nSend * hidden);
  PARC_RT_RETURN_IF_ERROR(parc_rt_all_to_all_v(
      comm, computed.data(), scaled(recvCounts, hidden).data(),
      scaled(recvDispl, hidden).data(), back.data(),
      scaled(sendCounts, hidden).data(), scaled(sendDispl, hidden).data(),
      PARC_RT_F32));
  std::vector<float> acc(share * hidden, 0.0f);
  for (int64_t i = 0; i < nSend; ++i) {
    const Choice &c = *sendList[i];
    float *dst = acc.data() + (c.token - first) * hidden;
    for (int64_t j = 0; j < hidden; ++j)
      dst[j] += c.weight * back[i * hidden + j];
  }
  std::vector<char> part(share * hidden * elem);
  storeRows(dtype, acc.data(), share * hidden, part.data());
  PARC_RT_RETURN_IF_ERROR(
      parc_rt_all_gather(comm, part.data(), y, share * hidden, dtype));
  s.bytesSent = (nSend + nRecv) * hidden * (int64_t)sizeof(float) +
                nSend * (int64_t)sizeof(int64_t);
  record(layer, std::move(s));
  return PARC_RT_OK;
}

} // extern "C"
