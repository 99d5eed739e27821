//===- DistInterfaces.td - sharding rules of ops ----------*- tablegen -*-===//
//
// How an op's dims carry a split: the rule dist-annotate and dist-propagate
// ask instead of switching on op kinds (as upstream MLIR's
// ShardingInterface). It lives in the dist dialect because it speaks the
// dist vocabulary (splits over mesh axes, partial sums) and only dist passes
// ask it; the nn ops get it as external models (dialects/nn/ShardingRules.cpp),
// so that the nn dialect stays usable without dist, as upstream's Tosa
// models live next to Tosa.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_DIST_INTERFACES
#define PARC_DIST_INTERFACES

include "mlir/IR/OpBase.td"

def Dist_ShardingRuleOpInterface : OpInterface<"ShardingRuleOpInterface"> {
  let cppNamespace = "::parc::dist";
  let description = [{
    The sharding rule of an op: how a split of its operands along one dim
    (into some number of parts) maps to its results, and back.

    A rule answers with a `SplitRule`: per result (forwards) or per operand
    (backwards) the dim that is split and into how many parts, or none (the
    value is whole on every rank); `partial` when the results hold partial
    sums (a contraction over the split dim); the constant operands to cut
    along a dim to match; or why the op cannot take the split (`refused`,
    it stays replicated) or cannot take it with these parts (`misfit`, a
    spec that does not fit the model).

    ```mlir
    // operand 0 split on dim 1 into 2 parts → the result split on dim 2
    %t = nn.transpose %x {perm = array<i64: 0, 2, 1, 3>}
        : (tensor<1x8x4x16xf32>) -> tensor<1x4x8x16xf32>
    ```
  }];
  let methods = [
    InterfaceMethod<
      /*desc=*/[{Operands a split flows through; the others are side inputs
        (masks, tables, constants) that are read whole or cut to match.}],
      /*retTy=*/"::llvm::SmallVector<unsigned>",
      /*methodName=*/"getSplitOperands">,
    InterfaceMethod<
      /*desc=*/[{The results' splits when the operands are split as
        `operands` (one entry per operand, none where whole).}],
      /*retTy=*/"::parc::dist::SplitRule",
      /*methodName=*/"propagateSplit",
      /*args=*/(ins "::llvm::ArrayRef<std::optional<::parc::dist::DimSplit>>":$operands)>,
    InterfaceMethod<
      /*desc=*/[{The operands' splits that give result `result` a split on
        `dim` (one entry per operand, none where the operand is read whole),
        or refused when no operand split gives it.}],
      /*retTy=*/"::parc::dist::SplitRule",
      /*methodName=*/"inferOperandSplits",
      /*args=*/(ins "unsigned":$result, "int64_t":$dim)>,
  ];
}

#endif // PARC_DIST_INTERFACES
