#!/usr/bin/python3
"""The configuration matrix: every exporter-form model and every real model
at every parallel configuration, against onnxruntime.

Models: the corpus of examples/models/exporter_forms.py (torch dynamo at
opsets 18-21, keras2onnx-style BERT, SDPA-decomposed, Einsum and repeat_kv
attention, decomposed RMSNorm, a bf16 checkpoint, 6 heads, a fixed batch,
an onnxruntime-genai Llama), each also against its numpy reference; and
every model in test/Inputs/models (SOURCES.md there): the keras2onnx
TFBertForQuestionAnswering on its upstream test_data input twice (batch 2:
its upstream output, twice, is the "numpy" column), onnxruntime-genai's
fp16 Qwen on a decode step (contrib.py's case), the rest on differential.py's
inputs.

Configurations: 1 rank, --tp 2, --tp 4, --tp 2 --sp, --pp 2,
--pp 2 --micro-batches 2, --pp 2 --tp 2. Each row passes when

    max|parc - ref| / max|ref| <= --rtol (1e-4; 4e-3 for the fp16 model)

for ref = onnxruntime and the numpy reference, a --tp run communicates
(differential.py's check), and, for the corpus models and
TFBertForQuestionAnswering, comm_bytes_per_forward at --tp N (with or
without --sp, no --pp) equals Megatron's count for the fused form,
computed from the model dims (differential.megatron_comm_bytes): an
unfused attention or MLP must communicate what the fused form does. For
the Llama-style decoders each rank's weight_bytes must equal the fused
form's split too (megatron_weight_bytes: ceil(units / N) heads or features
of each linear, the norms whole).

A refusal passes only where the configuration cannot exist and the message
says so: REFUSALS below lists each such (model, configuration) with the
text the message must contain; the compile must also leave no output.
Every other refusal or mismatch is a FAIL, with the first line of the error.

KNOWN_GAPS lists the rows that fail today for a gap still open, each with
the gap: they run, and count as skipped while they fail.

Prints one row per model and configuration and `N passed, N failed` (with
`, N skipped` for known gaps); exits 1 on any failure.

    /usr/bin/python3 test/e2e/matrix.py --tools build/bin --work build/e2e/matrix
        [--only MODEL ...] [--configs NAME ...]
"""
import argparse
import concurrent.futures
import io
import json
import os
import shutil
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "examples", "models"))
sys.path.insert(0, HERE)
import contrib  # noqa: E402
import differential as diff  # noqa: E402
import exporter_forms as gen  # noqa: E402

CONFIGS = {
    "1": [],
    "tp2": ["--tp=2"],
    "tp4": ["--tp=4"],
    "tp2-sp": ["--tp=2", "--sp"],
    "pp2": ["--pp=2"],
    "pp2-m2": ["--pp=2", "--micro-batches=2"],
    "pp2-tp2": ["--pp=2", "--tp=2"],
}
PIPELINED = ("pp2", "pp2-m2", "pp2-tp2")
TF_BERT = "TFBertForQuestionAnswering"
QWEN = "ort_genai_tiny_qwen35_gqa_fp16"

# Configurations that cannot exist, with the reason parc's message must
# give: two pipeline stages of a model with one layer, two micro-batches of
# a batch of 1 (the conv encoder's input is [1, 1, 1, 3000]), and sequence
# parallelism over a sequence of one token (the Qwen decode step).
ONE_LAYER = "needs at least one layer per stage, but the model has 1 layer(s)"
CONV = "deeploy_small_conv_transformer_convit_network_infer"
REFUSALS = {(m, c): ONE_LAYER
            for m in ("gpt2_megatron", "self_attention_megatron_basic_test", CONV)
            for c in PIPELINED}
REFUSALS[(CONV, "pp2-m2")] = "--micro-batches 2 does not divide the batch of input 'input'"
REFUSALS[(QWEN, "tp2-sp")] = "--sp splits the sequence (dim 1 of size 1) over --tp 2"
# Megatron's sequence parallelism splits the sequence evenly: 95 and 3
# tokens have no even split over 2 ranks (the message names the norm and
# the --tp values that would divide them).
REFUSALS[(CONV, "tp2-sp")] = "--sp splits the sequence (dim 1 of size 95) over --tp 2"
REFUSALS[("self_attention_megatron_basic_test", "tp2-sp")] = \
    "--sp splits the sequence (dim 1 of size 3) over --tp 2"

