//===- Passes.td - passes over the nn dialect -------------*- tablegen -*-===//

#ifndef PARC_TRANSFORMS_NN_PASSES
#define PARC_TRANSFORMS_NN_PASSES

include "mlir/Pass/PassBase.td"

def NNCanonicalize : Pass<"nn-canonicalize"> {
  let summary = "Fold constants and simplify nn ops";
  let description = [{
    Runs every nn op's folder and canonicalization pattern to a fixed point
    and removes dead ops. Input: any IR containing nn ops. Output: the same
    computation with shape arithmetic, identity reshapes/transposes/casts
    and constant subexpressions folded away.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def NNFuse : Pass<"nn-fuse"> {
  let summary = "Recognise transformer building blocks in exported graphs";
  let description = [{
    Rewrites the decomposed forms exporters emit into fused nn ops:
    LayerNorm (ReduceMean/Sub/Pow/Sqrt/Div, with or without affine),
    RMSNorm, GELU (erf and tanh forms), SiLU, linear layers (MatMul + Add,
    Gemm), attention (Q·Kᵀ, scale, score modifier, Softmax, ·V) including
    grouped-query attention's repeated key/value heads, and rotary embedding.
    Input: nn IR, ideally after nn-canonicalize and cse (duplicated
    subexpressions hide patterns). Output: the same computation, with fused
    ops wherever a form was recognised; everything else is left untouched.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def NNFuseMoE : Pass<"nn-fuse-moe"> {
  let summary = "Recognise mixture-of-experts blocks as nn.moe";
  let description = [{
    Finds the dense form a static trace of a sparse MoE block produces: a
    TopK over the router's softmax (weights renormalised by their sum, or
    not; or TopK over the logits followed by a softmax of the k values), a
    dense [tokens, experts] routing tensor built with ScatterElements or
    with OneHot (torch's `F.one_hot`: sum over k of the one-hot indices
    times the weights), or a per-expert Equal/Where mask reduced over k,
    every expert run on every
    token and multiplied by its routing column, and the products summed.
    Experts are SwiGLU-style gated MLPs (`act(x·w1) ⊙ (x·w3)` then `·w2`) or
    plain two-layer MLPs (`act(x·w1)·w2`, act silu, gelu or relu), bias-free,
    with constant weights. The sum becomes one `nn.moe` on the router
    logits with the expert weights stacked into [experts, in, out]
    constants; the dense ops it replaced die. Input: nn IR after nn-fuse
    (linears and activations fused). Output: the same computation with
    `nn.moe` wherever the whole form was found; anything else is untouched.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def NNConvertDType : InterfacePass<"nn-convert-dtype", "::mlir::FunctionOpInterface"> {
  let summary = "Compute in bf16 or f16 instead of f32";
  let description = [{
    Input: nn IR computing in f32. Output: the same computation with every
    f32 tensor in `dtype`: constants are converted at compile time (rounding
    to nearest even), external weights are cast after loading, and the
    function keeps its f32 signature through casts at entry and return, so a
    caller sees the same inputs and outputs. Integer and bool tensors are
    untouched.
  }];
  let options = [
    Option<"dtype", "dtype", "std::string", "\"bf16\"",
           "target element type: bf16 or f16">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def NNKVCache : InterfacePass<"nn-kv-cache", "::mlir::FunctionOpInterface"> {
  let summary = "Turn a decoder's past/present I/O into a static KV cache";
  let description = [{
    Input: fused nn IR of a decoder exported with its cache, where each
    `present` output is `nn.concat(past, new)` of its `past` input along the
    sequence axis (the Hugging Face / optimum form), bound so that the past
    holds capacity - new entries. Pairs come from `pairs` (`past=present`)
    or, without it, from the names `past_key_values.{i}.key|value` →
    `present.{i}.key|value` and `past_{i}` → `present_{i}`.

    com.microsoft Attention's stacked form is recognised too: a past [2, B,
    N, P, D] split into key and value halves, each `nn.concat(half, new)`,
    restacked on dim 0 as present; it becomes two cache inputs
    (`<past>.key`, `<past>.value`, [B, N, capacity, D]) and the stacked past
    input is removed.

    Output: each past input becomes the whole cache (capacity entries), the
    concat becomes `nn.kv_cache_write` at a new i64 input `cache_position`,
    the present outputs are gone, and every `nn.attention` reading a cache
    gets an additive mask that hides keys past the query's own position
    (key j, query i: j > position + i). Inputs are tagged with their role
    in the token loop (`parc.kv_role`: cache, position, tokens, positions,
    attention_mask). Only public functions with a body are model graphs:
    callees and declarations are left alone.
  }];
  let options = [
    ListOption<"pairs", "pairs", "std::string",
               "past=present pairs (default: recognised by name)">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

#endif // PARC_TRANSFORMS_NN_PASSES
