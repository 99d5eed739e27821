"""Compiles every configuration `parc plan --json` ranks, with the command
the plan prints for it (compile_command), and reports the ones compile
refuses: the planner must rank only what compile builds.

usage: plan_compiles.py TOOLS STUB_DIR WORK MODEL.onnx:DEVICES:BATCH:SEQ ...

The MPI C++ compiler is stubbed (STUB_DIR first on PATH): compile runs
every pass and writes every program's C++, but builds no executable.
"""
import json
import os
import shlex
import subprocess
import sys


def main():
    tools, stub, work = sys.argv[1:4]
    env = dict(os.environ, PATH=stub + os.pathsep + os.environ["PATH"])
    for case in sys.argv[4:]:
        model, devices, batch, seq = case.rsplit(":", 3)
        plan = subprocess.run(
            [os.path.join(tools, "parc"), "plan", model, "--devices", devices,
             "--cluster", "cpu", "--batch", batch, "--seq", seq, "--dtype", "f32",
             "--json", "--top", "0"], stdout=subprocess.PIPE, text=True, check=True)
        table = json.loads(plan.stdout)["configurations"]
        refused = []
        for c in table:
            argv = shlex.split(c["compile_command"])
            argv[0] = os.path.join(tools, "parc")
            argv[argv.index("-o") + 1] = os.path.join(work, "out")
            r = subprocess.run(argv + ["--quiet"], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, env=env)
            if r.returncode:
                refused.append(f"  REFUSED {c['compile_flags']}: "
                               f"{r.stdout.strip().splitlines()[0]}")
        name = os.path.basename(model)
        print(f"{name} on {devices} devices: {len(table)} ranked, "
              f"{len(table) - len(refused)} compile")
        for line in refused:
            print(line)


if __name__ == "__main__":
    main()
