//===- FuseMoE.cpp - nn-fuse-moe: recognise mixture-of-experts blocks -----===//
//
// A static trace cannot skip experts, so an exported MoE block runs every
// expert on every token and multiplies each result by a dense routing
// column that is zero for the experts a token did not choose. The pattern
// here starts at the router's TopK, follows the routing weights to each
// expert's column, checks that each column scales one expert MLP on the
// shared tokens, and that the scaled experts are summed; that sum becomes
// one nn.moe, which computes only the chosen experts. The dense form and
// nn.moe agree exactly: an unchosen expert contributes expert(x) * 0.
//
//===----------------------------------------------------------------------===//

#include "nn/NNOps.h"
#include "Matchers.h"
#include "parc/Transforms/NN/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/Support/Debug.h"

#include <cstring>
#include <optional>

#define DEBUG_TYPE "nn-fuse-moe"

namespace parc::nn {
#define GEN_PASS_DEF_NNFUSEMOE
#include "parc/Transforms/NN/Passes.h.inc"
} // namespace parc::nn

using namespace mlir;
using namespace parc::nn;

namespace {

/// A constant with exactly one element (a scalar in any
/// spelling), so that it never broadcasts its partner to a bigger shape.
std::optional<double> scalarValue(Value v) {
  if (!v || tensorType(v).getNumElements() != 1)
    return std::nullopt;
  return splatValue(v);
}

/// A reduce_sum over exactly the last axis of its input.
bool isLastAxisSum(ReduceSumOp sum) {
  return sum && sum.getAxes() ==
                    ArrayRef<int64_t>{tensorType(sum.getInput()).getRank() - 1};
}

/// The bytes of a constant's elements in row-major order.
std::optional<std::vector<char>> constantBytes(Value v) {
  auto cst = v.getDefiningOp<arith::ConstantOp>();
  if (!cst)
    return std::nullopt;
  auto type = tensorType(v);
  if (!type.getElementType().isIntOrFloat())
    return std::nullopt;
  size_t width = type.getElementTypeBitWidth() / 8;
  size_t bytes = width * type.getNumElements();
  if (width == 0)
    return std::nullopt;
  if (auto res = dyn_cast<DenseResourceElementsAttr>(cst.getValue())) {
    AsmResourceBlob *blob = res.getRawHandle().getBlob();
    if (!blob || blob->getData().size() != bytes)
      return std::nullopt;
    ArrayRef<char> data = blob->getData();
    return std::vector<char>(data.begin(), data.end());
  }
  auto dense = dyn_cast<DenseElementsAttr>(cst.getValue());
  if (!dense)
    return std::nullopt;
  ArrayRef<char> raw = dense.getRawData();
  std::vector<char> out(bytes);
  for (size_t i = 0; i < bytes; i += width)
    std::memcpy(out.data() + i, raw.data() + (dense.isSplat() ? 0 : i), width);
  return out;
}

/// One expert: the linears' weights and whether each is stored [out, in].
struct Expert {
  LinearOp fc1, fc2, fc3; // fc3 only in the gated form
  MoeActivation act;
};

/// The activation op producing `v`, and its input.
std::optional<std::pair<MoeActivation, Value>> matchActivation(Value v) {
  Operation *op = v.getDefiningOp();
  if (auto silu = dyn_cast_or_null<SiluOp>(op))
    return std::make_pair(MoeActivation::silu, silu.getInput());
  if (auto relu = dyn_cast_or_null<ReluOp>(op))
    return std::make_pair(MoeActivation::relu, relu.getInput());
  if (auto gelu = dyn_cast_or_null<GeluOp>(op);
      gelu && gelu.getApproximation() == GeluApproximation::none)
    return std::make_pair(MoeActivation::gelu, gelu.getInput());
  return std::nullopt;
}

/// A bias-free linear of `x` with a constant 2-D weight.
LinearOp matchExpertLinear(Value v, Value x) {
  auto linear = v.getDefiningOp<LinearOp>();
  if (!linear || linear.getBias() || (x && linear.getInput() != x) ||
      !linear.getWeight().getDefiningOp<arith::ConstantOp>())
    return {};
  return linear;
}

/// fc2(act(fc1(x)) [* fc3(x)]) on the tokens `x` (null: learn it here).
std::optional<Expert> matchExpert(Value y, Value &x) {
  LinearOp fc2 = matchExpertLinear(y, Value());
  if (!fc2)
    return std::nullopt;
  Value h = fc2.getInput();
  auto tryPlain = [&](Value a) -> std::optional<Expert> {
    auto act = matchActivation(a);
    if (!act)
      return std::nullopt;
    LinearOp fc1 = matchExpertLinear(act->second, x);
    if (!fc1)
      return std::nullopt;
    return Expert{fc1, fc2, LinearOp(), act->first};
  };
  if (auto mul = h.getDefiningOp<MulOp>();
      mul && mul.getLhs().getType() == mul.getRhs().getType()) {
    for (int side = 0; side < 2; ++side) {
      auto gate = tryPlain(mul->getOperand(side));
      LinearOp fc3 = matchExpertLinear(mul->getOperand(1 - side),
                                       gate ? gate->fc1.getInput() : Value());
      if (!gate || !fc3)
        continue;
      gate->fc3 = fc3;
      x = gate->fc1.getInput();
      return gate;
    }
    return std::nullopt;
  }
  auto plain = tryPlain(h);
  if (plain)
    x = plain->fc1.getInput();
  return plain;
}

/// A [K, N] weight's bytes, transposed from [N, K] when stored that way.
std::optional<std::vector<char>> weightBytes(LinearOp linear) {
  auto bytes = constantBytes(linear.getWeight());
  if (!bytes || !linear.getTransposeWeight())
    return bytes;
  auto type = tensorType(linear.getWeight());
  int64_t rows = type.getDimSize(0), cols = type.getDimSize(1);
  size_t width = type.getElementTypeBitWidth() / 8;
  std::vector<char> out(bytes->size());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c)
      std::memcpy(out.data() + (c * rows + r) * width,
                  bytes->data() + (r * cols + c) * width, width);
  return out;
}

