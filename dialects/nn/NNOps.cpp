//===- NNOps.cpp - verifiers and builders of the nn ops ---------*- C++ -*-===//
//
// Traits check ranks and element kinds; the verifiers here check the shape
// arithmetic ONNX defines for each op, so that a malformed op is caught where
// it is created rather than when a later pass trusts its types.
//
//===----------------------------------------------------------------------===//

#include "nn/NNOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "llvm/Support/Path.h"

#include "mlir/IR/OpImplementation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"

using namespace mlir;
using namespace parc::nn;

namespace {

RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}

std::string shapeStr(ArrayRef<int64_t> shape) {
  std::string s = "[";
  llvm::raw_string_ostream os(s);
  llvm::interleave(shape, os, "x");
  os << "]";
  return s;
}

/// Checks `axis` lies in [0, rank).
LogicalResult verifyAxis(Operation *op, int64_t axis, int64_t rank,
                         StringRef what = "axis") {
  if (axis < 0 || axis >= rank)
    return op->emitOpError() << what << " " << axis << " is out of range for rank "
                             << rank;
  return success();
}

} // namespace

FailureOr<SmallVector<int64_t>>
parc::nn::broadcastShapes(ArrayRef<int64_t> lhs, ArrayRef<int64_t> rhs) {
  size_t rank = std::max(lhs.size(), rhs.size());
  SmallVector<int64_t> out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t l = i < rank - lhs.size() ? 1 : lhs[i - (rank - lhs.size())];
    int64_t r = i < rank - rhs.size() ? 1 : rhs[i - (rank - rhs.size())];
    if (l != r && l != 1 && r != 1)
      return failure();
    out[i] = l == 1 ? r : l;
  }
  return out;
}

