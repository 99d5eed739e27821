#!/usr/bin/env bash
# Generation on the cpu: a Llama-style decoder of about 100 M parameters
# (examples/models/generate_past.py llama_past_100m: 12 layers, hidden 768,
# 12 heads on 4 kv heads, vocab 16384; 108 M) exported with its KV cache,
# batch 1, a prompt of 128 tokens, 64 new tokens, greedy, side by side:
#   parc-run --prompt (1 rank, T kernel threads) against onnxruntime's own
#     decode loop (test/e2e/ort_greedy.mjs: the prompt in one step over an
#     empty past, then one token per step with its past/present I/O; T
#     intra-op threads, graph optimisations on): the per-token latency
#     ratio (p50 over the decode steps) and the TTFT ratio;
#   parc's TTFT with a prefill program of the prompt's 128 tokens (parc
#     compile --prefill-len 128) against onnxruntime's, and its tokens;
#   parc --tp 2 against 1 rank, where parc compile --max-seq builds --tp 2
#     (it prints "not available" while it refuses it);
#   parc --pp 2 (with the prefill): 2 groups of 2 sequences (batch 4,
#     --micro-batches 2: stage 0 steps one group while stage 1 steps the
#     other) against one group of 2 (batch 2, the stages taking turns):
#     decode tokens/s, the sequences over the per-token latency p50 (2x
#     if the stages overlap fully: every forward is of 2 sequences either
#     way), and whether the first group's tokens are the batch-2 run's;
#   parc's per-token latency as a share of one full-sequence forward:
#     onnxruntime's forward of all 192 tokens over an empty past, the cost
#     of re-running the sequence for a token;
#   the bytes a decode step moves in and out of the program, from the
#     model's shape (analytic): parc's (ids, positions, mask in, logits
#     out; the cache stays) against onnxruntime's past/present loop (the
#     cache in and out again at the mean position) and the full-sequence
#     forward's (192 ids in, 192 rows of logits out).
# Each round runs every side once; the figures are medians over ROUNDS.
# Usage: bench/decode.sh [ROUNDS] [THREADS]   (defaults 3 and 1)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
threads=${2:-1}
prompt=128 new=64 maxseq=192
work=build/bench/decode
model=$work/llama_past_100m.onnx
mkdir -p "$work"

scripts/build.sh >/dev/null
[ -f "$model" ] || /usr/bin/python3 examples/models/generate_past.py \
  --out "$work" --only llama_past_100m >/dev/null
/usr/bin/python3 -c "import numpy as np; r = np.random.default_rng(0); \
  np.save('$work/prompt.npy', r.integers(0, 16384, (1, $prompt))); \
  np.save('$work/full.npy', r.integers(0, 16384, (1, $maxseq))); \
  p4 = r.integers(0, 16384, (4, $prompt)); np.save('$work/prompt4.npy', p4); \
  np.save('$work/prompt2.npy', p4[:2])"
build/bin/parc compile "$model" -o "$work/tp1" --max-seq "$maxseq" --quiet
build/bin/parc compile "$model" -o "$work/pre" --max-seq "$maxseq" \
  --prefill-len "$prompt" --quiet
tp2=yes
build/bin/parc compile "$model" -o "$work/tp2" --max-seq "$maxseq" --tp 2 \
  --quiet 2>"$work/tp2.err" || tp2=
for groups in 1 2; do
  build/bin/parc compile "$model" -o "$work/pp2g$groups" --max-seq "$maxseq" \
    --prefill-len "$prompt" --pp 2 --micro-batches "$groups" \
    --input-shape "input_ids=$((2 * groups))x1" --quiet
done
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) cores)"

parc() { # DIR THREADS -> "TTFT P50"
  build/bin/parc-run "$work/$1" --prompt "$work/prompt.npy" \
    --max-new-tokens "$new" --greedy --warmup 1 --kernel-threads "$2" \
    --output-dir "$work/out-$1" |
    sed -nE 's/.*TTFT ([0-9.]+) ms.*/\1/p; s/.*latency p50 ([0-9.]+) ms.*/\1/p' |
    paste -sd' '
}
ort() { # PROMPT NEW -> "TTFT P50"
  ORT_THREADS=$threads ORT_OPTIMIZE=1 node test/e2e/ort_greedy.mjs "$model" \
    "$work/$1" "$2" "$work/ort-$1" |
    sed -nE 's/.*TTFT ([0-9.]+) ms, per-token latency p50 ([0-9.]+) ms.*/\1 \2/p'
}
groups() { # DIR BATCH -> per-token latency p50
  build/bin/parc-run "$work/$1" --prompt "$work/prompt$2.npy" \
    --max-new-tokens "$new" --greedy --warmup 1 --kernel-threads "$threads" \
    --output-dir "$work/out-$1" | sed -nE 's/.*latency p50 ([0-9.]+) ms.*/\1/p'
}
declare -A runs
for round in $(seq "$rounds"); do
  runs[parc]+="$(parc tp1 "$threads");"
  runs[pre]+="$(parc pre "$threads");"
  runs[ort]+="$(ort prompt.npy "$new");"
  runs[full]+="$(ort full.npy 1);"
  [ -z "$tp2" ] || runs[tp2]+="$(parc tp2 "$threads");"
  runs[g1]+="$(groups pp2g1 2);"
  runs[g2]+="$(groups pp2g2 4);"
