//===- NNFolders.cpp - constant folding of nn ops ---------------*- C++ -*-===//
//
// Exporters compute shapes, masks and positions with small subgraphs
// (Shape → Gather → Unsqueeze → Concat → Reshape, Range, ConstantOfShape …).
// The importer builds every op with createOrFold, so these folders are what
// turns such subgraphs into constants; nn-canonicalize runs the same folders
// later. Values are evaluated in double / int64: for f32 and narrower types a
// single +, -, *, / in double rounded once is the correctly rounded result.
// Integer folds never overflow: a result that does not fit the result type
// (INT64_MIN / -1, a wrapping product, an out-of-range float cast) is not
// folded but left to the runtime, so the compiler itself has no UB.
//
//===----------------------------------------------------------------------===//

#include "nn/NNConstants.h"
#include "nn/NNOps.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Matchers.h"
#include "llvm/Support/MathExtras.h"

#include <cmath>
#include <optional>

using namespace mlir;
using namespace parc::nn;

namespace {

/// Constants larger than this stay as they are: folding is for shape
/// arithmetic and masks, not for rewriting weights.
constexpr int64_t kMaxFoldElements = 1 << 16;

/// The bytes a fold may make while a FoldBudget lives (the importer's
/// --max-constant-bytes); thread-local, as MLIR may fold on several threads.
thread_local int64_t budgetBytes = INT64_MAX;

/// Whether a constant of `type` is more than a fold may make.
bool tooBig(RankedTensorType type) {
  int64_t n = type.getNumElements();
  int64_t width = std::max<int64_t>(type.getElementTypeBitWidth() / 8, 1);
  return n > kMaxFoldElements || n > budgetBytes / width;
}

/// A constant's elements as doubles (floats) or int64 (integers and i1).
struct Values {
  RankedTensorType type;
  std::vector<double> f;
  std::vector<int64_t> i;
  bool isFloat() const { return isa<FloatType>(type.getElementType()); }
  double asDouble(int64_t k) const { return isFloat() ? f[k] : (double)i[k]; }
  int64_t asInt(int64_t k) const { return isFloat() ? (int64_t)f[k] : i[k]; }
};

std::optional<Values> read(Attribute attr, int64_t limit = kMaxFoldElements) {
  auto typed = dyn_cast_or_null<ElementsAttr>(attr);
  if (!typed)
    return std::nullopt;
  auto type = dyn_cast<RankedTensorType>(typed.getShapedType());
  if (!type || type.getNumElements() > limit)
    return std::nullopt;
  Values v{type, {}, {}};
  Type et = type.getElementType();
  int64_t n = type.getNumElements();
  if (auto dense = dyn_cast<DenseElementsAttr>(attr)) {
    if (isa<FloatType>(et)) {
      for (APFloat x : dense.getValues<APFloat>())
        v.f.push_back(x.convertToDouble());
    } else if (auto it = dyn_cast<IntegerType>(et)) {
      for (APInt x : dense.getValues<APInt>())
        v.i.push_back(it.getWidth() == 1 || it.isUnsigned() ? x.getZExtValue()
                                                            : x.getSExtValue());
    } else {
      return std::nullopt;
    }
    return v;
  }
  auto resource = dyn_cast<DenseResourceElementsAttr>(attr);
  if (!resource || !resource.getRawHandle().getBlob())
    return std::nullopt;
  ArrayRef<char> bytes = resource.getRawHandle().getBlob()->getData();
  unsigned width = et.getIntOrFloatBitWidth();
  if ((int64_t)bytes.size() < n * (int64_t)std::max(width / 8, 1u))
    return std::nullopt;
  if (et.isF32()) {
    for (int64_t k = 0; k < n; ++k) {
      float x;
      std::memcpy(&x, bytes.data() + 4 * k, 4);
      v.f.push_back(x);
    }
  } else if (et.isF64()) {
    for (int64_t k = 0; k < n; ++k) {
      double x;
      std::memcpy(&x, bytes.data() + 8 * k, 8);
      v.f.push_back(x);
    }
  } else if (et.isInteger(64) || et.isInteger(32) || et.isInteger(8) ||
             et.isInteger(1)) {
    for (int64_t k = 0; k < n; ++k) {
      int64_t x = 0;
      if (width == 64)
        std::memcpy(&x, bytes.data() + 8 * k, 8);
      else if (width == 32)
        x = *reinterpret_cast<const int32_t *>(bytes.data() + 4 * k);
      else if (width == 8)
        x = et.isUnsignedInteger() ? (uint8_t)bytes[k] : (int8_t)bytes[k];
      else
        x = bytes[k] != 0;
      v.i.push_back(x);
    }
  } else {
    return std::nullopt;
  }
  return v;
}

/// Whether `v` is a value of integer type `et` (i1 holds any truth value).
bool fitsIn(int64_t v, Type et) {
  auto it = dyn_cast<IntegerType>(et);
  if (!it || it.getWidth() == 1 || it.getWidth() >= 64)
    return it && (it.getWidth() != 64 || !it.isUnsigned() || v >= 0);
  unsigned w = it.getWidth();
  if (it.isUnsigned())
    return v >= 0 && v < (int64_t(1) << w);
  return v >= -(int64_t(1) << (w - 1)) && v < (int64_t(1) << (w - 1));
}

/// `x` truncated to an integer of type `et`, or nullopt when it is NaN,
/// infinite or out of range (a C++ cast would be UB).
std::optional<int64_t> floatToInt(double x, Type et) {
  double t = std::trunc(x);
  // 2^63 is exact as a double; anything at or past it does not convert.
  if (!std::isfinite(t) || t < -0x1p63 || t >= 0x1p63)
    return std::nullopt;
  int64_t v = (int64_t)t;
  if (!fitsIn(v, et))
    return std::nullopt;
  return v;
}

/// Builds a DenseElementsAttr of `type` from doubles or int64s.
Attribute makeConstant(RankedTensorType type, ArrayRef<double> f, ArrayRef<int64_t> i) {
  if (tooBig(type))
    return {};
  Type et = type.getElementType();
  int64_t n = type.getNumElements();
  if (auto ft = dyn_cast<FloatType>(et)) {
    SmallVector<APFloat> out;
    for (int64_t k = 0; k < n; ++k) {
      APFloat x(f.empty() ? (double)i[k] : f[k]);
      bool lost;
      x.convert(ft.getFloatSemantics(), APFloat::rmNearestTiesToEven, &lost);
      out.push_back(x);
    }
    return DenseElementsAttr::get(type, out);
  }
  auto it = dyn_cast<IntegerType>(et);
  if (!it)
    return {};
  SmallVector<APInt> out;
  for (int64_t k = 0; k < n; ++k) {
    if (it.getWidth() == 1) {
      out.push_back(APInt(1, f.empty() ? i[k] != 0 : f[k] != 0.0));
      continue;
    }
    std::optional<int64_t> x = f.empty() ? i[k] : floatToInt(f[k], it);
    if (!x)
      return {};
    out.push_back(APInt(it.getWidth(), (uint64_t)*x, /*isSigned=*/true,
                        /*implicitTrunc=*/true));
  }
  return DenseElementsAttr::get(type, out);
}

/// Row-major strides of a shape.
SmallVector<int64_t> strides(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> s(shape.size(), 1);
  for (int64_t d = (int64_t)shape.size() - 2; d >= 0; --d)
    s[d] = s[d + 1] * shape[d + 1];
  return s;
}

/// For every element of `out`, the linear index of the element of `in` that
/// numpy broadcasting reads.
SmallVector<int64_t> broadcastIndex(ArrayRef<int64_t> in, ArrayRef<int64_t> out) {
  SmallVector<int64_t> inStrides = strides(in), outStrides = strides(out);
  int64_t n = 1;
  for (int64_t d : out)
    n *= d;
  SmallVector<int64_t> idx(n);
  size_t lead = out.size() - in.size();
  for (int64_t k = 0; k < n; ++k) {
    int64_t rem = k, src = 0;
    for (size_t d = 0; d < out.size(); ++d) {
      int64_t c = rem / outStrides[d];
      rem %= outStrides[d];
      if (d >= lead && in[d - lead] != 1)
        src += c * inStrides[d - lead];
    }
    idx[k] = src;
  }
  return idx;
}

/// Folds `lhs op rhs` with broadcasting when both are constants.
template <typename FloatFn, typename IntFn>
Attribute foldBinary(Operation *op, ArrayRef<Attribute> operands, FloatFn ff,
                     IntFn fi) {
  auto out = cast<RankedTensorType>(op->getResult(0).getType());
  auto l = read(operands[0]), r = read(operands[1]);
  if (!l || !r || tooBig(out))
    return {};
  auto li = broadcastIndex(l->type.getShape(), out.getShape());
  auto ri = broadcastIndex(r->type.getShape(), out.getShape());
  bool predicate = out.getElementType().isInteger(1) &&
                   !l->type.getElementType().isInteger(1);
  bool isFloat = l->isFloat() || r->isFloat();
  std::vector<double> f;
  std::vector<int64_t> i;
  for (int64_t k = 0, n = out.getNumElements(); k < n; ++k) {
    if (isFloat) {
      double v = ff(l->asDouble(li[k]), r->asDouble(ri[k]));
      if (predicate)
        i.push_back(v != 0.0);
      else
        f.push_back(v);
    } else {
      std::optional<int64_t> v = fi(l->i[li[k]], r->i[ri[k]]);
      if (!v || (!predicate && !fitsIn(*v, out.getElementType())))
        return {};
      i.push_back(*v);
    }
  }
  return makeConstant(out, f, i);
}

bool isSplatOf(Attribute attr, double value) {
  auto v = read(attr);
  if (!v)
    return false;
  for (int64_t k = 0, n = v->type.getNumElements(); k < n; ++k)
    if (v->asDouble(k) != value)
      return false;
  return true;
}

/// `x op c` is `x` when c is the identity and the result type is x's.
OpFoldResult foldIdentityRhs(Operation *op, ArrayRef<Attribute> operands,
                             double identity) {
  Value lhs = op->getOperand(0);
  if (lhs.getType() == op->getResult(0).getType() && operands[1] &&
      isSplatOf(operands[1], identity))
    return lhs;
  return {};
}

} // namespace

