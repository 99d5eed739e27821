//===- Regions.cpp - Megatron regions and sharding helpers ------*- C++ -*-===//
//
// Megatron's rule, found rather than hand-written: a row-parallel linear
// consumes, through ops that keep one dimension split (heads in attention,
// features in activations), the outputs of column-parallel linears. Such a
// region needs exactly one reduction, after the row product. dist-annotate
// discovers regions backwards from each linear; dist-propagate verifies
// them forwards by giving every value its split dimension; anything that
// does not fit a rule keeps the whole region replicated, which is always
// correct.
//
//===----------------------------------------------------------------------===//

#include "Regions.h"
#include "Padding.h"
#include "nn/NodeLocation.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "dist-regions"

using namespace mlir;
namespace nn = parc::nn;
namespace dist = parc::dist;

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
Value dist::cutWeight(OpBuilder &b, Location loc, Value weight, int64_t dim,
                      int64_t parts, StringRef axis, DenseI64ArrayAttr blocks,
                      IntegerAttr replicas) {
  Value source = nn::weightSource(weight);
  auto type = tensorOf(source);
  SmallVector<int64_t> shape(type.getShape());
  shape[dim] /= parts;
  Value part = dist::LocalPartOp::create(
      b, loc, RankedTensorType::get(shape, type.getElementType()), source,
      b.getI64IntegerAttr(dim), b.getI64IntegerAttr(parts),
      b.getStringAttr(axis), blocks, replicas);
  return recast(b, weight, part);
}

std::string dist::nodeOf(Operation *op) { return nn::describeNode(op); }

static int64_t numElements(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t ? t.getNumElements() : 0;
}

LogicalResult dist::stackedSignature(func::FuncOp main, int64_t m,
                                     SmallVectorImpl<Type> &argTypes,
                                     SmallVectorImpl<Type> &resultTypes) {
  auto stacked = [&](Type type) -> FailureOr<Type> {
    auto t = dyn_cast<RankedTensorType>(type);
    if (!t || t.getRank() == 0)
      return failure();
    SmallVector<int64_t> shape(t.getShape());
    shape[0] *= m;
    return Type(RankedTensorType::get(shape, t.getElementType()));
  };
  auto named = [](StringAttr name, unsigned k) {
    return name ? "'" + name.str() + "'" : std::to_string(k);
  };
  for (unsigned k = 0; k < main.getNumArguments(); ++k) {
    FailureOr<Type> t = stacked(main.getArgumentTypes()[k]);
    if (failed(t))
      return emitError(main.getLoc())
             << "input " << named(main.getArgAttrOfType<StringAttr>(k, "onnx.name"), k)
             << " is a scalar: --micro-batches splits dim 0 of every input";
    argTypes.push_back(*t);
  }
  for (unsigned k = 0; k < main.getNumResults(); ++k) {
    FailureOr<Type> t = stacked(main.getResultTypes()[k]);
    if (failed(t))
      return emitError(main.getLoc())
             << "output "
             << named(main.getResultAttrOfType<StringAttr>(k, "onnx.name"), k)
             << " is a scalar: --micro-batches stacks micro-batches on dim 0 "
                "of every output";
    resultTypes.push_back(*t);
  }
  return success();
}

func::FuncOp dist::replacementOf(OpBuilder &b, func::FuncOp main,
                                 StringRef name, TypeRange argTypes,
                                 TypeRange resultTypes) {
  b.setInsertionPoint(main);
  auto fn = func::FuncOp::create(b, main.getLoc(), name,
                                 b.getFunctionType(argTypes, resultTypes));
  if (ArrayAttr a = main.getAllArgAttrs())
    fn.setAllArgAttrs(a);
  if (ArrayAttr a = main.getAllResultAttrs())
    fn.setAllResultAttrs(a);
  for (NamedAttribute attr : main->getDiscardableAttrs())
    fn->setAttr(attr.getName(), attr.getValue());
  Block *entry = fn.addEntryBlock();
  // The arguments keep their graph inputs' locations.
  for (auto [arg, old] : llvm::zip(entry->getArguments(),
                                   main.getBody().front().getArguments()))
    arg.setLoc(old.getLoc());
  b.setInsertionPointToEnd(entry);
  return fn;
}

