#!/usr/bin/env bash
# Communication/compute overlap on the cpu target: the GPT-2-small-shaped
# model (12 layers, hidden 768, seq 128) compiled with --tp 2 with and
# without dist-overlap (--no-overlap), timed side by side and alternating so
# machine noise hits both alike. Prints both medians, the ratio, and the
# fraction of communication time hidden behind compute that the runtime
# measured on rank 0 (time inside start calls and blocked in waits counts as
# exposed). Extra compile flags (e.g. --sp) go after RUNS.
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
/usr/bin/python3 -c "import numpy as np; np.save('$work/input_ids.npy', \
  np.random.default_rng(0).integers(0, 50257, (1, 128)))"
build/bin/parc compile "$work/gpt2_small.onnx" --input-shape input_ids=1x128 \
  --tp 2 "$@" -o "$work/overlap-on" --quiet
build/bin/parc compile "$work/gpt2_small.onnx" --input-shape input_ids=1x128 \
  --tp 2 "$@" --no-overlap -o "$work/overlap-off" --quiet

declare -A ms hidden
for round in 1 2 3; do
  for mode in on off; do
    out=$(build/bin/parc-run "$work/overlap-$mode" \
      --input "input_ids=$work/input_ids.npy" --repeat "$runs" --warmup 2)
    ms[$mode]+="$(sed -nE 's/.*median=([0-9.]+).*/\1/p' <<<"$out") "
    hidden[$mode]+="$(sed -nE 's/.*, ([0-9.]+)% of it hidden.*/\1/p' <<<"$out") "
  done
done
/usr/bin/python3 - "${ms[on]}" "${ms[off]}" "${hidden[on]}" "${hidden[off]}" "$*" <<'PY'
import statistics, sys
on, off, hon, hoff = ([float(x) for x in a.split()] for a in sys.argv[1:5])
a, b = statistics.median(on), statistics.median(off)
print(f"gpt2-small-shaped, seq 128, tp=2 {sys.argv[5]}, 1 thread per rank, median of 3 rounds:")
print(f"  overlap on  {a:9.2f} ms   comm hidden {statistics.median(hon):5.1f}%")
print(f"  overlap off {b:9.2f} ms   comm hidden {statistics.median(hoff):5.1f}%")
print(f"  ratio off/on = {b / a:.3f}  (> 1: overlap pays)")
PY
