//===- ExpertParallel.cpp - dist-expert-parallel: experts over ranks ------===//
//
// An nn.moe computes on whole tokens, so splitting it over ranks needs no
// propagation: the experts' stacked weights are cut on their expert dim,
// and the op is decomposed into its expert-parallel steps, with the
// collectives placed here rather than in dist-comm: they come from the
// expert split itself, not from a resharding between two layouts, which
// is what dist-comm turns into collectives. Each rank routes its share of
// the (replicated) tokens, the per-expert counts are all-gathered (so
// every rank applies the capacity identically, and every rank knows what
// it sends and receives), rows travel to their experts and back with
// dist.all_to_all_v (planned counts, static upper-bound shapes), and the combined shares are all-gathered. With etp
// each expert is also split Megatron-style over the tensor-parallel ranks:
// alone (every rank routes every token), or inside each group of a 2-D
// ["ep", "tp"] mesh.
//
//===----------------------------------------------------------------------===//

#include "Regions.h"
#include "dist/DistDialect.h"
#include "nn/NNOps.h"
#include "parc/Support/OptionRef.h"
#include "parc/Transforms/Dist/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "llvm/Support/Debug.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>

#define DEBUG_TYPE "dist-expert-parallel"

namespace parc::dist {
#define GEN_PASS_DEF_DISTEXPERTPARALLEL
#include "parc/Transforms/Dist/Passes.h.inc"
} // namespace parc::dist

using namespace mlir;
namespace dist = parc::dist;
namespace nn = parc::nn;

