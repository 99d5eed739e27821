//===- main.cpp - the driver of every generated rank program ----*- C++ -*-===//
//
// Start-up (MPI, this rank's weight shard, the arena, the inputs), the timed
// forward passes and the outputs live here once, not in every generated
// file. Every failure goes through parc_rt_abort, which names the rank and
// brings the other ranks down instead of leaving them waiting.
//
// Both backends compile this file: weights, inputs and outputs are staged
// through device.h, which is free on the cpu backend (kernels read the
// mapped weight file and the input buffers in place) and uploads weights
// once and inputs per run on the cuda backend.
//
//===----------------------------------------------------------------------===//

#include "parc/program.h"

#include "../constants.h"
#include "../device.h"
#include "../io/formats.h"
#include "../io/safetensors.h"
#include "../shape_checks.h"
#include "../status.h"
#include "generate.h"
#include "profile.h"
#include "report.h"
#include "trace.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <sys/stat.h>
#include <vector>

using namespace parc::rt;

namespace {

struct Options {
  std::string weightsDir = "weights";
  std::vector<std::pair<std::string, std::string>> inputs;
  std::string outputDir;
  /// Output name -> file name in outputDir, as the manifest records them
  /// (parc-run passes them); an output not listed gets outputFileName's.
  std::vector<std::pair<std::string, std::string>> outputFiles;
  long repeat = 1, warmup = 0, outputRank = 0;
  /// Data-parallel replicas of the compiled mesh (parc-run passes the
  /// manifest's): the program itself is the same for any count.
  long dataParallel = 1;
  /// Check each shard's data against its checksum (parc-run --verify-weights).
  bool verifyWeights = false;
  /// --prompt=PATH: run the token loop instead of timed forwards.
  GenerateOptions generate;
};

bool parseLong(const char *text, long &out) {
  char *end = nullptr;
  errno = 0;
  long v = std::strtol(text, &end, 10);
  if (errno || !*text || *end || v < 0)
    return false;
  out = v;
  return true;
}

parc_rt_status_t parseArgs(int argc, char **argv, Options &o) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](const char *flag) -> const char * {
      size_t n = std::strlen(flag);
      return arg.compare(0, n, flag) == 0 ? argv[i] + n : nullptr;
    };
    const char *v;
    if (arg == "--verify-weights") {
      o.verifyWeights = true;
    } else if ((v = value("--weights-dir="))) {
      o.weightsDir = v;
    } else if ((v = value("--output-dir="))) {
      o.outputDir = v;
    } else if ((v = value("--input="))) {
      const char *eq = std::strchr(v, '=');
      if (!eq || eq == v || !eq[1])
        return fail(PARC_RT_INVALID_ARGUMENT, "--input=%s is not NAME=PATH", v);
      o.inputs.emplace_back(std::string(v, eq), std::string(eq + 1));
    } else if ((v = value("--output-file="))) {
      // File names hold no '=' (outputFileName escapes it): split at the
      // last one, so that output names may hold any.
      const char *eq = std::strrchr(v, '=');
      if (!eq || !eq[1])
        return fail(PARC_RT_INVALID_ARGUMENT,
                    "--output-file=%s is not NAME=FILE", v);
      o.outputFiles.emplace_back(std::string(v, eq), std::string(eq + 1));
    } else if ((v = value("--repeat="))) {
      if (!parseLong(v, o.repeat) || o.repeat < 1)
        return fail(PARC_RT_INVALID_ARGUMENT, "--repeat needs a positive count");
    } else if ((v = value("--warmup="))) {
      if (!parseLong(v, o.warmup))
        return fail(PARC_RT_INVALID_ARGUMENT, "--warmup needs a count");
    } else if ((v = value("--output-rank="))) {
      if (!parseLong(v, o.outputRank))
        return fail(PARC_RT_INVALID_ARGUMENT, "--output-rank needs a rank");
    } else if ((v = value("--prompt="))) {
      o.generate.prompt = v;
    } else if ((v = value("--prompt-lengths="))) {
      o.generate.promptLengths = v;
    } else if ((v = value("--max-new-tokens="))) {
      if (!parseLong(v, o.generate.maxNewTokens) || o.generate.maxNewTokens < 1)
        return fail(PARC_RT_INVALID_ARGUMENT,
                    "--max-new-tokens needs a positive count");
    } else if ((v = value("--eos="))) {
      if (!parseLong(v, o.generate.eos))
        return fail(PARC_RT_INVALID_ARGUMENT, "--eos needs a token id");
    } else if ((v = value("--temperature="))) {
      char *end = nullptr;
      o.generate.temperature = std::strtod(v, &end);
      if (!*v || *end || !(o.generate.temperature >= 0))
        return fail(PARC_RT_INVALID_ARGUMENT,
                    "--temperature needs a number of 0 or more");
    } else if ((v = value("--top-k="))) {
      if (!parseLong(v, o.generate.topK))
        return fail(PARC_RT_INVALID_ARGUMENT, "--top-k needs a count");
    } else if ((v = value("--seed="))) {
      char *end = nullptr;
      errno = 0;
      o.generate.seed = std::strtoull(v, &end, 10);
      if (errno || !*v || *end || *v == '-')
        return fail(PARC_RT_INVALID_ARGUMENT, "--seed needs an unsigned integer");
    } else if ((v = value("--logits="))) {
      o.generate.logitsPath = v;
    } else if ((v = value("--data-parallel="))) {
      if (!parseLong(v, o.dataParallel) || o.dataParallel < 1)
        return fail(PARC_RT_INVALID_ARGUMENT,
                    "--data-parallel needs a positive replica count");
    } else {
      return fail(PARC_RT_INVALID_ARGUMENT,
                  "unknown argument '%s' (expected --weights-dir=, --input=, "
                  "--output-dir=, --output-file=, --repeat=, --warmup=, "
                  "--output-rank=, --data-parallel=, --verify-weights, "
                  "--prompt=, --prompt-lengths=, --max-new-tokens=, --eos=, "
                  "--temperature=, "
                  "--top-k=, --seed=, --logits=)",
                  argv[i]);
    }
  }
  return PARC_RT_OK;
}