int64_t dist::flopsOf(Operation *op) {
  auto dim = [](Value v, int64_t i) {
    auto t = cast<RankedTensorType>(v.getType());
    return t.getDimSize(i < 0 ? t.getRank() + i : i);
  };
  if (auto lin = dyn_cast<nn::LinearOp>(op))
    return 2 * numElements(lin.getResult()) * dim(lin.getInput(), -1);
  if (isa<nn::MatMulOp, nn::GemmOp>(op)) {
    Value lhs = op->getOperand(0);
    auto t = cast<RankedTensorType>(lhs.getType());
    int64_t k =
        t.getRank() == 1 ? t.getDimSize(0) : t.getDimSize(t.getRank() - 1);
    if (auto gemm = dyn_cast<nn::GemmOp>(op); gemm && gemm.getTransA())
      k = t.getDimSize(0);
    return 2 * numElements(op->getResult(0)) * k;
  }
  if (auto att = dyn_cast<nn::AttentionOp>(op)) {
    auto q = cast<RankedTensorType>(att.getQuery().getType());
    int64_t t = dim(att.getKey(), 2);
    return 4 * q.getNumElements() * t;
  }
  if (auto experts = dyn_cast<nn::MoeExpertsOp>(op)) {
    // The static bound: every received row through one expert's two (or,
    // gated, three) [H, F] products.
    auto fc1 = cast<RankedTensorType>(experts.getFc1().getType());
    int64_t products = experts.getFc3() ? 3 : 2;
    return 2 * products * dim(experts.getRows(), 0) * fc1.getDimSize(1) *
           fc1.getDimSize(2);
  }
  if (auto conv = dyn_cast<nn::ConvOp>(op)) {
    auto w = cast<RankedTensorType>(conv->getOperand(1).getType());
    return 2 * numElements(conv->getResult(0)) *
           (w.getNumElements() / w.getDimSize(0));
  }
  int64_t n = 0;
  for (Value r : op->getResults())
    n += numElements(r);
  return std::max<int64_t>(n, 1);
}

static FlatSymbolRefAttr meshRef(MLIRContext *ctx) {
  return FlatSymbolRefAttr::get(ctx, dist::kMeshName);
}

dist::ShardingAttr dist::replicatedSharding(MLIRContext *ctx) {
  return ShardingAttr::get(meshRef(ctx), ArrayRef<SmallVector<StringRef>>{});
}

dist::ShardingAttr dist::splitSharding(MLIRContext *ctx, int64_t dim) {
  SmallVector<SmallVector<StringRef>> axes(dim + 1);
  axes[dim].push_back(kAxis);
  return ShardingAttr::get(meshRef(ctx), axes);
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

dist::ShardingAttr dist::shardingOf(Value v) {
  Operation *def = v.getDefiningOp();
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
  return (Twine("--sp splits the sequence (dim ") + Twine(dim) + " of size " +
          Twine(length) + ") over --tp " + Twine(tp) +
          ", which does not divide it (--tp values that would: " +
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

int64_t dist::partsOf(Value v, int64_t tp) {
  auto res = dyn_cast<OpResult>(v);
  if (!res)
    return tp;
  auto parts = res.getOwner()->getAttrOfType<DenseI64ArrayAttr>(kPartsAttr);
  if (!parts || parts.size() <= res.getResultNumber())
    return tp;
  return parts[res.getResultNumber()];
}

nn::GatherOp dist::vocabularyEmbedding(func::FuncOp main, int64_t tp) {
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
  if (best && tensorOf(best.getData()).getDimSize(0) % tp)
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
                              << nodeOf(op) << ": --tp " << tp
                              << " does not fit this model: " << why;
    if (!hint.empty())
      diag.attachNote() << hint;
  }
  return success(misfits.empty());
}

std::string dist::fittingTpHint(func::FuncOp main, bool sp) {
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
    return ("no --tp from 2 to " + Twine(kMaxTp) +
            " fits every region of this model; --tp 1 runs it whole")
        .str();
  return "--tp values that fit every region of this model: " + fits;
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
                             " output features do not divide by --tp " +
                             Twine(tp) +
                             (n == tp ? " (use a tp that divides " +
                                            Twine(t.getShape().back()) + ")"
                                      : Twine()));
  }
  return r;
}

