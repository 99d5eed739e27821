//===- Cluster.cpp - cluster descriptions for the planner -----------------===//
//
// JSON ⇄ Cluster with llvm::json's ObjectMapper, so every error names the
// file and the JSON path of the bad field. Units in the file are the ones
// datasheets use (GiB, GB/s, TFLOP/s, µs); the struct holds SI base units.
//
//===----------------------------------------------------------------------===//

#include "parc/Plan/Cluster.h"
#include "parc/Support/InstallLayout.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"

#include <algorithm>

using namespace parc::plan;
using llvm::json::ObjectMapper;

namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr double kGB = 1e9;
constexpr double kTera = 1e12;
constexpr double kMicro = 1e-6;

/// Reads a required positive number.
bool positive(const llvm::json::Object &o, llvm::StringRef key, double &out,
              llvm::json::Path p, double scale) {
  const llvm::json::Value *v = o.get(key);
  if (!v) {
    p.field(key).report("missing required number");
    return false;
  }
  std::optional<double> d = v->getAsNumber();
  if (!d || !(*d > 0)) {
    p.field(key).report("expected a positive number");
    return false;
  }
  out = *d * scale;
  return true;
}

/// Reads an optional number in [lo, hi]; keeps `out` when absent.
bool optionalIn(const llvm::json::Object &o, llvm::StringRef key, double &out,
                llvm::json::Path p, double lo, double hi, double scale = 1) {
  const llvm::json::Value *v = o.get(key);
  if (!v)
    return true;
  std::optional<double> d = v->getAsNumber();
  if (!d || *d < lo || *d > hi) {
    if (hi <= 1)
      p.field(key).report("expected a fraction in (0, 1]");
    else
      p.field(key).report("expected a non-negative number");
    return false;
  }
  out = *d * scale;
  return true;
}

const llvm::json::Object *object(const llvm::json::Object &o, llvm::StringRef key,
                                 llvm::json::Path p) {
  const llvm::json::Object *sub = o.getObject(key);
  if (!sub)
    p.field(key).report("missing required object");
  return sub;
}

bool parseLink(const llvm::json::Object &o, Link &link, llvm::json::Path p) {
  if (auto name = o.getString("name"))
    link.name = name->str();
  return positive(o, "bandwidth_gb_s", link.bandwidth, p, kGB) &&
         optionalIn(o, "latency_us", link.latency, p, 0, 1e6, kMicro);
}

bool parse(const llvm::json::Value &v, Cluster &c, llvm::json::Path p) {
  const llvm::json::Object *o = v.getAsObject();
  if (!o) {
    p.report("expected an object");
    return false;
  }
  ObjectMapper m(v, p);
  if (!m.map("name", c.name) || !m.mapOptional("description", c.description))
    return false;
  const llvm::json::Object *dev = object(*o, "device", p);
  if (!dev)
    return false;
  llvm::json::Path dp = p.field("device");
  if (auto name = dev->getString("name"))
    c.device = name->str();
  const llvm::json::Object *flops = dev->getObject("peak_tflops");
  if (!flops || flops->empty()) {
    dp.field("peak_tflops").report("expected an object of dtype → TFLOP/s");
    return false;
  }
  for (const auto &kv : *flops) {
    std::optional<double> d = kv.second.getAsNumber();
    if (!d || !(*d > 0)) {
      dp.field("peak_tflops").field(kv.first).report("expected a positive number");
      return false;
    }
    c.peakFlops[kv.first.str()] = *d * kTera;
  }
  if (!positive(*dev, "memory_gib", c.memoryBytes, dp, kGiB) ||
      !positive(*dev, "memory_bandwidth_gb_s", c.memoryBandwidth, dp, kGB) ||
      !optionalIn(*dev, "compute_efficiency", c.computeEfficiency, dp, 0.01, 1) ||
      !optionalIn(*dev, "memory_efficiency", c.memoryEfficiency, dp, 0.01, 1) ||
      !optionalIn(*dev, "kernel_latency_us", c.kernelLatency, dp, 0, 1e6, kMicro))
    return false;
  if (!m.map("devices_per_node", c.devicesPerNode) ||
      !m.mapOptional("nodes", c.nodes) ||
      !m.mapOptional("compute_slots_per_node", c.computeSlotsPerNode))
    return false;
  if (c.computeSlotsPerNode < 0) {
    p.field("compute_slots_per_node").report("expected 0 (all devices) or a positive integer");
    return false;
  }
  if (c.devicesPerNode < 1) {
    p.field("devices_per_node").report("expected a positive integer");
    return false;
  }
  if (c.nodes < 0) {
    p.field("nodes").report("expected 0 (unbounded) or a positive integer");
    return false;
  }
  const llvm::json::Object *intra = object(*o, "intra_node", p);
  if (!intra || !parseLink(*intra, c.intraNode, p.field("intra_node")))
    return false;
  // A single-node cluster may omit the inter-node link.
  if (const llvm::json::Object *inter = o->getObject("inter_node"))
    return parseLink(*inter, c.interNode, p.field("inter_node"));
  if (c.nodes != 1) {
    p.field("inter_node").report("missing required object (omit it only with \"nodes\": 1)");
    return false;
  }
  c.interNode = c.intraNode;
  return true;
}

} // namespace

