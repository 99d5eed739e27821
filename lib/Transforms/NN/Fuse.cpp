//===- Fuse.cpp - nn-fuse: recognise transformer blocks ---------*- C++ -*-===//
//
// Below opset 17 exporters spell LayerNorm, GELU, attention … out in
// elementwise ops, in whatever order the Python source computed them. The
// patterns here recognise those forms and rewrite them into the fused nn ops
// that sharding and code generation understand. A rewrite only happens when
// the fused op computes exactly what the matched ops did (up to reassociating
// scalar constants); a lookalike is left alone.
//
// Activations are matched numerically rather than by shape: the elementwise
// region around an erf / tanh / sigmoid is evaluated as a scalar function of
// its single input and compared with GELU or SiLU. That accepts every
// algebraic arrangement exporters produce and rejects wrong constants.
//
//===----------------------------------------------------------------------===//

#include "nn/NNOps.h"
#include "Matchers.h"
#include "parc/Transforms/NN/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Debug.h"

#include <cmath>
#include <optional>

#define DEBUG_TYPE "nn-fuse"

namespace parc::nn {
#define GEN_PASS_DEF_NNFUSE
#include "parc/Transforms/NN/Passes.h.inc"
} // namespace parc::nn

using namespace mlir;
using namespace parc::nn;

namespace {

//===----------------------------------------------------------------------===//
// Matching helpers
//===----------------------------------------------------------------------===//

bool isSplat(Value v, double expected) {
  std::optional<double> s = splatValue(v);
  return s && *s == expected;
}

/// The operand of binary `op` that is not `v`; null when `v` is neither.
Value otherOperand(Operation *op, Value v) {
  if (op->getOperand(0) == v)
    return op->getOperand(1);
  if (op->getOperand(1) == v)
    return op->getOperand(0);
  return {};
}

/// `v * c`, `c * v` or `v / c` with `c` a nonzero splat constant that does not
/// broadcast `v`: returns `v` and the factor the op multiplies it by.
std::optional<std::pair<Value, double>> matchScaled(Operation *op) {
  if (!op || !isa<MulOp, DivOp>(op))
    return std::nullopt;
  Type type = op->getResult(0).getType();
  for (int side = 0; side < 2; ++side) {
    Value v = op->getOperand(side);
    std::optional<double> c = splatValue(op->getOperand(1 - side));
    if (!c || *c == 0.0 || v.getType() != type)
      continue;
    if (isa<MulOp>(op))
      return std::make_pair(v, *c);
    if (side == 0)
      return std::make_pair(v, 1.0 / *c);
  }
  return std::nullopt;
}

/// A parameter that tensor parallelism may shard: a constant or an external
/// weight.
bool isParameter(Value v) { return isWeight(v); }

/// A 2-D weight operand: a parameter, or a parameter transposed at run time
/// (how torch [out, in] weights reach a MatMul). Returns the parameter and
/// whether it is used transposed.
std::optional<std::pair<Value, bool>> matchWeight(Value w) {
  if (tensorType(w).getRank() != 2)
    return std::nullopt;
  if (isParameter(w))
    return std::make_pair(w, false);
  if (auto t = w.getDefiningOp<TransposeOp>();
      t && isParameter(t.getInput()) && t.getPerm() == ArrayRef<int64_t>{1, 0})
    return std::make_pair(t.getInput(), true);
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// Linear layers
//===----------------------------------------------------------------------===//

/// matmul(x, W) or matmul(x, transpose(W)) with W a 2-D parameter → linear.
/// A bias is folded in afterwards by FuseLinearBias.
struct FuseMatMulLinear : OpRewritePattern<MatMulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MatMulOp mm,
                                PatternRewriter &rewriter) const override {
    auto weight = matchWeight(mm.getRhs());
    if (!weight || tensorType(mm.getLhs()).getRank() < 2)
      return failure();
    LLVM_DEBUG(llvm::dbgs() << "nn-fuse: linear at " << mm.getLoc() << "\n");
    rewriter.replaceOpWithNewOp<LinearOp>(
        mm, mm.getType(), mm.getLhs(), weight->first, Value(), weight->second);
    return success();
  }
};

/// gemm(a, W, c) with alpha = beta = 1 and no transposed `a` → linear; trans_b
/// is the torch [out, in] layout. `c` must be a bias over the columns.
struct FuseGemmLinear : OpRewritePattern<GemmOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(GemmOp gemm,
                                PatternRewriter &rewriter) const override {
    auto weight = matchWeight(gemm.getB());
    if (!weight || gemm.getTransA() || gemm.getAlpha().convertToDouble() != 1.0)
      return failure();
    int64_t n = gemm.getType().getDimSize(1);
    Value bias = gemm.getC();
    if (bias) {
      ArrayRef<int64_t> shape = tensorType(bias).getShape();
      bool vector = shape == ArrayRef<int64_t>{n};
      bool row = shape == ArrayRef<int64_t>{1, n};
      if (gemm.getBeta().convertToDouble() != 1.0 || !(vector || row))
        return failure();
      if (row)
        bias = rewriter.createOrFold<ReshapeOp>(
            gemm.getLoc(),
            RankedTensorType::get({n}, gemm.getType().getElementType()), bias);
    }
    LLVM_DEBUG(llvm::dbgs() << "nn-fuse: linear at " << gemm.getLoc() << "\n");
    rewriter.replaceOpWithNewOp<LinearOp>(gemm, gemm.getType(), gemm.getA(),
                                          weight->first, bias,
                                          weight->second != gemm.getTransB());
    return success();
  }
};

