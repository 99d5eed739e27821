#!/usr/bin/python3
"""Data-parallel differential test on the cpu target (`parc compile --dp N`).

Each case compiles a generated model (build/models) at batch 4 with --dp N
and other degrees, runs it with parc-run on N replicas of the inner mesh,
and compares the whole batch's outputs with onnxruntime (tools/ort-reference)
and with the single-rank parc program at batch 4 on the same inputs:

    error = max|parc - ref| / max|ref|     must be <= 1e-4 for both

The manifest is checked against the spec: world size N·inner, mesh with a
leading "dp" axis of N, ranks of replica k consecutive (k·inner ..), every
rank reading the weight file of its rank in replica 0 (only those files on
disk) and holding what that rank holds; with --tp the weight bytes are
Megatron's (shardable/tp + replicated, from the ONNX initializers) and the
bytes sent per rank are those of one replica at batch 4/N (differential.py's
analytic count); for MoE, parc-run's tokens per expert summed over the
replicas equal the single-rank run's on the whole batch. Refusals: a batch --dp does not divide (naming the input
and its dim 0), --dp 0, parc-run --np other than the world, mpirun on a
world that is not N·inner, and an input file of another batch.
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
BATCH = 4

# model, flags (besides --dp), dp
CASES = [
    ("gpt2", [], 2),
    ("gpt2", [], 4),
    ("gpt2", ["--tp=2"], 2),
    ("llama", ["--tp=2"], 2),
    ("bert", [], 2),
    ("gpt2", ["--pp=2", "--micro-batches=2"], 2),
    ("neox", ["--pp=2", "--micro-batches=2"], 2),
    ("neox", ["--tp=2", "--sp"], 2),
    ("gpt2", ["--pp=2", "--tp=2", "--micro-batches=2"], 2),
    ("mixtral", ["--ep=2"], 2),
    ("mixtral", ["--ep=2", "--tp=2", "--etp"], 2),
]

# model, flags, batch, what the message must contain
REFUSALS = [
    ("gpt2", ["--dp=3"], 4,
     "--dp 3 does not divide the batch of input 'input_ids' (dim 0 of tensor<4x16xi64> is 4)"),
    ("gpt2", ["--dp=0"], 4, "--dp must be at least 1"),
    ("gpt2", ["--dp=2", "--micro-batches=4"], 4,
     "--micro-batches 4 does not divide the batch of input 'input_ids' "
     "(dim 0 of tensor<4x16xi64> is 4, 2 per --dp replica)"),
]


def model_table(generated):
    models = {}
    for f in sorted(os.listdir(generated)):
        if f.endswith(".json"):
            name = f[:-5]
            cfg = json.load(open(os.path.join(generated, f)))
            spec = diff.generated_spec(os.path.join(generated, f))
            spec["shapes"] = {n: [BATCH] + s[1:] for n, s in spec["shapes"].items()}
            models[name] = (os.path.join(generated, name + ".onnx"), spec, cfg)
    return models


class References:
    """onnxruntime and single-rank parc outputs at the whole batch, once per
    model."""

    def __init__(self, args, models, log):
        self.args, self.models, self.log, self.cache = args, models, log, {}

    def get(self, name):
        if name in self.cache:
            return self.cache[name]
        path, spec, _ = self.models[name]
        work = os.path.join(self.args.work, name, "ref")
        os.makedirs(work, exist_ok=True)
        inputs = diff.make_inputs(path, spec, np.random.default_rng(self.args.seed), work)
        compiled = os.path.join(work, "out")
        diff.run([os.path.join(self.args.tools, "parc"), "compile", path, "-o", compiled,
                  "--quiet"] + diff.shape_flags(spec), self.log)
        routing = run_routing([os.path.join(self.args.tools, "parc-run"), compiled,
                               "--output-dir", os.path.join(work, "single")] +
                              [f"--input={n}={p}" for n, p in inputs.items()], self.log)
        diff.run(["node", os.path.join(ROOT, "tools", "ort-reference", "ort-run.mjs"), path,
                  "--output-dir", os.path.join(work, "ort")] +
                 sum((["--input", f"{n}={p}"] for n, p in inputs.items()), []), self.log)
        manifest = json.load(open(os.path.join(compiled, "manifest.json")))
        self.cache[name] = (inputs, diff.outputs_of(os.path.join(work, "ort"), manifest),
                            diff.outputs_of(os.path.join(work, "single"), manifest),
                            manifest, routing)
        return self.cache[name]


def run_routing(cmd, log):
    """Runs parc-run; returns its MoE summary: tokens per expert per layer."""
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    log.write("$ " + " ".join(cmd) + "\n" + r.stdout)
    if r.returncode:
        raise RuntimeError(r.stdout.strip().splitlines()[-1] if r.stdout.strip() else
                           f"exit {r.returncode}")
    return re.findall(r"parc-run: moe (\S+): tokens per expert (\[[0-9 ]*\])", r.stdout)


def degree(flags, name):
    for f in flags:
        if f.startswith(f"--{name}="):
            return int(f.split("=")[1])
    return 1


def check_manifest(manifest, compiled, dp, flags, single, model_path, spec, cfg):
    tp, pp, ep = degree(flags, "tp"), degree(flags, "pp"), degree(flags, "ep")
    # --etp: ep groups of tp ranks; otherwise experts share the tp ranks.
    inner = pp * (tp * ep if "--etp" in flags else max(tp, ep))
    world = dp * inner
    if manifest["world_size"] != world or len(manifest["ranks"]) != world:
        raise RuntimeError(f"world size {manifest['world_size']}, expected {dp}x{inner}")
    if manifest["data_parallel"] != dp or manifest["ranks_per_replica"] != inner:
        raise RuntimeError(f"data_parallel {manifest['data_parallel']}, ranks_per_replica "
                           f"{manifest['ranks_per_replica']}")
    mesh = manifest["mesh"]
    if mesh["axes"][0] != "dp" or mesh["shape"][0] != dp or \
            int(np.prod(mesh["shape"])) != world:
        raise RuntimeError(f"mesh {mesh}, expected a leading dp axis of {dp}")
    ranks = sorted(manifest["ranks"], key=lambda r: r["rank"])
    for r in ranks:
        first = ranks[r["rank"] % inner]
        if (r["replica"], r["replica_rank"]) != divmod(r["rank"], inner):
            raise RuntimeError(f"rank {r['rank']}: replica {r['replica']}, "
                               f"replica_rank {r['replica_rank']}")
        if r["weights"] != f"weights/rank{r['rank'] % inner}.safetensors" or \
                r["program"] != first["program"] or \
                r["weight_bytes"] != first["weight_bytes"]:
            raise RuntimeError(f"rank {r['rank']} does not read the weights of rank "
                               f"{r['rank'] % inner}: {r}")
        size = os.path.getsize(os.path.join(compiled, r["weights"]))
        if size != r["weight_file_bytes"]:
            raise RuntimeError(f"{r['weights']}: {size} B on disk, manifest says "
                               f"{r['weight_file_bytes']}")
    files = sorted(os.listdir(os.path.join(compiled, "weights")))
    if len(files) != inner:
        raise RuntimeError(f"{len(files)} weight files for {inner} ranks per replica: {files}")
    one = single["ranks"][0]["weight_bytes"]
    if inner == 1 and ranks[0]["weight_bytes"] != one:
        raise RuntimeError(f"a one-rank replica holds {ranks[0]['weight_bytes']} B, the "
                           f"model {one} B")
    if tp > 1 and pp == 1 and spec.get("weights"):
        total, kept = spec["weights"](model_path, tp)
        # + the embedding's int64 row bounds and its identity table of ids
        want = one - total + kept + 3 * 8 + spec["vocab"] * 8
        if any(r["weight_bytes"] != want for r in ranks):
            raise RuntimeError(f"weight bytes {[r['weight_bytes'] for r in ranks]}; "
                               f"shardable/tp + replicated is {want} B")
    if tp > 1 and pp == 1 and spec.get("comm_bytes") and \
            BATCH // dp == cfg["config"]["batch"]:
        # differential.py's count is for the generator's batch: a replica's.
        want = spec["comm_bytes"](tp, 4, "--sp" in flags)
        if manifest["comm_bytes_per_forward"] != want or \
                manifest["comm_bytes_per_forward_all_replicas"] != dp * want:
            raise RuntimeError(f"{manifest['comm_bytes_per_forward']} B sent per rank of a "
                               f"replica, Megatron's count is {want} B")
    for t in manifest["inputs"] + manifest["outputs"]:
        if t["shape"][0] != BATCH:
            raise RuntimeError(f"manifest {t['name']}: {t['shape']}, not the whole batch")


def check_case(args, models, refs, log, name, flags, dp):
    path, spec, cfg = models[name]
    inputs, ort, single, single_manifest, single_routing = refs.get(name)
    tag = f"dp{dp}" + "".join(f.lstrip("-").replace("=", "") for f in flags)
    work = os.path.join(args.work, name, tag)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    compiled = os.path.join(work, "out")
    start = time.time()
    diff.run([os.path.join(args.tools, "parc"), "compile", path, "-o", compiled, "--quiet",
              f"--dp={dp}"] + flags + diff.shape_flags(spec), log)
    routing = run_routing([os.path.join(args.tools, "parc-run"), compiled, "--output-dir",
                           os.path.join(work, "parc")] +
                          [f"--input={n}={p}" for n, p in inputs.items()], log)
    seconds = time.time() - start
    # MoE: the replicas' routing together is the whole batch's.
    if routing != single_routing:
        raise RuntimeError(f"tokens per expert summed over replicas {routing}, one rank "
                           f"on the whole batch {single_routing}")
    manifest = json.load(open(os.path.join(compiled, "manifest.json")))
    tp = next((int(f.split("=")[1]) for f in flags if f.startswith("--tp=")), 1)
    diff.check_tp_communicates(manifest, tp)
    check_manifest(manifest, compiled, dp, flags, single_manifest, path, spec, cfg)
    got = diff.outputs_of(os.path.join(work, "parc"), manifest)
    return diff.rel_err(got, ort), diff.rel_err(got, single), manifest["world_size"], seconds


def check_refusal(args, models, log, name, flags, batch, expect):
    path, spec, _ = models[name]
    compiled = os.path.join(args.work, name, "refused", "out")
    shutil.rmtree(compiled, ignore_errors=True)
    os.makedirs(os.path.dirname(compiled), exist_ok=True)
    shapes = {n: [batch] + s[1:] for n, s in spec["shapes"].items()}
    r = subprocess.run([os.path.join(args.tools, "parc"), "compile", path, "-o", compiled] +
                       flags + diff.shape_flags({"shapes": shapes}),
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    log.write(r.stdout)
    if r.returncode == 0 or expect not in r.stdout:
        raise RuntimeError(f"not refused with '{expect}': {r.stdout.strip()[-300:]}")
    if os.path.exists(compiled):
        raise RuntimeError("a refused compile left its output directory behind")


def check_run_refusals(args, log):
    """On the gpt2 --dp 2 --tp 2 build (world 4): parc-run --np 3, mpirun
    with 3 ranks and --data-parallel=2, an --output-rank outside replica 0
    and an input of batch 2 instead of 4 are refused, each naming what does
    not fit."""
    compiled = os.path.join(args.work, "gpt2", "dp2tp2", "out")
    ids = os.path.join(args.work, "gpt2", "ref", "input_ids.npy")
    r = subprocess.run([os.path.join(args.tools, "parc-run"), compiled, "--np", "3",
                        f"--input=input_ids={ids}"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    log.write(r.stdout)
    if r.returncode == 0 or "needs 4 ranks (mesh 2x2)" not in r.stdout:
        raise RuntimeError("parc-run --np 3 on a 2x2 dp x tp mesh was not refused: " + r.stdout)
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    r = subprocess.run(["mpirun", "--oversubscribe", "-np", "3",
                        os.path.join(compiled, "bin", "main"), "--data-parallel=2",
                        f"--weights-dir={os.path.join(compiled, 'weights')}",
                        f"--input=input_ids={ids}"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                       timeout=120)
    log.write(r.stdout)
    want = "--data-parallel=2 replicas of a mesh of 2 ranks (2) need 4 ranks, but the world has 3"
    if r.returncode == 0 or want not in r.stdout:
        raise RuntimeError("mpirun -np 3 with 2 replicas of 2 ranks was not refused: " +
                           r.stdout[-300:])
    r = subprocess.run(["mpirun", "--oversubscribe", "-np", "4",
                        os.path.join(compiled, "bin", "main"), "--data-parallel=2",
                        "--output-rank=2", f"--weights-dir={os.path.join(compiled, 'weights')}",
                        f"--input=input_ids={ids}"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env,
                       timeout=120)
    log.write(r.stdout)
    want = "--output-rank=2 is not a rank of replica 0 (ranks 0 to 1) with --data-parallel=2"
    if r.returncode == 0 or want not in r.stdout:
        raise RuntimeError("an output rank outside replica 0 was not refused: " +
                           r.stdout[-300:])
    half = os.path.join(args.work, "gpt2", "half_batch.npy")
    np.save(half, np.load(ids)[:2])
    out = os.path.join(args.work, "gpt2", "half_out")
    shutil.rmtree(out, ignore_errors=True)
    r = subprocess.run([os.path.join(args.tools, "parc-run"), compiled, "--output-dir", out,
                        f"--input=input_ids={half}"],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=120)
    log.write(r.stdout)
    if r.returncode == 0 or "holds i64[2,16], but the model expects i64[4,16]" not in r.stdout:
        raise RuntimeError("an input of batch 2 for a batch of 4 was not refused: " +
                           r.stdout[-300:])
    manifest = json.load(open(os.path.join(compiled, "manifest.json")))
    if os.path.exists(os.path.join(out, diff.output_file(manifest, "logits"))):
        raise RuntimeError("a refused run left an output behind")


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tools", required=True)
    p.add_argument("--generated", required=True, help="generate.py output")
    p.add_argument("--work", required=True)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--rtol", type=float, default=1e-4)
    p.add_argument("--only", nargs="*", help="models to run")
    args = p.parse_args()
    os.makedirs(args.work, exist_ok=True)
    models = model_table(args.generated)
    cases = [c for c in CASES if not args.only or c[0] in args.only]

    passed = failed = 0
    print(f"{'model':<10} {'dp':>2} {'flags':<30} {'world':>5} {'rel vs ort':>10} "
          f"{'rel vs 1rk':>10} {'time s':>6}  result")
    with open(os.path.join(args.work, "log.txt"), "w") as log:
        refs = References(args, models, log)
        for name, flags, dp in cases:
            try:
                e_ort, e_single, world, secs = check_case(args, models, refs, log, name,
                                                          flags, dp)
                ok = e_ort <= args.rtol and e_single <= args.rtol
                row = (f"{world:>5} {e_ort:>10.2e} {e_single:>10.2e} {secs:>6.1f}  "
                       f"{'PASS' if ok else 'FAIL'}")
            except Exception as e:  # noqa: BLE001 — report and continue
                ok, row = False, f"FAIL: {e}"
            print(f"{name:<10} {dp:>2} {' '.join(flags):<30} {row}", flush=True)
            passed += ok
            failed += not ok
        checks = [(f"refuse {n} {' '.join(f)} at batch {b}",
                   lambda n=n, f=f, b=b, e=e: check_refusal(args, models, log, n, f, b, e))
                  for n, f, b, e in REFUSALS if not args.only or n in args.only]
        if not args.only or "gpt2" in args.only:
            checks.append(("refuse a world other than 2x2, an output rank, a wrong batch",
                           lambda: check_run_refusals(args, log)))
        p, f = diff.run_checks(checks, 70)
        passed, failed = passed + p, failed + f
    print(f"data_parallel (parc cpu vs onnxruntime and single-rank parc, rtol {args.rtol}): "
          f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
