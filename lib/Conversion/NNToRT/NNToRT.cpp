//===- NNToRT.cpp - convert-nn-to-rt ----------------------------*- C++ -*-===//
//
// A dialect conversion of @main from tensors to buffers: the type converter
// maps each static tensor to a memref of its shape and a started
// communication to an rt.request, and one pattern per op kind rewrites it
// into rt ops, the others reaching the patterns' buffers through their
// adaptors. Every nn op becomes one kernel call named after it, with its
// attributes as parameters, so the rt program reads like the nn one; the
// conversion target (rt only, and a @main without arguments or results)
// makes an op without a lowering an error rather than a leftover.
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
#include "mlir/Transforms/DialectConversion.h"
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

Value alloc(OpBuilder &b, Location loc, Type tensor) {
  return rt::AllocOp::create(b, loc, bufferType(tensor), IntegerAttr());
}

/// The ranks in each group of collective `op` (its verifier resolved the
/// mesh).
int64_t groupSize(Operation *op) {
  auto mesh = SymbolTable::lookupNearestSymbolFrom<dist::MeshOp>(
      op, op->getAttrOfType<FlatSymbolRefAttr>("mesh"));
  auto axes = op->getAttrOfType<ArrayAttr>("mesh_axes");
  return *mesh.getGroupSize(
      llvm::to_vector(axes.getAsValueRange<StringAttr>()));
}

/// The permutation that moves `axis` to the front, and its inverse.
std::pair<SmallVector<int64_t>, SmallVector<int64_t>>
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

/// A transposed copy of `buf` (out[i] = in[perm[i]]), or a view when only
/// dims of size 1 move.
Value permuted(OpBuilder &b, Location loc, Value buf, ArrayRef<int64_t> perm) {
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
  Value out = alloc(b, loc, RankedTensorType::get(shape, t.getElementType()));
  auto tr = rt::KernelOp::create(b, loc, kernelName(rt::Kernel::Transpose),
                                 ValueRange{buf}, ValueRange{out});
  tr->setAttr("perm", b.getDenseI64ArrayAttr(perm));
  return out;
}

/// An all-to-all's blocks arrive stacked, [group, local...]: a transpose
/// moves the group next to the concat dim and a view merges the two.
Value assembleGather(OpBuilder &b, Location loc, Value stacked, int64_t axis,
                     RankedTensorType result) {
  auto stackedType = cast<MemRefType>(stacked.getType());
  if (axis > 0) {
    SmallVector<int64_t> perm;
    for (int64_t d = 1; d <= axis; ++d)
      perm.push_back(d);
    perm.push_back(0);
    for (int64_t d = axis + 1; d < stackedType.getRank(); ++d)
      perm.push_back(d);
    stacked = permuted(b, loc, stacked, perm);
  }
  return rt::ViewOp::create(b, loc, bufferType(result), stacked);
}

/// What the patterns of one conversion share.
struct LoweringState {
  explicit LoweringState(bool fusedAttention) : fusedAttention(fusedAttention) {}
  bool fusedAttention;
  /// Weight names given so far: each rt.weight's is unique in the program.
  llvm::StringSet<> weightNames;
  /// How each started communication (its async value) finishes at its
  /// wait: the buffer its result is read from (null for a send).
  llvm::DenseMap<Value, std::function<Value(OpBuilder &)>> finishers;
  /// @main's result names (read before its signature is converted).
  SmallVector<std::string> outputNames;
  /// Buffers already published as an output.
  llvm::DenseSet<Value> published;

  std::string uniqueName(StringRef base) {
    std::string name = base.str();
    for (int i = 1; !weightNames.insert(name).second; ++i)
      name = (base + "_" + Twine(i)).str();
    return name;
  }
  /// An rt.weight of `type` whose bytes come from the weight `source`: its
  /// elements, or its external reference (location, offset, length,
  /// padding), which the weight writer reads.
  rt::WeightOp weightOf(OpBuilder &b, Location loc, Value source, Type type,
                        StringRef suffix);
  /// The rt.weight of `type` for `v`, a weight or a rank's part of one
  /// (then sharded by the cuts of its dist.local_part chain).
  rt::WeightOp weightOrPart(OpBuilder &b, Location loc, Value v, Type type);
};

