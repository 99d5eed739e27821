#!/usr/bin/env bash
# Self-test of the onnxruntime reference runner (ort-run.mjs).
#
# Builds tiny ONNX models with Debian's python3-onnx into a temp dir, runs them
# through ort-run.mjs and checks the outputs against numpy:
#   1. MatMul + Add + Softmax (opset 17) vs a float64 numpy computation;
#      one input given as .npy, one as an ONNX TensorProto .pb; output name with
#      characters that must be escaped.
#   2. Identity round trip of every supported dtype (float32, float64, float16,
#      int64, int32, int8, uint8, bool) incl. a 0-d and an empty tensor, inputs
#      written as .npy format 1.0/2.0/3.0 and as .pb: outputs must be bit-exact.
#   3. Error cases exit non-zero with the expected message; --repeat prints the
#      latency line.
# Prints 'ort-reference selftest: ok' and exits 0 on success, non-zero otherwise.
#
# Needs: node >= 20, /usr/bin/python3 with onnx and numpy
#   (apt-get install -y python3-onnx python3-numpy); override with PYTHON=...
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
py="${PYTHON:-/usr/bin/python3}"
run="$here/ort-run.mjs"

fail() { echo "ort-reference selftest: FAIL: $*" >&2; exit 1; }

"$py" -c 'import onnx, numpy' 2>/dev/null ||
  fail "$py lacks onnx/numpy (apt-get install -y python3-onnx python3-numpy)"
"$here/install.sh" >/dev/null

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# ---- generate models, inputs and numpy references --------------------------------
"$py" - "$tmp" <<'EOF'
import sys, numpy as np, onnx
from onnx import helper, numpy_helper, TensorProto as TP
from numpy.lib import format as npf

d = sys.argv[1]
rng = np.random.default_rng(1234)

# 1. y = Softmax(x @ W + b, axis=-1)
x = rng.standard_normal((2, 3, 4)).astype(np.float32)
w = rng.standard_normal((4, 5)).astype(np.float32)
b = rng.standard_normal((5,)).astype(np.float32)
g = helper.make_graph(
    [helper.make_node("MatMul", ["x", "w"], ["mm"]),
     helper.make_node("Add", ["mm", "b"], ["logits"]),
     helper.make_node("Softmax", ["logits"], ["probs/out:0"], axis=-1)],
    "mlp",
    [helper.make_tensor_value_info("x", TP.FLOAT, ["batch", 3, 4]),
     helper.make_tensor_value_info("w", TP.FLOAT, [4, 5])],
    [helper.make_tensor_value_info("probs/out:0", TP.FLOAT, ["batch", 3, 5]),
     helper.make_tensor_value_info("logits", TP.FLOAT, ["batch", 3, 5])],
    [numpy_helper.from_array(b, "b")])
m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)])
onnx.checker.check_model(m)
onnx.save(m, f"{d}/mlp.onnx")
np.save(f"{d}/x.npy", x)
with open(f"{d}/w.pb", "wb") as f:
    f.write(numpy_helper.from_array(w, "w").SerializeToString())
logits = x.astype(np.float64) @ w.astype(np.float64) + b
e = np.exp(logits - logits.max(-1, keepdims=True))
np.save(f"{d}/ref_probs.npy", e / e.sum(-1, keepdims=True))
np.save(f"{d}/ref_logits.npy", logits)

# 2. identity round trip of every dtype
cases = [  # name, numpy dtype, ONNX type, shape, how to write
    ("f32", np.float32, TP.FLOAT, (2, 3), "npy1"),
    ("f64", np.float64, TP.DOUBLE, (3,), "npy2"),
    ("f16", np.float16, TP.FLOAT16, (2, 2), "npy3"),
    ("i64", np.int64, TP.INT64, (), "npy1"),
    ("i64pb", np.int64, TP.INT64, (4,), "pb_typed"),
    ("i32", np.int32, TP.INT32, (5,), "pb_typed"),
    ("i8", np.int8, TP.INT8, (0, 3), "npy1"),
    ("i8pb", np.int8, TP.INT8, (6,), "pb_typed"),
    ("u8", np.uint8, TP.UINT8, (2, 2, 2), "pb_raw"),
    ("b", np.bool_, TP.BOOL, (7,), "npy1"),
    ("bpb", np.bool_, TP.BOOL, (3,), "pb_typed"),
]
nodes, ins, outs = [], [], []
for name, dt, tp, shape, how in cases:
    if dt == np.bool_:
        a = rng.integers(0, 2, shape).astype(np.bool_)
    elif np.issubdtype(dt, np.integer):
        info = np.iinfo(dt)
        a = rng.integers(info.min, info.max, shape, dtype=dt, endpoint=True)
    else:
        a = (rng.standard_normal(shape) * 100).astype(dt)
    a = np.asarray(a, dtype=dt).reshape(shape)
    nodes.append(helper.make_node("Identity", [name], [f"out_{name}"]))
    ins.append(helper.make_tensor_value_info(name, tp, list(shape)))
    outs.append(helper.make_tensor_value_info(f"out_{name}", tp, list(shape)))
    np.save(f"{d}/ref_{name}.npy", a)
    if how.startswith("npy"):
        with open(f"{d}/in_{name}.npy", "wb") as f:
            npf.write_array(f, a, version=(int(how[3]), 0))
    else:
        if how == "pb_raw":
            t = numpy_helper.from_array(a, name)
        else:  # typed repeated fields (int32_data / int64_data), not raw_data
            vals = a.astype(np.int64).ravel().tolist()
            t = helper.make_tensor(name, tp, list(shape), vals, raw=False)
            assert not t.raw_data
        with open(f"{d}/in_{name}.pb", "wb") as f:
            f.write(t.SerializeToString())
