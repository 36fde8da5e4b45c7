"""Collective communication: alpha-beta cost models, bus bandwidth, and the algorithm NCCL would pick.

For ``p`` ranks and a buffer of ``S`` bytes (the "size" of nccl-tests), every algorithm's time is

    t = base + steps · α + bytes_on_the_busiest_link / (η · share · B)

with ``α`` the latency of one step, ``B`` one link's bandwidth per direction and ``η`` the share
of line rate the library reaches (``topology.efficiency``). On GPU fabrics the latencies come from
NCCL's own cost model (``src/graph/tuning.cc``) for each of its wire protocols, and the estimate
takes the fastest algorithm × protocol pair, as NCCL's tuner does:

    LL      6.6 µs + 0.6 µs a step on NVLink, half the bandwidth (8 data bytes per 16 sent), ≤ 141 GB/s
    LL128  14 µs + 1.9 µs a step, 92 % of the bandwidth
    Simple  8.4 µs + 3.4 µs a step, full bandwidth (inter-node steps: 2.7 / 4 / 14 µs)

Other networks (TPU ICI) have one protocol: ``topology.hop_latency_s`` a step, no fixed cost. The
results are reported as nccl-tests does (github.com/NVIDIA/nccl-tests, doc/PERFORMANCE.md):

    algbw = S / t,     busbw = algbw · factor,   factor = 2(p-1)/p (all-reduce),
    (p-1)/p (all-gather, reduce-scatter, all-to-all), 1 (broadcast)

so that busbw of a bandwidth-bound ring equals the link bandwidth whatever ``p``.

Algorithms:

- ``ring``: 2(p-1) steps of S/p for all-reduce (reduce-scatter + all-gather), p-1 for the others.
  On a switched domain the ring uses each GPU's full link; on a torus, a bidirectional ring over
  the whole torus uses two links per chip. On a GPU cluster NCCL runs one ring per rail, each
  leaving the node through a different GPU's NIC, so the NICs of a node work in parallel and the
  node-crossing steps pay the NIC's latency.
- ``tree``: a double binary tree, 2·⌈log2 p⌉ steps; each rank is an inner node of one tree and a
  leaf of the other, so 2S crosses its link each way (Sanders et al. 2009): slower than a ring for
  large messages, faster for small ones on many ranks. NCCL's tree is a chain inside a node
  (2(g-1) steps) and a tree across nodes.
- ``torus``: dimension by dimension (reduce-scatter along each axis, then all-gather back), each
  axis a bidirectional ring if it wraps (2 links) or a line if not (1); the message shrinks by
  the axis length after each reduce-scatter. The message is split over the axis orders so that
  every axis works at once: bandwidth × number of axes (scaling-book, "Sharded matrices"). Trees
  are not offered on tori (a tree's edges would span many hops).
- ``nvls``: in-switch reduction (NVLink SHARP): a multimem load-reduce of each GPU's shard, then a
  multicast store of the result, so each link carries S(1 + 1/p) each way at the rate NCCL's model
  gives NVLS (``topology.in_network_efficiency``, 0.85 on Hopper), after a fixed 25 µs.
- ``hierarchical``: reduce-scatter inside each node (NVLink), all-reduce of S/g across nodes on the
  IB rails, all-gather inside the node, one after the other (not pipelined). On TPU slices joined
  by the data-centre network (``topology.tpu_multislice``) the same with the torus algorithm inside
  each slice and each chip's DCN share across slices.
- ``direct``: all-to-all with a message to every peer at once (switched, full mesh); on a GPU
  cluster the share for other nodes, (p-g)/p of the buffer, leaves through each GPU's own NIC.
- ``routed``: all-to-all over any network: each pair's S/p bytes follow the shortest paths (split
  equally), so the time is the busiest link's load (``topology.all_to_all_load``) × S/p ÷ ηB, plus
  diameter × α.

``estimate(..., algorithm=None)`` returns the fastest applicable algorithm (and protocol).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from numba import njit

from accelbook.checks import instance, one_of, output, positive, positive_array, whole
from accelbook.limits import grouped_sentence
from accelbook.specs.fabrics import Protocol

from .geometry import axis_diameter, axis_is_ring
from .graph import GRID_KINDS, Topology
from .paths import all_to_all_load, hop_stats

__all__ = [
    "COLLECTIVES", "ALGORITHMS", "Estimate", "bus_factor", "estimate", "sweep",
    "ring_latency_s", "ring_bytes_per_link", "ring_time_s", "uniform_all_to_all_load_and_diameter",
]

COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast")


def bus_factor(collective: str, p: int) -> float:
    """nccl-tests' busbw / algbw factor over ``p`` ranks (a whole number >= 1)."""
    one_of("collective", collective, COLLECTIVES)
    p = whole("p", p)
    if collective == "all_reduce":
        return 2 * (p - 1) / p
    if collective == "broadcast":
        return 1.0
    return (p - 1) / p


