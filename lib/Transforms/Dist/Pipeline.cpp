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
#include "parc/Support/OptionRef.h"
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
using parc::optionRef;

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

/// The ops of @main that belong to a stage (not the weights every stage
/// materialises itself), in program order.
struct ProgramOrder {
  Block &body;
  SmallVector<Operation *> ops;
  llvm::DenseMap<Operation *, int64_t> index;
  /// Positions of the fused attentions: one layer each.
  SmallVector<int64_t> attentions;

  explicit ProgramOrder(Block &body) : body(body) {
    for (Operation &op : body.without_terminator()) {
      if (isStageFree(&op))
        continue;
      index[&op] = ops.size();
      if (isa<nn::AttentionOp>(op))
        attentions.push_back(ops.size());
      ops.push_back(&op);
    }
  }
  int64_t size() const { return ops.size(); }
  /// The position in program order of an op's top-level ancestor; the
  /// return counts as after every op.
  int64_t positionOf(Operation *user) const {
    Operation *top = body.findAncestorOpInBlock(*user);
    if (!top || top == body.getTerminator())
      return size();
    auto it = index.find(top);
    return it == index.end() ? -1 : it->second;
  }
};

/// What a cut before op p would send: bytes[p], the bytes of computed
/// values live across it; count[p], how many of them are not side inputs
/// (which only the structural cuts ask).
struct Liveness {
  SmallVector<int64_t> bytes, count;
};

Liveness liveAcrossCuts(const ProgramOrder &order,
                        const llvm::DenseSet<Value> &side) {
  const int64_t n = order.size();
  // Differences first (+ where a value becomes live, - after its last
  // use), summed into prefix counts below.
  Liveness live{SmallVector<int64_t>(n + 2, 0), SmallVector<int64_t>(n + 2, 0)};
  for (int64_t i = 0; i < n; ++i)
    for (Value r : order.ops[i]->getResults()) {
      int64_t last = i;
      for (Operation *user : r.getUsers())
        last = std::max(last, order.positionOf(user));
      if (last > i) {
        live.bytes[i + 1] += dist::bytesOf(r.getType());
        live.bytes[last + 1] -= dist::bytesOf(r.getType());
        int64_t counted = !side.contains(r);
        live.count[i + 1] += counted;
        live.count[last + 1] -= counted;
      }
    }
  for (int64_t p = 1; p <= n + 1; ++p) {
    live.bytes[p] += live.bytes[p - 1];
    live.count[p] += live.count[p - 1];
  }
  return live;
}

/// The layers: layer k is ops [start[k], start[k + 1]). `unit` says what
/// one is, for diagnostics. No starts: nothing repeats.
struct Layers {
  SmallVector<int64_t> start;
  StringRef unit;
  int64_t size() const { return start.size() - 1; }
};

/// With attentions, layer k starts at the latest least-live point after
/// the previous attention, at the latest just before its own; without, the
/// structure of the dataflow decides (repeatedLayers).
Layers findLayers(const ProgramOrder &order, const Liveness &live) {
  ArrayRef<int64_t> attentions = order.attentions;
  if (attentions.empty())
    return {repeatedLayers(order.ops, live.count), "one per repeated block"};
  SmallVector<int64_t> start{0};
  for (int64_t k = 1; k < (int64_t)attentions.size(); ++k) {
    int64_t best = attentions[k];
    for (int64_t p = attentions[k - 1] + 1; p <= attentions[k]; ++p)
      if (live.bytes[p] <= live.bytes[best])
        best = p;
    start.push_back(best);
  }
  start.push_back(order.size());
  return {start, "one per attention block"};
}

/// The ops of each chunk (consecutive layers; chunk c runs on stage c mod
/// pp, so with virtual stages each stage holds several chunks, pp apart),
/// and the values other stages read.
struct Chunks {
  Block &body;
  int64_t pp, count;
  llvm::DenseMap<Operation *, int64_t> of;
  SmallVector<SmallVector<Operation *>> ops;
  /// Values used on other stages: value → those stages, in order. (A value
  /// read by a later chunk of its own stage stays where it is.)
  llvm::MapVector<Value, SmallVector<int64_t>> crossing;

