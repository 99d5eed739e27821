//===- NNInterfaces.td - interfaces of the nn ops ---------*- tablegen -*-===//
//
// The cost of an op: the one count of work and memory traffic that every
// cost model reads (dist-pipeline's stage balance, dist-overlap's roofline,
// the planner's profile). The nn ops get it as external models, one per op
// family (dialects/nn/NNCost.cpp), attached when the dialect loads.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_NN_INTERFACES
#define PARC_NN_INTERFACES

include "mlir/IR/OpBase.td"

def NN_CostOpInterface : OpInterface<"CostOpInterface"> {
  let cppNamespace = "::parc::nn";
  let description = [{
    The work of one execution of an op on its static shapes: floating-point
    operations and the elements it moves through memory.

    FLOPs count a multiply-add as two. Matrix products (linear, matmul,
    gemm, conv, the experts of a MoE) count `2·M·N·K`; attention counts its
    two products over the query heads, `2·B·H·S·T·(D + Dv)`, plus 7 per
    score (scale, modifier, softmax); norms and softmax 5 per element,
    transcendental activations (exp, erf, tanh, sigmoid, silu, gelu) 8,
    rotary 4, reductions one per input element, other elementwise ops one
    per output element; views and data movement (reshape, transpose,
    concat, slice, gather …) none.

    Traffic counts each activation read and written once, and each weight
    read once; an embedding gather reads only the rows it gathers. Elements
    let a planner price a model at another dtype; bytes are at the IR's
    element widths.

    ```mlir
    // 2 · (4·8) · 16 = 1024 FLOPs; 4·16 + 4·8 activations, 8·16 weights
    %y = nn.linear %x, %w : (tensor<4x16xf32>, tensor<8x16xf32>) -> tensor<4x8xf32>
    ```
  }];
  let methods = [
    InterfaceMethod<
      /*desc=*/[{Floating-point operations of one execution (a multiply-add
        is two).}],
      /*retTy=*/"int64_t",
      /*methodName=*/"getFlops">,
    InterfaceMethod<
      /*desc=*/[{Activation elements read and written and weight elements
        read, in elements and in bytes.}],
      /*retTy=*/"::parc::nn::Traffic",
      /*methodName=*/"getTraffic">,
  ];
  let extraClassDeclaration = [{
    /// All bytes through memory, activations and weights.
    int64_t getBytes() {
      ::parc::nn::Traffic t = getTraffic();
      return t.activationBytes + t.weightBytes;
    }
  }];
}

#endif // PARC_NN_INTERFACES