@dataclass(frozen=True)
class Estimate:
    collective: str
    algorithm: str
    protocol: str           # NCCL's LL, LL128 or Simple where the fabric lists them, else "plain"
    message_bytes: float
    ranks: int
    time_s: float
    latency_s: float        # the steps·α part
    bandwidth_s: float      # the bytes/(ηB) part
    algbw_bytes_per_s: float
    busbw_bytes_per_s: float

    @property
    def limit(self) -> str:
        """Which limit binds, in words: ``"latency-bound: the steps' latency 31 µs, moving the bytes 2.1 µs"``
        (:func:`accelbook.limits.grouped_sentence`)."""
        return grouped_sentence({"latency": {"the steps' latency": self.latency_s},
                                 "bandwidth": {"moving the bytes": self.bandwidth_s}})


# -- the ring: one formula for every user (collectives, training and inference kernels) ----------------
# One explicit float64 signature each: every caller (Python with ints or floats, the training and inference
# kernels) shares one compiled version instead of compiling one per mix of argument types (four in notebook
# 06 alone); the values are those of the int versions (whole numbers below 2**53 are exact floats).
_F3, _F5 = "float64(float64, float64, float64)", "float64(float64, float64, float64, float64, float64)"


@njit(_F3, cache=True)
def ring_latency_s(passes, p, alpha_s):
    """Latency of a ring collective over ``p`` ranks: ``passes·(p-1)·α``.

    ``passes`` = 2 for an all-reduce (reduce-scatter then all-gather), 1 for an all-gather or a
    reduce-scatter; ``α`` (s) is one step's latency. ``@njit``: callable from Python and kernels.
    """
    return passes * (p - 1) * alpha_s


@njit(_F3, cache=True)
def ring_bytes_per_link(passes, S, p):
    """Bytes each rank's link carries in a ring collective of ``S`` bytes: ``passes·(p-1)/p·S``
    (Patarasuk and Yuan 2009; nccl-tests' busbw is S·passes·(p-1)/p over the time)."""
    return passes * (p - 1) / p * S


@njit(_F5, cache=True)
def ring_time_s(passes, S, p, alpha_s, bw_bytes_per_s):
    """Time of a ring collective: ``passes·(p-1)·α + passes·(p-1)/p·S / B``; 0 for ``p <= 1``.

    Worked number: an 8-GPU all-reduce of 1 GB at B = 450 GB/s, α = 5 µs:
    2·7·5 µs + 2·7/8·1e9 / 450e9 = 70 µs + 3.89 ms = 3.96 ms.
    """
    if p <= 1:
        return 0.0
    return ring_latency_s(passes, p, alpha_s) + ring_bytes_per_link(passes, S, p) / bw_bytes_per_s


def _passes(c) -> int:
    """An all-reduce is two passes over the ranks (reduce-scatter then all-gather, or reduce then
    broadcast); every other collective one."""
    return 2 if c == "all_reduce" else 1


def _ring(c, S, p, alpha, bw):
    if c == "broadcast":  # pipelined chain
        return (p - 1) * alpha, S / bw
    passes = _passes(c)
    return ring_latency_s(passes, p, alpha), ring_bytes_per_link(passes, S, p) / bw


def _tree(c, S, p, alpha, bw):
    # double binary tree: each rank is an inner node of one tree (half the data: 2 children up, 2 down)
    # and a leaf of the other, so 2S crosses its link each way in an all-reduce (S in a broadcast)
    depth = max(1, math.ceil(math.log2(p)))
    if c == "all_reduce":
        return 2 * depth * alpha, 2 * S / bw
    if c == "broadcast":
        return depth * alpha, S / bw
    raise ValueError("tree algorithms exist for all_reduce and broadcast")


