#!/usr/bin/env bash
# Installs what is missing, builds parc and runs every test suite:
#   lit      — IR, import, pass and diagnostic tests (test/)
#   ctest    — gtest unit tests of non-IR code (unittests/)
#   ort      — self-test of the onnxruntime reference runner
#   examples — the example-model generator's own checks
#   differential — every model (and its external-data form) through parc (cpu) and onnxruntime, at
#                  tp 1, 2, 4 and with sequence parallelism at tp 2, 4
#   contrib      — onnxruntime's com.microsoft ops vs onnxruntime (test/e2e/contrib.py)
#   differential-odd-ffn — the same for MLP widths and heads tp does not fit (padded)
#   pipeline     — pipeline-parallel configurations vs onnxruntime and single-rank
#   moe          — MoE sparse routing, expert parallelism and capacity (test/e2e/moe.py)
#   data-parallel — --dp replicas (with tp, pp, ep) vs onnxruntime and single-rank
#   matrix       — the exporter-form corpus and every model in test/Inputs/models
#                  at 1 rank, tp 2, tp 4, tp 2 + sp, pp 2, pp 2 x 2 micro-batches
#                  and pp 2 x tp 2 vs onnxruntime (and numpy) (test/e2e/matrix.py)
#   generate     — parc-run --prompt's greedy tokens vs onnxruntime's KV-cache loop
#   conformance  — ONNX backend node tests with their own expected outputs
#   fuzz         — the importer's libFuzzer target for 2 minutes (build-fuzz/,
#                  ASan + UBSan): passes when no crash, leak or timeout is found
# Ends with the line `N passed, N failed` and exits non-zero on any failure.
set -uo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh || { echo "0 passed, 1 failed"; exit 1; }
scripts/build.sh || { echo "0 passed, 1 failed"; exit 1; }

passed=0 failed=0
log=build/test-logs
mkdir -p "$log"

# lit reports its own counts; the suites below count as one test each.
echo "== lit"
/usr/lib/llvm-22/bin/lit -sv --show-unsupported build/test 2>&1 | tee "$log/lit.txt" | grep -E '^(FAIL|XPASS|UNRESOLVED|TIMEOUT):|Total|Passed|Failed' || true
count() { grep -E "^ *$1 *:" "$log/lit.txt" | grep -oE '[0-9]+' | head -1; }
lit_pass=$(count 'Passed'); lit_fail=0
for kind in Failed 'Unresolved' 'Timed Out' 'Unexpectedly Passed'; do
  n=$(count "$kind"); lit_fail=$((lit_fail + ${n:-0}))
done
# Unsupported lit tests (e.g. REQUIRES: cuda without a GPU) are skips.
skipped=$(count 'Unsupported'); skipped=${skipped:-0}
passed=$((passed + ${lit_pass:-0})) failed=$((failed + lit_fail))
[ -n "$lit_pass" ] || { echo "lit did not run"; failed=$((failed + 1)); }

# gtest unit tests (runtime, file formats), registered with CTest.
echo "== ctest"
ctest --test-dir build --output-on-failure >"$log/ctest.txt" 2>&1
summary=$(grep -E 'tests passed, [0-9]+ tests failed out of [0-9]+' "$log/ctest.txt" || true)
ctest_skip='^\s*[0-9]+ - .*\(Skipped\)$' # a line of CTest's "did not run" list
if [ -n "$summary" ]; then
  total=$(sed -E 's/.* out of ([0-9]+).*/\1/' <<<"$summary")
  bad=$(sed -E 's/.*passed, ([0-9]+) tests failed.*/\1/' <<<"$summary")
  passed=$((passed + total - bad)) failed=$((failed + bad))
  # CTest leaves a skipped test (exit 77, e.g. CUDA without a GPU) out of
  # "out of N"; count it here.
  ctest_skipped=$(grep -cE "$ctest_skip" "$log/ctest.txt" || true)
  skipped=$((skipped + ctest_skipped))
  echo "$summary"; grep -E '\*\*\*Failed|Not Run' "$log/ctest.txt" || true
elif ! grep -q 'No tests were found' "$log/ctest.txt"; then
  echo "ctest did not run"; cat "$log/ctest.txt"; failed=$((failed + 1))
fi

suite() {
  local name=$1; shift
  echo "== $name"
  if "$@" >"$log/$name.txt" 2>&1; then
    passed=$((passed + 1)); echo "PASS: $name"
  else
    failed=$((failed + 1)); echo "FAIL: $name (log: $log/$name.txt)"; tail -20 "$log/$name.txt"
  fi
}
suite ort-reference tools/ort-reference/selftest.sh
suite examples bash -c '/usr/bin/python3 examples/models/generate.py --out build/models &&
  /usr/bin/python3 examples/models/check_generated.py build/models'

