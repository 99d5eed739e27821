//===- generate.cpp - the token loop of a generating program ----*- C++ -*-===//
//
// One process, one weight load, one set of cache buffers for the whole
// generation: each step writes its tokens, their positions and the cache
// position into the program's small input buffers and runs the forward,
// whose kv_cache_write kernels fill the caches in place. The decode program
// takes one token per sequence; a prefill program (parc compile
// --prefill-len P) takes the first P tokens of every row in one forward,
// writing the same cache buffers in the same arena with the same weight
// slots, and the rest of the prompt is fed a token per step (all of it when
// a row is shorter than P); the first new token comes from the prompt's
// last step. Rows
// of different prompt lengths (--prompt-lengths) are fed in step too, all
// at the same position: a row whose prompt has ended feeds its own new
// tokens while a longer one still feeds its prompt, so every row's cache
// holds entries 0..t of its own sequence and nothing is padded or masked
// (Rows); each row gives the tokens it gives alone. The next token is
// picked greedily or drawn by a seeded sampler (Sampler), and --logits
// keeps every step's logits (LogitsLog). Across ranks (--tp, --pp)
// every rank runs every step on its part of the weights and cache, and the
// rank holding the logits sends its choice to all (TokenAgreement).
// A prompt of k times the program's batch runs as k groups of rows
// (parc compile --micro-batches k under --pp): each group has its own
// caches and steps in turn, and a group's choice is agreed on while the
// next group computes, so the pipeline's stages work on different groups
// at once instead of waiting for every step's last stage (runGeneration).
//
//===----------------------------------------------------------------------===//

#include "generate.h"
#include "report.h"

#include "../device.h"
#include "../half.h"
#include "../status.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <numeric>
#include <random>
#include <vector>

