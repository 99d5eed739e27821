"""Checks the per-rank load figures of parc-run --json: only what holds by
construction, never a timing comparison between runs. Every rank reports
load_ms > 0 (it mapped and checked a shard), 0 <= pack_ms <= load_ms (the
packing is part of loading), first_forward_ms > 0, and, with --warmup 0,
rank 0's first_forward_ms + pack_ms <= runs_ms[0]: runs_ms are rank 0's
windows, and its own first pass is timed inside the first one, which also
waits for the slowest rank. Other ranks leave the starting barrier at
slightly different moments, so their first pass need not fit rank 0's
window.

usage: check_load_stats.py RUN_JSON RANKS
"""
import json
import sys


def main():
    report = json.load(open(sys.argv[1]))
    ranks = int(sys.argv[2])
    bad = []
    if len(report["per_rank"]) != ranks:
        bad.append(f"{len(report['per_rank'])} ranks reported, want {ranks}")
    first_run = report["runs_ms"][0] if report["warmup"] == 0 else None
    for index, r in enumerate(report["per_rank"]):
        load, pack, first = r["load_ms"], r["pack_ms"], r["first_forward_ms"]
        if not (load > 0 and 0 <= pack <= load and first > 0):
            bad.append(f"{r['label']}: load {load}, pack {pack}, first {first}")
        # 1 us of slack for the ms conversions' rounding.
        if index == 0 and first_run is not None and first + pack > first_run + 1e-3:
            bad.append(f"{r['label']}: first forward {first} + packing {pack} ms "
                       f"outside the first run's {first_run} ms")
    for line in bad:
        print("FAIL:", line)
    if not bad:
        print(f"load ok: {ranks} ranks")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
