//===- moe.cu - sparse mixture of experts (cuda) --------------------------===//
//
// The cpu backend's algorithm on the device: a routing kernel (softmax and
// top-k per token, one thread per token), then the token permutation: the
// chosen (token, expert) pairs grouped by expert with the capacity cut,
// built on the host from the routed expert ids (it is data-dependent and
// small: tokens x top_k integers), a gather kernel that copies each pair's
// row into expert order, two or three cuBLAS GEMMs per expert that was
// chosen at all (parc_rt_gemm), an activation kernel, and a combine kernel
// that sums each token's pairs in expert order, weighted.
//
// Expert parallelism runs the same kernels as separate calls the compiler
// places around its all_to_all_v's (NCCL grouped send/recv):
// parc_rt_moe_route, parc_rt_moe_experts and parc_rt_moe_combine here, the
// row scatter of parc_rt_moe_permute, whose host-side plan is shared with
// the cpu backend (../moe_ep.cpp).
//
//===----------------------------------------------------------------------===//

#include "../backend.h"
#include "../device.h"
#include "../moe_report.h"
#include "kernels.cuh"

#include <algorithm>
#include <type_traits>
#include <vector>

using namespace parc::rt;
using namespace parc::rt::cuda;

namespace {

/// Per token: softmax of the router row, the top-k experts (ties: lower
/// index), their weights renormalised if asked.
template <parc_rt_dtype_t D>
__global__ void routeKernel(const typename Dev<D>::Storage *logits,
                            int64_t tokens, int64_t experts, int64_t k,
                            int normalize, int64_t *ids, float *weights) {
  for (int64_t t = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; t < tokens;
       t += int64_t(gridDim.x) * blockDim.x) {
    const typename Dev<D>::Storage *row = logits + t * experts;
    float mx = -FLT_MAX;
    for (int64_t e = 0; e < experts; ++e)
      mx = fmaxf(mx, float(Dev<D>::load(row[e])));
    float sum = 0;
    for (int64_t e = 0; e < experts; ++e)
      sum += expf(float(Dev<D>::load(row[e])) - mx);
    float total = 0;
    for (int64_t j = 0; j < k; ++j) {
      // The j-th largest: the best not chosen yet (chosen ones are earlier).
      int64_t best = -1;
      float bestP = -1;
      for (int64_t e = 0; e < experts; ++e) {
        bool taken = false;
        for (int64_t i = 0; i < j; ++i)
          taken |= ids[t * k + i] == e;
        float p = expf(float(Dev<D>::load(row[e])) - mx) / sum;
        if (!taken && p > bestP) {
          best = e;
          bestP = p;
        }
      }
      ids[t * k + j] = best;
      weights[t * k + j] = bestP;
      total += bestP;
    }
    if (normalize)
      for (int64_t j = 0; j < k; ++j)
        weights[t * k + j] /= total;
  }
}

/// rows[r] = x[token[r]]: the pairs' rows in expert order.
template <typename S>
__global__ void gatherRowsKernel(const S *x, const int64_t *token, S *rows,
                                 int64_t n, int64_t hidden) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
       i < n * hidden; i += int64_t(gridDim.x) * blockDim.x)
    rows[i] = x[token[i / hidden] * hidden + i % hidden];
}

/// a = act(a) (* b when gated).
template <parc_rt_dtype_t D>
__global__ void activateKernel(typename Dev<D>::Storage *a,
                               const typename Dev<D>::Storage *b, int64_t n,
                               int act) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x) {
    float v = float(Dev<D>::load(a[i]));
    switch (act) {
    case PARC_RT_MOE_SILU:
      v = v / (1.0f + expf(-v));
      break;
    case PARC_RT_MOE_GELU:
      v = 0.5f * v * (1.0f + erff(v * 0.70710678118654752f));
      break;
    case PARC_RT_MOE_RELU:
      v = fmaxf(v, 0.0f);
      break;
    default:
      break;
    }
    if (b)
      v *= float(Dev<D>::load(b[i]));
    a[i] = Dev<D>::store(v);
  }
}