/// linear(x, W) + b, b over the output columns (either operand order) →
/// linear(x, W, b).
struct FuseLinearBias : OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AddOp add,
                                PatternRewriter &rewriter) const override {
    for (int side = 0; side < 2; ++side) {
      auto linear = add->getOperand(side).getDefiningOp<LinearOp>();
      Value bias = add->getOperand(1 - side);
      if (!linear || linear.getBias() || !linear->hasOneUse() ||
          add.getType() != linear.getType() ||
          tensorType(bias).getShape() !=
              ArrayRef<int64_t>{linear.getType().getShape().back()})
        continue;
      rewriter.modifyOpInPlace(linear,
                               [&] { linear.getBiasMutable().assign(bias); });
      rewriter.replaceOp(add, linear);
      return success();
    }
    return failure();
  }
};

//===----------------------------------------------------------------------===//
// LayerNorm and RMSNorm
//===----------------------------------------------------------------------===//

/// The first axis of a keepdims reduce_mean over the trailing axes
/// [axis, rank): the statistics of a norm over `axis..`.
std::optional<int64_t> trailingMeanAxis(ReduceMeanOp mean) {
  if (!mean || !mean.getKeepdims())
    return std::nullopt;
  ArrayRef<int64_t> axes = mean.getAxes();
  int64_t rank = tensorType(mean.getInput()).getRank();
  if (axes.empty() || axes.back() != rank - 1)
    return std::nullopt;
  for (size_t i = 1; i < axes.size(); ++i)
    if (axes[i] != axes[i - 1] + 1)
      return std::nullopt;
  return axes.front();
}

/// mean(x²) over trailing axes, the square spelled Pow(x, 2) or Mul(x, x).
/// Returns x and the first reduced axis.
std::optional<std::pair<Value, int64_t>> matchMeanOfSquares(Value v) {
  auto mean = v.getDefiningOp<ReduceMeanOp>();
  std::optional<int64_t> axis = trailingMeanAxis(mean);
  if (!axis)
    return std::nullopt;
  Value sq = mean.getInput(), x;
  if (auto pow = sq.getDefiningOp<PowOp>(); pow && isSplat(pow.getRhs(), 2.0))
    x = pow.getLhs();
  else if (auto mul = sq.getDefiningOp<MulOp>();
           mul && mul.getLhs() == mul.getRhs())
    x = mul.getLhs();
  if (!x || x.getType() != sq.getType())
    return std::nullopt;
  return std::make_pair(x, *axis);
}

/// x - mean(x) over trailing axes. Returns x and the first reduced axis.
/// Exporters compute this twice (once for the variance, once for the
/// numerator), so callers compare what it centres, not the value.
std::optional<std::pair<Value, int64_t>> matchCentred(Value v) {
  auto sub = v.getDefiningOp<SubOp>();
  if (!sub)
    return std::nullopt;
  auto mean = sub.getRhs().getDefiningOp<ReduceMeanOp>();
  std::optional<int64_t> axis = trailingMeanAxis(mean);
  if (!axis || mean.getInput() != sub.getLhs() ||
      sub.getType() != sub.getLhs().getType())
    return std::nullopt;
  return std::make_pair(sub.getLhs(), *axis);
}

/// The input of sqrt(v).
Value sqrtInput(Value v) {
  auto sqrt = v ? v.getDefiningOp<SqrtOp>() : SqrtOp();
  return sqrt ? sqrt.getInput() : Value();
}

/// The input of 1/sqrt(v) spelled Reciprocal(Sqrt(v)), Div(1, Sqrt(v)) or
/// Pow(v, -0.5).
Value rsqrtInput(Value v) {
  if (auto r = v.getDefiningOp<ReciprocalOp>())
    return sqrtInput(r.getInput());
  if (auto d = v.getDefiningOp<DivOp>();
      d && isSplat(d.getLhs(), 1.0) && d.getType() == d.getRhs().getType())
    return sqrtInput(d.getRhs());
  if (auto p = v.getDefiningOp<PowOp>();
      p && isSplat(p.getRhs(), -0.5) && p.getType() == p.getLhs().getType())
    return p.getLhs();
  return {};
}

/// `num / sqrt(var + eps)` or `num * rsqrt(var + eps)` (either operand order).
struct Normalised {
  Value numerator, variance;
  double epsilon;
};
std::optional<Normalised> matchNormalised(Operation *op) {
  Value num, denom;
  if (isa<DivOp>(op)) {
    num = op->getOperand(0);
    denom = sqrtInput(op->getOperand(1));
  } else if (isa<MulOp>(op)) {
    for (int side = 0; side < 2 && !denom; ++side) {
      denom = rsqrtInput(op->getOperand(side));
      num = op->getOperand(1 - side);
    }
  }
  if (!denom || num.getType() != op->getResult(0).getType())
    return std::nullopt;
  auto add = denom.getDefiningOp<AddOp>();
  if (!add)
    return std::nullopt;
  for (int side = 0; side < 2; ++side) {
    Value var = add->getOperand(side);
    std::optional<double> eps = splatValue(add->getOperand(1 - side));
    if (eps && var.getType() == add.getType())
      return Normalised{num, var, *eps};
  }
  return std::nullopt;
}

