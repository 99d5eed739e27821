#!/usr/bin/python3
"""Small models in the forms other exporters emit, each with a numpy reference.
Each has two layers, so that two pipeline stages exist.

  dynamo18 .. dynamo21   pre-LN transformer blocks as the torch dynamo
                         exporter writes them at opsets 18-21: the
                         LayerNormalization op, a fused QKV split with
                         Split(num_outputs=3), K transposed with perm
                         [0, 2, 3, 1], Reduce* with axes as an input, Reshape
                         with allowzero (the batch fixed in one), Cast(saturate)
                         at 19+, the Gelu op at 20+ (erf GELU below), IR 8 / 9 / 9 / 10
  tf_bert                post-LN BERT layers as keras2onnx / tf2onnx write
                         them: Tensordot reshapes computed by
                         Shape -> Cast -> Gather -> ReduceProd -> Unsqueeze ->
                         Concat -> Cast -> Reshape, LayerNorm from moments,
                         Rsqrt as Reciprocal(Sqrt), attention scores with
                         Einsum, int32 inputs and the batch fixed in the graph
  sdpa_div               a Llama-style decoder (no biases) as torch's
                         SDPA decomposition writes it: K transposed with
                         perm [0, 1, 3, 2] after the head split, the scale
                         as Div by sqrt(head_dim)
  sdpa_mul_sqrt          the scale as Mul by sqrt(1 / sqrt(head_dim)) on
                         both Q and K, K transposed with perm [0, 2, 3, 1]
  einsum_attn            scores and context as Einsum (bhqd,bhkd->bhqk)
  repeat_kv              grouped-query attention (4 query, 2 key/value heads)
                         with Hugging Face's repeat_kv: Unsqueeze(2) ->
                         Expand -> Reshape
  rmsnorm_div            RMSNorm as x / Sqrt(ReduceMean(x * x) + eps) * w
  bf16_ckpt              bf16 weights, each Cast to f32 before its MatMul
  uneven_heads           6 heads of 8 (hidden 48): --tp 4 does not divide
  fixed_batch            the batch (2) written into every Reshape shape
  genai_llama            onnxruntime-genai's model builder form: embedding,
                         SimplifiedLayerNormalization and
                         SkipSimplifiedLayerNormalization, MatMulNBits
                         linears, GroupQueryAttention with do_rotary
                         (seqlens_k and total_sequence_length from the
                         attention mask), an f32 LM head

Every model is <name>.onnx plus <name>.json (inputs and their value ranges,
and under "megatron" the dims from which test/e2e/matrix.py computes the
fused form's communication: differential.megatron_comm_bytes);
`reference(name, inputs)` computes the outputs in numpy from the same weights,
written from the formulas, not from the graph, so parc and onnxruntime are
both checked against it.

libonnx / python3-onnx 1.12 know opsets up to 17, so these graphs are made
with onnx.helper without its checker; onnxruntime loads and checks them.

    /usr/bin/python3 examples/models/exporter_forms.py --out DIR [--only NAME ...]
"""

import argparse
import dataclasses
import json
import math
import os

import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from contrib_models import MS, quantise4  # noqa: E402
from generate import narrow_tensor  # noqa: E402

# Two layers each, so that --pp 2 has a layer per stage.
HIDDEN, HEADS, FFN, BATCH, SEQ, LAYERS = 32, 4, 64, 2, 8, 2
HEAD_DIM = HIDDEN // HEADS
EPS = 1e-5
# Opset -> the IR version of its onnx release.
IR_VERSIONS = {18: 8, 19: 9, 20: 9, 21: 10}


def erf(x):
    # numpy has no erf; math.erf per element is exact enough at 1e-4.
    return np.vectorize(math.erf)(x.astype(np.float64))


def gelu(x, approximate="none"):
    x = x.astype(np.float64)
    if approximate == "tanh":
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))
    return 0.5 * x * (1 + erf(x / math.sqrt(2)))


def layer_norm(x, g, b, eps=EPS):
    x = x.astype(np.float64)
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * g + b


