//===- Overlap.cpp - dist-overlap -------------------------------*- C++ -*-===//
//
// Communication is hidden only behind compute that does not need it. Two
// steps make such compute exist and use it:
//
// 1. Collective matmul. A row-parallel product followed by its all-reduce
//    (or reduce-scatter) is cut into chunks of rows: chunk k's reduction
//    runs while chunk k+1 is multiplied. An all-gather feeding products
//    (sequence parallel → column parallel) is cut the same way: chunk k+1
//    arrives while chunk k is multiplied. Rows are independent in a
//    product, so only the order of the rows has to be restored, which
//    static reshapes, slices and concats do.
// 2. Placement. Every remaining collective becomes a `*_start` issued as
//    soon as its operand exists and a `dist.wait` just before its first
//    use, unless keeping its buffers alive that long would exceed the
//    memory budget.
//
//===----------------------------------------------------------------------===//

#include "Regions.h"
#include "dist/DistDialect.h"
#include "nn/NNOps.h"
#include "parc/Transforms/Dist/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"

namespace parc::dist {
#define GEN_PASS_DEF_DISTOVERLAP
#include "parc/Transforms/Dist/Passes.h.inc"
} // namespace parc::dist

using namespace mlir;
namespace nn = parc::nn;
namespace dist = parc::dist;

namespace {

using dist::tensorOf;

RankedTensorType withDims(RankedTensorType t, ArrayRef<int64_t> shape) {
  return RankedTensorType::get(shape, t.getElementType());
}

/// Ranks in the group of a collective: the product of its mesh axes.
std::optional<int64_t> groupSize(Operation *op) {
  auto meshRef = op->getAttrOfType<FlatSymbolRefAttr>("mesh");
  auto axes = op->getAttrOfType<ArrayAttr>("mesh_axes");
  auto mesh = meshRef ? SymbolTable::lookupNearestSymbolFrom<dist::MeshOp>(op, meshRef)
                      : dist::MeshOp();
  if (!mesh || !axes)
    return std::nullopt;
  SmallVector<StringRef> names(axes.getAsValueRange<StringAttr>());
  FailureOr<int64_t> size = mesh.getGroupSize(names);
  return succeeded(size) ? std::optional(*size) : std::nullopt;
}

/// The same collective as `op`, started: same operands and attributes,
/// an async result of its type.
Operation *startOf(OpBuilder &b, Operation *op) {
  OperationState state(op->getLoc(), op->getName().getStringRef().str() + "_start");
  state.addOperands(op->getOperands());
  state.addAttributes(op->getAttrs());
  state.addTypes(dist::AsyncType::get(b.getContext(), op->getResult(0).getType()));
  return b.create(state);
}

/// A copy of linear `lin` on another input, with the result type given.
Value linearOn(OpBuilder &b, nn::LinearOp lin, Value input, RankedTensorType type) {
  return nn::LinearOp::create(b, lin.getLoc(), type, input, lin.getWeight(),
                              lin.getBias(), lin.getTransposeWeightAttr());
}

/// Splits `x` along `axis` into `chunks` equal pieces.
SmallVector<Value> splitRows(OpBuilder &b, Location loc, Value x, int64_t axis,
                             int64_t chunks) {
  SmallVector<int64_t> shape(tensorOf(x).getShape());
  shape[axis] /= chunks;
  SmallVector<Type> types(chunks, withDims(tensorOf(x), shape));
  auto split = nn::SplitOp::create(b, loc, types, x, axis);
  return SmallVector<Value>(split.getResults());
}

Value concat(OpBuilder &b, Location loc, ValueRange pieces, int64_t axis) {
  SmallVector<int64_t> shape(tensorOf(pieces[0]).getShape());
  shape[axis] = 0;
  for (Value p : pieces)
    shape[axis] += tensorOf(p).getDimSize(axis);
  return nn::ConcatOp::create(b, loc, withDims(tensorOf(pieces[0]), shape),
                              pieces, axis);
}

Value reshape(OpBuilder &b, Location loc, Value x, ArrayRef<int64_t> shape) {
  return nn::ReshapeOp::create(b, loc, withDims(tensorOf(x), shape), x);
}

/// Shape with dim `axis` of size n·c·rest replaced by [n, c, rest].
SmallVector<int64_t> unfold(ArrayRef<int64_t> shape, int64_t axis,
                            ArrayRef<int64_t> parts) {
  SmallVector<int64_t> out(shape.begin(), shape.begin() + axis);
  llvm::append_range(out, parts);
  out.append(shape.begin() + axis + 1, shape.end());
  return out;
}

class Overlapper {
public:
  Overlapper(int64_t chunks, int64_t minRows, int64_t budget)
      : chunks(chunks), minRows(minRows), budget(budget) {}

