//===- CommTest.cpp - Collectives under mpirun (any number of ranks >= 2) -===//
//
// Every rank runs every test; expected values are computed from rank
// numbers. Run `Timeout.*` separately with PARC_RT_TIMEOUT_S=2: those tests
// deliberately leave collectives pending on some ranks.
//
//===----------------------------------------------------------------------===//

#include "MoeReference.h"
#include "TestUtil.h"

#include "mpi_process.h" // <mpi.h>, the C API only

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <thread>
#include <unistd.h>

using namespace parc::test;

namespace {

parc_rt_context_t *ctx = nullptr;

int rank() { return parc_rt_context_rank(ctx); }
int size() { return parc_rt_context_size(ctx); }
parc_rt_comm_t *world() { return parc_rt_context_world(ctx); }


// Expert parallelism: each rank holds experts/size experts and a share of
// the tokens; the steps the compiler places (route, counts all-gathered,
// permute, all_to_all_v out, experts, all_to_all_v back, combine, shares
// all-gathered) must give the dense reference, with and without a
// capacity that drops pairs.
void checkMoeEp(const MoeCase &c, uint32_t seed) {
  const int64_t T = c.tokens, H = c.hidden, F = c.ffn, E = c.experts,
                P = size(), local = E / P, S = T / P, K = c.topK;
  auto x = randomFloats(T * H, seed);
  auto logits = randomFloats(T * E, seed + 1, -3, 3);
  auto fc1 = randomFloats(E * H * F, seed + 2, -0.3f, 0.3f);
  auto fc2 = randomFloats(E * F * H, seed + 3, -0.3f, 0.3f);
  auto fc3 = randomFloats(E * H * F, seed + 4, -0.3f, 0.3f);
  const int64_t r = rank(), R = T * K;
  std::vector<int64_t> ids(S * K), counts(E), all(P * E), sendCounts(P),
      layout(P * local), pairRows(S * K), recvCounts(P), exchanged(P);
  std::vector<float> weights(S * K), rows(S * K * H), recv(R * H),
      out(R * H), back(S * K * H), mine(S * H), y(T * H, -7.0f);
  ASSERT_RT_OK(parc_rt_moe_route(PARC_RT_F32, logits.data() + r * S * E,
                                 ids.data(), weights.data(), counts.data(), S,
                                 E, K, c.normalize));
  ASSERT_RT_OK(parc_rt_all_gather(world(), counts.data(), all.data(), E,
                                  PARC_RT_I64));
  ASSERT_RT_OK(parc_rt_moe_permute(
      world(), PARC_RT_F32, x.data() + r * S * H, ids.data(), all.data(),
      rows.data(), sendCounts.data(), layout.data(), pairRows.data(),
      recvCounts.data(), S, H, E, K, c.capacity, "ep"));
  // The planned receive counts are what the members' send counts say.
  ASSERT_RT_OK(parc_rt_all_to_all(world(), sendCounts.data(), exchanged.data(),
                                  1, PARC_RT_I64));
  EXPECT_EQ(recvCounts, exchanged);
  // The dispatch started, the combine blocking: both with planned counts.
  parc_rt_request_t *dispatch = nullptr;
  ASSERT_RT_OK(parc_rt_all_to_all_v_slices_start(
      world(), rows.data(), sendCounts.data(), S * K, recv.data(),
      recvCounts.data(), R, H, PARC_RT_F32, &dispatch));
  ASSERT_RT_OK(parc_rt_wait(dispatch));
  ASSERT_RT_OK(parc_rt_moe_experts(
      PARC_RT_F32, recv.data(), layout.data(), fc1.data() + r * local * H * F,
      fc2.data() + r * local * F * H, fc3.data() + r * local * H * F,
      out.data(), R, P, local, H, F, PARC_RT_MOE_SILU));
  ASSERT_RT_OK(parc_rt_all_to_all_v_slices(world(), out.data(),
                                           recvCounts.data(), R, back.data(),
                                           sendCounts.data(), S * K, H,
                                           PARC_RT_F32));
  ASSERT_RT_OK(parc_rt_moe_combine(PARC_RT_F32, back.data(), pairRows.data(),
                                   weights.data(), mine.data(), S, H, K));
  ASSERT_RT_OK(parc_rt_all_gather(world(), mine.data(), y.data(), S * H,
                                  PARC_RT_F32));
  int64_t dropped = 0;
  EXPECT_TRUE(allClose(y, denseMoe(c, x, logits, fc1, fc2, fc3, dropped),
                       1e-5, 1e-5));
  if (c.capacity) {
    EXPECT_GT(dropped, 0);
  }
}

// all_to_all_v with planned counts: rank r sends j + 1 slices (value
// 100·r + i) to member j, so member j receives j + 1 from every sender.
TEST(AllToAllV, PlannedCounts) {
  const int64_t p = size(), r = rank();
  std::vector<int64_t> sendCounts(p), recvCounts(p, r + 1), send;
  for (int64_t j = 0; j < p; ++j) {
    sendCounts[j] = j + 1;
    for (int64_t i = 0; i <= j; ++i)
      send.push_back(100 * r + int64_t(send.size()));
  }
  std::vector<int64_t> recv(p * (r + 1) + 1, -1);
  ASSERT_RT_OK(parc_rt_all_to_all_v_slices(
      world(), send.data(), sendCounts.data(), int64_t(send.size()),
      recv.data(), recvCounts.data(), int64_t(recv.size()), 1, PARC_RT_I64));
  // Sender j's run for rank r starts after its runs for members < r.
  for (int64_t j = 0; j < p; ++j)
    for (int64_t i = 0; i <= r; ++i)
      EXPECT_EQ(recv[j * (r + 1) + i], 100 * j + r * (r + 1) / 2 + i);
  EXPECT_EQ(recv.back(), -1); // past the received total: untouched
}

// Counts that do not fit the buffer are an error, not an overrun.
TEST(AllToAllV, CountsOverTheBufferFail) {
  const int64_t p = size();
  std::vector<int64_t> counts(p, 2), send(2 * p), recv(2 * p - 1);
  EXPECT_RT_ERROR(parc_rt_all_to_all_v_slices(world(), send.data(),
                                              counts.data(), 2 * p, recv.data(),
                                              counts.data(), 2 * p - 1, 1,
                                              PARC_RT_I64),
                  PARC_RT_INVALID_ARGUMENT,
                  "all_to_all_v: receive counts total");
}

TEST(MoeEp, Top2MatchesDense) {
  checkMoeEp({4 * size(), 8, 16, 2 * size(), 2, true, true, 0}, 11);
}
TEST(MoeEp, CapacityDropsAsOneRankWould) {
  checkMoeEp({8 * size(), 8, 16, 2 * size(), 2, true, true, 3}, 12);
}

TEST(Comm, ContextAndWorld) {
  ASSERT_GE(size(), 2) << "run under mpirun -np N with N >= 2";
  EXPECT_GE(rank(), 0);
  EXPECT_LT(rank(), size());
  EXPECT_EQ(parc_rt_comm_rank(world()), rank());
  EXPECT_EQ(parc_rt_comm_size(world()), size());
}

TEST(Comm, AllReduceSumMaxMin) {
  const int n = 5, p = size(), r = rank();
  std::vector<float> x(n), y(n);
  for (int i = 0; i < n; ++i)
    x[i] = float(r + 10 * i);
  ASSERT_RT_OK(parc_rt_all_reduce(world(), x.data(), y.data(), n, PARC_RT_F32,
                                  PARC_RT_REDUCE_SUM));
  for (int i = 0; i < n; ++i)
    EXPECT_EQ(y[i], float(p * (p - 1) / 2 + p * 10 * i));
  ASSERT_RT_OK(parc_rt_all_reduce(world(), x.data(), y.data(), n, PARC_RT_F32,
                                  PARC_RT_REDUCE_MAX));
  EXPECT_EQ(y[2], float(p - 1 + 20));
  // In place (send == recv), integer type.
  std::vector<int64_t> z(n);
  for (int i = 0; i < n; ++i)
    z[i] = (r + 1) * (i + 1);
  ASSERT_RT_OK(parc_rt_all_reduce(world(), z.data(), z.data(), n, PARC_RT_I64,
                                  PARC_RT_REDUCE_MIN));
  for (int i = 0; i < n; ++i)
    EXPECT_EQ(z[i], i + 1);
}

// parc_rt_init picks Open MPI's ring for non-blocking all-reduce
// (mpi_process.cpp); read back through MPI's tool interface, the setting
// MPI itself uses.
TEST(Comm, AllReduceRunsAsARing) {
#ifdef OPEN_MPI
  int provided = 0, index = -1, count = 0, algorithm = -1;
  ASSERT_EQ(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided), MPI_SUCCESS);
  ASSERT_EQ(MPI_T_cvar_get_index("coll_libnbc_iallreduce_algorithm", &index),
            MPI_SUCCESS);
  MPI_T_cvar_handle handle;
  ASSERT_EQ(MPI_T_cvar_handle_alloc(index, nullptr, &handle, &count),
            MPI_SUCCESS);
  EXPECT_EQ(MPI_T_cvar_read(handle, &algorithm), MPI_SUCCESS);
  EXPECT_EQ(algorithm, 1) << "1 is libnbc's ring";
  MPI_T_cvar_handle_free(&handle);
  MPI_T_finalize();
#else
  GTEST_SKIP() << "the ring setting is Open MPI's";
#endif
}