std::optional<std::vector<double>> parc::nn::constantValues(Attribute attr,
                                                            int64_t limit) {
  std::optional<Values> v = read(attr, limit);
  if (!v)
    return std::nullopt;
  if (v->isFloat())
    return std::move(v->f);
  return std::vector<double>(v->i.begin(), v->i.end());
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

OpFoldResult AddOp::fold(FoldAdaptor adaptor) {
  if (auto r = foldIdentityRhs(*this, adaptor.getOperands(), 0.0))
    return r;
  return foldBinary(
      *this, adaptor.getOperands(), [](double a, double b) { return a + b; },
      [](int64_t a, int64_t b) -> std::optional<int64_t> {
        int64_t r;
        if (llvm::AddOverflow(a, b, r))
          return std::nullopt;
        return r;
      });
}

OpFoldResult SubOp::fold(FoldAdaptor adaptor) {
  if (auto r = foldIdentityRhs(*this, adaptor.getOperands(), 0.0))
    return r;
  return foldBinary(
      *this, adaptor.getOperands(), [](double a, double b) { return a - b; },
      [](int64_t a, int64_t b) -> std::optional<int64_t> {
        int64_t r;
        if (llvm::SubOverflow(a, b, r))
          return std::nullopt;
        return r;
      });
}

OpFoldResult MulOp::fold(FoldAdaptor adaptor) {
  if (auto r = foldIdentityRhs(*this, adaptor.getOperands(), 1.0))
    return r;
  return foldBinary(
      *this, adaptor.getOperands(), [](double a, double b) { return a * b; },
      [](int64_t a, int64_t b) -> std::optional<int64_t> {
        int64_t r;
        if (llvm::MulOverflow(a, b, r))
          return std::nullopt;
        return r;
      });
}

OpFoldResult DivOp::fold(FoldAdaptor adaptor) {
  if (auto r = foldIdentityRhs(*this, adaptor.getOperands(), 1.0))
    return r;
  // Integer division truncates toward zero, as ONNX (and C) define it.
  return foldBinary(
      *this, adaptor.getOperands(), [](double a, double b) { return a / b; },
      [](int64_t a, int64_t b) -> std::optional<int64_t> {
        if (b == 0 || (a == INT64_MIN && b == -1))
          return std::nullopt;
        return a / b;
      });
}

OpFoldResult PowOp::fold(FoldAdaptor adaptor) {
  return foldBinary(
      *this, adaptor.getOperands(),
      [](double a, double b) { return std::pow(a, b); },
      [](int64_t a, int64_t b) -> std::optional<int64_t> {
        if (b < 0)
          return std::nullopt;
        // Square and multiply: at most 2 * 63 products, each checked.
        int64_t r = 1;
        for (int64_t base = a; b; b >>= 1) {
          if ((b & 1) && llvm::MulOverflow(r, base, r))
            return std::nullopt;
          if (b > 1 && llvm::MulOverflow(base, base, base))
            return std::nullopt;
        }
        return r;
      });
}

#define NN_FOLD_BINARY(OP, EXPR)                                               \
  OpFoldResult OP::fold(FoldAdaptor adaptor) {                                 \
    return foldBinary(                                                         \
        *this, adaptor.getOperands(),                                          \
        [](double a, double b) -> double { return EXPR; },                     \
        [](int64_t a, int64_t b) -> std::optional<int64_t> { return EXPR; });  \
  }
NN_FOLD_BINARY(MinOp, a < b ? a : b)
NN_FOLD_BINARY(MaxOp, a > b ? a : b)
NN_FOLD_BINARY(EqualOp, a == b)
NN_FOLD_BINARY(LessOp, a < b)
NN_FOLD_BINARY(GreaterOp, a > b)
NN_FOLD_BINARY(AndOp, a && b)
NN_FOLD_BINARY(OrOp, a || b)
#undef NN_FOLD_BINARY

OpFoldResult NegOp::fold(FoldAdaptor adaptor) {
  auto v = read(adaptor.getInput());
  if (!v)
    return {};
  for (double &x : v->f)
    x = -x;
  for (int64_t &x : v->i) {
    if (x == INT64_MIN || !fitsIn(-x, getType().getElementType()))
      return {};
    x = -x;
  }
  return makeConstant(getType(), v->f, v->i);
}

OpFoldResult WhereOp::fold(FoldAdaptor adaptor) {
  auto c = read(adaptor.getCondition()), l = read(adaptor.getLhs()),
       r = read(adaptor.getRhs());
  auto out = getType();
  if (!c || !l || !r || tooBig(out))
    return {};
  auto ci = broadcastIndex(c->type.getShape(), out.getShape());
  auto li = broadcastIndex(l->type.getShape(), out.getShape());
  auto ri = broadcastIndex(r->type.getShape(), out.getShape());
  std::vector<double> f;
  std::vector<int64_t> i;
  for (int64_t k = 0; k < out.getNumElements(); ++k) {
    const Values &src = c->i[ci[k]] ? *l : *r;
    int64_t at = c->i[ci[k]] ? li[k] : ri[k];
    if (src.isFloat())
      f.push_back(src.f[at]);
    else
      i.push_back(src.i[at]);
  }
  return makeConstant(out, f, i);
}

OpFoldResult CastOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  // A model initializer (a blob) cast to the compute dtype stays a cast: its
  // shards keep the stored dtype instead of an f32 copy of twice the bytes.
  if (isa_and_nonnull<DenseResourceElementsAttr>(adaptor.getInput()))
    return {};
  auto v = read(adaptor.getInput());
  if (!v)
    return {};
  bool toFloat = isa<FloatType>(getType().getElementType());
  std::vector<double> f;
  std::vector<int64_t> i;
  for (int64_t k = 0, n = getType().getNumElements(); k < n; ++k) {
    Type et = getType().getElementType();
    if (toFloat) {
      f.push_back(v->asDouble(k));
    } else if (et.isInteger(1)) {
      i.push_back(v->asDouble(k) != 0.0);
    } else if (v->isFloat()) {
      std::optional<int64_t> x = floatToInt(v->f[k], et);
      if (!x)
        return {};
      i.push_back(*x);
    } else {
      i.push_back(v->i[k]); // integer narrowing wraps, as ONNX Cast does
    }
  }
  return makeConstant(getType(), f, i);
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

OpFoldResult ReshapeOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  // reshape(reshape(x)) == reshape(x): element order never changes.
  if (auto inner = getInput().getDefiningOp<ReshapeOp>()) {
    getInputMutable().assign(inner.getInput());
    return getResult();
  }
  if (auto dense = dyn_cast_or_null<DenseElementsAttr>(adaptor.getInput());
      dense && (dense.isSplat() || !tooBig(getType())))
    return dense.reshape(getType());
  return {};
}

