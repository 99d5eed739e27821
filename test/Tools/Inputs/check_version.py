"""--version of every parc tool against the version in CMakeLists.txt, and
manifest.json's parc_version and parc_commit against --version.

usage: check_version.py SRC_DIR TOOLS_DIR MANIFEST
"""
import json
import os
import re
import subprocess
import sys

src, tools, manifest_path = sys.argv[1:4]
with open(os.path.join(src, "CMakeLists.txt")) as f:
    version = re.search(r"project\(parc VERSION ([0-9.]+)", f.read()).group(1)
pattern = re.compile(r"parc version (\S+) \(commit ([0-9a-f]{4,}|unknown)\), "
                     r"built with LLVM [0-9.]+")
commits = set()
for tool in ["parc", "parc-run", "parc-translate", "parc-opt"]:
    out = subprocess.run([os.path.join(tools, tool), "--version"],
                         stdout=subprocess.PIPE, text=True).stdout
    m = pattern.search(out)
    if not m or m.group(1) != version:
        sys.exit(f"{tool} --version printed {out!r}, expected parc {version}")
    commits.add(m.group(2))
    print(f"{tool}: parc {version}")
if len(commits) != 1:
    sys.exit(f"the tools report different commits: {sorted(commits)}")
with open(manifest_path) as f:
    manifest = json.load(f)
got = (manifest.get("producer"), manifest.get("parc_version"),
       manifest.get("parc_commit"))
if got != ("parc", version, commits.pop()):
    sys.exit(f"manifest.json says producer, parc_version, parc_commit = {got}")
print("manifest: the same version and commit")