namespace parc::rt {
namespace {

size_t bytesOf(const parc_rt_tensor_desc_t &d) {
  size_t n = parc_rt_dtype_size(d.dtype);
  for (int64_t i = 0; i < d.rank; ++i)
    n *= size_t(d.dims[i]);
  return n;
}


/// Whether `d` is an integer [batch, n] the loop can fill (the exporters
/// declare input_ids, position_ids and attention_mask int64 or int32).
bool isIntMatrix(const parc_rt_tensor_desc_t &d, int64_t n) {
  return (d.dtype == PARC_RT_I64 || d.dtype == PARC_RT_I32) && d.rank == 2 &&
         d.dims[1] == n;
}

/// Whether the loop reads the logits `d`: [batch, tokens, vocab] in f32 or
/// a half type (widened on the host to pick the token).
bool isLogits(const parc_rt_tensor_desc_t &d, int64_t batch, int64_t tokens) {
  return d.rank == 3 && d.dims[0] == batch && d.dims[1] == tokens &&
         (d.dtype == PARC_RT_F32 || d.dtype == PARC_RT_F16 ||
          d.dtype == PARC_RT_BF16);
}

/// The program's batch and its checks: every input has a role the loop
/// fills, the token input is an integer [batch, 1].
parc_rt_status_t checkProgram(const parc_rt_program_t *p, int64_t &batch) {
  if (!p->input_roles || p->max_seq < 1)
    return fail(PARC_RT_INVALID_ARGUMENT,
                "--prompt: program '%s' keeps no KV cache (compile the model "
                "with parc compile --max-seq S)",
                p->name);
  batch = -1;
  for (int64_t i = 0; i < p->num_inputs; ++i) {
    const parc_rt_tensor_desc_t &d = p->inputs[i];
    const int64_t role = p->input_roles[i];
    if (role == PARC_RT_ROLE_DATA)
      return fail(PARC_RT_INVALID_ARGUMENT,
                  "--prompt: input '%s' has no part in the token loop (it "
                  "feeds input_ids, position_ids, attention_mask and the KV "
                  "cache)",
                  d.name);
    if ((role == PARC_RT_ROLE_TOKENS || role == PARC_RT_ROLE_POSITIONS) &&
        !isIntMatrix(d, 1))
      return fail(PARC_RT_INVALID_ARGUMENT,
                  "--prompt: input '%s' must be i64 or i32 [batch, 1]", d.name);
    if (role == PARC_RT_ROLE_ATTENTION_MASK && !isIntMatrix(d, p->max_seq))
      return fail(PARC_RT_INVALID_ARGUMENT,
                  "--prompt: input '%s' must be i64 or i32 [batch, %lld]",
                  d.name, (long long)p->max_seq);
    if (role == PARC_RT_ROLE_TOKENS)
      batch = d.dims[0];
  }
  // Only the last pipeline stage has outputs: the logits.
  if (batch < 1 || (p->num_outputs > 0 && !isLogits(p->outputs[0], batch, 1)))
    return fail(PARC_RT_INVALID_ARGUMENT,
                "--prompt: the program needs input_ids and logits [batch, 1, "
                "vocab] (f32, f16 or bf16) as its first output");
  return PARC_RT_OK;
}

/// The tokens per sequence of the prefill program `f` (its input_ids'
/// width), checked: every input has a role, the same batch as the decode
/// program `p`, and its caches are `p`'s inputs of the same names and
/// sizes (the buffers it writes are the decode program's).
parc_rt_status_t checkPrefill(const parc_rt_program_t *p,
                              const parc_rt_program_t *f, int64_t batch,
                              int64_t &tokens) {
  tokens = 0;
  for (int64_t i = 0; i < f->num_inputs; ++i)
    if (f->input_roles && f->input_roles[i] == PARC_RT_ROLE_TOKENS &&
        f->inputs[i].rank == 2)
      tokens = f->inputs[i].dims[1];
  const bool logits =
      f->num_outputs == 0 || isLogits(f->outputs[0], batch, tokens);
  if (!f->input_roles || f->max_seq != p->max_seq || tokens < 1 || !logits)
    return fail(PARC_RT_INVALID_ARGUMENT,
                "--prompt: prefill program '%s' does not match program '%s' "
                "(it needs input_ids [%lld, P], logits [%lld, P, vocab] and "
                "a cache of %lld tokens)",
                f->name, p->name, (long long)batch, (long long)batch,
                (long long)p->max_seq);
  for (int64_t i = 0; i < f->num_inputs; ++i) {
    const parc_rt_tensor_desc_t &d = f->inputs[i];
    const int64_t role = f->input_roles[i];
    bool ok = role != PARC_RT_ROLE_DATA;
    if (role == PARC_RT_ROLE_TOKENS || role == PARC_RT_ROLE_POSITIONS)
      ok = isIntMatrix(d, tokens) && d.dims[0] == batch;
    if (role == PARC_RT_ROLE_ATTENTION_MASK)
      ok = isIntMatrix(d, p->max_seq);
    if (role == PARC_RT_ROLE_CACHE) {
      ok = false;
      for (int64_t j = 0; j < p->num_inputs; ++j)
        ok |= std::strcmp(p->inputs[j].name, d.name) == 0 &&
              p->input_roles[j] == PARC_RT_ROLE_CACHE &&
              bytesOf(p->inputs[j]) == bytesOf(d);
    }
    if (!ok)
      return fail(PARC_RT_INVALID_ARGUMENT,
                  "--prompt: input '%s' of prefill program '%s' does not "
                  "match program '%s' (a cache of the same name and size, or "
                  "an input the loop feeds)",
                  d.name, f->name, p->name);
  }
  return PARC_RT_OK;
}

/// Percentile `q` (0..1) of `v` by nearest rank.
double percentile(std::vector<double> v, double q) {
  if (v.empty())
    return 0;
  std::sort(v.begin(), v.end());
  size_t k = size_t(q * double(v.size()) + 0.999999);
  return v[std::min(v.size(), std::max<size_t>(k, 1)) - 1];
}

/// Each row's place in the token loop. Row b's first lengths[b] tokens are
/// its prompt; filled[b] of its tokens are known (prompt, then the new ones
/// taken so far), and step t, at position t for every row, feeds token t.
/// A row chooses its next token at the step that feeds its last known one,
/// until --eos or its --max-new-tokens; after that it feeds a filler token
/// whose cache entries and logits nothing reads.
struct Rows {
  int64_t batch = 0, total = 0; // total: the longest prompt + new tokens
  int64_t shortest = 0, longest = 0;
  std::vector<int64_t> lengths, filled, tokens; // tokens: [batch, total]
  std::vector<char> done;

  bool choosesAt(int64_t b, int64_t t) const {
    return !done[b] && t + 1 == filled[b];
  }
  bool allDone() const {
    return std::all_of(done.begin(), done.end(), [](char d) { return d; });
  }
  int64_t generated(int64_t b) const { return filled[b] - lengths[b]; }

