//===- Regions.cpp - Megatron regions and sharding helpers ------*- C++ -*-===//
//
// Megatron's rule, found rather than hand-written: a row-parallel linear
// consumes, through ops that keep one dimension split (heads in attention,
// features in activations), the outputs of column-parallel linears. Such a
// region needs exactly one reduction, after the row product. dist-annotate
// discovers regions backwards from each linear; dist-propagate verifies
// them forwards by giving every value its split dimension. Both ask each
// op's sharding rule (dist's ShardingRuleOpInterface, nn/ShardingRules.cpp);
// anything that does not fit a rule keeps the whole region replicated,
// which is always correct.
//
//===----------------------------------------------------------------------===//

#include "Regions.h"
#include "Padding.h"
#include "nn/NodeLocation.h"
#include "parc/Support/OptionRef.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "dist-regions"

using namespace mlir;
namespace nn = parc::nn;
namespace dist = parc::dist;
using parc::optionRef;

Value dist::recast(OpBuilder &b, Value weight, Value source) {
  SmallVector<nn::CastOp> casts;
  for (Value v = weight; v != nn::weightSource(weight);) {
    auto cast = v.getDefiningOp<nn::CastOp>();
    casts.push_back(cast);
    v = cast.getInput();
  }
  Value v = source;
  for (nn::CastOp cast : llvm::reverse(casts))
    v = nn::CastOp::create(
        b, cast.getLoc(),
        RankedTensorType::get(tensorOf(v).getShape(),
                              cast.getType().getElementType()),
        v);
  return v;
}

// A cast weight is cut in its stored dtype and cast per use, not at load:
// the shard and the resident weights keep bf16/f16 (half the bytes of f32),
// and the f32 copy is one transient arena buffer per forward, the price of
// one elementwise pass over the rank's part.
Value dist::localPart(OpBuilder &b, Location loc, Value v, ShardingAttr s) {
  auto type = tensorOf(v);
  auto mesh = SymbolTable::lookupNearestSymbolFrom<MeshOp>(
      b.getInsertionBlock()->getParentOp(), s.getMesh());
  // Where the sharding does not fit, the op keeps the global type and its
  // verifier says why.
  FailureOr<SmallVector<int64_t>> shape =
      mesh ? s.getLocalShape(type.getShape(), mesh, 0)
           : FailureOr<SmallVector<int64_t>>(failure());
  return LocalPartOp::create(
      b, loc,
      succeeded(shape) ? RankedTensorType::get(*shape, type.getElementType())
                       : type,
      v, s);
}

Value dist::cutWeight(OpBuilder &b, Location loc, Value weight,
                      ShardingAttr s) {
  return recast(b, weight, localPart(b, loc, nn::weightSource(weight), s));
}

std::string dist::nodeOf(Operation *op) { return nn::describeNode(op); }

LogicalResult dist::stackedSignature(FunctionOpInterface main, int64_t m,
                                     SmallVectorImpl<Type> &argTypes,
                                     SmallVectorImpl<Type> &resultTypes) {
  auto stacked = [&](Type type, int64_t dim) -> FailureOr<Type> {
    auto t = dyn_cast<RankedTensorType>(type);
    if (!t || t.getRank() <= dim)
      return failure();
    SmallVector<int64_t> shape(t.getShape());
    shape[dim] *= m;
    return Type(RankedTensorType::get(shape, t.getElementType()));
  };
  auto named = [](StringAttr name, unsigned k) {
    return name ? "'" + name.str() + "'" : std::to_string(k);
  };
  for (unsigned k = 0; k < main.getNumArguments(); ++k) {
    FailureOr<Type> t = stacked(main.getArgumentTypes()[k], nn::batchDim(main, k));
    if (failed(t))
      return emitError(main.getLoc())
             << "input " << named(main.getArgAttrOfType<StringAttr>(k, "onnx.name"), k)
             << " is a scalar: " << optionRef("micro-batches")
             << " splits dim 0 of every input";
    argTypes.push_back(*t);
  }
  for (unsigned k = 0; k < main.getNumResults(); ++k) {
    FailureOr<Type> t =
        stacked(main.getResultTypes()[k], nn::batchDim(main, k, /*result=*/true));
    if (failed(t))
      return emitError(main.getLoc())
             << "output "
             << named(main.getResultAttrOfType<StringAttr>(k, "onnx.name"), k)
             << " is a scalar: " << optionRef("micro-batches")
             << " stacks micro-batches on dim 0 of every output";
    resultTypes.push_back(*t);
  }
  return success();
}