/// y[t] = sum over the token's kept pairs (in expert order) of weight *
/// out[pair row]; tokens with no kept pair get zeros.
template <parc_rt_dtype_t D>
__global__ void
combineKernel(const typename Dev<D>::Storage *out, const int64_t *start,
              const int64_t *rows, const int64_t *slot, const float *weights,
              typename Dev<D>::Storage *y, int64_t tokens, int64_t hidden) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
       i < tokens * hidden; i += int64_t(gridDim.x) * blockDim.x) {
    int64_t t = i / hidden, h = i % hidden;
    float acc = 0;
    for (int64_t p = start[t]; p < start[t + 1]; ++p)
      acc += weights[slot[p]] * float(Dev<D>::load(out[rows[p] * hidden + h]));
    y[i] = Dev<D>::store(acc);
  }
}

/// counts[e] = how many of the ids are e.
__global__ void countKernel(const int64_t *ids, int64_t n,
                            unsigned long long *counts) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n;
       i += int64_t(gridDim.x) * blockDim.x)
    atomicAdd(counts + ids[i], 1ull);
}

/// rows[pairRows[p]] = x[p / k] in f32, for kept pairs.
template <parc_rt_dtype_t D>
__global__ void scatterRowsKernel(const typename Dev<D>::Storage *x,
                                  const int64_t *pairRows, float *rows,
                                  int64_t pairs, int64_t k, int64_t hidden) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
       i < pairs * hidden; i += int64_t(gridDim.x) * blockDim.x) {
    int64_t p = i / hidden, h = i % hidden, r = pairRows[p];
    if (r >= 0)
      rows[r * hidden + h] = float(Dev<D>::load(x[(p / k) * hidden + h]));
  }
}

/// y[t] = sum over the token's kept pairs, in row (= expert) order, of
/// weight * results[row].
template <parc_rt_dtype_t D>
__global__ void unpermuteKernel(const float *results, const int64_t *pairRows,
                                const float *weights,
                                typename Dev<D>::Storage *y, int64_t tokens,
                                int64_t hidden, int64_t k) {
  for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x;
       i < tokens * hidden; i += int64_t(gridDim.x) * blockDim.x) {
    int64_t t = i / hidden, h = i % hidden, last = -1;
    float acc = 0;
    for (int64_t step = 0; step < k; ++step) {
      // The next pair by row: k is small, a selection is enough.
      int64_t best = -1;
      for (int64_t j = 0; j < k; ++j) {
        int64_t r = pairRows[t * k + j];
        if (r > last && (best < 0 || r < pairRows[t * k + best]))
          best = j;
      }
      if (best < 0)
        break;
      last = pairRows[t * k + best];
      acc += weights[t * k + best] * results[last * hidden + h];
    }
    y[i] = Dev<D>::store(acc);
  }
}

/// Device scratch freed when the call returns, on every path.
struct Scratch {
  State *s;
  std::vector<void *> ptrs;
  ~Scratch() {
    for (void *p : ptrs)
      scratchFree(s, p);
  }
  template <typename T>
  parc_rt_status_t get(size_t count, const char *op, T **out) {
    void *p = nullptr;
    PARC_RT_RETURN_IF_ERROR(
        scratchAlloc(s, std::max<size_t>(count, 1) * sizeof(T), op, &p));
    ptrs.push_back(p);
    *out = static_cast<T *>(p);
    return PARC_RT_OK;
  }
};