TEST(Comm, AllReduceHalfTypesAndBool) {
  // Small integers are exact in f16 and bf16, so sums are too.
  const int p = size(), r = rank();
  float v[2] = {float(r), float(2 * r + 1)};
  uint16_t h[2], b[2];
  ASSERT_RT_OK(parc_rt_cast(PARC_RT_F32, v, PARC_RT_F16, h, 2));
  ASSERT_RT_OK(parc_rt_cast(PARC_RT_F32, v, PARC_RT_BF16, b, 2));
  ASSERT_RT_OK(
      parc_rt_all_reduce(world(), h, h, 2, PARC_RT_F16, PARC_RT_REDUCE_SUM));
  ASSERT_RT_OK(
      parc_rt_all_reduce(world(), b, b, 2, PARC_RT_BF16, PARC_RT_REDUCE_MAX));
  float hs[2], bs[2];
  ASSERT_RT_OK(parc_rt_cast(PARC_RT_F16, h, PARC_RT_F32, hs, 2));
  ASSERT_RT_OK(parc_rt_cast(PARC_RT_BF16, b, PARC_RT_F32, bs, 2));
  EXPECT_EQ(hs[0], float(p * (p - 1) / 2));
  EXPECT_EQ(hs[1], float(p * (p - 1) + p));
  EXPECT_EQ(bs[0], float(p - 1));
  EXPECT_EQ(bs[1], float(2 * (p - 1) + 1));
  uint8_t any = r == 1, all = r != 1;
  ASSERT_RT_OK(parc_rt_all_reduce(world(), &any, &any, 1, PARC_RT_BOOL,
                                  PARC_RT_REDUCE_MAX));
  ASSERT_RT_OK(parc_rt_all_reduce(world(), &all, &all, 1, PARC_RT_BOOL,
                                  PARC_RT_REDUCE_MIN));
  EXPECT_EQ(any, 1);
  EXPECT_EQ(all, 0);
}