FunctionOpInterface dist::replacementOf(OpBuilder &b, FunctionOpInterface main,
                                        StringRef name, TypeRange argTypes,
                                        TypeRange resultTypes) {
  b.setInsertionPoint(main);
  // A copy keeps the op's kind and every attribute (argument and result
  // attributes too): only the name, the type and the body are new.
  auto fn = cast<FunctionOpInterface>(b.insert(main->cloneWithoutRegions()));
  fn.setName(name);
  fn.setType(b.getFunctionType(argTypes, resultTypes));
  Block *entry = fn.addEntryBlock();
  // The arguments keep their graph inputs' locations.
  for (auto [arg, old] : llvm::zip(entry->getArguments(),
                                   main.getFunctionBody().getArguments()))
    arg.setLoc(old.getLoc());
  b.setInsertionPointToEnd(entry);
  return fn;
}

static FlatSymbolRefAttr meshRef(MLIRContext *ctx) {
  return FlatSymbolRefAttr::get(ctx, dist::kMeshName);
}

dist::ShardingAttr dist::replicatedSharding(MLIRContext *ctx) {
  return ShardingAttr::get(meshRef(ctx), ArrayRef<SmallVector<StringRef>>{});
}

dist::ShardingAttr dist::splitSharding(MLIRContext *ctx, int64_t dim,
                                       ArrayRef<int64_t> blocks,
                                       int64_t replicas) {
  SmallVector<SmallVector<StringRef>> axes(dim + 1);
  axes[dim].push_back(kAxis);
  SmallVector<SmallVector<int64_t>> dimBlocks;
  if (!blocks.empty()) {
    dimBlocks.resize(dim + 1);
    dimBlocks[dim].assign(blocks.begin(), blocks.end());
  }
  SmallVector<int64_t> dimReplicas;
  if (replicas != 1) {
    dimReplicas.assign(dim + 1, 1);
    dimReplicas[dim] = replicas;
  }
  return ShardingAttr::get(meshRef(ctx), axes, {}, ReductionKind::sum, {},
                           dimBlocks, dimReplicas);
}

dist::ShardingAttr dist::partialSharding(MLIRContext *ctx) {
  return ShardingAttr::get(meshRef(ctx), ArrayRef<SmallVector<StringRef>>{},
                           {kAxis});
}

std::optional<int64_t> dist::splitDimOf(ShardingAttr s) {
  if (!s)
    return std::nullopt;
  for (int64_t d = 0, e = s.getSplitAxes().size(); d < e; ++d)
    if (llvm::is_contained(s.getSplitAxes(d), kAxis))
      return d;
  return std::nullopt;
}

/// The function whose argument `v` is, if any.
static FunctionOpInterface argumentOwner(Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  return arg ? dyn_cast<FunctionOpInterface>(arg.getOwner()->getParentOp())
             : FunctionOpInterface();
}

dist::ShardingAttr dist::shardingOf(Value v) {
  Operation *def = v.getDefiningOp();
  if (FunctionOpInterface fn = def ? FunctionOpInterface() : argumentOwner(v))
    return fn.getArgAttrOfType<ShardingAttr>(
        cast<BlockArgument>(v).getArgNumber(), kArgSharding);
  if (!def)
    return {};
  if (auto shard = dyn_cast<ShardOp>(def))
    return shard.getSharding();
  auto all = def->getAttrOfType<ArrayAttr>(kResultShardings);
  if (!all)
    return {};
  auto s = cast<ShardingAttr>(all[cast<OpResult>(v).getResultNumber()]);
  return s.isReplicated() ? ShardingAttr() : s;
}

void dist::setSharding(Value v, ShardingAttr s) {
  Operation *def = v.getDefiningOp();
  MLIRContext *ctx = v.getContext();
  if (!def) {
    // Only a KV cache is split where it enters (the planner admits no other
    // argument into a region).
    assert(nn::isKVCache(v) && "only a KV cache argument takes a sharding");
    argumentOwner(v).setArgAttr(cast<BlockArgument>(v).getArgNumber(),
                                kArgSharding, s);
    return;
  }
  SmallVector<Attribute> all(def->getNumResults(), replicatedSharding(ctx));
  if (auto old = def->getAttrOfType<ArrayAttr>(kResultShardings))
    all.assign(old.begin(), old.end());
  all[cast<OpResult>(v).getResultNumber()] = s ? s : replicatedSharding(ctx);
  def->setAttr(kResultShardings, ArrayAttr::get(ctx, all));
}