  Chunks(const ProgramOrder &order, const Layers &layers,
         ArrayRef<int64_t> counts, int64_t pp);
  int64_t stageOf(int64_t chunk) const { return chunk % pp; }
  /// The chunk of the op that defines `v` (a computed value).
  int64_t ofValue(Value v) const { return of.lookup(v.getDefiningOp()); }
  /// The chunk a use belongs to; the return is the last chunk's.
  int64_t ofUser(Operation *user) const {
    Operation *top = body.findAncestorOpInBlock(*user);
    if (!top || top == body.getTerminator())
      return count - 1;
    auto it = of.find(top);
    return it == of.end() ? -1 : it->second;
  }
  /// The order a stage runs (micro-batch, chunk) pairs in: GPipe runs its
  /// one chunk for micro-batch 0, 1, …; interleaved stages take micro-
  /// batches in groups of pp and run each of their chunks over the group
  /// before the next (Megatron's forward order). Every dependency points
  /// to an earlier key, and sends leave in key order, so receives posted in
  /// the same order match them.
  std::tuple<int64_t, int64_t, int64_t> key(int64_t microBatch,
                                            int64_t chunk) const {
    return std::make_tuple(microBatch / pp, chunk / pp, microBatch);
  }
};

Chunks::Chunks(const ProgramOrder &order, const Layers &layers,
               ArrayRef<int64_t> counts, int64_t pp)
    : body(order.body), pp(pp), count(counts.size()), ops(counts.size()) {
  for (int64_t c = 0, k = 0; c < count; ++c)
    for (int64_t end = k + counts[c]; k < end; ++k)
      for (int64_t i = layers.start[k]; i < layers.start[k + 1]; ++i) {
        of[order.ops[i]] = c;
        ops[c].push_back(order.ops[i]);
      }
  for (Operation *op : order.ops)
    for (Value r : op->getResults()) {
      SmallVector<int64_t> to;
      for (Operation *user : r.getUsers()) {
        int64_t c = ofUser(user);
        int64_t s = stageOf(c);
        if (c > of[op] && s != stageOf(of[op]) && !llvm::is_contained(to, s))
          to.push_back(s);
      }
      llvm::sort(to);
      if (!to.empty())
        crossing[r] = to;
    }
}

/// What every stage's writer shares: the new function, the weights cloned
/// into it once, and how sends and receives are built.
struct PipelineContext {
  OpBuilder &b;
  const Chunks &chunks;
  FunctionOpInterface fn;
  IRMapping shared;
  FlatSymbolRefAttr meshRef;
  ArrayAttr ppAxis;
  int64_t microBatches;
  bool async;

  /// Micro-batch i's ops (not the receives posted up front) also carry i:
  /// independent chains that dist-overlap may interleave.
  Operation *tag(Operation *op, int64_t s, int64_t i = -1) {
    op->setAttr(kStage, b.getI64IntegerAttr(s));
    if (i >= 0 && microBatches > 1)
      op->setAttr(dist::kMicroBatch, b.getI64IntegerAttr(i));
    return op;
  }
};

/// Writes stage s's program at the end of the new function: receives
/// posted up front, then its (micro-batch, chunk) steps in key order, each
/// the chunk's ops cloned on that micro-batch's values and followed by
/// their sends, then the waits for the sends (and, on the last stage, the
/// stacked outputs).
class StageWriter {
public:
  StageWriter(PipelineContext &p, int64_t s)
      : p(p), b(p.b), chunks(p.chunks), s(s), maps(p.microBatches, p.shared) {}

