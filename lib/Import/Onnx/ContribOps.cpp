//===- ContribOps.cpp - onnxruntime's com.microsoft ops ---------*- C++ -*-===//
//
// Each fused contrib op becomes the nn ops its definition (onnxruntime's
// docs/ContribOperators.md) spells out: Skip*LayerNormalization is an add
// and nn.layer_norm / nn.rms_norm, the GELUs are an add and nn.gelu,
// Attention is the packed QKV product, a split into heads, nn.attention
// with an additive mask in its score modifier and the output merge. These
// are the forms nn-fuse leaves and dist-annotate shards, so an
// onnxruntime-optimised graph partitions as its unfused export does.
//
//===----------------------------------------------------------------------===//

#include "ContribOps.h"
#include "nn/NNOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Verifier.h"

#include "onnx/defs/schema.h"
#include "onnx/defs/shape_inference.h"
#include "onnx/onnx_pb.h"

#include <cmath>
#include <cstring>
#include <limits>

using namespace mlir;
namespace nn = parc::nn;
using parc::contrib::NodeContext;

namespace {

RankedTensorType typeOf(Value v) { return cast<RankedTensorType>(v.getType()); }
RankedTensorType shaped(ArrayRef<int64_t> shape, Type et) {
  return RankedTensorType::get(shape, et);
}

/// Builds nn ops at one node's location; shapes are computed here, after
/// the handler has checked that its operands fit.
struct Ops {
  OpBuilder &b;
  Location loc;

  template <typename Op> Value binary(Value l, Value r, Type et = {}) {
    auto shape =
        nn::broadcastShapes(typeOf(l).getShape(), typeOf(r).getShape());
    assert(succeeded(shape) && "callers check broadcasting");
    return b.createOrFold<Op>(
        loc, shaped(*shape, et ? et : typeOf(l).getElementType()), l, r);
  }
  Value matmul(Value x, Value w) {
    auto shape = nn::matmulShape(typeOf(x).getShape(), typeOf(w).getShape());
    assert(succeeded(shape) && "callers check the contraction");
    return b.createOrFold<nn::MatMulOp>(
        loc, shaped(*shape, typeOf(x).getElementType()), x, w);
  }
  Value reshape(Value x, ArrayRef<int64_t> shape) {
    return b.createOrFold<nn::ReshapeOp>(
        loc, shaped(shape, typeOf(x).getElementType()), x);
  }
  Value transpose(Value x, ArrayRef<int64_t> perm) {
    SmallVector<int64_t> shape;
    for (int64_t p : perm)
      shape.push_back(typeOf(x).getDimSize(p));
    return b.createOrFold<nn::TransposeOp>(
        loc, shaped(shape, typeOf(x).getElementType()), x,
        b.getDenseI64ArrayAttr(perm));
  }
  Value concat(ValueRange xs, int64_t axis) {
    SmallVector<int64_t> shape(typeOf(xs.front()).getShape());
    shape[axis] = 0;
    for (Value x : xs)
      shape[axis] += typeOf(x).getDimSize(axis);
    return b.createOrFold<nn::ConcatOp>(
        loc, shaped(shape, typeOf(xs.front()).getElementType()), xs, axis);
  }
  /// x split along `axis` into pieces of `sizes`.
  SmallVector<Value> split(Value x, ArrayRef<int64_t> sizes, int64_t axis) {
    SmallVector<Type> types;
    for (int64_t n : sizes) {
      SmallVector<int64_t> shape(typeOf(x).getShape());
      shape[axis] = n;
      types.push_back(shaped(shape, typeOf(x).getElementType()));
    }
    auto pieces = nn::SplitOp::create(b, loc, types, x, axis).getResults();
    return SmallVector<Value>(pieces.begin(), pieces.end());
  }
  Value gather(Value table, Value idx) {
    SmallVector<int64_t> shape(typeOf(idx).getShape());
    llvm::append_range(shape, typeOf(table).getShape().drop_front());
    return b.createOrFold<nn::GatherOp>(
        loc, shaped(shape, typeOf(table).getElementType()), table, idx, 0);
  }
  Value scalar(Type et, double v) {
    auto t = shaped({}, et);
    Attribute a = isa<FloatType>(et)
                      ? Attribute(FloatAttr::get(et, v))
                      : Attribute(IntegerAttr::get(et, (int64_t)v));
    return arith::ConstantOp::create(b, loc, t, DenseElementsAttr::get(t, a));
  }
};

/// An optional input: a null Value when the node omits it.
FailureOr<Value> optionalInput(NodeContext &c, int i) {
  if (!c.has(i))
    return Value();
  return c.input(i);
}

/// Outputs parc does not compute (a norm's mean and inverse deviation)
/// must be unused.
LogicalResult refuseUsedOutputs(NodeContext &c, ArrayRef<int> outputs,
                                StringRef what) {
  for (int i : outputs)
    if (c.outputUsed(i))
      return c.error() << "output " << i << " (" << what
                       << ") is used, which parc does not compute; only "
                          "the outputs named in the docs are supported";
  return success();
}

/// `l + r` after checking that they broadcast to `l`'s shape.
FailureOr<Value> addInto(NodeContext &c, Ops &o, Value l, Value r,
                         StringRef what) {
  auto shape = nn::broadcastShapes(typeOf(l).getShape(), typeOf(r).getShape());
  if (failed(shape) || *shape != typeOf(l).getShape() ||
      typeOf(l).getElementType() != typeOf(r).getElementType())
    return c.error() << what << " " << typeOf(r)
                     << " does not broadcast to the "
                     << "input " << typeOf(l),
           failure();
  return o.binary<nn::AddOp>(l, r);
}

/// A norm's scale (or bias) over the last dim of `x`: [H].
/// Sets optional output `i` to `v` when the graph reads it, after checking
/// `v` against the type ONNX inferred for it.
LogicalResult setIfUsed(NodeContext &c, int i, Value v) {
  if (!c.outputUsed(i))
    return success();
  if (failed(c.outType(i, typeOf(v))))
    return failure();
  c.set(i, v);
  return success();
}

LogicalResult checkNormParam(NodeContext &c, Value x, Value p, StringRef what) {
  int64_t h = typeOf(x).getShape().back();
  if (typeOf(p).getShape() != ArrayRef<int64_t>{h})
    return c.error() << what << " must be [" << h << "] (the hidden size of "
                     << typeOf(x) << "), got " << typeOf(p);
  return success();
}

//===----------------------------------------------------------------------===//
// Normalisation
//===----------------------------------------------------------------------===//

/// SkipLayerNormalization(input, skip, gamma, beta?, bias?) and
/// SkipSimplifiedLayerNormalization(input, skip, gamma, bias?): the norm of
/// input + skip + bias over the last dim; output 3 is that sum.
LogicalResult skipNorm(NodeContext &c, bool rms) {
  Ops o{c.builder(), c.loc()};
  if (failed(refuseUsedOutputs(c, {1, 2}, "mean / inv_std_var")))
    return failure();
  auto x = c.input(0), skip = c.input(1), gamma = c.input(2);
  auto beta = rms ? FailureOr<Value>(Value()) : optionalInput(c, 3);
  auto bias = optionalInput(c, rms ? 3 : 4);
  if (failed(x) || failed(skip) || failed(gamma) || failed(beta) ||
      failed(bias))
    return failure();
  if (typeOf(*x).getRank() < 2)
    return c.error() << "input must be [batch, seq, hidden] or [tokens, "
                        "hidden], got "
                     << typeOf(*x);
  FailureOr<Value> sum = addInto(c, o, *x, *skip, "skip");
  if (succeeded(sum) && *bias)
    sum = addInto(c, o, *sum, *bias, "bias");
  if (failed(sum) || failed(checkNormParam(c, *x, *gamma, "gamma")) ||
      (*beta && failed(checkNormParam(c, *x, *beta, "beta"))))
    return failure();
  auto t = c.outType(0, typeOf(*x));
  if (failed(t))
    return failure();
  int64_t axis = t->getRank() - 1;
  float eps = c.floatAttr("epsilon", 1e-12f);
  Value y = rms ? Value(nn::RmsNormOp::create(o.b, o.loc, *t, *sum, *gamma,
                                              o.b.getI64IntegerAttr(axis),
                                              o.b.getF32FloatAttr(eps)))
                : Value(nn::LayerNormOp::create(
                      o.b, o.loc, *t, *sum, *gamma, *beta,
                      o.b.getI64IntegerAttr(axis), o.b.getF32FloatAttr(eps)));
  c.set(0, y);
  return setIfUsed(c, 3, *sum);
}

} // namespace

