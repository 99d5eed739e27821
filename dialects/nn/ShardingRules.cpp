//===- ShardingRules.cpp - sharding rules of the nn ops ---------*- C++ -*-===//
//
// External models of dist's ShardingRuleOpInterface for the nn ops: how a
// split of an operand dim maps to the results (forwards, with its parts)
// and back (backwards, structure only). dist-annotate walks the rules
// backwards to find a region, dist-propagate forwards to verify it; a rule
// that refuses keeps the region replicated. Einsum has no model of its own:
// the importer lowers it to transpose, reshape and matmul, whose rules carry
// its splits.
//
//===----------------------------------------------------------------------===//

#include "nn/ShardingRules.h"
#include "dist/DistInterfaces.h"
#include "nn/NNOps.h"
#include "parc/Support/OptionRef.h"

#include "mlir/IR/DialectRegistry.h"

#include <type_traits>

using namespace mlir;
using namespace parc;
using dist::DimSplit;
using dist::SplitRule;
using Splits = ArrayRef<std::optional<DimSplit>>;

namespace {

RankedTensorType typeOf(Value v) { return cast<RankedTensorType>(v.getType()); }
int64_t rankOf(Value v) { return typeOf(v).getRank(); }

SplitRule splitTo(Operation *op, std::optional<DimSplit> s) {
  SplitRule r;
  r.splits.assign(op->getNumResults(), s);
  return r;
}

/// Backwards, a rule gives structure only: every operand split in 1 part.
std::optional<DimSplit> dimOnly(int64_t d) { return DimSplit{d, 1}; }

/// The single split operand of a one-input rule.
std::optional<DimSplit> first(Splits in) {
  return in.empty() ? std::nullopt : in[0];
}

SmallVector<unsigned> computedOperands(Operation *op) {
  SmallVector<unsigned> idx;
  for (unsigned i = 0; i < op->getNumOperands(); ++i)
    if (!nn::isWeight(op->getOperand(i)))
      idx.push_back(i);
  return idx;
}

/// The dim of `operand` that broadcasts to dim `d` of a result of rank
/// `rank`, or none where the operand has no such dim or holds it once.
std::optional<int64_t> broadcastDim(Value operand, int64_t d, int64_t rank) {
  int64_t od = d - (rank - rankOf(operand));
  if (od < 0 || typeOf(operand).getDimSize(od) == 1)
    return std::nullopt;
  return od;
}

//===----------------------------------------------------------------------===//
// Elementwise, with numpy broadcasting
//===----------------------------------------------------------------------===//

struct Elementwise {
  static SmallVector<unsigned> operands(Operation *op) {
    return computedOperands(op);
  }
  static SplitRule forward(Operation *op, Splits in) {
    int64_t rank = rankOf(op->getResult(0));
    std::optional<DimSplit> out;
    for (auto [v, s] : llvm::zip(op->getOperands(), in)) {
      if (!s)
        continue;
      DimSplit d{s->dim + (rank - rankOf(v)), s->parts};
      if (out && out->dim != d.dim)
        return SplitRule::refuse("its operands are split on different dims");
      if (out && out->parts != d.parts)
        return SplitRule::refuse(
            "its operands are split into different numbers of parts");
      out = d;
    }
    if (!out)
      return SplitRule::refuse("no operand carries the split");
    SplitRule r = splitTo(op, out);
    for (auto [i, v] : llvm::enumerate(op->getOperands())) {
      std::optional<int64_t> d = broadcastDim(v, out->dim, rank);
      if (in[i] || !d)
        continue; // split alike, or every rank reads all of it
      if (!nn::isWeight(v))
        return SplitRule::refuse("a computed side input spans the split dim");
      r.cuts.push_back({unsigned(i), *d});
    }
    return r;
  }
  static SplitRule backward(Operation *op, unsigned, int64_t d) {
    SplitRule r;
    int64_t rank = rankOf(op->getResult(0));
    for (Value v : op->getOperands()) {
      std::optional<int64_t> od = broadcastDim(v, d, rank);
      r.splits.push_back(od ? dimOnly(*od) : std::nullopt);
    }
    return r;
  }
};

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

/// One-input ops that keep every dim where it is (rotary, slice, softmax,
/// norms): `refusal` says why a split of `d` cannot stay, empty if it can.
template <typename Derived> struct SameDims {
  static SmallVector<unsigned> operands(Operation *) { return {0}; }
  static SplitRule forward(Operation *op, Splits in) {
    std::optional<DimSplit> s = first(in);
    if (!s)
      return SplitRule::refuse("no operand carries the split");
    std::string why = Derived::refusal(op, s->dim);
    return why.empty() ? splitTo(op, s) : SplitRule::refuse(why);
  }
  static SplitRule backward(Operation *op, unsigned, int64_t d) {
    std::string why = Derived::refusal(op, d);
    if (!why.empty())
      return SplitRule::refuse(why);
    SplitRule r;
    r.splits.assign(op->getNumOperands(), std::nullopt);
    r.splits[0] = dimOnly(d);
    return r;
  }
};

struct Unary : SameDims<Unary> {
  static std::string refusal(Operation *, int64_t) { return {}; }
};

struct Softmax : SameDims<Softmax> {
  static std::string refusal(Operation *op, int64_t d) {
    // The accessor is unsigned: read the attribute's signed value.
    int64_t axis = cast<nn::SoftmaxOp>(op).getAxisAttr().getInt();
    if (axis < 0)
      axis += rankOf(op->getOperand(0));
    return axis == d ? "it normalises along the split dim" : "";
  }
};

/// LayerNorm and RMSNorm: statistics over `axis..rank-1`.
template <typename Op> struct Norm : SameDims<Norm<Op>> {
  static std::string refusal(Operation *op, int64_t d) {
    int64_t axis = cast<Op>(op).getAxis();
    if (axis < 0)
      axis += rankOf(op->getOperand(0));
    return d >= axis ? "it normalises along the split dim" : "";
  }
};

struct Slice : SameDims<Slice> {
  static std::string refusal(Operation *op, int64_t d) {
    auto slice = cast<nn::SliceOp>(op);
    if (slice.getStarts()[d] != 0 || slice.getSteps()[d] != 1 ||
        slice.getType().getDimSize(d) != typeOf(slice.getInput()).getDimSize(d))
      return "it slices the split dim";
    return "";
  }
};

struct Rotary : SameDims<Rotary> {
  static std::string refusal(Operation *op, int64_t d) {
    auto rot = cast<nn::RotaryOp>(op);
    int64_t rank = rankOf(rot.getInput());
    if (d == rank - 1)
      return "rotary splits its rotated dim";
    for (Value table : {rot.getCos(), rot.getSin()})
      if (broadcastDim(table, d, rank))
        return "its cos/sin tables vary along the split dim";
    return "";
  }
};

struct Transpose {
  static SmallVector<unsigned> operands(Operation *) { return {0}; }
  static SplitRule forward(Operation *op, Splits in) {
    std::optional<DimSplit> s = first(in);
    if (!s)
      return SplitRule::refuse("no operand carries the split");
    ArrayRef<int64_t> perm = cast<nn::TransposeOp>(op).getPerm();
    return splitTo(op,
                   DimSplit{llvm::find(perm, s->dim) - perm.begin(), s->parts});
  }
  static SplitRule backward(Operation *op, unsigned, int64_t d) {
    SplitRule r;
    r.splits.push_back(dimOnly(cast<nn::TransposeOp>(op).getPerm()[d]));
    return r;
  }
};

/// The dim of `to` where a split of dim `d` of `from` survives a reshape:
/// a split keeps the elements of each prefix index together in equal
/// chunks, so the target dim starts at the same prefix size and `parts`
/// divides it.
std::optional<int64_t> reshapeDim(ArrayRef<int64_t> from, ArrayRef<int64_t> to,
                                  int64_t d, int64_t parts) {
  if (from[d] % parts)
    return std::nullopt;
  int64_t prefix = 1;
  for (int64_t i = 0; i < d; ++i)
    prefix *= from[i];
  int64_t toPrefix = 1;
  for (size_t j = 0; j < to.size(); ++j) {
    // A dim of 1 at the prefix holds no part of the split.
    if (toPrefix == prefix && to[j] % parts == 0 && (to[j] > 1 || parts > 1))
      return j;
    toPrefix *= to[j];
  }
  return std::nullopt;
}

struct Reshape {
  static SmallVector<unsigned> operands(Operation *) { return {0}; }
  static SplitRule forward(Operation *op, Splits in) {
    std::optional<DimSplit> s = first(in);
    if (!s)
      return SplitRule::refuse("no operand carries the split");
    ArrayRef<int64_t> from = typeOf(op->getOperand(0)).getShape();
    ArrayRef<int64_t> to = typeOf(op->getResult(0)).getShape();
    if (std::optional<int64_t> d = reshapeDim(from, to, s->dim, s->parts))
      return splitTo(op, DimSplit{*d, s->parts});
    // Name the dim that should have split: the target dim where the
    // operand's prefix ends (the heads of a head-split reshape).
    int64_t prefix = 1, toPrefix = 1, size = from[s->dim];
    bool starts = false;
    for (int64_t i = 0; i < s->dim; ++i)
      prefix *= from[i];
    for (int64_t j = 0; j < (int64_t)to.size() && toPrefix <= prefix; ++j) {
      if (toPrefix == prefix) {
        size = to[j];
        starts = true;
      }
      toPrefix *= to[j];
    }
    // No target dim starts where the split dim does: no number of parts
    // would fit, so the spec is not what is wrong.
    if (!starts && size % s->parts == 0)
      return SplitRule::refuse("it merges the split dim with the dims before it");
    return SplitRule::misfit(
        llvm::Twine(size) + (to.size() > from.size() ? " heads" : " features") +
        " do not divide by " + parc::optionRef("tp", s->parts) +
        " (use a tp that divides " + llvm::Twine(size) + ")");
  }
  static SplitRule backward(Operation *op, unsigned, int64_t d) {
    ArrayRef<int64_t> from = typeOf(op->getOperand(0)).getShape();
    ArrayRef<int64_t> to = typeOf(op->getResult(0)).getShape();
    std::optional<int64_t> od = reshapeDim(to, from, d, 1);
    if (!od)
      return SplitRule::refuse(
          "it merges the split dim with the dims before it");
    SplitRule r;
    r.splits.push_back(dimOnly(*od));
    return r;
  }
};

struct Concat {
  static SmallVector<unsigned> operands(Operation *op) {
    return llvm::to_vector(llvm::seq<unsigned>(0, op->getNumOperands()));
  }
  static SplitRule forward(Operation *op, Splits in) {
    for (std::optional<DimSplit> s : in.drop_front())
      if (s != in[0])
        return SplitRule::refuse("its inputs are split differently");
    if (!in[0] || in[0]->dim == (int64_t)cast<nn::ConcatOp>(op).getAxis())
      return SplitRule::refuse("it concatenates along the split dim");
    return splitTo(op, in[0]);
  }
  static SplitRule backward(Operation *op, unsigned, int64_t d) {
    if (d == (int64_t)cast<nn::ConcatOp>(op).getAxis())
      return SplitRule::refuse("it concatenates along the split dim");
    SplitRule r;
    r.splits.assign(op->getNumOperands(), dimOnly(d));
    return r;
  }
};

struct Split {
  static SmallVector<unsigned> operands(Operation *) { return {0}; }
  static SplitRule forward(Operation *op, Splits in) {
    std::optional<DimSplit> s = first(in);
    if (!s)
      return SplitRule::refuse("no operand carries the split");
    SplitRule r = splitTo(op, s);
    if (s->dim != (int64_t)cast<nn::SplitOp>(op).getAxis())
      return r;
    // Pieces along the split dim keep it only if each rank holds its part
    // of every piece: the operand is cut blockwise.
    for (Value piece : op->getResults()) {
      int64_t size = typeOf(piece).getDimSize(s->dim);
      if (size % s->parts)
        return SplitRule::misfit("a piece of " + llvm::Twine(size) +
                                 " does not divide by " +
                                 parc::optionRef("tp", s->parts));
    }
    r.blockwise = true;
    return r;
  }
  static SplitRule backward(Operation *, unsigned, int64_t d) {
    SplitRule r;
    r.splits.push_back(dimOnly(d));
    return r;
  }
};

struct Gather {
  static SmallVector<unsigned> operands(Operation *op) {
    return computedOperands(op);
  }
  static SplitRule forward(Operation *op, Splits in) {
    auto g = cast<nn::GatherOp>(op);
    int64_t axis = g.getAxis(), idxRank = rankOf(g.getIndices());
    if (in[0] && in[1])
      return SplitRule::refuse("its table and its indices are both split");
    if (in[1])
      return splitTo(op, DimSplit{axis + in[1]->dim, in[1]->parts});
    if (!in[0])
      return SplitRule::refuse("no operand carries the split");
    if (in[0]->dim == axis)
      return SplitRule::refuse("it gathers along the split dim");
    int64_t d = in[0]->dim < axis ? in[0]->dim : in[0]->dim + idxRank - 1;
    return splitTo(op, DimSplit{d, in[0]->parts});
  }
  static SplitRule backward(Operation *op, unsigned, int64_t d) {
    auto g = cast<nn::GatherOp>(op);
    int64_t axis = g.getAxis(), idxRank = rankOf(g.getIndices());
    SplitRule r;
    r.splits.assign(2, std::nullopt);
    if (d < axis)
      r.splits[0] = dimOnly(d);
    else if (d < axis + idxRank)
      r.splits[1] = dimOnly(d - axis);
    else
      r.splits[0] = dimOnly(d - idxRank + 1);
    return r;
  }
};

//===----------------------------------------------------------------------===//
// Reductions and contractions
//===----------------------------------------------------------------------===//

/// nn.reduce_*: reducing other dims keeps the split; a sum over the split
/// dim leaves partial sums, any other reduction over it is refused.
template <typename Op> struct Reduce {
  static SmallVector<unsigned> operands(Operation *) { return {0}; }
  static SmallVector<int64_t> axes(Op op) {
    SmallVector<int64_t> all;
    for (int64_t a : op.getAxes())
      all.push_back(a < 0 ? a + rankOf(op.getInput()) : a);
    return all;
  }
  static SplitRule forward(Operation *op, Splits in) {
    auto red = cast<Op>(op);
    std::optional<DimSplit> s = first(in);
    if (!s)
      return SplitRule::refuse("no operand carries the split");
    SmallVector<int64_t> reduced = axes(red);
    if (llvm::is_contained(reduced, s->dim)) {
      if constexpr (!std::is_same_v<Op, nn::ReduceSumOp>)
        return SplitRule::refuse("it reduces along the split dim");
      SplitRule r = splitTo(op, std::nullopt);
      r.partial = true;
      return r;
    }
    int64_t before =
        llvm::count_if(reduced, [&](int64_t a) { return a < s->dim; });
    return splitTo(
        op, DimSplit{red.getKeepdims() ? s->dim : s->dim - before, s->parts});
  }
  static SplitRule backward(Operation *op, unsigned, int64_t d) {
    auto red = cast<Op>(op);
    SmallVector<int64_t> reduced = axes(red);
    int64_t od = d;
    if (!red.getKeepdims()) // the d-th dim that is not reduced
      for (od = 0; od < rankOf(red.getInput()); ++od)
        if (!llvm::is_contained(reduced, od) && d-- == 0)
          break;
    if (llvm::is_contained(reduced, od) || od >= rankOf(red.getInput()))
      return SplitRule::refuse("it reduces along the split dim");
    SplitRule r;
    r.splits.push_back(dimOnly(od));
    return r;
  }
};

/// ONNX MatMul on [..., M, K] x [..., K, N] with batch broadcasting (rank-1
/// operands are a vector). The two operand forms, with their roles by dim:
/// a batch dim splits both operands alike, M only the left one, N only the
/// right one, and K both, which leaves partial sums.
struct MatMul {
  enum Role { Batch, M, N, K };
  /// The role of dim `d` of operand `i` and its batch dim in the result.
  static std::pair<Role, int64_t> roleOf(Operation *op, unsigned i, int64_t d) {
    int64_t rank = rankOf(op->getOperand(i));
    int64_t outRank = rankOf(op->getResult(0));
    if (i == 0 && d == rank - 1)
      return {K, -1};
    if (i == 1 && d == rank - 2 + (rank == 1))
      return {K, -1};
    if (i == 0 && d == rank - 2)
      return {M, outRank - 1 - (rankOf(op->getOperand(1)) > 1)};
    if (i == 1 && d == rank - 1)
      return {N, outRank - 1};
    return {Batch, d + (outRank - rank)};
  }
  static SmallVector<unsigned> operands(Operation *op) {
    return computedOperands(op);
  }
  static SplitRule forward(Operation *op, Splits in) {
    std::optional<std::pair<Role, int64_t>> role;
    std::optional<DimSplit> split;
    for (unsigned i = 0; i < 2; ++i) {
      if (!in[i])
        continue;
      auto r = roleOf(op, i, in[i]->dim);
      if (role && (*role != r || split->parts != in[i]->parts))
        return SplitRule::refuse("its operands are split on dims that do not "
                                 "meet in the product");
      if (role && r.first != Batch && r.first != K)
        return SplitRule::refuse("its operands are split on dims that do not "
                                 "meet in the product");
      role = r;
      split = in[i];
    }
    if (!role)
      return SplitRule::refuse("no operand carries the split");
    SplitRule r =
        splitTo(op, role->first == K
                        ? std::nullopt
                        : std::optional(DimSplit{role->second, split->parts}));
    r.partial = role->first == K;
    // A batch dim or K spans both operands: the other must be split alike.
    if (role->first == Batch || role->first == K)
      if (failed(matchOther(op, in, *role, r)))
        return SplitRule::refuse(
            "its other operand is computed and spans the split dim");
    return r;
  }
  /// The dim of the operand that is not split which meets the split one;
  /// a weight is cut there, a computed value refuses.
  static LogicalResult matchOther(Operation *op, Splits in,
                                  std::pair<Role, int64_t> role, SplitRule &r) {
    for (unsigned i = 0; i < 2; ++i) {
      if (in[i])
        continue;
      Value v = op->getOperand(i);
      int64_t rank = rankOf(v);
      std::optional<int64_t> d;
      if (role.first == K)
        d = i == 0 ? rank - 1 : rank - 2 + (rank == 1);
      else
        d = broadcastDim(v, role.second, rankOf(op->getResult(0)));
      if (role.first == Batch && d && *d >= rank - 2)
        d = std::nullopt; // a lower-rank operand broadcasts over the batch
      if (!d)
        continue;
      if (!nn::isWeight(v))
        return failure();
      r.cuts.push_back({i, *d});
    }
    return success();
  }
  static SplitRule backward(Operation *op, unsigned, int64_t d) {
    // Structure only: each operand dim whose role lands on result dim d.
    SplitRule r;
    r.splits.assign(2, std::nullopt);
    for (unsigned i = 0; i < 2; ++i)
      for (int64_t od = 0; od < rankOf(op->getOperand(i)); ++od) {
        auto [role, at] = roleOf(op, i, od);
        if (role != K && at == d &&
            typeOf(op->getOperand(i)).getDimSize(od) != 1)
          r.splits[i] = dimOnly(od);
      }
    return r;
  }
};

/// Gemm: [M, K] (or [K, M] with transA) x [K, N] (or [N, K]) + C.
struct Gemm {
  static SmallVector<unsigned> operands(Operation *op) {
    return computedOperands(op);
  }
  /// Whether dim `d` of operand `i` is K, else the result dim it becomes.
  static std::optional<int64_t> resultDim(nn::GemmOp g, unsigned i, int64_t d) {
    bool trans = i == 0 ? g.getTransA() : g.getTransB();
    int64_t k = i == 0 ? (trans ? 0 : 1) : (trans ? 1 : 0);
    return d == k ? std::nullopt : std::optional<int64_t>(i);
  }
  static SplitRule forward(Operation *op, Splits in) {
    auto g = cast<nn::GemmOp>(op);
    if (op->getNumOperands() > 2 && in[2])
      return SplitRule::refuse("its bias is split");
    if (in[0] && in[1]) {
      if (resultDim(g, 0, in[0]->dim) || resultDim(g, 1, in[1]->dim))
        return SplitRule::refuse("its operands are split on dims that do not "
                                 "meet in the product");
      SplitRule r = splitTo(op, std::nullopt);
      r.partial = true;
      if (op->getNumOperands() > 2)
        return SplitRule::refuse("a bias cannot join partial sums");
      return r;
    }
    unsigned i = in[0] ? 0 : 1;
    if (!in[i])
      return SplitRule::refuse("no operand carries the split");
    std::optional<int64_t> d = resultDim(g, i, in[i]->dim);
    if (!d)
      return SplitRule::refuse("its other operand is computed and spans the "
                               "split dim");
    SplitRule r = splitTo(op, DimSplit{*d, in[i]->parts});
    if (op->getNumOperands() > 2) {
      std::optional<int64_t> cd = broadcastDim(op->getOperand(2), *d, 2);
      if (cd && !nn::isWeight(op->getOperand(2)))
        return SplitRule::refuse("a computed side input spans the split dim");
      if (cd)
        r.cuts.push_back({2, *cd});
    }
    return r;
  }
  static SplitRule backward(Operation *op, unsigned, int64_t d) {
    auto g = cast<nn::GemmOp>(op);
    SplitRule r;
    r.splits.assign(op->getNumOperands(), std::nullopt);
    for (unsigned i = 0; i < 2; ++i)
      for (int64_t od = 0; od < 2; ++od)
        if (resultDim(g, i, od) == d)
          r.splits[i] = dimOnly(od);
    return r;
  }
};

/// Linear: input [..., K] x weight [K, N] (or [N, K] transposed) + bias.
/// Its weight is constant: a split of the input's features leaves partial
/// sums over the weight's rows (a row linear); any other input dim stays.
/// The planner seeds linears itself (columns, rows): it asks this rule only
/// for the row's reduction.
struct Linear {
  static SmallVector<unsigned> operands(Operation *) { return {0}; }
  static SplitRule forward(Operation *op, Splits in) {
    auto lin = cast<nn::LinearOp>(op);
    std::optional<DimSplit> s = first(in);
    if (!s)
      return SplitRule::refuse("no operand carries the split");
    if (!nn::isWeight(lin.getWeight()))
      return SplitRule::refuse("its weights must be constants");
    if (s->dim != rankOf(lin.getInput()) - 1)
      return splitTo(op, s);
    // A bias joins once, after the reduction (dist-partition defers it).
    SplitRule r = splitTo(op, std::nullopt);
    r.partial = true;
    r.cuts.push_back({1, lin.getTransposeWeight() ? 1 : 0});
    return r;
  }
  static SplitRule backward(Operation *op, unsigned, int64_t d) {
    auto lin = cast<nn::LinearOp>(op);
    if (d == rankOf(lin.getResult()) - 1)
      return SplitRule::refuse("its output features come from a whole input");
    SplitRule r;
    r.splits.assign(op->getNumOperands(), std::nullopt);
    r.splits[0] = dimOnly(d);
    return r;
  }
};

/// Attention splits by heads (dim 1 of query, key, value and output);
/// masks broadcast over heads. The output has the query's parts.
struct Attention {
  static SmallVector<unsigned> operands(Operation *) { return {0, 1, 2}; }
  static SplitRule forward(Operation *op, Splits in) {
    auto att = cast<nn::AttentionOp>(op);
    for (unsigned i = 0; i < 3; ++i)
      if (!in[i] || in[i]->dim != 1)
        return SplitRule::refuse(
            "query, key and value must all be split by heads");
    for (Value m : att.getMasks())
      if (rankOf(m) == 4 && typeOf(m).getDimSize(1) != 1)
        return SplitRule::refuse("a mask varies over heads");
    return splitTo(op, in[0]);
  }
  static SplitRule backward(Operation *op, unsigned, int64_t d) {
    if (d != 1)
      return SplitRule::refuse("attention splits only by heads");
    SplitRule r;
    r.splits.assign(op->getNumOperands(), std::nullopt);
    for (unsigned i = 0; i < 3; ++i)
      r.splits[i] = dimOnly(1);
    return r;
  }
};

/// A cache write keeps the split of its cache and update on any dim but
/// the one it writes along: each rank writes its heads into its part of the
/// cache. The position is read whole.
struct KVCacheWrite {
  static SmallVector<unsigned> operands(Operation *) { return {0, 1}; }
  static SplitRule forward(Operation *op, Splits in) {
    int64_t axis = cast<nn::KVCacheWriteOp>(op).getAxis();
    if (!in[0] || in[0] != in[1])
      return SplitRule::refuse("its cache and update must be split alike");
    if (in[0]->dim == axis)
      return SplitRule::refuse("it writes along the split dim");
    if (in.size() > 2 && in[2])
      return SplitRule::refuse("its position is read whole");
    return splitTo(op, in[0]);
  }
  static SplitRule backward(Operation *op, unsigned, int64_t d) {
    if (d == (int64_t)cast<nn::KVCacheWriteOp>(op).getAxis())
      return SplitRule::refuse("it writes along the split dim");
    SplitRule r;
    r.splits.assign(op->getNumOperands(), std::nullopt);
    r.splits[0] = r.splits[1] = dimOnly(d);
    return r;
  }
};

template <typename Op, typename Rule>
struct Model
    : dist::ShardingRuleOpInterface::ExternalModel<Model<Op, Rule>, Op> {
  SmallVector<unsigned> getSplitOperands(Operation *op) const {
    return Rule::operands(op);
  }
  SplitRule propagateSplit(Operation *op, Splits operands) const {
    return Rule::forward(op, operands);
  }
  SplitRule inferOperandSplits(Operation *op, unsigned result,
                               int64_t dim) const {
    return Rule::backward(op, result, dim);
  }
};

template <typename Rule, typename... Ops> void attach(MLIRContext *ctx) {
  (Ops::template attachInterface<Model<Ops, Rule>>(*ctx), ...);
}

} // namespace