template <parc_rt_dtype_t D>
parc_rt_status_t
moeTyped(State *s, const void *x, const void *logits, const void *fc1,
         const void *fc2, const void *fc3, void *y, int64_t tokens,
         int64_t hidden, int64_t ffn, int64_t experts, int64_t k, int normalize,
         parc_rt_moe_activation_t act, int64_t capacity, const char *layer) {
  const char *op = "moe";
  using S = typename Dev<D>::Storage;
  const int64_t pairs = tokens * k;
  Scratch scratch{s, {}};
  int64_t *ids = nullptr;
  float *weights = nullptr;
  PARC_RT_RETURN_IF_ERROR(scratch.get(pairs, op, &ids));
  PARC_RT_RETURN_IF_ERROR(scratch.get(pairs, op, &weights));
  routeKernel<D><<<gridFor(tokens, 128), 128, 0, s->compute>>>(
      static_cast<const S *>(logits), tokens, experts, k, normalize, ids,
      weights);
  PARC_RT_RETURN_IF_ERROR(launched(s, op));

  // The permutation: pairs by expert (token order within), capacity cut.
  std::vector<int64_t> hostIds(pairs);
  PARC_CUDA_RETURN_IF_ERROR(cudaMemcpyAsync(hostIds.data(), ids,
                                            pairs * sizeof(int64_t),
                                            cudaMemcpyDeviceToHost, s->compute),
                            op, "routing ids");
  PARC_CUDA_RETURN_IF_ERROR(cudaStreamSynchronize(s->compute), op, "routing");
  MoeLayerStats stats;
  stats.capacity = capacity;
  stats.perExpert.assign(experts, 0);
  std::vector<std::vector<int64_t>> byExpert(experts); // pair slots
  for (int64_t p = 0; p < pairs; ++p) {
    int64_t e = hostIds[p];
    if (e < 0 || e >= experts)
      return fail(PARC_RT_INTERNAL, "%s: routed to expert %lld", op,
                  (long long)e);
    ++stats.perExpert[e];
    if (capacity && int64_t(byExpert[e].size()) >= capacity) {
      ++stats.dropped;
      continue;
    }
    byExpert[e].push_back(p);
  }
  std::vector<int64_t> token, slotOfRow, offset(experts + 1, 0);
  for (int64_t e = 0; e < experts; ++e) {
    offset[e + 1] = offset[e] + int64_t(byExpert[e].size());
    for (int64_t p : byExpert[e]) {
      token.push_back(p / k);
      slotOfRow.push_back(p);
    }
  }
  const int64_t n = offset[experts];
  stats.perRank = {n};
  // Each token's rows, in expert order (rows are already expert-sorted).
  std::vector<int64_t> start(tokens + 1, 0), rowsOf(n), slotOf(n);
  for (int64_t r = 0; r < n; ++r)
    ++start[token[r] + 1];
  for (int64_t t = 0; t < tokens; ++t)
    start[t + 1] += start[t];
  std::vector<int64_t> fill(start.begin(), start.end() - 1);
  for (int64_t r = 0; r < n; ++r) {
    int64_t at = fill[token[r]]++;
    rowsOf[at] = r;
    slotOf[at] = slotOfRow[r];
  }
  int64_t *dToken = nullptr, *dStart = nullptr, *dRows = nullptr,
          *dSlot = nullptr;
  PARC_RT_RETURN_IF_ERROR(scratch.get(n, op, &dToken));
  PARC_RT_RETURN_IF_ERROR(scratch.get(tokens + 1, op, &dStart));
  PARC_RT_RETURN_IF_ERROR(scratch.get(n, op, &dRows));
  PARC_RT_RETURN_IF_ERROR(scratch.get(n, op, &dSlot));
  // Synchronous copies: the host vectors die with this call.
  PARC_CUDA_RETURN_IF_ERROR(cudaMemcpy(dToken, token.data(),
                                       n * sizeof(int64_t),
                                       cudaMemcpyHostToDevice),
                            op, "permutation");
  PARC_CUDA_RETURN_IF_ERROR(cudaMemcpy(dStart, start.data(),
                                       (tokens + 1) * sizeof(int64_t),
                                       cudaMemcpyHostToDevice),
                            op, "permutation");
  PARC_CUDA_RETURN_IF_ERROR(cudaMemcpy(dRows, rowsOf.data(),
                                       n * sizeof(int64_t),
                                       cudaMemcpyHostToDevice),
                            op, "permutation");
  PARC_CUDA_RETURN_IF_ERROR(cudaMemcpy(dSlot, slotOf.data(),
                                       n * sizeof(int64_t),
                                       cudaMemcpyHostToDevice),
                            op, "permutation");

  S *rows = nullptr, *a = nullptr, *bgate = nullptr, *out = nullptr;
  PARC_RT_RETURN_IF_ERROR(scratch.get(n * hidden, op, &rows));
  PARC_RT_RETURN_IF_ERROR(scratch.get(n * ffn, op, &a));
  if (fc3)
    PARC_RT_RETURN_IF_ERROR(scratch.get(n * ffn, op, &bgate));
  PARC_RT_RETURN_IF_ERROR(scratch.get(n * hidden, op, &out));
  if (n) {
    gatherRowsKernel<S><<<gridFor(n * hidden), 256, 0, s->compute>>>(
        static_cast<const S *>(x), dToken, rows, n, hidden);
    PARC_RT_RETURN_IF_ERROR(launched(s, op));
  }
  const S *w1 = static_cast<const S *>(fc1), *w2 = static_cast<const S *>(fc2),
          *w3 = static_cast<const S *>(fc3);
  for (int64_t e = 0; e < experts; ++e) {
    const int64_t m = offset[e + 1] - offset[e], r0 = offset[e];
    if (m == 0)
      continue; // an expert nobody chose costs nothing
    PARC_RT_RETURN_IF_ERROR(
        parc_rt_gemm(D, rows + r0 * hidden, w1 + e * hidden * ffn, nullptr, 0,
                     nullptr, a + r0 * ffn, m, ffn, hidden, 0, 0, 1.0f, 0.0f));
    if (w3)
      PARC_RT_RETURN_IF_ERROR(parc_rt_gemm(
          D, rows + r0 * hidden, w3 + e * hidden * ffn, nullptr, 0, nullptr,
          bgate + r0 * ffn, m, ffn, hidden, 0, 0, 1.0f, 0.0f));
    activateKernel<D><<<gridFor(m * ffn), 256, 0, s->compute>>>(
        a + r0 * ffn, w3 ? bgate + r0 * ffn : nullptr, m * ffn, int(act));
    PARC_RT_RETURN_IF_ERROR(launched(s, op));
    PARC_RT_RETURN_IF_ERROR(parc_rt_gemm(D, a + r0 * ffn, w2 + e * ffn * hidden,
                                         nullptr, 0, nullptr, out + r0 * hidden,
                                         m, hidden, ffn, 0, 0, 1.0f, 0.0f));
  }
  combineKernel<D><<<gridFor(tokens * hidden), 256, 0, s->compute>>>(
      out, dStart, dRows, dSlot, weights, static_cast<S *>(y), tokens, hidden);
  PARC_RT_RETURN_IF_ERROR(launched(s, op));
  recordMoeStats(layer, std::move(stats));
  // Scratch is stream-ordered: freeing it here is safe for the kernels
  // queued above.
  return PARC_RT_OK;
}

} // namespace