LogicalResult parc::contrib::skipLayerNorm(NodeContext &c) {
  return skipNorm(c, /*rms=*/false);
}

LogicalResult parc::contrib::skipSimplifiedLayerNorm(NodeContext &c) {
  return skipNorm(c, /*rms=*/true);
}

/// SimplifiedLayerNormalization(X, scale): RMSNorm over `axis..`.
LogicalResult parc::contrib::simplifiedLayerNorm(NodeContext &c) {
  Ops o{c.builder(), c.loc()};
  if (failed(refuseUsedOutputs(c, {1}, "inv_std_var")))
    return failure();
  auto x = c.input(0), scale = c.input(1);
  if (failed(x) || failed(scale))
    return failure();
  int64_t rank = typeOf(*x).getRank();
  int64_t axis = c.intAttr("axis", -1);
  if (axis < -rank || axis >= rank)
    return c.error() << "axis " << axis << " is out of range for rank " << rank
                     << " (accepted: " << -rank << " to " << rank - 1 << ")";
  axis = axis < 0 ? axis + rank : axis;
  auto normed = typeOf(*x).getShape().drop_front(axis);
  auto sshape = nn::broadcastShapes(typeOf(*scale).getShape(), normed);
  if (failed(sshape) || *sshape != normed)
    return c.error() << "scale " << typeOf(*scale)
                     << " does not broadcast over the normalised dims of "
                     << typeOf(*x);
  auto t = c.outType(0, typeOf(*x));
  if (failed(t))
    return failure();
  c.set(0, nn::RmsNormOp::create(
               o.b, o.loc, *t, *x, *scale, o.b.getI64IntegerAttr(axis),
               o.b.getF32FloatAttr(c.floatAttr("epsilon", 1e-5f))));
  return success();
}

/// EmbedLayerNormalization(input_ids, segment_ids?, word_embedding,
/// position_embedding, segment_embedding?, gamma, beta, mask?,
/// position_ids?): LayerNorm of the summed embeddings (output 0), the
/// number of attended tokens per sequence (output 1, mask_index) and the
/// sum itself (output 2).
LogicalResult parc::contrib::embedLayerNorm(NodeContext &c) {
  Ops o{c.builder(), c.loc()};
  auto ids = c.input(0), word = c.input(2), pos = c.input(3),
       gamma = c.input(5), beta = c.input(6);
  auto segIds = optionalInput(c, 1), segTable = optionalInput(c, 4),
       mask = optionalInput(c, 7), posIds = optionalInput(c, 8);
  if (failed(ids) || failed(word) || failed(pos) || failed(gamma) ||
      failed(beta) || failed(segIds) || failed(segTable) || failed(mask) ||
      failed(posIds))
    return failure();
  if (typeOf(*ids).getRank() != 2)
    return c.error() << "input_ids must be [batch, seq], got " << typeOf(*ids);
  int64_t batch = typeOf(*ids).getDimSize(0), seq = typeOf(*ids).getDimSize(1);
  for (Value table : {*word, *pos})
    if (typeOf(table).getRank() != 2)
      return c.error() << "embedding tables must be [rows, hidden], got "
                       << typeOf(table);
  if (!!*segIds != !!*segTable)
    return c.error() << "segment_ids (input 1) and segment_embedding (input "
                        "4) must be given together";
  Value sum = o.gather(*word, *ids);
  Value positions;
  if (*posIds) {
    positions = o.gather(*pos, *posIds);
  } else {
    int64_t rows = typeOf(*pos).getDimSize(0);
    if (seq > rows)
      return c.error() << "sequence length " << seq << " exceeds the " << rows
                       << " rows of position_embedding";
    auto st = shaped({seq, typeOf(*pos).getDimSize(1)},
                     typeOf(*pos).getElementType());
    positions = o.b.createOrFold<nn::SliceOp>(o.loc, st, *pos,
                                              o.b.getDenseI64ArrayAttr({0, 0}),
                                              o.b.getDenseI64ArrayAttr({1, 1}));
  }
  FailureOr<Value> s = addInto(c, o, sum, positions, "position embeddings");
  if (succeeded(s) && *segIds)
    s = addInto(c, o, *s, o.gather(*segTable, *segIds), "segment embeddings");
  if (failed(s) || failed(checkNormParam(c, *s, *gamma, "gamma")) ||
      failed(checkNormParam(c, *s, *beta, "beta")))
    return failure();
  auto t = c.outType(0, typeOf(*s));
  if (failed(t))
    return failure();
  c.set(0, nn::LayerNormOp::create(
               o.b, o.loc, *t, *s, *gamma, *beta, o.b.getI64IntegerAttr(2),
               o.b.getF32FloatAttr(c.floatAttr("epsilon", 1e-12f))));
  if (c.outputUsed(1)) {
    auto it = shaped({batch}, o.b.getI32Type());
    auto mt = c.outType(1, it);
    if (failed(mt))
      return failure();
    Value index;
    if (!*mask) {
      index = arith::ConstantOp::create(o.b, o.loc, it,
                                        DenseElementsAttr::get(it, int32_t(0)));
    } else {
      if (typeOf(*mask) != typeOf(*ids))
        return c.error() << "mask must be " << typeOf(*ids) << " like "
                         << "input_ids, got " << typeOf(*mask);
      index = o.b.createOrFold<nn::ReduceSumOp>(o.loc, it, *mask,
                                                o.b.getDenseI64ArrayAttr({1}),
                                                o.b.getBoolAttr(false));
    }
    c.set(1, index);
  }
  return setIfUsed(c, 2, *s);
}

//===----------------------------------------------------------------------===//
// Activations
//===----------------------------------------------------------------------===//

namespace {

/// FastGelu(X, bias?) (tanh form), BiasGelu(A, B) and Gelu(X) (erf form):
/// GELU of the input plus its bias.
LogicalResult biasedGelu(NodeContext &c, nn::GeluApproximation approx) {
  Ops o{c.builder(), c.loc()};
  auto x = c.input(0);
  auto bias = optionalInput(c, 1);
  if (failed(x) || failed(bias))
    return failure();
  FailureOr<Value> v = *x;
  if (*bias)
    v = addInto(c, o, *x, *bias, "bias");
  if (failed(v))
    return failure();
  auto t = c.outType(0, typeOf(*x));
  if (failed(t))
    return failure();
  c.set(0, nn::GeluOp::create(
               o.b, o.loc, *t, *v,
               nn::GeluApproximationAttr::get(o.b.getContext(), approx)));
  return success();
}

} // namespace

