#!/usr/bin/python3
"""The cuda backend against the cpu backend, model by model (needs a GPU).

For each model (the shared third-party models and the generated
transformers): make inputs with a fixed seed, `parc compile` it for the cpu
target (f32) and for the cuda target (each --dtypes entry), run both with
`parc-run` on the same inputs, and compare every output:

    error = max|cuda - cpu| / max|cpu|

    f32:  must be <= 1e-4   (same arithmetic, different summation order)
    bf16: must be <= 2e-2   (cuda computes in bf16, the cpu reference in f32)
    f16:  must be <= 1e-2

Prints one row per (model, dtype) and `N passed, N failed`; exits 1 on any
failure. A check that cannot run (compile or run error) is a failure, never
a pass. Without a visible GPU nothing is checked: the script says so and
exits 2, or 0 when --skip-if-no-gpu is given (for CI without GPUs); either
way it reports no passes. --bench adds the median forward latency of both
backends to each row.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
# The shared models' input specs and the input generator are differential.py's.
import differential  # noqa: E402

TOLERANCE = {"f32": 1e-4, "bf16": 2e-2, "f16": 1e-2}


def gpu_visible():
    smi = shutil.which("nvidia-smi")
    if not smi:
        return False, "nvidia-smi not found"
    r = subprocess.run([smi, "-L"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    if r.returncode or "GPU" not in r.stdout:
        return False, (r.stdout.strip().splitlines() or ["no GPU listed"])[-1]
    return True, r.stdout.strip().splitlines()[0]


def run(cmd, log):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    log.write("$ " + " ".join(cmd) + "\n" + r.stdout)
    log.flush()
    if r.returncode:
        lines = [l for l in r.stdout.strip().splitlines() if l.strip()]
        raise RuntimeError(lines[-1] if lines else f"exit {r.returncode}")
    return r.stdout


def latency(output):
    m = re.search(r"latency ms.* p50=([0-9.]+)", output)
    return float(m.group(1)) if m else float("nan")


def compile_and_run(args, role, model_path, shape_flags, inputs, target, dtype, work, log):
    out = os.path.join(work, f"{role}-{target}-{dtype}")
    run([os.path.join(args.tools, "parc"), "compile", model_path, "-o", out, "--quiet",
         "--target", target, "--dtype", dtype] + shape_flags, log)
    res = os.path.join(work, f"{role}-{target}-{dtype}-outputs")
    cmd = [os.path.join(args.tools, "parc-run"), out, "--output-dir", res,
           "--timeout", str(args.timeout)] + [f"--input={n}={p}" for n, p in inputs.items()]
    if args.bench:
        cmd += ["--repeat", "20", "--warmup", "3"]
    text = run(cmd, log)
    return out, res, latency(text) if args.bench else None


def compare(manifest_outputs, ref_dir, got_dir):
    worst_abs = worst_rel = 0.0
    for out in manifest_outputs:
        fname = out["file"]  # as differential.output_file: the manifest's
        want = np.load(os.path.join(ref_dir, fname)).astype(np.float64)
        got = np.load(os.path.join(got_dir, fname)).astype(np.float64)
        if got.shape != want.shape:
            raise RuntimeError(f"output {out['name']}: shape {got.shape} vs cpu {want.shape}")
        if not np.array_equal(np.isnan(got), np.isnan(want)):
            raise RuntimeError(f"output {out['name']}: NaNs differ from the cpu backend")
        finite = np.isfinite(want) & np.isfinite(got)
        err = np.abs(got[finite] - want[finite]).max() if finite.any() else 0.0
        scale = np.abs(want[finite]).max() if finite.any() else 0.0
        worst_abs = max(worst_abs, err)
        worst_rel = max(worst_rel, err / scale if scale else err)
    return worst_abs, worst_rel


def models(args):
    found = [(n, os.path.join(differential.SHARED, n + ".onnx"), s)
             for n, s in differential.SHARED_MODELS.items()]
    generated = args.generated
    if not generated:
        generated = os.path.join(args.work, "models")
        subprocess.run(["/usr/bin/python3", os.path.join(ROOT, "examples", "models", "generate.py"),
                        "--out", generated], check=True, stdout=subprocess.DEVNULL)
    for f in sorted(os.listdir(generated)):
        if f.endswith(".json"):
            n = f[:-5]
            found.append((n, os.path.join(generated, n + ".onnx"),
                          differential.generated_spec(os.path.join(generated, f))))
    if args.only:
        found = [m for m in found if m[0] in args.only]
    return found


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tools", required=True, help="directory with parc and parc-run")
    p.add_argument("--work", required=True, help="scratch directory")
    p.add_argument("--generated", help="generated models (.onnx + .json); default: generate into --work")
    p.add_argument("--dtypes", default="f32,bf16", help="cuda compute dtypes to check (f32,bf16,f16)")
    p.add_argument("--only", nargs="*", help="model names")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--timeout", type=int, default=120, help="collective timeout of each run, s")
    p.add_argument("--bench", action="store_true", help="also report forward latency")
    p.add_argument("--skip-if-no-gpu", action="store_true",
                   help="exit 0 (after saying that nothing was checked) when no GPU is visible")
    p.add_argument("--candidate", default="cuda", choices=["cuda", "cpu"],
                   help="target under test; cpu checks this script itself on a machine "
                        "without a GPU (cpu against cpu, proves nothing about cuda)")
    args = p.parse_args()

    ok, what = gpu_visible() if args.candidate == "cuda" else (True, "self-test: cpu against cpu")
    if not ok:
        print(f"cuda_vs_cpu: no GPU visible ({what}): nothing was checked, nothing passed")
        sys.exit(0 if args.skip_if_no_gpu else 2)
    print(f"cuda_vs_cpu: {what}")
    dtypes = [d for d in args.dtypes.split(",") if d]
    for d in dtypes:
        if d not in TOLERANCE:
            sys.exit(f"cuda_vs_cpu: unknown dtype '{d}' (f32, bf16, f16)")
    os.makedirs(args.work, exist_ok=True)

    passed = failed = 0
    header = f"{'model':<48} {'dtype':<5} {'max abs err':>12} {'max rel err':>12} {'tol':>7}"
    if args.bench:
        header += f" {'cpu ms':>9} {'cuda ms':>9}"
    print(header + "  result")
    with open(os.path.join(args.work, "log.txt"), "w") as log:
        for name, path, spec in models(args):
            work = os.path.join(args.work, name)
            os.makedirs(work, exist_ok=True)
            shape_flags = differential.shape_flags(spec)
            try:
                inputs = differential.make_inputs(path, spec, np.random.default_rng(args.seed), work)
                cpu_out, cpu_res, cpu_ms = compile_and_run(
                    args, "reference", path, shape_flags, inputs, "cpu", "f32", work, log)
                cpu_error = None
            except Exception as e:  # noqa: BLE001 — every dtype row fails
                cpu_error = f"cpu reference: {e}"
            for dtype in dtypes:
                tol = TOLERANCE[dtype]
                row = f"{name:<48} {dtype:<5}"
                try:
                    if cpu_error:
                        raise RuntimeError(cpu_error)
                    out, res, cuda_ms = compile_and_run(
                        args, "candidate", path, shape_flags, inputs, args.candidate, dtype, work,
                        log)
                    manifest = json.load(open(os.path.join(out, "manifest.json")))
                    err_abs, err_rel = compare(manifest["outputs"], cpu_res, res)
                    good = err_rel <= tol
                    row += f" {err_abs:>12.3e} {err_rel:>12.3e} {tol:>7.0e}"
                    if args.bench:
                        row += f" {cpu_ms:>9.3f} {cuda_ms:>9.3f}"
                    row += "  " + ("PASS" if good else "FAIL")
                except Exception as e:  # noqa: BLE001 — report and continue
                    good = False
                    row += f" {'':>12} {'':>12} {tol:>7.0e}  FAIL: {e}"
                print(row, flush=True)
                passed += good
                failed += not good
    print(f"cuda_vs_cpu (parc {args.candidate} vs parc cpu): {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