/// A splat-ones scale for a norm over `x`'s dims from `axis`: the affine part
/// is folded in later by FuseNormAffine when the graph has one.
Value onesScale(PatternRewriter &rewriter, Location loc, Value x,
                int64_t axis) {
  RankedTensorType xt = tensorType(x);
  auto type = RankedTensorType::get(xt.getShape().drop_front(axis),
                                    xt.getElementType());
  Attribute one = rewriter.getFloatAttr(xt.getElementType(), 1.0);
  return arith::ConstantOp::create(rewriter, loc,
                                   DenseElementsAttr::get(type, one));
}

/// (x - mean(x)) / sqrt(mean((x - mean(x))²) + eps), or the same times
/// rsqrt, over trailing axes → layer_norm(x, ones) (affine folded later).
struct FuseLayerNorm : RewritePattern {
  FuseLayerNorm(MLIRContext *ctx, StringRef root)
      : RewritePattern(root, /*benefit=*/2, ctx) {}
  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    std::optional<Normalised> norm = matchNormalised(op);
    if (!norm)
      return failure();
    auto centred = matchCentred(norm->numerator);
    auto squares = matchMeanOfSquares(norm->variance);
    if (!centred || !squares)
      return failure();
    auto centredSq = matchCentred(squares->first);
    if (!centredSq || *centredSq != *centred ||
        squares->second != centred->second)
      return failure();
    auto [x, axis] = *centred;
    LLVM_DEBUG(llvm::dbgs()
               << "nn-fuse: layer_norm at " << op->getLoc() << "\n");
    Value ones = onesScale(rewriter, op->getLoc(), x, axis);
    rewriter.replaceOpWithNewOp<LayerNormOp>(
        op, x.getType(), x, ones, Value(), rewriter.getI64IntegerAttr(axis),
        rewriter.getF32FloatAttr(norm->epsilon));
    return success();
  }
};

/// x / sqrt(mean(x²) + eps), or x times rsqrt of it, over trailing axes →
/// rms_norm(x, ones). Below FuseLayerNorm's benefit: LayerNorm is RMSNorm of
/// a centred input, and the LayerNorm reading is the one to keep.
struct FuseRmsNorm : RewritePattern {
  FuseRmsNorm(MLIRContext *ctx, StringRef root)
      : RewritePattern(root, /*benefit=*/1, ctx) {}
  LogicalResult matchAndRewrite(Operation *op,
                                PatternRewriter &rewriter) const override {
    std::optional<Normalised> norm = matchNormalised(op);
    if (!norm)
      return failure();
    auto squares = matchMeanOfSquares(norm->variance);
    if (!squares || squares->first != norm->numerator)
      return failure();
    auto [x, axis] = *squares;
    LLVM_DEBUG(llvm::dbgs() << "nn-fuse: rms_norm at " << op->getLoc() << "\n");
    Value ones = onesScale(rewriter, op->getLoc(), x, axis);
    rewriter.replaceOpWithNewOp<RmsNormOp>(
        op, x.getType(), x, ones, rewriter.getI64IntegerAttr(axis),
        rewriter.getF32FloatAttr(norm->epsilon));
    return success();
  }
};

/// Whether `p` can be the scale or bias of a norm over `x`'s dims from `axis`:
/// it broadcasts to `x` without varying over the leading dims.
bool isNormParameter(Value p, Value x, int64_t axis) {
  RankedTensorType pt = tensorType(p), xt = tensorType(x);
  auto shape = broadcastShapes(pt.getShape(), xt.getShape());
  if (pt.getElementType() != xt.getElementType() || failed(shape) ||
      *shape != xt.getShape())
    return false;
  ArrayRef<int64_t> dims = pt.getShape();
  while ((int64_t)dims.size() > xt.getRank() - axis && dims.front() == 1)
    dims = dims.drop_front();
  return (int64_t)dims.size() <= xt.getRank() - axis;
}

/// `p` without the leading unit dims the norm ops' verifier rejects.
Value trimNormParameter(PatternRewriter &rewriter, Location loc, Value p,
                        Value x, int64_t axis) {
  RankedTensorType pt = tensorType(p);
  ArrayRef<int64_t> dims = pt.getShape();
  while ((int64_t)dims.size() > tensorType(x).getRank() - axis)
    dims = dims.drop_front();
  if (dims.size() == (size_t)pt.getRank())
    return p;
  return rewriter.createOrFold<ReshapeOp>(
      loc, RankedTensorType::get(dims, pt.getElementType()), p);
}

/// norm(x, ones) * gamma and norm(x, gamma) + beta (either operand order),
/// gamma / beta broadcasting over the normalised dims → the norm's scale and
/// bias. The order matters: a bias is only taken once the scale is in. A norm
/// with several users is copied: GPT-NeoX's parallel residual feeds two
/// LayerNorms of the same input, whose cores CSE merges.
template <typename NormOp, typename BinOp>
struct FuseNormAffine : OpRewritePattern<BinOp> {
  using OpRewritePattern<BinOp>::OpRewritePattern;
  static constexpr bool isScale = std::is_same_v<BinOp, MulOp>;