std::string dist::sequenceMisfit(int64_t length, int64_t dim, int64_t tp) {
  std::string works;
  llvm::raw_string_ostream os(works);
  for (int64_t d = 2; d <= length; ++d)
    if (length % d == 0)
      os << (works.empty() ? "" : ", ") << d;
  return (optionRef("sp") + " splits the sequence (dim " + Twine(dim) +
          " of size " + Twine(length) + ") over " + optionRef("tp", tp) +
          ", which does not divide it (" + optionRef("tp") +
          " values that would: " +
          (works.empty() ? std::string("none") : works) + ")")
      .str();
}

bool dist::isOutputHead(nn::LinearOp lin, int64_t tp) {
  // Only returned, possibly through the slice that drops padded features
  // and the cast of nn-convert-dtype.
  Operation *user = lin->hasOneUse() ? *lin->getUsers().begin() : nullptr;
  if (user && isa<nn::SliceOp>(user) && user->hasOneUse())
    user = *user->getUsers().begin();
  if (user && isa<nn::CastOp>(user) && user->hasOneUse())
    user = *user->getUsers().begin();
  return isa_and_nonnull<func::ReturnOp>(user) &&
         nn::isWeight(lin.getWeight()) &&
         (!lin.getBias() || nn::isWeight(lin.getBias())) &&
         lin.getType().getShape().back() % tp == 0;
}

std::string dist::describeSharding(ShardingAttr s) {
  if (!s || s.isReplicated())
    return "replicated";
  if (s.isPartial())
    return "partial sums";
  return "split on dim " + std::to_string(*splitDimOf(s));
}

std::string dist::describeReshard(ShardingAttr from, ShardingAttr to) {
  bool fromPartial = from && from.isPartial();
  std::optional<int64_t> a = splitDimOf(from), b = splitDimOf(to);
  if (fromPartial)
    return b ? "reduce-scatter along dim " + std::to_string(*b) : "all-reduce";
  if (a && b)
    return *a == *b ? "" : "all-to-all from dim " + std::to_string(*a) +
                               " to dim " + std::to_string(*b);
  if (a)
    return "all-gather along dim " + std::to_string(*a);
  if (b)
    return "local slice along dim " + std::to_string(*b) + " (no communication)";
  return "";
}

nn::GatherOp dist::vocabularyEmbedding(FunctionOpInterface main, int64_t tp) {
  nn::GatherOp best;
  main.walk([&](nn::GatherOp g) {
    auto table = tensorOf(g.getData());
    if (g.getAxis() != 0 || table.getRank() != 2 ||
        !nn::isWeight(g.getData()) || !isa<BlockArgument>(g.getIndices()) ||
        !isa<FloatType>(table.getElementType()))
      return;
    if (!best || table.getDimSize(0) > tensorOf(best.getData()).getDimSize(0))
      best = g;
  });
  if (best && tensorOf(best.getData()).getDimSize(0) % tp &&
      !canPadWeight(best.getData()))
    return {};
  return best;
}

int64_t dist::meshSize(ModuleOp module) {
  auto mesh = module.lookupSymbol<MeshOp>(kMeshName);
  return mesh ? mesh.getNumRanks() : 1;
}

LogicalResult dist::Planner::reject(Operation *op, const Twine &why) {
  if (explain)
    op->emitRemark() << nodeOf(op) << " stays replicated under tensor "
                     << "parallelism: " << why;
  LLVM_DEBUG(llvm::dbgs() << "dist: region at " << op->getLoc()
                          << " stays replicated: " << why << "\n");
  return failure();
}

LogicalResult dist::Planner::reportMisfits(StringRef hint) {
  for (auto &[op, why] : misfits) {
    InFlightDiagnostic diag = op->emitError()
                              << nodeOf(op) << ": " << optionRef("tp", tp)
                              << " does not fit this model: " << why;
    if (!hint.empty())
      diag.attachNote() << hint;
  }
  return success(misfits.empty());
}