TEST(Comm, AllGatherConcatenatesInRankOrder) {
  const int n = 3, p = size(), r = rank();
  std::vector<int32_t> x(n), y(size_t(n * p), -1);
  for (int i = 0; i < n; ++i)
    x[i] = 10 * r + i;
  ASSERT_RT_OK(parc_rt_all_gather(world(), x.data(), y.data(), n, PARC_RT_I32));
  for (int q = 0; q < p; ++q)
    for (int i = 0; i < n; ++i)
      EXPECT_EQ(y[size_t(q * n + i)], 10 * q + i);
}

// Along an inner dim: 3 rows of 2 per rank, row o of the result holds row o
// of rank 0, then rank 1, ... (what a [3, 2·p] gather along axis 1 is).
TEST(Comm, AllGatherRowsInterleavesRows) {
  const int rows = 3, n = 2, p = size(), r = rank();
  std::vector<int32_t> x(size_t(rows * n)), y(size_t(rows * p * n), -1);
  for (int o = 0; o < rows; ++o)
    for (int i = 0; i < n; ++i)
      x[size_t(o * n + i)] = 100 * r + 10 * o + i;
  ASSERT_RT_OK(parc_rt_all_gather_rows(world(), x.data(), y.data(), rows, n,
                                       nullptr, -1, PARC_RT_I32));
  for (int o = 0; o < rows; ++o)
    for (int q = 0; q < p; ++q)
      for (int i = 0; i < n; ++i)
        EXPECT_EQ(y[size_t((o * p + q) * n + i)], 100 * q + 10 * o + i)
            << "row " << o << " rank " << q << " element " << i;
  EXPECT_RT_ERROR(parc_rt_all_gather_rows(world(), x.data(), y.data(), 0, n,
                                          nullptr, -1, PARC_RT_I32),
                  PARC_RT_INVALID_ARGUMENT, "all_gather: 0 rows of 2 elements");
}

// Uneven: rank q keeps the leading q % 3 of its 2 elements per row (0, 1,
// 2, 0, ...), as a padded vocabulary drops its padding; rows = 1 too.
TEST(Comm, AllGatherRowsKeepsLeadingTakes) {
  const int n = 2, p = size(), r = rank();
  std::vector<int64_t> takes(p);
  int64_t kept = 0;
  for (int q = 0; q < p; ++q)
    kept += takes[q] = q % 3;
  for (int rows : {1, 3}) {
    std::vector<int32_t> x(size_t(rows * n)), y(size_t(rows * kept) + 1, -1);
    for (int o = 0; o < rows; ++o)
      for (int i = 0; i < n; ++i)
        x[size_t(o * n + i)] = 100 * r + 10 * o + i;
    ASSERT_RT_OK(parc_rt_all_gather_rows(world(), x.data(), y.data(), rows, n,
                                         takes.data(), -1, PARC_RT_I32));
    int64_t j = 0;
    for (int o = 0; o < rows; ++o)
      for (int q = 0; q < p; ++q)
        for (int i = 0; i < takes[q]; ++i, ++j)
          EXPECT_EQ(y[size_t(j)], 100 * q + 10 * o + i)
              << rows << " rows: row " << o << " rank " << q << " element "
              << i;
    EXPECT_EQ(y.back(), -1) << "wrote past " << rows * kept << " elements";
  }
  takes[0] = 3;
  int32_t x[2] = {}, y[16] = {};
  EXPECT_RT_ERROR(parc_rt_all_gather_rows(world(), x, y, 1, n, takes.data(),
                                          -1, PARC_RT_I32),
                  PARC_RT_INVALID_ARGUMENT,
                  "all_gather: rank 0's row take 3 is outside [0, 2]");
}

