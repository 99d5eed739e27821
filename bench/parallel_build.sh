#!/usr/bin/env bash
# Building the rank programs in parallel (parc compile --jobs): compiles
# the generated 5-layer Llama (llama_l5) at --pp 4 (four distinct stage programs) with
# --jobs 1 and with --jobs 2 in each round, reads build_seconds from each
# output's compile-stats.json (the C++ builds only, as --jobs runs them)
# and prints both and their ratio per round and as medians. The goal is a
# ratio near the cores used (2 on this machine) when they are idle.
# Usage: bench/parallel_build.sh [ROUNDS] [MODEL.onnx [parc compile flags...]]
# (default: 3 rounds, llama_l5 at --pp 4, input_ids 2x8)
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-3}
shift || true
work=build/bench/parallel_build
mkdir -p "$work"
scripts/build.sh >/dev/null
source bench/common.sh
model_and_flags "$work" llama_l5 "--pp 4 --input-shape input_ids=2x8" "$@"

rows=()
for ((r = 1; r <= rounds; r++)); do
  for jobs in 1 2; do
    build/bin/parc compile "$model" "${flags[@]}" --jobs "$jobs" --quiet -o "$work/out-j$jobs"
  done
  rows+=("$work/out-j1/compile-stats.json|$work/out-j2/compile-stats.json")
done

/usr/bin/python3 - "${rows[@]}" <<'PY'
import json, statistics, sys
print(f"{'round':>5} {'j2 jobs':>8} {'--jobs 1 s':>10} {'--jobs 2 s':>10} {'j1/j2':>6}")
one, two = [], []
for i, row in enumerate(sys.argv[1:], 1):
    a, b = (json.load(open(p)) for p in row.split("|"))
    one.append(a["build_seconds"]); two.append(b["build_seconds"])
    print(f"{i:>5} {b['build_jobs']:>8} {one[-1]:>10.2f} {two[-1]:>10.2f} {one[-1] / two[-1]:>6.2f}")
m1, m2 = statistics.median(one), statistics.median(two)
print(f"median {'':>7} {m1:>10.2f} {m2:>10.2f} {m1 / m2:>6.2f}")
PY
uptime