std::string shapeOf(const parc_rt_tensor_desc_t &d) {
  return std::string(parc_rt_dtype_name(d.dtype)) + shapeString(d.rank, d.dims);
}

/// Each output's file in the output folder: the recorded one, which must be
/// one plain file name, or outputFileName's; two outputs never share one.
parc_rt_status_t outputFiles(const parc_rt_program_t *p, const Options &o,
                             std::vector<std::string> &files) {
  files.clear();
  for (int64_t i = 0; i < p->num_outputs; ++i) {
    const std::string name = p->outputs[i].name;
    std::string file = parc::rt::outputFileName(name);
    for (const auto &[n, f] : o.outputFiles)
      if (n == name)
        file = f;
    if (!parc::rt::isPlainFileName(file))
      return fail(PARC_RT_INVALID_ARGUMENT,
                  "--output-file: output '%s' maps to '%s', which is not a "
                  "plain file name inside --output-dir",
                  name.c_str(), file.c_str());
    for (int64_t j = 0; j < i; ++j)
      if (files[j] == file)
        return fail(PARC_RT_INVALID_ARGUMENT,
                    "--output-file: outputs '%s' and '%s' both map to '%s'",
                    p->outputs[j].name, name.c_str(), file.c_str());
    files.push_back(file);
  }
  return PARC_RT_OK;
}

size_t bytesOf(const parc_rt_tensor_desc_t &d) {
  return numElements(d.rank, d.dims) * parc_rt_dtype_size(d.dtype);
}

/// Communication seconds of the forward passes (backends that time it).
struct CommTime {
  double total = 0, exposed = 0;
  CommTime operator-(const CommTime &o) const {
    return {total - o.total, exposed - o.exposed};
  }
  CommTime &operator+=(const CommTime &o) {
    total += o.total;
    exposed += o.exposed;
    return *this;
  }
};

CommTime commTime(parc_rt_context_t *ctx) {
  CommTime t;
  if (parc_rt_comm_time(ctx, &t.total, &t.exposed) != PARC_RT_OK)
    return {};
  return t;
}

/// Device buffers owned by the driver, freed on every exit path.
struct DeviceBuffers {
  std::vector<void *> buffers;
  ~DeviceBuffers() { release(); }
  void release() {
    for (void *b : buffers)
      deviceFree(b);
    buffers.clear();
  }
  parc_rt_status_t alloc(size_t bytes, const char *what, void **out) {
    PARC_RT_RETURN_IF_ERROR(deviceAlloc(bytes, what, out));
    buffers.push_back(*out);
    return PARC_RT_OK;
  }
};

constexpr size_t kDeviceAlignment = 256;

