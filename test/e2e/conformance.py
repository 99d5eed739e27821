#!/usr/bin/python3
"""ONNX backend node tests (Debian's libonnx-testdata) through parc on cpu.

Every test directory holds model.onnx and test_data_set_*/{input,output}_N.pb.
A test whose model parc imports is compiled, run on every data set with the
.pb inputs, and compared with the expected .pb outputs at ONNX's backend-test
tolerance (|out - ref| <= atol + rtol·|ref|, rtol 1e-3, atol 1e-7). Tests
that parc rejects at import (an unsupported op, opset or type) are counted
as unsupported.

The tests listed in conformance-required.txt must pass: one that fails is a
regression and fails the run. Passing tests missing from the list are
printed so the list can grow. Prints a table, the counts, and
`N passed, N failed` over the required list.
"""
import argparse
import concurrent.futures
import glob
import json
import os
import subprocess
import sys

import numpy as np
import onnx
from onnx import numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from differential import output_file  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = "/usr/share/libonnx-testdata/data/node"


def bf16_to_f32(words):
    return (words.view(np.uint16).astype(np.uint32) << 16).view(np.float32)


def run_test(test_dir, tools, work):
    """Returns (status, detail): status is pass, fail or unsupported."""
    name = os.path.basename(test_dir)
    model_path = os.path.join(test_dir, "model.onnx")
    data_sets = sorted(glob.glob(os.path.join(test_dir, "test_data_set_*")))
    if not data_sets:
        return "unsupported", "no test data"
    model = onnx.load(model_path)
    inits = {i.name for i in model.graph.initializer}
    inputs = [i.name for i in model.graph.input if i.name not in inits]
    outputs = [o.name for o in model.graph.output]
    out = os.path.join(work, name)
    first = data_sets[0]
    shape_flags = []
    for k, n in enumerate(inputs):
        pb = os.path.join(first, f"input_{k}.pb")
        if not os.path.exists(pb):
            return "unsupported", "optional inputs omitted"
        t = onnx.TensorProto()
        t.ParseFromString(open(pb, "rb").read())
        dims = "x".join(map(str, t.dims)) if t.dims else "scalar"
        shape_flags += ["--input-shape", f"{n}={dims}"]
    r = subprocess.run([os.path.join(tools, "parc"), "compile", model_path, "-o", out,
                        "--quiet"] + shape_flags,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode:
        text = r.stdout.strip()
        importer = ("does not support" in text or "unsupported" in text or
                    "not supported" in text or "compile-time constant" in text)
        lines = text.splitlines()
        return ("unsupported" if importer else "fail"), (lines[-1] if lines else "?")[:150]
    for ds in data_sets:
        res = os.path.join(out, "res-" + os.path.basename(ds))
        flags = [f"--input={n}={os.path.join(ds, f'input_{k}.pb')}"
                 for k, n in enumerate(inputs)]
        r = subprocess.run([os.path.join(tools, "parc-run"), out, "--output-dir", res] + flags,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if r.returncode:
            lines = r.stdout.strip().splitlines()
            return "fail", ("run: " + (lines[-1] if lines else "?"))[:150]
        manifest = json.load(open(os.path.join(out, "manifest.json")))
        for k, n in enumerate(outputs):
            ref = numpy_helper.to_array(onnx.load_tensor(os.path.join(ds, f"output_{k}.pb")))
            got = np.load(os.path.join(res, output_file(manifest, n)))
            rtol = 1e-3
            if got.dtype.kind == "V":  # bfloat16 travels as raw 2-byte words
                got = bf16_to_f32(got)
                # The test data stores bfloat16 as uint16 words, and before
                # ONNX 1.14 made by truncation, where parc (as onnxruntime)
                # rounds to nearest even: equal within one bfloat16 ulp.
                if ref.dtype == np.uint16:
                    ref = bf16_to_f32(ref)
                rtol = 2.0 ** -7
            if got.shape != ref.shape:
                return "fail", f"output {n}: shape {got.shape}, expected {ref.shape}"
            if ref.dtype.kind in "fc":
                ok = np.allclose(got, ref, rtol=rtol, atol=1e-7, equal_nan=True)
            else:
                ok = np.array_equal(got, ref)
            if not ok:
                diff = np.abs(got.astype(np.float64) - ref.astype(np.float64)).max()
                return "fail", f"output {n}: max abs diff {diff:.3g}"
    return "pass", ""


def guarded(test_dir, tools, work):
    try:
        return run_test(test_dir, tools, work)
    except Exception as e:  # noqa: BLE001 — a broken test is a failure, not a crash
        return "fail", f"{type(e).__name__}: {e}"[:150]


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--tools", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--data", default=DATA)
    p.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    p.add_argument("--filter", default="", help="substring of test names to run")
    args = p.parse_args()
    required = {l.strip() for l in open(os.path.join(HERE, "conformance-required.txt"))
                if l.strip() and not l.startswith("#")}
    tests = sorted(d for d in glob.glob(os.path.join(args.data, "test_*"))
                   if args.filter in os.path.basename(d))
    if not tests:
        print(f"no ONNX node tests under {args.data} (install libonnx-testdata)")
        print("0 passed, 1 failed")
        sys.exit(1)
    os.makedirs(args.work, exist_ok=True)
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        results = dict(zip(tests, pool.map(lambda t: guarded(t, args.tools, args.work), tests)))

    counts = {"pass": 0, "fail": 0, "unsupported": 0}
    regressions, new_passes = [], []
    print(f"{'test':<60} result")
    for t, (status, detail) in results.items():
        name = os.path.basename(t)
        counts[status] += 1
        if name in required and status != "pass":
            regressions.append(name)
        if status == "pass" and name not in required:
            new_passes.append(name)
        if status != "unsupported" or name in required:
            flag = " (REQUIRED)" if name in required and status != "pass" else ""
            print(f"{name:<60} {status}{flag} {detail}")
    missing = sorted(required - {os.path.basename(t) for t in tests})
    print(f"conformance: {len(tests)} node tests: {counts['pass']} pass, "
          f"{counts['fail']} fail, {counts['unsupported']} unsupported by the importer")
    if new_passes:
        print(f"passing but not yet required ({len(new_passes)}): " + " ".join(new_passes))
    for m in missing:
        print(f"required test {m} was not found")
    req_pass = sum(1 for t, (s, _) in results.items()
                   if os.path.basename(t) in required and s == "pass")
    req_fail = len(regressions) + len(missing)
    print(f"conformance (required list): {req_pass} passed, {req_fail} failed")
    sys.exit(1 if req_fail else 0)


if __name__ == "__main__":
    main()