/// The experts' weights of one role stacked into an [E, in, out] constant,
/// named after the first expert's weight with its index removed.
FailureOr<Value> stackWeights(PatternRewriter &rewriter, Location loc,
                              MutableArrayRef<LinearOp> linears) {
  auto first = tensorType(linears.front().getWeight());
  int64_t in = tensorType(linears.front().getInput()).getShape().back();
  int64_t out = tensorType(linears.front().getResult()).getShape().back();
  std::vector<char> all;
  for (LinearOp &l : linears) {
    auto bytes = weightBytes(l);
    if (!bytes || tensorType(l.getWeight()) != first ||
        l.getTransposeWeight() != linears.front().getTransposeWeight())
      return failure();
    all.insert(all.end(), bytes->begin(), bytes->end());
  }
  auto type = RankedTensorType::get({(int64_t)linears.size(), in, out},
                                    first.getElementType());
  std::string key = "moe.stacked";
  auto cst = linears.front().getWeight().getDefiningOp<arith::ConstantOp>();
  if (auto res = dyn_cast<DenseResourceElementsAttr>(cst.getValue())) {
    // model.layers.0.block_sparse_moe.experts.0.w1.weight ->
    // ...experts.w1.weight
    key = res.getRawHandle().getKey().str();
    if (size_t at = key.find(".experts.0."); at != std::string::npos)
      key.replace(at, strlen(".experts.0."), ".experts.");
    else
      key += ".stacked";
  }
  auto blob = HeapAsmResourceBlob::allocateAndCopyWithAlign(
      ArrayRef<char>(all.data(), all.size()), alignof(uint64_t));
  return arith::ConstantOp::create(
             rewriter, loc, type,
             DenseResourceElementsAttr::get(type, key, std::move(blob)))
      .getResult();
}

/// Routing found downstream of the TopK: the weights of the chosen experts
/// ([T, K]) and whether they were renormalised.
struct Routing {
  Value logits;
  Value weights;
  bool normalize;
};

