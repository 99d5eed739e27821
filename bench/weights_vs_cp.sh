#!/usr/bin/env bash
# Weight writing against disk speed: compiles the GPT-2-small-shaped model
# (124 M parameters, 500 MB of f32 weights in the .onnx file) at --tp 2 and
# reads the weight-writing seconds, bytes and peak RSS from the output's
# compile-stats.json; in the same round it times a plain `cp` of the
# model's file(s) (the .onnx and any external data beside it, MODEL*) into
# the same folder. Prints, per round and as medians, parc's MB/s, cp's
# MB/s, their ratio (the goal of issue 16 is >= 0.7) and peak RSS over the
# model's weight bytes (the goal is well under 1).
# Usage: bench/weights_vs_cp.sh [ROUNDS] [MODEL.onnx [parc compile flags...]]
# (default: 3 rounds, the generated gpt2_small at --tp 2)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
shift || true
work=build/bench/gpt2_small
mkdir -p "$work"

scripts/build.sh >/dev/null
source bench/common.sh
model_and_flags "$work" gpt2_small "--tp 2 --input-shape input_ids=1x128" "$@"
out=build/bench/weights_vs_cp
copy=build/bench/weights_vs_cp.cp
mkdir -p "$copy"

rows=()
for ((r = 0; r < rounds; r++)); do
  rm -rf "$out"
  build/bin/parc compile "$model" "${flags[@]}" -o "$out" --quiet
  rm -rf "${copy:?}"/*
  # The model's bytes through the page cache, as parc reads and writes them.
  start=$(date +%s.%N)
  cp "$model"* "$copy"/
  end=$(date +%s.%N)
  cp_bytes=$(du -cb "$copy"/* | tail -1 | cut -f1)
  # Keep the round's figures: the next round replaces the folder.
  cp "$out/compile-stats.json" "$copy.stats$r.json"
  rows+=("$copy.stats$r.json:$cp_bytes:$start:$end")
done
rm -rf "${copy:?}"/*
/usr/bin/python3 - "$model" "${flags[*]}" "${rows[@]}" <<'PY'
import json, statistics, sys
model, flags, rows = sys.argv[1], sys.argv[2], sys.argv[3:]
print(f"{model} {flags}: weight writing against cp of the model's file(s)")
print(f"  {'round':>5} {'parc MB':>9} {'s':>7} {'parc MB/s':>10} {'cp MB/s':>9}"
      f" {'parc/cp':>8} {'RSS/model':>10}")
ratios, rss = [], []
for i, row in enumerate(rows):
    path, cp_bytes, start, end = row.rsplit(":", 3)
    s = json.load(open(path))
    parc_rate = s["weight_bytes_written"] / max(s["weight_write_seconds"], 1e-9) / 1e6
    cp_rate = int(cp_bytes) / max(float(end) - float(start), 1e-9) / 1e6
    ratios.append(parc_rate / cp_rate)
    rss.append(s["peak_rss_bytes"] / s["model_weight_bytes"])
    print(f"  {i:5} {s['weight_bytes_written'] / 1e6:9.1f} {s['weight_write_seconds']:7.2f}"
          f" {parc_rate:10.0f} {cp_rate:9.0f} {ratios[-1]:8.3f} {rss[-1]:10.2f}")
print(f"  median parc/cp rate {statistics.median(ratios):.3f} (goal >= 0.7), "
      f"peak RSS / model weight bytes {statistics.median(rss):.2f}")
PY