namespace {

using dist::nodeOf;

struct DistExpertParallelPass
    : dist::impl::DistExpertParallelBase<DistExpertParallelPass> {
  using Base::Base;

  /// This rank's part of `v` along `dim`, split over mesh axis `axis`, at
  /// `loc` (v's own by default).
  static Value part(OpBuilder &b, Value v, int64_t dim, StringRef meshName,
                    StringRef axis, std::optional<Location> loc = {}) {
    SmallVector<SmallVector<StringRef>> axes(dim + 1);
    axes[dim].push_back(axis);
    return dist::localPart(
        b, loc.value_or(v.getLoc()), v,
        dist::ShardingAttr::get(FlatSymbolRefAttr::get(b.getContext(), meshName),
                                axes));
  }

  /// --etp: Megatron inside each expert over the tensor-parallel mesh.
  void splitInsideExperts(ModuleOp module, ArrayRef<nn::MoeOp> moes) {
    auto meshes = module.getOps<dist::MeshOp>();
    if (meshes.empty()) {
      module.emitError("expert tensor parallelism (etp) splits experts over "
                       "the tensor-parallel ranks: it needs the mesh of "
                       "dist-annotate with tp > 1");
      return signalPassFailure();
    }
    dist::MeshOp mesh = *meshes.begin();
    int64_t n = mesh.getNumRanks();
    StringRef axis = mesh.getAxisNames().front();
    for (nn::MoeOp moe : moes) {
      if (moe.getFfnSize() % n) {
        moe.emitError() << nodeOf(moe) << ": " << parc::optionRef("tp", n)
                        << " does not fit this model: the experts' ffn of "
                        << moe.getFfnSize() << " does not divide";
        return signalPassFailure();
      }
      for (unsigned i = 2; i < moe->getNumOperands(); ++i)
        if (!nn::isWeight(moe->getOperand(i))) {
          moe.emitError() << nodeOf(moe)
                          << ": expert weights must be constants to be split "
                             "over ranks";
          return signalPassFailure();
        }
      OpBuilder b(moe);
      // fc1 / fc3 [E, H, F] by columns, fc2 [E, F, H] by rows.
      for (unsigned i = 2; i < moe->getNumOperands(); ++i)
        moe->setOperand(i, part(b, moe->getOperand(i), i == 3 ? 1 : 2,
                                   mesh.getSymName(), axis));
      b.setInsertionPointAfter(moe);
      auto sum = dist::AllReduceOp::create(
          b, moe.getLoc(), moe.getType(),
          FlatSymbolRefAttr::get(b.getContext(), mesh.getSymName()),
          b.getStrArrayAttr({axis}), moe.getResult(), dist::ReductionKind::sum);
      moe.getResult().replaceAllUsesExcept(sum, sum);
      // For the manifest: the weights this op holds are 1/n of the experts'.
      moe->setAttr("dist.ffn_shards", b.getI64IntegerAttr(n));
    }
  }

  /// Replaces `moe`, whose weights already hold this rank's experts, by
  /// its expert-parallel steps over the `ep` ranks of mesh axis `axis`.
  /// With T tokens (S = T/P per rank), k choices, E experts (L = E/P per
  /// rank) and hidden width H:
  ///   route S tokens -> all_gather per-expert counts [P·E] -> permute
  ///   (capacity cut, rows [S·k, H] by expert) -> all_to_all_v to the
  ///   experts' ranks -> experts on [R, H] -> all_to_all_v back [S·k, H]
  ///   -> combine [S, H] -> all_gather [T, H].
  /// R bounds what a rank can receive: every token sends it at most
  /// min(k, L) rows, and its L experts keep at most `capacity` each.
  ///
  /// With `ffnShards` > 1 (etp) each expert's ffn is split over mesh axis
  /// `ffnAxis`: the combined share is a partial sum, all-reduced there.
  void decompose(nn::MoeOp moe, StringRef meshName, StringRef axis,
                 StringRef ffnAxis, int64_t ffnShards) {
    OpBuilder b(moe);
    Location loc = moe.getLoc();
    MLIRContext *ctx = b.getContext();
    auto xType = moe.getInput().getType();
    Type et = xType.getElementType();
    // The router scores every expert; fc1 already holds only this rank's.
    int64_t p = ep, t = moe.getNumTokens(),
            e = moe.getRouterLogits().getType().getShape().back(),
            h = moe.getHiddenSize(), k = moe.getTopKAttr().getInt(),
            s = t / p, l = e / p;
    int64_t capacity = moe.getCapacity().value_or(0);
    int64_t bound = t * std::min(k, l);
    if (capacity > 0)
      bound = std::min(bound, l * capacity);
    Type i64 = b.getI64Type(), f32 = b.getF32Type();
    auto tensor = [](ArrayRef<int64_t> shape, Type type) {
      return RankedTensorType::get(shape, type);
    };
    auto mesh = FlatSymbolRefAttr::get(ctx, meshName);
    auto axes = b.getStrArrayAttr({axis});
    auto share = [&](Value v, int64_t width) -> Value {
      Value flat = v;
      if (cast<RankedTensorType>(v.getType()).getRank() != 2)
        flat = nn::ReshapeOp::create(b, loc, tensor({t, width}, et), v);
      return part(b, flat, 0, meshName, axis, loc);
    };
    Value x = share(moe.getInput(), h), logits = share(moe.getRouterLogits(), e);
    auto route = nn::MoeRouteOp::create(
        b, loc, TypeRange{tensor({s, k}, i64), tensor({s, k}, f32), tensor({e}, i64)},
        logits, moe.getTopKAttr(), moe.getNormalizeAttr());
    Value counts = dist::AllGatherOp::create(
        b, loc, tensor({p * e}, i64), mesh, axes, route.getCounts(),
        b.getI64IntegerAttr(0), DenseI64ArrayAttr(), IntegerAttr());
    auto permute = dist::MoePermuteOp::create(
        b, loc,
        TypeRange{tensor({s * k, h}, f32), tensor({p}, i64), tensor({p, l}, i64),
                  tensor({s * k}, i64), tensor({p}, i64)},
        mesh, axes, x, route.getExpertIds(), counts,
        b.getI64IntegerAttr(capacity));
    // The plan gives both counts of both exchanges: only payloads travel,
    // and the combine returns what the dispatch delivered.
    auto dispatch = dist::AllToAllVOp::create(
        b, loc, tensor({bound, h}, f32), mesh, axes, permute.getRows(),
        permute.getSendCounts(), permute.getRecvCounts(),
        b.getI64IntegerAttr(0));
    auto experts = nn::MoeExpertsOp::create(
        b, loc, tensor({bound, h}, f32), dispatch.getOutput(), permute.getLayout(),
        moe.getFc1(), moe.getFc2(), moe.getFc3(), moe.getActivationAttr());
    auto back = dist::AllToAllVOp::create(
        b, loc, tensor({s * k, h}, f32), mesh, axes, experts.getOutput(),
        permute.getRecvCounts(), permute.getSendCounts(),
        b.getI64IntegerAttr(0));
    Value mine = nn::MoeCombineOp::create(b, loc, tensor({s, h}, et),
                                          back.getOutput(), permute.getPairRows(),
                                          route.getWeights());
    if (ffnShards > 1) {
      // For the manifest: the weights this op holds are 1/ffnShards of the
      // experts'.
      experts->setAttr("dist.ffn_shards", b.getI64IntegerAttr(ffnShards));
      mine = dist::AllReduceOp::create(b, loc, mine.getType(), mesh,
                                       b.getStrArrayAttr({ffnAxis}), mine,
                                       dist::ReductionKind::sum);
    }
    Value y = dist::AllGatherOp::create(b, loc, tensor({t, h}, et), mesh, axes,
                                        mine, b.getI64IntegerAttr(0),
                                        DenseI64ArrayAttr(), IntegerAttr());
    if (xType.getRank() != 2)
      y = nn::ReshapeOp::create(b, loc, xType, y);
    moe.replaceAllUsesWith(y);
    moe.erase();
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (ep < 1 || capacityFactor < 0 || !std::isfinite(capacityFactor)) {
      module.emitError() << "ep must be at least 1 and capacity-factor "
                            "non-negative, got "
                         << int64_t(ep) << " and "
                         << llvm::formatv("{0}", double(capacityFactor)).str();
      return signalPassFailure();
    }
    SmallVector<nn::MoeOp> moes;
    module.walk([&](nn::MoeOp op) { moes.push_back(op); });
    module->setAttr(
        "dist.moe_layers",
        IntegerAttr::get(IntegerType::get(&getContext(), 64), moes.size()));
    if (moes.empty())
      return;

    // The capacity depends only on the layer: the same for every split.
    if (capacityFactor > 0)
      for (nn::MoeOp moe : moes) {
        int64_t experts = moe.getNumExperts(), tokens = moe.getNumTokens(),
                k = moe.getTopKAttr().getInt();
        int64_t capacity = std::max<int64_t>(
            1, (int64_t)std::ceil(capacityFactor * double(tokens * k) /
                                  double(experts)));
        moe.setCapacityAttr(
            IntegerAttr::get(IntegerType::get(&getContext(), 64), capacity));
      }
    if (etp && ep == 1)
      return splitInsideExperts(module, moes);

    // The axis the experts are split over: a new `ep` mesh, or the one
    // tensor parallelism made (the same ranks); with etp, a new major "ep"
    // axis of that mesh, each expert split over its tensor-parallel axis.
    std::string axis = "ep", meshName = "mesh", ffnAxis;
    int64_t ffnShards = 1;
    if (ep > 1) {
      auto meshes = module.getOps<dist::MeshOp>();
      if (etp) {
        if (meshes.empty() || (*meshes.begin()).getAxisNames().size() != 1) {
          module.emitError("ep with etp needs the 1-D tensor-parallel "
                           "mesh of dist-annotate's tp");
          return signalPassFailure();
        }
        dist::MeshOp mesh = *meshes.begin();
        ffnAxis = mesh.getAxisNames().front().str();
        ffnShards = mesh.getNumRanks();
        meshName = mesh.getSymName().str();
        if (ffnAxis == axis) {
          mesh.emitError("the tensor-parallel axis cannot be named \"ep\"");
          return signalPassFailure();
        }
        OpBuilder b(mesh);
        mesh.setAxesAttr(b.getStrArrayAttr({axis, ffnAxis}));
        mesh.setShapeAttr(b.getDenseI64ArrayAttr({ep, ffnShards}));
      } else if (!meshes.empty()) {
        dist::MeshOp mesh = *meshes.begin();
        if (mesh.getAxisNames().size() != 1 || mesh.getNumRanks() != ep) {
          mesh.emitError() << parc::optionRef("ep", int64_t(ep))
                           << " must equal the tensor-parallel degree "
                           << mesh.getNumRanks()
                           << ": experts are split over the same ranks";
          return signalPassFailure();
        }
        axis = mesh.getAxisNames().front().str();
        meshName = mesh.getSymName().str();
      } else {
        OpBuilder b(module.getBodyRegion());
        dist::MeshOp::create(b, module.getLoc(), "mesh",
                             b.getStrArrayAttr({"ep"}),
                             b.getDenseI64ArrayAttr({ep}));
      }
    }

    bool failed = false;
    for (nn::MoeOp moe : moes) {
      int64_t experts = moe.getNumExperts(), tokens = moe.getNumTokens();
      if (ep > 1 && (experts % ep || tokens % ep)) {
        moe.emitError() << nodeOf(moe) << ": "
                        << parc::optionRef("ep", int64_t(ep)) << " does not fit this model: " << experts
                        << " experts and " << tokens
                        << " tokens must both divide over the ranks";
        failed = true;
        continue;
      }
      OpBuilder b(moe);
      if (ep == 1)
        continue;
      SmallVector<OpOperand *> weights{&moe->getOpOperand(2),
                                       &moe->getOpOperand(3)};
      if (moe.getFc3())
        weights.push_back(&moe->getOpOperand(4));
      if (!llvm::all_of(weights,
                        [](OpOperand *w) { return nn::isWeight(w->get()); })) {
        moe.emitError() << nodeOf(moe)
                        << ": expert weights must be constants to be split "
                           "over ranks";
        failed = true;
        continue;
      }
      if (moe.getFfnSize() % ffnShards) {
        moe.emitError() << nodeOf(moe) << ": "
                        << parc::optionRef("tp", ffnShards) << " does not fit this model: the experts' ffn of "
                        << moe.getFfnSize() << " does not divide";
        failed = true;
        continue;
      }
      for (OpOperand *w : weights) {
        Value v = part(b, w->get(), 0, meshName, axis);
        // With etp: fc1 / fc3 [L, H, F] by columns, fc2 [L, F, H] by rows.
        if (ffnShards > 1)
          v = part(b, v, w->getOperandNumber() == 3 ? 1 : 2, meshName, ffnAxis);
        w->set(v);
      }
      decompose(moe, meshName, axis, ffnAxis, ffnShards);
      LLVM_DEBUG(llvm::dbgs() << "dist-expert-parallel: " << nodeOf(moe)
                              << " split over " << axis << "\n");
    }
    if (failed)
      signalPassFailure();
  }
};

} // namespace