  void write(Operation *ret, ArrayRef<Type> resultTypes);

private:
  /// A value computed on another stage, as the sender sends it.
  struct Incoming {
    std::tuple<int64_t, int64_t, int64_t> senderKey;
    int64_t position; // in Chunks::crossing
    int64_t microBatch;
    Value value;
  };
  void postReceives();
  /// Micro-batch i's version of `v`: mapped already, its part of a graph
  /// input, or received.
  Value resolve(int64_t i, Value v);
  Value sliceOfInput(int64_t i, BlockArgument arg);
  /// Chunk c's ops for micro-batch i, each followed by the sends of its
  /// results other stages read.
  void writeStep(int64_t i, int64_t c);
  /// Outputs: each micro-batch's, stacked.
  void writeOutputs(Operation *ret, ArrayRef<Type> resultTypes);

  PipelineContext &p;
  OpBuilder &b;
  const Chunks &chunks;
  int64_t s;
  std::vector<IRMapping> maps; // per micro-batch
  SmallVector<Incoming> incoming;
  llvm::DenseMap<std::pair<int64_t, Value>, Value> pending;
  llvm::DenseMap<std::pair<int64_t, Value>, int64_t> source;
  SmallVector<Value> sends;
};

void StageWriter::write(Operation *ret, ArrayRef<Type> resultTypes) {
  postReceives();
  SmallVector<std::pair<int64_t, int64_t>> order; // (micro-batch, chunk)
  for (int64_t i = 0; i < p.microBatches; ++i)
    for (int64_t c = s; c < chunks.count; c += chunks.pp)
      order.push_back({i, c});
  llvm::stable_sort(order, [&](auto x, auto y) {
    return chunks.key(x.first, x.second) < chunks.key(y.first, y.second);
  });
  for (auto [i, c] : order)
    writeStep(i, c);
  for (Value token : sends)
    p.tag(dist::WaitOp::create(b, token.getLoc(), token), s);
  if (s == chunks.pp - 1)
    writeOutputs(ret, resultTypes);
}

/// Receives: for every micro-batch, in the order the senders send; with
/// async ones posted here and each waited for where first used.
void StageWriter::postReceives() {
  for (int64_t i = 0; i < p.microBatches; ++i)
    for (auto [pos, entry] : llvm::enumerate(chunks.crossing))
      if (llvm::is_contained(entry.second, s))
        incoming.push_back({chunks.key(i, chunks.ofValue(entry.first)),
                            (int64_t)pos, i, entry.first});
  llvm::stable_sort(incoming, [](const Incoming &x, const Incoming &y) {
    return std::tie(x.senderKey, x.position) <
           std::tie(y.senderKey, y.position);
  });
  for (Incoming &in : incoming) {
    Value v = in.value;
    int64_t from = chunks.stageOf(chunks.ofValue(v));
    source[{in.microBatch, v}] = from;
    if (!p.async)
      continue;
    auto recv = dist::RecvStartOp::create(
        b, v.getLoc(), dist::AsyncType::get(b.getContext(), v.getType()),
        p.meshRef, p.ppAxis, b.getI64IntegerAttr(from), IntegerAttr());
    pending[{in.microBatch, v}] = p.tag(recv, s)->getResult(0);
  }
}

Value StageWriter::sliceOfInput(int64_t i, BlockArgument arg) {
  Value full = p.fn.front().getArgument(arg.getArgNumber());
  if (p.microBatches == 1)
    return full;
  auto t = cast<RankedTensorType>(arg.getType());
  SmallVector<int64_t> starts(t.getRank(), 0), steps(t.getRank(), 1);
  int64_t d = nn::batchDim(p.fn, arg.getArgNumber());
  starts[d] = i * t.getDimSize(d);
  return p
      .tag(nn::SliceOp::create(b, arg.getLoc(), t, full,
                               b.getDenseI64ArrayAttr(starts),
                               b.getDenseI64ArrayAttr(steps)),
           s, i)
      ->getResult(0);
}

Value StageWriter::resolve(int64_t i, Value v) {
  if (Value mapped = maps[i].lookupOrNull(v))
    return mapped;
  Value got;
  if (auto arg = dyn_cast<BlockArgument>(v))
    got = sliceOfInput(i, arg);
  else if (p.async)
    got = p.tag(dist::WaitOp::create(b, v.getLoc(), pending.lookup({i, v})),
                s, i)
              ->getResult(0);
  else
    got = p.tag(dist::RecvOp::create(
                    b, v.getLoc(), v.getType(), p.meshRef, p.ppAxis,
                    b.getI64IntegerAttr(source.lookup({i, v})), IntegerAttr()),
                s, i)
              ->getResult(0);
  maps[i].map(v, got);
  return got;
}