m = helper.make_model(helper.make_graph(nodes, "ids", ins, outs),
                      opset_imports=[helper.make_opsetid("", 17)])
onnx.checker.check_model(m)
onnx.save(m, f"{d}/ids.onnx")
with open(f"{d}/id_args", "w") as f:
    for name, _, _, _, how in cases:
        ext = "npy" if how.startswith("npy") else "pb"
        f.write(f"--input\n{name}={d}/in_{name}.{ext}\n")
EOF

# ---- run ---------------------------------------------------------------------------
node "$run" "$tmp/mlp.onnx" --input "x=$tmp/x.npy" --input "w=$tmp/w.pb" \
  --output-dir "$tmp/out_mlp" >/dev/null || fail "ort-run on mlp.onnx failed"
mapfile -t id_args <"$tmp/id_args"
node "$run" "$tmp/ids.onnx" "${id_args[@]}" --output-dir "$tmp/out_ids" --threads 2 --opt disabled \
  >/dev/null || fail "ort-run on ids.onnx failed"

"$py" - "$tmp" <<'EOF' || fail "output mismatch"
import sys, glob, os, numpy as np
d = sys.argv[1]
bad = False
# the '/' and ':' of 'probs/out:0' are escaped as parc does (%2F, %3A)
for name, tol in (("probs", 1e-6), ("logits", 1e-5)):
    out = f"{d}/out_mlp/probs%2Fout%3A0.npy" if name == "probs" else f"{d}/out_mlp/logits.npy"
    got = np.load(out)
    ref = np.load(f"{d}/ref_{name}.npy")
    err = float(np.abs(got.astype(np.float64) - ref).max())
    ok = got.dtype == np.float32 and got.shape == ref.shape and err <= tol
    print(f"mlp {name}: shape {got.shape} max abs err {err:.3g} (tol {tol:g}) {'ok' if ok else 'MISMATCH'}")
    bad |= not ok
for ref_path in sorted(glob.glob(f"{d}/ref_*.npy")):
    name = os.path.basename(ref_path)[4:-4]
    if name in ("probs", "logits"):
        continue
    out = f"{d}/out_ids/out_{name}.npy"
    with open(out, "rb") as f:
        version = f.read(8)[6:8]
    ref, got = np.load(ref_path), np.load(out)
    ok = (version == b"\x01\x00" and got.dtype == ref.dtype and got.shape == ref.shape
          and got.tobytes() == ref.tobytes())
    if not ok:
        print(f"identity {name}: MISMATCH {ref.dtype}{ref.shape} vs {got.dtype}{got.shape} v{version!r}")
    bad |= not ok
if not bad:
    print(f"identity round trip: {len(glob.glob(f'{d}/out_ids/*.npy'))} outputs bit-exact")
sys.exit(1 if bad else 0)
EOF

# ---- error cases -------------------------------------------------------------------
expect_fail() { # expected-substring, args...
  local want="$1"; shift
  local rc=0
  node "$run" "$@" >"$tmp/err.txt" 2>&1 || rc=$?
  [ "$rc" != 0 ] || fail "expected failure for: $*"
  grep -qF -- "$want" "$tmp/err.txt" || fail "expected '$want' in error for: $* (got: $(cat "$tmp/err.txt"))"
}
"$py" -c "import numpy as np; np.save('$tmp/x64.npy', np.zeros((2,3,4)))"
expect_fail "model file not found" "$tmp/none.onnx" --input "x=$tmp/x.npy" --output-dir "$tmp/o"
expect_fail "input file not found" "$tmp/mlp.onnx" --input "x=$tmp/none.npy" --output-dir "$tmp/o"
expect_fail "bad --input spec" "$tmp/mlp.onnx" --input "x" --output-dir "$tmp/o"
expect_fail "model inputs: x (float32 [batch,3,4]), w (float32 [4,5])" \
  "$tmp/mlp.onnx" --input "y=$tmp/x.npy" --input "w=$tmp/w.pb" --output-dir "$tmp/o"
expect_fail "dtype mismatch for input 'x': model expects float32" \
  "$tmp/mlp.onnx" --input "x=$tmp/x64.npy" --input "w=$tmp/w.pb" --output-dir "$tmp/o"
expect_fail "no --input given for model input(s) w" "$tmp/mlp.onnx" --input "x=$tmp/x.npy" --output-dir "$tmp/o"
echo "error cases: ok"

# ---- timing ------------------------------------------------------------------------
node "$run" "$tmp/mlp.onnx" --input "x=$tmp/x.npy" --input "w=$tmp/w.pb" --repeat 5 --warmup 2 \
  >"$tmp/lat.txt" || fail "--repeat run failed"
grep -Eq '^ort latency ms: min=[0-9.]+ median=[0-9.]+' "$tmp/lat.txt" ||
  fail "no latency line (got: $(cat "$tmp/lat.txt"))"
cat "$tmp/lat.txt"

echo "ort-reference selftest: ok"
