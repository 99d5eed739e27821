#!/usr/bin/python3
"""Small models built from onnxruntime's com.microsoft contrib ops.

Each model is written as NAME.onnx with NAME.inputs.npz, inputs that keep
every query with at least one key to read (padded masks, key lengths >= 1).
The reference is onnxruntime (test/e2e/contrib.py runs them):

  encoder_padded  EmbedLayerNormalization (segments, mask → mask_index),
                  Attention with a [B, T] 0/1 padding mask and a past,
                  unidirectional, MatMul → BiasGelu → MatMul,
                  SkipLayerNormalization with bias and its sum output
  decoder_lengths Attention with [B] key lengths and qkv_hidden_sizes,
                  SimplifiedLayerNormalization, QuickGelu, Gelu, FastGelu
                  without bias, SkipSimplifiedLayerNormalization
  gqa_decode      GroupQueryAttention (4 query heads, 2 key/value heads)
                  on a full cache, one new token
  gqa_rotary_decode  the same with do_rotary and cos/sin caches
  rope_prompt     RotaryEmbedding on 3-D and 4-D inputs ([B, S] and [1]
                  position_ids), GroupQueryAttention on a prompt
  mha_padded      MultiHeadAttention (packed bias, padding mask, past and
                  presents, causal)
  matmul_nbits    two 4-bit MatMulNBits around a Relu, with NAME.expected.npz
                  computed by numpy from the dequantised weights
"""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

B, S, P, H, N, FFN, VOCAB = 2, 4, 3, 16, 4, 32, 50
MS = "com.microsoft"


def weight(rng, name, *shape, scale=0.3):
    return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)


def model(name, nodes, inputs, outputs, inits):
    graph = helper.make_graph(nodes, name, inputs, outputs, inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14),
                                                helper.make_opsetid(MS, 1)])
    m.ir_version = 8
    return m


