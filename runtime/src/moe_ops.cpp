//===- moe_ops.cpp - the MoE entry points: checks, then the backend -------===//
//
// parc_rt_moe (the whole layer on one rank) and the expert-parallel steps
// around the all_to_all_v's (route, experts, combine; the permutation is
// moe_ep.cpp's). Both backends accept and reject the same calls here and
// compute them in backend.h's runMoe* functions.
//
//===----------------------------------------------------------------------===//

#include "backend.h"
#include "status.h"

using namespace parc::rt;

namespace {

parc_rt_status_t checkMoeDtype(const char *op, parc_rt_dtype_t dtype) {
  if (dtype != PARC_RT_F32 && dtype != PARC_RT_F16 && dtype != PARC_RT_BF16)
    return unsupportedDtype(op, dtype);
  return PARC_RT_OK;
}

parc_rt_status_t checkMoe(const MoeCall &c) {
  const char *op = "moe";
  PARC_RT_RETURN_IF_ERROR(checkMoeDtype(op, c.dtype));
  if (c.tokens < 0 || c.hidden < 1 || c.ffn < 1 || c.experts < 1 ||
      c.topK < 1 || c.topK > c.experts || c.capacity < 0)
    return fail(PARC_RT_INVALID_ARGUMENT,
                "%s: bad sizes (tokens %lld, hidden %lld, ffn %lld, experts "
                "%lld, top_k %lld, capacity %lld)",
                op, (long long)c.tokens, (long long)c.hidden,
                (long long)c.ffn, (long long)c.experts, (long long)c.topK,
                (long long)c.capacity);
  if (c.tokens && (!c.x || !c.logits || !c.fc1 || !c.fc2 || !c.y))
    return fail(PARC_RT_INVALID_ARGUMENT, "%s: a required buffer is null", op);
  return PARC_RT_OK;
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
  const MoeCall call{dtype,  x,      logits, fc1,   fc2,
                     fc3,    y,      tokens, hidden, ffn,
                     experts, top_k, normalize != 0, activation,
                     capacity, layer};
  PARC_RT_RETURN_IF_ERROR(checkMoe(call));
  return runMoe(call);
}

parc_rt_status_t parc_rt_moe_route(parc_rt_dtype_t dtype, const void *logits,
                                   void *expert_ids, void *weights,
                                   void *counts, int64_t tokens,
                                   int64_t experts, int64_t top_k,
                                   int normalize) {
  const char *op = "moe_route";
  PARC_RT_RETURN_IF_ERROR(checkMoeDtype(op, dtype));
  if (tokens < 0 || experts < 1 || top_k < 1 || top_k > experts)
    return fail(PARC_RT_INVALID_ARGUMENT,
                "%s: bad sizes (tokens %lld, experts %lld, top_k %lld)", op,
                (long long)tokens, (long long)experts, (long long)top_k);
  return runMoeRoute(dtype, logits, static_cast<int64_t *>(expert_ids),
                     static_cast<float *>(weights),
                     static_cast<int64_t *>(counts), tokens, experts, top_k,
                     normalize != 0);
}

parc_rt_status_t parc_rt_moe_experts(parc_rt_dtype_t dtype, const void *rows,
                                     const void *layout, const void *fc1,
                                     const void *fc2, const void *fc3,
                                     void *out, int64_t max_rows,
                                     int64_t senders, int64_t local_experts,
                                     int64_t hidden, int64_t ffn,
                                     parc_rt_moe_activation_t activation) {
  std::vector<MoeRun> runs;
  PARC_RT_RETURN_IF_ERROR(moeExpertRuns(dtype, layout, max_rows, senders,
                                        local_experts, hidden, ffn, runs));
  return runMoeExperts(dtype, runs, rows, fc1, fc2, fc3, out, local_experts,
                       hidden, ffn, activation);
}

parc_rt_status_t parc_rt_moe_combine(parc_rt_dtype_t dtype,
                                     const void *results,
                                     const void *pair_rows,
                                     const void *weights, void *y,
                                     int64_t tokens, int64_t hidden,
                                     int64_t top_k) {
  const char *op = "moe_combine";
  PARC_RT_RETURN_IF_ERROR(checkMoeDtype(op, dtype));
  if (tokens < 0 || hidden < 1 || top_k < 1)
    return fail(PARC_RT_INVALID_ARGUMENT, "%s: bad sizes", op);
  if (tokens == 0)
    return PARC_RT_OK;
  return runMoeCombine(dtype, static_cast<const float *>(results),
                       static_cast<const int64_t *>(pair_rows),
                       static_cast<const float *>(weights), y, tokens, hidden,
                       top_k);
}

} // extern "C"
