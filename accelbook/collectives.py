"""Collective communication: alpha-beta cost models, bus bandwidth, and the algorithm NCCL would pick.

For ``p`` ranks and a buffer of ``S`` bytes (the "size" of nccl-tests), every algorithm's time is

    t = steps · α + bytes_on_the_busiest_link / (η · B)

with ``α`` the latency of one step (``topology.hop_latency_s``), ``B`` one link's bandwidth per
direction and ``η`` the share of line rate the library reaches (``topology.efficiency``). The
results are reported as nccl-tests does (github.com/NVIDIA/nccl-tests, doc/PERFORMANCE.md):

    algbw = S / t,     busbw = algbw · factor,   factor = 2(p-1)/p (all-reduce),
    (p-1)/p (all-gather, reduce-scatter, all-to-all), 1 (broadcast)

so that busbw of a bandwidth-bound ring equals the link bandwidth whatever ``p``.

Algorithms:

- ``ring``: 2(p-1) steps of S/p for all-reduce (reduce-scatter + all-gather), p-1 for the others.
  On a switched domain the ring uses each GPU's full link; on a torus, a bidirectional ring over
  the whole torus uses two links per chip.
- ``tree``: NCCL's double binary tree, 2·⌈log2 p⌉ steps; each rank is an inner node of one tree
  and a leaf of the other, so 2S crosses its link each way (Sanders et al. 2009): slower than a
  ring for large messages, faster for small ones on many ranks.
- ``torus``: dimension by dimension (reduce-scatter along each axis, then all-gather back), each
  axis a bidirectional ring if it wraps (2 links) or a line if not (1); the message shrinks by
  the axis length after each reduce-scatter (scaling-book, "Sharded matrices" collective costs).
- ``nvls``: in-switch reduction (NVLink SHARP): each GPU sends S once and receives S once,
  2 steps. Theory gives all-reduce busbw 2(p-1)/p·B; measured is lower (see notebook 03).
- ``hierarchical``: reduce-scatter inside each node (NVLink), all-reduce of S/g across nodes on the
  IB rails, all-gather inside the node.
- ``direct``: all-to-all with a message to every peer at once (switched, full mesh).
- ``routed``: all-to-all over any network: each pair's S/p bytes follow the shortest paths (split
  equally), so the time is the busiest link's load (``topology.all_to_all_load``) × S/p ÷ ηB, plus
  diameter × α.

``estimate(..., algorithm=None)`` returns the fastest applicable algorithm, as NCCL's tuner aims to.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .topology import Topology

COLLECTIVES = ("all_reduce", "all_gather", "reduce_scatter", "all_to_all", "broadcast")


def bus_factor(collective: str, p: int) -> float:
    """nccl-tests' busbw / algbw factor."""
    if collective == "all_reduce":
        return 2 * (p - 1) / p
    if collective in ("all_gather", "reduce_scatter", "all_to_all"):
        return (p - 1) / p
    if collective == "broadcast":
        return 1.0
    raise ValueError(f"collective must be one of {COLLECTIVES}, got {collective!r}")


@dataclass(frozen=True)
class Estimate:
    collective: str
    algorithm: str
    message_bytes: float
    ranks: int
    time_s: float
    latency_s: float        # the steps·α part
    bandwidth_s: float      # the bytes/(ηB) part
    algbw_bytes_per_s: float
    busbw_bytes_per_s: float


