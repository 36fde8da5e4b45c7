"""The all-to-all that MoE routing makes, timed on a network.

All-to-all time on a network (:func:`all_to_all_time`) is the busiest link's bytes over its
bandwidth, routed over all shortest paths (:func:`accelbook.network.paths.link_loads` with a demand
matrix), plus the diameter times the per-hop latency, plus a per-message software overhead for each
peer a chip talks to:

    t = max_link_bytes / (η·B) + diameter · α + peers · o

:func:`crossover_sweep` does the same for dispatch + combine with uniform routing's expected
traffic (:func:`uniform_demand`) against tokens per chip: where the latency terms give way to
bandwidth. A collective acceleration engine (``cae=True``) cuts the per-message overhead and
reduces the combine in the network, so each token's results arrive as one vector.
:func:`equal_injection` gives every network the same injection bandwidth per chip, so a comparison
is of topology, not of link budget.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from accelbook.checks import instance, output, positive, positive_array, whole, within_budget
from accelbook.network.collectives import uniform_all_to_all_load_and_diameter
from accelbook.network.graph import Topology
from accelbook.network.paths import hop_stats, link_loads

#: the largest chips × chips demand matrix :func:`uniform_demand` builds (bytes)
MAX_DEMAND_BYTES = 2**30
MESSAGE_OVERHEAD_S = 2e-6      # software cost per peer message (order of magnitude; see the notebook)
CAE_OVERHEAD_S = 0.2e-6        # the what-if: an engine that issues messages in hardware


@dataclass(frozen=True)
class AllToAll:
    """One all-to-all on a network: ``time_s = bandwidth_s + latency_s + overhead_s`` (s)."""

    time_s: float
    bandwidth_s: float      # busiest link's bytes / (η·B)
    latency_s: float        # diameter × hop latency (0 if nothing is sent)
    overhead_s: float       # peers × per-message overhead
    max_link_bytes: float   # bytes on the busiest directed link
    diameter: int           # hops
    peers: int              # the most chips any chip sends to


def chip_degree(topo) -> float:
    """Mean number of links at a chip (a torus chip has 6, a switched one 1)."""
    deg = np.diff(topo.indptr)[: topo.n_endpoints]
    return float(deg.mean())


def equal_injection(topo, chip_bw_bytes_per_s: float, hop_latency_s: float = 1e-6):
    """The network with every link at ``chip_bw / (links per chip)``: each chip can inject the same
    total bandwidth whatever the topology, so a comparison is of topology, not of link budget."""
    topo = instance("topo", topo, Topology)
    positive("chip_bw_bytes_per_s", chip_bw_bytes_per_s)
    positive("hop_latency_s", hop_latency_s)
    return topo.with_links(chip_bw_bytes_per_s / chip_degree(topo), hop_latency_s, 1.0)


def all_to_all_time(demand: np.ndarray, topo, message_overhead_s: float = MESSAGE_OVERHEAD_S) -> AllToAll:
    """Time of one all-to-all with ``demand[src, dst]`` bytes: busiest link's bytes ÷ (η·B) over
    minimal routing, plus diameter × hop latency, plus a per-peer message overhead × the most
    peers any chip talks to."""
    topo = instance("topo", topo, Topology)
    o = positive("message_overhead_s", message_overhead_s, allow_zero=True)
    try:
        demand = np.asarray(demand, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"demand must be a {topo.n_endpoints}×{topo.n_endpoints} array of bytes") from None
    if demand.shape == (topo.n_endpoints, topo.n_endpoints):
        positive_array("demand", demand, allow_zero=True)
    if demand.shape != (topo.n_endpoints, topo.n_endpoints):
        raise ValueError(f"demand must be {topo.n_endpoints}×{topo.n_endpoints} for {topo.name}, got {demand.shape}")
    if topo.link_bw_bytes_per_s is None:
        raise ValueError(f"{topo.name} has no link bandwidth: use topology.with_links(...)")
    load = link_loads(topo, demand)
    diam = hop_stats(topo)["diameter"]
    peers = int(((demand > 0).sum(axis=1)).max()) if demand.any() else 0
    bw = float(load.max()) / (topo.efficiency * topo.link_bw_bytes_per_s)
    lat = diam * topo.hop_latency_s if peers else 0.0
    ovh = peers * o
    output("all_to_all_time time_s", bw + lat + ovh)
    return AllToAll(bw + lat + ovh, bw, lat, ovh, float(load.max()), int(diam), peers)


def uniform_demand(n_chips: int, tokens_per_chip: float, top_k: int, bytes_per_token: float,
                   experts_per_chip: float = 1.0) -> np.ndarray:
    """Expected dispatch demand with uniform routing: each token's copies spread evenly over the
    other chips (``copies`` = expected distinct chips of k picks among the experts). ``top_k`` may not
    exceed the experts (``n_chips · experts_per_chip``, at least one per chip)."""
    C = whole("n_chips", n_chips)
    within_budget(f"a {C:,}×{C:,} demand matrix", C * C * 8.0, MAX_DEMAND_BYTES, "bytes",
                  "accelbook.moe.alltoall.MAX_DEMAND_BYTES")
    tokens_per_chip = positive("tokens_per_chip", tokens_per_chip, allow_zero=True)
    top_k = whole("top_k", top_k)
    bytes_per_token = positive("bytes_per_token", bytes_per_token)
    experts_per_chip = positive("experts_per_chip", experts_per_chip)
    if top_k > max(round(C * experts_per_chip), 1) and experts_per_chip >= 1:
        raise ValueError(f"top_k = {top_k} exceeds the {round(C * experts_per_chip)} experts "
                         f"({C} chips × {experts_per_chip:g} experts per chip)")
    if experts_per_chip >= 1:
        # expected distinct chips hit by k draws without replacement among E experts, epc per chip
        E, epc = int(round(C * experts_per_chip)), int(round(experts_per_chip))
        miss = math.comb(E - epc, top_k) / math.comb(E, top_k) if E - epc >= top_k else 0.0
        copies = C * (1 - miss)
    else:   # fewer experts than chips: each of the k experts is reached on one of its replicas
        copies = float(top_k)
    per_pair = tokens_per_chip * copies / C * bytes_per_token
    d = np.full((C, C), output("uniform_demand bytes per pair", per_pair))
    np.fill_diagonal(d, 0.0)
    return d


def crossover_sweep(networks: dict, tokens_per_chip, top_k: int, bytes_per_token: float,
                    experts_per_chip: float = 1.0, cae: bool = False,
                    message_overhead_s: float | None = None) -> pd.DataFrame:
    """All-to-all (dispatch + combine) time against tokens per chip on each network, with uniform
    routing (expected traffic): where the latency terms (diameter × hop latency, plus a per-message
    overhead for each peer actually sent to) give way to bandwidth (the busiest link's bytes).
    ``networks``: name -> Topology with links. ``cae``: the collective-acceleration what-if."""
    rows = []
    if not isinstance(networks, dict) or not networks:
        raise ValueError(f"networks must be a non-empty dict of name -> Topology, got {networks!r}"[:200])
    for name, topo in networks.items():
        instance(f"networks[{name!r}]", topo, Topology)
    try:
        tokens_per_chip = np.atleast_1d(np.asarray(tokens_per_chip, dtype=float))
    except (TypeError, ValueError):
        raise ValueError(f"tokens_per_chip must be numbers >= 0, got {tokens_per_chip!r}"[:200]) from None
    positive_array("tokens_per_chip", tokens_per_chip, allow_zero=True)
    o = MESSAGE_OVERHEAD_S if message_overhead_s is None else positive("message_overhead_s", message_overhead_s,
                                                                         allow_zero=True)
    if cae:
        o = min(o, CAE_OVERHEAD_S)
    for name, topo in networks.items():
        C = topo.n_endpoints
        unit = uniform_demand(C, 1.0, top_k, bytes_per_token, experts_per_chip)
        per_pair = unit[0, 1] if C > 1 else 0.0                  # bytes per pair per token per chip
        remote_copies = unit.sum() / (C * bytes_per_token)       # copies a token sends off its chip
        load, diam = uniform_all_to_all_load_and_diameter(topo)            # busiest link, one unit per pair
        bw1 = load * per_pair / (topo.efficiency * topo.link_bw_bytes_per_s)
        for tpc in tokens_per_chip:
            bw = bw1 * tpc
            # in-network reduction: a token's results arrive as one vector instead of one per chip
            comb = bw / max(remote_copies, 1.0) if cae else bw
            # peers a chip talks to: distinct chips hit by tpc·copies uniform picks among the C-1 others
            peers = (C - 1) * (1.0 - (1.0 - 1.0 / (C - 1)) ** (tpc * remote_copies)) if C > 1 else 0.0
            fixed = diam * topo.hop_latency_s + peers * o
            t = 2 * fixed + bw + comb
            rows.append({"network": name, "tokens_per_chip": float(tpc), "time_s": t, "bandwidth_s": bw + comb,
                         "latency_s": 2 * fixed, "peers": peers, "diameter": int(diam),
                         "bound": "bandwidth" if bw + comb > 2 * fixed else "latency"})
    return pd.DataFrame(rows)
