#!/bin/sh
# ctest's cpu<->cuda kernel check (runtime/CMakeLists.txt):
#
#   cuda_vs_cpu.sh PYTHON CPU_OUT CUDA_BIN OUT   (CUDA_BIN empty: no cuda build)
#
# Runs every kernel case on the cuda backend and holds the outputs to the
# cpu backend's in CPU_OUT (written by the parc-rt-kernel-check-cpu test)
# with compare.py. Exits 77, which ctest reports as skipped (not passed),
# when this build has no cuda runtime or no GPU is visible.
set -u
python=$1 cpu_out=$2 cuda_bin=$3 out=$4
if [ -z "$cuda_bin" ]; then
  echo "skipped: this build has no cuda runtime (see the 'parc:' line of the configure output)"
  exit 77
fi
if ! nvidia-smi -L 2>/dev/null | grep -q GPU; then
  echo "skipped: no GPU visible (nvidia-smi -L)"
  exit 77
fi
if [ ! -f "$cpu_out/status.txt" ]; then
  echo "no cpu outputs in $cpu_out: run the parc-rt-kernel-check-cpu test first"
  exit 1
fi
rm -rf "$out"
# Synchronising after every kernel pins an asynchronous fault on its case.
PARC_RT_CUDA_SYNC=1 "$cuda_bin" "$out" || exit 1
exec "$python" "$(dirname "$0")/compare.py" "$cpu_out" "$out"
