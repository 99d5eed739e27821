//===- CompileOptions.h - what the parc pipeline is built from --*- C++ -*-===//
//
// One struct holds every choice the compile pipeline depends on, and one
// validate() checks it whole before any pass runs. Diagnostics name options
// by their option name ("pp-layout"); the driver spells them as its flags
// ("--pp-layout") through the speller it passes, so library messages never
// quote a driver's command line.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_PIPELINES_COMPILEOPTIONS_H
#define PARC_PIPELINES_COMPILEOPTIONS_H

#include "parc/Support/OptionRef.h"

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace parc {


struct CompileOptions {
  /// The largest world a compile may describe, and so any one degree.
  static constexpr int64_t kMaxRanks = 65536;

  std::string target = "cpu"; // cpu or cuda
  std::string dtype = "f32";  // compute dtype: f32, bf16 or f16
  int64_t tp = 1, pp = 1, dp = 1, ep = 1;
  bool sp = false;
  /// Experts split over tp ranks; with ep > 1 an ["ep", "tp"] mesh.
  bool etp = false;
  double capacityFactor = 0;
  std::vector<int64_t> ppLayout;
  int64_t ppVirtual = 1;
  /// Pipeline micro-batches per forward; with maxSeq, groups of sequences
  /// the token loop steps in turn (each forward takes one group).
  int64_t microBatches = 1;
  /// The model fixes its batch: dist-split-batch cuts it into this many
  /// parts (dp · micro-batches), 1 for none. Set by whoever imported it.
  int64_t splitBatch = 1;
  /// Generation: the KV cache's capacity in tokens, and its past=present
  /// pairs (empty: the defaults of nn-kv-cache).
  std::optional<int64_t> maxSeq;
  std::vector<std::string> kvCache;
  /// Generation: the prompt tokens a second program takes in one forward
  /// (1 to maxSeq - 1), sharing the decode program's weights and caches.
  std::optional<int64_t> prefillLen;
  bool fusedAttention = true;
  bool overlap = true;
  int64_t overlapChunks = 0;
  /// The cluster file (or preset name) dist-overlap prices with, resolved
  /// once by the caller.
  std::string cluster = "cpu";
  bool explain = false;
  /// --auto's plan is still to be chosen: generation does not combine.
  bool autoPlan = false;

  /// Ranks that run one pipeline stage: the tensor- or expert-parallel
  /// group (ep · tp on the ["ep", "tp"] mesh of etp with ep > 1).
  bool expertMesh() const { return etp && ep > 1; }
  int64_t ranksPerStage() const {
    return expertMesh() ? tp * ep : std::max<int64_t>(tp, ep);
  }

  /// Every check the options must pass, the first failure named with
  /// `spell` of its options (by default the option names themselves).
  llvm::Error validate(OptionSpeller spell) const;
  llvm::Error validate() const;
};

} // namespace parc

#endif // PARC_PIPELINES_COMPILEOPTIONS_H
