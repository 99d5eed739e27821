"""Output names that escape or collide as file names.

make MODEL X: a model of x[2,3] with outputs 'out/0:x' = x+1, 'out_0_x' =
x*2 and '../evil' = x-3 (Identity-free, so each is its own tensor), and
its input X.
check MANIFEST X DIR: every output's file (from the manifest) holds
numpy's value, the files are distinct, and DIR holds nothing else.
"""
import json
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

OUTPUTS = {"out/0:x": ("Add", 1.0), "out_0_x": ("Mul", 2.0), "../evil": ("Sub", 3.0)}
NUMPY = {"Add": np.add, "Mul": np.multiply, "Sub": np.subtract}


def make(model, x):
    nodes, inits, outs = [], [], []
    for i, (name, (op, c)) in enumerate(OUTPUTS.items()):
        inits.append(numpy_helper.from_array(np.float32(c).reshape(()), f"c{i}"))
        nodes.append(helper.make_node(op, ["x", f"c{i}"], [name], name=f"n{i}"))
        outs.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, [2, 3]))
    graph = helper.make_graph(
        nodes, "output_names",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])], outs, inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(m)
    onnx.save(m, model)
    np.save(x, np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5)


def check(manifest, x, directory):
    outputs = json.load(open(manifest))["outputs"]
    x = np.load(x)
    files = [o["file"] for o in outputs]
    assert len(set(files)) == len(OUTPUTS), files
    for o in outputs:
        op, c = OUTPUTS[o["name"]]
        got = np.load(os.path.join(directory, o["file"]))
        assert np.array_equal(got, NUMPY[op](x, np.float32(c))), o["name"]
        print(f"{o['name']} -> {o['file']}: numpy's value")
    left = sorted(f for f in os.listdir(directory) if f.endswith(".npy"))
    assert left == sorted(files), left
    print("files:", " ".join(left))


if __name__ == "__main__":
    {"make": make, "check": check}[sys.argv[1]](*sys.argv[2:])
