"""Compiles a fixed set of models and parallel configurations with one parc
into OUT (OUT/<model>-<config>/), for comparing two parcs' weight shards and
generated C++ byte for byte (a refactor that must not change them):

    /usr/bin/python3 scripts/shard_equivalence.py --parc OLD/bin/parc --out A
    /usr/bin/python3 scripts/shard_equivalence.py --parc build/bin/parc --out B
    /usr/bin/python3 scripts/shard_equivalence.py --compare A B

The rank programs are not built (an `mpicxx` that only touches its output
is put first on PATH): the C++ and the shards are what is compared. Models:
examples/models/generate.py's and exporter_forms.py's, written into
OUT/models, and test/Inputs/models. A compile that fails is recorded in
its folder (error.txt), so refusals are compared too. Configurations: 1
rank, --tp, --sp, --pp (with micro-batches), --dtype bf16, and --ep on the
MoE models; generate_past.py's decoders at --max-seq. With --dump-ir each
compile's stage dumps are compared as well.
"""
import argparse
import filecmp
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "examples", "models"))
sys.path.insert(0, os.path.join(ROOT, "test", "e2e"))

CONFIGS = {
    "1": [], "tp2": ["--tp=2"], "tp4": ["--tp=4"], "tp2-sp": ["--tp=2", "--sp"],
    "pp2": ["--pp=2"], "pp2-m2": ["--pp=2", "--micro-batches=2"],
    "pp2-tp2": ["--pp=2", "--tp=2"], "tp3": ["--tp=3"],
    "bf16": ["--dtype=bf16"], "tp2-bf16": ["--tp=2", "--dtype=bf16"],
}
# Decoders with their KV cache (generate_past.py): one decode step.
DECODE_CONFIGS = {
    "maxseq": ["--max-seq=64"], "maxseq-tp2": ["--max-seq=64", "--tp=2"],
    "maxseq-pp2": ["--max-seq=64", "--pp=2"],
}
MOE_CONFIGS = {
    "ep2": ["--ep=2"], "tp2-etp": ["--tp=2", "--etp"],
    "tp2-ep2-etp": ["--tp=2", "--ep=2", "--etp"],
    "pp2-tp2-ep2": ["--pp=2", "--tp=2", "--ep=2"],
}


def models(out):
    """(name, path, --input-shape flags, configurations) of every model."""
    import differential as diff
    import exporter_forms as forms
    gen = os.path.join(out, "models")
    os.makedirs(gen, exist_ok=True)
    subprocess.run([sys.executable, os.path.join(ROOT, "examples", "models", "generate.py"),
                    "--out", gen], check=True, stdout=subprocess.DEVNULL)
    found = []
    for f in sorted(os.listdir(gen)):
        if f.endswith(".json"):
            spec = diff.generated_spec(os.path.join(gen, f))
            name = f[:-5]
            found.append((name, os.path.join(gen, name + ".onnx"),
                          diff.shape_flags(spec),
                          {**CONFIGS, **(MOE_CONFIGS if spec["experts"] > 0 else {})}))
    for name in sorted(forms.MODELS):
        model, spec, _ = forms.build(name)
        path = os.path.join(gen, name + ".onnx")
        with open(path, "wb") as f:
            f.write(model.SerializeToString())
        shapes = {n: s["shape"] for n, s in spec["inputs"].items()}
        found.append((name, path, diff.shape_flags({"shapes": shapes}), CONFIGS))
    for name, spec in sorted(diff.SHARED_MODELS.items()):
        found.append((name, os.path.join(diff.SHARED, name + ".onnx"),
                      diff.shape_flags(spec), CONFIGS))
    qwen = "ort_genai_tiny_qwen35_gqa_fp16"
    # contrib.py's decode step: 1 new token after 4, 2 kv heads (GQA).
    past = {f"past_key_values.{l}.{kv}": [2, 2, 4, 16] for l in range(2) for kv in ("key", "value")}
    found.append((qwen, os.path.join(diff.SHARED, qwen + ".onnx"), diff.shape_flags(
        {"shapes": {"input_ids": [2, 1], "attention_mask": [2, 5], **past}}), CONFIGS))
    past = os.path.join(out, "models-past")
    os.makedirs(past, exist_ok=True)
    subprocess.run([sys.executable, os.path.join(ROOT, "examples", "models", "generate_past.py"),
                    "--out", past], check=True, stdout=subprocess.DEVNULL)
    for f in sorted(os.listdir(past)):
        if f.endswith(".onnx"):
            found.append((f[:-5], os.path.join(past, f),
                          ["--input-shape", "input_ids=2x1"], DECODE_CONFIGS))
    return found


