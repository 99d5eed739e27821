"""An MLP y = relu(x @ W1 + b1) @ W2 + b2 with every initializer in ONNX
external data (size_threshold=0), and independent checks of what parc makes
of it.

  make DIR          DIR/mlp.onnx + DIR/mlp.onnx.data, DIR/x.npy, DIR/y.npy
                    (y computed here with numpy)
  check OUT TP DIR RES
                    the shards in OUT hold, per rank, the numpy slices of
                    W1, b1 (columns) and W2 (rows), the ffn of 18 padded
                    with zero features to a multiple of TP; prints the
                    manifest's collective bytes, one line per rank and
                    whether RES/y.npy (parc-run's) matches DIR/y.npy
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


def make(d):
    w = weights()
    nodes = [helper.make_node("MatMul", ["x", "W1"], ["h"], name="fc1/MatMul"),
             helper.make_node("Add", ["h", "b1"], ["hb"], name="fc1/Add"),
             helper.make_node("Relu", ["hb"], ["a"], name="act/Relu"),
             helper.make_node("MatMul", ["a", "W2"], ["o"], name="fc2/MatMul"),
             helper.make_node("Add", ["o", "b2"], ["y"], name="fc2/Add")]
    graph = helper.make_graph(
        nodes, "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [BATCH, HIDDEN])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [BATCH, HIDDEN])],
        [numpy_helper.from_array(v, k) for k, v in w.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
    onnx.checker.check_model(model)
    os.makedirs(d, exist_ok=True)
    onnx.save(model, os.path.join(d, "mlp.onnx"), save_as_external_data=True,
              location="mlp.onnx.data", size_threshold=0)
    x = np.random.default_rng(3).standard_normal((BATCH, HIDDEN)).astype(np.float32)
    y = np.maximum(x @ w["W1"] + w["b1"], 0) @ w["W2"] + w["b2"]
    np.save(os.path.join(d, "x.npy"), x)
    np.save(os.path.join(d, "y.npy"), y)


def tensors(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    header.pop("__metadata__")
    out = {}
    for name, t in header.items():
        begin, end = t["data_offsets"]
        assert t["dtype"] == "F32", (name, t["dtype"])
        out[name] = np.frombuffer(data[begin:end], np.float32).reshape(t["shape"])
    return out


def check(out, tp, d, res):
    tp = int(tp)
    w = weights()
    padded = -(-FFN // tp) * tp
    part = padded // tp
    pad = lambda a, axis: np.concatenate(
        [a, np.zeros_like(a.take(range(padded - FFN), axis=axis))], axis=axis)
    manifest = json.load(open(os.path.join(out, "manifest.json")))
    sent = sum(c["bytes"] for c in manifest["comm_per_collective"].values())
    print(f"collective bytes {sent}")
    for rank in range(tp):
        got = tensors(os.path.join(out, "weights", f"rank{rank}.safetensors"))
        cols = slice(rank * part, (rank + 1) * part)
        want = {"W1.part": pad(w["W1"], 1)[:, cols], "b1.part": pad(w["b1"], 0)[cols],
                "W2.part": pad(w["W2"], 0)[cols, :]}
        for name, value in want.items():
            if name not in got:
                sys.exit(f"rank {rank}: no tensor '{name}' in {sorted(got)}")
            if got[name].shape != value.shape or not np.array_equal(got[name], value):
                sys.exit(f"rank {rank}: '{name}' {got[name].shape} is not the numpy slice "
                         f"{value.shape}")
        print(f"rank {rank}: W1, b1, W2 are the numpy slices of {part} of {padded} features")
    y = np.load(os.path.join(d, "y.npy"))
    got = np.load(os.path.join(res, "y.npy"))
    err = np.abs(got - y).max() / np.abs(y).max()
    print(f"output within 1e-5 of numpy: {err <= 1e-5}")


if __name__ == "__main__":
    if sys.argv[1] == "make":
        make(sys.argv[2])
    else:
        check(*sys.argv[2:6])
