#!/usr/bin/env bash
# One-shot check of the cuda backend on a machine with an NVIDIA GPU:
#
#   1. build     — configure + build with the CUDA toolkit (skip: --no-build)
#   2. lit       — every lit test, including REQUIRES: cuda-toolkit / cuda
#   3. kernels   — every runtime kernel on both backends, outputs compared
#                  (runtime/check: f32 1e-4, f16 1e-2, bf16 2e-2 relative);
#                  again with NCCL forced on the one-rank communicator
#   4. models    — test/e2e/cuda_vs_cpu.py: each model on cuda (f32, bf16)
#                  against the cpu backend, with forward latencies
#   5. profile   — per-node times of the generated llama on the GPU
#                  (PARC_RT_PROFILE=1), the per-layer view
#   6. bench     — GEMM TFLOP/s through parc_rt_gemm (cuBLAS / cuBLASLt)
#                  and GB/s of the memory-bound kernels: how far the layers
#                  of step 5 are from the GEMM and bandwidth they could reach
#
# Steps 5 and 6 report, they do not fail. Everything is logged under
# $BUILD/gpu-check/. Ends with `N passed, N failed`; exit status 1 on any
# failure, 2 when no GPU is visible (nothing was checked then).
#
#   scripts/gpu-check.sh [--no-build] [--quick]
#     BUILD=build-cuda (default) selects the build directory;
#     --quick checks f32 models only and skips the bench.
set -uo pipefail
cd "$(dirname "$0")/.."

build=${BUILD:-build-cuda}
do_build=1 quick=0
for arg in "$@"; do
  case $arg in
    --no-build) do_build=0 ;;
    --quick) quick=1 ;;
    *) echo "usage: $0 [--no-build] [--quick]"; exit 2 ;;
  esac
done

if ! nvidia-smi -L 2>/dev/null | grep -q GPU; then
  echo "gpu-check: no GPU visible (nvidia-smi -L): nothing was checked"
  exit 2
fi
nvidia-smi -L

export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
out=$build/gpu-check
passed=0 failed=0
pass() { passed=$((passed + 1)); echo "gpu-check: $1: PASS (at ${SECONDS}s)"; }
failure() { failed=$((failed + 1)); echo "gpu-check: $1: FAIL${2:+ ($2)} (at ${SECONDS}s)"; }

echo "== build"
if [ $do_build = 1 ]; then
  cmake -G Ninja -S . -B "$build" -DCMAKE_BUILD_TYPE=Release \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit >"$build.configure.log" 2>&1 \
    || { cat "$build.configure.log"; echo "0 passed, 1 failed"; exit 1; }
  grep "parc:" "$build.configure.log"
  ninja -C "$build" -j"$(nproc)" --quiet \
    || { echo "gpu-check: build failed"; echo "0 passed, 1 failed"; exit 1; }
  echo "gpu-check: built in ${SECONDS}s"
fi
mkdir -p "$out"
paths=$build/lib/Target/Cpp/ToolchainPaths.inc
if ! grep -qE 'PARC_RUNTIME_CUDA_LIBRARY "[^"]+"' "$paths" 2>/dev/null; then
  echo "gpu-check: $build has no cuda runtime (see the 'parc:' line of the configure output)"
  echo "0 passed, 1 failed"
  exit 1
fi

echo "== lit"
if /usr/lib/llvm-22/bin/lit -sv "$build/test" >"$out/lit.txt" 2>&1; then
  pass "lit ($(grep -E 'Passed *:' "$out/lit.txt" | grep -oE '[0-9]+' | head -1) tests)"
else
  grep -E '^(FAIL|UNRESOLVED|TIMEOUT):' "$out/lit.txt"
  failure lit "see $out/lit.txt"
fi

echo "== kernels"
rm -rf "$out/kernels-cpu" "$out/kernels-cuda"
"$build/bin/parc-rt-kernel-check" "$out/kernels-cpu" >"$out/kernels-cpu.txt" 2>&1 \
  || failure "kernel check (cpu)" "see $out/kernels-cpu.txt"
# Synchronising after every kernel pins an asynchronous fault on its case.
PARC_RT_CUDA_SYNC=1 "$build/bin/parc-rt-kernel-check-cuda" "$out/kernels-cuda" \
  >"$out/kernels-cuda.txt" 2>&1 || failure "kernel check (cuda)" "see $out/kernels-cuda.txt"
if [ -f "$out/kernels-cpu/status.txt" ] && [ -f "$out/kernels-cuda/status.txt" ]; then
  /usr/bin/python3 runtime/check/compare.py "$out/kernels-cpu" "$out/kernels-cuda" \
    >"$out/kernels-compare.txt" 2>&1
  rc=$?
  grep -E 'FAIL|unchecked' "$out/kernels-compare.txt" | head -40
  tail -1 "$out/kernels-compare.txt"
  [ $rc = 0 ] && pass "kernels" || failure "kernels" "see $out/kernels-compare.txt"
fi
# One-rank communicators skip NCCL; force it once so NCCL runs here too.
rm -rf "$out/kernels-nccl"
PARC_RT_NCCL_SINGLE=1 "$build/bin/parc-rt-kernel-check-cuda" "$out/kernels-nccl" \
  >"$out/kernels-nccl.txt" 2>&1 || failure "kernel check (cuda, NCCL)" "see $out/kernels-nccl.txt"
if [ -f "$out/kernels-cpu/status.txt" ] && [ -f "$out/kernels-nccl/status.txt" ]; then
  /usr/bin/python3 runtime/check/compare.py "$out/kernels-cpu" "$out/kernels-nccl" \
    >"$out/kernels-nccl-compare.txt" 2>&1 \
    && pass "kernels with NCCL" \
    || failure "kernels with NCCL" "see $out/kernels-nccl-compare.txt"
fi

echo "== models"
dtypes=f32,bf16
[ $quick = 1 ] && dtypes=f32
/usr/bin/python3 test/e2e/cuda_vs_cpu.py --tools "$build/bin" --work "$out/models" \
  --dtypes "$dtypes" --bench 2>&1 | tee "$out/models.txt"
[ "${PIPESTATUS[0]}" = 0 ] && pass "models" || failure "models" "see $out/models.txt"

echo "== profile (llama, cuda, f32)"
llama=$out/models/models/llama.onnx
if [ -f "$llama" ]; then
  /usr/bin/python3 - "$out" <<'PY'
import sys, numpy as np
np.save(sys.argv[1] + "/llama_ids.npy",
        np.random.default_rng(0).integers(0, 100, (2, 8)).astype(np.int64))
PY
  "$build/bin/parc" compile "$llama" --input-shape input_ids=2x8 --target cuda \
    -o "$out/llama-cuda" --quiet \
    && PARC_RT_PROFILE=1 "$build/bin/parc-run" "$out/llama-cuda" \
      --input=input_ids="$out/llama_ids.npy" --repeat 20 --warmup 3 2>&1 \
      | tee "$out/profile.txt" | head -30
fi

if [ $quick = 0 ]; then
  echo "== bench (cuda)"
  "$build/bin/parc-rt-kernel-check-cuda" --bench 2>&1 | tee "$out/bench.txt"
fi

echo "gpu-check: logs in $out (${SECONDS}s in all)"
echo "$passed passed, $failed failed"
[ $failed = 0 ]
