"""The golden grid of the workload models: training, inference, serving, MoE, collectives, topology.

Each ``section_*`` puts its entries into a :class:`golden_encode.Entries`; keys name the function
called, by where it lives now, and its arguments (``training.estimate[llama-3.1-70b,h100,1024,...]``).
The grid is small on purpose: a few points per model, each chosen to reach a different branch
(a precision, a parallel degree, ZeRO, recomputation, a chip whose weights live in SRAM, ...).
"""

from __future__ import annotations

import numpy as np
from golden_encode import Entries, args_key

from accelbook import inference as inf
from accelbook import moe
from accelbook import training as tr
from accelbook.inference import serving
from accelbook.network import collectives as co
from accelbook.network import topology as tp

#: (model, chip, n_chips, global batch tokens, seq_len, layout)
TRAINING = [
    ("llama-3.1-70b", "h100", 1024, 2**24, 8192, dict(tp=8, pp=4)),
    ("llama-3.1-70b", "h100", 1024, 2**24, 8192, dict(tp=8, pp=4, vp=2, recompute="full")),
    ("llama-3.1-70b", "h100", 1024, 2**24, 8192, dict(tp=8, pp=1, zero_stage=3, cp=2)),
    ("llama-3.1-70b", "h100", 1024, 2**24, 8192, dict(tp=8, pp=4, precision="fp8", tp_overlap=0.5)),
    ("llama-3.1-70b", "h100", 1024, 2**24, 8192, dict(tp=4, pp=8, microbatch=2, flash_attention=False)),
    ("llama-3.1-405b", "h100", 8192, 2048 * 8192, 8192, dict(tp=8, pp=16)),
    ("llama-3.1-8b", "a100", 64, 2**21, 4096, dict(tp=2, zero_stage=3)),
    ("llama-3.1-70b", "tpu-v5p", 1024, 2**24, 8192, dict(tp=8, pp=4)),
    ("llama-3.1-70b", "b200", 1024, 2**24, 8192, dict(tp=8, pp=2, precision="fp8")),
    ("mixtral-8x7b", "h100", 256, 2**22, 4096, dict(tp=2, ep=8)),
    ("deepseek-v3", "h800", 2048, 15360 * 4096, 4096, dict(pp=16, ep=64, cluster="dgx-h100")),
    ("llama-3.1-70b", None, 1024, 2**24, 8192, dict(tp=8, pp=4, cluster="gb200-nvl72")),
]

#: (model, chip, n_chips, global batch tokens, seq_len), search options
SEARCHES = [
    (("llama-3.1-70b", "h100", 1024, 2**24, 8192), dict(top=5)),
    (("llama-3.1-8b", "tpu-v5p", 64, 2**21, 4096), dict(top=5)),
    (("mixtral-8x7b", "h100", 256, 2**22, 4096), dict(top=3)),
    (("llama-3.1-70b", "h100", 256, 2**22, 8192), dict(top=3, include_unfit=True, precision="fp8")),
]

#: (model, chip, n_chips, batch, input_len, output_len, precision), options
INFERENCE = [
    (("llama-3.1-70b", "h200", 8, 64, 2048, 256, "fp8"), {}),
    (("llama-3.1-70b", "h100", 8, 32, 1024, 1024, "bf16"), dict(tp=4, pp=2)),
    (("llama-3.1-70b", "h100", 8, 256, 4096, 512, "fp8"), dict(kv_precision="bf16", cuda_graphs=False)),
    (("llama-3.1-8b", "a100", 1, 128, 1024, 128, "int8"), {}),
    (("llama-3.1-405b", "b200", 8, 64, 2048, 256, "fp4"), {}),
    (("deepseek-v3", "h200", 16, 128, 4096, 1024, "fp8"), dict(tp=8, pp=2)),
    (("mixtral-8x7b", "h100", 2, 16, 1024, 256, "bf16"), dict(attention="dp")),
    (("llama-3.1-70b", "groq-lpu-v1", 576, 1, 1024, 256, "int8"), dict(tp=8, pp=72)),
    (("llama-3.1-70b", "cerebras-cs3", 4, 1, 1024, 256, "bf16"), {}),
    (("llama-3.1-70b", "tpu-v6e", 8, 32, 2048, 256, "int8"), {}),
    (("llama-3.1-70b", "mi300x", 2, 16, 2048, 256, "fp8"), {}),
]

