#!/usr/bin/python3
"""Small models in the forms other exporters emit, each with a numpy reference.

  dynamo18 .. dynamo21   one pre-LN transformer block as the torch dynamo
                         exporter writes it at opsets 18-21: the
                         LayerNormalization op, a fused QKV split with
                         Split(num_outputs=3), Reduce* with axes as an
                         input, Reshape with allowzero, Cast(saturate) at 19+,
                         the Gelu op at 20+ (erf GELU below), IR 8 / 9 / 9 / 10
  tf_bert                a post-LN BERT layer as keras2onnx / tf2onnx write
                         it: Tensordot reshapes computed by
                         Shape -> Cast -> Gather -> ReduceProd -> Unsqueeze ->
                         Concat -> Cast -> Reshape, LayerNorm from moments,
                         Rsqrt as Reciprocal(Sqrt), attention scores with
                         Einsum, int32 inputs and the batch fixed in the graph

Every model is <name>.onnx plus <name>.json (inputs and their value ranges);
`reference(name, inputs)` computes the outputs in numpy from the same weights,
written from the formulas, not from the graph, so parc and onnxruntime are
both checked against it.

libonnx / python3-onnx 1.12 know opsets up to 17, so these graphs are made
with onnx.helper without its checker; onnxruntime loads and checks them.

    /usr/bin/python3 examples/models/exporter_forms.py --out DIR [--only NAME ...]
"""

import argparse
import json
import math
import os

import numpy as np
from onnx import TensorProto, helper, numpy_helper

HIDDEN, HEADS, FFN, BATCH, SEQ = 32, 4, 64, 2, 8
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


def attention(q, k, v, mask=None):
    """q, k, v [B, S, H] -> [B, S, H] over HEADS heads."""
    def heads(t):
        return t.reshape(t.shape[0], t.shape[1], HEADS, HEAD_DIM).transpose(0, 2, 1, 3)
    s = heads(q) @ heads(k).transpose(0, 1, 3, 2) / math.sqrt(HEAD_DIM)
    if mask is not None:
        s = s + mask
    o = softmax(s) @ heads(v)
    return o.transpose(0, 2, 1, 3).reshape(q.shape)


class Graph:
    """Nodes, initializers and constants of one graph, named in order."""

    def __init__(self, seed):
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits, self.weights = [], [], {}
        self.count = 0

    def weight(self, name, shape, scale=None, offset=0.0):
        scale = scale if scale is not None else 1 / math.sqrt(shape[0])
        w = (self.rng.standard_normal(shape) * scale + offset).astype(np.float32)
        self.inits.append(numpy_helper.from_array(w, name))
        self.weights[name] = w
        return name

    def const(self, value, dtype=np.int64):
        name = f"const_{len(self.inits)}"
        self.inits.append(numpy_helper.from_array(np.array(value, dtype=dtype), name))
        return name

    def op(self, op_type, inputs, n_out=1, **attrs):
        self.count += 1
        name = f"/block/{op_type}_{self.count}"
        outs = [f"{name}_out{i}" for i in range(n_out)]
        self.nodes.append(helper.make_node(op_type, inputs, outs, name=name, **attrs))
        return outs[0] if n_out == 1 else outs

    def model(self, inputs, outputs, opset, ir_version):
        graph = helper.make_graph(self.nodes, "exporter_forms", inputs, outputs,
                                  self.inits)
        m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="parc exporter_forms")
        m.ir_version = ir_version
        return m


# --- torch dynamo, opsets 18-21 ----------------------------------------------


def dynamo(opset):
    g = Graph(seed=1800 + opset)
    x = "x"
    ln1 = g.op("LayerNormalization", [x, g.weight("ln1.weight", [HIDDEN], 0.1, 1.0),
                                      g.weight("ln1.bias", [HIDDEN], 0.1)],
               axis=-1, epsilon=EPS)
    qkv = g.op("Add", [g.op("MatMul", [ln1, g.weight("attn.qkv.weight", [HIDDEN, 3 * HIDDEN])]),
                       g.weight("attn.qkv.bias", [3 * HIDDEN], 0.1)])
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
    attn = g.op("Add", [g.op("MatMul", [ctx, g.weight("attn.out.weight", [HIDDEN, HIDDEN])]),
                        g.weight("attn.out.bias", [HIDDEN], 0.1)])
    h = g.op("Add", [x, attn])
    ln2 = g.op("LayerNormalization", [h, g.weight("ln2.weight", [HIDDEN], 0.1, 1.0),
                                      g.weight("ln2.bias", [HIDDEN], 0.1)],
               axis=-1, epsilon=EPS)
    up = g.op("Add", [g.op("MatMul", [ln2, g.weight("mlp.fc1.weight", [HIDDEN, FFN])]),
                      g.weight("mlp.fc1.bias", [FFN], 0.1)])
    if opset >= 20:
        act = g.op("Gelu", [up], approximate="tanh" if opset == 21 else "none")
    else:
        half = g.op("Mul", [up, g.const(0.5, np.float32)])
        e = g.op("Erf", [g.op("Div", [up, g.const(math.sqrt(2), np.float32)])])
        act = g.op("Mul", [half, g.op("Add", [e, g.const(1.0, np.float32)])])
    down = g.op("Add", [g.op("MatMul", [act, g.weight("mlp.fc2.weight", [FFN, HIDDEN])]),
                        g.weight("mlp.fc2.bias", [HIDDEN], 0.1)])
    y = g.op("Add", [h, down])
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
            "outputs": [y, peak, ends], "opset": opset}

    def reference(feeds):
        w = g.weights
        xv = feeds["x"].astype(np.float64)
        qkv_v = layer_norm(xv, w["ln1.weight"], w["ln1.bias"]) @ w["attn.qkv.weight"] + w["attn.qkv.bias"]
        qv, kv, vv = np.split(qkv_v, 3, axis=-1)
        hv = xv + attention(qv, kv, vv) @ w["attn.out.weight"] + w["attn.out.bias"]
        upv = layer_norm(hv, w["ln2.weight"], w["ln2.bias"]) @ w["mlp.fc1.weight"] + w["mlp.fc1.bias"]
        actv = gelu(upv, "tanh" if opset == 21 else "none")
        yv = hv + actv @ w["mlp.fc2.weight"] + w["mlp.fc2.bias"]
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