  /// The shortest and longest prompt, from `lengths`.
  void measure() {
    shortest = *std::min_element(lengths.begin(), lengths.end());
    longest = *std::max_element(lengths.begin(), lengths.end());
  }
  /// Rows first..first+count-1, as a batch of their own (the same total).
  Rows group(int64_t first, int64_t count) const {
    Rows g;
    g.batch = count, g.total = total;
    g.lengths.assign(&lengths[first], &lengths[first + count]);
    g.filled.assign(&filled[first], &filled[first + count]);
    g.done.assign(&done[first], &done[first + count]);
    g.tokens.assign(&tokens[first * total], &tokens[(first + count) * total]);
    g.measure();
    return g;
  }
  /// Writes group `g` back as rows first.. of this batch.
  void store(const Rows &g, int64_t first) {
    std::copy(g.filled.begin(), g.filled.end(), &filled[first]);
    std::copy(g.done.begin(), g.done.end(), &done[first]);
    std::copy(g.tokens.begin(), g.tokens.end(), &tokens[first * total]);
  }
};

void printFigures(const Rows &rows, int64_t groups, double ttftMs,
                  const std::vector<double> &stepMs, double totalMs,
                  int64_t prefilled) {
  int64_t newTokens = 0, most = 0;
  for (int64_t b = 0; b < rows.batch; ++b) {
    newTokens += rows.generated(b);
    most = std::max(most, rows.generated(b));
  }
  if (rows.shortest == rows.longest)
    std::printf("parc: generate: batch %lld, prompt %lld tokens, %lld new "
                "tokens per sequence\n",
                (long long)rows.batch, (long long)rows.longest,
                (long long)most);
  else
    std::printf("parc: generate: batch %lld, prompts of %lld to %lld tokens, "
                "up to %lld new tokens per sequence\n",
                (long long)rows.batch, (long long)rows.shortest,
                (long long)rows.longest, (long long)most);
  if (groups > 1)
    std::printf("parc: generate: %lld groups of %lld rows, each with its own "
                "cache, stepping in turn (one group's choice is agreed on "
                "while the next computes)\n",
                (long long)groups, (long long)(rows.batch / groups));
  if (prefilled > 0)
    std::printf("parc: TTFT %.3f ms (every sequence's first new token; "
                "prefill of %lld prompt tokens in one step, the rest one "
                "token per step)\n",
                ttftMs, (long long)prefilled);
  else
    std::printf("parc: TTFT %.3f ms (every sequence's first new token; "
                "prompt fed one token per step)\n",
                ttftMs);
  std::printf("parc: per-token latency p50 %.3f ms, p99 %.3f ms over %zu "
              "decode steps%s\n",
              percentile(stepMs, 0.5), percentile(stepMs, 0.99), stepMs.size(),
              groups > 1 ? " (a group's time from one token to its next)" : "");
  std::printf("parc: %.1f tokens/s (new tokens of every sequence over the "
              "whole generation)\n",
              totalMs > 0 ? double(newTokens) * 1e3 / totalMs : 0.0);
}

/// --prompt-lengths: i64 [batch], each 1..width (the prompt's row width);
/// without the file every row is `width` long.
parc_rt_status_t readLengths(const GenerateOptions &o, int64_t batch,
                             int64_t width, std::vector<int64_t> &lengths) {
  lengths.assign(size_t(batch), width);
  if (o.promptLengths.empty())
    return PARC_RT_OK;
  const char *path = o.promptLengths.c_str();
  parc_rt_dtype_t dtype;
  int64_t rank = 0, dims[PARC_RT_MAX_RANK];
  PARC_RT_RETURN_IF_ERROR(parc_rt_npy_info(path, &dtype, &rank, dims));
  if (dtype != PARC_RT_I64 || rank != 1 || dims[0] != batch)
    return fail(PARC_RT_INVALID_ARGUMENT,
                "--prompt-lengths '%s' must hold i64 [%lld] (one length per "
                "row of the prompt)",
                path, (long long)batch);
  PARC_RT_RETURN_IF_ERROR(
      parc_rt_npy_read_into(path, PARC_RT_I64, 1, dims, lengths.data()));
  for (int64_t b = 0; b < batch; ++b)
    if (lengths[b] < 1 || lengths[b] > width)
      return fail(PARC_RT_INVALID_ARGUMENT,
                  "--prompt-lengths '%s': row %lld has length %lld; give 1 to "
                  "%lld (the prompt's width)",
                  path, (long long)b, (long long)lengths[b], (long long)width);
  return PARC_RT_OK;
}

/// The prompt's token ids and lengths, checked against the program: rows of
/// `total` tokens (the longest prompt then room for the new ones).
parc_rt_status_t readPrompt(const parc_rt_program_t *p,
                            const GenerateOptions &o, int64_t batch,
                            Rows &rows) {
  parc_rt_dtype_t dtype;
  int64_t rank = 0, dims[PARC_RT_MAX_RANK];
  PARC_RT_RETURN_IF_ERROR(
      parc_rt_npy_info(o.prompt.c_str(), &dtype, &rank, dims));
  if (dtype != PARC_RT_I64 || rank != 2 || dims[0] < batch ||
      dims[0] % batch || dims[1] < 1)
    return fail(PARC_RT_INVALID_ARGUMENT,
                "--prompt '%s' must hold i64 [%lld, prompt length] token ids "
                "(the batch the program was compiled for, or a multiple of "
                "it: groups of %lld rows stepping in turn)",
                o.prompt.c_str(), (long long)batch, (long long)batch);
  const int64_t width = dims[1];
  batch = dims[0];
  rows.batch = batch;
  PARC_RT_RETURN_IF_ERROR(readLengths(o, batch, width, rows.lengths));
  rows.measure();
  rows.total = rows.longest + o.maxNewTokens;
  if (rows.total > p->max_seq)
    return fail(PARC_RT_INVALID_ARGUMENT,
                "a prompt of %lld tokens and --max-new-tokens %ld need a cache "
                "of %lld tokens, but the program was compiled with --max-seq "
                "%lld",
                (long long)rows.longest, o.maxNewTokens, (long long)rows.total,
                (long long)p->max_seq);
  std::vector<int64_t> prompt(size_t(batch * width));
  PARC_RT_RETURN_IF_ERROR(parc_rt_npy_read_into(o.prompt.c_str(), PARC_RT_I64,
                                                2, dims, prompt.data()));
  rows.tokens.assign(size_t(batch * rows.total), 0);
  for (int64_t b = 0; b < batch; ++b)
    std::copy_n(&prompt[b * width], rows.lengths[b],
                &rows.tokens[b * rows.total]);
  rows.filled = rows.lengths;
  rows.done.assign(size_t(batch), 0);
  return PARC_RT_OK;
}

/// A program's buffers for the whole generation: its inputs (the caches
/// among them start zeroed) and its arena. Every group of rows has its own
/// inputs and caches; a prefill's caches are its group's decode buffers
/// (`cachesOf`, inputs of `cacheProgram` of the same names). All of them
/// run in one arena (`arenaOf`'s): one forward at a time.
struct StepBuffers {
  std::vector<void *> in, out;
  std::vector<char> owned;
  parc_rt_arena_t *arena = nullptr;
  void *arenaBase = nullptr;

