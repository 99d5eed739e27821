//===- moe_ep.cpp - expert-parallel MoE: dispatch plan and all_to_all_v ---===//
//
// Backend-independent: counts are small, so they are read to the host
// (copyToHost), planned there and written back (copyToDevice); payloads
// move through the backend's parc_rt_all_to_all_v and its row kernel.
//
//===----------------------------------------------------------------------===//

#include "backend.h"
#include "device.h"
#include "moe_report.h"
#include "status.h"

#include "parc/runtime.h"

#include <algorithm>
#include <vector>

using namespace parc::rt;

namespace {

parc_rt_status_t readCounts(const void *buf, int64_t n, std::vector<int64_t> &out) {
  out.assign(n, 0);
  return copyToHost(out.data(), buf, n * sizeof(int64_t));
}

std::vector<int64_t> displacements(const std::vector<int64_t> &counts,
                                   int64_t scale) {
  std::vector<int64_t> d(counts.size(), 0);
  for (size_t i = 1; i < counts.size(); ++i)
    d[i] = d[i - 1] + counts[i - 1] * scale;
  return d;
}

} // namespace

parc_rt_status_t parc::rt::moeExpertRuns(parc_rt_dtype_t dtype,
                                         const void *layout, int64_t maxRows,
                                         int64_t senders, int64_t local,
                                         int64_t hidden, int64_t ffn,
                                         std::vector<MoeRun> &runs) {
  const char *op = "moe_experts";
  if (dtype != PARC_RT_F32 && dtype != PARC_RT_F16 && dtype != PARC_RT_BF16)
    return fail(PARC_RT_UNSUPPORTED, "%s: dtype %s is not supported", op,
                parc_rt_dtype_name(dtype));
  if (maxRows < 0 || senders < 1 || local < 1 || hidden < 1 || ffn < 1)
    return fail(PARC_RT_INVALID_ARGUMENT,
                "%s: bad sizes (rows %lld, senders %lld, local experts %lld, "
                "hidden %lld, ffn %lld)",
                op, (long long)maxRows, (long long)senders, (long long)local,
                (long long)hidden, (long long)ffn);
  std::vector<int64_t> counts;
  PARC_RT_RETURN_IF_ERROR(readCounts(layout, senders * local, counts));
  runs.clear();
  int64_t first = 0;
  for (int64_t s = 0; s < senders; ++s)
    for (int64_t e = 0; e < local; ++e) {
      int64_t n = counts[s * local + e];
      if (n < 0)
        return fail(PARC_RT_INVALID_ARGUMENT, "%s: negative count %lld", op,
                    (long long)n);
      if (n > 0)
        runs.push_back({e, first, n});
      first += n;
    }
  if (first > maxRows)
    return fail(PARC_RT_INVALID_ARGUMENT,
                "%s: the layout holds %lld rows, the buffer %lld", op,
                (long long)first, (long long)maxRows);
  return PARC_RT_OK;
}

