#!/usr/bin/python3
"""Self-check for the models written by generate.py.

For every DIR/<name>.onnx (with its <name>.json): run the ONNX checker and
strict shape inference, then evaluate the graph with a small numpy
interpreter (onnx 1.12 has no onnx.reference) to confirm that it

  * produces finite outputs of the declared shapes at the config's sizes,
  * still runs at another batch and sequence length (the axes are dynamic),
  * is causal (decoders: changing the last tokens leaves earlier logits
    alone) or honours input_mask (BERT: masked tokens reach no one else).

Agreement with onnxruntime is tested elsewhere; this proves the generated
graphs are sound with nothing but python3-onnx and python3-numpy.

    /usr/bin/python3 examples/models/check_generated.py DIR
"""

import glob
import json
import math
import os
import sys

import numpy as np
import onnx
from onnx import checker, helper, numpy_helper, shape_inference


def _np_type(elem_type):
    try:
        return helper.tensor_dtype_to_np_dtype(elem_type)
    except AttributeError:  # onnx < 1.13
        return onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[elem_type]


def _slice(x, starts, ends, axes, steps):
    index = [slice(None)] * x.ndim
    for s, e, a, st in zip(starts, ends, axes, steps):
        index[int(a)] = slice(int(s), int(e), int(st))
    return x[tuple(index)]


def _reshape(x, shape):
    # ONNX Reshape: 0 copies the input dim (allowzero=0), -1 is inferred.
    return x.reshape([x.shape[i] if d == 0 else int(d)
                      for i, d in enumerate(shape)])


def _topk(x, k, axis=-1, largest=1, sorted=1):
    assert largest and sorted, "only largest, sorted TopK is emitted"
    # A stable sort keeps ONNX's tie rule: the lower index wins.
    order = np.argsort(-x, axis=axis, kind="stable")
    idx = np.take(order, np.arange(int(k[0])), axis=axis)
    return np.take_along_axis(x, idx, axis=axis), idx.astype(np.int64)


def _scatter_elements(data, indices, updates, axis=0):
    out = data.copy()
    np.put_along_axis(out, indices, updates, axis=axis)
    return out


def _softmax(x, axis=-1):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


def _gemm(a, b, c=None, alpha=1.0, beta=1.0, transA=0, transB=0):
    y = alpha * ((a.T if transA else a) @ (b.T if transB else b))
    return y if c is None else y + beta * c


def _constant_of_shape(shape, value):
    value = numpy_helper.to_array(value)
    return np.full(shape, value.item(), value.dtype)


def _axes(axes):
    return tuple(int(a) for a in axes)


# (inputs..., **attributes) -> output or tuple of outputs. Only the opset
# 13-17 forms of the ops generate.py emits are needed.
OPS = {
    "Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide,
    "Equal": np.equal,
    "Pow": np.power, "MatMul": np.matmul, "Neg": np.negative,
    "Sqrt": np.sqrt, "Reciprocal": np.reciprocal, "Tanh": np.tanh,
    "Erf": np.vectorize(math.erf, otypes=[np.float32]),
    "Sigmoid": lambda x: 1 / (1 + np.exp(-x)),
    "Softmax": _softmax, "Where": np.where, "Gemm": _gemm,
    "Shape": lambda x: np.array(x.shape, np.int64),
    "Gather": lambda x, i, axis=0: np.take(x, i, axis=axis),
    "Unsqueeze": lambda x, axes: np.expand_dims(x, _axes(axes)),
    "Concat": lambda *xs, axis: np.concatenate(xs, axis=axis),
    "Reshape": _reshape, "Slice": _slice,
    "Transpose": lambda x, perm: np.transpose(x, perm),
    "Split": lambda x, split, axis=0: tuple(
        np.split(x, np.cumsum(split)[:-1], axis=axis)),
    "Expand": lambda x, shape: x * np.ones(shape, x.dtype),
    "Range": lambda start, limit, delta: np.arange(start, limit, delta,
                                                   dtype=start.dtype),
    "Cast": lambda x, to: x.astype(_np_type(to)),
    "ConstantOfShape": _constant_of_shape,
    "ReduceMean": lambda x, axes, keepdims=1: x.mean(
        axis=_axes(axes), keepdims=bool(keepdims)),
    "ReduceSum": lambda x, axes, keepdims=1: x.sum(
        axis=_axes(axes), keepdims=bool(keepdims)),
    "TopK": _topk, "ScatterElements": _scatter_elements,
    "OneHot": lambda i, depth, values, axis=-1: np.where(
        np.expand_dims(i % depth, axis) == np.arange(depth).reshape(
            (-1,) + (1,) * (-axis - 1 if axis < 0 else i.ndim - axis)),
        values[1], values[0]),
}


