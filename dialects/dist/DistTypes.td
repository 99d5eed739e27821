//===- DistTypes.td - the dist types ----------------------*- tablegen -*-===//

#ifndef PARC_DIST_TYPES
#define PARC_DIST_TYPES

include "DistBase.td"

def Dist_AsyncType : TypeDef<Dist_Dialect, "Async"> {
  let mnemonic = "async";
  let summary = "a communication in flight";
  let description = [{
    Returned by the `*_start` ops. `dist.wait` blocks until the
    communication completes and yields its value, of type `valueType`; a
    communication that produces nothing (`dist.send_start`) has no value
    type, and its wait only marks the point after which the sent tensor's
    buffer may be reused.

    ```mlir
    !dist.async<tensor<8x64xf32>>
    !dist.async
    ```
  }];
  let parameters = (ins OptionalParameter<"::mlir::Type">:$valueType);
  let assemblyFormat = "(`<` $valueType^ `>`)?";
  let builders = [
    TypeBuilder<(ins), [{ return $_get($_ctxt, ::mlir::Type()); }]>
  ];
}

def Dist_AnyAsync : Type<CPred<"::llvm::isa<::parc::dist::AsyncType>($_self)">,
                         "!dist.async", "::parc::dist::AsyncType">;
def Dist_AsyncTensor : Type<
    And<[Dist_AnyAsync.predicate,
         CPred<"::llvm::isa_and_nonnull<::mlir::RankedTensorType>("
               "::llvm::cast<::parc::dist::AsyncType>($_self).getValueType())">,
         CPred<"::llvm::cast<::mlir::RankedTensorType>("
               "::llvm::cast<::parc::dist::AsyncType>($_self).getValueType())"
               ".hasStaticShape()">]>,
    "!dist.async of a statically shaped tensor", "::parc::dist::AsyncType">;
def Dist_AsyncNone : Type<
    And<[Dist_AnyAsync.predicate,
         CPred<"!::llvm::cast<::parc::dist::AsyncType>($_self).getValueType()">]>,
    "!dist.async without a value", "::parc::dist::AsyncType">;

#endif // PARC_DIST_TYPES
