"""Paper-and-pencil problems of notebook 05: MoE routing loads and all-to-all traffic (see accelbook.ui.course.hand)."""

from __future__ import annotations

import math

from accelbook.costs.experts import touched_expert_share
from accelbook.moe import MESSAGE_OVERHEAD_S, crossover_sweep, equal_injection, simulate_routing, uniform_demand
from accelbook.moe.router import expected_load_stats
from accelbook.network.builders import torus
from accelbook.specs.models import get_model
from accelbook.ui.course.hand import Problem, fmt

_LOAD = "accelbook.moe.router.expected_load_stats (balls into bins: a load is Binomial(T, k/E))"
_COPIES = "accelbook.moe.alltoall.uniform_demand (expected distinct chips of k picks without replacement)"
_TOUCHED = "accelbook.costs.experts.touched_expert_share (the occupancy expectation of balls into bins)"


def _dsv3(**extra):
    m = get_model("deepseek-v3")
    return {"E": m.moe.n_experts, "k": m.moe.top_k, "d": m.d_model, **extra}


def _miss(E, per, k):
    """Chance that k distinct picks among E experts avoid one group of ``per``: C(E-per, k) / C(E, k)."""
    return math.prod((E - per - i) / (E - i) for i in range(k))


def _miss_line(E, per, k):
    factors = " × ".join(f"{E - per - i}/{E - i}" for i in range(k))
    return f"miss = C({E - per}, {k}) ÷ C({E}, {k}) = {factors} = {fmt(_miss(E, per, k))}"


def _groups(E, per, k):
    return E // per * (1 - _miss(E, per, k))


def _model_groups(E, per, k):
    """Distinct groups a token reaches, from the package: per-pair demand × groups, one token of 1 byte."""
    G = E // per
    return float(uniform_demand(G, 1.0, k, 1.0, per)[0, 1]) * G


def _sd_steps(g):
    q = g["k"] / g["E"]
    return [f"q = k ÷ E = {g['k']} ÷ {g['E']} = {fmt(q)}",
            f"variance = T·q·(1 − q) = {fmt(g['T'])} × {fmt(q)} × {fmt(1 - q)} = {fmt(g['T'] * q * (1 - q))}",
            f"standard deviation = √{fmt(g['T'] * q * (1 - q))} = {fmt(math.sqrt(g['T'] * q * (1 - q)))} assignments"]


def _dispatch(g):
    per = g["E"] // g["C"]
    copies = g["C"] * (1 - _miss(g["E"], per, g["k"]))
    return per, copies, g["tpc"] * copies * (g["C"] - 1) / g["C"] * g["d"] * g["b"]


def _dispatch_steps(g):
    per, copies, total = _dispatch(g)
    return [_miss_line(g["E"], per, g["k"]),
            f"distinct chips per token = C·(1 − miss) = {g['C']} × (1 − {fmt(_miss(g['E'], per, g['k']))}) = "
            f"{fmt(copies)}",
            f"bytes sent = tokens × copies × (C − 1)/C × d × b = {g['tpc']} × {fmt(copies)} × {g['C'] - 1}/{g['C']} × "
            f"{fmt(g['d'])} × {g['b']} = {fmt(total)} bytes ({fmt(total / 1e6)} MB)"]


def _cap_sigmas(g):
    mean = g["T"] * g["k"] / g["E"]
    sd = math.sqrt(mean * (1 - g["k"] / g["E"]))
    cap = math.ceil(g["c"] * mean)
    return mean, sd, cap, (cap - mean) / sd


def _model_cap_sigmas(g):
    s = expected_load_stats(g["T"], g["E"], g["k"])
    cap = simulate_routing(g["T"], g["E"], g["k"], capacity_factor=g["c"], seed=0).capacity
    return (cap - s["mean"]) / math.sqrt(s["var"])


