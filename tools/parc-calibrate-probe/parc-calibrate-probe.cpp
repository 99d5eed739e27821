//===- parc-calibrate-probe.cpp - measure the cpu target for the planner -===//
//
// Run by `parc calibrate` under mpirun. Rank 0 alone (the others wait)
// times the runtime's f32 and bf16 GEMMs and a streaming add, i.e. what one
// rank of a generated program gets; then every rank times all-reduces of a
// small and a large buffer. Rank 0 prints one line of JSON with the raw
// measurements; parc calibrate turns them into a cluster file.
//
//===----------------------------------------------------------------------===//

#include "parc/runtime.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

namespace {

double now() {
  using namespace std::chrono;
  return duration<double>(steady_clock::now().time_since_epoch()).count();
}

/// Best of `reps` timings of `f` (the machine is shared: noise only adds).
template <typename F> double best(int reps, F f) {
  double t = 1e30;
  for (int i = 0; i < reps; ++i) {
    double t0 = now();
    f();
    t = std::min(t, now() - t0);
  }
  return t;
}

/// FLOP/s of an [m, k] x [k, n] product.
double gemmRate(parc_rt_dtype_t dtype, int64_t m, int64_t k, int64_t n) {
  size_t e = parc_rt_dtype_size(dtype);
  std::vector<char> a(m * k * e, 0), b(k * n * e, 0), c(m * n * e, 0);
  double t = best(5, [&] {
    parc_rt_gemm(dtype, a.data(), b.data(), nullptr, 0, nullptr, c.data(), m, n,
                 k, 0, 0, 1.0f, 0.0f);
  });
  return 2.0 * (double)(m * k * n) / t;
}

/// The slower of a square product and a transformer layer's (128 tokens
/// through a 768 → 3072 projection): inference GEMMs are skinny, and the
/// planner's roofline has one rate.
double gemmRate(parc_rt_dtype_t dtype, int64_t square) {
  return std::min(gemmRate(dtype, square, square, square),
                  gemmRate(dtype, 128, 768, 3072));
}

double streamBandwidth() {
  const int64_t n = 8 << 20; // 32 MiB per f32 array: past the caches
  std::vector<float> a(n, 1.0f), b(n, 2.0f), c(n);
  int64_t dims[1] = {n};
  double t = best(5, [&] {
    parc_rt_binary(PARC_RT_BINARY_ADD, PARC_RT_F32, a.data(), 1, dims, b.data(), 1,
                   dims, c.data(), 1, dims);
  });
  return 3.0 * (double)n * sizeof(float) / t;
}

/// A kernel too small to do work: what a launch costs.
double kernelLatency() {
  float a[16] = {0}, b[16] = {0}, c[16];
  int64_t dims[1] = {16};
  return best(200, [&] {
    parc_rt_binary(PARC_RT_BINARY_ADD, PARC_RT_F32, a, 1, dims, b, 1, dims, c, 1, dims);
  });
}

double allReduce(parc_rt_context_t *ctx, int64_t count, int reps) {
  std::vector<float> buf(count, 1.0f);
  parc_rt_comm_t *world = parc_rt_context_world(ctx);
  PARC_RT_CHECK(ctx, parc_rt_barrier(world));
  double t = 1e30;
  for (int i = 0; i < reps; ++i) {
    PARC_RT_CHECK(ctx, parc_rt_barrier(world));
    double t0 = now();
    PARC_RT_CHECK(ctx, parc_rt_all_reduce(world, buf.data(), buf.data(), count,
                                          PARC_RT_F32, PARC_RT_REDUCE_SUM));
    double dt = now() - t0;
    // The slowest rank decides when a collective is done.
    PARC_RT_CHECK(ctx, parc_rt_all_reduce(world, &dt, &dt, 1, PARC_RT_F64,
                                          PARC_RT_REDUCE_MAX));
    t = std::min(t, dt);
  }
  return t;
}

} // namespace

int main(int argc, char **argv) {
  parc_rt_context_t *ctx = nullptr;
  if (parc_rt_init(&argc, &argv, &ctx) != PARC_RT_OK) {
    std::fprintf(stderr, "parc-calibrate-probe: %s\n", parc_rt_last_error());
    return 1;
  }
  int rank = parc_rt_context_rank(ctx), size = parc_rt_context_size(ctx);
  parc_rt_comm_t *world = parc_rt_context_world(ctx);
  double f32 = 0, bf16 = 0, bw = 0, launch = 0;
  if (rank == 0) {
    f32 = gemmRate(PARC_RT_F32, 512);
    bf16 = gemmRate(PARC_RT_BF16, 256);
    bw = streamBandwidth();
    launch = kernelLatency();
  }
  PARC_RT_CHECK(ctx, parc_rt_barrier(world));
  const int64_t large = 1 << 20; // 4 MiB of f32
  double small = size > 1 ? allReduce(ctx, 2, 50) : 0;
  double big = size > 1 ? allReduce(ctx, large, 5) : 0;
  if (rank == 0)
    std::printf("{\"ranks\": %d, \"gemm_f32_flops\": %.6g, \"gemm_bf16_flops\": %.6g, "
                "\"stream_bytes_per_s\": %.6g, \"kernel_s\": %.6g, \"all_reduce_small_s\": %.6g, "
                "\"all_reduce_large_s\": %.6g, \"all_reduce_large_bytes\": %lld}\n",
                size, f32, bf16, bw, launch, small, big, (long long)(large * 4));
  return parc_rt_finalize(ctx) == PARC_RT_OK ? 0 : 1;
}
