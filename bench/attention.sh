#!/usr/bin/env bash
# Fused attention (attention_fused, no [B, H, S, T] scores) against the
# unfused lowering (--no-fused-attention: scores, softmax and values
# kernels) on one attention core of GPT-2-small's shape (12 heads of 64,
# examples/models/attention_block.py) at seq 128, 512 and 2048, in the
# exporters' causal form (GPT-2's Where(tril, scores, finfo.min)) and with
# an additive padding mask input. Per seq and form, each round runs both
# programs (1 rank x 1 thread, --warmup 2 --repeat RUNS) and takes their
# medians; the figures are the medians over ROUNDS rounds with the spread
# (min-max). Memory: the arena each program plans (manifest.json) and the
# peak RSS of one forward of the rank program (/usr/bin/time -v).
# Usage: bench/attention.sh [ROUNDS] [RUNS]   (defaults 3 and 10)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
runs=${2:-10}
work=build/bench/attention
mkdir -p "$work"
scripts/build.sh >/dev/null
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

inputs() { # DIR: the --input flags for its model's inputs
  local flags=""
  for n in q k v mask; do
    [ -f "$1/$n.npy" ] && flags+=" --input $n=$1/$n.npy"
  done
  echo "$flags"
}
p50() { # DIR OUT
  build/bin/parc-run "$1" $(inputs "$(dirname "$1")") --repeat "$runs" \
    --warmup 2 --kernel-threads 1 | sed -nE 's/.*p50=([0-9.]+).*/\1/p'
}
rss_mb() { # DIR: peak RSS of one forward of the rank program
  local flags=""
  for n in q k v mask; do
    [ -f "$(dirname "$1")/$n.npy" ] && flags+=" --input=$n=$(dirname "$1")/$n.npy"
  done
  OMP_NUM_THREADS=1 /usr/bin/time -v "$1/bin/main" --weights-dir="$1/weights" \
    $flags 2>&1 >/dev/null | sed -nE 's/.*Maximum resident set size \(kbytes\): ([0-9]+)/\1/p' |
    awk '{printf "%.1f", $1 / 1024}'
}
arena_mb() { # DIR
  /usr/bin/python3 -c "
import json, sys
m = json.load(open('$1/manifest.json'))
def find(o):
    if isinstance(o, dict):
        for k, v in o.items():
            if k == 'arena_bytes': yield v
            yield from find(v)
    elif isinstance(o, list):
        for v in o: yield from find(v)
print('%.1f' % (max(find(m)) / 2**20))"
}

lines=()
for form in causal padding; do
  for seq in 128 512 2048; do
    d="$work/$form-$seq"
    mkdir -p "$d"
    /usr/bin/python3 examples/models/attention_block.py --seq "$seq" \
      --form "$form" --out "$d/model.onnx"
    /usr/bin/python3 -c "
import numpy as np
g = np.random.default_rng(0)
for n in 'qkv':
    np.save('$d/' + n + '.npy', g.standard_normal((1, 12, $seq, 64), np.float32))
if '$form' == 'padding':
    m = np.zeros((1, 1, 1, $seq), np.float32); m[..., $seq * 3 // 4:] = -10000
    np.save('$d/mask.npy', m)"
    build/bin/parc compile "$d/model.onnx" --quiet -o "$d/fused"
    build/bin/parc compile "$d/model.onnx" --quiet --no-fused-attention \
      -o "$d/unfused"
    fused="" unfused=""
    for round in $(seq "$rounds"); do
      fused+="$(p50 "$d/fused") "
      unfused+="$(p50 "$d/unfused") "
    done
    lines+=("$form $seq $fused| $unfused| $(arena_mb "$d/fused") \
$(arena_mb "$d/unfused") $(rss_mb "$d/fused") $(rss_mb "$d/unfused")")
  done
done
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) cores)"
/usr/bin/python3 - "$rounds" "$runs" "${lines[@]}" <<'PY'
import statistics, sys
rounds, runs = sys.argv[1], sys.argv[2]
print(f"attention core [1, 12, S, 64], 1 thread: median over {rounds} rounds "
      f"of each round's p50 of {runs} runs (spread: min-max of the rounds)")
print(f"{'form':8s} {'seq':>5s} {'fused ms':>20s} {'unfused ms':>20s} "
      f"{'time f/u':>8s} {'arena MiB f/u':>16s} {'peak RSS MiB f/u':>18s}")
for line in sys.argv[3:]:
    head, unfused, memory = line.split("|")
    form, seq, *fused = head.split()
    f, u = [float(x) for x in fused], [float(x) for x in unfused.split()]
    af, au, rf, ru = memory.split()
    fm, um = statistics.median(f), statistics.median(u)
    print(f"{form:8s} {seq:>5s} {fm:9.2f} ({min(f):.2f}-{max(f):.2f})"
          f" {um:9.2f} ({min(u):.2f}-{max(u):.2f}) {fm / um:8.2f}"
          f" {af:>7s}/{au:<8s} {rf:>8s}/{ru:<8s}")
PY