void StageWriter::writeStep(int64_t i, int64_t c) {
  if (!p.async) // blocking receives: this step's, in the senders' order
    for (Incoming &in : incoming)
      if (in.microBatch == i && chunks.ofValue(in.value) < c &&
          llvm::any_of(in.value.getUsers(), [&](Operation *user) {
            return chunks.ofUser(user) == c;
          }))
        resolve(i, in.value);
  for (Operation *op : chunks.ops[c]) {
    op->walk([&](Operation *inner) {
      for (Value operand : inner->getOperands()) {
        // Values defined inside `op` (its regions' own) map on cloning.
        if (op->isAncestor(operand.getParentBlock()->getParentOp()))
          continue;
        resolve(i, operand);
      }
    });
    Operation *clone = p.tag(b.clone(*op, maps[i]), s, i);
    for (Value r : op->getResults()) {
      auto it = chunks.crossing.find(r);
      if (it == chunks.crossing.end())
        continue;
      Value local = maps[i].lookup(r);
      for (int64_t to : it->second) {
        if (p.async)
          sends.push_back(
              p.tag(dist::SendStartOp::create(
                        b, clone->getLoc(), dist::AsyncType::get(b.getContext()),
                        p.meshRef, p.ppAxis, local, b.getI64IntegerAttr(to),
                        IntegerAttr()),
                    s, i)
                  ->getResult(0));
        else
          p.tag(dist::SendOp::create(b, clone->getLoc(), p.meshRef, p.ppAxis,
                                     local, b.getI64IntegerAttr(to),
                                     IntegerAttr()),
                s, i);
      }
    }
  }
}

void StageWriter::writeOutputs(Operation *ret, ArrayRef<Type> resultTypes) {
  SmallVector<Value> results;
  for (auto [k, v] : llvm::enumerate(ret->getOperands())) {
    SmallVector<Value> parts;
    for (int64_t i = 0; i < p.microBatches; ++i)
      parts.push_back(resolve(i, v));
    if (p.microBatches == 1) {
      results.push_back(parts.front());
      continue;
    }
    results.push_back(
        p.tag(nn::ConcatOp::create(
                  b, parts.front().getLoc(), resultTypes[k], parts,
                  b.getI64IntegerAttr(nn::batchDim(p.fn, k, /*result=*/true))),
              s)
            ->getResult(0));
  }
  // The entry's own kind of return, of the new results.
  b.clone(*ret)->setOperands(results);
}

struct DistPipelinePass : parc::dist::impl::DistPipelineBase<DistPipelinePass> {
  using Base::Base;
  void runOnOperation() override;

private:
  /// The options' ranges, before anything is looked at.
  LogicalResult checkOptions(FunctionOpInterface main);
  /// Layers per chunk: the given layout, checked against the layers, or
  /// the balance of their costs.
  FailureOr<SmallVector<int64_t>> chunkSizes(FunctionOpInterface main,
                                             const Layers &layers,
                                             ArrayRef<int64_t> layerCost);
  /// --explain: one remark per chunk.
  void explainChunks(FunctionOpInterface main, const Layers &layers,
                     ArrayRef<int64_t> counts, ArrayRef<int64_t> layerCost,
                     const Liveness &live);
  /// The mesh with a leading pp axis on the tensor-parallel one (or a new
  /// one).
  FailureOr<dist::MeshOp> addPipelineAxis(OpBuilder &b);
  /// @main rewritten as the stages' programs one after another.
  void writeStages(OpBuilder &b, FunctionOpInterface main, const Chunks &chunks,
                   dist::MeshOp mesh, ArrayRef<Type> argTypes,
                   ArrayRef<Type> resultTypes, ArrayRef<int64_t> counts);
};

