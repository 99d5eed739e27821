"""Writes a residual MLP stack without attention (4 blocks of
x + fc2(relu(fc1(x)))) to argv[1], and with argv[2] the numpy reference
of its output for the input in argv[2] into argv[3]."""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(7)
nodes, inits, weights = [], [], []
h = "x"
for i in range(4):
    w1 = (rng.standard_normal((8, 16)) * 0.3).astype(np.float32)
    w2 = (rng.standard_normal((16, 8)) * 0.3).astype(np.float32)
    weights.append((w1, w2))
    inits += [numpy_helper.from_array(w1, f"w1_{i}"), numpy_helper.from_array(w2, f"w2_{i}")]
    nodes += [helper.make_node("MatMul", [h, f"w1_{i}"], [f"a{i}"], name=f"l{i}/fc1"),
              helper.make_node("Relu", [f"a{i}"], [f"r{i}"], name=f"l{i}/relu"),
              helper.make_node("MatMul", [f"r{i}", f"w2_{i}"], [f"b{i}"], name=f"l{i}/fc2"),
              helper.make_node("Add", [h, f"b{i}"], [f"h{i}"], name=f"l{i}/add")]
    h = f"h{i}"
nodes[-1].output[0] = "y"
graph = helper.make_graph(
    nodes, "mlp_stack", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 8])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3, 8])], inits)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
onnx.checker.check_model(model)
onnx.save(model, sys.argv[1])
if len(sys.argv) > 3:
    x = np.load(sys.argv[2]).astype(np.float64)
    for w1, w2 in weights:
        x = x + np.maximum(x @ w1, 0) @ w2
    np.save(sys.argv[3], x)
