//===- moe_report.cpp - the per-run MoE routing report --------------------===//

#include "moe_report.h"
#include "io/json_string.h"
#include "status.h"

#include "parc/runtime.h"

#include <cstdio>
#include <map>
#include <mutex>
#include <string>

using namespace parc::rt;

namespace {
std::mutex statsMutex;
std::map<std::string, MoeLayerStats> stats;
} // namespace

void parc::rt::recordMoeStats(const char *layer, MoeLayerStats s) {
  std::lock_guard<std::mutex> lock(statsMutex);
  stats[layer ? layer : "?"] = std::move(s);
}

extern "C" {

parc_rt_status_t parc_rt_moe_report_write(const char *path) {
  std::lock_guard<std::mutex> lock(statsMutex);
  if (stats.empty())
    return PARC_RT_OK;
  FILE *f = std::fopen(path, "w");
  if (!f)
    return fail(PARC_RT_IO_ERROR, "moe report: cannot write '%s'", path);
  auto list = [&](const std::vector<int64_t> &v) {
    std::fputc('[', f);
    for (size_t i = 0; i < v.size(); ++i)
      std::fprintf(f, "%s%lld", i ? ", " : "", (long long)v[i]);
    std::fputc(']', f);
  };
  std::fprintf(f, "{\"layers\": [");
  bool firstLayer = true;
  for (auto &[name, s] : stats) {
    std::fprintf(f, "%s\n  {\"layer\": ", firstLayer ? "" : ",");
    writeJsonString(f, name);
    std::fprintf(f, ", \"tokens_per_expert\": ");
    list(s.perExpert);
    std::fprintf(f, ", \"tokens_per_rank\": ");
    list(s.perRank);
    std::fprintf(f,
                 ", \"capacity\": %lld, \"dropped\": %lld, "
                 "\"all_to_all_bytes\": %lld}",
                 (long long)s.capacity, (long long)s.dropped,
                 (long long)s.bytesSent);
    firstLayer = false;
  }
  std::fprintf(f, "\n]}\n");
  if (std::fclose(f) != 0)
    return fail(PARC_RT_IO_ERROR, "moe report: cannot write '%s'", path);
  return PARC_RT_OK;
}

} // extern "C"