#: label -> a topology builder call
TOPOLOGIES = {
    "ring(8)": lambda: tp.ring(8),
    "torus((4,4,4))": lambda: tp.torus((4, 4, 4)),
    "torus((4,4,8),twisted)": lambda: tp.torus((4, 4, 8), twisted=True),
    "mesh((4,4))": lambda: tp.mesh((4, 4)),
    "full_mesh(8)": lambda: tp.full_mesh(8),
    "switched(16)": lambda: tp.switched(16),
    "nvl72()": lambda: tp.nvl72(),
    "fat_tree(4,2)": lambda: tp.fat_tree(4, 2),
    "dragonfly(4,2,2)": lambda: tp.dragonfly(4, 2, 2),
    "boardfly()": lambda: tp.boardfly(),
    "tpu_pod((4,4,8),twisted)": lambda: tp.tpu_pod((4, 4, 8), twisted=True),
    "gpu_cluster(2,4)": lambda: tp.gpu_cluster(2, 4, 25e9, 3e-6),
    "hgx_h100()": lambda: tp.hgx_h100(),
    "h100_cluster(4)": lambda: tp.h100_cluster(4),
    "tpu_slice(v5p,(4,4,4))": lambda: tp.tpu_slice("v5p", (4, 4, 4)),
    "tpu_axis(v5e,6)": lambda: tp.tpu_axis("v5e", 6),
    "tpu_multislice(v5p,(4,4,4),2)": lambda: tp.tpu_multislice("v5p", (4, 4, 4), 2),
}


def section_training(g: Entries) -> None:
    for model, chip, n, gbt, s, kw in TRAINING:
        key = args_key("training.estimate", model, chip, n, gbt, s, **kw)
        e = g.call(key, lambda a=(model, chip, n, gbt, s), k=kw: tr.estimate(*a, **k))
        if e is not None:
            g.call(key + ".breakdown()", e.breakdown)
            g.call(key + ".time_to_train(1e12)", lambda e=e: e.time_to_train(1e12))
    for args, kw in SEARCHES:
        g.call(args_key("training.search", *args, **kw), lambda a=args, k=kw: tr.search(*a, **k))
    g.call(args_key("training.scaling", "llama-3.1-70b", "h100", [256, 1024, 4096], 8192, batch_tokens_per_chip=16384),
           lambda: tr.scaling("llama-3.1-70b", "h100", [256, 1024, 4096], 8192, batch_tokens_per_chip=16384))
    g.call(args_key("training.scaling", "llama-3.1-8b", "tpu-v5p", [64, 512], 4096, global_batch_tokens=2**22,
                    layout="best"),
           lambda: tr.scaling("llama-3.1-8b", "tpu-v5p", [64, 512], 4096, global_batch_tokens=2**22, layout="best"))
    g.call("training.waterfall_table", tr.waterfall_table)


def section_inference(g: Entries) -> None:
    for args, kw in INFERENCE:
        g.call(args_key("inference.estimate", *args, **kw), lambda a=args, k=kw: inf.estimate(*a, **k))
    for m, c, p in (("llama-3.1-70b", "groq-lpu-v1", "int8"), ("llama-3.1-405b", "h100", "bf16"),
                    ("deepseek-v3", "b200", "fp4")):
        g.call(args_key("inference.min_chips", m, c, p), lambda a=(m, c, p): inf.min_chips(*a))
    g.call(args_key("inference.sweep", "llama-3.1-8b", "h100", 4, 2048, 512, "bf16", batches=[1, 8, 64]),
           lambda: inf.sweep("llama-3.1-8b", "h100", 4, 2048, 512, "bf16", batches=[1, 8, 64]))
    g.call(args_key("inference.max_throughput", "llama-3.1-70b", "h200", 8, 2048, 256, "fp8", tpot_target_s=0.02),
           lambda: inf.max_throughput("llama-3.1-70b", "h200", 8, 2048, 256, "fp8", tpot_target_s=0.02))
    systems = {"8 x H200": ("h200", 8), "8 x B200": ("b200", 8), "256 x LP30": ("groq-lp30", 256)}
    g.call(args_key("inference.frontier", "llama-3.1-70b", "H200,B200,LP30", 1024, 256, "fp8"),
           lambda: inf.frontier("llama-3.1-70b", systems, 1024, 256, "fp8"))
    g.call(args_key("inference.speculative", "llama-3.1-70b", "llama-3.1-8b", "h200", 8, 32, 2048, 256, gamma=3),
           lambda: inf.speculative("llama-3.1-70b", "llama-3.1-8b", "h200", 8, 32, 2048, 256, gamma=3))
    g.call(args_key("inference.heterogeneous_decode", "llama-3.1-70b", "h100", 8, "groq-lp30", 160, 64, 4096),
           lambda: inf.heterogeneous_decode("llama-3.1-70b", "h100", 8, "groq-lp30", 160, 64, 4096))
    g.call(args_key("inference.disaggregation", "llama-3.1-70b", "h200", 8, 2048, 256, 64),
           lambda: inf.disaggregation("llama-3.1-70b", "h200", 8, 2048, 256, 64))
    for args in (("llama-3.1-70b", "h200", 8), ("llama-3.1-8b", "h100", 1, "bf16")):
        g.call(args_key("inference.step_cost", *args), lambda a=args: inf.step_cost(*a))