  ~StepBuffers() {
    for (size_t i = 0; i < in.size(); ++i)
      if (owned[i])
        deviceFree(in[i]);
    if (arena)
      parc_rt_arena_release(arena);
  }
  parc_rt_status_t create(const parc_rt_program_t *p, int64_t arenaSize,
                          const StepBuffers *arenaOf = nullptr,
                          const parc_rt_program_t *cacheProgram = nullptr,
                          const StepBuffers *cachesOf = nullptr) {
    in.assign(p->num_inputs, nullptr);
    owned.assign(p->num_inputs, 0);
    out.assign(p->num_outputs, nullptr);
    for (int64_t i = 0; i < p->num_inputs; ++i) {
      if (cachesOf && p->input_roles[i] == PARC_RT_ROLE_CACHE)
        for (int64_t j = 0; j < cacheProgram->num_inputs; ++j)
          if (std::strcmp(cacheProgram->inputs[j].name, p->inputs[i].name) ==
              0)
            in[i] = cachesOf->in[j];
      if (in[i])
        continue;
      PARC_RT_RETURN_IF_ERROR(
          deviceAlloc(bytesOf(p->inputs[i]), "inputs", &in[i]));
      owned[i] = 1;
    }
    if (arenaOf) {
      arenaBase = arenaOf->arenaBase;
      return PARC_RT_OK;
    }
    PARC_RT_RETURN_IF_ERROR(
        parc_rt_arena_create(std::max<int64_t>(arenaSize, 64), 64, &arena));
    arenaBase = parc_rt_arena_base(arena);
    return PARC_RT_OK;
  }
};

/// Uploads integers `v` into an input of `dtype` (i64 or i32, as
/// checkProgram accepted).
parc_rt_status_t uploadInts(void *dst, parc_rt_dtype_t dtype,
                            const std::vector<int64_t> &v) {
  if (dtype == PARC_RT_I64)
    return copyToDevice(dst, v.data(), v.size() * sizeof(int64_t));
  std::vector<int32_t> narrow(v.begin(), v.end());
  return copyToDevice(dst, narrow.data(), narrow.size() * sizeof(int32_t));
}

/// Writes the inputs of the step feeding tokens t..t+n-1 (n = 1 but in a
/// prefill) of every row (a finished row's filler: --eos, or id 0 without
/// one), their positions, and the cache position t.
parc_rt_status_t feedStep(const parc_rt_program_t *p, StepBuffers &buf,
                          const Rows &rows, long eos, int64_t t,
                          int64_t n = 1) {
  const int64_t batch = rows.batch;
  std::vector<int64_t> column(size_t(batch * n)), positions(size_t(batch * n));
  // Entries 0..t+n-1 of every row's cache hold keys.
  std::vector<int64_t> mask(size_t(batch * p->max_seq), 0);
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t k = 0; k < n; ++k) {
      column[b * n + k] = t + k < rows.filled[b]
                              ? rows.tokens[b * rows.total + t + k]
                              : std::max<int64_t>(eos, 0);
      positions[b * n + k] = t + k;
    }
    std::fill_n(&mask[b * p->max_seq], t + n, 1);
  }
  for (int64_t i = 0; i < p->num_inputs; ++i) {
    const int64_t role = p->input_roles[i];
    const parc_rt_dtype_t dtype = p->inputs[i].dtype;
    if (role == PARC_RT_ROLE_TOKENS)
      PARC_RT_RETURN_IF_ERROR(uploadInts(buf.in[i], dtype, column));
    else if (role == PARC_RT_ROLE_POSITIONS)
      PARC_RT_RETURN_IF_ERROR(uploadInts(buf.in[i], dtype, positions));
    else if (role == PARC_RT_ROLE_POSITION)
      PARC_RT_RETURN_IF_ERROR(copyToDevice(buf.in[i], &t, sizeof t));
    else if (role == PARC_RT_ROLE_ATTENTION_MASK)
      PARC_RT_RETURN_IF_ERROR(uploadInts(buf.in[i], dtype, mask));
  }
  return PARC_RT_OK;
}