done
echo "load average after:  $(cut -d' ' -f1-3 /proc/loadavg)"
same() { # DIR -> equal | DIFFERENT (its tokens against onnxruntime's)
  /usr/bin/python3 -c "import numpy as np; \
    print('equal' if np.array_equal(np.load('$work/out-$1/tokens.npy'), \
    np.load('$work/ort-prompt.npy')) else 'DIFFERENT')"
}
/usr/bin/python3 - "$rounds" "$threads" "$(same tp1)" "${runs[parc]}" "${runs[ort]}" \
  "${runs[full]}" "${runs[tp2]:-}" "${runs[pre]}" "$(same pre)" "${runs[g1]}" \
  "${runs[g2]}" "$(/usr/bin/python3 -c "import numpy as np; \
    print('equal' if np.array_equal(np.load('$work/out-pp2g2/tokens.npy')[:2], \
    np.load('$work/out-pp2g1/tokens.npy')) else 'DIFFERENT')")" <<'PY'
import statistics as st, sys
rounds, threads, same = sys.argv[1:4]
def med(text, i):
    return st.median(float(r.split()[i]) for r in text.split(";") if r)
parc, ort, full, tp2, pre, pre_same, g1, g2, g_same = sys.argv[4:13]
p_ttft, p_tok = med(parc, 0), med(parc, 1)
o_ttft, o_tok, f = med(ort, 0), med(ort, 1), med(full, 0)
print(f"llama_past_100m, batch 1, prompt 128, 64 new tokens, {threads} thread(s), "
      f"medians of {rounds} rounds; tokens parc vs onnxruntime: {same}")
print(f"per-token latency  parc {p_tok:9.3f} ms  onnxruntime {o_tok:9.3f} ms  "
      f"ratio parc/ort {p_tok / o_tok:.2f} (goal <= 1.0)")
print(f"TTFT               parc {p_ttft:9.3f} ms  onnxruntime {o_ttft:9.3f} ms  "
      f"ratio parc/ort {p_ttft / o_ttft:.2f} (the prompt fed one token per step)")
q_ttft = med(pre, 0)
print(f"TTFT with prefill  parc {q_ttft:9.3f} ms  onnxruntime {o_ttft:9.3f} ms  "
      f"ratio parc/ort {q_ttft / o_ttft:.2f} (--prefill-len 128: the prompt in "
      f"one forward; tokens vs onnxruntime: {pre_same})")
if tp2:
    t = med(tp2, 1)
    print(f"--tp 2 vs 1 rank   per-token {t:.3f} ms vs {p_tok:.3f} ms: "
          f"speed-up {p_tok / t:.2f}x")
else:
    print("--tp 2 vs 1 rank   not available (parc compile --max-seq refuses --tp)")
one, two = 2e3 / med(g1, 0), 4e3 / med(g2, 0)
print(f"--pp 2 groups      2 groups of 2 {two:.1f} decode tokens/s vs 1 group "
      f"of 2 {one:.1f}: {two / one:.2f}x (2x when the stages overlap fully; "
      f"first group's tokens vs the batch-2 run: {g_same})")
print(f"decode step vs full forward  parc step {p_tok:.3f} ms = "
      f"{100 * p_tok / f:.1f}% of onnxruntime's 192-token forward ({f:.3f} ms)")
sys.path.insert(0, "examples/models")
from generate_past import BENCH_MODELS
c = BENCH_MODELS["llama_past_100m"]
prompt, new, maxseq = 128, 64, 192
step = 3 * 8 + 8 * maxseq + 4 * c.vocab  # id, position ids, cache position, mask; logits
mean_past = prompt + (new - 1) / 2
cache = 2 * c.layers * c.kv_heads * (c.hidden // c.heads) * 4  # B per token
ort_step = 8 + 8 + 8 * (mean_past + 1) + 4 * c.vocab + cache * (2 * mean_past + 1)
full = 8 * maxseq * 3 + 4 * c.vocab * maxseq
print(f"bytes per decode step (analytic)  parc {step / 1e3:.1f} KB = "
      f"{100 * step / full:.2f}% of the full forward's {full / 1e6:.2f} MB; "
      f"onnxruntime's past/present step {ort_step / 1e6:.2f} MB (the cache "
      f"in and out at the mean position {mean_past:.1f})")
PY
