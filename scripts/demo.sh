#!/usr/bin/env bash
# The main job on a bundled example: generate a small GPT-2 in torch.onnx's
# unfused layout, compile it with parc for the cpu target with tensor
# parallelism over 2 ranks inside each of 2 pipeline stages (4 ranks, 2
# micro-batches, collectives overlapped with compute), run the ranks under
# MPI, and compare the result with onnxruntime on the same inputs.
# Usage: scripts/demo.sh [MODEL] [TP] [PP]
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
scripts/build.sh

model=${1:-gpt2}
tp=${2:-2}
pp=${3:-2}
mb=$([ "$pp" -gt 1 ] && echo 2 || echo 1)
demo=build/demo
rm -rf "$demo/$model-res" "$demo/$model-ort"
mkdir -p "$demo"
/usr/bin/python3 examples/models/generate.py --out "$demo" --only "$model" >/dev/null

# Input shapes from the generator's config, and fixed-seed token ids.
read -r -a shapes < <(/usr/bin/python3 - "$demo/$model.json" "$demo" <<'PY'
import json, sys
import numpy as np
cfg = json.load(open(sys.argv[1]))
c = cfg["config"]
rng = np.random.default_rng(0)
flags = []
for name in cfg["inputs"]:
    high = 2 if "mask" in name else c["type_vocab"] if "token_type" in name else c["vocab"]
    np.save(f"{sys.argv[2]}/{name}.npy", rng.integers(0, high, (c["batch"], c["seq"])))
    flags += ["--input-shape", f"{name}={c['batch']}x{c['seq']}"]
print(" ".join(flags))
PY
)
inputs=()
for ((i = 1; i < ${#shapes[@]}; i += 2)); do
  name=${shapes[i]%%=*}
  inputs+=(--input "$name=$demo/$name.npy")
done

echo "demo: parc compile $demo/$model.onnx ${shapes[*]} --tp $tp --pp $pp --micro-batches $mb -o $demo/$model-out"
rm -rf "$demo/$model-ir"
build/bin/parc compile "$demo/$model.onnx" "${shapes[@]}" --tp "$tp" --pp "$pp" \
  --micro-batches "$mb" -o "$demo/$model-out" --dump-ir "$demo/$model-ir"
echo "demo: parc-run $demo/$model-out"
build/bin/parc-run "$demo/$model-out" "${inputs[@]}" --output-dir "$demo/$model-res" \
  --repeat 20 --warmup 3
node tools/ort-reference/ort-run.mjs "$demo/$model.onnx" "${inputs[@]}" \
  --output-dir "$demo/$model-ort" >/dev/null

/usr/bin/python3 - "$demo" "$model" <<'PY'
import json, os, re, sys
import numpy as np
demo, model = sys.argv[1:]
expected = json.load(open(f"{demo}/{model}.json"))["expected"]
fused = open(sorted(f for f in (os.path.join(f"{demo}/{model}-ir", n)
             for n in os.listdir(f"{demo}/{model}-ir")) if "nn-optimized" in f)[0]).read()
manifest = json.load(open(f"{demo}/{model}-out/manifest.json"))
print(f"\n== summary: {model}")
print("blocks recognised (expected from the model's config):")
for kind, want in expected.items():
    if want:
        got = len(re.findall(rf"= nn\.{kind}\b", fused))
        print(f"  {kind:<11} {got:>3} / {want:<3} {'ok' if got == want else 'not fused'}")
progs = manifest["programs"]
print(f"ranks: {manifest['world_size']} (mesh {manifest['mesh']['axes']} = "
      f"{manifest['mesh']['shape']}), {len(progs)} distinct program(s): " +
      ", ".join(f"{p['name']} (arena {p['arena_bytes']} B, unplanned {p['unplanned_bytes']} B)"
                for p in progs))
if "pipeline" in manifest:
    pl = manifest["pipeline"]
    print(f"pipeline: {pl['stages']} stages of {pl['layers_per_stage']} layers, "
          f"{pl['micro_batches']} micro-batches ({pl['schedule']}), analytic bubble "
          f"{pl['analytic_bubble']:.2f}")
print(f"weights per rank: {[r['weight_file_bytes'] for r in manifest['ranks']]} B; "
      f"sent per rank in collectives per forward: {manifest['comm_bytes_per_forward']} B")
worst = 0.0
for out in manifest["outputs"]:
    got = np.load(f"{demo}/{model}-res/{out['file']}")
    want = np.load(f"{demo}/{model}-ort/{out['file']}")
    err = float(np.abs(got - want).max() / np.abs(want).max())
    worst = max(worst, err)
    print(f"output {out['name']} {list(got.shape)}: max |parc - onnxruntime| / max|onnxruntime| = {err:.2e}")
ok = worst <= 1e-4
print(f"result: {'PASS' if ok else 'FAIL'} (f32 tolerance 1e-4 relative); IR of every stage in {demo}/{model}-ir")
sys.exit(0 if ok else 1)
PY