std::string dist::fittingTpHint(FunctionOpInterface main, bool sp) {
  constexpr int64_t kMaxTp = 64;
  std::string fits;
  llvm::raw_string_ostream os(fits);
  for (int64_t t = 2; t <= kMaxTp; ++t) {
    // Planning touches no IR: each candidate is a dry run of the rules.
    Planner planner(t, /*explain=*/false);
    bool ok = true;
    main.walk([&](nn::LinearOp row) {
      // An MLP takes zero features, an attention zero heads, up to any tp
      // (Padding.cpp).
      bool padded = isPaddableMlp(row) || isPaddableAttention(row);
      FailureOr<dist::Region> r =
          padded ? FailureOr<dist::Region>(failure()) : planner.discover(row);
      if (succeeded(r))
        (void)planner.propagate(*r);
      if (ok && sp && (padded || succeeded(r))) {
        int64_t d = sequenceDim(row.getType());
        ok = d < 0 || row.getType().getDimSize(d) % t == 0;
      }
    });
    if (sp)
      main.walk([&](Operation *op) {
        if (isa<nn::LayerNormOp, nn::RmsNormOp>(op)) {
          auto x = tensorOf(op->getOperand(0));
          int64_t d = sequenceDim(x);
          ok &= d < 0 || x.getDimSize(d) % t == 0;
        }
      });
    if (ok && planner.misfits.empty())
      os << (fits.empty() ? "" : ", ") << t;
  }
  if (fits.empty())
    return ("no " + optionRef("tp") + " from 2 to " + Twine(kMaxTp) +
            " fits every region of this model; " + optionRef("tp", 1) +
            " runs it whole")
        .str();
  return optionRef("tp") + " values that fit every region of this model: " +
         fits;
}

FailureOr<dist::Region> dist::Planner::discover(nn::LinearOp row) {
  dist::Region r;
  r.row = row;
  if (failed(collect(r)) || failed(planKeyValueParts(r)))
    return failure();
  for (nn::LinearOp col : r.columns) {
    if (!nn::isWeight(col.getWeight()) ||
        (col.getBias() && !nn::isWeight(col.getBias())))
      return reject(col, "column weights must be constants");
    auto t = col.getType();
    int64_t n = r.partsOf(col.getResult(), tp);
    if (t.getShape().back() % n)
      return misfit(col, "its " + Twine(t.getShape().back()) +
                             " output features do not divide by " +
                             optionRef("tp", tp) +
                             (n == tp ? " (use a tp that divides " +
                                            Twine(t.getShape().back()) + ")"
                                      : Twine()));
  }
  return r;
}

LogicalResult dist::Planner::collect(dist::Region &r) {
  // Backwards from the row's input, split on the features it reduces: each
  // op's rule names the operands that carry the split its result needs.
  Value input = r.row.getInput();
  SmallVector<std::pair<Value, int64_t>> work{
      {input, tensorOf(input).getRank() - 1}};
  llvm::DenseSet<Value> seen;
  while (!work.empty()) {
    auto [v, dim] = work.pop_back_val();
    if (!seen.insert(v).second)
      continue;
    Operation *def = v.getDefiningOp();
    // A linear reading a graph input, a norm or an embedding directly is
    // simply no row-parallel candidate: nothing to explain.
    if (!def && v == input)
      return failure();
    // A KV cache is state the region writes and reads: it is split with the
    // heads it holds, in place.
    if (!def && nn::isKVCache(v)) {
      r.caches[v] = dim;
      continue;
    }
    if (!def)
      return reject(r.row, "it reads a graph input without a column linear");
    if (auto lin = dyn_cast<nn::LinearOp>(def)) {
      r.columns.insert(lin);
      continue;
    }
    auto rule = dyn_cast<ShardingRuleOpInterface>(def);
    if (!rule)
      return v == input ? failure()
                        : reject(def, "'" + def->getName().getStringRef() +
                                          "' has no tensor-parallel rule");
    SplitRule back =
        rule.inferOperandSplits(cast<OpResult>(v).getResultNumber(), dim);
    SmallVector<std::pair<Value, int64_t>> carriers;
    for (unsigned i : rule.getSplitOperands())
      if (back.ok() && back.splits[i])
        carriers.push_back({def->getOperand(i), back.splits[i]->dim});
    // Where the split would come only from constants (an embedding, the
    // scale of a norm written out), or the row reads a norm, there is no
    // region to explain.
    bool boundary =
        back.ok() || (v == input && isa<nn::LayerNormOp, nn::RmsNormOp>(def));
    if (carriers.empty())
      return boundary ? failure() : reject(def, back.why);
    r.ops.insert(def);
    work.append(carriers);
  }
  if (r.columns.empty())
    return reject(r.row, "no column linear feeds it");
  return success();
}