parc_rt_status_t parc::rt::moeScatterRows(parc_rt_dtype_t dtype, const void *x,
                                          const int64_t *pairRows, float *rows,
                                          int64_t tokens, int64_t topK,
                                          int64_t hidden) {
  const char *op = "moe_permute";
  const int64_t pairs = tokens * topK;
  if (pairs == 0)
    return PARC_RT_OK;
  State *s = nullptr;
  PARC_RT_RETURN_IF_ERROR(getState(op, &s));
  const unsigned grid = gridFor(pairs * hidden);
  switch (dtype) {
  case PARC_RT_F32:
    scatterRowsKernel<PARC_RT_F32><<<grid, 256, 0, s->compute>>>(
        static_cast<const float *>(x), pairRows, rows, pairs, topK, hidden);
    break;
  case PARC_RT_F16:
    scatterRowsKernel<PARC_RT_F16><<<grid, 256, 0, s->compute>>>(
        static_cast<const uint16_t *>(x), pairRows, rows, pairs, topK, hidden);
    break;
  case PARC_RT_BF16:
    scatterRowsKernel<PARC_RT_BF16><<<grid, 256, 0, s->compute>>>(
        static_cast<const uint16_t *>(x), pairRows, rows, pairs, topK, hidden);
    break;
  default:
    return unsupportedDtype(op, dtype);
  }
  return launched(s, op);
}