// To one root, every rank in turn: it holds what the all-gather gives
// (rows interleaved, rank q's leading q % 3 + 1 of 3 kept; one row too, the
// MPI_Gather form), every other rank's recv is untouched.
TEST(Comm, AllGatherRowsToRootFillsOnlyTheRoot) {
  const int n = 3, p = size(), r = rank();
  std::vector<int64_t> takes(p);
  int64_t kept = 0;
  for (int q = 0; q < p; ++q)
    kept += takes[q] = q % 3 + 1;
  for (int root = 0; root < p; ++root)
    for (int rows : {1, 4})
      for (const int64_t *t : {(const int64_t *)nullptr,
                               (const int64_t *)takes.data()}) {
        const int64_t row = t ? kept : int64_t(n) * p;
        std::vector<int32_t> x(size_t(rows * n)), y(size_t(rows * row), -1);
        for (int o = 0; o < rows; ++o)
          for (int i = 0; i < n; ++i)
            x[size_t(o * n + i)] = 100 * r + 10 * o + i;
        ASSERT_RT_OK(parc_rt_all_gather_rows(world(), x.data(), y.data(),
                                             rows, n, t, root, PARC_RT_I32));
        int64_t j = 0;
        for (int o = 0; o < rows; ++o)
          for (int q = 0; q < p; ++q)
            for (int i = 0; i < (t ? t[q] : n); ++i, ++j)
              EXPECT_EQ(y[size_t(j)], r == root ? 100 * q + 10 * o + i : -1)
                  << "root " << root << ", " << rows << " rows"
                  << (t ? ", uneven" : "") << ": row " << o << " rank " << q
                  << " element " << i;
      }
  int32_t x[2] = {}, y[64] = {};
  EXPECT_RT_ERROR(parc_rt_all_gather_rows(world(), x, y, 1, 2, nullptr, p,
                                          PARC_RT_I32),
                  PARC_RT_INVALID_ARGUMENT, "all_gather: root");
}

TEST(Comm, ReduceScatterSums) {
  const int n = 2, p = size(), r = rank();
  std::vector<double> x(size_t(n * p)), y(n);
  for (int j = 0; j < n * p; ++j)
    x[size_t(j)] = 100.0 * r + j;
  ASSERT_RT_OK(parc_rt_reduce_scatter(world(), x.data(), y.data(), n,
                                      PARC_RT_F64, PARC_RT_REDUCE_SUM));
  for (int i = 0; i < n; ++i) // sum over q of (100 q + r n + i)
    EXPECT_EQ(y[i], 100.0 * p * (p - 1) / 2 + p * (r * n + i));
}

TEST(Comm, LocalChunkIsTheRanksBlock) {
  const int n = 3, p = size(), r = rank();
  std::vector<float> x(size_t(n * p)), y(n, -1.0f);
  for (int j = 0; j < n * p; ++j)
    x[size_t(j)] = 0.5f * j;
  ASSERT_RT_OK(parc_rt_local_chunk(world(), x.data(), y.data(), n, PARC_RT_F32));
  for (int i = 0; i < n; ++i)
    EXPECT_EQ(y[i], 0.5f * (r * n + i));
  // Reduce-scatter of the chunks' all-gather is p times the chunk.
  std::vector<float> all(size_t(n * p)), back(n);
  ASSERT_RT_OK(parc_rt_all_gather(world(), y.data(), all.data(), n, PARC_RT_F32));
  EXPECT_EQ(all, x);
  ASSERT_RT_OK(parc_rt_reduce_scatter(world(), all.data(), back.data(), n,
                                      PARC_RT_F32, PARC_RT_REDUCE_SUM));
  for (int i = 0; i < n; ++i)
    EXPECT_EQ(back[i], p * y[i]);
  EXPECT_NE(parc_rt_local_chunk(nullptr, x.data(), y.data(), n, PARC_RT_F32),
            PARC_RT_OK);
}

TEST(Comm, AllToAll) {
  const int n = 2, p = size(), r = rank();
  std::vector<int64_t> x(size_t(n * p)), y(size_t(n * p), -1);
  for (int j = 0; j < p; ++j)
    for (int e = 0; e < n; ++e)
      x[size_t(j * n + e)] = 1000 * r + 10 * j + e; // block j goes to rank j
  ASSERT_RT_OK(parc_rt_all_to_all(world(), x.data(), y.data(), n, PARC_RT_I64));
  for (int i = 0; i < p; ++i)
    for (int e = 0; e < n; ++e)
      EXPECT_EQ(y[size_t(i * n + e)], 1000 * i + 10 * r + e);
}

TEST(Comm, AllToAllVUnevenCounts) {
  // Rank r sends r + j + 1 elements to rank j, packed in rank order.
  const int p = size(), r = rank();
  std::vector<int64_t> sc(p), sd(p), rc(p), rd(p);
  int64_t sendTotal = 0, recvTotal = 0;
  for (int j = 0; j < p; ++j) {
    sc[j] = r + j + 1;
    sd[j] = sendTotal;
    sendTotal += sc[j];
    rc[j] = j + r + 1;
    rd[j] = recvTotal;
    recvTotal += rc[j];
  }
  std::vector<float> x(static_cast<size_t>(sendTotal)),
      y(static_cast<size_t>(recvTotal), -1);
  for (int j = 0; j < p; ++j)
    for (int64_t e = 0; e < sc[j]; ++e)
      x[size_t(sd[j] + e)] = float(1000 * r + 10 * j + e);
  ASSERT_RT_OK(parc_rt_all_to_all_v(world(), x.data(), sc.data(), sd.data(),
                                    y.data(), rc.data(), rd.data(),
                                    PARC_RT_F32));
  for (int i = 0; i < p; ++i)
    for (int64_t e = 0; e < rc[i]; ++e)
      EXPECT_EQ(y[size_t(rd[i] + e)], float(1000 * i + 10 * r + e));
}

