#!/usr/bin/python3
"""The exporter-form models (examples/models/exporter_forms.py) end to end.

For each model and each --tp degree: `parc compile` + `parc-run` on the
model's bound inputs, the same inputs through onnxruntime
(tools/ort-reference), and the generator's numpy reference, written from the
formulas. Every output must agree pairwise (parc vs numpy, parc vs
onnxruntime, onnxruntime vs numpy):

    max|got - want| / max|want| <= --rtol (1e-4)

With --tp N the compile must also communicate (comm_bytes_per_forward > 0),
so a run that keeps every rank computing the whole model cannot pass.

TFBertForQuestionAnswering.onnx (test/Inputs/models: a real keras2onnx
export, 24 layers) runs too, against its upstream test_data output (the
"numpy" column) and onnxruntime.

Prints one row per model and degree and `N passed, N failed`; exits 1 on
any failure.
"""
import argparse
import importlib.util
import json
import os
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from differential import check_tp_communicates, output_file, run  # noqa: E402


def load_generator():
    path = os.path.join(ROOT, "examples", "models", "exporter_forms.py")
    spec = importlib.util.spec_from_file_location("exporter_forms", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def make_inputs(spec, rng, work):
    feeds, paths = {}, {}
    for name, s in spec["inputs"].items():
        if "ints" in s:
            x = rng.integers(0, s["ints"], size=s["shape"]).astype(s["dtype"])
        else:
            x = rng.standard_normal(s["shape"]).astype(s["dtype"])
        feeds[name] = x
        paths[name] = os.path.join(work, name + ".npy")
        np.save(paths[name], x)
    return feeds, paths


def rel(got, want):
    if got.shape != want.shape:
        raise RuntimeError(f"shape {got.shape} vs {want.shape}")
    scale = np.abs(want).max() if want.size else 0.0
    err = np.abs(got - want).max() if want.size else 0.0
    return err / scale if scale else err


def parc_and_ort(model, shapes, inputs, work, args, log, tp):
    """Compiles `model` at --tp `tp` and runs it on `inputs` (name -> file)
    with parc-run into work/parc and with onnxruntime into work/ort; a --tp
    run must communicate. Returns the compile's manifest."""
    out = os.path.join(work, "out")
    run([os.path.join(args.tools, "parc"), "compile", model, "-o", out, "--quiet",
         f"--tp={tp}"] + shapes, log)
    run([os.path.join(args.tools, "parc-run"), out, "--output-dir",
         os.path.join(work, "parc")] + [f"--input={n}={p}" for n, p in inputs.items()], log)
    run(["node", os.path.join(ROOT, "tools", "ort-reference", "ort-run.mjs"), model,
         "--output-dir", os.path.join(work, "ort")] +
        sum((["--input", f"{n}={p}"] for n, p in inputs.items()), []), log)
    manifest = json.load(open(os.path.join(out, "manifest.json")))
    check_tp_communicates(manifest, tp)
    return manifest


def check(gen, name, args, log, tp):
    work = os.path.join(args.work, f"{name}-tp{tp}")
    os.makedirs(work, exist_ok=True)
    model, spec, reference = gen.build(name)
    path = os.path.join(work, name + ".onnx")
    with open(path, "wb") as f:
        f.write(model.SerializeToString())
    feeds, paths = make_inputs(spec, np.random.default_rng(args.seed), work)
    shapes = sum((["--input-shape", f"{n}={'x'.join(map(str, s['shape']))}"]
                  for n, s in spec["inputs"].items()), [])
    manifest = parc_and_ort(path, shapes, paths, work, args, log, tp)
    want = reference(feeds)
    worst = {"parc/numpy": 0.0, "parc/ort": 0.0, "ort/numpy": 0.0}
    for out_name, ref in zip(spec["outputs"], want):
        fname = output_file(manifest, out_name)
        got = np.load(os.path.join(work, "parc", fname)).astype(np.float64)
        ort = np.load(os.path.join(work, "ort", fname)).astype(np.float64)
        ref = np.asarray(ref, dtype=np.float64)
        for key, (a, b) in {"parc/numpy": (got, ref), "parc/ort": (got, ort),
                            "ort/numpy": (ort, ref)}.items():
            worst[key] = max(worst[key], rel(a, b))
    return worst, manifest["comm_bytes_per_forward"]


# The real keras2onnx export (test/Inputs/models, SOURCES.md there): its
# upstream test_data input and output, and onnxruntime on that input.
TF_BERT = "TFBertForQuestionAnswering"
TF_BERT_SHAPES = {"input_ids": [1, 7], "attention_mask": [1, 7], "token_type_ids": [1, 7]}


def check_real_tf_bert(shared, args, log, tp):
    from onnx import TensorProto, numpy_helper
    model = os.path.join(shared, TF_BERT + ".onnx")
    data = os.path.join(shared, "test_data", TF_BERT, "test_data_set_0")
    work = os.path.join(args.work, f"{TF_BERT}-tp{tp}")

    def load(name):
        t = TensorProto()
        t.ParseFromString(open(os.path.join(data, name + ".pb"), "rb").read())
        return t.name, numpy_helper.to_array(t).astype(np.float64)

    inputs = {load(f"input_{i}")[0]: os.path.join(data, f"input_{i}.pb") for i in range(3)}
    shapes = sum((["--input-shape", f"{n}={'x'.join(map(str, s))}"]
                  for n, s in TF_BERT_SHAPES.items()), [])
    manifest = parc_and_ort(model, shapes, inputs, work, args, log, tp)
    worst = {"parc/numpy": 0.0, "parc/ort": 0.0, "ort/numpy": 0.0}
    for i in range(2):
        name, want = load(f"output_{i}")
        fname = output_file(manifest, name)
        got = np.load(os.path.join(work, "parc", fname)).astype(np.float64)
        ort = np.load(os.path.join(work, "ort", fname)).astype(np.float64)
        # "numpy" is the upstream test_data output here.
        worst["parc/numpy"] = max(worst["parc/numpy"], rel(got, want))
        worst["parc/ort"] = max(worst["parc/ort"], rel(got, ort))
        worst["ort/numpy"] = max(worst["ort/numpy"], rel(ort, want))
    return worst, manifest["comm_bytes_per_forward"]


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tools", required=True, help="directory with parc and parc-run")
    p.add_argument("--work", required=True)
    p.add_argument("--rtol", type=float, default=1e-4)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--only", nargs="*")
    p.add_argument("--tp", type=int, nargs="+", default=[1, 2])
    p.add_argument("--shared", default=os.path.join(ROOT, "test", "Inputs", "models"),
                   help=f"folder with {TF_BERT}.onnx and its test_data")
    args = p.parse_args()
    gen = load_generator()
    names = args.only or sorted(gen.MODELS)
    if not args.only or TF_BERT in args.only:
        names = [n for n in names if n != TF_BERT] + [TF_BERT]
    os.makedirs(args.work, exist_ok=True)
    passed = failed = 0
    print(f"{'model':<26} {'tp':>3} {'parc/numpy':>11} {'parc/ort':>11} {'ort/numpy':>11} "
          f"{'comm B':>8}  result")
    with open(os.path.join(args.work, "log.txt"), "w") as log:
        for name in names:
            for tp in args.tp:
                try:
                    worst, comm = (check_real_tf_bert(args.shared, args, log, tp)
                                   if name == TF_BERT else check(gen, name, args, log, tp))
                    ok = max(worst.values()) <= args.rtol
                    row = (f"{worst['parc/numpy']:>11.3e} {worst['parc/ort']:>11.3e} "
                           f"{worst['ort/numpy']:>11.3e} {comm:>8}  {'PASS' if ok else 'FAIL'}")
                except Exception as e:  # noqa: BLE001 — report and continue
                    ok, row = False, f"FAIL: {e}"
                print(f"{name:<26} {tp:>3} {row}", flush=True)
                passed += ok
                failed += not ok
    print(f"exporter forms (rtol {args.rtol}): {passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