def _torus(c, S, topo: Topology, alpha, link):
    if c not in ("all_reduce", "all_gather", "reduce_scatter"):
        raise ValueError("dimension-wise algorithms exist for all_reduce, all_gather and reduce_scatter")
    axes = [(k, w) for k, w in zip(topo.dims, topo.wraparound) if k > 1]
    passes = _passes(c)
    d = len(axes)
    # the message is split into d parts, part r taking the axes in the order r, r+1, ...: every axis is
    # busy at once, so the busiest axis, not the sum, sets the time (scaling-book: bandwidth x n_axes)
    load = [0.0] * d
    lat = 0.0
    for a, (k, w) in enumerate(axes):
        links = 2 if axis_is_ring(k, w) else 1   # bidirectional ring, or a line used in both halves
        lat += axis_diameter(k, w) * alpha
        for r in range(d):
            share = S / d
            for j in range((a - r) % d):     # the axes this part crossed before reaching axis a
                share /= axes[(r + j) % d][0]
            load[a] += (k - 1) / k * share / (links * link)
    return passes * lat, passes * max(load, default=0.0)


def _protocols(topo: Topology) -> tuple[Protocol, ...]:
    """The library's protocols on this fabric, or one plain protocol: ``hop_latency_s`` a step, no fixed cost."""
    return topo.protocols or (Protocol("plain", 0.0, topo.hop_latency_s),)


def _nic(topo: Topology, proto: Protocol) -> tuple[float, float]:
    """Inter-node step latency and usable NIC rate in ``proto`` (a cluster's IB rails)."""
    p = topo.params
    nic_proto = {q.name: q for q in p.get("nic_protocols", ())}.get(proto.name)
    step = nic_proto.step_latency_s if nic_proto else p["nic_latency_s"]
    share = nic_proto.bandwidth_share if nic_proto else 1.0
    return step, p["nic_bw_bytes_per_s"] * p.get("nic_efficiency", topo.efficiency) * share


def _per_rail_byte_s(topo: Topology, link: float, nic_rate: float) -> float:
    """Seconds per byte of a ring or tree that runs one copy per rail (each 1/g of the data): a GPU's
    NIC carries its own rail's node crossings, its NVLink the other g-1 rails' steps."""
    g = topo.params["gpus_per_node"]
    return max((g - 1) / g / link, 1 / (g * nic_rate))


def _estimate_one(c, S, topo: Topology, alg, proto: Protocol) -> tuple[float, float]:
    p = topo.n_endpoints
    alpha = proto.step_latency_s
    link = min(topo.link_bw_bytes_per_s * topo.efficiency * proto.bandwidth_share, proto.max_busbw_bytes_per_s)
    kind = topo.kind
    if alg == "nvls":
        if not topo.in_network_reduction or kind != "switched":
            raise ValueError("NVLS needs a switched domain with in-network reduction")
        if proto is not _protocols(topo)[-1]:
            raise ValueError("NVLS runs in the bulk (Simple) protocol only")
        if c == "all_to_all":
            raise ValueError("NVLS does not do all_to_all")
        # multimem load-reduce then multicast store: each GPU's link carries S + S/p each way in an
        # all-reduce (S/p of every shard read out, its own reduced shard back; then the reverse)
        rate = topo.link_bw_bytes_per_s * topo.efficiency * topo.in_network_efficiency
        data = {"all_reduce": S * (1 + 1 / p), "broadcast": S}.get(c, (p - 1) / p * S)
        return (topo.in_network_latency_s or 2 * alpha), data / rate
    lat, bw = _algorithm(c, S, topo, alg, alpha, link, proto)
    return proto.base_latency_s + lat, bw


