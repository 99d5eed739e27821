#!/usr/bin/python3
"""Tiny decoders exported with their KV cache, Hugging Face / optimum style.

Each layer takes `past_key_values.{i}.key/value` [batch, kv_heads, past_seq,
head_dim] and returns `present.{i}.key/value` = Concat(past, new) on the
sequence axis; positions come in as `position_ids` [batch, seq], and the
causal mask is sliced from a buffer at [past_seq : past_seq + seq] by the
traced lengths, as the exporters emit it. Two families:

  gpt2_past    GPT-2 (learned positions, multi-head attention)
  llama_past   Llama (RoPE, grouped-query attention: 4 heads on 2 kv heads,
               and an `attention_mask` [batch, past_seq + seq] input)

They are the inputs of `parc compile --max-seq` (see test/e2e/generate.py).
`llama_past_100m` (written only when named with --only) is the Llama of
bench/decode.sh: 12 layers, hidden 768, 12 heads on 4 kv heads, about 100 M
parameters.
Needs only Debian's python3-onnx and python3-numpy:

    /usr/bin/python3 examples/models/generate_past.py --out DIR [--only NAME ...]
"""

import argparse
import os
import sys

import numpy as np
from onnx import TensorProto, checker, shape_inference

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from generate import (FLOAT_MIN, Emitter, ModelConfig, gpt2_blocks,  # noqa: E402
                      gpt2_logits)

MODELS = {
    "gpt2_past": ModelConfig("gpt2", seed=1101, layers=2, hidden=64, heads=4,
                             kv_heads=4, ffn=128, vocab=96, max_positions=32),
    "llama_past": ModelConfig("llama", seed=1102, layers=2, hidden=64,
                              heads=4, kv_heads=2, ffn=128, vocab=96,
                              max_positions=32, rotary_dim=16, eps=1e-6),
}
# Too large to write by default: bench/decode.sh's model.
BENCH_MODELS = {
    "llama_past_100m": ModelConfig("llama", seed=1103, layers=12, hidden=768,
                                   heads=12, kv_heads=4, ffn=2304,
                                   vocab=16384, max_positions=256,
                                   rotary_dim=64, eps=1e-6),
}


def cache_io(g, i, k, v):
    """Concat(past, new) for layer i's key and value, and their outputs."""
    c = g.cfg
    shape = ["batch", c.kv_heads, "past_seq", c.head_dim]
    out = ["batch", c.kv_heads, "total_seq", c.head_dim]
    full = []
    for kind, new in (("key", k), ("value", v)):
        past = g.input(f"past_key_values.{i}.{kind}", TensorProto.FLOAT, shape)
        full.append(g.op("Concat", past, new, axis=2))
        # Named once the graph is complete (Graph.output renames uses).
        g.presents.append((full[-1], f"present.{i}.{kind}", out))
    return full


def name_presents(g):
    for value, name, shape in g.presents:
        g.output(value, name, TensorProto.FLOAT, shape)


def causal_rows(g, mask, q, k):
    """Rows [k_len - q_len, k_len) and columns [0, k_len) of a [n, n] mask."""
    q_len, k_len = g.dim(q, 2), g.dim(k, 2)
    start = g.unsqueeze(g.op("Sub", k_len, q_len), [0])
    end = g.unsqueeze(k_len, [0])
    rows = g.op("Slice", mask, start, end, g.const([0]), g.const([1]))
    return g.op("Slice", rows, g.const([0]), end, g.const([1]), g.const([1]))


def gpt2_past_attention(g, a, i):
    c = g.cfg
    n = c.max_positions
    qkv = g.linear(a, c.hidden, 3 * c.hidden, "c_attn")
    q, k, v = g.op("Split", qkv, g.const([c.hidden] * 3), axis=2, outputs=3)
    q, k, v = (g.split_heads(x, c.heads) for x in (q, k, v))
    k, v = cache_io(g, i, k, v)
    bias = g.param("bias", np.tril(np.ones((n, n), bool)))
    mask = causal_rows(g, bias, q, k)
    fill = g.const(FLOAT_MIN, np.float32)
    k_t = g.op("Transpose", k, perm=[0, 1, 3, 2])
    ctx = g.attention(q, k_t, v, lambda s: g.op("Where", mask, s, fill))
    return g.linear(g.merge_heads(ctx), c.hidden, c.hidden, "c_proj")