# Rows that fail today for a gap issue #15 still has open, each with the
# gap. Such a row still runs: failing, it counts as skipped (never as
# passed); passing, it fails, so that the entry is removed. None today.
KNOWN_GAPS = {}


class Model:
    """A model, its inputs (name -> file), its --input-shape flags, its
    references (label -> {output name: array}, onnxruntime added by
    `prepare`), its tolerance, and the dims of Megatron's comm and weight
    counts where they apply."""

    def __init__(self, name, path, inputs, shapes, numpy=None, rtol=None, megatron=None,
                 split_units=None):
        self.name, self.path, self.inputs, self.shapes = name, path, inputs, shapes
        self.refs = {"numpy": numpy} if numpy is not None else {}
        self.rtol, self.megatron, self.split_units = rtol, megatron, split_units


def megatron_weight_bytes(path, split_units, tp):
    """The weight bytes each of tp ranks keeps, from the ONNX initializers
    (in their stored dtype): a linear whose name holds a key of
    `split_units` keeps ceil(units / tp) of its units, zero-padded; every
    other float tensor (the norms) is whole. Scalars and integer shape
    constants are folded into the code, not weights."""
    import onnx  # noqa: PLC0415 — only this check needs it
    kept = 0
    for init in onnx.load(path).graph.initializer:
        if init.data_type not in (onnx.TensorProto.FLOAT, onnx.TensorProto.BFLOAT16) or \
                not init.dims:
            continue
        nbytes = int(np.prod(init.dims)) * (4 if init.data_type == onnx.TensorProto.FLOAT else 2)
        units = [u for k, u in split_units.items() if k in init.name]
        kept += nbytes if not units else nbytes // units[0] * -(-units[0] // tp)
    return kept


def corpus_model(name, work, rng):
    model, spec, reference = gen.build(name)
    path = os.path.join(work, name + ".onnx")
    with open(path, "wb") as f:
        f.write(model.SerializeToString())
    feeds, inputs = {}, {}
    for n, s in spec["inputs"].items():
        if s.get("ones"):
            x = np.ones(s["shape"], s["dtype"])
        elif "ints" in s:
            x = rng.integers(0, s["ints"], size=s["shape"]).astype(s["dtype"])
        else:
            x = rng.standard_normal(s["shape"]).astype(s["dtype"])
        feeds[n], inputs[n] = x, os.path.join(work, n + ".npy")
        np.save(inputs[n], x)
    shapes = diff.shape_flags({"shapes": {n: s["shape"] for n, s in spec["inputs"].items()}})
    want = dict(zip(spec["outputs"], reference(feeds)))
    return Model(name, path, inputs, shapes, numpy=want, megatron=spec.get("megatron"),
                 split_units=spec.get("split_units"))


def tf_bert_model(work):
    """The upstream test_data input twice over (batch 2, so that two
    micro-batches exist), its upstream output twice as the reference."""
    from onnx import TensorProto, numpy_helper
    data = os.path.join(diff.SHARED, "test_data", TF_BERT, "test_data_set_0")

    def load(f):
        t = TensorProto()
        t.ParseFromString(open(os.path.join(data, f + ".pb"), "rb").read())
        return t.name, np.concatenate([numpy_helper.to_array(t)] * 2)

    inputs, shapes = {}, {}
    for i in range(3):
        n, x = load(f"input_{i}")
        inputs[n] = os.path.join(work, n + ".npy")
        np.save(inputs[n], x)
        shapes[n] = list(x.shape)
    want = dict(load(f"output_{i}") for i in range(2))
    # SOURCES.md: 24 layers of hidden 8, sequence 7, vocabulary-parallel
    # word embedding, a QA head (no LM head).
    megatron = {"batch": 2, "seq": 7, "hidden": 8, "layers": 24, "embedding": True,
                "lm_head": False}
    return Model(TF_BERT, os.path.join(diff.SHARED, TF_BERT + ".onnx"), inputs,
                 diff.shape_flags({"shapes": shapes}), numpy=want, megatron=megatron)