/// The logits of a step's last token [batch, vocab], on the host as f32
/// (f16 and bf16 widened: the sampler and --logits see f32 whatever the
/// model computes); the output is [batch, tokens, vocab].
parc_rt_status_t readLogits(const parc_rt_program_t *p, const StepBuffers &buf,
                            int64_t batch, std::vector<float> &logits) {
  const parc_rt_dtype_t dtype = p->outputs[0].dtype;
  const int64_t tokens = p->outputs[0].dims[1], vocab = p->outputs[0].dims[2];
  const size_t n = size_t(batch * tokens * vocab);
  std::vector<float> all(n);
  std::vector<uint16_t> half(dtype == PARC_RT_F32 ? 0 : n);
  void *host = dtype == PARC_RT_F32 ? static_cast<void *>(all.data())
                                    : static_cast<void *>(half.data());
  PARC_RT_RETURN_IF_ERROR(
      copyToHost(host, buf.out[0], n * parc_rt_dtype_size(dtype)));
  if (dtype != PARC_RT_F32)
    halfToF32(dtype == PARC_RT_BF16, half.data(), all.data(), n);
  logits.resize(size_t(batch * vocab));
  for (int64_t b = 0; b < batch; ++b)
    std::copy_n(&all[(b * tokens + tokens - 1) * vocab], vocab,
                &logits[b * vocab]);
  return PARC_RT_OK;
}

/// The next token of a row: its argmax (the first maximum, as
/// onnxruntime's loop takes it), or a draw from softmax(logits / T) over
/// the top-k ids, ties ranked by the lower id.
class Sampler {
public:
  explicit Sampler(const GenerateOptions &o) : o(o), rng(o.seed) {}

  int64_t pick(const float *row, int64_t vocab) {
    if (o.temperature <= 0)
      return std::max_element(row, row + vocab) - row;
    const int64_t k = o.topK > 0 ? std::min<int64_t>(o.topK, vocab) : vocab;
    ids.resize(size_t(vocab));
    std::iota(ids.begin(), ids.end(), 0);
    std::partial_sort(ids.begin(), ids.begin() + k, ids.end(),
                      [row](int64_t a, int64_t b) {
                        return row[a] > row[b] || (row[a] == row[b] && a < b);
                      });
    // Weights relative to the largest logit, in double: exp cannot
    // overflow, and a weight that underflows to 0 is never drawn.
    cumulative.resize(size_t(k));
    double sum = 0;
    for (int64_t i = 0; i < k; ++i) {
      sum +=
          std::exp((double(row[ids[i]]) - double(row[ids[0]])) / o.temperature);
      cumulative[i] = sum;
    }
    // 53 bits of the generator, not a std distribution: those are not
    // specified bit for bit, and a seed must give the same tokens anywhere.
    const double u = double(rng() >> 11) * 0x1.0p-53 * sum;
    return ids[std::upper_bound(cumulative.begin(), cumulative.end(), u) -
               cumulative.begin()];
  }

private:
  const GenerateOptions &o;
  std::mt19937_64 rng;
  std::vector<int64_t> ids;
  std::vector<double> cumulative;
};

/// A step's choice for every row, from its logits. Every row draws, in
/// order, even one that is not choosing (finished, or still in its
/// prompt): a row's draws do not depend on when the others stop.
void pickNext(const std::vector<float> &logits, Sampler &sampler,
              std::vector<int64_t> &next) {
  const int64_t batch = int64_t(next.size());
  const int64_t vocab = int64_t(logits.size()) / batch;
  for (int64_t b = 0; b < batch; ++b)
    next[b] = sampler.pick(&logits[b * vocab], vocab);
}

/// parc-run --logits: [steps, batch, vocab], entry [i, b] the logits that
/// chose row b's new token i (after its prompt + i tokens), zeros where the
/// row has no token i (it stopped at --eos). Kept on the writer
/// and written once at the end (parc_rt_npy_write renames a finished
/// temporary file into place: a reader never sees half of one).
struct LogitsLog {
  std::vector<float> data; // [max new tokens, batch, vocab]
  int64_t steps = 0;

