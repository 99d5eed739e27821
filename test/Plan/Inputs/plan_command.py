"""Runs the command `parc plan` printed after "compile it with:", then the
program it built, and checks it against the plan and onnxruntime.

usage: plan_command.py TOOLS PLAN.txt PLAN.json GENERATED.json WORK

Prints the command (for FileCheck to check each piece), then one line per
check: the manifest's dtype and rank count against the plan's JSON, and
the outputs against onnxruntime (max|parc - ort| / max|ort| within the
tolerance of the priced dtype, as test/e2e/differential.py measures).
"""
import json
import os
import shlex
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))))
RTOL = {"f32": 1e-4, "bf16": 3e-2, "f16": 4e-3}


def run(cmd):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode:
        sys.exit(f"failed ({r.returncode}): {shlex.join(cmd)}\n{r.stdout}")
    return r.stdout


def main():
    tools, text, plan_json, gen_json, work = sys.argv[1:6]
    line = next(l for l in open(text) if "compile it with:" in l)
    command = line.split("compile it with:", 1)[1].strip()
    print("command:", command)
    argv = shlex.split(command)
    plan = json.load(open(plan_json))
    chosen = plan["chosen"]
    assert argv[:3] == ["parc", "compile", plan["model_path"]], argv[:3]
    flags = " ".join(argv[argv.index("--tp"):])
    assert flags == chosen["compile_flags"], (flags, chosen["compile_flags"])
    print("parallel flags are the chosen plan's:", flags)

    out = os.path.join(work, "out")
    argv[0] = os.path.join(tools, "parc")
    argv[argv.index("-o") + 1] = out
    run(argv + ["--quiet"])
    m = json.load(open(os.path.join(out, "manifest.json")))
    ranks = max(chosen["tp"], chosen["ep"]) * chosen["pp"] * chosen["dp"]
    print(f"manifest dtype {m['dtype']} (planned {plan['dtype']}), "
          f"world {m['world_size']} (planned {ranks})")

    cfg = json.load(open(gen_json))["config"]
    rng = np.random.default_rng(7)
    inputs = {}
    for t in m["inputs"]:
        path = os.path.join(work, t["name"] + ".npy")
        np.save(path, rng.integers(0, cfg["vocab"], t["shape"]).astype(np.int64))
        inputs[t["name"]] = path
    feeds = sum((["--input", f"{n}={p}"] for n, p in inputs.items()), [])
    run([os.path.join(tools, "parc-run"), out, "--output-dir",
         os.path.join(work, "parc")] + feeds)
    run(["node", os.path.join(ROOT, "tools", "ort-reference", "ort-run.mjs"),
         plan["model_path"], "--output-dir", os.path.join(work, "ort")] + feeds)
    for t in m["outputs"]:
        got = np.load(os.path.join(work, "parc", t["name"] + ".npy")).astype(np.float64)
        want = np.load(os.path.join(work, "ort", t["name"] + ".npy")).astype(np.float64)
        err = np.abs(got - want).max() / np.abs(want).max()
        ok = got.shape == want.shape and err <= RTOL[m["dtype"]]
        print(f"output {t['name']} {list(got.shape)}: "
              f"{'matches' if ok else 'DIFFERS from'} onnxruntime")


if __name__ == "__main__":
    main()