size_t alignUp(size_t bytes) {
  return (bytes + kDeviceAlignment - 1) / kDeviceAlignment * kDeviceAlignment;
}

/// One communicator per group of mesh axes (index: the axes mask), split
/// from the world at start-up in the same order on every rank.
std::vector<parc_rt_comm_t *> &meshComms() {
  static std::vector<parc_rt_comm_t *> comms;
  return comms;
}

/// With data parallelism: this rank's replica (the ranks the program's
/// mesh spans: what the generated code calls the world) and, on the ranks
/// that hold the outputs, the output ranks of every replica (gathered
/// over them; other ranks join no such group).
struct Replicas {
  long count = 1, index = 0, ranks = 1;
  parc_rt_comm_t *replica = nullptr, *across = nullptr;
  /// This rank inside its replica: its mesh rank.
  int meshRank(int rank) const { return int(rank % ranks); }
};

Replicas &replicas() {
  static Replicas r;
  return r;
}

parc_rt_status_t splitMesh(parc_rt_context_t *ctx, const parc_rt_program_t *p,
                           long dataParallel, long outputRank) {
  const int64_t axes = p->mesh_rank;
  int64_t ranks = 1;
  for (int64_t j = 0; j < axes; ++j)
    ranks *= p->mesh_shape[j];
  const int world = parc_rt_context_size(ctx);
  if ((axes || dataParallel > 1) && ranks * dataParallel != world) {
    std::string mesh;
    for (int64_t j = 0; j < axes; ++j)
      mesh += (j ? "x" : "") + std::to_string(p->mesh_shape[j]);
    if (dataParallel > 1)
      return fail(PARC_RT_INVALID_ARGUMENT,
                  "--data-parallel=%ld replicas of a mesh of %lld ranks (%s) "
                  "need %lld ranks, but the world has %d (start it with "
                  "parc-run)",
                  dataParallel, (long long)ranks, axes ? mesh.c_str() : "1",
                  (long long)(ranks * dataParallel), world);
    return fail(PARC_RT_INVALID_ARGUMENT,
                "the program was compiled for a mesh of %lld ranks (%s), but "
                "the world has %d (start it with mpirun -np %lld, or parc-run)",
                (long long)ranks, mesh.c_str(), world, (long long)ranks);
  }
  // Replicas are consecutive ranks: replica k is k*ranks .. k*ranks+ranks-1.
  const int rank = parc_rt_context_rank(ctx);
  Replicas &rep = replicas();
  rep.count = dataParallel;
  rep.ranks = ranks;
  rep.index = rank / ranks;
  if (dataParallel > 1) {
    // Replica 0's output rank writes the gathered batch.
    if (outputRank >= ranks)
      return fail(PARC_RT_INVALID_ARGUMENT,
                  "--output-rank=%ld is not a rank of replica 0 (ranks 0 to "
                  "%lld) with --data-parallel=%ld",
                  outputRank, (long long)ranks - 1, dataParallel);
    PARC_RT_RETURN_IF_ERROR(
        parc_rt_comm_split(ctx, (int)rep.index, rank % ranks, &rep.replica));
    const bool holdsOutputs = rank % ranks == outputRank;
    PARC_RT_RETURN_IF_ERROR(parc_rt_comm_split(ctx, holdsOutputs ? 0 : -1,
                                               (int)rep.index, &rep.across));
  }
  if (axes < 2)
    return PARC_RT_OK; // the only group is the replica's world
  // Row-major coordinates of this rank inside its replica.
  std::vector<int64_t> coord(axes);
  for (int64_t j = axes - 1, r = rep.meshRank(rank); j >= 0; --j) {
    coord[j] = r % p->mesh_shape[j];
    r /= p->mesh_shape[j];
  }
  auto &comms = meshComms();
  comms.assign(int64_t(1) << axes, nullptr);
  for (int64_t mask = 1; mask + 1 < (int64_t(1) << axes); ++mask) {
    // Same color: same replica and coordinates off the group's axes; key:
    // the coordinates on them.
    int64_t color = rep.index, key = 0;
    for (int64_t j = 0; j < axes; ++j) {
      int64_t &v = (mask >> j) & 1 ? key : color;
      v = v * p->mesh_shape[j] + coord[j];
    }
    PARC_RT_RETURN_IF_ERROR(parc_rt_comm_split(ctx, (int)color, (int)key, &comms[mask]));
  }
  return PARC_RT_OK;
}

