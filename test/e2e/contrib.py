#!/usr/bin/python3
"""onnxruntime's contrib ops through parc, against onnxruntime itself.

Generates the models of examples/models/contrib_models.py (padded and
length masks, past/present, every fused norm and GELU parc imports, GQA),
and takes onnxruntime-genai's fp16 tiny Qwen (GroupQueryAttention) from
test/Inputs/models; runs each with `parc compile --tp N` + `parc-run` and
with onnxruntime (tools/ort-reference) on the same inputs, and requires
max|parc - ort| / max|ort| <= 1e-4 for every output (4e-3 for fp16). Prints one row per
model and tp and `N passed, N failed`; exits 1 on any failure.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "examples", "models"))
sys.path.insert(0, HERE)
import contrib_models  # noqa: E402
from differential import output_file, outputs_of, rel_err, run  # noqa: E402


def check(name, work, tools, tp, log, reference=None, flags=()):
    model = os.path.join(work, name + ".onnx")
    feeds = np.load(os.path.join(work, name + ".inputs.npz"))
    inputs = []
    for k in feeds.files:
        path = os.path.join(work, f"{name}.{k}.npy")
        np.save(path, feeds[k])
        inputs.append((k, path))
    out = os.path.join(work, f"{name}-tp{tp}")
    run([os.path.join(tools, "parc"), "compile", model, "-o", out, "--quiet",
         f"--tp={tp}"] + list(flags), log)
    run([os.path.join(tools, "parc-run"), out, "--output-dir", out + "-parc"] +
        [f"--input={k}={p}" for k, p in inputs], log)
    run(["node", os.path.join(ROOT, "tools", "ort-reference", "ort-run.mjs"), reference or model,
         "--output-dir", out + "-ort"] + sum((["--input", f"{k}={p}"] for k, p in inputs), []),
        log)
    manifest = json.load(open(os.path.join(out, "manifest.json")))
    got = outputs_of(out + "-parc", manifest)
    err = rel_err(got, outputs_of(out + "-ort", manifest))
    expected = os.path.join(work, name + ".expected.npz")
    if os.path.exists(expected):
        # A numpy reference too (MatMulNBits: the dequantisation arithmetic).
        want = np.load(expected)
        err = max(err, rel_err(got, {output_file(manifest, k): want[k].astype(np.float64)
                                     for k in want.files}))
    return err


# Real onnxruntime-genai exports (test/Inputs/models): input shapes and the
# bound (fp16 models: 4e-3, as differential.py's f16 runs).
SHARED = {
    "qwen35_gqa_decode": ("ort_genai_tiny_qwen35_gqa_fp16", 2, 1, 4, 4e-3),
    "qwen35_gqa_prefill": ("ort_genai_tiny_qwen35_gqa_fp16", 1, 3, 4, 4e-3),
}


def shared_case(name, work, rng):
    """The model (opset 21, unchanged) and inputs: batch B, S new tokens
    after a full cache of P. onnxruntime runs the same file."""
    model, b, s, p, rtol = SHARED[name]
    original = os.path.join(ROOT, "test", "Inputs", "models", model + ".onnx")
    shutil.copyfile(original, os.path.join(work, name + ".onnx"))
    feeds = {"input_ids": rng.integers(0, 1000, (b, s)).astype(np.int32),
             "attention_mask": np.ones((b, p + s), np.int64)}
    for layer in range(2):
        for kv in ("key", "value"):
            feeds[f"past_key_values.{layer}.{kv}"] = (
                rng.standard_normal((b, 2, p, 16)).astype(np.float16))
    np.savez(os.path.join(work, name + ".inputs.npz"), **feeds)
    shapes = [f"--input-shape={k}={'x'.join(map(str, v.shape))}" for k, v in feeds.items()]
    return original, shapes, rtol


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
        cases = [(n, None, (), args.rtol) for n in contrib_models.MODELS]
        rng = np.random.default_rng(0)
        cases += [(n, *shared_case(n, args.work, rng)) for n in SHARED]
        for name, reference, flags, rtol in cases:
            for tp in args.tp:
                try:
                    err = check(name, args.work, args.tools, tp, log, reference, flags)
                    ok, row = err <= rtol, f"{err:.3e} {'PASS' if err <= rtol else 'FAIL'} (rtol {rtol})"
                except Exception as e:  # noqa: BLE001 — a failed run is a row
                    ok, row = False, f"FAIL: {e}"
                print(f"{name:<20} tp {tp}  {row}", flush=True)
                passed += ok
                failed += not ok
    print(f"contrib (parc cpu vs onnxruntime): {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