def _cap_steps(g):
    mean, sd, cap, z = _cap_sigmas(g)
    return [f"mean = T·k ÷ E = {fmt(g['T'])} × {g['k']} ÷ {g['E']} = {fmt(mean)}",
            f"standard deviation = √(mean × (1 − k/E)) = √({fmt(mean)} × {fmt(1 - g['k'] / g['E'])}) = {fmt(sd)}",
            f"cap = ⌈c × mean⌉ = ⌈{g['c']} × {fmt(mean)}⌉ = {cap}",
            f"(cap − mean) ÷ sd = ({cap} − {fmt(mean)}) ÷ {fmt(sd)} = {fmt(z)} standard deviations"]


def _half_batch(g):
    return math.ceil(math.log(1 - g["share"]) / math.log(1 - g["k"] / g["E"]))


def _model_half_batch(g):
    T = 1
    while touched_expert_share(g["k"], g["E"], T) < g["share"]:
        T += 1
    return T


def _a2a(g):
    C = g["nx"] * g["ny"] * g["nz"]
    diam = g["nx"] // 2 + g["ny"] // 2 + g["nz"] // 2
    r = g["k"] * (C - 1) / C
    peers = (C - 1) * (1 - (1 - 1 / (C - 1)) ** r)
    return C, diam, r, peers, 2 * (diam * g["alpha_us"] + peers * g["o_us"])


def _a2a_steps(g):
    C, diam, r, peers, t = _a2a(g)
    return [f"chips C = {g['nx']} × {g['ny']} × {g['nz']} = {C}; diameter = {g['nx'] // 2} + {g['ny'] // 2} + "
            f"{g['nz'] // 2} = {diam} hops",
            f"remote copies r = k × (C − 1)/C = {g['k']} × {C - 1}/{C} = {fmt(r)}",
            f"peers = (C − 1)·(1 − (1 − 1/(C − 1))^r) = {C - 1} × (1 − (1 − 1/{C - 1})^{fmt(r)}) = {fmt(peers)}",
            f"latency = 2 × (diameter × α + peers × o) = 2 × ({diam} × {fmt(g['alpha_us'])} + {fmt(peers)} × "
            f"{fmt(g['o_us'])}) = {fmt(t)} µs"]


def _model_a2a(g):
    topo = equal_injection(torus((g["nx"], g["ny"], g["nz"])), 600e9, g["alpha_us"] * 1e-6)
    C = topo.n_endpoints
    df = crossover_sweep({"torus": topo}, [1.0], g["k"], g["d"] * 2, g["E"] / C, message_overhead_s=g["o_us"] * 1e-6)
    return float(df["latency_s"].iloc[0]) * 1e6