  /// Step t's logits of a group (`rows`, rows first.. of a batch of
  /// `batch`), before takeNext: rows choosing at t.
  void add(const Rows &rows, int64_t first, int64_t batch, long maxNew,
           int64_t t, const std::vector<float> &step) {
    const int64_t vocab = int64_t(step.size()) / rows.batch;
    data.resize(size_t(maxNew * batch * vocab));
    for (int64_t b = 0; b < rows.batch; ++b) {
      if (!rows.choosesAt(b, t))
        continue;
      const int64_t i = rows.generated(b);
      std::copy_n(&step[b * vocab], vocab,
                  &data[(i * batch + first + b) * vocab]);
      steps = std::max(steps, i + 1);
    }
  }
  parc_rt_status_t write(const std::string &path, int64_t batch,
                         int64_t vocab) const {
    const int64_t shape[3] = {steps, batch, vocab};
    return parc_rt_npy_write(path.c_str(), PARC_RT_F32, 3, shape, data.data());
  }
};

/// Every rank runs every step, on the same tokens: the rank whose logits
/// choose (the last stage's first, the manifest's output_rank) broadcasts
/// the next token of each row over the world, with the collectives'
/// timeout. The weights and caches stay where they are; only these batch
/// ids move. The buffer is device memory (NCCL reads no host memory).
class TokenAgreement {
public:
  ~TokenAgreement() {
    if (ids)
      deviceFree(ids);
  }
  parc_rt_status_t create(parc_rt_context_t *ctx, int chooser, int64_t batch) {
    world = parc_rt_context_world(ctx);
    root = chooser;
    bytes = size_t(batch) * sizeof(int64_t);
    if (parc_rt_comm_size(world) == 1)
      return PARC_RT_OK;
    if (root < 0 || root >= parc_rt_comm_size(world))
      return fail(PARC_RT_INVALID_ARGUMENT,
                  "generate: output rank %d is not a rank of the %d-rank "
                  "world",
                  root, parc_rt_comm_size(world));
    return deviceAlloc(bytes, "token agreement", &ids);
  }
  /// Whether this rank's tokens are the agreed ones.
  bool chooses() const { return parc_rt_comm_rank(world) == root; }
  /// Starts sending the chooser's `next`; finish() waits for it. A group's
  /// agreement is in flight while other groups compute (every rank starts
  /// and finishes the groups' agreements in one order).
  parc_rt_status_t start(const std::vector<int64_t> &next) {
    if (!ids)
      return PARC_RT_OK;
    PARC_RT_RETURN_IF_ERROR(copyToDevice(ids, next.data(), bytes));
    return parc_rt_broadcast_start(world, ids, int64_t(next.size()),
                                   PARC_RT_I64, root, &request);
  }
  /// `next` holds the chooser's tokens on every rank afterwards.
  parc_rt_status_t finish(std::vector<int64_t> &next) {
    if (!ids)
      return PARC_RT_OK;
    parc_rt_request_t *r = request;
    request = nullptr;
    PARC_RT_RETURN_IF_ERROR(parc_rt_wait(r));
    return copyToHost(next.data(), ids, bytes);
  }

private:
  parc_rt_comm_t *world = nullptr;
  int root = 0;
  size_t bytes = 0;
  void *ids = nullptr;
  parc_rt_request_t *request = nullptr;
};

/// Step t's agreed choice becomes token t + 1 of every row choosing at t;
/// a row is done at --eos or at its own --max-new-tokens.
void takeNext(const std::vector<int64_t> &next, const GenerateOptions &o,
              int64_t t, Rows &rows) {
  for (int64_t b = 0; b < rows.batch; ++b) {
    if (!rows.choosesAt(b, t))
      continue;
    rows.tokens[b * rows.total + rows.filled[b]++] = next[b];
    rows.done[b] = next[b] == o.eos || rows.generated(b) == o.maxNewTokens;
  }
}

/// A group of rows that steps together: its own inputs, caches and token
/// agreement, and where it is in the loop.
struct Group {
  int64_t first = 0; // its first row in the batch
  Rows rows;
  StepBuffers buf, prefillBuf;
  TokenAgreement agreement;
  std::vector<int64_t> next;
  int64_t t = 0;         // the first token its next forward feeds
  int64_t choosing = -1; // the step whose agreement is in flight, or -1
  bool running = true;
  // The writer's figures: when each new token became known.
  double ttftMs = 0, lastMs = 0;
  std::vector<double> stepMs;
};

double msSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start)
      .count();
}

/// One generation: the programs, the groups of rows, and what picks the
/// next tokens.
struct Generation {
  Generation(parc_rt_context_t *ctx, const GenerateOptions &o, void **weights,
             bool writer)
      : ctx(ctx), o(o), weights(weights), writer(writer), sampler(o) {}