LogicalResult parc::contrib::fastGelu(NodeContext &c) {
  return biasedGelu(c, nn::GeluApproximation::tanh);
}

LogicalResult parc::contrib::biasGelu(NodeContext &c) {
  return biasedGelu(c, nn::GeluApproximation::none);
}

LogicalResult parc::contrib::gelu(NodeContext &c) {
  return biasedGelu(c, nn::GeluApproximation::none);
}

/// QuickGelu(X): X · sigmoid(alpha · X).
LogicalResult parc::contrib::quickGelu(NodeContext &c) {
  Ops o{c.builder(), c.loc()};
  auto x = c.input(0);
  if (failed(x))
    return failure();
  auto t = c.outType(0, typeOf(*x));
  if (failed(t))
    return failure();
  Type et = t->getElementType();
  Value scaled =
      o.binary<nn::MulOp>(*x, o.scalar(et, c.floatAttr("alpha", 1.702f)));
  Value gate = nn::SigmoidOp::create(o.b, o.loc, *t, scaled);
  c.set(0, o.binary<nn::MulOp>(*x, gate));
  return success();
}

//===----------------------------------------------------------------------===//
// Attention
//===----------------------------------------------------------------------===//

namespace {

/// [B, S, N·D] → [B, N, S, D].
Value splitHeads(Ops &o, Value x, int64_t heads) {
  auto s = typeOf(x).getShape();
  return o.transpose(o.reshape(x, {s[0], s[1], heads, s[2] / heads}),
                     {0, 2, 1, 3});
}

/// [B, N, S, D] → [B, S, N·D].
Value mergeHeads(Ops &o, Value x) {
  auto s = typeOf(x).getShape();
  return o.reshape(o.transpose(x, {0, 2, 1, 3}), {s[0], s[2], s[1] * s[3]});
}

/// Which keys each query may read, as i1 broadcasting to [B, 1, S, T]
/// (null: all): Attention's mask_index ([B] key lengths, [B, T] or [B, S,
/// T] 0/1 masks) and, when `causal`, keys up to the query's position
/// past + i.
FailureOr<Value> allowedKeys(NodeContext &c, Ops &o, Value mask, int64_t batch,
                             int64_t seq, int64_t total, bool causal) {
  Type i1 = o.b.getI1Type();
  Value allowed;
  if (mask) {
    auto mt = typeOf(mask);
    auto shape = mt.getShape();
    Type et = mt.getElementType();
    if (!isa<IntegerType>(et))
      return c.error() << "mask_index must be an integer tensor, got " << mt,
             failure();
    if (shape == ArrayRef<int64_t>{batch}) {
      // Right padding: keys at or past each sequence's length are masked.
      SmallVector<int64_t> iota;
      for (int64_t j = 0; j < total; ++j)
        iota.push_back(j);
      auto it = shaped({1, 1, 1, total}, et);
      Value keys = arith::ConstantOp::create(
          o.b, o.loc, it,
          DenseElementsAttr::get(it, llvm::map_to_vector(iota, [&](int64_t v) {
                                   return APInt(et.getIntOrFloatBitWidth(), v);
                                 })));
      allowed =
          o.binary<nn::LessOp>(keys, o.reshape(mask, {batch, 1, 1, 1}), i1);
    } else if (shape == ArrayRef<int64_t>{batch, total} ||
               shape == ArrayRef<int64_t>{batch, seq, total}) {
      Value m = o.reshape(mask, shape.size() == 2
                                    ? ArrayRef<int64_t>{batch, 1, 1, total}
                                    : ArrayRef<int64_t>{batch, 1, seq, total});
      allowed = o.binary<nn::GreaterOp>(m, o.scalar(et, 0), i1);
    } else {
      return c.error() << "mask_index " << mt
                       << " is not supported (accepted: [" << batch
                       << "] key lengths, or a 0/1 mask [" << batch << ", "
                       << total << "] or [" << batch << ", " << seq << ", "
                       << total << "])",
             failure();
    }
  }
  if (causal) {
    SmallVector<bool> tri;
    for (int64_t i = 0; i < seq; ++i)
      for (int64_t j = 0; j < total; ++j)
        tri.push_back(j <= total - seq + i);
    auto tt = shaped({1, 1, seq, total}, i1);
    Value lower = arith::ConstantOp::create(o.b, o.loc, tt,
                                            DenseElementsAttr::get(tt, tri));
    allowed = allowed ? o.binary<nn::AndOp>(allowed, lower, i1) : lower;
  }
  return allowed;
}

/// nn.attention of q [B, N, S, D] on k, v [B, Nkv, T, D], with `allowed`
/// (null: everything) applied as an additive mask of `filter`.
Value attend(Ops &o, Value q, Value k, Value v, Value allowed, float scale,
             double filter) {
  Type et = typeOf(q).getElementType();
  SmallVector<Value> masks;
  if (allowed)
    masks.push_back(
        nn::WhereOp::create(o.b, o.loc, shaped(typeOf(allowed).getShape(), et),
                            allowed, o.scalar(et, 0), o.scalar(et, filter)));
  auto qs = typeOf(q).getShape();
  auto out = shaped({qs[0], qs[1], qs[2], typeOf(v).getDimSize(3)}, et);
  auto att = nn::AttentionOp::create(o.b, o.loc, out, q, k, v, masks, scale);
  if (allowed) {
    Block &mod = att.getScoreModBlock();
    OpBuilder::InsertionGuard guard(o.b);
    o.b.setInsertionPoint(mod.getTerminator());
    Value s = mod.getArgument(0);
    mod.getTerminator()->setOperand(
        0, nn::AddOp::create(o.b, o.loc, s.getType(), s, mod.getArgument(1)));
  }
  return att;
}

/// The head-split keys or values with the cache in front: `past`
/// [B, N, P, D] (null or empty: none) and the new [B, N, S, D].
/// Attention's and MultiHeadAttention's common tail: the mask_index (and
/// `unidirectional`) as allowed keys, the scale (1/sqrt(head size) unless
/// given), attention with mask_filter_value, heads merged to [B, S, N·D].
FailureOr<Value> attendMasked(NodeContext &c, Ops &o, Value q, Value k,
                              Value v, Value mask, int64_t batch, int64_t seq,
                              int64_t headSize) {
  auto allowed = allowedKeys(c, o, mask, batch, seq, typeOf(k).getDimSize(2),
                             c.intAttr("unidirectional", 0) != 0);
  if (failed(allowed))
    return failure();
  float scale = c.floatAttr("scale", 0.0f);
  if (scale == 0.0f)
    scale = 1.0f / std::sqrt((float)headSize);
  return mergeHeads(o, attend(o, q, k, v, *allowed, scale,
                              c.floatAttr("mask_filter_value", -10000.0f)));
}

Value withPast(Ops &o, Value past, Value fresh) {
  if (!past || typeOf(past).getDimSize(2) == 0)
    return fresh;
  return o.concat({past, fresh}, 2);
}

/// Checks Attention's attributes and inputs that parc does not import.
LogicalResult checkAttentionForm(NodeContext &c) {
  if (c.intAttr("do_rotary", 0))
    return c.error() << "do_rotary = 1 is not supported (accepted: 0; apply "
                        "RotaryEmbedding before the attention)";
  if (c.intAttr("past_present_share_buffer", 0))
    return c.error() << "past_present_share_buffer = 1 is not supported "
                        "(accepted: 0, past and present as separate tensors)";
  for (int i : {5, 6})
    if (c.has(i))
      return c.error() << "input " << i
                       << (i == 5 ? " (attention_bias)"
                                  : " (past_sequence_length)")
                       << " is not supported (accepted: inputs 0 to 4)";
  return success();
}

/// The query, key and value widths of Attention's packed weights [in, q +
/// k + v] (qkv_hidden_sizes, or three equal parts), checked against
/// `heads`.
FailureOr<SmallVector<int64_t>> qkvSizes(NodeContext &c, RankedTensorType xt,
                                         RankedTensorType wt, int64_t heads) {
  if (xt.getRank() != 3 || wt.getRank() != 2 ||
      wt.getDimSize(0) != xt.getDimSize(2))
    return c.error() << "input " << xt << " and weights " << wt
                     << " must be [batch, seq, in] and [in, q + k + v]",
           failure();
  SmallVector<int64_t> sizes =
      c.intsAttr("qkv_hidden_sizes")
          .value_or(SmallVector<int64_t>(3, wt.getDimSize(1) / 3));
  if (sizes.size() != 3 || sizes[0] + sizes[1] + sizes[2] != wt.getDimSize(1) ||
      sizes[0] != sizes[1])
    return c.error() << "qkv_hidden_sizes must be three sizes, query and key "
                        "equal, summing to the weights' "
                     << wt.getDimSize(1) << " columns",
           failure();
  if (heads <= 0 || llvm::any_of(sizes, [&](int64_t n) { return n % heads; }))
    return c.error() << "num_heads " << heads << " must be positive and divide "
                     << "the query, key and value sizes (" << sizes[0] << ", "
                     << sizes[1] << ", " << sizes[2] << ")",
           failure();
  return sizes;
}

/// Attention's past [2, B, heads, P, D] as keys and values [B, heads, P, D].
LogicalResult splitPast(NodeContext &c, Ops &o, Value past, int64_t batch,
                        int64_t heads, int64_t dk, int64_t dv, Value &keys,
                        Value &values) {
  auto pt = typeOf(past);
  int64_t p = pt.getRank() == 5 ? pt.getDimSize(3) : -1;
  if (dk != dv || pt.getShape() != ArrayRef<int64_t>{2, batch, heads, p, dk})
    return c.error() << "past " << pt << " must be [2, " << batch << ", "
                     << heads << ", past_seq, " << dk
                     << "] (keys and values of equal head size)";
  auto kv = o.split(past, {1, 1}, 0);
  keys = o.reshape(kv[0], {batch, heads, p, dk});
  values = o.reshape(kv[1], {batch, heads, p, dk});
  return success();
}

} // namespace

