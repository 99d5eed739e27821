#!/usr/bin/python3
"""Differential test: every model through parc (cpu) and onnxruntime.

For each model and each tensor-parallel degree in --tp: make inputs with a
fixed seed (token ids inside the vocabulary, masks of 0/1, positive
divisors where the model divides by an input), `parc compile --tp N` +
`parc-run` on N ranks, run the same inputs through onnxruntime
(tools/ort-reference), and compare every output:

    error = max|parc - ort| / max|ort|     must be <= --rtol (1e-4 for f32)

and, for tp > 1 after a tp 1 run of the same model, the same bound against
the single-rank parc outputs.

With --sp every tp > 1 also runs with sequence parallelism (`--sp`).

For the dense generated models with tp > 1 the manifest's communication
bytes (what each rank sends under ring algorithms: all-reduce 2(n-1)/n·S,
all-gather and reduce-scatter (n-1)/n·S, S the whole tensor) must equal
Megatron's analytic count, computed here from the model's configuration:
per layer two all-reduces of batch·seq·hidden elements (SP: two all-gathers
and two reduce-scatters in their place, the same bytes, plus one all-gather
of the final batch·seq·hidden activation), one all-reduce (SP:
reduce-scatter) of the vocabulary-parallel token embedding's batch·seq·hidden
lookups, plus for decoders the vocabulary-parallel LM head's gather of
batch·seq·vocab to the output rank alone (the only rank that keeps the
outputs: each other rank sends its 1/N part once, S/N). Their per-rank weight
bytes must equal shardable/N + replicated, with the shardable bytes summed
here from the ONNX initializers of the model's linears and the replicated
bytes those of the single-rank compile less the shardable ones.

Every run at tp > 1 must communicate: the manifest's collective bytes
(comm_per_collective) are nonzero, since every model here has a region
tensor parallelism splits. A tp run that sends nothing means every rank
computes the whole model, which the output comparison alone cannot see.

With --external every model also runs saved with its weights as ONNX
external data (`onnx.save(..., save_as_external_data=True)`, written under
--work at test time) as `<name>.ext`: the same checks, and its collective
bytes must equal those of the embedded form at the same configuration
(except for MoE models, whose experts nn-fuse-moe does not stack from
external data yet).

Prints one table row per model and `N passed, N failed`; exits 1 on any
failure. Expected values come from onnxruntime, never from parc.
"""
import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import time

import numpy as np
import onnx

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHARED = os.path.join(ROOT, "test", "Inputs", "models")

# The third-party models: bound shapes and value ranges of their inputs.
SHARED_MODELS = {
    # "seq": the length --sp splits over tp (it must divide).
    "gpt2_megatron": {
        "seq": 8,
        "shapes": {"input_ids": [2, 8], "position_ids": [2, 8],
                   "attention_mask": [2, 1, 64, 64], "past_0": [2, 2, 2, 4, 4]},
        "ints": {"input_ids": 10, "position_ids": 64},
        "binary": ["attention_mask"],
        # Its K/V are graph outputs (the KV cache), so attention stays
        # replicated at any tp; the MLP's region is found.
        "divisor": None,
    },
    "bert_toy_optimized": {
        # --sp splits the sequence of 8 and, in the pooler → classifier MLP,
        # dim 0 (the batch of 2) of its [2, 2] output: tp must divide both.
        "seq": math.gcd(8, 2),
        "shapes": {"input_ids": [2, 8], "token_type_ids": [2, 8], "input_mask": [2, 8]},
        "ints": {"input_ids": 99, "token_type_ids": 2, "input_mask": 2},
        # Its 4 heads take zero heads, its FFN of 37 zero features, up to a
        # multiple of any tp.
        "divisor": None,
    },
    "self_attention_megatron_basic_test": {
        "seq": 3,
        "shapes": {"input": [2, 3, 4], "mask": [2, 1, 3, 3]},
        "positive": ["mask"],  # the model divides by its mask
        "divisor": None,  # 2 heads: zero heads up to any tp
    },
    "ort_genai_tiny_gpt2_past": {
        # onnxruntime's contrib ops (EmbedLayerNormalization, Attention with
        # past/present, SkipLayerNormalization, FastGelu): 4 new tokens
        # after a past of 4; the mask covers past + new tokens.
        "seq": 4,
        "shapes": dict({"input_ids": [2, 4], "position_ids": [2, 4],
                        "attention_mask": [2, 8]},
                       **{f"past_{i}": [2, 2, 4, 4, 8] for i in range(5)}),
        "ints": {"input_ids": 1000, "position_ids": 512},
        "ones": ["attention_mask"],
        # Its K/V are graph outputs (the KV cache), so attention stays
        # replicated; the MLPs (FFN 128), the LM head and the embedding of
        # vocabulary 1000 split at any tp dividing them.
        "divisor": 4,
    },
    "deeploy_small_conv_transformer_convit_network_infer": {
        # 6 heads and an FFN of 48, zero-padded up to any tp.
        "shapes": {}, "divisor": None, "seq": 95},
}


