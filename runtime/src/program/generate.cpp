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
//
//===----------------------------------------------------------------------===//

#include "generate.h"

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
};

void printFigures(const Rows &rows, double ttftMs,
                  const std::vector<double> &stepMs, int64_t prefilled) {
  double total = ttftMs;
  for (double ms : stepMs)
    total += ms;
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
              "decode steps\n",
              percentile(stepMs, 0.5), percentile(stepMs, 0.99), stepMs.size());
  std::printf("parc: %.1f tokens/s (new tokens of every sequence over the "
              "whole generation)\n",
              total > 0 ? double(newTokens) * 1e3 / total : 0.0);
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
  if (dtype != PARC_RT_I64 || rank != 2 || dims[0] != batch || dims[1] < 1)
    return fail(PARC_RT_INVALID_ARGUMENT,
                "--prompt '%s' must hold i64 [%lld, prompt length] token ids "
                "(the batch the program was compiled for)",
                o.prompt.c_str(), (long long)batch);
  const int64_t width = dims[1];
  rows.batch = batch;
  PARC_RT_RETURN_IF_ERROR(readLengths(o, batch, width, rows.lengths));
  rows.shortest = *std::min_element(rows.lengths.begin(), rows.lengths.end());
  rows.longest = *std::max_element(rows.lengths.begin(), rows.lengths.end());
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
/// among them start zeroed) and its arena. A prefill's are the decode
/// program's caches and arena (`shared`): it runs between, never beside,
/// decode steps.
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
                          const parc_rt_program_t *sharedProgram = nullptr,
                          const StepBuffers *shared = nullptr) {
    in.assign(p->num_inputs, nullptr);
    owned.assign(p->num_inputs, 0);
    out.assign(p->num_outputs, nullptr);
    for (int64_t i = 0; i < p->num_inputs; ++i) {
      if (shared && p->input_roles[i] == PARC_RT_ROLE_CACHE)
        for (int64_t j = 0; j < sharedProgram->num_inputs; ++j)
          if (std::strcmp(sharedProgram->inputs[j].name, p->inputs[i].name) ==
              0)
            in[i] = shared->in[j];
      if (in[i])
        continue;
      PARC_RT_RETURN_IF_ERROR(
          deviceAlloc(bytesOf(p->inputs[i]), "inputs", &in[i]));
      owned[i] = 1;
    }
    if (shared) {
      arenaBase = shared->arenaBase;
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

  /// Step t's logits, before takeNext: rows choosing at t.
  void add(const Rows &rows, long maxNew, int64_t t,
           const std::vector<float> &step) {
    const int64_t batch = rows.batch, vocab = int64_t(step.size()) / batch;
    data.resize(size_t(maxNew * batch * vocab));
    for (int64_t b = 0; b < batch; ++b) {
      if (!rows.choosesAt(b, t))
        continue;
      const int64_t i = rows.generated(b);
      std::copy_n(&step[b * vocab], vocab, &data[(i * batch + b) * vocab]);
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
  /// `next` holds the chooser's tokens on every rank afterwards.
  parc_rt_status_t agree(std::vector<int64_t> &next) {
    if (!ids)
      return PARC_RT_OK;
    PARC_RT_RETURN_IF_ERROR(copyToDevice(ids, next.data(), bytes));
    parc_rt_request_t *request = nullptr;
    PARC_RT_RETURN_IF_ERROR(parc_rt_broadcast_start(
        world, ids, int64_t(next.size()), PARC_RT_I64, root, &request));
    PARC_RT_RETURN_IF_ERROR(parc_rt_wait(request));
    return copyToHost(next.data(), ids, bytes);
  }

private:
  parc_rt_comm_t *world = nullptr;
  int root = 0;
  size_t bytes = 0;
  void *ids = nullptr;
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

/// One generation: the programs, their buffers, the rows, and what picks
/// and agrees on each next token.
struct Generation {
  Generation(parc_rt_context_t *ctx, const GenerateOptions &o, void **weights,
             bool writer)
      : ctx(ctx), o(o), weights(weights), writer(writer), sampler(o) {}

  /// Runs `f` on `b` feeding tokens t..t+n-1 of every row.
  parc_rt_status_t forward(const parc_rt_program_t *f, StepBuffers &b,
                           int64_t t, int64_t n) {
    PARC_RT_RETURN_IF_ERROR(feedStep(f, b, rows, o.eos, t, n));
    f->forward(ctx, b.arenaBase, b.in.data(), weights, b.out.data());
    return deviceSynchronize();
  }
  /// After the forward of `f` whose last token is t: from the shortest
  /// prompt's last step on, each choosing row takes its next token.
  parc_rt_status_t choose(const parc_rt_program_t *f, const StepBuffers &b,
                          int64_t t) {
    if (t + 1 < rows.shortest)
      return PARC_RT_OK;
    if (f->num_outputs > 0) {
      PARC_RT_RETURN_IF_ERROR(readLogits(f, b, rows.batch, logits));
      pickNext(logits, sampler, next);
      if (writer && !o.logitsPath.empty())
        logitsLog.add(rows, o.maxNewTokens, t, logits);
    }
    PARC_RT_RETURN_IF_ERROR(agreement.agree(next));
    takeNext(next, o, t, rows);
    return PARC_RT_OK;
  }

  parc_rt_context_t *ctx;
  const GenerateOptions &o;
  void **weights;
  bool writer;
  Rows rows;
  StepBuffers buf, prefillBuf;
  TokenAgreement agreement;
  std::vector<int64_t> next;
  std::vector<float> logits;
  Sampler sampler;
  LogitsLog logitsLog;
};

double msSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(
             std::chrono::steady_clock::now() - start)
      .count();
}

/// The rank holding the outputs: tokens.npy, the figures, --logits.
parc_rt_status_t writeResults(const parc_rt_program_t *p, Generation &g,
                              const std::string &outputDir, double ttftMs,
                              const std::vector<double> &stepMs,
                              int64_t prefilled) {
  Rows &rows = g.rows;
  const GenerateOptions &o = g.o;
  // After its end (--eos, its own --max-new-tokens, or a shorter prompt)
  // a row holds --eos, or -1 without one.
  for (int64_t b = 0; b < rows.batch; ++b) {
    auto row = rows.tokens.begin() + b * rows.total;
    std::fill(row + rows.filled[b], row + rows.total, o.eos);
  }
  printFigures(rows, ttftMs, stepMs, prefilled);
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
  Rows &rows = g.rows;
  PARC_RT_RETURN_IF_ERROR(readPrompt(p, o, batch, rows));
  // One arena for both programs: they run one after the other.
  PARC_RT_RETURN_IF_ERROR(
      g.buf.create(p, std::max(p->arena_size, f ? f->arena_size : int64_t(0))));
  if (f)
    PARC_RT_RETURN_IF_ERROR(g.prefillBuf.create(f, 0, p, &g.buf));
  // The prefill takes the first P tokens when every row has them; shorter
  // prompts are fed a token per step.
  const int64_t prefilled = f && rows.shortest >= prefillLen ? prefillLen : 0;
  PARC_RT_RETURN_IF_ERROR(g.agreement.create(ctx, o.outputRank, batch));
  g.next.assign(size_t(batch), 0);
  std::vector<double> stepMs;
  double ttftMs = 0, elapsed = 0;
  for (long w = 0; w < o.warmup; ++w) {
    PARC_RT_RETURN_IF_ERROR(g.forward(p, g.buf, 0, 1));
    if (prefilled)
      PARC_RT_RETURN_IF_ERROR(g.forward(f, g.prefillBuf, 0, prefilled));
  }
  int64_t t = 0;
  if (prefilled) {
    auto start = std::chrono::steady_clock::now();
    PARC_RT_RETURN_IF_ERROR(g.forward(f, g.prefillBuf, 0, prefilled));
    PARC_RT_RETURN_IF_ERROR(g.choose(f, g.prefillBuf, prefilled - 1));
    elapsed = msSince(start);
    if (prefilled == rows.longest)
      ttftMs = elapsed;
    t = prefilled;
  }
  for (; t + 1 < rows.total && !rows.allDone(); ++t) {
    auto start = std::chrono::steady_clock::now();
    PARC_RT_RETURN_IF_ERROR(g.forward(p, g.buf, t, 1));
    PARC_RT_RETURN_IF_ERROR(g.choose(p, g.buf, t));
    const double ms = msSince(start);
    elapsed += ms;
    if (t + 1 == rows.longest)
      ttftMs = elapsed;
    else if (t + 1 > rows.longest)
      stepMs.push_back(ms);
  }
  if (!writer)
    return PARC_RT_OK;
  return writeResults(p, g, outputDir, ttftMs, stepMs, prefilled);
}

} // namespace parc::rt
