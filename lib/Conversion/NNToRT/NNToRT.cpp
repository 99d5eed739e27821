//===- NNToRT.cpp - convert-nn-to-rt ----------------------------*- C++ -*-===//
//
// With static shapes and one arena, lowering is a single walk in program
// order: every tensor value gets a buffer, every nn op one kernel call named
// after it. No type converter or pattern driver is needed, and the kernel
// names and parameters stay exactly the nn op names and attributes, so the
// rt program reads like the nn one.
//
//===----------------------------------------------------------------------===//

#include "ScoreModifier.h"
#include "dist/DistDialect.h"
#include "nn/NNOps.h"
#include "parc/Conversion/Passes.h"
#include "rt/RTDialect.h"
#include "rt/RTKernels.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/StringSet.h"

#define DEBUG_TYPE "convert-nn-to-rt"

namespace parc {
#define GEN_PASS_DEF_CONVERTNNTORT
#include "parc/Conversion/Passes.h.inc"
} // namespace parc

using namespace mlir;
using parc::FusedScoreModifier;
namespace dist = parc::dist;
namespace nn = parc::nn;
namespace rt = parc::rt;

namespace {

/// The weight (embedded or external) a chain of dist.local_part ops cuts,
/// if any.
Value weightUnder(dist::LocalPartOp part) {
  Value v = part.getInput();
  while (auto inner = v.getDefiningOp<dist::LocalPartOp>())
    v = inner.getInput();
  return nn::weightSource(v) == v ? v : Value();
}

/// A weight, or a rank's part of one (what `weightOf` takes), rounded from
/// f32 to bf16/f16 by `cast`: the writer rounds it while streaming the
/// shard (rt.weight's `stored_type`), so no f32 copy reaches the rank and no
/// cast runs per forward.
bool narrowsWeight(Operation *op) {
  auto cast = dyn_cast<nn::CastOp>(op);
  if (!cast)
    return false;
  Value in = cast.getInput();
  auto part = in.getDefiningOp<dist::LocalPartOp>();
  Type from = cast.getInput().getType(), to = cast.getType();
  return (part ? bool(weightUnder(part)) : nn::weightSource(in) == in) &&
         getElementTypeOrSelf(from).isF32() &&
         isa<BFloat16Type, Float16Type>(getElementTypeOrSelf(to));
}

/// Read only through rank parts or narrowing casts: no rank stores the
/// whole tensor, or the tensor in its stored f32.
bool onlyCut(Operation *op) {
  return !op->use_empty() && llvm::all_of(op->getUsers(), [](Operation *u) {
    return isa<dist::LocalPartOp>(u) || narrowsWeight(u);
  });
}

/// Passes `from`'s attributes to the call `to` of `kernel` as its
/// parameters. A dialect-prefixed annotation an earlier pass left stays
/// behind unless RTKernels.td declares it on the kernel for a later stage
/// that reads it (`dist.ffn_shards`: the MoE manifest's expert split); any
/// other attribute is passed for the rt verifier to check against the
/// declaration.
void copyParams(Operation *from, Operation *to, const rt::KernelDecl &kernel) {
  for (NamedAttribute attr : from->getAttrDictionary()) {
    StringRef name = attr.getName().getValue();
    if (name == "operandSegmentSizes" ||
        (name.contains('.') && !kernel.lookupParam(name)))
      continue;
    to->setAttr(attr.getName(), attr.getValue());
  }
}

MemRefType bufferType(Type tensor) {
  auto t = cast<RankedTensorType>(tensor);
  return MemRefType::get(t.getShape(), t.getElementType());
}

class Lowering {
public:
  Lowering(OpBuilder &b, bool fusedAttention)
      : b(b), fusedAttention(fusedAttention) {}

