"""SIGINT and SIGTERM to `parc compile` while it runs g++, and a crash
(SIGSEGV), leave neither the staging folder DIR.parc-tmp-PID nor DIR; a stale staging folder of a dead
process is removed by the next compile, one of a live process is not.

usage: interrupt_compile.py PARC MODEL WORK_DIR
"""
import glob
import os
import signal
import subprocess
import sys
import time

parc, model, work = sys.argv[1:4]


def children(pid):
    """The children of every thread of `pid`: parc starts g++ from the
    threads of its build pool (--jobs), not only from its main thread."""
    found = []
    for task in glob.glob(f"/proc/{pid}/task/*/children"):
        try:
            with open(task) as f:
                found += f.read().split()
        except OSError:
            pass
    return found


def leftovers():
    return sorted(os.path.basename(p) for p in glob.glob(os.path.join(work, "*")))


def interrupt(sig, disposition):
    """Starts a compile with `sig` handled as `disposition`, sends it `sig`
    while g++ runs and returns the exit status."""
    out = os.path.join(work, "out")
    # A crash prints LLVM's stack dump: not wanted in the test's output.
    proc = subprocess.Popen([parc, "compile", model, "--tp", "2", "-o", out, "--quiet"],
                            preexec_fn=lambda: signal.signal(sig, disposition),
                            stderr=subprocess.DEVNULL if sig == signal.SIGSEGV else None)
    staging = f"{out}.parc-tmp-{proc.pid}"
    # Wait until the rank program's source is written and g++ runs on it.
    deadline = time.time() + 120
    while not (glob.glob(os.path.join(staging, "src", "*.cpp")) and children(proc.pid)):
        if proc.poll() is not None or time.time() > deadline:
            sys.exit(f"parc compile ended (or took too long) before g++ ran: {proc.returncode}")
        time.sleep(0.01)
    proc.send_signal(sig)
    return proc.wait(timeout=60)


# lit's workers ignore SIGINT, and so would parc: a shell's foreground
# command gets the default disposition.
for sig in (signal.SIGTERM, signal.SIGINT, signal.SIGSEGV):
    rc = interrupt(sig, signal.SIG_DFL)
    print(f"{signal.Signals(sig).name}: exit {rc}, left {leftovers()}")
# Ignored at start (nohup, `parc ... &` in a script): the compile goes on.
rc = interrupt(signal.SIGINT, signal.SIG_IGN)
print(f"SIGINT ignored: exit {rc}, left {leftovers()}")
subprocess.run(["rm", "-rf", os.path.join(work, "out")], check=True)

# Stale staging folders: of a process that has ended, and of this one.
dead = subprocess.Popen(["true"])
dead.wait()
out = os.path.join(work, "stale")
for pid in (dead.pid, os.getpid()):
    os.makedirs(f"{out}.parc-tmp-{pid}/bin")
    open(f"{out}.parc-tmp-{pid}/bin/main", "w").close()
rc = subprocess.run([parc, "compile", os.path.join(work, "missing.onnx"), "-o", out,
                     "--quiet"], stderr=subprocess.DEVNULL).returncode
left = [n.replace(str(os.getpid()), "LIVE") for n in leftovers()]
print(f"stale: exit {rc}, left {left}")
