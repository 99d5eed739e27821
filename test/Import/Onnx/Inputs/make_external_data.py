"""Writes a small model whose initializers live in an external data file.

usage: make_external_data.py MODEL_PATH DATA_FILE_NAME
Y = X @ W + B with W [4, 3] and B [3] (float32), both stored in one data
file next to the model, in initializer order, at the offsets onnx chooses.
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

model_path, location = sys.argv[1], sys.argv[2]
w = numpy_helper.from_array(np.arange(12, dtype=np.float32).reshape(4, 3), "W")
b = numpy_helper.from_array(np.ones(3, dtype=np.float32), "B")
graph = helper.make_graph(
    [helper.make_node("MatMul", ["X", "W"], ["M"], name="mm"),
     helper.make_node("Add", ["M", "B"], ["Y"], name="bias")],
    "external",
    [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2, 4])],
    [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2, 3])],
    initializer=[w, b])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
data = os.path.join(os.path.dirname(model_path), location)
if os.path.exists(data):
    os.remove(data)
onnx.save_model(model, model_path, save_as_external_data=True,
                all_tensors_to_one_file=True, location=location,
                size_threshold=0)