/// This rank's replica, stage and tensor-parallel index, for the trace and
/// summary.
std::string rankLabel(int rank, const parc_rt_program_t *p) {
  std::string label = "rank " + std::to_string(rank), where;
  if (replicas().count > 1) {
    where = "replica " + std::to_string(rank / replicas().ranks);
    rank = replicas().meshRank(rank);
  }
  if (p->pipeline_stages > 1 && p->mesh_rank >= 1) {
    int64_t perStage = 1;
    for (int64_t j = 1; j < p->mesh_rank; ++j)
      perStage *= p->mesh_shape[j];
    where += (where.empty() ? "" : ", ") +
             ("stage " + std::to_string(rank / perStage)) + ", tp " +
             std::to_string(rank % perStage);
  }
  return where.empty() ? label : label + " (" + where + ")";
}

/// Seconds of this rank's one-time work: the weights' open, map, checks and
/// upload; the first forward (wall, before the barrier); the packing the
/// first forward did (constantsDerivedTime).
struct LoadTimes {
  double openSeconds = 0, firstForwardSeconds = 0, packSeconds = 0;
};

/// Every rank's means per timed forward, gathered to rank 0 (a collective:
/// every rank calls it): its forward and own work with pipeline stages, its
/// communication where the backend times it.
parc_rt_status_t gatherFigures(parc_rt_context_t *ctx, const parc_rt_program_t *p,
                               long runs, const CommTime *comm,
                               const LoadTimes &load,
                               std::vector<RankFigures> &out) {
  const int world = parc_rt_context_size(ctx);
  constexpr int kFigures = 7;
  std::vector<double> m(kFigures), all;
  const bool stages = p->pipeline_stages > 1;
  const double perRun = 1e3 / double(runs);
  m[0] = stages ? trace().forwardSeconds() * perRun : -1;
  m[1] = stages ? trace().busySeconds() * perRun : -1;
  m[2] = comm ? comm->total * perRun : -1;
  m[3] = comm ? comm->exposed * perRun : -1;
  m[4] = (load.openSeconds + load.packSeconds) * 1e3;
  m[5] = load.packSeconds * 1e3;
  m[6] = (load.firstForwardSeconds - load.packSeconds) * 1e3;
  PARC_RT_RETURN_IF_ERROR(gatherPerRank(parc_rt_context_world(ctx), m, all));
  out.clear();
  for (int r = 0; r < world; ++r) {
    const double *a = &all[kFigures * r];
    out.push_back({rankLabel(r, p), a[0], a[1], a[2], a[3], a[4], a[5], a[6]});
  }
  return PARC_RT_OK;
}

/// The token ids are the first integer input of rank 2 or more: tokens per
/// forward are its batch x seq, the batch of every replica included.
void countTokens(const parc_rt_program_t *p, long replicaCount, RunReport &r) {
  for (int64_t i = 0; i < p->num_inputs; ++i) {
    const parc_rt_tensor_desc_t &d = p->inputs[i];
    if (d.rank < 2 || (d.dtype != PARC_RT_I64 && d.dtype != PARC_RT_I32))
      continue;
    r.tokenInput = d.name;
    r.tokenShape = {d.dims[0] * replicaCount, d.dims[1]};
    r.tokens = r.tokenShape[0] * r.tokenShape[1];
    return;
  }
}

/// Rank 0 prints the pipeline bubble: the mean share of the forward the
/// ranks spent waiting for their neighbours, next to GPipe's (P-1)/(M+P-1).
void reportBubble(const parc_rt_program_t *p, const std::vector<RankFigures> &ranks) {
  const double stages = double(p->pipeline_stages), m = double(p->micro_batches);
  const int64_t v = p->virtual_stages > 1 ? p->virtual_stages : 1;
  const int world = int(ranks.size());
  double idle = 0;
  for (const RankFigures &f : ranks)
    idle += f.forwardMs > 0 ? std::max(0.0, 1.0 - f.ownWorkMs / f.forwardMs) : 0.0;
  if (v == 1)
    std::printf("parc: pipeline bubble: measured %.3f (mean idle share of the "
                "forward over %d ranks), analytic (P-1)/(M+P-1) = %.3f "
                "(P=%lld stages, M=%lld micro-batches)\n",
                idle / world, world, (stages - 1) / (m + stages - 1),
                (long long)p->pipeline_stages, (long long)p->micro_batches);
  else
    std::printf("parc: pipeline bubble: measured %.3f (mean idle share of the "
                "forward over %d ranks), analytic (P-1)/(V*M+P-1) = %.3f "
                "(P=%lld stages, V=%lld virtual, M=%lld micro-batches)\n",
                idle / world, world, (stages - 1) / (double(v) * m + stages - 1),
                (long long)p->pipeline_stages, (long long)v,
                (long long)p->micro_batches);
}

