#!/usr/bin/env bash
# Tensor-parallel speed-up on the cpu target: the GPT-2-small-shaped model
# (12 layers, hidden 768, seq 128) compiled with --tp 1 and --tp 2 and timed
# side by side, one kernel thread per rank, alternating so machine noise hits
# both alike. Prints the medians and the speed-ups TP=1 / TP=2 and TP=1 /
# TP=2 with --sp (target on 2 cores: >= 1.9). Usage: bench/tp_speedup.sh [RUNS]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-10}
work=build/bench/gpt2_small
mkdir -p "$work"

scripts/build.sh >/dev/null
[ -f "$work/gpt2_small.onnx" ] ||
  /usr/bin/python3 examples/models/generate.py --out "$work" --only gpt2_small
/usr/bin/python3 -c "import numpy as np; np.save('$work/input_ids.npy', \
  np.random.default_rng(0).integers(0, 50257, (1, 128)))"
for tp in 1 2; do
  build/bin/parc compile "$work/gpt2_small.onnx" --input-shape input_ids=1x128 \
    --tp "$tp" -o "$work/tp$tp" --quiet
done
build/bin/parc compile "$work/gpt2_small.onnx" --input-shape input_ids=1x128 \
  --tp 2 --sp -o "$work/tp2sp" --quiet

declare -A ms
for round in 1 2 3; do
  for tp in 1 2 2sp; do
    ms[$tp]+="$(build/bin/parc-run "$work/tp$tp" --input "input_ids=$work/input_ids.npy" \
      --repeat "$runs" --warmup 2 --kernel-threads 1 | sed -nE 's/.*p50=([0-9.]+).*/\1/p') "
  done
done
/usr/bin/python3 - "${ms[1]}" "${ms[2]}" "${ms[2sp]}" <<'PY'
import statistics, sys
one = [float(x) for x in sys.argv[1].split()]
two = [float(x) for x in sys.argv[2].split()]
sp = [float(x) for x in sys.argv[3].split()]
a, b, c = statistics.median(one), statistics.median(two), statistics.median(sp)
print("gpt2-small-shaped, seq 128, 1 thread per rank, median of 3 rounds:")
print(f"  tp=1 {a:9.2f} ms   (rounds: {', '.join(f'{x:.1f}' for x in one)})")
print(f"  tp=2 {b:9.2f} ms   (rounds: {', '.join(f'{x:.1f}' for x in two)})")
print(f"  tp=2 --sp {c:9.2f} ms   (rounds: {', '.join(f'{x:.1f}' for x in sp)})")
print(f"  speed-up tp=1/tp=2 = {a / b:.2f}  (target >= 1.9 on 2 cores)")
print(f"  speed-up tp=1/tp=2 --sp = {a / c:.2f}")
PY