TEST(Comm, SendRecvRingWithTags) {
  const int p = size(), r = rank();
  const int next = (r + 1) % p, prev = (r + p - 1) % p;
  float out[3] = {float(r), float(r) + 0.5f, -float(r)}, in[3] = {};
  parc_rt_request_t *send = nullptr;
  ASSERT_RT_OK(
      parc_rt_send_start(world(), out, 3, PARC_RT_F32, next, 7, &send));
  ASSERT_RT_OK(parc_rt_recv(world(), in, 3, PARC_RT_F32, prev, 7));
  ASSERT_RT_OK(parc_rt_wait(send));
  EXPECT_EQ(in[0], float(prev));
  EXPECT_EQ(in[1], float(prev) + 0.5f);
  EXPECT_EQ(in[2], -float(prev));
}

TEST(Comm, RecvCountMismatchIsAnError) {
  const int p = size(), r = rank();
  int32_t out[3] = {1, 2, 3}, in[5];
  parc_rt_request_t *send = nullptr;
  ASSERT_RT_OK(
      parc_rt_send_start(world(), out, 3, PARC_RT_I32, (r + 1) % p, 9, &send));
  EXPECT_RT_ERROR(parc_rt_recv(world(), in, 5, PARC_RT_I32, (r + p - 1) % p, 9),
                  PARC_RT_COMM_ERROR, "expected 5 elements");
  ASSERT_RT_OK(parc_rt_wait(send));
}

TEST(Comm, BroadcastAndBarrier) {
  const int root = size() - 1;
  int64_t v[2] = {rank() == root ? 42 : 0, rank() == root ? -7 : 0};
  ASSERT_RT_OK(parc_rt_broadcast(world(), v, 2, PARC_RT_I64, root));
  EXPECT_EQ(v[0], 42);
  EXPECT_EQ(v[1], -7);
  ASSERT_RT_OK(parc_rt_barrier(world()));
}

TEST(Comm, SplitIntoMeshGroups) {
  // A 2-D mesh (p/2 x 2): "tp" groups are consecutive pairs.
  const int p = size(), r = rank();
  parc_rt_comm_t *tp = nullptr;
  ASSERT_RT_OK(parc_rt_comm_split(ctx, r / 2, r, &tp));
  ASSERT_NE(tp, nullptr);
  const int groupSize = (r / 2) * 2 + 1 < p ? 2 : 1;
  EXPECT_EQ(parc_rt_comm_size(tp), groupSize);
  EXPECT_EQ(parc_rt_comm_rank(tp), r % 2);
  float x = float(r), y = 0;
  ASSERT_RT_OK(
      parc_rt_all_reduce(tp, &x, &y, 1, PARC_RT_F32, PARC_RT_REDUCE_SUM));
  EXPECT_EQ(y, groupSize == 2 ? float(4 * (r / 2) + 1) : float(r));
  ASSERT_RT_OK(parc_rt_comm_release(tp));
  // Negative color: this rank joins no group.
  parc_rt_comm_t *none = reinterpret_cast<parc_rt_comm_t *>(1);
  ASSERT_RT_OK(parc_rt_comm_split(ctx, r == 0 ? -1 : 0, r, &none));
  EXPECT_EQ(none == nullptr, r == 0);
  ASSERT_RT_OK(parc_rt_comm_release(none));
}

TEST(Comm, NonBlockingOverlapsCompute) {
  const int n = 1000, p = size(), r = rank();
  std::vector<float> x(n, float(r)), y(n);
  std::vector<int32_t> g(1, r), all(static_cast<size_t>(p));
  parc_rt_request_t *reqs[2] = {};
  ASSERT_RT_OK(parc_rt_all_reduce_start(world(), x.data(), y.data(), n,
                                        PARC_RT_F32, PARC_RT_REDUCE_SUM,
                                        &reqs[0]));
  ASSERT_RT_OK(parc_rt_all_gather_start(world(), g.data(), all.data(), 1,
                                        PARC_RT_I32, &reqs[1]));
  // Compute while the collectives run.
  double acc = 0;
  for (int i = 0; i < 100000; ++i)
    acc += i * 1e-9;
  int done = 0;
  ASSERT_RT_OK(parc_rt_test(reqs[0], &done));
  ASSERT_RT_OK(parc_rt_wait_all(2, reqs));
  EXPECT_GT(acc, 0);
  for (int i = 0; i < n; i += 97)
    EXPECT_EQ(y[i], float(p * (p - 1) / 2));
  for (int q = 0; q < p; ++q)
    EXPECT_EQ(all[q], q);
  // Every start form has a wait.
  int64_t v = r == 0 ? 5 : 0;
  parc_rt_request_t *b = nullptr, *bar = nullptr, *a2a = nullptr, *rs = nullptr;
  std::vector<int32_t> s(size_t(p), r), t(static_cast<size_t>(p));
  std::vector<int32_t> rsIn(static_cast<size_t>(p), 1);
  int32_t rsOut = 0;
  ASSERT_RT_OK(parc_rt_broadcast_start(world(), &v, 1, PARC_RT_I64, 0, &b));
  ASSERT_RT_OK(parc_rt_all_to_all_start(world(), s.data(), t.data(), 1,
                                        PARC_RT_I32, &a2a));
  ASSERT_RT_OK(parc_rt_reduce_scatter_start(
      world(), rsIn.data(), &rsOut, 1, PARC_RT_I32, PARC_RT_REDUCE_SUM, &rs));
  ASSERT_RT_OK(parc_rt_barrier_start(world(), &bar));
  parc_rt_request_t *batch[4] = {b, a2a, rs, bar};
  ASSERT_RT_OK(parc_rt_wait_all(4, batch));
  EXPECT_EQ(v, 5);
  for (int q = 0; q < p; ++q)
    EXPECT_EQ(t[q], q);
  EXPECT_EQ(rsOut, p);
}