/// Gathers `input` elements into `outType`, `src(outIndex)` naming the input
/// linear index of each output element.
static Attribute permuteConstant(const Values &in, RankedTensorType outType,
                                 llvm::function_ref<int64_t(int64_t)> src) {
  std::vector<double> f;
  std::vector<int64_t> i;
  for (int64_t k = 0, n = outType.getNumElements(); k < n; ++k) {
    if (in.isFloat())
      f.push_back(in.f[src(k)]);
    else
      i.push_back(in.i[src(k)]);
  }
  return makeConstant(outType, f, i);
}

/// Multi-index of linear index `k` in `shape`.
static SmallVector<int64_t> unflatten(int64_t k, ArrayRef<int64_t> shape) {
  SmallVector<int64_t> idx(shape.size());
  for (int64_t d = (int64_t)shape.size() - 1; d >= 0; --d) {
    idx[d] = shape[d] ? k % shape[d] : 0;
    k = shape[d] ? k / shape[d] : 0;
  }
  return idx;
}

OpFoldResult TransposeOp::fold(FoldAdaptor adaptor) {
  ArrayRef<int64_t> perm = getPerm();
  if (llvm::equal(perm, llvm::seq<int64_t>(0, perm.size())))
    return getInput();
  // transpose(transpose(x, p), q) == transpose(x, p∘q).
  if (auto inner = getInput().getDefiningOp<TransposeOp>()) {
    SmallVector<int64_t> composed;
    for (int64_t p : perm)
      composed.push_back(inner.getPerm()[p]);
    getInputMutable().assign(inner.getInput());
    setPerm(composed);
    return getResult();
  }
  // A weight blob stays a blob: folding would inline a transposed copy (and
  // unshare a tied embedding); nn-fuse reads transpose(W) as a linear layer's
  // [out, in] weight instead.
  if (isa_and_nonnull<DenseResourceElementsAttr>(adaptor.getInput()))
    return {};
  auto v = read(adaptor.getInput());
  if (!v)
    return {};
  auto inStrides = strides(v->type.getShape());
  auto outShape = getType().getShape();
  return permuteConstant(*v, getType(), [&](int64_t k) {
    auto idx = unflatten(k, outShape);
    int64_t src = 0;
    for (size_t d = 0; d < perm.size(); ++d)
      src += idx[d] * inStrides[perm[d]];
    return src;
  });
}