def tf_bert():
    g = Graph(seed=1900)
    ids, mask = "input_ids", "attention_mask"
    words = g.op("Gather", [g.weight("embeddings.word", [TF_VOCAB, HIDDEN], 0.5), ids], axis=0)
    positions = g.op("Gather", [g.weight("embeddings.position", [16, HIDDEN], 0.5),
                                g.const(list(range(SEQ)), np.int32)], axis=0)
    x = tf_layer_norm(g, g.op("Add", [words, positions]), "embeddings.ln")
    dense = {}
    for n in ("query", "key", "value"):
        y = tensordot(g, x, g.weight(f"attn.{n}.kernel", [HIDDEN, HIDDEN]),
                      g.weight(f"attn.{n}.bias", [HIDDEN], 0.1))
        # [B, S, heads, hidden / heads]: the head size by integer Div of a
        # computed dim, the batch fixed in the graph.
        hidden = g.op("Gather", [g.op("Shape", [y]), g.const([2])], axis=0)
        head = g.op("Div", [hidden, g.const([HEADS])])
        dense[n] = g.op("Reshape", [y, g.op("Concat", [g.const([BATCH, SEQ, HEADS]), head], axis=0)])
    scores = g.op("Einsum", [dense["key"], dense["query"]], equation="aecd,abcd->acbe")
    scores = g.op("Mul", [scores, g.const(1 / math.sqrt(HEAD_DIM), np.float32)])
    maskf = g.op("Cast", [g.op("Unsqueeze", [mask], axes=[1, 2])], to=TensorProto.FLOAT)
    bias = g.op("Mul", [g.op("Sub", [g.const(1.0, np.float32), maskf]), g.const(-10000.0, np.float32)])
    probs = g.op("Softmax", [g.op("Add", [scores, bias])], axis=3)
    ctx = g.op("Einsum", [probs, dense["value"]], equation="acbe,aecd->abcd")
    wo = g.weight("attn.output.kernel", [HIDDEN, HIDDEN])
    wo3 = g.op("Reshape", [wo, g.const([HEADS, HEAD_DIM, HIDDEN])])
    attn = g.op("Add", [g.op("Einsum", [ctx, wo3], equation="abcd,cde->abe"),
                        g.weight("attn.output.bias", [HIDDEN], 0.1)])
    h = tf_layer_norm(g, g.op("Add", [attn, x]), "attn.ln")
    up = tensordot(g, h, g.weight("ffn.in.kernel", [HIDDEN, TF_FFN]), g.weight("ffn.in.bias", [TF_FFN], 0.1))
    erf_ = g.op("Erf", [g.op("Mul", [up, g.const(1 / math.sqrt(2), np.float32)])])
    act = g.op("Mul", [g.op("Mul", [up, g.const(0.5, np.float32)]),
                       g.op("Add", [erf_, g.const(1.0, np.float32)])])
    down = tensordot(g, act, g.weight("ffn.out.kernel", [TF_FFN, HIDDEN]), g.weight("ffn.out.bias", [HIDDEN], 0.1))
    out = tf_layer_norm(g, g.op("Add", [down, h]), "ffn.ln")
    logits = g.op("Einsum", [out, g.weight("qa.kernel", [HIDDEN, 2])], equation="abc,cd->abd")
    start, end = g.op("Split", [logits], n_out=2, axis=2, split=[1, 1])
    start, end = (g.op("Squeeze", [t], axes=[2]) for t in (start, end))
    inputs = [helper.make_tensor_value_info(n, TensorProto.INT32, [BATCH, SEQ]) for n in (ids, mask)]
    outputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in (start, end)]
    model = g.model(inputs, outputs, 12, 7)
    spec = {"inputs": {ids: {"shape": [BATCH, SEQ], "dtype": "int32", "ints": TF_VOCAB},
                       mask: {"shape": [BATCH, SEQ], "dtype": "int32", "ints": 2}},
            "outputs": [start, end], "opset": 12}

    def reference(feeds):
        w = g.weights
        ln = lambda t, n: layer_norm(t, w[n + ".gamma"], w[n + ".beta"], 1e-12)
        xv = ln(w["embeddings.word"][feeds[ids]] + w["embeddings.position"][:SEQ], "embeddings.ln")
        q, k, v = (xv @ w[f"attn.{n}.kernel"] + w[f"attn.{n}.bias"] for n in ("query", "key", "value"))
        maskv = (1.0 - feeds[mask].astype(np.float64))[:, None, None, :] * -10000.0
        hv = ln(attention(q, k, v, maskv) @ w["attn.output.kernel"] + w["attn.output.bias"] + xv, "attn.ln")
        upv = hv @ w["ffn.in.kernel"] + w["ffn.in.bias"]
        outv = ln(gelu(upv) @ w["ffn.out.kernel"] + w["ffn.out.bias"] + hv, "ffn.ln")
        lg = outv @ w["qa.kernel"]
        return [lg[..., 0], lg[..., 1]]

    return model, spec, reference


MODELS = {f"dynamo{v}": (lambda v=v: dynamo(v)) for v in (18, 19, 20, 21)}
MODELS["tf_bert"] = tf_bert


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