  LogicalResult lower(func::FuncOp oldFunc, func::FuncOp newFunc);

private:
  LogicalResult lowerOp(Operation *op);
  LogicalResult lowerAttention(nn::AttentionOp op);
  /// One attention_fused kernel: q, k, v and the modifier's mask, if any.
  void lowerFusedAttention(nn::AttentionOp op, const FusedScoreModifier &mod);
  /// Lowers a collective or a send/recv, blocking or started: `ins` and
  /// `outs` are what the runtime call moves, and the result buffer exists
  /// once they have arrived (after the call, or after its wait).
  LogicalResult lowerComm(Operation *op);
  /// The runtime gathers along the leading dim, [group, local...]: a
  /// transpose moves the group next to the gathered dim and a view merges
  /// the two.
  Value assembleGather(Location loc, Value stacked, int64_t axis,
                       RankedTensorType result);
  /// A dist.local_part `op` of `in` along `axis`, which the runtime's
  /// `kernel` runs on the leading dim: `axis` is moved to the front around it.
  Value lowerOnLeadingDim(Operation *op, rt::Kernel kernel, Value in,
                          RankedTensorType result, int64_t axis);
  /// A transposed copy of `buf` (out[i] = in[perm[i]]), or a view when only
  /// dims of size 1 move.
  Value permuted(Location loc, Value buf, ArrayRef<int64_t> perm);
  Value alloc(Location loc, Type tensor) {
    return rt::AllocOp::create(b, loc, bufferType(tensor), IntegerAttr());
  }
  /// A weight name that is unique in the program.
  std::string uniqueName(StringRef base) {
    std::string name = base.str();
    for (int i = 1; !names.insert(name).second; ++i)
      name = (base + "_" + Twine(i)).str();
    return name;
  }
  Value buffer(Value tensor) { return map.lookup(tensor); }
  /// The rt.weight of `type` for `v`, a weight or a rank's part of one
  /// (then sharded by the cuts of its dist.local_part chain).
  rt::WeightOp weightOrPart(Location loc, Value v, Type type);
  /// An rt.weight of `type` whose bytes come from the weight `source`: its
  /// elements, or its external reference (location, offset, length,
  /// padding), which the weight writer reads.
  rt::WeightOp weightOf(Location loc, Value source, Type type,
                        StringRef suffix);

