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

The two real onnxruntime-genai decoders of test/Inputs/models run too:
GPT-2 with com.microsoft Attention and its stacked past_{i} [2, batch,
heads, past, head] (int32 ids, positions and mask), and the fp16 Qwen with
GroupQueryAttention (seqlens_k computed in the graph from the int64
attention_mask). Their tokens must be onnxruntime's exactly, and every
step's logits within 1e-4 for f32 and 4e-3 for fp16 (the fp16 logits
widened to f32 on both sides). 4e-3 is 8 units of fp16 rounding (2^-11):
every op of the fp16 model rounds its result to fp16 and parc feeds the
prompt a token per step while onnxruntime runs it in one step, so the two
sum in different orders; one ulp of the largest logit alone is 2^-10 of it.

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

# The real decoders: (file in test/Inputs/models, layers, kv heads, head
# size, bytes per cache element, logits tolerance).
REAL = {
    "ort_gpt2_past": ("ort_genai_tiny_gpt2_past", 5, 4, 8, 4, 1e-4),
    "ort_qwen35_gqa_fp16": ("ort_genai_tiny_qwen35_gqa_fp16", 2, 2, 16, 2, 4e-3),
}
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


def compile_model(tools, model, batch, tp, pp, out, log):
    run([os.path.join(tools, "parc"), "compile", model, "-o", out,
         "--max-seq", str(MAX_SEQ), "--quiet", "--tp", str(tp), "--pp", str(pp),
         "--input-shape", f"input_ids={batch}x1"], log)
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
                sampling=("--greedy",)):
    """parc-run's tokens and the logits it wrote with --logits."""
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
    text = run(cmd + extra, log)
    for figure in ("TTFT", "per-token latency p50", "tokens/s"):
        if figure not in text:
            raise RuntimeError(f"parc-run printed no {figure}")
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
    work = os.path.join(args.work, f"{index}-{name}")
    os.makedirs(work, exist_ok=True)
    model = os.path.join(args.work, name + ".onnx")
    prompt = np.array(rows, dtype=np.int64)
    prompt_path = os.path.join(work, "prompt.npy")
    np.save(prompt_path, prompt)
    ort_path = os.path.join(work, "ort.npy")
    # onnxruntime's loop once per case, for every configuration.
    if os.path.exists(ort_path):
        want = np.load(ort_path)
        want_logits = np.load(ort_path.replace(".npy", "-logits.npy"))
    else:
        want, want_logits = ort_tokens(model, prompt_path, new, ort_path, log)
    work = os.path.join(work, label)
    os.makedirs(work, exist_ok=True)
    out = os.path.join(work, "compiled")
    manifest = compile_model(args.tools, model, len(rows), tp, pp, out, log)
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


def run_real_case(args, index, name, rows, new, log):
    """A real decoder: tokens exact, every step's logits within the model's
    tolerance, cache bytes by the formula."""
    file, layers, kv_heads, head_dim, elem, rtol = REAL[name]
    work = os.path.join(args.work, f"real{index}-{name}")
    os.makedirs(work, exist_ok=True)
    model = os.path.join(ROOT, "test", "Inputs", "models", file + ".onnx")
    prompt_path = os.path.join(work, "prompt.npy")
    np.save(prompt_path, np.array(rows, dtype=np.int64))
    out = os.path.join(work, "compiled")
    manifest = compile_model(args.tools, model, len(rows), 1, 1, out, log)
    check_cache_bytes(manifest, len(rows) * MAX_SEQ * layers * kv_heads *
                      head_dim * 2 * elem)
    want, want_logits = ort_tokens(model, prompt_path, new,
                                   os.path.join(work, "ort.npy"), log)
    got, logits = parc_tokens(args.tools, out, prompt_path, new, work, log)
    if not np.array_equal(got, want):
        raise RuntimeError(f"tokens differ: parc {got.tolist()} ort {want.tolist()}")
    err = check_logits(logits, want_logits, rtol)
    return f"{new} new tokens x {len(rows)}, logits {err:.2e} (rtol {rtol:g})"


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


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tools", required=True, help="folder of parc and parc-run")
    p.add_argument("--work", required=True)
    p.add_argument("--only", nargs="*", choices=list(MODELS) + list(REAL),
                   help="models to run")
    p.add_argument("--configs", nargs="*", choices=[c[0] for c in CONFIGS],
                   help="parallel configurations of the generated models "
                        "(default: all; the real decoders run at 1 rank)")
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
        p2, f2 = run_cases(args, REAL_CASES, run_real_case, 19, log)
    passed, failed = passed + p2, failed + f2
    print(f"{passed} passed, {failed} failed")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