/// Attention(input, weights, bias?, mask_index?, past?): the packed QKV
/// projection, multi-head attention (causal with `unidirectional`) and
/// past/present as [2, B, N, T, D] key/value stacks.
LogicalResult parc::contrib::attention(NodeContext &c) {
  Ops o{c.builder(), c.loc()};
  if (failed(checkAttentionForm(c)))
    return failure();
  auto x = c.input(0), w = c.input(1);
  auto bias = optionalInput(c, 2), mask = optionalInput(c, 3),
       past = optionalInput(c, 4);
  if (failed(x) || failed(w) || failed(bias) || failed(mask) || failed(past))
    return failure();
  int64_t heads = c.intAttr("num_heads", 0);
  auto xt = typeOf(*x);
  auto sizes = qkvSizes(c, xt, typeOf(*w), heads);
  if (failed(sizes))
    return failure();
  int64_t batch = xt.getDimSize(0), seq = xt.getDimSize(1);
  int64_t dk = (*sizes)[1] / heads, dv = (*sizes)[2] / heads;
  Value pastK, pastV;
  if (*past &&
      failed(splitPast(c, o, *past, batch, heads, dk, dv, pastK, pastV)))
    return failure();
  FailureOr<Value> qkv = o.matmul(*x, *w);
  if (*bias)
    qkv = addInto(c, o, *qkv, *bias, "bias");
  if (failed(qkv))
    return failure();
  auto parts = o.split(*qkv, *sizes, 2);
  Value q = splitHeads(o, parts[0], heads);
  Value k = withPast(o, pastK, splitHeads(o, parts[1], heads));
  Value v = withPast(o, pastV, splitHeads(o, parts[2], heads));
  auto out = attendMasked(c, o, q, k, v, *mask, batch, seq, dk);
  if (failed(out))
    return failure();
  auto t = c.outType(0, typeOf(*out));
  if (failed(t))
    return failure();
  c.set(0, *out);
  if (c.outputUsed(1)) {
    if (dk != dv)
      return c.error() << "present needs keys and values of equal head size, "
                          "not "
                       << dk << " and " << dv;
    SmallVector<int64_t> stacked{1, batch, heads, typeOf(k).getDimSize(2), dk};
    Value present = o.concat({o.reshape(k, stacked), o.reshape(v, stacked)}, 0);
    if (failed(c.outType(1, typeOf(present))))
      return failure();
    c.set(1, present);
  }
  return success();
}

namespace {

/// MultiHeadAttention's head-split keys or values: `x` [B, L, heads · D]
/// plus its slice of the packed bias, after the cache `past` [B, heads, P,
/// D] (null: none).
FailureOr<Value> mhaKeys(NodeContext &c, Ops &o, Value x, Value bias,
                         int64_t offset, Value past, int64_t heads,
                         StringRef what) {
  auto t = typeOf(x);
  if (t.getRank() != 3 || t.getDimSize(2) % heads)
    return c.error() << what << " " << t << " must be [batch, seq, heads · "
                     << "head_size] with " << heads << " heads (packed and "
                     << "head-split forms are not supported)",
           failure();
  if (bias) {
    int64_t n = t.getDimSize(2);
    auto st = shaped({n}, t.getElementType());
    x = o.binary<nn::AddOp>(
        x, o.b.createOrFold<nn::SliceOp>(o.loc, st, bias,
                                         o.b.getDenseI64ArrayAttr({offset}),
                                         o.b.getDenseI64ArrayAttr({1})));
  }
  Value h = splitHeads(o, x, heads);
  if (past && (typeOf(past).getRank() != 4 ||
               typeOf(past).getDimSize(0) != t.getDimSize(0) ||
               typeOf(past).getDimSize(1) != heads ||
               typeOf(past).getDimSize(3) != typeOf(h).getDimSize(3) ||
               typeOf(past).getElementType() != t.getElementType()))
    return c.error() << "past of " << what << " must be [" << t.getDimSize(0)
                     << ", " << heads << ", past_seq, "
                     << typeOf(h).getDimSize(3) << "] of its type, got "
                     << typeOf(past),
           failure();
  return withPast(o, past, h);
}

} // namespace