void nn::registerShardingRuleModels(DialectRegistry &registry) {
  registry.addExtension(+[](MLIRContext *ctx, nn::NNDialect *) {
    attach<Unary, NegOp, ExpOp, LogOp, SqrtOp, ReciprocalOp, TanhOp, ErfOp,
           SigmoidOp, ReluOp, NotOp, SiluOp, GeluOp, CastOp>(ctx);
    attach<Elementwise, AddOp, SubOp, MulOp, DivOp, PowOp, MinOp, MaxOp,
           EqualOp, LessOp, GreaterOp, AndOp, OrOp, WhereOp>(ctx);
    attach<Softmax, SoftmaxOp>(ctx);
    attach<Norm<LayerNormOp>, LayerNormOp>(ctx);
    attach<Norm<RmsNormOp>, RmsNormOp>(ctx);
    attach<Slice, SliceOp>(ctx);
    attach<Rotary, RotaryOp>(ctx);
    attach<Transpose, TransposeOp>(ctx);
    attach<Reshape, ReshapeOp>(ctx);
    attach<Concat, ConcatOp>(ctx);
    attach<Split, SplitOp>(ctx);
    attach<Gather, GatherOp>(ctx);
    attach<Reduce<ReduceSumOp>, ReduceSumOp>(ctx);
    attach<Reduce<ReduceMeanOp>, ReduceMeanOp>(ctx);
    attach<Reduce<ReduceMaxOp>, ReduceMaxOp>(ctx);
    attach<Reduce<ReduceMinOp>, ReduceMinOp>(ctx);
    attach<Reduce<ReduceProdOp>, ReduceProdOp>(ctx);
    attach<MatMul, MatMulOp>(ctx);
    attach<Gemm, GemmOp>(ctx);
    attach<Linear, LinearOp>(ctx);
    attach<Attention, AttentionOp>(ctx);
    attach<KVCacheWrite, KVCacheWriteOp>(ctx);
  });
}