FailureOr<SmallVector<int64_t>>
parc::nn::matmulShape(ArrayRef<int64_t> lhs, ArrayRef<int64_t> rhs) {
  if (lhs.empty() || rhs.empty())
    return failure();
  SmallVector<int64_t> a(lhs), b(rhs);
  bool dropM = a.size() == 1, dropN = b.size() == 1;
  if (dropM)
    a.insert(a.begin(), 1);
  if (dropN)
    b.push_back(1);
  if (a.back() != b[b.size() - 2])
    return failure();
  auto batch = broadcastShapes(ArrayRef(a).drop_back(2), ArrayRef(b).drop_back(2));
  if (failed(batch))
    return failure();
  SmallVector<int64_t> out = *batch;
  if (!dropM)
    out.push_back(a[a.size() - 2]);
  if (!dropN)
    out.push_back(b.back());
  return out;
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

/// Binary ops: broadcasting is checked by ResultsBroadcastableShape; element
/// types by kind (comparisons and logic produce i1, arithmetic keeps the
/// operand type; Pow's exponent may have its own type).
static LogicalResult verifyBinary(Operation *op) {
  Type l = tensorType(op->getOperand(0)).getElementType();
  Type r = tensorType(op->getOperand(1)).getElementType();
  Type out = tensorType(op->getResult(0)).getElementType();
  auto result = broadcastShapes(tensorType(op->getOperand(0)).getShape(),
                                tensorType(op->getOperand(1)).getShape());
  if (failed(result) || *result != tensorType(op->getResult(0)).getShape())
    return op->emitOpError("result shape must be the broadcast of the operand shapes");
  bool isPow = isa<PowOp>(op);
  if (!isPow && l != r)
    return op->emitOpError() << "operand element types differ: " << l << " vs " << r;
  bool predicate = isa<EqualOp, LessOp, GreaterOp, AndOp, OrOp>(op);
  Type expected = predicate ? IntegerType::get(op->getContext(), 1) : l;
  if (out != expected)
    return op->emitOpError() << "result element type must be " << expected;
  if (isa<AndOp, OrOp>(op) && !l.isInteger(1))
    return op->emitOpError("operands must be i1 tensors");
  return success();
}

#define NN_BINARY_VERIFIER(OP)                                                 \
  LogicalResult OP::verify() { return verifyBinary(getOperation()); }
NN_BINARY_VERIFIER(AddOp)
NN_BINARY_VERIFIER(SubOp)
NN_BINARY_VERIFIER(MulOp)
NN_BINARY_VERIFIER(DivOp)
NN_BINARY_VERIFIER(PowOp)
NN_BINARY_VERIFIER(MinOp)
NN_BINARY_VERIFIER(MaxOp)
NN_BINARY_VERIFIER(EqualOp)
NN_BINARY_VERIFIER(LessOp)
NN_BINARY_VERIFIER(GreaterOp)
NN_BINARY_VERIFIER(AndOp)
NN_BINARY_VERIFIER(OrOp)
#undef NN_BINARY_VERIFIER

LogicalResult WhereOp::verify() {
  auto ab = broadcastShapes(tensorType(getLhs()).getShape(),
                            tensorType(getRhs()).getShape());
  FailureOr<SmallVector<int64_t>> all = failure();
  if (succeeded(ab))
    all = broadcastShapes(tensorType(getCondition()).getShape(), *ab);
  if (failed(all) || *all != getType().getShape())
    return emitOpError("result shape must be the broadcast of the operand shapes");
  if (tensorType(getLhs()).getElementType() != getType().getElementType() ||
      tensorType(getRhs()).getElementType() != getType().getElementType())
    return emitOpError("both branches must have the result element type");
  return success();
}

//===----------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------===//

LogicalResult MatMulOp::verify() {
  auto lhs = tensorType(getLhs()), rhs = tensorType(getRhs());
  auto shape = matmulShape(lhs.getShape(), rhs.getShape());
  if (failed(shape))
    return emitOpError() << "operand shapes " << shapeStr(lhs.getShape())
                         << " and " << shapeStr(rhs.getShape())
                         << " do not multiply";
  if (*shape != getType().getShape())
    return emitOpError() << "result shape must be " << shapeStr(*shape);
  if (lhs.getElementType() != rhs.getElementType())
    return emitOpError("operand element types differ");
  return success();
}

LogicalResult GemmOp::verify() {
  auto a = tensorType(getA()), b = tensorType(getB());
  if (a.getRank() != 2 || b.getRank() != 2)
    return emitOpError("a and b must be 2-D");
  int64_t m = a.getDimSize(getTransA() ? 1 : 0);
  int64_t k = a.getDimSize(getTransA() ? 0 : 1);
  int64_t kb = b.getDimSize(getTransB() ? 1 : 0);
  int64_t n = b.getDimSize(getTransB() ? 0 : 1);
  if (k != kb)
    return emitOpError() << "inner dimensions differ: " << k << " vs " << kb;
  if (getType().getShape() != ArrayRef<int64_t>{m, n})
    return emitOpError() << "result shape must be " << shapeStr({m, n});
  if (getC() && failed(broadcastShapes(tensorType(getC()).getShape(), {m, n})))
    return emitOpError("c does not broadcast to the result");
  return success();
}

LogicalResult LinearOp::verify() {
  auto x = tensorType(getInput()), w = tensorType(getWeight());
  if (w.getRank() != 2 || x.getRank() < 1)
    return emitOpError("weight must be 2-D and input at least 1-D");
  int64_t k = w.getDimSize(getTransposeWeight() ? 1 : 0);
  int64_t n = w.getDimSize(getTransposeWeight() ? 0 : 1);
  if (x.getShape().back() != k)
    return emitOpError() << "input feature size " << x.getShape().back()
                         << " does not match weight's " << k;
  SmallVector<int64_t> expected(x.getShape().drop_back());
  expected.push_back(n);
  if (getType().getShape() != ArrayRef(expected))
    return emitOpError() << "result shape must be " << shapeStr(expected);
  if (getBias() && tensorType(getBias()).getShape() != ArrayRef<int64_t>{n})
    return emitOpError() << "bias must be [" << n << "]";
  return success();
}

//===----------------------------------------------------------------------===//
// Normalisation and reductions
//===----------------------------------------------------------------------===//

LogicalResult SoftmaxOp::verify() {
  return verifyAxis(*this, getAxis(), getType().getRank());
}

/// Scale and bias of a norm must broadcast over the normalised trailing dims.
static LogicalResult verifyNorm(Operation *op, int64_t axis, Value scale,
                                Value bias) {
  auto x = tensorType(op->getOperand(0));
  if (failed(verifyAxis(op, axis, x.getRank())))
    return failure();
  if (op->getResult(0).getType() != x)
    return op->emitOpError("result type must equal the input type");
  for (Value v : {scale, bias}) {
    if (!v)
      continue;
    auto t = tensorType(v);
    auto shape = broadcastShapes(t.getShape(), x.getShape());
    if (failed(shape) || *shape != x.getShape() ||
        t.getRank() > x.getRank() - axis)
      return op->emitOpError() << "scale and bias must broadcast over the "
                                  "normalised dims "
                               << shapeStr(x.getShape().drop_front(axis));
  }
  return success();
}

LogicalResult LayerNormOp::verify() {
  return verifyNorm(*this, getAxis(), getScale(), getBias());
}
LogicalResult RmsNormOp::verify() {
  return verifyNorm(*this, getAxis(), getScale(), nullptr);
}

static LogicalResult verifyReduce(Operation *op, ArrayRef<int64_t> axes,
                                  bool keepdims) {
  auto in = tensorType(op->getOperand(0));
  SmallVector<int64_t> expected;
  for (auto [i, a] : llvm::enumerate(axes))
    if (a < 0 || a >= in.getRank() || (i && axes[i - 1] >= a))
      return op->emitOpError("axes must be sorted, unique and in range");
  for (int64_t d = 0; d < in.getRank(); ++d) {
    if (!llvm::is_contained(axes, d))
      expected.push_back(in.getDimSize(d));
    else if (keepdims)
      expected.push_back(1);
  }
  if (tensorType(op->getResult(0)).getShape() != ArrayRef(expected))
    return op->emitOpError() << "result shape must be " << shapeStr(expected);
  return success();
}

#define NN_REDUCE_VERIFIER(OP)                                                 \
  LogicalResult OP::verify() {                                                 \
    return verifyReduce(getOperation(), getAxes(), getKeepdims());             \
  }
NN_REDUCE_VERIFIER(ReduceSumOp)
NN_REDUCE_VERIFIER(ReduceMeanOp)
NN_REDUCE_VERIFIER(ReduceMaxOp)
NN_REDUCE_VERIFIER(ReduceMinOp)
NN_REDUCE_VERIFIER(ReduceProdOp)
#undef NN_REDUCE_VERIFIER

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

LogicalResult ReshapeOp::verify() {
  auto in = tensorType(getInput());
  if (in.getNumElements() != getType().getNumElements())
    return emitOpError() << "cannot reshape " << shapeStr(in.getShape())
                         << " to " << shapeStr(getType().getShape());
  if (in.getElementType() != getType().getElementType())
    return emitOpError("element type must not change");
  return success();
}

LogicalResult TransposeOp::verify() {
  auto in = tensorType(getInput());
  ArrayRef<int64_t> perm = getPerm();
  if ((int64_t)perm.size() != in.getRank())
    return emitOpError("perm must have one entry per dimension");
  llvm::SmallSet<int64_t, 8> seen;
  SmallVector<int64_t> expected;
  for (int64_t p : perm) {
    if (p < 0 || p >= in.getRank() || !seen.insert(p).second)
      return emitOpError("perm must be a permutation of 0..rank-1");
    expected.push_back(in.getDimSize(p));
  }
  if (getType().getShape() != ArrayRef(expected))
    return emitOpError() << "result shape must be " << shapeStr(expected);
  return success();
}

LogicalResult ExpandOp::verify() {
  auto shape = broadcastShapes(tensorType(getInput()).getShape(),
                               getType().getShape());
  if (failed(shape) || *shape != getType().getShape())
    return emitOpError("input does not broadcast to the result shape");
  return success();
}

LogicalResult ConcatOp::verify() {
  if (getInputs().empty())
    return emitOpError("needs at least one input");
  auto out = getType();
  if (failed(verifyAxis(*this, getAxis(), out.getRank())))
    return failure();
  int64_t total = 0;
  for (Value v : getInputs()) {
    auto t = tensorType(v);
    if (t.getRank() != out.getRank() ||
        t.getElementType() != out.getElementType())
      return emitOpError("inputs must match the result's rank and element type");
    for (int64_t d = 0; d < out.getRank(); ++d)
      if (d != (int64_t)getAxis() && t.getDimSize(d) != out.getDimSize(d))
        return emitOpError() << "inputs differ from the result in dim " << d;
    total += t.getDimSize(getAxis());
  }
  if (total != out.getDimSize(getAxis()))
    return emitOpError() << "inputs sum to " << total << " along axis, result has "
                         << out.getDimSize(getAxis());
  return success();
}

LogicalResult KVCacheWriteOp::verify() {
  auto cache = tensorType(getCache()), update = tensorType(getUpdate());
  if (getType() != cache)
    return emitOpError("result must have the cache's type");
  if (failed(verifyAxis(*this, getAxis(), cache.getRank())))
    return failure();
  if (update.getRank() != cache.getRank() ||
      update.getElementType() != cache.getElementType())
    return emitOpError("update must match the cache's rank and element type");
  for (int64_t d = 0; d < cache.getRank(); ++d)
    if (d == (int64_t)getAxis() ? update.getDimSize(d) > cache.getDimSize(d)
                                : update.getDimSize(d) != cache.getDimSize(d))
      return emitOpError() << "update does not fit the cache in dim " << d;
  auto pos = tensorType(getPosition());
  if (!pos.getElementType().isInteger(64) || pos.getNumElements() != 1)
    return emitOpError("position must be a one-element i64 tensor");
  return success();
}

LogicalResult SplitOp::verify() {
  auto in = tensorType(getInput());
  if (failed(verifyAxis(*this, getAxis(), in.getRank())))
    return failure();
  int64_t total = 0;
  for (Value v : getOutputs()) {
    auto t = tensorType(v);
    if (t.getRank() != in.getRank() ||
        t.getElementType() != in.getElementType())
      return emitOpError(
          "outputs must match the input's rank and element type");
    for (int64_t d = 0; d < in.getRank(); ++d)
      if (d != (int64_t)getAxis() && t.getDimSize(d) != in.getDimSize(d))
        return emitOpError() << "outputs differ from the input in dim " << d;
    total += t.getDimSize(getAxis());
  }
  if (total != in.getDimSize(getAxis()))
    return emitOpError() << "outputs sum to " << total << " along axis, input has "
                         << in.getDimSize(getAxis());
  return success();
}

LogicalResult SliceOp::verify() {
  auto in = tensorType(getInput());
  ArrayRef<int64_t> starts = getStarts(), steps = getSteps();
  if ((int64_t)starts.size() != in.getRank() ||
      (int64_t)steps.size() != in.getRank())
    return emitOpError("needs one start and one step per dimension");
  if (getType().getRank() != in.getRank() ||
      getType().getElementType() != in.getElementType())
    return emitOpError("result must have the input's rank and element type");
  for (int64_t d = 0; d < in.getRank(); ++d) {
    int64_t size = getType().getDimSize(d), dim = in.getDimSize(d);
    if (steps[d] == 0)
      return emitOpError() << "step of dim " << d << " is zero";
    if (size == 0)
      continue;
    int64_t last = starts[d] + (size - 1) * steps[d];
    if (starts[d] < 0 || starts[d] >= dim || last < 0 || last >= dim)
      return emitOpError() << "dim " << d << " reads outside [0, " << dim << ")";
  }
  return success();
}

LogicalResult GatherOp::verify() {
  auto data = tensorType(getData()), idx = tensorType(getIndices());
  if (failed(verifyAxis(*this, getAxis(), data.getRank())))
    return failure();
  SmallVector<int64_t> expected(data.getShape().take_front(getAxis()));
  llvm::append_range(expected, idx.getShape());
  llvm::append_range(expected, data.getShape().drop_front(getAxis() + 1));
  if (getType().getShape() != ArrayRef(expected))
    return emitOpError() << "result shape must be " << shapeStr(expected);
  return success();
}

LogicalResult ScatterElementsOp::verify() {
  auto data = tensorType(getData());
  if (failed(verifyAxis(*this, getAxis(), data.getRank())))
    return failure();
  if (tensorType(getIndices()).getShape() != tensorType(getUpdates()).getShape())
    return emitOpError("indices and updates must have the same shape");
  if (tensorType(getIndices()).getRank() != data.getRank() || getType() != data)
    return emitOpError("indices must have data's rank and the result data's type");
  return success();
}

LogicalResult TriluOp::verify() {
  if (getType().getRank() < 2)
    return emitOpError("input must be at least 2-D");
  return success();
}

LogicalResult TopKOp::verify() {
  auto in = tensorType(getInput());
  if (failed(verifyAxis(*this, getAxis(), in.getRank())))
    return failure();
  // I64Attr getters are unsigned; read k signed so a negative k is reported.
  int64_t k = getKAttr().getInt();
  if (k < 0 || k > in.getDimSize(getAxis()))
    return emitOpError() << "k = " << k << " exceeds the axis size "
                         << in.getDimSize(getAxis());
  SmallVector<int64_t> expected(in.getShape());
  expected[getAxis()] = k;
  if (getValues().getType().getShape() != ArrayRef(expected) ||
      getIndices().getType().getShape() != ArrayRef(expected))
    return emitOpError() << "results must have shape " << shapeStr(expected);
  return success();
}

//===----------------------------------------------------------------------===//
// Convolution and pooling
//===----------------------------------------------------------------------===//

/// Output size of one spatial dim of a window op.
static int64_t windowOut(int64_t in, int64_t k, int64_t stride, int64_t dil,
                         int64_t padLo, int64_t padHi) {
  return (in + padLo + padHi - dil * (k - 1) - 1) / stride + 1;
}

LogicalResult ConvOp::verify() {
  auto x = tensorType(getInput()), w = tensorType(getWeight());
  int64_t spatial = x.getRank() - 2;
  if (spatial < 1 || w.getRank() != x.getRank())
    return emitOpError("input and weight must be N-d with N >= 3 and equal rank");
  if ((int64_t)getStrides().size() != spatial ||
      (int64_t)getDilations().size() != spatial ||
      (int64_t)getPads().size() != 2 * spatial)
    return emitOpError("strides/dilations need one entry per spatial dim, pads two");
  if (llvm::any_of(getStrides(), [](int64_t s) { return s < 1; }) ||
      llvm::any_of(getDilations(), [](int64_t d) { return d < 1; }))
    return emitOpError("strides and dilations must be positive");
  if (getGroup() < 1 || x.getDimSize(1) != w.getDimSize(1) * (int64_t)getGroup() ||
      w.getDimSize(0) % getGroup())
    return emitOpError("channels do not match weight and group");
  SmallVector<int64_t> expected{x.getDimSize(0), w.getDimSize(0)};
  for (int64_t i = 0; i < spatial; ++i)
    expected.push_back(windowOut(x.getDimSize(i + 2), w.getDimSize(i + 2),
                                 getStrides()[i], getDilations()[i],
                                 getPads()[i], getPads()[i + spatial]));
  if (getType().getShape() != ArrayRef(expected))
    return emitOpError() << "result shape must be " << shapeStr(expected);
  if (getBias() &&
      tensorType(getBias()).getShape() != ArrayRef<int64_t>{w.getDimSize(0)})
    return emitOpError("bias must have one entry per output channel");
  return success();
}

LogicalResult MaxPoolOp::verify() {
  auto x = tensorType(getInput());
  int64_t spatial = x.getRank() - 2;
  if (spatial < 1 || (int64_t)getKernelShape().size() != spatial ||
      (int64_t)getStrides().size() != spatial ||
      (int64_t)getDilations().size() != spatial ||
      (int64_t)getPads().size() != 2 * spatial)
    return emitOpError("kernel/strides/dilations need one entry per spatial dim, pads two");
  auto positive = [](ArrayRef<int64_t> v) {
    return llvm::all_of(v, [](int64_t x) { return x >= 1; });
  };
  if (!positive(getKernelShape()) || !positive(getStrides()) ||
      !positive(getDilations()))
    return emitOpError("kernel, strides and dilations must be positive");
  auto out = getType();
  if (out.getRank() != x.getRank())
    return emitOpError("result must have the input's rank");
  if (out.getDimSize(0) != x.getDimSize(0) || out.getDimSize(1) != x.getDimSize(1))
    return emitOpError("batch and channel dims must be preserved");
  for (int64_t i = 0; i < spatial; ++i) {
    int64_t floorOut = windowOut(x.getDimSize(i + 2), getKernelShape()[i],
                                 getStrides()[i], getDilations()[i],
                                 getPads()[i], getPads()[i + spatial]);
    // ceil_mode may add one window that starts inside the padded input.
    int64_t got = out.getDimSize(i + 2);
    if (got != floorOut && got != floorOut + 1)
      return emitOpError() << "spatial dim " << i << " must be " << floorOut
                           << " (or " << floorOut + 1 << " with ceil_mode)";
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Transformer blocks
//===----------------------------------------------------------------------===//

void AttentionOp::build(OpBuilder &builder, OperationState &state, Type output,
                        Value query, Value key, Value value, ValueRange masks,
                        float scale) {
  state.addOperands({query, key, value});
  state.addOperands(masks);
  state.addAttribute(getScaleAttrName(state.name), builder.getF32FloatAttr(scale));
  state.addTypes(output);
  Region *region = state.addRegion();
  Block *block = new Block();
  region->push_back(block);
  auto q = cast<RankedTensorType>(query.getType());
  auto k = cast<RankedTensorType>(key.getType());
  SmallVector<int64_t> scores(q.getShape().drop_back());
  scores.push_back(k.getDimSize(k.getRank() - 2));
  Value s = block->addArgument(RankedTensorType::get(scores, q.getElementType()),
                               state.location);
  for (Value m : masks)
    block->addArgument(m.getType(), state.location);
  OpBuilder::InsertionGuard guard(builder);
  builder.setInsertionPointToEnd(block);
  YieldOp::create(builder, state.location, s);
}

RankedTensorType AttentionOp::getScoreType() {
  auto q = tensorType(getQuery()), k = tensorType(getKey());
  SmallVector<int64_t> shape(q.getShape().drop_back());
  shape.push_back(k.getDimSize(k.getRank() - 2));
  return RankedTensorType::get(shape, q.getElementType());
}

bool AttentionOp::hasIdentityScoreMod() {
  Block &block = getScoreModBlock();
  return block.getOperations().size() == 1 &&
         cast<YieldOp>(block.getTerminator()).getValue() == block.getArgument(0);
}

LogicalResult AttentionOp::verify() {
  auto q = tensorType(getQuery()), k = tensorType(getKey()),
       v = tensorType(getValue());
  if (q.getRank() != 4 || k.getRank() != 4 || v.getRank() != 4)
    return emitOpError("query, key and value must be [B, heads, seq, dim]");
  int64_t heads = q.getDimSize(1), kvHeads = k.getDimSize(1);
  if (q.getDimSize(0) != k.getDimSize(0) || k.getDimSize(0) != v.getDimSize(0))
    return emitOpError("batch sizes differ");
  if (kvHeads != v.getDimSize(1) || kvHeads == 0 || heads % kvHeads)
    return emitOpError() << "key/value heads (" << kvHeads
                         << ") must be equal and divide query heads (" << heads
                         << ")";
  if (q.getDimSize(3) != k.getDimSize(3) || k.getDimSize(2) != v.getDimSize(2))
    return emitOpError("query/key head dims or key/value lengths differ");
  SmallVector<int64_t> expected{q.getDimSize(0), heads, q.getDimSize(2),
                                v.getDimSize(3)};
  if (getType().getShape() != ArrayRef(expected))
    return emitOpError() << "result shape must be " << shapeStr(expected);
  return success();
}

LogicalResult AttentionOp::verifyRegions() {
  Block &block = getScoreModBlock();
  if (block.getNumArguments() != 1 + getMasks().size())
    return emitOpError("score modifier takes the scores and one argument per mask");
  if (block.getArgument(0).getType() != getScoreType())
    return emitOpError() << "score modifier's first argument must be "
                         << getScoreType();
  for (auto [arg, mask] : llvm::zip(block.getArguments().drop_front(), getMasks()))
    if (arg.getType() != mask.getType())
      return emitOpError("score modifier arguments must match the mask types");
  auto yield = dyn_cast<YieldOp>(block.getTerminator());
  if (!yield || yield.getValue().getType() != getScoreType())
    return emitOpError() << "score modifier must yield " << getScoreType();
  return success();
}

LogicalResult RotaryOp::verify() {
  auto x = tensorType(getInput());
  if (x.getRank() == 0 || x.getShape().back() % 2)
    return emitOpError("last dim must be even to rotate halves");
  for (Value t : {getCos(), getSin()}) {
    auto shape = broadcastShapes(tensorType(t).getShape(), x.getShape());
    if (failed(shape) || *shape != x.getShape() ||
        tensorType(t).getShape().back() != x.getShape().back())
      return emitOpError("cos and sin must broadcast to the input and span its last dim");
  }
  if (getType() != x)
    return emitOpError("result type must equal the input type");
  return success();
}

LogicalResult MoeOp::verify() {
  auto x = tensorType(getInput()), logits = tensorType(getRouterLogits()),
       fc1 = tensorType(getFc1()), fc2 = tensorType(getFc2());
  if (fc1.getRank() != 3 || fc2.getRank() != 3)
    return emitOpError("expert weights must be stacked [experts, in, out]");
  int64_t experts = fc1.getDimSize(0), hidden = fc1.getDimSize(1),
          ffn = fc1.getDimSize(2);
  if (x.getRank() < 1 || x.getShape().back() != hidden)
    return emitOpError() << "input's last dim must be the experts' input width "
                         << hidden << ", got " << shapeStr(x.getShape());
  SmallVector<int64_t> wantLogits(x.getShape().drop_back());
  wantLogits.push_back(experts);
  if (logits.getShape() != ArrayRef(wantLogits))
    return emitOpError() << "router logits must be " << shapeStr(wantLogits)
                         << " (tokens x " << experts << " experts), got "
                         << shapeStr(logits.getShape());
  SmallVector<int64_t> wantFc2{fc1.getDimSize(0), ffn, hidden};
  if (fc2.getShape() != ArrayRef(wantFc2))
    return emitOpError() << "fc2 must be " << shapeStr(wantFc2) << ", got "
                         << shapeStr(fc2.getShape());
  if (Value fc3 = getFc3(); fc3 && tensorType(fc3).getShape() != fc1.getShape())
    return emitOpError() << "fc3 must have fc1's shape " << shapeStr(fc1.getShape())
                         << ", got " << shapeStr(tensorType(fc3).getShape());
  Type et = x.getElementType();
  for (Value v : getOperands())
    if (tensorType(v).getElementType() != et)
      return emitOpError("operands must share one element type");
  int64_t k = getTopKAttr().getInt(); // the getter is unsigned
  if (k < 1 || k > experts)
    return emitOpError() << "top_k " << k << " must be in [1, "
                         << experts << "]";
  if (getType() != x)
    return emitOpError("result type must equal the input type");
  return success();
}

/// `v` is a static tensor of `shape` with element type `et`.
static LogicalResult expectTensor(Operation *op, StringRef what, Value v,
                                  ArrayRef<int64_t> shape, Type et) {
  auto t = tensorType(v);
  if (t.getShape() != shape || t.getElementType() != et)
    return op->emitOpError() << what << " must be " << shapeStr(shape) << " of "
                             << et << ", got " << t;
  return success();
}

LogicalResult MoeRouteOp::verify() {
  auto logits = tensorType(getRouterLogits());
  if (logits.getRank() != 2 || !isa<FloatType>(logits.getElementType()))
    return emitOpError("router logits must be a [tokens, experts] float tensor");
  int64_t tokens = logits.getDimSize(0), experts = logits.getDimSize(1);
  int64_t k = getTopKAttr().getInt();
  if (k < 1 || k > experts)
    return emitOpError() << "top_k " << k << " must be in [1, " << experts
                         << "]";
  Builder b(getContext());
  return success(
      succeeded(expectTensor(*this, "expert_ids", getExpertIds(), {tokens, k},
                             b.getI64Type())) &&
      succeeded(expectTensor(*this, "weights", getWeights(), {tokens, k},
                             b.getF32Type())) &&
      succeeded(expectTensor(*this, "counts", getCounts(), {experts},
                             b.getI64Type())));
}

LogicalResult MoeExpertsOp::verify() {
  auto rows = tensorType(getRows()), layout = tensorType(getLayout()),
       fc1 = tensorType(getFc1()), fc2 = tensorType(getFc2());
  if (fc1.getRank() != 3 || fc2.getRank() != 3)
    return emitOpError("expert weights must be stacked [experts, in, out]");
  int64_t local = fc1.getDimSize(0), hidden = fc1.getDimSize(1),
          ffn = fc1.getDimSize(2);
  Builder b(getContext());
  if (rows.getRank() != 2 || rows.getDimSize(1) != hidden ||
      !rows.getElementType().isF32())
    return emitOpError() << "rows must be [rows, " << hidden << "] of f32, got "
                         << rows;
  if (layout.getRank() != 2 || layout.getDimSize(1) != local ||
      !layout.getElementType().isInteger(64))
    return emitOpError() << "layout must be [senders, " << local
                         << "] of i64 (one column per local expert), got "
                         << layout;
  if (failed(expectTensor(*this, "fc2", getFc2(), {local, ffn, hidden},
                          fc1.getElementType())))
    return failure();
  if (Value fc3 = getFc3();
      fc3 && failed(expectTensor(*this, "fc3", fc3, fc1.getShape(),
                                 fc1.getElementType())))
    return failure();
  if (getType() != rows)
    return emitOpError("result type must equal the rows' type");
  return success();
}

LogicalResult MoeCombineOp::verify() {
  auto results = tensorType(getResults()), weights = tensorType(getWeights());
  if (weights.getRank() != 2 || !weights.getElementType().isF32())
    return emitOpError() << "weights must be [tokens, top_k] of f32, got "
                         << weights;
  int64_t tokens = weights.getDimSize(0), k = weights.getDimSize(1);
  if (results.getRank() != 2 || !results.getElementType().isF32() ||
      results.getDimSize(0) != tokens * k)
    return emitOpError() << "results must be [" << tokens * k
                         << ", hidden] of f32 (one row per pair), got "
                         << results;
  Builder b(getContext());
  if (failed(expectTensor(*this, "pair_rows", getPairRows(), {tokens * k},
                          b.getI64Type())))
    return failure();
  auto out = tensorType(getOutput());
  if (out.getShape() != ArrayRef<int64_t>{tokens, results.getDimSize(1)} ||
      !isa<FloatType>(out.getElementType()))
    return emitOpError() << "result must be [" << tokens << ", "
                         << results.getDimSize(1) << "] of a float type, got "
                         << out;
  return success();
}

//===----------------------------------------------------------------------===//
// Weights
//===----------------------------------------------------------------------===//

std::string parc::nn::externalLocationProblem(StringRef location) {
  if (location.empty())
    return "it has no location";
  if (location.contains('\0'))
    return "its location holds a NUL byte";
  if (llvm::sys::path::is_absolute(location))
    return "its location is an absolute path";
  for (StringRef part : llvm::make_range(llvm::sys::path::begin(location),
                                         llvm::sys::path::end(location)))
    if (part == "..")
      return "its location has a '..' component";
  return "";
}

SmallVector<int64_t> ExternalWeightOp::getStoredShape() {
  SmallVector<int64_t> shape(getType().getShape());
  if (auto padding = getPaddingAttr())
    for (auto [d, pad] : llvm::enumerate(padding.asArrayRef()))
      if (d < shape.size())
        shape[d] -= pad;
  return shape;
}

LogicalResult ExternalWeightOp::verify() {
  // The weight writer reads `location` relative to the model's folder.
  if (std::string why = externalLocationProblem(getLocation()); !why.empty())
    return emitOpError() << "may not read '" << getLocation() << "': " << why;
  auto t = getType();
  // I64Attr getters are unsigned: compare the signed values.
  if (getOffsetAttr().getInt() < 0 || getLengthAttr().getInt() < 0)
    return emitOpError("offset and length must be non-negative");
  if (auto padding = getPaddingAttr()) {
    if ((int64_t)padding.size() != t.getRank())
      return emitOpError() << "padding needs one entry per dim of " << t;
    for (auto [pad, size] : llvm::zip(padding.asArrayRef(), t.getShape()))
      if (pad < 0 || pad > size)
        return emitOpError() << "padding " << pad << " does not fit " << t;
  }
  if (auto blocks = getPaddingBlocksAttr()) {
    // (stored, zeros) pairs over the one padded dim, summing to its sizes.
    auto padding = getPaddingAttr();
    auto padded = padding ? llvm::count_if(padding.asArrayRef(),
                                           [](int64_t p) { return p > 0; })
                          : 0;
    if (padded != 1 || blocks.size() % 2 ||
        llvm::any_of(blocks.asArrayRef(), [](int64_t b) { return b < 0; }))
      return emitOpError("padding_blocks needs (stored, zeros) pairs over the "
                         "one dim that padding pads");
    int64_t d = llvm::find_if(padding.asArrayRef(),
                              [](int64_t p) { return p > 0; }) -
                padding.asArrayRef().begin();
    int64_t stored = 0, zeros = 0;
    for (int64_t i = 0; i < blocks.size(); i += 2)
      stored += blocks[i], zeros += blocks[i + 1];
    if (stored + zeros != t.getDimSize(d) || zeros != padding[d])
      return emitOpError() << "padding_blocks do not sum to dim " << d
                           << " of " << t;
  }
  SmallVector<int64_t> stored = getStoredShape();
  int64_t n = 1;
  for (int64_t d : stored)
    n *= d;
  unsigned bits = t.getElementTypeBitWidth();
  if ((int64_t)getLength() * 8 != n * (int64_t)std::max(bits, 8u) &&
      !t.getElementType().isInteger(1))
    return emitOpError() << "length " << getLength() << " bytes does not hold "
                         << RankedTensorType::get(stored, t.getElementType());
  return success();
}

//===----------------------------------------------------------------------===//
// Weight sources
//===----------------------------------------------------------------------===//

ElementsAttr parc::nn::weightElements(Value v) {
  auto cst = v ? v.getDefiningOp<arith::ConstantOp>() : arith::ConstantOp();
  return cst ? dyn_cast<ElementsAttr>(cst.getValue()) : ElementsAttr();
}

Value parc::nn::weightSource(Value v) {
  // A mixed-precision checkpoint stores bf16/f16 weights and casts them to
  // the compute dtype before use: the cast is part of the weight, so that
  // it is split and placed in its stored dtype, never folded into a copy.
  while (auto cast = v ? v.getDefiningOp<CastOp>() : CastOp())
    v = cast.getInput();
  if (weightElements(v) || (v && v.getDefiningOp<ExternalWeightOp>()))
    return v;
  return {};
}

bool parc::nn::isWeight(Value v) { return bool(weightSource(v)); }

bool parc::nn::isKVCache(Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  auto fn = arg ? dyn_cast<FunctionOpInterface>(arg.getOwner()->getParentOp())
                : FunctionOpInterface();
  if (!fn || !arg.getOwner()->isEntryBlock())
    return false;
  auto role = fn.getArgAttrOfType<StringAttr>(arg.getArgNumber(), kKVRoleAttr);
  return role && role.getValue() == "cache";
}

int64_t parc::nn::batchDim(FunctionOpInterface main, unsigned k, bool result) {
  auto dim = result ? main.getResultAttrOfType<IntegerAttr>(k, "onnx.batch_dim")
                    : main.getArgAttrOfType<IntegerAttr>(k, "onnx.batch_dim");
  return dim ? dim.getInt() : 0;
}

bool parc::nn::isGraphFunction(FunctionOpInterface f) {
  return !f.isExternal() && f.isPublic();
}

FailureOr<FunctionOpInterface> parc::nn::entryFunction(ModuleOp module,
                                                       StringRef pass) {
  SmallVector<FunctionOpInterface> marked, graphs;
  for (auto f : module.getOps<FunctionOpInterface>()) {
    if (f->hasAttr(kEntryAttr))
      marked.push_back(f);
    if (isGraphFunction(f))
      graphs.push_back(f);
  }
  if (marked.size() == 1)
    return marked.front();
  ArrayRef<FunctionOpInterface> found = marked.empty() ? graphs : marked;
  if (found.size() == 1)
    return found.front();
  InFlightDiagnostic diag = module.emitError()
                            << pass << " expects one entry function: ";
  if (found.empty())
    return diag << "the module has no public function with a body", failure();
  diag << found.size() << " are "
       << (marked.empty() ? "public with a body" : "marked " + kEntryAttr.str())
       << " (";
  llvm::interleaveComma(found, diag,
                        [&](FunctionOpInterface f) { diag << "@" << f.getName(); });
  return diag << "); mark one with '" << kEntryAttr << "'", failure();
}

#define GET_OP_CLASSES
#include "nn/NNOps.cpp.inc"