  LogicalResult matchAndRewrite(BinOp op,
                                PatternRewriter &rewriter) const override {
    for (int side = 0; side < 2; ++side) {
      auto norm = op->getOperand(side).template getDefiningOp<NormOp>();
      Value p = op->getOperand(1 - side);
      if (!norm || op.getType() != norm.getType() || !canTake(norm) ||
          !isNormParameter(p, norm.getInput(), norm.getAxis()))
        continue;
      Value param = trimNormParameter(rewriter, op.getLoc(), p, norm.getInput(),
                                      norm.getAxis());
      auto fused = cast<NormOp>(rewriter.clone(*norm));
      rewriter.modifyOpInPlace(fused, [&] {
        if constexpr (isScale)
          fused.getScaleMutable().assign(param);
        else
          fused.getBiasMutable().assign(param);
      });
      rewriter.replaceOp(op, fused);
      return success();
    }
    return failure();
  }

  static bool canTake(NormOp norm) {
    bool hasBias = false;
    if constexpr (std::is_same_v<NormOp, LayerNormOp>)
      hasBias = (bool)norm.getBias();
    if constexpr (isScale)
      return !hasBias && isSplat(norm.getScale(), 1.0);
    return std::is_same_v<NormOp, LayerNormOp> && !hasBias;
  }
};

//===----------------------------------------------------------------------===//
// GELU and SiLU
//===----------------------------------------------------------------------===//

/// Ops an activation region may contain; the scalar interpreter below knows
/// each of them.
bool isScalarEvaluable(Operation *op) {
  return isa<AddOp, SubOp, MulOp, DivOp, PowOp, SqrtOp, NegOp, ReciprocalOp,
             ExpOp, TanhOp, ErfOp, SigmoidOp>(op);
}

/// Bounds the walks over an activation's region: real forms use < 12 ops.
constexpr unsigned kMaxActivationOps = 24;

/// Evaluates `v` as a scalar function of `x` at `xv`. Fails when `v` depends
/// on anything but `x` and splat constants, or broadcasts (every value on the
/// way has `x`'s type).
std::optional<double> evaluateAt(Value v, Value x, double xv,
                                 DenseMap<Value, double> &memo,
                                 unsigned depth = 0) {
  if (v == x)
    return xv;
  if (std::optional<double> c = splatValue(v))
    return c;
  if (auto it = memo.find(v); it != memo.end())
    return it->second;
  Operation *op = v.getDefiningOp();
  if (!op || depth > kMaxActivationOps || v.getType() != x.getType() ||
      !isScalarEvaluable(op))
    return std::nullopt;
  SmallVector<double, 2> a;
  for (Value operand : op->getOperands()) {
    std::optional<double> r = evaluateAt(operand, x, xv, memo, depth + 1);
    if (!r)
      return std::nullopt;
    a.push_back(*r);
  }
  double r = llvm::TypeSwitch<Operation *, double>(op)
                 .Case([&](AddOp) { return a[0] + a[1]; })
                 .Case([&](SubOp) { return a[0] - a[1]; })
                 .Case([&](MulOp) { return a[0] * a[1]; })
                 .Case([&](DivOp) { return a[0] / a[1]; })
                 .Case([&](PowOp) { return std::pow(a[0], a[1]); })
                 .Case([&](SqrtOp) { return std::sqrt(a[0]); })
                 .Case([&](NegOp) { return -a[0]; })
                 .Case([&](ReciprocalOp) { return 1.0 / a[0]; })
                 .Case([&](ExpOp) { return std::exp(a[0]); })
                 .Case([&](TanhOp) { return std::tanh(a[0]); })
                 .Case([&](ErfOp) { return std::erf(a[0]); })
                 .Case([&](SigmoidOp) { return 1.0 / (1.0 + std::exp(-a[0])); })
                 .Default([](Operation *) { return NAN; });
  memo[v] = r;
  return r;
}

enum class Activation { GeluErf, GeluTanh, Silu };

constexpr double kSqrt2OverPi = 0.7978845608028654;

double referenceActivation(Activation act, double x) {
  switch (act) {
  case Activation::GeluErf:
    return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0)));
  case Activation::GeluTanh:
    return 0.5 * x *
           (1.0 + std::tanh(kSqrt2OverPi * (x + 0.044715 * x * x * x)));
  case Activation::Silu:
    return x / (1.0 + std::exp(-x));
  }
  llvm_unreachable("unknown activation");
}

/// Whether `root`, as a function of `x`, is `act` at a handful of points that
/// separate the erf and tanh GELUs (they differ by > 1e-5 relative there).
bool computesActivation(Value root, Value x, Activation act) {
  for (double xv : {-3.0, -1.5, -0.5, 0.0, 0.3, 1.0, 2.5}) {
    DenseMap<Value, double> memo;
    std::optional<double> got = evaluateAt(root, x, xv, memo);
    double want = referenceActivation(act, xv);
    if (!got || !std::isfinite(*got) ||
        std::abs(*got - want) > 1e-5 * std::abs(want) + 1e-7)
      return false;
  }
  return true;
}

