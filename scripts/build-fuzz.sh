#!/usr/bin/env bash
# Configures (once) and builds the importer's libFuzzer target into
# build-fuzz/ with Debian's clang-22, ASan and UBSan. Builds only that target
# and the libraries it links (the nn dialect, its passes and the importer).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -f build-fuzz/build.ninja ]; then
  launcher=()
  command -v ccache >/dev/null &&
    launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  cmake -G Ninja -S . -B build-fuzz -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
    -DLLVM_EXTERNAL_LIT=/usr/lib/llvm-22/bin/lit \
    -DPARC_ENABLE_SANITIZERS=ON -DPARC_BUILD_FUZZERS=ON "${launcher[@]}" >/dev/null
fi
ninja -C build-fuzz -j"$(nproc)" --quiet parc-import-fuzzer
