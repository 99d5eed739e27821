//===- KVCache.cpp - nn-kv-cache --------------------------------*- C++ -*-===//
//
// Generation with a static KV cache (the design of TensorRT-LLM and of
// Hugging Face's StaticCache). An exported decoder carries its cache as I/O:
// present = Concat(past, new) on the sequence axis, so the past grows every
// step and every step would copy it. Bound with a past of capacity - n
// entries (the driver does that for --max-seq), the concat's result already
// has the cache's fixed shape; this pass makes that result the cache itself:
//
//   past input  -> the cache (capacity entries), a persistent buffer the
//                  runtime allocates once and keeps across steps
//   concat      -> nn.kv_cache_write(cache, new, cache_position), written in
//                  place at run time (convert-nn-to-rt)
//   present     -> dropped from the outputs (the cache is the state)
//   attention   -> + an additive mask hiding the keys after each query's own
//                  position: entries not yet written, and the causal future
//
// Two forms of present are recognised, each by its own matcher:
//   concat   present = Concat(past, new): Hugging Face / optimum exports,
//            and com.microsoft GroupQueryAttention as the importer spells
//            it (its seqlens_k, computed in the graph from attention_mask,
//            then follows the loop's mask).
//   stacked  com.microsoft Attention's past [2, B, N, P, D]: present =
//            Concat(Reshape(Concat(past[0], new key)), Reshape(Concat(
//            past[1], new value))) on dim 0. The past becomes two caches,
//            key and value, each written in place, because attention
//            reading one half of a stacked buffer would copy it every step.
//
// The model's own causal mask is kept: bound at the largest past, it allows
// a superset of what the position mask allows, so their sum is exact.
//
//===----------------------------------------------------------------------===//

#include "nn/NNOps.h"
#include "parc/Support/OptionRef.h"
#include "parc/Transforms/NN/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/Regex.h"

#include <array>
#include <optional>

#define DEBUG_TYPE "nn-kv-cache"

namespace parc::nn {
#define GEN_PASS_DEF_NNKVCACHE
#include "parc/Transforms/NN/Passes.h.inc"
} // namespace parc::nn

using namespace mlir;
using namespace parc::nn;

namespace {

constexpr StringLiteral kRole = kKVRoleAttr;

StringRef argName(FunctionOpInterface f, unsigned i) {
  auto n = f.getArgAttrOfType<StringAttr>(i, "onnx.name");
  return n ? n.getValue() : StringRef();
}

StringRef resultName(FunctionOpInterface f, unsigned i) {
  auto n = f.getResultAttrOfType<StringAttr>(i, "onnx.name");
  return n ? n.getValue() : StringRef();
}

/// The past input an exporter pairs with output `present`, by name:
/// present.{i}.key|value <- past_key_values.{i}.key|value, present_{i} <-
/// past_{i}; empty if `present` follows neither convention.
std::string pastByConvention(StringRef present) {
  SmallVector<StringRef> m;
  if (llvm::Regex("^present\\.([0-9]+)\\.(key|value)$").match(present, &m))
    return ("past_key_values." + m[1] + "." + m[2]).str();
  if (llvm::Regex("^present_([0-9]+)$").match(present, &m))
    return ("past_" + m[1]).str();
  return {};
}

struct Pair {
  unsigned arg, result;
};

/// The cache a key or value reads, through the layout ops between them
/// (transpose for Kᵀ, expand/reshape for grouped-query heads).
KVCacheWriteOp cacheUnder(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (auto w = dyn_cast<KVCacheWriteOp>(def))
      return w;
    if (!isa<TransposeOp, ReshapeOp, ExpandOp>(def))
      return {};
    v = def->getOperand(0);
  }
  return {};
}

/// The concat form: present = Concat(past, new), or null.
ConcatOp matchConcatForm(Value present, BlockArgument past) {
  auto concat = present.getDefiningOp<ConcatOp>();
  if (!concat || concat.getInputs().size() != 2 ||
      concat.getInputs()[0] != past)
    return {};
  return concat;
}