/// The run's summary: rank 0 prints it and, with PARC_RT_STATS=PATH,
/// writes it to PATH as JSON.
parc_rt_status_t report(parc_rt_context_t *ctx, const parc_rt_program_t *p,
                        const Options &o, std::vector<double> times,
                        const CommTime *comm, const LoadTimes &load) {
  RunReport r;
  r.runs = o.repeat;
  r.warmup = o.warmup;
  r.timesMs = std::move(times);
  PARC_RT_RETURN_IF_ERROR(gatherFigures(ctx, p, o.repeat, comm, load, r.ranks));
  if (parc_rt_context_rank(ctx) != 0)
    return PARC_RT_OK;
  countTokens(p, replicas().count, r);
  printReport(r);
  if (p->pipeline_stages > 1)
    reportBubble(p, r.ranks);
  const char *path = std::getenv("PARC_RT_STATS");
  if (path && *path && !writeReport(r, path))
    return fail(PARC_RT_IO_ERROR, "cannot write the run's figures to '%s' "
                "(PARC_RT_STATS): %s", path, std::strerror(errno));
  return PARC_RT_OK;
}

/// Aborts every rank on a failed kernel, naming its ONNX node.
void check(parc_rt_context_t *ctx, parc_rt_status_t status, const char *node,
           const char *what = nullptr) {
  if (status == PARC_RT_OK)
    status = deviceCheckpoint();
  if (status == PARC_RT_OK && profile().active()) {
    status = deviceSynchronize();
    if (status == PARC_RT_OK)
      profile().record(node, what);
  }
  if (status == PARC_RT_OK)
    return;
  std::string message = parc_rt_last_error();
  fail(status, "node '%s': %s", node, message.c_str());
  parc_rt_abort(ctx, status);
}

/// Seconds from `start` to now.
double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

/// Opens `path` (this rank's shard), checks it against the program's table
/// and fills `slots`: pointers into the mapping on the host backend; on a
/// device backend one allocation, uploaded once, and the mapping dropped.
void loadWeights(parc_rt_context_t *ctx, const parc_rt_program_t *p,
                 const std::string &path, int meshRank, bool verify,
                 DeviceBuffers &device, parc_rt_weights_t *&weights,
                 std::vector<void *> &slots) {
  if (!p->num_weights)
    return;
  parc_rt_check(ctx, parc_rt_weights_open(path.c_str(), &weights), "<weights>");
  parc_rt_check(ctx, checkShard(weights, meshRank, p->name, verify),
                "<weights>");
  std::vector<const void *> host(p->num_weights);
  size_t total = 0;
  for (int64_t i = 0; i < p->num_weights; ++i) {
    const parc_rt_tensor_desc_t &d = p->weights[i];
    parc_rt_check(ctx,
                  parc_rt_weights_get_checked(weights, d.name, d.dtype, d.rank,
                                              d.dims, &host[i]),
                  "<weights>");
    total += alignUp(bytesOf(d));
  }
  if (deviceIsHost()) {
    // Kernels never write weights; the slot type is shared with buffers.
    for (int64_t i = 0; i < p->num_weights; ++i)
      slots[i] = const_cast<void *>(host[i]);
    return;
  }
  void *block = nullptr;
  parc_rt_check(ctx, device.alloc(total, "weights", &block), "<weights>");
  std::vector<HostToDevice> copies(p->num_weights);
  size_t offset = 0;
  for (int64_t i = 0; i < p->num_weights; ++i) {
    const size_t bytes = bytesOf(p->weights[i]);
    slots[i] = static_cast<char *>(block) + offset;
    copies[i] = {slots[i], host[i], bytes};
    offset += alignUp(bytes);
  }
  parc_rt_check(ctx, uploadToDevice(copies.data(), copies.size()),
                "<weights>");
  // The device holds its copy: drop the mapping.
  parc_rt_weights_release(weights);
  weights = nullptr;
}

