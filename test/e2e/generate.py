#!/usr/bin/python3
"""Greedy generation with a KV cache: parc-run's token loop vs onnxruntime's.

For each decoder of examples/models/generate_past.py (GPT-2; Llama with RoPE
and grouped-query attention) and each prompt: `parc compile --max-seq S`,
then `parc-run OUT --prompt ids.npy --max-new-tokens N --greedy`, against
test/e2e/ort_greedy.mjs, which steps the same ONNX file in onnxruntime with
its past/present I/O (the prompt in one step over an empty past, then one
token per step). The token ids must be equal exactly, and every step's
logits (parc-run --logits) within max|parc - ort| / max|ort| <= 1e-4 of
onnxruntime's; parc-run must print TTFT, per-token latency and tokens/s; the
manifest's KV-cache bytes must be batch x max-seq x layers x kv-heads x
head-dim x 2 (key and value) x 4 bytes, per rank: under --tp each rank holds
kv-heads / tp heads (one when the model has fewer kv heads than tp: pairs of
ranks share one, as the attention's grouped-query heads are shared), under
--pp each stage its layers / pp; --tp 3 pads the 4 heads with zero heads to
6, the cache with them. Every parallel configuration (1 rank, --tp 2, --tp
4, --tp 3, --pp 2, --pp 2 --tp 2) must give onnxruntime's tokens exactly. In
the configurations of EOS_CONFIGS (1 rank and --pp 2 --tp 2, where every
rank must stop at the same step), a case with --eos set to a token
onnxruntime generates checks that the sequence stops there (the rest of the
row repeats it), with --warmup 2, and sampling is checked.

Sampling (--temperature/--top-k/--seed) is checked by what holds whatever
the draws: --top-k 1 and --temperature 1e-6 give onnxruntime's greedy
tokens; one seed gives the same tokens twice; every sampled token is among
the top-k ids numpy finds in the logits parc wrote for its step.

The two real onnxruntime-genai decoders of test/Inputs/models run too, at
REAL_CONFIGS (1 rank, --tp 2, --tp 4, --pp 2, --pp 2 --tp 2; each rank's
cache its kv heads' and its stage's layers'):
GPT-2 with com.microsoft Attention and its stacked past_{i} [2, batch,
heads, past, head] (int32 ids, positions and mask), and the fp16 Qwen with
GroupQueryAttention (seqlens_k computed in the graph from the int64
attention_mask). Their tokens must be onnxruntime's exactly, and every
step's logits within 1e-4 for f32 and 4e-3 for fp16 (the fp16 logits
widened to f32 on both sides). 4e-3 is 8 units of fp16 rounding (2^-11):
every op of the fp16 model rounds its result to fp16 and parc feeds the
prompt a token per step while onnxruntime runs it in one step, so the two
sum in different orders; one ulp of the largest logit alone is 2^-10 of it.

Prompts of different lengths in one batch (MIXED_CASES, at the
configurations of MIXED_CONFIGS, and onnxruntime-genai's two decoders at 1
rank, REAL_MIXED): the rows right-padded in ids.npy with their lengths in
--prompt-lengths lens.npy. Each row must give exactly the tokens of the
batch-1 program run on that row alone and of onnxruntime's loop on that row
alone (then -1, or --eos, to the longest row's end), and its logits
(logits.npy[i, b]: the step that chose row b's token i) within 1e-4 of both
(4e-3 for the fp16 Qwen).
At 1 rank, --eos set to a token the short row generates stops that row
early while the other goes on, and bad lengths files (a length of 0, one
past the row width, a wrong shape) are refused with a message naming the
row or the shape.

A prefill program (`parc compile --prefill-len P`, PREFILL_CASES at
PREFILL_CONFIGS: 1 rank, --tp 2, --pp 2, on the generated Llama and on
onnxruntime-genai's GPT-2): the first P tokens of the prompt in one
forward, the rest through decode steps. Tokens must be onnxruntime's
exactly and every step's logits within 1e-4 of its loop's (the first step's
are the prefill's when P is the prompt's length); parc-run must say TTFT
came from a prefill of P tokens; the manifest must record P and a prefill
that shares the decode program's weights (at least one shared, and one
arena of the larger size for both). At 1 rank a prompt shorter than P goes
through decode steps alone and still gives onnxruntime's tokens.

Groups of sequences (`parc compile --pp 2 --micro-batches 2`, GROUP_CASES
at --pp 2 and --pp 2 --tp 2: the generated Llama at batch 4, GPT-2 at batch
2, onnxruntime-genai's GPT-2 with --prefill-len): each rank holds a cache
per group and the loop interleaves the groups' steps; the batch's tokens
must be onnxruntime's loop's on the whole batch exactly and every step's
logits within 1e-4, the cache bytes the formula's for the whole batch, and
with one row per group --eos stops row 0's group after its first token
while row 1's goes on. Mixed prompt lengths with one row per group (GROUP_MIXED) must give
each row's tokens alone.

Prints one row per case and `N passed, N failed`; exits 1 on any failure.
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "examples", "models"))
from generate_past import MODELS  # noqa: E402

MAX_SEQ = 24
# (name, --tp, --pp): every configuration runs every case.
CONFIGS = [("1", 1, 1), ("tp2", 2, 1), ("tp4", 4, 1), ("tp3", 3, 1),
           ("pp2", 1, 2), ("pp2tp2", 2, 2)]
# The configurations that also run the --eos case.
EOS_CONFIGS = ("1", "pp2tp2")
# (model, prompt rows, new tokens): batch 1 and 2, several prompt lengths.
CASES = [
    ("gpt2_past", [[5, 17, 42, 3, 88]], 10),
    ("gpt2_past", [[9, 80, 11, 2, 45, 70], [60, 7, 33, 21, 1, 4]], 8),
    ("llama_past", [[9, 80, 11, 2, 45, 70]], 12),
    ("llama_past", [[1, 2, 3], [60, 7, 33]], 16),
]

# Prompts of different lengths in one batch: (model, rows unpadded, new).
MIXED_CASES = [
    ("llama_past", [[1, 2, 3], [60, 7, 33, 21, 1, 4, 9]], 10),
    ("gpt2_past", [[5, 17, 42, 3, 88, 6, 30], [9, 80, 11]], 8),
]
MIXED_CONFIGS = ("1", "tp2", "pp2")
# The id right-padding the short rows in ids.npy: never fed.
PAD = 0

# The real decoders: (file in test/Inputs/models, layers, kv heads, head
# size, bytes per cache element, logits tolerance).
REAL = {
    "ort_gpt2_past": ("ort_genai_tiny_gpt2_past", 5, 4, 8, 4, 1e-4),
    "ort_qwen35_gqa_fp16": ("ort_genai_tiny_qwen35_gqa_fp16", 2, 2, 16, 2, 4e-3),
}
# The configurations the real decoders run at.
REAL_CONFIGS = ("1", "tp2", "tp4", "pp2", "pp2tp2")
# Batch 1 and (GPT-2) 2; the Qwen file's GroupQueryAttention in
# onnxruntime needs batch 1 for a prompt of several tokens with a past.
REAL_CASES = [
    ("ort_gpt2_past", [[5, 17, 42, 3, 88]], 12),
    ("ort_gpt2_past", [[9, 80, 11, 2, 45, 70], [60, 7, 33, 21, 1, 4]], 10),
    ("ort_qwen35_gqa_fp16", [[5, 17, 42, 3, 88]], 12),
    ("ort_qwen35_gqa_fp16", [[900, 1, 77, 256, 31, 640, 12]], 14),
]


def run(cmd, log):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True)
    log.write("$ " + " ".join(cmd) + "\n" + r.stdout)
    if r.returncode:
        lines = r.stdout.strip().splitlines()
        raise RuntimeError(lines[-1] if lines else f"exit {r.returncode}")
    return r.stdout


RTOL = 1e-4


def ort_tokens(model, prompt_path, new, out, log, eos=None):
    """onnxruntime's greedy tokens and its logits [steps, batch, vocab]."""
    logits = out.replace(".npy", "-logits.npy")
    cmd = ["node", os.path.join(ROOT, "test", "e2e", "ort_greedy.mjs"), model,
           prompt_path, str(new), out, str(eos) if eos is not None else "-",
           logits]
    run(cmd, log)
    return np.load(out), np.load(logits)