// A blocking call hides nothing: all of its time is exposed. A started
// collective waited for after compute exposes at most its total.
TEST(Comm, CommTimeSplitsExposedFromHidden) {
  const int n = 4096;
  std::vector<float> x(n, 1.0f), y(n);
  double total0 = 0, exposed0 = 0, total1 = 0, exposed1 = 0;
  ASSERT_RT_OK(parc_rt_comm_time(ctx, &total0, &exposed0));
  for (int i = 0; i < 5; ++i)
    ASSERT_RT_OK(parc_rt_all_reduce(world(), x.data(), y.data(), n,
                                    PARC_RT_F32, PARC_RT_REDUCE_SUM));
  ASSERT_RT_OK(parc_rt_comm_time(ctx, &total1, &exposed1));
  EXPECT_GT(total1 - total0, 0.0);
  EXPECT_NEAR(exposed1 - exposed0, total1 - total0,
              1e-9 * std::max(1.0, total1));
  parc_rt_request_t *r = nullptr;
  ASSERT_RT_OK(parc_rt_all_reduce_start(world(), x.data(), y.data(), n,
                                        PARC_RT_F32, PARC_RT_REDUCE_SUM, &r));
  double acc = 0;
  for (int i = 0; i < 200000; ++i)
    acc += i * 1e-9;
  ASSERT_RT_OK(parc_rt_wait(r));
  double total2 = 0, exposed2 = 0;
  ASSERT_RT_OK(parc_rt_comm_time(ctx, &total2, &exposed2));
  EXPECT_GT(acc, 0);
  EXPECT_GT(total2 - total1, 0.0);
  EXPECT_LE(exposed2 - exposed1, total2 - total1 + 1e-9);
  EXPECT_EQ(y[0], float(size()));
}

// Two collectives in flight over the same 50 ms count once: the time in
// flight stays within the wall time around them (a sum of each request's
// time would be about twice it).
TEST(Comm, CommTimeCountsOverlappingRequestsOnce) {
  int32_t a = 1, b = 2, sumA = 0, sumB = 0;
  double total0 = 0, exposed0 = 0, total1 = 0, exposed1 = 0;
  ASSERT_RT_OK(parc_rt_barrier(world()));
  ASSERT_RT_OK(parc_rt_comm_time(ctx, &total0, &exposed0));
  const auto begin = std::chrono::steady_clock::now();
  parc_rt_request_t *ra = nullptr, *rb = nullptr;
  ASSERT_RT_OK(parc_rt_all_reduce_start(world(), &a, &sumA, 1, PARC_RT_I32,
                                        PARC_RT_REDUCE_SUM, &ra));
  ASSERT_RT_OK(parc_rt_all_reduce_start(world(), &b, &sumB, 1, PARC_RT_I32,
                                        PARC_RT_REDUCE_SUM, &rb));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  ASSERT_RT_OK(parc_rt_wait(ra));
  ASSERT_RT_OK(parc_rt_wait(rb));
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - begin)
          .count();
  ASSERT_RT_OK(parc_rt_comm_time(ctx, &total1, &exposed1));
  EXPECT_EQ(sumA, size());
  EXPECT_EQ(sumB, 2 * size());
  EXPECT_GE(total1 - total0, 0.045);
  EXPECT_LE(total1 - total0, wall + 1e-6);
  EXPECT_LE(exposed1 - exposed0, total1 - total0 + 1e-9);
}

