//===- profile.cpp - where a forward's time goes (PARC_RT_PROFILE) --------===//

#include "profile.h"

#include "../constants.h"
#include "../device.h"
#include "../kernel_tag.h"
#include "parc/runtime.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace parc::rt {

Profile &profile() {
  static Profile p;
  return p;
}

void Profile::configure() {
  const char *env = std::getenv("PARC_RT_PROFILE");
  enabled = env && *env && std::strcmp(env, "0") != 0;
  allNodes = enabled && std::strcmp(env, "all") == 0;
}

void Profile::start() {
  active_ = enabled;
  takeKernelTag(); // the driver's own calls before the forward
  last = std::chrono::steady_clock::now();
}

void Profile::stop() {
  if (active_)
    ++runs;
  active_ = false;
}

void Profile::record(const char *node, const char *what) {
  auto now = std::chrono::steady_clock::now();
  const double ms =
      std::chrono::duration<double, std::milli>(now - last).count();
  last = now;
  auto byNode = std::find_if(nodes.begin(), nodes.end(),
                             [&](auto &e) { return e.first == node; });
  if (byNode == nodes.end())
    nodes.emplace_back(node, ms);
  else
    byNode->second += ms;

  const KernelTag tag = takeKernelTag();
  std::string name = what ? "communication" : tag.kind ? tag.kind : "other";
  const bool flops = !what && tag.flops > 0;
  if (flops)
    name += std::string(" ") + parc_rt_dtype_name(tag.dtype);
  auto kind = std::find_if(kinds.begin(), kinds.end(),
                           [&](auto &k) { return k.name == name; });
  if (kind == kinds.end())
    kind = kinds.insert(kinds.end(), Kind{name, 0, 0, flops ? int(tag.dtype) : -1});
  kind->ms += ms;
  kind->flops += flops ? tag.flops : 0;
}

namespace {

/// GFLOP/s of an n x n x n parc_rt_gemm with b in constant memory, as a
/// weight is: the best of a few runs after one that packs; 0 on failure.
double peakGflops(parc_rt_dtype_t dtype, int64_t n) {
  const size_t bytes = size_t(n * n) * parc_rt_dtype_size(dtype);
  void *a = nullptr, *b = nullptr, *y = nullptr;
  double best = 0;
  if (deviceAlloc(bytes, "profile", &a) == PARC_RT_OK &&
      deviceAlloc(bytes, "profile", &b) == PARC_RT_OK &&
      deviceAlloc(bytes, "profile", &y) == PARC_RT_OK) {
    // Zeros are fine: GEMM kernels do not skip them.
    ConstantRange weights(b, bytes);
    for (int run = 0; run < 6; ++run) {
      auto start = std::chrono::steady_clock::now();
      if (parc_rt_gemm(dtype, a, b, nullptr, 0, nullptr, y, n, n, n, 0, 0,
                       1.0f, 0.0f) != PARC_RT_OK ||
          deviceSynchronize() != PARC_RT_OK)
        break;
      double s = std::chrono::duration<double>(
                     std::chrono::steady_clock::now() - start)
                     .count();
      if (run > 0)
        best = std::max(best, 2.0 * double(n) * double(n) * double(n) / s * 1e-9);
    }
  }
  for (void *p : {a, b, y})
    if (p)
      deviceFree(p);
  return best;
}

} // namespace

void Profile::print() {
  if (!enabled || !runs)
    return;
  double total = 0;
  for (auto &entry : nodes)
    total += entry.second;
  const double perRun = 1.0 / double(runs);
  std::printf("parc: profile over %ld runs (device synchronised after each "
              "node): %.4f ms per forward\n",
              runs, total * perRun);
  DerivedTime packing = constantsDerivedTime();
  std::printf("parc: profile weight packing (first forward, once): %.2f ms "
              "for %ld weight layouts\n",
              packing.seconds * 1e3, long(packing.count));

  auto sortedKinds = kinds;
  std::stable_sort(sortedKinds.begin(), sortedKinds.end(),
                   [](auto &a, auto &b) { return a.ms > b.ms; });
  std::vector<std::pair<int, double>> peaks; // dtype -> GFLOP/s
  for (const Kind &k : sortedKinds)
    if (k.dtype >= 0 &&
        std::none_of(peaks.begin(), peaks.end(),
                     [&](auto &p) { return p.first == k.dtype; }))
      peaks.emplace_back(k.dtype,
                         peakGflops(parc_rt_dtype_t(k.dtype), 2048));
  for (auto &[dtype, gflops] : peaks)
    std::printf("parc: profile gemm peak %s (2048^3 through parc_rt_gemm, "
                "%d thread(s)): %.1f GFLOP/s\n",
                parc_rt_dtype_name(parc_rt_dtype_t(dtype)),
                parc_rt_num_threads(), gflops);
  for (const Kind &k : sortedKinds) {
    std::printf("parc: profile kind %10.4f ms %5.1f%%  %-16s", k.ms * perRun,
                total > 0 ? 100.0 * k.ms / total : 0.0, k.name.c_str());
    if (k.dtype >= 0 && k.ms > 0) {
      const double gflops = k.flops / (k.ms * 1e-3) * 1e-9;
      double peak = 0;
      for (auto &p : peaks)
        if (p.first == k.dtype)
          peak = p.second;
      std::printf("  %.1f GFLOP/s", gflops);
      if (peak > 0)
        std::printf(" = %.0f%% of peak", 100.0 * gflops / peak);
    }
    std::printf("\n");
  }
  auto sorted = nodes;
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](auto &a, auto &b) { return a.second > b.second; });
  const size_t shown = allNodes ? sorted.size() : 25;
  for (size_t i = 0; i < sorted.size() && i < shown; ++i)
    std::printf("parc: profile %10.4f ms %5.1f%%  %s\n",
                sorted[i].second * perRun,
                total > 0 ? 100.0 * sorted[i].second / total : 0.0,
                sorted[i].first.c_str());
}

} // namespace parc::rt
