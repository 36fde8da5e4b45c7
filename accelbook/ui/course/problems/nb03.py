"""Paper-and-pencil problems of notebook 03: torus hops, ring collectives with alpha and beta, bus bandwidth, and
NCCL's protocols (see accelbook.ui.course.hand)."""

from __future__ import annotations

import math

from accelbook.network import topology as tp
from accelbook.network.collectives import estimate, ring_bytes_per_link, ring_latency_s, ring_time_s
from accelbook.specs.fabrics import fabrics
from accelbook.ui.course.hand import Problem, fmt

_GEOMETRY = "accelbook.network.geometry"
_RING = "Patarasuk and Yuan 2009; nccl-tests doc/PERFORMANCE.md"
_NCCL = "NCCL src/graph/tuning.cc; nccl-tests doc/PERFORMANCE.md"


def _dims(*dims):
    return lambda: {"dims": dims, "shape": _shape(dims), "N": math.prod(dims)}


def _diameter_steps(g):
    parts = " + ".join(f"⌊{k}/2⌋" for k in g["dims"])
    return [f"diameter = Σ ⌊k/2⌋ over the axes = {parts} = {' + '.join(str(k // 2) for k in g['dims'])} = "
            f"{sum(k // 2 for k in g['dims'])} hops"]


def _shape(dims):
    return "×".join(map(str, dims))