LogicalResult DistPipelinePass::checkOptions(FunctionOpInterface main) {
  // About the whole model: its location (the file), not a dump of @main.
  if (pp < 1 || microBatches < 1)
    return mlir::emitError(main.getLoc())
           << optionRef("pp") << " and " << optionRef("micro-batches")
           << " must be at least 1, got " << int64_t(pp) << " and "
           << int64_t(microBatches);
  if (virtualStages < 1)
    return mlir::emitError(main.getLoc())
           << optionRef("virtual") << " must be at least 1, got "
           << int64_t(virtualStages);
  return success();
}

FailureOr<SmallVector<int64_t>>
DistPipelinePass::chunkSizes(FunctionOpInterface main, const Layers &layers,
                             ArrayRef<int64_t> layerCost) {
  auto error = [&]() { return mlir::emitError(main.getLoc()); };
  const int64_t chunks = pp * virtualStages;
  const std::string stages = optionRef("pp", int64_t(pp));
  const std::string virt = optionRef("virtual", int64_t(virtualStages));
  const std::string layoutRef = optionRef("layout");
  if (chunks > layers.size()) {
    if (virtualStages == 1)
      error() << stages << " needs at least one layer per "
              << "stage, but the model has " << layers.size() << " layer(s) ("
              << layers.unit << ")";
    else
      error() << stages << " with " << virt
              << " needs at least one layer per "
              << "virtual stage (" << chunks << "), but the model has "
              << layers.size() << " layer(s) (" << layers.unit << ")";
    return failure();
  }
  if (layout.empty())
    return balance(layerCost, chunks);
  SmallVector<int64_t> counts(layout.begin(), layout.end());
  if ((int64_t)counts.size() != chunks) {
    if (virtualStages == 1)
      error() << layoutRef << " gives " << counts.size() << " stage(s), but "
              << optionRef("pp") << " is " << int64_t(pp);
    else
      error() << layoutRef << " gives " << counts.size() << " stage(s), but "
              << stages << " with " << virt << " has " << chunks
              << " virtual stages";
    return failure();
  }
  if (llvm::any_of(counts, [](int64_t c) { return c < 1; })) {
    error() << layoutRef << " needs at least one layer per stage";
    return failure();
  }
  int64_t sum = 0;
  for (int64_t c : counts)
    sum += c;
  if (sum != layers.size()) {
    error() << layoutRef << " sums to " << sum << " layer(s), but the "
            << "model has " << layers.size() << " (" << layers.unit << ")";
    return failure();
  }
  return counts;
}

void DistPipelinePass::explainChunks(FunctionOpInterface main, const Layers &layers,
                                     ArrayRef<int64_t> counts,
                                     ArrayRef<int64_t> layerCost,
                                     const Liveness &live) {
  const int64_t chunks = counts.size();
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
      remark << "; " << live.bytes[layers.start[k]] << " B live at its cut";
  }
}

FailureOr<dist::MeshOp> DistPipelinePass::addPipelineAxis(OpBuilder &b) {
  ModuleOp module = getOperation();
  dist::MeshOp mesh;
  for (auto m : module.getOps<dist::MeshOp>()) {
    if (mesh)
      return m.emitError("dist-pipeline expects at most one mesh");
    mesh = m;
  }
  if (!mesh) {
    b.setInsertionPointToStart(module.getBody());
    return dist::MeshOp::create(b, module.getLoc(), "mesh",
                                b.getStrArrayAttr({"pp", "tp"}),
                                b.getDenseI64ArrayAttr({pp, 1}));
  }
  if (mesh.getAxisIndex("pp"))
    return mesh.emitError("the mesh already has a 'pp' axis");
  SmallVector<Attribute> axes{b.getStringAttr("pp")};
  llvm::append_range(axes, mesh.getAxes());
  SmallVector<int64_t> shape{pp};
  llvm::append_range(shape, mesh.getShape());
  mesh.setAxesAttr(b.getArrayAttr(axes));
  mesh.setShape(shape);
  return mesh;
}

