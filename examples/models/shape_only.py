#!/usr/bin/python3
"""Generates shape-only ONNX models of production sizes for the planner.

Llama-3-8B, -70B, -405B and Mixtral-8x7B dimensions, in the same unfused
torch.onnx layouts as generate.py (whose Emitter builds them), but every
large parameter is an ONNX external-data reference to a `<name>.weights`
file that is never written: the .onnx files stay small (a few MB) and parc
imports them with one warning, which is all `parc plan` needs.

Each model also gets <name>.json with its config and its parameter count,
computed here by arithmetic from the config (never by running parc), so the
planner's checks compare against an independent number.

    /usr/bin/python3 examples/models/shape_only.py --out DIR [--only NAME ...]
"""

import argparse
import json
import os
import sys

import numpy as np
from onnx import TensorProto, shape_inference

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import generate  # noqa: E402

# Published dimensions (Meta's Llama 3 / 3.1 model cards and config.json,
# Mistral's Mixtral-8x7B config.json). max_positions bounds --seq; it is kept
# below the real context so the causal-mask buffer stays cheap to build.
_LLAMA3 = dict(vocab=128256, kv_heads=8, batch=1, seq=2048,
               max_positions=4096, eps=1e-5)
SHAPE_MODELS = {
    "llama3_8b": generate.ModelConfig(
        "llama", seed=0, layers=32, hidden=4096, heads=32, ffn=14336,
        rotary_dim=128, **_LLAMA3),
    "llama3_70b": generate.ModelConfig(
        "llama", seed=0, layers=80, hidden=8192, heads=64, ffn=28672,
        rotary_dim=128, **_LLAMA3),
    "llama3_405b": generate.ModelConfig(
        "llama", seed=0, layers=126, hidden=16384, heads=128, ffn=53248,
        rotary_dim=128, **_LLAMA3),
    # The same as a mixed-precision checkpoint: bf16 matrices Cast to f32.
    "llama3_70b_bf16ckpt": generate.ModelConfig(
        "llama", seed=0, layers=80, hidden=8192, heads=64, ffn=28672,
        rotary_dim=128, checkpoint="bf16", **_LLAMA3),
    "mixtral_8x7b": generate.ModelConfig(
        "mixtral", seed=0, layers=32, hidden=4096, heads=32, kv_heads=8,
        ffn=14336, vocab=32000, experts=8, top_k=2, batch=1, seq=2048,
        max_positions=4096, rotary_dim=128, eps=1e-5),
}

# Parameters above this many bytes become external references.
EXTERNAL_ABOVE = 1 << 14


class Absent:
    """The shape of a random parameter that is never materialised."""

    def __init__(self, shape):
        self.shape = tuple(shape)

    def __add__(self, other):  # `1.0 + randn(...)` in norm parameters
        return self

    __radd__ = __add__


class ShapeOnlyEmitter(generate.Emitter):
    def __init__(self, cfg, opset, data_file):
        super().__init__(cfg, opset)
        self.data_file = data_file
        self.offset = 0

    def randn(self, shape, std):
        if int(np.prod(shape)) * 4 > EXTERNAL_ABOVE:
            return Absent(shape)
        return super().randn(shape, std)

    def param(self, local_name, array):
        if isinstance(array, np.ndarray) and array.nbytes <= EXTERNAL_ABOVE:
            return super().param(local_name, array)
        name = ".".join(self._scope + [local_name])
        narrow = self.stores_narrow(array)
        dtype = {"bf16": TensorProto.BFLOAT16, "f16": TensorProto.FLOAT16}.get(
            self.cfg.checkpoint) if narrow else TensorProto.FLOAT
        t = TensorProto(name=name, dims=list(array.shape), data_type=dtype,
                        data_location=TensorProto.EXTERNAL)
        length = int(np.prod(array.shape)) * (2 if narrow else 4)
        for key, value in (("location", self.data_file),
                           ("offset", str(self.offset)),
                           ("length", str(length))):
            entry = t.external_data.add()
            entry.key, entry.value = key, value
        self.offset += length
        self.initializers.append(t)
        return self.op("Cast", name, to=TensorProto.FLOAT) if narrow else name


def parameter_count(cfg):
    """Parameters by arithmetic: embedding, per layer attention (q, o full;
    k, v at kv_heads), norms, MLP (three ffn matrices, per expert with a
    router for MoE), final norm and an untied LM head."""
    h, d = cfg.hidden, cfg.head_dim
    attn = 2 * h * h + 2 * h * cfg.kv_heads * d
    mlp = 3 * h * cfg.ffn
    if cfg.experts:
        mlp = cfg.experts * mlp + h * cfg.experts
    layer = attn + mlp + 2 * h
    return cfg.vocab * h + cfg.layers * layer + h + h * cfg.vocab


def buffer_count(cfg):
    """Non-learned initializers the Llama graph carries: the causal-mask
    buffer (max_positions^2) and the rotary cos/sin tables
    (2 * max_positions * rotary_dim)."""
    n = cfg.max_positions
    return n * n + 2 * n * cfg.rotary_dim


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="output directory")
    parser.add_argument("--only", nargs="+", action="extend", default=[],
                        metavar="NAME", choices=list(SHAPE_MODELS),
                        help="models to write (default: all)")
    args = parser.parse_args(argv)
    os.makedirs(args.out, exist_ok=True)
    for name in dict.fromkeys(args.only or SHAPE_MODELS):
        cfg = SHAPE_MODELS[name]
        g = ShapeOnlyEmitter(cfg, 14, name + ".weights")
        generate.BUILDERS[cfg.family](g)
        model = g.model(name)
        # Shape inference proves the graph well-typed; the checker would
        # insist on the absent data file.
        shape_inference.infer_shapes(model, check_type=True, strict_mode=True)
        meta = generate.describe(name, cfg, 14, model,
                                 generate.expected_blocks(cfg))
        meta["parameters"] = parameter_count(cfg)
        meta["buffers"] = buffer_count(cfg)
        meta["weights_file"] = name + ".weights"
        meta["weights_present"] = False
        path = os.path.join(args.out, name + ".onnx")
        generate.write_atomic(path[:-len(".onnx")] + ".json",
                              (json.dumps(meta, indent=2) + "\n").encode())
        data = model.SerializeToString()
        generate.write_atomic(path, data)
        print(f"wrote {path} ({len(model.graph.node)} nodes, "
              f"{len(data) // 1024} KiB, {meta['parameters'] / 1e9:.2f}B "
              f"parameters, weights absent)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
