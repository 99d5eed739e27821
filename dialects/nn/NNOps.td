//===- NNOps.td - the nn dialect: model ops with ONNX semantics -*- tablegen -*-===//
//
// Every op works on ranked tensors with static shapes: the importer binds
// dynamic dimensions and folds shape computations, so sharding and memory
// planning later never meet a `?`. Operand-defined structure that ONNX passes
// as tensors (Reshape's shape, Slice's starts, TopK's k …) is an attribute or
// the result type here.
//
//===----------------------------------------------------------------------===//

#ifndef PARC_NN_OPS
#define PARC_NN_OPS

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/InferTypeOpInterface.td"

//===----------------------------------------------------------------------===//
// Dialect
//===----------------------------------------------------------------------===//

def NN_Dialect : Dialect {
  let name = "nn";
  let cppNamespace = "::parc::nn";
  let summary = "Model-level tensor ops with ONNX semantics on static shapes";
  let description = [{
    The `nn` dialect is what an ONNX model becomes after import: one op per
    ONNX operator (or per recognised block such as `nn.layer_norm` or
    `nn.attention`, produced by `nn-fuse`), on ranked tensors whose shapes are
    all static. Weights are `arith.constant` ops holding `dense_resource`
    blobs, or `nn.external_weight` ops that reference ONNX external data, so a
    dump of a real model stays small and readable.

    Broadcasting follows ONNX (numpy) rules. Op locations carry the ONNX node
    name, so every later diagnostic can name the node a user knows.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
  let useDefaultAttributePrinterParser = 1;
  let hasConstantMaterializer = 1;
}

//===----------------------------------------------------------------------===//
// Enums
//===----------------------------------------------------------------------===//

def NN_GeluApproximation : I32EnumAttr<"GeluApproximation",
    "how GELU's Gaussian CDF is evaluated", [
      I32EnumAttrCase<"none", 0>,
      I32EnumAttrCase<"tanh", 1>
    ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::parc::nn";
}
def NN_GeluApproximationAttr
    : EnumAttr<NN_Dialect, NN_GeluApproximation, "gelu_approximation">;

def NN_ScatterReduction : I32EnumAttr<"ScatterReduction",
    "how ScatterElements combines an update with the existing value", [
      I32EnumAttrCase<"none", 0>,
      I32EnumAttrCase<"add", 1>,
      I32EnumAttrCase<"mul", 2>,
      I32EnumAttrCase<"max", 3>,
      I32EnumAttrCase<"min", 4>
    ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::parc::nn";
}
def NN_ScatterReductionAttr
    : EnumAttr<NN_Dialect, NN_ScatterReduction, "scatter_reduction">;

def NN_MoeActivation : I32EnumAttr<"MoeActivation",
    "the activation inside each expert of an `nn.moe`", [
      I32EnumAttrCase<"silu", 0>,
      I32EnumAttrCase<"gelu", 1>,
      I32EnumAttrCase<"relu", 2>,
      I32EnumAttrCase<"identity", 3>
    ]> {
  let genSpecializedAttr = 0;
  let cppNamespace = "::parc::nn";
}
def NN_MoeActivationAttr
    : EnumAttr<NN_Dialect, NN_MoeActivation, "moe_activation">;

//===----------------------------------------------------------------------===//
// Base classes
//===----------------------------------------------------------------------===//

class NN_Op<string mnemonic, list<Trait> traits = []>
    : Op<NN_Dialect, mnemonic, traits>;

def NN_Tensor : StaticShapeTensorOf<[AnyType]>;
def NN_BoolTensor : StaticShapeTensorOf<[I1]>;
def NN_IndexTensor : StaticShapeTensorOf<[I32, I64]>;

// y = f(x) elementwise; same type in and out.
class NN_UnaryOp<string mnemonic, string formula, list<Trait> traits = []>
    : NN_Op<mnemonic, !listconcat(traits,
        [Pure, Elementwise, SameOperandsAndResultType])> {
  let summary = "elementwise " # formula;
  let description = "Computes `" # formula # "` for every element (ONNX "
    # "semantics).\n\n```mlir\n%y = nn." # mnemonic
    # " %x : tensor<2x8xf32>\n```";
  let arguments = (ins NN_Tensor:$input);
  let results = (outs NN_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasFolder = 1;
}

// z = lhs op rhs with ONNX (numpy) multidirectional broadcasting.
class NN_BinaryOp<string mnemonic, string formula, list<Trait> traits = []>
    : NN_Op<mnemonic, !listconcat(traits, [Pure, ResultsBroadcastableShape])> {
  let summary = "elementwise " # formula # " with broadcasting";
  let description = "Computes `" # formula # "` elementwise after "
    # "broadcasting both operands to the result shape (numpy rules).\n\n"
    # "```mlir\n%z = nn." # mnemonic # " %a, %b : (tensor<2x8xf32>, "
    # "tensor<8xf32>) -> tensor<2x8xf32>\n```";
  let arguments = (ins NN_Tensor:$lhs, NN_Tensor:$rhs);
  let results = (outs NN_Tensor:$output);
  let assemblyFormat =
    "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

class NN_ReduceOp<string mnemonic, string what>
    : NN_Op<mnemonic, [Pure]> {
  let summary = "reduction (" # what # ") over `axes`";
  let description = "Reduces `input` with " # what # " over the listed axes "
    # "(non-negative, sorted). With `keepdims` the reduced axes stay as size "
    # "1.\n\n```mlir\n%m = nn." # mnemonic # " %x {axes = array<i64: 2>, "
    # "keepdims = true} : tensor<2x8x32xf32> -> tensor<2x8x1xf32>\n```";
  let arguments = (ins NN_Tensor:$input, DenseI64ArrayAttr:$axes,
                   DefaultValuedAttr<BoolAttr, "true">:$keepdims);
  let results = (outs NN_Tensor:$output);
  let assemblyFormat =
    "$input attr-dict `:` type($input) `->` type($output)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//

def NN_NegOp : NN_UnaryOp<"neg", "-x">;
def NN_ExpOp : NN_UnaryOp<"exp", "exp(x)">;
def NN_LogOp : NN_UnaryOp<"log", "log(x)">;
def NN_SqrtOp : NN_UnaryOp<"sqrt", "sqrt(x)">;
def NN_ReciprocalOp : NN_UnaryOp<"reciprocal", "1 / x">;
def NN_TanhOp : NN_UnaryOp<"tanh", "tanh(x)">;
def NN_ErfOp : NN_UnaryOp<"erf", "erf(x)">;
def NN_SigmoidOp : NN_UnaryOp<"sigmoid", "1 / (1 + exp(-x))">;
def NN_ReluOp : NN_UnaryOp<"relu", "max(x, 0)">;
def NN_NotOp : NN_UnaryOp<"not", "logical not x">;
def NN_SiluOp : NN_UnaryOp<"silu", "x * sigmoid(x)">;

def NN_GeluOp : NN_Op<"gelu", [Pure, Elementwise, SameOperandsAndResultType]> {
  let summary = "Gaussian error linear unit";
  let description = [{
    `x * Φ(x)`, with Φ evaluated exactly (`x/2 · (1 + erf(x/√2))`) or by the
    tanh approximation (`x/2 · (1 + tanh(√(2/π) · (x + 0.044715 x³)))`).
    Produced by `nn-fuse` from the forms exporters emit.

    ```mlir
    %y = nn.gelu %x {approximation = #nn<gelu_approximation tanh>} : tensor<2x32xf32>
    ```
  }];
  let arguments = (ins NN_Tensor:$input,
    DefaultValuedAttr<NN_GeluApproximationAttr,
                      "GeluApproximation::none">:$approximation);
  let results = (outs NN_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasFolder = 1;
}

def NN_AddOp : NN_BinaryOp<"add", "lhs + rhs", [Commutative]>;
def NN_SubOp : NN_BinaryOp<"sub", "lhs - rhs">;
def NN_MulOp : NN_BinaryOp<"mul", "lhs * rhs", [Commutative]>;
def NN_DivOp : NN_BinaryOp<"div", "lhs / rhs">;
def NN_PowOp : NN_BinaryOp<"pow", "lhs ^ rhs">;
def NN_MinOp : NN_BinaryOp<"min", "min(lhs, rhs)", [Commutative]>;
def NN_MaxOp : NN_BinaryOp<"max", "max(lhs, rhs)", [Commutative]>;
def NN_EqualOp : NN_BinaryOp<"equal", "lhs == rhs", [Commutative]>;
def NN_LessOp : NN_BinaryOp<"less", "lhs < rhs">;
def NN_GreaterOp : NN_BinaryOp<"greater", "lhs > rhs">;
def NN_AndOp : NN_BinaryOp<"and", "lhs && rhs", [Commutative]>;
def NN_OrOp : NN_BinaryOp<"or", "lhs || rhs", [Commutative]>;

def NN_WhereOp : NN_Op<"where", [Pure, ResultsBroadcastableShape]> {
  let summary = "elementwise select with broadcasting";
  let description = [{
    `condition ? lhs : rhs` per element, all three broadcast to the result.

    ```mlir
    %y = nn.where %mask, %scores, %neg : (tensor<1x1x8x8xi1>, tensor<2x4x8x8xf32>, tensor<f32>) -> tensor<2x4x8x8xf32>
    ```
  }];
  let arguments = (ins NN_BoolTensor:$condition, NN_Tensor:$lhs,
                   NN_Tensor:$rhs);
  let results = (outs NN_Tensor:$output);
  let assemblyFormat =
    "$condition `,` $lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def NN_CastOp : NN_Op<"cast", [Pure, Elementwise]> {
  let summary = "element type conversion";
  let description = [{
    Converts every element to the result's element type with ONNX Cast
    semantics (float → int truncates toward zero; anything → i1 is `!= 0`).

    ```mlir
    %f = nn.cast %ids : tensor<2x8xi64> to tensor<2x8xf32>
    ```
  }];
  let arguments = (ins NN_Tensor:$input);
  let results = (outs NN_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($output)";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------===//

def NN_MatMulOp : NN_Op<"matmul", [Pure]> {
  let summary = "matrix product with numpy batch broadcasting";
  let description = [{
    ONNX MatMul: the last two dimensions multiply, leading dimensions
    broadcast. 1-D operands are promoted as numpy does and the promoted
    dimension is dropped from the result.

    ```mlir
    %s = nn.matmul %q, %kt : (tensor<2x4x8x16xf32>, tensor<2x4x16x8xf32>) -> tensor<2x4x8x8xf32>
    ```
  }];
  let arguments = (ins NN_Tensor:$lhs, NN_Tensor:$rhs);
  let results = (outs NN_Tensor:$output);
  let assemblyFormat =
    "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def NN_GemmOp : NN_Op<"gemm", [Pure]> {
  let summary = "general matrix multiply on 2-D operands";
  let description = [{
    `alpha · op(a) · op(b) + beta · c` where `op` transposes when the matching
    flag is set and `c` (optional) broadcasts to the result.

    ```mlir
    %y = nn.gemm %a, %b, %c {trans_b = true} : (tensor<2x32xf32>, tensor<16x32xf32>, tensor<16xf32>) -> tensor<2x16xf32>
    ```
  }];
  let arguments = (ins NN_Tensor:$a, NN_Tensor:$b, Optional<NN_Tensor>:$c,
    DefaultValuedAttr<F32Attr, "1.0">:$alpha,
    DefaultValuedAttr<F32Attr, "1.0">:$beta,
    DefaultValuedAttr<BoolAttr, "false">:$trans_a,
    DefaultValuedAttr<BoolAttr, "false">:$trans_b);
  let results = (outs NN_Tensor:$output);
  let assemblyFormat =
    "$a `,` $b (`,` $c^)? attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def NN_LinearOp : NN_Op<"linear", [Pure]> {
  let summary = "fully connected layer: x · w (+ bias)";
  let description = [{
    `x[..., K] · w[K, N] + bias[N]`, or with `transpose_weight` a weight
    stored as `[N, K]` (the layout torch keeps). Produced by `nn-fuse` from
    MatMul + Add and from Gemm; it is the unit that tensor parallelism shards
    by column (N) or by row (K).

    ```mlir
    %h = nn.linear %x, %w, %b : (tensor<2x8x32xf32>, tensor<32x128xf32>, tensor<128xf32>) -> tensor<2x8x128xf32>
    ```
  }];
  let arguments = (ins NN_Tensor:$input, NN_Tensor:$weight,
    Optional<NN_Tensor>:$bias,
    DefaultValuedAttr<BoolAttr, "false">:$transpose_weight);
  let results = (outs NN_Tensor:$output);
  let assemblyFormat =
    "$input `,` $weight (`,` $bias^)? attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Normalisation and activation blocks
//===----------------------------------------------------------------------===//

def NN_SoftmaxOp : NN_Op<"softmax", [Pure, SameOperandsAndResultType]> {
  let summary = "softmax along one axis";
  let description = [{
    `exp(x - max) / sum(exp(x - max))` along `axis` (opset-13 semantics; the
    importer rewrites older opsets' flattening form into this one).

    ```mlir
    %p = nn.softmax %s {axis = 3 : i64} : tensor<2x4x8x8xf32>
    ```
  }];
  let arguments = (ins NN_Tensor:$input, I64Attr:$axis);
  let results = (outs NN_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def NN_LayerNormOp : NN_Op<"layer_norm", [Pure]> {
  let summary = "layer normalisation over the trailing axes from `axis`";
  let description = [{
    `(x - mean) / sqrt(var + epsilon) · scale + bias`, statistics over the
    dimensions `axis..rank-1`.

    ```mlir
    %y = nn.layer_norm %x, %g, %b {axis = 2 : i64, epsilon = 1.0e-05 : f32} : (tensor<2x8x32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<2x8x32xf32>
    ```
  }];
  let arguments = (ins NN_Tensor:$input, NN_Tensor:$scale,
    Optional<NN_Tensor>:$bias, I64Attr:$axis, F32Attr:$epsilon);
  let results = (outs NN_Tensor:$output);
  let assemblyFormat =
    "$input `,` $scale (`,` $bias^)? attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def NN_RmsNormOp : NN_Op<"rms_norm", [Pure]> {
  let summary = "root-mean-square normalisation (Llama's RMSNorm)";
  let description = [{
    `x / sqrt(mean(x²) + epsilon) · scale`, statistics over `axis..rank-1`.

    ```mlir
    %y = nn.rms_norm %x, %g {axis = 2 : i64, epsilon = 1.0e-06 : f32} : (tensor<2x8x32xf32>, tensor<32xf32>) -> tensor<2x8x32xf32>
    ```
  }];
  let arguments = (ins NN_Tensor:$input, NN_Tensor:$scale, I64Attr:$axis,
                   F32Attr:$epsilon);
  let results = (outs NN_Tensor:$output);
  let assemblyFormat =
    "$input `,` $scale attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def NN_ReduceSumOp : NN_ReduceOp<"reduce_sum", "sum">;
def NN_ReduceMeanOp : NN_ReduceOp<"reduce_mean", "mean">;
def NN_ReduceMaxOp : NN_ReduceOp<"reduce_max", "max">;
def NN_ReduceMinOp : NN_ReduceOp<"reduce_min", "min">;
def NN_ReduceProdOp : NN_ReduceOp<"reduce_prod", "product">;

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

def NN_ReshapeOp : NN_Op<"reshape", [Pure]> {
  let summary = "reinterpret the shape; element order unchanged";
  let description = [{
    ONNX Reshape, Squeeze, Unsqueeze and Flatten all land here: with static
    shapes they differ only in how the target shape is spelled, and one op
    gives sharding propagation a single rule to get right.

    ```mlir
    %h = nn.reshape %x : tensor<2x8x32xf32> to tensor<2x8x4x8xf32>
    ```
  }];
  let arguments = (ins NN_Tensor:$input);
  let results = (outs NN_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($output)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def NN_TransposeOp : NN_Op<"transpose", [Pure]> {
  let summary = "permute dimensions";
  let description = [{
    `output.shape[i] = input.shape[perm[i]]`.

    ```mlir
    %t = nn.transpose %x {perm = array<i64: 0, 2, 1, 3>} : tensor<2x8x4x8xf32> -> tensor<2x4x8x8xf32>
    ```
  }];
  let arguments = (ins NN_Tensor:$input, DenseI64ArrayAttr:$perm);
  let results = (outs NN_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def NN_ExpandOp : NN_Op<"expand", [Pure]> {
  let summary = "broadcast to the result shape";
  let description = [{
    ONNX Expand with the target shape folded into the result type.

    ```mlir
    %e = nn.expand %kv : tensor<2x2x1x8x16xf32> to tensor<2x2x2x8x16xf32>
    ```
  }];
  let arguments = (ins NN_Tensor:$input);
  let results = (outs NN_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` type($output)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def NN_ConcatOp : NN_Op<"concat", [Pure]> {
  let summary = "concatenate along `axis`";
  let description = [{
    ```mlir
    %c = nn.concat %a, %b {axis = 2 : i64} : (tensor<2x4x3x8xf32>, tensor<2x4x5x8xf32>) -> tensor<2x4x8x8xf32>
    ```
  }];
  let arguments = (ins Variadic<NN_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs NN_Tensor:$output);
  let assemblyFormat =
    "$inputs attr-dict `:` functional-type($inputs, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def NN_KVCacheWriteOp : NN_Op<"kv_cache_write", [Pure]> {
  let summary = "the cache with new keys or values written at a position";
  let description = [{
    The static KV cache of generation (nn-kv-cache): `cache` holds `capacity`
    entries along `axis`; the result is `cache` with `update`'s entries at
    `[position, position + n)` on that axis, where `position` is a one-element
    i64 tensor read at run time. Value semantics here; the lowering writes in
    place into the cache's persistent buffer (no copy of the cache per step).

    ```mlir
    %c = nn.kv_cache_write %cache, %k, %pos {axis = 2 : i64} : (tensor<1x4x32x16xf32>, tensor<1x4x1x16xf32>, tensor<1xi64>) -> tensor<1x4x32x16xf32>
    ```
  }];
  let arguments = (ins NN_Tensor:$cache, NN_Tensor:$update,
                   NN_Tensor:$position, I64Attr:$axis);
  let results = (outs NN_Tensor:$output);
  let assemblyFormat =
    "$cache `,` $update `,` $position attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def NN_SplitOp : NN_Op<"split", [Pure]> {
  let summary = "split along `axis` into pieces sized by the result types";
  let description = [{
    ```mlir
    %q, %k, %v = nn.split %qkv {axis = 2 : i64} : tensor<2x8x96xf32> -> (tensor<2x8x32xf32>, tensor<2x8x32xf32>, tensor<2x8x32xf32>)
    ```
  }];
  let arguments = (ins NN_Tensor:$input, I64Attr:$axis);
  let results = (outs Variadic<NN_Tensor>:$outputs);
  let assemblyFormat =
    "$input attr-dict `:` type($input) `->` `(` type($outputs) `)`";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def NN_SliceOp : NN_Op<"slice", [Pure]> {
  let summary = "strided slice with a start and step per dimension";
  let description = [{
    `output[i...] = input[starts + i * steps]` per dimension; sizes come from
    the result type. Negative steps walk backwards. The importer normalises
    ONNX's clamped, axis-subset form to one start and step per dimension.

    ```mlir
    %lo = nn.slice %x {starts = array<i64: 0, 0, 0>, steps = array<i64: 1, 1, 1>} : tensor<2x8x16xf32> -> tensor<2x8x8xf32>
    ```
  }];
  let arguments = (ins NN_Tensor:$input, DenseI64ArrayAttr:$starts,
                   DenseI64ArrayAttr:$steps);
  let results = (outs NN_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def NN_GatherOp : NN_Op<"gather", [Pure]> {
  let summary = "take slices of `data` along `axis` at `indices`";
  let description = [{
    ONNX Gather (embedding lookup when `data` is a table): the result shape
    is `data.shape[:axis] + indices.shape + data.shape[axis+1:]`. Negative
    indices count from the end.

    ```mlir
    %e = nn.gather %table, %ids {axis = 0 : i64} : (tensor<64x32xf32>, tensor<2x8xi64>) -> tensor<2x8x32xf32>
    ```
  }];
  let arguments = (ins NN_Tensor:$data, NN_IndexTensor:$indices, I64Attr:$axis);
  let results = (outs NN_Tensor:$output);
  let assemblyFormat =
    "$data `,` $indices attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

def NN_ScatterElementsOp : NN_Op<"scatter_elements", [Pure]> {
  let summary = "write `updates` into a copy of `data` at `indices` along `axis`";
  let description = [{
    ```mlir
    %r = nn.scatter_elements %zeros, %idx, %w {axis = 1 : i64} : (tensor<16x4xf32>, tensor<16x2xi64>, tensor<16x2xf32>) -> tensor<16x4xf32>
    ```
  }];
  let arguments = (ins NN_Tensor:$data, NN_IndexTensor:$indices,
    NN_Tensor:$updates, I64Attr:$axis,
    DefaultValuedAttr<NN_ScatterReductionAttr,
                      "ScatterReduction::none">:$reduction);
  let results = (outs NN_Tensor:$output);
  let assemblyFormat =
    "$data `,` $indices `,` $updates attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def NN_TriluOp : NN_Op<"trilu", [Pure, SameOperandsAndResultType]> {
  let summary = "keep the upper or lower triangle of the last two dims";
  let description = [{
    Elements outside the triangle (offset by diagonal `k`) become zero.

    ```mlir
    %m = nn.trilu %ones {upper = false, k = 0 : i64} : tensor<8x8xf32>
    ```
  }];
  let arguments = (ins NN_Tensor:$input, BoolAttr:$upper,
                   DefaultValuedAttr<I64Attr, "0">:$k);
  let results = (outs NN_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def NN_TopKOp : NN_Op<"topk", [Pure]> {
  let summary = "the k largest (or smallest) values along `axis` and their indices";
  let description = [{
    ```mlir
    %v, %i = nn.topk %logits {axis = 1 : i64, k = 2 : i64} : tensor<16x8xf32> -> (tensor<16x2xf32>, tensor<16x2xi64>)
    ```
  }];
  let arguments = (ins NN_Tensor:$input, I64Attr:$k, I64Attr:$axis,
    DefaultValuedAttr<BoolAttr, "true">:$largest,
    DefaultValuedAttr<BoolAttr, "true">:$sorted);
  let results = (outs NN_Tensor:$values, NN_IndexTensor:$indices);
  let assemblyFormat =
    "$input attr-dict `:` type($input) `->` `(` type($values) `,` type($indices) `)`";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Convolution
//===----------------------------------------------------------------------===//

def NN_ConvOp : NN_Op<"conv", [Pure]> {
  let summary = "N-d grouped convolution (NCHW, OIHW)";
  let description = [{
    ONNX Conv with explicit pads (`auto_pad` is resolved by the importer):
    `pads` holds the begin pads of every spatial dim, then the end pads.

    ```mlir
    %y = nn.conv %x, %w, %b {dilations = array<i64: 1, 1>, group = 1 : i64, pads = array<i64: 0, 1, 0, 1>, strides = array<i64: 1, 1>} : (tensor<1x1x1x64xf32>, tensor<8x1x1x3xf32>, tensor<8xf32>) -> tensor<1x8x1x64xf32>
    ```
  }];
  let arguments = (ins NN_Tensor:$input, NN_Tensor:$weight,
    Optional<NN_Tensor>:$bias, DenseI64ArrayAttr:$strides,
    DenseI64ArrayAttr:$pads, DenseI64ArrayAttr:$dilations, I64Attr:$group);
  let results = (outs NN_Tensor:$output);
  let assemblyFormat =
    "$input `,` $weight (`,` $bias^)? attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def NN_MaxPoolOp : NN_Op<"max_pool", [Pure]> {
  let summary = "N-d max pooling (NCHW)";
  let description = [{
    ONNX MaxPool with explicit pads; the result type fixes the output size
    (so `ceil_mode` is already applied). Padding never wins the max.

    ```mlir
    %y = nn.max_pool %x {dilations = array<i64: 1, 1>, kernel_shape = array<i64: 1, 2>, pads = array<i64: 0, 0, 0, 0>, strides = array<i64: 1, 2>} : tensor<1x8x1x64xf32> -> tensor<1x8x1x32xf32>
    ```
  }];
  let arguments = (ins NN_Tensor:$input, DenseI64ArrayAttr:$kernel_shape,
    DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$pads,
    DenseI64ArrayAttr:$dilations);
  let results = (outs NN_Tensor:$output);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($output)";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Transformer blocks recognised by nn-fuse
//===----------------------------------------------------------------------===//

def NN_AttentionOp : NN_Op<"attention",
    [Pure, IsolatedFromAbove, SingleBlock]> {
  let summary = "scaled dot-product attention with a score modifier";
  let description = [{
    `softmax(mod(scale · q · kᵀ, masks...)) · v` per batch and head, on the
    head-split layout: `q` is `[B, H, S, D]`, `k` is `[B, Hkv, T, D]`, `v` is
    `[B, Hkv, T, Dv]`, the result `[B, H, S, Dv]`. `Hkv` divides `H`: query
    head `h` reads key/value head `h / (H / Hkv)` (grouped-query attention;
    `Hkv == H` is multi-head attention).

    The score modifier `mod` is whatever the exporter put between the two
    products (an additive mask, a causal `where`, a multiplicative mask …),
    kept exactly as IR rather than as a fixed mask kind, so fusion preserves
    every model's numerics. Its block receives the scaled scores `[B, H, S,
    T]` and then one argument per `masks` operand, and yields the modified
    scores; yielding the first argument means no modifier.

    ```mlir
    %o = nn.attention %q, %k, %v mask(%m : tensor<2x1x1x8xf32>) {scale = 0.25 : f32}
        : (tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>, tensor<2x4x8x16xf32>) -> tensor<2x4x8x16xf32> {
    ^bb0(%s: tensor<2x4x8x8xf32>, %mk: tensor<2x1x1x8xf32>):
      %r = nn.add %s, %mk : (tensor<2x4x8x8xf32>, tensor<2x1x1x8xf32>) -> tensor<2x4x8x8xf32>
      nn.yield %r : tensor<2x4x8x8xf32>
    }
    ```
  }];
  let arguments = (ins NN_Tensor:$query, NN_Tensor:$key, NN_Tensor:$value,
    Variadic<NN_Tensor>:$masks, F32Attr:$scale);
  let results = (outs NN_Tensor:$output);
  let regions = (region SizedRegion<1>:$score_mod);
  let assemblyFormat = [{
    $query `,` $key `,` $value (`mask` `(` $masks^ `:` type($masks) `)`)?
    attr-dict `:` `(` type($query) `,` type($key) `,` type($value) `)`
    `->` type($output) $score_mod
  }];
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [
    // Builds the op with an identity score modifier; callers that have a
    // modifier fill the block after creation.
    OpBuilder<(ins "::mlir::Type":$output, "::mlir::Value":$query,
      "::mlir::Value":$key, "::mlir::Value":$value,
      "::mlir::ValueRange":$masks, "float":$scale)>
  ];
  let extraClassDeclaration = [{
    /// The type of the score matrix the modifier sees: [B, H, S, T].
    ::mlir::RankedTensorType getScoreType();
    /// True when the modifier yields the scores unchanged.
    bool hasIdentityScoreMod();
    ::mlir::Block &getScoreModBlock() { return getScoreMod().front(); }
  }];
}

def NN_YieldOp : NN_Op<"yield", [Pure, Terminator, ReturnLike,
                                 HasParent<"AttentionOp">]> {
  let summary = "the modified scores of an `nn.attention` region";
  let description = [{
    ```mlir
    nn.yield %s : tensor<2x4x8x8xf32>
    ```
  }];
  let arguments = (ins NN_Tensor:$value);
  let assemblyFormat = "$value attr-dict `:` type($value)";
}

def NN_RotaryOp : NN_Op<"rotary", [Pure]> {
  let summary = "rotary position embedding (rotate-half layout)";
  let description = [{
    `x · cos + rotate_half(x) · sin` where `rotate_half` maps the halves
    `[x1, x2]` of the last dimension to `[-x2, x1]` (the Llama / GPT-NeoX
    layout). `cos` and `sin` broadcast to `x` and span the full last dim.

    ```mlir
    %r = nn.rotary %q, %cos, %sin : (tensor<2x4x8x16xf32>, tensor<1x1x8x16xf32>, tensor<1x1x8x16xf32>) -> tensor<2x4x8x16xf32>
    ```
  }];
  let arguments = (ins NN_Tensor:$input, NN_Tensor:$cos, NN_Tensor:$sin);
  let results = (outs NN_Tensor:$output);
  let assemblyFormat =
    "$input `,` $cos `,` $sin attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

def NN_MoeOp : NN_Op<"moe", [Pure]> {
  let summary = "sparse mixture of experts: top-k routing over stacked experts";
  let description = [{
    Routes every token (a row of `input`, `[T..., H]`) to the `top_k`
    experts with the largest `softmax(router_logits)` (`[T..., E]`; ties go
    to the lower expert index, as ONNX TopK) and sums the chosen experts'
    outputs weighted by their probabilities, renormalised to sum to one per
    token when `normalize` is set. Only the chosen experts are computed.

    Expert `e` is `act(x · fc1[e]) · fc2[e]` with `fc1` `[E, H, F]` and
    `fc2` `[E, F, H]`; with `fc3` (`[E, H, F]`) it is the gated form
    `(act(x · fc1[e]) ⊙ (x · fc3[e])) · fc2[e]` (SwiGLU when `act` is silu:
    `fc1` is Mixtral's w1/gate, `fc3` its w3/up, `fc2` its w2/down).
    Recognised by `nn-fuse-moe` from the dense forms exporters emit, or
    imported from `com.microsoft.MoE`. The expert count, widths and top-k
    are what a cost model reads: `getNumExperts()`, `getHiddenSize()`,
    `getFfnSize()`, `top_k`.

    `capacity` (set by `dist-expert-parallel` from a capacity factor) keeps
    at most that many (token, expert) pairs per expert, the first in token
    order; the others are dropped and add nothing. Expert parallelism
    replaces the op by its steps (`nn.moe_route`, `dist.moe_permute`,
    `dist.all_to_all_v`, `nn.moe_experts`, `nn.moe_combine`).

    ```mlir
    %y = nn.moe %x, %logits, %w1, %w2, %w3 {top_k = 2 : i64, normalize = true, activation = #nn<moe_activation silu>}
        : (tensor<16x32xf32>, tensor<16x4xf32>, tensor<4x32x64xf32>, tensor<4x64x32xf32>, tensor<4x32x64xf32>) -> tensor<16x32xf32>
    ```
  }];
  let arguments = (ins NN_Tensor:$input, NN_Tensor:$router_logits,
    NN_Tensor:$fc1, NN_Tensor:$fc2, Optional<NN_Tensor>:$fc3,
    I64Attr:$top_k, DefaultValuedAttr<BoolAttr, "true">:$normalize,
    DefaultValuedAttr<NN_MoeActivationAttr, "MoeActivation::silu">:$activation,
    OptionalAttr<ConfinedAttr<I64Attr, [IntNonNegative]>>:$capacity);
  let results = (outs NN_Tensor:$output);
  let assemblyFormat = [{
    $input `,` $router_logits `,` $fc1 `,` $fc2 (`,` $fc3^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    int64_t getNumExperts() { return getFc1().getType().getDimSize(0); }
    int64_t getHiddenSize() { return getFc1().getType().getDimSize(1); }
    int64_t getFfnSize() { return getFc1().getType().getDimSize(2); }
    /// Rows routed independently: the product of the input's leading dims.
    int64_t getNumTokens() {
      return getInput().getType().getNumElements() / getHiddenSize();
    }
  }];
}

// The local steps of an expert-parallel `nn.moe`; `dist-expert-parallel`
// places them around `dist.moe_permute` and two `dist.all_to_all_v`.

def NN_MoeRouteOp : NN_Op<"moe_route", [Pure]> {
  let summary = "top-k routing of tokens: expert ids, weights, per-expert counts";
  let description = [{
    `nn.moe`'s routing on `[T, E]` router logits: per token the `top_k`
    experts with the largest softmax probabilities (ties: lower index), in
    descending order (`expert_ids` `[T, top_k]` i64), their probabilities,
    renormalised to sum to one when `normalize` is set (`weights`
    `[T, top_k]` f32), and how many tokens chose each expert (`counts`
    `[E]` i64), the first exchange of an expert-parallel layer.

    ```mlir
    %ids, %w, %counts = nn.moe_route %logits {top_k = 2 : i64}
        : tensor<8x4xf32> -> (tensor<8x2xi64>, tensor<8x2xf32>, tensor<4xi64>)
    ```
  }];
  let arguments = (ins NN_Tensor:$router_logits, I64Attr:$top_k,
    DefaultValuedAttr<BoolAttr, "true">:$normalize);
  let results = (outs NN_Tensor:$expert_ids, NN_Tensor:$weights,
    NN_Tensor:$counts);
  let assemblyFormat =
    "$router_logits attr-dict `:` type($router_logits) `->` `(` type(results) `)`";
  let hasVerifier = 1;
}

def NN_MoeExpertsOp : NN_Op<"moe_experts", [Pure]> {
  let summary = "a rank's experts on the rows dispatched to it (grouped GEMMs)";
  let description = [{
    `rows` (`[R, H]` f32, a static upper bound) hold what `P` senders
    dispatched, sender by sender in group order, each sender's rows grouped
    by local expert: `layout[s, e]` (`[P, L]` i64) rows of sender `s` for
    local expert `e`. Each run goes through its expert (`nn.moe`'s MLP on
    `fc1`/`fc2`/`fc3`, `[L, …]`, computed in f32); `output[i]` is row `i`'s
    result. Rows past the layout's total are left unspecified.

    ```mlir
    %out = nn.moe_experts %rows, %layout, %w1, %w2 {activation = #nn<moe_activation silu>}
        : (tensor<16x32xf32>, tensor<2x2xi64>, tensor<2x32x64xf32>, tensor<2x64x32xf32>) -> tensor<16x32xf32>
    ```
  }];
  let arguments = (ins NN_Tensor:$rows, NN_Tensor:$layout, NN_Tensor:$fc1,
    NN_Tensor:$fc2, Optional<NN_Tensor>:$fc3,
    DefaultValuedAttr<NN_MoeActivationAttr, "MoeActivation::silu">:$activation);
  let results = (outs NN_Tensor:$output);
  let assemblyFormat = [{
    $rows `,` $layout `,` $fc1 `,` $fc2 (`,` $fc3^)? attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

def NN_MoeCombineOp : NN_Op<"moe_combine", [Pure]> {
  let summary = "weighted sum of each token's expert results (unpermute)";
  let description = [{
    `pair_rows[t·k + j]` (`[T·k]` i64) is the row of `results` (`[T·k, H]`
    f32) that holds the output of token `t`'s `j`-th expert, or -1 when the
    pair was dropped (capacity). `output[t]` (`[T, H]`, the model's element
    type) is the sum over the token's kept pairs, in row order (the rows
    are in expert order), of `weights[t, j]` times that row.

    ```mlir
    %y = nn.moe_combine %back, %pair_rows, %w
        : (tensor<16x32xf32>, tensor<16xi64>, tensor<8x2xf32>) -> tensor<8x32xf32>
    ```
  }];
  let arguments = (ins NN_Tensor:$results, NN_Tensor:$pair_rows,
    NN_Tensor:$weights);
  let results = (outs NN_Tensor:$output);
  let assemblyFormat = [{
    $results `,` $pair_rows `,` $weights attr-dict `:`
    functional-type(operands, results)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Weights
//===----------------------------------------------------------------------===//

def NN_ExternalWeightOp : NN_Op<"external_weight", [Pure]> {
  let summary = "a weight stored in an ONNX external-data file";
  let description = [{
    References `length` bytes at `offset` of `location` (relative to the
    model file) without reading them: IR stays small and a model whose data
    files are absent can still be planned and inspected. Code generation maps
    the bytes when it slices weights per rank.

    An external weight is as constant as an embedded one (`nn::isWeight`):
    tensor parallelism splits it, and the weight writer cuts each rank's part
    from the file. `padding`, when present, appends that many zeros at the
    end of each dim (an MLP or vocabulary width padded to a multiple of
    `--tp`): the op's type is the stored tensor's plus the padding, and
    `length` counts the stored bytes only. `padding_blocks` spreads the
    zeros of the one dim `padding` pads over consecutive blocks of it, as
    (stored size, zeros after it) pairs: a fused QKV projection takes zero
    heads after its Q, its K and its V block.

    ```mlir
    %w = nn.external_weight {name = "layers.0.mlp.w1", location = "model.data", offset = 0 : i64, length = 8192 : i64} : tensor<32x64xf32>
    %p = nn.external_weight {name = "layers.0.mlp.w1", location = "model.data", offset = 0 : i64, length = 8192 : i64, padding = array<i64: 0, 2>} : tensor<32x66xf32>
    %qkv = nn.external_weight {name = "h.0.attn.c_attn", location = "model.data", offset = 0 : i64, length = 18432 : i64, padding = array<i64: 0, 48>, padding_blocks = array<i64: 48, 16, 48, 16, 48, 16>} : tensor<32x192xf32>
    ```
  }];
  let arguments = (ins StrAttr:$name, StrAttr:$location, I64Attr:$offset,
                   I64Attr:$length, OptionalAttr<DenseI64ArrayAttr>:$padding,
                   OptionalAttr<DenseI64ArrayAttr>:$padding_blocks);
  let extraClassDeclaration = [{
    /// The shape the file stores: the type's less `padding`.
    llvm::SmallVector<int64_t> getStoredShape();
  }];
  let results = (outs NN_Tensor:$output);
  let assemblyFormat = "attr-dict `:` type($output)";
  let hasVerifier = 1;
}

#endif // PARC_NN_OPS