def run(model, feeds):
    """Evaluates the graph in node order (generate.py emits it sorted)."""
    env = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    env.update(feeds)
    for node in model.graph.node:
        attrs = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        if node.op_type == "Constant":
            outs = numpy_helper.to_array(attrs["value"])
        else:
            outs = OPS[node.op_type](*(env[i] for i in node.input), **attrs)
        outs = outs if isinstance(outs, tuple) else (outs,)
        for name, value in zip(node.output, outs):
            env[name] = np.asarray(value)
    return {o.name: env[o.name] for o in model.graph.output}


def make_feeds(meta, batch, seq, rng):
    cfg = meta["config"]
    high = {"input_ids": cfg["vocab"], "token_type_ids": cfg["type_vocab"]}
    feeds = {name: rng.integers(0, high.get(name, 1), (batch, seq))
             for name in meta["inputs"]}
    if "input_mask" in feeds:
        feeds["input_mask"][:] = 1
    return feeds


def check(path):
    with open(path[:-len(".onnx")] + ".json") as f:
        meta = json.load(f)
    cfg = meta["config"]
    model = onnx.load(path)
    checker.check_model(model, full_check=True)
    shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
    rng = np.random.default_rng(0)
    first = next(iter(meta["outputs"]))
    notes = []

    for batch, seq in ((cfg["batch"], cfg["seq"]), (1, cfg["seq"] // 2 + 1)):
        outs = run(model, make_feeds(meta, batch, seq, rng))
        sizes = {"batch": batch, "seq": seq}
        for name, spec in meta["outputs"].items():
            want = tuple(sizes.get(d, d) for d in spec["shape"])
            if outs[name].shape != want:
                raise AssertionError(
                    f"{name}: shape {outs[name].shape}, want {want}")
            if not np.isfinite(outs[name]).all():
                raise AssertionError(f"{name}: non-finite values")
        notes.append(f"{batch}x{seq}")
    notes.append(f"{first} std {outs[first].std():.3f}")

    # Change the last tokens: positions that must not see them stay put.
    tail = 3
    feeds = make_feeds(meta, cfg["batch"], cfg["seq"], rng)
    if "input_mask" in feeds:
        feeds["input_mask"][:, -tail:] = 0
    base = run(model, feeds)[first]
    feeds["input_ids"][:, -tail:] = \
        (feeds["input_ids"][:, -tail:] + 1) % cfg["vocab"]
    moved = run(model, feeds)[first]
    if not np.allclose(base[:, :-tail], moved[:, :-tail], atol=1e-5):
        raise AssertionError("earlier positions see later or masked tokens")
    if np.allclose(base[:, -tail:], moved[:, -tail:], atol=1e-5):
        raise AssertionError("changed tokens had no effect")
    notes.append("mask ok" if "input_mask" in feeds else "causal ok")
    return ", ".join(notes)


def main(argv):
    if len(argv) != 2:
        print(f"usage: {argv[0]} DIR", file=sys.stderr)
        return 2
    paths = sorted(glob.glob(os.path.join(argv[1], "*.onnx")))
    if not paths:
        print(f"{argv[0]}: no .onnx files in {argv[1]}", file=sys.stderr)
        return 1
    failed = 0
    for path in paths:
        name = os.path.basename(path)
        try:
            print(f"{name}: ok ({check(path)})")
        except Exception as e:  # report every model, then fail
            failed += 1
            print(f"{name}: FAILED: {type(e).__name__}: {e}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
