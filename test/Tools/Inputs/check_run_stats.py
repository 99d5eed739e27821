"""Checks parc-run --json against numpy: the latency statistics recomputed
from the runs it lists (nearest-rank percentiles are numpy's
'inverted_cdf'), tokens per forward from the token-id file's shape, and
each rank's communication: exposed <= in flight <= the mean forward.

usage: check_run_stats.py RUN_JSON TOKEN_IDS_NPY RUNS RANKS
"""
import json
import sys

import numpy as np


def main():
    report = json.load(open(sys.argv[1]))
    ids = np.load(sys.argv[2])
    runs, ranks = int(sys.argv[3]), int(sys.argv[4])
    bad = []
    times = np.array(report["runs_ms"])
    if report["runs"] != runs or len(times) != runs:
        bad.append(f"{len(times)} runs listed, {report['runs']} reported, {runs} asked")
    lat = report["latency_ms"]
    for key, want in [("min", times.min()), ("mean", times.mean())] + [
            (f"p{p}", np.percentile(times, p, method="inverted_cdf")) for p in (50, 90, 99)]:
        if not np.isclose(lat[key], want, rtol=1e-12, atol=0):
            bad.append(f"{key} {lat[key]} != numpy's {want}")
    tokens = ids.shape[0] * ids.shape[1]
    if report["tokens_per_forward"] != tokens or report["token_shape"] != list(ids.shape[:2]):
        bad.append(f"tokens {report['tokens_per_forward']} {report['token_shape']}, "
                   f"want {tokens} {list(ids.shape[:2])}")
    if not np.isclose(report["tokens_per_s"], tokens / (times.mean() * 1e-3), rtol=1e-9):
        bad.append(f"tokens_per_s {report['tokens_per_s']}")
    if len(report["per_rank"]) != ranks or report["world_size"] != ranks:
        bad.append(f"{len(report['per_rank'])} ranks reported, want {ranks}")
    for r in report["per_rank"]:
        flight, exposed = r["mean_comm_in_flight_ms"], r["mean_comm_exposed_ms"]
        if not 0 < flight <= times.mean() or not 0 <= exposed <= flight:
            bad.append(f"{r['label']}: in flight {flight} ms, exposed {exposed} ms, "
                       f"mean forward {times.mean()} ms")
    for line in bad:
        print("FAIL:", line)
    if not bad:
        print(f"stats ok: {runs} runs, {tokens} tokens per forward, {ranks} ranks")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
