"""A token embedding of V = 8 rows under two attention-like layers (so that
--pp 2 finds two stages to cut), and numpy's value.

make MODEL: the model; ids [1, 6] (int64) feed Gather node 'emb/lookup'.
ids PATH I0 I1 ...: an ids file.
check MODEL IDS DIR: DIR/y.npy (the file the manifest next to DIR's
compile records) against numpy's value of the model, printing the error.
"""
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

V, H = 8, 4


def weights():
    return np.arange(V * H, dtype=np.float32).reshape(V, H) * 0.0625 - 1.0


def make(model):
    nodes = [
        helper.make_node("Gather", ["table", "ids"], ["e"], name="emb/lookup", axis=0),
        helper.make_node("Reshape", ["e", "shape"], ["h0"], name="emb/reshape"),
    ]
    for k in range(2):
        h, n = f"h{k}", f"layer{k}/"
        nodes += [
            helper.make_node("Transpose", [h], [n + "kt"], name=n + "kt", perm=[0, 1, 3, 2]),
            helper.make_node("MatMul", [h, n + "kt"], [n + "s"], name=n + "scores"),
            helper.make_node("Mul", [n + "s", "scale"], [n + "ss"], name=n + "scale"),
            helper.make_node("Softmax", [n + "ss"], [n + "p"], name=n + "softmax", axis=-1),
            helper.make_node("MatMul", [n + "p", h], [n + "a"], name=n + "values"),
            helper.make_node("Add", [h, n + "a"], ["y" if k else "h1"], name=n + "residual"),
        ]
    graph = helper.make_graph(
        nodes, "embedding",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, [1, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 1, 6, H])],
        [numpy_helper.from_array(weights(), "table"),
         numpy_helper.from_array(np.array([1, 1, 6, H], dtype=np.int64), "shape"),
         numpy_helper.from_array(np.float32(0.35).reshape(()), "scale")])
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(m)
    onnx.save(m, model)


def reference(x):
    h = weights()[x].reshape(1, 1, 6, H)  # numpy wraps negatives as ONNX does
    for _ in range(2):
        s = (h @ h.transpose(0, 1, 3, 2)).astype(np.float64) * 0.35
        p = np.exp(s - s.max(-1, keepdims=True))
        p /= p.sum(-1, keepdims=True)
        h = h + p @ h
    return h


def ids(path, *values):
    np.save(path, np.array([[int(v) for v in values]], dtype=np.int64))


def check(manifest, ids_path, directory):
    x = np.load(ids_path)
    assert ((x >= -V) & (x < V)).all()
    want = reference(x)
    out = json.load(open(manifest))["outputs"][0]
    got = np.load(os.path.join(directory, out["file"]))
    err = float(np.abs(got - want).max() / np.abs(want).max())
    print(f"{out['name']} {got.shape} rel {'ok' if err <= 1e-5 else 'BAD'} {err:.2e}")


if __name__ == "__main__":
    {"make": make, "ids": ids, "check": check}[sys.argv[1]](*sys.argv[2:])