extern "C" {

parc_rt_status_t parc_rt_all_to_all_v_slices_start(
    parc_rt_comm_t *comm, const void *send, const void *send_counts,
    int64_t send_slices, void *recv, const void *recv_counts,
    int64_t recv_slices, int64_t slice_elems, parc_rt_dtype_t dtype,
    parc_rt_request_t **out_request) {
  const char *op = "all_to_all_v";
  const int64_t ranks = parc_rt_comm_size(comm);
  if (ranks < 1)
    return fail(PARC_RT_INVALID_ARGUMENT, "%s: null communicator", op);
  if (send_slices < 0 || recv_slices < 0 || slice_elems < 0)
    return fail(PARC_RT_INVALID_ARGUMENT, "%s: negative sizes", op);
  // The plan's counts: small, read to the host (the backend copies the
  // element counts and displacements it is given).
  std::vector<int64_t> out, in;
  PARC_RT_RETURN_IF_ERROR(readCounts(send_counts, ranks, out));
  PARC_RT_RETURN_IF_ERROR(readCounts(recv_counts, ranks, in));
  auto check = [&](const std::vector<int64_t> &counts, const char *what,
                   int64_t room) {
    int64_t total = 0;
    for (int64_t c : counts) {
      if (c < 0)
        return fail(PARC_RT_INVALID_ARGUMENT, "%s: negative %s count %lld", op,
                    what, (long long)c);
      total += c;
    }
    if (total > room)
      return fail(PARC_RT_INVALID_ARGUMENT,
                  "%s: %s counts total %lld slices, the buffer holds %lld", op,
                  what, (long long)total, (long long)room);
    return PARC_RT_OK;
  };
  PARC_RT_RETURN_IF_ERROR(check(out, "send", send_slices));
  PARC_RT_RETURN_IF_ERROR(check(in, "receive", recv_slices));
  std::vector<int64_t> sendElems(ranks), recvElems(ranks);
  for (int64_t j = 0; j < ranks; ++j) {
    sendElems[j] = out[j] * slice_elems;
    recvElems[j] = in[j] * slice_elems;
  }
  return parc_rt_all_to_all_v_start(
      comm, send, sendElems.data(), displacements(out, slice_elems).data(),
      recv, recvElems.data(), displacements(in, slice_elems).data(), dtype,
      out_request);
}

parc_rt_status_t parc_rt_all_to_all_v_slices(
    parc_rt_comm_t *comm, const void *send, const void *send_counts,
    int64_t send_slices, void *recv, const void *recv_counts,
    int64_t recv_slices, int64_t slice_elems, parc_rt_dtype_t dtype) {
  parc_rt_request_t *request = nullptr;
  PARC_RT_RETURN_IF_ERROR(parc_rt_all_to_all_v_slices_start(
      comm, send, send_counts, send_slices, recv, recv_counts, recv_slices,
      slice_elems, dtype, &request));
  return parc_rt_wait(request);
}

parc_rt_status_t parc_rt_moe_permute(
    parc_rt_comm_t *comm, parc_rt_dtype_t dtype, const void *x,
    const void *expert_ids, const void *counts, void *rows, void *send_counts,
    void *layout, void *pair_rows, void *recv_counts, int64_t tokens,
    int64_t hidden, int64_t experts, int64_t top_k, int64_t capacity,
    const char *layer) {
  const char *op = "moe_permute";
  const int64_t ranks = parc_rt_comm_size(comm), me = parc_rt_comm_rank(comm);
  if (ranks < 1)
    return fail(PARC_RT_INVALID_ARGUMENT, "%s: null communicator", op);
  if (tokens < 0 || hidden < 1 || top_k < 1 || experts < top_k ||
      experts % ranks || capacity < 0)
    return fail(PARC_RT_INVALID_ARGUMENT,
                "%s: bad sizes (tokens %lld, hidden %lld, experts %lld over "
                "%lld ranks, top_k %lld, capacity %lld)",
                op, (long long)tokens, (long long)hidden, (long long)experts,
                (long long)ranks, (long long)top_k, (long long)capacity);
  const int64_t local = experts / ranks, pairs = tokens * top_k;
  std::vector<int64_t> ids, all;
  PARC_RT_RETURN_IF_ERROR(readCounts(expert_ids, pairs, ids));
  PARC_RT_RETURN_IF_ERROR(readCounts(counts, ranks * experts, all));
  for (int64_t e : ids)
    if (e < 0 || e >= experts)
      return fail(PARC_RT_INVALID_ARGUMENT, "%s: expert id %lld out of [0, %lld)",
                  op, (long long)e, (long long)experts);

  // Capacity: each expert keeps its first pairs in (rank, token) order.
  std::vector<int64_t> kept(all);
  if (capacity > 0)
    for (int64_t e = 0; e < experts; ++e) {
      int64_t used = 0;
      for (int64_t r = 0; r < ranks; ++r) {
        int64_t &k = kept[r * experts + e];
        k = std::max<int64_t>(0, std::min(k, capacity - used));
        used += k;
      }
    }

  // The permutation: kept pairs by expert, token order within; experts are
  // contiguous per rank, so rows are also grouped by destination.
  std::vector<std::vector<int64_t>> byExpert(experts);
  for (int64_t p = 0; p < pairs; ++p)
    byExpert[ids[p]].push_back(p);
  std::vector<int64_t> pairRow(pairs, -1), sendTo(ranks, 0), recvLayout(ranks * local);
  int64_t next = 0;
  for (int64_t e = 0; e < experts; ++e) {
    const std::vector<int64_t> &mine = byExpert[e];
    if (int64_t(mine.size()) != all[me * experts + e])
      return fail(PARC_RT_INVALID_ARGUMENT,
                  "%s: this rank's count of expert %lld is %lld, its ids say "
                  "%zu",
                  op, (long long)e, (long long)all[me * experts + e],
                  mine.size());
    for (int64_t i = 0; i < kept[me * experts + e]; ++i)
      pairRow[mine[i]] = next++;
    sendTo[e / local] += kept[me * experts + e];
  }
  for (int64_t r = 0; r < ranks; ++r)
    for (int64_t j = 0; j < local; ++j)
      recvLayout[r * local + j] = kept[r * experts + me * local + j];

  MoeLayerStats stats;
  stats.capacity = capacity;
  stats.perExpert.assign(experts, 0);
  stats.perRank.assign(ranks, 0);
  int64_t received = 0;
  for (int64_t r = 0; r < ranks; ++r)
    for (int64_t e = 0; e < experts; ++e) {
      stats.perExpert[e] += all[r * experts + e];
      stats.perRank[e / local] += kept[r * experts + e];
      stats.dropped += all[r * experts + e] - kept[r * experts + e];
    }
  std::vector<int64_t> recvFrom(ranks, 0);
  for (int64_t r = 0; r < ranks; ++r)
    for (int64_t j = 0; j < local; ++j)
      recvFrom[r] += recvLayout[r * local + j];
  for (int64_t v : recvFrom)
    received += v;
  // Rows out and results back, as f32.
  stats.bytesSent = (next + received) * hidden * int64_t(sizeof(float));

  PARC_RT_RETURN_IF_ERROR(
      copyToDevice(pair_rows, pairRow.data(), pairs * sizeof(int64_t)));
  PARC_RT_RETURN_IF_ERROR(
      copyToDevice(send_counts, sendTo.data(), ranks * sizeof(int64_t)));
  PARC_RT_RETURN_IF_ERROR(
      copyToDevice(recv_counts, recvFrom.data(), ranks * sizeof(int64_t)));
  PARC_RT_RETURN_IF_ERROR(copyToDevice(layout, recvLayout.data(),
                                       recvLayout.size() * sizeof(int64_t)));
  PARC_RT_RETURN_IF_ERROR(moeScatterRows(dtype, x,
                                         static_cast<const int64_t *>(pair_rows),
                                         static_cast<float *>(rows), tokens,
                                         top_k, hidden));
  recordMoeStats(layer, std::move(stats));
  return PARC_RT_OK;
}

} // extern "C"
