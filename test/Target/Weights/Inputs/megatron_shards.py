#!/usr/bin/python3
"""Checks a compile's weight shards against numpy slices of the model's own
initializers, cut as Megatron-LM cuts a Llama: q/k/v/gate/up projections
column-parallel (their [in, out] MatMul weights split on dim 1), o/down
projections row-parallel (dim 0), the embedding vocabulary-parallel (dim 0)
and the LM head on its vocabulary (dim 1); norms whole. Each shard tensor
named after an initializer (`<name>` whole, `<name>.part` cut) must hold
exactly those bytes at its data_offsets, and every parameter must appear on
every rank of its stage. With --rss-below-weights, compile-stats.json's
peak RSS must be below the model's weight bytes.

    megatron_shards.py MODEL.onnx OUT --tp N [--rss-below-weights]

Prints one line per rank and `ok: N tensors` at the end; exits 1 otherwise.
"""

import argparse
import json
import os
import struct
import sys

import numpy as np
import onnx
from onnx import numpy_helper

COLUMN = ("q_proj.weight", "k_proj.weight", "v_proj.weight",
          "gate_proj.weight", "up_proj.weight", "lm_head.weight")
ROW = ("o_proj.weight", "down_proj.weight", "embed_tokens.weight")


def cut_dim(name):
    if name.endswith(COLUMN):
        return 1
    if name.endswith(ROW):
        return 0
    return None


def megatron_part(name, array, index, tp):
    dim = cut_dim(name)
    if dim is None:
        return array
    return np.split(array, tp, axis=dim)[index]


def read_shard(path):
    with open(path, "rb") as f:
        n = struct.unpack("<Q", f.read(8))[0]
        header = json.loads(f.read(n))
        data_start = 8 + n
    return header, data_start


def main():
    p = argparse.ArgumentParser()
    p.add_argument("model")
    p.add_argument("out")
    p.add_argument("--tp", type=int, required=True)
    p.add_argument("--rss-below-weights", action="store_true")
    args = p.parse_args()
    model = onnx.load(args.model)  # external data loaded beside it
    params = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer
              if t.data_type == onnx.TensorProto.FLOAT and
              int(np.prod(t.dims)) * 4 > (16 << 10)}
    manifest = json.load(open(os.path.join(args.out, "manifest.json")))
    errors, checked = [], 0
    seen = {}
    for entry in manifest["ranks"]:
        rank, index = entry["rank"], entry["rank"] % args.tp
        header, start = read_shard(os.path.join(args.out, entry["weights"]))
        with open(os.path.join(args.out, entry["weights"]), "rb") as f:
            blob = f.read()
        here = 0
        for key, t in header.items():
            if key == "__metadata__":
                continue
            cut = key.endswith(".part")
            name = key[:-len(".part")] if cut else key
            if name not in params:
                continue
            if cut != (cut_dim(name) is not None) and args.tp > 1:
                errors.append(f"rank {rank}: '{key}' is {'cut' if cut else 'whole'}, "
                              f"Megatron {'cuts' if cut_dim(name) is not None else 'keeps'} it")
                continue
            want = megatron_part(name, params[name], index, args.tp)
            begin, end = t["data_offsets"]
            got = blob[start + begin:start + end]
            if t["dtype"] != "F32" or t["shape"] != list(want.shape) or \
                    got != np.ascontiguousarray(want).tobytes():
                errors.append(f"rank {rank}: '{key}' {t['dtype']} {t['shape']} differs "
                              f"from numpy's {list(want.shape)} slice")
            else:
                here += 1
            seen.setdefault(entry["program"], {}).setdefault(name, set()).add(rank)
            checked += 1
        print(f"rank {rank}: {here} tensors match numpy's slices")
    # Every parameter on every rank of one stage (pipeline stages split them).
    stages = {}
    for entry in manifest["ranks"]:
        stages.setdefault(entry["program"], set()).add(entry["rank"])
    placed = set()
    for program, names in seen.items():
        for name, ranks in names.items():
            placed.add(name)
            if ranks != stages[program]:
                errors.append(f"'{name}' on ranks {sorted(ranks)} of {program}'s "
                              f"{sorted(stages[program])}")
    for name in sorted(set(params) - placed):
        errors.append(f"parameter '{name}' is in no shard")
    if args.rss_below_weights:
        stats = json.load(open(os.path.join(args.out, "compile-stats.json")))
        weights = sum(a.nbytes for a in params.values())
        ratio = stats["peak_rss_bytes"] / weights
        print(f"peak RSS below the weights: {ratio < 1} ({ratio:.2f} of {weights} bytes)")
        if ratio >= 1:
            errors.append(f"peak RSS {stats['peak_rss_bytes']} B is not below "
                          f"the {weights} B of weights")
    for e in errors:
        print("error:", e)
    if errors:
        return 1
    print(f"ok: {checked} tensors")
    return 0


if __name__ == "__main__":
    sys.exit(main())
