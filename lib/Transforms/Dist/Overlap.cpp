//===- Overlap.cpp - dist-overlap -------------------------------*- C++ -*-===//
//
// Communication is hidden only behind compute that does not need it. Three
// steps make such compute exist and use it:
//
// 1. Collective matmul. A row-parallel product followed by its all-reduce
//    (or reduce-scatter) is cut into chunks of rows: chunk k's reduction
//    runs while chunk k+1 is multiplied. An all-gather feeding products
//    (sequence parallel → column parallel) is cut the same way: chunk k+1
//    arrives while chunk k is multiplied. Rows are independent in a
//    product, so only the order of the rows has to be restored, which
//    static reshapes, slices and concats do. How many chunks (none
//    included) is priced with lib/Plan's cost model on a cluster: every
//    chunk pays a launch and the link latency again.
// 2. Placement. Every remaining collective becomes a `*_start` issued as
//    soon as its operand exists and a `dist.wait` just before its first
//    use, unless keeping its buffers alive that long would exceed the
//    memory budget.
// 3. Interleaving. Independent micro-batch chains are list-scheduled in
//    pairs, so that one chain computes while the other's collective is in
//    flight.
//
//===----------------------------------------------------------------------===//

#include "Regions.h"
#include "dist/DistDialect.h"
#include "nn/NNCost.h"
#include "nn/NNOps.h"
#include "parc/Transforms/Dist/Passes.h"

#include "parc/Plan/Cluster.h"
#include "parc/Plan/CostModel.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/SmallSet.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/FormatVariadic.h"

#define DEBUG_TYPE "dist-overlap"

namespace parc::dist {
#define GEN_PASS_DEF_DISTOVERLAP
#include "parc/Transforms/Dist/Passes.h.inc"
} // namespace parc::dist

using namespace mlir;
namespace nn = parc::nn;
namespace dist = parc::dist;
namespace plan = parc::plan;