/// The input linear index that output element `k` of `slice` reads.
static auto sliceSource(SliceOp slice) {
  return [slice, inStrides = strides(slice.getInput().getType().getShape())](
             int64_t k) mutable {
    auto idx = unflatten(k, slice.getType().getShape());
    int64_t src = 0;
    for (size_t d = 0; d < idx.size(); ++d)
      src += (slice.getStarts()[d] + idx[d] * slice.getSteps()[d]) *
             inStrides[d];
    return src;
  };
}

OpFoldResult SliceOp::fold(FoldAdaptor adaptor) {
  bool whole = getInput().getType() == getType() &&
               llvm::all_of(getStarts(), [](int64_t s) { return s == 0; }) &&
               llvm::all_of(getSteps(), [](int64_t s) { return s == 1; });
  if (whole)
    return getInput();
  auto v = read(adaptor.getInput(), /*limit=*/1 << 24);
  if (!v || tooBig(getType()))
    return {};
  return permuteConstant(*v, getType(), sliceSource(*this));
}

std::optional<std::vector<double>> parc::nn::constantValuesOf(Value v,
                                                              int64_t limit) {
  Attribute attr;
  if (matchPattern(v, m_Constant(&attr)))
    return constantValues(attr, limit);
  auto slice = v.getDefiningOp<SliceOp>();
  if (!slice || slice.getType().getNumElements() > limit)
    return std::nullopt;
  std::optional<std::vector<double>> in =
      constantValuesOf(slice.getInput(), limit);
  if (!in)
    return std::nullopt;
  auto src = sliceSource(slice);
  std::vector<double> out(size_t(slice.getType().getNumElements()));
  for (size_t k = 0; k < out.size(); ++k)
    out[k] = (*in)[src(int64_t(k))];
  return out;
}