/// MultiHeadAttention(query, key, value, bias?, key_padding_mask?,
/// attention_bias?, past_key?, past_value?): Attention with the
/// projections done outside; present_key/value are [B, heads, T, D].
LogicalResult parc::contrib::multiHeadAttention(NodeContext &c) {
  Ops o{c.builder(), c.loc()};
  for (int i : {5, 8, 9})
    if (c.has(i))
      return c.error() << "input " << i
                       << " (attention_bias, past_sequence_length or "
                          "cache_indirection) is not supported (accepted: "
                          "inputs 0 to 4, 6 and 7)";
  auto q = c.input(0), k = c.input(1), v = c.input(2);
  auto bias = optionalInput(c, 3), mask = optionalInput(c, 4),
       pk = optionalInput(c, 6), pv = optionalInput(c, 7);
  if (failed(q) || failed(k) || failed(v) || failed(bias) || failed(mask) ||
      failed(pk) || failed(pv))
    return failure();
  int64_t heads = c.intAttr("num_heads", 0);
  auto qt = typeOf(*q);
  if (heads <= 0 || qt.getRank() != 3 || qt.getDimSize(2) % heads)
    return c.error() << "query " << qt << " must be [batch, seq, heads · "
                     << "head_size] with num_heads " << heads << " > 0";
  int64_t hq = qt.getDimSize(2), hk = typeOf(*k).getShape().back();
  if (*bias && typeOf(*bias).getShape() !=
                   ArrayRef<int64_t>{hq + hk + typeOf(*v).getShape().back()})
    return c.error() << "bias " << typeOf(*bias) << " must be [q + k + v] = ["
                     << hq + hk + typeOf(*v).getShape().back() << "]";
  FailureOr<Value> query = mhaKeys(c, o, *q, *bias, 0, Value(), heads, "query");
  if (failed(query))
    return failure();
  FailureOr<Value> key = mhaKeys(c, o, *k, *bias, hq, *pk, heads, "key");
  if (failed(key))
    return failure();
  FailureOr<Value> value =
      mhaKeys(c, o, *v, *bias, hq + hk, *pv, heads, "value");
  if (failed(value))
    return failure();
  int64_t batch = qt.getDimSize(0), seq = qt.getDimSize(1), d = hq / heads;
  if (typeOf(*key).getDimSize(3) != d ||
      typeOf(*key).getDimSize(2) != typeOf(*value).getDimSize(2))
    return c.error() << "query and key head sizes or key and value lengths "
                        "differ";
  auto out = attendMasked(c, o, *query, *key, *value, *mask, batch, seq, d);
  if (failed(out))
    return failure();
  if (failed(c.outType(0, typeOf(*out))))
    return failure();
  c.set(0, *out);
  for (auto [i, kv] : llvm::enumerate(SmallVector<Value>{*key, *value}))
    if (failed(setIfUsed(c, i + 1, kv)))
      return failure();
  return success();
}

namespace {

/// nn.rotary of head-split `x` ([B, S, N, D] when `seqFirst`, else [B, N,
/// S, D]) at positions `pos` [B or 1, S]: the caches' [positions, D / 2]
/// rows gathered there and repeated to the head size (rotate-half layout).
Value rotate(Ops &o, Value x, Value pos, Value cosCache, Value sinCache,
             bool seqFirst) {
  int64_t pb = typeOf(pos).getDimSize(0), seq = typeOf(pos).getDimSize(1);
  int64_t d = typeOf(x).getShape().back();
  SmallVector<int64_t> shape = seqFirst ? SmallVector<int64_t>{pb, seq, 1, d}
                                        : SmallVector<int64_t>{pb, 1, seq, d};
  auto table = [&](Value cache) {
    Value half = o.gather(cache, pos);
    return o.reshape(o.concat({half, half}, 2), shape);
  };
  Value cosF = table(cosCache), sinF = table(sinCache);
  return nn::RotaryOp::create(o.b, o.loc, typeOf(x), x, cosF, sinF);
}

/// GroupQueryAttention's rotary positions: query i of batch b sits at
/// seqlens_k[b] + 1 - S + i.
Value gqaPositions(Ops &o, Value seqlens, int64_t batch, int64_t seq) {
  Type et = typeOf(seqlens).getElementType();
  SmallVector<APInt> offs;
  for (int64_t i = 0; i < seq; ++i)
    offs.push_back(
        APInt(et.getIntOrFloatBitWidth(), i + 1 - seq, /*isSigned=*/true));
  auto t = shaped({1, seq}, et);
  Value ramp =
      arith::ConstantOp::create(o.b, o.loc, t, DenseElementsAttr::get(t, offs));
  return o.binary<nn::AddOp>(o.reshape(seqlens, {batch, 1}), ramp);
}

/// GroupQueryAttention's cos/sin caches when do_rotary: [positions, D / 2]
/// of the query's type. Fails (with an error) on another form.
LogicalResult checkGqaRotary(NodeContext &c, Value cosCache, Value sinCache,
                             Type et, int64_t d) {
  if (c.intAttr("rotary_interleaved", 0))
    return c.error() << "rotary_interleaved = 1 is not supported (accepted: "
                        "0, the rotate-half layout)";
  for (Value t : {cosCache, sinCache})
    if (!t || typeOf(t).getRank() != 2 || typeOf(t).getDimSize(1) * 2 != d ||
        typeOf(t).getElementType() != et)
      return c.error() << "do_rotary needs cos_cache and sin_cache (inputs 7 "
                          "and 8) of [positions, "
                       << d / 2
                       << "] in the "
                          "query's type";
  return success();
}

/// GroupQueryAttention's keys: query i of batch b sits at position
/// seqlens_k[b] + 1 - S + i and reads keys 0 .. that position, i.e. where
/// j - i + S - 2 < seqlens_k[b] (seqlens_k is total length - 1).
Value gqaAllowed(Ops &o, Value seqlens, int64_t batch, int64_t seq,
                 int64_t total) {
  Type et = typeOf(seqlens).getElementType();
  SmallVector<APInt> offs;
  for (int64_t i = 0; i < seq; ++i)
    for (int64_t j = 0; j < total; ++j)
      offs.push_back(APInt(et.getIntOrFloatBitWidth(), j - i + seq - 2,
                           /*isSigned=*/true));
  auto t = shaped({1, 1, seq, total}, et);
  Value e =
      arith::ConstantOp::create(o.b, o.loc, t, DenseElementsAttr::get(t, offs));
  return o.binary<nn::LessOp>(e, o.reshape(seqlens, {batch, 1, 1, 1}),
                              o.b.getI1Type());
}

} // namespace