def _algorithm(c, S, topo: Topology, alg, alpha, link, proto) -> tuple[float, float]:
    p = topo.n_endpoints
    kind = topo.kind
    if kind == "multislice":
        return _multislice(c, S, topo, alg, alpha, link)
    if alg == "ring":
        if c == "all_to_all":
            raise ValueError("a ring all-to-all forwards messages over many hops: use routed or direct")
        if kind == "cluster" and topo.params["nodes"] > 1:
            # NCCL runs one ring per rail (g rings, each 1/g of the data), laid out so that ring r leaves
            # every node through GPU r's NIC. The steps that cross nodes pay the NIC's latency.
            nic_step, nic_rate = _nic(topo, proto)
            lat, data = _ring(c, S, p, alpha, 1.0)          # at 1 B/s the time is the bytes per link
            inter = _passes(c) * (topo.params["nodes"] - 1)
            return lat + inter * (nic_step - alpha), data * _per_rail_byte_s(topo, link, nic_rate)
        per_chip = link * (2 if kind in ("torus", "tpu_pod", "ring") and any(topo.wraparound) else 1)
        return _ring(c, S, p, alpha, per_chip)
    if alg == "tree":
        if kind == "cluster" and topo.params["nodes"] > 1:
            # NCCL: a chain inside each node, a double binary tree across nodes, one per rail
            if c not in ("all_reduce", "broadcast"):
                raise ValueError("tree algorithms exist for all_reduce and broadcast")
            g, nodes = topo.params["gpus_per_node"], topo.params["nodes"]
            nic_step, nic_rate = _nic(topo, proto)
            f = _passes(c)
            lat = f * ((g - 1) * alpha + math.ceil(math.log2(nodes)) * nic_step)
            return lat, f * S * _per_rail_byte_s(topo, link, nic_rate)
        if kind in GRID_KINDS:
            raise ValueError("a binary tree's edges span many hops of a torus: use the ring or torus algorithm")
        if topo.protocols and kind in ("switched", "cluster"):
            # NCCL's tree inside one node is a chain: p-1 steps up, p-1 down
            _, bw = _tree(c, S, p, alpha, link)
            return _passes(c) * (p - 1) * alpha, bw
        return _tree(c, S, p, alpha, link)
    if alg == "torus":
        if kind not in GRID_KINDS:
            raise ValueError("the torus algorithm needs a torus or mesh")
        return _torus(c, S, topo, alpha, link)
    if alg == "direct":
        if c != "all_to_all" or kind not in ("switched", "full_mesh", "cluster"):
            raise ValueError("direct is all_to_all on a switched domain, a full mesh or a GPU cluster")
        if kind == "cluster" and topo.params["nodes"] > 1:
            # each GPU sends S/p to every peer: (g-1)/p of S over NVLink, (p-g)/p of S out of its own NIC
            g = topo.params["gpus_per_node"]
            nic_step, nic_rate = _nic(topo, proto)
            return nic_step, max((g - 1) / p * S / link, (p - g) / p * S / nic_rate)
        return alpha, (p - 1) / p * S / link
    if alg == "routed":
        if c != "all_to_all":
            raise ValueError("routed is all_to_all over the network's shortest paths")
        if kind == "cluster":
            raise ValueError("a GPU cluster's links differ (NVLink, NICs): its all_to_all is direct")
        load, diameter = uniform_all_to_all_load_and_diameter(topo)
        # nccl-tests: S is each rank's send buffer, S/p to each peer; the busiest link carries `load` pairs
        return diameter * alpha, load * (S / p) / link
    if alg == "hierarchical":
        if kind != "cluster":
            raise ValueError("hierarchical algorithms need a gpu_cluster")
        if c not in ("all_reduce", "all_gather", "reduce_scatter"):
            raise ValueError("hierarchical covers all_reduce, all_gather and reduce_scatter")
        g, nodes = topo.params["gpus_per_node"], topo.params["nodes"]
        nic_step, nic_rate = _nic(topo, proto)
        inside = _ring("reduce_scatter", S, g, alpha, link)
        across = _ring(c, S / g, nodes, nic_step, nic_rate) if nodes > 1 else (0.0, 0.0)
        return _two_level(c, inside, across)
    raise ValueError(f"unknown algorithm {alg!r}; have {ALGORITHMS}")


def _multislice(c, S, topo: Topology, alg, alpha, link) -> tuple[float, float]:
    """TPU slices over the DCN: reduce-scatter dimension-wise inside each slice, all-reduce each chip's
    1/n of the data across slices on its own DCN share (every chip at once), all-gather back."""
    if alg != "hierarchical":
        raise ValueError("across TPU slices only the hierarchical (ICI, then DCN) algorithm is modelled")
    if c not in ("all_reduce", "all_gather", "reduce_scatter"):
        raise ValueError("across TPU slices: all_reduce, all_gather and reduce_scatter")
    one, slices = topo.params["slice"], topo.params["slices"]
    n = one.n_endpoints
    dcn_lat, dcn_rate = topo.params["dcn_latency_s"], topo.params["dcn_bw_bytes_per_s"]
    inner = c if c != "all_reduce" else "reduce_scatter"
    inside = _torus(inner, S, one, alpha, link) if n > 1 else (0.0, 0.0)
    across = _ring(c, S / n, slices, dcn_lat, dcn_rate) if slices > 1 else (0.0, 0.0)
    return _two_level(c, inside, across)