/// nn.reduce_* over `axes` (keepdims defaults to true).
static bool isReduction(Operation *op) {
  return isa<nn::ReduceSumOp, nn::ReduceMeanOp, nn::ReduceMaxOp,
             nn::ReduceMinOp, nn::ReduceProdOp>(op);
}

SmallVector<unsigned> dist::regionOperands(Operation *op) {
  if (isa<nn::AttentionOp>(op))
    return {0, 1, 2};
  if (isa<nn::ConcatOp>(op))
    return llvm::to_vector(llvm::seq<unsigned>(0, op->getNumOperands()));
  if (isa<nn::RotaryOp, nn::ReshapeOp, nn::TransposeOp, nn::SplitOp,
          nn::SliceOp, nn::CastOp, nn::SoftmaxOp>(op) || isReduction(op) ||
      (op->hasTrait<OpTrait::Elementwise>() && op->getNumOperands() == 1))
    return {0};
  if (isa<nn::AddOp, nn::SubOp, nn::MulOp, nn::DivOp, nn::WhereOp>(op)) {
    SmallVector<unsigned> idx;
    for (unsigned i = 0; i < op->getNumOperands(); ++i)
      if (!nn::isWeight(op->getOperand(i)))
        idx.push_back(i);
    return idx;
  }
  return {};
}

LogicalResult dist::Planner::collect(dist::Region &r) {
  SmallVector<Value> work{r.row.getInput()};
  llvm::DenseSet<Value> seen;
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (!seen.insert(v).second)
      continue;
    Operation *def = v.getDefiningOp();
    if (!def && v == r.row.getInput())
      return failure(); // a linear on a graph input is no row candidate
    if (!def)
      return reject(r.row, "it reads a graph input without a column linear");
    if (auto lin = dyn_cast<nn::LinearOp>(def)) {
      r.columns.insert(lin);
      continue;
    }
    SmallVector<unsigned> operands = regionOperands(def);
    if (operands.empty()) {
      // A linear reading a norm or an embedding directly is simply no
      // row-parallel candidate: nothing to explain.
      if (v == r.row.getInput())
        return failure();
      return reject(def, "'" + def->getName().getStringRef() +
                             "' has no tensor-parallel rule");
    }
    r.ops.insert(def);
    for (unsigned i : operands)
      work.push_back(def->getOperand(i));
  }
  if (r.columns.empty())
    return reject(r.row, "no column linear feeds it");
  return success();
}

std::optional<int64_t> dist::Planner::reshapeDim(ArrayRef<int64_t> in,
                                           ArrayRef<int64_t> out, int64_t d,
                                           int64_t parts) {
  // A split of dim d keeps the elements of each prefix index together in
  // equal chunks; it survives where the output has the same prefix size and
  // a dim that the number of parts divides.
  if (in[d] % parts)
    return std::nullopt;
  int64_t prefix = 1;
  for (int64_t i = 0; i < d; ++i)
    prefix *= in[i];
  int64_t outPrefix = 1;
  for (size_t j = 0; j < out.size(); ++j) {
    if (outPrefix == prefix && out[j] % parts == 0)
      return j;
    outPrefix *= out[j];
  }
  return std::nullopt;
}

