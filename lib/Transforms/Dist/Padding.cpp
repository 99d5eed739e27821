//===- Padding.cpp - zero padding of widths tp does not divide --*- C++ -*-===//
//
// An MLP of hidden width F that tp does not divide is padded to the next
// multiple of tp: zero columns in its column weights, zero bias entries and
// zero rows in its row weight. A padded feature is then 0 through every op
// of the MLP (an activation with act(0) = 0, a product with a zero factor,
// a sum of zeros) and its zero row adds nothing to the row product, so the
// padded MLP computes exactly what the original does and splits evenly.
//
//===----------------------------------------------------------------------===//

#include "Padding.h"
#include "Regions.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/Debug.h"

#include <cstring>

#define DEBUG_TYPE "dist-padding"

using namespace mlir;
namespace nn = parc::nn;
namespace dist = parc::dist;

/// The bytes of an embedded weight, one element for a splat; none when they
/// are not at hand (a resource without its blob) or not whole bytes.
static std::optional<ArrayRef<char>> rawBytes(ElementsAttr value, bool &splat) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getElementTypeBitWidth() % 8)
    return std::nullopt;
  int64_t elem = type.getElementTypeBitWidth() / 8;
  ArrayRef<char> bytes;
  splat = false;
  if (auto res = dyn_cast<DenseResourceElementsAttr>(value)) {
    if (!res.getRawHandle().getBlob())
      return std::nullopt;
    bytes = res.getRawHandle().getBlob()->getData();
  } else if (auto dense = dyn_cast<DenseElementsAttr>(value)) {
    splat = dense.isSplat();
    bytes = dense.getRawData();
  } else {
    return std::nullopt;
  }
  if ((int64_t)bytes.size() != (splat ? 1 : type.getNumElements()) * elem)
    return std::nullopt;
  return bytes;
}

bool dist::canPadWeight(Value v) {
  v = nn::weightSource(v);
  if (v && v.getDefiningOp<nn::ExternalWeightOp>())
    return true;
  bool splat;
  ElementsAttr value = nn::weightElements(v);
  return value && rawBytes(value, splat).has_value();
}

ElementsAttr dist::padAlong(ElementsAttr value, int64_t dim, int64_t pad) {
  auto type = cast<RankedTensorType>(value.getType());
  bool splat;
  std::optional<ArrayRef<char>> raw = rawBytes(value, splat);
  if (!raw)
    return {};
  std::string key = "padded";
  if (auto res = dyn_cast<DenseResourceElementsAttr>(value))
    key = res.getRawHandle().getKey().str() + ".padded";
  // A splat (as in tests) is spelled out: the pad makes it one no more.
  std::vector<char> whole;
  if (splat) {
    for (int64_t i = 0; i < type.getNumElements(); ++i)
      whole.insert(whole.end(), raw->begin(), raw->end());
    raw = ArrayRef<char>(whole);
  }
  ArrayRef<char> bytes = *raw;
  int64_t elem = type.getElementTypeBitWidth() / 8;
  // Rows of `inner` bytes, `outer` of them; each row grows by pad·stride.
  int64_t outer = 1, inner = elem;
  for (int64_t d = 0; d < dim; ++d)
    outer *= type.getDimSize(d);
  for (int64_t d = dim + 1; d < type.getRank(); ++d)
    inner *= type.getDimSize(d);
  int64_t row = type.getDimSize(dim) * inner, padded = (type.getDimSize(dim) + pad) * inner;
  std::vector<char> out(outer * padded, 0);
  for (int64_t o = 0; o < outer; ++o)
    std::memcpy(out.data() + o * padded, bytes.data() + o * row, row);
  SmallVector<int64_t> shape(type.getShape());
  shape[dim] += pad;
  auto blob = HeapAsmResourceBlob::allocateAndCopyWithAlign(out, alignof(uint64_t));
  return DenseResourceElementsAttr::get(RankedTensorType::get(shape, type.getElementType()),
                                        key, std::move(blob));
}

