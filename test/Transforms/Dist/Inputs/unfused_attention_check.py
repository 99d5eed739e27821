"""numpy reference for unfused-attention.onnxtxt, from the attention formula
on the model's own weights: prints 'ok' when parc's output matches."""
import sys

import numpy as np
import onnx.parser
from onnx import numpy_helper

model = onnx.parser.parse_model(open(sys.argv[1]).read())
w = {n.output[0]: numpy_helper.to_array(n.attribute[0].t)
     for n in model.graph.node if n.op_type == "Constant"}
x, got = np.load(sys.argv[2]), np.load(sys.argv[3])
heads = lambda t: t.reshape(1, 4, 2, 4).transpose(0, 2, 1, 3)
q, k, v = (heads(x @ w[n]) for n in ("wq", "wk", "wv"))
s = q @ k.transpose(0, 1, 3, 2) / 2.0
p = np.exp(s - s.max(-1, keepdims=True))
p /= p.sum(-1, keepdims=True)
want = (0.5 * p @ v).transpose(0, 2, 1, 3).reshape(1, 4, 8) @ w["wo"]
err = np.abs(got - want).max() / np.abs(want).max()
print("y", got.shape, "ok" if err < 1e-5 else err)
