#!/usr/bin/env bash
# Configures (once) and builds parc into build/ with Ninja.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -f build/build.ninja ]; then
  cmake -G Ninja -S . -B build -DCMAKE_BUILD_TYPE=Release \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit >/dev/null
fi
echo "build: compiling parc (first build takes a few minutes on 2 cores)"
ninja -C build -j"$(nproc)" --quiet
