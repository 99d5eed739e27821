//===- Profile.cpp - per-op costs of fused nn IR, grouped by block --------===//
//
// One walk over `@main` gives every op its FLOPs, activation and weight
// traffic, and how tensor parallelism divides it. The TP classes follow what
// dist-tensor-parallel builds: a linear whose input is replicated is a
// column candidate; its split flows through views, heads and elementwise ops
// to a row linear (which all-reduces) or to a program output (an LM head,
// all-gathered); a candidate whose split reaches neither, or reaches an op
// without a rule (a norm, a softmax router), stays replicated.
//
// Ops are then grouped into units by the module path in their ONNX node
// names (`/model/layers.3/...` → `layers.3`), and consecutive blocks with the
// same op sequence and shapes are kept once with a repeat count: an 80-layer
// model costs three units per configuration, not 80.
//
//===----------------------------------------------------------------------===//

#include "parc/Plan/Planner.h"
#include "nn/NNCost.h"
#include "nn/NNOps.h"
#include "nn/NodeLocation.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "parc-plan"

using namespace mlir;
using namespace parc::plan;
namespace nn = parc::nn;

namespace {

double elems(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t ? (double)t.getNumElements() : 0;
}

using nn::isWeight;

std::string nodeName(Operation *op) { return nn::nodeName(op->getLoc(), ""); }

/// The repeated module of a node path: the first component spelled
/// `ident.N` (`layers.3`, `h.0`, `layer.11`), or "" outside any block.
std::string blockKey(StringRef node) {
  SmallVector<StringRef> parts;
  node.split(parts, '/');
  for (StringRef p : parts) {
    auto [ident, index] = p.rsplit('.');
    if (!ident.empty() && !index.empty() && ident != p &&
        llvm::all_of(index, llvm::isDigit) && llvm::isAlpha(ident.front()))
      return p.str();
  }
  return "";
}

/// Ops through which a tensor-parallel split flows unchanged in kind.
bool passesSplit(Operation *op) {
  return isa<nn::ReshapeOp, nn::TransposeOp, nn::RotaryOp, nn::SiluOp, nn::GeluOp,
             nn::MulOp, nn::AddOp, nn::SubOp, nn::DivOp, nn::SplitOp, nn::SliceOp,
             nn::ConcatOp, nn::ExpandOp, nn::CastOp, nn::SigmoidOp, nn::TanhOp,
             nn::ReluOp, nn::NegOp, nn::ExpOp, nn::ErfOp, nn::WhereOp,
             nn::AttentionOp>(op);
}

/// Operands of `op` that carry activations (not weights, not masks).
SmallVector<Value> activationOperands(Operation *op) {
  if (auto a = dyn_cast<nn::AttentionOp>(op))
    return {a.getQuery(), a.getKey(), a.getValue()};
  if (auto r = dyn_cast<nn::RotaryOp>(op))
    return {r.getInput()};
  SmallVector<Value> out;
  for (Value v : op->getOperands())
    if (!isWeight(v))
      out.push_back(v);
  return out;
}

/// Whether the split of `v` meets an attention through ops a split passes:
/// forward from a column linear's result, or backward from a row linear's
/// input. Such a linear's dims span heads, which take zero heads.
bool meetsAttention(Value v, bool forward) {
  SmallVector<Value> work{v};
  llvm::DenseSet<Value> seen;
  while (!work.empty()) {
    Value w = work.pop_back_val();
    if (!seen.insert(w).second)
      continue;
    if (forward) {
      for (Operation *user : w.getUsers()) {
        if (isa<nn::AttentionOp>(user))
          return true;
        if (!isa<nn::LinearOp>(user) && passesSplit(user))
          llvm::append_range(work, user->getResults());
      }
      continue;
    }
    Operation *d = w.getDefiningOp();
    if (!d || isWeight(w) || isa<nn::LinearOp>(d))
      continue;
    if (isa<nn::AttentionOp>(d))
      return true;
    if (passesSplit(d))
      llvm::append_range(work, activationOperands(d));
  }
  return false;
}

/// The token embedding dist-annotate makes vocabulary-parallel
/// (dist::vocabularyEmbedding): the largest lookup along axis 0 of a 2-D
/// float weight table by ids that are a graph input.
Operation *findVocabEmbedding(ArrayRef<Operation *> ops) {
  nn::GatherOp best;
  for (Operation *op : ops) {
    auto g = dyn_cast<nn::GatherOp>(op);
    if (!g)
      continue;
    auto table = cast<RankedTensorType>(g.getData().getType());
    if (g.getAxis() != 0 || table.getRank() != 2 || !isWeight(g.getData()) ||
        !isa<BlockArgument>(g.getIndices()) ||
        !isa<FloatType>(table.getElementType()))
      continue;
    if (!best ||
        table.getDimSize(0) > cast<RankedTensorType>(best.getData().getType()).getDimSize(0))
      best = g;
  }
  return best;
}

/// The bytes an element of `t` is stored in: its width rounded up to bytes.
int64_t storedElementBytes(Type t) {
  Type e = getElementTypeOrSelf(t);
  return std::max<int64_t>(1, ((int64_t)e.getIntOrFloatBitWidth() + 7) / 8);
}

class Profiler {
public:
  explicit Profiler(FunctionOpInterface main) : main(main) {}
  FailureOr<ModelProfile> run();

private:
  void classify();
  void findExperts();
  OpCost cost(Operation *op);
  OpCost finishMoe(nn::MoeOp moe, OpCost c);
  /// What checkBuildable reads: inputs, batched dims, layers, the first
  /// norm --sp splits.
  void readBuildFacts();
  /// Heads, the decoder flag, grouped-query key/value columns and the tp
  /// constraints of one attention.
  void readAttention(nn::AttentionOp a);
  /// Whether compile pads the model's attentions with zero heads
  /// (dist::isPaddableAttention, read from the head counts alone).
  bool headsPaddable() const {
    return profile.heads >= 2 && profile.kvHeads > 0 &&
           profile.heads % profile.kvHeads == 0;
  }
  /// Every op's cost, in units by block (`units`, `signatures`, `where`).
  void costUnits();
  void countParameters(Operation *op, llvm::DenseSet<Value> &countedWeights);
  /// How each weight `op` reads divides (the partitioner's rules), into
  /// `weights` by its stored value, read by unit `unit`.
  void recordWeights(Operation *op, const OpCost &c, size_t unit);
  /// The blocks each recorded weight is read by, once units are known.
  void placeWeights();
  /// Lifetimes and the boundary of unit `ui`.
  void traceLifetimes(size_t ui);
  void mergeRepeats();
  void uniqueConstraints();