def check_logits(got, want, rtol=RTOL):
    """Every step within rtol of onnxruntime's; returns the largest error."""
    if got.shape != want.shape:
        raise RuntimeError(f"logits shape {got.shape}, onnxruntime's {want.shape}")
    worst = 0.0
    for step, (g, w) in enumerate(zip(got.astype(np.float64), want.astype(np.float64))):
        err = np.abs(g - w).max() / np.abs(w).max()
        if not err <= rtol:
            raise RuntimeError(f"step {step}: logits error {err:.2e} > {rtol:g}")
        worst = max(worst, err)
    return worst


_COMPILED = {}


def compile_model(tools, model, batch, tp, pp, out, log, prefill=None,
                  groups=1):
    """`parc compile` into `out` (once per model, batch, configuration,
    --prefill-len and --micro-batches: a later call returns the first call's
    folder) and its manifest."""
    key = (model, batch, tp, pp, prefill, groups)
    if key in _COMPILED:
        return _COMPILED[key]
    _COMPILED[key] = out, _compile(tools, model, batch, tp, pp, out, log,
                                   prefill, groups)
    return _COMPILED[key]


def _compile(tools, model, batch, tp, pp, out, log, prefill, groups):
    extra = ["--prefill-len", str(prefill)] if prefill else []
    if groups > 1:
        extra += ["--micro-batches", str(groups)]
    run([os.path.join(tools, "parc"), "compile", model, "-o", out,
         "--max-seq", str(MAX_SEQ), "--quiet", "--tp", str(tp), "--pp", str(pp),
         "--input-shape", f"input_ids={batch}x1", *extra], log)
    with open(os.path.join(out, "manifest.json")) as f:
        return json.load(f)


