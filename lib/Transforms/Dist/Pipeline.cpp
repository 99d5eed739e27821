//===- Pipeline.cpp - dist-pipeline and dist-extract-stage ------*- C++ -*-===//
//
// Pipeline parallelism on the fused graph. Layers are found, not declared:
// one per attention, cut where the fewest computed bytes are live between
// two attentions (the residual stream); without a fused attention, one per
// repetition of a subgraph with one computed tensor live between
// repetitions (repeatedLayers), besides the side inputs every layer reads
// (sideInputs: masks, rotary tables). Stages take consecutive layers,
// balanced by FLOPs unless a layout is given. The stage programs are written
// one after another into @main, each op tagged with its stage, so the
// function stays a valid sequential program and dist-extract-stage only has
// to drop the other stages' ops.
//
//===----------------------------------------------------------------------===//

#include "Regions.h"
#include "dist/DistDialect.h"
#include "nn/NNCost.h"
#include "nn/NNOps.h"
#include "parc/Transforms/Dist/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "dist-pipeline"

namespace parc::dist {
#define GEN_PASS_DEF_DISTPIPELINE
#define GEN_PASS_DEF_DISTEXTRACTSTAGE
#include "parc/Transforms/Dist/Passes.h.inc"
} // namespace parc::dist

using namespace mlir;
namespace nn = parc::nn;
namespace dist = parc::dist;