TEST(Comm, ArgumentErrors) {
  float x[4] = {};
  EXPECT_RT_ERROR(
      parc_rt_all_reduce(nullptr, x, x, 4, PARC_RT_F32, PARC_RT_REDUCE_SUM),
      PARC_RT_INVALID_ARGUMENT, "all_reduce: communicator is null");
  EXPECT_RT_ERROR(
      parc_rt_all_reduce(world(), x, x, -1, PARC_RT_F32, PARC_RT_REDUCE_SUM),
      PARC_RT_INVALID_ARGUMENT, "count -1");
  EXPECT_RT_ERROR(parc_rt_send(world(), x, 4, PARC_RT_F32, size(), 0),
                  PARC_RT_INVALID_ARGUMENT, "destination");
  EXPECT_RT_ERROR(parc_rt_broadcast(world(), x, 4, PARC_RT_F32, -1),
                  PARC_RT_INVALID_ARGUMENT, "root -1 is not a rank");
  EXPECT_RT_ERROR(
      parc_rt_all_reduce(world(), x, x, 4, PARC_RT_BOOL, PARC_RT_REDUCE_SUM),
      PARC_RT_UNSUPPORTED, "sum of bool");
  EXPECT_RT_ERROR(parc_rt_all_reduce(world(), x, x, 4, PARC_RT_F32,
                                     parc_rt_reduce_op_t(7)),
                  PARC_RT_INVALID_ARGUMENT,
                  "all_reduce(invalid, 4 x f32): invalid reduce op 7");
  parc_rt_request_t *r = nullptr;
  EXPECT_RT_ERROR(parc_rt_all_gather_start(world(), x, x, 1, PARC_RT_F32,
                                           nullptr),
                  PARC_RT_INVALID_ARGUMENT, "all_gather: out_request is null");
  EXPECT_RT_ERROR(parc_rt_recv_start(world(), x, 4, PARC_RT_F32, 0, -1, &r),
                  PARC_RT_INVALID_ARGUMENT,
                  "recv(from rank 0, tag -1, 4 x f32): tag outside [0, ");
  EXPECT_EQ(r, nullptr);
  EXPECT_RT_ERROR(parc_rt_wait_all(-1, nullptr), PARC_RT_INVALID_ARGUMENT,
                  "wait_all: no request array");
  EXPECT_RT_ERROR(parc_rt_wait(nullptr), PARC_RT_INVALID_ARGUMENT,
                  "wait: request is null");
  EXPECT_RT_ERROR(parc_rt_context_set_timeout(ctx, 0),
                  PARC_RT_INVALID_ARGUMENT, "seconds > 0 (got 0)");
  // all_to_all_v: MPI counts are int, so every count and displacement must
  // lie in [0, 2^31 - 1].
  std::vector<int64_t> ones(size(), 1), at(size());
  for (int i = 0; i < size(); ++i)
    at[i] = i;
  std::vector<int64_t> bad = ones;
  bad[1] = -1;
  std::vector<float> a(size()), b(size());
  EXPECT_RT_ERROR(parc_rt_all_to_all_v(world(), a.data(), ones.data(),
                                       at.data(), b.data(), bad.data(),
                                       at.data(), PARC_RT_F32),
                  PARC_RT_INVALID_ARGUMENT,
                  "all_to_all_v: recv count for rank 1 is -1, outside [0, "
                  "2147483647]");
  bad[1] = int64_t(1) << 31;
  EXPECT_RT_ERROR(parc_rt_all_to_all_v(world(), a.data(), ones.data(),
                                       bad.data(), b.data(), ones.data(),
                                       at.data(), PARC_RT_F32),
                  PARC_RT_INVALID_ARGUMENT,
                  "send displacement for rank 1 is 2147483648, outside");
  EXPECT_RT_ERROR(parc_rt_all_to_all_v(world(), a.data(), nullptr, at.data(),
                                       b.data(), ones.data(), at.data(),
                                       PARC_RT_F32),
                  PARC_RT_INVALID_ARGUMENT,
                  "all_to_all_v: counts and displacements are required");
}

//===----------------------------------------------------------------------===//
// Timeouts: rank 0 skips a collective; the others must get PARC_RT_TIMEOUT
// naming it, within the limit, instead of hanging. Rank 0 then joins late so
// the abandoned operations complete and finalize is clean.
//===----------------------------------------------------------------------===//

double seconds(std::chrono::steady_clock::time_point since) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - since)
      .count();
}

class Timeout : public ::testing::Test {
protected:
  void SetUp() override {
    // Rank 0 must outwait the others' timeouts in the side barrier.
    if (rank() == 0)
      ASSERT_RT_OK(parc_rt_context_set_timeout(ctx, 60));
    ASSERT_RT_OK(parc_rt_comm_split(ctx, 0, rank(), &side_));
    ASSERT_RT_OK(parc_rt_comm_split(ctx, 0, rank(), &comm_));
  }
  void TearDown() override {
    parc_rt_comm_release(side_);
    parc_rt_comm_release(comm_);
  }
  parc_rt_comm_t *side_ = nullptr, *comm_ = nullptr;
};

// Buffers of abandoned operations must outlive them: keep them static.
float reduceIn[4], reduceOut[4];
int32_t gatherIn[2], gatherOut[64];

TEST_F(Timeout, BlockingAllReduceSkippedByOneRank) {
  const int p = size(), r = rank();
  for (float &v : reduceIn)
    v = float(r + 1);
  if (r != 0) {
    const auto start = std::chrono::steady_clock::now();
    EXPECT_RT_ERROR(parc_rt_all_reduce(comm_, reduceIn, reduceOut, 4,
                                       PARC_RT_F32, PARC_RT_REDUCE_SUM),
                    PARC_RT_TIMEOUT, "all_reduce(sum, 4 x f32)");
    const double waited = seconds(start);
    EXPECT_GE(waited, 1.5);
    EXPECT_LT(waited, 30.0);
    EXPECT_NE(std::string(parc_rt_last_error()).find("timed out after 2 s"),
              std::string::npos)
        << parc_rt_last_error();
  }
  ASSERT_RT_OK(parc_rt_barrier(side_));
  if (r == 0) { // late: completes with the others' abandoned operations
    ASSERT_RT_OK(parc_rt_all_reduce(comm_, reduceIn, reduceOut, 4, PARC_RT_F32,
                                    PARC_RT_REDUCE_SUM));
    EXPECT_EQ(reduceOut[0], float(p * (p + 1) / 2));
  }
  ASSERT_RT_OK(parc_rt_barrier(side_));
}