OpFoldResult ExpandOp::fold(FoldAdaptor adaptor) {
  if (getInput().getType() == getType())
    return getInput();
  auto v = read(adaptor.getInput());
  if (!v || tooBig(getType()))
    return {};
  auto idx = broadcastIndex(v->type.getShape(), getType().getShape());
  return permuteConstant(*v, getType(), [&](int64_t k) { return idx[k]; });
}

OpFoldResult GatherOp::fold(FoldAdaptor adaptor) {
  // A lookup in a float weight blob (an embedding table read at constant
  // positions) stays a lookup: folding would print the rows inline.
  if (isa_and_nonnull<DenseResourceElementsAttr>(adaptor.getData()) &&
      isa<FloatType>(getType().getElementType()))
    return {};
  auto data = read(adaptor.getData(), /*limit=*/1 << 24);
  auto indices = read(adaptor.getIndices());
  if (!data || !indices || tooBig(getType()))
    return {};
  ArrayRef<int64_t> dataShape = data->type.getShape();
  int64_t axis = getAxis(), axisSize = dataShape[axis];
  int64_t inner = 1;
  for (int64_t d = axis + 1; d < (int64_t)dataShape.size(); ++d)
    inner *= dataShape[d];
  int64_t numIdx = indices->type.getNumElements();
  for (int64_t k = 0; k < numIdx; ++k)
    if (indices->i[k] < -axisSize || indices->i[k] >= axisSize)
      return {}; // out of range: left for the verifier-free runtime check
  return permuteConstant(*data, getType(), [&](int64_t k) {
    int64_t in = k % inner, rest = k / inner;
    int64_t j = rest % numIdx, o = rest / numIdx;
    int64_t at = indices->i[j] < 0 ? indices->i[j] + axisSize : indices->i[j];
    return (o * axisSize + at) * inner + in;
  });
}

