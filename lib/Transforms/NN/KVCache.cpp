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
// The model's own causal mask is kept: bound at the largest past, it allows
// a superset of what the position mask allows, so their sum is exact.
//
//===----------------------------------------------------------------------===//

#include "nn/NNOps.h"
#include "parc/Transforms/NN/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/Regex.h"

#define DEBUG_TYPE "nn-kv-cache"

namespace parc::nn {
#define GEN_PASS_DEF_NNKVCACHE
#include "parc/Transforms/NN/Passes.h.inc"
} // namespace parc::nn

using namespace mlir;
using namespace parc::nn;

namespace {

constexpr StringLiteral kRole = kKVRoleAttr;

StringRef argName(func::FuncOp f, unsigned i) {
  auto n = f.getArgAttrOfType<StringAttr>(i, "onnx.name");
  return n ? n.getValue() : StringRef();
}

StringRef resultName(func::FuncOp f, unsigned i) {
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

struct NNKVCachePass : parc::nn::impl::NNKVCacheBase<NNKVCachePass> {
  using Base::Base;

  FailureOr<SmallVector<Pair>> findPairs(func::FuncOp f);
  /// Sets `capacity` to the cache's entries (every cache has the same).
  LogicalResult rewritePair(func::FuncOp f, Pair p, Value position,
                            int64_t &capacity);
  /// key j, query i: -inf where j - i > position, else 0 ([1, 1, S, T]).
  Value positionMask(OpBuilder &b, Location loc, RankedTensorType scores,
                     Value position);
  void maskAttention(AttentionOp op, Value mask);
  void tagInputs(func::FuncOp f);
  void runOnOperation() override;
};

FailureOr<SmallVector<Pair>> NNKVCachePass::findPairs(func::FuncOp f) {
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
             << "--kv-cache: '" << spec
             << "' is not PAST=PRESENT (e.g. past_0=present_0)";
    if (!args.count(past))
      return emitError(f.getLoc())
             << "--kv-cache: the model has no input '" << past
             << "' (give a graph input holding a layer's past)";
    if (!results.count(present))
      return emitError(f.getLoc())
             << "--kv-cache: the model has no output '" << present
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
    return emitError(f.getLoc(),
                     "no KV cache found: no output is named present.{i}.key/"
                     "value or present_{i} with its past input (name the "
                     "pairs with --kv-cache past=present,...)");
  return out;
}

LogicalResult NNKVCachePass::rewritePair(func::FuncOp f, Pair p, Value position,
                                         int64_t &capacity) {
  auto ret = cast<func::ReturnOp>(f.getBody().front().getTerminator());
  BlockArgument past = f.getArgument(p.arg);
  auto concat = ret.getOperand(p.result).getDefiningOp<ConcatOp>();
  if (!concat || concat.getInputs().size() != 2 ||
      concat.getInputs()[0] != past)
    return emitError(f.getLoc())
           << "output '" << resultName(f, p.result) << "' is not Concat(past '"
           << argName(f, p.arg)
           << "', new): only the concat form of the cache is "
              "supported (not com.microsoft Attention with past)";
  const int64_t entries = concat.getType().getDimSize(concat.getAxis());
  if (capacity && entries != capacity)
    return emitError(f.getLoc()) << "cache '" << argName(f, p.arg) << "' holds "
                                 << entries << " entries, another " << capacity
                                 << ": every past needs the same length";
  capacity = entries;
  past.setType(concat.getType());
  f.setArgAttr(p.arg, kRole, StringAttr::get(f.getContext(), "cache"));
  OpBuilder b(concat);
  auto write = KVCacheWriteOp::create(b, concat.getLoc(), concat.getType(),
                                      past, concat.getInputs()[1], position,
                                      concat.getAxisAttr());
  concat.replaceAllUsesWith(write.getResult());
  concat.erase();
  return success();
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

void NNKVCachePass::tagInputs(func::FuncOp f) {
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

void NNKVCachePass::runOnOperation() {
  func::FuncOp f = getOperation();
  if (f.getSymName() != "main" || f.isExternal())
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
  llvm::BitVector presents(f.getNumResults());
  int64_t capacity = 0;
  for (Pair p : *found) {
    if (failed(rewritePair(f, p, position, capacity)))
      return signalPassFailure();
    presents.set(p.result);
  }
  auto ret = cast<func::ReturnOp>(f.getBody().front().getTerminator());
  ret->eraseOperands(presents);
  if (failed(f.eraseResults(presents)))
    return signalPassFailure();
  // The pasts were retyped to the caches' shapes.
  f.setFunctionType(FunctionType::get(ctx, f.getBody().getArgumentTypes(),
                                      f.getResultTypes()));
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
