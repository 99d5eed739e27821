#!/usr/bin/env bash
# Single-rank cpu latency of a GPT-2-small-shaped model (12 layers, hidden
# 768, 12 heads, seq 128, vocab 50257, batch 1) through parc and through
# onnxruntime, on the same inputs and the same thread count, measured side
# by side in one run. Prints both medians and the ratio parc / onnxruntime
# (target: <= 1.0). Usage: bench/single_rank_vs_ort.sh [THREADS] [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
threads=${1:-1}
runs=${2:-10}
work=build/bench/gpt2_small
mkdir -p "$work"

scripts/build.sh >/dev/null
[ -f "$work/gpt2_small.onnx" ] ||
  /usr/bin/python3 examples/models/generate.py --out "$work" --only gpt2_small
/usr/bin/python3 -c "import numpy as np; np.save('$work/input_ids.npy', \
  np.random.default_rng(0).integers(0, 50257, (1, 128)))"
build/bin/parc compile "$work/gpt2_small.onnx" --input-shape input_ids=1x128 \
  -o "$work/out" --quiet

# Alternate the two so that machine noise hits both alike.
parc_ms=() ort_ms=()
for round in 1 2 3; do
  parc_ms+=("$(build/bin/parc-run "$work/out" --input "input_ids=$work/input_ids.npy" \
    --repeat "$runs" --warmup 2 --kernel-threads "$threads" |
    sed -nE 's/.*p50=([0-9.]+).*/\1/p')")
  ort_ms+=("$(node tools/ort-reference/ort-run.mjs "$work/gpt2_small.onnx" \
    --input "input_ids=$work/input_ids.npy" --repeat "$runs" --warmup 2 \
    --threads "$threads" | sed -nE 's/.*median=([0-9.]+).*/\1/p')")
done
/usr/bin/python3 - "${parc_ms[*]}" "${ort_ms[*]}" "$threads" <<'PY'
import statistics, sys
parc = [float(x) for x in sys.argv[1].split()]
ort = [float(x) for x in sys.argv[2].split()]
p, o = statistics.median(parc), statistics.median(ort)
print(f"gpt2-small-shaped, seq 128, {sys.argv[3]} thread(s), median of 3 rounds:")
print(f"  parc        {p:9.2f} ms   (rounds: {', '.join(f'{x:.1f}' for x in parc)})")
print(f"  onnxruntime {o:9.2f} ms   (rounds: {', '.join(f'{x:.1f}' for x in ort)})")
print(f"  ratio parc/onnxruntime = {p / o:.3f}  (target <= 1.0)")
PY