def build_gpt2_past(g):
    c = g.cfg
    ids = g.input("input_ids", TensorProto.INT64, ["batch", "seq"])
    pos = g.input("position_ids", TensorProto.INT64, ["batch", "seq"])
    with g.module("transformer"):
        wte, tok = g.embedding(ids, "wte", c.vocab)
        _, pe = g.embedding(pos, "wpe", c.max_positions)
        h = gpt2_blocks(g, g.op("Add", tok, pe), gpt2_past_attention)
    gpt2_logits(g, h, wte)
    name_presents(g)


def padding_mask(g, mask):
    """HF's (1 - attention_mask[:, None, None, :]) * finfo.min."""
    keep = g.op("Cast", g.unsqueeze(mask, [1, 2]), to=TensorProto.FLOAT)
    return g.op("Mul", g.op("Sub", g.const(1.0, np.float32), keep),
                g.const(FLOAT_MIN, np.float32))


def build_llama_past(g):
    c = g.cfg
    ids = g.input("input_ids", TensorProto.INT64, ["batch", "seq"])
    pos = g.input("position_ids", TensorProto.INT64, ["batch", "seq"])
    padding = padding_mask(g, g.input("attention_mask", TensorProto.INT64,
                                      ["batch", "total_seq"]))
    n = c.max_positions
    with g.module("model"):
        _, h = g.embedding(ids, "embed_tokens", c.vocab)
        with g.module("rotary_emb"):
            cos_t, sin_t = g.rotary_tables()
        cos = g.unsqueeze(g.op("Gather", cos_t, pos), [1])
        sin = g.unsqueeze(g.op("Gather", sin_t, pos), [1])
        causal = g.param("causal_mask",
                         np.triu(np.full((n, n), FLOAT_MIN, np.float32), k=1))
        for i in range(c.layers):
            with g.module(f"layers.{i}"):
                a = g.rms_norm(h, "input_layernorm")
                with g.module("self_attn"):
                    q, k, v = (g.split_heads(
                        g.linear(a, c.hidden, heads * c.head_dim, proj,
                                 bias=False), heads)
                        for proj, heads in (("q_proj", c.heads),
                                            ("k_proj", c.kv_heads),
                                            ("v_proj", c.kv_heads)))
                    q, k = g.rotary(q, cos, sin), g.rotary(k, cos, sin)
                    k, v = cache_io(g, i, k, v)
                    mask = causal_rows(g, causal, q, k)
                    k, v = g.repeat_kv(k), g.repeat_kv(v)
                    k_t = g.op("Transpose", k, perm=[0, 1, 3, 2])
                    ctx = g.attention(
                        q, k_t, v,
                        lambda s: g.op("Add", g.op("Add", s, mask), padding))
                    a = g.linear(g.merge_heads(ctx), c.hidden, c.hidden,
                                 "o_proj", bias=False)
                h = g.op("Add", h, a)
                m = g.rms_norm(h, "post_attention_layernorm")
                with g.module("mlp"):
                    m = g.swiglu(m, "gate_proj", "up_proj", "down_proj")
                h = g.op("Add", h, m)
        h = g.rms_norm(h, "norm")
    logits = g.linear(h, c.hidden, c.vocab, "lm_head", bias=False)
    g.output(logits, "logits", TensorProto.FLOAT, ["batch", "seq", c.vocab])
    name_presents(g)


BUILDERS = {"gpt2": build_gpt2_past, "llama": build_llama_past}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="output directory")
    parser.add_argument("--only", nargs="+", default=[],
                        choices=list(MODELS) + list(BENCH_MODELS),
                        metavar="NAME", help="models to write (default: all)")
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    for name in args.only or MODELS:
        cfg = {**MODELS, **BENCH_MODELS}[name]
        g = Emitter(cfg, 14)
        g.presents = []
        BUILDERS[cfg.family](g)
        model = g.model(name)
        checker.check_model(model, full_check=True)
        shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
        path = os.path.join(args.out, name + ".onnx")
        with open(path, "wb") as f:
            f.write(model.SerializeToString())
        print(f"wrote {path} ({len(model.graph.node)} nodes)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