rt::WeightOp LoweringState::weightOf(OpBuilder &b, Location loc, Value source,
                                     Type type, StringRef suffix) {
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

rt::WeightOp LoweringState::weightOrPart(OpBuilder &b, Location loc, Value v,
                                         Type type) {
  auto part = v.getDefiningOp<dist::LocalPartOp>();
  if (!part)
    return weightOf(b, loc, v, type, "");
  // A rank's part of a weight is a sharded weight: the weight writer cuts
  // it per rank at compile time, from the constant's elements or from the
  // external file. A part of a part (an expert split over "ep", then its
  // ffn over "tp") is one weight cut twice: `shard` lists the shardings,
  // the one of the whole weight first, each next one of the part before.
  rt::WeightOp w = weightOf(b, loc, weightUnder(part), type, ".part");
  SmallVector<Attribute> cuts;
  for (auto p = part; p; p = p.getInput().getDefiningOp<dist::LocalPartOp>())
    cuts.push_back(p.getSharding());
  std::reverse(cuts.begin(), cuts.end());
  w->setAttr("shard", b.getArrayAttr(cuts));
  return w;
}

/// A pattern of this conversion on `Op`, with the state the patterns share.
template <typename Op>
struct Lower : OpConversionPattern<Op> {
  Lower(const TypeConverter &types, MLIRContext *ctx, LoweringState &state,
        PatternBenefit benefit = 1)
      : OpConversionPattern<Op>(types, ctx, benefit), state(state) {}
  LoweringState &state;
};
/// One on any op, matched by what it computes (a weight) or tried last (the
/// generic kernel call).
struct LowerAny : ConversionPattern {
  LowerAny(const TypeConverter &types, MLIRContext *ctx, LoweringState &state,
           PatternBenefit benefit)
      : ConversionPattern(types, MatchAnyOpTypeTag(), benefit, ctx),
        state(state) {}
  LoweringState &state;
};

/// @main's arguments become rt.input buffers, and it takes and returns
/// nothing.
struct LowerMain : Lower<func::FuncOp> {
  using Lower::Lower;
  LogicalResult
  matchAndRewrite(func::FuncOp main, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Block &entry = main.getBody().front();
    rewriter.setInsertionPointToStart(&entry);
    TypeConverter::SignatureConversion inputs(entry.getNumArguments());
    for (BlockArgument arg : entry.getArguments()) {
      unsigned i = arg.getArgNumber();
      auto name = main.getArgAttrOfType<StringAttr>(i, "onnx.name");
      std::string argName = name ? name.str() : "input_" + std::to_string(i);
      // Located at the graph input it reads: the dumps name it as they name
      // a node.
      Location loc = NameLoc::get(rewriter.getStringAttr(argName), main.getLoc());
      auto input = rt::InputOp::create(rewriter, loc, bufferType(arg.getType()),
                                       i, argName);
      // Its part in the token loop (nn-kv-cache): the runtime feeds it.
      if (auto role = main.getArgAttrOfType<StringAttr>(i, "parc.kv_role"))
        input->setAttr("role", role);
      inputs.remapInput(i, input.getResult());
    }
    rewriter.applySignatureConversion(&entry, inputs, getTypeConverter());
    for (unsigned i = 0, e = main.getNumResults(); i < e; ++i) {
      auto name = main.getResultAttrOfType<StringAttr>(i, "onnx.name");
      state.outputNames.push_back(name ? name.str()
                                       : "output_" + std::to_string(i));
    }
    rewriter.modifyOpInPlace(main, [&] {
      main.setType(rewriter.getFunctionType({}, {}));
    });
    return success();
  }
};

/// Each result is published with rt.output. Outputs must own their bytes:
/// an input, a weight or a buffer already published under another name is
/// copied first.
struct LowerReturn : Lower<func::ReturnOp> {
  using Lower::Lower;
  LogicalResult
  matchAndRewrite(func::ReturnOp ret, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    for (auto [i, buf] : llvm::enumerate(adaptor.getOperands())) {
      StringRef outName = state.outputNames[i];
      Location loc = NameLoc::get(rewriter.getStringAttr(outName), ret.getLoc());
      Value root = buf;
      while (auto view = root.getDefiningOp<rt::ViewOp>())
        root = view.getSource();
      if (!root.getDefiningOp<rt::AllocOp>() ||
          !state.published.insert(root).second) {
        Value copy = alloc(rewriter, loc, ret.getOperand(i).getType());
        rt::KernelOp::create(rewriter, loc, kernelName(rt::Kernel::Copy),
                             ValueRange{buf}, ValueRange{copy});
        buf = copy;
      }
      rt::OutputOp::create(rewriter, loc, i, outName, buf);
    }
    rewriter.replaceOpWithNewOp<func::ReturnOp>(ret);
    return success();
  }
};

/// A weight (a constant or an external one) becomes an rt.weight, unless
/// it is read only through rank parts or narrowing casts, which make their
/// own.
struct LowerWeight : LowerAny {
  LowerWeight(const TypeConverter &types, MLIRContext *ctx,
              LoweringState &state)
      : LowerAny(types, ctx, state, /*benefit=*/2) {}
  LogicalResult
  matchAndRewrite(Operation *op, ArrayRef<Value>,
                  ConversionPatternRewriter &rewriter) const override {
    if (op->getNumResults() != 1 ||
        nn::weightSource(op->getResult(0)) != op->getResult(0))
      return failure();
    if (onlyCut(op)) {
      rewriter.eraseOp(op);
      return success();
    }
    Value w = op->getResult(0);
    rewriter.replaceOp(op, state.weightOf(rewriter, op->getLoc(), w,
                                          w.getType(), ""));
    return success();
  }
};

/// A weight's narrowing cast is the weight in its compute dtype.
struct LowerNarrowedWeight : Lower<nn::CastOp> {
  LowerNarrowedWeight(const TypeConverter &types, MLIRContext *ctx,
                      LoweringState &state)
      : Lower(types, ctx, state, /*benefit=*/2) {}
  LogicalResult
  matchAndRewrite(nn::CastOp narrowing, OpAdaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (!narrowsWeight(narrowing))
      return failure();
    rt::WeightOp w = state.weightOrPart(rewriter, narrowing.getLoc(),
                                        narrowing.getInput(),
                                        narrowing.getType());
    w->setAttr("stored_type", TypeAttr::get(getElementTypeOrSelf(
                                  narrowing.getInput().getType())));
    rewriter.replaceOp(narrowing, w);
    return success();
  }
};

/// A rank's part of a weight is a sharded rt.weight; of a computed value
/// every rank holds whole, the runtime's local_chunk.
struct LowerLocalPart : Lower<dist::LocalPartOp> {
  using Lower::Lower;
  LogicalResult
  matchAndRewrite(dist::LocalPartOp part, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    if (weightUnder(part)) {
      if (onlyCut(part))
        rewriter.eraseOp(part);
      else
        rewriter.replaceOp(part, state.weightOrPart(rewriter, part.getLoc(),
                                                    part, part.getType()));
      return success();
    }
    // One dimension split evenly over one axis, the chunk of the rank's
    // coordinate.
    dist::ShardingAttr s = part.getSharding();
    SmallVector<int64_t> dims;
    for (int64_t d = 0, e = s.getSplitAxes().size(); d < e; ++d)
      if (!s.getSplitAxes(d).empty())
        dims.push_back(d);
    if (dims.size() != 1 || s.getSplitAxes(dims[0]).size() != 1 ||
        !s.getBlocks().empty() || !s.getReplicas().empty())
      return part.emitOpError("a computed value is sliced only evenly, along "
                              "one dimension over one mesh axis");
    // The runtime splits the leading dim into blocks: the axis is moved to
    // the front around the call.
    Location loc = part.getLoc();
    int64_t axis = dims[0];
    RankedTensorType result = part.getType();
    auto [toFront, back] = leadingPerms(result.getRank(), axis);
    Value src = adaptor.getInput();
    if (axis > 0)
      src = permuted(rewriter, loc, src, toFront);
    SmallVector<int64_t> shape;
    for (int64_t d : toFront)
      shape.push_back(result.getDimSize(d));
    Value out = alloc(rewriter, loc,
                      RankedTensorType::get(shape, result.getElementType()));
    auto call = rt::KernelOp::create(rewriter, loc,
                                     kernelName(rt::Kernel::LocalChunk),
                                     ValueRange{src}, ValueRange{out});
    call->setAttr("mesh", s.getMesh());
    call->setAttr("mesh_axes", s.getSplitAxes()[axis]);
    rewriter.replaceOp(part, axis > 0 ? permuted(rewriter, loc, out, back) : out);
    return success();
  }
};

/// What the runtime call of a collective or send/recv moves (`ins`, `outs`)
/// and how its result buffer is read once they have arrived (after the call,
/// or after its wait).
struct CommCall {
  SmallVector<Value> ins, outs;
  std::function<Value(OpBuilder &)> finish = [](OpBuilder &) { return Value(); };
};

/// `op`'s call of the runtime's `kernel`, on the buffers `operands`.
CommCall commCall(OpBuilder &b, Operation *op, rt::Kernel kernel,
                  ValueRange operands, RankedTensorType type) {
  Location loc = op->getLoc();
  CommCall c;
  auto resultIn = [&](Value out) {
    c.outs.push_back(out);
    c.finish = [out](OpBuilder &) { return out; };
  };
  using K = rt::Kernel;
  if (kernel == K::Send) {
    c.ins.push_back(operands[0]);
  } else if (kernel == K::ReduceScatter) {
    // The runtime scatters blocks of the leading dim: the scatter axis is
    // moved there before the call and back once the result has arrived.
    int64_t axis = op->getAttrOfType<IntegerAttr>("scatter_axis").getInt();
    auto [toFront, back] = leadingPerms(type.getRank(), axis);
    SmallVector<int64_t> shape;
    for (int64_t d : toFront)
      shape.push_back(type.getDimSize(d));
    c.ins.push_back(axis > 0 ? permuted(b, loc, operands[0], toFront)
                             : operands[0]);
    Value out = alloc(b, loc, RankedTensorType::get(shape, type.getElementType()));
    c.outs.push_back(out);
    c.finish = [=, back = back](OpBuilder &b) {
      return axis > 0 ? permuted(b, loc, out, back) : out;
    };
  } else if (kernel == K::AllToAll) {
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
    Value src = split > 0 ? permuted(b, loc, operands[0], toFront) : operands[0];
    c.ins.push_back(rt::ViewOp::create(b, loc, MemRefType::get(blocks, et), src));
    Value out = alloc(b, loc, RankedTensorType::get(blocks, et));
    c.outs.push_back(out);
    SmallVector<int64_t> unblock{0};
    for (int64_t d : back)
      unblock.push_back(d + 1);
    c.finish = [=](OpBuilder &b) {
      Value stacked = split > 0 ? permuted(b, loc, out, unblock) : out;
      return assembleGather(b, loc, stacked, concat, type);
    };
  } else if (kernel == K::AllToAllV) {
    // Rows and both counts in; the result is the buffer written.
    llvm::append_range(c.ins, operands);
    resultIn(alloc(b, loc, type));
  } else {
    // all_reduce, all_gather (along any dim, in place: the runtime's rows
    // form), recv: the result is the buffer written.
    if (!operands.empty())
      c.ins.push_back(operands[0]);
    resultIn(alloc(b, loc, type));
  }
  return c;
}

/// Whether the runtime's reduce-scatter does what `op` does, if it is one:
/// even blocks, summed.
bool runtimeReduces(Operation *op) {
  auto evenSum = [](auto scatter) {
    return !scatter.getSizesAttr() &&
           scatter.getReduction() == dist::ReductionKind::sum;
  };
  if (auto scatter = dyn_cast<dist::ReduceScatterOp>(op))
    return evenSum(scatter);
  if (auto scatter = dyn_cast<dist::ReduceScatterStartOp>(op))
    return evenSum(scatter);
  return true;
}

/// A collective or send/recv, blocking (rt.kernel) or started (rt.start,
/// finished at its dist.wait).
template <typename Op>
struct LowerComm : Lower<Op> {
  using Lower<Op>::Lower;
  LogicalResult
  matchAndRewrite(Op op, typename Op::Adaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    StringRef callee = op->getName().stripDialect();
    bool started = callee.consume_back("_start");
    if (!runtimeReduces(op))
      return op->emitOpError("only even sum reduce-scatters have a runtime "
                             "kernel");
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
    CommCall c =
        commCall(rewriter, op, decl->kernel, adaptor.getOperands(), type);
    Location loc = op->getLoc();
    if (started) {
      auto start = rt::StartOp::create(
          rewriter, loc, rt::RequestType::get(op->getContext()), callee,
          c.ins, c.outs);
      copyParams(op, start, *decl);
      this->state.finishers[result] = c.finish;
      rewriter.replaceOp(op, start);
      return success();
    }
    auto call = rt::KernelOp::create(rewriter, loc, callee, c.ins, c.outs);
    copyParams(op, call, *decl);
    if (Value r = c.finish(rewriter))
      rewriter.replaceOp(op, r);
    else
      rewriter.eraseOp(op);
    return success();
  }
};

/// A wait on a started communication: rt.wait, then its result buffer.
struct LowerWait : Lower<dist::WaitOp> {
  using Lower::Lower;
  LogicalResult
  matchAndRewrite(dist::WaitOp wait, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto it = state.finishers.find(wait.getAsync());
    if (it == state.finishers.end())
      return wait.emitOpError("waits for a communication that was not lowered");
    rt::WaitOp::create(rewriter, wait.getLoc(), adaptor.getAsync());
    if (wait->getNumResults())
      rewriter.replaceOp(wait, it->second(rewriter));
    else
      rewriter.eraseOp(wait);
    return success();
  }
};

/// A reshape is a view of the same bytes.
struct LowerReshape : Lower<nn::ReshapeOp> {
  using Lower::Lower;
  LogicalResult
  matchAndRewrite(nn::ReshapeOp reshape, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    rewriter.replaceOpWithNewOp<rt::ViewOp>(
        reshape, bufferType(reshape.getType()), adaptor.getInput());
    return success();
  }
};

/// In place: the cache is a persistent input buffer, and the result is that
/// buffer (nothing else reads the cache before the write).
struct LowerKVCacheWrite : Lower<nn::KVCacheWriteOp> {
  using Lower::Lower;
  LogicalResult
  matchAndRewrite(nn::KVCacheWriteOp write, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    auto kernel = rt::KernelOp::create(
        rewriter, write.getLoc(), kernelName(rt::Kernel::KvCacheWrite),
        ValueRange{adaptor.getUpdate(), adaptor.getPosition()},
        ValueRange{adaptor.getCache()});
    kernel->setAttr("axis", write.getAxisAttr());
    rewriter.replaceOp(write, adaptor.getCache());
    return success();
  }
};

/// The fused kernel where it runs the score modifier itself; otherwise
/// scores = scale·q·kᵀ, the modifier's ops in place (inlined, for their own
/// patterns), softmax, ·v. Every kernel maps query head h to key/value head
/// h / (H / Hkv), which is all grouped-query attention needs.
struct LowerAttention : Lower<nn::AttentionOp> {
  using Lower::Lower;
  LogicalResult
  matchAndRewrite(nn::AttentionOp op, OpAdaptor adaptor,
                  ConversionPatternRewriter &rewriter) const override {
    Location loc = op.getLoc();
    if (state.fusedAttention)
      if (std::optional<FusedScoreModifier> mod =
              parc::classifyScoreModifier(op)) {
        SmallVector<Value> ins{adaptor.getQuery(), adaptor.getKey(),
                               adaptor.getValue()};
        if (mod->mask)
          ins.push_back(rewriter.getRemappedValue(mod->mask));
        Value out = alloc(rewriter, loc, op.getType());
        auto kernel = rt::KernelOp::create(
            rewriter, loc, kernelName(rt::Kernel::AttentionFused), ins,
            ValueRange{out});
        kernel->setAttr("scale", op.getScaleAttr());
        if (mod->causalOffset)
          kernel->setAttr("causal_offset",
                          rewriter.getI64IntegerAttr(*mod->causalOffset));
        rewriter.replaceOp(op, out);
        return success();
      }
    RankedTensorType scoreType = op.getScoreType();
    Value scores = alloc(rewriter, loc, scoreType);
    auto scoreKernel = rt::KernelOp::create(
        rewriter, loc, kernelName(rt::Kernel::AttentionScores),
        ValueRange{adaptor.getQuery(), adaptor.getKey()}, ValueRange{scores});
    scoreKernel->setAttr("scale", op.getScaleAttr());

    Block &mod = op.getScoreModBlock();
    auto yield = cast<nn::YieldOp>(mod.getTerminator());
    Value modified = yield.getValue();
    SmallVector<Value> args{scores};
    llvm::append_range(args, adaptor.getMasks());
    rewriter.inlineBlockBefore(&mod, op, args);
    rewriter.eraseOp(yield);

    Value probs = alloc(rewriter, loc, scoreType);
    auto softmax = rt::KernelOp::create(
        rewriter, loc, kernelName(rt::Kernel::Softmax),
        ValueRange{rewriter.getRemappedValue(modified)}, ValueRange{probs});
    softmax->setAttr("axis", rewriter.getI64IntegerAttr(3));
    Value out = alloc(rewriter, loc, op.getType());
    rt::KernelOp::create(rewriter, loc, kernelName(rt::Kernel::AttentionValues),
                         ValueRange{probs, adaptor.getValue()},
                         ValueRange{out});
    rewriter.replaceOp(op, out);
    return success();
  }
};

/// Any other nn op (and an expert-parallel MoE's permutation, which reads
/// its counts from buffers) is one call of the kernel RTKernels.td declares
/// under its name, on its operands' buffers and a new buffer per result.
struct LowerToKernel : LowerAny {
  LowerToKernel(const TypeConverter &types, MLIRContext *ctx,
                LoweringState &state)
      : LowerAny(types, ctx, state, /*benefit=*/0) {}
  LogicalResult
  matchAndRewrite(Operation *op, ArrayRef<Value> operands,
                  ConversionPatternRewriter &rewriter) const override {
    if (isa<arith::ConstantOp>(op))
      return op->emitOpError("only tensor constants can become weights");
    const rt::KernelDecl *decl = rt::lookupKernel(op->getName().stripDialect());
    if ((!isa<dist::MoePermuteOp>(op) &&
         !isa_and_nonnull<nn::NNDialect>(op->getDialect())) ||
        op->getNumRegions() || !decl)
      return op->emitOpError("has no runtime kernel");
    SmallVector<Value> outs;
    for (Value r : op->getResults())
      outs.push_back(alloc(rewriter, op->getLoc(), r.getType()));
    auto kernel =
        rt::KernelOp::create(rewriter, op->getLoc(), decl->name, operands, outs);
    copyParams(op, kernel, *decl);
    rewriter.replaceOp(op, outs);
    return success();
  }
};


struct ConvertNNToRTPass
    : parc::impl::ConvertNNToRTBase<ConvertNNToRTPass> {
  using Base::Base;
  void runOnOperation() override;
};

void ConvertNNToRTPass::runOnOperation() {
  ModuleOp module = getOperation();
  MLIRContext *ctx = &getContext();
  auto main = module.lookupSymbol<func::FuncOp>("main");
  if (!main || main.isExternal()) {
    module.emitError("expected a func.func @main with a body");
    return signalPassFailure();
  }
  // The mesh becomes a module attribute the code generator reads (once
  // lowering, which sizes groups from it, is done).
  SmallVector<dist::MeshOp> meshes(module.getOps<dist::MeshOp>());
  for (dist::MeshOp mesh : meshes)
    module->setAttr("rt.mesh", DictionaryAttr::get(ctx, mesh->getAttrs()));
  if (Attribute pipeline = module->getAttr("dist.pipeline")) {
    module->setAttr("rt.pipeline", pipeline);
    module->removeAttr("dist.pipeline");
  }
  Attribute capacity = main->getAttr("parc.kv_max_seq");

  TypeConverter types;
  types.addConversion([](RankedTensorType t) { return bufferType(t); });
  types.addConversion([](dist::AsyncType t) {
    return rt::RequestType::get(t.getContext());
  });
  types.addConversion([](Type t) -> std::optional<Type> {
    return isa<MemRefType, rt::RequestType>(t) ? std::optional<Type>(t)
                                               : std::nullopt;
  });
  ConversionTarget target(*ctx);
  target.addLegalDialect<rt::RTDialect>();
  target.addDynamicallyLegalOp<func::FuncOp>([](func::FuncOp f) {
    return f.getFunctionType().getNumInputs() == 0 &&
           f.getFunctionType().getNumResults() == 0;
  });
  target.addDynamicallyLegalOp<func::ReturnOp>(
      [](func::ReturnOp r) { return r.getNumOperands() == 0; });

  LoweringState state(fusedAttention);
  RewritePatternSet patterns(ctx);
  patterns.add<LowerMain, LowerReturn, LowerWeight, LowerNarrowedWeight,
               LowerLocalPart, LowerWait, LowerReshape, LowerKVCacheWrite,
               LowerAttention, LowerToKernel,
               LowerComm<dist::AllReduceOp>, LowerComm<dist::AllReduceStartOp>,
               LowerComm<dist::AllGatherOp>, LowerComm<dist::AllGatherStartOp>,
               LowerComm<dist::ReduceScatterOp>,
               LowerComm<dist::ReduceScatterStartOp>,
               LowerComm<dist::AllToAllOp>, LowerComm<dist::AllToAllStartOp>,
               LowerComm<dist::AllToAllVOp>, LowerComm<dist::AllToAllVStartOp>,
               LowerComm<dist::SendOp>, LowerComm<dist::SendStartOp>,
               LowerComm<dist::RecvOp>, LowerComm<dist::RecvStartOp>>(
      types, ctx, state);
  ConversionConfig config;
  // nn's folders ran in nn-optimize; folding here would only reorder what
  // the program computes.
  config.foldingMode = DialectConversionFoldingMode::Never;
  // The conversion stops at the first op it cannot lower, whose pattern
  // said why: the driver's generic "failed to legalize" after it adds
  // nothing.
  bool refused = false;
  ScopedDiagnosticHandler firstErrorOnly(ctx, [&](Diagnostic &diag) {
    if (diag.getSeverity() != DiagnosticSeverity::Error)
      return failure();
    if (refused)
      return success();
    refused = true;
    return failure();
  });
  if (failed(applyFullConversion(main, target, std::move(patterns), config)))
    return signalPassFailure();
  // What the program function keeps of @main: its name and, for the token
  // loop, the cache capacity.
  main->setAttrs(DictionaryAttr::get(
      ctx, {NamedAttribute(main.getSymNameAttrName(), main.getSymNameAttr()),
            NamedAttribute(main.getFunctionTypeAttrName(),
                           main.getFunctionTypeAttr())}));
  if (capacity)
    main->setAttr("rt.max_seq", capacity);
  for (dist::MeshOp mesh : meshes)
    mesh.erase();
}

} // namespace

