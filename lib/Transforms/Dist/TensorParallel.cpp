//===- TensorParallel.cpp - dist-tensor-parallel ----------------*- C++ -*-===//
//
// Megatron's rule, found rather than hand-written: a row-parallel linear
// consumes, through ops that keep one dimension split (heads in attention,
// features in activations), the outputs of column-parallel linears. Such a
// region needs exactly one all-reduce, after the row product. Regions are
// discovered backwards from each linear, then verified forwards by giving
// every value in them its split dimension; anything that does not fit a rule
// keeps the whole region replicated, which is always correct.
//
//===----------------------------------------------------------------------===//

#include "dist/DistDialect.h"
#include "nn/NNOps.h"
#include "parc/Transforms/Dist/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "dist-tensor-parallel"

namespace parc::dist {
#define GEN_PASS_DEF_DISTTENSORPARALLEL
#include "parc/Transforms/Dist/Passes.h.inc"
} // namespace parc::dist

using namespace mlir;
namespace nn = parc::nn;
namespace dist = parc::dist;

namespace {

constexpr StringLiteral kAxis = "tp";

RankedTensorType tensorOf(Value v) { return cast<RankedTensorType>(v.getType()); }

bool isConstant(Value v) { return v.getDefiningOp<arith::ConstantOp>(); }

/// "node 'NAME' (op)" for diagnostics: the ONNX node the op came from.
std::string nodeOf(Operation *op) {
  std::string name;
  op->getLoc()->walk([&](Location l) {
    if (auto n = dyn_cast<NameLoc>(l)) {
      name = n.getName().str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  if (name.empty())
    return "'" + op->getName().getStringRef().str() + "'";
  return "node '" + name + "' (" + op->getName().getStringRef().str() + ")";
}

/// One Megatron region: column linears feeding a row linear.
struct Region {
  nn::LinearOp row;
  llvm::SetVector<nn::LinearOp> columns;
  llvm::SetVector<Operation *> ops;
  /// The split dimension of every value computed in the region.
  llvm::DenseMap<Value, int64_t> split;
  /// Into how many distinct parts a value is split when fewer than tp:
  /// grouped-query key/value heads, each part held by tp / parts ranks.
  llvm::DenseMap<Value, int64_t> parts;
  int64_t partsOf(Value v, int64_t tp) const {
    auto it = parts.find(v);
    return it == parts.end() ? tp : it->second;
  }
  /// Column linears whose output is split again blockwise (fused QKV).
  llvm::DenseMap<Operation *, SmallVector<int64_t>> blocks;
  /// Constant operands to replace by this rank's part: operand → dim.
  SmallVector<std::pair<OpOperand *, int64_t>> sideParts;
};

class Planner {
public:
  explicit Planner(int64_t tp) : tp(tp) {}

  /// Builds and verifies the region ending at `row`; a failure explains why.
  FailureOr<Region> plan(nn::LinearOp row);

  /// Remark on every region kept replicated.
  bool explain = false;
  /// Regions that `tp` does not divide: errors the pass reports.
  SmallVector<std::pair<Operation *, std::string>> misfits;

private:
  LogicalResult collect(Region &r);
  LogicalResult propagate(Region &r);
  /// The region has no tensor-parallel form: it stays replicated.
  LogicalResult reject(Operation *op, const Twine &why) {
    if (explain)
      op->emitRemark() << nodeOf(op) << " stays replicated under tensor "
                       << "parallelism: " << why;
    LLVM_DEBUG(llvm::dbgs() << "dist-tensor-parallel: region at " << op->getLoc()
                            << " stays replicated: " << why << "\n");
    return failure();
  }
  /// The region would split, but `tp` does not divide one of its dims: the
  /// spec does not fit the model, which is the user's to fix.
  LogicalResult misfit(Operation *op, const Twine &why) {
    misfits.push_back({op, why.str()});
    return failure();
  }
  /// Where a split on input dim `d` lands after a reshape, if it survives.
  std::optional<int64_t> reshapeDim(ArrayRef<int64_t> in, ArrayRef<int64_t> out,
                                    int64_t d, int64_t parts);
  /// Marks the columns that feed grouped-query key/values with fewer heads
  /// than ranks: they split into one part per key/value head.
  LogicalResult planKeyValueParts(Region &r);
  /// Splits of a broadcasting op's operands, aligned to its result.
  LogicalResult elementwise(Region &r, Operation *op);

  int64_t tp;
};

/// Which operands of `op` carry the region's split (the others are side
/// inputs: masks, tables, constants).
SmallVector<unsigned> regionOperands(Operation *op) {
  if (isa<nn::AttentionOp>(op))
    return {0, 1, 2};
  if (isa<nn::ConcatOp>(op))
    return llvm::to_vector(llvm::seq<unsigned>(0, op->getNumOperands()));
  if (isa<nn::RotaryOp, nn::ReshapeOp, nn::TransposeOp, nn::SplitOp,
          nn::SliceOp, nn::CastOp>(op) ||
      (op->hasTrait<OpTrait::Elementwise>() && op->getNumOperands() == 1))
    return {0};
  if (isa<nn::AddOp, nn::SubOp, nn::MulOp, nn::DivOp, nn::WhereOp>(op)) {
    SmallVector<unsigned> idx;
    for (unsigned i = 0; i < op->getNumOperands(); ++i)
      if (!isConstant(op->getOperand(i)))
        idx.push_back(i);
    return idx;
  }
  return {};
}

LogicalResult Planner::collect(Region &r) {
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

std::optional<int64_t> Planner::reshapeDim(ArrayRef<int64_t> in,
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

LogicalResult Planner::elementwise(Region &r, Operation *op) {
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
    if (!isConstant(operand.get()))
      return reject(op, "a computed side input spans the split dim");
    r.sideParts.push_back({&operand, d});
  }
  r.split[op->getResult(0)] = *dim;
  return success();
}

LogicalResult Planner::planKeyValueParts(Region &r) {
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

LogicalResult Planner::propagate(Region &r) {
  if (failed(planKeyValueParts(r)))
    return failure();
  for (nn::LinearOp col : r.columns) {
    if (!isConstant(col.getWeight()) ||
        (col.getBias() && !isConstant(col.getBias())))
      return reject(col, "column weights must be constants");
    auto t = col.getType();
    int64_t n = r.partsOf(col.getResult(), tp);
    if (t.getShape().back() % n)
      return misfit(col, "its " + Twine(t.getShape().back()) +
                             " output features do not divide by --tp " + Twine(tp));
    r.split[col.getResult()] = t.getRank() - 1;
  }
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
      if (split.getAxis() == d) {
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
      if (!d || *d == concat.getAxis())
        return reject(op, "it concatenates along the split dim");
      r.split[concat.getResult()] = *d;
    } else if (auto slice = dyn_cast<nn::SliceOp>(op)) {
      int64_t d = *at(0);
      if (slice.getStarts()[d] != 0 || slice.getSteps()[d] != 1 ||
          slice.getType().getDimSize(d) != tensorOf(slice.getInput()).getDimSize(d))
        return reject(op, "it slices the split dim");
      r.split[slice.getResult()] = d;
    } else if (failed(elementwise(r, op))) {
      return failure();
    }
  }
  auto in = tensorOf(r.row.getInput());
  auto it = r.split.find(r.row.getInput());
  if (it == r.split.end() || it->second != in.getRank() - 1)
    return reject(r.row, "its input is not split on the features it reduces");
  if (!isConstant(r.row.getWeight()))
    return reject(r.row, "row weights must be constants");
  // Nothing computed in the region may be read outside it.
  for (auto &[value, dim] : r.split)
    for (Operation *user : value.getUsers())
      if (user != r.row && !r.ops.contains(user))
        return reject(user, "it reads a value of the region from outside");
  return success();
}

FailureOr<Region> Planner::plan(nn::LinearOp row) {
  Region r;
  r.row = row;
  if (failed(collect(r)) || failed(propagate(r)))
    return failure();
  return r;
}

/// The local type of a value split on `dim` over tp ranks.
RankedTensorType local(RankedTensorType t, int64_t dim, int64_t tp) {
  SmallVector<int64_t> shape(t.getShape());
  shape[dim] /= tp;
  return RankedTensorType::get(shape, t.getElementType());
}

class Rewriter {
public:
  Rewriter(int64_t tp, StringRef mesh) : tp(tp), mesh(mesh) {}
  void apply(Region &r);
  /// A linear producing a program output (an LM head) is column-parallel
  /// on its own: each rank computes its slice of the features (vocabulary)
  /// and one all-gather assembles them.
  void applyColumnOutput(nn::LinearOp head);

private:
  /// This rank's part of constant `v` along `dim` (blockwise if `blocks`),
  /// cut into `parts` (tp unless fewer parts are shared by several ranks).
  Value part(OpBuilder &b, Value v, int64_t dim, ArrayRef<int64_t> blocks = {},
             int64_t parts = 0);
  int64_t tp;
  std::string mesh;
};

Value Rewriter::part(OpBuilder &b, Value v, int64_t dim, ArrayRef<int64_t> blocks,
                     int64_t parts) {
  parts = parts ? parts : tp;
  auto t = tensorOf(v);
  return dist::LocalPartOp::create(
      b, v.getLoc(), local(t, dim, parts), v, b.getI64IntegerAttr(dim),
      b.getI64IntegerAttr(parts), b.getStringAttr(kAxis),
      blocks.empty() ? DenseI64ArrayAttr() : b.getDenseI64ArrayAttr(blocks),
      parts == tp ? IntegerAttr() : b.getI64IntegerAttr(tp / parts));
}

void Rewriter::apply(Region &r) {
  OpBuilder b(r.row);
  for (nn::LinearOp col : r.columns) {
    b.setInsertionPoint(col);
    ArrayRef<int64_t> blocks;
    if (auto it = r.blocks.find(col); it != r.blocks.end())
      blocks = it->second;
    int64_t n = r.partsOf(col.getResult(), tp);
    col.getWeightMutable().assign(
        part(b, col.getWeight(), col.getTransposeWeight() ? 0 : 1, blocks, n));
    if (col.getBias())
      col.getBiasMutable().assign(part(b, col.getBias(), 0, blocks, n));
    col.getResult().setType(local(col.getType(), col.getType().getRank() - 1, n));
  }
  for (auto [operand, dim] : r.sideParts) {
    b.setInsertionPoint(operand->getOwner());
    operand->set(part(b, operand->get(), dim));
  }
  // Program order: an attention's scores are retyped from its retyped inputs.
  SmallVector<Operation *> ordered(r.ops.begin(), r.ops.end());
  llvm::sort(ordered, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  for (Operation *op : ordered) {
    for (Value res : op->getResults())
      res.setType(local(tensorOf(res), r.split.lookup(res), r.partsOf(res, tp)));
    if (auto att = dyn_cast<nn::AttentionOp>(op)) {
      // The score modifier is elementwise: retype it from its scores.
      Block &mod = att.getScoreModBlock();
      mod.getArgument(0).setType(att.getScoreType());
      for (Operation &inner : mod.without_terminator()) {
        if (inner.getNumOperands() == 0)
          continue; // constants keep their own type
        SmallVector<int64_t> shape;
        for (Value v : inner.getOperands())
          shape = *nn::broadcastShapes(shape, tensorOf(v).getShape());
        auto t = tensorOf(inner.getResult(0));
        inner.getResult(0).setType(RankedTensorType::get(shape, t.getElementType()));
      }
    }
  }
  // The row product: local K, a partial sum of the full output, reduced
  // over tp before its bias is added once.
  nn::LinearOp row = r.row;
  b.setInsertionPoint(row);
  Value weight = part(b, row.getWeight(), row.getTransposeWeight() ? 1 : 0);
  Value partial = nn::LinearOp::create(b, row.getLoc(), row.getType(),
                                       row.getInput(), weight, Value(),
                                       row.getTransposeWeightAttr());
  Value sum = dist::AllReduceOp::create(b, row.getLoc(), partial.getType(),
                                        FlatSymbolRefAttr::get(b.getContext(), mesh),
                                        b.getStrArrayAttr({kAxis}), partial,
                                        dist::ReductionKind::sum);
  if (Value bias = row.getBias())
    sum = nn::AddOp::create(b, row.getLoc(), row.getType(), sum, bias);
  row.getResult().replaceAllUsesWith(sum);
  row.erase();
}

void Rewriter::applyColumnOutput(nn::LinearOp head) {
  OpBuilder b(head);
  auto global = head.getType();
  int64_t last = global.getRank() - 1;
  head.getWeightMutable().assign(
      part(b, head.getWeight(), head.getTransposeWeight() ? 0 : 1));
  if (head.getBias())
    head.getBiasMutable().assign(part(b, head.getBias(), 0));
  head.getResult().setType(local(global, last, tp));
  b.setInsertionPointAfter(head);
  auto gathered = dist::AllGatherOp::create(
      b, head.getLoc(), global, FlatSymbolRefAttr::get(b.getContext(), mesh),
      b.getStrArrayAttr({kAxis}), head.getResult(), b.getI64IntegerAttr(last),
      DenseI64ArrayAttr());
  head.getResult().replaceAllUsesExcept(gathered, gathered);
}

struct DistTensorParallelPass
    : parc::dist::impl::DistTensorParallelBase<DistTensorParallelPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (tp < 1) {
      module.emitError() << "--tp must be at least 1, not " << tp;
      return signalPassFailure();
    }
    if (tp == 1)
      return;
    auto main = module.lookupSymbol<func::FuncOp>("main");
    if (!main) {
      module.emitError("expected func.func @main");
      return signalPassFailure();
    }
    // Plan every region first: a linear is in at most one of them.
    Planner planner(tp);
    planner.explain = explain;
    SmallVector<Region> regions;
    llvm::DenseSet<Operation *> taken;
    main.walk([&](nn::LinearOp row) {
      FailureOr<Region> r = planner.plan(row);
      if (failed(r))
        return;
      bool overlaps = taken.contains(row);
      for (nn::LinearOp col : r->columns)
        overlaps |= taken.contains(col);
      if (overlaps)
        return;
      taken.insert(row);
      for (nn::LinearOp col : r->columns)
        taken.insert(col);
      regions.push_back(std::move(*r));
    });
    if (!planner.misfits.empty()) {
      for (auto &[op, why] : planner.misfits)
        op->emitError() << nodeOf(op) << ": --tp " << int64_t(tp)
                        << " does not fit this model: " << why;
      return signalPassFailure();
    }
    OpBuilder b(module.getBodyRegion());
    dist::MeshOp::create(b, module.getLoc(), "mesh",
                         b.getStrArrayAttr({kAxis}),
                         b.getDenseI64ArrayAttr({tp}));
    Rewriter rewriter(tp, "mesh");
    // Output heads (the LM head, vocabulary-parallel in Megatron): a
    // constant-weight linear outside every region whose only user is the
    // return and whose features divide.
    SmallVector<nn::LinearOp> heads;
    main.walk([&](nn::LinearOp lin) {
      auto t = lin.getType();
      // Only returned, possibly through the cast of nn-convert-dtype.
      Operation *user = lin->hasOneUse() ? *lin->getUsers().begin() : nullptr;
      if (user && isa<nn::CastOp>(user) && user->hasOneUse())
        user = *user->getUsers().begin();
      if (taken.contains(lin) || !isa_and_nonnull<func::ReturnOp>(user) ||
          !isConstant(lin.getWeight()) ||
          (lin.getBias() && !isConstant(lin.getBias())) ||
          t.getShape().back() % tp)
        return;
      heads.push_back(lin);
    });
    for (nn::LinearOp head : heads) {
      if (explain)
        head->emitRemark() << nodeOf(head) << " is an output head split over "
                           << int64_t(tp) << " ranks by its "
                           << head.getType().getShape().back()
                           << " features, then all-gathered";
      rewriter.applyColumnOutput(head);
    }
    for (Region &r : regions) {
      if (explain)
        r.row->emitRemark() << nodeOf(r.row) << " is row-parallel over "
                            << int64_t(tp) << " ranks, fed by "
                            << r.columns.size()
                            << " column-parallel linear(s); one all-reduce of "
                            << r.row.getType() << " follows it";
      rewriter.apply(r);
    }
    main->setAttr("dist.tp_regions", b.getI64IntegerAttr(regions.size() + heads.size()));
  }
};

} // namespace