def megatron_comm_bytes(c, tp, elem_bytes, sp, embedding=True, lm_head=True):
    """Megatron's bytes each of tp ranks sends per forward (ring
    algorithms) for a model of c["layers"] layers on [c["batch"], c["seq"],
    c["hidden"]] activations: per layer one all-reduce after attention and
    one after the MLP (SP: all-gather + reduce-scatter each), the
    vocabulary-parallel token embedding's lookups reduced once, decoders'
    LM head gathering batch·seq·vocab to the output rank, and SP gathering
    the final activation."""
    act = c["batch"] * c["seq"] * c["hidden"] * elem_bytes
    all_reduce = lambda s: 2 * (tp - 1) * s // tp
    gather = scatter = lambda s: (tp - 1) * s // tp
    # To one rank: the busiest sender is any other rank, with its one part.
    gather_to_output_rank = lambda s: s // tp
    per_layer = 2 * (gather(act) + scatter(act)) if sp else 2 * all_reduce(act)
    total = c["layers"] * per_layer + sp * gather(act)
    if embedding:
        # Its partial lookups are all-reduced (SP: reduce-scattered along
        # the sequence).
        total += scatter(act) if sp else all_reduce(act)
    if lm_head:
        total += gather_to_output_rank(c["batch"] * c["seq"] * c["vocab"] * elem_bytes)
    return total


def generated_spec(config_path):
    cfg = json.load(open(config_path))
    c = cfg["config"]
    analytic = weights = None
    if not c.get("experts"):
        lm_head = cfg["family"] != "bert"
        analytic = lambda tp, elem_bytes, sp: megatron_comm_bytes(c, tp, elem_bytes, sp,
                                                                  lm_head=lm_head)
        weights = lambda model, tp: shardable_weight_bytes(model, cfg, tp)
    shapes, ints, binary = {}, {}, []
    for name in cfg["inputs"]:
        shapes[name] = [c["batch"], c["seq"]]
        if "mask" in name:
            ints[name] = 2
        elif "token_type" in name:
            ints[name] = c["type_vocab"]
        else:
            ints[name] = c["vocab"]
    # Every tp fits: an MLP width it does not divide is padded with zero
    # features, heads it does not fit with zero heads (padded_heads).
    fits = lambda tp: True
    return {"shapes": shapes, "ints": ints, "binary": binary, "comm_bytes": analytic,
            "experts": c.get("experts", 0),
            "weights": weights, "seq": c["seq"], "vocab": c["vocab"],
            "fits": fits, "why": f"{c['heads']} heads, {c['kv_heads']} kv heads, ffn {c['ffn']}"}


# The linears of each generated family by their module names: which are
# row-parallel (their bias is added once, after the reduction: replicated)
# and which one is the LM head (tied to the embedding table for GPT-2).
ROW_LINEARS = {
    "gpt2": ("attn.c_proj", "mlp.c_proj"),
    "bert": ("attention.output.dense", "output.dense"),
    "llama": ("o_proj", "down_proj"),
    "neox": ("attention.dense", "dense_4h_to_h"),
}
# The MLP linears (an FFN width tp does not divide is padded with zero
# features up to the next multiple of tp; the attention's output dense of
# BERT ends in "output.dense" too, hence the anchors).
MLP_LINEARS = {
    "gpt2": ("mlp.c_fc", "mlp.c_proj"),
    "bert": ("intermediate.dense",),
    "llama": ("gate_proj", "up_proj", "down_proj"),
    "neox": ("dense_h_to_4h", "dense_4h_to_h"),
}
LM_HEADS = {"gpt2": "transformer.wte.weight", "llama": "lm_head.weight",
            "neox": "embed_out.weight"}
