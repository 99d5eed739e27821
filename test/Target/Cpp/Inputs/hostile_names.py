"""Hostile names for hostile-names.test: a model whose node, graph input,
output and initializer names and doc strings hold bytes that end C++ string
literals and comments (CR, LF, `"`, `\\`, `*/`), trigraphs, printf formats,
non-UTF-8 bytes and the exploit itself (a backslash, a CR, then code).

  gen DIR          writes DIR/hostile.onnx (runs), DIR/nul.onnx (a NUL in a
                   node name), DIR/utf8.onnx (an initializer name that is
                   not UTF-8), the inputs and numpy's expected output
  source OUT       checks the generated C++ holds none of the hostile bytes
                   and that its string table decodes to every name
  run DIR PARC_RUN runs the program: numpy's output, no PWNED file, and a
                   bad index reported naming the Gather node byte-exact
  trace DIR PARC_RUN
                   runs it with --trace and --json: the rank's own trace
                   file and parc-run's are strict JSON in valid UTF-8, and
                   name each node as its bytes decode with U+FFFD for each
                   byte that is not UTF-8
"""
import glob
import json
import os
import re
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "Conversion", "RTToEmitC",
                                "Inputs"))
import decode_strings  # noqa: E402

EXPLOIT = b'\\\r"); system("touch PWNED"); //'
# The same at file scope, where the descriptor tables are: it completes the
# table, includes <cstdlib> and runs `touch PWNED` as a static initialiser
# (it did, with a parc that pasted names into literals).
STATIC_EXPLOIT = (b'\\\r", PARC_RT_F32, 2, parc_dims_0}, };\r#include <cstdlib>\r'
                  b"static const char c[] = {'t','o','u','c','h',' ','P','W','N',"
                  b"'E','D',0}; static int r = system(c); //")
# Non-UTF-8 bytes are patched into the serialized model: protobuf's Python
# strings are Unicode, ONNX's C++ reader takes any bytes. Input names hold
# no '=' (parc-run's --input=NAME=PATH).
NAMES = {
    "x": b'x"\r\n\\??/*/%s%n' + "\u2028".encode(),
    "idx": b"idx ??( \\\\ */ /* \"",
    "w": b"w%s%n%%d\"); abort(); //",
    "table": STATIC_EXPLOIT,
    "y": b"y \\\r\n\"*/ ??/" + "\u202e\ufeff".encode(),
    "matmul": EXPLOIT,
    # Control bytes, an overlong '/', a lone continuation byte and a cut
    # 3-byte sequence too: the trace names every node (trace subcommand).
    "gather": b"gather %s%n\r\n\"\\??/*/\xff\xfe\x01\x1b\x7f\xc0\xaf\x80 \xe2\x82",
    "add": b"add */ #include <cstdlib> // \\\n",
}
NUL_NAME = b"nul\x00node"
# Tensor names travel in JSON (the manifest, the weight files): UTF-8 only.
BAD_UTF8 = b"tab\xff\xfele \xc0\x80"


def placeholder(key, raw):
    # Same length as the raw name, ASCII, unique.
    tag = ("@" + key + "#").encode()
    return (tag + b"Q" * len(raw))[: len(raw)] if len(raw) >= len(tag) else None


def build(names, node_name_override=None):
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(7)
    w = rng.standard_normal((3, 4)).astype(np.float32)
    table = rng.standard_normal((5, 4)).astype(np.float32)
    # Placeholders stand in for the names protobuf will not take as text.
    text = {}
    for key, raw in names.items():
        try:
            raw.decode("utf-8")
            text[key] = raw.decode("utf-8")
        except UnicodeDecodeError:
            text[key] = placeholder(key, raw).decode()
    doc = names["add"].decode("utf-8") + EXPLOIT.decode()
    nodes = [
        helper.make_node("MatMul", [text["x"], text["w"]], ["t1"],
                         name=text["matmul"], doc_string=doc),
        helper.make_node("Gather", [text["table"], text["idx"]], ["t2"],
                         name=text["gather"], axis=0, doc_string=doc),
        helper.make_node("Add", ["t1", "t2"], [text["y"]], name=text["add"],
                         doc_string=doc),
    ]
    if node_name_override is not None:
        nodes[2].name = node_name_override
    graph = helper.make_graph(
        nodes, "g" + EXPLOIT.decode(),
        [helper.make_tensor_value_info(text["x"], TensorProto.FLOAT, [2, 3]),
         helper.make_tensor_value_info(text["idx"], TensorProto.INT64, [2])],
        [helper.make_tensor_value_info(text["y"], TensorProto.FLOAT, [2, 4])],
        [numpy_helper.from_array(w, text["w"]),
         numpy_helper.from_array(table, text["table"])],
        doc_string=doc)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)],
                              doc_string=doc, producer_name=EXPLOIT.decode())
    model.ir_version = 8
    onnx.checker.check_model(model)
    data = model.SerializeToString()
    for key, raw in names.items():
        if text[key].encode() != raw:
            assert data.count(text[key].encode()) >= 1, key
            data = data.replace(text[key].encode(), raw)
    return data, w, table


def gen(out):
    os.makedirs(out, exist_ok=True)
    data, w, table = build(NAMES)
    open(os.path.join(out, "hostile.onnx"), "wb").write(data)
    x = np.arange(6, dtype=np.float32).reshape(2, 3) / 4
    idx = np.array([4, 1], dtype=np.int64)
    np.save(os.path.join(out, "x.npy"), x)
    np.save(os.path.join(out, "idx.npy"), idx)
    np.save(os.path.join(out, "bad_idx.npy"), np.array([1, 9], dtype=np.int64))
    np.save(os.path.join(out, "expected.npy"), x @ w + table[idx])
    nul, _, _ = build(NAMES, node_name_override=NUL_NAME.decode())
    open(os.path.join(out, "nul.onnx"), "wb").write(nul)
    utf8, _, _ = build(dict(NAMES, table=BAD_UTF8))
    open(os.path.join(out, "utf8.onnx"), "wb").write(utf8)