/// Whether `v` is half `h` of the stacked past: Reshape(Split(past)#h) or
/// Reshape(Slice(past) starting at h on dim 0).
bool isPastHalf(Value v, BlockArgument past, unsigned h) {
  while (auto reshape = v.getDefiningOp<ReshapeOp>())
    v = reshape.getInput();
  if (auto split = v.getDefiningOp<SplitOp>())
    return split.getInput() == past && split.getAxis() == 0 &&
           split.getNumResults() == 2 &&
           cast<OpResult>(v).getResultNumber() == h;
  if (auto slice = v.getDefiningOp<SliceOp>())
    return slice.getInput() == past && slice.getStarts()[0] == int64_t(h) &&
           cast<RankedTensorType>(v.getType()).getDimSize(0) == 1;
  return false;
}

/// The stacked form's two inner concats (key, value), or none.
std::optional<std::array<ConcatOp, 2>> matchStackedForm(Value present,
                                                        BlockArgument past) {
  auto outer = present.getDefiningOp<ConcatOp>();
  auto pt = cast<RankedTensorType>(past.getType());
  if (!outer || outer.getAxis() != 0 || outer.getInputs().size() != 2 ||
      pt.getRank() != 5 || pt.getDimSize(0) != 2)
    return std::nullopt;
  std::array<ConcatOp, 2> halves;
  for (unsigned h = 0; h < 2; ++h) {
    auto reshape = outer.getInputs()[h].getDefiningOp<ReshapeOp>();
    auto inner =
        reshape ? reshape.getInput().getDefiningOp<ConcatOp>() : ConcatOp();
    if (!inner || inner.getInputs().size() != 2 ||
        !isPastHalf(inner.getInputs()[0], past, h))
      return std::nullopt;
    halves[h] = inner;
  }
  return halves;
}

struct NNKVCachePass : parc::nn::impl::NNKVCacheBase<NNKVCachePass> {
  using Base::Base;

  FailureOr<SmallVector<Pair>> findPairs(FunctionOpInterface f);
  /// Rewrites pair `p` in the form it has; `stale` collects pasts replaced
  /// by new cache arguments.
  LogicalResult rewritePair(FunctionOpInterface f, Pair p, Value position,
                            llvm::BitVector &stale);
  /// `concat` (of a past's entries and the new ones) as a write into
  /// `cache`; checks every cache has the same capacity.
  LogicalResult writeInto(FunctionOpInterface f, ConcatOp concat, Value cache,
                          StringRef name, Value position);
  LogicalResult rewriteStacked(FunctionOpInterface f, Pair p,
                               std::array<ConcatOp, 2> halves, Value position);
  /// key j, query i: -inf where j - i > position, else 0 ([1, 1, S, T]).
  Value positionMask(OpBuilder &b, Location loc, RankedTensorType scores,
                     Value position);
  void maskAttention(AttentionOp op, Value mask);
  void tagInputs(FunctionOpInterface f);
  LogicalResult dropPresents(FunctionOpInterface f, const llvm::BitVector &presents,
                             const llvm::BitVector &stale);
  void runOnOperation() override;

  int64_t capacity = 0;
};

FailureOr<SmallVector<Pair>> NNKVCachePass::findPairs(FunctionOpInterface f) {
  llvm::StringMap<unsigned> args, results;
  for (unsigned i = 0; i < f.getNumArguments(); ++i)
    args[argName(f, i)] = i;
  for (unsigned i = 0; i < f.getNumResults(); ++i)
    results[resultName(f, i)] = i;
  SmallVector<Pair> out;
  for (const std::string &spec : pairs) {
    auto [past, present] = StringRef(spec).split('=');
    if (past.empty() || present.empty())
      return emitError(f.getLoc())
             << parc::optionRef("pairs") << ": '" << spec
             << "' is not PAST=PRESENT (e.g. past_0=present_0)";
    if (!args.count(past))
      return emitError(f.getLoc())
             << parc::optionRef("pairs") << ": the model has no input '" << past
             << "' (give a graph input holding a layer's past)";
    if (!results.count(present))
      return emitError(f.getLoc())
             << parc::optionRef("pairs") << ": the model has no output '"
             << present
             << "' (give the graph output of that layer's present)";
    out.push_back({args[past], results[present]});
  }
  if (!pairs.empty())
    return out;
  for (unsigned i = 0; i < f.getNumResults(); ++i) {
    std::string past = pastByConvention(resultName(f, i));
    if (!past.empty() && args.count(past))
      out.push_back({args[past], i});
  }
  if (out.empty())
    return emitError(f.getLoc())
           << "no KV cache found: no output is named present.{i}.key/value "
              "or present_{i} with its past input (name the pairs with "
           << parc::optionRef("pairs", "past=present,...") << ")";
  return out;
}