OpFoldResult ConcatOp::fold(FoldAdaptor adaptor) {
  if (getInputs().size() == 1 && getInputs()[0].getType() == getType())
    return getInputs()[0];
  SmallVector<Values> parts;
  for (Attribute a : adaptor.getInputs()) {
    auto v = read(a);
    if (!v)
      return {};
    parts.push_back(std::move(*v));
  }
  if (tooBig(getType()))
    return {};
  int64_t axis = getAxis();
  ArrayRef<int64_t> shape = getType().getShape();
  int64_t inner = 1;
  for (int64_t d = axis + 1; d < (int64_t)shape.size(); ++d)
    inner *= shape[d];
  std::vector<double> f;
  std::vector<int64_t> i;
  int64_t outer = getType().getNumElements() / (shape[axis] * inner);
  for (int64_t o = 0; o < outer; ++o)
    for (const Values &p : parts) {
      int64_t chunk = p.type.getDimSize(axis) * inner;
      for (int64_t k = o * chunk; k < (o + 1) * chunk; ++k) {
        if (isa<FloatType>(getType().getElementType()))
          f.push_back(p.asDouble(k));
        else
          i.push_back(p.asInt(k));
      }
    }
  return makeConstant(getType(), f, i);
}

LogicalResult SplitOp::fold(FoldAdaptor adaptor,
                            SmallVectorImpl<OpFoldResult> &results) {
  auto v = read(adaptor.getInput(), /*limit=*/1 << 24);
  if (!v)
    return failure();
  int64_t axis = getAxis(), offset = 0;
  auto inStrides = strides(v->type.getShape());
  SmallVector<Attribute> pieces;
  for (Value out : getOutputs()) {
    auto type = cast<RankedTensorType>(out.getType());
    auto outShape = type.getShape();
    Attribute piece = permuteConstant(*v, type, [&](int64_t k) {
      auto idx = unflatten(k, outShape);
      idx[axis] += offset;
      int64_t src = 0;
      for (size_t d = 0; d < idx.size(); ++d)
        src += idx[d] * inStrides[d];
      return src;
    });
    if (!piece)
      return failure();
    pieces.push_back(piece);
    offset += type.getDimSize(axis);
  }
  results.append(pieces.begin(), pieces.end());
  return success();
}