/// Candidates for the input of the elementwise function computing `v`:
/// values every non-constant path into `v` passes through, nearest first.
/// Walks back by expanding the latest-defined open value, so paths that
/// split (x used twice) are followed until they merge again.
SmallVector<Value> activationInputCandidates(Value v) {
  SmallVector<Value> cuts;
  llvm::SetVector<Value> open;
  open.insert(v);
  for (unsigned step = 0; step < kMaxActivationOps && !open.empty(); ++step) {
    if (open.size() == 1)
      cuts.push_back(open.front());
    Operation *latest = nullptr;
    for (Value o : open) {
      Operation *def = o.getDefiningOp();
      if (!def || def->getBlock() != v.getParentBlock())
        continue;
      if (!latest || latest->isBeforeInBlock(def))
        latest = def;
    }
    // Nothing later to expand: the open values can no longer merge.
    if (!latest || !isScalarEvaluable(latest) ||
        latest->getResult(0).getType() != v.getType())
      break;
    open.remove(latest->getResult(0));
    for (Value operand : latest->getOperands())
      if (!splatValue(operand))
        open.insert(operand);
  }
  return cuts;
}

/// GELU (erf or tanh form) and SiLU in any arrangement, anchored on their
/// erf / tanh / sigmoid: e.g. x*0.5*(1+erf(x/√2)), (x*(1+erf(x*0.7071)))*0.5,
/// 0.5*x*(1+tanh(0.79788*(x+0.044715*x³))), x*0.5*(1+tanh(0.79788*x*
/// (1+0.044715*x*x))), x*sigmoid(x). Finds the region's single input x, walks
/// forward through single-use elementwise ops, and fuses at the first value
/// that numerically equals the activation of x.
struct FuseActivation : RewritePattern {
  FuseActivation(MLIRContext *ctx, StringRef anchor, Activation act)
      : RewritePattern(anchor, /*benefit=*/1, ctx), act(act) {}

  LogicalResult matchAndRewrite(Operation *anchor,
                                PatternRewriter &rewriter) const override {
    Type type = anchor->getResult(0).getType();
    for (Value x : activationInputCandidates(anchor->getOperand(0))) {
      if (x.getType() != type)
        continue;
      Value root = anchor->getResult(0);
      for (unsigned step = 0; step < kMaxActivationOps; ++step) {
        if (!root.hasOneUse())
          break;
        Operation *user = *root.getUsers().begin();
        if (!isScalarEvaluable(user) || user->getResult(0).getType() != type)
          break;
        root = user->getResult(0);
        if (computesActivation(root, x, act)) {
          rewrite(root.getDefiningOp(), x, rewriter);
          return success();
        }
      }
    }
    return failure();
  }

  void rewrite(Operation *root, Value x, PatternRewriter &rewriter) const {
    LLVM_DEBUG(llvm::dbgs()
               << "nn-fuse: activation at " << root->getLoc() << "\n");
    Type type = x.getType();
    if (act == Activation::Silu) {
      rewriter.replaceOpWithNewOp<SiluOp>(root, type, x);
      return;
    }
    rewriter.replaceOpWithNewOp<GeluOp>(root, type, x,
                                        act == Activation::GeluTanh
                                            ? GeluApproximation::tanh
                                            : GeluApproximation::none);
  }

  Activation act;
};

//===----------------------------------------------------------------------===//
// Rotary embedding
//===----------------------------------------------------------------------===//

/// `x` when `v` is its lower (x[..., :d/2]) or upper (x[..., d/2:]) half
/// along the last dim, taken by a slice or a two-way split.
Value halfOf(Value v, bool upper) {
  auto half = tensorType(v);
  auto matches = [&](Value x) {
    RankedTensorType xt = tensorType(x);
    int64_t d = xt.getShape().back();
    SmallVector<int64_t> shape(xt.getShape());
    shape.back() = d / 2;
    return d % 2 == 0 && half.getShape() == ArrayRef(shape);
  };
  if (auto slice = v.getDefiningOp<SliceOp>()) {
    Value x = slice.getInput();
    if (!matches(x) ||
        llvm::any_of(slice.getSteps(), [](int64_t s) { return s != 1; }))
      return {};
    ArrayRef<int64_t> starts = slice.getStarts();
    int64_t lastStart = upper ? tensorType(x).getShape().back() / 2 : 0;
    if (starts.back() != lastStart ||
        llvm::any_of(starts.drop_back(), [](int64_t s) { return s != 0; }))
      return {};
    return x;
  }
  if (auto split = v.getDefiningOp<SplitOp>()) {
    Value x = split.getInput();
    if (split.getNumResults() != 2 ||
        (int64_t)split.getAxis() != tensorType(x).getRank() - 1 ||
        !matches(x) || cast<OpResult>(v).getResultNumber() != (upper ? 1u : 0u))
      return {};
    return x;
  }
  return {};
}

/// `-v` spelled Neg(v) or v * -1.
Value negated(Value v) {
  if (auto neg = v.getDefiningOp<NegOp>())
    return neg.getInput();
  if (auto scaled = matchScaled(v.getDefiningOp());
      scaled && scaled->second == -1.0)
    return scaled->first;
  return {};
}