def softmax(x):
    e = np.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def attention(q, k, v, mask=None, heads=HEADS, kv_heads=None, causal=False, rotary=None):
    """q [B, S, heads * d], k, v [B, S, kv_heads * d] -> [B, S, heads * d];
    each key/value head serves heads / kv_heads query heads. `rotary`:
    (cos, sin) [S, d / 2], rotate-half, on q and k."""
    kv_heads = kv_heads or heads
    d = q.shape[-1] // heads

    def split(t, n, rotate=False):
        t = t.reshape(t.shape[0], t.shape[1], n, d).transpose(0, 2, 1, 3)
        if rotate and rotary is not None:
            cos, sin = rotary
            t1, t2 = t[..., :d // 2], t[..., d // 2:]
            t = np.concatenate([t1 * cos - t2 * sin, t2 * cos + t1 * sin], -1)
        return np.repeat(t, heads // n, axis=1)
    qh, kh, vh = split(q, heads, True), split(k, kv_heads, True), split(v, kv_heads)
    s = qh @ kh.transpose(0, 1, 3, 2) / math.sqrt(d)
    if mask is not None:
        s = s + mask
    if causal:
        s = np.where(np.tril(np.ones(s.shape[-2:], bool)), s, -np.inf)
    o = softmax(s) @ vh
    return o.transpose(0, 2, 1, 3).reshape(q.shape)


def rms_norm(x, w, eps=EPS):
    x = x.astype(np.float64)
    return x / np.sqrt((x * x).mean(-1, keepdims=True) + eps) * w


def silu(x):
    return x / (1 + np.exp(-x))


class Graph:
    """Nodes, initializers and constants of one graph, named in order."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits, self.weights = [], [], {}
        self.count = 0

    def weight(self, name, shape, scale=None, offset=0.0, dtype="f32"):
        """An f32 initializer, or a "bf16" one: then weights[name] holds
        the stored (rounded) values in f32."""
        scale = scale if scale is not None else 1 / math.sqrt(shape[0])
        w = (self.rng.standard_normal(shape) * scale + offset).astype(np.float32)
        if dtype == "f32":
            self.inits.append(numpy_helper.from_array(w, name))
        else:
            t = narrow_tensor(w, name, dtype)
            self.inits.append(t)
            bits = np.frombuffer(t.raw_data, np.uint16).astype(np.uint32) << 16
            w = bits.view(np.float32).reshape(shape)
        self.weights[name] = w
        return name

    def const(self, value, dtype=np.int64):
        name = f"const_{len(self.inits)}"
        self.inits.append(numpy_helper.from_array(np.array(value, dtype=dtype), name))
        return name

    def op(self, op_type, inputs, n_out=1, domain="", **attrs):
        self.count += 1
        name = f"/block/{op_type}_{self.count}"
        outs = [f"{name}_out{i}" for i in range(n_out)]
        self.nodes.append(helper.make_node(op_type, inputs, outs, name=name, domain=domain,
                                           **attrs))
        return outs[0] if n_out == 1 else outs

    def model(self, inputs, outputs, opset, ir_version, contrib=False):
        graph = helper.make_graph(self.nodes, "exporter_forms", inputs, outputs,
                                  self.inits)
        opsets = [helper.make_opsetid("", opset)] + [helper.make_opsetid(MS, 1)] * contrib
        m = helper.make_model(graph, opset_imports=opsets,
                              producer_name="parc exporter_forms")
        m.ir_version = ir_version
        return m


# --- torch dynamo, opsets 18-21 ----------------------------------------------


def dynamo_block(g, x, opset, p):
    """One pre-LN block, its weights named p + "ln1.weight" ..."""
    ln1 = g.op("LayerNormalization", [x, g.weight(p + "ln1.weight", [HIDDEN], 0.1, 1.0),
                                      g.weight(p + "ln1.bias", [HIDDEN], 0.1)],
               axis=-1, epsilon=EPS)
    qkv = g.op("Add", [g.op("MatMul", [ln1, g.weight(p + "attn.qkv.weight", [HIDDEN, 3 * HIDDEN])]),
                       g.weight(p + "attn.qkv.bias", [3 * HIDDEN], 0.1)])
    q, k, v = g.op("Split", [qkv], n_out=3, axis=-1, num_outputs=3)
    # [B, S, H] -> [B, heads, S, hd]: 0 copies the input dim (allowzero = 0).
    split_heads = g.const([0, 0, HEADS, HEAD_DIM])

    def heads(t, perm):
        return g.op("Transpose", [g.op("Reshape", [t, split_heads], allowzero=0)], perm=perm)

    scores = g.op("MatMul", [heads(q, [0, 2, 1, 3]), heads(k, [0, 2, 3, 1])])
    scores = g.op("Div", [scores, g.const(math.sqrt(HEAD_DIM), np.float32)])
    ctx = g.op("MatMul", [g.op("Softmax", [scores], axis=-1), heads(v, [0, 2, 1, 3])])
    ctx = g.op("Reshape", [g.op("Transpose", [ctx], perm=[0, 2, 1, 3]),
                           g.const([BATCH, SEQ, HIDDEN])], allowzero=1)
    attn = g.op("Add", [g.op("MatMul", [ctx, g.weight(p + "attn.out.weight", [HIDDEN, HIDDEN])]),
                        g.weight(p + "attn.out.bias", [HIDDEN], 0.1)])
    h = g.op("Add", [x, attn])
    ln2 = g.op("LayerNormalization", [h, g.weight(p + "ln2.weight", [HIDDEN], 0.1, 1.0),
                                      g.weight(p + "ln2.bias", [HIDDEN], 0.1)],
               axis=-1, epsilon=EPS)
    up = g.op("Add", [g.op("MatMul", [ln2, g.weight(p + "mlp.fc1.weight", [HIDDEN, FFN])]),
                      g.weight(p + "mlp.fc1.bias", [FFN], 0.1)])
    if opset >= 20:
        act = g.op("Gelu", [up], approximate="tanh" if opset == 21 else "none")
    else:
        half = g.op("Mul", [up, g.const(0.5, np.float32)])
        e = g.op("Erf", [g.op("Div", [up, g.const(math.sqrt(2), np.float32)])])
        act = g.op("Mul", [half, g.op("Add", [e, g.const(1.0, np.float32)])])
    down = g.op("Add", [g.op("MatMul", [act, g.weight(p + "mlp.fc2.weight", [FFN, HIDDEN])]),
                        g.weight(p + "mlp.fc2.bias", [HIDDEN], 0.1)])
    return g.op("Add", [h, down])


def dynamo_block_reference(w, xv, opset, p):
    ln1 = layer_norm(xv, w[p + "ln1.weight"], w[p + "ln1.bias"])
    qkv_v = ln1 @ w[p + "attn.qkv.weight"] + w[p + "attn.qkv.bias"]
    qv, kv, vv = np.split(qkv_v, 3, axis=-1)
    hv = xv + attention(qv, kv, vv) @ w[p + "attn.out.weight"] + w[p + "attn.out.bias"]
    ln2 = layer_norm(hv, w[p + "ln2.weight"], w[p + "ln2.bias"])
    upv = ln2 @ w[p + "mlp.fc1.weight"] + w[p + "mlp.fc1.bias"]
    actv = gelu(upv, "tanh" if opset == 21 else "none")
    return hv + actv @ w[p + "mlp.fc2.weight"] + w[p + "mlp.fc2.bias"]


def dynamo(opset):
    g = Graph(seed=1800 + opset)
    y = "x"
    for layer in range(LAYERS):
        y = dynamo_block(g, y, opset, f"h.{layer}.")
    # Reductions with axes as an input (opset 18); at 19+ a Cast with the
    # saturate attribute on the way (it only matters for float8 targets).
    if opset >= 19:
        y = g.op("Cast", [g.op("Cast", [y], to=TensorProto.DOUBLE, saturate=1)],
                 to=TensorProto.FLOAT, saturate=1)
    mean = g.op("ReduceMean", [y, g.const([-2])], keepdims=0)
    peak = g.op("ReduceMax", [y, g.const([1])], keepdims=1)
    # Empty axes with noop_with_empty_axes = 1 is the identity.
    peak = g.op("ReduceMin", [peak, g.const([], np.int64)], noop_with_empty_axes=1)
    # An uneven Split-18: 32 features in 5 pieces of ceil(32 / 5) = 7, the
    # last one 4 (not 7, 7, 6, 6, 6).
    first, _, _, _, last = g.op("Split", [mean], n_out=5, axis=1, num_outputs=5)
    ends = g.op("Concat", [first, last], axis=1)
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", SEQ, HIDDEN])]
    outputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None)
               for n in (y, peak, ends)]
    model = g.model(inputs, outputs, opset, IR_VERSIONS[opset])
    spec = {"inputs": {"x": {"shape": [BATCH, SEQ, HIDDEN], "dtype": "float32"}},
            "outputs": [y, peak, ends], "opset": opset,
            "megatron": {"batch": BATCH, "seq": SEQ, "hidden": HIDDEN, "layers": LAYERS,
                         "embedding": False, "lm_head": False}}

    def reference(feeds):
        yv = feeds["x"].astype(np.float64)
        for layer in range(LAYERS):
            yv = dynamo_block_reference(g.weights, yv, opset, f"h.{layer}.")
        meanv = yv.mean(1)
        return [yv, yv.max(1, keepdims=True), np.concatenate([meanv[:, :7], meanv[:, 28:]], 1)]

    return model, spec, reference


# --- keras2onnx / tf2onnx, opset 12 (Einsum) --------------------------------

TF_VOCAB, TF_FFN = 50, 64


def tf_layer_norm(g, x, name):
    """LayerNorm from moments, as TF writes it: Rsqrt as Reciprocal(Sqrt),
    out = x * (gamma * rstd) + (beta - mean * gamma * rstd)."""
    mean = g.op("ReduceMean", [x], axes=[2], keepdims=1)
    diff = g.op("Sub", [x, mean])
    var = g.op("ReduceMean", [g.op("Mul", [diff, diff])], axes=[2], keepdims=1)
    rstd = g.op("Reciprocal", [g.op("Sqrt", [g.op("Add", [var, g.const(1e-12, np.float32)])])])
    scale = g.op("Mul", [rstd, g.weight(name + ".gamma", [HIDDEN], 0.1, 1.0)])
    shift = g.op("Sub", [g.weight(name + ".beta", [HIDDEN], 0.1), g.op("Mul", [mean, scale])])
    return g.op("Add", [g.op("Mul", [x, scale]), shift])


def tensordot(g, x, w, b):
    """x[B, S, K] . w[K, N] as tf.tensordot exports it: the reshapes'
    shapes computed from Shape through ReduceProd, int32 on the way."""
    shape = g.op("Cast", [g.op("Shape", [x])], to=TensorProto.INT32)
    free = g.op("Gather", [shape, g.const([0, 1], np.int32)], axis=0)
    rows = g.op("Unsqueeze", [g.op("ReduceProd", [free], axes=[0], keepdims=0)], axes=[0])
    inner = g.op("Unsqueeze", [g.op("ReduceProd", [g.op("Gather", [shape, g.const([2], np.int32)], axis=0)],
                                    axes=[0], keepdims=0)], axes=[0])
    flat = g.op("Reshape", [x, g.op("Cast", [g.op("Concat", [rows, inner], axis=0)], to=TensorProto.INT64)])
    y = g.op("MatMul", [flat, w])
    out = g.op("Concat", [free, g.const([g.weights[w].shape[1]], np.int32)], axis=0)
    return g.op("Add", [g.op("Reshape", [y, g.op("Cast", [out], to=TensorProto.INT64)]), b])


def tf_layer(g, x, bias, p):
    """One post-LN BERT layer; `bias` the additive [B, 1, 1, S] mask."""
    dense = {}
    for n in ("query", "key", "value"):
        y = tensordot(g, x, g.weight(f"{p}attn.{n}.kernel", [HIDDEN, HIDDEN]),
                      g.weight(f"{p}attn.{n}.bias", [HIDDEN], 0.1))
        # [B, S, heads, hidden / heads]: the head size by integer Div of a
        # computed dim, the batch fixed in the graph.
        hidden = g.op("Gather", [g.op("Shape", [y]), g.const([2])], axis=0)
        head = g.op("Div", [hidden, g.const([HEADS])])
        dense[n] = g.op("Reshape", [y, g.op("Concat", [g.const([BATCH, SEQ, HEADS]), head], axis=0)])
    scores = g.op("Einsum", [dense["key"], dense["query"]], equation="aecd,abcd->acbe")
    scores = g.op("Mul", [scores, g.const(1 / math.sqrt(HEAD_DIM), np.float32)])
    probs = g.op("Softmax", [g.op("Add", [scores, bias])], axis=3)
    ctx = g.op("Einsum", [probs, dense["value"]], equation="acbe,aecd->abcd")
    wo = g.weight(p + "attn.output.kernel", [HIDDEN, HIDDEN])
    wo3 = g.op("Reshape", [wo, g.const([HEADS, HEAD_DIM, HIDDEN])])
    attn = g.op("Add", [g.op("Einsum", [ctx, wo3], equation="abcd,cde->abe"),
                        g.weight(p + "attn.output.bias", [HIDDEN], 0.1)])
    h = tf_layer_norm(g, g.op("Add", [attn, x]), p + "attn.ln")
    up = tensordot(g, h, g.weight(p + "ffn.in.kernel", [HIDDEN, TF_FFN]),
                   g.weight(p + "ffn.in.bias", [TF_FFN], 0.1))
    erf_ = g.op("Erf", [g.op("Mul", [up, g.const(1 / math.sqrt(2), np.float32)])])
    act = g.op("Mul", [g.op("Mul", [up, g.const(0.5, np.float32)]),
                       g.op("Add", [erf_, g.const(1.0, np.float32)])])
    down = tensordot(g, act, g.weight(p + "ffn.out.kernel", [TF_FFN, HIDDEN]),
                     g.weight(p + "ffn.out.bias", [HIDDEN], 0.1))
    return tf_layer_norm(g, g.op("Add", [down, h]), p + "ffn.ln")


def tf_layer_reference(w, xv, maskv, p):
    ln = lambda t, n: layer_norm(t, w[p + n + ".gamma"], w[p + n + ".beta"], 1e-12)
    q, k, v = (xv @ w[f"{p}attn.{n}.kernel"] + w[f"{p}attn.{n}.bias"]
               for n in ("query", "key", "value"))
    hv = ln(attention(q, k, v, maskv) @ w[p + "attn.output.kernel"] + w[p + "attn.output.bias"] + xv,
            "attn.ln")
    upv = hv @ w[p + "ffn.in.kernel"] + w[p + "ffn.in.bias"]
    return ln(gelu(upv) @ w[p + "ffn.out.kernel"] + w[p + "ffn.out.bias"] + hv, "ffn.ln")


def tf_bert():
    g = Graph(seed=1900)
    ids, mask = "input_ids", "attention_mask"
    words = g.op("Gather", [g.weight("embeddings.word", [TF_VOCAB, HIDDEN], 0.5), ids], axis=0)
    positions = g.op("Gather", [g.weight("embeddings.position", [16, HIDDEN], 0.5),
                                g.const(list(range(SEQ)), np.int32)], axis=0)
    out = tf_layer_norm(g, g.op("Add", [words, positions]), "embeddings.ln")
    maskf = g.op("Cast", [g.op("Unsqueeze", [mask], axes=[1, 2])], to=TensorProto.FLOAT)
    bias = g.op("Mul", [g.op("Sub", [g.const(1.0, np.float32), maskf]), g.const(-10000.0, np.float32)])
    for layer in range(LAYERS):
        out = tf_layer(g, out, bias, f"layer_{layer}.")
    logits = g.op("Einsum", [out, g.weight("qa.kernel", [HIDDEN, 2])], equation="abc,cd->abd")
    start, end = g.op("Split", [logits], n_out=2, axis=2, split=[1, 1])
    start, end = (g.op("Squeeze", [t], axes=[2]) for t in (start, end))
    inputs = [helper.make_tensor_value_info(n, TensorProto.INT32, [BATCH, SEQ]) for n in (ids, mask)]
    outputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in (start, end)]
    model = g.model(inputs, outputs, 12, 7)
    spec = {"inputs": {ids: {"shape": [BATCH, SEQ], "dtype": "int32", "ints": TF_VOCAB},
                       mask: {"shape": [BATCH, SEQ], "dtype": "int32", "ints": 2}},
            "outputs": [start, end], "opset": 12,
            # The vocabulary-parallel word embedding; the QA head is no LM head.
            "megatron": {"batch": BATCH, "seq": SEQ, "hidden": HIDDEN, "layers": LAYERS,
                         "embedding": True, "lm_head": False}}

    def reference(feeds):
        w = g.weights
        outv = layer_norm(w["embeddings.word"][feeds[ids]] + w["embeddings.position"][:SEQ],
                          w["embeddings.ln.gamma"], w["embeddings.ln.beta"], 1e-12)
        maskv = (1.0 - feeds[mask].astype(np.float64))[:, None, None, :] * -10000.0
        for layer in range(LAYERS):
            outv = tf_layer_reference(w, outv, maskv, f"layer_{layer}.")
        lg = outv @ w["qa.kernel"]
        return [lg[..., 0], lg[..., 1]]

    return model, spec, reference


# --- torch-style decoders: attention and norms written other ways ----------

DEC_FFN = 64


@dataclasses.dataclass(frozen=True)
class Form:
    """How a Llama-style decoder (pre-RMSNorm, SwiGLU, no biases) is written."""
    seed: int
    heads: int = HEADS
    kv_heads: int = HEADS  # fewer: repeat_kv (Unsqueeze -> Expand -> Reshape)
    scale: str = "div"  # Div by sqrt(d), or "mul_sqrt": Mul on Q and on K^T
    k_perm: str = "0132"  # K^T as Transpose [0,2,1,3] then [0,1,3,2]; "0231": one
    scores: str = "matmul"  # or "einsum"
    norm: str = "reciprocal"  # x * Reciprocal(Sqrt(..)) * w, or "div": x / Sqrt(..) * w
    dtype: str = "f32"  # "bf16": weights stored so, each Cast to f32
    fixed_batch: bool = False  # BATCH written into the Reshape shapes

    @property
    def hidden(self):
        return self.heads * HEAD_DIM


def dec_rms_norm(g, f, x, name):
    """RMSNorm as HF exports it: Pow, ReduceMean (axes input, opset 18),
    Add eps, Sqrt, then Reciprocal and Mul or (f.norm == "div") Div."""
    ms = g.op("ReduceMean", [g.op("Pow", [x, g.const(2.0, np.float32)]), g.const([-1])],
              keepdims=1)
    root = g.op("Sqrt", [g.op("Add", [ms, g.const(EPS, np.float32)])])
    normed = (g.op("Div", [x, root]) if f.norm == "div" else
              g.op("Mul", [x, g.op("Reciprocal", [root])]))
    return g.op("Mul", [normed, g.weight(name, [f.hidden], 0.1, 1.0)])


def dec_linear(g, f, x, name, k, n):
    w = g.weight(name, [k, n], dtype=f.dtype)
    if f.dtype != "f32":
        w = g.op("Cast", [w], to=TensorProto.FLOAT)
    return g.op("MatMul", [x, w])


def dec_attention(g, f, x, p):
    h, kv, d = f.heads, f.kv_heads, HEAD_DIM
    q, k, v = (dec_linear(g, f, x, p + n, f.hidden, heads * d)
               for n, heads in (("q_proj", h), ("k_proj", kv), ("v_proj", kv)))
    batch = BATCH if f.fixed_batch else 0

    def split(t, heads, perm=(0, 2, 1, 3)):
        t = g.op("Reshape", [t, g.const([batch, SEQ if f.fixed_batch else 0, heads, d])])
        return g.op("Transpose", [t], perm=list(perm))

    def repeat(t):  # HF repeat_kv: [B, kv, S, d] -> [B, h, S, d]
        if kv == h:
            return t
        t = g.op("Expand", [g.op("Unsqueeze", [t, g.const([2])]),
                            g.const([BATCH, kv, h // kv, SEQ, d] if f.fixed_batch else
                                    [1, 1, h // kv, 1, 1])])
        return g.op("Reshape", [t, g.const([batch, h, SEQ if f.fixed_batch else -1, d])])

    qh, vh = split(q, h), repeat(split(v, kv))
    if f.scores == "einsum":
        scores = g.op("Einsum", [qh, repeat(split(k, kv))], equation="bhqd,bhkd->bhqk")
        scores = g.op("Mul", [scores, g.const(1 / math.sqrt(d), np.float32)])
    else:
        # [B, S, h, d] -> [B, h, d, S] in one Transpose (no repeat_kv then).
        assert f.k_perm == "0132" or kv == h
        kt = (split(k, kv, (0, 2, 3, 1)) if f.k_perm == "0231" else
              g.op("Transpose", [repeat(split(k, kv))], perm=[0, 1, 3, 2]))
        if f.scale == "mul_sqrt":
            root = g.const(d ** -0.25, np.float32)
            scores = g.op("MatMul", [g.op("Mul", [qh, root]), g.op("Mul", [kt, root])])
        else:
            scores = g.op("Div", [g.op("MatMul", [qh, kt]), g.const(math.sqrt(d), np.float32)])
    probs = g.op("Softmax", [scores], axis=-1)
    ctx = (g.op("Einsum", [probs, vh], equation="bhqk,bhkd->bhqd") if f.scores == "einsum"
           else g.op("MatMul", [probs, vh]))
    ctx = g.op("Reshape", [g.op("Transpose", [ctx], perm=[0, 2, 1, 3]),
                           g.const([batch, SEQ if f.fixed_batch else 0, h * d])])
    return dec_linear(g, f, ctx, p + "o_proj", h * d, f.hidden)


def decoder(f):
    g = Graph(seed=f.seed)
    x = "x"
    for layer in range(LAYERS):
        p = f"layers.{layer}."
        x = g.op("Add", [x, dec_attention(g, f, dec_rms_norm(g, f, x, p + "input_layernorm"),
                                          p + "self_attn.")])
        n = dec_rms_norm(g, f, x, p + "post_attention_layernorm")
        gate = dec_linear(g, f, n, p + "mlp.gate_proj", f.hidden, DEC_FFN)
        act = g.op("Mul", [g.op("Mul", [gate, g.op("Sigmoid", [gate])]),
                           dec_linear(g, f, n, p + "mlp.up_proj", f.hidden, DEC_FFN)])
        x = g.op("Add", [x, dec_linear(g, f, act, p + "mlp.down_proj", DEC_FFN, f.hidden)])
    y = dec_rms_norm(g, f, x, "norm")
    shape = [BATCH if f.fixed_batch else "batch", SEQ, f.hidden]
    model = g.model([helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                    [helper.make_tensor_value_info(y, TensorProto.FLOAT, None)], 18, 8)
    spec = {"inputs": {"x": {"shape": [BATCH, SEQ, f.hidden], "dtype": "float32"}},
            "outputs": [y], "opset": 18,
            "megatron": {"batch": BATCH, "seq": SEQ, "hidden": f.hidden, "layers": LAYERS,
                         "embedding": False, "lm_head": False},
            # What each linear's split dim counts (heads, key/value heads,
            # MLP features): --tp N keeps ceil(units / N) of them per rank
            # (zero-padded heads when N does not divide), the norms whole.
            "split_units": {"q_proj": f.heads, "o_proj": f.heads, "k_proj": f.kv_heads,
                            "v_proj": f.kv_heads, "gate_proj": DEC_FFN, "up_proj": DEC_FFN,
                            "down_proj": DEC_FFN}}

    def reference(feeds):
        w, xv = g.weights, feeds["x"].astype(np.float64)
        for layer in range(LAYERS):
            p = f"layers.{layer}."
            n = rms_norm(xv, w[p + "input_layernorm"])
            q, k, v = (n @ w[f"{p}self_attn.{m}"] for m in ("q_proj", "k_proj", "v_proj"))
            att = attention(q, k, v, heads=f.heads, kv_heads=f.kv_heads)
            xv = xv + att @ w[p + "self_attn.o_proj"]
            n = rms_norm(xv, w[p + "post_attention_layernorm"])
            act = silu(n @ w[p + "mlp.gate_proj"]) * (n @ w[p + "mlp.up_proj"])
            xv = xv + act @ w[p + "mlp.down_proj"]
        return [rms_norm(xv, w["norm"])]

    return model, spec, reference


FORMS = {
    "sdpa_div": Form(seed=2001),
    "sdpa_mul_sqrt": Form(seed=2002, scale="mul_sqrt", k_perm="0231"),
    "einsum_attn": Form(seed=2003, scores="einsum"),
    "repeat_kv": Form(seed=2004, kv_heads=2),
    "rmsnorm_div": Form(seed=2005, norm="div"),
    "bf16_ckpt": Form(seed=2006, dtype="bf16"),
    "uneven_heads": Form(seed=2007, heads=6, kv_heads=6),
    "fixed_batch": Form(seed=2008, fixed_batch=True),
}
# --- onnxruntime-genai's model builder ---------------------------------------

GENAI_HEADS, GENAI_KV, GENAI_D, GENAI_VOCAB, GENAI_BLOCK = 4, 2, 16, 64, 16
GENAI_HIDDEN = GENAI_HEADS * GENAI_D  # onnxruntime's do_rotary wants d % 16 == 0


def genai_llama():
    """Embedding -> per layer SkipSimplifiedLayerNormalization (the first
    layer: SimplifiedLayerNormalization), q/k/v/o and gate/up/down as 4-bit
    MatMulNBits (contrib_models.quantise4), GroupQueryAttention with
    do_rotary on a prompt (no past), and an f32 LM head. seqlens_k is
    ReduceSum(attention_mask) - 1, total_sequence_length the mask's width."""
    g = Graph(seed=2100)
    ids, mask, eps = "input_ids", "attention_mask", 1e-6
    hid, d = GENAI_HIDDEN, GENAI_D
    dequantised = {}

    def nbits(x, name, k, n):
        b, scales, _, w = quantise4(g.rng, k, n, GENAI_BLOCK, zero_points=False)
        g.inits += [numpy_helper.from_array(b, name + ".qweight"),
                    numpy_helper.from_array(scales, name + ".scales")]
        dequantised[name] = w
        return g.op("MatMulNBits", [x, name + ".qweight", name + ".scales"], domain=MS,
                    K=k, N=n, bits=4, block_size=GENAI_BLOCK)

    angles = np.outer(np.arange(16), 1.0 / (10000 ** (np.arange(0, d, 2) / d)))
    cos, sin = (numpy_helper.from_array(f(angles).astype(np.float32), n)
                for f, n in ((np.cos, "cos_cache"), (np.sin, "sin_cache")))
    g.inits += [cos, sin]
    lengths = g.op("Sub", [g.op("ReduceSum", [mask, g.const([1])], keepdims=0), g.const([1])])
    seqlens = g.op("Cast", [lengths], to=TensorProto.INT32)
    total = g.op("Cast", [g.op("Gather", [g.op("Shape", [mask]), g.const(1)], axis=0)],
                 to=TensorProto.INT32)
    x = g.op("Gather", [g.weight("embed_tokens", [GENAI_VOCAB, hid], 0.5), ids], axis=0)
    resid, n = x, g.op("SimplifiedLayerNormalization", [x, g.weight("layers.0.ln1", [hid], 0.1, 1.0)],
                       epsilon=eps)
    for layer in range(LAYERS):
        p = f"layers.{layer}."
        if layer:
            n, _, _, resid = g.op("SkipSimplifiedLayerNormalization",
                                  [x, resid, g.weight(p + "ln1", [hid], 0.1, 1.0)],
                                  n_out=4, domain=MS, epsilon=eps)
        q, k, v = (nbits(n, p + m, hid, heads * d) for m, heads in
                   (("q_proj", GENAI_HEADS), ("k_proj", GENAI_KV), ("v_proj", GENAI_KV)))
        att = g.op("GroupQueryAttention", [q, k, v, "", "", seqlens, total, "cos_cache", "sin_cache"],
                   n_out=3, domain=MS, num_heads=GENAI_HEADS, kv_num_heads=GENAI_KV,
                   do_rotary=1)[0]
        n, _, _, resid = g.op("SkipSimplifiedLayerNormalization",
                              [nbits(att, p + "o_proj", hid, hid), resid,
                               g.weight(p + "ln2", [hid], 0.1, 1.0)], n_out=4, domain=MS, epsilon=eps)
        gate = nbits(n, p + "gate_proj", hid, DEC_FFN)
        act = g.op("Mul", [g.op("Mul", [gate, g.op("Sigmoid", [gate])]),
                           nbits(n, p + "up_proj", hid, DEC_FFN)])
        x = nbits(act, p + "down_proj", DEC_FFN, hid)
    n = g.op("SkipSimplifiedLayerNormalization", [x, resid, g.weight("norm", [hid], 0.1, 1.0)],
             n_out=4, domain=MS, epsilon=eps)[0]
    logits = g.op("MatMul", [n, g.weight("lm_head", [hid, GENAI_VOCAB])])
    # GroupQueryAttention's unused present outputs stay unnamed.
    for node in g.nodes:
        if node.op_type == "GroupQueryAttention":
            node.output[1] = node.output[2] = ""
        if node.op_type == "SkipSimplifiedLayerNormalization":
            node.output[1] = node.output[2] = ""
    inputs = [helper.make_tensor_value_info(t, TensorProto.INT64, ["batch", "seq"])
              for t in (ids, mask)]
    model = g.model(inputs, [helper.make_tensor_value_info(logits, TensorProto.FLOAT, None)],
                    21, 10, contrib=True)
    spec = {"inputs": {ids: {"shape": [BATCH, SEQ], "dtype": "int64", "ints": GENAI_VOCAB},
                       mask: {"shape": [BATCH, SEQ], "dtype": "int64", "ones": True}},
            "outputs": [logits], "opset": 21,
            "megatron": {"batch": BATCH, "seq": SEQ, "hidden": hid, "layers": LAYERS,
                         "vocab": GENAI_VOCAB, "embedding": True, "lm_head": True}}

    def reference(feeds):
        w, dq = g.weights, dequantised
        rotary = (np.cos(angles[:SEQ]), np.sin(angles[:SEQ]))
        xv = w["embed_tokens"][feeds[ids]].astype(np.float64)
        resid_v = xv
        for layer in range(LAYERS):
            p = f"layers.{layer}."
            if layer:
                resid_v = resid_v + xv
            n = rms_norm(resid_v, w[p + "ln1"], eps)
            q, k, v = (n @ dq[p + m] for m in ("q_proj", "k_proj", "v_proj"))
            att = attention(q, k, v, heads=GENAI_HEADS, kv_heads=GENAI_KV, causal=True,
                            rotary=rotary)
            resid_v = resid_v + att @ dq[p + "o_proj"]
            n = rms_norm(resid_v, w[p + "ln2"], eps)
            xv = (silu(n @ dq[p + "gate_proj"]) * (n @ dq[p + "up_proj"])) @ dq[p + "down_proj"]
        return [rms_norm(resid_v + xv, w["norm"], eps) @ w["lm_head"]]

    return model, spec, reference


MODELS = {f"dynamo{v}": (lambda v=v: dynamo(v)) for v in (18, 19, 20, 21)}
MODELS["tf_bert"] = tf_bert
MODELS.update({n: (lambda f=f: decoder(f)) for n, f in FORMS.items()})
MODELS["genai_llama"] = genai_llama


def build(name):
    """(model, spec, reference) of a model by name."""
    return MODELS[name]()


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--out", required=True)
    p.add_argument("--only", nargs="*", choices=sorted(MODELS))
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for name in args.only or sorted(MODELS):
        model, spec, _ = build(name)
        path = os.path.join(args.out, name + ".onnx")
        with open(path + ".tmp", "wb") as f:
            f.write(model.SerializeToString())
        os.replace(path + ".tmp", path)
        with open(os.path.join(args.out, name + ".json"), "w") as f:
            json.dump(spec, f, indent=1)
        print(path)


if __name__ == "__main__":
    main()
