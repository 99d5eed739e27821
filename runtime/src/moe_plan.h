//===- moe_plan.h - expert-parallel MoE: host-side plan ---------*- C++ -*-===//
//
// What the cpu and cuda backends share of an expert-parallel MoE layer:
// the dispatch plan (capacity cut, token permutation, receive layout) is
// data-dependent and small, so it is computed on the host by
// parc_rt_moe_permute (moe_ep.cpp) for both; each backend supplies only
// the row movement and the compute kernels declared here.
//
//===----------------------------------------------------------------------===//
#ifndef PARC_RUNTIME_MOE_PLAN_H
#define PARC_RUNTIME_MOE_PLAN_H

#include "parc/runtime.h"

#include <cstdint>
#include <vector>

namespace parc::rt {

/// Rows of one sender for one local expert: rows [first, first + count) of
/// what a rank received.
struct MoeRun {
  int64_t expert, first, count;
};

/// parc_rt_moe_experts' checks and plan: the runs of the received rows,
/// sender by sender, local expert by local expert, from `layout`
/// ([senders, local] counts in kernel memory). Fails on a bad dtype or
/// size, or a layout that holds more than `maxRows` rows.
parc_rt_status_t moeExpertRuns(parc_rt_dtype_t dtype, const void *layout,
                               int64_t maxRows, int64_t senders, int64_t local,
                               int64_t hidden, int64_t ffn,
                               std::vector<MoeRun> &runs);

} // namespace parc::rt

#endif // PARC_RUNTIME_MOE_PLAN_H