# The token embeddings (vocabulary-parallel: each rank keeps vocab/N rows;
# GPT-2's is its LM head too, and is kept once).
EMBEDDINGS = {"gpt2": "transformer.wte.weight",
              "bert": "bert.embeddings.word_embeddings.weight",
              "llama": "model.embed_tokens.weight", "neox": "gpt_neox.embed_in.weight"}


# The attention's linears (their heads are padded with zero heads where tp
# does not fit them) and those of them on the key/value heads.
ATTENTION_LINEARS = {
    "gpt2": ("attn.c_attn", "attn.c_proj"),
    "bert": ("self.query", "self.key", "self.value", "attention.output.dense"),
    "llama": ("q_proj", "k_proj", "v_proj", "o_proj"),
    "neox": ("attention.query_key_value", "attention.dense"),
}
KV_LINEARS = ("k_proj", "v_proj")


def padded_heads(heads, kv_heads, tp):
    """(query heads, key/value heads) after zero-head padding for tp: the
    fewest extra key/value heads, each bringing its heads // kv_heads query
    heads, such that tp divides the query heads and the key/value heads
    divide by tp or divide it."""
    group = heads // kv_heads
    kv = kv_heads
    while (kv * group) % tp or (kv % tp and tp % kv):
        kv += 1
    return kv * group, kv


