#!/usr/bin/env python3
"""Writes the importer fuzzer's seed corpus (test/Fuzz/corpus/) as binary
.onnx files: every ONNX text model of test/Import/Onnx (the .onnxtxt tests
and the `#--- NAME.onnxtxt` sections of the .test files) and the third-party
models of test/Inputs/models, with each graph input's dims bound the way the
lit tests bind them (the fuzzer passes no --input-shape, so a seed with a
symbolic dim would stop at the first check). Their large initializers
become external data in a file that is absent (the importer warns and goes
on): seeds stay a few KB, which keeps the fuzzer fast. Run with /usr/bin/python3
(Debian's python3-onnx); rerun when those models change."""
import glob
import os
import re

import onnx
import onnx.parser
from onnx.external_data_helper import set_external_data

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OUT = os.path.join(ROOT, "test", "Fuzz", "corpus")

# The shapes test/Import/Onnx/shared-models.test binds.
SHARED = {
    "gpt2_megatron.onnx": "input_ids=2x8 position_ids=2x8 "
                          "attention_mask=2x1x64x64 past_0=2x2x2x4x4",
    "bert_toy_optimized.onnx": "input_ids=2x8 token_type_ids=2x8 input_mask=2x8",
    "self_attention_megatron_basic_test.onnx": "input=2x3x4 mask=2x1x3x3",
    "deeploy_small_conv_transformer_convit_network_infer.onnx": "",
}


def parse_shapes(text):
    shapes = {}
    for name, dims in re.findall(r"--input-shape[ =](\S+?)=(\S+)", text):
        shapes.setdefault(name, [] if dims == "scalar" else
                          [int(d) for d in dims.split("x")])
    return shapes


def bind(model, shapes):
    for inp in model.graph.input:
        if inp.name not in shapes:
            continue
        dims = inp.type.tensor_type.shape.dim
        del dims[:]
        for d in shapes[inp.name]:
            dims.add().dim_value = d


def externalise(model, threshold=1024):
    offset = 0
    for t in model.graph.initializer:
        if len(t.raw_data) <= threshold:
            continue
        set_external_data(t, "weights.bin", offset, len(t.raw_data))
        offset += len(t.raw_data)
        t.data_location = onnx.TensorProto.EXTERNAL
        t.ClearField("raw_data")


def write(model, name):
    with open(os.path.join(OUT, name), "wb") as f:
        f.write(model.SerializeToString())


def sections(path):
    """The split-file sections of a lit test that hold ONNX text models."""
    parts = re.split(r"^#--- (\S+)\n", open(path).read(), flags=re.M)
    for name, body in zip(parts[1::2], parts[2::2]):
        if not name.endswith(".onnxtxt"):
            continue
        try:
            yield name, onnx.parser.parse_model(body)
        except Exception:  # syntax-error cases: not models
            pass


def main():
    os.makedirs(OUT, exist_ok=True)
    for path in sorted(glob.glob(os.path.join(ROOT, "test/Import/Onnx/*.test"))):
        test = os.path.basename(path)[: -len(".test")]
        for name, model in sections(path):
            write(model, test + "-" + name[: -len("txt")])
    for path in sorted(glob.glob(os.path.join(ROOT, "test/Import/Onnx/*.onnxtxt"))):
        text = open(path).read()
        model = onnx.parser.parse_model(text)
        bind(model, parse_shapes(text))
        write(model, os.path.basename(path)[: -len("txt")])
    for name, spec in SHARED.items():
        model = onnx.load(os.path.join(ROOT, "test/Inputs/models", name))
        bind(model, parse_shapes(" ".join("--input-shape " + s for s in spec.split())))
        externalise(model)
        write(model, name)


if __name__ == "__main__":
    main()