/// `x` when `v` is rotate_half(x) = concat(-x[..., d/2:], x[..., :d/2]) on
/// the last axis.
Value rotateHalfInput(Value v) {
  auto cat = v.getDefiningOp<ConcatOp>();
  if (!cat || cat.getInputs().size() != 2 ||
      (int64_t)cat.getAxis() != cat.getType().getRank() - 1)
    return {};
  Value upper = negated(cat.getInputs()[0]);
  if (!upper)
    return {};
  Value x = halfOf(upper, /*upper=*/true);
  if (!x || halfOf(cat.getInputs()[1], /*upper=*/false) != x ||
      x.getType() != cat.getType())
    return {};
  return x;
}

/// Whether cos / sin table `t` broadcasts to `x` and spans its last dim.
bool isRotaryTable(Value t, Value x) {
  RankedTensorType tt = tensorType(t), xt = tensorType(x);
  auto shape = broadcastShapes(tt.getShape(), xt.getShape());
  return succeeded(shape) && *shape == xt.getShape() && tt.getRank() > 0 &&
         tt.getShape().back() == xt.getShape().back() &&
         tt.getElementType() == xt.getElementType();
}

/// x*cos + rotate_half(x)*sin (any operand order) → rotary(x, cos, sin).
struct FuseRotary : OpRewritePattern<AddOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(AddOp add,
                                PatternRewriter &rewriter) const override {
    for (int side = 0; side < 2; ++side) {
      auto sinTerm = add->getOperand(side).getDefiningOp<MulOp>();
      auto cosTerm = add->getOperand(1 - side).getDefiningOp<MulOp>();
      if (!sinTerm || !cosTerm)
        continue;
      for (int s = 0; s < 2; ++s) {
        Value x = rotateHalfInput(sinTerm->getOperand(s));
        Value sin = sinTerm->getOperand(1 - s);
        Value cos = x ? otherOperand(cosTerm, x) : Value();
        if (!cos || add.getType() != x.getType() ||
            sinTerm.getType() != x.getType() ||
            cosTerm.getType() != x.getType() || !isRotaryTable(cos, x) ||
            !isRotaryTable(sin, x))
          continue;
        LLVM_DEBUG(llvm::dbgs()
                   << "nn-fuse: rotary at " << add.getLoc() << "\n");
        rewriter.replaceOpWithNewOp<RotaryOp>(add, add.getType(), x, cos, sin);
        return success();
      }
    }
    return failure();
  }
};

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

/// Strips splat-constant scalings off `v` into `scale`.
Value stripScaling(Value v, double &scale) {
  while (auto scaled = matchScaled(v.getDefiningOp())) {
    scale *= scaled->second;
    v = scaled->first;
  }
  return v;
}

/// K as [B, Hkv, T, D] from the Kᵀ operand [B, H, D, T] of Q·Kᵀ: strips
/// scalings into `scale` and composes the transposes in between into one
/// (none when they cancel).
Value keyFromTransposed(PatternRewriter &rewriter, Location loc, Value kt,
                        double &scale) {
  // kt = transpose(k, perm); starts as the identity.
  SmallVector<int64_t> perm{0, 1, 2, 3};
  Value k = stripScaling(kt, scale);
  while (auto t = k.getDefiningOp<TransposeOp>()) {
    SmallVector<int64_t> composed;
    for (int64_t p : perm)
      composed.push_back(t.getPerm()[p]);
    perm = composed;
    k = stripScaling(t.getInput(), scale);
  }
  SmallVector<int64_t> toKey{perm[0], perm[1], perm[3], perm[2]};
  if (llvm::equal(toKey, llvm::seq<int64_t>(0, 4)))
    return k;
  ArrayRef<int64_t> ktShape = tensorType(kt).getShape();
  auto type =
      RankedTensorType::get({ktShape[0], ktShape[1], ktShape[3], ktShape[2]},
                            tensorType(kt).getElementType());
  return TransposeOp::create(rewriter, loc, type, k, toKey);
}

/// HF repeat_kv: reshape(expand(reshape(kv, [B, Hkv, 1, T, D]),
/// [B, Hkv, n, T, D]), [B, Hkv*n, T, D]), which repeats each head n times
/// contiguously. Returns the un-repeated shape's source (the [B, Hkv, 1, T, D]
/// value), or null.
Value repeatKVSource(Value v) {
  auto merge = v.getDefiningOp<ReshapeOp>();
  auto expand = merge ? merge.getInput().getDefiningOp<ExpandOp>() : ExpandOp();
  if (!expand)
    return {};
  Value unsq = expand.getInput();
  ArrayRef<int64_t> out = tensorType(v).getShape();
  ArrayRef<int64_t> rep = expand.getType().getShape();
  ArrayRef<int64_t> in = tensorType(unsq).getShape();
  if (out.size() != 4 || rep.size() != 5 || in.size() != 5 ||
      rep[0] != out[0] || rep[1] * rep[2] != out[1] || rep[3] != out[2] ||
      rep[4] != out[3] ||
      in != ArrayRef<int64_t>{rep[0], rep[1], 1, rep[3], rep[4]})
    return {};
  return unsq;
}

