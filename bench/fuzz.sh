#!/usr/bin/env bash
# Fuzzes the ONNX importer (tools/parc-import-fuzzer: bytes → importOnnx →
# nn verifier → nn-canonicalize) under ASan and UBSan for SECONDS (default
# 120, what scripts/test.sh runs), starting from the seed corpus in
# test/Fuzz/corpus/ plus what earlier runs found (build-fuzz/fuzz/corpus/).
# One fuzzing process (CI machines have 2 cores). A crash, a leak, an
# out-of-memory (over 2 GB) or a timeout (10 s on one input) ends that
# process; the next one starts from the grown corpus until the time is spent,
# so one run reports every bug it meets. Prints executions, exec/s, coverage
# (libFuzzer's cov = covered edges, ft = features) and each reproducer's path.
# PARC_FUZZER=PATH runs a prebuilt fuzzer binary instead of building one.
# Reproduce one with: build-fuzz/bin/parc-import-fuzzer FILE
# (PARC_FUZZ_VERBOSE=1 prints the importer's diagnostics).
# PARC_FUZZ_SEED=S and PARC_FUZZ_RUNS=N make a run repeatable: the same seed
# and corpus give the same inputs, and N caps each process's executions (CI
# uses both, so that it replays what was fuzzed before landing instead of
# exploring anew on every run).
# Ends with `1 passed, 0 failed` when nothing was found, else `0 passed, 1 failed`.
# Usage: bench/fuzz.sh [SECONDS]
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-120}
work=build-fuzz/fuzz
fuzzer=${PARC_FUZZER:-build-fuzz/bin/parc-import-fuzzer}

[ -n "${PARC_FUZZER:-}" ] || scripts/build-fuzz.sh
mkdir -p "$work/corpus"
rm -rf "$work/artifacts" "$work/logs" && mkdir -p "$work/artifacts" "$work/logs"
# Seeds are at most 42 KB (bert_toy_optimized.onnx, weights external): longer
# inputs reach nothing new and slow every execution.
flags=(-rss_limit_mb=2048 -timeout=10 -max_len=65536 -print_final_stats=1
       -artifact_prefix="$work/artifacts/"
       -seed="${PARC_FUZZ_SEED:-0}" -runs="${PARC_FUZZ_RUNS:--1}")
start=$SECONDS execs=0 n=0
while ((SECONDS - start < seconds)); do
  n=$((n + 1)) t0=$SECONDS
  log="$work/logs/run$n.txt"
  "$fuzzer" "${flags[@]}" -max_total_time=$((seconds - (SECONDS - start))) \
    "$work/corpus" test/Fuzz/corpus >"$log" 2>&1 && done=1 || done=0
  e=$(grep -oE '^stat::number_of_executed_units: [0-9]+' "$log" | grep -oE '[0-9]+$' || true)
  if [ -z "$e" ]; then # killed before its stats: count its last status line
    e=$(grep -oE '^#[0-9]+' "$log" | tail -1 | tr -d '#' || true)
  fi
  execs=$((execs + ${e:-0}))
  # Coverage: the best any process reached (each restarts from the corpus).
  status=$(grep -E '^#[0-9]+.*cov: ' "$log" | sort -t: -k2 -n | tail -1 || true)
  if [ -n "$status" ]; then
    c=$(sed -E 's/.* cov: ([0-9]+).*/\1/' <<<"$status")
    ((c >= ${best:-0})) && best=$c last=$status
  fi
  # A clean exit: the time or PARC_FUZZ_RUNS is spent.
  ((done)) && break
  # A bug hit while loading the corpus would recur at once: stop there.
  if ((SECONDS - t0 < 2)) && ! grep -q 'INITED' "$log"; then break; fi
done
elapsed=$((SECONDS - start))
if [ -z "${last:-}" ]; then
  echo "fuzz: the fuzzer did not run; log: $work/logs/run1.txt"
  tail -20 "$work/logs/run1.txt"
  echo "0 passed, 1 failed"
  exit 1
fi
cov=$(sed -E 's/.* cov: ([0-9]+).*/\1/' <<<"$last")
ft=$(sed -E 's/.* ft: ([0-9]+).*/\1/' <<<"$last")
corp=$(sed -E 's/.* corp: ([0-9]+).*/\1/' <<<"$last")
echo "fuzz: ${elapsed}s in $n process(es), $execs executions," \
  "$((execs / (elapsed > 0 ? elapsed : 1))) exec/s, cov $cov ft $ft, corpus $corp inputs"
mapfile -t found < <(find "$work/artifacts" -type f | sort)
for f in "${found[@]}"; do
  echo "fuzz: found $(basename "$f" | cut -d- -f1): $f"
done
grep -h -E '^SUMMARY: |ERROR: libFuzzer: ' "$work"/logs/*.txt | sed 's/^/fuzz:   /' || true
echo "fuzz: ${#found[@]} reproducer(s)"
if ((${#found[@]})); then
  echo "fuzz: reproduce with $fuzzer FILE (logs: $work/logs/)"
  echo "0 passed, 1 failed"
  exit 1
fi
echo "1 passed, 0 failed"