  OpBuilder &b;
  bool fusedAttention;
  IRMapping map;
  llvm::StringSet<> names;
  /// Started communication: its request, and how to finish at the wait
  /// (the result buffer; null for a send).
  llvm::DenseMap<Value, std::pair<Value, std::function<Value()>>> started;
};

LogicalResult Lowering::lower(func::FuncOp oldFunc, func::FuncOp newFunc) {
  Block &body = oldFunc.getBody().front();
  if (Attribute capacity = oldFunc->getAttr("parc.kv_max_seq"))
    newFunc->setAttr("rt.max_seq", capacity);
  b.setInsertionPointToStart(newFunc.addEntryBlock());
  for (BlockArgument arg : body.getArguments()) {
    auto name = oldFunc.getArgAttrOfType<StringAttr>(arg.getArgNumber(), "onnx.name");
    std::string argName =
        name ? name.str() : "input_" + std::to_string(arg.getArgNumber());
    // Located at the graph input it reads: the dumps name it as they name
    // a node.
    Location loc = NameLoc::get(b.getStringAttr(argName), oldFunc.getLoc());
    auto input = rt::InputOp::create(b, loc, bufferType(arg.getType()),
                                     arg.getArgNumber(), argName);
    // Its part in the token loop (nn-kv-cache): the runtime feeds it.
    if (auto role = oldFunc.getArgAttrOfType<StringAttr>(arg.getArgNumber(),
                                                         "parc.kv_role"))
      input->setAttr("role", role);
    map.map(arg, input);
  }
  for (Operation &op : body.without_terminator())
    if (failed(lowerOp(&op)))
      return failure();
  // Outputs must own their bytes: an input, a weight or a buffer already
  // published under another name is copied first.
  auto ret = cast<func::ReturnOp>(body.getTerminator());
  llvm::DenseSet<Value> published;
  for (auto [i, v] : llvm::enumerate(ret.getOperands())) {
    auto name = oldFunc.getResultAttrOfType<StringAttr>(i, "onnx.name");
    std::string outName = name ? name.str() : "output_" + std::to_string(i);
    Location loc = NameLoc::get(b.getStringAttr(outName), ret.getLoc());
    Value buf = buffer(v);
    Value root = buf;
    while (auto view = root.getDefiningOp<rt::ViewOp>())
      root = view.getSource();
    if (!root.getDefiningOp<rt::AllocOp>() || !published.insert(root).second) {
      Value copy = alloc(loc, v.getType());
      rt::KernelOp::create(b, loc, kernelName(rt::Kernel::Copy),
                           ValueRange{buf}, ValueRange{copy});
      buf = copy;
    }
    rt::OutputOp::create(b, loc, i, outName, buf);
  }
  func::ReturnOp::create(b, ret.getLoc());
  return success();
}

rt::WeightOp Lowering::weightOf(Location loc, Value source, Type type,
                                StringRef suffix) {
  if (auto ext = source.getDefiningOp<nn::ExternalWeightOp>()) {
    auto w = rt::WeightOp::create(b, loc, bufferType(type),
                                  uniqueName((ext.getName() + suffix).str()),
                                  ElementsAttr());
    w->setAttr("location", ext.getLocationAttr());
    w->setAttr("offset", ext.getOffsetAttr());
    w->setAttr("length", ext.getLengthAttr());
    if (ext.getPaddingAttr())
      w->setAttr("padding", ext.getPaddingAttr());
    if (ext.getPaddingBlocksAttr())
      w->setAttr("padding_blocks", ext.getPaddingBlocksAttr());
    return w;
  }
  ElementsAttr value = nn::weightElements(source);
  std::string base = "const";
  if (auto res = dyn_cast<DenseResourceElementsAttr>(value))
    base = res.getRawHandle().getKey().str();
  return rt::WeightOp::create(b, loc, bufferType(type),
                              uniqueName(base + suffix.str()), value);
}

rt::WeightOp Lowering::weightOrPart(Location loc, Value v, Type type) {
  auto part = v.getDefiningOp<dist::LocalPartOp>();
  if (!part)
    return weightOf(loc, v, type, "");
  // A rank's part of a weight is a sharded weight: the weight writer cuts
  // it per rank at compile time, from the constant's elements or from the
  // external file. A part of a part (an expert split over "ep", then its
  // ffn over "tp") is one weight cut twice: `shard` lists the shardings,
  // the one of the whole weight first, each next one of the part before.
  rt::WeightOp w = weightOf(loc, weightUnder(part), type, ".part");
  SmallVector<Attribute> cuts;
  for (auto p = part; p; p = p.getInput().getDefiningOp<dist::LocalPartOp>())
    cuts.push_back(p.getSharding());
  std::reverse(cuts.begin(), cuts.end());
  w->setAttr("shard", b.getArrayAttr(cuts));
  return w;
}

LogicalResult Lowering::lowerOp(Operation *op) {
  Location loc = op->getLoc();
  if (op->getNumResults() == 1 &&
      nn::weightSource(op->getResult(0)) == op->getResult(0)) {
    if (onlyCut(op))
      return success();
    map.map(op->getResult(0),
            weightOf(loc, op->getResult(0), op->getResult(0).getType(), ""));
    return success();
  }
  if (isa<arith::ConstantOp>(op))
    return op->emitOpError("only tensor constants can become weights");
  if (auto part = dyn_cast<dist::LocalPartOp>(op); part && weightUnder(part)) {
    if (onlyCut(part))
      return success();
    map.map(part.getResult(), weightOrPart(loc, part, part.getType()));
    return success();
  }
  if (narrowsWeight(op)) {
    auto narrowing = cast<nn::CastOp>(op);
    rt::WeightOp w =
        weightOrPart(loc, narrowing.getInput(), narrowing.getType());
    w->setAttr("stored_type", TypeAttr::get(getElementTypeOrSelf(
                                  narrowing.getInput().getType())));
    map.map(narrowing.getResult(), w);
    return success();
  }
  if (auto part = dyn_cast<dist::LocalPartOp>(op)) {
    // This rank's slice of a computed value every rank holds whole: one
    // dimension split evenly over one axis, the chunk of the rank's
    // coordinate (what the runtime's local_chunk takes).
    dist::ShardingAttr s = part.getSharding();
    SmallVector<int64_t> dims;
    for (int64_t d = 0, e = s.getSplitAxes().size(); d < e; ++d)
      if (!s.getSplitAxes(d).empty())
        dims.push_back(d);
    if (dims.size() != 1 || s.getSplitAxes(dims[0]).size() != 1 ||
        !s.getBlocks().empty() || !s.getReplicas().empty())
      return op->emitOpError("a computed value is sliced only evenly, along "
                             "one dimension over one mesh axis");
    map.map(part.getResult(),
            lowerOnLeadingDim(op, rt::Kernel::LocalChunk, part.getInput(),
                              part.getType(), dims[0]));
    return success();
  }
  if (auto scatter = dyn_cast<dist::ReduceScatterOp>(op);
      scatter && (scatter.getSizesAttr() ||
                  scatter.getReduction() != dist::ReductionKind::sum))
    return op->emitOpError("only even sum reduce-scatters have a runtime "
                           "kernel");
  if (auto scatter = dyn_cast<dist::ReduceScatterStartOp>(op);
      scatter && (scatter.getSizesAttr() ||
                  scatter.getReduction() != dist::ReductionKind::sum))
    return op->emitOpError("only even sum reduce-scatters have a runtime "
                           "kernel");
  if (isa<dist::AllReduceOp, dist::AllGatherOp, dist::ReduceScatterOp,
          dist::AllReduceStartOp, dist::AllGatherStartOp,
          dist::ReduceScatterStartOp, dist::SendOp, dist::RecvOp,
          dist::SendStartOp, dist::RecvStartOp, dist::AllToAllOp,
          dist::AllToAllStartOp, dist::AllToAllVOp, dist::AllToAllVStartOp>(
          op))
    return lowerComm(op);
  if (auto wait = dyn_cast<dist::WaitOp>(op)) {
    auto it = started.find(wait.getAsync());
    if (it == started.end())
      return op->emitOpError("waits for a communication that was not lowered");
    rt::WaitOp::create(b, loc, it->second.first);
    if (wait->getNumResults())
      map.map(wait->getResult(0), it->second.second());
    return success();
  }
  if (auto reshape = dyn_cast<nn::ReshapeOp>(op)) {
    map.map(reshape.getResult(),
            rt::ViewOp::create(b, loc, bufferType(reshape.getType()),
                               buffer(reshape.getInput())));
    return success();
  }
  if (auto attention = dyn_cast<nn::AttentionOp>(op))
    return lowerAttention(attention);
  if (auto write = dyn_cast<nn::KVCacheWriteOp>(op)) {
    // In place: the cache is a persistent input buffer, and the result is
    // that buffer (nothing else reads the cache before the write).
    Value cache = buffer(write.getCache());
    auto kernel = rt::KernelOp::create(
        b, loc, kernelName(rt::Kernel::KvCacheWrite),
        ValueRange{buffer(write.getUpdate()), buffer(write.getPosition())},
        ValueRange{cache});
    kernel->setAttr("axis", write.getAxisAttr());
    map.map(write.getResult(), cache);
    return success();
  }
  // An expert-parallel MoE's permutation reads its counts from buffers:
  // one kernel on the operands and results, like an nn op (the group is in
  // the attributes). The kernel is the one named after the op, if
  // RTKernels.td declares it.
  bool moeStep = isa<dist::MoePermuteOp>(op);
  const rt::KernelDecl *decl = rt::lookupKernel(op->getName().stripDialect());
  if ((!moeStep && !isa_and_nonnull<nn::NNDialect>(op->getDialect())) ||
      op->getNumRegions() || !decl)
    return op->emitOpError("has no runtime kernel");

  SmallVector<Value> ins, outs;
  for (Value v : op->getOperands())
    ins.push_back(buffer(v));
  for (Value r : op->getResults()) {
    outs.push_back(alloc(loc, r.getType()));
    map.map(r, outs.back());
  }
  auto kernel = rt::KernelOp::create(b, loc, decl->name, ins, outs);
  copyParams(op, kernel, *decl);
  return success();
}

/// The ranks in each group of collective `op` (its verifier resolved the
/// mesh).
static int64_t groupSize(Operation *op) {
  auto mesh = SymbolTable::lookupNearestSymbolFrom<dist::MeshOp>(
      op, op->getAttrOfType<FlatSymbolRefAttr>("mesh"));
  auto axes = op->getAttrOfType<ArrayAttr>("mesh_axes");
  return *mesh.getGroupSize(
      llvm::to_vector(axes.getAsValueRange<StringAttr>()));
}

/// The permutation that moves `axis` to the front, and its inverse.
static std::pair<SmallVector<int64_t>, SmallVector<int64_t>>
leadingPerms(int64_t rank, int64_t axis) {
  SmallVector<int64_t> toFront{axis}, back;
  for (int64_t d = 0; d < rank; ++d)
    if (d != axis)
      toFront.push_back(d);
  for (int64_t d = 1; d <= axis; ++d)
    back.push_back(d);
  back.push_back(0);
  for (int64_t d = axis + 1; d < rank; ++d)
    back.push_back(d);
  return {toFront, back};
}

Value Lowering::permuted(Location loc, Value buf, ArrayRef<int64_t> perm) {
  auto t = cast<MemRefType>(buf.getType());
  SmallVector<int64_t> shape;
  for (int64_t d : perm)
    shape.push_back(t.getDimSize(d));
  // Moving only dims of size 1 (a batch of one before the sequence) keeps
  // every element in place: a view, not a copy.
  SmallVector<int64_t> moved;
  for (int64_t d : perm)
    if (t.getDimSize(d) != 1)
      moved.push_back(d);
  if (llvm::is_sorted(moved))
    return rt::ViewOp::create(b, loc, MemRefType::get(shape, t.getElementType()),
                              buf);
  Value out = alloc(loc, RankedTensorType::get(shape, t.getElementType()));
  auto tr = rt::KernelOp::create(b, loc, kernelName(rt::Kernel::Transpose),
                                 ValueRange{buf}, ValueRange{out});
  tr->setAttr("perm", b.getDenseI64ArrayAttr(perm));
  return out;
}

Value Lowering::lowerOnLeadingDim(Operation *op, rt::Kernel kernel, Value in,
                                  RankedTensorType result, int64_t axis) {
  Location loc = op->getLoc();
  auto [toFront, back] = leadingPerms(result.getRank(), axis);
  // [.., a, ..] -> [a, ..]: the runtime splits the leading dim into blocks.
  Value src = axis > 0 ? permuted(loc, buffer(in), toFront) : buffer(in);
  SmallVector<int64_t> shape;
  for (int64_t d : toFront)
    shape.push_back(result.getDimSize(d));
  Value out = alloc(loc, RankedTensorType::get(shape, result.getElementType()));
  auto call = rt::KernelOp::create(b, loc, kernelName(kernel), ValueRange{src},
                                   ValueRange{out});
  // The group: the mesh axes the local part's dimension is split over.
  auto sharding = cast<dist::LocalPartOp>(op).getSharding();
  call->setAttr("mesh", sharding.getMesh());
  call->setAttr("mesh_axes", sharding.getSplitAxes()[axis]);
  return axis > 0 ? permuted(loc, out, back) : out;
}

Value Lowering::assembleGather(Location loc, Value stacked, int64_t axis,
                               RankedTensorType result) {
  auto stackedType = cast<MemRefType>(stacked.getType());
  if (axis > 0) {
    SmallVector<int64_t> perm;
    for (int64_t d = 1; d <= axis; ++d)
      perm.push_back(d);
    perm.push_back(0);
    for (int64_t d = axis + 1; d < stackedType.getRank(); ++d)
      perm.push_back(d);
    stacked = permuted(loc, stacked, perm);
  }
  return rt::ViewOp::create(b, loc, bufferType(result), stacked);
}

LogicalResult Lowering::lowerComm(Operation *op) {
  Location loc = op->getLoc();
  StringRef callee = op->getName().stripDialect();
  bool async = callee.consume_back("_start");
  const rt::KernelDecl *decl = rt::lookupKernel(callee);
  if (!decl)
    return op->emitOpError("has no runtime kernel");
  Value result = op->getNumResults() ? op->getResult(0) : Value();
  RankedTensorType type;
  if (result) {
    auto async = dyn_cast<dist::AsyncType>(result.getType());
    type = dyn_cast_or_null<RankedTensorType>(async ? async.getValueType()
                                                    : result.getType());
  }
  SmallVector<Value> ins, outs;
  std::function<Value()> finish = [] { return Value(); };
  if (callee == "send") {
    ins.push_back(buffer(op->getOperand(0)));
  } else if (callee == "reduce_scatter") {
    // The runtime scatters blocks of the leading dim: the scatter axis is
    // moved there before the call and back once the result has arrived.
    int64_t axis = op->getAttrOfType<IntegerAttr>("scatter_axis").getInt();
    auto [toFront, back] = leadingPerms(type.getRank(), axis);
    SmallVector<int64_t> shape;
    for (int64_t d : toFront)
      shape.push_back(type.getDimSize(d));
    Value src = buffer(op->getOperand(0));
    ins.push_back(axis > 0 ? permuted(loc, src, toFront) : src);
    Value out = alloc(loc, RankedTensorType::get(shape, type.getElementType()));
    outs.push_back(out);
    finish = [=, this, back = back] {
      return axis > 0 ? permuted(loc, out, back) : out;
    };
  } else if (callee == "all_gather") {
    auto in = cast<RankedTensorType>(op->getOperand(0).getType());
    int64_t axis = op->getAttrOfType<IntegerAttr>("gather_axis").getInt();
    SmallVector<int64_t> stacked{type.getDimSize(axis) / in.getDimSize(axis)};
    llvm::append_range(stacked, in.getShape());
    Value out = alloc(loc, RankedTensorType::get(stacked, in.getElementType()));
    ins.push_back(buffer(op->getOperand(0)));
    outs.push_back(out);
    finish = [=, this] { return assembleGather(loc, out, axis, type); };
  } else if (callee == "all_to_all") {
    // The runtime sends block j of the leading dim to rank j and stacks
    // block i from rank i: the split axis goes to the front, split into
    // [ranks, extent / ranks], and each arrived block goes back to the
    // input's layout, stacked like an all-gather's, to be joined along the
    // concat axis.
    auto in = cast<RankedTensorType>(op->getOperand(0).getType());
    int64_t split = op->getAttrOfType<IntegerAttr>("split_axis").getInt();
    int64_t concat = op->getAttrOfType<IntegerAttr>("concat_axis").getInt();
    int64_t ranks = groupSize(op);
    auto [toFront, back] = leadingPerms(in.getRank(), split);
    SmallVector<int64_t> blocks{ranks};
    for (int64_t d : toFront)
      blocks.push_back(in.getDimSize(d));
    blocks[1] /= ranks;
    Type et = in.getElementType();
    Value src = buffer(op->getOperand(0));
    src = split > 0 ? permuted(loc, src, toFront) : src;
    ins.push_back(rt::ViewOp::create(b, loc, MemRefType::get(blocks, et), src));
    Value out = alloc(loc, RankedTensorType::get(blocks, et));
    outs.push_back(out);
    SmallVector<int64_t> unblock{0};
    for (int64_t d : back)
      unblock.push_back(d + 1);
    finish = [=, this, unblock = unblock] {
      Value stacked = split > 0 ? permuted(loc, out, unblock) : out;
      return assembleGather(loc, stacked, concat, type);
    };
  } else if (callee == "all_to_all_v") {
    // Rows and both counts in; the result is the buffer written.
    for (Value v : op->getOperands())
      ins.push_back(buffer(v));
    Value out = alloc(loc, type);
    outs.push_back(out);
    finish = [out] { return out; };
  } else {
    // all_reduce, recv: the result is the buffer written.
    if (op->getNumOperands())
      ins.push_back(buffer(op->getOperand(0)));
    Value out = alloc(loc, type);
    outs.push_back(out);
    finish = [out] { return out; };
  }
  Operation *call;
  if (async)
    call = rt::StartOp::create(b, loc, rt::RequestType::get(b.getContext()),
                               callee, ins, outs);
  else
    call = rt::KernelOp::create(b, loc, callee, ins, outs);
  copyParams(op, call, *decl);
  if (async)
    started[result] = {call->getResult(0), finish};
  else if (Value r = finish())
    map.map(result, r);
  return success();
}

void Lowering::lowerFusedAttention(nn::AttentionOp op,
                                   const FusedScoreModifier &mod) {
  Location loc = op.getLoc();
  SmallVector<Value> ins{buffer(op.getQuery()), buffer(op.getKey()),
                         buffer(op.getValue())};
  if (mod.mask)
    ins.push_back(buffer(mod.mask));
  Value out = alloc(loc, op.getType());
  auto kernel = rt::KernelOp::create(
      b, loc, kernelName(rt::Kernel::AttentionFused), ins, ValueRange{out});
  kernel->setAttr("scale", op.getScaleAttr());
  if (mod.causalOffset)
    kernel->setAttr("causal_offset", b.getI64IntegerAttr(*mod.causalOffset));
  map.map(op.getResult(), out);
}

/// The fused kernel where it runs the modifier itself; otherwise scores =
/// scale·q·kᵀ, the modifier's ops in place, softmax, ·v. Every kernel maps
/// query head h to key/value head h / (H / Hkv), which is all
/// grouped-query attention needs.
LogicalResult Lowering::lowerAttention(nn::AttentionOp op) {
  if (fusedAttention)
    if (std::optional<FusedScoreModifier> mod = parc::classifyScoreModifier(op)) {
      lowerFusedAttention(op, *mod);
      return success();
    }
  Location loc = op.getLoc();
  RankedTensorType scoreType = op.getScoreType();
  Value scores = alloc(loc, scoreType);
  auto scoreKernel = rt::KernelOp::create(
      b, loc, kernelName(rt::Kernel::AttentionScores),
      ValueRange{buffer(op.getQuery()), buffer(op.getKey())},
      ValueRange{scores});
  scoreKernel->setAttr("scale", op.getScaleAttr());

  Block &mod = op.getScoreModBlock();
  map.map(mod.getArgument(0), scores);
  for (auto [arg, mask] : llvm::zip(mod.getArguments().drop_front(), op.getMasks()))
    map.map(arg, buffer(mask));
  for (Operation &inner : mod.without_terminator())
    if (failed(lowerOp(&inner)))
      return failure();
  Value modified = buffer(cast<nn::YieldOp>(mod.getTerminator()).getValue());

  Value probs = alloc(loc, scoreType);
  auto softmax = rt::KernelOp::create(b, loc, kernelName(rt::Kernel::Softmax),
                                      ValueRange{modified}, ValueRange{probs});
  softmax->setAttr("axis", b.getI64IntegerAttr(3));
  Value out = alloc(loc, op.getType());
  rt::KernelOp::create(b, loc, kernelName(rt::Kernel::AttentionValues),
                       ValueRange{probs, buffer(op.getValue())},
                       ValueRange{out});
  map.map(op.getResult(), out);
  return success();
}

struct ConvertNNToRTPass
    : parc::impl::ConvertNNToRTBase<ConvertNNToRTPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto main = module.lookupSymbol<func::FuncOp>("main");
    if (!main || main.isExternal()) {
      module.emitError("expected a func.func @main with a body");
      return signalPassFailure();
    }
    // The mesh becomes a module attribute the code generator reads (once
    // lowering, which sizes groups from it, is done).
    SmallVector<dist::MeshOp> meshes(module.getOps<dist::MeshOp>());
    for (dist::MeshOp mesh : meshes)
      module->setAttr("rt.mesh", DictionaryAttr::get(&getContext(), mesh->getAttrs()));
    if (Attribute pipeline = module->getAttr("dist.pipeline")) {
      module->setAttr("rt.pipeline", pipeline);
      module->removeAttr("dist.pipeline");
    }
    OpBuilder b(main);
    auto lowered = func::FuncOp::create(b, main.getLoc(), "main",
                                        b.getFunctionType({}, {}));
    if (failed(Lowering(b, fusedAttention).lower(main, lowered))) {
      lowered.erase();
      return signalPassFailure();
    }
    main.erase();
    for (dist::MeshOp mesh : meshes)
      mesh.erase();
  }
};

} // namespace