def compile_all(parc, out, dump_ir=False):
    env = dict(os.environ, PATH=os.path.join(out, "fakebin") + os.pathsep + os.environ["PATH"])
    os.makedirs(os.path.join(out, "fakebin"), exist_ok=True)
    fake = os.path.join(out, "fakebin", "mpicxx")
    with open(fake, "w") as f:
        f.write('#!/bin/sh\nwhile [ $# -gt 0 ]; do [ "$1" = "-o" ] && { shift; : > "$1"; }; shift; done\n')
    os.chmod(fake, 0o755)
    for name, path, shapes, configs in models(out):
        for config, flags in configs.items():
            dest = os.path.join(out, "runs", f"{name}-{config}")
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            dump = ["--dump-ir", os.path.join(dest, "ir")] if dump_ir else []
            r = subprocess.run([parc, "compile", path, "-o", dest, "--quiet", *shapes, *flags,
                                *dump], env=env, capture_output=True, text=True)
            if r.returncode:
                os.makedirs(dest, exist_ok=True)
                with open(os.path.join(dest, "error.txt"), "w") as f:
                    f.write(r.stderr.replace(os.path.dirname(path), "MODELS"))
            print(f"{name}-{config}: {'refused' if r.returncode else 'compiled'}", flush=True)


def same_file(fa, fb, a, b):
    """Byte for byte; a manifest without the fields that name the run (the
    model's path, parc's commit); an IR dump with the model's folder (a
    location) named OUT."""
    if not (os.path.exists(fa) and os.path.exists(fb)):
        return False
    if os.path.basename(fa) == "manifest.json":
        load = lambda f: {k: v for k, v in json.load(open(f)).items()
                          if k not in ("model", "parc_commit")}
        return load(fa) == load(fb)
    if fa.endswith(".mlir"):
        load = lambda f, top: open(f, "rb").read().replace(
            os.path.abspath(top).encode(), b"OUT")
        return load(fa, a) == load(fb, b)
    return filecmp.cmp(fa, fb, shallow=False)


def compare(a, b):
    """Every weight shard, generated source, manifest and refusal of a and
    b (not compile-stats.json: times and memory)."""
    same = differ = 0
    runs_a, runs_b = os.path.join(a, "runs"), os.path.join(b, "runs")
    for run in sorted(set(os.listdir(runs_a)) | set(os.listdir(runs_b))):
        files = set()
        for top in (runs_a, runs_b):
            for d, _, fs in os.walk(os.path.join(top, run)):
                rel = os.path.relpath(d, os.path.join(top, run))
                files |= {os.path.normpath(os.path.join(rel, f)) for f in fs
                          if f != "compile-stats.json"}
        for f in sorted(files):
            if f.startswith("bin" + os.sep):
                continue
            fa, fb = os.path.join(runs_a, run, f), os.path.join(runs_b, run, f)
            if same_file(fa, fb, a, b):
                same += 1
            else:
                differ += 1
                print(f"DIFFERS {run}/{f}")
    print(f"{same} files identical, {differ} differ, over "
          f"{len(os.listdir(runs_a))} runs")
    return differ == 0


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--parc")
    p.add_argument("--out")
    p.add_argument("--compare", nargs=2)
    p.add_argument("--dump-ir", action="store_true",
                   help="also write (and so compare) each compile's --dump-ir stages")
    args = p.parse_args()
    if args.compare:
        sys.exit(0 if compare(*args.compare) else 1)
    compile_all(os.path.abspath(args.parc), os.path.abspath(args.out), args.dump_ir)


if __name__ == "__main__":
    main()