  /// Runs `f` on `b` feeding tokens t..t+n-1 of every row of `g`.
  parc_rt_status_t forward(const parc_rt_program_t *f, StepBuffers &b,
                           const Group &g, int64_t t, int64_t n) {
    PARC_RT_RETURN_IF_ERROR(feedStep(f, b, g.rows, o.eos, t, n));
    f->forward(ctx, b.arenaBase, b.in.data(), weights, b.out.data());
    return deviceSynchronize();
  }
  /// After the forward of `f` whose last token is t: from the shortest
  /// prompt's last step on, the ranks holding logits pick each row's next
  /// token (before the arena holding them is reused) and the agreement
  /// starts.
  parc_rt_status_t startChoice(const parc_rt_program_t *f,
                               const StepBuffers &b, Group &g, int64_t t) {
    if (t + 1 < g.rows.shortest)
      return PARC_RT_OK;
    // Only the chooser's logits are whole (dist-comm gathers them to it).
    if (f->num_outputs > 0 && g.agreement.chooses()) {
      PARC_RT_RETURN_IF_ERROR(readLogits(f, b, g.rows.batch, logits));
      pickNext(logits, sampler, g.next);
      if (writer && !o.logitsPath.empty())
        logitsLog.add(g.rows, g.first, batch, o.maxNewTokens, t, logits);
    }
    g.choosing = t;
    return g.agreement.start(g.next);
  }
  /// The agreed choice of g's last step becomes each choosing row's next
  /// token; the writer notes when.
  parc_rt_status_t finishChoice(Group &g) {
    if (g.choosing < 0)
      return PARC_RT_OK;
    const int64_t t = g.choosing;
    g.choosing = -1;
    auto begin = std::chrono::steady_clock::now();
    PARC_RT_RETURN_IF_ERROR(g.agreement.finish(g.next));
    waitMs += msSince(begin);
    takeNext(g.next, o, t, g.rows);
    const double now = msSince(start);
    if (t + 1 == g.rows.longest)
      g.ttftMs = now;
    else if (t + 1 > g.rows.longest)
      g.stepMs.push_back(now - g.lastMs);
    g.lastMs = now;
    return PARC_RT_OK;
  }

  parc_rt_context_t *ctx;
  const GenerateOptions &o;
  void **weights;
  bool writer;
  int64_t batch = 0; // rows of every group
  std::vector<Group> groups;
  std::vector<float> logits;
  Sampler sampler;
  LogitsLog logitsLog;
  std::chrono::steady_clock::time_point start;
  // This rank's wall time in each forward of a decode step, and blocked
  // waiting for agreed tokens.
  std::vector<double> stepsMs;
  double waitMs = 0;
};

/// Every rank's figures, gathered to the writer (a collective): its decode
/// forwards' p50 (a later stage's includes its wait for the earlier
/// stage's activations), their share of the generation's wall time, and
/// its time blocked waiting for agreed tokens.
parc_rt_status_t reportRanks(const Generation &g, double totalMs) {
  double busy = 0;
  for (double ms : g.stepsMs)
    busy += ms;
  constexpr int kFigures = 3;
  const std::vector<double> mine = {percentile(g.stepsMs, 0.5),
                                    totalMs > 0 ? busy / totalMs : 0,
                                    g.waitMs};
  std::vector<double> all;
  parc_rt_comm_t *world = parc_rt_context_world(g.ctx);
  PARC_RT_RETURN_IF_ERROR(gatherPerRank(world, mine, all));
  const int size = parc_rt_comm_size(world);
  if (!g.writer)
    return PARC_RT_OK;
  for (int r = 0; r < size; ++r) {
    const double *a = &all[size_t(kFigures * r)];
    const std::string label = size_t(r) < g.o.rankLabels.size()
                                  ? g.o.rankLabels[size_t(r)]
                                  : "rank " + std::to_string(r);
    std::printf("parc: %s: decode forward p50 %.3f ms (a stage's wait for "
                "its neighbour's activations included), %.0f%% of the "
                "generation in forwards, %.3f ms waiting for tokens\n",
                label.c_str(), a[0], 100 * a[1], a[2]);
  }
  return PARC_RT_OK;
}

/// The rank holding the outputs: tokens.npy, the figures, --logits.
parc_rt_status_t writeResults(const parc_rt_program_t *p, Generation &g,
                              Rows &rows, const std::string &outputDir,
                              double totalMs, int64_t prefilled) {
  const GenerateOptions &o = g.o;
  double ttftMs = 0;
  std::vector<double> stepMs;
  for (const Group &group : g.groups) {
    rows.store(group.rows, group.first);
    ttftMs = std::max(ttftMs, group.ttftMs);
    stepMs.insert(stepMs.end(), group.stepMs.begin(), group.stepMs.end());
  }
  // After its end (--eos, its own --max-new-tokens, or a shorter prompt)
  // a row holds --eos, or -1 without one.
  for (int64_t b = 0; b < rows.batch; ++b) {
    auto row = rows.tokens.begin() + b * rows.total;
    std::fill(row + rows.filled[b], row + rows.total, o.eos);
  }
  printFigures(rows, int64_t(g.groups.size()), ttftMs, stepMs, totalMs,
               prefilled);
  if (!o.logitsPath.empty())
    PARC_RT_RETURN_IF_ERROR(
        g.logitsLog.write(o.logitsPath, rows.batch, p->outputs[0].dims[2]));
  if (outputDir.empty())
    return PARC_RT_OK;
  const std::string path = outputDir + "/tokens.npy";
  const int64_t shape[2] = {rows.batch, rows.total};
  return parc_rt_npy_write(path.c_str(), PARC_RT_I64, 2, shape,
                           rows.tokens.data());
}