/// softmax -> topk -> (optional renormalisation), or topk on the logits ->
/// softmax of the k values (which is the renormalised form).
std::optional<Routing> matchRouting(TopKOp topk) {
  auto in = tensorType(topk.getInput());
  int64_t last = in.getRank() - 1;
  if (in.getRank() != 2 || topk.getAxis() != (uint64_t)last ||
      !topk.getLargest())
    return std::nullopt;
  Value values = topk.getValues();
  if (auto softmax = topk.getInput().getDefiningOp<SoftmaxOp>()) {
    if (softmax.getAxis() != (uint64_t)last)
      return std::nullopt;
    for (Operation *user : values.getUsers())
      if (auto div = dyn_cast<DivOp>(user); div && div.getLhs() == values) {
        auto sum = div.getRhs().getDefiningOp<ReduceSumOp>();
        if (sum && sum.getInput() == values && isLastAxisSum(sum) &&
            sum.getKeepdims() && div.getType() == values.getType())
          return Routing{softmax.getInput(), div.getResult(), true};
      }
    return Routing{softmax.getInput(), values, false};
  }
  for (Operation *user : values.getUsers())
    if (auto softmax = dyn_cast<SoftmaxOp>(user);
        softmax && softmax.getAxis() == (uint64_t)last)
      return Routing{topk.getInput(), softmax.getResult(), true};
  return std::nullopt;
}

/// A constant holding start, start+1, ... (a OneHot's class ids).
bool isArange(Value v, int64_t start, int64_t n) {
  DenseIntElementsAttr attr;
  if (!matchPattern(v, m_Constant(&attr)) || attr.getNumElements() != n)
    return false;
  int64_t want = start;
  for (const APInt &x : attr.getValues<APInt>())
    if (x.getSExtValue() != want++)
      return false;
  return true;
}

/// One-hot of `r` ([T, K, 1] indices) over `experts` classes as the
/// importer spells OneHot: where(eq(r, 0..E-1) [or eq(r, -E..-1)], 1, 0),
/// possibly cast to float.
bool isOneHot(Value m, Value r, int64_t experts) {
  if (auto cast = m.getDefiningOp<CastOp>())
    m = cast.getInput();
  auto where = m.getDefiningOp<WhereOp>();
  if (!where || splatValue(where.getLhs()) != 1.0 ||
      splatValue(where.getRhs()) != 0.0)
    return false;
  auto isEq = [&](Value v, int64_t start) {
    auto eq = v.getDefiningOp<EqualOp>();
    return eq && eq.getLhs() == r && isArange(eq.getRhs(), start, experts);
  };
  Value hit = where.getCondition();
  if (isEq(hit, 0))
    return true;
  auto orOp = hit.getDefiningOp<OrOp>();
  return orOp && ((isEq(orOp.getLhs(), 0) && isEq(orOp.getRhs(), -experts)) ||
                  (isEq(orOp.getRhs(), 0) && isEq(orOp.getLhs(), -experts)));
}

