"""Starts parc-run on a compiled model with a large --repeat, sends it a
signal once its ranks run, and checks that parc-run exits within a few
seconds and that within 20 s no process of that run (mpirun, a rank program: any
process whose command line names the compiled folder) survives it.

usage: parc_run_signal.py PARC_RUN COMPILED INPUT_SPEC SIGNAL LOG
"""
import os
import signal
import subprocess
import sys
import time


def processes_of(folder):
    """Live processes whose command line names `folder` (zombies excluded)."""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            words = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\0")
            state = open(f"/proc/{pid}/stat").read().rsplit(") ", 1)[1][0]
        except (OSError, IndexError):
            continue
        line = b" ".join(words).decode(errors="replace")
        if state != "Z" and folder in line and "parc_run_signal.py" not in line:
            found.append(f"{pid}: {line[:120]}")
    return found


def main():
    tool, compiled, spec, name, log = sys.argv[1:6]
    compiled = os.path.abspath(compiled)
    with open(log, "w") as out:
        p = subprocess.Popen([tool, compiled, "--input", spec, "--repeat", "1000000"],
                             stdout=out, stderr=subprocess.STDOUT)
    deadline = time.time() + 120
    while time.time() < deadline and p.poll() is None and \
            sum("/bin/" in s and "mpirun" not in s for s in processes_of(compiled)) < 2:
        time.sleep(0.1)
    started = processes_of(compiled)
    if p.poll() is not None or not any("mpirun" in s for s in started):
        print("FAIL: the run did not start:", started, open(log).read()[-400:])
        return 1
    p.send_signal(getattr(signal, name))
    try:
        rc = p.wait(timeout=15)
    except subprocess.TimeoutExpired:
        p.kill()
        print(f"FAIL: parc-run still runs 15 s after {name}")
        return 1
    # mpirun stops its ranks after parc-run has gone; on a loaded machine
    # that takes seconds. A leaked process outlives any wait.
    deadline = time.time() + 20
    left = processes_of(compiled)
    while left and time.time() < deadline:
        time.sleep(0.2)
        left = processes_of(compiled)
    if left:
        print(f"FAIL: after {name} to parc-run, these outlive it:", *left, sep="\n  ")
        for s in left:  # stop what this test started
            os.kill(int(s.split(":")[0]), signal.SIGKILL)
        return 1
    print(f"{name}: parc-run exited {rc}, {len(started) - 1} process(es) of the run "
          "stopped with it")
    lines = open(log).read().strip().splitlines()
    print(lines[-1] if lines else "(parc-run printed nothing)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
