#!/usr/bin/python3
"""Checks two decode-step plans (`parc plan --seq 1 --context S --json`) of
one generated decoder, at a short and a long context, against arithmetic on
the generator's config (<model>.json). Usage:
check_decode_plan.py SHORT.json LONG.json MODEL.json F32_BYTES."""

import json
import sys


def fail(msg):
    print(f"check_decode_plan.py: {msg}", file=sys.stderr)
    sys.exit(1)


def key(c):
    return (c["tp"], c["pp"], c["dp"], c["ep"], c["sp"], c["micro_batches"])


def check_cache_bytes(plan, cfg, bpe):
    """batch/dp x context x the fuller stage's layers x kv heads per rank
    (split up to one per rank) x head dim x 2 (key, value) x bytes."""
    batch, context = plan["model"]["batch"], plan["context"]
    for c in plan["configurations"]:
        kv_heads = cfg["kv_heads"] // min(c["tp"], cfg["kv_heads"])
        want = (batch // c["dp"]) * context * max(c["stage_blocks"]) * kv_heads \
            * cfg["head_dim"] * 2 * bpe
        got = c["memory_per_rank"]["kv_cache"]
        if got != want:
            fail(f"{key(c)}: KV cache {got} B, the formula gives {want} B")


def main():
    short, long_ = (json.load(open(p)) for p in sys.argv[1:3])
    cfg = json.load(open(sys.argv[3]))["config"]
    bpe = int(sys.argv[4])
    for plan in (short, long_):
        if not plan["decode"] or plan["model"]["seq"] != 1:
            fail(f"context {plan['context']}: not a decode-step plan")
        check_cache_bytes(plan, cfg, bpe)
        fits = [c["time_s"] for c in plan["configurations"] if c["fits"]]
        if fits != sorted(fits):
            fail(f"context {plan['context']}: not ranked by per-token latency")
    # Each layer reads its cache: a longer context costs every plan more.
    times = {key(c): c["time_s"] for c in short["configurations"]}
    for c in long_["configurations"]:
        if not c["time_s"] > times[key(c)]:
            fail(f"{key(c)}: {c['time_s']} s per token at context "
                 f"{long_['context']}, {times[key(c)]} s at {short['context']}")
    print(f"decode plans: KV cache bytes match the formula for "
          f"{len(long_['configurations'])} configurations; per-token latency "
          f"ranks them and grows with the context")


if __name__ == "__main__":
    main()