def encoder_padded(rng):
    f, i32 = TensorProto.FLOAT, TensorProto.INT32
    inits = [weight(rng, "word", VOCAB, H), weight(rng, "pos", 16, H), weight(rng, "segemb", 2, H),
             weight(rng, "gamma", H), weight(rng, "beta", H), weight(rng, "wqkv", H, 3 * H),
             weight(rng, "bqkv", 3 * H), weight(rng, "wo", H, H), weight(rng, "w1", H, FFN),
             weight(rng, "b1", FFN), weight(rng, "w2", FFN, H), weight(rng, "bias2", H)]
    nodes = [
        helper.make_node("EmbedLayerNormalization",
                         ["ids", "seg", "word", "pos", "segemb", "gamma", "beta", "mask"],
                         ["emb", "mask_index", "emb_sum"], domain=MS, epsilon=1e-5),
        helper.make_node("Attention", ["emb", "wqkv", "bqkv", "attn_mask", "past"],
                         ["att", "present"], domain=MS, num_heads=N, unidirectional=1),
        helper.make_node("MatMul", ["att", "wo"], ["proj"]),
        helper.make_node("SkipLayerNormalization", ["proj", "emb_sum", "gamma", "beta", "bias2"],
                         ["ln", "", "", "resid"], domain=MS, epsilon=1e-5),
        helper.make_node("MatMul", ["ln", "w1"], ["h1"]),
        helper.make_node("BiasGelu", ["h1", "b1"], ["g"], domain=MS),
        helper.make_node("MatMul", ["g", "w2"], ["h2"]),
        helper.make_node("Add", ["h2", "resid"], ["y"]),
    ]
    inputs = [helper.make_tensor_value_info("ids", i32, [B, S]),
              helper.make_tensor_value_info("seg", i32, [B, S]),
              helper.make_tensor_value_info("mask", i32, [B, S]),
              helper.make_tensor_value_info("attn_mask", i32, [B, P + S]),
              helper.make_tensor_value_info("past", f, [2, B, N, P, H // N])]
    outputs = [helper.make_tensor_value_info("y", f, [B, S, H]),
               helper.make_tensor_value_info("present", f, [2, B, N, P + S, H // N]),
               helper.make_tensor_value_info("mask_index", i32, [B])]
    mask = np.ones((B, S), np.int32)
    mask[1, -1] = 0
    attn_mask = np.ones((B, P + S), np.int32)
    attn_mask[1, :2] = 0  # left padding of the second sequence's past
    feeds = {"ids": rng.integers(0, VOCAB, (B, S)).astype(np.int32),
             "seg": rng.integers(0, 2, (B, S)).astype(np.int32), "mask": mask,
             "attn_mask": attn_mask,
             "past": rng.standard_normal((2, B, N, P, H // N)).astype(np.float32)}
    return model("encoder_padded", nodes, inputs, outputs, inits), feeds


def decoder_lengths(rng):
    f, i32 = TensorProto.FLOAT, TensorProto.INT32
    hv = 2 * H  # value heads twice as wide as query/key heads
    inits = [weight(rng, "scale", H), weight(rng, "wqkv", H, 2 * H + hv),
             weight(rng, "bqkv", 2 * H + hv), weight(rng, "wo", hv, H),
             weight(rng, "w1", H, FFN), weight(rng, "w2", FFN, H), weight(rng, "w3", H, FFN)]
    nodes = [
        # onnxruntime registers this one in the default domain.
        helper.make_node("SimplifiedLayerNormalization", ["x", "scale"], ["n"], epsilon=1e-6),
        helper.make_node("Attention", ["n", "wqkv", "bqkv", "lengths"], ["att"], domain=MS,
                         num_heads=N, qkv_hidden_sizes=[H, H, hv]),
        helper.make_node("MatMul", ["att", "wo"], ["proj"]),
        helper.make_node("SkipSimplifiedLayerNormalization", ["proj", "x", "scale"],
                         ["n2", "", "", "resid"], domain=MS, epsilon=1e-6),
        helper.make_node("MatMul", ["n2", "w1"], ["h1"]),
        helper.make_node("QuickGelu", ["h1"], ["q"], domain=MS, alpha=1.5),
        helper.make_node("Gelu", ["q"], ["g"], domain=MS),
        helper.make_node("MatMul", ["g", "w2"], ["h2"]),
        helper.make_node("MatMul", ["n2", "w3"], ["h3"]),
        helper.make_node("FastGelu", ["h3"], ["fg"], domain=MS),
        helper.make_node("MatMul", ["fg", "w2"], ["h4"]),
        helper.make_node("Add", ["h2", "h4"], ["mlp"]),
        helper.make_node("Add", ["mlp", "resid"], ["y"]),
    ]
    inputs = [helper.make_tensor_value_info("x", f, [B, S, H]),
              helper.make_tensor_value_info("lengths", i32, [B])]
    outputs = [helper.make_tensor_value_info("y", f, [B, S, H])]
    feeds = {"x": rng.standard_normal((B, S, H)).astype(np.float32),
             "lengths": np.array([S, 2], np.int32)}
    return model("decoder_lengths", nodes, inputs, outputs, inits), feeds


def gqa_decode(rng, rotary=False):
    """One new token per sequence after a full cache (onnxruntime's CPU
    GroupQueryAttention takes batch > 1 only with seq 1); with `rotary`,
    do_rotary and cos/sin caches (the genai model builder's form)."""
    f, i32 = TensorProto.FLOAT, TensorProto.INT32
    # onnxruntime wants head sizes in multiples of 8 (16 with do_rotary).
    kv, d, seq = 2, 16 if rotary else 8, 1
    inits = [weight(rng, "wq", H, N * d), weight(rng, "wk", H, kv * d),
             weight(rng, "wv", H, kv * d), weight(rng, "wo", N * d, H),
             numpy_helper.from_array(np.array(P + seq, np.int32), "total")]
    nodes = [
        helper.make_node("MatMul", ["x", "wq"], ["q"]),
        helper.make_node("MatMul", ["x", "wk"], ["k"]),
        helper.make_node("MatMul", ["x", "wv"], ["v"]),
        helper.make_node("GroupQueryAttention", ["q", "k", "v", "past_key", "past_value",
                                                 "seqlens_k", "total"] +
                         (["cos", "sin"] if rotary else []),
                         ["att", "present_key", "present_value"], domain=MS,
                         num_heads=N, kv_num_heads=kv, do_rotary=int(rotary)),
        helper.make_node("MatMul", ["att", "wo"], ["y"]),
    ]
    if rotary:
        angles = np.outer(np.arange(16), 1.0 / (10000 ** (np.arange(0, d, 2) / d)))
        inits += [numpy_helper.from_array(np.cos(angles).astype(np.float32), "cos"),
                  numpy_helper.from_array(np.sin(angles).astype(np.float32), "sin")]
    cache = [B, kv, P, d]
    inputs = [helper.make_tensor_value_info("x", f, [B, seq, H]),
              helper.make_tensor_value_info("past_key", f, cache),
              helper.make_tensor_value_info("past_value", f, cache),
              helper.make_tensor_value_info("seqlens_k", i32, [B])]
    outputs = [helper.make_tensor_value_info("y", f, [B, seq, H]),
               helper.make_tensor_value_info("present_key", f, [B, kv, P + seq, d]),
               helper.make_tensor_value_info("present_value", f, [B, kv, P + seq, d])]
    feeds = {"x": rng.standard_normal((B, seq, H)).astype(np.float32),
             "past_key": rng.standard_normal(cache).astype(np.float32),
             "past_value": rng.standard_normal(cache).astype(np.float32),
             "seqlens_k": np.full((B,), P + seq - 1, np.int32)}
    return model("gqa_rotary_decode" if rotary else "gqa_decode", nodes, inputs, outputs,
                 inits), feeds


def rope_prompt(rng):
    """RotaryEmbedding on [B, S, heads · D] queries (position_ids [B, S]) and
    on [B, heads, S, D] keys (position_ids [1]: the first position), then
    GroupQueryAttention on a prompt (no cache)."""
    f, i32, i64 = TensorProto.FLOAT, TensorProto.INT32, TensorProto.INT64
    kv, d, positions = 2, 8, 16
    inv = 1.0 / (10000 ** (np.arange(0, d, 2) / d))
    angles = np.outer(np.arange(positions), inv)
    inits = [weight(rng, "wq", H, N * d), weight(rng, "wk", H, kv * d),
             weight(rng, "wv", H, kv * d), weight(rng, "wo", N * d, H),
             numpy_helper.from_array(np.cos(angles).astype(np.float32), "cos"),
             numpy_helper.from_array(np.sin(angles).astype(np.float32), "sin"),
             numpy_helper.from_array(np.array([B, S, kv, d], np.int64), "kshape"),
             numpy_helper.from_array(np.array([B, S, kv * d], np.int64), "kflat"),
             numpy_helper.from_array(np.array(S, np.int32), "total")]
    nodes = [
        helper.make_node("MatMul", ["x", "wq"], ["q"]),
        helper.make_node("MatMul", ["x", "wk"], ["k"]),
        helper.make_node("MatMul", ["x", "wv"], ["v"]),
        helper.make_node("RotaryEmbedding", ["q", "pos", "cos", "sin"], ["qr"], domain=MS,
                         num_heads=N),
        helper.make_node("Reshape", ["k", "kshape"], ["k4"]),
        helper.make_node("Transpose", ["k4"], ["kt"], perm=[0, 2, 1, 3]),
        helper.make_node("RotaryEmbedding", ["kt", "start", "cos", "sin"], ["ktr"], domain=MS),
        helper.make_node("Transpose", ["ktr"], ["kb"], perm=[0, 2, 1, 3]),
        helper.make_node("Reshape", ["kb", "kflat"], ["kr"]),
        helper.make_node("GroupQueryAttention", ["qr", "kr", "v", "", "", "seqlens_k", "total"],
                         ["att", "", ""], domain=MS, num_heads=N, kv_num_heads=kv),
        helper.make_node("MatMul", ["att", "wo"], ["y"]),
    ]
    inputs = [helper.make_tensor_value_info("x", f, [B, S, H]),
              helper.make_tensor_value_info("pos", i64, [B, S]),
              helper.make_tensor_value_info("start", i64, [1]),
              helper.make_tensor_value_info("seqlens_k", i32, [B])]
    outputs = [helper.make_tensor_value_info("y", f, [B, S, H])]
    feeds = {"x": rng.standard_normal((B, S, H)).astype(np.float32),
             "pos": np.array([[3, 4, 5, 6], [0, 1, 2, 3]], np.int64)[:B, :S],
             "start": np.array([2], np.int64),
             "seqlens_k": np.full((B,), S - 1, np.int32)}
    return model("rope_prompt", nodes, inputs, outputs, inits), feeds


def mha_padded(rng):
    """MultiHeadAttention on separate projections with a packed bias, a
    [B, T] padding mask over past + new keys, past_key/past_value and the
    presents, causal."""
    f, i32 = TensorProto.FLOAT, TensorProto.INT32
    d = H // N
    inits = [weight(rng, "wq", H, H), weight(rng, "wk", H, H), weight(rng, "wv", H, H),
             weight(rng, "bias", 3 * H), weight(rng, "wo", H, H)]
    nodes = [
        helper.make_node("MatMul", ["x", "wq"], ["q"]),
        helper.make_node("MatMul", ["x", "wk"], ["k"]),
        helper.make_node("MatMul", ["x", "wv"], ["v"]),
        helper.make_node("MultiHeadAttention",
                         ["q", "k", "v", "bias", "mask", "", "past_key", "past_value"],
                         ["att", "present_key", "present_value"], domain=MS, num_heads=N,
                         unidirectional=1),
        helper.make_node("MatMul", ["att", "wo"], ["y"]),
    ]
    cache = [B, N, P, d]
    inputs = [helper.make_tensor_value_info("x", f, [B, S, H]),
              helper.make_tensor_value_info("mask", i32, [B, P + S]),
              helper.make_tensor_value_info("past_key", f, cache),
              helper.make_tensor_value_info("past_value", f, cache)]
    outputs = [helper.make_tensor_value_info("y", f, [B, S, H]),
               helper.make_tensor_value_info("present_key", f, [B, N, P + S, d]),
               helper.make_tensor_value_info("present_value", f, [B, N, P + S, d])]
    mask = np.ones((B, P + S), np.int32)
    mask[1, :2] = 0
    feeds = {"x": rng.standard_normal((B, S, H)).astype(np.float32), "mask": mask,
             "past_key": rng.standard_normal(cache).astype(np.float32),
             "past_value": rng.standard_normal(cache).astype(np.float32)}
    return model("mha_padded", nodes, inputs, outputs, inits), feeds


def quantise4(rng, k, n, block, zero_points):
    """Random MatMulNBits operands for a [k, n] weight and its numpy
    dequantisation: B [n, blocks, block / 2] bytes (the low nibble first),
    one scale per (column, block), zero points as packed nibbles or 8."""
    blocks = -(-k // block)
    q = rng.integers(0, 16, (n, blocks * block)).astype(np.uint8)
    packed = (q[:, 0::2] | (q[:, 1::2] << 4)).reshape(n, blocks, block // 2)
    scales = (rng.random((n, blocks)) * 0.1 + 0.01).astype(np.float32)
    zp = rng.integers(0, 16, (n, blocks)).astype(np.uint8) if zero_points else np.full((n, blocks), 8)
    w = (q.astype(np.float32).reshape(n, blocks, block) - zp[:, :, None]) * scales[:, :, None]
    w = w.reshape(n, blocks * block)[:, :k].T  # [k, n]
    zp_bytes = None
    if zero_points:
        padded = np.zeros((n, 2 * -(-blocks // 2)), np.uint8)
        padded[:, :blocks] = zp
        zp_bytes = (padded[:, 0::2] | (padded[:, 1::2] << 4)).reshape(-1)
    return packed, scales.reshape(-1), zp_bytes, w


def matmul_nbits(rng):
    """Two MatMulNBits (4-bit, block 16, K not a multiple of the block;
    packed zero points and a bias on the first, default zero points on the
    second) around a Relu: an MLP of quantised linears. Its expected output
    is computed here with numpy from the dequantised weights."""
    f = TensorProto.FLOAT
    k, n1, n2, block = 40, 24, 16, 16
    b1, s1, z1, w1 = quantise4(rng, k, n1, block, zero_points=True)
    b2, s2, _, w2 = quantise4(rng, n1, n2, block, zero_points=False)
    bias = (rng.standard_normal(n1) * 0.1).astype(np.float32)
    inits = [numpy_helper.from_array(b1, "b1"), numpy_helper.from_array(s1, "s1"),
             numpy_helper.from_array(z1, "z1"), numpy_helper.from_array(bias, "bias"),
             numpy_helper.from_array(b2, "b2"), numpy_helper.from_array(s2, "s2")]
    nodes = [
        helper.make_node("MatMulNBits", ["x", "b1", "s1", "z1", "", "bias"], ["h"], domain=MS,
                         K=k, N=n1, bits=4, block_size=block),
        helper.make_node("Relu", ["h"], ["r"]),
        helper.make_node("MatMulNBits", ["r", "b2", "s2"], ["y"], domain=MS,
                         K=n1, N=n2, bits=4, block_size=block),
    ]
    inputs = [helper.make_tensor_value_info("x", f, [B, S, k])]
    outputs = [helper.make_tensor_value_info("y", f, [B, S, n2])]
    x = rng.standard_normal((B, S, k)).astype(np.float32)
    expected = {"y": np.maximum(x @ w1 + bias, 0) @ w2}
    return model("matmul_nbits", nodes, inputs, outputs, inits), {"x": x}, expected


MODELS = {"encoder_padded": encoder_padded, "decoder_lengths": decoder_lengths,
          "gqa_decode": gqa_decode,
          "gqa_rotary_decode": lambda rng: gqa_decode(rng, rotary=True),
          "rope_prompt": rope_prompt,
          "mha_padded": mha_padded, "matmul_nbits": matmul_nbits}


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--out", required=True)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for name, build in MODELS.items():
        m, feeds, *expected = build(np.random.default_rng(args.seed))
        if expected:
            np.savez(os.path.join(args.out, name + ".expected.npz"), **expected[0])
        # No onnx.checker here: it knows neither com.microsoft ops nor the
        # default-domain SimplifiedLayerNormalization; parc's importer checks
        # them against its own schemas and onnxruntime loads them.
        onnx.save(m, os.path.join(args.out, name + ".onnx"))
        np.savez(os.path.join(args.out, name + ".inputs.npz"), **feeds)
        print(f"wrote {name}.onnx")


if __name__ == "__main__":
    main()
