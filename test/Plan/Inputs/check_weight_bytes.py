"""Compiles configurations `parc plan --json` ranks and compares the weight
bytes the plan predicts for each rank (weight_bytes_per_stage) with the
tensor bytes of the shard compile writes for it, read from the
safetensors header: two computations that must agree byte for byte.

usage: check_weight_bytes.py TOOLS STUB_DIR WORK CASE ...

CASE is MODEL.onnx:DEVICES:BATCH:SEQ[:FLAGS] where FLAGS (optional, commas
for spaces) picks the plan rows whose compile_flags start with it (all
rows otherwise), or MODEL.onnx:DEVICES:BATCH:SEQ:auto to compile with
--auto and compare the manifest's predicted_weight_bytes instead.
The MPI C++ compiler is stubbed (STUB_DIR first on PATH): compile runs every
pass and writes every shard, but builds no executable.
"""
import json
import os
import shlex
import struct
import subprocess
import sys


def tensor_bytes(path):
    """The bytes of every tensor in a safetensors file, from its header:
    an 8-byte little-endian length, then JSON with each tensor's
    data_offsets [begin, end)."""
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
    return sum(t["data_offsets"][1] - t["data_offsets"][0]
               for k, t in header.items() if k != "__metadata__")


def stage_of(manifest, rank):
    """The pipeline stage of `rank`: replicas outermost, then stages."""
    per_replica = manifest["ranks_per_replica"]
    stages = manifest.get("pipeline", {}).get("stages", 1)
    return rank % per_replica // (per_replica // stages)


def compile_and_compare(argv, env, out, predicted):
    """Compiles `argv` into `out`; returns (ranks, mismatches) where
    `predicted(manifest, entry)` gives a rank's predicted bytes."""
    r = subprocess.run(argv + ["--quiet"], stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, env=env)
    if r.returncode:
        return 0, [f"compile failed: {r.stdout.strip().splitlines()[0]}"]
    with open(os.path.join(out, "manifest.json")) as f:
        manifest = json.load(f)
    bad = []
    for entry in manifest["ranks"]:
        written = tensor_bytes(os.path.join(out, entry["weights"]))
        want = predicted(manifest, entry)
        if written != want:
            bad.append(f"rank {entry['rank']}: written {written} B, "
                       f"predicted {want} B")
    return len(manifest["ranks"]), bad


def main():
    tools, stub, work = sys.argv[1:4]
    env = dict(os.environ, PATH=stub + os.pathsep + os.environ["PATH"])
    parc = os.path.join(tools, "parc")
    out = os.path.join(work, "out")
    failed = False
    for case in sys.argv[4:]:
        model, devices, batch, seq, *rest = case.split(":")
        flags = rest[0].replace(",", " ") if rest else ""
        name = os.path.basename(model)
        if flags == "auto":
            argv = [parc, "compile", model, "-o", out, "--auto", "--devices",
                    devices, "--cluster", "cpu", "--dtype", "f32",
                    "--input-shape", f"input_ids={batch}x{seq}"]
            ranks, bad = compile_and_compare(
                argv, env, out,
                lambda m, e: e.get("predicted_weight_bytes"))
            print(f"{name} --auto on {devices} devices: {ranks} ranks, "
                  f"{len(bad)} differ")
            for line in bad:
                print("  DIFFERS " + line)
            failed |= bool(bad) or not ranks
            continue
        plan = subprocess.run(
            [parc, "plan", model, "--devices", devices, "--cluster", "cpu",
             "--batch", batch, "--seq", seq, "--dtype", "f32", "--json",
             "--top", "0"], stdout=subprocess.PIPE, text=True, check=True)
        rows = [c for c in json.loads(plan.stdout)["configurations"]
                if c["compile_flags"].startswith(flags)]
        total = 0
        for c in rows:
            argv = shlex.split(c["compile_command"])
            argv[0] = parc
            argv[argv.index("-o") + 1] = out
            stages = c["weight_bytes_per_stage"]
            ranks, bad = compile_and_compare(
                argv, env, out,
                lambda m, e: stages[stage_of(m, e["rank"])])
            total += ranks
            for line in bad:
                print(f"  DIFFERS {name} {c['compile_flags']}: {line}")
            failed |= bool(bad) or not ranks
        print(f"{name} on {devices} devices{' (' + flags + ')' if flags else ''}: "
              f"{len(rows)} configurations, {total} ranks compared")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
