#!/usr/bin/python3
"""Mixture-of-experts end to end: sparse routing, expert parallelism, capacity.

Two kinds of cases, each one line of the table and counted in the closing
`N passed, N failed`:

* MoE blocks alone (examples/models/generate.py's Emitter.moe for every MoE
  model's config, on an input [batch, seq, hidden]): parc's fused nn.moe at
  ep 1, 2 and 4 against a numpy reference written here that routes sparsely
  (per token: softmax, top-k with ties to the lower expert, the chosen
  experts' SwiGLU only) and against onnxruntime's dense evaluation of the
  exported form. With --capacity-factor the routing report's dropped count,
  its tokens per expert and per rank, and each rank's all-to-all bytes must
  equal what numpy counts from the same routing; the manifest's expert
  weight bytes per rank must be experts/ep of the total, both computed from
  the config's dims.
* com.microsoft.MoE (onnxruntime's contrib op, weights [experts, out, in]):
  ungated experts against onnxruntime (its CPU kernel has no fc3), the
  gated SwiGLU form against numpy, each at ep 1 and 2.
* Whole generated MoE models: --ep 2 and 4, and --tp 2 --ep 2 together,
  against single-rank parc, within 1e-4 relative; and a --ep that does not
  divide the experts is refused, naming the node, with no output left.

    test/e2e/moe.py --tools build/bin --generated build/models --work DIR
"""
import argparse
import glob
import importlib.util
import json
import math
import os
import shutil
import subprocess
import sys

import numpy as np
import onnx
from onnx import TensorProto, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from differential import output_file  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RTOL = 1e-4


