"""An MLP y = relu(x @ W1 + b1) @ W2 + b2 with every initializer in ONNX
external data (size_threshold=0), and independent checks of what parc makes
of it.

  make DIR [embedded|bf16-stored]
                    DIR/mlp.onnx + DIR/mlp.onnx.data, DIR/x.npy, DIR/y.npy
                    (y computed here with numpy); `embedded`: the
                    initializers inside mlp.onnx (raw_data), no data file;
                    `bf16-stored`: embedded as BF16 (numpy's rounding of the
                    f32 weights), each cast to float before use
  check OUT TP DIR RES [bf16]
                    the shards in OUT hold, per rank, the numpy slices of
                    W1, b1 (columns) and W2 (rows), the ffn of 18 padded
                    with zero features to a multiple of TP; prints the
                    manifest's collective bytes, one line per rank and
                    whether RES/y.npy (parc-run's) matches DIR/y.npy.
                    `bf16` (a --dtype bf16 compile): the slices as BF16,
                    rounded by numpy here (to nearest, ties to even, on the
                    f32 bits), and the output within bf16's tolerance
"""
import json
import os
import struct
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HIDDEN, FFN, BATCH = 8, 18, 2


def weights():
    rng = np.random.default_rng(7)
    return {"W1": rng.standard_normal((HIDDEN, FFN)).astype(np.float32),
            "b1": rng.standard_normal(FFN).astype(np.float32),
            "W2": rng.standard_normal((FFN, HIDDEN)).astype(np.float32),
            "b2": rng.standard_normal(HIDDEN).astype(np.float32)}


def bf16_initializer(name, a):
    t = TensorProto(name=name, data_type=TensorProto.BFLOAT16, dims=a.shape)
    t.raw_data = bf16_bits(a).tobytes()
    return t


def make(d, form=None):
    w = weights()
    stored = form == "bf16-stored"
    use = (lambda k: k + "_f32") if stored else (lambda k: k)
    nodes = [helper.make_node("Cast", [k], [use(k)], name=k + "/Cast",
                              to=TensorProto.FLOAT) for k in w] if stored else []
    nodes += [helper.make_node("MatMul", ["x", use("W1")], ["h"], name="fc1/MatMul"),
              helper.make_node("Add", ["h", use("b1")], ["hb"], name="fc1/Add"),
              helper.make_node("Relu", ["hb"], ["a"], name="act/Relu"),
              helper.make_node("MatMul", ["a", use("W2")], ["o"], name="fc2/MatMul"),
              helper.make_node("Add", ["o", use("b2")], ["y"], name="fc2/Add")]
    graph = helper.make_graph(
        nodes, "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [BATCH, HIDDEN])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [BATCH, HIDDEN])],
        [bf16_initializer(k, v) if stored else numpy_helper.from_array(v, k)
         for k, v in w.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    onnx.checker.check_model(model)
    os.makedirs(d, exist_ok=True)
    if form:
        onnx.save(model, os.path.join(d, "mlp.onnx"))
    else:
        onnx.save(model, os.path.join(d, "mlp.onnx"), save_as_external_data=True,
                  location="mlp.onnx.data", size_threshold=0)
    x = np.random.default_rng(3).standard_normal((BATCH, HIDDEN)).astype(np.float32)
    y = np.maximum(x @ w["W1"] + w["b1"], 0) @ w["W2"] + w["b2"]
    np.save(os.path.join(d, "x.npy"), x)
    np.save(os.path.join(d, "y.npy"), y)


def bf16_bits(a):
    """numpy's own round to nearest even of f32 to bf16 (no NaNs here)."""
    u = np.ascontiguousarray(a, np.float32).view(np.uint32).astype(np.uint64)
    return ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)


def tensors(path, dtype="F32"):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    header.pop("__metadata__")
    out = {}
    for name, t in header.items():
        begin, end = t["data_offsets"]
        if t["dtype"] != dtype:
            continue  # not one of the checked weights (those must be there)
        kind = np.uint16 if dtype == "BF16" else np.float32
        out[name] = np.frombuffer(data[begin:end], kind).reshape(t["shape"])
    return out


def check(out, tp, d, res, dtype=None):
    tp = int(tp)
    bf16 = dtype == "bf16"
    w = weights()
    padded = -(-FFN // tp) * tp
    part = padded // tp
    pad = lambda a, axis: np.concatenate(
        [a, np.zeros_like(a.take(range(padded - FFN), axis=axis))], axis=axis)
    manifest = json.load(open(os.path.join(out, "manifest.json")))
    sent = sum(c["bytes"] for c in manifest["comm_per_collective"].values())
    print(f"collective bytes {sent}")
    for rank in range(tp):
        got = tensors(os.path.join(out, "weights", f"rank{rank}.safetensors"),
                      "BF16" if bf16 else "F32")
        cols = slice(rank * part, (rank + 1) * part)
        want = {"W1.part": pad(w["W1"], 1)[:, cols], "b1.part": pad(w["b1"], 0)[cols],
                "W2.part": pad(w["W2"], 0)[cols, :]}
        for name, value in want.items():
            if bf16:
                value = bf16_bits(value)
            # An embedded weight padded in the IR is a blob of its own.
            padded_name = name.replace(".part", ".padded.part")
            if name not in got and padded_name in got:
                name = padded_name
            if name not in got:
                sys.exit(f"rank {rank}: no tensor '{name}' in {sorted(got)}")
            if got[name].shape != value.shape or not np.array_equal(got[name], value):
                sys.exit(f"rank {rank}: '{name}' {got[name].shape} is not the numpy slice "
                         f"{value.shape}")
        print(f"rank {rank}: W1, b1, W2 are the numpy slices of {part} of {padded} features"
              + (" (bf16)" if bf16 else ""))
    y = np.load(os.path.join(d, "y.npy"))
    got = np.load(os.path.join(res, "y.npy"))
    err = np.abs(got - y).max() / np.abs(y).max()
    # bf16 keeps 8 bits of mantissa: weights and activations rounded at
    # 2^-9 relative each, over two products of 8 and 18 terms.
    tol = "0.03" if bf16 else "1e-5"
    print(f"output within {tol} of numpy: {err <= float(tol)}")


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(*sys.argv[2:4])
    else:
        check(*sys.argv[2:7])
