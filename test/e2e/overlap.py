#!/usr/bin/python3
"""Overlap on equals overlap off.

dist-overlap cuts row-parallel products and their all-reduces into chunks
(collective matmul) and starts every collective early. Rows of a product
are independent and each chunk is reduced on its own, so with the same
inputs the program with overlap must compute what the program without it
(`parc compile --no-overlap`) computes: bitwise for two ranks (a sum of two
terms does not depend on the order), within 1e-5 relative otherwise (MPI
may pick another reduction order for smaller messages).

For each generated model and tp: compile both ways, check that the
overlapped program really was cut (its compile log counts the collective
matmuls), run both under mpirun on the same inputs, compare every output.
Prints a table and `N passed, N failed`; exits 1 on any failure.
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np


def run(cmd):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"$ {' '.join(cmd)}\n{r.stdout}")
    return r.stdout


def check(args, name, tp):
    cfg = json.load(open(os.path.join(args.generated, name + ".json")))
    c = cfg["config"]
    work = os.path.join(args.work, f"{name}-tp{tp}")
    os.makedirs(work, exist_ok=True)
    rng = np.random.default_rng(7)
    shape = f"{c['batch']}x{c['seq']}"
    flags, inputs = [], []
    for input_name in cfg["inputs"]:
        high = 2 if "mask" in input_name else (
            c["type_vocab"] if "token_type" in input_name else c["vocab"])
        path = os.path.join(work, input_name + ".npy")
        np.save(path, rng.integers(0, high, (c["batch"], c["seq"])).astype(np.int64))
        flags += ["--input-shape", f"{input_name}={shape}"]
        inputs += ["--input", f"{input_name}={path}"]
    outputs, cut = {}, 0
    for mode, extra in (("on", []), ("off", ["--no-overlap"])):
        log = run([os.path.join(args.tools, "parc"), "compile",
                   os.path.join(args.generated, name + ".onnx"), "--tp", str(tp),
                   "-o", os.path.join(work, mode)] + flags + extra)
        if mode == "on":
            cut = int(log.split("overlap: ")[1].split()[0])
        res = os.path.join(work, "res-" + mode)
        run([os.path.join(args.tools, "parc-run"), os.path.join(work, mode),
             "--output-dir", res] + inputs)
        outputs[mode] = {f: np.load(os.path.join(res, f)) for f in sorted(os.listdir(res))}
    if cut == 0:
        return False, "dist-overlap cut no collective matmul", 0.0
    worst = 0.0
    for f, on in outputs["on"].items():
        off = outputs["off"][f]
        scale = max(float(np.abs(off).max()), 1e-30)
        worst = max(worst, float(np.abs(on.astype(np.float64) - off).max()) / scale)
    limit = 0.0 if tp == 2 else 1e-5
    return worst <= limit, f"{cut} collective matmul(s) cut", worst


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--tools", required=True, help="directory with parc and parc-run")
    p.add_argument("--generated", required=True, help="examples/models/generate.py output")
    p.add_argument("--work", required=True, help="scratch directory")
    p.add_argument("--models", nargs="+", default=["gpt2", "llama", "bert"])
    p.add_argument("--tp", nargs="+", type=int, default=[2, 4])
    args = p.parse_args()
    passed = failed = 0
    print(f"{'model':10} {'tp':>3}  {'max rel diff on/off':>20}  result")
    for name in args.models:
        for tp in args.tp:
            try:
                ok, note, worst = check(args, name, tp)
            except RuntimeError as e:
                ok, note, worst = False, str(e), float("nan")
            passed += ok
            failed += not ok
            print(f"{name:10} {tp:3}  {worst:20.3e}  {'PASS' if ok else 'FAIL'}  {note}")
    print(f"overlap (on vs --no-overlap): {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
