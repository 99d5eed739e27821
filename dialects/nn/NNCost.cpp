//===- NNCost.cpp - cost models of the nn ops -------------------*- C++ -*-===//
//
// External models of nn's CostOpInterface, one per op family. The counts
// are the conventions stated in NNInterfaces.td; every cost model in parc
// (dist-pipeline, dist-overlap, the planner) reads them from here, so a
// change to one count moves all three together.
//
//===----------------------------------------------------------------------===//

#include "nn/NNCost.h"
#include "nn/NNOps.h"

#include <type_traits>

using namespace mlir;
using namespace parc;
using namespace parc::nn;

#include "nn/NNInterfaces.cpp.inc"

namespace {

int64_t elems(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t ? t.getNumElements() : 0;
}

int64_t bytes(Value v) {
  auto t = dyn_cast<RankedTensorType>(v.getType());
  return t ? t.getNumElements() * ((t.getElementTypeBitWidth() + 7) / 8) : 0;
}

/// Dim `i` of `v`'s type, counted from the back when negative.
int64_t dim(Value v, int64_t i) {
  auto t = cast<RankedTensorType>(v.getType());
  return t.getDimSize(i < 0 ? t.getRank() + i : i);
}

int64_t resultElems(Operation *op) {
  int64_t n = 0;
  for (Value r : op->getResults())
    n += elems(r);
  return n;
}

/// Every operand (weights as weights) and every result.
Traffic allOperands(Operation *op) {
  Traffic t;
  for (Value v : op->getOperands())
    t.operand(v);
  for (Value r : op->getResults())
    t.activation(r);
  return t;
}

//===----------------------------------------------------------------------===//
// Families
//===----------------------------------------------------------------------===//

/// `N` FLOPs per output element: elementwise ops, norms, softmax, rotary.
template <int64_t N> struct PerElement {
  static int64_t flops(Operation *op) { return N * resultElems(op); }
  static Traffic traffic(Operation *op) { return allOperands(op); }
};

/// One FLOP per input element: reductions, top-k.
struct PerInput {
  static int64_t flops(Operation *op) { return elems(op->getOperand(0)); }
  static Traffic traffic(Operation *op) { return allOperands(op); }
};

/// Copies and selections: memory traffic, no arithmetic.
struct Movement {
  static int64_t flops(Operation *) { return 0; }
  static Traffic traffic(Operation *op) { return allOperands(op); }
};

/// Views and markers: no kernel, nothing moved.
struct Free {
  static int64_t flops(Operation *) { return 0; }
  static Traffic traffic(Operation *) { return {}; }
};

/// An embedding lookup reads only the rows it gathers, not the table.
struct Gather {
  static int64_t flops(Operation *) { return 0; }
  static Traffic traffic(Operation *op) {
    auto g = cast<GatherOp>(op);
    return Traffic().activation(g.getIndices()).activation(g.getResult(), 2);
  }
};

/// Written in place: the new entries are read and stored, the rest of the
/// cache is not touched.
struct CacheWrite {
  static int64_t flops(Operation *) { return 0; }
  static Traffic traffic(Operation *op) {
    auto w = cast<KVCacheWriteOp>(op);
    return Traffic().activation(w.getUpdate(), 2).activation(w.getPosition());
  }
};

struct MaxPool {
  static int64_t flops(Operation *op) {
    int64_t window = 1;
    for (int64_t k : cast<MaxPoolOp>(op).getKernelShape())
      window *= k;
    return window * resultElems(op);
  }
  static Traffic traffic(Operation *op) { return allOperands(op); }
};

//===----------------------------------------------------------------------===//
// Products
//===----------------------------------------------------------------------===//

/// 2·|out|·K with K the contracted size.
template <typename Op> struct Product {
  static int64_t contracted(Op op) {
    Value lhs = op->getOperand(0);
    int64_t k = dim(lhs, -1);
    if constexpr (std::is_same_v<Op, GemmOp>)
      if (op.getTransA())
        k = dim(lhs, 0);
    return k;
  }
  static int64_t flops(Operation *op) {
    return 2 * resultElems(op) * contracted(cast<Op>(op));
  }
  static Traffic traffic(Operation *op) { return allOperands(op); }
};

/// A linear's weight and bias are weights even when computed.
struct Linear {
  static int64_t flops(Operation *op) {
    auto l = cast<LinearOp>(op);
    return 2 * elems(l.getResult()) * dim(l.getInput(), -1);
  }
  static Traffic traffic(Operation *op) {
    auto l = cast<LinearOp>(op);
    Traffic t;
    t.activation(l.getInput()).activation(l.getResult()).weight(l.getWeight());
    if (l.getBias())
      t.weight(l.getBias());
    return t;
  }
};

/// Per output element, one multiply-add per weight of its output channel.
struct Conv {
  static int64_t flops(Operation *op) {
    Value w = cast<ConvOp>(op).getWeight();
    return 2 * resultElems(op) * (elems(w) / dim(w, 0));
  }
  static Traffic traffic(Operation *op) { return allOperands(op); }
};

/// QKᵀ and PV over the query heads (so grouped-query attention costs as
/// many products as multi-head), plus the scale, the modifier and the
/// softmax on every score. The masks are read with the scores, in-kernel.
struct Attention {
  static int64_t flops(Operation *op) {
    auto a = cast<AttentionOp>(op);
    int64_t b = dim(a.getQuery(), 0), h = dim(a.getQuery(), 1),
            s = dim(a.getQuery(), 2), d = dim(a.getQuery(), 3),
            t = dim(a.getKey(), 2), dv = dim(a.getValue(), 3);
    return 2 * b * h * s * t * (d + dv) + 7 * b * h * s * t;
  }
  static Traffic traffic(Operation *op) {
    auto a = cast<AttentionOp>(op);
    return Traffic()
        .activation(a.getQuery())
        .activation(a.getKey())
        .activation(a.getValue())
        .activation(a.getResult());
  }
};

//===----------------------------------------------------------------------===//
// Mixture of experts
//===----------------------------------------------------------------------===//

/// The products of one expert on one row: two (or, gated, three) [H, F].
int64_t expertFlopsPerRow(Value fc1, bool gated) {
  return 2 * (gated ? 3 : 2) * dim(fc1, 1) * dim(fc1, 2);
}

Traffic expertWeights(Traffic t, Value fc1, Value fc2, Value fc3) {
  t.weight(fc1).weight(fc2);
  if (fc3)
    t.weight(fc3);
  return t;
}

/// Only the chosen experts run: tokens × top_k rows through an expert,
/// plus the routing softmax and top-k (5 per logit).
struct Moe {
  static int64_t flops(Operation *op) {
    auto m = cast<MoeOp>(op);
    int64_t tokens = m.getNumTokens();
    return tokens * (int64_t)m.getTopK() *
               expertFlopsPerRow(m.getFc1(), (bool)m.getFc3()) +
           5 * tokens * m.getNumExperts();
  }
  static Traffic traffic(Operation *op) {
    auto m = cast<MoeOp>(op);
    Traffic t;
    t.activation(m.getInput()).activation(m.getRouterLogits());
    t.activation(m.getResult());
    return expertWeights(t, m.getFc1(), m.getFc2(), m.getFc3());
  }
};

struct MoeRoute {
  static int64_t flops(Operation *op) {
    return 5 * elems(cast<MoeRouteOp>(op).getRouterLogits());
  }
  static Traffic traffic(Operation *op) { return allOperands(op); }
};

/// The static bound: every received row through one expert.
struct MoeExperts {
  static int64_t flops(Operation *op) {
    auto m = cast<MoeExpertsOp>(op);
    return dim(m.getRows(), 0) *
           expertFlopsPerRow(m.getFc1(), (bool)m.getFc3());
  }
  static Traffic traffic(Operation *op) {
    auto m = cast<MoeExpertsOp>(op);
    Traffic t;
    t.activation(m.getRows()).activation(m.getLayout());
    t.activation(m.getResult());
    return expertWeights(t, m.getFc1(), m.getFc2(), m.getFc3());
  }
};

/// Each output element sums top_k weighted rows: a multiply-add each.
struct MoeCombine {
  static int64_t flops(Operation *op) {
    auto m = cast<MoeCombineOp>(op);
    return 2 * dim(m.getWeights(), -1) * elems(m.getResult());
  }
  static Traffic traffic(Operation *op) { return allOperands(op); }
};

template <typename Op, typename Family>
struct Model : CostOpInterface::ExternalModel<Model<Op, Family>, Op> {
  int64_t getFlops(Operation *op) const { return Family::flops(op); }
  Traffic getTraffic(Operation *op) const { return Family::traffic(op); }
};

template <typename Family, typename... Ops> void attach(MLIRContext *ctx) {
  (Ops::template attachInterface<Model<Ops, Family>>(*ctx), ...);
}

} // namespace