void DistPipelinePass::writeStages(OpBuilder &b, FunctionOpInterface main,
                                   const Chunks &chunks, dist::MeshOp mesh,
                                   ArrayRef<Type> argTypes,
                                   ArrayRef<Type> resultTypes,
                                   ArrayRef<int64_t> counts) {
  auto meshRef = FlatSymbolRefAttr::get(mesh.getSymNameAttr());
  ArrayAttr ppAxis = b.getStrArrayAttr({"pp"});
  auto fn = dist::replacementOf(b, main, "pipelined", argTypes, resultTypes);
  PipelineContext context{b,      chunks,       fn,   IRMapping(),
                          meshRef, ppAxis, microBatches, async};
  // Weights first, shared by every stage and micro-batch.
  Block &body = main.getFunctionBody().front();
  for (Operation &op : body.without_terminator())
    if (isStageFree(&op))
      b.clone(op, context.shared);
  Operation *ret = body.getTerminator();
  for (int64_t s = 0; s < pp; ++s)
    StageWriter(context, s).write(ret, resultTypes);
  fn->setAttr(kLayout, b.getDenseI64ArrayAttr(counts));
  fn->setAttr(kMicroBatches, b.getI64IntegerAttr(microBatches));
  fn->setAttr(kVirtual, b.getI64IntegerAttr(virtualStages));
  // The program takes the entry's place, under its name.
  std::string name = main.getName().str();
  main.erase();
  fn.setName(name);
}

void DistPipelinePass::runOnOperation() {
  ModuleOp module = getOperation();
  FailureOr<FunctionOpInterface> found =
      nn::entryFunction(module, getArgument());
  if (failed(found))
    return signalPassFailure();
  FunctionOpInterface main = *found;
  if (failed(checkOptions(main)))
    return signalPassFailure();

  // Layers, found on the dataflow, and their costs.
  ProgramOrder order(main.getFunctionBody().front());
  llvm::DenseSet<Value> side;
  if (order.attentions.empty())
    side = sideInputs(order.ops, order.body, [&](Operation *op) {
      return order.positionOf(op);
    });
  Liveness live = liveAcrossCuts(order, side);
  Layers layers = findLayers(order, live);
  if (layers.start.empty()) {
    mlir::emitError(main.getLoc())
        << "found no repeated block to cut into pipeline stages: the "
           "model has no attention layer, and no subgraph repeats with "
           "one computed tensor live between its repetitions";
    return signalPassFailure();
  }
  SmallVector<int64_t> layerCost(layers.size(), 0);
  for (int64_t k = 0; k < layers.size(); ++k)
    for (int64_t i = layers.start[k]; i < layers.start[k + 1]; ++i)
      layerCost[k] += nn::flopsOf(order.ops[i]);

  // Layers into chunks, chunks onto stages.
  FailureOr<SmallVector<int64_t>> counts = chunkSizes(main, layers, layerCost);
  if (failed(counts))
    return signalPassFailure();
  LLVM_DEBUG({
    llvm::dbgs() << "dist-pipeline: layer costs";
    for (int64_t c : layerCost)
      llvm::dbgs() << " " << c;
    llvm::dbgs() << "\n";
  });
  if (explain)
    explainChunks(main, layers, *counts, layerCost, live);
  Chunks chunks(order, layers, *counts, pp);

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
  OpBuilder b(&getContext());
  FailureOr<dist::MeshOp> mesh = addPipelineAxis(b);
  if (failed(mesh))
    return signalPassFailure();
  writeStages(b, main, chunks, *mesh, argTypes, resultTypes, *counts);
}

struct DistExtractStagePass
    : parc::dist::impl::DistExtractStageBase<DistExtractStagePass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    FailureOr<FunctionOpInterface> found =
        nn::entryFunction(module, getArgument());
    if (failed(found))
      return signalPassFailure();
    FunctionOpInterface main = *found;
    auto layout = main->getAttrOfType<DenseI64ArrayAttr>(kLayout);
    if (!layout) {
      emitError(main.getLoc(),
                "expected a program from dist-pipeline (with dist.pp_layout)");
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
    Block &body = main.getFunctionBody().front();
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