def string_table(src):
    tables = list(decode_strings.TABLE.finditer(src))
    assert len(tables) == 1, "expected one parc_strings table"
    return decode_strings.table(tables[0]).split(b"\0")[:-1]


def source(out):
    src = open(os.path.join(out, "src", "main.cpp"), "rb").read()
    # Printable ASCII and LF only: no CR, no byte >= 0x80, no NUL.
    bad = sorted({b for b in src if not (0x20 <= b < 0x7F or b == 0x0A)})
    print("source bytes outside printable ASCII:", bad)
    for key, raw in NAMES.items():
        for piece in (raw, EXPLOIT, b"PWNED", b"system(", b"??/", b"%n", b"*/"):
            assert piece not in src, (key, piece)
    print("source holds no hostile byte sequence")
    entries = string_table(src)
    for key in ("x", "idx", "table", "y", "matmul", "gather"):
        assert NAMES[key] in entries, (key, entries)
        print("table holds", key, "byte-exact")


def run(out, parc_run):
    work = os.path.join(out, "cwd")
    os.makedirs(work, exist_ok=True)
    args = [os.path.abspath(parc_run), os.path.join(out, "out"),
            b"--input=" + NAMES["x"] + b"=" + os.path.join(out, "x.npy").encode()]
    good = args + [b"--input=" + NAMES["idx"] + b"=" +
                   os.path.join(out, "idx.npy").encode(),
                   "--output-dir", os.path.join(out, "result")]
    r = subprocess.run(good, cwd=work, capture_output=True)
    assert r.returncode == 0, r.stderr.decode("utf-8", "replace")
    files = glob.glob(os.path.join(out, "result", "*.npy"))
    assert len(files) == 1, files
    got, want = np.load(files[0]), np.load(os.path.join(out, "expected.npy"))
    print("output max abs error vs numpy:", float(np.abs(got - want).max()))
    assert np.allclose(got, want, rtol=1e-5, atol=1e-5)
    bad = args + [b"--input=" + NAMES["idx"] + b"=" +
                  os.path.join(out, "bad_idx.npy").encode(),
                  "--output-dir", os.path.join(out, "bad_result")]
    r = subprocess.run(bad, cwd=work, capture_output=True)
    print("bad index exit status nonzero:", r.returncode != 0)
    reported = b"node '" + NAMES["gather"] + b"': gather: index 9"
    assert reported in r.stderr, r.stderr
    print("the error names the Gather node byte-exact")
    pwned = [p for p in glob.glob(os.path.join(out, "**", "*PWNED*"),
                                  recursive=True)]
    pwned += [p for p in ("PWNED",) if os.path.exists(p)]
    print("PWNED files:", pwned)


def strict_json(path):
    # bytes.decode raises on invalid UTF-8; json.loads(strict=True) on raw
    # control characters inside strings.
    return json.loads(open(path, "rb").read().decode("utf-8"), strict=True)


def lenient(raw):
    # Each byte that is not UTF-8 decodes to its own lone surrogate under
    # surrogateescape: replace each with U+FFFD, as the runtime promises.
    text = raw.decode("utf-8", "surrogateescape")
    return "".join("\ufffd" if 0xDC80 <= ord(c) <= 0xDCFF else c for c in text)


def trace(out, parc_run):
    res = os.path.join(out, "traced")
    os.makedirs(res, exist_ok=True)
    args = [os.path.abspath(parc_run), os.path.join(out, "out"),
            b"--input=" + NAMES["x"] + b"=" + os.path.join(out, "x.npy").encode(),
            b"--input=" + NAMES["idx"] + b"=" + os.path.join(out, "idx.npy").encode(),
            "--output-dir", res, "--json", os.path.join(res, "run.json")]
    # The launch command with its PARC_RT_TRACE, run as is, leaves the
    # rank's own file (parc-run would merge and remove it).
    command = subprocess.run(args + ["--trace", os.path.join(res, "direct.json"),
                                     "--dry-run"], capture_output=True, check=True)
    subprocess.run(["sh", "-c", command.stdout], capture_output=True, check=True)
    r = subprocess.run(args + ["--trace", os.path.join(res, "merged.json")],
                       capture_output=True)
    print("parc-run --trace exit status:", r.returncode,
          r.stderr.decode("utf-8", "replace").strip().splitlines()[-1:])
    for name in ("direct.json.rank0.json", "merged.json", "run.json"):
        doc = strict_json(os.path.join(res, name))
        print(name, "is strict JSON in UTF-8")
        if name == "run.json":
            continue
        names = {e.get("name") for e in doc["traceEvents"]}
        for key in ("matmul", "gather", "add"):
            assert lenient(NAMES[key]) in names, (key, names)
        print(name, "names matmul, gather and add as expected")


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "gen":
        gen(sys.argv[2])
    elif cmd == "source":
        source(sys.argv[2])
    elif cmd == "run":
        run(sys.argv[2], sys.argv[3])
    elif cmd == "trace":
        trace(sys.argv[2], sys.argv[3])
    else:
        sys.exit("usage: hostile_names.py gen DIR | source OUT | run DIR PARC_RUN | "
                 "trace DIR PARC_RUN")
