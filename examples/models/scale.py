#!/usr/bin/python3
"""Llama-style models of a chosen size with their weights as ONNX external data.

generate.py's Llama graph (the unfused torch.onnx layout), with every
parameter above 16 KiB written to `<name>.onnx.data` one tensor at a time
(random normal, scaled as generate.py scales them, in chunks of 64 MiB): a
model larger than this machine's memory is written in bounded memory. The
sizes are those of bench/compile_scale.sh. Deterministic: the same command
writes the same bytes.

    /usr/bin/python3 examples/models/scale.py --out DIR [--only NAME ...]
        [--layers N]   (N layers instead of the model's; file <name>_l<N>)
"""

import argparse
import dataclasses
import json
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import generate  # noqa: E402
import shape_only  # noqa: E402

_LLAMA = dict(vocab=32000, batch=1, seq=16, max_positions=64, eps=1e-5)
# About 0.5, 2 and 6 GB of f32 weights (parameter counts in <name>.json).
SCALE_MODELS = {
    "llama_0g5": generate.ModelConfig(
        "llama", seed=2001, layers=5, hidden=1024, heads=16, kv_heads=8,
        ffn=2816, rotary_dim=64, **_LLAMA),
    "llama_2g": generate.ModelConfig(
        "llama", seed=2002, layers=8, hidden=2048, heads=16, kv_heads=8,
        ffn=5632, rotary_dim=128, **_LLAMA),
    "llama_6g": generate.ModelConfig(
        "llama", seed=2003, layers=7, hidden=4096, heads=32, kv_heads=8,
        ffn=11008, rotary_dim=128, **_LLAMA),
    # Many small layers: compile time against depth (bench/compile_layers.sh
    # picks the depth with --layers).
    "decoder": generate.ModelConfig(
        "llama", seed=2010, layers=80, hidden=256, heads=8, kv_heads=8,
        ffn=512, rotary_dim=32, vocab=512, batch=1, seq=16, max_positions=64,
        eps=1e-5),
}
CHUNK = 16 << 20  # elements per write


class ScaleEmitter(shape_only.ShapeOnlyEmitter):
    """shape_only's external references, with their bytes written."""

    def __init__(self, cfg, opset, data_name, data):
        super().__init__(cfg, opset, data_name)
        self.data = data

    def randn(self, shape, std):
        array = super().randn(shape, std)
        if isinstance(array, shape_only.Absent):
            array.std = std
        return array

    def param(self, local_name, array):
        name = super().param(local_name, array)
        if isinstance(array, shape_only.Absent):
            n = int(np.prod(array.shape))
            for start in range(0, n, CHUNK):
                k = min(CHUNK, n - start)
                chunk = self.rng.standard_normal(k, dtype=np.float32)
                self.data.write((chunk * np.float32(array.std)).tobytes())
        elif array.nbytes > shape_only.EXTERNAL_ABOVE:
            self.data.write(np.ascontiguousarray(array, np.float32).tobytes())
        return name


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", required=True, help="output directory")
    parser.add_argument("--only", nargs="+", action="extend", default=[],
                        metavar="NAME", choices=list(SCALE_MODELS),
                        help="models to write (default: all)")
    parser.add_argument("--layers", type=int, metavar="N",
                        help="write the models with N layers, named <name>_l<N>")
    args = parser.parse_args(argv)
    if args.layers is not None and args.layers < 1:
        parser.error(f"--layers must be at least 1, got {args.layers}")
    os.makedirs(args.out, exist_ok=True)
    for name in dict.fromkeys(args.only or SCALE_MODELS):
        cfg = SCALE_MODELS[name]
        if args.layers is not None:
            cfg = dataclasses.replace(cfg, layers=args.layers)
            name = f"{name}_l{args.layers}"
        path = os.path.join(args.out, name + ".onnx")
        with open(path + ".data", "wb") as data:
            g = ScaleEmitter(cfg, 14, name + ".onnx.data", data)
            generate.BUILDERS[cfg.family](g)
        model = g.model(name)
        meta = generate.describe(name, cfg, 14, model,
                                 generate.expected_blocks(cfg))
        meta["parameters"] = shape_only.parameter_count(cfg)
        meta["weight_bytes"] = os.path.getsize(path + ".data")
        generate.write_atomic(path[:-len(".onnx")] + ".json",
                              (json.dumps(meta, indent=2) + "\n").encode())
        generate.write_atomic(path, model.SerializeToString())
        print(f"wrote {path} and {name}.onnx.data "
              f"({meta['weight_bytes'] / 1e9:.2f} GB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