PROBLEMS: list[Problem] = [
    Problem(
        "hand-nb05-mean-load", "05", "hand",
        "DeepSeek-V3 sends each token to k = {k} of its E = {E} routed experts. With uniform routing, what is the "
        "mean load of one expert (token-to-expert assignments) over a batch of T = {T:,} tokens?",
        lambda: _dsv3(T=4096),
        lambda g: [f"mean load = T × k ÷ E = {fmt(g['T'])} × {g['k']} ÷ {g['E']} = {fmt(g['T'] * g['k'] / g['E'])} "
                   "assignments"],
        lambda g: g["T"] * g["k"] / g["E"],
        lambda g: expected_load_stats(g["T"], g["E"], g["k"])["mean"],
        "assignments", _LOAD, 0.0),
    Problem(
        "hand-nb05-load-sd", "05", "hand",
        "Under uniform routing each of T = {T:,} tokens picks a given expert with probability k/E, with k = {k} and "
        "E = {E} (DeepSeek-V3). What is the standard deviation of one expert's load?",
        lambda: _dsv3(T=4096),
        _sd_steps,
        lambda g: math.sqrt(g["T"] * g["k"] / g["E"] * (1 - g["k"] / g["E"])),
        lambda g: math.sqrt(expected_load_stats(g["T"], g["E"], g["k"])["var"]),
        "assignments", _LOAD),
    Problem(
        "hand-nb05-nodes-per-token", "05", "hand",
        "DeepSeek-V3's E = {E} routed experts sit on {G} nodes of {per} experts. A token picks k = {k} distinct "
        "experts uniformly at random, with no node limit. How many distinct nodes does it reach on average?",
        lambda: _dsv3(G=8, per=32),
        lambda g: [_miss_line(g["E"], g["per"], g["k"]),
                   f"nodes = G × (1 − miss) = {g['G']} × (1 − {fmt(_miss(g['E'], g['per'], g['k']))}) = "
                   f"{fmt(_groups(g['E'], g['per'], g['k']))} nodes"],
        lambda g: _groups(g["E"], g["per"], g["k"]),
        lambda g: _model_groups(g["E"], g["per"], g["k"]),
        "nodes", _COPIES),
    Problem(
        "hand-nb05-dispatch-bytes", "05", "hand",
        "C = {C} chips hold DeepSeek-V3's E = {E} experts, the same number on each. Each chip holds {tpc} tokens, and "
        "each token picks k = {k} experts uniformly. Dispatch sends a token's hidden vector (d = {d:,} values, "
        "{b} byte each in FP8) once to every distinct chip that holds one of its experts; the copy to its own chip "
        "stays local. How many bytes does one chip send?",
        lambda: _dsv3(C=64, tpc=64, b=1),
        _dispatch_steps,
        lambda g: _dispatch(g)[2],
        lambda g: float(uniform_demand(g["C"], g["tpc"], g["k"], g["d"] * g["b"], g["E"] / g["C"]).sum(axis=1)[0]),
        "bytes", _COPIES),
    Problem(
        "hand-nb05-touched-experts", "05", "hand",
        "A decode step of DeepSeek-V3 routes a batch of T = {T} tokens, each to k = {k} of E = {E} experts, uniformly. "
        "How many distinct experts of one MoE layer does the batch touch on average (so their weights must be read)?",
        lambda: _dsv3(T=32),
        lambda g: [f"one token misses a given expert with probability 1 − k/E = 1 − {g['k']}/{g['E']} = "
                   f"{fmt(1 - g['k'] / g['E'])}",
                   f"share touched = 1 − {fmt(1 - g['k'] / g['E'])}^{g['T']} = "
                   f"{fmt(1 - (1 - g['k'] / g['E']) ** g['T'])}",
                   f"experts touched = {g['E']} × {fmt(1 - (1 - g['k'] / g['E']) ** g['T'])} = "
                   f"{fmt(g['E'] * (1 - (1 - g['k'] / g['E']) ** g['T']))}"],
        lambda g: g["E"] * (1 - (1 - g["k"] / g["E"]) ** g["T"]),
        lambda g: g["E"] * touched_expert_share(g["k"], g["E"], g["T"]),
        "experts", _TOUCHED),
    Problem(
        "exam-nb05-capacity-sigmas", "05", "exam",
        "A capacity factor c = {c} caps each expert at ⌈c·T·k/E⌉ assignments a batch. For DeepSeek-V3 (E = {E}, "
        "k = {k}) and T = {T:,} tokens with uniform routing, how many standard deviations above the mean load is "
        "the cap? Is dropping then common or rare?",
        lambda: _dsv3(T=4096, c=1.25),
        _cap_steps,
        lambda g: _cap_sigmas(g)[3],
        _model_cap_sigmas,
        "standard deviations", "accelbook.moe.router.simulate_routing (capacity) and " + _LOAD),
    Problem(
        "exam-nb05-16-nodes-factor", "05", "exam",
        "DeepSeek-V3's E = {E} experts (top-{k}, uniform routing) are spread over {G2} nodes of {per2} instead of "
        "{G1} nodes of {per1}. By what factor does the mean number of nodes a token reaches grow, and so its "
        "inter-node copies?",
        lambda: _dsv3(G1=8, per1=32, G2=16, per2=16),
        lambda g: [_miss_line(g["E"], g["per1"], g["k"]),
                   f"nodes on {g['G1']} = {g['G1']} × (1 − miss) = {fmt(_groups(g['E'], g['per1'], g['k']))}",
                   _miss_line(g["E"], g["per2"], g["k"]),
                   f"nodes on {g['G2']} = {g['G2']} × (1 − miss) = {fmt(_groups(g['E'], g['per2'], g['k']))}",
                   f"factor = {fmt(_groups(g['E'], g['per2'], g['k']))} ÷ {fmt(_groups(g['E'], g['per1'], g['k']))} = "
                   f"{fmt(_groups(g['E'], g['per2'], g['k']) / _groups(g['E'], g['per1'], g['k']))}"],
        lambda g: _groups(g["E"], g["per2"], g["k"]) / _groups(g["E"], g["per1"], g["k"]),
        lambda g: _model_groups(g["E"], g["per2"], g["k"]) / _model_groups(g["E"], g["per1"], g["k"]),
        "×", _COPIES),
    Problem(
        "exam-nb05-tokens-for-10pct-sd", "05", "exam",
        "With uniform routing over E = {E} experts at top-{k} (DeepSeek-V3), how many tokens T must a batch hold for "
        "the standard deviation of an expert's load to be {pct} % of its mean?",
        lambda: _dsv3(pct=10),
        lambda g: [f"q = k ÷ E = {fmt(g['k'] / g['E'])}; sd ÷ mean = √(T·q·(1 − q)) ÷ (T·q) = √((1 − q) ÷ (T·q))",
                   f"T = (1 − q) ÷ (q × {fmt(g['pct'] / 100)}²) = {fmt(1 - g['k'] / g['E'])} ÷ "
                   f"({fmt(g['k'] / g['E'])} × {fmt((g['pct'] / 100) ** 2)}) = "
                   f"{fmt((1 - g['k'] / g['E']) / (g['k'] / g['E'] * (g['pct'] / 100) ** 2))} tokens"],
        lambda g: (1 - g["k"] / g["E"]) / (g["k"] / g["E"] * (g["pct"] / 100) ** 2),
        lambda g: (lambda s: s["var"] / (s["mean"] ** 2 * (g["pct"] / 100) ** 2))(expected_load_stats(1, g["E"], g["k"])),
        "tokens", _LOAD),
    Problem(
        "exam-nb05-half-experts-batch", "05", "exam",
        "A DeepSeek-V3 decode step (E = {E} experts, top-{k}, uniform routing) reads the weights of every expert its "
        "batch touches. What is the smallest whole batch T whose tokens touch at least {share:.0%} of the experts on "
        "average?",
        lambda: _dsv3(share=0.5),
        lambda g: [f"1 − (1 − k/E)^T ≥ {g['share']}  ⇒  T ≥ ln(1 − {g['share']}) ÷ ln(1 − {g['k']}/{g['E']}) = "
                   f"{fmt(math.log(1 - g['share']))} ÷ {fmt(math.log(1 - g['k'] / g['E']))} = "
                   f"{fmt(math.log(1 - g['share']) / math.log(1 - g['k'] / g['E']))}",
                   f"smallest whole batch T = {_half_batch(g)} tokens"],
        _half_batch,
        _model_half_batch,
        "tokens", _TOUCHED, 0.0),
    Problem(
        "exam-nb05-a2a-latency-torus", "05", "exam",
        "An {nx}×{ny}×{nz} torus (wrap-around links) runs DeepSeek-V3's expert all-to-all at 1 token per chip: each "
        "token sends k = {k} copies, each to a random other chip. Dispatch and combine each pay the diameter × "
        "α = {alpha_us:g} µs a hop, plus o = {o_us:g} µs for each peer a chip sends to, where peers = "
        "(C − 1)·(1 − (1 − 1/(C − 1))^r) for r = k·(C − 1)/C remote copies. What is the latency part of dispatch "
        "plus combine, in µs?",
        lambda: _dsv3(nx=8, ny=8, nz=16, alpha_us=1.0, o_us=MESSAGE_OVERHEAD_S * 1e6),
        _a2a_steps,
        lambda g: _a2a(g)[4],
        _model_a2a,
        "µs", "accelbook.moe.alltoall.crossover_sweep (latency part; the α-β model with per-message overhead)"),
]