/// GroupQueryAttention(query, key, value, past_key?, past_value?,
/// seqlens_k, total_sequence_length, cos_cache?, sin_cache?), with
/// do_rotary the new queries and keys rotated at their positions: causal
/// grouped-query attention on
/// [B, S, heads · D] inputs, the caches [B, kv_heads, T, D] in front of the
/// new keys and values (present = past ++ new: exact when every sequence
/// fills the cache, seqlens_k = past + S - 1).
LogicalResult parc::contrib::groupQueryAttention(NodeContext &c) {
  Ops o{c.builder(), c.loc()};
  if (c.intAttr("local_window_size", -1) != -1 ||
      c.floatAttr("softcap", 0) != 0)
    return c.error() << "local_window_size and softcap are not supported "
                        "(accepted: -1 and 0)";
  auto q = c.input(0), k = c.input(1), v = c.input(2), seqlens = c.input(5);
  auto pk = optionalInput(c, 3), pv = optionalInput(c, 4),
       cosCache = optionalInput(c, 7), sinCache = optionalInput(c, 8);
  if (failed(q) || failed(k) || failed(v) || failed(seqlens) || failed(pk) ||
      failed(pv) || failed(cosCache) || failed(sinCache))
    return failure();
  int64_t heads = c.intAttr("num_heads", 0),
          kvHeads = c.intAttr("kv_num_heads", 0);
  auto qt = typeOf(*q);
  if (qt.getRank() != 3 || typeOf(*k) != typeOf(*v) ||
      typeOf(*k).getRank() != 3)
    return c.error() << "query, key and value must be [batch, seq, heads · "
                        "head_size] (packed QKV is not supported), got "
                     << qt << ", " << typeOf(*k) << ", " << typeOf(*v);
  int64_t batch = qt.getDimSize(0), seq = qt.getDimSize(1);
  if (heads <= 0 || kvHeads <= 0 || heads % kvHeads ||
      qt.getDimSize(2) % heads ||
      typeOf(*k).getDimSize(2) != qt.getDimSize(2) / heads * kvHeads)
    return c.error() << "num_heads " << heads << " and kv_num_heads " << kvHeads
                     << " must divide each other and the query's "
                     << qt.getDimSize(2) << " and key's "
                     << typeOf(*k).getDimSize(2) << " features evenly";
  int64_t d = qt.getDimSize(2) / heads;
  if (typeOf(*seqlens).getShape() != ArrayRef<int64_t>{batch} ||
      !isa<IntegerType>(typeOf(*seqlens).getElementType()))
    return c.error() << "seqlens_k must be an integer [" << batch << "], got "
                     << typeOf(*seqlens);
  Value query = splitHeads(o, *q, heads), key = splitHeads(o, *k, kvHeads),
        value = splitHeads(o, *v, kvHeads);
  if (c.intAttr("do_rotary", 0)) {
    if (failed(checkGqaRotary(c, *cosCache, *sinCache, qt.getElementType(), d)))
      return failure();
    Value pos = gqaPositions(o, *seqlens, batch, seq);
    query = rotate(o, query, pos, *cosCache, *sinCache, /*seqFirst=*/false);
    key = rotate(o, key, pos, *cosCache, *sinCache, /*seqFirst=*/false);
  }
  for (Value past : {*pk, *pv})
    if (past &&
        (typeOf(past).getRank() != 4 || typeOf(past).getDimSize(0) != batch ||
         typeOf(past).getDimSize(1) != kvHeads ||
         typeOf(past).getDimSize(3) != d ||
         typeOf(past).getElementType() != typeOf(*k).getElementType()))
      return c.error() << "past key/value must be [" << batch << ", " << kvHeads
                       << ", past_seq, " << d << "] of the keys' type, got "
                       << typeOf(past);
  key = withPast(o, *pk, key);
  value = withPast(o, *pv, value);
  int64_t total = typeOf(key).getDimSize(2);
  float scale = c.floatAttr("scale", 0.0f);
  if (scale == 0.0f)
    scale = 1.0f / std::sqrt((float)d);
  Value allowed = gqaAllowed(o, *seqlens, batch, seq, total);
  Value out = mergeHeads(o, attend(o, query, key, value, allowed, scale,
                                   -std::numeric_limits<float>::infinity()));
  if (failed(c.outType(0, typeOf(out))))
    return failure();
  c.set(0, out);
  for (auto [i, kv] : llvm::enumerate(SmallVector<Value>{key, value}))
    if (failed(setIfUsed(c, i + 1, kv)))
      return failure();
  return success();
}

namespace {

/// The positions RotaryEmbedding reads: position_ids [B, S], or [1]
/// holding the first position of every sequence.
FailureOr<Value> rotaryPositions(NodeContext &c, Ops &o, Value ids,
                                 int64_t batch, int64_t seq) {
  auto t = typeOf(ids);
  if (!isa<IntegerType>(t.getElementType()))
    return c.error() << "position_ids must be integers, got " << t, failure();
  if (t.getShape() == ArrayRef<int64_t>{batch, seq})
    return ids;
  if (t.getShape() != ArrayRef<int64_t>{1} ||
      !isa<IntegerType>(t.getElementType()))
    return c.error() << "position_ids must be [" << batch << ", " << seq
                     << "] or [1] (the first position), got " << t,
           failure();
  Type et = t.getElementType();
  SmallVector<APInt> iota;
  for (int64_t i = 0; i < seq; ++i)
    iota.push_back(APInt(et.getIntOrFloatBitWidth(), i));
  auto it = shaped({1, seq}, et);
  Value ramp = arith::ConstantOp::create(o.b, o.loc, it,
                                         DenseElementsAttr::get(it, iota));
  return o.binary<nn::AddOp>(ramp, o.reshape(ids, {1, 1}));
}

} // namespace

/// RotaryEmbedding(input, position_ids, cos_cache, sin_cache), rotate-half
/// layout: nn.rotary with the caches' half-width rows, gathered at the
/// positions, repeated to the head size. input is [B, S, heads · D] or
/// [B, heads, S, D].
LogicalResult parc::contrib::rotaryEmbedding(NodeContext &c) {
  Ops o{c.builder(), c.loc()};
  if (c.intAttr("interleaved", 0))
    return c.error() << "interleaved = 1 is not supported (accepted: 0, the "
                        "rotate-half layout)";
  if (c.intAttr("rotary_embedding_dim", 0) ||
      c.intAttr("is_packed_batching", 0))
    return c.error() << "rotary_embedding_dim and is_packed_batching are not "
                        "supported (accepted: 0, rotating whole heads)";
  auto x = c.input(0), ids = c.input(1), cosT = c.input(2), sinT = c.input(3);
  if (failed(x) || failed(ids) || failed(cosT) || failed(sinT))
    return failure();
  auto xt = typeOf(*x), ct = typeOf(*cosT);
  bool split = xt.getRank() == 3;
  if ((!split && xt.getRank() != 4) || ct.getRank() != 2 ||
      ct != typeOf(*sinT) || ct.getElementType() != xt.getElementType())
    return c.error() << "input " << xt << " must be [B, S, heads · D] or [B, "
                     << "heads, S, D] and cos/sin caches [positions, D / 2] of "
                     << "its type, got " << ct << " and " << typeOf(*sinT);
  int64_t d = 2 * ct.getDimSize(1), batch = xt.getDimSize(0);
  int64_t seq = xt.getDimSize(split ? 1 : 2);
  int64_t heads =
      split ? c.intAttr("num_heads", xt.getDimSize(2) / std::max<int64_t>(d, 1))
            : xt.getDimSize(1);
  if (d == 0 || heads <= 0 ||
      (split ? xt.getDimSize(2) != heads * d : xt.getDimSize(3) != d))
    return c.error() << "the caches' " << ct.getDimSize(1) << " columns (head "
                     << "size " << d << ") do not fit input " << xt;
  auto pos = rotaryPositions(c, o, *ids, batch, seq);
  if (failed(pos))
    return failure();
  Value in = split ? o.reshape(*x, {batch, seq, heads, d}) : *x;
  Value r = rotate(o, in, *pos, *cosT, *sinT, /*seqFirst=*/split);
  auto t = c.outType(0, xt);
  if (failed(t))
    return failure();
  c.set(0, split ? o.reshape(r, xt.getShape()) : r);
  return success();
}

//===----------------------------------------------------------------------===//
// MatMulNBits
//===----------------------------------------------------------------------===//