TEST_F(Timeout, NonBlockingWaitSkippedByOneRank) {
  const int r = rank();
  gatherIn[0] = r;
  gatherIn[1] = -r;
  if (r != 0) {
    parc_rt_request_t *req = nullptr;
    ASSERT_RT_OK(parc_rt_all_gather_start(comm_, gatherIn, gatherOut, 2,
                                          PARC_RT_I32, &req));
    int done = 1;
    ASSERT_RT_OK(parc_rt_test(req, &done));
    EXPECT_EQ(done, 0);
    EXPECT_RT_ERROR(parc_rt_wait(req), PARC_RT_TIMEOUT, "all_gather(2 x i32)");
  }
  ASSERT_RT_OK(parc_rt_barrier(side_));
  if (r == 0) {
    ASSERT_RT_OK(
        parc_rt_all_gather(comm_, gatherIn, gatherOut, 2, PARC_RT_I32));
    EXPECT_EQ(gatherOut[2 * (size() - 1) + 1], -(size() - 1));
  }
  ASSERT_RT_OK(parc_rt_barrier(side_));
}

//===----------------------------------------------------------------------===//
// Abort: run alone. Rank 1 fails and aborts; the others sit in a barrier
// with the default 300 s timeout and must be torn down by MPI_Abort at
// once. ctest matches rank 1's message and fails on a hang.
//===----------------------------------------------------------------------===//

TEST(Abort, OneRankBringsEveryoneDown) {
  if (rank() == 1) {
    parc_rt_weights_t *weights = nullptr;
    parc_rt_status_t s =
        parc_rt_weights_open("/nonexistent/rank1.safetensors", &weights);
    ASSERT_EQ(s, PARC_RT_IO_ERROR);
    parc_rt_abort(ctx, s);
  }
  parc_rt_barrier(world());
  ADD_FAILURE() << "rank " << rank() << " survived another rank's abort";
}

//===----------------------------------------------------------------------===//
// Liveness: run alone with PARC_RT_LIVENESS_S=2, in this order. A rank busy
// in compute for longer than the limit is waited for; then rank 2 stops
// itself (SIGSTOP) and the others must report it, within the limit and a
// few seconds, and end the job. ctest matches the report; a rank that gets
// anything else prints "liveness check failed".
//===----------------------------------------------------------------------===//

TEST(Liveness, ABusyRankIsWaitedFor) {
  const auto start = std::chrono::steady_clock::now();
  if (rank() == 1)
    while (seconds(start) < 5) { // compute, not in a collective
    }
  int32_t one = 1, sum = 0;
  ASSERT_RT_OK(parc_rt_all_reduce(world(), &one, &sum, 1, PARC_RT_I32,
                                  PARC_RT_REDUCE_SUM));
  EXPECT_EQ(sum, size());
  EXPECT_GE(seconds(start), 4.9);
}

TEST(Liveness, AStoppedRankEndsTheJob) {
  ASSERT_GE(size(), 3);
  ASSERT_RT_OK(parc_rt_barrier(world()));
  if (rank() == 2) {
    raise(SIGSTOP);
    for (;;) // continued by the job's teardown, which then kills it
      pause();
  }
  const auto start = std::chrono::steady_clock::now();
  parc_rt_status_t s = parc_rt_barrier(world());
  const std::string message = s == PARC_RT_OK ? "" : parc_rt_last_error();
  if (s == PARC_RT_TIMEOUT && seconds(start) < 2 + 5 &&
      message.find("barrier") == 0 &&
      message.find(" world rank 2 has sent no heartbeat for ") !=
          std::string::npos)
    parc_rt_abort(ctx, s);
  std::fprintf(stderr, "rank %d: liveness check failed after %.1f s: %s\n",
               rank(), seconds(start), message.c_str());
  parc_rt_abort(ctx, PARC_RT_INTERNAL);
}

/// Other ranks print only failures, so the log reads like one run.
class FailurePrinter : public ::testing::EmptyTestEventListener {
public:
  explicit FailurePrinter(int rank) : rank_(rank) {}
  void OnTestPartResult(const ::testing::TestPartResult &result) override {
    if (result.failed())
      std::fprintf(stderr, "[rank %d] %s:%d: %s\n", rank_,
                   result.file_name() ? result.file_name() : "?",
                   result.line_number(), result.summary());
  }

private:
  int rank_;
};

} // namespace

int main(int argc, char **argv) {
  ::testing::InitGoogleTest(&argc, argv);
  if (parc_rt_init(&argc, &argv, &ctx) != PARC_RT_OK) {
    std::fprintf(stderr, "parc_rt_init: %s\n", parc_rt_last_error());
    return 1;
  }
  if (rank() != 0) {
    auto &listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new FailurePrinter(rank()));
  }
  int failed = RUN_ALL_TESTS() ? 1 : 0;
  // Every rank reports the same verdict.
  if (parc_rt_all_reduce(world(), &failed, &failed, 1, PARC_RT_I32,
                         PARC_RT_REDUCE_MAX) != PARC_RT_OK) {
    std::fprintf(stderr, "verdict: %s\n", parc_rt_last_error());
    failed = 1;
  }
  const int myRank = rank();
  if (parc_rt_finalize(ctx) != PARC_RT_OK) {
    std::fprintf(stderr, "rank %d: %s\n", myRank, parc_rt_last_error());
    return 1;
  }
  return failed;
}
