#!/usr/bin/python3
"""Checks `parc plan --json` output against numbers derived independently:
arithmetic on the generator's config (<model>.json) and documented
production practice. Usage: check_plan.py CHECK PLAN.json [MODEL.json]."""

import json
import sys


def fail(msg):
    print(f"check_plan.py: {msg}", file=sys.stderr)
    sys.exit(1)


def config_of(plan, **want):
    for c in plan["configurations"]:
        if all(c[k] == v for k, v in want.items()):
            return c
    fail(f"no configuration with {want}")


def gpt2_parameters(cfg):
    """GPT-2 by arithmetic: token and position tables, per layer two
    LayerNorms, c_attn, attn.c_proj, c_fc, mlp.c_proj (weights and biases),
    the final LayerNorm; the LM head is tied to the token table."""
    h, f = cfg["hidden"], cfg["ffn"]
    layer = 2 * 2 * h + (h * 3 * h + 3 * h) + (h * h + h) + (h * f + f) + (f * h + h)
    return cfg["vocab"] * h + cfg["max_positions"] * h + cfg["layers"] * layer + 2 * h


def check_gpt2_tiny(plan, meta):
    cfg = meta["config"]
    if plan["model"]["parameters"] != gpt2_parameters(cfg):
        fail(f"parameters {plan['model']['parameters']} != {gpt2_parameters(cfg)}")
    b, s, h, v, n = cfg["batch"], cfg["seq"], cfg["hidden"], cfg["vocab"], cfg["layers"]
    f32 = 4
    for tp, dp in ((2, 2), (4, 1)):
        c = config_of(plan, tp=tp, dp=dp, pp=1, sp=False)
        local = b // dp
        # Megatron: two all-reduces of b*s*h per layer, each moving
        # 2(tp-1)/tp of it; the LM head all-gathers b*s*vocab, (tp-1)/tp.
        ar = n * 2 * local * s * h * f32 * 2 * (tp - 1) / tp
        ag = local * s * v * f32 * (tp - 1) / tp
        if abs(c["comm_bytes_per_rank"] - (ar + ag)) > 1e-6:
            fail(f"tp={tp} dp={dp}: comm {c['comm_bytes_per_rank']} != {ar + ag}")
        # Decoder KV cache: batch * context * layers * kv_heads/tp * head_dim
        # * 2 * bytes.
        kv = local * s * n * (cfg["kv_heads"] // tp) * cfg["head_dim"] * 2 * f32
        if c["memory_per_rank"]["kv_cache"] != kv:
            fail(f"tp={tp}: kv cache {c['memory_per_rank']['kv_cache']} != {kv}")
    print("gpt2 tiny: parameters, Megatron comm bytes and KV cache match arithmetic")


def check_generated_comm(plan, meta):
    """Any generated model at tp=2: Megatron's two all-reduces of b*s*h per
    layer (attention and MLP; for an MoE layer the experts split inside,
    Megatron's expert tensor parallelism, and their combined output reduced
    once), plus an LM head's all-gather for decoders, each rank moving
    2(tp-1)/tp resp. (tp-1)/tp of the tensor."""
    cfg, tp, f32 = meta["config"], 2, 4
    b, s, h = plan["model"]["batch"], plan["model"]["seq"], cfg["hidden"]
    ar = cfg["layers"] * 2 * b * s * h * f32 * 2 * (tp - 1) / tp
    ag = b * s * cfg["vocab"] * f32 * (tp - 1) / tp if meta["family"] != "bert" else 0
    c = config_of(plan, tp=tp, pp=1, dp=1, ep=1, sp=False)
    if abs(c["comm_bytes_per_rank"] - (ar + ag)) > 1e-6 * (ar + ag):
        fail(f"{meta['name']}: comm {c['comm_bytes_per_rank']} != {ar + ag}")
    print(f"{meta['name']}: tp=2 collective bytes match Megatron's count")
    if cfg["experts"]:
        # ep=2 on the tp ranks: attention keeps its all-reduce; each MoE
        # layer sends T/ep * top_k f32 rows out and back ((ep-1)/ep of them
        # leave the rank) and all-gathers the T/ep shares.
        ep, t = 2, b * s
        rows = t // ep * cfg["top_k"] * h * 4
        a2a = 2 * rows * (ep - 1) / ep
        gather = t * h * f32 * (ep - 1) / ep
        attn = cfg["layers"] * b * s * h * f32 * 2 * (tp - 1) / tp
        want = attn + cfg["layers"] * (a2a + gather) + ag
        c = config_of(plan, tp=tp, pp=1, dp=1, ep=ep, sp=False)
        if abs(c["comm_bytes_per_rank"] - want) > 1e-6 * want:
            fail(f"{meta['name']}: ep=2 comm {c['comm_bytes_per_rank']} != {want}")
        print(f"{meta['name']}: tp=2 ep=2 all-to-all and all-gather bytes match")


def check_fit_70b_one_gpu(plan, meta):
    gib = 1 << 30
    if plan["chosen"] is not None:
        fail("70B on one GPU must not fit")
    only = plan["configurations"][0]
    weights = meta["parameters"] * 2  # bf16
    if only["fits"] or only["memory_per_rank"]["weights"] < weights * 0.999:
        fail(f"weights {only['memory_per_rank']['weights']} < {weights}")
    if plan["device_memory_bytes"] != 80 * gib:
        fail("the h100x8 preset should have 80 GiB devices")
    print(f"70B bf16: {weights / gib:.1f} GiB of weights > 80 GiB: does not fit")


def check_chosen(plan, tp, pp, within_node):
    c = plan["chosen"]
    if c is None or c["tp"] != tp or c["pp"] != pp:
        fail(f"chosen {c and (c['tp'], c['pp'])}, expected tp={tp} pp={pp}:\n"
             + plan["explanation"])
    if within_node and c["tp"] > 8:
        fail("tp group should stay within a node")
    print(f"chosen tp={c['tp']} pp={c['pp']} dp={c['dp']}: "
          + plan["explanation"].splitlines()[0])


def check_parameters(plan, meta):
    # The planner counts every initializer: parameters and the causal-mask
    # and rotary buffers, each counted by the generator's arithmetic.
    got, want = plan["model"]["parameters"], meta["parameters"] + meta["buffers"]
    if got != want:
        fail(f"initializer elements {got} != {want} by arithmetic")
    print(f"{meta['name']}: {meta['parameters'] / 1e9:.2f}B parameters "
          f"(+{meta['buffers'] / 1e6:.1f}M buffer elements), as by arithmetic")


def main():
    check, plan = sys.argv[1], json.load(open(sys.argv[2]))
    meta = json.load(open(sys.argv[3])) if len(sys.argv) > 3 else None
    if check == "gpt2-tiny":
        check_gpt2_tiny(plan, meta)
    elif check == "generated":
        check_generated_comm(plan, meta)
    elif check == "arena":
        # The planner's activation peak is the most bytes live at once, a
        # lower bound of any arena; the arena `parc compile` plans for the
        # same split (first fit by liveness) may add fragmentation on top.
        manifest = meta
        arena = manifest["programs"][0]["arena_bytes"]
        tp = manifest["world_size"]
        c = config_of(plan, tp=tp, pp=1, dp=1, ep=1, sp=False)
        peak = c["memory_per_rank"]["activations"]
        # Fragmentation is relative on real sizes (25%), but a few small
        # buffers alive across the whole program (rotary tables) cost up to
        # 4 KiB more on these toy ones (the fused MoE leaves mixtral's peak
        # in attention, where they live).
        if not peak <= arena <= max(1.25 * peak, peak + 4096):
            fail(f"tp={tp}: planned peak {peak} vs compiled arena {arena}")
        print(f"tp={tp}: planned activation peak {peak} B <= compiled arena "
              f"{arena} B <= 1.25x (+4 KiB)")
    elif check == "70b-one-gpu":
        check_parameters(plan, meta)
        check_fit_70b_one_gpu(plan, meta)
    elif check == "8b-one-gpu":
        check_parameters(plan, meta)
        check_chosen(plan, 1, 1, True)
    elif check == "mixtral-two-gpus":
        check_chosen(plan, 2, 1, True)
    elif check == "70b-one-node":
        check_chosen(plan, 8, 1, True)
    elif check == "70b-one-node-params":
        check_parameters(plan, meta)
        check_chosen(plan, 8, 1, True)
    elif check == "405b-two-nodes":
        check_parameters(plan, meta)
        check_chosen(plan, 8, 2, True)
    elif check == "throughput":
        # The steady-state rate is the best among the fitting configurations,
        # and at least the latency choice's.
        fits = [c for c in plan["configurations"] if c["fits"]]
        best = max(c["tokens_per_s"] for c in fits)
        c = plan["chosen"]
        if c["tokens_per_s"] < best * 0.999:
            fail(f"chosen {c['tokens_per_s']} tokens/s < best {best}")
        latency = min(fits, key=lambda c: c["time_s"])
        if c["tokens_per_s"] < latency["tokens_per_s"]:
            fail("throughput choice slower than the latency choice")
        print(f"throughput: chosen tp={c['tp']} pp={c['pp']} dp={c['dp']} at "
              f"{c['tokens_per_s']:.0f} tokens/s (latency choice tp={latency['tp']}: "
              f"{latency['tokens_per_s']:.0f})")
    elif check == "kv-8k":
        # Llama-3-70B, tp=8, 8k context, batch 1, bf16: 8192 tokens * 80
        # layers * (8 kv heads / 8 ranks) * 128 * 2 (k and v) * 2 B.
        c = config_of(plan, tp=8, pp=1, dp=1, sp=False)
        want = 8192 * 80 * 1 * 128 * 2 * 2
        if c["memory_per_rank"]["kv_cache"] != want:
            fail(f"kv cache {c['memory_per_rank']['kv_cache']} != {want}")
        c = config_of(plan, tp=4, pp=2, dp=1, sp=False)
        # tp=4: 2 kv heads per rank; pp=2: the fuller stage's blocks.
        layers = max(c["stage_blocks"])
        want = 8192 * layers * 2 * 128 * 2 * 2
        if c["memory_per_rank"]["kv_cache"] != want:
            fail(f"tp=4 pp=2: kv cache {c['memory_per_rank']['kv_cache']} != {want}")
        print("KV cache at 8k context matches arithmetic (320 MiB per rank at tp=8)")
    elif check == "fast":
        secs = plan["planning_seconds"]
        if plan["model"]["blocks"] != 80 or secs >= 2:
            fail(f"planned {plan['considered']} configurations of 80 blocks in {secs:.3f} s")
        print(f"planned {plan['considered']} configurations in {secs:.3f} s (< 2 s; "
              f"import and fusion {plan['import_seconds']:.3f} s)")
    elif check == "moe":
        check_parameters(plan, meta)
        m = plan["model"]
        if (m["experts"], m["top_k"]) != (8, 2):
            fail(f"experts/top_k {m['experts']}/{m['top_k']} != 8/2")
        eps = {c["ep"] for c in plan["configurations"]}
        if eps != {1, 2, 4, 8}:
            fail(f"ep degrees considered {sorted(eps)}")
        print("mixtral: 8 experts, top-2; ep 1, 2, 4, 8 considered")
    else:
        fail(f"unknown check {check}")


if __name__ == "__main__":
    main()