LogicalResult NNKVCachePass::writeInto(FunctionOpInterface f, ConcatOp concat,
                                       Value cache, StringRef name,
                                       Value position) {
  const int64_t entries = concat.getType().getDimSize(concat.getAxis());
  if (capacity && entries != capacity)
    return emitError(f.getLoc())
           << "cache '" << name << "' holds " << entries << " entries, another "
           << capacity << ": every past needs the same length";
  capacity = entries;
  OpBuilder b(concat);
  auto write = KVCacheWriteOp::create(b, concat.getLoc(), concat.getType(),
                                      cache, concat.getInputs()[1], position,
                                      concat.getAxisAttr());
  concat.replaceAllUsesWith(write.getResult());
  concat.erase();
  return success();
}

LogicalResult NNKVCachePass::rewriteStacked(FunctionOpInterface f, Pair p,
                                            std::array<ConcatOp, 2> halves,
                                            Value position) {
  MLIRContext *ctx = f.getContext();
  for (unsigned h = 0; h < 2; ++h) {
    std::string name = (argName(f, p.arg) + (h ? ".value" : ".key")).str();
    SmallVector<NamedAttribute> attrs{
        NamedAttribute(StringAttr::get(ctx, "onnx.name"),
                       StringAttr::get(ctx, name)),
        NamedAttribute(StringAttr::get(ctx, kRole),
                       StringAttr::get(ctx, "cache"))};
    const unsigned at = f.getNumArguments();
    if (failed(f.insertArgument(at, halves[h].getType(),
                                DictionaryAttr::get(ctx, attrs), f.getLoc())) ||
        failed(writeInto(f, halves[h], f.getArgument(at), name, position)))
      return failure();
  }
  return success();
}

LogicalResult NNKVCachePass::rewritePair(FunctionOpInterface f, Pair p, Value position,
                                         llvm::BitVector &stale) {
  Operation *ret = f.getFunctionBody().front().getTerminator();
  BlockArgument past = f.getArgument(p.arg);
  Value present = ret->getOperand(p.result);
  if (ConcatOp concat = matchConcatForm(present, past)) {
    past.setType(concat.getType());
    f.setArgAttr(p.arg, kRole, StringAttr::get(f.getContext(), "cache"));
    return writeInto(f, concat, past, argName(f, p.arg), position);
  }
  if (auto halves = matchStackedForm(present, past)) {
    stale.set(p.arg);
    return rewriteStacked(f, p, *halves, position);
  }
  return emitError(f.getLoc())
         << "output '" << resultName(f, p.result)
         << "' is not a KV cache of past '" << argName(f, p.arg)
         << "': neither Concat(past, new) nor com.microsoft Attention's "
            "stacked [2, batch, heads, seq, head] key/value present";
}

Value NNKVCachePass::positionMask(OpBuilder &b, Location loc,
                                  RankedTensorType scores, Value position) {
  const int64_t queries = scores.getDimSize(2), keys = scores.getDimSize(3);
  auto relType = RankedTensorType::get({1, 1, queries, keys}, b.getI64Type());
  SmallVector<int64_t> rel;
  for (int64_t i = 0; i < queries; ++i)
    for (int64_t j = 0; j < keys; ++j)
      rel.push_back(j - i);
  Value relative = arith::ConstantOp::create(
      b, loc, DenseElementsAttr::get(relType, ArrayRef<int64_t>(rel)));
  auto boolType = RankedTensorType::get(relType.getShape(), b.getI1Type());
  Value future = GreaterOp::create(b, loc, boolType, relative, position);
  auto et = cast<FloatType>(scores.getElementType());
  auto scalar = RankedTensorType::get({1}, et);
  auto constant = [&](APFloat v) -> Value {
    return arith::ConstantOp::create(b, loc, DenseElementsAttr::get(scalar, v));
  };
  Value hidden = constant(APFloat::getInf(et.getFloatSemantics(), true));
  Value shown = constant(APFloat::getZero(et.getFloatSemantics()));
  return WhereOp::create(b, loc, RankedTensorType::get(relType.getShape(), et),
                         future, hidden, shown);
}

void NNKVCachePass::maskAttention(AttentionOp op, Value mask) {
  op.getMasksMutable().append(mask);
  Block &block = op.getScoreModBlock();
  BlockArgument arg = block.addArgument(mask.getType(), op.getLoc());
  auto yield = cast<YieldOp>(block.getTerminator());
  OpBuilder b(yield);
  Value sum = AddOp::create(b, op.getLoc(), yield.getValue().getType(),
                            yield.getValue(), arg);
  yield.getValueMutable().assign(sum);
}