def _halves(dims):
    return " + ".join(str(k // 2) for k in dims) + f" = {sum(k // 2 for k in dims)}"


def _mean_hops(g):
    return sum(k / 4 for k in g["dims"]) * g["N"] / (g["N"] - 1)


def _mean_steps(g):
    ring = " + ".join(f"{k}/4" for k in g["dims"])
    return [f"mean distance on a ring of even k, over all ordered pairs of positions: k/4; the axes add: {ring} = "
            f"{fmt(sum(k / 4 for k in g['dims']))}",
            f"over pairs of distinct chips: × N/(N − 1) = × {g['N']:,}/{g['N'] - 1:,} = {fmt(_mean_hops(g))} hops"]


def _a2a_load(g):
    return max(g["N"] * (k / 4) / 2 for k in g["dims"])


def _a2a_steps(g):
    k = max(g["dims"])
    return ["on an axis of k chips (a ring) every link carries N·m/2 pair-messages, m = k/4 the mean ring distance",
            f"the longest axis, k = {k}: {g['N']:,} × {fmt(k / 4)} ÷ 2 = {fmt(_a2a_load(g))} messages on each of its links"]


def _nvlink():
    f = fabrics()["nvlink4"]
    return {"B": f["link_bw_bytes_per_s"] / 1e9, "eta": f["efficiency"], "alpha": f["hop_latency_s"] * 1e6,
            "p": 8, "S": 2**30, "nvls": f["in_network_efficiency"],
            "eta_pct": 100 * f["efficiency"], "nvls_pct": 100 * f["in_network_efficiency"]}


def _ring_t_ms(g):
    return (2 * (g["p"] - 1) * g["alpha"] * 1e-6 + 2 * (g["p"] - 1) / g["p"] * g["S"] / (g["eta"] * g["B"] * 1e9)) * 1e3


def _ring_steps(g):
    lat = 2 * (g["p"] - 1) * g["alpha"]
    byt = 2 * (g["p"] - 1) / g["p"] * g["S"]
    return [f"usable link rate ηB = {g['eta']} × {fmt(g['B'])} GB/s = {fmt(g['eta'] * g['B'])} GB/s",
            f"latency = 2(p − 1)·α = 2 × {g['p'] - 1} × {fmt(g['alpha'])} µs = {fmt(lat)} µs",
            f"bytes per link = 2(p − 1)/p · S = 2 × {g['p'] - 1}/{g['p']} × {g['S']:,} = {fmt(byt)} bytes, taking "
            f"{fmt(byt / (g['eta'] * g['B'] * 1e9) * 1e3)} ms",
            f"t = {fmt(lat / 1e3)} + {fmt(byt / (g['eta'] * g['B'] * 1e9) * 1e3)} = {fmt(_ring_t_ms(g))} ms"]


def _ring_model(g):
    return ring_time_s(2, g["S"], g["p"], g["alpha"] * 1e-6, g["eta"] * g["B"] * 1e9) * 1e3


def _node(nvls=False):
    return tp.hgx_h100(nvls=nvls)


def _ll():
    f = fabrics()["nvlink4"]
    ll = next(p for p in f["protocols"] if p.name == "LL")
    return {"p": 8, "base": ll.base_latency_s * 1e6, "step": ll.step_latency_s * 1e6,
            "cap": min(ll.max_busbw_bytes_per_s, f["link_bw_bytes_per_s"] * f["efficiency"] * ll.bandwidth_share) / 1e9}


def _ll_given(S):
    return lambda: {**_ll(), "S": S, "KiB": S / 1024, "MiB": S / 2**20}


def _ll_parts(g):
    lat = g["base"] + 2 * (g["p"] - 1) * g["step"]
    bw = 2 * (g["p"] - 1) / g["p"] * g["S"] / (g["cap"] * 1e9) * 1e6
    return lat, bw


def _ll_steps(g):
    lat, bw = _ll_parts(g)
    return [f"latency = fixed + 2(p − 1) steps × step = {fmt(g['base'])} + {2 * (g['p'] - 1)} × {fmt(g['step'])} = "
            f"{fmt(lat)} µs",
            f"bytes = 2(p − 1)/p · S = {fmt(2 * (g['p'] - 1) / g['p'] * g['S'])} bytes at {fmt(g['cap'])} GB/s = "
            f"{fmt(bw)} µs",
            f"t = {fmt(lat)} + {fmt(bw)} = {fmt(lat + bw)} µs"]


def _nvls_ratio(g):
    p = g["p"]
    return g["nvls"] * (p / (p + 1)) * 2 * (p - 1) / p


def _nvls_steps(g):
    p = g["p"]
    return [f"ring: each link carries 2(p − 1)/p · S, so busbw = ηB = {fmt(g['eta'] * g['B'])} GB/s",
            f"NVLS: each link carries S(1 + 1/p) at {g['nvls']} of ηB: algbw = p/(p + 1) × {g['nvls']} × ηB = "
            f"{fmt(p / (p + 1) * g['nvls'] * g['eta'] * g['B'])} GB/s",
            f"busbw = algbw × 2(p − 1)/p = {fmt(_nvls_ratio(g) * g['eta'] * g['B'])} GB/s",
            f"ratio = {fmt(_nvls_ratio(g) * g['eta'] * g['B'])} ÷ {fmt(g['eta'] * g['B'])} = {fmt(_nvls_ratio(g))}, "
            "not 2: every GPU still sends its whole buffer and receives the whole result"]


def _nvls_model(g):
    ring = estimate("all_reduce", 64e9, _node(False), "ring").busbw_bytes_per_s
    return estimate("all_reduce", 64e9, _node(True), "nvls").busbw_bytes_per_s / ring


def _ici():
    f = fabrics()["ici-v5p-v6e"]
    return {"alpha": f["hop_latency_s"] * 1e6, "k": 4, "S": 64 * 1024}


def _ici_steps(g):
    d = g["k"] // 2
    return [f"each axis is a ring of {g['k']}: ⌊{g['k']}/2⌋ = {d} hops across; three axes",
            f"latency = 2 passes × 3 axes × {d} hops × {fmt(g['alpha'])} µs = {fmt(2 * 3 * d * g['alpha'])} µs",
            f"{g['S']:,} bytes over ICI links of tens of GB/s take well under 1 µs: latency-bound"]


def _crossover(g):
    return g["p"] * g["alpha"] * 1e-6 * g["eta"] * g["B"] * 1e9 / 1e6


def _crossover_model(g):
    bw = g["eta"] * g["B"] * 1e9
    return ring_latency_s(2, g["p"], g["alpha"] * 1e-6) / (ring_bytes_per_link(2, 1.0, g["p"]) / bw) / 1e6


PROBLEMS: list[Problem] = [
    Problem(
        "hand-nb03-torus-diameter-8x16x16", "03", "hand",
        "A TPU slice of {N:,} chips is an {shape} torus with wraparound on every axis. What is its diameter, the most "
        "hops between two chips?",
        _dims(8, 16, 16), _diameter_steps, lambda g: sum(k // 2 for k in g["dims"]),
        lambda g: tp.torus_diameter(g["dims"]), "hops", f"{_GEOMETRY}.torus_diameter", 0.0),
    Problem(
        "hand-nb03-torus-mean-hops-8x8x16", "03", "hand",
        "An {shape} torus with wraparound holds {N:,} chips. What is the mean number of hops between two distinct chips, "
        "on shortest paths?",
        _dims(8, 8, 16), _mean_steps, _mean_hops, lambda g: tp.torus_mean_hops(g["dims"]),
        "hops", f"{_GEOMETRY}.torus_mean_hops"),
    Problem(
        "hand-nb03-ring-busbw-h100", "03", "hand",
        "In an 8-GPU H100 node each NVLink port carries {B:,.0f} GB/s per direction, and NCCL reaches {eta_pct:.0f} % of "
        "line rate. What bus bandwidth does a large ring all-reduce reach?",
        _nvlink,
        lambda g: ["a bandwidth-bound ring's busbw equals the usable link rate, whatever p",
                   f"busbw = η·B = {g['eta']} × {fmt(g['B'])} = {fmt(g['eta'] * g['B'])} GB/s"],
        lambda g: g["eta"] * g["B"],
        lambda g: estimate("all_reduce", 64e9, _node(False), "ring").busbw_bytes_per_s / 1e9,
        "GB/s", f"accelbook.network.collectives.estimate; {_NCCL}"),
    Problem(
        "hand-nb03-ring-allreduce-1gib", "03", "hand",
        "A ring all-reduce of S = {S:,} bytes (1 GiB) runs over p = {p} H100s. Each step costs α = {alpha:.1f} µs; "
        "each link carries {B:,.0f} GB/s per direction, of which NCCL reaches {eta_pct:.0f} %. How long does it take?",
        _nvlink, _ring_steps, _ring_t_ms, _ring_model, "ms", f"accelbook.network.collectives.ring_time_s; {_RING}"),
    Problem(
        "hand-nb03-tiny-allreduce-ll", "03", "hand",
        "NCCL runs an all-reduce of {KiB:.0f} KiB over {p} H100s as a ring in its LL protocol: a fixed {base:.1f} µs, "
        "{step:.1f} µs for each of the ring's 2(p − 1) steps, and at most {cap:.0f} GB/s of bus bandwidth. What time "
        "does the model give?",
        _ll_given(8192), _ll_steps, lambda g: sum(_ll_parts(g)),
        lambda g: estimate("all_reduce", g["S"], _node(False), "ring").time_s * 1e6,
        "µs", f"accelbook.network.collectives.estimate; {_NCCL}"),
    Problem(
        "hand-nb03-a2a-load-8x8x16", "03", "hand",
        "Every chip of an {shape} torus ({N:,} chips, wraparound) sends one message to every other chip, on shortest "
        "paths. How many messages cross the busiest link?",
        _dims(8, 8, 16), _a2a_steps, _a2a_load, lambda g: tp.torus_all_to_all_max_load(g["dims"]),
        "messages", f"{_GEOMETRY}.torus_all_to_all_max_load", 0.0),
    Problem(
        "exam-nb03-latency-share-1mib", "03", "exam",
        "A {MiB:.0f} MiB ({S:,} bytes) all-reduce on {p} H100s (NVLS off) still runs as a ring in NCCL's LL protocol: "
        "a fixed {base:.1f} µs, {step:.1f} µs a step over 2(p − 1) steps, at most {cap:.0f} GB/s of bus bandwidth. "
        "What share of its time is latency? Is a megabyte large on NVLink?",
        _ll_given(2**20),
        lambda g: [*_ll_steps(g), f"latency share = {fmt(_ll_parts(g)[0])} ÷ {fmt(sum(_ll_parts(g)))} = "
                   f"{fmt(100 * _ll_parts(g)[0] / sum(_ll_parts(g)))} %: half latency, so not large"],
        lambda g: 100 * _ll_parts(g)[0] / sum(_ll_parts(g)),
        lambda g: 100 * (lambda e: e.latency_s / e.time_s)(estimate("all_reduce", g["S"], _node(False))),
        "%", f"accelbook.network.collectives.estimate; {_NCCL}"),
    Problem(
        "exam-nb03-nvls-over-ring", "03", "exam",
        "On {p} H100s (NVLink {B:,.0f} GB/s per direction, NCCL at {eta_pct:.0f} % of it), NVLink SHARP reduces in the switch "
        "at {nvls_pct:.0f} % of the usable rate, but each GPU's link still carries S(1 + 1/p) each way. By what factor "
        "does NVLS raise the bus bandwidth of a large all-reduce over a ring? Why not 2?",
        _nvlink, _nvls_steps, _nvls_ratio, _nvls_model, "×", f"accelbook.network.collectives.estimate; {_NCCL}"),
    Problem(
        "exam-nb03-v5p-small-allreduce", "03", "exam",
        "A {S:,}-byte (64 KiB) all-reduce runs dimension by dimension on a TPU v5p {k}×{k}×{k} slice (wraparound, ICI links "
        "at {alpha:.0f} µs a hop): a reduce-scatter along each axis, then an all-gather back. How much of its time is "
        "latency, and is it latency- or bandwidth-bound?",
        _ici, _ici_steps, lambda g: 2 * 3 * (g["k"] // 2) * g["alpha"],
        lambda g: estimate("all_reduce", g["S"], tp.tpu_slice("v5p", (g["k"],) * 3)).latency_s * 1e6,
        "µs", f"accelbook.network.collectives.estimate; {_GEOMETRY}"),
    Problem(
        "exam-nb03-torus-shapes-1024", "03", "exam",
        "1,024 chips can form an 8×8×16 or a 4×4×64 torus, both with wraparound. How many times the first one's "
        "diameter is the second one's? Which shape suits the small messages of a decode step?",
        lambda: {"a": (8, 8, 16), "b": (4, 4, 64)},
        lambda g: [f"{_shape(g['a'])}: {_halves(g['a'])} hops; {_shape(g['b'])}: {_halves(g['b'])} hops",
                   f"ratio = {sum(k // 2 for k in g['b'])} ÷ {sum(k // 2 for k in g['a'])} = "
                   f"{fmt(sum(k // 2 for k in g['b']) / sum(k // 2 for k in g['a']))}: the compact shape, fewer hops"],
        lambda g: sum(k // 2 for k in g["b"]) / sum(k // 2 for k in g["a"]),
        lambda g: tp.torus_diameter(g["b"]) / tp.torus_diameter(g["a"]), "×", f"{_GEOMETRY}.torus_diameter"),
    Problem(
        "exam-nb03-ring-crossover", "03", "exam",
        "A ring all-reduce over p = {p} H100s pays α = {alpha:.1f} µs a step and moves its bytes at η·B = {eta} × "
        "{B:,.0f} GB/s. At what message size do its latency and its bandwidth time become equal? Is a decode step's "
        "tensor-parallel all-reduce (a few hundred KB) on the latency side or the bandwidth side?",
        _nvlink,
        lambda g: ["2(p − 1)·α = 2(p − 1)/p · S / (ηB), so S* = p·α·ηB",
                   f"S* = {g['p']} × {fmt(g['alpha'])}e-6 s × {fmt(g['eta'] * g['B'])}e9 B/s = {fmt(_crossover(g))} MB",
                   "a few hundred KB is far below S*: latency-bound"],
        _crossover, _crossover_model, "MB", f"accelbook.network.collectives.ring_time_s; {_RING}"),
]