Traffic &Traffic::activation(Value v, int64_t times) {
  activationElems += times * elems(v);
  activationBytes += times * bytes(v);
  return *this;
}

Traffic &Traffic::weight(Value v) {
  weightElems += elems(v);
  weightBytes += bytes(v);
  return *this;
}

Traffic &Traffic::operand(Value v) {
  return isWeight(v) ? weight(v) : activation(v);
}

void nn::attachCostModels(MLIRContext *ctx) {
  attach<PerElement<1>, NegOp, LogOp, SqrtOp, ReciprocalOp, ReluOp, NotOp,
         CastOp, AddOp, SubOp, MulOp, DivOp, PowOp, MinOp, MaxOp, EqualOp,
         LessOp, GreaterOp, AndOp, OrOp, WhereOp>(ctx);
  attach<PerElement<8>, ExpOp, TanhOp, ErfOp, SigmoidOp, SiluOp, GeluOp>(ctx);
  attach<PerElement<5>, SoftmaxOp, LayerNormOp, RmsNormOp>(ctx);
  attach<PerElement<4>, RotaryOp>(ctx);
  attach<PerInput, ReduceSumOp, ReduceMeanOp, ReduceMaxOp, ReduceMinOp,
         ReduceProdOp, TopKOp>(ctx);
  attach<Movement, TransposeOp, ExpandOp, ConcatOp, SplitOp, SliceOp,
         ScatterElementsOp, TriluOp>(ctx);
  attach<Free, ReshapeOp, YieldOp, ExternalWeightOp>(ctx);
  attach<Gather, GatherOp>(ctx);
  attach<CacheWrite, KVCacheWriteOp>(ctx);
  attach<MaxPool, MaxPoolOp>(ctx);
  attach<Product<MatMulOp>, MatMulOp>(ctx);
  attach<Product<GemmOp>, GemmOp>(ctx);
  attach<Linear, LinearOp>(ctx);
  attach<Conv, ConvOp>(ctx);
  attach<Attention, AttentionOp>(ctx);
  attach<Moe, MoeOp>(ctx);
  attach<MoeRoute, MoeRouteOp>(ctx);
  attach<MoeExperts, MoeExpertsOp>(ctx);
  attach<MoeCombine, MoeCombineOp>(ctx);
}

int64_t nn::flopsOf(Operation *op) {
  auto cost = dyn_cast<CostOpInterface>(op);
  return cost ? cost.getFlops() : 0;
}

Traffic nn::trafficOf(Operation *op) {
  auto cost = dyn_cast<CostOpInterface>(op);
  return cost ? cost.getTraffic() : Traffic();
}