Value dist::padWeight(OpBuilder &b, Value weight, int64_t dim, int64_t pad) {
  if (!canPadWeight(weight))
    return {};
  Value v = nn::weightSource(weight);
  auto type = tensorOf(v);
  SmallVector<int64_t> shape(type.getShape());
  shape[dim] += pad;
  auto padded = RankedTensorType::get(shape, type.getElementType());
  if (auto ext = v.getDefiningOp<nn::ExternalWeightOp>()) {
    SmallVector<int64_t> padding(type.getRank(), 0);
    if (auto old = ext.getPaddingAttr())
      padding.assign(old.asArrayRef().begin(), old.asArrayRef().end());
    padding[dim] += pad;
    return recast(b, weight,
                  nn::ExternalWeightOp::create(
                      b, ext.getLoc(), padded, ext.getNameAttr(),
                      ext.getLocationAttr(), ext.getOffsetAttr(),
                      ext.getLengthAttr(), b.getDenseI64ArrayAttr(padding)));
  }
  ElementsAttr value = padAlong(nn::weightElements(v), dim, pad);
  if (!value)
    return {};
  return recast(b, weight, arith::ConstantOp::create(b, v.getLoc(), value));
}

namespace {

/// The ops of one MLP between its column linears and its row linear.
struct Mlp {
  nn::LinearOp row;
  llvm::SetVector<nn::LinearOp> columns;
  llvm::SetVector<Operation *> ops;
  int64_t width = 0;
};

/// Activations with act(0) = 0: a zero feature stays zero.
bool keepsZero(Operation *op) {
  return isa<nn::GeluOp, nn::ReluOp, nn::SiluOp, nn::TanhOp, nn::ErfOp,
             nn::NegOp, nn::CastOp>(op);
}

/// A constant operand that spans the features (a bias), as opposed to one
/// broadcast along them; only those are padded.
bool spansFeatures(Value c, int64_t width) {
  auto t = dist::tensorOf(c);
  return t.getRank() >= 1 && t.getShape().back() == width;
}

std::optional<Mlp> analyze(nn::LinearOp row) {
  Mlp m;
  m.row = row;
  auto in = dyn_cast<RankedTensorType>(row.getInput().getType());
  if (!in || in.getRank() < 1 || !dist::canPadWeight(row.getWeight()))
    return std::nullopt;
  m.width = in.getShape().back();
  // Every value between the columns and the row holds the features in its
  // last dim: reshapes and transposes (attention heads) are not an MLP.
  auto features = [&](Value v) {
    auto t = dyn_cast<RankedTensorType>(v.getType());
    return t && t.getRank() == in.getRank() && t.getShape().back() == m.width;
  };
  SmallVector<Value> work{row.getInput()};
  llvm::DenseSet<Value> seen;
  while (!work.empty()) {
    Value v = work.pop_back_val();
    if (!seen.insert(v).second)
      continue;
    Operation *def = v.getDefiningOp();
    if (!def || !features(v))
      return std::nullopt;
    if (auto col = dyn_cast<nn::LinearOp>(def)) {
      if (!dist::canPadWeight(col.getWeight()) ||
          (col.getBias() && !dist::canPadWeight(col.getBias())))
        return std::nullopt;
      m.columns.insert(col);
      continue;
    }
    if (!keepsZero(def) &&
        !isa<nn::SigmoidOp, nn::AddOp, nn::SubOp, nn::MulOp>(def))
      return std::nullopt;
    m.ops.insert(def);
    for (Value operand : def->getOperands()) {
      if (!nn::isWeight(operand))
        work.push_back(operand);
      else if (spansFeatures(operand, m.width) && !dist::canPadWeight(operand))
        return std::nullopt;
    }
  }
  // Which values are zero on the padded features, in program order.
  llvm::DenseSet<Value> zero;
  for (nn::LinearOp col : m.columns)
    zero.insert(col.getResult());
  SmallVector<Operation *> ordered(m.ops.begin(), m.ops.end());
  llvm::sort(ordered, [](Operation *a, Operation *b) { return a->isBeforeInBlock(b); });
  for (Operation *op : ordered) {
    // A padded constant is zero there; a broadcast one is not.
    auto isZero = [&](Value v) {
      return zero.contains(v) || (nn::isWeight(v) && spansFeatures(v, m.width));
    };
    bool z;
    if (keepsZero(op))
      z = zero.contains(op->getOperand(0));
    else if (isa<nn::MulOp>(op))
      z = llvm::any_of(op->getOperands(), isZero);
    else if (isa<nn::AddOp, nn::SubOp>(op))
      z = llvm::all_of(op->getOperands(), isZero);
    else
      z = false; // sigmoid(0) = 1/2: only a zero factor makes it zero again
    if (z)
      zero.insert(op->getResult(0));
  }
  if (!zero.contains(row.getInput()))
    return std::nullopt;
  // Padding changes the type of every value in the MLP: none may be read
  // outside it.
  auto inside = [&](Operation *user) { return user == row || m.ops.contains(user); };
  for (nn::LinearOp col : m.columns)
    if (!llvm::all_of(col->getUsers(), inside))
      return std::nullopt;
  for (Operation *op : m.ops)
    if (!llvm::all_of(op->getUsers(), inside))
      return std::nullopt;
  return m;
}

} // namespace

