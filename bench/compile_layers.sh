#!/usr/bin/env bash
# Compile time against depth (issue 16, "compile time that scales"): the
# same Llama-style decoder (hidden 256, 8 heads, ffn 512, vocab 512;
# examples/models/scale.py --only decoder --layers N) at 10, 20, 40 and 80
# layers, each compiled at 1 rank and at --tp 2 --pp 2. Per compile it
# prints the wall seconds, the seconds of code generation plus g++ (the
# driver's --mlir-timing "emitc*" and "build *" scopes), the bytes of
# generated C++ (src/*.cpp) and each figure's ratio to the 10-layer one:
# code that grows with depth gives 8 at 80 layers, rolled layers
# (rt-reroll) well under. Then the 80-layer model end to end at --tp 8
# --pp 2 (goal: under 10 s on this 2-core machine).
# Usage: bench/compile_layers.sh [LAYERS...]   (default: 10 20 40 80)
# LAYERS_DIR (default /tmp/parc-layers) holds the models and outputs.
set -euo pipefail
cd "$(dirname "$0")/.."
depths=("$@")
[ ${#depths[@]} -gt 0 ] || depths=(10 20 40 80)
dir=${LAYERS_DIR:-/tmp/parc-layers}
mkdir -p "$dir"
scripts/build.sh >/dev/null

# One compile: "wall codegen_and_gxx source_bytes".
compile() {
  local model=$1 out=$2
  shift 2
  rm -rf "$out"
  local start end
  start=$(date +%s.%N)
  build/bin/parc compile "$model" --input-shape input_ids=1x16 -o "$out" \
    --quiet --mlir-timing "$@" 2>"$out.timing"
  end=$(date +%s.%N)
  /usr/bin/python3 - "$out" "$start" "$end" <<'PY'
import glob, os, re, sys
out, start, end = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
# --mlir-timing rows: "  wall (pct)  name"; top-level scopes only are
# summed: "emitc", "emitc-<program>" and "build rank programs" (every
# program's g++, run --jobs at a time).
gen = 0.0
for line in open(out + ".timing"):
    m = re.match(r"\s*([0-9.]+) \(\s*[0-9.]+%\)\s{2}(emitc\S*|build .+?)\s*$", line)
    if m:
        gen += float(m.group(1))
size = sum(os.path.getsize(p) for p in glob.glob(os.path.join(out, "src", "*.cpp")))
print(f"{end - start:.2f} {gen:.2f} {size}")
PY
}

rows=()
for n in "${depths[@]}"; do
  model=$dir/decoder_l$n.onnx
  [ -f "$model" ] ||
    /usr/bin/python3 examples/models/scale.py --out "$dir" --only decoder \
      --layers "$n" >/dev/null
  for flags in "" "--tp 2 --pp 2"; do
    # shellcheck disable=SC2086
    rows+=("$n|${flags:-1 rank}|$(compile "$model" "$dir/out-l$n-${flags//[ -]/}" $flags)")
  done
done

/usr/bin/python3 - "${rows[@]}" <<'PY'
import sys
rows = [r.split("|") for r in sys.argv[1:]]
base = {}
print(f"{'layers':>6} {'config':<13} {'wall s':>7} {'x10':>5} {'gen+g++ s':>9} {'x10':>5}"
      f" {'C++ bytes':>10} {'x10':>5}")
for n, cfg, figures in rows:
    wall, gen, size = (float(v) for v in figures.split())
    b = base.setdefault(cfg, (wall, gen, size))
    print(f"{n:>6} {cfg:<13} {wall:>7.2f} {wall / b[0]:>5.2f} {gen:>9.2f}"
          f" {gen / max(b[1], 1e-9):>5.2f} {int(size):>10} {size / b[2]:>5.2f}")
PY

deepest=${depths[-1]}
figures=$(compile "$dir/decoder_l$deepest.onnx" "$dir/out-l$deepest-tp8pp2" --tp 8 --pp 2)
echo "end to end: $deepest layers at --tp 8 --pp 2: $(echo "$figures" | cut -d' ' -f1) s" \
  "(code generation + g++ $(echo "$figures" | cut -d' ' -f2) s, C++ $(echo "$figures" | cut -d' ' -f3) bytes; goal < 10 s)"