  /// Step 1 on every candidate; returns how many were decomposed.
  int64_t decompose(func::FuncOp func);
  /// Step 2; returns how many collectives were started early.
  int64_t place(func::FuncOp func);

private:
  /// Chunks for a product over `rows` rows: each keeps at least minRows,
  /// below which a GEMM is too thin to hide anything.
  int64_t chunksFor(int64_t rows) const {
    int64_t c = chunks;
    while (c > 1 && (rows % c || rows / c < minRows))
      --c;
    return c;
  }
  bool rowReduce(nn::LinearOp lin, Operation *collective);
  bool gatherProducts(dist::AllGatherOp gather);

  int64_t chunks, minRows, budget;
};

/// The product's input rows along `axis` (a non-feature dim).
bool rowsAxisOk(nn::LinearOp lin, int64_t axis) {
  return axis >= 0 && axis < tensorOf(lin.getInput()).getRank() - 1;
}

bool Overlapper::rowReduce(nn::LinearOp lin, Operation *collective) {
  Value x = lin.getInput();
  auto xt = tensorOf(x);
  Location loc = collective->getLoc();
  OpBuilder b(collective);
  SmallVector<Value> waited;
  if (auto reduce = dyn_cast<dist::AllReduceOp>(collective)) {
    // Rows of the product: the sequence dim (the last but one).
    int64_t axis = xt.getRank() - 2;
    if (axis < 0)
      return false;
    int64_t c = chunksFor(xt.getDimSize(axis));
    if (c < 2)
      return false;
    SmallVector<Operation *> started;
    for (Value piece : splitRows(b, loc, x, axis, c)) {
      SmallVector<int64_t> shape(lin.getType().getShape());
      shape[axis] /= c;
      Value y = linearOn(b, lin, piece, withDims(lin.getType(), shape));
      started.push_back(dist::AllReduceStartOp::create(
          b, loc, dist::AsyncType::get(b.getContext(), y.getType()),
          reduce.getMeshAttr(), reduce.getMeshAxesAttr(), y,
          reduce.getReductionAttr()));
    }
    for (Operation *s : started)
      waited.push_back(dist::WaitOp::create(b, loc, s->getResult(0)).getResult());
    reduce.getResult().replaceAllUsesWith(concat(b, loc, waited, axis));
  } else {
    auto scatter = cast<dist::ReduceScatterOp>(collective);
    int64_t axis = scatter.getScatterAxis();
    auto n = groupSize(scatter);
    if (!n || scatter.getSizes() || !rowsAxisOk(lin, axis))
      return false;
    // Rank r receives rows [r·S/n, (r+1)·S/n). Chunk k takes the k-th
    // sub-block of every rank's block, so scattering chunk k hands rank r
    // its k-th sub-block, and concatenating over k restores its block.
    int64_t rows = xt.getDimSize(axis);
    if (rows % *n)
      return false;
    int64_t c = chunksFor(rows / *n);
    if (c < 2)
      return false;
    int64_t sub = rows / (*n * c);
    Value grid = reshape(b, loc, x, unfold(xt.getShape(), axis, {*n, c, sub}));
    auto gridShape = tensorOf(grid).getShape();
    SmallVector<Operation *> started;
    for (int64_t k = 0; k < c; ++k) {
      SmallVector<int64_t> starts(gridShape.size(), 0), steps(gridShape.size(), 1);
      starts[axis + 1] = k;
      SmallVector<int64_t> sliced(gridShape);
      sliced[axis + 1] = 1;
      Value piece = nn::SliceOp::create(b, loc, withDims(xt, sliced), grid,
                                        b.getDenseI64ArrayAttr(starts),
                                        b.getDenseI64ArrayAttr(steps));
      SmallVector<int64_t> rowsShape(xt.getShape());
      rowsShape[axis] = *n * sub;
      piece = reshape(b, loc, piece, rowsShape);
      SmallVector<int64_t> yShape(lin.getType().getShape());
      yShape[axis] = *n * sub;
      Value y = linearOn(b, lin, piece, withDims(lin.getType(), yShape));
      yShape[axis] = sub;
      auto s = dist::ReduceScatterStartOp::create(
          b, loc, dist::AsyncType::get(b.getContext(), withDims(lin.getType(), yShape)),
          scatter.getMeshAttr(), scatter.getMeshAxesAttr(), y,
          scatter.getScatterAxisAttr(), scatter.getReductionAttr(),
          DenseI64ArrayAttr());
      started.push_back(s);
    }
    for (Operation *s : started)
      waited.push_back(dist::WaitOp::create(b, loc, s->getResult(0)).getResult());
    scatter.getResult().replaceAllUsesWith(concat(b, loc, waited, axis));
  }
  collective->erase();
  lin.erase();
  return true;
}

bool Overlapper::gatherProducts(dist::AllGatherOp gather) {
  auto n = groupSize(gather);
  int64_t axis = gather.getGatherAxis();
  Value x = gather.getInput();
  auto xt = tensorOf(x);
  if (!n || gather.getSizes() || gather->use_empty() || axis >= xt.getRank() - 1)
    return false;
  SmallVector<nn::LinearOp> products;
  for (Operation *user : gather->getUsers()) {
    auto lin = dyn_cast<nn::LinearOp>(user);
    if (!lin || lin.getInput() != gather.getResult())
      return false;
    products.push_back(lin);
  }
  int64_t c = chunksFor(xt.getDimSize(axis));
  if (c < 2)
    return false;
  // Chunk k of every rank arrives together: [n, S/(n·c)] rows, rank-major.
  // Its products land in slot k of an [n, c, S/(n·c)] grid of rows, which
  // is the gathered order once flattened.
  llvm::sort(products, [](nn::LinearOp a, nn::LinearOp b) {
    return a->isBeforeInBlock(b);
  });
  Location loc = gather.getLoc();
  Operation *first = products.front();
  // Every product is computed where the first one was: the weights of the
  // others (their rank parts) move up to it, if they can.
  SmallVector<Operation *> hoist;
  for (nn::LinearOp lin : products)
    for (Value v : {lin.getWeight(), lin.getBias()}) {
      Operation *def = v ? v.getDefiningOp() : nullptr;
      if (!def || def->getBlock() != first->getBlock() || def->isBeforeInBlock(first))
        continue;
      for (Value operand : def->getOperands()) {
        Operation *d = operand.getDefiningOp();
        if (d && d->getBlock() == first->getBlock() && !d->isBeforeInBlock(first))
          return false;
      }
      hoist.push_back(def);
    }
  for (Operation *def : hoist)
    def->moveBefore(first);
  OpBuilder b(gather);
  int64_t sub = xt.getDimSize(axis) / c;
  SmallVector<Operation *> started;
  for (Value piece : splitRows(b, loc, x, axis, c)) {
    SmallVector<int64_t> shape(xt.getShape());
    shape[axis] = *n * sub;
    started.push_back(dist::AllGatherStartOp::create(
        b, loc, dist::AsyncType::get(b.getContext(), withDims(xt, shape)),
        gather.getMeshAttr(), gather.getMeshAxesAttr(), piece,
        gather.getGatherAxisAttr(), DenseI64ArrayAttr()));
  }
  b.setInsertionPoint(first);
  SmallVector<SmallVector<Value>> slots(products.size());
  for (Operation *s : started) {
    Value rows = dist::WaitOp::create(b, loc, s->getResult(0)).getResult();
    for (auto [i, lin] : llvm::enumerate(products)) {
      SmallVector<int64_t> shape(lin.getType().getShape());
      shape[axis] = *n * sub;
      Value y = linearOn(b, lin, rows, withDims(lin.getType(), shape));
      slots[i].push_back(
          reshape(b, loc, y, unfold(lin.getType().getShape(), axis, {*n, 1, sub})));
    }
  }
  for (auto [i, lin] : llvm::enumerate(products)) {
    Value grid = concat(b, loc, slots[i], axis + 1);
    lin.getResult().replaceAllUsesWith(
        reshape(b, loc, grid, lin.getType().getShape()));
  }
  // Only now: the first product is the insertion point.
  for (nn::LinearOp lin : products)
    lin.erase();
  gather.erase();
  return true;
}

int64_t Overlapper::decompose(func::FuncOp func) {
  SmallVector<Operation *> candidates;
  func.walk([&](Operation *op) {
    if (isa<dist::AllReduceOp, dist::ReduceScatterOp, dist::AllGatherOp>(op))
      candidates.push_back(op);
  });
  int64_t count = 0;
  for (Operation *op : candidates) {
    if (auto gather = dyn_cast<dist::AllGatherOp>(op)) {
      count += gatherProducts(gather);
      continue;
    }
    auto lin = op->getOperand(0).getDefiningOp<nn::LinearOp>();
    if (lin && lin->hasOneUse())
      count += rowReduce(lin, op);
  }
  return count;
}

int64_t Overlapper::place(func::FuncOp func) {
  Block &body = func.getBody().front();
  SmallVector<Operation *> collectives;
  for (Operation &op : body)
    if (isa<dist::AllReduceOp, dist::AllGatherOp, dist::ReduceScatterOp,
            dist::AllToAllOp>(op))
      collectives.push_back(&op);
  // Windows opened here, for the budget.
  struct Window {
    Operation *start, *wait;
    int64_t bytes;
  };
  SmallVector<Window> windows;
  auto inFlightAt = [&](Operation *from, Operation *to) {
    // Bytes of windows overlapping [from, to]: the peak is bounded by the sum.
    int64_t bytes = 0;
    for (Window &w : windows)
      if (!w.wait->isBeforeInBlock(from) && !to->isBeforeInBlock(w.start))
        bytes += w.bytes;
    return bytes;
  };
  int64_t early = 0;
  for (Operation *op : collectives) {
    // Earliest: after the operand's definition. Latest: the first user.
    Operation *after = op->getOperand(0).getDefiningOp();
    Operation *firstUse = nullptr;
    for (Operation *user : op->getResult(0).getUsers()) {
      Operation *inBody = body.findAncestorOpInBlock(*user);
      if (!firstUse || inBody->isBeforeInBlock(firstUse))
        firstUse = inBody;
    }
    OpBuilder b(op);
    if (after && after->getBlock() == &body)
      b.setInsertionPointAfter(after);
    else
      b.setInsertionPointToStart(&body);
    int64_t bytes = dist::bytesOf(op->getOperand(0).getType()) +
                    dist::bytesOf(op->getResult(0).getType());
    Operation *startAt = &*b.getInsertionPoint();
    Operation *waitAt = firstUse ? firstUse : body.getTerminator();
    if (budget > 0 && inFlightAt(startAt, waitAt) + bytes > budget)
      b.setInsertionPoint(op); // no room: start where it was
    Operation *start = startOf(b, op);
    b.setInsertionPoint(waitAt);
    auto wait = dist::WaitOp::create(b, op->getLoc(), start->getResult(0));
    op->getResult(0).replaceAllUsesWith(wait.getResult());
    early += start->getNextNode() != wait;
    windows.push_back({start, wait, bytes});
    op->erase();
  }
  return early;
}

struct DistOverlapPass : parc::dist::impl::DistOverlapBase<DistOverlapPass> {
  using Base::Base;

  void runOnOperation() override {
    if (chunks < 1 || minRows < 1 || memoryBudget < 0) {
      getOperation().emitError()
          << "dist-overlap: chunks and min-rows must be at least 1 and "
             "memory-budget non-negative";
      return signalPassFailure();
    }
    Overlapper overlapper(chunks, minRows, memoryBudget);
    int64_t decomposed = 0, early = 0;
    for (auto func : getOperation().getOps<func::FuncOp>()) {
      if (func.isExternal())
        continue;
      decomposed += overlapper.decompose(func);
      early += overlapper.place(func);
    }
    auto *ctx = &getContext();
    getOperation()->setAttr("dist.overlap",
                            DictionaryAttr::get(ctx, {
                                NamedAttribute(StringAttr::get(ctx, "decomposed"),
                                               IntegerAttr::get(IntegerType::get(ctx, 64), decomposed)),
                                NamedAttribute(StringAttr::get(ctx, "early_starts"),
                                               IntegerAttr::get(IntegerType::get(ctx, 64), early))}));
  }
};

} // namespace