llvm::Expected<double> Cluster::flopsFor(llvm::StringRef dtype) const {
  auto it = peakFlops.find(dtype);
  if (it != peakFlops.end())
    return it->second;
  std::vector<std::string> have;
  for (const auto &kv : peakFlops)
    have.push_back(kv.getKey().str());
  std::sort(have.begin(), have.end());
  return llvm::createStringError("cluster '" + name + "' gives no peak_tflops for dtype '" +
                                 dtype + "' (it has: " + llvm::join(have, ", ") + ")");
}

bool Cluster::spansNodes(int64_t size, int64_t stride) const {
  return size > 1 && size * stride > devicesPerNode;
}

const Link &Cluster::linkFor(int64_t size, int64_t stride) const {
  return spansNodes(size, stride) ? interNode : intraNode;
}

llvm::Expected<Cluster> parc::plan::parseCluster(llvm::StringRef text,
                                                 llvm::StringRef source) {
  llvm::Expected<llvm::json::Value> value = llvm::json::parse(text);
  if (!value)
    return llvm::createStringError(source + ": not valid JSON: " +
                                   llvm::toString(value.takeError()));
  Cluster cluster;
  llvm::json::Path::Root root("cluster");
  if (!parse(*value, cluster, root))
    return llvm::createStringError(source + ": " + llvm::toString(root.getError()));
  return cluster;
}

llvm::json::Value parc::plan::toJSON(const Cluster &c) {
  llvm::json::Object flops;
  for (const auto &kv : c.peakFlops)
    flops[kv.getKey()] = kv.getValue() / kTera;
  auto link = [](const Link &l) {
    return llvm::json::Object{{"name", l.name},
                              {"bandwidth_gb_s", l.bandwidth / kGB},
                              {"latency_us", l.latency / kMicro}};
  };
  return llvm::json::Object{
      {"name", c.name},
      {"description", c.description},
      {"device",
       llvm::json::Object{{"name", c.device},
                          {"peak_tflops", std::move(flops)},
                          {"memory_gib", c.memoryBytes / kGiB},
                          {"memory_bandwidth_gb_s", c.memoryBandwidth / kGB},
                          {"compute_efficiency", c.computeEfficiency},
                          {"memory_efficiency", c.memoryEfficiency},
                          {"kernel_latency_us", c.kernelLatency / kMicro}}},
      {"devices_per_node", c.devicesPerNode},
      {"nodes", c.nodes},
      {"compute_slots_per_node", c.computeSlotsPerNode},
      {"intra_node", link(c.intraNode)},
      {"inter_node", link(c.interNode)}};
}

std::string parc::plan::presetDir() {
  return parc::installPath("share/parc/clusters");
}

llvm::Expected<std::string>
parc::plan::findCluster(llvm::StringRef nameOrPath,
                        llvm::ArrayRef<std::string> presetDirs) {
  if (nameOrPath.contains('/') || nameOrPath.ends_with(".json"))
    return nameOrPath.str();
  for (const std::string &dir : presetDirs) {
    llvm::SmallString<256> candidate(dir);
    llvm::sys::path::append(candidate, nameOrPath + ".json");
    if (llvm::sys::fs::exists(candidate))
      return candidate.str().str();
  }
  std::vector<std::string> names = presetNames(presetDirs);
  // No presets at all: a prefix copied without its share/ folder.
  if (names.empty())
    return llvm::createStringError("no cluster preset '" + nameOrPath +
                                   "': no presets in '" +
                                   llvm::join(presetDirs, "', '") +
                                   "' (pass a path to a cluster JSON file)");
  return llvm::createStringError("no cluster preset '" + nameOrPath +
                                 "' (presets: " + llvm::join(names, ", ") +
                                 "; or pass a path to a cluster JSON file)");
}

llvm::Expected<Cluster> parc::plan::loadCluster(llvm::StringRef nameOrPath,
                                                llvm::ArrayRef<std::string> presetDirs) {
  llvm::Expected<std::string> file = findCluster(nameOrPath, presetDirs);
  if (!file)
    return file.takeError();
  auto buffer = llvm::MemoryBuffer::getFile(*file);
  if (!buffer)
    return llvm::createStringError("cannot read cluster file '" + *file +
                                   "': " + buffer.getError().message());
  return parseCluster((*buffer)->getBuffer(), *file);
}

std::vector<std::string> parc::plan::presetNames(llvm::ArrayRef<std::string> presetDirs) {
  std::vector<std::string> names;
  for (const std::string &dir : presetDirs) {
    std::error_code ec;
    for (llvm::sys::fs::directory_iterator it(dir, ec), end; it != end && !ec;
         it.increment(ec)) {
      llvm::StringRef file = llvm::sys::path::filename(it->path());
      if (file.consume_back(".json"))
        names.push_back(file.str());
    }
  }
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}