/// The routing column of each expert, [T, 1] values keyed by expert index,
/// in whichever form the exporter built them.
llvm::DenseMap<int64_t, Value> routingColumns(TopKOp topk, Value weights,
                                              int64_t experts) {
  llvm::DenseMap<int64_t, Value> columns;
  Value indices = topk.getIndices();
  int64_t tokens = tensorType(weights).getDimSize(0);
  auto isColumn = [&](Value v) {
    return tensorType(v).getShape() == ArrayRef<int64_t>{tokens, 1};
  };
  int64_t k = tensorType(indices).getDimSize(1);
  // Column e of a dense [T, E] routing tensor: gather(routing, e, axis=1)
  // reshaped to [T, 1], or a slice e:e+1.
  auto denseColumns = [&](Value routing) {
    for (Operation *use : routing.getUsers()) {
      if (auto gather = dyn_cast<GatherOp>(use)) {
        auto e = scalarValue(gather.getIndices());
        if (!e || gather.getAxis() != 1 || !gather->hasOneUse() ||
            tensorType(gather.getIndices()).getRank() != 0)
          continue;
        auto reshape = dyn_cast<ReshapeOp>(*gather->getUsers().begin());
        if (reshape && isColumn(reshape.getResult()))
          columns[(int64_t)*e < 0 ? (int64_t)*e + experts : (int64_t)*e] =
              reshape.getResult();
      } else if (auto slice = dyn_cast<SliceOp>(use)) {
        if (isColumn(slice.getResult()) && slice.getStarts()[0] == 0 &&
            slice.getSteps()[1] == 1)
          columns[slice.getStarts()[1]] = slice.getResult();
      }
    }
  };
  for (Operation *user : indices.getUsers()) {
    // Dense routing: scatter(zeros, indices, weights, axis=1).
    if (auto scatter = dyn_cast<ScatterElementsOp>(user)) {
      if (scatter.getIndices() == indices && scatter.getUpdates() == weights &&
          scatter.getAxis() == 1 &&
          scatter.getReduction() == ScatterReduction::none &&
          splatValue(scatter.getData()) == 0.0)
        denseColumns(scatter.getResult());
      continue;
    }
    // Dense routing: sum_k(one_hot(indices) * weights[..., None]).
    if (auto r = dyn_cast<ReshapeOp>(user)) {
      if (tensorType(r.getResult()).getShape() !=
          ArrayRef<int64_t>{tokens, k, 1})
        continue;
      for (Operation *eq : r->getUsers()) {
        // eq -> [or ->] where -> [cast ->] mul: walk down single uses.
        Operation *op = eq;
        while (op && op->hasOneUse() && !isa<MulOp>(op))
          op = *op->getUsers().begin();
        auto mul = dyn_cast_or_null<MulOp>(op);
        if (!mul || !mul->hasOneUse())
          continue;
        for (int side = 0; side < 2; ++side) {
          auto w = mul->getOperand(1 - side).getDefiningOp<ReshapeOp>();
          auto sum = dyn_cast<ReduceSumOp>(*mul->getUsers().begin());
          if (!w || w.getInput() != weights ||
              !isOneHot(mul->getOperand(side), r.getResult(), experts) ||
              !sum || sum.getAxes() != ArrayRef<int64_t>{1} ||
              sum.getKeepdims() ||
              tensorType(sum.getResult()).getShape() !=
                  ArrayRef<int64_t>{tokens, experts})
            continue;
          denseColumns(sum.getResult());
        }
      }
      continue;
    }
    // Per-expert masks: sum_k(where(indices == e, weights, 0)), keepdims.
    if (auto eq = dyn_cast<EqualOp>(user)) {
      Value other = eq.getLhs() == indices ? eq.getRhs() : eq.getLhs();
      auto e = scalarValue(other);
      if (!e || eq.getType().getShape() != tensorType(indices).getShape() ||
          !eq->hasOneUse())
        continue;
      auto where = dyn_cast<WhereOp>(*eq->getUsers().begin());
      if (!where || where.getLhs() != weights ||
          scalarValue(where.getRhs()) != 0.0 || !where->hasOneUse() ||
          where.getType() != weights.getType())
        continue;
      auto sum = dyn_cast<ReduceSumOp>(*where->getUsers().begin());
      if (sum && isLastAxisSum(sum) && isColumn(sum.getResult()))
        columns[(int64_t)*e] = sum.getResult();
    }
  }
  return columns;
}

/// Collects the leaves of a tree of single-use adds of one type.
void addLeaves(Value v, Type type, SmallVectorImpl<Value> &leaves,
               SmallVectorImpl<Operation *> &adds) {
  auto add = v.getDefiningOp<AddOp>();
  if (add && add.getType() == type && (adds.empty() || add->hasOneUse()) &&
      add.getLhs().getType() == type && add.getRhs().getType() == type) {
    adds.push_back(add);
    addLeaves(add.getLhs(), type, leaves, adds);
    addLeaves(add.getRhs(), type, leaves, adds);
    return;
  }
  leaves.push_back(v);
}

struct FuseMoE : OpRewritePattern<TopKOp> {
  using OpRewritePattern::OpRewritePattern;

