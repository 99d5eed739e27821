"""Signal one rank of a running job and time how long the job takes to end.

stop_rank.py PARC_RUN COMPILED IDS RANK SIGNAL [ARG ...]: starts
`parc-run COMPILED --input ids=IDS --repeat 1000000 ARG ...` (a long run),
finds world rank RANK among its descendants (OMPI_COMM_WORLD_RANK in its
environment), sends it SIGNAL (STOP or KILL) once it has run for 2 s, and
waits at most 90 s for parc-run to end. Prints whether the job ended within
15 s of the signal, parc-run's exit status class and its output. Every
process it started is continued and killed (by pid) before it exits.
"""
import os
import signal
import subprocess
import sys
import time


def children(pid):
    out = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                out += [int(c) for c in f.read().split()]
    except OSError:
        pass
    return out


def descendants(pid):
    found, todo = [], [pid]
    while todo:
        for c in children(todo.pop()):
            found.append(c)
            todo.append(c)
    return found


def world_rank(pid):
    try:
        env = open(f"/proc/{pid}/environ", "rb").read().split(b"\0")
    except OSError:
        return None
    for e in env:
        if e.startswith(b"OMPI_COMM_WORLD_RANK="):
            return int(e.split(b"=", 1)[1])
    return None


def main(parc_run, compiled, ids, rank, sig, *args):
    job = subprocess.Popen([parc_run, compiled, "--input", f"ids={ids}",
                            "--repeat", "1000000", *args],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    target, deadline = None, time.time() + 60
    while target is None and time.time() < deadline and job.poll() is None:
        time.sleep(0.2)
        target = next((p for p in descendants(job.pid) if world_rank(p) == int(rank)), None)
    tree = descendants(job.pid)
    if target is None:
        job.kill()
        print("rank not found:", job.communicate()[0])
        return 1
    time.sleep(2)
    os.kill(target, getattr(signal, "SIG" + sig))
    signalled = time.time()
    try:
        output = job.communicate(timeout=90)[0]
    except subprocess.TimeoutExpired:
        output = "(still running after 90 s)"
    elapsed = time.time() - signalled
    for p in [target] + tree + [job.pid]:
        for s in (signal.SIGCONT, signal.SIGKILL):
            try:
                os.kill(p, s)
            except OSError:
                pass
    job.wait()
    print(f"ended within 15 s: {'yes' if elapsed <= 15 else 'no'} ({elapsed:.0f} s)")
    print("exit:", "non-zero" if job.returncode else "zero")
    print(output)
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