//===----------------------------------------------------------------------===//
// Elementwise functions and reductions
//===----------------------------------------------------------------------===//

/// Folds `fn` over a float constant, computed in double and rounded once.
static OpFoldResult foldFloatFn(Operation *op, Attribute input,
                                llvm::function_ref<double(double)> fn) {
  auto v = read(input);
  if (!v || !v->isFloat())
    return {};
  for (double &x : v->f)
    x = fn(x);
  return makeConstant(cast<RankedTensorType>(op->getResult(0).getType()), v->f,
                      {});
}

#define NN_FOLD_FLOAT_FN(OP, EXPR)                                             \
  OpFoldResult OP::fold(FoldAdaptor adaptor) {                                 \
    return foldFloatFn(*this, adaptor.getInput(),                              \
                       [](double x) -> double { return EXPR; });               \
  }
NN_FOLD_FLOAT_FN(ExpOp, std::exp(x))
NN_FOLD_FLOAT_FN(LogOp, std::log(x))
NN_FOLD_FLOAT_FN(SqrtOp, std::sqrt(x))
NN_FOLD_FLOAT_FN(ReciprocalOp, 1.0 / x)
NN_FOLD_FLOAT_FN(TanhOp, std::tanh(x))
NN_FOLD_FLOAT_FN(ErfOp, std::erf(x))
NN_FOLD_FLOAT_FN(SigmoidOp, 1.0 / (1.0 + std::exp(-x)))
NN_FOLD_FLOAT_FN(SiluOp, x / (1.0 + std::exp(-x)))
#undef NN_FOLD_FLOAT_FN

OpFoldResult GeluOp::fold(FoldAdaptor adaptor) {
  bool tanhForm = getApproximation() == GeluApproximation::tanh;
  return foldFloatFn(*this, adaptor.getInput(), [&](double x) {
    if (tanhForm)
      return 0.5 * x *
             (1 + std::tanh(std::sqrt(2 / M_PI) * (x + 0.044715 * x * x * x)));
    return 0.5 * x * (1 + std::erf(x / std::sqrt(2.0)));
  });
}

OpFoldResult ReluOp::fold(FoldAdaptor adaptor) {
  auto v = read(adaptor.getInput());
  if (!v)
    return {};
  for (double &x : v->f)
    x = x > 0 ? x : 0.0;
  for (int64_t &x : v->i)
    x = std::max<int64_t>(x, 0);
  return makeConstant(getType(), v->f, v->i);
}

OpFoldResult NotOp::fold(FoldAdaptor adaptor) {
  auto v = read(adaptor.getInput());
  if (!v || v->isFloat())
    return {};
  for (int64_t &x : v->i)
    x = !x;
  return makeConstant(getType(), {}, v->i);
}