parc_rt_status_t parc::rt::runMoe(const MoeCall &c) {
  const char *op = "moe";
  if (c.tokens == 0)
    return PARC_RT_OK;
  State *s = nullptr;
  PARC_RT_RETURN_IF_ERROR(getState(op, &s));
  auto run = [&](auto tag) {
    return moeTyped<decltype(tag)::value>(
        s, c.x, c.logits, c.fc1, c.fc2, c.fc3, c.y, c.tokens, c.hidden, c.ffn,
        c.experts, c.topK, int(c.normalize), c.activation, c.capacity,
        c.layer);
  };
  switch (c.dtype) {
  case PARC_RT_F32:
    return run(std::integral_constant<parc_rt_dtype_t, PARC_RT_F32>{});
  case PARC_RT_F16:
    return run(std::integral_constant<parc_rt_dtype_t, PARC_RT_F16>{});
  default:
    return run(std::integral_constant<parc_rt_dtype_t, PARC_RT_BF16>{});
  }
}

parc_rt_status_t parc::rt::runMoeRoute(parc_rt_dtype_t dtype,
                                       const void *logits, int64_t *ids,
                                       float *w, int64_t *counts,
                                       int64_t tokens, int64_t experts,
                                       int64_t top_k, bool normalize) {
  const char *op = "moe_route";
  State *s = nullptr;
  PARC_RT_RETURN_IF_ERROR(getState(op, &s));
  PARC_CUDA_RETURN_IF_ERROR(
      cudaMemsetAsync(counts, 0, experts * sizeof(int64_t), s->compute), op,
      "counts");
  if (tokens == 0)
    return PARC_RT_OK;
  const unsigned grid = gridFor(tokens, 128);
  switch (dtype) {
  case PARC_RT_F32:
    routeKernel<PARC_RT_F32><<<grid, 128, 0, s->compute>>>(
        static_cast<const float *>(logits), tokens, experts, top_k, normalize,
        ids, w);
    break;
  case PARC_RT_F16:
    routeKernel<PARC_RT_F16><<<grid, 128, 0, s->compute>>>(
        static_cast<const uint16_t *>(logits), tokens, experts, top_k,
        normalize, ids, w);
    break;
  case PARC_RT_BF16:
    routeKernel<PARC_RT_BF16><<<grid, 128, 0, s->compute>>>(
        static_cast<const uint16_t *>(logits), tokens, experts, top_k,
        normalize, ids, w);
    break;
  default:
    return unsupportedDtype(op, dtype);
  }
  PARC_RT_RETURN_IF_ERROR(launched(s, op));
  countKernel<<<gridFor(tokens * top_k), 256, 0, s->compute>>>(
      ids, tokens * top_k, reinterpret_cast<unsigned long long *>(counts));
  return launched(s, op);
}

