#!/usr/bin/python3
"""onnxruntime's contrib ops through parc, against onnxruntime itself.

Generates the models of examples/models/contrib_models.py (padded and
length masks, past/present, every fused norm and GELU parc imports), runs
each with `parc compile --tp N` + `parc-run` and with onnxruntime
(tools/ort-reference) on the same inputs, and requires
max|parc - ort| / max|ort| <= 1e-4 for every output. Prints one row per
model and tp and `N passed, N failed`; exits 1 on any failure.
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "examples", "models"))
sys.path.insert(0, HERE)
import contrib_models  # noqa: E402
from differential import outputs_of, rel_err, run  # noqa: E402


def check(name, work, tools, tp, log):
    model = os.path.join(work, name + ".onnx")
    feeds = np.load(os.path.join(work, name + ".inputs.npz"))
    inputs = []
    for k in feeds.files:
        path = os.path.join(work, f"{name}.{k}.npy")
        np.save(path, feeds[k])
        inputs.append((k, path))
    out = os.path.join(work, f"{name}-tp{tp}")
    run([os.path.join(tools, "parc"), "compile", model, "-o", out, "--quiet",
         f"--tp={tp}"], log)
    run([os.path.join(tools, "parc-run"), out, "--output-dir", out + "-parc"] +
        [f"--input={k}={p}" for k, p in inputs], log)
    run(["node", os.path.join(ROOT, "tools", "ort-reference", "ort-run.mjs"), model,
         "--output-dir", out + "-ort"] + sum((["--input", f"{k}={p}"] for k, p in inputs), []),
        log)
    manifest = json.load(open(os.path.join(out, "manifest.json")))
    return rel_err(outputs_of(out + "-parc", manifest), outputs_of(out + "-ort", manifest))


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--tools", required=True, help="directory with parc and parc-run")
    p.add_argument("--work", required=True)
    p.add_argument("--tp", type=int, nargs="+", default=[1, 2])
    p.add_argument("--rtol", type=float, default=1e-4)
    args = p.parse_args()
    os.makedirs(args.work, exist_ok=True)
    subprocess.run([sys.executable, contrib_models.__file__, "--out", args.work], check=True,
                   stdout=subprocess.DEVNULL)
    passed = failed = 0
    with open(os.path.join(args.work, "log.txt"), "w") as log:
        for name in contrib_models.MODELS:
            for tp in args.tp:
                try:
                    err = check(name, args.work, args.tools, tp, log)
                    ok, row = err <= args.rtol, f"{err:.3e} {'PASS' if err <= args.rtol else 'FAIL'}"
                except Exception as e:  # noqa: BLE001 — a failed run is a row
                    ok, row = False, f"FAIL: {e}"
                print(f"{name:<20} tp {tp}  {row}", flush=True)
                passed += ok
                failed += not ok
    print(f"contrib (parc cpu vs onnxruntime, rtol {args.rtol}): {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