namespace {
enum class Reduction { sum, mean, max, min, prod };

/// Folds a reduction of a constant over `axes`. Integers accumulate in
/// int64 with overflow checks (an overflowing product is not folded);
/// floats in double. An empty reduction is the identity where ONNX defines
/// one (0 for sum, 1 for prod, ±inf for float max/min), else not folded.
Attribute foldReduce(Operation *op, Attribute input, ArrayRef<int64_t> axes,
                     Reduction kind) {
  auto v = read(input);
  auto out = cast<RankedTensorType>(op->getResult(0).getType());
  if (!v || tooBig(out))
    return {};
  ArrayRef<int64_t> shape = v->type.getShape();
  // The output index of each input element: reduced dims count as size 1.
  SmallVector<int64_t> kept(shape);
  int64_t group = 1;
  for (int64_t a : axes) {
    kept[a] = 1;
    group *= shape[a];
  }
  SmallVector<int64_t> keptStrides = strides(kept);
  int64_t n = out.getNumElements();
  bool isFloat = v->isFloat();
  if (group == 0 &&
      (kind == Reduction::mean ||
       (!isFloat && (kind == Reduction::max || kind == Reduction::min))))
    return {};
  double fInit = kind == Reduction::prod  ? 1.0
                 : kind == Reduction::max ? -INFINITY
                 : kind == Reduction::min ? INFINITY
                                          : 0.0;
  std::vector<double> f(isFloat ? n : 0, fInit);
  std::vector<int64_t> i(isFloat ? 0 : n, kind == Reduction::prod ? 1 : 0);
  std::vector<bool> seen(n, false);
  for (int64_t k = 0, total = v->type.getNumElements(); k < total; ++k) {
    SmallVector<int64_t> idx = unflatten(k, shape);
    int64_t o = 0;
    for (size_t d = 0; d < idx.size(); ++d)
      o += (kept[d] == 1 ? 0 : idx[d]) * keptStrides[d];
    if (isFloat) {
      double x = v->f[k], &acc = f[o];
      acc = kind == Reduction::max    ? std::max(acc, x)
            : kind == Reduction::min  ? std::min(acc, x)
            : kind == Reduction::prod ? acc * x
                                      : acc + x;
      continue;
    }
    int64_t x = v->i[k], &acc = i[o];
    bool first = !seen[o];
    seen[o] = true;
    bool overflow = false;
    if (kind == Reduction::max)
      acc = first ? x : std::max(acc, x);
    else if (kind == Reduction::min)
      acc = first ? x : std::min(acc, x);
    else if (kind == Reduction::prod)
      overflow = llvm::MulOverflow(acc, x, acc);
    else
      overflow = llvm::AddOverflow(acc, x, acc);
    if (overflow)
      return {};
  }
  for (double &x : f)
    if (kind == Reduction::mean)
      x /= group;
  if (!isFloat && kind == Reduction::mean)
    return {}; // ONNX leaves integer means to the kernel's rounding
  for (int64_t x : i)
    if (!fitsIn(x, out.getElementType()))
      return {};
  return makeConstant(out, f, i);
}
} // namespace

#define NN_FOLD_REDUCE(OP, KIND)                                               \
  OpFoldResult OP::fold(FoldAdaptor adaptor) {                                 \
    return foldReduce(*this, adaptor.getInput(), getAxes(), Reduction::KIND);  \
  }
NN_FOLD_REDUCE(ReduceSumOp, sum)
NN_FOLD_REDUCE(ReduceMeanOp, mean)
NN_FOLD_REDUCE(ReduceMaxOp, max)
NN_FOLD_REDUCE(ReduceMinOp, min)
NN_FOLD_REDUCE(ReduceProdOp, prod)
#undef NN_FOLD_REDUCE

//===----------------------------------------------------------------------===//
// The import budget
//===----------------------------------------------------------------------===//

FoldBudget::FoldBudget(int64_t maxBytes) : saved(budgetBytes) {
  budgetBytes = std::min(budgetBytes, maxBytes);
}

FoldBudget::~FoldBudget() { budgetBytes = saved; }