parc_rt_status_t parc::rt::runMoeExperts(
    parc_rt_dtype_t dtype, const std::vector<MoeRun> &runs, const void *rows,
    const void *fc1, const void *fc2, const void *fc3, void *out, int64_t,
    int64_t hidden, int64_t ffn, parc_rt_moe_activation_t activation) {
  const char *op = "moe_experts";
  State *s = nullptr;
  PARC_RT_RETURN_IF_ERROR(getState(op, &s));
  const int64_t n = runs.empty() ? 0 : runs.back().first + runs.back().count;
  if (n == 0)
    return PARC_RT_OK;
  // Rows arrive in f32; the GEMMs run in the weights' dtype, as the local
  // kernel's do.
  const size_t elem = parc_rt_dtype_size(dtype);
  Scratch scratch{s, {}};
  char *x = static_cast<char *>(const_cast<void *>(rows)), *y = static_cast<char *>(out);
  if (dtype != PARC_RT_F32) {
    PARC_RT_RETURN_IF_ERROR(scratch.get(n * hidden * elem, op, &x));
    PARC_RT_RETURN_IF_ERROR(scratch.get(n * hidden * elem, op, &y));
    // The backend's cast, not the entry point: the profile files this
    // node under its first GEMM, as before.
    PARC_RT_RETURN_IF_ERROR(runCast(PARC_RT_F32, rows, dtype, x, n * hidden));
  }
  char *a = nullptr, *g = nullptr;
  PARC_RT_RETURN_IF_ERROR(scratch.get(n * ffn * elem, op, &a));
  if (fc3)
    PARC_RT_RETURN_IF_ERROR(scratch.get(n * ffn * elem, op, &g));
  auto weight = [&](const void *base, int64_t e, int64_t count) {
    return static_cast<const char *>(base) + e * count * elem;
  };
  for (const MoeRun &run : runs) {
    const int64_t m = run.count, r0 = run.first;
    char *xr = x + r0 * hidden * elem, *ar = a + r0 * ffn * elem,
         *gr = g ? g + r0 * ffn * elem : nullptr;
    PARC_RT_RETURN_IF_ERROR(parc_rt_gemm(dtype, xr,
                                         weight(fc1, run.expert, hidden * ffn),
                                         nullptr, 0, nullptr, ar, m, ffn,
                                         hidden, 0, 0, 1.0f, 0.0f));
    if (fc3)
      PARC_RT_RETURN_IF_ERROR(parc_rt_gemm(
          dtype, xr, weight(fc3, run.expert, hidden * ffn), nullptr, 0,
          nullptr, gr, m, ffn, hidden, 0, 0, 1.0f, 0.0f));
    const unsigned grid = gridFor(m * ffn);
    switch (dtype) {
    case PARC_RT_F32:
      activateKernel<PARC_RT_F32><<<grid, 256, 0, s->compute>>>(
          reinterpret_cast<float *>(ar), reinterpret_cast<const float *>(gr),
          m * ffn, int(activation));
      break;
    case PARC_RT_F16:
      activateKernel<PARC_RT_F16><<<grid, 256, 0, s->compute>>>(
          reinterpret_cast<uint16_t *>(ar),
          reinterpret_cast<const uint16_t *>(gr), m * ffn, int(activation));
      break;
    default:
      activateKernel<PARC_RT_BF16><<<grid, 256, 0, s->compute>>>(
          reinterpret_cast<uint16_t *>(ar),
          reinterpret_cast<const uint16_t *>(gr), m * ffn, int(activation));
      break;
    }
    PARC_RT_RETURN_IF_ERROR(launched(s, op));
    PARC_RT_RETURN_IF_ERROR(parc_rt_gemm(
        dtype, ar, weight(fc2, run.expert, ffn * hidden), nullptr, 0, nullptr,
        y + r0 * hidden * elem, m, hidden, ffn, 0, 0, 1.0f, 0.0f));
  }
  if (dtype != PARC_RT_F32)
    PARC_RT_RETURN_IF_ERROR(parc_rt_cast(dtype, y, PARC_RT_F32, out, n * hidden));
  return PARC_RT_OK;
}

parc_rt_status_t parc::rt::runMoeCombine(parc_rt_dtype_t dtype,
                                         const float *res,
                                         const int64_t *rowsOf, const float *w,
                                         void *y, int64_t tokens,
                                         int64_t hidden, int64_t top_k) {
  const char *op = "moe_combine";
  State *s = nullptr;
  PARC_RT_RETURN_IF_ERROR(getState(op, &s));
  const unsigned grid = gridFor(tokens * hidden);
  switch (dtype) {
  case PARC_RT_F32:
    unpermuteKernel<PARC_RT_F32><<<grid, 256, 0, s->compute>>>(
        res, rowsOf, w, static_cast<float *>(y), tokens, hidden, top_k);
    break;
  case PARC_RT_F16:
    unpermuteKernel<PARC_RT_F16><<<grid, 256, 0, s->compute>>>(
        res, rowsOf, w, static_cast<uint16_t *>(y), tokens, hidden, top_k);
    break;
  case PARC_RT_BF16:
    unpermuteKernel<PARC_RT_BF16><<<grid, 256, 0, s->compute>>>(
        res, rowsOf, w, static_cast<uint16_t *>(y), tokens, hidden, top_k);
    break;
  default:
    return unsupportedDtype(op, dtype);
  }
  return launched(s, op);
}