namespace {

/// The bytes of a constant operand (an initializer): inline or a blob.
FailureOr<std::vector<char>> constantBytes(Value v) {
  auto cst = v.getDefiningOp<arith::ConstantOp>();
  if (!cst)
    return failure();
  if (auto res = dyn_cast<DenseResourceElementsAttr>(cst.getValue())) {
    AsmResourceBlob *blob = res.getRawHandle().getBlob();
    if (!blob)
      return failure();
    return std::vector<char>(blob->getData().begin(), blob->getData().end());
  }
  auto dense = dyn_cast<DenseElementsAttr>(cst.getValue());
  if (!dense || dense.getElementType().isInteger(1))
    return failure();
  size_t width = dense.getElementType().getIntOrFloatBitWidth() / 8;
  ArrayRef<char> raw = dense.getRawData();
  if (!dense.isSplat())
    return std::vector<char>(raw.begin(), raw.end());
  std::vector<char> out;
  for (int64_t i = 0; i < dense.getNumElements(); ++i)
    out.insert(out.end(), raw.begin(), raw.begin() + width);
  return out;
}

/// Floats of f32 or f16 bytes.
std::vector<float> asFloats(const std::vector<char> &bytes, Type et) {
  std::vector<float> out;
  if (et.isF32()) {
    out.resize(bytes.size() / 4);
    std::memcpy(out.data(), bytes.data(), out.size() * 4);
    return out;
  }
  for (size_t i = 0; i + 1 < bytes.size(); i += 2) {
    uint16_t h;
    std::memcpy(&h, bytes.data() + i, 2);
    out.push_back(APFloat(APFloat::IEEEhalf(), APInt(16, h)).convertToFloat());
  }
  return out;
}

/// The 4-bit weights of MatMulNBits dequantised, [K, N] in `et`:
/// w[k, n] = (q - zero_point) · scale of k's block in column n, q the
/// nibble k % 2 (low first) of byte k / 2 of that block, zero points 8
/// unless given (packed nibbles, or one float per block).
struct Dequantised {
  int64_t k, n, blocks, blockSize;
  std::vector<char> packed, zeros;
  std::vector<float> scales, zeroFloats;

  float at(int64_t row, int64_t col) const {
    int64_t blk = row / blockSize, i = row % blockSize;
    uint8_t byte = packed[(col * blocks + blk) * (blockSize / 2) + i / 2];
    int q = i % 2 ? byte >> 4 : byte & 0xF;
    float zp = 8;
    if (!zeroFloats.empty()) {
      zp = zeroFloats[col * blocks + blk];
    } else if (!zeros.empty()) {
      uint8_t z = zeros[col * ((blocks + 1) / 2) + blk / 2];
      zp = blk % 2 ? z >> 4 : z & 0xF;
    }
    return (q - zp) * scales[col * blocks + blk];
  }
};

/// A [K, N] weight constant of `et` holding `w`.
Value weightConstant(Ops &o, const Dequantised &w, Type et, StringRef key) {
  std::vector<char> bytes;
  for (int64_t r = 0; r < w.k; ++r)
    for (int64_t c = 0; c < w.n; ++c) {
      float v = w.at(r, c);
      if (et.isF32()) {
        bytes.insert(bytes.end(), (char *)&v, (char *)&v + 4);
        continue;
      }
      bool lost;
      APFloat h(v);
      h.convert(APFloat::IEEEhalf(), APFloat::rmNearestTiesToEven, &lost);
      uint16_t bits = h.bitcastToAPInt().getZExtValue();
      bytes.insert(bytes.end(), (char *)&bits, (char *)&bits + 2);
    }
  auto type = shaped({w.k, w.n}, et);
  auto blob = HeapAsmResourceBlob::allocateAndCopyWithAlign(
      ArrayRef<char>(bytes.data(), bytes.size()), alignof(uint64_t));
  return arith::ConstantOp::create(
      o.b, o.loc, type,
      DenseResourceElementsAttr::get(type, key, std::move(blob)));
}

/// Reads MatMulNBits' quantised operands; fails naming what is wrong.
FailureOr<Dequantised> readNBits(NodeContext &c, Type et) {
  Dequantised w{c.intAttr("K", 0),
                c.intAttr("N", 0),
                0,
                c.intAttr("block_size", 0),
                {},
                {},
                {},
                {}};
  if (c.intAttr("bits", 4) != 4)
    return c.error() << "bits = " << c.intAttr("bits", 4)
                     << " is not supported (accepted: 4)",
           failure();
  if (w.k <= 0 || w.n <= 0 || w.blockSize < 2 || w.blockSize % 2)
    return c.error() << "K " << w.k << ", N " << w.n << " and block_size "
                     << w.blockSize << " must be positive (block_size even)",
           failure();
  if (c.has(4))
    return c.error() << "g_idx (input 4) is not supported (accepted: blocks "
                        "in order)",
           failure();
  w.blocks = (w.k + w.blockSize - 1) / w.blockSize;
  auto b = c.input(1), scales = c.input(2);
  auto zeros = optionalInput(c, 3);
  if (failed(b) || failed(scales) || failed(zeros))
    return failure();
  auto packed = constantBytes(*b), sc = constantBytes(*scales);
  FailureOr<std::vector<char>> zp = std::vector<char>();
  if (*zeros)
    zp = constantBytes(*zeros);
  if (failed(packed) || failed(sc) || failed(zp))
    return c.error() << "the quantised weights, scales and zero points must be "
                        "initializers (parc dequantises them at compile time)",
           failure();
  Type st = typeOf(*scales).getElementType();
  if (st != et || (!st.isF32() && !st.isF16()))
    return c.error() << "scales must be f32 or f16 like the input, got "
                     << typeOf(*scales),
           failure();
  w.packed = std::move(*packed);
  w.scales = asFloats(*sc, st);
  bool floatZeros = *zeros && typeOf(*zeros).getElementType() == st;
  if (floatZeros)
    w.zeroFloats = asFloats(*zp, st);
  else
    w.zeros = std::move(*zp);
  int64_t cells = w.n * w.blocks;
  if ((int64_t)w.packed.size() != cells * (w.blockSize / 2) ||
      (int64_t)w.scales.size() != cells ||
      (floatZeros
           ? (int64_t)w.zeroFloats.size() != cells
           : (*zeros && (int64_t)w.zeros.size() != w.n * ((w.blocks + 1) / 2))))
    return c.error() << "B " << typeOf(*b) << ", scales and zero points do not "
                     << "match K " << w.k << ", N " << w.n << ", block_size "
                     << w.blockSize << " (B [N, " << w.blocks << ", "
                     << w.blockSize / 2 << "] bytes, " << cells << " scales)",
           failure();
  return w;
}

} // namespace

/// MatMulNBits(A, B, scales, zero_points?, g_idx?, bias?): A · W (+ bias)
/// with W dequantised at import into A's type: an nn.matmul on a constant,
/// which nn-fuse makes the linear tensor parallelism shards.
LogicalResult parc::contrib::matMulNBits(NodeContext &c) {
  Ops o{c.builder(), c.loc()};
  auto a = c.input(0);
  auto bias = optionalInput(c, 5);
  if (failed(a) || failed(bias))
    return failure();
  Type et = typeOf(*a).getElementType();
  auto w = readNBits(c, et);
  if (failed(w))
    return failure();
  if (typeOf(*a).getRank() < 2 || typeOf(*a).getShape().back() != w->k)
    return c.error() << "A " << typeOf(*a) << " must end in K = " << w->k;
  Value y = o.matmul(
      *a, weightConstant(o, *w, et, c.node().input(1) + ".dequantised"));
  if (*bias) {
    auto sum = addInto(c, o, y, *bias, "bias");
    if (failed(sum))
      return failure();
    y = *sum;
  }
  auto t = c.outType(0, typeOf(y));
  if (failed(t))
    return failure();
  c.set(0, y);
  return success();
}

