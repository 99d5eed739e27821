"""Checks the locations of a `parc compile --dump-ir` folder: prints, for
each nn, dist and rt dump (the emitc ones hold C++ declarations), how many
ops it holds, those whose location names no ONNX node (no NameLoc anywhere
in it: none printed, unknown, or the model file alone), and whether any
location is unknown.

  dump_locations.py DIR"""
import glob
import os
import re
import sys

ALIAS = re.compile(r"^(#loc\d*) = (loc\(.*\))$")
# An op's trailing location; the printer puts it last on the op's line.
OP = re.compile(r"^\s*(?:%[^=]+= )?\"?([a-z_]+\.[a-z_0-9.]+)\b")
LOC = re.compile(r" (loc\(.*\))$")
# The module, its functions and the device mesh are the model's (or the
# parallel plan's), not a node's.
MODEL_LEVEL = ("builtin.module", "func.func", "dist.mesh")
REF = re.compile(r"#loc\d*")


def has_node(text, aliases, seen=()):
    """A NameLoc prints as "name"(...), inline or behind #loc aliases."""
    if re.search(r'(?:^|[\[, (])"(?:[^"\\]|\\.)*"\(', text):
        return True
    return any(has_node(aliases[r], aliases, seen + (r,))
               for r in REF.findall(text) if r in aliases and r not in seen)


def check(path):
    lines = open(path, encoding="utf-8", errors="replace").read().splitlines()
    aliases = {m.group(1): m.group(2) for m in map(ALIAS.match, lines) if m}
    ops, missing = 0, {}
    open_ops = []  # ops with a region: their location ends the region

    def located(name, line):
        loc = LOC.search(line)
        if not loc or not has_node(loc.group(1), aliases):
            missing[name] = missing.get(name, 0) + 1

    for line in lines:
        if line.startswith("{-#"):
            break  # the resources (weights), after the IR
        if line.lstrip().startswith("}") and open_ops:
            located(open_ops.pop(), line)
            continue
        m = OP.match(line)
        if not m:
            continue
        name = m.group(1) if m.group(1) not in MODEL_LEVEL else None
        ops += name is not None
        if line.rstrip().endswith("{"):
            open_ops.append(name)
        elif name:
            located(name, line)
    missing.pop(None, None)
    unknown = any("loc(unknown)" in line for line in lines)
    return ops, missing, unknown


def main():
    for f in sorted(glob.glob(os.path.join(sys.argv[1], "*.mlir"))):
        if "emitc" in os.path.basename(f):
            continue
        ops, missing, unknown = check(f)
        print(f"{os.path.basename(f)}: {ops} ops, without a node: "
              + (", ".join(f"{k} x{v}" for k, v in sorted(missing.items()))
                 or "none") + (", loc(unknown)" if unknown else ""))


if __name__ == "__main__":
    main()