  FunctionOpInterface main;
  SmallVector<Operation *> ops;
  /// Column candidates still believed to split.
  llvm::SetVector<Operation *> columns;
  llvm::DenseSet<Operation *> kvColumns;
  llvm::DenseMap<Value, Split> split;
  llvm::DenseMap<Operation *, Collective> comms;
  /// MoE: expert ops and dispatch points (the router linear, or the fused
  /// op), each with its layer's (experts, topK).
  llvm::DenseMap<Operation *, std::pair<int64_t, int64_t>> expertOps;
  llvm::DenseMap<Operation *, std::pair<int64_t, int64_t>> routers;
  /// Units before identical blocks merge, each with its op signature, and
  /// every costed op's (unit, index).
  std::vector<Unit> units;
  std::vector<std::string> signatures;
  llvm::DenseMap<Operation *, std::pair<size_t, int>> where;
  /// Column linears of MLPs compile pads with zero features.
  llvm::DenseSet<Operation *> paddableColumns;
  /// The vocabulary-parallel embedding dist-annotate picks (or null).
  Operation *vocabEmbedding = nullptr;
  /// Recorded weights by stored value, and the (pre-merge) units reading
  /// each.
  llvm::DenseMap<Value, size_t> weightIndex;
  std::vector<llvm::SmallVector<size_t, 2>> weightUnits;
  ModelProfile profile;
};

/// Propagates splits forward from the column candidates and demotes those
/// whose split reaches an op without a rule, or neither a row linear nor a
/// program output, until no candidate changes.
void Profiler::classify() {
  for (Operation *op : ops)
    if (isa<nn::LinearOp>(op))
      columns.insert(op);
  for (bool changed = true; changed;) {
    changed = false;
    split.clear();
    comms.clear();
    llvm::DenseMap<Value, llvm::SetVector<Operation *>> sources;
    llvm::DenseSet<Operation *> useful, blocked;
    for (Operation *op : ops) {
      Split in = Split::None;
      llvm::SetVector<Operation *> from;
      for (Value v : activationOperands(op)) {
        auto it = split.find(v);
        if (it == split.end())
          continue;
        in = std::max(in, it->second);
        from.insert(sources[v].begin(), sources[v].end());
      }
      if (isa<nn::LinearOp>(op)) {
        if (in != Split::None) {
          comms[op] = Collective::AllReduce;
          useful.insert(from.begin(), from.end());
        } else if (columns.contains(op)) {
          split[op->getResult(0)] = kvColumns.contains(op) ? Split::Kv : Split::Tp;
          sources[op->getResult(0)].insert(op);
        }
        continue;
      }
      if (in == Split::None)
        continue;
      if (isa<func::ReturnOp>(op)) {
        // An output still split: its column linears are LM heads.
        for (Operation *c : from)
          if (llvm::is_contained(c->getResult(0).getUsers(), op)) {
            comms[c] = Collective::AllGather;
            useful.insert(c);
          } else {
            blocked.insert(c);
          }
        continue;
      }
      if (!passesSplit(op)) {
        blocked.insert(from.begin(), from.end());
        continue;
      }
      // Attention's result carries the query's (all-rank) head split.
      Split out = isa<nn::AttentionOp>(op) ? Split::Tp : in;
      for (Value r : op->getResults()) {
        split[r] = out;
        sources[r] = from;
      }
    }
    for (Operation *c : llvm::to_vector(columns))
      if (blocked.contains(c) || !useful.contains(c)) {
        columns.remove(c);
        changed = true;
      }
  }
}

void Profiler::findExperts() {
  for (Operation *op : ops) {
    if (auto moe = dyn_cast<nn::MoeOp>(op)) {
      std::pair<int64_t, int64_t> ek{moe.getNumExperts(),
                                     (int64_t)moe.getTopK()};
      routers[op] = ek;
      expertOps[op] = ek;
      continue;
    }
    auto topk = dyn_cast<nn::TopKOp>(op);
    if (!topk)
      continue;
    // softmax(router(tokens)) → topk (or topk on the logits).
    Value x = topk.getInput();
    if (auto sm = x.getDefiningOp<nn::SoftmaxOp>())
      x = sm.getInput();
    auto router = x.getDefiningOp<nn::LinearOp>();
    if (!router)
      continue;
    int64_t experts = cast<RankedTensorType>(router.getType()).getShape().back();
    std::pair<int64_t, int64_t> ek{experts, topk.getK()};
    routers[router] = ek;
    // Experts: from the router's tokens forward through their column linears
    // and what follows, up to and including the linears that end them.
    SmallVector<Value> work;
    for (Operation *user : router.getInput().getUsers())
      if (user != router && isa<nn::LinearOp>(user)) {
        expertOps[user] = ek;
        work.push_back(user->getResult(0));
      }
    while (!work.empty()) {
      Value v = work.pop_back_val();
      for (Operation *user : v.getUsers()) {
        if (expertOps.contains(user))
          continue;
        if (isa<nn::LinearOp>(user)) {
          expertOps[user] = ek;
          continue;
        }
        if (!isa<nn::SiluOp, nn::GeluOp, nn::MulOp, nn::SigmoidOp>(user))
          continue;
        // A gating product of two expert values, not the combine weighting.
        if (isa<nn::MulOp>(user) &&
            !llvm::all_of(user->getOperands(), [&](Value o) {
              Operation *d = o.getDefiningOp();
              return d && expertOps.contains(d);
            }))
          continue;
        expertOps[user] = ek;
        work.push_back(user->getResult(0));
      }
    }
  }
}

OpCost Profiler::cost(Operation *op) {
  OpCost c;
  c.op = op->getName().stripDialect().str();
  c.node = nodeName(op);
  c.free = isa<nn::ReshapeOp>(op);
  double out = 0;
  for (Value r : op->getResults())
    out += elems(r);
  // FLOPs and traffic are nn's cost model; the rest is how TP divides it.
  c.flops = (double)nn::flopsOf(op);
  nn::Traffic traffic = nn::trafficOf(op);
  c.actElems = (double)traffic.activationElems;
  c.weightElems = c.weightReadElems = (double)traffic.weightElems;
  // An embedding holds its whole table, and reads only the rows (counted
  // with the activations: they scale with the tokens, not the table).
  if (auto g = dyn_cast<nn::GatherOp>(op); g && isWeight(g.getData()))
    c.weightElems = elems(g.getData());
  if (auto moe = dyn_cast<nn::MoeOp>(op)) {
    // Expert tensor parallelism: F split, outputs all-reduced.
    c.split = Split::Tp;
    c.comm = Collective::AllReduce;
    c.commElems = out;
    return finishMoe(moe, c);
  }
  // The classes found by classify().
  Split in = Split::None;
  for (Value v : activationOperands(op))
    if (auto it = split.find(v); it != split.end())
      in = std::max(in, it->second);
  if (isa<nn::LinearOp>(op) && columns.contains(op))
    c.split = kvColumns.contains(op) ? Split::Kv : Split::Tp;
  else if (isa<nn::AttentionOp>(op))
    c.split = in == Split::None ? Split::None : Split::Tp;
  else
    c.split = in;
  if (auto it = comms.find(op); it != comms.end()) {
    c.comm = it->second;
    c.commElems = out;
    // The bias is added after the all-reduce, on every rank.
    if (auto l = dyn_cast<nn::LinearOp>(op); l && l.getBias() &&
                                             c.comm == Collective::AllReduce)
      c.replicatedElems = elems(l.getBias());
  }
  c.seqShardable = c.split == Split::None && !isa<nn::LinearOp>(op) &&
                   !isa<nn::AttentionOp>(op);
  if (auto it = routers.find(op); it != routers.end()) {
    // The dispatch moves each token's hidden vector to its top-k experts.
    c.dispatchElems = elems(op->getOperand(0));
    c.topK = it->second.second;
  }
  if (auto it = expertOps.find(op); it != expertOps.end()) {
    c.expert = true;
    // Routed: each token visits topK of the experts. Under tp the experts
    // split inside (Megatron's expert tensor parallelism, `--etp`) and the
    // combined output is all-reduced once: 1/E of it per expert.
    double e = (double)it->second.first;
    double f = (double)it->second.second / e;
    c.flops *= f;
    c.actElems *= f;
    c.commElems /= e;
  }
  return c;
}

OpCost Profiler::finishMoe(nn::MoeOp moe, OpCost c) {
  c.expert = true;
  c.dispatchElems = elems(moe.getInput());
  c.topK = expertOps.lookup(moe).second;
  profile.tpConstraints.push_back(
      {moe.getFfnSize(), "expert features of node '" + c.node + "'"});
  return c;
}

void Profiler::readBuildFacts() {
  auto batched = [&](Type t) {
    auto r = cast<RankedTensorType>(t);
    return r.getRank() > 0 && r.getDimSize(0) == profile.batch;
  };
  for (auto [i, type] : llvm::enumerate(main.getArgumentTypes())) {
    auto name = main.getArgAttrOfType<StringAttr>(i, "onnx.name");
    auto shape = cast<RankedTensorType>(type).getShape();
    profile.inputs.push_back(
        {name ? name.str() : "input_" + std::to_string(i),
         std::vector<int64_t>(shape.begin(), shape.end())});
    profile.batchOnDim0 &= batched(type);
  }
  for (Type t : main.getResultTypes())
    profile.batchOnDim0 &= batched(t);
  for (Operation *op : ops) {
    profile.layers += isa<nn::AttentionOp>(op);
    // The norms --sp splits: over the last dim, the sequence before it.
    if (!isa<nn::LayerNormOp, nn::RmsNormOp>(op) ||
        !profile.seqNormNode.empty())
      continue;
    auto x = cast<RankedTensorType>(op->getOperand(0).getType());
    int64_t axis = op->getAttrOfType<IntegerAttr>("axis").getInt();
    if (x.getRank() >= 2 && (axis == -1 || axis == x.getRank() - 1)) {
      profile.seqNormNode = nodeName(op);
      profile.seqNormLength = x.getDimSize(x.getRank() - 2);
    }
  }
}

/// Whether `v` is computed from constants only (no graph input reaches it).
bool onlyConstants(Value v) {
  SmallVector<Value> work{v};
  llvm::DenseSet<Value> seen;
  while (!work.empty()) {
    Value w = work.pop_back_val();
    if (!seen.insert(w).second)
      continue;
    if (isa<BlockArgument>(w))
      return false;
    for (Value o : w.getDefiningOp()->getOperands())
      work.push_back(o);
  }
  return true;
}

void Profiler::readAttention(nn::AttentionOp a) {
  auto q = cast<RankedTensorType>(a.getQuery().getType()).getShape();
  auto k = cast<RankedTensorType>(a.getKey().getType()).getShape();
  profile.heads = q[1];
  profile.kvHeads = k[1];
  profile.headDim = k[3];
  // A modifier fed only by constants (a causal mask, possibly folded into
  // the region) marks a decoder; a mask input or no modifier an encoder.
  profile.decoder = !a.hasIdentityScoreMod() &&
                    llvm::all_of(a.getMasks(), onlyConstants);
  // Grouped-query key/value projections split into min(tp, kv_heads) parts.
  for (Value kv : {a.getKey(), a.getValue()}) {
    SmallVector<Value> work{kv};
    while (!work.empty()) {
      Operation *d = work.pop_back_val().getDefiningOp();
      if (!d || isWeight(d->getResult(0)))
        continue;
      if (isa<nn::LinearOp>(d)) {
        if (k[1] != q[1])
          kvColumns.insert(d);
        continue;
      }
      if (passesSplit(d))
        for (Value o : activationOperands(d))
          work.push_back(o);
    }
  }
  if (profile.heads)
    profile.tpConstraints.push_back(
        {profile.heads, "attention heads", false, headsPaddable()});
  if (profile.kvHeads != profile.heads)
    profile.tpConstraints.push_back(
        {profile.kvHeads, "key/value heads", true, headsPaddable()});
}

/// The op kinds and result shapes of an op, which two blocks must share
/// op by op to be one unit with a count.
std::string signatureOf(const OpCost &c, Operation *op) {
  std::string sig = c.op + ":";
  for (Value r : op->getResults())
    if (auto t = dyn_cast<RankedTensorType>(r.getType()))
      for (int64_t d : t.getShape())
        sig += std::to_string(d) + "x";
  return sig + ";";
}

void Profiler::countParameters(Operation *op,
                               llvm::DenseSet<Value> &countedWeights) {
  // Parameters: the model's initializers (blobs or external data), not
  // constants folded from the graph (positions, masks); a tied table once.
  for (Value v : op->getOperands()) {
    // A weight cast from its stored bf16/f16 counts as that initializer.
    if (Value stored = nn::weightSource(v))
      v = stored;
    Operation *d = v.getDefiningOp();
    auto cst = dyn_cast_or_null<arith::ConstantOp>(d);
    bool initializer = isa_and_nonnull<nn::ExternalWeightOp>(d) ||
                       (cst && isa<DenseResourceElementsAttr>(cst.getValue()));
    if (initializer && countedWeights.insert(v).second)
      profile.parameters += elems(v);
  }
}

void Profiler::recordWeights(Operation *op, const OpCost &c, size_t unit) {
  auto record = [&](Value v, int64_t tpDim, WeightShard::Pad pad, bool kv) {
    if (!v || !isWeight(v))
      return;
    Value stored = nn::weightSource(v);
    if (!stored)
      stored = v;
    auto [it, fresh] = weightIndex.try_emplace(stored, profile.weights.size());
    if (fresh) {
      WeightShard w;
      auto t = cast<RankedTensorType>(stored.getType());
      w.shape.assign(t.getShape().begin(), t.getShape().end());
      // As stored: a bf16/f16 checkpoint under its casts to f32.
      w.elementBytes = storedElementBytes(stored.getType());
      w.isFloat = isa<FloatType>(getElementTypeOrSelf(stored.getType()));
      w.tpDim = tpDim;
      w.pad = pad;
      w.kv = kv;
      profile.weights.push_back({std::move(w), {}});
      weightUnits.emplace_back();
    }
    if (!llvm::is_contained(weightUnits[it->second], unit))
      weightUnits[it->second].push_back(unit);
    return;
  };
  using Pad = WeightShard::Pad;
  if (auto l = dyn_cast<nn::LinearOp>(op)) {
    bool kv = c.split == Split::Kv;
    int64_t out = l.getTransposeWeight() ? 0 : 1, in = 1 - out;
    if (c.split != Split::None && c.comm == Collective::AllReduce) {
      // A row linear: split along its input features; its bias is added
      // after the reduction, whole.
      Pad pad = meetsAttention(l.getInput(), false) ? Pad::Heads : Pad::Width;
      record(l.getWeight(), in, pad, kv);
      record(l.getBias(), -1, Pad::None, false);
    } else if (c.split != Split::None) {
      // A column linear or an output head: split along its features.
      Pad pad = !c.comm && meetsAttention(l.getResult(), true) ? Pad::Heads
                                                              : Pad::Width;
      record(l.getWeight(), out, pad, kv);
      record(l.getBias(), 0, pad, kv);
    }
  } else if (auto moe = dyn_cast<nn::MoeOp>(op)) {
    // Stacked experts [E, H, F] / [E, F, H]: E over ep, F over tp (--etp).
    for (auto [v, dim] : {std::pair<Value, int64_t>{moe.getFc1(), 2},
                          {moe.getFc2(), 1},
                          {moe.getFc3(), 2}}) {
      size_t before = profile.weights.size();
      record(v, dim, Pad::None, false);
      if (profile.weights.size() > before)
        profile.weights.back().shard.experts = true;
    }
  } else if (op == vocabEmbedding) {
    auto g = cast<nn::GatherOp>(op);
    record(g.getData(), 0, Pad::Width, false);
    WeightShard tables;
    tables.shape = {cast<RankedTensorType>(g.getData().getType()).getDimSize(0)};
    tables.elementBytes = storedElementBytes(g.getIndices().getType());
    tables.vocabLookup = true;
    profile.weights.push_back({std::move(tables), {}});
    weightUnits.push_back({unit});
  }
  // Everything else every rank of the stage holds whole (the first
  // reader decides: a tied table is cut as its embedding).
  for (Value v : op->getOperands())
    record(v, -1, Pad::None, false);
}

void Profiler::placeWeights() {
  // Block ordinals of the units before merging: one block per unit.
  std::vector<int64_t> ordinal(units.size());
  int64_t blocks = 0;
  for (size_t i = 0; i < units.size(); ++i)
    ordinal[i] = units[i].block ? blocks++ : units[i].name == "pre" ? -1 : -2;
  for (size_t i = 0; i < units.size(); ++i)
    if (ordinal[i] == -2)
      ordinal[i] = blocks;
  for (auto [w, readers] : llvm::zip_equal(profile.weights, weightUnits)) {
    for (size_t u : readers)
      w.blocks.push_back(ordinal[u]);
    llvm::sort(w.blocks);
  }
}

void Profiler::costUnits() {
  // Units by block key, in program order. Unnamed ops between blocks join
  // the block they sit in; those before the first block are "pre", those
  // after the last "post".
  SmallVector<std::string> keys;
  int lastKeyed = -1;
  for (auto [i, op] : llvm::enumerate(ops)) {
    keys.push_back(blockKey(nodeName(op)));
    if (!keys.back().empty())
      lastKeyed = (int)i;
  }
  llvm::DenseSet<Value> countedWeights; // a tied table counts once
  std::string current;
  for (auto [i, op] : llvm::enumerate(ops)) {
    if (isa<func::ReturnOp>(op))
      continue;
    std::string key = keys[i];
    if (key.empty())
      key = (int)i > lastKeyed ? "post" : current.empty() ? "pre" : current;
    if (units.empty() || key != current) {
      units.push_back(Unit{key, 1, key != "pre" && key != "post"});
      signatures.emplace_back();
      current = key;
    }
    Unit &u = units.back();
    OpCost c = cost(op);
    if (c.op == "linear" && c.split == Split::Tp && !c.comm) {
      // A column linear: tp must divide its output features.
      // compile pads an MLP's features, and an attention's heads.
      int64_t n = cast<RankedTensorType>(op->getResult(0).getType()).getShape().back();
      bool paddable = paddableColumns.contains(op) ||
                      (headsPaddable() && meetsAttention(op->getResult(0), true));
      profile.tpConstraints.push_back(
          {n, "output features of node '" + c.node + "'", false, paddable});
    }
    where[op] = {units.size() - 1, (int)u.ops.size()};
    signatures.back() += signatureOf(c, op);
    countParameters(op, countedWeights);
    recordWeights(op, c, units.size() - 1);
    u.ops.push_back(std::move(c));
  }
}

void Profiler::traceLifetimes(size_t ui) {
  Unit &u = units[ui];
  llvm::DenseMap<Value, size_t> index;
  for (Operation *op : ops) {
    auto it = where.find(op);
    if (it == where.end() || it->second.first != ui)
      continue;
    int at = it->second.second;
    for (Value v : op->getOperands()) {
      auto vi = index.find(v);
      if (vi != index.end())
        u.values[vi->second].lastUse = at;
    }
    for (Value r : op->getResults()) {
      LiveValue lv;
      lv.elems = elems(r);
      lv.split = split.lookup(r);
      lv.def = lv.lastUse = at;
      // Values read by a later unit stay live to the unit's end.
      for (Operation *user : r.getUsers()) {
        auto w = where.find(user);
        if (w == where.end() || w->second.first != ui) {
          lv.lastUse = (int)u.ops.size();
          u.boundaryElems = std::max(u.boundaryElems, lv.elems);
        }
      }
      index[r] = u.values.size();
      u.values.push_back(lv);
    }
  }
}

void Profiler::mergeRepeats() {
  // Consecutive blocks with one signature become one unit with a count.
  for (size_t i = 0; i < units.size(); ++i) {
    if (!profile.units.empty() && units[i].block && profile.units.back().block &&
        signatures[i] == signatures[i - 1]) {
      profile.units.back().count += 1;
      continue;
    }
    profile.units.push_back(std::move(units[i]));
  }
  for (const Unit &u : profile.units)
    if (u.block) {
      profile.blocks += u.count;
      if (profile.hidden == 0 && profile.batch * profile.seq > 0)
        profile.hidden = (int64_t)(u.boundaryElems / (double)(profile.batch * profile.seq));
    }
}

void Profiler::uniqueConstraints() {
  // Deduplicate constraints by (dim, kv, paddable).
  std::vector<TpConstraint> unique;
  for (const TpConstraint &c : profile.tpConstraints)
    if (llvm::none_of(unique, [&](const TpConstraint &u) {
          return u.dim == c.dim && u.kv == c.kv && u.paddable == c.paddable;
        }))
      unique.push_back(c);
  profile.tpConstraints = std::move(unique);
}

FailureOr<ModelProfile> Profiler::run() {
  if (main.getNumArguments() == 0)
    return main.emitError("planning needs a model with at least one input"), failure();
  for (Operation &op : main.getFunctionBody().front())
    if (op.getNumResults() != 1 || !isWeight(op.getResult(0)))
      ops.push_back(&op);
  for (Operation *op : ops)
    if (auto a = dyn_cast<nn::AttentionOp>(op))
      readAttention(a);
  findExperts();
  classify();
  // The router is replicated in classify(); experts were found before it.
  for (auto &[router, ek] : routers) {
    profile.experts = ek.first;
    profile.topK = ek.second;
  }
  auto firstIn = cast<RankedTensorType>(main.getArgument(0).getType());
  profile.batch = firstIn.getRank() ? firstIn.getShape()[0] : 1;
  profile.seq = firstIn.getRank() > 1 ? firstIn.getShape()[1] : 1;
  readBuildFacts();
  vocabEmbedding = findVocabEmbedding(ops);
  for (Operation *op : ops)
    if (auto row = dyn_cast<nn::LinearOp>(op))
      if (auto mlp = analyzePaddableMlp(row, [](Value) { return true; }))
        paddableColumns.insert(mlp->columns.begin(), mlp->columns.end());
  costUnits();
  placeWeights();
  for (size_t ui = 0; ui < units.size(); ++ui)
    traceLifetimes(ui);
  mergeRepeats();
  uniqueConstraints();
  return profile;
}

} // namespace

FailureOr<ModelProfile> parc::plan::profileModel(ModuleOp module) {
  FailureOr<FunctionOpInterface> main = nn::entryFunction(module, "planning");
  if (failed(main))
    return failure();
  return Profiler(*main).run();
}
