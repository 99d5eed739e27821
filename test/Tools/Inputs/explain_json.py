"""Checks `parc compile --explain-json FILE` against the model: prints the
remark count per stage, how many name a node, that every named node is a
node of the ONNX graph (read with the onnx package), and whether the JSON
holds the same remarks the text of --explain printed (given its stderr).

  explain_json.py FILE MODEL [STDERR]"""
import collections
import json
import re
import sys

import onnx

report = json.load(open(sys.argv[1]))
model = onnx.load(sys.argv[2])
nodes = {n.name for n in model.graph.node}
remarks = report["remarks"]
assert report["model"] == sys.argv[2], report["model"]
for stage, n in sorted(collections.Counter(r["stage"] for r in remarks).items()):
    print(f"stage {stage}: {n} remark(s)")
named = [r for r in remarks if "node" in r]
print(f"{len(named)} of {len(remarks)} name a node")
unknown = sorted({r["node"] for r in named} - nodes)
print("nodes not in the model:", unknown)
for r in named:
    assert f"node '{r['node']}'" in r["message"], r
if len(sys.argv) > 3:
    text = open(sys.argv[3]).read()
    printed = re.findall(r"remark: (.*)", text)
    print("text remarks match:", printed == [r["message"] for r in remarks])
