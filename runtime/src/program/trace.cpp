//===- trace.cpp - timeline and pipeline bubble of a run ------------------===//

#include "trace.h"

#include "../io/json_string.h"

#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace parc::rt {

Trace &trace() {
  static Trace t;
  return t;
}

double Trace::now() {
  // steady_clock is CLOCK_MONOTONIC: one time base for every rank of a node.
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

void Trace::configure(bool measureBusy) {
  if (const char *env = std::getenv("PARC_RT_TRACE"))
    path = env;
  measure = measureBusy;
}

void Trace::beginForward(bool timed) {
  active = timed && enabled();
  last = begin = now();
}

void Trace::endForward(bool timed) {
  if (timed && enabled())
    forward += (now() - begin) * 1e-6;
  active = false;
}

static bool isPointToPoint(const char *what) {
  for (const char *p :
       {"send", "recv", "send_start", "recv_start", "send_wait", "recv_wait"})
    if (!std::strcmp(what, p))
      return true;
  return false;
}

void Trace::record(const char *node, const char *what) {
  if (!active)
    return;
  double t = now();
  // Waiting for a neighbour stage is the bubble; collectives inside a stage
  // are part of its work.
  if (!what || !isPointToPoint(what))
    busy += (t - last) * 1e-6;
  if (!path.empty())
    events.push_back({what ? std::string(what) + " " + node : std::string(node),
                      what ? 1 : 0, last, t - last});
  last = t;
}

bool Trace::write(int rank, const std::string &label) const {
  if (path.empty())
    return true;
  std::string file = path + ".rank" + std::to_string(rank) + ".json";
  std::string tmp = file + ".tmp";
  FILE *f = std::fopen(tmp.c_str(), "w");
  if (!f)
    return false;
  std::fprintf(f, "{\"displayTimeUnit\": \"ms\", \"traceEvents\": [\n");
  std::fprintf(f,
               "{\"ph\": \"M\", \"name\": \"process_name\", \"pid\": %d, "
               "\"args\": {\"name\": ",
               rank);
  writeJsonString(f, label);
  std::fprintf(f,
               "}},\n{\"ph\": \"M\", \"name\": \"process_sort_index\", "
               "\"pid\": %d, \"args\": {\"sort_index\": %d}}",
               rank, rank);
  for (int track = 0; track < 2; ++track)
    std::fprintf(f,
                 ",\n{\"ph\": \"M\", \"name\": \"thread_name\", \"pid\": %d, "
                 "\"tid\": %d, \"args\": {\"name\": \"%s\"}}",
                 rank, track, track ? "communication" : "compute");
  for (const Event &e : events) {
    std::fprintf(
        f,
        ",\n{\"ph\": \"X\", \"pid\": %d, \"tid\": %d, \"cat\": \"%s\", "
        "\"ts\": %.3f, \"dur\": %.3f, \"name\": ",
        rank, e.track, e.track ? "comm" : "compute", e.start, e.duration);
    writeJsonString(f, e.name);
    std::fputc('}', f);
  }
  std::fprintf(f, "\n]}\n");
  bool ok = std::fclose(f) == 0;
  return ok && std::rename(tmp.c_str(), file.c_str()) == 0;
}

} // namespace parc::rt