/// Releases what start-up acquired and finalizes; the exit code.
int shutdown(parc_rt_context_t *ctx, parc_rt_weights_t *weights,
             DeviceBuffers &device) {
  if (weights)
    parc_rt_weights_release(weights);
  device.release(); // before finalize, which may release the device
  for (parc_rt_comm_t *&comm : meshComms())
    if (comm) {
      parc_rt_comm_release(comm);
      comm = nullptr;
    }
  for (parc_rt_comm_t **comm : {&replicas().replica, &replicas().across})
    if (*comm) {
      parc_rt_comm_release(*comm);
      *comm = nullptr;
    }
  parc_rt_finalize(ctx);
  return 0;
}

/// Reads input `d` from the .npy at `path` into `buffer` (kernel memory);
/// with replicas the file holds the whole batch and this replica takes its
/// slice of dim 0 (the compiler refused inputs without one).
void readInput(parc_rt_context_t *ctx, const parc_rt_tensor_desc_t &d,
               const std::string &path, const Replicas &rep, void *buffer) {
  if (rep.count > 1) {
    if (d.rank < 1)
      parc_rt_check(ctx,
                    fail(PARC_RT_INVALID_ARGUMENT,
                         "input '%s' has no batch dim to split over "
                         "%ld replicas",
                         d.name, rep.count),
                    "<inputs>");
    std::vector<int64_t> whole(d.dims, d.dims + d.rank);
    whole[0] *= rep.count;
    std::vector<char> host(bytesOf(d) * rep.count);
    parc_rt_check(ctx,
                  parc_rt_npy_read_into(path.c_str(), d.dtype, d.rank,
                                        whole.data(), host.data()),
                  "<inputs>");
    const char *slice = host.data() + bytesOf(d) * rep.index;
    if (deviceIsHost())
      std::memcpy(buffer, slice, bytesOf(d));
    else
      parc_rt_check(ctx, copyToDevice(buffer, slice, bytesOf(d)), "<inputs>");
  } else if (deviceIsHost()) {
    parc_rt_check(ctx,
                  parc_rt_npy_read_into(path.c_str(), d.dtype, d.rank, d.dims,
                                        buffer),
                  "<inputs>");
  } else {
    std::vector<char> host(bytesOf(d));
    parc_rt_check(ctx,
                  parc_rt_npy_read_into(path.c_str(), d.dtype, d.rank, d.dims,
                                        host.data()),
                  "<inputs>");
    parc_rt_check(ctx, copyToDevice(buffer, host.data(), host.size()),
                  "<inputs>");
  }
}

/// Inputs: exactly the program's, by name, each in its own buffer.
void readInputs(parc_rt_context_t *ctx, const parc_rt_program_t *p,
                const Options &o, const Replicas &rep, DeviceBuffers &device,
                std::vector<void *> &slots) {
  for (const auto &[name, path] : o.inputs) {
    bool known = false;
    for (int64_t i = 0; i < p->num_inputs; ++i)
      known |= name == p->inputs[i].name;
    if (!known)
      parc_rt_check(ctx, fail(PARC_RT_INVALID_ARGUMENT,
                              "the program has no input '%s'", name.c_str()),
                    "<inputs>");
  }
  slots.assign(p->num_inputs, nullptr);
  for (int64_t i = 0; i < p->num_inputs; ++i) {
    const parc_rt_tensor_desc_t &d = p->inputs[i];
    auto it = std::find_if(o.inputs.begin(), o.inputs.end(),
                           [&](const auto &kv) { return kv.first == d.name; });
    if (it == o.inputs.end())
      parc_rt_check(ctx, fail(PARC_RT_INVALID_ARGUMENT,
                              "missing --input=%s=PATH (%s)", d.name,
                              shapeOf(d).c_str()),
                    "<inputs>");
    parc_rt_check(ctx, device.alloc(bytesOf(d), "inputs", &slots[i]),
                  "<inputs>");
    readInput(ctx, d, it->second, rep, slots[i]);
  }
}

/// The buffers one forward pass reads and writes.
struct Slots {
  void *arena = nullptr;
  std::vector<void *> inputs, weights, outputs;
};

/// What the timed forwards measured.
struct Timings {
  std::vector<double> timesMs;
  CommTime comm;
  LoadTimes load;
};