def real_model(name, work, rng):
    if name == TF_BERT:
        return tf_bert_model(work)
    if name == QWEN:
        # contrib.py's decode step: batch 2, one new token after 4.
        path, shapes, rtol = contrib.shared_case("qwen35_gqa_decode", work, rng)
        feeds = np.load(os.path.join(work, "qwen35_gqa_decode.inputs.npz"))
        inputs = {}
        for n in feeds.files:
            inputs[n] = os.path.join(work, n + ".npy")
            np.save(inputs[n], feeds[n])
        return Model(name, path, inputs, shapes, rtol=rtol)
    if name not in diff.SHARED_MODELS:
        raise RuntimeError(f"no input shapes for {name}: add them to differential.SHARED_MODELS")
    spec = diff.SHARED_MODELS[name]
    path = os.path.join(diff.SHARED, name + ".onnx")
    return Model(name, path, diff.make_inputs(path, spec, rng, work), diff.shape_flags(spec))


def real_names():
    return sorted(f[:-5] for f in os.listdir(diff.SHARED) if f.endswith(".onnx"))


def prepare(model, work, log):
    """Runs onnxruntime once on the model's inputs."""
    out = os.path.join(work, "ort")
    diff.run(["node", os.path.join(ROOT, "tools", "ort-reference", "ort-run.mjs"), model.path,
              "--output-dir", out] + sum((["--input", f"{n}={p}"]
                                         for n, p in model.inputs.items()), []), log)
    model.refs["ort"] = out


def first_error(output):
    lines = [line for line in output.strip().splitlines() if line.strip()]
    for line in lines:
        if "error" in line:
            return line.strip()
    return lines[-1].strip() if lines else "no output"


def flag_value(flags, name):
    for f in flags:
        if f.startswith(f"--{name}="):
            return int(f.split("=", 1)[1])
    return 1


def compare(model, manifest, parc_dir):
    """The worst relative error against each reference."""
    worst = {}
    for label, ref in model.refs.items():
        err = 0.0
        for o in manifest["outputs"]:
            fname = diff.output_file(manifest, o["name"])
            got = np.load(os.path.join(parc_dir, fname)).astype(np.float64)
            if label == "ort":
                want = np.load(os.path.join(ref, fname)).astype(np.float64)
            elif o["name"] in ref:
                want = np.asarray(ref[o["name"]], np.float64)
            else:
                raise RuntimeError(f"the numpy reference has no output '{o['name']}'")
            err = max(err, diff.rel_err({fname: got}, {fname: want}))
        worst[label] = err
    return worst