/// The groups of `rows` (the program's batch each), their buffers in one
/// arena for both programs, and their token agreements.
parc_rt_status_t createGroups(const parc_rt_program_t *p, int64_t programBatch,
                              const Rows &rows, Generation &g) {
  const parc_rt_program_t *f = p->prefill;
  g.batch = rows.batch;
  g.groups = std::vector<Group>(size_t(rows.batch / programBatch));
  for (size_t i = 0; i < g.groups.size(); ++i) {
    Group &group = g.groups[i];
    group.first = int64_t(i) * programBatch;
    group.rows = rows.group(group.first, programBatch);
    group.next.assign(size_t(programBatch), 0);
    const StepBuffers *arena = i ? &g.groups[0].buf : nullptr;
    PARC_RT_RETURN_IF_ERROR(group.buf.create(
        p, std::max(p->arena_size, f ? f->arena_size : int64_t(0)), arena));
    if (f)
      PARC_RT_RETURN_IF_ERROR(
          group.prefillBuf.create(f, 0, &group.buf, p, &group.buf));
    PARC_RT_RETURN_IF_ERROR(
        group.agreement.create(g.ctx, g.o.outputRank, programBatch));
  }
  return PARC_RT_OK;
}

} // namespace

parc_rt_status_t runGeneration(parc_rt_context_t *ctx,
                               const parc_rt_program_t *p,
                               const GenerateOptions &o, void **weights,
                               const std::string &outputDir, bool writer) {
  int64_t batch = 0, prefillLen = 0;
  PARC_RT_RETURN_IF_ERROR(checkProgram(p, batch));
  const parc_rt_program_t *f = p->prefill;
  if (f)
    PARC_RT_RETURN_IF_ERROR(checkPrefill(p, f, batch, prefillLen));
  Generation g(ctx, o, weights, writer);
  Rows rows;
  PARC_RT_RETURN_IF_ERROR(readPrompt(p, o, batch, rows));
  PARC_RT_RETURN_IF_ERROR(createGroups(p, batch, rows, g));
  // The prefill takes the first P tokens when every row has them; shorter
  // prompts are fed a token per step.
  const int64_t prefilled = f && rows.shortest >= prefillLen ? prefillLen : 0;
  Group &first = g.groups.front();
  for (long w = 0; w < o.warmup; ++w) {
    PARC_RT_RETURN_IF_ERROR(g.forward(p, first.buf, first, 0, 1));
    if (prefilled)
      PARC_RT_RETURN_IF_ERROR(
          g.forward(f, first.prefillBuf, first, 0, prefilled));
  }
  g.start = std::chrono::steady_clock::now();
  // Each group's step, then its choice in flight while the next group's
  // step runs: under --pp a stage computes one group while the later
  // stages compute the groups before it. Every rank visits the groups in
  // the same order and stops a group on the same agreed tokens.
  for (Group &group : g.groups) {
    if (!prefilled)
      continue;
    PARC_RT_RETURN_IF_ERROR(
        g.forward(f, group.prefillBuf, group, 0, prefilled));
    PARC_RT_RETURN_IF_ERROR(
        g.startChoice(f, group.prefillBuf, group, prefilled - 1));
    group.t = prefilled;
  }
  for (bool any = true; any;) {
    any = false;
    for (Group &group : g.groups) {
      if (!group.running)
        continue;
      PARC_RT_RETURN_IF_ERROR(g.finishChoice(group));
      group.running = group.t + 1 < group.rows.total && !group.rows.allDone();
      if (!group.running)
        continue;
      any = true;
      auto begin = std::chrono::steady_clock::now();
      PARC_RT_RETURN_IF_ERROR(g.forward(p, group.buf, group, group.t, 1));
      g.stepsMs.push_back(msSince(begin));
      PARC_RT_RETURN_IF_ERROR(g.startChoice(p, group.buf, group, group.t));
      ++group.t;
    }
  }
  const double totalMs = msSince(g.start);
  if (writer)
    PARC_RT_RETURN_IF_ERROR(
        writeResults(p, g, rows, outputDir, totalMs, prefilled));
  return reportRanks(g, totalMs);
}

} // namespace parc::rt