namespace {

constexpr StringLiteral kStage = "dist.stage";
constexpr StringLiteral kLayout = "dist.pp_layout";
constexpr StringLiteral kMicroBatches = "dist.micro_batches";
constexpr StringLiteral kVirtual = "dist.pp_virtual";

/// Values every stage can materialise itself: weights and their rank parts.
bool isStageFree(Operation *op) {
  if (op->getNumResults() == 1 && nn::isWeight(op->getResult(0)))
    return true;
  if (auto part = dyn_cast<dist::LocalPartOp>(op)) {
    Operation *def = part.getInput().getDefiningOp();
    return def && isStageFree(def);
  }
  return false;
}

/// Splits `costs` into `parts` consecutive groups minimising the largest
/// group sum (exact dynamic programme; layer counts are small).
SmallVector<int64_t> balance(ArrayRef<int64_t> costs, int64_t parts) {
  int64_t n = costs.size();
  SmallVector<int64_t> prefix(n + 1, 0);
  for (int64_t i = 0; i < n; ++i)
    prefix[i + 1] = prefix[i] + costs[i];
  constexpr int64_t inf = std::numeric_limits<int64_t>::max();
  // best[p][i]: the smallest maximum over the first i layers in p groups.
  std::vector<std::vector<int64_t>> best(parts + 1,
                                         std::vector<int64_t>(n + 1, inf));
  std::vector<std::vector<int64_t>> from(parts + 1,
                                         std::vector<int64_t>(n + 1, 0));
  best[0][0] = 0;
  for (int64_t p = 1; p <= parts; ++p)
    for (int64_t i = p; i <= n; ++i)
      for (int64_t j = p - 1; j < i; ++j) {
        if (best[p - 1][j] == inf)
          continue;
        int64_t v = std::max(best[p - 1][j], prefix[i] - prefix[j]);
        // Ties go to the later split: earlier stages, which also wait
        // least, take more layers.
        if (v <= best[p][i]) {
          best[p][i] = v;
          from[p][i] = j;
        }
      }
  SmallVector<int64_t> counts(parts);
  for (int64_t p = parts, i = n; p > 0; --p) {
    counts[p - 1] = i - from[p][i];
    i = from[p][i];
  }
  return counts;
}

/// The layers of a graph whose repeated blocks are not recognised (no
/// fused attention), found on its dataflow: cut candidates are the points
/// where exactly one computed tensor is live (`liveCount`), and the segments
/// between them are compared by their op names. The group of segments that
/// repeats most often back to back is one layer; the run extends over
/// neighbouring ops that repeat it too (the first layer reads a graph
/// input, so more of its points have one live tensor). What comes before
/// the run joins the first layer, what follows it the last. Returns the
/// layers' first ops (then n), or nothing without a repetition.
SmallVector<int64_t> repeatedLayers(ArrayRef<Operation *> ops,
                                    ArrayRef<int64_t> liveCount) {
  int64_t n = ops.size();
  // At most one: a point where only graph inputs and side inputs are live
  // (before the first layer's first op) is a cut too.
  auto isCut = [&](int64_t p) { return p == 0 || p == n || liveCount[p] <= 1; };
  SmallVector<int64_t> cuts;
  for (int64_t p = 0; p <= n; ++p)
    if (isCut(p))
      cuts.push_back(p);
  auto names = [&](int64_t from, int64_t to) {
    SmallVector<StringRef> v;
    for (int64_t q = from; q < to; ++q)
      v.push_back(ops[q]->getName().getStringRef());
    return v;
  };
  // The run of the most repetitions of a group of `period` segments.
  int64_t m = (int64_t)cuts.size() - 1, reps = 1, first = 0, period = 0;
  for (int64_t p = 1; p <= m / 2; ++p)
    for (int64_t from = 0; from + 2 * p <= m; ++from) {
      auto unit = names(cuts[from], cuts[from + p]);
      int64_t r = 1;
      while (from + (r + 1) * p <= m &&
             names(cuts[from + r * p], cuts[from + (r + 1) * p]) == unit)
        ++r;
      if (r > reps)
        reps = r, first = from, period = p;
    }
  if (reps < 2)
    return {};
  int64_t begin = cuts[first], len = cuts[first + period] - begin;
  int64_t end = begin + reps * len;
  auto unit = names(begin, begin + len);
  while (begin - len >= 0 && isCut(begin - len) &&
         names(begin - len, begin) == unit)
    begin -= len, ++reps;
  while (end + len <= n && isCut(end + len) && names(end, end + len) == unit)
    end += len, ++reps;
  SmallVector<int64_t> start{0};
  for (int64_t k = 1; k < reps; ++k)
    start.push_back(begin + k * len);
  start.push_back(n);
  return start;
}

/// Whether `later` depends on `earlier` through the ops of the program
/// (`positionOf` gives their order; nothing before `earlier` can lead to it).
bool dependsOn(Operation *later, Operation *earlier,
               llvm::function_ref<int64_t(Operation *)> positionOf) {
  int64_t floor = positionOf(earlier);
  SmallVector<Operation *> work{later};
  llvm::DenseSet<Operation *> seen;
  while (!work.empty()) {
    Operation *op = work.pop_back_val();
    bool found = false;
    op->walk([&](Operation *inner) {
      for (Value v : inner->getOperands()) {
        Operation *def = v.getDefiningOp();
        if (!def || op->isAncestor(def))
          continue;
        if (def == earlier)
          found = true;
        else if (positionOf(def) > floor && seen.insert(def).second)
          work.push_back(def);
      }
    });
    if (found)
      return true;
  }
  return false;
}

/// Side inputs of the layers: values every repetition reads unchanged
/// (attention masks, position biases, rotary tables). Their readers are
/// ops of one name reading them at one operand, each depending on the one
/// before: one per layer in sequence, unlike siblings (Q, K and V reading
/// one input). A cut sends them to every stage that reads them, so they do
/// not count against the one hidden state live at a cut.
llvm::DenseSet<Value>
sideInputs(ArrayRef<Operation *> ops, Block &body,
           llvm::function_ref<int64_t(Operation *)> positionOf) {
  llvm::DenseSet<Value> side;
  for (Operation *op : ops)
    for (Value r : op->getResults()) {
      std::optional<std::pair<OperationName, int64_t>> key;
      SmallVector<Operation *> readers;
      bool uniform = true;
      for (OpOperand &use : r.getUses()) {
        Operation *top = body.findAncestorOpInBlock(*use.getOwner());
        if (!top || top == body.getTerminator()) {
          uniform = false;
          break;
        }
        std::pair<OperationName, int64_t> k{
            top->getName(),
            top == use.getOwner() ? int64_t(use.getOperandNumber()) : -1};
        if (key && *key != k) {
          uniform = false;
          break;
        }
        key = k;
        if (!llvm::is_contained(readers, top))
          readers.push_back(top);
      }
      if (!uniform || readers.size() < 2)
        continue;
      llvm::sort(readers, [&](Operation *a, Operation *b) {
        return positionOf(a) < positionOf(b);
      });
      bool chained = true;
      for (size_t k = 1; k < readers.size() && chained; ++k)
        chained = dependsOn(readers[k], readers[k - 1], positionOf);
      if (chained)
        side.insert(r);
    }
  return side;
}

struct DistPipelinePass : parc::dist::impl::DistPipelineBase<DistPipelinePass> {
  using Base::Base;
  void runOnOperation() override;
};

void DistPipelinePass::runOnOperation() {
  ModuleOp module = getOperation();
  MLIRContext *ctx = &getContext();
  auto main = module.lookupSymbol<func::FuncOp>("main");
  if (!main || main.isExternal()) {
    module.emitError("expected a func.func @main with a body");
    return signalPassFailure();
  }
  // About the whole model: its location (the file), not a dump of @main.
  auto error = [&]() { return mlir::emitError(main.getLoc()); };
  if (pp < 1 || microBatches < 1) {
    error() << "--pp and --micro-batches must be at least 1, got "
            << int64_t(pp) << " and " << int64_t(microBatches);
    return signalPassFailure();
  }
  Block &body = main.getBody().front();

  // Program order of the ops that belong to a stage.
  SmallVector<Operation *> ops;
  llvm::DenseMap<Operation *, int64_t> index;
  SmallVector<int64_t> attentions;
  for (Operation &op : body.without_terminator()) {
    if (isStageFree(&op))
      continue;
    index[&op] = ops.size();
    if (isa<nn::AttentionOp>(op))
      attentions.push_back(ops.size());
    ops.push_back(&op);
  }
  const int64_t n = ops.size();
  if (virtualStages < 1) {
    error() << "--pp-virtual must be at least 1, got "
            << int64_t(virtualStages);
    return signalPassFailure();
  }

  // The position in program order of an op's top-level ancestor; the
  // return counts as after every op.
  auto positionOf = [&](Operation *user) -> int64_t {
    Operation *top = body.findAncestorOpInBlock(*user);
    if (!top || top == body.getTerminator())
      return n;
    auto it = index.find(top);
    return it == index.end() ? -1 : it->second;
  };

  // live[p]: bytes of computed values crossing a cut before op p;
  // liveCount[p]: how many of them are not side inputs (which only the
  // structural cuts ask).
  llvm::DenseSet<Value> side;
  if (attentions.empty())
    side = sideInputs(ops, body, positionOf);
  SmallVector<int64_t> live(n + 2, 0), liveCount(n + 2, 0);
  for (int64_t i = 0; i < n; ++i)
    for (Value r : ops[i]->getResults()) {
      int64_t last = i;
      for (Operation *user : r.getUsers())
        last = std::max(last, positionOf(user));
      if (last > i) {
        live[i + 1] += dist::bytesOf(r.getType());
        live[last + 1] -= dist::bytesOf(r.getType());
        int64_t counted = !side.contains(r);
        liveCount[i + 1] += counted;
        liveCount[last + 1] -= counted;
      }
    }
  for (int64_t p = 1; p <= n + 1; ++p) {
    live[p] += live[p - 1];
    liveCount[p] += liveCount[p - 1];
  }

  // Layer k starts at start[k]: with attentions, the latest least-live
  // point after the previous attention, at the latest just before its own;
  // without, the structure of the dataflow decides (repeatedLayers).
  SmallVector<int64_t> start{0};
  for (int64_t k = 1; k < (int64_t)attentions.size(); ++k) {
    int64_t best = attentions[k];
    for (int64_t p = attentions[k - 1] + 1; p <= attentions[k]; ++p)
      if (live[p] <= live[best])
        best = p;
    start.push_back(best);
  }
  start.push_back(n);
  StringRef unit = "one per attention block";
  if (attentions.empty()) {
    start = repeatedLayers(ops, liveCount);
    unit = "one per repeated block";
  }
  if (start.empty()) {
    error() << "found no repeated block to cut into pipeline stages: the "
               "model has no attention layer, and no subgraph repeats with "
               "one computed tensor live between its repetitions";
    return signalPassFailure();
  }
  const int64_t layers = start.size() - 1;
  // Chunks of consecutive layers: chunk c runs on stage c mod pp, so with
  // virtual stages each stage holds several chunks, pp apart.
  const int64_t chunks = pp * virtualStages;
  if (chunks > layers) {
    if (virtualStages == 1)
      error() << "--pp " << int64_t(pp) << " needs at least one layer per "
              << "stage, but the model has " << layers << " layer(s) ("
              << unit << ")";
    else
      error() << "--pp " << int64_t(pp) << " with --pp-virtual "
              << int64_t(virtualStages) << " needs at least one layer per "
              << "virtual stage (" << chunks << "), but the model has "
              << layers << " layer(s) (" << unit << ")";
    return signalPassFailure();
  }
  SmallVector<int64_t> layerCost(layers, 0);
  for (int64_t k = 0; k < layers; ++k)
    for (int64_t i = start[k]; i < start[k + 1]; ++i)
      layerCost[k] += nn::flopsOf(ops[i]);

  SmallVector<int64_t> counts(layout.begin(), layout.end());
  if (!counts.empty()) {
    int64_t sum = 0;
    for (int64_t c : counts)
      sum += c;
    if ((int64_t)counts.size() != chunks) {
      if (virtualStages == 1)
        error() << "--pp-layout gives " << counts.size()
                << " stage(s), but --pp is " << int64_t(pp);
      else
        error() << "--pp-layout gives " << counts.size()
                << " stage(s), but --pp " << int64_t(pp)
                << " with --pp-virtual " << int64_t(virtualStages) << " has "
                << chunks << " virtual stages";
      return signalPassFailure();
    }
    if (llvm::any_of(counts, [](int64_t c) { return c < 1; })) {
      error() << "--pp-layout needs at least one layer per stage";
      return signalPassFailure();
    }
    if (sum != layers) {
      error() << "--pp-layout sums to " << sum << " layer(s), but the "
              << "model has " << layers << " (" << unit << ")";
      return signalPassFailure();
    }
  } else {
    counts = balance(layerCost, chunks);
  }
  LLVM_DEBUG({
    llvm::dbgs() << "dist-pipeline: layer costs";
    for (int64_t c : layerCost)
      llvm::dbgs() << " " << c;
    llvm::dbgs() << "\n";
  });

  if (explain)
    for (int64_t c = 0, k = 0; c < chunks; k += counts[c++]) {
      int64_t cost = 0;
      for (int64_t l = k; l < k + counts[c]; ++l)
        cost += layerCost[l];
      InFlightDiagnostic remark = mlir::emitRemark(main.getLoc());
      remark << "pipeline stage " << c % pp;
      if (virtualStages > 1)
        remark << " (virtual stage " << c << ")";
      remark << ": layers " << k << ".." << k + counts[c] - 1 << ", " << cost
             << " FLOPs";
      if (c == 0)
        remark << " with the embedding";
      if (c == chunks - 1)
        remark << (c == 0 ? " and" : " with") << " the head";
      if (c > 0)
        remark << "; " << live[start[k]] << " B live at its cut";
    }

  // The chunk of every op, by layer; a chunk runs on stage chunk mod pp.
  llvm::DenseMap<Operation *, int64_t> chunkOf;
  SmallVector<SmallVector<Operation *>> chunkOps(chunks);
  for (int64_t c = 0, k = 0; c < chunks; ++c)
    for (int64_t end = k + counts[c]; k < end; ++k)
      for (int64_t i = start[k]; i < start[k + 1]; ++i) {
        chunkOf[ops[i]] = c;
        chunkOps[c].push_back(ops[i]);
      }
  auto stageOfChunk = [&](int64_t c) -> int64_t { return c % pp; };
  auto chunkOfUser = [&](Operation *user) -> int64_t {
    Operation *top = body.findAncestorOpInBlock(*user);
    if (!top || top == body.getTerminator())
      return chunks - 1;
    auto it = chunkOf.find(top);
    return it == chunkOf.end() ? -1 : it->second;
  };
  // Values used on other stages: value → those stages, in order. (A value
  // read by a later chunk of its own stage stays where it is.)
  llvm::MapVector<Value, SmallVector<int64_t>> crossing;
  for (Operation *op : ops)
    for (Value r : op->getResults()) {
      SmallVector<int64_t> to;
      for (Operation *user : r.getUsers()) {
        int64_t c = chunkOfUser(user);
        int64_t s = stageOfChunk(c);
        if (c > chunkOf[op] && s != stageOfChunk(chunkOf[op]) &&
            !llvm::is_contained(to, s))
          to.push_back(s);
      }
      llvm::sort(to);
      if (!to.empty())
        crossing[r] = to;
    }
  // The order a stage runs (micro-batch, chunk) pairs in: GPipe runs its
  // one chunk for micro-batch 0, 1, …; interleaved stages take micro-
  // batches in groups of pp and run each of their chunks over the group
  // before the next (Megatron's forward order). Every dependency points
  // to an earlier key, and sends leave in key order, so receives posted in
  // the same order match them.
  auto key = [&](int64_t microBatch, int64_t chunk) {
    return std::make_tuple(microBatch / pp, chunk / pp, microBatch);
  };

  // The new @main: micro-batches stacked on the batch dims of inputs and
  // outputs (dim 0 unless the model names it elsewhere).
  SmallVector<Type> argTypes, resultTypes;
  if (microBatches == 1) {
    llvm::append_range(argTypes, main.getArgumentTypes());
    llvm::append_range(resultTypes, main.getResultTypes());
  } else if (failed(dist::stackedSignature(main, microBatches, argTypes,
                                           resultTypes))) {
    return signalPassFailure();
  }
  // The mesh: a leading pp axis on the tensor-parallel one (or a new one).
  OpBuilder b(ctx);
  dist::MeshOp mesh;
  for (auto m : module.getOps<dist::MeshOp>()) {
    if (mesh) {
      m.emitError("dist-pipeline expects at most one mesh");
      return signalPassFailure();
    }
    mesh = m;
  }
  if (mesh) {
    if (mesh.getAxisIndex("pp")) {
      mesh.emitError("the mesh already has a 'pp' axis");
      return signalPassFailure();
    }
    SmallVector<Attribute> axes{b.getStringAttr("pp")};
    llvm::append_range(axes, mesh.getAxes());
    SmallVector<int64_t> shape{pp};
    llvm::append_range(shape, mesh.getShape());
    mesh.setAxesAttr(b.getArrayAttr(axes));
    mesh.setShape(shape);
  } else {
    b.setInsertionPointToStart(module.getBody());
    mesh = dist::MeshOp::create(b, module.getLoc(), "mesh",
                                b.getStrArrayAttr({"pp", "tp"}),
                                b.getDenseI64ArrayAttr({pp, 1}));
  }
  auto meshRef = FlatSymbolRefAttr::get(mesh.getSymNameAttr());
  ArrayAttr ppAxis = b.getStrArrayAttr({"pp"});

  auto fn = dist::replacementOf(b, main, "pipelined", argTypes, resultTypes);
  Block *entry = &fn.front();

  // Weights first, shared by every stage and micro-batch.
  IRMapping shared;
  for (Operation &op : body.without_terminator())
    if (isStageFree(&op))
      b.clone(op, shared);

  // Micro-batch i's ops (not the receives posted up front) also carry i:
  // independent chains that dist-overlap may interleave.
  auto tag = [&](Operation *op, int64_t s, int64_t i = -1) {
    op->setAttr(kStage, b.getI64IntegerAttr(s));
    if (i >= 0 && microBatches > 1)
      op->setAttr(dist::kMicroBatch, b.getI64IntegerAttr(i));
    return op;
  };
  auto asyncOf = [&](Type t) { return dist::AsyncType::get(ctx, t); };
  const int64_t m = microBatches;
  for (int64_t s = 0; s < pp; ++s) {
    std::vector<IRMapping> maps(m, shared);
    // Receives: posted for every micro-batch up front in the order the
    // senders send, each waited for where first used.
    SmallVector<std::tuple<std::tuple<int64_t, int64_t, int64_t>, int64_t,
                           int64_t, Value>>
        incoming; // (sender's key, position, micro-batch, value)
    for (int64_t i = 0; i < m; ++i)
      for (auto [pos, entry] : llvm::enumerate(crossing))
        if (llvm::is_contained(entry.second, s))
          incoming.push_back({key(i, chunkOf[entry.first.getDefiningOp()]),
                              (int64_t)pos, i, entry.first});
    llvm::stable_sort(incoming, [](auto &a, auto &b) {
      return std::tie(std::get<0>(a), std::get<1>(a)) <
             std::tie(std::get<0>(b), std::get<1>(b));
    });
    llvm::DenseMap<std::pair<int64_t, Value>, Value> pending;
    llvm::DenseMap<std::pair<int64_t, Value>, int64_t> source;
    for (auto &[k, pos, i, v] : incoming) {
      int64_t from = stageOfChunk(chunkOf[v.getDefiningOp()]);
      source[{i, v}] = from;
      if (!async)
        continue;
      auto recv = dist::RecvStartOp::create(
          b, v.getLoc(), asyncOf(v.getType()), meshRef, ppAxis,
          b.getI64IntegerAttr(from), IntegerAttr());
      pending[{i, v}] = tag(recv, s)->getResult(0);
    }
    // Micro-batch i's part of an input.
    auto resolve = [&](int64_t i, Value v) -> Value {
      if (Value mapped = maps[i].lookupOrNull(v))
        return mapped;
      Value got;
      if (auto arg = dyn_cast<BlockArgument>(v)) {
        Value full = entry->getArgument(arg.getArgNumber());
        if (m == 1) {
          got = full;
        } else {
          auto t = cast<RankedTensorType>(v.getType());
          SmallVector<int64_t> starts(t.getRank(), 0), steps(t.getRank(), 1);
          int64_t d = nn::batchDim(fn, arg.getArgNumber());
          starts[d] = i * t.getDimSize(d);
          got = tag(nn::SliceOp::create(b, v.getLoc(), t, full,
                                        b.getDenseI64ArrayAttr(starts),
                                        b.getDenseI64ArrayAttr(steps)),
                    s, i)
                    ->getResult(0);
        }
      } else if (async) {
        got = tag(dist::WaitOp::create(b, v.getLoc(), pending.lookup({i, v})),
                  s, i)
                  ->getResult(0);
      } else {
        got =
            tag(dist::RecvOp::create(
                    b, v.getLoc(), v.getType(), meshRef, ppAxis,
                    b.getI64IntegerAttr(source.lookup({i, v})), IntegerAttr()),
                s, i)
                ->getResult(0);
      }
      maps[i].map(v, got);
      return got;
    };
    SmallVector<std::pair<int64_t, int64_t>> order; // (micro-batch, chunk)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t c = s; c < chunks; c += pp)
        order.push_back({i, c});
    llvm::stable_sort(order, [&](auto a, auto b) {
      return key(a.first, a.second) < key(b.first, b.second);
    });
    SmallVector<Value> sends;
    for (auto [i, c] : order) {
      if (!async) // blocking receives: this step's, in the senders' order
        for (auto &[k, pos, mb, v] : incoming)
          if (mb == i && chunkOf[v.getDefiningOp()] < c &&
              llvm::any_of(v.getUsers(), [&](Operation *user) {
                return chunkOfUser(user) == c;
              }))
            resolve(i, v);
      for (Operation *op : chunkOps[c]) {
        op->walk([&](Operation *inner) {
          for (Value operand : inner->getOperands()) {
            // Values defined inside `op` (its regions' own) map on cloning.
            if (op->isAncestor(operand.getParentBlock()->getParentOp()))
              continue;
            resolve(i, operand);
          }
        });
        Operation *clone = tag(b.clone(*op, maps[i]), s, i);
        for (Value r : op->getResults()) {
          auto it = crossing.find(r);
          if (it == crossing.end())
            continue;
          Value local = maps[i].lookup(r);
          for (int64_t to : it->second) {
            if (async)
              sends.push_back(
                  tag(dist::SendStartOp::create(
                          b, clone->getLoc(), dist::AsyncType::get(ctx),
                          meshRef, ppAxis, local, b.getI64IntegerAttr(to),
                          IntegerAttr()),
                      s, i)
                      ->getResult(0));
            else
              tag(dist::SendOp::create(b, clone->getLoc(), meshRef, ppAxis,
                                       local, b.getI64IntegerAttr(to),
                                       IntegerAttr()),
                  s, i);
          }
        }
      }
    }
    for (Value token : sends)
      tag(dist::WaitOp::create(b, token.getLoc(), token), s);
    if (s != pp - 1)
      continue;
    // Outputs: each micro-batch's, stacked.
    SmallVector<Value> results;
    auto ret = cast<func::ReturnOp>(body.getTerminator());
    for (auto [k, v] : llvm::enumerate(ret.getOperands())) {
      SmallVector<Value> parts;
      for (int64_t i = 0; i < m; ++i)
        parts.push_back(resolve(i, v));
      if (m == 1) {
        results.push_back(parts.front());
        continue;
      }
      results.push_back(
          tag(nn::ConcatOp::create(
                  b, parts.front().getLoc(), resultTypes[k], parts,
                  b.getI64IntegerAttr(nn::batchDim(fn, k, /*result=*/true))),
              s)
              ->getResult(0));
    }
    func::ReturnOp::create(b, ret.getLoc(), results);
  }
  fn->setAttr(kLayout, b.getDenseI64ArrayAttr(counts));
  fn->setAttr(kMicroBatches, b.getI64IntegerAttr(m));
  fn->setAttr(kVirtual, b.getI64IntegerAttr(virtualStages));
  main.erase();
  fn.setName("main");
}

struct DistExtractStagePass
    : parc::dist::impl::DistExtractStageBase<DistExtractStagePass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto main = module.lookupSymbol<func::FuncOp>("main");
    auto layout = main ? main->getAttrOfType<DenseI64ArrayAttr>(kLayout)
                       : DenseI64ArrayAttr();
    if (!layout) {
      module.emitError(
          "expected a @main from dist-pipeline (with dist.pp_layout)");
      return signalPassFailure();
    }
    auto virt = main->getAttrOfType<IntegerAttr>(kVirtual);
    int64_t virtualStages = virt ? virt.getInt() : 1;
    int64_t stages = layout.size() / virtualStages;
    if (stage < 0 || stage >= stages) {
      emitError(main.getLoc())
          << "stage " << int64_t(stage) << " is out of range for " << stages
          << " stage(s)";
      return signalPassFailure();
    }
    Block &body = main.getBody().front();
    if (stage != stages - 1) {
      body.getTerminator()->setOperands({});
      main.setType(
          FunctionType::get(&getContext(), main.getArgumentTypes(), {}));
      main.removeResAttrsAttr();
    }
    // Users before what they use: every other stage's ops, then the
    // constants no kept op reads.
    SmallVector<Operation *> ops;
    for (Operation &op : body.without_terminator())
      ops.push_back(&op);
    for (Operation *op : llvm::reverse(ops)) {
      auto s = op->getAttrOfType<IntegerAttr>(kStage);
      if (s ? s.getInt() != stage : op->use_empty())
        op->erase();
    }
    // Each stage owns its own layers' KV caches: the others' leave its
    // signature, so that no rank allocates a cache it never reads.
    llvm::BitVector others(main.getNumArguments());
    for (BlockArgument arg : main.getArguments())
      if (arg.use_empty() && nn::isKVCache(arg))
        others.set(arg.getArgNumber());
    if (failed(main.eraseArguments(others)))
      return signalPassFailure();
    auto micro = main->getAttrOfType<IntegerAttr>(kMicroBatches);
    OpBuilder b(&getContext());
    module->setAttr("dist.pipeline",
                    b.getDictionaryAttr(
                        {b.getNamedAttr("stage", b.getI64IntegerAttr(stage)),
                         b.getNamedAttr("stages", b.getI64IntegerAttr(stages)),
                         b.getNamedAttr("micro_batches",
                                        micro ? micro : b.getI64IntegerAttr(1)),
                         b.getNamedAttr("virtual_stages",
                                        b.getI64IntegerAttr(virtualStages))}));
  }
};

} // namespace