/// `warmup` untimed then `repeat` timed forward passes, each between two
/// barriers, so that the time a rank reports is the slowest rank's.
void runForwards(parc_rt_context_t *ctx, const parc_rt_program_t *p,
                 const Options &o, Slots &slots, Timings &t) {
  parc_rt_comm_t *world = parc_rt_context_world(ctx);
  profile().configure();
  const double packedBefore = constantsDerivedTime().seconds;
  for (long run = 0; run < o.warmup + o.repeat; ++run) {
    const bool timed = run >= o.warmup;
    parc_rt_check(ctx, parc_rt_barrier(world), "<barrier>");
    auto start = std::chrono::steady_clock::now();
    if (timed)
      profile().start();
    trace().beginForward(timed);
    CommTime before = commTime(ctx);
    p->forward(ctx, slots.arena, slots.inputs.data(), slots.weights.data(),
               slots.outputs.data());
    profile().stop();
    trace().stopRecording();
    if (timed)
      t.comm += commTime(ctx) - before;
    // Device kernels run asynchronously: the pass ends when they have.
    parc_rt_check(ctx, deviceSynchronize(), "<forward>");
    if (run == 0) {
      // This rank's own first pass, before waiting on the others; the
      // packing it triggered belongs to loading the weights.
      t.load.firstForwardSeconds = secondsSince(start);
      t.load.packSeconds = constantsDerivedTime().seconds - packedBefore;
    }
    parc_rt_check(ctx, parc_rt_barrier(world), "<barrier>");
    trace().endForward(timed);
    auto end = std::chrono::steady_clock::now();
    if (timed)
      t.timesMs.push_back(
          std::chrono::duration<double, std::milli>(end - start).count());
  }
}

/// Writes output `d` (in kernel memory at `data`) to `path`; with
/// replicas, first gathers every replica's slice of the batch (all_gather
/// over ranks ordered by replica stacks them on dim 0) and only the
/// output rank writes.
void writeOutput(parc_rt_context_t *ctx, const Options &o, const Replicas &rep,
                 bool gathers, DeviceBuffers &device,
                 const parc_rt_tensor_desc_t &d, const void *data,
                 const std::string &path) {
  std::vector<int64_t> dims(d.dims, d.dims + d.rank);
  size_t bytes = bytesOf(d);
  if (gathers) {
    if (d.rank < 1)
      parc_rt_check(ctx,
                    fail(PARC_RT_INVALID_ARGUMENT,
                         "output '%s' has no batch dim to gather "
                         "over %ld replicas",
                         d.name, rep.count),
                    "<outputs>");
    void *all = nullptr;
    parc_rt_check(ctx, device.alloc(bytes * rep.count, "outputs", &all),
                  "<outputs>");
    parc_rt_check(ctx,
                  parc_rt_all_gather(rep.across, data, all,
                                     int64_t(numElements(d.rank, d.dims)),
                                     d.dtype),
                  "<outputs>");
    parc_rt_check(ctx, deviceSynchronize(), "<outputs>");
    if (parc_rt_context_rank(ctx) != o.outputRank)
      return;
    data = all;
    dims[0] *= rep.count;
    bytes *= rep.count;
  }
  std::vector<char> host;
  if (!deviceIsHost()) {
    host.resize(bytes);
    parc_rt_check(ctx, copyToHost(host.data(), data, host.size()),
                  "<outputs>");
    data = host.data();
  }
  parc_rt_check(
      ctx, parc_rt_npy_write(path.c_str(), d.dtype, d.rank, dims.data(), data),
      "<outputs>");
}

/// The outputs (on --output-rank, which names the writer in replica 0;
/// with replicas the ranks at its place in every replica gather to it)
/// and every rank's MoE routing statistics of the last forward.
void writeOutputs(parc_rt_context_t *ctx, const parc_rt_program_t *p,
                  const Options &o, const Replicas &rep, DeviceBuffers &device,
                  const std::vector<void *> &outputs) {
  if (o.outputDir.empty())
    return;
  const int rank = parc_rt_context_rank(ctx);
  const bool gathers = rep.across != nullptr;
  if (rank == o.outputRank || gathers) {
    std::vector<std::string> files;
    parc_rt_check(ctx, outputFiles(p, o, files), "<outputs>");
    ::mkdir(o.outputDir.c_str(), 0777);
    for (int64_t i = 0; i < p->num_outputs; ++i)
      writeOutput(ctx, o, rep, gathers, device, p->outputs[i], outputs[i],
                  o.outputDir + "/" + files[i]);
  }
  ::mkdir(o.outputDir.c_str(), 0777);
  std::string report =
      o.outputDir + "/moe_report.rank" + std::to_string(rank) + ".json";
  parc_rt_check(ctx, parc_rt_moe_report_write(report.c_str()), "<moe report>");
}