def _serving_numbers(r) -> dict:
    return {"summary": r.summary(), "ttft_s": r.ttft_s, "goodput(1.0,0.05)": r.goodput(1.0, 0.05)}


def section_serving(g: Entries) -> None:
    cost = inf.StepCost(fixed_s=0.0, weight_read_s=0.015, per_token_s=0.05e-3, comm_per_token_s=0.0,
                        decode_per_ctx_token_s=2e-8, prefill_attn_per_token_s=0.05e-3, max_batch=64,
                        max_kv_tokens=200_000)
    workloads = {
        "workload(300,4.0,seed=0)": serving.workload(300, 4.0, seed=0),
        "workload(300,6.0,bursty,lognormal,seed=1)": serving.workload(
            300, 6.0, arrival="bursty", burstiness=2.0, prompt=("lognormal", 512, 0.5, 4096),
            output=("lognormal", 128, 0.7), seed=1),
    }
    runs = [("workload(300,4.0,seed=0)", {}), ("workload(300,4.0,seed=0)", dict(chunk_tokens=128)),
            ("workload(300,6.0,bursty,lognormal,seed=1)", dict(n_instances=2)),
            ("workload(300,6.0,bursty,lognormal,seed=1)", dict(kv_policy="paged")),
            ("workload(300,6.0,bursty,lognormal,seed=1)", dict(disaggregated=True, n_decode=2,
                                                                kv_bytes_per_token=131072.0, link_bytes_per_s=50e9))]
    for label, kw in runs:
        g.call(args_key("serving.simulate", label, **kw), lambda w=workloads[label], k=kw: serving.simulate(w, cost, **k),
               post=_serving_numbers)
    sc = inf.step_cost("llama-3.1-70b", "h200", 8)
    g.call(args_key("serving.simulate", "workload(300,4.0,seed=0)", "step_cost[llama-3.1-70b,h200,8]"),
           lambda: serving.simulate(workloads["workload(300,4.0,seed=0)"], sc), post=_serving_numbers)
    g.call(args_key("serving.load_sweep", "cost", [1.0, 4.0, 8.0], n_requests=200, seed=0),
           lambda: serving.load_sweep(cost, [1.0, 4.0, 8.0], n_requests=200, seed=0))


def _routing_numbers(r) -> dict:
    return {"summary": r.summary(), "loads": r.loads, "dropped": r.dropped, "imbalance": r.imbalance}


def section_moe(g: Entries) -> None:
    cases = [((1024, 64, 2), dict(seed=0)),
             ((2048, 64, 4), dict(skew=1.0, capacity_factor=1.25, n_batches=3, seed=3)),
             ((2048, 64, 4), dict(skew=1.2, bias_rate=0.01, drift=2.0, n_batches=4, seed=5)),
             ((4096, 256, 8), dict(n_groups=8, node_limit=4, n_shared=1, seed=6))]
    routings = {}
    for args, kw in cases:
        key = args_key("moe.simulate_routing", *args, **kw)
        routings[key] = g.call(key, lambda a=args, k=kw: moe.simulate_routing(*a, **k), post=_routing_numbers)
    g.call(args_key("moe.expected_load_stats", 4096, 256, 8), lambda: moe.expected_load_stats(4096, 256, 8))
    r = routings[args_key("moe.simulate_routing", 2048, 64, 4, skew=1.0, capacity_factor=1.25, n_batches=3, seed=3)]
    skewed = 1.0 / np.arange(1, 65)
    for label, kw in (("contiguous", {}), ("replicate_hot", dict(scheme="replicate_hot", hot=8, replicas=3, loads=skewed))):
        p = moe.place_experts(64, 8, **kw)
        key = args_key("moe.dispatch_traffic", "routing(2048,64,4,skew=1)", f"place_experts(64,8,{label})", 14336.0)
        traffic = g.call(key, lambda p=p: moe.dispatch_traffic(r, p, 14336.0))
        g.call(args_key("moe.chip_loads", "routing(2048,64,4,skew=1)", f"place_experts(64,8,{label})"),
               lambda p=p: moe.chip_loads(r, p))
        for net, topo in (("switched(8)", tp.switched(8)), ("full_mesh(8)", tp.full_mesh(8))):
            t = moe.equal_injection(topo, 400e9, 1e-6)
            g.call(args_key("moe.all_to_all_time", key, f"equal_injection({net},400e9)"),
                   lambda t=t, d=traffic["demand"]: moe.all_to_all_time(d, t))
    nets = {"torus 4x4x4": moe.equal_injection(tp.torus((4, 4, 4)), 400e9, 1e-6),
            "fat tree k=8": moe.equal_injection(tp.fat_tree(8), 400e9, 1e-6),
            "switched 64": moe.equal_injection(tp.switched(64), 400e9, 1e-6)}
    grid = [2.0**k for k in range(0, 13, 3)]
    for kw in (dict(), dict(cae=True), dict(experts_per_chip=4.0)):
        g.call(args_key("moe.crossover_sweep", "3 networks", "2^0..2^12", 8, 14336.0, **kw),
               lambda k=kw: moe.crossover_sweep(nets, grid, 8, 14336.0, **k))