//===----------------------------------------------------------------------===//
// Schemas
//===----------------------------------------------------------------------===//

namespace {

using onnx::InferenceContext;

bool hasInput(InferenceContext &ctx, size_t i) {
  return i < ctx.getNumInputs() && ctx.getInputType(i) &&
         ctx.getInputType(i)->has_tensor_type();
}

/// Output `out` typed (and shaped) like input `in`.
void likeInput(InferenceContext &ctx, size_t in, size_t out) {
  if (out >= ctx.getNumOutputs() || !hasInput(ctx, in))
    return;
  onnx::propagateElemTypeFromInputToOutput(ctx, in, out);
  if (onnx::hasInputShape(ctx, in))
    onnx::propagateShapeFromInputToOutput(ctx, in, out);
}

/// The static dims of input `i`, or empty when any is unknown.
SmallVector<int64_t> staticDims(InferenceContext &ctx, size_t i) {
  if (!hasInput(ctx, i) || !onnx::hasInputShape(ctx, i))
    return {};
  SmallVector<int64_t> dims;
  for (const auto &d : onnx::getInputShape(ctx, i).dim()) {
    if (!d.has_dim_value())
      return {};
    dims.push_back(d.dim_value());
  }
  return dims;
}

void setOutput(InferenceContext &ctx, size_t out, int32_t elem,
               ArrayRef<int64_t> dims) {
  if (out >= ctx.getNumOutputs())
    return;
  onnx::updateOutputElemType(ctx, out, elem);
  auto *shape = onnx::getOutputShape(ctx, out);
  shape->clear_dim();
  for (int64_t d : dims)
    shape->add_dim()->set_dim_value(d);
}

int32_t elemOf(InferenceContext &ctx, size_t i) {
  return ctx.getInputType(i)->tensor_type().elem_type();
}

void inferAttention(InferenceContext &ctx) {
  auto x = staticDims(ctx, 0), w = staticDims(ctx, 1);
  if (x.size() != 3 || w.size() != 2)
    return likeInput(ctx, 0, 0);
  int64_t v = w[1] / 3;
  if (const auto *a = ctx.getAttribute("qkv_hidden_sizes");
      a && a->ints_size() == 3)
    v = a->ints(2);
  setOutput(ctx, 0, elemOf(ctx, 0), {x[0], x[1], v});
  auto past = staticDims(ctx, 4);
  if (past.size() == 5)
    setOutput(ctx, 1, elemOf(ctx, 0),
              {past[0], past[1], past[2], past[3] + x[1], past[4]});
}

void inferGroupQueryAttention(InferenceContext &ctx) {
  likeInput(ctx, 0, 0);
  auto k = staticDims(ctx, 1), past = staticDims(ctx, 3);
  const auto *kvHeads = ctx.getAttribute("kv_num_heads");
  if (k.size() != 3 || past.size() != 4 || !kvHeads || kvHeads->i() <= 0)
    return;
  for (size_t out : {1, 2})
    setOutput(ctx, out, elemOf(ctx, 1),
              {past[0], past[1], past[2] + k[1], past[3]});
}

void inferMultiHeadAttention(InferenceContext &ctx) {
  auto q = staticDims(ctx, 0), v = staticDims(ctx, 2);
  if (q.size() != 3 || v.size() != 3)
    return likeInput(ctx, 0, 0);
  setOutput(ctx, 0, elemOf(ctx, 0), {q[0], q[1], v[2]});
}

void inferMatMulNBits(InferenceContext &ctx) {
  auto a = staticDims(ctx, 0);
  const auto *n = ctx.getAttribute("N");
  if (a.empty() || !n)
    return;
  a.back() = n->i();
  setOutput(ctx, 0, elemOf(ctx, 0), a);
}

void inferEmbedNorm(InferenceContext &ctx) {
  auto ids = staticDims(ctx, 0), word = staticDims(ctx, 2);
  if (ids.size() != 2 || word.size() != 2)
    return;
  for (size_t out : {0, 2})
    setOutput(ctx, out, elemOf(ctx, 2), {ids[0], ids[1], word[1]});
  setOutput(ctx, 1, onnx::TensorProto::INT32, {ids[0]});
}

void inferSkipNorm(InferenceContext &ctx) {
  likeInput(ctx, 0, 0);
  likeInput(ctx, 0, 3);
}

void registerSchema(const char *name, int inputs, ArrayRef<int> optional,
                    int outputs, onnx::InferenceFunction infer,
                    const char *domain = "com.microsoft") {
  onnx::OpSchema s;
  s.SetName(name).SetDomain(domain).SinceVersion(1);
  for (int i = 0; i < inputs; ++i) {
    std::string n = std::to_string(i);
    s.Input(i, "input" + n, "", "T" + n,
            llvm::is_contained(optional, i) ? onnx::OpSchema::Optional
                                            : onnx::OpSchema::Single);
    s.TypeConstraint("T" + n, onnx::OpSchema::all_tensor_types(), "");
  }
  for (int i = 0; i < outputs; ++i) {
    std::string n = std::to_string(i);
    s.Output(i, "output" + n, "", "U" + n,
             i ? onnx::OpSchema::Optional : onnx::OpSchema::Single);
    s.TypeConstraint("U" + n, onnx::OpSchema::all_tensor_types(), "");
  }
  s.AllowUncheckedAttributes().TypeAndShapeInferenceFunction(std::move(infer));
  onnx::OpSchemaRegistry::OpSchemaRegisterOnce registered(s);
}

} // namespace

void parc::contrib::registerContribOpSchemas() {
  static bool once = [] {
    auto first = [](InferenceContext &ctx) { likeInput(ctx, 0, 0); };
    registerSchema("Attention", 7, {2, 3, 4, 5, 6}, 2, inferAttention);
    registerSchema("GroupQueryAttention", 9, {3, 4, 7, 8}, 3,
                   inferGroupQueryAttention);
    registerSchema("RotaryEmbedding", 4, {}, 1, first);
    registerSchema("MultiHeadAttention", 10, {1, 2, 3, 4, 5, 6, 7, 8, 9}, 3,
                   inferMultiHeadAttention);
    registerSchema("MatMulNBits", 6, {3, 4, 5}, 1, inferMatMulNBits);
    registerSchema("SkipLayerNormalization", 5, {3, 4}, 4, inferSkipNorm);
    registerSchema("SkipSimplifiedLayerNormalization", 4, {3}, 4,
                   inferSkipNorm);
    // onnxruntime registers it in the default domain (where the genai model
    // builder writes it) and parc accepts it in both.
    registerSchema("SimplifiedLayerNormalization", 2, {}, 2, first);
    registerSchema("SimplifiedLayerNormalization", 2, {}, 2, first, "");
    registerSchema("EmbedLayerNormalization", 9, {1, 4, 7, 8}, 3,
                   inferEmbedNorm);
    registerSchema("FastGelu", 2, {1}, 1, first);
    registerSchema("BiasGelu", 2, {}, 1, first);
    registerSchema("Gelu", 1, {}, 1, first);
    registerSchema("QuickGelu", 1, {}, 1, first);
    return true;
  }();
  (void)once;
}