LogicalResult dist::Planner::planKeyValueParts(dist::Region &r) {
  for (Operation *op : r.ops) {
    auto att = dyn_cast<nn::AttentionOp>(op);
    if (!att)
      continue;
    int64_t heads = tensorOf(att.getQuery()).getDimSize(1);
    int64_t kvHeads = tensorOf(att.getKey()).getDimSize(1);
    // Heads that tp does not divide misfit where they are split (the
    // reshape), which names them; only fewer key/value heads need parts.
    if (kvHeads % tp == 0 || heads % tp)
      continue;
    if (tp % kvHeads)
      return misfit(op, "its " + Twine(kvHeads) + " key/value heads neither "
                        "divide by nor divide " + optionRef("tp", tp));
    // Walk back from key and value to their columns.
    SmallVector<Value> work{att.getKey(), att.getValue()};
    while (!work.empty()) {
      Value v = work.pop_back_val();
      r.parts[v] = kvHeads;
      Operation *def = v.getDefiningOp();
      if (auto col = dyn_cast_or_null<nn::LinearOp>(def); col && r.columns.contains(col))
        continue;
      if (r.caches.contains(v))
        continue;
      if (!def || !r.ops.contains(def))
        return reject(op, "its key/value do not come from column linears");
      for (unsigned i : cast<ShardingRuleOpInterface>(def).getSplitOperands())
        work.push_back(def->getOperand(i));
    }
  }
  return success();
}

SmallVector<std::optional<dist::DimSplit>>
dist::Planner::operandSplits(dist::Region &r, Operation *op) {
  SmallVector<std::optional<DimSplit>> in;
  for (Value v : op->getOperands()) {
    auto it = r.split.find(v);
    in.push_back(it == r.split.end()
                     ? std::nullopt
                     : std::optional(DimSplit{it->second, r.partsOf(v, tp)}));
  }
  return in;
}

LogicalResult dist::Planner::apply(dist::Region &r, Operation *op) {
  SplitRule fwd =
      cast<ShardingRuleOpInterface>(op).propagateSplit(operandSplits(r, op));
  if (fwd.status == SplitRule::Status::Misfit)
    return misfit(op, fwd.why);
  if (!fwd.ok())
    return reject(op, fwd.why);
  // Only the row linear completes partial sums.
  if (fwd.partial)
    return reject(op, "it reduces along the split dim");
  if (fwd.blockwise) {
    // Only a column output can be split blockwise: its weight is cut per
    // block so that each rank holds its part of every piece.
    auto col = op->getOperand(0).getDefiningOp<nn::LinearOp>();
    if (!col || !r.columns.contains(col))
      return reject(op, "it splits the split dim of a computed value");
    SmallVector<int64_t> sizes;
    for (auto [res, s] : llvm::zip(op->getResults(), fwd.splits))
      sizes.push_back(tensorOf(res).getDimSize(s->dim));
    r.blocks[col] = sizes;
  }
  for (auto [i, d] : fwd.cuts)
    r.sideParts.push_back({&op->getOpOperand(i), d});
  for (auto [res, s] : llvm::zip(op->getResults(), fwd.splits)) {
    if (!s)
      continue;
    r.split[res] = s->dim;
    if (s->parts != tp)
      r.parts[res] = s->parts;
  }
  return success();
}

/// Why `user`, outside the region, keeps it replicated: its rule's
/// refusal of the split it reads, or that it reads the region at all.
std::string dist::Planner::outsideReader(dist::Region &r, Operation *user) {
  auto rule = dyn_cast<ShardingRuleOpInterface>(user);
  if (rule) {
    SplitRule fwd = rule.propagateSplit(operandSplits(r, user));
    if (!fwd.ok())
      return fwd.why;
    if (fwd.partial)
      return "it reduces along the split dim";
  }
  return "it reads a value of the region from outside";
}

LogicalResult dist::Planner::propagate(dist::Region &r) {
  for (nn::LinearOp col : r.columns)
    r.split[col.getResult()] = col.getType().getRank() - 1;
  for (auto [cache, dim] : r.caches)
    r.split[cache] = dim;
  // Program order: every operand is placed before its user.
  SmallVector<Operation *> ordered(r.ops.begin(), r.ops.end());
  llvm::sort(ordered, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  for (Operation *op : ordered)
    if (failed(apply(r, op)))
      return failure();
  // The row linear's rule must turn its input's split into partial sums.
  Value input = r.row.getInput();
  auto it = r.split.find(input);
  if (it == r.split.end())
    return reject(r.row, "its input is not split on the features it reduces");
  SmallVector<std::optional<DimSplit>> in = operandSplits(r, r.row);
  SplitRule row = cast<ShardingRuleOpInterface>(*r.row).propagateSplit(in);
  if (row.ok() && !row.partial)
    return reject(r.row, "its input is not split on the features it reduces");
  if (!row.ok())
    return reject(r.row, "row weights must be constants");
  if (in[0]->parts != tp)
    return reject(r.row, "its input is split into fewer parts than ranks");
  // Nothing computed in the region may be read outside it.
  for (auto &[value, dim] : r.split)
    for (Operation *user : value.getUsers())
      if (user != r.row && !r.ops.contains(user))
        return reject(user, outsideReader(r, user));
  return success();
}