void NNKVCachePass::tagInputs(FunctionOpInterface f) {
  for (unsigned i = 0; i < f.getNumArguments(); ++i) {
    if (f.getArgAttr(i, kRole))
      continue;
    StringRef name = argName(f, i);
    const char *role = name == "input_ids"        ? "tokens"
                       : name == "position_ids"   ? "positions"
                       : name == "attention_mask" ? "attention_mask"
                                                  : nullptr;
    if (role)
      f.setArgAttr(i, kRole, StringAttr::get(f.getContext(), role));
  }
}

/// Drops the presents from the results, and the stacked pasts (and what
/// only they fed: the split into halves) from the arguments.
LogicalResult NNKVCachePass::dropPresents(FunctionOpInterface f,
                                          const llvm::BitVector &presents,
                                          const llvm::BitVector &stale) {
  Operation *ret = f.getFunctionBody().front().getTerminator();
  ret->eraseOperands(presents);
  if (failed(f.eraseResults(presents)))
    return failure();
  Block &body = f.getFunctionBody().front();
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(body)))
    if (isOpTriviallyDead(&op))
      op.erase();
  llvm::BitVector erase(f.getNumArguments());
  for (unsigned i : stale.set_bits()) {
    if (!f.getArgument(i).use_empty())
      return emitError(f.getLoc())
             << "past '" << argName(f, i)
             << "' is read outside its attention: a stacked past must feed "
                "only its key and value halves";
    erase.set(i);
  }
  if (failed(f.eraseArguments(erase)))
    return failure();
  // The pasts were retyped to the caches' shapes.
  f.setType(FunctionType::get(f.getContext(), body.getArgumentTypes(),
                              f.getResultTypes()));
  return success();
}

void NNKVCachePass::runOnOperation() {
  FunctionOpInterface f = getOperation();
  // Callees and declarations hold no model inputs and outputs.
  if (!isGraphFunction(f))
    return;
  FailureOr<SmallVector<Pair>> found = findPairs(f);
  if (failed(found))
    return signalPassFailure();
  MLIRContext *ctx = f.getContext();
  auto posType = RankedTensorType::get({1}, IntegerType::get(ctx, 64));
  const unsigned posIndex = f.getNumArguments();
  SmallVector<NamedAttribute> attrs{
      NamedAttribute(StringAttr::get(ctx, "onnx.name"),
                     StringAttr::get(ctx, "cache_position")),
      NamedAttribute(StringAttr::get(ctx, kRole),
                     StringAttr::get(ctx, "position"))};
  if (failed(f.insertArgument(posIndex, posType,
                              DictionaryAttr::get(ctx, attrs), f.getLoc())))
    return signalPassFailure();
  Value position = f.getArgument(posIndex);
  llvm::BitVector presents(f.getNumResults()), stale(f.getNumArguments());
  capacity = 0;
  for (Pair p : *found) {
    if (failed(rewritePair(f, p, position, stale)))
      return signalPassFailure();
    presents.set(p.result);
  }
  if (failed(dropPresents(f, presents, stale)))
    return signalPassFailure();
  // Attentions reading a cache (one mask per score shape, shared).
  llvm::DenseMap<Type, Value> masks;
  int64_t masked = 0;
  f.walk([&](AttentionOp op) {
    if (!cacheUnder(op.getKey()) || !cacheUnder(op.getValue()))
      return;
    Value &mask = masks[op.getScoreType()];
    if (!mask) {
      OpBuilder b(op);
      mask = positionMask(b, op.getLoc(), op.getScoreType(), position);
    }
    maskAttention(op, mask);
    ++masked;
  });
  if (masked == 0) {
    emitError(f.getLoc(),
              "no fused attention reads the KV cache: the cache needs "
              "attention recognised by nn-fuse (Q·Kᵀ, softmax, ·V)");
    return signalPassFailure();
  }
  tagInputs(f);
  f->setAttr("parc.kv_max_seq",
             IntegerAttr::get(IntegerType::get(ctx, 64), capacity));
  LLVM_DEBUG(llvm::dbgs() << "nn-kv-cache: " << found->size() << " caches, "
                          << masked << " attentions masked\n");
}

} // namespace
