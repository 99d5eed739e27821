#!/usr/bin/env bash
# Installs what parc needs to build and test, idempotently: Debian packages
# (LLVM/MLIR 22, clang-22 with its sanitizer and libFuzzer runtimes for
# build-fuzz/, ONNX, protobuf, OpenBLAS, oneDNN, OpenMPI, GoogleTest, Ninja, CMake,
# python3-onnx for the example generator) and onnxruntime-node from npm (the
# reference for differential tests). Installs nothing that is already there.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(
  cmake ninja-build g++ git
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools clang-22 libclang-rt-22-dev
  libonnx-dev libprotobuf-dev protobuf-compiler libonnx-testdata
  libopenblas-dev libopenblas-openmp-dev libdnnl-dev ocl-icd-opencl-dev openmpi-bin libopenmpi-dev googletest libgtest-dev
  python3-onnx python3-numpy nodejs npm
)

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$p")
done
# Node and npm may come from outside Debian; only install them when absent.
if command -v node >/dev/null && command -v npm >/dev/null; then
  missing=("${missing[@]/nodejs/}")
  missing=("${missing[@]/npm/}")
fi
read -r -a missing <<<"${missing[*]:-}"

if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq \
    --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "setup: Debian packages present"
fi

tools/ort-reference/install.sh