LogicalResult dist::Planner::elementwise(dist::Region &r, Operation *op) {
  auto out = tensorOf(op->getResult(0));
  std::optional<int64_t> dim;
  for (Value v : op->getOperands()) {
    auto it = r.split.find(v);
    if (it == r.split.end())
      continue;
    int64_t d = it->second + (out.getRank() - tensorOf(v).getRank());
    if (dim && *dim != d)
      return reject(op, "its operands are split on different dims");
    if (r.partsOf(v, tp) != r.partsOf(op->getOperand(0), tp) &&
        r.split.count(op->getOperand(0)))
      return reject(op, "its operands are split into different numbers of parts");
    dim = d;
  }
  if (!dim)
    return reject(op, "no operand carries the split");
  for (OpOperand &operand : op->getOpOperands()) {
    if (r.split.count(operand.get()))
      continue;
    auto t = tensorOf(operand.get());
    int64_t d = *dim - (out.getRank() - t.getRank());
    if (d < 0 || t.getDimSize(d) == 1)
      continue; // broadcast along the split: every rank reads all of it
    if (!nn::isWeight(operand.get()))
      return reject(op, "a computed side input spans the split dim");
    r.sideParts.push_back({&operand, d});
  }
  r.split[op->getResult(0)] = *dim;
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
                        "divide by nor divide --tp " + Twine(tp));
    // Walk back from key and value to their columns.
    SmallVector<Value> work{att.getKey(), att.getValue()};
    while (!work.empty()) {
      Value v = work.pop_back_val();
      r.parts[v] = kvHeads;
      Operation *def = v.getDefiningOp();
      if (auto col = dyn_cast_or_null<nn::LinearOp>(def); col && r.columns.contains(col))
        continue;
      if (!def || !r.ops.contains(def))
        return reject(op, "its key/value do not come from column linears");
      for (unsigned i : regionOperands(def))
        work.push_back(def->getOperand(i));
    }
  }
  return success();
}