def shardable_weight_bytes(model_path, cfg, tp):
    """(bytes of the sharded weights, bytes each rank keeps of them), from
    the ONNX initializers: every linear inside a layer (weight, and bias of
    a column-parallel one), the LM head and the token embedding. Grouped-query key/value
    projections with fewer heads than ranks keep 1/kv_heads each; MLP weights
    whose FFN width tp does not divide keep 1/tp of the zero-padded width,
    attention weights 1/tp of their zero-padded heads."""
    from onnx import numpy_helper
    c, family = cfg["config"], cfg["family"]
    model = onnx.load(model_path)
    total = kept = 0
    for init in model.graph.initializer:
        # Bytes as stored (bf16 checkpoints: 2 per element).
        width = 2 if init.data_type == onnx.TensorProto.BFLOAT16 else \
            np.dtype(onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[init.data_type]).itemsize
        name, nbytes = init.name, int(np.prod(init.dims)) * width
        layer = any(k in name for k in (".h.", ".layer.", "layers."))
        module = name.rsplit(".", 1)[0]
        linear = layer and len(init.dims) in (1, 2) and not any(
            k in module for k in ("ln_", "layernorm", "LayerNorm", "norm"))
        if name.endswith(".bias") and module.endswith(ROW_LINEARS[family]):
            linear = False  # a row-parallel bias: replicated
        if name.endswith(".attn.bias"):
            linear = False  # GPT-2's causal mask buffer
        if not linear and name not in (LM_HEADS.get(family), EMBEDDINGS[family]):
            continue
        heads, kv_heads = padded_heads(c["heads"], c["kv_heads"], tp)
        kv = family == "llama" and module.endswith(KV_LINEARS)
        parts = min(tp, kv_heads) if kv else tp
        total += nbytes
        if layer and module.endswith(ATTENTION_LINEARS[family]):
            # Its one dim over the heads grows with the zero heads.
            nbytes = (nbytes * kv_heads // c["kv_heads"] if kv
                      else nbytes * heads // c["heads"])
        mlp = layer and (module.endswith(MLP_LINEARS[family]) or (
            family == "bert" and module.endswith("output.dense") and
            not module.endswith("attention.output.dense")))
        if mlp:
            # One dim of the weight (the bias) is the FFN width: padded.
            ffn, padded = c["ffn"], -(-c["ffn"] // tp) * tp
            assert ffn in init.dims, (name, list(init.dims))
            nbytes = nbytes // ffn * padded
        kept += nbytes // parts
    return total, kept


def collective_bytes(manifest):
    """Bytes each rank sends in collectives per forward (all-reduce,
    all-gather, reduce-scatter, all-to-all; not pipeline sends)."""
    return sum(c["bytes"] for c in manifest.get("comm_per_collective", {}).values())


def check_tp_communicates(manifest, tp):
    """A --tp > 1 compile that sends nothing splits nothing: every rank
    computes the whole model. Every model the e2e suites run has a region
    tensor parallelism splits, so that is a failure."""
    if tp > 1 and collective_bytes(manifest) == 0:
        raise RuntimeError(f"--tp {tp} sends 0 bytes in collectives: nothing was "
                           f"split, every rank computes the whole model")


def external_form(name, model_path, out_dir):
    """The model saved with every initializer as ONNX external data in
    `out_dir` (as exporters write models over 2 GB); its .json spec is
    copied along for generated models."""
    os.makedirs(out_dir, exist_ok=True)
    path = os.path.join(out_dir, name + ".onnx")
    onnx.save(onnx.load(model_path), path, save_as_external_data=True,
              location=name + ".onnx.data")
    return path


def make_inputs(model_path, spec, rng, out_dir):
    model = onnx.load(model_path)
    inits = {i.name for i in model.graph.initializer}
    paths = {}
    for vi in model.graph.input:
        if vi.name in inits:
            continue
        tt = vi.type.tensor_type
        shape = spec["shapes"].get(vi.name) or [d.dim_value for d in tt.shape.dim]
        dtype = onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[tt.elem_type]
        if vi.name in spec.get("ints", {}):
            x = rng.integers(0, spec["ints"][vi.name], size=shape).astype(dtype)
        elif vi.name in spec.get("ones", []):
            x = np.ones(shape, dtype)
        elif vi.name in spec.get("binary", []):
            x = rng.integers(0, 2, size=shape).astype(dtype)
        elif vi.name in spec.get("positive", []):
            x = (rng.random(shape) + 0.5).astype(dtype)
        else:
            x = rng.standard_normal(shape).astype(dtype)
        path = os.path.join(out_dir, vi.name + ".npy")
        np.save(path, x)
        paths[vi.name] = path
    return paths


def run(cmd, log):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    log.write("$ " + " ".join(cmd) + "\n" + r.stdout)
    if r.returncode:
        raise RuntimeError(r.stdout.strip().splitlines()[-1] if r.stdout.strip() else
                           f"exit {r.returncode}")


def shape_flags(spec):
    """parc's --input-shape flags for a model spec's input shapes."""
    return sum((["--input-shape", f"{n}={'x'.join(map(str, s))}"]
                for n, s in spec["shapes"].items()), [])


def output_file(manifest, name):
    """The file parc-run (and ort-run) writes output `name` to, inside its
    --output-dir: the one the compiler recorded in the manifest."""
    for o in manifest["outputs"]:
        if o["name"] == name:
            return o["file"]
    raise RuntimeError(f"the manifest has no output '{name}'")


def outputs_of(directory, manifest):
    """The manifest's outputs as parc-run (or ort-run) wrote them, in f64."""
    out = {}
    for o in manifest["outputs"]:
        fname = output_file(manifest, o["name"])
        out[fname] = np.load(os.path.join(directory, fname)).astype(np.float64)
    return out


def rel_err(got, want):
    """Worst max|got - want| / max|want| over the outputs of two outputs_of."""
    worst = 0.0
    for k, w in want.items():
        g = got[k]
        if g.shape != w.shape:
            raise RuntimeError(f"{k}: shape {g.shape} vs {w.shape}")
        scale = np.abs(w).max() if w.size else 0.0
        e = np.abs(g - w).max() if w.size else 0.0
        worst = max(worst, e / scale if scale else e)
    return worst


def run_checks(checks, width):
    """Runs (description, fn) checks, one PASS/FAIL row each (a check fails
    by raising); returns (passed, failed)."""
    passed = failed = 0
    for what, fn in checks:
        try:
            fn()
            ok, row = True, "PASS"
        except Exception as e:  # noqa: BLE001 — a failed check is a row, not a crash
            ok, row = False, f"FAIL: {e}"
        print(f"{what:<{width}} {row}", flush=True)
        passed += ok
        failed += not ok
    return passed, failed


def spec_fits(spec, tp, sp=False):
    """Whether tp fits the model's dims (computed from its shapes, not parc)."""
    if sp and spec.get("seq") and spec["seq"] % tp:
        return False
    if "fits" in spec:
        return spec["fits"](tp)
    return spec["divisor"] is None or spec["divisor"] % tp == 0


def spec_why(spec, tp=1, sp=False):
    if sp and spec.get("seq") and spec["seq"] % tp:
        return f"sequence of {spec['seq']}"
    return spec.get("why") or f"dims divide by {spec['divisor']}"


def check(name, model_path, spec, args, log, tp, sp=False):
    work = os.path.join(args.work, f"{name}-tp{tp}{'-sp' if sp else ''}")
    os.makedirs(work, exist_ok=True)
    rng = np.random.default_rng(args.seed)
    inputs = make_inputs(model_path, spec, rng, work)
    flags = shape_flags(spec)
    compiled = os.path.join(work, "out")
    start = time.time()
    sp_flags = ["--sp"] if sp else []
    if not spec_fits(spec, tp, sp):
        # The spec does not fit the model: parc must refuse it, naming why,
        # and leave no output behind.
        shutil.rmtree(compiled, ignore_errors=True)
        r = subprocess.run([os.path.join(args.tools, "parc"), "compile", model_path, "-o",
                            compiled, f"--tp={tp}"] + sp_flags + flags,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        log.write(r.stdout)
        if r.returncode == 0 or "does not fit this model" not in r.stdout:
            raise RuntimeError(f"--tp {tp} {' '.join(sp_flags)} was not refused "
                               f"({spec_why(spec, tp, sp)})")
        if os.path.exists(compiled):
            raise RuntimeError("a refused compile left its output directory behind")
        return None
    run([os.path.join(args.tools, "parc"), "compile", model_path, "-o", compiled,
         "--quiet", f"--tp={tp}", f"--dtype={args.dtype}"] + sp_flags + flags, log)
    run([os.path.join(args.tools, "parc-run"), compiled, "--output-dir",
         os.path.join(work, "parc")] + [f"--input={n}={p}" for n, p in inputs.items()], log)
    seconds = time.time() - start
    run(["node", os.path.join(ROOT, "tools", "ort-reference", "ort-run.mjs"), model_path,
         "--output-dir", os.path.join(work, "ort")] +
        sum((["--input", f"{n}={p}"] for n, p in inputs.items()), []), log)
    manifest = json.load(open(os.path.join(compiled, "manifest.json")))
    check_tp_communicates(manifest, tp)
    if spec.get("embedded"):
        # The external form splits exactly as the embedded one does.
        same = os.path.join(args.work, f"{spec['embedded']}-tp{tp}{'-sp' if sp else ''}",
                            "out", "manifest.json")
        if os.path.exists(same):
            want = collective_bytes(json.load(open(same)))
            if collective_bytes(manifest) != want:
                raise RuntimeError(f"{collective_bytes(manifest)} B sent in collectives, "
                                   f"the embedded form sends {want} B")
    if tp > 1 and spec.get("comm_bytes") is not None:
        elem_bytes = 4 if args.dtype == "f32" else 2
        got, want = manifest["comm_bytes_per_forward"], spec["comm_bytes"](tp, elem_bytes, sp)
        if got != want:
            raise RuntimeError(f"{got} B sent per rank in collectives per forward, "
                               f"Megatron's count is {want} B")
    if tp > 1 and spec.get("weights") is not None and args.dtype == "f32":
        # Replicated bytes: the single-rank compile's weights less the
        # shardable ones.
        single = os.path.join(args.work, f"{name}-tp1", "out", "manifest.json")
        if not os.path.exists(single):
            raise RuntimeError("the weight check needs the tp 1 run (--tp 1 ...)")
        one = json.load(open(single))["ranks"][0]["weight_bytes"]
        total, kept = spec["weights"](model_path, tp)
        # Each rank also keeps its 3 int64 bounds of the embedding's rows
        # and the int64 identity table of the vocabulary that wraps ids.
        want = one - total + kept + 3 * 8 + spec["vocab"] * 8
        for r in manifest["ranks"]:
            if r["weight_bytes"] != want:
                raise RuntimeError(f"rank {r['rank']} holds {r['weight_bytes']} B of "
                                   f"weights; shardable/N + replicated is {want} B")
    worst_abs, worst_rel = 0.0, 0.0
    for out in manifest["outputs"]:
        fname = output_file(manifest, out["name"])
        got = np.load(os.path.join(work, "parc", fname)).astype(np.float64)
        want = np.load(os.path.join(work, "ort", fname)).astype(np.float64)
        if got.shape != want.shape:
            raise RuntimeError(f"output {out['name']}: shape {got.shape} vs ort {want.shape}")
        err = np.abs(got - want).max() if got.size else 0.0
        scale = np.abs(want).max() if want.size else 0.0
        worst_abs = max(worst_abs, err)
        worst_rel = max(worst_rel, err / scale if scale else err)
        # The ranks together must also compute what one rank does.
        single = os.path.join(args.work, f"{name}-tp1", "parc", fname)
        if tp > 1 and os.path.exists(single):
            one = np.load(single).astype(np.float64)
            diff = np.abs(got - one).max() if got.size else 0.0
            if diff > args.rtol * (np.abs(one).max() if one.size else 0.0):
                raise RuntimeError(f"output {out['name']}: {diff:.3e} from the "
                                   f"single-rank run")
    return len(manifest["outputs"]), worst_abs, worst_rel, seconds


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--tools", required=True, help="directory with parc and parc-run")
    p.add_argument("--generated", required=True, help="directory of generated models (.onnx + .json)")
    p.add_argument("--work", required=True)
    p.add_argument("--dtype", default="f32", choices=["f32", "bf16", "f16"],
                   help="compute dtype (the reference stays onnxruntime in f32)")
    p.add_argument("--rtol", type=float, default=None,
                   help="default 1e-4 for f32; 3e-2 for bf16 (unit roundoff 3.9e-3, compounded over layers and bf16 all-reduces); 4e-3 for f16")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--only", nargs="*")
    p.add_argument("--tp", type=int, nargs="+", default=[1], help="tensor-parallel degrees")
    p.add_argument("--sp", action="store_true",
                   help="also run every tp > 1 with sequence parallelism (--sp)")
    p.add_argument("--external", action="store_true",
                   help="also run every model with its weights as ONNX external data")
    args = p.parse_args()
    if args.rtol is None:
        args.rtol = {"f32": 1e-4, "bf16": 3e-2, "f16": 4e-3}[args.dtype]
    args.work = os.path.join(args.work, args.dtype)
    os.makedirs(args.work, exist_ok=True)

    models = [(n, os.path.join(SHARED, n + ".onnx"), s) for n, s in SHARED_MODELS.items()]
    for f in sorted(os.listdir(args.generated)):
        if f.endswith(".json"):
            n = f[:-5]
            models.append((n, os.path.join(args.generated, n + ".onnx"),
                           generated_spec(os.path.join(args.generated, f))))
    if args.only:
        models = [m for m in models if m[0] in args.only]
    if args.external:
        # After the embedded form of each model, so that it can compare.
        ext_dir = os.path.join(args.work, "external-models")
        # nn-fuse-moe stacks experts from their bytes, which external data
        # keeps in the file: unfused, each expert's linears split on their
        # own and send more than the fused MoE.
        models += [(n + ".ext", external_form(n, path, ext_dir),
                    dict(spec, embedded=None if spec.get("experts") else n))
                   for n, path, spec in models]

    passed = failed = 0
    print(f"{'model':<52} {'tp':>5} {'outs':>4} {'max abs err':>12} {'max rel err':>12} {'time s':>7}  result")
    with open(os.path.join(args.work, "log.txt"), "w") as log:
        runs = [(m, t, False) for m in models for t in args.tp]
        if args.sp:
            runs += [(m, t, True) for m in models for t in args.tp if t > 1]
        for (name, path, spec), tp, sp in runs:
            try:
                result = check(name, path, spec, args, log, tp, sp)
                if result is None:
                    ok = True
                    row = (f"{'':>4} {'':>12} {'':>12} {'':>7}  PASS (refused: "
                           f"{spec_why(spec, tp, sp)})")
                else:
                    n, err_abs, err_rel, secs = result
                    ok = err_rel <= args.rtol
                    row = f"{n:>4} {err_abs:>12.3e} {err_rel:>12.3e} {secs:>7.1f}  {'PASS' if ok else 'FAIL'}"
            except Exception as e:  # noqa: BLE001 — report and continue
                ok, row = False, f"{'':>4} {'':>12} {'':>12} {'':>7}  FAIL: {e}"
            print(f"{name:<52} {str(tp) + ('+sp' if sp else ''):>5} {row}", flush=True)
            passed += ok
            failed += not ok
    print(f"differential (parc cpu {args.dtype} vs onnxruntime f32, rtol {args.rtol}): "
          f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