# Suites that count their own cases and print a table.
counted() {
  local name=$1; shift
  echo "== $name"
  "$@" 2>&1 | tee "$log/$name.txt" | grep -vE '^\$ '
  local line
  line=$(grep -oE '[0-9]+ passed, [0-9]+ failed' "$log/$name.txt" | tail -1)
  if [ -z "$line" ]; then
    echo "FAIL: $name printed no result"; failed=$((failed + 1)); return
  fi
  passed=$((passed + ${line%% passed*}))
  line=${line#*passed, }; failed=$((failed + ${line%% failed*}))
  # Known gaps a suite runs but does not count as passed.
  local skips
  skips=$(grep -oE '[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped' "$log/$name.txt" | tail -1)
  skips=${skips##*failed, }
  [ -z "$skips" ] || skipped=$((skipped + ${skips%% skipped}))
}
counted differential /usr/bin/python3 test/e2e/differential.py --tools build/bin \
  --generated build/models --work build/e2e --tp 1 2 4 --sp --external
counted differential-bf16 /usr/bin/python3 test/e2e/differential.py --tools build/bin \
  --generated build/models --work build/e2e --tp 1 2 --sp --dtype bf16
# MLP widths (75) that tp does not divide: zero-padded to 76; heads (6, and
# grouped 6/3) that tp does not fit: zero heads up to 8 (8/4); each also
# saved as external data (the fused QKV's zero heads described per block).
/usr/bin/python3 examples/models/generate.py --out build/models-odd \
  --only gpt2_ffn75 llama_ffn75 gpt2_h6 llama_h6kv3 >/dev/null
counted differential-odd-ffn /usr/bin/python3 test/e2e/differential.py --tools build/bin \
  --generated build/models-odd --work build/e2e/odd-ffn --tp 1 2 4 --sp --external \
  --only gpt2_ffn75 llama_ffn75 gpt2_h6 llama_h6kv3
counted overlap /usr/bin/python3 test/e2e/overlap.py --tools build/bin \
  --generated build/models --work build/e2e/overlap
counted contrib /usr/bin/python3 test/e2e/contrib.py --tools build/bin \
  --work build/e2e-contrib --tp 1 2
counted moe /usr/bin/python3 test/e2e/moe.py --tools build/bin \
  --generated build/models --work build/e2e-moe
counted matrix /usr/bin/python3 test/e2e/matrix.py --tools build/bin --work build/e2e/matrix \
  --jobs 2
counted generate /usr/bin/python3 test/e2e/generate.py --tools build/bin \
  --work build/e2e/generate
counted conformance /usr/bin/python3 test/e2e/conformance.py --tools build/bin \
  --work build/conformance
counted data-parallel /usr/bin/python3 test/e2e/data_parallel.py --tools build/bin \
  --generated build/models --work build/e2e/data-parallel
# Mixed-precision checkpoints (bf16/f16 matrices Cast to f32): split in
# their stored dtype, matching onnxruntime in f32.
/usr/bin/python3 examples/models/generate.py --out build/models-ckpt \
  --only gpt2_bf16ckpt llama_bf16ckpt llama_f16ckpt >/dev/null
counted differential-checkpoint /usr/bin/python3 test/e2e/differential.py --tools build/bin \
  --generated build/models-ckpt --work build/e2e/ckpt --tp 1 2 4 --external \
  --only gpt2_bf16ckpt llama_bf16ckpt llama_f16ckpt
# Deeper models (4-6 layers) for 4 stages and uneven layouts; models that
# fix their batch of 4 in the graph.
/usr/bin/python3 examples/models/generate.py --out build/models-deep \
  --only gpt2_l6 llama_l5 bert_l4 neox_l4 gpt2_fixed llama_fixed >/dev/null
counted pipeline /usr/bin/python3 test/e2e/pipeline.py --tools build/bin \
  --generated build/models --deep build/models-deep --work build/e2e/pipeline
# A fixed seed and run count from a clean corpus: the inputs fuzzed before
# landing, replayed (bench/fuzz.sh without them explores anew).
rm -rf build-fuzz/fuzz
counted fuzz env PARC_FUZZ_SEED=1 PARC_FUZZ_RUNS=15000 bench/fuzz.sh 300

if [ "$skipped" -gt 0 ]; then
  grep -E '^UNSUPPORTED:' "$log/lit.txt" || true
  grep -E "$ctest_skip" "$log/ctest.txt" || true
  echo "$passed passed, $failed failed, $skipped skipped"
else
  echo "$passed passed, $failed failed"
fi
[ "$failed" -eq 0 ]