  LogicalResult matchAndRewrite(TopKOp topk,
                                PatternRewriter &rewriter) const override {
    std::optional<Routing> routing = matchRouting(topk);
    if (!routing)
      return failure();
    int64_t experts = tensorType(topk.getInput()).getDimSize(1);
    auto columns = routingColumns(topk, routing->weights, experts);
    if ((int64_t)columns.size() != experts)
      return rewriter.notifyMatchFailure(topk, "not every expert has a column");

    // Each column scales one expert: mul(expert(x), column).
    Value x;
    SmallVector<Expert> found;
    llvm::DenseSet<Value> terms;
    for (int64_t e = 0; e < experts; ++e) {
      Value column = columns.lookup(e);
      if (!column || !column.hasOneUse())
        return rewriter.notifyMatchFailure(topk, "a routing column is reused");
      auto mul = dyn_cast<MulOp>(*column.getUsers().begin());
      if (!mul)
        return failure();
      Value y = mul.getLhs() == column ? mul.getRhs() : mul.getLhs();
      if (mul.getType() != y.getType())
        return failure();
      std::optional<Expert> expert = matchExpert(y, x);
      if (!expert || (!found.empty() && (expert->act != found[0].act ||
                                         !expert->fc3 != !found[0].fc3)))
        return rewriter.notifyMatchFailure(topk, "an expert is not an MLP");
      found.push_back(*expert);
      terms.insert(mul.getResult());
    }
    auto xType = tensorType(x);
    if (xType.getRank() != 2 ||
        xType.getDimSize(0) != tensorType(routing->logits).getDimSize(0))
      return failure();

    // The scaled experts are summed: find the add tree holding exactly them.
    Value root = *terms.begin();
    while (root.hasOneUse()) {
      auto add = dyn_cast<AddOp>(*root.getUsers().begin());
      if (!add || add.getType() != root.getType() ||
          add.getLhs().getType() != add.getRhs().getType())
        break;
      root = add.getResult();
    }
    if (root.use_empty() || !root.getDefiningOp<AddOp>())
      return rewriter.notifyMatchFailure(topk, "experts are not summed");
    SmallVector<Value> leaves;
    SmallVector<Operation *> adds;
    addLeaves(root, root.getType(), leaves, adds);
    llvm::DenseSet<Value> leafSet(leaves.begin(), leaves.end());
    if (leaves.size() != terms.size() || leafSet.size() != terms.size() ||
        !llvm::all_of(leaves, [&](Value v) { return terms.contains(v); }))
      return rewriter.notifyMatchFailure(topk, "experts are not summed");

    // The TopK's node names the block in diagnostics and the report.
    Location loc = rewriter.getFusedLoc({topk.getLoc(), root.getLoc()});
    SmallVector<LinearOp> fc1s, fc2s, fc3s;
    for (Expert &e : found) {
      fc1s.push_back(e.fc1);
      fc2s.push_back(e.fc2);
      if (e.fc3)
        fc3s.push_back(e.fc3);
    }
    FailureOr<Value> fc1 = stackWeights(rewriter, loc, fc1s);
    FailureOr<Value> fc2 = stackWeights(rewriter, loc, fc2s);
    FailureOr<Value> fc3 = fc3s.empty() ? FailureOr<Value>(Value())
                                        : stackWeights(rewriter, loc, fc3s);
    if (failed(fc1) || failed(fc2) || failed(fc3))
      return rewriter.notifyMatchFailure(topk, "expert weights differ");
    LLVM_DEBUG(llvm::dbgs() << "nn-fuse-moe: " << experts << " experts, top "
                            << topk.getK() << " at " << loc << "\n");
    rewriter.setInsertionPoint(root.getDefiningOp());
    auto moe =
        MoeOp::create(rewriter, loc, root.getType(), x, routing->logits, *fc1,
                      *fc2, *fc3, rewriter.getI64IntegerAttr(topk.getK()),
                      rewriter.getBoolAttr(routing->normalize),
                      MoeActivationAttr::get(getContext(), found[0].act),
                      IntegerAttr());
    rewriter.replaceOp(root.getDefiningOp(), moe.getResult());
    return success();
  }
};

struct NNFuseMoEPass : parc::nn::impl::NNFuseMoEBase<NNFuseMoEPass> {
  void runOnOperation() override {
    RewritePatternSet patterns(&getContext());
    patterns.add<FuseMoE>(&getContext());
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
