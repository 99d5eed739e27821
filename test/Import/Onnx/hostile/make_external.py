"""Writes a model whose one initializer W (float32 [2]) is ONNX external
data with the given entries, for the hostile-model corpus.

usage: make_external.py MODEL_PATH KEY=VALUE...   (location=, offset=, length=)
Y = X + W. The entries are written verbatim: nothing checks them here, so a
test can hand parc a location of '../../etc/passwd' or an offset of 'abc'.
"""
import sys

import onnx
from onnx import TensorProto, helper

model_path, entries = sys.argv[1], sys.argv[2:]
w = TensorProto(name="W", data_type=TensorProto.FLOAT, dims=[2])
w.data_location = TensorProto.EXTERNAL
for entry in entries:
    key, value = entry.split("=", 1)
    w.external_data.add(key=key, value=value)
graph = helper.make_graph(
    [helper.make_node("Add", ["X", "W"], ["Y"], name="add")], "external",
    [helper.make_tensor_value_info("X", TensorProto.FLOAT, [2])],
    [helper.make_tensor_value_info("Y", TensorProto.FLOAT, [2])],
    initializer=[w])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14)])
with open(model_path, "wb") as f:
    f.write(model.SerializeToString())
