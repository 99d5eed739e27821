#!/usr/bin/python3
"""Overlap on equals overlap off.

dist-overlap cuts row-parallel products and their all-reduces into chunks
(collective matmul), starts every collective early, and interleaves
independent micro-batch chains. Rows of a product are independent, each
chunk is reduced on its own, and interleaving only reorders independent
work, so with the same inputs the program with overlap must compute what
the program without it (`parc compile --no-overlap`) computes: bitwise for
two ranks (a sum of two terms does not depend on the order), within 1e-5
relative otherwise (MPI may pick another reduction order for smaller
messages).

For each generated model and tp, three variants against --no-overlap:
  chunks2  `--overlap-chunks 2`: every candidate cut (the compile log must
           count the collective matmuls);
  auto     the default: cuts chosen by the cost model on the cpu preset;
  auto-slow  the cost model on a cluster whose slow, latency-free link and
           slow device make cutting pay (SLOW_LINK below): it must cut;
  mb2      `--micro-batches 2` without stages (tp 2 only), against
           `--micro-batches 2 --no-overlap`: the compile log must count
           switches between the micro-batch chains;
  sp-mb2   the same with `--sp` (tp 2 only);
  pp2-mb2  the same with `--pp 2` (tp 2 only, 4 ranks): the first stage's
           micro-batches interleave;
  ep2-mb2  MoE models only (and only the ep variants for them): `--ep 2
           --micro-batches 2` (tp 2: experts over the tensor-parallel
           ranks): the dispatch and combine all-to-alls are started (the
           program must call parc_rt_all_to_all_v_slices_start) and the
           chains switch;
  tp1-ep2-mb2  the same without tensor parallelism (`--tp 1`, 2 ranks).
Compile both ways, run both under mpirun on the same inputs, compare every
output. Prints a table (with the share of communication hidden that the
run reports, for information: it is a timing) and `N passed, N failed`;
exits 1 on any failure.
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


VARIANTS = {
    # name: (flags with overlap, flags of the reference, what must be counted)
    "chunks2": (["--overlap-chunks", "2"], ["--no-overlap"], "cut"),
    "auto": ([], ["--no-overlap"], None),
    "auto-slow": (["--cluster", "{slow_link}"], ["--no-overlap"], "cut"),
    "mb2": (["--micro-batches", "2"], ["--micro-batches", "2", "--no-overlap"], "switches"),
    "sp-mb2": (["--sp", "--micro-batches", "2"],
               ["--sp", "--micro-batches", "2", "--no-overlap"], "switches"),
    "pp2-mb2": (["--pp", "2", "--micro-batches", "2"],
                ["--pp", "2", "--micro-batches", "2", "--no-overlap"], "switches"),
    "ep2-mb2": (["--ep", "2", "--micro-batches", "2"],
                ["--ep", "2", "--micro-batches", "2", "--no-overlap"], "switches"),
    "tp1-ep2-mb2": (["--ep", "2", "--micro-batches", "2"],
                    ["--ep", "2", "--micro-batches", "2", "--no-overlap"], "switches"),
}


# A device of 1 GFLOP/s and a link of 0.1 GB/s without latency: a piece's
# product and collective both take long next to its launch and copies, so
# the cost model cuts even the test models' small products.
SLOW_LINK = {
    "name": "e2e-slow-link",
    "device": {"name": "slow", "peak_tflops": {"f32": 0.001}, "memory_gib": 4,
               "memory_bandwidth_gb_s": 100, "kernel_latency_us": 0},
    "devices_per_node": 8,
    "nodes": 1,
    "intra_node": {"name": "slow", "bandwidth_gb_s": 0.1, "latency_us": 0},
}


def counted(log, what):
    line = log.split("overlap: ")[1].split("\n")[0]
    if what == "cut":
        return int(line.split()[0])
    return int(line.split(" switch(es)")[0].split()[-1])


def hidden(log):
    for line in log.splitlines():
        if "% of it hidden" in line:
            return float(line.split("% of it hidden")[0].split()[-1])
    return float("nan")


def is_ep(variant):
    return "ep2" in variant


def check(args, name, tp, variant, cache):
    if variant.startswith("tp1-"):
        tp = 1
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
    on_flags, off_flags, what = VARIANTS[variant]
    slow_link = os.path.join(args.work, "slow-link.json")
    with open(slow_link, "w") as f:
        json.dump(SLOW_LINK, f)
    on_flags = [f.format(slow_link=slow_link) for f in on_flags]
    outputs, logs = {}, {}
    for mode, extra in (("on", on_flags), ("off", off_flags)):
        key = (name, tp, tuple(extra))
        if key not in cache:
            out = os.path.join(work, "-".join(
                ["o"] + [os.path.basename(f).strip("-") for f in extra]))
            log = run([os.path.join(args.tools, "parc"), "compile",
                       os.path.join(args.generated, name + ".onnx"), "--tp", str(tp),
                       "-o", out] + flags + extra)
            res = out + "-res"
            log += run([os.path.join(args.tools, "parc-run"), out,
                        "--output-dir", res] + inputs)
            cache[key] = (log, {f: np.load(os.path.join(res, f)) for f in sorted(os.listdir(res))
                                if f.endswith(".npy")})
        logs[mode], outputs[mode] = cache[key]
    note, started = "", 0
    if is_ep(variant):
        src = os.path.join(work, "o-" + "-".join(
            os.path.basename(f).strip("-") for f in on_flags), "src")
        code = "".join(open(os.path.join(src, f)).read() for f in os.listdir(src))
        started = code.count("parc_rt_all_to_all_v_slices_start(")
        # Two exchanges per MoE layer and micro-batch.
        expected = 2 * c["layers"] * 2
        if started != expected:
            return False, (f"{started} all-to-all(s) started, expected {expected} "
                           f"(2 per layer and micro-batch)"), 0.0, float("nan")
    if what:
        n = counted(logs["on"], what)
        if n == 0:
            return False, f"dist-overlap counted no {what}", 0.0, float("nan")
        note = f"{n} {'collective matmul(s) cut' if what == 'cut' else 'switch(es)'}"
        if is_ep(variant):
            note += f", {started} all-to-all(s) started"
    else:
        note = f"{counted(logs['on'], 'cut')} cut by the cost model"
    worst = 0.0
    if not outputs["on"] or outputs["on"].keys() != outputs["off"].keys():
        return False, "the runs wrote different outputs", 0.0, float("nan")
    for f, on in outputs["on"].items():
        off = outputs["off"][f]
        scale = max(float(np.abs(off).max()), 1e-30)
        worst = max(worst, float(np.abs(on.astype(np.float64) - off).max()) / scale)
    limit = 0.0 if tp <= 2 else 1e-5
    return worst <= limit, note, worst, hidden(logs["on"])


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--tools", required=True, help="directory with parc and parc-run")
    p.add_argument("--generated", required=True, help="examples/models/generate.py output")
    p.add_argument("--work", required=True, help="scratch directory")
    p.add_argument("--models", nargs="+", default=["gpt2", "llama", "bert", "mixtral"])
    p.add_argument("--tp", nargs="+", type=int, default=[2, 4])
    p.add_argument("--variants", nargs="+", choices=sorted(VARIANTS),
                   default=["chunks2", "auto", "auto-slow", "mb2", "sp-mb2", "pp2-mb2",
                            "ep2-mb2", "tp1-ep2-mb2"])
    args = p.parse_args()
    passed = failed = 0
    cache = {}
    print(f"{'model':10} {'tp':>3} {'variant':8} {'max rel diff on/off':>20} {'hidden':>7}  result")
    # (hidden: rank 0's share of communication time hidden behind compute)
    for name in args.models:
        for tp in args.tp:
            for variant in args.variants:
                if variant.endswith("mb2") and tp != 2:
                    continue
                # Expert parallelism for MoE models, and only it.
                moe = bool(json.load(open(os.path.join(
                    args.generated, name + ".json")))["config"].get("experts"))
                if moe != is_ep(variant):
                    continue
                try:
                    ok, note, worst, share = check(args, name, tp, variant, cache)
                except RuntimeError as e:
                    ok, note, worst, share = False, str(e), float("nan"), float("nan")
                passed += ok
                failed += not ok
                shown = 1 if variant.startswith("tp1-") else tp
                print(f"{name:10} {shown:3} {variant:8} {worst:20.3e} {share:6.1f}%  "
                      f"{'PASS' if ok else 'FAIL'}  {note}", flush=True)
    print(f"overlap (on vs --no-overlap): {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
