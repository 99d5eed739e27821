#!/usr/bin/python3
"""Pipeline-parallel differential test on the cpu target.

For each case (model, --pp P, --tp T, --micro-batches M, optional
--pp-layout, --pp-virtual V, --dtype): `parc compile` + `parc-run` on P·T
ranks, compared with onnxruntime (tools/ort-reference) and with the
single-rank parc program on the same inputs:

    error = max|parc - ref| / max|ref|     must be <= 1e-4 for both

(3e-2 for the bf16 case, as in differential.py), and checked against the
model's own configuration: the manifest's world size is P·T, its layers per
stage sum to the model's layer count (from the generator's config, or
counted in the ONNX graph) and equal the layout when one is given, and the
run prints a measured bubble next to the analytic (P-1)/(V·M+P-1), and
with T > 1 the ranks send collective bytes (differential.py's check). Cases
on `<model>.ext` run the model saved with its weights as ONNX external data
(written under --work at test time). Specs
that do not fit (more stages than layers, a layout that does not sum, a
batch M does not divide, a rank count other than the mesh's) must be
refused with a message and leave no output.

The default matrix is the CI one (a representative set: PP 2 and 4, PP×TP
2×2, M 1, 2 and 4, even and uneven layouts, interleaved virtual stages);
--full runs every model at PP {2, 4} × TP {1, 2} × M {1, 2, 4} × V {1, 2}
where the spec fits.
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import differential as diff  # noqa: E402  (shared input and model specs)

ROOT = diff.ROOT

# name -> (where, batch to bind); generated models come from --generated
# (2 layers, batch 2) and --deep (4-6 layers, batch 4).
SHARED = {"bert_toy_optimized": 5}  # layers, counted in the graph (5 attention blocks)

CI_CASES = [
    # model, pp, tp, micro-batches, layout[, virtual stages[, dtype]]
    ("gpt2", 2, 1, 1, None),
    ("gpt2", 2, 1, 2, None),
    ("gpt2", 2, 2, 2, None),
    ("llama", 2, 1, 2, None),
    ("neox", 2, 2, 1, None),
    ("bert", 2, 1, 2, None),
    ("mixtral", 2, 1, 2, None),
    ("bert_toy_optimized", 2, 1, 4, "2,3"),
    ("bert_toy_optimized", 4, 1, 2, None),
    ("gpt2_l6", 4, 1, 4, None),
    ("gpt2_l6", 2, 2, 4, "2,4"),
    ("llama_l5", 4, 1, 1, "1,1,2,1"),
    ("llama_l5", 2, 2, 2, None),
    ("bert_l4", 4, 1, 4, "1,1,1,1"),
    ("neox_l4", 2, 2, 4, "3,1"),
    # interleaved virtual stages
    ("gpt2_l6", 2, 1, 4, None, 3),
    ("llama_l5", 2, 2, 2, "1,2,1,1", 2),
    # bf16 compute: sends and receives of bf16 activations
    ("gpt2", 2, 2, 2, None, 1, "bf16"),
    # weights as ONNX external data (--external-models): split as embedded
    ("gpt2.ext", 2, 2, 1, None),
    ("llama.ext", 2, 2, 2, None),
    ("bert_toy_optimized.ext", 2, 2, 1, None),
    # The batch of 4 fixed inside the graph (dist-split-batch), with stages
    # and without (pp 1: independent micro-batch chains).
    ("gpt2_fixed", 2, 1, 2, None),
    ("gpt2_fixed", 1, 1, 2, None),
    ("gpt2_fixed", 1, 2, 4, None),
    ("llama_fixed", 2, 1, 2, None),
    ("llama_fixed", 1, 1, 2, None),
    ("llama_fixed", 2, 2, 4, None),
]

# Tolerance per compute dtype (as in differential.py).
RTOL = {"f32": 1e-4, "bf16": 3e-2}

# model, flags, what the message must contain
REFUSALS = [
    ("gpt2", ["--pp=4"], "needs at least one layer per stage"),
    ("gpt2_l6", ["--pp=2", "--pp-layout=2,3"], "sums to 5 layer(s), but the model has 6"),
    ("gpt2_l6", ["--pp=3", "--pp-layout=2,4"], "gives 2 stage(s), but --pp is 3"),
    ("gpt2_l6", ["--pp=2", "--micro-batches=3"], "--micro-batches 3 does not divide the batch"),
    ("gpt2_l6", ["--pp=4", "--pp-virtual=2"], "needs at least one layer per virtual stage (8)"),
    # Without --pp, micro-batches are independent chains (dist-micro-batch),
    # refused alike when they do not divide the batch.
    ("gpt2", ["--micro-batches=3"], "--micro-batches 3 does not divide the batch"),
    ("gpt2", ["--pp-layout=1,1"], "--pp-layout needs --pp 2 or more"),
]


def model_table(args):
    models = {}
    for directory in (args.generated, args.deep):
        for f in sorted(os.listdir(directory)):
            if f.endswith(".json"):
                name = f[:-5]
                cfg = json.load(open(os.path.join(directory, f)))
                spec = diff.generated_spec(os.path.join(directory, f))
                models[name] = (os.path.join(directory, name + ".onnx"), spec,
                                cfg["config"]["layers"], cfg["config"]["batch"])
    for name, layers in SHARED.items():
        spec = dict(diff.SHARED_MODELS[name])
        spec["shapes"] = {n: [4] + s[1:] for n, s in spec["shapes"].items()}
        models[name] = (os.path.join(diff.SHARED, name + ".onnx"), spec, layers, 4)
    # The external-data form of every model a case names `<model>.ext`,
    # written at test time.
    for name, *_ in CI_CASES:
        if name.endswith(".ext") and name[:-4] in models:
            path, spec, layers, batch = models[name[:-4]]
            ext = diff.external_form(name[:-4], path, os.path.join(args.work, "external-models"))
            models[name] = (ext, spec, layers, batch)
    return models


class References:
    """onnxruntime and single-rank parc outputs per model, computed once."""

    def __init__(self, args, models, log):
        self.args, self.models, self.log, self.cache = args, models, log, {}

    def get(self, name):
        if name in self.cache:
            return self.cache[name]
        path, spec, _, _ = self.models[name]
        work = os.path.join(self.args.work, name, "ref")
        os.makedirs(work, exist_ok=True)
        inputs = diff.make_inputs(path, spec, np.random.default_rng(self.args.seed), work)
        compiled = os.path.join(work, "out")
        diff.run([os.path.join(self.args.tools, "parc"), "compile", path, "-o", compiled,
                  "--quiet"] + diff.shape_flags(spec), self.log)
        diff.run([os.path.join(self.args.tools, "parc-run"), compiled, "--output-dir",
                  os.path.join(work, "single")] +
                 [f"--input={n}={p}" for n, p in inputs.items()], self.log)
        diff.run(["node", os.path.join(ROOT, "tools", "ort-reference", "ort-run.mjs"), path,
                  "--output-dir", os.path.join(work, "ort")] +
                 sum((["--input", f"{n}={p}"] for n, p in inputs.items()), []), self.log)
        manifest = json.load(open(os.path.join(compiled, "manifest.json")))
        self.cache[name] = (inputs, diff.outputs_of(os.path.join(work, "ort"), manifest),
                            diff.outputs_of(os.path.join(work, "single"), manifest))
        return self.cache[name]


def check_case(args, models, refs, log, name, pp, tp, m, layout, virtual=1, dtype="f32"):
    path, spec, layers, batch = models[name]
    inputs, ort, single = refs.get(name)
    tag = (f"pp{pp}-tp{tp}-m{m}-v{virtual}" + ("" if dtype == "f32" else f"-{dtype}") +
           (f"-l{layout.replace(',', '_')}" if layout else ""))
    work = os.path.join(args.work, name, tag)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    compiled = os.path.join(work, "out")
    flags = [f"--pp={pp}", f"--tp={tp}", f"--micro-batches={m}", f"--pp-virtual={virtual}",
             f"--dtype={dtype}"]
    if layout:
        flags.append(f"--pp-layout={layout}")
    start = time.time()
    diff.run([os.path.join(args.tools, "parc"), "compile", path, "-o", compiled, "--quiet"] +
             flags + diff.shape_flags(spec), log)
    r = subprocess.run([os.path.join(args.tools, "parc-run"), compiled, "--output-dir",
                        os.path.join(work, "parc")] +
                       [f"--input={n}={p}" for n, p in inputs.items()],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    log.write(r.stdout)
    if r.returncode:
        raise RuntimeError("run failed: " + r.stdout.strip().splitlines()[-1])
    seconds = time.time() - start
    manifest = json.load(open(os.path.join(compiled, "manifest.json")))
    diff.check_tp_communicates(manifest, tp)
    if manifest["world_size"] != pp * tp or len(manifest["ranks"]) != pp * tp:
        raise RuntimeError(f"world size {manifest['world_size']}, expected {pp * tp}")
    if len(manifest["programs"]) != pp:
        raise RuntimeError(f"{len(manifest['programs'])} programs for {pp} stages")
    got = diff.outputs_of(os.path.join(work, "parc"), manifest)
    if pp == 1:
        # Micro-batches without stages: independent chains, no bubble.
        if manifest.get("micro_batches") != m:
            raise RuntimeError(f"manifest micro_batches {manifest.get('micro_batches')}, "
                               f"expected {m}")
        return (diff.rel_err(got, ort), diff.rel_err(got, single), [layers], 0.0, 0.0,
                seconds)
    per_stage = manifest["pipeline"]["layers_per_stage"]
    if sum(per_stage) != layers or len(per_stage) != pp * virtual:
        raise RuntimeError(f"layers per stage {per_stage} for {layers} layers")
    if layout and per_stage != [int(x) for x in layout.split(",")]:
        raise RuntimeError(f"layers per stage {per_stage}, layout was {layout}")
    bubble = re.search(r"pipeline bubble: measured ([0-9.]+) .* = ([0-9.]+)", r.stdout)
    if not bubble:
        raise RuntimeError("the run printed no pipeline bubble")
    analytic = (pp - 1) / (virtual * m + pp - 1)
    if abs(float(bubble.group(2)) - analytic) > 1e-3:
        raise RuntimeError(f"analytic bubble {bubble.group(2)}, expected {analytic:.3f}")
    return (diff.rel_err(got, ort), diff.rel_err(got, single), per_stage, float(bubble.group(1)),
            analytic, seconds)


def check_refusal(args, models, log, name, flags, expect):
    path, spec, _, _ = models[name]
    compiled = os.path.join(args.work, name, "refused", "out")
    shutil.rmtree(compiled, ignore_errors=True)
    os.makedirs(os.path.dirname(compiled), exist_ok=True)
    r = subprocess.run([os.path.join(args.tools, "parc"), "compile", path, "-o", compiled] +
                       flags + diff.shape_flags(spec),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    log.write(r.stdout)
    if r.returncode == 0 or expect not in r.stdout:
        raise RuntimeError(f"not refused with '{expect}': {r.stdout.strip()[-200:]}")
    if os.path.exists(compiled):
        raise RuntimeError("a refused compile left its output directory behind")


def check_np_mismatch(args, log):
    """parc-run --np other than the mesh's world size, and mpirun started on
    fewer ranks than the mesh: both refused, naming the mesh."""
    compiled = os.path.join(args.work, "gpt2", "pp2-tp2-m2-v1", "out")
    inputs = os.path.join(args.work, "gpt2", "ref", "input_ids.npy")
    r = subprocess.run([os.path.join(args.tools, "parc-run"), compiled, "--np", "3",
                        f"--input=input_ids={inputs}"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    log.write(r.stdout)
    if r.returncode == 0 or "needs 4 ranks (mesh 2x2)" not in r.stdout:
        raise RuntimeError("parc-run --np 3 on a 2x2 mesh was not refused: " + r.stdout)
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    r = subprocess.run(["mpirun", "--oversubscribe", "-np", "2",
                        os.path.join(compiled, "bin", "stage0"),
                        f"--weights-dir={os.path.join(compiled, 'weights')}",
                        f"--input=input_ids={inputs}"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                       timeout=120)
    log.write(r.stdout)
    if r.returncode == 0 or "compiled for a mesh of 4 ranks (2x2), but the world has 2" not in r.stdout:
        raise RuntimeError("mpirun -np 2 on a 2x2 mesh was not refused: " + r.stdout[-300:])


def check_trace(args, log):
    """parc-run --trace: one Chrome trace-event file, a row (pid) per rank
    with a compute and a communication track, and the pipeline's sends and
    receives on the latter."""
    compiled = os.path.join(args.work, "gpt2", "pp2-tp2-m2-v1", "out")
    inputs = os.path.join(args.work, "gpt2", "ref", "input_ids.npy")
    trace = os.path.join(args.work, "gpt2", "trace.json")
    diff.run([os.path.join(args.tools, "parc-run"), compiled, "--trace", trace, "--repeat", "2",
              f"--input=input_ids={inputs}"], log)
    events = json.load(open(trace))["traceEvents"]
    spans = [e for e in events if e.get("ph") == "X"]
    rows = {e["pid"] for e in spans}
    if rows != {0, 1, 2, 3}:
        raise RuntimeError(f"trace rows {sorted(rows)}, expected ranks 0-3")
    for rank in rows:
        tracks = {e["tid"] for e in spans if e["pid"] == rank}
        if tracks != {0, 1}:
            raise RuntimeError(f"rank {rank} has tracks {sorted(tracks)}, expected compute and comm")
    names = {e["name"].split()[0] for e in spans if e["tid"] == 1}
    # The tensor-parallel all-reduce is started and waited for (dist-overlap).
    for kind in ("send_start", "recv_start", "recv_wait", "all_reduce_start",
                 "all_reduce_wait"):
        if kind not in names:
            raise RuntimeError(f"no '{kind}' on the communication track")
    if any(e["dur"] < 0 for e in spans):
        raise RuntimeError("negative durations")
    if [f for f in os.listdir(os.path.dirname(trace)) if ".rank" in f]:
        raise RuntimeError("per-rank trace files were left behind")


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--tools", required=True)
    p.add_argument("--generated", required=True, help="generate.py output (2-layer models)")
    p.add_argument("--deep", required=True,
                   help="generate.py --only gpt2_l6 llama_l5 bert_l4 neox_l4 output")
    p.add_argument("--work", required=True)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--rtol", type=float, default=1e-4)
    p.add_argument("--full", action="store_true",
                   help="every model at PP {2,4} x TP {1,2} x M {1,2,4} that fits")
    p.add_argument("--only", nargs="*", help="models to run")
    args = p.parse_args()
    os.makedirs(args.work, exist_ok=True)
    models = model_table(args)
    cases = CI_CASES
    if args.full:
        cases = [(n, pp, tp, m, None, v) for n, (_, spec, layers, batch) in models.items()
                 for pp in (2, 4) for tp in (1, 2) for m in (1, 2, 4) for v in (1, 2)
                 if pp * v <= layers and batch % m == 0 and diff.spec_fits(spec, tp)]
    if args.only:
        cases = [c for c in cases if c[0] in args.only]

    passed = failed = 0
    print(f"{'model':<20} {'pp':>2} {'tp':>2} {'M':>2} {'V':>1} {'layers/stage':<12} "
          f"{'rel vs ort':>10} {'rel vs 1rk':>10} {'bubble':>6} {'analytic':>8} "
          f"{'time s':>6}  result")
    with open(os.path.join(args.work, "log.txt"), "w") as log:
        refs = References(args, models, log)
        for name, pp, tp, m, layout, *rest in cases:
            virtual = rest[0] if rest else 1
            dtype = rest[1] if len(rest) > 1 else "f32"
            rtol = args.rtol if dtype == "f32" else RTOL[dtype]
            try:
                e_ort, e_single, per_stage, bubble, analytic, secs = check_case(
                    args, models, refs, log, name, pp, tp, m, layout, virtual, dtype)
                ok = e_ort <= rtol and e_single <= rtol
                row = (f"{','.join(map(str, per_stage)):<12} {e_ort:>10.2e} {e_single:>10.2e} "
                       f"{bubble:>6.3f} {analytic:>8.3f} {secs:>6.1f}  "
                       f"{'PASS' if ok else 'FAIL'}")
            except Exception as e:  # noqa: BLE001 — report and continue
                ok, row = False, f"FAIL: {e}"
            label = name if dtype == "f32" else f"{name} ({dtype})"
            print(f"{label:<20} {pp:>2} {tp:>2} {m:>2} {virtual:>1} {row}", flush=True)
            passed += ok
            failed += not ok
        checks = [(f"refuse {n} {' '.join(f)}",
                   lambda n=n, f=f, e=e: check_refusal(args, models, log, n, f, e))
                  for n, f, e in REFUSALS if not args.only or n in args.only]
        if not args.only or "gpt2" in args.only:
            checks.append(("refuse a rank count other than the mesh's",
                           lambda: check_np_mismatch(args, log)))
            checks.append(("parc-run --trace: a row per rank, compute and comm tracks",
                           lambda: check_trace(args, log)))
        p, f = diff.run_checks(checks, 60)
        passed, failed = passed + p, failed + f
    print(f"pipeline (parc cpu vs onnxruntime and single-rank parc, rtol {args.rtol}, "
          f"bf16 {RTOL['bf16']}): "
          f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