namespace {

using dist::tensorOf;

RankedTensorType withDims(RankedTensorType t, ArrayRef<int64_t> shape) {
  return RankedTensorType::get(shape, t.getElementType());
}

/// Ranks in the group of a collective: the product of its mesh axes.
std::optional<int64_t> groupSize(Operation *op) {
  auto meshRef = op->getAttrOfType<FlatSymbolRefAttr>("mesh");
  auto axes = op->getAttrOfType<ArrayAttr>("mesh_axes");
  auto mesh =
      meshRef ? SymbolTable::lookupNearestSymbolFrom<dist::MeshOp>(op, meshRef)
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
  OperationState state(op->getLoc(),
                       op->getName().getStringRef().str() + "_start");
  state.addOperands(op->getOperands());
  state.addAttributes(op->getAttrs());
  state.addTypes(
      dist::AsyncType::get(b.getContext(), op->getResult(0).getType()));
  return b.create(state);
}

/// A copy of linear `lin` on another input, with the result type given.
Value linearOn(OpBuilder &b, nn::LinearOp lin, Value input,
               RankedTensorType type) {
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

/// The product's input rows along `axis` (a non-feature dim).
bool rowsAxisOk(nn::LinearOp lin, int64_t axis) {
  return axis >= 0 && axis < tensorOf(lin.getInput()).getRank() - 1;
}

bool isCollective(Operation *op) {
  return isa<dist::AllReduceOp, dist::AllGatherOp, dist::ReduceScatterOp,
             dist::AllToAllOp, dist::AllToAllVOp>(op);
}

std::optional<plan::Collective> kindOf(Operation *op) {
  if (isa<dist::AllReduceOp, dist::AllReduceStartOp>(op))
    return plan::Collective::AllReduce;
  if (isa<dist::AllGatherOp, dist::AllGatherStartOp>(op))
    return plan::Collective::AllGather;
  if (isa<dist::ReduceScatterOp, dist::ReduceScatterStartOp>(op))
    return plan::Collective::ReduceScatter;
  // An all_to_all_v is priced at its static bound: at most the send
  // buffer leaves a rank, as in an all_to_all of that size.
  if (isa<dist::AllToAllOp, dist::AllToAllStartOp, dist::AllToAllVOp,
          dist::AllToAllVStartOp>(op))
    return plan::Collective::AllToAll;
  return std::nullopt;
}

/// The whole tensor a collective moves, as lib/Plan's collectiveTime takes
/// it: the larger of its operand and result (a gather's output, a
/// scatter's input).
int64_t wholeBytes(Operation *op) {
  auto payload = [](Type t) {
    if (auto a = dyn_cast<dist::AsyncType>(t))
      return a.getValueType() ? dist::bytesOf(a.getValueType()) : int64_t(0);
    return dist::bytesOf(t);
  };
  return std::max(payload(op->getOperand(0).getType()),
                  payload(op->getResult(0).getType()));
}

/// The cluster peak that products in `element` run at: bf16 and f16 have
/// their own, everything else runs at the f32 one.
StringRef peakDType(Type element) {
  if (element && element.isBF16())
    return "bf16";
  return element && element.isF16() ? "f16" : "f32";
}

std::string microseconds(double s) {
  return llvm::formatv("{0:f2} us", s * 1e6).str();
}

/// Times on the cluster with lib/Plan's formulas: a roofline per op, ring
/// collectives on the link their group uses.
class Pricer {
public:
  explicit Pricer(plan::Cluster cluster) : cluster(std::move(cluster)) {}

  /// The device's rates for products in `element`'s type; fails (with an
  /// error at `op`) when the cluster gives no peak for it.
  FailureOr<plan::DeviceRates> rates(Operation *op, Type element) const {
    llvm::Expected<double> peak = cluster.flopsFor(peakDType(element));
    if (!peak) {
      mlir::emitError(op->getLoc())
          << "dist-overlap: cannot price " << dist::nodeOf(op) << ": "
          << llvm::toString(peak.takeError());
      return failure();
    }
    return plan::DeviceRates{*peak * cluster.computeEfficiency,
                             cluster.memoryBandwidth * cluster.memoryEfficiency,
                             cluster.kernelLatency};
  }

  /// The link of `collective`'s group: ranks `stride` apart, where the
  /// stride is the product of the mesh dims after its axis.
  const plan::Link &link(Operation *collective, int64_t ranks) const {
    int64_t stride = 1;
    auto meshRef = collective->getAttrOfType<FlatSymbolRefAttr>("mesh");
    auto axes = collective->getAttrOfType<ArrayAttr>("mesh_axes");
    auto mesh = meshRef ? SymbolTable::lookupNearestSymbolFrom<dist::MeshOp>(
                              collective, meshRef)
                        : dist::MeshOp();
    if (mesh && axes && !axes.empty())
      if (auto index = mesh.getAxisIndex(cast<StringAttr>(axes[0]).getValue()))
        for (int64_t d : mesh.getShape().drop_front(*index + 1))
          stride *= d;
    return cluster.linkFor(ranks, stride);
  }

  /// One op's roofline: its FLOPs and memory traffic (nn's cost model).
  /// Communication, constants and views (no FLOPs, nothing moved) cost
  /// nothing here.
  double opTime(Operation *op) const {
    auto cost = dyn_cast<nn::CostOpInterface>(op);
    if (!cost)
      return 0;
    double flops = (double)cost.getFlops(), bytes = (double)cost.getBytes();
    if (flops == 0 && bytes == 0)
      return 0;
    Type element = op->getNumResults()
                       ? getElementTypeOrSelf(op->getResult(0).getType())
                       : Type();
    llvm::Expected<double> peak = cluster.flopsFor(peakDType(element));
    if (!peak) {
      llvm::consumeError(peak.takeError());
      return 0;
    }
    return plan::rooflineTime(
        flops, bytes, *peak * cluster.computeEfficiency,
        cluster.memoryBandwidth * cluster.memoryEfficiency,
        cluster.kernelLatency);
  }

  double commTime(Operation *collective, int64_t ranks) const {
    return plan::collectiveTime(*kindOf(collective),
                                (double)wholeBytes(collective), ranks,
                                link(collective, ranks));
  }

  plan::Cluster cluster;
};

/// A collective matmul the pass may cut: the collective, its products, the
/// rows the pieces divide and what the cost model needs.
struct Cut {
  Operation *collective;
  SmallVector<nn::LinearOp> products;
  int64_t rows;
  plan::CollectiveMatmul cm;
};

class Overlapper {
public:
  Overlapper(int64_t chunks, int64_t minRows, int64_t budget,
             const Pricer *pricer, bool explain)
      : chunks(chunks), minRows(minRows), budget(budget), pricer(pricer),
        explain(explain) {}

  /// Step 1 on every candidate; returns how many were decomposed, or fails
  /// when the cluster cannot price a product.
  FailureOr<int64_t> decompose(FunctionOpInterface func);
  /// Step 2; returns how many collectives were started early.
  int64_t place(FunctionOpInterface func);
  /// Step 3; returns how often one chain's collective was left in flight
  /// while another chain computed.
  int64_t interleave(FunctionOpInterface func);

  /// Collective matmuls cut, by pieces.
  std::map<int64_t, int64_t> pieces;

private:
  std::optional<Cut> rowCut(nn::LinearOp lin, Operation *collective);
  std::optional<Cut> gatherCut(dist::AllGatherOp gather);
  /// The pieces for `cut`: the override, or the cost model's choice.
  FailureOr<int64_t> choose(const Cut &cut);
  bool rowReduce(nn::LinearOp lin, Operation *collective, int64_t c);
  bool gatherProducts(dist::AllGatherOp gather, int64_t c);
  bool allowed(const Cut &cut, int64_t c) const {
    return cut.rows % c == 0 && cut.rows / c >= minRows;
  }

  int64_t chunks, minRows, budget;
  const Pricer *pricer;
  bool explain;
};

/// Work of `lin` for the cost model.
void addProduct(plan::CollectiveMatmul &cm, nn::LinearOp lin) {
  nn::Traffic t = nn::trafficOf(lin);
  cm.flops += (double)nn::flopsOf(lin);
  cm.actBytes += (double)t.activationBytes;
  cm.weightBytes += (double)t.weightBytes;
}

std::optional<Cut> Overlapper::rowCut(nn::LinearOp lin, Operation *collective) {
  auto xt = tensorOf(lin.getInput());
  auto n = groupSize(collective);
  if (!n)
    return std::nullopt;
  Cut cut{collective, {lin}, 0, {}};
  if (isa<dist::AllReduceOp>(collective)) {
    // Rows of the product: the sequence dim (the last but one).
    int64_t axis = xt.getRank() - 2;
    if (axis < 0)
      return std::nullopt;
    cut.rows = xt.getDimSize(axis);
  } else {
    auto scatter = cast<dist::ReduceScatterOp>(collective);
    int64_t axis = scatter.getScatterAxis();
    if (scatter.getSizes() || !rowsAxisOk(lin, axis) ||
        xt.getDimSize(axis) % *n)
      return std::nullopt;
    // Each rank's block of rows is cut (see rowReduce).
    cut.rows = xt.getDimSize(axis) / *n;
  }
  cut.cm.kind = *kindOf(collective);
  cut.cm.ranks = *n;
  cut.cm.commBytes = (double)wholeBytes(collective);
  addProduct(cut.cm, lin);
  // The input is cut into pieces, the collective's results concatenated.
  cut.cm.copyBytes =
      (double)(dist::bytesOf(xt) +
               dist::bytesOf(collective->getResult(0).getType()));
  return cut;
}

std::optional<Cut> Overlapper::gatherCut(dist::AllGatherOp gather) {
  auto n = groupSize(gather);
  int64_t axis = gather.getGatherAxis();
  auto xt = tensorOf(gather.getInput());
  if (!n || gather.getSizes() || gather->use_empty() ||
      axis >= xt.getRank() - 1)
    return std::nullopt;
  Cut cut{gather, {}, xt.getDimSize(axis), {}};
  for (Operation *user : gather->getUsers()) {
    auto lin = dyn_cast<nn::LinearOp>(user);
    if (!lin || lin.getInput() != gather.getResult())
      return std::nullopt;
    cut.products.push_back(lin);
    addProduct(cut.cm, lin);
  }
  cut.cm.kind = plan::Collective::AllGather;
  cut.cm.ranks = *n;
  cut.cm.commBytes = (double)wholeBytes(gather);
  // The gathered input is read by every product but moved once.
  cut.cm.actBytes -= (double)(cut.products.size() - 1) *
                     (double)dist::bytesOf(gather.getType());
  // The local rows are cut into pieces, each product's results concatenated.
  cut.cm.copyBytes = (double)dist::bytesOf(xt);
  for (nn::LinearOp lin : cut.products)
    cut.cm.copyBytes += (double)dist::bytesOf(lin.getType());
  return cut;
}

FailureOr<int64_t> Overlapper::choose(const Cut &cut) {
  int64_t c = chunks;
  if (c > 0)
    while (c > 1 && !allowed(cut, c))
      --c;
  if (!pricer)
    return c;
  Operation *op = cut.collective;
  nn::LinearOp product = cut.products.front();
  FailureOr<plan::DeviceRates> rates =
      pricer->rates(op, tensorOf(product.getResult()).getElementType());
  if (failed(rates))
    return failure();
  const plan::Link &link = pricer->link(op, cut.cm.ranks);
  auto isAllowed = [&](int64_t k) { return allowed(cut, k); };
  if (c == 0)
    c = plan::bestCollectiveMatmul(cut.cm, plan::kMaxOverlapChunks, *rates,
                                   link, isAllowed)
            .chunks;
  if (explain) {
    std::string products;
    for (nn::LinearOp lin : cut.products)
      products += (products.empty() ? "" : ", ") + dist::nodeOf(lin);
    InFlightDiagnostic remark = op->emitRemark();
    remark << "collective matmul of " << products << " and its "
           << plan::collectiveName(cut.cm.kind) << " ("
           << (int64_t)cut.cm.commBytes << " B over " << cut.cm.ranks
           << " ranks, " << cut.rows << " rows to cut): not cut "
           << microseconds(plan::collectiveMatmulTime(cut.cm, 1, *rates, link));
    for (int64_t k = 2; k <= plan::kMaxOverlapChunks; k *= 2)
      if (isAllowed(k))
        remark << ", " << k << " pieces "
               << microseconds(
                      plan::collectiveMatmulTime(cut.cm, k, *rates, link));
    remark << "; chosen: ";
    if (c < 2)
      remark << "not cut";
    else
      remark << c << " pieces";
    if (chunks > 0)
      remark << " (fixed by chunks=" << chunks << ")";
  }
  return c;
}

bool Overlapper::rowReduce(nn::LinearOp lin, Operation *collective, int64_t c) {
  Value x = lin.getInput();
  auto xt = tensorOf(x);
  Location loc = collective->getLoc();
  OpBuilder b(collective);
  SmallVector<Value> waited;
  if (auto reduce = dyn_cast<dist::AllReduceOp>(collective)) {
    int64_t axis = xt.getRank() - 2;
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
      waited.push_back(
          dist::WaitOp::create(b, loc, s->getResult(0)).getResult());
    reduce.getResult().replaceAllUsesWith(concat(b, loc, waited, axis));
  } else {
    auto scatter = cast<dist::ReduceScatterOp>(collective);
    int64_t axis = scatter.getScatterAxis();
    int64_t n = *groupSize(scatter);
    // Rank r receives rows [r·S/n, (r+1)·S/n). Chunk k takes the k-th
    // sub-block of every rank's block, so scattering chunk k hands rank r
    // its k-th sub-block, and concatenating over k restores its block.
    int64_t rows = xt.getDimSize(axis);
    int64_t sub = rows / (n * c);
    Value grid = reshape(b, loc, x, unfold(xt.getShape(), axis, {n, c, sub}));
    auto gridShape = tensorOf(grid).getShape();
    SmallVector<Operation *> started;
    for (int64_t k = 0; k < c; ++k) {
      SmallVector<int64_t> starts(gridShape.size(), 0),
          steps(gridShape.size(), 1);
      starts[axis + 1] = k;
      SmallVector<int64_t> sliced(gridShape);
      sliced[axis + 1] = 1;
      Value piece = nn::SliceOp::create(b, loc, withDims(xt, sliced), grid,
                                        b.getDenseI64ArrayAttr(starts),
                                        b.getDenseI64ArrayAttr(steps));
      SmallVector<int64_t> rowsShape(xt.getShape());
      rowsShape[axis] = n * sub;
      piece = reshape(b, loc, piece, rowsShape);
      SmallVector<int64_t> yShape(lin.getType().getShape());
      yShape[axis] = n * sub;
      Value y = linearOn(b, lin, piece, withDims(lin.getType(), yShape));
      yShape[axis] = sub;
      auto s = dist::ReduceScatterStartOp::create(
          b, loc,
          dist::AsyncType::get(b.getContext(), withDims(lin.getType(), yShape)),
          scatter.getMeshAttr(), scatter.getMeshAxesAttr(), y,
          scatter.getScatterAxisAttr(), scatter.getReductionAttr(),
          DenseI64ArrayAttr());
      started.push_back(s);
    }
    for (Operation *s : started)
      waited.push_back(
          dist::WaitOp::create(b, loc, s->getResult(0)).getResult());
    scatter.getResult().replaceAllUsesWith(concat(b, loc, waited, axis));
  }
  collective->erase();
  lin.erase();
  return true;
}

bool Overlapper::gatherProducts(dist::AllGatherOp gather, int64_t c) {
  int64_t n = *groupSize(gather);
  int64_t axis = gather.getGatherAxis();
  Value x = gather.getInput();
  auto xt = tensorOf(x);
  SmallVector<nn::LinearOp> products;
  for (Operation *user : gather->getUsers())
    products.push_back(cast<nn::LinearOp>(user));
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
      if (!def || def->getBlock() != first->getBlock() ||
          def->isBeforeInBlock(first))
        continue;
      for (Value operand : def->getOperands()) {
        Operation *d = operand.getDefiningOp();
        if (d && d->getBlock() == first->getBlock() &&
            !d->isBeforeInBlock(first))
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
    shape[axis] = n * sub;
    started.push_back(dist::AllGatherStartOp::create(
        b, loc, dist::AsyncType::get(b.getContext(), withDims(xt, shape)),
        gather.getMeshAttr(), gather.getMeshAxesAttr(), piece,
        gather.getGatherAxisAttr(), DenseI64ArrayAttr(), IntegerAttr()));
  }
  b.setInsertionPoint(first);
  SmallVector<SmallVector<Value>> slots(products.size());
  for (Operation *s : started) {
    Value rows = dist::WaitOp::create(b, loc, s->getResult(0)).getResult();
    for (auto [i, lin] : llvm::enumerate(products)) {
      SmallVector<int64_t> shape(lin.getType().getShape());
      shape[axis] = n * sub;
      Value y = linearOn(b, lin, rows, withDims(lin.getType(), shape));
      slots[i].push_back(reshape(
          b, loc, y, unfold(lin.getType().getShape(), axis, {n, 1, sub})));
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

FailureOr<int64_t> Overlapper::decompose(FunctionOpInterface func) {
  SmallVector<Operation *> candidates;
  func.walk([&](Operation *op) {
    if (isa<dist::AllReduceOp, dist::ReduceScatterOp, dist::AllGatherOp>(op))
      candidates.push_back(op);
  });
  int64_t count = 0;
  for (Operation *op : candidates) {
    auto gather = dyn_cast<dist::AllGatherOp>(op);
    auto lin = gather ? nn::LinearOp()
                      : op->getOperand(0).getDefiningOp<nn::LinearOp>();
    if (!gather && !(lin && lin->hasOneUse()))
      continue;
    std::optional<Cut> cut = gather ? gatherCut(gather) : rowCut(lin, op);
    if (!cut)
      continue;
    FailureOr<int64_t> c = choose(*cut);
    if (failed(c))
      return failure();
    if (*c < 2)
      continue;
    bool done = gather ? gatherProducts(gather, *c) : rowReduce(lin, op, *c);
    count += done;
    pieces[*c] += done;
  }
  return count;
}

int64_t Overlapper::place(FunctionOpInterface func) {
  Block &body = func.getFunctionBody().front();
  SmallVector<Operation *> collectives;
  for (Operation &op : body)
    if (isCollective(&op))
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
    // Earliest: after the operands' definitions (an all_to_all_v's counts
    // too). Latest: the first user.
    Operation *after = nullptr;
    for (Value v : op->getOperands()) {
      Operation *def = v.getDefiningOp();
      if (def && def->getBlock() == &body &&
          (!after || after->isBeforeInBlock(def)))
        after = def;
    }
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
    bool overBudget =
        budget > 0 && inFlightAt(startAt, waitAt) + bytes > budget;
    if (overBudget)
      b.setInsertionPoint(op); // no room: start where it was
    Operation *start = startOf(b, op);
    b.setInsertionPoint(waitAt);
    auto wait = dist::WaitOp::create(b, op->getLoc(), start->getResult(0));
    op->getResult(0).replaceAllUsesWith(wait.getResult());
    early += start->getNextNode() != wait;
    windows.push_back({start, wait, bytes});
    if (explain && pricer) {
      // What runs between the start and the wait hides the collective.
      double hidden = 0;
      for (Operation *o = start->getNextNode(); o != wait; o = o->getNextNode())
        hidden += pricer->opTime(o);
      auto n = groupSize(op);
      double comm = n ? pricer->commTime(start, *n) : 0;
      InFlightDiagnostic remark = op->emitRemark();
      remark << dist::nodeOf(op) << " (" << wholeBytes(op) << " B): blocking "
             << microseconds(comm) << " exposed, started early "
             << microseconds(std::max(0.0, comm - hidden)) << " exposed ("
             << microseconds(hidden) << " of independent compute before its "
             << "first use); chosen: ";
      remark << (overBudget ? "started in place (the memory budget)"
                            : "started early");
    }
    op->erase();
  }
  return early;
}

/// A wait for a started collective (not a pipeline send or receive).
bool waitsForCollective(Operation *op) {
  auto wait = dyn_cast<dist::WaitOp>(op);
  Operation *start = wait ? wait.getAsync().getDefiningOp() : nullptr;
  return start && kindOf(start).has_value();
}

/// A wait for a pipeline receive: the data of a chain that starts with one
/// may not have arrived yet.
bool waitsForReceive(Operation *op) {
  if (isa<dist::RecvOp>(op))
    return true;
  auto wait = dyn_cast<dist::WaitOp>(op);
  return wait && wait.getAsync().getDefiningOp<dist::RecvStartOp>();
}

/// A send, a receive, or the wait for a started receive.
bool isPointToPoint(Operation *op) {
  return isa<dist::SendOp, dist::SendStartOp, dist::RecvOp, dist::RecvStartOp>(
             op) ||
         waitsForReceive(op);
}

/// The ops of a function body by micro-batch chain: every op's chain is
/// its tag, else the one chain its operands come from. Ops of no chain
/// (weights, receives posted up front) run first; ops reading several
/// chains (the stacked outputs) last, and so does everything computed from
/// them.
struct Chains {
  static constexpr int64_t kFree = -1, kJoined = -2;
  llvm::DenseMap<Operation *, int64_t> chainOf;
  SmallVector<Operation *> free, joined;
  SmallVector<SmallVector<Operation *>> chains;

  /// The chain of `op` by the data flow (its nested ops' operands too).
  int64_t byOperands(Operation &op, Block &body) const {
    llvm::SmallSet<int64_t, 2> from;
    op.walk([&](Operation *inner) {
      for (Value v : inner->getOperands()) {
        Operation *def = v.getDefiningOp();
        Operation *top = def ? body.findAncestorOpInBlock(*def) : nullptr;
        auto it = top && top != &op ? chainOf.find(top) : chainOf.end();
        if (it != chainOf.end())
          from.insert(it->second);
      }
    });
    from.erase(kFree);
    return from.empty() ? kFree : from.size() == 1 ? *from.begin() : kJoined;
  }

  void add(Operation *op, int64_t c) {
    chainOf[op] = c;
    if (c == kFree)
      free.push_back(op);
    else if (c == kJoined)
      joined.push_back(op);
    else {
      if ((int64_t)chains.size() <= c)
        chains.resize(c + 1);
      chains[c].push_back(op);
    }
  }
};

/// The chains of `body`, or none when a tag is no micro-batch index or the
/// data flow contradicts it (the order is then left alone).
std::optional<Chains> chainsOf(Block &body) {
  Chains chains;
  for (Operation &op : body.without_terminator()) {
    int64_t c = chains.byOperands(op, body);
    if (auto tag = op.getAttrOfType<IntegerAttr>(dist::kMicroBatch)) {
      int64_t ops = body.getOperations().size();
      if (tag.getInt() < 0 || tag.getInt() >= ops ||
          (c != Chains::kFree && c != tag.getInt()))
        return std::nullopt;
      c = tag.getInt();
    } else if (c >= 0 && isa<dist::WaitOp>(op) &&
               cast<dist::WaitOp>(op)
                   .getAsync()
                   .getDefiningOp<dist::SendStartOp>()) {
      c = Chains::kJoined; // pipeline sends are waited for at the end, as placed
    }
    chains.add(&op, c);
  }
  return chains;
}

/// Step 3's list schedule over two chains at a time: the first two not
/// done. The current chain runs until it would wait for a collective it
/// started since it last took over; then the other one runs while that
/// collective is in flight.
class ChainScheduler {
public:
  ChainScheduler(const Chains &chains, int64_t budget, const Pricer *pricer)
      : c(chains), m(chains.chains.size()), budget(budget), pricer(pricer),
        next(m, 0) {
    // Point-to-point operations are matched by their order between two
    // ranks, and a stage blocked in a receive must already have sent what
    // its peer needs first: the chains' sends and receive waits keep their
    // program order, which the pipeline made deadlock-free.
    for (auto &chain : c.chains)
      for (Operation *op : chain)
        if (isPointToPoint(op))
          p2p.push_back(op);
    llvm::sort(p2p, [](Operation *a, Operation *b) {
      return a->isBeforeInBlock(b);
    });
  }

  void run() {
    int64_t cur = 0;
    while (true) {
      SmallVector<int64_t, 2> active;
      for (int64_t k = 0; k < m && active.size() < 2; ++k)
        if (!done(k))
          active.push_back(k);
      if (active.empty())
        break;
      if (done(cur))
        cur = active.front();
      int64_t other = -1;
      for (int64_t k : active)
        if (k != cur && other < 0)
          other = k;
      int64_t then = runChain(cur, other);
      fresh.clear();
      if (then >= 0)
        cur = then;
      else if (other >= 0)
        cur = other;
    }
  }

  SmallVector<Operation *> order;
  int64_t switches = 0;
  /// For the explanation, by the cost model: the collectives left in
  /// flight, and what of them the other chain's compute hid.
  double leftTime = 0, hiddenTime = 0;

private:
  bool done(int64_t k) const { return next[k] == c.chains[k].size(); }
  Operation *nextOf(int64_t k) const { return c.chains[k][next[k]]; }

  /// The chain that must run first when `k`'s next op is a point-to-point
  /// one out of turn, else -1.
  int64_t mustWaitFor(int64_t k) const {
    Operation *op = nextOf(k);
    if (nextP2P < p2p.size() && p2p[nextP2P] != op && isPointToPoint(op))
      return c.chainOf.lookup(p2p[nextP2P]);
    return -1;
  }

  /// Runs chain `cur` until it is done (-1) or hands over to the chain
  /// returned.
  int64_t runChain(int64_t cur, int64_t other) {
    while (!done(cur)) {
      Operation *op = nextOf(cur);
      if (int64_t first = mustWaitFor(cur); first >= 0)
        return first;
      if (waitsForCollective(op) && leaveInFlight(op, other))
        return other;
      schedule(cur, op);
    }
    return -1;
  }

  /// At `wait`: leaves its collective in flight when it started in this
  /// run, `other` can run and the budget holds it; else lands it.
  bool leaveInFlight(Operation *wait, int64_t other) {
    Operation *start = cast<dist::WaitOp>(wait).getAsync().getDefiningOp();
    int64_t bytes =
        dist::bytesOf(start->getOperand(0).getType()) + wholeBytes(start);
    if (fresh.contains(start) && other >= 0 && mustWaitFor(other) < 0 &&
        !waitsForReceive(nextOf(other)) &&
        (budget == 0 || inFlight + bytes <= budget)) {
      leftInFlight[start] = bytes;
      inFlight += bytes;
      ++switches;
      return true;
    }
    auto it = leftInFlight.find(start);
    if (it == leftInFlight.end())
      return false;
    inFlight -= it->second;
    leftInFlight.erase(it);
    if (auto n = pricer ? groupSize(start) : std::nullopt) {
      double comm = pricer->commTime(start, *n);
      leftTime += comm;
      hiddenTime += std::min(comm, covered.lookup(start));
    }
    return false;
  }

  void schedule(int64_t cur, Operation *op) {
    if (pricer && !leftInFlight.empty()) {
      double t = pricer->opTime(op);
      for (auto &entry : leftInFlight)
        covered[entry.first] += t;
    }
    if (kindOf(op))
      fresh.insert(op);
    if (nextP2P < p2p.size() && p2p[nextP2P] == op)
      ++nextP2P;
    order.push_back(op);
    ++next[cur];
  }

  const Chains &c;
  int64_t m, budget;
  const Pricer *pricer;
  SmallVector<size_t> next;
  SmallVector<Operation *> p2p;
  size_t nextP2P = 0;
  llvm::SmallPtrSet<Operation *, 8> fresh; // starts of the current run
  llvm::DenseMap<Operation *, int64_t> leftInFlight; // start → bytes
  int64_t inFlight = 0;
  llvm::DenseMap<Operation *, double> covered;
};

int64_t Overlapper::interleave(FunctionOpInterface func) {
  Block &body = func.getFunctionBody().front();
  std::optional<Chains> chains = chainsOf(body);
  int64_t m = chains ? chains->chains.size() : 0;
  if (m < 2)
    return 0;
  ChainScheduler scheduler(*chains, budget, pricer);
  scheduler.run();
  Operation *terminator = body.getTerminator();
  for (ArrayRef<Operation *> part :
       {ArrayRef<Operation *>(chains->free),
        ArrayRef<Operation *>(scheduler.order),
        ArrayRef<Operation *>(chains->joined)})
    for (Operation *op : part)
      op->moveBefore(terminator);
  LLVM_DEBUG(llvm::dbgs() << "dist-overlap: " << m << " chains, "
                          << scheduler.switches << " switches\n");
  if (explain && pricer)
    mlir::emitRemark(func.getLoc())
        << "interleaved " << m << " micro-batch chains with "
        << scheduler.switches << " switch(es): the other chain's compute "
        << "hides " << microseconds(scheduler.hiddenTime) << " of the "
        << microseconds(scheduler.leftTime)
        << " of collectives left in flight";
  return scheduler.switches;
}

struct DistOverlapPass : parc::dist::impl::DistOverlapBase<DistOverlapPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (chunks < 0 || minRows < 1 || memoryBudget < 0) {
      mlir::emitError(module.getLoc())
          << "dist-overlap: chunks must be non-negative, "
             "min-rows at least 1 and memory-budget non-negative";
      return signalPassFailure();
    }
    // The cost model decides the cuts unless they are fixed, and prices
    // every alternative for the explanation.
    std::optional<Pricer> pricer;
    if (chunks == 0 || explain) {
      llvm::Expected<plan::Cluster> c =
          plan::loadCluster(cluster, {plan::presetDir()});
      if (!c) {
        // At the model's location: a dump of the module would bury it.
        mlir::emitError(module.getLoc())
            << "dist-overlap: " << llvm::toString(c.takeError());
        return signalPassFailure();
      }
      pricer.emplace(std::move(*c));
    }
    Overlapper overlapper(chunks, minRows, memoryBudget,
                          pricer ? &*pricer : nullptr, explain);
    int64_t decomposed = 0, early = 0, interleaved = 0;
    for (auto func : module.getOps<FunctionOpInterface>()) {
      if (func.isExternal())
        continue;
      FailureOr<int64_t> cut = overlapper.decompose(func);
      if (failed(cut))
        return signalPassFailure();
      decomposed += *cut;
      early += overlapper.place(func);
      if (interleave)
        interleaved += overlapper.interleave(func);
    }
    Builder b(&getContext());
    SmallVector<NamedAttribute> pieces;
    for (auto [c, count] : overlapper.pieces)
      pieces.push_back(
          b.getNamedAttr(std::to_string(c), b.getI64IntegerAttr(count)));
    module->setAttr(
        "dist.overlap",
        b.getDictionaryAttr(
            {b.getNamedAttr("decomposed", b.getI64IntegerAttr(decomposed)),
             b.getNamedAttr("early_starts", b.getI64IntegerAttr(early)),
             b.getNamedAttr("interleaved", b.getI64IntegerAttr(interleaved)),
             b.getNamedAttr("pieces", b.getDictionaryAttr(pieces))}));
  }
};

} // namespace