def _topology_numbers(t) -> dict:
    return {"name": t.name, "kind": t.kind, "n_endpoints": t.n_endpoints, "n_nodes": t.n_nodes,
            "n_links": t.n_links, "link_bw_bytes_per_s": t.link_bw_bytes_per_s, "hop_latency_s": t.hop_latency_s,
            "efficiency": t.efficiency, "edges_checksum": int((t.edges() * [1, 3]).sum())}


def section_topology(g: Entries) -> None:
    for label, make in TOPOLOGIES.items():
        t = g.call(args_key("topology.build", label), make, post=_topology_numbers)
        if t is None:
            continue
        g.call(args_key("topology.hop_stats", label), lambda t=t: tp.hop_stats(t))
        g.call(args_key("topology.bisection_links", label), lambda t=t: tp.bisection_links(t))
        g.call(args_key("topology.bisection_links_analytic", label), lambda t=t: tp.bisection_links_analytic(t))
        if t.n_endpoints <= 128:
            g.call(args_key("topology.link_loads", label, "permutation", seed=3),
                   lambda t=t: tp.link_loads(t, "permutation", seed=3))
            g.call(args_key("topology.all_to_all_load", label), lambda t=t: tp.all_to_all_load(t))
    g.call(args_key("topology.dor_link_loads", "torus((4,4,4))"), lambda: tp.dor_link_loads(tp.torus((4, 4, 4))))
    for dims, wrap in (((4, 4, 4), True), ((5, 7), True), ((3, 4, 5), (True, False, True))):
        g.call(args_key("topology.torus_mean_hops", dims, wrap), lambda a=(dims, wrap): tp.torus_mean_hops(*a))
        g.call(args_key("topology.torus_diameter", dims, wrap), lambda a=(dims, wrap): tp.torus_diameter(*a))
    for dims in ((4, 4, 4), (16, 16, 16)):
        g.call(args_key("topology.torus_all_to_all_max_load", dims), lambda d=dims: tp.torus_all_to_all_max_load(d))


#: the systems on which every algorithm is tried (which ones each rejects is behaviour too)
ALGORITHM_SYSTEMS = ("hgx_h100()", "h100_cluster(4)", "torus((4,4,4))")


def section_collectives(g: Entries) -> None:
    systems = ("hgx_h100()", "h100_cluster(4)", "tpu_slice(v5p,(4,4,4))", "tpu_axis(v5e,6)",
               "tpu_multislice(v5p,(4,4,4),2)", "ring(8)", "torus((4,4,4))", "fat_tree(4,2)", "dragonfly(4,2,2)")
    for label in systems:
        topo = TOPOLOGIES[label]()
        for c in co.COLLECTIVES:
            for size in (1024.0, 2.0**20, 2.0**30):
                g.call(args_key("collectives.estimate", c, size, label), lambda c=c, s=size, t=topo: co.estimate(c, s, t))
        g.call(args_key("collectives.sweep", "all_reduce", label), lambda t=topo: co.sweep("all_reduce", t))
        for alg in co.ALGORITHMS if label in ALGORITHM_SYSTEMS else ():
            g.call(args_key("collectives.estimate", "all_reduce", 2.0**24, label, algorithm=alg),
                   lambda t=topo, a=alg: co.estimate("all_reduce", 2.0**24, t, a))
    for c in co.COLLECTIVES:
        for p in (2, 64):
            g.call(args_key("collectives.bus_factor", c, p), lambda c=c, p=p: co.bus_factor(c, p))