def cache_bytes_per_rank(cfg, batch, tp, pp):
    """The formula, from the generator's configuration: kv heads split over
    tp, or one per rank where tp is a multiple of them (shared by tp /
    kv_heads ranks); heads tp fits neither way padded with zero heads to the
    fewest kv heads that fit, keeping the query heads per kv head (4 heads
    over --tp 3: 6); layers split over pp."""
    kv = cfg.kv_heads
    while (kv * (cfg.heads // cfg.kv_heads)) % tp or (kv % tp and tp % kv):
        kv += 1
    heads = kv // tp if kv % tp == 0 else 1
    assert cfg.layers % pp == 0, "the cases split the layers evenly"
    return batch * MAX_SEQ * (cfg.layers // pp) * heads * cfg.head_dim * 2 * 4


def check_cache_bytes(manifest, want):
    got = manifest["generation"]["kv_cache_bytes_per_rank"]
    if got != want:
        raise RuntimeError(f"manifest KV-cache bytes {got}, formula gives {want}")
    for prog in manifest["programs"]:
        if prog.get("kv_cache_bytes") != want:
            raise RuntimeError(f"program {prog.get('name')} holds "
                               f"{prog.get('kv_cache_bytes')} B of cache, "
                               f"formula gives {want}")


def parc_tokens(tools, out, prompt_path, new, work, log, eos=None,
                sampling=("--greedy",), lengths_path=None, expect=()):
    """parc-run's tokens and the logits it wrote with --logits; its output
    must hold every string of `expect`."""
    res = os.path.join(work, "parc-out")
    logits = os.path.join(work, "parc-logits.npy")
    if os.path.exists(logits):
        os.remove(logits)
    cmd = [os.path.join(tools, "parc-run"), out, "--prompt", prompt_path,
           "--max-new-tokens", str(new), "--output-dir", res,
           "--logits", logits, *sampling]
    # With --eos, also --warmup: its untimed first steps must not disturb
    # the cache.
    extra = ["--eos", str(eos), "--warmup", "2"] if eos is not None else []
    if lengths_path:
        extra += ["--prompt-lengths", lengths_path]
    text = run(cmd + extra, log)
    for figure in ("TTFT", "per-token latency p50", "tokens/s", *expect):
        if figure not in text:
            raise RuntimeError(f"parc-run printed no '{figure}'")
    return np.load(os.path.join(res, "tokens.npy")), np.load(logits)


def check_sampling(args, out, prompt_path, prompt_len, greedy, new, work, log):
    """What sampling must satisfy whatever its draws."""
    def sample(*flags):
        return parc_tokens(args.tools, out, prompt_path, new, work, log,
                           sampling=flags)
    for flags in (("--top-k", "1", "--temperature", "1.5", "--seed", "3"),
                  ("--temperature", "1e-6", "--seed", "3")):
        got, _ = sample(*flags)
        if not np.array_equal(got, greedy):
            raise RuntimeError(f"{' '.join(flags)}: {got.tolist()} is not the "
                               f"greedy {greedy.tolist()}")
    k, flags = 5, ("--temperature", "1.5", "--top-k", "5", "--seed", "11")
    first, logits = sample(*flags)
    again, _ = sample(*flags)
    if not np.array_equal(first, again):
        raise RuntimeError(f"--seed 11 twice: {first.tolist()} then {again.tolist()}")
    # The k-th largest logit of each step's row bounds the ids it may draw.
    kth = -np.sort(-logits, axis=2)[:, :, k - 1]
    for step in range(logits.shape[0]):
        for b, token in enumerate(first[:, prompt_len + step]):
            if logits[step, b, token] < kth[step, b]:
                raise RuntimeError(f"step {step} row {b}: token {token} is "
                                   f"not among the top {k}")
    if np.array_equal(first, greedy):
        raise RuntimeError("--temperature 1.5 --top-k 5 drew only the greedy tokens")


def run_case(args, index, name, rows, new, config, log):
    label, tp, pp = config
    prompt = np.array(rows, dtype=np.int64)
    work, model, prompt_path, want, want_logits = prepare(
        args, f"{index}-{name}", name, rows, new, label, log)
    out = os.path.join(work, "compiled")
    out, manifest = compile_model(args.tools, model, len(rows), tp, pp, out, log)
    check_cache_bytes(manifest, cache_bytes_per_rank(MODELS[name], len(rows), tp, pp))
    got, logits = parc_tokens(args.tools, out, prompt_path, new, work, log)
    if not np.array_equal(got, want):
        raise RuntimeError(f"tokens differ: parc {got.tolist()} ort {want.tolist()}")
    check_logits(logits, want_logits)
    if label not in EOS_CONFIGS:
        return f"{new} new tokens x {len(rows)}, logits"
    check_sampling(args, out, prompt_path, prompt.shape[1], want, new, work, log)
    if len(rows) != 1:
        return f"{new} new tokens x {len(rows)}, logits, sampling"
    # Stop at a token onnxruntime generates past the first one.
    eos = int(want[0, prompt.shape[1] + 1])
    want, want_logits = ort_tokens(model, prompt_path, new,
                                   os.path.join(work, "ort-eos.npy"), log, eos)
    got, logits = parc_tokens(args.tools, out, prompt_path, new, work, log, eos)
    if not np.array_equal(got, want):
        raise RuntimeError(f"--eos {eos}: parc {got.tolist()} ort {want.tolist()}")
    check_logits(logits, want_logits)
    return f"{new} new tokens, logits, sampling, --eos {eos}"


def write_mixed(work, rows):
    """ids.npy (rows right-padded with PAD) and lens.npy for `rows`."""
    width = max(len(r) for r in rows)
    ids = np.full((len(rows), width), PAD, dtype=np.int64)
    for b, r in enumerate(rows):
        ids[b, :len(r)] = r
    paths = os.path.join(work, "ids.npy"), os.path.join(work, "lens.npy")
    np.save(paths[0], ids)
    np.save(paths[1], np.array([len(r) for r in rows], dtype=np.int64))
    return paths


def alone(args, model, row, new, work, config, log, eos=None):
    """Row `row` run alone (batch 1): onnxruntime's tokens and logits, and
    parc's of the batch-1 program of `config` (tokens [prompt + new])."""
    _, tp, pp = config
    os.makedirs(work, exist_ok=True)
    path = os.path.join(work, "prompt.npy")
    np.save(path, np.array([row], dtype=np.int64))
    ort = ort_tokens(model, path, new, os.path.join(work, "ort.npy"), log, eos)
    out, _ = compile_model(args.tools, model, 1, tp, pp,
                           os.path.join(work, "compiled"), log)
    return ort, parc_tokens(args.tools, out, path, new, work, log, eos)


def check_mixed_row(got, logits, b, row, total, ort, parc, pad, rtol):
    """Row b of the batch against its alone runs; the logits' worst error."""
    for who, (tokens, _) in (("onnxruntime", ort), ("parc", parc)):
        want = np.concatenate([tokens[0], np.full(total - len(tokens[0]), pad)])
        if not np.array_equal(got[b], want):
            raise RuntimeError(f"row {b} (prompt {len(row)}): {got[b].tolist()}"
                               f", alone in {who} {want.tolist()}")
    worst = 0.0
    for who, (_, row_logits) in (("onnxruntime", ort), ("parc", parc)):
        steps = row_logits.shape[0]
        if np.any(logits[steps:, b]):
            raise RuntimeError(f"row {b}: logits after its end are not zero")
        try:
            worst = max(worst, check_logits(logits[:steps, b:b + 1], row_logits,
                                            rtol))
        except RuntimeError as e:
            raise RuntimeError(f"row {b} vs {who} alone: {e}") from None
    return worst


def run_mixed_case(args, index, name, rows, new, config, log, real=False,
                   groups=1):
    """Rows of different prompt lengths in one batch (in `groups` groups of
    sequences), each equal to itself alone; at 1 rank also with --eos and
    the bad lengths files."""
    label, tp, pp = config
    work = os.path.join(args.work, f"mixed{index}-{name}",
                        label + (f"-groups{groups}" if groups > 1 else ""))
    os.makedirs(work, exist_ok=True)
    model = (os.path.join(ROOT, "test", "Inputs", "models", REAL[name][0] + ".onnx")
             if real else os.path.join(args.work, name + ".onnx"))
    ids, lens = write_mixed(work, rows)
    out, _ = compile_model(args.tools, model, len(rows), tp, pp,
                           os.path.join(work, "compiled"), log, groups=groups)
    total = max(len(r) for r in rows) + new
    singles = [alone(args, model, r, new, os.path.join(work, f"row{b}"), config, log)
               for b, r in enumerate(rows)]
    got, logits = parc_tokens(args.tools, out, ids, new, work, log,
                              lengths_path=lens)
    rtol = REAL[name][5] if real else RTOL
    worst = max(check_mixed_row(got, logits, b, r, total, *singles[b], -1, rtol)
                for b, r in enumerate(rows))
    lengths = "+".join(str(len(r)) for r in rows)
    if label != "1" or real or groups > 1:
        return f"prompts {lengths}, {new} new, equal alone, logits {worst:.1e}"
    # --eos: the short row's second new token, so it stops early.
    short = min(range(len(rows)), key=lambda b: len(rows[b]))
    eos = int(singles[short][0][0][0, len(rows[short]) + 1])
    singles = [alone(args, model, r, new, os.path.join(work, f"eos{b}"), config,
                     log, eos) for b, r in enumerate(rows)]
    got, logits = parc_tokens(args.tools, out, ids, new, work, log, eos,
                              lengths_path=lens)
    for b, r in enumerate(rows):
        check_mixed_row(got, logits, b, r, total, *singles[b], eos, rtol)
    check_bad_lengths(args, out, ids, work, log)
    return (f"prompts {lengths}, {new} new, equal alone, logits {worst:.1e}, "
            f"--eos {eos}, bad lengths refused")


def check_bad_lengths(args, out, ids, work, log):
    """Bad --prompt-lengths files are refused with a message naming the
    row (a length of 0, one past the width) or the shape."""
    width = np.load(ids).shape[1]
    bad = [([0, 3], "row 0 has length 0"),
           ([3, width + 1], f"row 1 has length {width + 1}"),
           ([3], "must hold i64 [2]")]
    for b, (lengths, message) in enumerate(bad):
        path = os.path.join(work, f"bad{b}.npy")
        np.save(path, np.array(lengths, dtype=np.int64))
        cmd = [os.path.join(args.tools, "parc-run"), out, "--prompt", ids,
               "--max-new-tokens", "2", "--prompt-lengths", path,
               "--output-dir", os.path.join(work, "bad-out")]
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True)
        log.write("$ " + " ".join(cmd) + "\n" + r.stdout)
        if r.returncode == 0 or message not in r.stdout:
            raise RuntimeError(f"--prompt-lengths {lengths}: exit {r.returncode}, "
                               f"no '{message}' in {r.stdout.strip()!r}")


def run_real_case(args, index, name, rows, new, log, config=("1", 1, 1)):
    """A real decoder: tokens exact, every step's logits within the model's
    tolerance, cache bytes by the formula (kv heads over tp, one per rank
    where tp is a multiple of them; layers over pp)."""
    label, tp, pp = config
    _, layers, kv_heads, head_dim, elem, rtol = REAL[name]
    work, model, prompt_path, want, want_logits = prepare(
        args, f"real{index}-{name}", name, rows, new, label, log)
    out = os.path.join(work, "compiled")
    out, manifest = compile_model(args.tools, model, len(rows), tp, pp, out, log)
    heads = kv_heads // tp if kv_heads % tp == 0 else 1
    per_layer = len(rows) * MAX_SEQ * heads * head_dim * 2 * elem
    # Each stage holds its layers' caches: the layout is dist-pipeline's
    # (GPT-2's 5 layers over 2 stages by cost), the bytes per layer the
    # formula's; the manifest gives the largest stage's.
    stages = manifest["pipeline"]["layers_per_stage"] if pp > 1 else [layers]
    if sum(stages) != layers:
        raise RuntimeError(f"layers per stage {stages} do not add up to {layers}")
    got = manifest["generation"]["kv_cache_bytes_per_rank"]
    if got != per_layer * max(stages):
        raise RuntimeError(f"manifest KV-cache bytes {got}, formula gives "
                           f"{per_layer * max(stages)} ({max(stages)} layers)")
    for prog in manifest["programs"]:
        if prog.get("kv_cache_bytes") not in [per_layer * n for n in stages]:
            raise RuntimeError(f"program {prog.get('name')} holds "
                               f"{prog.get('kv_cache_bytes')} B of cache, not "
                               f"a stage's {stages} layers' worth")
    got, logits = parc_tokens(args.tools, out, prompt_path, new, work, log)
    if not np.array_equal(got, want):
        raise RuntimeError(f"tokens differ: parc {got.tolist()} ort {want.tolist()}")
    err = check_logits(logits, want_logits, rtol)
    return (f"{label:6} {new} new tokens x {len(rows)}, logits {err:.2e} "
            f"(rtol {rtol:g})")


# --prefill-len: (model, prompt rows, new tokens, P). P the prompt's length
# (the first new token from the prefill's logits) or shorter (the rest of
# the prompt through decode steps); batch 1 and 2.
PREFILL_CASES = [
    ("llama_past", [[9, 80, 11, 2, 45, 70]], 8, 6),
    ("llama_past", [[1, 2, 3, 4, 5, 6, 7], [60, 7, 33, 21, 1, 4, 9]], 6, 4),
    ("ort_gpt2_past", [[5, 17, 42, 3, 88]], 8, 5),
    ("ort_gpt2_past", [[9, 80, 11, 2, 45, 70], [60, 7, 33, 21, 1, 4]], 6, 4),
]
PREFILL_CONFIGS = ("1", "tp2", "pp2")


def check_prefill_manifest(manifest, prefill):
    """The manifest records P, and each program's prefill shares its
    weights and one arena of the larger size."""
    if manifest["generation"].get("prefill_len") != prefill:
        raise RuntimeError(f"manifest prefill_len "
                           f"{manifest['generation'].get('prefill_len')}")
    for prog in manifest["programs"]:
        pre = prog.get("prefill", {})
        if pre.get("length") != prefill or pre.get("shared_weights", 0) < 1:
            raise RuntimeError(f"program {prog['name']}: prefill {pre}")
        if pre["shared_arena_bytes"] != max(pre["arena_bytes"], prog["arena_bytes"]):
            raise RuntimeError(f"program {prog['name']}: arena of "
                               f"{pre['shared_arena_bytes']} B for both")


def model_path(args, name):
    if name in REAL:
        return os.path.join(ROOT, "test", "Inputs", "models", REAL[name][0] + ".onnx")
    return os.path.join(args.work, name + ".onnx")


def prepare(args, case, name, rows, new, label, log):
    """A case's folder (case/label), model, prompt file, and onnxruntime's
    tokens and logits (its loop once per case, for every configuration)."""
    work = os.path.join(args.work, case)
    os.makedirs(os.path.join(work, label), exist_ok=True)
    model = model_path(args, name)
    prompt_path = os.path.join(work, "prompt.npy")
    np.save(prompt_path, np.array(rows, dtype=np.int64))
    ort_path = os.path.join(work, "ort.npy")
    if os.path.exists(ort_path):
        want = np.load(ort_path)
        want_logits = np.load(ort_path.replace(".npy", "-logits.npy"))
    else:
        want, want_logits = ort_tokens(model, prompt_path, new, ort_path, log)
    return os.path.join(work, label), model, prompt_path, want, want_logits


def run_prefill_case(args, index, name, rows, new, prefill, config, log):
    label, tp, pp = config
    work, model, prompt_path, want, want_logits = prepare(
        args, f"prefill{index}-{name}", name, rows, new, label, log)
    out, manifest = compile_model(args.tools, model, len(rows), tp, pp,
                                  os.path.join(work, "compiled"), log, prefill)
    check_prefill_manifest(manifest, prefill)
    if name in MODELS:
        check_cache_bytes(manifest, cache_bytes_per_rank(MODELS[name], len(rows),
                                                         tp, pp))
    got, logits = parc_tokens(
        args.tools, out, prompt_path, new, work, log,
        expect=(f"prefill of {prefill} prompt tokens in one step",))
    if not np.array_equal(got, want):
        raise RuntimeError(f"tokens differ: parc {got.tolist()} ort {want.tolist()}")
    rtol = REAL[name][5] if name in REAL else RTOL
    err = check_logits(logits, want_logits, rtol)
    row = f"--prefill-len {prefill}, {new} new tokens x {len(rows)}, logits {err:.1e}"
    if label != "1" or index % 2:
        return row
    # A prompt shorter than P: decode steps alone.
    short_path = os.path.join(work, "short.npy")
    short = [r[:prefill - 1] for r in rows]
    np.save(short_path, np.array(short, dtype=np.int64))
    want, _ = ort_tokens(model, short_path, new, os.path.join(work, "ort-short.npy"),
                         log)
    got, _ = parc_tokens(args.tools, out, short_path, new, work, log,
                         expect=("prompt fed one token per step",))
    if not np.array_equal(got, want):
        raise RuntimeError(f"prompt of {prefill - 1}: parc {got.tolist()} "
                           f"ort {want.tolist()}")
    return row + f"; prompt of {prefill - 1} through decode steps"


# Groups of sequences (--micro-batches M under --pp), at GROUP_CONFIGS:
# (model, prompt rows, new tokens, M, --prefill-len or None, --eos case).
# The batch's tokens must be onnxruntime's loop's on the whole batch, every
# step's logits within 1e-4. The --eos case (one row per group) stops row
# 0's group at its first new token, which row 1 never generates, while
# row 1's group goes on.
GROUP_CASES = [
    ("llama_past", [[9, 80, 11, 2, 45, 70], [1, 2, 3, 4, 5, 6],
                    [60, 7, 33, 21, 1, 4], [5, 17, 42, 3, 88, 6]], 10, 2, None,
     False),
    ("llama_past", [[9, 80, 11, 2, 45, 70], [1, 2, 3, 4, 5, 6]], 8, 2, None,
     True),
    ("gpt2_past", [[5, 17, 42, 3, 88], [9, 80, 11, 2, 45]], 8, 2, None, False),
    ("ort_gpt2_past", [[9, 80, 11, 2, 45, 70], [60, 7, 33, 21, 1, 4]], 6, 2, 4,
     False),
]
GROUP_CONFIGS = ("pp2", "pp2tp2")
# Mixed prompt lengths, one row per group (each group its own prompt end).
GROUP_MIXED = [("llama_past", [[1, 2, 3], [60, 7, 33, 21, 1, 4, 9]], 10)]


def run_group_case(args, index, name, rows, new, groups, prefill, eos_case,
                   config, log):
    label, tp, pp = config
    work, model, prompt_path, want, want_logits = prepare(
        args, f"groups{index}-{name}", name, rows, new, label, log)
    out, manifest = compile_model(args.tools, model, len(rows), tp, pp,
                                  os.path.join(work, "compiled"), log, prefill,
                                  groups)
    if manifest["generation"].get("groups") != groups:
        raise RuntimeError(f"manifest groups {manifest['generation'].get('groups')}")
    if name in MODELS:
        check_cache_bytes(manifest, cache_bytes_per_rank(MODELS[name], len(rows),
                                                         tp, pp))
    expect = [f"{groups} groups of {len(rows) // groups} rows"]
    if prefill:
        expect.append(f"prefill of {prefill} prompt tokens in one step")
    got, logits = parc_tokens(args.tools, out, prompt_path, new, work, log,
                              expect=expect)
    if not np.array_equal(got, want):
        raise RuntimeError(f"tokens differ: parc {got.tolist()} ort {want.tolist()}")
    rtol = REAL[name][5] if name in REAL else RTOL
    err = check_logits(logits, want_logits, rtol)
    row = (f"{groups} groups of {len(rows) // groups}"
           + (f", --prefill-len {prefill}" if prefill else "")
           + f", {new} new, logits {err:.1e}")
    if not eos_case:
        return row
    eos = int(want[0, len(rows[0])])
    if eos in want[1, len(rows[1]):]:
        raise RuntimeError(f"row 1 generates row 0's first token {eos} too: "
                           "pick prompts whose groups stop apart")
    want, want_logits = ort_tokens(model, prompt_path, new,
                                   os.path.join(work, "ort-eos.npy"), log, eos)
    got, logits = parc_tokens(args.tools, out, prompt_path, new, work, log, eos)
    if not np.array_equal(got, want):
        raise RuntimeError(f"--eos {eos}: parc {got.tolist()} ort {want.tolist()}")
    # Row 0 chose one token (zeros after: parc logs no step it does not
    # take); row 1 every step.
    check_logits(logits[:1, :1], want_logits[:1, :1], rtol)
    check_logits(logits[:, 1:], want_logits[:, 1:], rtol)
    if np.any(logits[1:, 0]):
        raise RuntimeError("--eos: row 0's logits after its end are not zero")
    return row + f", --eos {eos} stops row 0's group after 1 token"


def run_cases(args, cases, runner, width, log):
    """Runs `cases` (model, rows, new) through `runner`; (passed, failed)."""
    passed = failed = 0
    for i, (name, rows, new) in enumerate(cases):
        if args.only and name not in args.only:
            continue
        try:
            row, ok = "PASS: " + runner(args, i, name, rows, new, log), True
        except RuntimeError as e:
            row, ok = f"FAIL: {e}", False
        print(f"{name:{width}} batch {len(rows)} prompt {len(rows[0]):2}  {row}",
              flush=True)
        passed, failed = passed + ok, failed + (not ok)
    return passed, failed


# The real decoders with mixed lengths at 1 rank: GPT-2 (com.microsoft
# Attention, int32 mask) and the fp16 Qwen (GroupQueryAttention, seqlens_k
# from the mask), each row against its batch-1 runs at the model's tolerance.
REAL_MIXED = [
    ("ort_gpt2_past", [[9, 80, 11, 2], [5, 17, 42, 3, 88, 6, 30, 1]], 10),
    ("ort_qwen35_gqa_fp16", [[5, 17, 42, 3, 88], [900, 1, 77, 256, 31, 640, 12]],
     10),
]


def mixed_row(args, i, name, rows, new, config, log, real=False):
    """Runs one mixed-lengths case and prints its row; whether it passed."""
    try:
        row, ok = "PASS: " + run_mixed_case(args, i, name, rows, new, config,
                                            log, real), True
    except RuntimeError as e:
        row, ok = f"FAIL: {e}", False
    print(f"{config[0]:7} {name:12} batch {len(rows)} mixed  {row}", flush=True)
    return ok


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tools", required=True, help="folder of parc and parc-run")
    p.add_argument("--work", required=True)
    p.add_argument("--only", nargs="*", choices=list(MODELS) + list(REAL),
                   help="models to run")
    p.add_argument("--configs", nargs="*", choices=[c[0] for c in CONFIGS],
                   help="parallel configurations of the generated models "
                        "(default: all; the real decoders at REAL_CONFIGS)")
    args = p.parse_args()
    os.makedirs(args.work, exist_ok=True)
    subprocess.run([sys.executable, os.path.join(ROOT, "examples", "models",
                                                 "generate_past.py"),
                    "--out", args.work], check=True, stdout=subprocess.DEVNULL)
    passed = failed = 0
    with open(os.path.join(args.work, "log.txt"), "w") as log:
        for config in CONFIGS:
            if args.configs and config[0] not in args.configs:
                continue
            for i, (name, rows, new) in enumerate(CASES):
                if args.only and name not in args.only:
                    continue
                try:
                    row = "PASS: " + run_case(args, i, name, rows, new, config, log)
                    ok = True
                except RuntimeError as e:
                    row, ok = f"FAIL: {e}", False
                print(f"{config[0]:7} {name:12} batch {len(rows)} prompt "
                      f"{len(rows[0]):2}  {row}", flush=True)
                passed, failed = passed + ok, failed + (not ok)
            if config[0] not in MIXED_CONFIGS:
                continue
            for i, (name, rows, new) in enumerate(MIXED_CASES):
                if args.only and name not in args.only:
                    continue
                ok = mixed_row(args, i, name, rows, new, config, log)
                passed, failed = passed + ok, failed + (not ok)
        p2 = f2 = 0
        for config in CONFIGS:
            if config[0] not in REAL_CONFIGS or (
                    args.configs and config[0] not in args.configs):
                continue
            p, f = run_cases(args, REAL_CASES,
                             lambda *a, c=config: run_real_case(*a, config=c),
                             19, log)
            p2, f2 = p2 + p, f2 + f
        for i, (name, rows, new) in enumerate(REAL_MIXED):
            if args.only and name not in args.only:
                continue
            ok = mixed_row(args, len(MIXED_CASES) + i, name, rows, new,
                           CONFIGS[0], log, real=True)
            p2, f2 = p2 + ok, f2 + (not ok)
        for config in CONFIGS:
            if config[0] not in PREFILL_CONFIGS or (
                    args.configs and config[0] not in args.configs):
                continue
            for i, (name, rows, new, prefill) in enumerate(PREFILL_CASES):
                if args.only and name not in args.only:
                    continue
                try:
                    row, ok = "PASS: " + run_prefill_case(
                        args, i, name, rows, new, prefill, config, log), True
                except RuntimeError as e:
                    row, ok = f"FAIL: {e}", False
                print(f"{config[0]:7} {name:13} batch {len(rows)} prompt "
                      f"{len(rows[0]):2}  {row}", flush=True)
                p2, f2 = p2 + ok, f2 + (not ok)
        for config in CONFIGS:
            if config[0] not in GROUP_CONFIGS or (
                    args.configs and config[0] not in args.configs):
                continue
            for i, (name, rows, new, groups, prefill, eos_case) in enumerate(
                    GROUP_CASES):
                if args.only and name not in args.only:
                    continue
                try:
                    row, ok = "PASS: " + run_group_case(
                        args, i, name, rows, new, groups, prefill, eos_case,
                        config, log), True
                except RuntimeError as e:
                    row, ok = f"FAIL: {e}", False
                print(f"{config[0]:7} {name:13} batch {len(rows)} prompt "
                      f"{len(rows[0]):2}  {row}", flush=True)
                p2, f2 = p2 + ok, f2 + (not ok)
            for i, (name, rows, new) in enumerate(GROUP_MIXED):
                if args.only and name not in args.only:
                    continue
                try:
                    row, ok = "PASS: " + run_mixed_case(
                        args, i, name, rows, new, config, log,
                        groups=len(rows)), True
                except RuntimeError as e:
                    row, ok = f"FAIL: {e}", False
                print(f"{config[0]:7} {name:13} batch {len(rows)} mixed, "
                      f"{len(rows)} groups  {row}", flush=True)
                p2, f2 = p2 + ok, f2 + (not ok)
    passed, failed = passed + p2, failed + f2
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
