"""Checks OUT/compile-stats.json against what lies on disk and in the model.

  check_compile_stats.py OUT MODEL

Prints one line per field: the bytes written against the sizes of the
weight shards on disk, the model's bytes against its float initializers' (numpy
nbytes, external data loaded by the onnx package), seconds >= 0 and peak
RSS > 0. Weights are the floating-point initializers (integer ones are
shapes and indices).
"""
import glob
import json
import os
import sys

import onnx
from onnx import numpy_helper


def main(out, model):
    with open(os.path.join(out, "compile-stats.json")) as f:
        stats = json.load(f)
    print("fields:", " ".join(sorted(stats)))
    shards = glob.glob(os.path.join(out, "weights", "*.safetensors"))
    on_disk = sum(os.path.getsize(p) for p in shards)
    print("shards:", len(shards))
    print("bytes written equal the shards' sizes:",
          stats["weight_bytes_written"] == on_disk)
    m = onnx.load(model)
    arrays = [numpy_helper.to_array(t, os.path.dirname(model))
              for t in m.graph.initializer]
    initializers = sum(a.nbytes for a in arrays if a.dtype.kind == "f")
    print(f"model bytes equal the float initializers' {initializers}:",
          stats["model_weight_bytes"] == initializers)
    print("seconds >= 0:", stats["weight_write_seconds"] >= 0)
    print("peak rss > 0:", stats["peak_rss_bytes"] > 0)


if __name__ == "__main__":
    main(*sys.argv[1:])
