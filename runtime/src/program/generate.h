//===- generate.h - the token loop of a generating program -------*- C++
//-*-===//
#ifndef PARC_RT_PROGRAM_GENERATE_H
#define PARC_RT_PROGRAM_GENERATE_H

#include "parc/program.h"

#include <string>
#include <vector>

namespace parc::rt {

struct GenerateOptions {
  std::string prompt; // .npy of i64 [batch, prompt length]
  /// parc-run --prompt-lengths: .npy of i64 [batch], row b's prompt is its
  /// first lengths[b] ids (the rest of the row is padding, never fed);
  /// empty: every row is the prompt's full width.
  std::string promptLengths;
  long maxNewTokens = 0;
  long eos = -1; // -1: none
  /// Untimed runs of the first step before the loop (parc-run --warmup):
  /// each writes the same cache entry the first timed step then rewrites.
  long warmup = 0;
  /// Sampling (parc-run --temperature/--top-k/--seed): 0 is greedy; else
  /// softmax(logits / temperature) over the topK largest (0: all), drawn
  /// from a generator seeded with `seed`, so a seed repeats its tokens.
  double temperature = 0;
  long topK = 0;
  unsigned long long seed = 0;
  /// --logits: the writer stores every step's logits [steps, batch, vocab]
  /// here as f32, f16/bf16 ones widened (through a temporary file and a
  /// rename).
  std::string logitsPath;
  /// The rank whose logits choose every next token, broadcast to all
  /// ranks (the manifest's output_rank: the last stage's first rank).
  int outputRank = 0;
  /// Each world rank's name in the figures ("rank 1 (stage 0, tp 1)").
  std::vector<std::string> rankLabels;
};

/// Runs the prompt and then one step per new token through `p` (a program
/// nn-kv-cache made: see its input roles), greedily or sampling; the cache and
/// weights stay where they are between steps. Rows of different prompt lengths
/// share each step's position: a shorter row starts generating earlier. The
/// rank holding the outputs writes `outputDir`/tokens.npy ([batch, longest
/// prompt + new], each row its prompt, its new tokens, then --eos or -1)
/// and prints the figures, overall and per rank (a collective: every rank
/// sends its own).
parc_rt_status_t runGeneration(parc_rt_context_t *ctx,
                               const parc_rt_program_t *p,
                               const GenerateOptions &o, void **weights,
                               const std::string &outputDir, bool writer);

} // namespace parc::rt

#endif // PARC_RT_PROGRAM_GENERATE_H