def _ring(c, S, p, alpha, bw):
    steps = 2 * (p - 1) if c == "all_reduce" else (p - 1)
    data = (2 if c == "all_reduce" else 1) * (p - 1) / p * S
    if c == "broadcast":  # pipelined chain
        steps, data = p - 1, S
    return steps * alpha, data / bw


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
    lat = bw_time = 0.0
    share = S  # bytes each chip still holds on this pass
    axes = [(k, w) for k, w in zip(topo.dims, topo.wraparound) if k > 1]
    passes = 2 if c == "all_reduce" else 1
    for _ in range(passes):
        share = S
        for k, w in axes:
            links = 2 if (w and k > 2) else 1   # bidirectional ring, or a line used in both halves
            lat += (k // 2 if links == 2 else k - 1) * alpha
            bw_time += (k - 1) / k * share / (links * link)
            share /= k
    return lat, bw_time


def _estimate_one(c, S, topo: Topology, alg) -> tuple[float, float]:
    p = topo.n_endpoints
    alpha = topo.hop_latency_s
    link = topo.link_bw_bytes_per_s * topo.efficiency
    kind = topo.kind
    if alg == "ring":
        if c == "all_to_all":
            raise ValueError("a ring all-to-all forwards messages over many hops: use routed or direct")
        per_chip = link * (2 if kind in ("torus", "tpu_pod", "ring") and any(topo.wraparound) else 1)
        if kind == "cluster":
            per_chip = min(link, topo.params["nic_bw_bytes_per_s"] * topo.efficiency)
        return _ring(c, S, p, alpha, per_chip)
    if alg == "tree":
        bw = link if kind != "cluster" else min(link, topo.params["nic_bw_bytes_per_s"] * topo.efficiency)
        return _tree(c, S, p, alpha, bw)
    if alg == "torus":
        if kind not in ("torus", "mesh", "tpu_pod", "ring"):
            raise ValueError("the torus algorithm needs a torus or mesh")
        return _torus(c, S, topo, alpha, link)
    if alg == "nvls":
        if not topo.in_network_reduction or kind != "switched":
            raise ValueError("NVLS needs a switched domain with in-network reduction")
        if c == "all_reduce":
            return 2 * alpha, S / link
        if c in ("all_gather", "reduce_scatter", "broadcast"):
            return 2 * alpha, (p - 1) / p * S / link if c != "broadcast" else S / link
        raise ValueError("NVLS does not do all_to_all")
    if alg == "direct":
        if c != "all_to_all" or kind not in ("switched", "full_mesh"):
            raise ValueError("direct is all_to_all on a switched domain or full mesh")
        return alpha, (p - 1) / p * S / link
    if alg == "routed":
        if c != "all_to_all":
            raise ValueError("routed is all_to_all over the network's shortest paths")
        load, diameter = _uniform_load_and_diameter(topo)
        # nccl-tests: S is each rank's send buffer, S/p to each peer; the busiest link carries `load` pairs
        return diameter * alpha, load * (S / p) / link
    if alg == "hierarchical":
        if kind != "cluster":
            raise ValueError("hierarchical algorithms need a gpu_cluster")
        g, nodes = topo.params["gpus_per_node"], topo.params["nodes"]
        nic = topo.params["nic_bw_bytes_per_s"] * topo.efficiency
        lat_in, bw_in = _ring("reduce_scatter", S, g, alpha, link)
        lat_x, bw_x = _ring(c if c != "reduce_scatter" else "reduce_scatter", S / g, nodes,
                            topo.params["nic_latency_s"], nic) if nodes > 1 else (0.0, 0.0)
        if c == "all_reduce":
            return 2 * lat_in + lat_x, 2 * bw_in + bw_x
        if c in ("all_gather", "reduce_scatter"):
            return lat_in + lat_x, bw_in + bw_x * g / g
        raise ValueError("hierarchical covers all_reduce, all_gather and reduce_scatter")
    raise ValueError(f"unknown algorithm {alg!r}; have {ALGORITHMS}")


ALGORITHMS = ("ring", "tree", "torus", "nvls", "direct", "hierarchical", "routed")
_LOAD_CACHE: dict = {}


def _uniform_load_and_diameter(topo: Topology) -> tuple[float, int]:
    """Busiest-link load under uniform all-to-all and the diameter, computed once per graph
    (link parameters do not change them, so a slider on bandwidth or latency reuses them)."""
    key = (topo.name, topo.n_nodes, topo.n_links, topo.indices.tobytes())
    if key not in _LOAD_CACHE:
        from .topology import all_to_all_load, hop_stats

        _LOAD_CACHE[key] = (all_to_all_load(topo)["max_link_load"], hop_stats(topo)["diameter"])
    return _LOAD_CACHE[key]


def estimate(collective: str, message_bytes: float, topology: Topology, algorithm: str | None = None) -> Estimate:
    """Time, algbw and busbw of a collective over all chips of ``topology``.

    ``algorithm=None`` picks the fastest that applies (as NCCL's tuner aims to).
    """
    if collective not in COLLECTIVES:
        raise ValueError(f"collective must be one of {COLLECTIVES}, got {collective!r}")
    if isinstance(message_bytes, bool) or not (isinstance(message_bytes, (int, float, np.integer, np.floating))
                                               and math.isfinite(message_bytes) and message_bytes > 0):
        raise ValueError(f"message_bytes must be > 0, got {message_bytes!r}")
    p = topology.n_endpoints
    if p < 2:
        raise ValueError("a collective needs at least two chips")
    candidates = [algorithm] if algorithm is not None else list(ALGORITHMS)
    best = None
    errors = []
    for alg in candidates:
        try:
            lat, bw = _estimate_one(collective, float(message_bytes), topology, alg)
        except ValueError as exc:
            errors.append(f"{alg}: {exc}")
            continue
        if best is None or lat + bw < best[1] + best[2]:
            best = (alg, lat, bw)
    if best is None:
        raise ValueError(f"no algorithm for {collective} on {topology.name}: " + "; ".join(errors))
    alg, lat, bw = best
    t = lat + bw
    algbw = message_bytes / t
    return Estimate(collective, alg, float(message_bytes), p, t, lat, bw, algbw, algbw * bus_factor(collective, p))


def sweep(collective: str, topology: Topology, sizes=None) -> pd.DataFrame:
    """Estimates over message sizes (bytes), with the algorithm chosen at each size."""
    sizes = np.geomspace(8, 8 * 2**30, 28) if sizes is None else np.asarray(sizes, dtype=float)
    rows = []
    for s in sizes:
        e = estimate(collective, float(s), topology)
        rows.append({"message_bytes": s, "algorithm": e.algorithm, "time_s": e.time_s,
                     "algbw_bytes_per_s": e.algbw_bytes_per_s, "busbw_bytes_per_s": e.busbw_bytes_per_s,
                     "latency_share": e.latency_s / e.time_s})
    return pd.DataFrame(rows)


def validation_table(path=None) -> pd.DataFrame:
    """Model against ``data/collective_measurements.toml``: measured, predicted, error (model/measured - 1)."""
    from pathlib import Path

    from . import topology as tp
    from .catalogue import DATA_DIR, CatalogueError, _check_keys, load_sources, read_table_file

    path = Path(path) if path is not None else DATA_DIR / "collective_measurements.toml"
    sources = load_sources()
    rows = []
    metrics = {"measured_busbw_gb_s": "busbw GB/s", "measured_algbw_gb_s": "algbw GB/s", "measured_time_us": "time µs"}
    for cid, e in read_table_file(path).items():
        _check_keys(path, cid, e, required={"system", "args", "collective", "message_bytes", "kind"},
                    optional={"algorithm", *metrics})
        given = [m for m in metrics if m in e]
        if len(given) != 1:
            raise CatalogueError(path, cid, None, f"give exactly one of {sorted(metrics)}")
        m = given[0]
        if e["system"] not in tp.PRESETS:
            raise CatalogueError(path, cid, "system", f"unknown preset; have {sorted(tp.PRESETS)}")
        topo = tp.PRESETS[e["system"]](**e["args"])
        est = estimate(e["collective"], float(e["message_bytes"]), topo, e.get("algorithm"))
        model = {"measured_busbw_gb_s": est.busbw_bytes_per_s / 1e9, "measured_algbw_gb_s": est.algbw_bytes_per_s / 1e9,
                 "measured_time_us": est.time_s * 1e6}[m]
        measured = float(e[m]["value"])
        src = sources[e[m]["src"]] if e[m]["src"] in sources else None
        rows.append({
            "case": cid, "system": topo.name, "nvls": topo.in_network_reduction,
            "collective": e["collective"], "message_bytes": float(e["message_bytes"]),
            "algorithm": est.algorithm, "metric": metrics[m], "measured": measured, "model": model,
            "error": model / measured - 1, "kind": e["kind"], "note": e[m].get("note", ""),
            "source": src.title if src else e[m]["src"],
        })
    return pd.DataFrame(rows)