/// The run's summary, the per-rank trace.
void reportRun(parc_rt_context_t *ctx, const parc_rt_program_t *p,
               const Options &o, Timings &t, bool commTimed) {
  const int rank = parc_rt_context_rank(ctx);
  if (rank == 0)
    profile().print();
  parc_rt_check(ctx,
                report(ctx, p, o, std::move(t.timesMs),
                       commTimed ? &t.comm : nullptr, t.load),
                "<summary>");
  if (!trace().write(rank, rankLabel(rank, p)))
    parc_rt_check(ctx,
                  fail(PARC_RT_IO_ERROR,
                       "cannot write the trace for rank %d (PARC_RT_TRACE)",
                       rank),
                  "<trace>");
}

} // namespace

extern "C" parc_rt_comm_t *parc_rt_mesh_comm(parc_rt_context_t *ctx,
                                             int64_t axes_mask) {
  auto &comms = meshComms();
  if (axes_mask > 0 && axes_mask < (int64_t)comms.size() && comms[axes_mask])
    return comms[axes_mask];
  if (replicas().replica)
    return replicas().replica;
  return parc_rt_context_world(ctx);
}

extern "C" void parc_rt_check_comm(parc_rt_context_t *ctx,
                                   parc_rt_status_t status, const char *node,
                                   const char *what) {
  check(ctx, status, node, what);
  trace().record(node, what);
}

extern "C" void parc_rt_check(parc_rt_context_t *ctx, parc_rt_status_t status,
                              const char *node) {
  check(ctx, status, node);
  trace().record(node, nullptr);
}

extern "C" int parc_rt_program_main(int argc, char **argv,
                                    const parc_rt_program_t *p) {
  parc_rt_context_t *ctx = nullptr;
  if (parc_rt_init(&argc, &argv, &ctx) != PARC_RT_OK) {
    std::fprintf(stderr, "parc: %s\n", parc_rt_last_error());
    return 1;
  }
  const int rank = parc_rt_context_rank(ctx);
  Options o;
  parc_rt_check(ctx, parseArgs(argc, argv, o), "<arguments>");
  parc_rt_check(ctx, splitMesh(ctx, p, o.dataParallel, o.outputRank), "<mesh>");
  const Replicas &rep = replicas();
  trace().configure(/*measure=*/p->pipeline_stages > 1);

  // Weights: this rank's shard, checked against the program's table.
  // Replicas share weight files: rank r reads its mesh rank's.
  std::string weightsPath = o.weightsDir + "/rank" +
                            std::to_string(rep.meshRank(rank)) + ".safetensors";
  parc_rt_weights_t *weights = nullptr;
  DeviceBuffers device;
  Slots slots;
  slots.weights.resize(p->num_weights);
  Timings t;
  auto loadStart = std::chrono::steady_clock::now();
  loadWeights(ctx, p, weightsPath, rep.meshRank(rank), o.verifyWeights,
              device, weights, slots.weights);
  t.load.openSeconds = secondsSince(loadStart);

  if (!o.generate.prompt.empty()) {
    o.generate.warmup = o.warmup;
    o.generate.outputRank = int(o.outputRank);
    for (int r = 0; r < parc_rt_context_size(ctx); ++r)
      o.generate.rankLabels.push_back(rankLabel(r, p));
    parc_rt_check(ctx,
                  runGeneration(ctx, p, o.generate, slots.weights.data(),
                                o.outputDir, rank == o.outputRank),
                  "<generate>");
    return shutdown(ctx, weights, device);
  }

  readInputs(ctx, p, o, rep, device, slots.inputs);
  parc_rt_arena_t *arena = nullptr;
  parc_rt_check(ctx, parc_rt_arena_create(std::max<int64_t>(p->arena_size, 64), 64, &arena),
                "<arena>");
  slots.arena = parc_rt_arena_base(arena);
  slots.outputs.resize(p->num_outputs);
  double ignored;
  const bool commTimed = parc_rt_comm_time(ctx, &ignored, &ignored) == PARC_RT_OK;
  runForwards(ctx, p, o, slots, t);
  reportRun(ctx, p, o, t, commTimed);
  writeOutputs(ctx, p, o, rep, device, slots.outputs);
  parc_rt_arena_release(arena);
  return shutdown(ctx, weights, device);
}