LogicalResult dist::Planner::propagate(dist::Region &r) {
  for (nn::LinearOp col : r.columns)
    r.split[col.getResult()] = col.getType().getRank() - 1;
  // Program order: every operand is placed before its user.
  SmallVector<Operation *> ordered(r.ops.begin(), r.ops.end());
  llvm::sort(ordered, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  for (Operation *op : ordered) {
    auto at = [&](unsigned i) -> std::optional<int64_t> {
      auto it = r.split.find(op->getOperand(i));
      return it == r.split.end() ? std::nullopt : std::optional(it->second);
    };
    // Parts travel with the split through every op but the attention,
    // whose output has the query's split.
    if (!isa<nn::AttentionOp>(op))
      for (unsigned i : regionOperands(op))
        if (r.parts.count(op->getOperand(i)))
          for (Value res : op->getResults())
            r.parts[res] = r.parts.lookup(op->getOperand(i));
    if (auto reshape = dyn_cast<nn::ReshapeOp>(op)) {
      int64_t n = r.partsOf(reshape.getInput(), tp);
      if (n != tp)
        r.parts[reshape.getResult()] = n;
      auto d = reshapeDim(tensorOf(reshape.getInput()).getShape(),
                          reshape.getType().getShape(), *at(0), n);
      if (!d) {
        // Name the dim that should have split: the output dim where the
        // input's prefix ends (the heads of a head-split reshape).
        auto in = tensorOf(reshape.getInput()).getShape();
        auto out = reshape.getType().getShape();
        int64_t prefix = 1, outPrefix = 1, size = in[*at(0)];
        for (int64_t i = 0; i < *at(0); ++i)
          prefix *= in[i];
        for (int64_t j = 0; j < (int64_t)out.size() && outPrefix <= prefix; ++j) {
          if (outPrefix == prefix)
            size = out[j];
          outPrefix *= out[j];
        }
        return misfit(op, Twine(size) + (out.size() > in.size() ? " heads" : " features") +
                              " do not divide by --tp " + Twine(tp) +
                              " (use a tp that divides " + Twine(size) + ")");
      }
      r.split[reshape.getResult()] = *d;
    } else if (auto tr = dyn_cast<nn::TransposeOp>(op)) {
      auto perm = tr.getPerm();
      r.split[tr.getResult()] = llvm::find(perm, *at(0)) - perm.begin();
    } else if (auto att = dyn_cast<nn::AttentionOp>(op)) {
      for (unsigned i = 0; i < 3; ++i)
        if (at(i) != 1)
          return reject(op, "query, key and value must all be split by heads");
      if (r.partsOf(att.getQuery(), tp) != tp)
        return reject(op, "its query is split into fewer parts than ranks");
      for (Value m : att.getMasks())
        if (tensorOf(m).getRank() == 4 && tensorOf(m).getDimSize(1) != 1)
          return reject(op, "a mask varies over heads");
      r.split[att.getResult()] = 1;
    } else if (auto rot = dyn_cast<nn::RotaryOp>(op)) {
      int64_t d = *at(0);
      auto x = tensorOf(rot.getInput());
      if (d == x.getRank() - 1)
        return reject(op, "rotary splits its rotated dim");
      for (Value table : {rot.getCos(), rot.getSin()}) {
        int64_t td = d - (x.getRank() - tensorOf(table).getRank());
        if (td >= 0 && tensorOf(table).getDimSize(td) != 1)
          return reject(op, "its cos/sin tables vary along the split dim");
      }
      r.split[rot.getResult()] = d;
    } else if (auto split = dyn_cast<nn::SplitOp>(op)) {
      int64_t d = *at(0);
      if ((int64_t)split.getAxis() == d) {
        // Only a column output can be split blockwise: its weight is cut
        // per block so that each rank holds its part of every piece.
        auto col = split.getInput().getDefiningOp<nn::LinearOp>();
        if (!col || !r.columns.contains(col))
          return reject(op, "it splits the split dim of a computed value");
        SmallVector<int64_t> sizes;
        for (Value piece : split.getOutputs()) {
          sizes.push_back(tensorOf(piece).getDimSize(d));
          if (sizes.back() % tp)
            return misfit(op, "a piece of " + Twine(sizes.back()) +
                                  " does not divide by --tp " + Twine(tp));
        }
        r.blocks[col] = sizes;
      }
      for (Value piece : split.getOutputs())
        r.split[piece] = d;
    } else if (auto concat = dyn_cast<nn::ConcatOp>(op)) {
      // Pieces split alike and joined along another dim stay split.
      std::optional<int64_t> d = at(0);
      for (unsigned i = 1; i < op->getNumOperands(); ++i)
        if (at(i) != d)
          return reject(op, "its inputs are split differently");
      if (!d || *d == (int64_t)concat.getAxis())
        return reject(op, "it concatenates along the split dim");
      r.split[concat.getResult()] = *d;
    } else if (auto slice = dyn_cast<nn::SliceOp>(op)) {
      int64_t d = *at(0);
      if (slice.getStarts()[d] != 0 || slice.getSteps()[d] != 1 ||
          slice.getType().getDimSize(d) != tensorOf(slice.getInput()).getDimSize(d))
        return reject(op, "it slices the split dim");
      r.split[slice.getResult()] = d;
    } else if (auto softmax = dyn_cast<nn::SoftmaxOp>(op)) {
      int64_t d = *at(0), rank = tensorOf(softmax.getInput()).getRank();
      // The accessor is unsigned: read the attribute's signed value.
      int64_t axis = softmax.getAxisAttr().getInt();
      if (axis < 0)
        axis += rank;
      if (axis == d)
        return reject(op, "it normalises along the split dim");
      r.split[softmax.getResult()] = d;
    } else if (isReduction(op)) {
      // Reducing other dims keeps the split; reducing the split dim would
      // leave partial results that no rule carries on.
      int64_t d = *at(0), rank = tensorOf(op->getOperand(0)).getRank();
      auto keep = op->getAttrOfType<BoolAttr>("keepdims");
      int64_t before = 0;
      for (int64_t a : op->getAttrOfType<DenseI64ArrayAttr>("axes").asArrayRef()) {
        a = a < 0 ? a + rank : a;
        if (a == d)
          return reject(op, "it reduces along the split dim");
        before += a < d;
      }
      r.split[op->getResult(0)] = (!keep || keep.getValue()) ? d : d - before;
    } else if (failed(elementwise(r, op))) {
      return failure();
    }
  }
  auto in = tensorOf(r.row.getInput());
  auto it = r.split.find(r.row.getInput());
  if (it == r.split.end() || it->second != in.getRank() - 1)
    return reject(r.row, "its input is not split on the features it reduces");
  if (!nn::isWeight(r.row.getWeight()))
    return reject(r.row, "row weights must be constants");
  // Nothing computed in the region may be read outside it.
  for (auto &[value, dim] : r.split)
    for (Operation *user : value.getUsers())
      if (user != r.row && !r.ops.contains(user))
        return reject(user, "it reads a value of the region from outside");
  return success();
}