/// The [B, Hkv, T, D] tensor behind repeatKVSource's result.
Value unrepeated(PatternRewriter &rewriter, Location loc, Value unsq) {
  ArrayRef<int64_t> s = tensorType(unsq).getShape();
  auto type = RankedTensorType::get({s[0], s[1], s[3], s[4]},
                                    tensorType(unsq).getElementType());
  if (auto r = unsq.getDefiningOp<ReshapeOp>();
      r && r.getInput().getType() == type)
    return r.getInput();
  return ReshapeOp::create(rewriter, loc, type, unsq);
}

/// Bounds the backward walk from a softmax to its Q·Kᵀ product.
constexpr unsigned kMaxModifierValues = 64;

/// Ops a score modifier may contain: elementwise ones, masks broadcasting
/// into the scores. Anything that moves scores between positions (a
/// transpose of square scores, say) would make the modifier more than a
/// per-score function, which sharding over heads and rows relies on.
bool isScoreModifierOp(Operation *op) {
  return op->getNumResults() == 1 && op->getNumRegions() == 0 &&
         isMemoryEffectFree(op) &&
         (op->hasTrait<OpTrait::Elementwise>() ||
          op->hasTrait<OpTrait::ResultsBroadcastableShape>());
}

/// The score modifier between the scaled scores and the softmax: the ops
/// that depend on the scores, and the values they read from outside.
struct ScoreModifier {
  SmallVector<Operation *> ops; // in block order
  SmallVector<Value> leaves;    // operands not computed from the scores
};

