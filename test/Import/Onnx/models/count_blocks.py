#!/usr/bin/python3
"""Counts the fused blocks in optimized nn IR, for the model lit tests.

    count_blocks.py IR                      # one "<kind>: <count>" line per kind
    count_blocks.py IR --expected M.json    # "<kind>: PASS <n>" or FAIL lines

With --expected (a <name>.json written by examples/models/generate.py) it
also checks that the IR's inputs were bound to config.batch / config.seq, and
compares every block count with the json's `expected`. Kinds named with
--not-fused have no fused op yet: they report NOT FUSED while none appears.

An nn.moe absorbs its experts: the generator counts each expert's linears
(fc1, fc2 and the gated form's fc3) and activations as blocks of their own,
so each nn.moe adds them back, E read from its stacked fc1 type. Its router
stays an nn.linear and is counted as one.
"""

import argparse
import json
import re
import sys

# Block kinds of generate.py's json, each counted as its nn op.
BLOCK_KINDS = ("layer_norm", "rms_norm", "gelu", "silu", "attention", "rotary",
               "linear", "moe")
# Ops that remain when a block is not fused; reported without --expected.
LEFTOVER_KINDS = ("matmul", "gemm", "softmax", "reduce_mean", "erf", "tanh",
                  "sigmoid")

OP_RE = re.compile(r"=\s*nn\.(\w+)\b")
MOE_RE = re.compile(r"=\s*nn\.moe\s+(%[^:]*?)(\{[^}]*\})?\s*:\s*\("
                    r"[^,]*,\s*[^,]*,\s*tensor<(\d+)x")
ARG_RE = re.compile(r"%arg\d+: tensor<([^>]*)>\s*\{onnx\.name = \"([^\"]+)\"")


def count_ops(text):
    counts = {}
    for name in OP_RE.findall(text):
        counts[name] = counts.get(name, 0) + 1
    for operands, attrs, experts in MOE_RE.findall(text):
        experts = int(experts)
        gated = operands.count("%") == 5
        counts["linear"] = counts.get("linear", 0) + (3 if gated else 2) * experts
        act = re.search(r"moe_activation (\w+)", attrs or "")
        act = act.group(1) if act else "silu"
        if act in ("silu", "gelu"):
            counts[act] = counts.get(act, 0) + experts
    return counts


def check_inputs(text, meta):
    """The bound input shapes must be the json's, batch/seq substituted."""
    config = meta["config"]
    sizes = {"batch": config["batch"], "seq": config["seq"]}
    bound = {name: dims for dims, name in ARG_RE.findall(text)}
    for name, spec in meta["inputs"].items():
        want = "x".join(str(sizes.get(d, d)) for d in spec["shape"])
        got = bound.get(name, "")
        got = "x".join(got.split("x")[:-1])  # drop the element type
        if got != want:
            return f"FAIL {name} is {got or 'missing'}, expected {want}"
    return "PASS"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("ir", help="optimized nn IR (parc-opt output)")
    parser.add_argument("--expected", help="<name>.json from generate.py")
    parser.add_argument("--not-fused", action="append", default=[],
                        metavar="KIND", help="a block kind with no fused op")
    args = parser.parse_args(argv)
    with open(args.ir) as f:
        text = f.read()
    counts = count_ops(text)
    if not args.expected:
        for kind in BLOCK_KINDS + LEFTOVER_KINDS:
            print(f"{kind}: {counts.get(kind, 0)}")
        return 0
    with open(args.expected) as f:
        meta = json.load(f)
    print(f"inputs: {check_inputs(text, meta)}")
    for kind in BLOCK_KINDS:
        want, got = meta["expected"][kind], counts.get(kind, 0)
        if kind in args.not_fused and got == 0:
            print(f"{kind}: NOT FUSED (expected {want})")
        elif got == want:
            print(f"{kind}: PASS {got}")
        else:
            print(f"{kind}: FAIL expected {want}, found {got}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