def load_generator():
    path = os.path.join(ROOT, "examples", "models", "generate.py")
    spec = importlib.util.spec_from_file_location("parc_generate", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def run(cmd, log, check=True):
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    log.write("$ " + " ".join(cmd) + "\n" + r.stdout)
    if check and r.returncode:
        lines = r.stdout.strip().splitlines()
        raise RuntimeError(lines[-1] if lines else f"exit {r.returncode}")
    return r


def rel_err(got, want):
    scale = np.abs(want).max()
    return float(np.abs(got - want).max() / (scale if scale else 1.0))


# --- the numpy reference -------------------------------------------------

def sparse_moe(cfg, weights, x, capacity=0, ranks=1):
    """Routes every token of x [T, H] to its top-k experts and evaluates only
    those. Returns y, dropped pairs, pairs per expert (before capacity),
    kept pairs per expert-parallel rank, and each rank's all-to-all bytes
    (f32 rows out and results back; the receiver knows each row's expert
    from the all-gathered counts, so no index travels)."""
    T, H = x.shape
    E, k = cfg.experts, cfg.top_k
    logits = x.astype(np.float64) @ weights["gate"]
    chosen = []  # per token: [(expert, weight)]
    for t in range(T):
        z = logits[t]
        if cfg.router == "topk_softmax":
            order = sorted(range(E), key=lambda e: (-z[e], e))[:k]
            v = np.exp(z[order] - z[order].max())
            w = v / v.sum()
        else:
            p = np.exp(z - z.max())
            p /= p.sum()
            order = sorted(range(E), key=lambda e: (-p[e], e))[:k]
            w = p[order] / p[order].sum() if cfg.renormalize else p[order]
        chosen.append(list(zip(order, w)))
    per_expert = np.zeros(E, np.int64)
    used = np.zeros(E, np.int64)
    dropped = 0
    y = np.zeros((T, H))
    share, local = T // ranks, E // ranks
    sent = np.zeros(ranks, np.int64)
    recv = np.zeros(ranks, np.int64)
    for t in range(T):
        kept = []
        for e, w in chosen[t]:
            per_expert[e] += 1
            if capacity and used[e] >= capacity:
                dropped += 1
                continue
            used[e] += 1
            sent[t // share] += 1
            recv[e // local] += 1
            kept.append((e, w))
        for e, w in sorted(kept):  # the dense form sums in expert order
            w1, w3, w2 = weights["w1"][e], weights["w3"][e], weights["w2"][e]
            g = x[t] @ w1
            h = g / (1 + np.exp(-g)) * (x[t] @ w3)
            y[t] += w * (h @ w2)
    bytes_sent = [int((sent[r] + recv[r]) * H * 4) for r in range(ranks)]
    return y, dropped, per_expert, recv, bytes_sent


def block_weights(model, cfg):
    init = {i.name: numpy_helper.to_array(i).astype(np.float64)
            for i in model.graph.initializer}
    pick = lambda suffix: np.stack([init[f"moe.experts.{e}.{suffix}.weight"]
                                    for e in range(cfg.experts)])
    return {"gate": init["moe.gate.weight"], "w1": pick("w1"),
            "w3": pick("w3"), "w2": pick("w2")}


# --- cases ---------------------------------------------------------------

class Runner:
    def __init__(self, args, log):
        self.args, self.log = args, log
        self.compiled = {}  # result dir -> compiled dir
        self.passed = self.failed = 0

    def case(self, name, fn):
        try:
            detail = fn()
            ok = True
        except Exception as e:  # noqa: BLE001 — report and continue
            ok, detail = False, f"FAIL: {e}"
        print(f"{name:<58} {'PASS' if ok else 'FAIL'}  {detail if ok else detail}",
              flush=True)
        self.passed += ok
        self.failed += not ok

    def compile_run(self, model, out, shapes, inputs, flags):
        tools = self.args.tools
        run([os.path.join(tools, "parc"), "compile", model, "-o", out, "--quiet"]
            + [f"--input-shape={n}={s}" for n, s in shapes.items()] + flags, self.log)
        res = out + "-res"
        shutil.rmtree(res, ignore_errors=True)
        run([os.path.join(tools, "parc-run"), out, "--output-dir", res]
            + [f"--input={n}={p}" for n, p in inputs.items()], self.log)
        self.compiled[res] = out
        return res

    def output(self, res, name):
        """Output `name` of the compile_run that wrote `res`, from the file
        its manifest records."""
        manifest = json.load(open(os.path.join(self.compiled[res], "manifest.json")))
        return np.load(os.path.join(res, output_file(manifest, name)))


def check_block(r, gen, name, cfg):
    """One MoE block of `cfg`, alone."""
    work = os.path.join(r.args.work, "block-" + name)
    os.makedirs(work, exist_ok=True)
    g = gen.Emitter(cfg, 14)
    x_name = g.input("x", TensorProto.FLOAT, ["batch", "seq", cfg.hidden])
    with g.module("moe"):
        y = g.moe(x_name)
    g.output(y, "y", TensorProto.FLOAT, ["batch", "seq", cfg.hidden])
    model = g.model(name + "_block")
    path = os.path.join(work, "block.onnx")
    onnx.save(model, path)
    weights = block_weights(model, cfg)
    T = cfg.batch * cfg.seq
    x = np.random.default_rng(cfg.seed).standard_normal(
        (cfg.batch, cfg.seq, cfg.hidden)).astype(np.float32)
    xp = os.path.join(work, "x.npy")
    np.save(xp, x)
    shapes = {"x": f"{cfg.batch}x{cfg.seq}x{cfg.hidden}"}
    expert_bytes = cfg.experts * 3 * cfg.hidden * cfg.ffn * 4
    flat = x.reshape(T, cfg.hidden).astype(np.float64)

    def ort_and_sparse():
        ref, *_ = sparse_moe(cfg, weights, flat)
        run(["node", os.path.join(ROOT, "tools", "ort-reference", "ort-run.mjs"), path,
             "--output-dir", os.path.join(work, "ort"), "--input", f"x={xp}"], r.log)
        ort = np.load(os.path.join(work, "ort", "y.npy")).reshape(T, -1)
        res = r.compile_run(path, os.path.join(work, "ep1"), shapes, {"x": xp}, [])
        got = r.output(res, "y").reshape(T, -1)
        e_ref, e_ort = rel_err(got, ref), rel_err(got, ort)
        if max(e_ref, e_ort) > RTOL:
            raise RuntimeError(f"vs numpy sparse {e_ref:.2e}, vs ort dense {e_ort:.2e}")
        return f"vs numpy sparse {e_ref:.1e}, vs onnxruntime dense {e_ort:.1e}"
    r.case(f"{name} block: parc == numpy sparse == ort dense", ort_and_sparse)

    for ep in r.args.ep:
        for factor in (0.0, r.args.capacity_factor):
            def ep_case(ep=ep, factor=factor):
                capacity = (math.ceil(factor * T * cfg.top_k / cfg.experts)
                            if factor else 0)
                ref, dropped, per_expert, per_rank, sent = sparse_moe(
                    cfg, weights, flat, capacity, ep)
                out = os.path.join(work, f"ep{ep}-cf{factor}")
                flags = [f"--ep={ep}"] + ([f"--capacity-factor={factor}"] if factor else [])
                res = r.compile_run(path, out, shapes, {"x": xp}, flags)
                got = r.output(res, "y").reshape(T, -1)
                err = rel_err(got, ref)
                if err > RTOL:
                    raise RuntimeError(f"output differs from numpy by {err:.2e}")
                layer = json.load(open(os.path.join(out, "manifest.json")))["moe_layers"][0]
                if (layer["expert_weight_bytes_per_rank"] * ep != expert_bytes or
                        layer["expert_weight_bytes_total"] != expert_bytes):
                    raise RuntimeError(f"manifest expert bytes {layer['expert_weight_bytes_per_rank']}"
                                       f" per rank, expected {expert_bytes // ep}")
                if layer["capacity"] != capacity:
                    raise RuntimeError(f"capacity {layer['capacity']}, expected {capacity}")
                if ep > 1:
                    # The static bound from the dims: a rank sends its T/ep
                    # tokens' k rows and returns what it can receive, at
                    # most min(k, E/ep) rows per token or E/ep · capacity.
                    H, k, local = cfg.hidden, cfg.top_k, cfg.experts // ep
                    recv_max = T * min(k, local)
                    if capacity:
                        recv_max = min(recv_max, local * capacity)
                    bound = (T // ep * k + recv_max) * H * 4
                    if layer["all_to_all_bytes_sent_per_rank_max"] != bound:
                        raise RuntimeError(f"manifest all-to-all bound {layer['all_to_all_bytes_sent_per_rank_max']}"
                                           f", expected {bound}")
                    # Counts travel once: each rank's E per-expert counts
                    # (i64) in the all-gather; the all-to-alls send payload
                    # only (their counts come from the plan).
                    if layer["count_exchange_bytes_per_rank"] != cfg.experts * 8:
                        raise RuntimeError(f"manifest count exchange {layer['count_exchange_bytes_per_rank']} B"
                                           f" per rank, expected {cfg.experts} experts x 8 B")
                    if max(sent) > bound:
                        raise RuntimeError(f"numpy counts {max(sent)} all-to-all bytes, over the bound {bound}")
                for rank in range(ep):
                    rep = json.load(open(os.path.join(
                        res, f"moe_report.rank{rank}.json")))["layers"][0]
                    if rep["dropped"] != dropped:
                        raise RuntimeError(f"rank {rank} reports {rep['dropped']} dropped, numpy counts {dropped}")
                    if rep["tokens_per_expert"] != per_expert.tolist():
                        raise RuntimeError(f"tokens per expert {rep['tokens_per_expert']} vs {per_expert.tolist()}")
                    if rep["tokens_per_rank"] != (per_rank.tolist() if ep > 1 else [int(per_rank.sum())]):
                        raise RuntimeError(f"tokens per rank {rep['tokens_per_rank']} vs {per_rank.tolist()}")
                    if ep > 1 and rep["all_to_all_bytes"] != sent[rank]:
                        raise RuntimeError(f"rank {rank}: {rep['all_to_all_bytes']} all-to-all bytes, numpy counts {sent[rank]}")
                if factor and not dropped:
                    raise RuntimeError("the capacity factor dropped nothing: the case tests nothing")
                return (f"err {err:.1e}, dropped {dropped}, experts/rank bytes "
                        f"{layer['expert_weight_bytes_per_rank']}")
            label = f"{name} block: ep {ep}" + (f", capacity factor {factor}" if factor else "")
            r.case(label, ep_case)


def check_contrib(r):
    """onnxruntime's MoE op imported: parc against onnxruntime where its CPU
    kernel runs the form (no fc3), against numpy where it does not."""
    from onnx import helper
    E, H, I, T, k = 4, 8, 12, 16, 2
    rng = np.random.default_rng(2024)
    work = os.path.join(r.args.work, "contrib")
    os.makedirs(work, exist_ok=True)
    x = rng.standard_normal((T, H)).astype(np.float32)
    logits = rng.standard_normal((T, E)).astype(np.float32)
    xp, lp = os.path.join(work, "x.npy"), os.path.join(work, "r.npy")
    np.save(xp, x)
    np.save(lp, logits)
    acts = {"relu": lambda v: np.maximum(v, 0), "silu": lambda v: v / (1 + np.exp(-v))}
    for act, gated in (("relu", False), ("silu", False), ("silu", True)):
        fc1 = (rng.standard_normal((E, I, H)) * 0.3).astype(np.float32)
        fc2 = (rng.standard_normal((E, H, I)) * 0.3).astype(np.float32)
        fc3 = (rng.standard_normal((E, I, H)) * 0.3).astype(np.float32)
        ins = ["input", "router_probs", "fc1", "", "fc2"] + (["", "fc3"] if gated else [])
        node = helper.make_node("MoE", ins, ["output"], "moe", domain="com.microsoft", k=k,
                                normalize_routing_weights=1, activation_type=act)
        inits = [numpy_helper.from_array(fc1, "fc1"), numpy_helper.from_array(fc2, "fc2")]
        if gated:
            inits.append(numpy_helper.from_array(fc3, "fc3"))
        graph = helper.make_graph(
            [node], "moe",
            [helper.make_tensor_value_info("input", TensorProto.FLOAT, [T, H]),
             helper.make_tensor_value_info("router_probs", TensorProto.FLOAT, [T, E])],
            [helper.make_tensor_value_info("output", TensorProto.FLOAT, [T, H])], inits)
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 14),
                                                        helper.make_opsetid("com.microsoft", 1)])
        tag = f"{act}{'-gated' if gated else ''}"
        path = os.path.join(work, tag + ".onnx")
        onnx.save(model, path)
        # numpy: softmax over the logits, top-k, renormalised, chosen experts only.
        ref = np.zeros((T, H))
        for t in range(T):
            p = np.exp(logits[t] - logits[t].max())
            p /= p.sum()
            order = sorted(range(E), key=lambda e: (-p[e], e))[:k]
            for e in sorted(order):
                h = acts[act](fc1[e].astype(np.float64) @ x[t])
                if gated:
                    h = h * (fc3[e].astype(np.float64) @ x[t])
                ref[t] += p[e] / p[order].sum() * (fc2[e] @ h)

        def contrib_case(path=path, tag=tag, gated=gated, ref=ref):
            want, against = ref, "numpy"
            if not gated:
                run(["node", os.path.join(ROOT, "tools", "ort-reference", "ort-run.mjs"), path,
                     "--output-dir", os.path.join(work, tag + "-ort"), "--input", f"input={xp}",
                     "--input", f"router_probs={lp}"], r.log)
                want = np.load(os.path.join(work, tag + "-ort", "output.npy"))
                against = "onnxruntime"
                if rel_err(want, ref) > RTOL:
                    raise RuntimeError("onnxruntime and numpy disagree: the reference is wrong")
            errs = []
            for ep in (1, 2):
                res = r.compile_run(path, os.path.join(work, f"{tag}-ep{ep}"), {},
                                    {"input": xp, "router_probs": lp}, [f"--ep={ep}"])
                errs.append(rel_err(r.output(res, "output"), want))
            if max(errs) > RTOL:
                raise RuntimeError(f"vs {against}: {errs[0]:.2e} (ep 1), {errs[1]:.2e} (ep 2)")
            return f"vs {against} {max(errs):.1e} (ep 1 and 2)"
        r.case(f"com.microsoft.MoE {tag}: parc == {'numpy' if gated else 'onnxruntime'}",
               contrib_case)


def check_model(r, name, path, meta):
    c = meta["config"]
    work = os.path.join(r.args.work, name)
    os.makedirs(work, exist_ok=True)
    ids = np.random.default_rng(7).integers(0, c["vocab"], (c["batch"], c["seq"])).astype(np.int64)
    ip = os.path.join(work, "ids.npy")
    np.save(ip, ids)
    shapes = {"input_ids": f"{c['batch']}x{c['seq']}"}
    base = {}

    def single():
        res = r.compile_run(path, os.path.join(work, "single"), shapes, {"input_ids": ip}, [])
        base["y"] = r.output(res, "logits")
        return "reference for the parallel runs"
    r.case(f"{name}: single rank", single)
    # With --pp the experts of each stage's layers split over its ranks.
    configs = [[f"--ep={e}"] for e in r.args.ep] + [
        ["--tp=2", "--ep=2"], ["--tp=2", "--etp"], ["--pp=2", "--ep=2"],
        ["--pp=2", "--tp=2", "--ep=2"],
        # 2 expert groups of 2 tensor-parallel ranks: 4 ranks; per stage
        # with --pp 2 (a [pp, ep, tp] mesh of 8 ranks).
        ["--tp=2", "--ep=2", "--etp"], ["--pp=2", "--tp=2", "--ep=2", "--etp"],
        ["--pp=2", "--tp=2", "--ep=2", "--etp", "--micro-batches=2"]]
    for flags in configs:
        def parallel(flags=flags):
            if "y" not in base:
                raise RuntimeError("no single-rank result")
            tag = "-".join(f.strip("-").replace("=", "") for f in flags)
            res = r.compile_run(path, os.path.join(work, tag), shapes, {"input_ids": ip}, flags)
            err = rel_err(r.output(res, "logits"), base["y"])
            if err > RTOL:
                raise RuntimeError(f"differs from single rank by {err:.2e}")
            # Each of the ranks holds 1/ranks of the expert weights, by
            # experts (--ep) or inside every expert (--etp).
            degree = {f.split("=")[0]: int(f.split("=")[1]) for f in flags if "=" in f}
            ranks = max(degree.get("--ep", 1), degree.get("--tp", 1))
            if "--etp" in flags and degree.get("--ep", 1) > 1:
                ranks = degree["--ep"] * degree["--tp"]  # experts, then their ffn
            total = c["experts"] * 3 * c["hidden"] * c["ffn"] * 4
            manifest = json.load(open(os.path.join(work, tag, "manifest.json")))
            if manifest["world_size"] != ranks * degree.get("--pp", 1):
                raise RuntimeError(f"world size {manifest['world_size']}, expected "
                                   f"{ranks * degree.get('--pp', 1)}")
            if "--etp" in flags and degree.get("--ep", 1) > 1 and degree.get("--pp", 1) > 1:
                want = {"axes": ["pp", "ep", "tp"],
                        "shape": [degree["--pp"], degree["--ep"], degree["--tp"]]}
                if manifest["mesh"] != want:
                    raise RuntimeError(f"mesh {manifest['mesh']}, expected {want}")
            for layer in manifest["moe_layers"]:
                if (layer["expert_weight_bytes_per_rank"] * ranks != total or
                        layer["expert_weight_bytes_total"] != total):
                    raise RuntimeError(f"manifest: {layer['expert_weight_bytes_per_rank']} expert "
                                       f"bytes per rank, expected {total // ranks}")
            return f"vs single rank {err:.1e}"
        r.case(f"{name}: {' '.join(flags)} == single rank", parallel)

    def capacity():
        # The same capacity cut on one rank and over the experts' ranks:
        # equal outputs and equal dropped counts (numpy checks the counts
        # themselves on the blocks above).
        cf = f"--capacity-factor={r.args.capacity_factor}"
        got = []
        for flags in ([cf], [cf, "--ep=2"], [cf, "--tp=2", "--ep=2", "--etp"]):
            tag = "cap-" + "-".join(f.strip("-").replace("=", "") for f in flags)
            res = r.compile_run(path, os.path.join(work, tag), shapes, {"input_ids": ip}, flags)
            rep = json.load(open(os.path.join(res, "moe_report.rank0.json")))
            got.append((" ".join(flags[1:]), r.output(res, "logits"),
                        [l["dropped"] for l in rep["layers"]]))
        _, y1, d1 = got[0]
        for what, y2, d2 in got[1:]:
            err = rel_err(y2, y1)
            if err > RTOL or d1 != d2 or not sum(d1):
                raise RuntimeError(f"{what} vs 1 rank: err {err:.2e}, dropped {d2} vs {d1}")
        return f"dropped per layer {d1}, err {err:.1e}"
    r.case(f"{name}: --capacity-factor {r.args.capacity_factor}, --ep 2 (and with "
           "--tp 2 --etp) == 1 rank", capacity)

    def refused():
        bad = next(e for e in (3, 5, 6, 7) if c["experts"] % e)
        out = os.path.join(work, "refused")
        shutil.rmtree(out, ignore_errors=True)
        p = run([os.path.join(r.args.tools, "parc"), "compile", path, "-o", out,
                 f"--input-shape=input_ids={c['batch']}x{c['seq']}", f"--ep={bad}"],
                r.log, check=False)
        if p.returncode == 0 or "does not fit this model" not in p.stdout or \
                "block_sparse_moe/TopK" not in p.stdout:
            raise RuntimeError(f"--ep {bad} was not refused with the node named")
        if os.path.exists(out):
            raise RuntimeError("a refused compile left its output directory")
        return f"--ep {bad} refused"
    r.case(f"{name}: --ep that does not divide {c['experts']} experts", refused)

    def refused_with(tag, flags, message):
        def check():
            out = os.path.join(work, tag)
            shutil.rmtree(out, ignore_errors=True)
            p = run([os.path.join(r.args.tools, "parc"), "compile", path, "-o", out,
                     f"--input-shape=input_ids={c['batch']}x{c['seq']}"] + flags,
                    r.log, check=False)
            if p.returncode == 0 or message not in p.stdout:
                raise RuntimeError(f"{' '.join(flags)} was not refused")
            if os.path.exists(out):
                raise RuntimeError("a refused compile left its output directory")
            return "refused"
        return check
    r.case(f"{name}: --tp 2 --ep 4 (EP shares the TP ranks)",
           refused_with("mismatched", ["--tp=2", "--ep=4"], "--ep 4 must equal --tp 2"))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--tools", required=True)
    p.add_argument("--generated", required=True, help="generate.py's output directory")
    p.add_argument("--work", required=True)
    p.add_argument("--ep", type=int, nargs="+", default=[2, 4])
    p.add_argument("--capacity-factor", type=float, default=0.75)
    p.add_argument("--only", nargs="*")
    args = p.parse_args()
    os.makedirs(args.work, exist_ok=True)
    gen = load_generator()
    models = sorted(n for n, cfg in gen.MODELS.items() if cfg.experts)
    if args.only:
        models = [m for m in models if m in args.only]
    with open(os.path.join(args.work, "log.txt"), "w") as log:
        r = Runner(args, log)
        check_contrib(r)
        for name in models:
            check_block(r, gen, name, gen.MODELS[name])
            meta = json.load(open(os.path.join(args.generated, name + ".json")))
            check_model(r, name, os.path.join(args.generated, name + ".onnx"), meta)
    print(f"moe (sparse routing, expert parallelism, capacity): "
          f"{r.passed} passed, {r.failed} failed")
    sys.exit(1 if r.failed else 0)


if __name__ == "__main__":
    main()
