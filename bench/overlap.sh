#!/usr/bin/env bash
# Communication/compute overlap on the cpu target: the GPT-2-small-shaped
# model (12 layers, hidden 768, seq 128) compiled with and without
# dist-overlap (--no-overlap) in four configurations, timed side by side and
# alternating so machine noise hits both alike:
#   tp2        --tp 2, batch 1
#   tp2-sp     --tp 2 --sp, batch 1
#   tp2-b2     --tp 2, batch 2 (the reference for the next row)
#   tp2-b2-m2  --tp 2 --micro-batches 2, batch 2: two chains whose
#              all-reduces interleave with each other's compute
# Prints, per configuration, both medians, the ratio, and the share of
# communication time hidden behind compute that the runtime measured on
# rank 0 (time inside start calls and blocked in waits counts as exposed).
# Extra compile flags (e.g. --cluster FILE) go after RUNS.
# Usage: bench/overlap.sh [RUNS] [parc compile flags...]
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-10}
shift || true
work=build/bench/gpt2_small
mkdir -p "$work"

scripts/build.sh >/dev/null
[ -f "$work/gpt2_small.onnx" ] ||
  /usr/bin/python3 examples/models/generate.py --out "$work" --only gpt2_small
for b in 1 2; do
  /usr/bin/python3 -c "import numpy as np; np.save('$work/input_ids_b$b.npy', \
    np.random.default_rng(0).integers(0, 50257, ($b, 128)))"
done

configs=(tp2 tp2-sp tp2-b2 tp2-b2-m2)
declare -A flags batch
flags[tp2]="--tp 2";                       batch[tp2]=1
flags[tp2-sp]="--tp 2 --sp";               batch[tp2-sp]=1
flags[tp2-b2]="--tp 2";                    batch[tp2-b2]=2
flags[tp2-b2-m2]="--tp 2 --micro-batches 2"; batch[tp2-b2-m2]=2
for c in "${configs[@]}"; do
  for mode in on off; do
    extra=()
    [ "$mode" = off ] && extra=(--no-overlap)
    # shellcheck disable=SC2086
    build/bin/parc compile "$work/gpt2_small.onnx" \
      --input-shape "input_ids=${batch[$c]}x128" ${flags[$c]} "$@" "${extra[@]}" \
      -o "$work/overlap-$c-$mode" --quiet
  done
done

declare -A ms hidden
for round in 1 2 3; do
  for c in "${configs[@]}"; do
    for mode in on off; do
      out=$(build/bin/parc-run "$work/overlap-$c-$mode" \
        --input "input_ids=$work/input_ids_b${batch[$c]}.npy" --repeat "$runs" --warmup 2)
      ms[$c-$mode]+="$(sed -nE 's/.*p50=([0-9.]+).*/\1/p' <<<"$out") "
      hidden[$c-$mode]+="$(sed -nE 's/.*, ([0-9.]+)% of it hidden.*/\1/p' <<<"$out" | head -1) "
    done
  done
done
args=()
for c in "${configs[@]}"; do
  args+=("$c" "${ms[$c-on]}" "${ms[$c-off]}" "${hidden[$c-on]}" "${hidden[$c-off]}")
done
/usr/bin/python3 - "$*" "${args[@]}" <<'PY'
import statistics, sys
extra, rest = sys.argv[1], sys.argv[2:]
print(f"gpt2-small-shaped, seq 128 {extra}, 1 thread per rank, median of 3 rounds:")
print(f"  {'config':10} {'on ms':>9} {'off ms':>9} {'off/on':>7} {'hidden on':>10} {'hidden off':>11}")
med = lambda s: statistics.median(float(x) for x in s.split())
for i in range(0, len(rest), 5):
    c, on, off, hon, hoff = rest[i:i + 5]
    a, b = med(on), med(off)
    print(f"  {c:10} {a:9.2f} {b:9.2f} {b / a:7.3f} {med(hon):9.1f}% {med(hoff):10.1f}%")
print("  off/on > 1: overlap pays; tp2-b2-m2 against tp2-b2: what interleaving two")
print("  micro-batches adds to the hidden share")
PY
