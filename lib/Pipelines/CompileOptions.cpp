//===- CompileOptions.cpp - checking the compile pipeline's options -------===//
//
// Everything parc refuses before a pass runs: out-of-range degrees, worlds
// too large, combinations no pass builds. Messages name options through the
// caller's speller.
//
//===----------------------------------------------------------------------===//

#include "parc/Pipelines/CompileOptions.h"
#include "parc/Plan/Planner.h"
#include "parc/Support/CommandLine.h"

#include "llvm/Support/FormatVariadic.h"

using namespace parc;

namespace {

llvm::Error refuse(const llvm::Twine &message) {
  return llvm::createStringError(message);
}

/// Each numeric option in its range (--tp 2147483648 once ran out of
/// memory), then the world they make together.
llvm::Error checkRanges(const CompileOptions &o, OptionSpeller spell) {
  using cli::intRange;
  const int64_t maxRanks = CompileOptions::kMaxRanks;
  std::vector<cli::Range> ranges = {
      intRange("tp", o.tp, 1, maxRanks),
      intRange("pp", o.pp, 1, maxRanks),
      intRange("dp", o.dp, 1, maxRanks),
      intRange("ep", o.ep, 1, maxRanks),
      intRange("pp-virtual", o.ppVirtual, 1, 1024),
      intRange("micro-batches", o.microBatches, 1, 1 << 20),
      intRange("overlap-chunks", o.overlapChunks, 0, 1024),
      cli::realRange("capacity-factor", o.capacityFactor, 0, 1024)};
  for (int64_t layers : o.ppLayout)
    ranges.push_back(intRange("pp-layout", layers, 1, 1 << 20));
  for (const cli::Range &r : ranges)
    if (!r.inRange)
      return refuse(spell(r.flag) + " must be at least " + r.min +
                    " and at most " + r.max + ", not " + r.value);
  // Each degree is at most 2^16: their product fits in 64 bits.
  int64_t world = o.ranksPerStage() * o.pp * o.dp;
  if (world > maxRanks)
    return refuse(llvm::formatv("{0} {1}, {2} {3}, {4} {5} and {6} {7} make "
                                "{8} ranks: at most {9} are accepted",
                                spell("tp"), o.tp, spell("pp"), o.pp,
                                spell("ep"), o.ep, spell("dp"), o.dp, world,
                                maxRanks));
  return llvm::Error::success();
}

/// Generation (a KV cache kept on the ranks) and what it does not combine
/// with yet.
llvm::Error checkGeneration(const CompileOptions &o, OptionSpeller spell) {
  if (!o.kvCache.empty() && !o.maxSeq)
    return refuse(spell("kv-cache") + " needs " + spell("max-seq") +
                  " S (the cache's capacity in tokens)");
  if (o.prefillLen && !o.maxSeq)
    return refuse(spell("prefill-len") + " needs " + spell("max-seq") +
                  " S (the prefill program writes the decode program's "
                  "cache)");
  if (!o.maxSeq)
    return llvm::Error::success();
  const std::string maxSeq = spell("max-seq");
  // The prefill writes entries 0..P-1 and leaves room for a decode step.
  if (o.prefillLen && *o.maxSeq >= 2 &&
      (*o.prefillLen < 1 || *o.prefillLen >= *o.maxSeq))
    return refuse(llvm::formatv("{0} {1}: give 1 to {2} ({3} {4} minus one: "
                                "the cache keeps room for a new token)",
                                spell("prefill-len"), *o.prefillLen,
                                *o.maxSeq - 1, maxSeq, *o.maxSeq));
  // The cache is sharded like the attention under tp and per stage under
  // pp; batch splits and expert meshes are not there yet.
  if (o.dp > 1 || o.ep > 1 || o.autoPlan)
    return refuse(llvm::formatv(
        "{0}: generation runs under {1} and {2} so far: {3}, {4} and {5} "
        "do not combine with it yet",
        maxSeq, spell("tp"), spell("pp"), spell("dp"), spell("ep"),
        spell("auto")));
  // Groups of sequences keep the stages busy: alone they only step in turn.
  if (o.microBatches > 1 && o.pp == 1)
    return refuse(llvm::formatv(
        "{0}: {1} {2} interleaves the decode steps of {2} groups of "
        "sequences across pipeline stages: it needs {3} (without stages, "
        "compile the whole batch)",
        maxSeq, spell("micro-batches"), o.microBatches, spell("pp")));
  if (o.sp)
    return refuse(llvm::formatv(
        "{0}: {1} splits the sequence over {2}, but a decode step has one "
        "token per sequence: drop {1} ({2} alone splits the heads and the "
        "cache)",
        maxSeq, spell("sp"), spell("tp")));
  // The caches are the program's inputs in the model's own type: a cast at
  // entry would copy them, and the writes would miss the persistent buffer.
  if (o.dtype != "f32")
    return refuse(maxSeq + ": " + spell("dtype") + " " + o.dtype +
                  " does not combine with generation yet (a cast of the "
                  "caches at entry would copy them every step); a model "
                  "stored in f16 or bf16 generates in its own type without " +
                  spell("dtype"));
  return llvm::Error::success();
}

} // namespace

llvm::Error CompileOptions::validate(OptionSpeller spell) const {
  if (target != "cpu" && target != "cuda")
    return refuse(spell("target") + " must be cpu or cuda, not '" + target +
                  "'");
  if (dtype != "f32" && dtype != "bf16" && dtype != "f16")
    return refuse(spell("dtype") + " must be f32, bf16 or f16, not '" + dtype +
                  "'");
  if (llvm::Error e = checkRanges(*this, spell))
    return e;
  if (!ppLayout.empty() && pp == 1)
    return refuse(spell("pp-layout") + " needs " + spell("pp") + " 2 or more");
  if (splitBatch < 1)
    return refuse("split-batch must be at least 1");
  // The combinations the planner never ranks either.
  plan::Config config;
  config.tp = tp, config.pp = pp, config.ep = ep, config.dp = dp;
  config.microBatches = microBatches, config.virtualStages = ppVirtual;
  config.sp = sp, config.etp = etp;
  if (llvm::Error e = plan::checkFlags(config, spell))
    return e;
  return checkGeneration(*this, spell);
}

llvm::Error CompileOptions::validate() const {
  return validate([](llvm::StringRef name) { return name.str(); });
}
