#!/usr/bin/env bash
# The main job on a bundled example, as far as parc goes today: generate a
# small GPT-2 in torch.onnx's unfused layout, import it, fold its shape
# subgraphs and fuse its blocks, and compare what was found with the counts
# the generator derived from the model's configuration.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
scripts/build.sh

out=build/demo
mkdir -p "$out"
model=${1:-gpt2}
/usr/bin/python3 examples/models/generate.py --out "$out" --only "$model" >/dev/null
shapes=$(/usr/bin/python3 - "$out/$model.json" <<'PY'
import json, sys
cfg = json.load(open(sys.argv[1]))
b, s = cfg["config"]["batch"], cfg["config"]["seq"]
print(" ".join(f"--input-shape {name}={b}x{s}" for name in cfg["inputs"]))
PY
)
echo "demo: importing $out/$model.onnx ($shapes)"
# shellcheck disable=SC2086
build/bin/parc-translate --import-onnx "$out/$model.onnx" $shapes -o "$out/$model.nn.mlir"
build/bin/parc-opt --parc-nn-optimize "$out/$model.nn.mlir" -o "$out/$model.fused.mlir"

/usr/bin/python3 - "$out/$model.json" "$out/$model.nn.mlir" "$out/$model.fused.mlir" <<'PY'
import json, re, sys
expected = json.load(open(sys.argv[1]))["expected"]
def ops(path):
    return re.findall(r"= (nn\.[a-z_]+)", open(path).read())
before, after = ops(sys.argv[2]), ops(sys.argv[3])
print(f"demo: {len(before)} nn ops after import, {len(after)} after folding and fusion")
ok = True
for kind, want in expected.items():
    if not want:
        continue
    got = after.count("nn." + kind)
    ok &= got == want
    print(f"  {kind:<11} expected {want:>3}  found {got:>3}  {'ok' if got == want else 'MISMATCH'}")
print("demo: IR written to", sys.argv[3])
sys.exit(0 if ok else 1)
PY