def check(model, config, args, log):
    """(worst errors, comm bytes) of one row; raises on a failure, returns
    None for an expected refusal."""
    flags = CONFIGS[config]
    work = os.path.join(args.work, model.name, config)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    out = os.path.join(work, "out")
    r = subprocess.run([os.path.join(args.tools, "parc"), "compile", model.path, "-o", out,
                        "--quiet"] + flags + model.shapes,
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    log.write(f"$ parc compile {model.path} {' '.join(flags)}\n{r.stdout}")
    reason = REFUSALS.get((model.name, config))
    if r.returncode:
        if reason is None:
            raise RuntimeError(first_error(r.stdout))
        if reason not in r.stdout:
            raise RuntimeError(f"refused without saying '{reason}': {first_error(r.stdout)}")
        if os.path.exists(out):
            raise RuntimeError("a refused compile left its output directory behind")
        return None
    if reason is not None:
        raise RuntimeError(f"compiled, but it cannot exist: {reason}")
    diff.run([os.path.join(args.tools, "parc-run"), out, "--output-dir",
              os.path.join(work, "parc")] +
             [f"--input={n}={p}" for n, p in model.inputs.items()], log)
    manifest = json.load(open(os.path.join(out, "manifest.json")))
    tp = flag_value(flags, "tp")
    diff.check_tp_communicates(manifest, tp)
    comm = manifest["comm_bytes_per_forward"]
    if model.megatron and tp > 1 and config not in PIPELINED:
        want = diff.megatron_comm_bytes(model.megatron, tp, 4, "--sp" in flags,
                                        embedding=model.megatron["embedding"],
                                        lm_head=model.megatron["lm_head"])
        if comm != want:
            raise RuntimeError(f"{comm} B sent per rank per forward, the fused form's "
                               f"Megatron count is {want} B")
    if model.split_units and config not in PIPELINED:
        want = megatron_weight_bytes(model.path, model.split_units, tp)
        for r in manifest["ranks"]:
            if r["weight_bytes"] != want:
                raise RuntimeError(f"rank {r['rank']} holds {r['weight_bytes']} B of weights, "
                                   f"the fused form's Megatron split {want} B")
    return compare(model, manifest, os.path.join(work, "parc")), comm


def row(model, config, args, log, rtol):
    """One model × configuration: ("pass" | "fail" | "skip", the table row's
    result columns); a KNOWN_GAPS row that fails is a skip."""
    status, text = checked_row(model, config, args, log, rtol)
    gap = KNOWN_GAPS.get((model.name, config))
    if gap is None:
        return status, text
    if status == "pass":
        return "fail", f"FAIL: passes, but KNOWN_GAPS lists it ({gap}): remove the entry"
    return "skip", f"SKIP (known gap: {gap}): {text}"


def checked_row(model, config, args, log, rtol):
    start = time.time()
    try:
        result = check(model, config, args, log)
        if result is None:
            return "pass", (f"{'':>9} {'':>9} {'':>7} {'':>6}  PASS (refused: "
                          f"{REFUSALS[(model.name, config)]})")
        worst, comm = result
        ok = max(worst.values()) <= rtol
        cols = " ".join(f"{worst[k]:>9.2e}" if k in worst else f"{'':>9}"
                        for k in ("ort", "numpy"))
        return "pass" if ok else "fail", (f"{cols} {comm:>7} {time.time() - start:>6.1f}  "
                    f"{'PASS' if ok else f'FAIL (rtol {rtol})'}")
    except Exception as e:  # noqa: BLE001 — a failed row, not a crash
        return "fail", f"FAIL: {e}"


def setup(name, corpus, args):
    """The model with its inputs and onnxruntime's outputs, or the error."""
    work = os.path.join(args.work, name)
    os.makedirs(work, exist_ok=True)
    rng = np.random.default_rng(args.seed)
    log = io.StringIO()
    try:
        model = corpus_model(name, work, rng) if corpus else real_model(name, work, rng)
        prepare(model, work, log)
        return model, log.getvalue()
    except Exception as e:  # noqa: BLE001 — every row of the model fails
        return f"setup: {e}", log.getvalue()


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--tools", required=True, help="directory with parc and parc-run")
    p.add_argument("--work", required=True)
    p.add_argument("--rtol", type=float, default=1e-4)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--only", nargs="*", help="models to run")
    p.add_argument("--configs", nargs="*", choices=list(CONFIGS), help="configurations to run")
    p.add_argument("--jobs", type=int, default=1,
                   help="rows run at once (each waits mostly on mpirun and g++)")
    args = p.parse_args()
    os.makedirs(args.work, exist_ok=True)
    names = [(n, True) for n in sorted(gen.MODELS)] + [(n, False) for n in real_names()]
    if args.only:
        names = [(n, c) for n, c in names if n in args.only]
    configs = args.configs or list(CONFIGS)
    print(f"{'model':<52} {'config':<8} {'vs ort':>9} {'vs numpy':>9} {'comm B':>7} "
          f"{'time s':>6}  result", flush=True)
    counts = {"pass": 0, "fail": 0, "skip": 0}
    with open(os.path.join(args.work, "log.txt"), "w") as log, \
            concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        models = list(pool.map(lambda n: setup(*n, args), names))

        def task(model, config):
            if isinstance(model, str):
                return "fail", f"FAIL: {model}", ""
            out = io.StringIO()
            rtol = model.rtol or args.rtol
            return (*row(model, config, args, out, rtol), out.getvalue())

        rows = [((name, config), pool.submit(task, model, config))
                for (name, _), (model, _) in zip(names, models) for config in configs]
        log.write("".join(text for _, text in models))
        # In order, as each finishes.
        for (name, config), future in rows:
            status, result, text = future.result()
            log.write(text)
            print(f"{name:<52} {config:<8} {result}", flush=True)
            counts[status] += 1
    skipped = f", {counts['skip']} skipped" if counts["skip"] else ""
    print(f"configuration matrix (parc cpu vs onnxruntime and numpy, rtol {args.rtol}): "
          f"{counts['pass']} passed, {counts['fail']} failed{skipped}")
    sys.exit(1 if counts["fail"] else 0)


if __name__ == "__main__":
    main()