def _two_level(c, inside, across) -> tuple[float, float]:
    """(latency, bandwidth time) of a two-level collective, one level after the other: inside each
    group (a reduce-scatter, or the collective itself), across the groups on each rank's share,
    then inside again (all-gather) for an all-reduce. ``inside``, ``across``: (latency, time) of one
    pass at each level."""
    (lat_in, bw_in), (lat_x, bw_x) = inside, across
    if c == "all_reduce":
        return 2 * lat_in + lat_x, 2 * bw_in + bw_x
    return lat_in + lat_x, bw_in + bw_x


ALGORITHMS = ("ring", "tree", "torus", "nvls", "direct", "hierarchical", "routed")
_LOAD_CACHE: dict = {}


def uniform_all_to_all_load_and_diameter(topo: Topology) -> tuple[float, int]:
    """Busiest-link load under uniform all-to-all and the diameter, computed once per graph
    (link parameters do not change them, so a slider on bandwidth or latency reuses them)."""
    key = (topo.name, topo.n_nodes, topo.n_links, topo.indices.tobytes())
    if key not in _LOAD_CACHE:
        _LOAD_CACHE[key] = (all_to_all_load(topo)["max_link_load"], hop_stats(topo)["diameter"])
    return _LOAD_CACHE[key]


def _check(collective: str, topology: Topology) -> None:
    one_of("collective", collective, COLLECTIVES)
    instance("topology", topology, Topology)
    if topology.n_endpoints < 2:
        raise ValueError("a collective needs at least two chips")


def _candidates(collective: str, topology: Topology, algorithm: str | None) -> list[tuple[str, str, float, float]]:
    """Every applicable (algorithm, protocol) with its latency (s) and its seconds per byte: each
    algorithm's time is exactly ``latency + bytes · slope``, so one evaluation at 1 byte gives both."""
    out, errors = [], []
    for alg in ([algorithm] if algorithm is not None else ALGORITHMS):
        for proto in _protocols(topology):
            try:
                lat, slope = _estimate_one(collective, 1.0, topology, alg, proto)
            except ValueError as exc:
                if f"{alg}: {exc}" not in errors:
                    errors.append(f"{alg}: {exc}")
                continue
            out.append((alg, proto.name, lat, slope))
    if not out:
        raise ValueError(f"no algorithm for {collective} on {topology.name}: " + "; ".join(errors))
    return out


def estimate(collective: str, message_bytes: float, topology: Topology, algorithm: str | None = None) -> Estimate:
    """Time, algbw and busbw of a collective over all chips of ``topology``.

    ``algorithm=None`` picks the fastest algorithm and protocol that apply (as NCCL's tuner does).
    """
    _check(collective, topology)
    S = positive("message_bytes", message_bytes)
    alg, proto, lat, slope = min(_candidates(collective, topology, algorithm), key=lambda c: c[2] + c[3] * S)
    t = output(f"{collective} time (s)", lat + slope * S)
    p = topology.n_endpoints
    algbw = S / t
    return Estimate(collective, alg, proto, S, p, t, lat, slope * S, algbw, algbw * bus_factor(collective, p))


def sweep(collective: str, topology: Topology, sizes=None) -> pd.DataFrame:
    """Estimates over message sizes (bytes), with the algorithm and protocol chosen at each size
    (the same choice as :func:`estimate`, computed for all sizes at once)."""
    _check(collective, topology)
    sizes = np.geomspace(8, 8 * 2**30, 28) if sizes is None else positive_array("sizes", sizes)
    if sizes.ndim != 1 or not (np.isfinite(sizes).all() and (sizes > 0).all()):
        raise ValueError("sizes must be a 1-D array of message sizes > 0 (bytes)")
    cands = _candidates(collective, topology, None)
    lat = np.array([c[2] for c in cands])
    slope = np.array([c[3] for c in cands])
    times = lat[:, None] + slope[:, None] * sizes[None, :]
    best = np.argmin(times, axis=0)             # first minimum, as estimate's min() keeps the first
    t = times[best, np.arange(len(sizes))]
    algbw = sizes / t
    return pd.DataFrame({
        "message_bytes": sizes, "algorithm": [cands[i][0] for i in best], "protocol": [cands[i][1] for i in best],
        "time_s": t, "algbw_bytes_per_s": algbw,
        "busbw_bytes_per_s": algbw * bus_factor(collective, topology.n_endpoints), "latency_share": lat[best] / t,
    })
