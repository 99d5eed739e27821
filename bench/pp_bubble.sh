#!/usr/bin/env bash
# Pipeline bubble on the cpu target: an 8-layer GPT-2-shaped model (hidden
# 256, seq 64) compiled with --pp P --micro-batches M for P = 2, 4 and
# M = 1..8, each micro-batch two sequences (batch 2·M, so the work per
# micro-batch is fixed, as GPipe's formula assumes), one kernel thread per
# rank. Prints the bubble the run measures (mean over ranks of the share of
# the forward a rank waits for its neighbours) next to the analytic
# (P-1)/(M+P-1). On a machine with fewer cores than ranks the measured
# bubble also counts time-sharing. Usage: bench/pp_bubble.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-5}
work=build/bench/pp_bubble
mkdir -p "$work"

scripts/build.sh >/dev/null
[ -f "$work/gpt2_pp_bench.onnx" ] ||
  /usr/bin/python3 examples/models/generate.py --out "$work" --only gpt2_pp_bench >/dev/null
printf '%2s %2s %9s %9s %10s\n' P M measured analytic "fwd ms"
for p in 2 4; do
  for m in 1 2 3 4 5 6 7 8; do
    b=$((2 * m))
    /usr/bin/python3 -c "import numpy as np; np.save('$work/ids$b.npy', \
      np.random.default_rng(0).integers(0, 512, ($b, 64)))"
    build/bin/parc compile "$work/gpt2_pp_bench.onnx" --input-shape "input_ids=${b}x64" \
      --pp "$p" --micro-batches "$m" -o "$work/p${p}m${m}" --quiet
    out=$(build/bin/parc-run "$work/p${p}m${m}" --input "input_ids=$work/ids$b.npy" \
      --repeat "$runs" --warmup 1)
    measured=$(sed -nE 's/.*pipeline bubble: measured ([0-9.]+).*/\1/p' <<<"$out")
    analytic=$(sed -nE 's/.*analytic .* = ([0-9.]+) .*/\1/p' <<<"$out")
    median=$(sed -nE 's/.*p50=([0-9.]+).*/\1/p' <<<"$out")
    printf '%2d %2d %9s %9s %10s\n' "$p" "$m" "$measured" "$analytic" "$median"
  done
done
