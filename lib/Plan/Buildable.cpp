//===- Buildable.cpp - what `parc compile` builds, and its command line ---===//
//
// One statement of the configurations compile builds: compile refuses its
// own flags with checkFlags, and the planner ranks only what checkBuildable
// passes. compile's passes refuse the same models with the ONNX node named
// (dist-annotate, dist-pipeline, dist-expert-parallel); checkBuildable reads
// the same facts from the profile.
//
//===----------------------------------------------------------------------===//

#include "parc/Plan/Planner.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

using namespace parc::plan;

namespace {

llvm::Error refuse(const llvm::Twine &why) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), why);
}

/// tp must divide every head count and column width the profile found that
/// compile does not pad, and with --sp the sequence.
llvm::Error checkTp(const ModelProfile &profile, int64_t tp, bool sp) {
  for (const TpConstraint &c : profile.tpConstraints) {
    bool ok = c.kv ? (c.dim % tp == 0 || tp % c.dim == 0) : c.dim % tp == 0;
    if (!ok && !c.paddable)
      return refuse(llvm::formatv("tp={0}: does not divide the {1} {2}{3}", tp,
                                  c.dim, c.what,
                                  c.kv ? " nor is a multiple of them" : ""));
  }
  // dist-annotate: --sp splits each norm's sequence over the tp ranks.
  if (sp && !profile.seqNormNode.empty() && profile.seqNormLength % tp)
    return refuse(
        llvm::formatv("tp={0}+sp: does not divide the sequence of {1} "
                      "that node '{2}' normalises",
                      tp, profile.seqNormLength, profile.seqNormNode));
  return llvm::Error::success();
}

/// dist-pipeline cuts between attention layers; the planner lays out the
/// blocks it found by node name, which must be those layers.
llvm::Error checkStages(const ModelProfile &profile, const Config &c) {
  if (c.pp == 1)
    return llvm::Error::success();
  if (c.pp > profile.blocks)
    return refuse(llvm::formatv("pp={0}: more stages than the {1} blocks", c.pp,
                                profile.blocks));
  if (c.pp * c.virtualStages > profile.layers)
    return refuse(llvm::formatv(
        "pp={0}{1}: needs at least one layer per stage, but "
        "the model has {2} layer(s) (one per attention block)",
        c.pp,
        c.virtualStages > 1 ? llvm::formatv(" v={0}", c.virtualStages).str()
                            : "",
        profile.layers));
  if (profile.blocks != profile.layers)
    return refuse(
        llvm::formatv("pp={0}: the {1} blocks found by node name are not "
                      "the {2} attention layers compile's pp-layout counts",
                      c.pp, profile.blocks, profile.layers));
  return llvm::Error::success();
}

} // namespace

llvm::Error parc::plan::checkFlags(const Config &c, OptionSpeller spell) {
  const std::string tp = spell("tp"), pp = spell("pp"), ep = spell("ep");
  const std::string etp = spell("etp"), virt = spell("pp-virtual");
  if (c.tp < 1 || c.pp < 1)
    return refuse(tp + " and " + pp + " must be at least 1");
  if (c.microBatches < 1)
    return refuse(spell("micro-batches") + " must be at least 1");
  if (c.virtualStages < 1)
    return refuse(virt + " must be at least 1");
  if (c.virtualStages > 1 && c.pp == 1)
    return refuse(virt + " needs " + pp + " 2 or more");
  if (c.dp < 1)
    return refuse(spell("dp") + " must be at least 1");
  if (c.sp && c.tp == 1)
    return refuse(spell("sp") + " splits the sequence over the " + tp +
                  " ranks: give " + tp + " > 1");
  if (c.ep < 1)
    return refuse(ep + " must be at least 1");
  if (c.ep > 1 && c.tp > 1 && c.ep != c.tp && !c.etp)
    return refuse(
        llvm::formatv("{0} {1} must equal {2} {3}: experts are split "
                      "over the tensor-parallel ranks (or add {4} "
                      "for {0} groups of {2} ranks)",
                      ep, c.ep, tp, c.tp, etp));
  if (c.etp && c.tp < 2)
    return refuse(etp + " splits experts over the tensor-parallel ranks: it "
                  "needs " + tp + " > 1");
  return llvm::Error::success();
}

llvm::Error parc::plan::checkBuildable(const ModelProfile &profile,
                                       const Config &c) {
  // The planner's reasons name options as its others do (tp=2).
  if (llvm::Error e =
          checkFlags(c, [](llvm::StringRef o) { return o.str(); }))
    return e;
  if (c.tp > 1)
    if (llvm::Error e = checkTp(profile, c.tp, c.sp))
      return e;
  if (llvm::Error e = checkStages(profile, c))
    return e;
  if (c.ep > 1 && profile.experts % c.ep)
    return refuse(llvm::formatv("ep={0}: does not divide the {1} experts", c.ep,
                                profile.experts));
  if (profile.batch % c.dp)
    return refuse(
        llvm::formatv("tp={0} pp={1} ep={2} dp={3}: batch {4} does not "
                      "split over {3} data-parallel replicas",
                      c.tp, c.pp, c.ep, c.dp, profile.batch));
  int64_t local = profile.batch / c.dp;
  if (local % c.microBatches)
    return refuse(
        llvm::formatv("m={0}: does not divide the batch of {1} per replica",
                      c.microBatches, local));
  if ((c.dp > 1 || c.microBatches > 1) && !profile.batchOnDim0)
    return refuse("dp and micro-batches split dim 0 of every input and output: "
                  "not the batch in this model");
  int64_t tokens = local / c.microBatches * profile.seq;
  if (c.ep > 1 && tokens % c.ep)
    return refuse(
        llvm::formatv("ep={0}: does not divide the {1} tokens of a {2}", c.ep,
                      tokens, c.microBatches > 1 ? "micro-batch" : "replica"));
  return llvm::Error::success();
}

std::string parc::plan::compileCommand(const Config &config,
                                       const ModelProfile &profile,
                                       const PlanOptions &options) {
  std::string s;
  llvm::raw_string_ostream os(s);
  auto arg = [&](const llvm::Twine &a) {
    os << ' ';
    llvm::sys::printArg(os, a.str(), /*Quote=*/false);
  };
  std::string model = options.model.empty() ? "MODEL.onnx" : options.model;
  os << "parc compile";
  arg(model);
  arg("-o");
  arg(llvm::sys::path::stem(model) + "-parc");
  for (const auto &[name, shape] : profile.inputs) {
    std::string dims = shape.empty() ? "scalar" : "";
    for (auto [i, d] : llvm::enumerate(shape))
      dims += (i ? "x" : "") + std::to_string(d);
    arg("--input-shape");
    arg(name + "=" + dims);
  }
  arg("--dtype");
  arg(options.dtype);
  if (!options.cluster.empty()) {
    arg("--cluster");
    arg(options.cluster);
  }
  if (options.overlapChunks > 0) {
    arg("--overlap-chunks");
    arg(llvm::Twine(options.overlapChunks));
  }
  os << ' ' << config.compileFlags();
  return s;
}
