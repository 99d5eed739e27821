#!/usr/bin/env bash
# Compile memory and weight-writing speed against model size (issue 16):
# generates Llama-style models with their weights as ONNX external data
# (examples/models/scale.py: about 0.5, 2 and 6 GB of f32) and compiles each
# at --tp 2, at --tp 2 --pp 2 and at --tp 2 --dtype bf16 (rounded while
# streamed: its parc MB/s counts the bf16 bytes written). Per compile it prints peak RSS
# (/usr/bin/time -v) over the weight bytes (goal <= 0.15 at 6 GB, falling
# with size), the weight-write rate (compile-stats.json) over the rate of a
# plain `cp` of the same weight file measured right after it (goal >= 0.7),
# and the rest of the compile's seconds. The largest size is then run at
# --tp 2 on the cpu target and checked against single-rank parc on the same
# random input (onnxruntime would hold a second copy of the weights), and
# its files are deleted.
# Usage: bench/compile_scale.sh [NAME...]   (default: llama_0g5 llama_2g llama_6g)
# SCALE_DIR (default /tmp/parc-scale) holds the models and outputs; the 6 GB
# size needs about 25 GB there and takes minutes.
set -euo pipefail
cd "$(dirname "$0")/.."
names=("$@")
[ ${#names[@]} -gt 0 ] || names=(llama_0g5 llama_2g llama_6g)
dir=${SCALE_DIR:-/tmp/parc-scale}
mkdir -p "$dir"
scripts/build.sh >/dev/null

rows=()
for name in "${names[@]}"; do
  model=$dir/$name.onnx
  [ -f "$model.data" ] ||
    /usr/bin/python3 examples/models/scale.py --out "$dir" --only "$name" >/dev/null
  # bf16: the writer rounds the f32 data while streaming (half the bytes out).
  for flags in "--tp 2" "--tp 2 --pp 2" "--tp 2 --dtype bf16"; do
    out=$dir/out-$name-${flags//[ -]/}
    rm -rf "$out"
    # shellcheck disable=SC2086
    /usr/bin/time -v -o "$out.time" build/bin/parc compile "$model" $flags \
      --input-shape input_ids=1x16 -o "$out" --quiet
    # cp of the same bytes, through the page cache as parc's are.
    start=$(date +%s.%N)
    cp "$model.data" "$dir/cp.data"
    end=$(date +%s.%N)
    rm -f "$dir/cp.data"
    rss=$(sed -nE 's/.*Maximum resident set size \(kbytes\): ([0-9]+)/\1/p' "$out.time")
    wall=$(sed -nE 's/.*Elapsed \(wall clock\) time.*: (.*)/\1/p' "$out.time")
    rows+=("$name|$flags|$out/compile-stats.json|$(stat -c %s "$model.data")|$start|$end|$rss|$wall")
  done
done

/usr/bin/python3 - "${rows[@]}" <<'PY'
import json, sys
print(f"{'model':<10} {'flags':<20} {'weights GB':>10} {'RSS GB':>7} {'RSS/weights':>11}"
      f" {'parc MB/s':>9} {'cp MB/s':>8} {'parc/cp':>7} {'write s':>7} {'rest s':>6}")
for row in sys.argv[1:]:
    name, flags, stats, size, start, end, rss, wall = row.split("|")
    s = json.load(open(stats))
    parts = [float(p) for p in wall.split(":")]
    seconds = sum(p * 60 ** i for i, p in enumerate(reversed(parts)))
    rate = s["weight_bytes_written"] / max(s["weight_write_seconds"], 1e-9) / 1e6
    cp = int(size) / max(float(end) - float(start), 1e-9) / 1e6
    rss = int(rss) * 1024
    print(f"{name:<10} {flags:<20} {int(size) / 1e9:>10.2f} {rss / 1e9:>7.2f}"
          f" {rss / int(size):>11.3f} {rate:>9.0f} {cp:>8.0f} {rate / cp:>7.2f}"
          f" {s['weight_write_seconds']:>7.1f} {seconds - s['weight_write_seconds']:>6.1f}")
PY

# The largest size at --tp 2 against single-rank parc, on one random input.
name=${names[-1]}
model=$dir/$name.onnx
/usr/bin/python3 -c "import numpy as np; np.save('$dir/input_ids.npy', \
  np.random.default_rng(0).integers(0, 32000, (1, 16)))"
build/bin/parc compile "$model" --input-shape input_ids=1x16 -o "$dir/out-$name-tp1" --quiet
for cfg in tp1 tp2; do
  build/bin/parc-run "$dir/out-$name-$cfg" --input "input_ids=$dir/input_ids.npy" \
    --output-dir "$dir/run-$cfg" >/dev/null
done
/usr/bin/python3 - "$dir/run-tp1" "$dir/run-tp2" "$name" <<'PY'
import glob, os, sys
import numpy as np
one, two, name = sys.argv[1:]
worst = 0.0
for path in sorted(glob.glob(os.path.join(one, "*.npy"))):
    a, b = np.load(path), np.load(os.path.join(two, os.path.basename(path)))
    err = float(np.max(np.abs(a - b)) / max(np.max(np.abs(a)), 1e-30))
    worst = max(worst, err)
print(f"{name} --tp 2 against single-rank parc: max error {worst:.2e} of the "
      f"largest output, {'ok' if worst < 1e-4 else 'MISMATCH'}")
sys.exit(0 if worst < 1e-4 else 1)
PY
[ "${KEEP_SCALE:-0}" = 1 ] || rm -rf "$model" "$model.data" "$dir"/out-"$name"-* "$dir"/run-*