/// Collects the modifier from `scores` to `result`. Fails when an op of it is
/// not an elementwise op on the score type, or when a value inside it is used
/// outside (the fused op would not replace it).
FailureOr<ScoreModifier> collectScoreModifier(Value scores, Value result,
                                              Operation *softmax) {
  ScoreModifier mod;
  if (scores == result) {
    if (!scores.hasOneUse())
      return failure();
    return mod;
  }
  Operation *start = scores.getDefiningOp();
  Block *block = start->getBlock();
  DenseMap<Value, bool> memo;
  std::function<bool(Value)> dependsOnScores = [&](Value v) -> bool {
    if (v == scores)
      return true;
    if (auto it = memo.find(v); it != memo.end())
      return it->second;
    Operation *def = v.getDefiningOp();
    bool dep = false;
    if (def && def->getBlock() == block && start->isBeforeInBlock(def))
      dep = llvm::any_of(def->getOperands(), dependsOnScores);
    memo[v] = dep;
    return dep;
  };
  llvm::SetVector<Operation *> ops;
  SmallVector<Value> worklist{result};
  while (!worklist.empty()) {
    Value v = worklist.pop_back_val();
    Operation *def = v.getDefiningOp();
    if (v == scores || !ops.insert(def))
      continue;
    if (!isScoreModifierOp(def) || v.getType() != scores.getType())
      return failure();
    for (Value operand : def->getOperands())
      if (dependsOnScores(operand))
        worklist.push_back(operand);
  }
  auto usedInside = [&](Value v) {
    return llvm::all_of(v.getUsers(), [&](Operation *user) {
      return ops.contains(user) || (v == result && user == softmax);
    });
  };
  if (!usedInside(scores) || !llvm::all_of(ops, [&](Operation *op) {
        return usedInside(op->getResult(0));
      }))
    return failure();
  mod.ops = ops.takeVector();
  llvm::sort(mod.ops,
             [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  // Leaves in the order the modifier reads them: the order of the masks.
  llvm::SetVector<Value> leaves;
  for (Operation *op : mod.ops)
    for (Value operand : op->getOperands())
      if (!dependsOnScores(operand))
        leaves.insert(operand);
  mod.leaves = leaves.takeVector();
  return mod;
}

/// softmax(mod(scale · Q·Kᵀ), last axis) · V on head-split [B, H, S, D]
/// tensors → attention. The scale may be applied to the scores, to Q or to
/// Kᵀ (Megatron divides both by a root of √d); the modifier between the
/// scale and the softmax (additive mask, causal where, Megatron's mask
/// arithmetic …) moves into the op's region with its constants, its other
/// inputs becoming `masks`. K and V repeated by repeat_kv are used
/// un-repeated (grouped-query attention).
struct FuseAttention : OpRewritePattern<MatMulOp> {
  using OpRewritePattern::OpRewritePattern;
  LogicalResult matchAndRewrite(MatMulOp pv,
                                PatternRewriter &rewriter) const override {
    auto softmax = pv.getLhs().getDefiningOp<SoftmaxOp>();
    Value v = pv.getRhs();
    if (!softmax || !softmax->hasOneUse() ||
        (int64_t)softmax.getAxis() != softmax.getType().getRank() - 1)
      return failure();
    // Walk back from the softmax over the modifier to the scaled scores.
    Value probsIn = softmax.getInput();
    MatMulOp qk;
    Value scores;
    double scale = 1.0;
    if (failed(findScores(probsIn, qk, scores, scale)))
      return failure();
    auto scoreType = tensorType(scores);
    if (scoreType.getRank() != 4)
      return failure();
    FailureOr<ScoreModifier> mod =
        collectScoreModifier(scores, probsIn, softmax);
    if (failed(mod))
      return failure();

    Value q = stripScaling(qk.getLhs(), scale);
    ArrayRef<int64_t> qs = tensorType(q).getShape(),
                      kts = tensorType(qk.getRhs()).getShape(),
                      vs = tensorType(v).getShape();
    // No batch broadcasting: every operand is [B, H, …] of the same B and H.
    if (qs.size() != 4 || kts.size() != 4 || vs.size() != 4 ||
        qs.take_front(2) != kts.take_front(2) ||
        qs.take_front(2) != vs.take_front(2) || vs[2] != kts[3])
      return failure();

    Location loc = pv.getLoc();
    LLVM_DEBUG(llvm::dbgs() << "nn-fuse: attention at " << loc << "\n");
    Value k = keyFromTransposed(rewriter, loc, qk.getRhs(), scale);
    // Grouped-query attention: both K and V repeated the same way.
    Value kSrc = repeatKVSource(k), vSrc = repeatKVSource(v);
    if (kSrc && vSrc &&
        tensorType(kSrc).getDimSize(1) == tensorType(vSrc).getDimSize(1)) {
      k = unrepeated(rewriter, loc, kSrc);
      v = unrepeated(rewriter, loc, vSrc);
    }

    SmallVector<Value> masks;
    for (Value leaf : mod->leaves)
      if (!matchPattern(leaf, m_Constant()))
        masks.push_back(leaf);
    auto attention = AttentionOp::create(rewriter, loc, pv.getType(), q, k, v,
                                         masks, (float)scale);
    buildScoreModifier(rewriter, attention, scores, probsIn, *mod, masks);
    rewriter.replaceOp(pv, attention);
    return success();
  }

  /// From the softmax input back to the Q·Kᵀ matmul: the one matmul the
  /// score-typed values feeding the softmax reach (two would be ambiguous).
  /// The scores are its product after single-use scalings, which fold into
  /// `scale`.
  static LogicalResult findScores(Value probsIn, MatMulOp &qk, Value &scores,
                                  double &scale) {
    SmallVector<Value> worklist{probsIn};
    DenseSet<Value> seen;
    while (!worklist.empty()) {
      Value v = worklist.pop_back_val();
      if (v.getType() != probsIn.getType() || !seen.insert(v).second)
        continue;
      Operation *def = v.getDefiningOp();
      if (!def || seen.size() > kMaxModifierValues)
        continue;
      if (auto mm = dyn_cast<MatMulOp>(def)) {
        if (qk && qk != mm)
          return failure();
        qk = mm;
      } else if (isScoreModifierOp(def)) {
        llvm::append_range(worklist, def->getOperands());
      }
    }
    if (!qk)
      return failure();
    scores = qk.getResult();
    while (scores != probsIn && scores.hasOneUse()) {
      Operation *user = *scores.getUsers().begin();
      auto scaled = matchScaled(user);
      if (!scaled || scaled->first != scores)
        break;
      scale *= scaled->second;
      scores = user->getResult(0);
    }
    return success();
  }

  /// Fills the attention's region with clones of the modifier ops; constants
  /// are cloned in (the region is isolated from above), masks map to block
  /// arguments.
  static void buildScoreModifier(PatternRewriter &rewriter,
                                 AttentionOp attention, Value scores,
                                 Value result, const ScoreModifier &mod,
                                 ArrayRef<Value> masks) {
    if (mod.ops.empty())
      return;
    Block &block = attention.getScoreModBlock();
    IRMapping map;
    map.map(scores, block.getArgument(0));
    for (auto [i, m] : llvm::enumerate(masks))
      map.map(m, block.getArgument(i + 1));
    OpBuilder::InsertionGuard guard(rewriter);
    rewriter.eraseOp(block.getTerminator());
    rewriter.setInsertionPointToEnd(&block);
    for (Value leaf : mod.leaves)
      if (!map.contains(leaf))
        rewriter.clone(*leaf.getDefiningOp(), map);
    for (Operation *op : mod.ops)
      rewriter.clone(*op, map);
    YieldOp::create(rewriter, attention.getLoc(), map.lookup(result));
  }
};

//===----------------------------------------------------------------------===//
// Pass
//===----------------------------------------------------------------------===//

struct NNFusePass : parc::nn::impl::NNFuseBase<NNFusePass> {
  void runOnOperation() override {
    MLIRContext *ctx = &getContext();
    RewritePatternSet patterns(ctx);
    patterns.add<FuseMatMulLinear, FuseGemmLinear, FuseLinearBias, FuseRotary,
                 FuseAttention, FuseNormAffine<LayerNormOp, MulOp>,
                 FuseNormAffine<LayerNormOp, AddOp>,
                 FuseNormAffine<RmsNormOp, MulOp>>(ctx);
    for (StringRef root :
         {DivOp::getOperationName(), MulOp::getOperationName()})
      patterns.add<FuseLayerNorm, FuseRmsNorm>(ctx, root);
    patterns.add<FuseActivation>(ctx, ErfOp::getOperationName(),
                                 Activation::GeluErf);
    patterns.add<FuseActivation>(ctx, TanhOp::getOperationName(),
                                 Activation::GeluTanh);
    patterns.add<FuseActivation>(ctx, SigmoidOp::getOperationName(),
                                 Activation::Silu);
    if (failed(applyPatternsGreedily(getOperation(), std::move(patterns))))
      signalPassFailure();
  }
};

} // namespace