bool dist::isPaddableMlp(nn::LinearOp row) { return analyze(row).has_value(); }

bool dist::padMlpWidth(nn::LinearOp row, int64_t tp) {
  std::optional<Mlp> m = analyze(row);
  if (!m || m->width % tp == 0)
    return false;
  int64_t pad = tp - m->width % tp;
  // Every padded weight first: one whose bytes are not at hand leaves the
  // MLP as it is, and the width a misfit.
  SmallVector<std::pair<OpOperand *, Value>> padded;
  auto add = [&](OpOperand &operand, int64_t dim) {
    OpBuilder b(operand.getOwner());
    Value v = padWeight(b, operand.get(), dim, pad);
    padded.push_back({&operand, v});
    return bool(v);
  };
  bool ok = add(row.getWeightMutable(), row.getTransposeWeight() ? 1 : 0);
  for (nn::LinearOp col : m->columns) {
    ok &= add(col.getWeightMutable(), col.getTransposeWeight() ? 0 : 1);
    if (col.getBias())
      ok &= add(col.getBiasMutable()[0], 0);
  }
  for (Operation *op : m->ops)
    for (OpOperand &operand : op->getOpOperands())
      if (nn::isWeight(operand.get()) && spansFeatures(operand.get(), m->width))
        ok &= add(operand, tensorOf(operand.get()).getRank() - 1);
  // A weight and its casts, once nothing reads them.
  auto eraseDead = [](Value v) {
    while (v && v.use_empty()) {
      Operation *def = v.getDefiningOp();
      v = isa<nn::CastOp>(def) ? def->getOperand(0) : Value();
      def->erase();
    }
  };
  if (!ok) {
    for (auto [operand, value] : padded)
      eraseDead(value);
    return false;
  }
  for (auto [operand, value] : padded) {
    Value old = operand->get();
    operand->set(value);
    eraseDead(old);
  }
  auto grow = [&](Value v) {
    auto t = tensorOf(v);
    SmallVector<int64_t> shape(t.getShape());
    shape.back() += pad;
    v.setType(RankedTensorType::get(shape, t.getElementType()));
  };
  for (nn::LinearOp col : m->columns)
    grow(col.getResult());
  for (Operation *op : m->ops)
    grow(op->getResult(0));
  LLVM_DEBUG(llvm::dbgs() << "dist: padded the MLP of " << nodeOf(row) << " from "
                          << m->width << " to " << m->width + pad << " features\n");
  return true;
}
