//===- report.cpp - latency, throughput and communication of a run --------===//

#include "report.h"

#include "../io/json_string.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <utility>

namespace parc::rt {

parc_rt_status_t gatherPerRank(parc_rt_comm_t *world,
                               const std::vector<double> &mine,
                               std::vector<double> &all) {
  const size_t count = mine.size(), size = size_t(parc_rt_comm_size(world));
  std::vector<double> slots(count * size, 0.0);
  std::copy(mine.begin(), mine.end(),
            slots.begin() + ptrdiff_t(count * size_t(parc_rt_comm_rank(world))));
  all.assign(slots.size(), 0.0);
  return parc_rt_all_reduce(world, slots.data(), all.data(),
                            int64_t(slots.size()), PARC_RT_F64,
                            PARC_RT_REDUCE_SUM);
}

LatencyStats latencyStats(std::vector<double> times) {
  LatencyStats s;
  if (times.empty())
    return s;
  std::sort(times.begin(), times.end());
  auto nearestRank = [&](double p) {
    size_t k = size_t(std::ceil(p / 100.0 * double(times.size())));
    return times[std::clamp<size_t>(k, 1, times.size()) - 1];
  };
  s.min = times.front();
  s.p50 = nearestRank(50);
  s.p90 = nearestRank(90);
  s.p99 = nearestRank(99);
  s.mean =
      std::accumulate(times.begin(), times.end(), 0.0) / double(times.size());
  return s;
}

namespace {

double tokensPerSecond(const RunReport &r, const LatencyStats &s) {
  return r.tokens && s.mean > 0 ? double(r.tokens) / (s.mean * 1e-3) : 0.0;
}

std::string shapeText(const std::vector<int64_t> &dims) {
  std::string s;
  for (int64_t d : dims)
    s += (s.empty() ? "" : "x") + std::to_string(d);
  return s;
}

void printRank(const RankFigures &f) {
  std::string line;
  char buf[160];
  if (f.loadMs >= 0) {
    std::printf("parc: %s: load %.3f ms (weight packing %.3f ms of it), "
                "first forward %.3f ms\n",
                f.label.c_str(), f.loadMs, f.packMs, f.firstForwardMs);
  }
  if (f.forwardMs >= 0) {
    const double idle =
        f.forwardMs > 0 ? std::max(0.0, 1.0 - f.ownWorkMs / f.forwardMs) : 0.0;
    std::snprintf(buf, sizeof buf,
                  "forward %.4f ms, own work %.4f ms (idle %.1f%%)",
                  f.forwardMs, f.ownWorkMs, 100.0 * idle);
    line += buf;
  }
  if (f.commInFlightMs > 0) {
    std::snprintf(
        buf, sizeof buf,
        "%scommunication in flight %.4f ms, exposed %.4f ms, %.1f%% of "
        "it hidden behind compute",
        line.empty() ? "" : "; ", f.commInFlightMs, f.commExposedMs,
        100.0 * (f.commInFlightMs - f.commExposedMs) / f.commInFlightMs);
    line += buf;
  }
  if (!line.empty())
    std::printf("parc: %s: mean per forward: %s\n", f.label.c_str(),
                line.c_str());
}

} // namespace

void printReport(const RunReport &r) {
  if (r.runs > 1) {
    const LatencyStats s = latencyStats(r.timesMs);
    std::printf(
        "parc: latency ms over %ld runs (warmup %ld, %zu ranks): min=%.4f "
        "p50=%.4f p90=%.4f p99=%.4f mean=%.4f\n",
        r.runs, r.warmup, r.ranks.size(), s.min, s.p50, s.p90, s.p99, s.mean);
    if (r.tokens)
      std::printf("parc: throughput %.1f tokens/s at the mean latency (%lld "
                  "tokens per forward: input '%s' %s, batch x seq)\n",
                  tokensPerSecond(r, s), (long long)r.tokens,
                  r.tokenInput.c_str(), shapeText(r.tokenShape).c_str());
  }
  for (const RankFigures &f : r.ranks)
    printRank(f);
}

namespace {

/// A figure, or null where it was not measured.
void writeFigure(FILE *f, const char *key, double v) {
  if (v < 0)
    std::fprintf(f, "\"%s\": null", key);
  else
    std::fprintf(f, "\"%s\": %.17g", key, v);
}

void writeRanks(FILE *f, const RunReport &r) {
  std::fprintf(f, "  \"per_rank\": [");
  for (size_t i = 0; i < r.ranks.size(); ++i) {
    const RankFigures &x = r.ranks[i];
    std::fprintf(f, "%s\n    {\"rank\": %zu, \"label\": ", i ? "," : "", i);
    writeJsonString(f, x.label);
    const std::pair<const char *, double> figures[] = {
        {"mean_forward_ms", x.forwardMs},
        {"mean_own_work_ms", x.ownWorkMs},
        {"mean_comm_in_flight_ms", x.commInFlightMs},
        {"mean_comm_exposed_ms", x.commExposedMs},
        {"load_ms", x.loadMs},
        {"pack_ms", x.packMs},
        {"first_forward_ms", x.firstForwardMs}};
    for (const auto &[key, value] : figures) {
      std::fprintf(f, ", ");
      writeFigure(f, key, value);
    }
    std::fprintf(f, "}");
  }
  std::fprintf(f, "\n  ]\n");
}

} // namespace

bool writeReport(const RunReport &r, const std::string &path) {
  const std::string tmp = path + ".tmp";
  FILE *f = std::fopen(tmp.c_str(), "w");
  if (!f)
    return false;
  const LatencyStats s = latencyStats(r.timesMs);
  std::fprintf(
      f, "{\n  \"runs\": %ld,\n  \"warmup\": %ld,\n  \"world_size\": %zu,\n",
      r.runs, r.warmup, r.ranks.size());
  std::fprintf(f,
               "  \"latency_ms\": {\"min\": %.17g, \"p50\": %.17g, \"p90\": "
               "%.17g, \"p99\": %.17g, \"mean\": %.17g},\n  \"runs_ms\": [",
               s.min, s.p50, s.p90, s.p99, s.mean);
  for (size_t i = 0; i < r.timesMs.size(); ++i)
    std::fprintf(f, "%s%.17g", i ? ", " : "", r.timesMs[i]);
  std::fprintf(f, "],\n  \"tokens_per_forward\": %lld,\n  \"token_input\": ",
               (long long)r.tokens);
  if (r.tokens)
    writeJsonString(f, r.tokenInput);
  else
    std::fprintf(f, "null");
  std::fprintf(f, ",\n  \"token_shape\": [");
  for (size_t i = 0; i < r.tokenShape.size(); ++i)
    std::fprintf(f, "%s%lld", i ? ", " : "", (long long)r.tokenShape[i]);
  std::fprintf(f, "],\n  ");
  writeFigure(f, "tokens_per_s", r.tokens ? tokensPerSecond(r, s) : -1);
  std::fprintf(f, ",\n");
  writeRanks(f, r);
  std::fprintf(f, "}\n");
  const bool ok = std::fclose(f) == 0;
  return ok && std::rename(tmp.c_str(), path.c_str()) == 0;
}

} // namespace parc::rt
