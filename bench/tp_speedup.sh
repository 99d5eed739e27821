#!/usr/bin/env bash
# Tensor-parallel speed-up on the cpu target: the GPT-2-small-shaped model
# (12 layers, hidden 768, seq 128) compiled with --tp 1 and --tp 2 and timed
# side by side, one kernel thread per rank, alternating so machine noise hits
# both alike. Prints the medians and the speed-ups TP=1 / TP=2 and TP=1 /
# TP=2 with --sp (target on 2 cores: >= 1.9), and the machine's own ceiling
# for them: two TP=1 runs at once, one per core, show what sharing the
# memory system and the clock costs with no communication at all
# (ceiling = 2 x TP=1 alone / TP=1 beside another). The pair is pinned to
# cores 0 and 1: a TP=2 forward waits for its slower rank at every
# collective, so the lock-step ceiling takes the slower core of each round
# (the cores of a VM need not run at one speed). Each ratio is taken within
# a round, from runs seconds apart, and the median over the rounds is
# printed with their range: a shared machine drifts more between rounds
# than within one. Usage:
# bench/tp_speedup.sh [RUNS] [ROUNDS]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-10}
rounds=${2:-5}
[[ $runs =~ ^[1-9][0-9]*$ && $rounds =~ ^[1-9][0-9]*$ ]] ||
  { echo "tp_speedup: RUNS and ROUNDS must be positive integers" >&2; exit 1; }
[ "$(nproc)" -ge 2 ] || { echo "tp_speedup: needs 2 cores, this machine has $(nproc)" >&2; exit 1; }
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

# p50 TP [CORE]: the median forward of one run, pinned to CORE when given.
p50() {
  ${2:+taskset -c "$2"} build/bin/parc-run "$work/tp$1" --input "input_ids=$work/input_ids.npy" \
    --repeat "$runs" --warmup 2 --kernel-threads 1 | sed -nE 's/.*p50=([0-9.]+).*/\1/p'
}
declare -A ms
for ((round = 0; round < rounds; ++round)); do
  for tp in 1 2 2sp; do
    ms[$tp]+="$(p50 "$tp") "
  done
  p50 1 1 >"$work/beside.txt" &
  ms[core0]+="$(p50 1 0) "
  wait
  ms[core1]+="$(cat "$work/beside.txt") "
done
/usr/bin/python3 - "${ms[1]}" "${ms[2]}" "${ms[2sp]}" "${ms[core0]}" "${ms[core1]}" "$runs" <<'PY'
import statistics, sys
one, two, sp, core0, core1 = ([float(x) for x in arg.split()] for arg in sys.argv[1:6])
# Per round: the speed-ups and the two ceilings (mean of both cores, and the
# slower core, which a lock-step --tp 2 forward waits for).
speedup = [a / b for a, b in zip(one, two)]
speedup_sp = [a / c for a, c in zip(one, sp)]
ceiling = [4 * a / (x + y) for a, x, y in zip(one, core0, core1)]
lockstep = [2 * a / max(x, y) for a, x, y in zip(one, core0, core1)]
med = statistics.median
listed = lambda xs: ', '.join(f'{x:.1f}' for x in xs)
ratio = lambda xs: f'{med(xs):.2f} (rounds {min(xs):.2f}-{max(xs):.2f})'
share = lambda cs: f'{med(s / c for s, c in zip(speedup, cs)):.0%}'
print(f"gpt2-small-shaped, seq 128, 1 thread per rank, {len(one)} rounds, "
      f"each the median forward of {sys.argv[6]} runs after warm-up:")
print(f"  tp=1 {med(one):9.2f} ms   (rounds: {listed(one)})")
print(f"  tp=2 {med(two):9.2f} ms   (rounds: {listed(two)})")
print(f"  tp=2 --sp {med(sp):9.2f} ms   (rounds: {listed(sp)})")
print(f"  tp=1 beside another tp=1 {med(core0 + core1):9.2f} ms   "
      f"(core 0: {listed(core0)}; core 1: {listed(core1)})")
print(f"  speed-up tp=1/tp=2 = {ratio(speedup)}  (target >= 1.9 on 2 cores)")
print(f"  speed-up tp=1/tp=2 --sp = {ratio(speedup_sp)}")
print(f"  ceiling 2 x tp=1 / tp=1 beside another = {ratio(ceiling)}; "
      f"tp=2 reaches {share(ceiling)} of it")
print(f"  lock-step ceiling 2 x tp=1 / slower core beside another = "
      f"{ratio(lockstep)}; tp=2 reaches {share(lockstep)} of it")
PY
