#!/usr/bin/env bash
# cpu latency of a GPT-2-small-shaped model (12 layers, hidden 768, 12
# heads, seq 128, vocab 50257, batch 1) through parc and onnxruntime on the
# same inputs, every configuration side by side in each round (so machine
# noise hits all alike):
#   parc 1 rank x T threads     vs onnxruntime at T threads, T = 1 and 2
#   parc --tp 2 (2 ranks x 1)   vs onnxruntime at 2 threads and parc 1 x 1
#   parc --dtype bf16           vs parc f32 (1 thread)
#   parc f32 with weights unpacked (PARC_RT_PACK_WEIGHTS=0) and on plain
#   sgemm (PARC_RT_DNNL_MATMUL=0), vs the default (1 thread)
# Each round runs every configuration with --warmup 2 --repeat RUNS and
# takes its median; the figures are the medians over ROUNDS rounds with
# their spread (min-max of the rounds). Ends with a PARC_RT_PROFILE run of
# f32 and bf16: the share of the forward per op kind, GEMM GFLOP/s against
# a 2048^3 GEMM peak measured in the same process, and the weight packing.
# Usage: bench/single_rank_vs_ort.sh [ROUNDS] [RUNS]   (defaults 5 and 10)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-5}
runs=${2:-10}
work=build/bench/gpt2_small
mkdir -p "$work"

scripts/build.sh >/dev/null
[ -f "$work/gpt2_small.onnx" ] ||
  /usr/bin/python3 examples/models/generate.py --out "$work" --only gpt2_small
/usr/bin/python3 -c "import numpy as np; np.save('$work/input_ids.npy', \
  np.random.default_rng(0).integers(0, 50257, (1, 128)))"
compile() { build/bin/parc compile "$work/gpt2_small.onnx" \
  --input-shape input_ids=1x128 --quiet "$@"; }
compile -o "$work/f32"
compile --dtype bf16 -o "$work/bf16"
compile --tp 2 -o "$work/tp2"
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) cores)"

parc() { # ENV... -- DIR THREADS
  local envs=()
  while [ "$1" != -- ]; do envs+=("$1"); shift; done
  env "${envs[@]}" build/bin/parc-run "$work/$2" \
    --input "input_ids=$work/input_ids.npy" --repeat "$runs" --warmup 2 \
    --kernel-threads "$3" | sed -nE 's/.*p50=([0-9.]+).*/\1/p'
}
ort() {
  node tools/ort-reference/ort-run.mjs "$work/gpt2_small.onnx" \
    --input "input_ids=$work/input_ids.npy" --repeat "$runs" --warmup 2 \
    --threads "$1" | sed -nE 's/.*median=([0-9.]+).*/\1/p'
}
declare -A ms
for round in $(seq "$rounds"); do
  ms[parc1]+="$(parc X=1 -- f32 1) "
  ms[ort1]+="$(ort 1) "
  ms[parc2]+="$(parc X=1 -- f32 2) "
  ms[ort2]+="$(ort 2) "
  ms[tp2]+="$(parc X=1 -- tp2 1) "
  ms[bf16]+="$(parc X=1 -- bf16 1) "
  ms[unpacked]+="$(parc PARC_RT_PACK_WEIGHTS=0 -- f32 1) "
  ms[sgemm]+="$(parc PARC_RT_DNNL_MATMUL=0 -- f32 1) "
done
echo "load average after:  $(cut -d' ' -f1-3 /proc/loadavg)"
/usr/bin/python3 - "$rounds" "$runs" "${ms[parc1]}" "${ms[ort1]}" "${ms[parc2]}" \
  "${ms[ort2]}" "${ms[tp2]}" "${ms[bf16]}" "${ms[unpacked]}" "${ms[sgemm]}" <<'PY'
import statistics, sys
rounds, runs = sys.argv[1], sys.argv[2]
names = ["parc1", "ort1", "parc2", "ort2", "tp2", "bf16", "unpacked", "sgemm"]
t = {n: [float(x) for x in v.split()] for n, v in zip(names, sys.argv[3:])}
med = {n: statistics.median(v) for n, v in t.items()}
label = {
    "parc1": "parc f32, 1 rank x 1 thread",
    "ort1": "onnxruntime, 1 thread",
    "parc2": "parc f32, 1 rank x 2 threads",
    "ort2": "onnxruntime, 2 threads",
    "tp2": "parc f32 --tp 2, 2 ranks x 1 thread",
    "bf16": "parc --dtype bf16, 1 rank x 1 thread",
    "unpacked": "parc f32, weights unpacked, 1 thread",
    "sgemm": "parc f32 on dnnl_sgemm, 1 thread",
}
print(f"gpt2-small-shaped, seq 128: median over {rounds} rounds of each "
      f"round's median of {runs} runs (spread: min-max of the rounds)")
for n in names:
    print(f"  {label[n]:40s} {med[n]:8.1f} ms  ({min(t[n]):.1f}-{max(t[n]):.1f})")
def ratio(a, b, what, goal):
    # The spread of a ratio: its value in each round.
    per = [x / y for x, y in zip(t[a], t[b])]
    print(f"  {what:52s} {med[a] / med[b]:6.3f}  "
          f"(rounds {min(per):.3f}-{max(per):.3f}; goal {goal})")
ratio("parc1", "ort1", "parc / onnxruntime, 1 thread", "<= 0.8")
ratio("parc2", "ort2", "parc 1 rank x 2 threads / onnxruntime 2 threads", "<= 0.8")
ratio("tp2", "ort2", "parc --tp 2 (2 x 1) / onnxruntime 2 threads", "<= 0.8")
ratio("tp2", "parc2", "parc --tp 2 (2 x 1) / parc 1 rank x 2 threads", "-")
ratio("bf16", "parc1", "parc bf16 / f32", "<= 0.65")
ratio("parc1", "unpacked", "parc f32 packed / unpacked weights", "< 1")
ratio("parc1", "sgemm", "parc f32 packed matmul / dnnl_sgemm", "< 1")
print(f"  {'speed-up --tp 2 over 1 rank x 1 thread':52s} "
      f"{med['parc1'] / med['tp2']:6.2f}x (goal >= 1.9)")
PY
for dtype in f32 bf16; do
  echo "profile, $dtype, 1 rank x 1 thread:"
  PARC_RT_PROFILE=1 build/bin/parc-run "$work/$dtype" \
    --input "input_ids=$work/input_ids.npy" --repeat "$runs" --warmup 2 \
    --kernel-threads 1 | grep -E 'profile (over|weight|gemm peak|kind)'
done
