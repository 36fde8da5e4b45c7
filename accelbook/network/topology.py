"""Network topologies of accelerator systems, and their hop statistics (Numba BFS).

A :class:`Topology` is an undirected graph in CSR form. Nodes ``0 .. n_endpoints-1`` are chips;
any further nodes are switches (NVSwitch, fat-tree and dragonfly routers, optical circuit switches
are *not* nodes: an OCS is a patch panel that joins links, so it adds no hop). A hop is one link.

Builders: :func:`ring`, :func:`torus` (and :func:`mesh`, ``wraparound=False``; ``twisted=True``
for a twisted 2D/3D torus), :func:`full_mesh`, :func:`switched` (an NVSwitch node, :func:`nvl72`),
:func:`fat_tree` (k-ary, with oversubscription), :func:`dragonfly`, :func:`boardfly` (a labelled
guess at TPU 8i's network) and :func:`tpu_pod` (4×4×4 cubes joined by optical switches). Systems
with published link figures (``data/fabrics.toml``): :func:`hgx_h100`, :func:`h100_cluster`,
:func:`tpu_slice`, :func:`tpu_axis` and :func:`tpu_multislice` (pods joined by the data-centre network).

:func:`hop_stats` runs a breadth-first search from every chip (bit-parallel: 64 sources per pass,
batches in parallel with ``prange``, each with its own buffers) and returns the diameter, the mean hop count over
ordered pairs of distinct chips and the hop histogram. Analytic check: a k×k×k torus with
wraparound has diameter ``3·⌊k/2⌋`` and, for even k, mean hops ``3·(k/4)·k³/(k³-1)``.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np
from numba import njit, prange

from accelbook.specs.fabrics import fabrics


@dataclass(frozen=True)
class Topology:
    """An interconnect: chips (nodes < n_endpoints) and switches, links as a CSR adjacency."""

    name: str
    kind: str
    n_endpoints: int
    n_nodes: int
    indptr: np.ndarray            # int64, len n_nodes + 1
    indices: np.ndarray           # int64, neighbours; each undirected link appears twice
    dims: tuple[int, ...] = ()    # torus/mesh shape, if any
    wraparound: tuple[bool, ...] = ()
    assumptions: str = ""
    params: Mapping[str, Any] = field(default_factory=dict)
    # what collectives need (accelbook.collectives): one link's bandwidth per direction, one step's
    # latency, the share of line rate a collective library reaches, in-switch reduction (NVLS/SHARP)
    link_bw_bytes_per_s: float = 100e9
    hop_latency_s: float = 1e-6
    efficiency: float = 1.0
    in_network_reduction: bool = False
    # a collective library's protocols (empty: one protocol, hop_latency_s per step, no fixed cost);
    # when given, the last one is the bulk protocol and its step latency is hop_latency_s
    protocols: tuple = ()
    # in-switch reduction (NVLS): its fixed latency and the share of the usable link rate it reaches
    in_network_latency_s: float = 0.0
    in_network_efficiency: float = 1.0

    def with_links(self, link_bw_bytes_per_s: float | None = None, hop_latency_s: float | None = None,
                   efficiency: float | None = None, in_network_reduction: bool | None = None) -> "Topology":
        """A copy with other link parameters (what if the links were twice as fast?)."""
        changes = {k: v for k, v in dict(link_bw_bytes_per_s=link_bw_bytes_per_s, hop_latency_s=hop_latency_s,
                                          efficiency=efficiency, in_network_reduction=in_network_reduction).items()
                   if v is not None}
        for k in ("link_bw_bytes_per_s", "hop_latency_s"):
            if k in changes and not (isinstance(changes[k], (int, float)) and math.isfinite(changes[k]) and changes[k] > 0):
                raise ValueError(f"{k} must be > 0 and finite, got {changes[k]!r}")
        if "efficiency" in changes and not 0 < changes["efficiency"] <= 1:
            raise ValueError(f"efficiency must be in (0, 1], got {changes['efficiency']!r}")
        if "hop_latency_s" in changes:   # every latency of the fabric moves with the per-step one
            r = changes["hop_latency_s"] / self.hop_latency_s
            changes["protocols"] = tuple(p.scaled(r) for p in self.protocols)
            changes["in_network_latency_s"] = self.in_network_latency_s * r
        return dataclasses.replace(self, **changes)

    def scaled(self, bandwidth: float = 1.0, latency: float = 1.0) -> "Topology":
        """A copy with every bandwidth (links and NICs) and every latency multiplied (what-if sliders)."""
        for name, v in (("bandwidth", bandwidth), ("latency", latency)):
            if isinstance(v, bool) or not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
                raise ValueError(f"{name} scale must be > 0 and finite, got {v!r}")
        params = dict(self.params)
        if "nic_bw_bytes_per_s" in params:
            params["nic_bw_bytes_per_s"] *= bandwidth
            params["nic_latency_s"] *= latency
            params["nic_protocols"] = tuple(p.scaled(latency) for p in params.get("nic_protocols", ()))
        return dataclasses.replace(
            self, params=params, link_bw_bytes_per_s=self.link_bw_bytes_per_s * bandwidth,
            hop_latency_s=self.hop_latency_s * latency, in_network_latency_s=self.in_network_latency_s * latency,
            protocols=tuple(p.scaled(latency) for p in self.protocols))

    @property
    def n_links(self) -> int:
        return len(self.indices) // 2

    def edges(self) -> np.ndarray:
        """Each undirected link once, as an (n_links, 2) array with u < v."""
        src = np.repeat(np.arange(self.n_nodes), np.diff(self.indptr))
        e = np.stack([src, self.indices], axis=1)
        return e[e[:, 0] < e[:, 1]]


def _from_edges(name: str, kind: str, n_endpoints: int, n_nodes: int, edges, **kw) -> Topology:
    e = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    e = e[e[:, 0] != e[:, 1]]
    lo, hi = np.minimum(e[:, 0], e[:, 1]), np.maximum(e[:, 0], e[:, 1])
    key = np.unique(lo * n_nodes + hi)                  # a pair of nodes is joined by one link here
    lo, hi = key // n_nodes, key % n_nodes
    # both directions, ordered by (node, neighbour): CSR rows with sorted neighbours
    both = np.sort(np.concatenate([lo * n_nodes + hi, hi * n_nodes + lo]))
    src, dst = both // n_nodes, both % n_nodes
    indptr = np.zeros(n_nodes + 1, dtype=np.int64)
    indptr[1:] = np.cumsum(np.bincount(src, minlength=n_nodes))
    return Topology(name, kind, n_endpoints, n_nodes, indptr, dst, **kw)


def _whole(name: str, v, minimum: int = 1) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, np.integer)) or v < minimum:
        raise ValueError(f"{name} must be a whole number >= {minimum}, got {v!r}")
    return int(v)


# -- builders ---------------------------------------------------------------------------------------
def torus(dims, wraparound=True, twisted: bool = False) -> Topology:
    """A torus (or mesh) of shape ``dims``; ``wraparound`` is one bool or one per dimension.

    ``twisted=True`` twists the wraparound of the first dimension by half the second (the
    twisted torus of TPU v4 slices, Jouppi et al. ISCA 2023), which shortens the longest paths.
    """
    dims = tuple(_whole("each dimension", d) for d in dims)
    if not dims:
        raise ValueError("dims must name at least one dimension")
    wrap = tuple(bool(wraparound) for _ in dims) if isinstance(wraparound, bool) else tuple(map(bool, wraparound))
    if len(wrap) != len(dims):
        raise ValueError("give one wraparound flag per dimension")
    if twisted and (len(dims) < 2 or not wrap[0]):
        raise ValueError("a twisted torus needs two or more dimensions and wraparound on the first")
    n = math.prod(dims)
    coords = np.array(list(itertools.product(*[range(d) for d in dims])), dtype=np.int64).reshape(n, len(dims))
    strides = np.array([math.prod(dims[i + 1:]) for i in range(len(dims))], dtype=np.int64)
    edges = []
    for axis, (k, w) in enumerate(zip(dims, wrap)):
        if k == 1:
            continue
        nxt = coords.copy()
        nxt[:, axis] += 1
        inside = nxt[:, axis] < k
        if w and k > 2:
            wrapped = ~inside
            nxt[wrapped, axis] = 0
            if twisted and axis == 0:
                nxt[wrapped, 1] = (nxt[wrapped, 1] + dims[1] // 2) % dims[1]
            inside = np.ones(n, dtype=bool)
        src = np.arange(n)[inside]
        edges.append(np.stack([src, nxt[inside] @ strides], axis=1))
    name = ("twisted " if twisted else "") + ("torus " if any(wrap) else "mesh ") + "×".join(map(str, dims))
    return _from_edges(name, "torus" if any(wrap) else "mesh", n, n,
                       np.concatenate(edges) if edges else np.zeros((0, 2)), dims=dims, wraparound=wrap,
                       params={"twisted": twisted})


def mesh(dims) -> Topology:
    return torus(dims, wraparound=False)


def ring(n: int) -> Topology:
    """n chips in a bidirectional ring."""
    t = torus((_whole("n", n),), wraparound=True)
    return Topology(f"ring of {n}", "ring", t.n_endpoints, t.n_nodes, t.indptr, t.indices, t.dims, t.wraparound)


def full_mesh(n: int) -> Topology:
    """Every chip linked directly to every other (e.g. 8 GPUs with point-to-point links)."""
    n = _whole("n", n)
    e = [(i, j) for i in range(n) for j in range(i + 1, n)]
    return _from_edges(f"full mesh of {n}", "full_mesh", n, n, e if e else np.zeros((0, 2)))


def switched(n: int, name: str = "NVSwitch domain") -> Topology:
    """n chips on one non-blocking switch layer (NVSwitch node or rack), drawn as one switch node.

    Every chip-to-chip path is 2 hops (chip → switch → chip); bandwidth is per chip, not shared.
    """
    n = _whole("n", n)
    return _from_edges(f"{name} ({n} chips)", "switched", n, n + 1, [(i, n) for i in range(n)],
                       assumptions="the switch fabric is non-blocking and shown as one node")


def nvl72() -> Topology:
    """GB200 NVL72: 72 GPUs on one NVLink switch domain (18 NVSwitch trays act as one layer)."""
    return switched(72, "NVL72 rack")


def fat_tree(k: int, oversubscription: int = 1) -> Topology:
    """A 3-level k-ary fat tree (Al-Fares et al. 2008): k pods of k/2 edge and k/2 aggregation
    switches, (k/2)² core switches; each edge switch serves ``oversubscription·k/2`` chips, so
    ``oversubscription`` = 2 halves the bandwidth up from the edge. ``k³/4 · oversubscription`` chips.
    """
    k = _whole("k", k, 2)
    if k % 2:
        raise ValueError("k must be even")
    o = _whole("oversubscription", oversubscription)
    h = k // 2
    hosts_per_edge = o * h
    n_hosts = k * h * hosts_per_edge
    edge0 = n_hosts
    agg0 = edge0 + k * h
    core0 = agg0 + k * h
    n_nodes = core0 + h * h
    edges = []
    for pod in range(k):
        for e in range(h):
            esw = edge0 + pod * h + e
            for x in range(hosts_per_edge):
                edges.append(((pod * h + e) * hosts_per_edge + x, esw))
            for a in range(h):
                edges.append((esw, agg0 + pod * h + a))
        for a in range(h):
            for c in range(h):
                edges.append((agg0 + pod * h + a, core0 + a * h + c))
    return _from_edges(f"{k}-ary fat tree" + (f", {o}:1 oversubscribed" if o > 1 else ""), "fat_tree",
                       n_hosts, n_nodes, edges, params={"k": k, "oversubscription": o})


def dragonfly(a: int, p: int, h: int, groups: int | None = None) -> Topology:
    """Dragonfly (Kim et al. ISCA 2008): groups of ``a`` all-to-all routers, ``p`` chips per router,
    ``h`` global links per router; ``groups`` defaults to the balanced ``a·h + 1`` (one global link
    between every pair of groups). Global link g of group i goes to group (i + g + 1) mod groups.
    """
    a, p, h = _whole("a", a), _whole("p", p), _whole("h", h)
    g = a * h + 1 if groups is None else _whole("groups", groups, 2)
    if g > a * h + 1:
        raise ValueError(f"{g} groups need more than a·h = {a * h} global links per group")
    n_chips = g * a * p
    r0 = n_chips
    edges = []
    for grp in range(g):
        for r in range(a):
            router = r0 + grp * a + r
            for x in range(p):
                edges.append(((grp * a + r) * p + x, router))
            for r2 in range(r + 1, a):
                edges.append((router, r0 + grp * a + r2))
    # group pairs (i, j), i < j, one link each, spread over the routers' global ports
    port = [0] * g
    for i in range(g):
        for j in range(i + 1, g):
            ri = r0 + i * a + (port[i] // h) % a
            rj = r0 + j * a + (port[j] // h) % a
            port[i] += 1
            port[j] += 1
            edges.append((ri, rj))
    return _from_edges(f"dragonfly a={a} p={p} h={h}, {g} groups", "dragonfly", n_chips, r0 + g * a, edges,
                       params={"a": a, "p": p, "h": h, "groups": g})


def boardfly(groups: int = 36, boards_per_group: int = 8, chips_per_board: int = 4) -> Topology:
    """A BoardFly-like network, our reconstruction (little is public; read the assumptions).

    Public: TPU 8i pods of up to 1,152 chips = 36 groups × 8 boards × 4 chips, a low-diameter
    "Boardfly" topology, at most 7 ICI hops (secondary reports of Google's Apr 2026 announcement).
    Assumed here, dragonfly-style with chips as routers: the 4 chips of a board are all linked; chip
    c of each board links to chip c of every other board in its group; every pair of groups is joined
    by one global link, spread round-robin over the group's chips.
    """
    g, b, c = (_whole(n, v) for n, v in (("groups", groups), ("boards_per_group", boards_per_group),
                                          ("chips_per_board", chips_per_board)))
    per_group = b * c
    node = lambda grp, brd, chip: (grp * b + brd) * c + chip  # noqa: E731
    edges = []
    for grp in range(g):
        for brd in range(b):
            for x in range(c):
                for y in range(x + 1, c):
                    edges.append((node(grp, brd, x), node(grp, brd, y)))
                for brd2 in range(brd + 1, b):
                    edges.append((node(grp, brd, x), node(grp, brd2, x)))
    port = [0] * g
    for i in range(g):
        for j in range(i + 1, g):
            a_ = i * per_group + port[i] % per_group
            b_ = j * per_group + port[j] % per_group
            port[i] += 1
            port[j] += 1
            edges.append((a_, b_))
    n = g * per_group
    return _from_edges(f"BoardFly-like, {g}×{b}×{c} = {n} chips", "boardfly", n, n, edges,
                       assumptions=" ".join(boardfly.__doc__.split("Assumed here, ")[1].split()),
                       params={"groups": g, "boards_per_group": b, "chips_per_board": c})


def tpu_pod(slice_shape=(4, 4, 4), twisted: bool = False) -> Topology:
    """A TPU v4/v5p slice built from 4×4×4 cubes joined by optical circuit switches (OCS).

    Each dimension of ``slice_shape`` must be 1, 2 or a multiple of 4. The OCS closes the ring of a
    dimension only when the slice spans whole cubes along it (a multiple of 4): then that dimension
    has wraparound; smaller slices are meshes along it (scaling-book, "How to think about TPUs").
    """
    dims = tuple(_whole("each dimension", d) for d in slice_shape)
    if len(dims) != 3:
        raise ValueError("a TPU slice shape has three dimensions, e.g. (4, 4, 8)")
    for d in dims:
        if d not in (1, 2) and d % 4:
            raise ValueError(f"slice dimensions must be 1, 2 or multiples of 4 (whole cubes), got {dims}")
    t = torus(dims, wraparound=tuple(d % 4 == 0 for d in dims), twisted=twisted)
    return Topology(f"TPU slice {'×'.join(map(str, dims))}" + (" (twisted)" if twisted else ""), "tpu_pod",
                    t.n_endpoints, t.n_nodes, t.indptr, t.indices, t.dims, t.wraparound,
                    assumptions="OCS adds no hop; wraparound only along dimensions that span whole 4-chip cubes")


# -- hop statistics (Numba) ---------------------------------------------------------------------------
@njit(cache=True)
def _popcount(x):
    """Set bits of a uint64 (SWAR)."""
    x = x - ((x >> np.uint64(1)) & np.uint64(0x5555555555555555))
    x = (x & np.uint64(0x3333333333333333)) + ((x >> np.uint64(2)) & np.uint64(0x3333333333333333))
    x = (x + (x >> np.uint64(4))) & np.uint64(0x0F0F0F0F0F0F0F0F)
    return (x * np.uint64(0x0101010101010101)) >> np.uint64(56)


@njit(cache=True, parallel=True)
def _hop_histogram(indptr, indices, n_nodes, n_endpoints):
    """Histogram of hop counts over ordered pairs of distinct endpoints, and unreachable pairs.

    Bit-parallel BFS: 64 sources at a time, one bit each in a uint64 per node. Each level pulls
    the frontier bits of a node's neighbours (``new = OR(frontier[u]) & ~visited[v]``), so one pass
    over the links advances 64 searches. Batches of sources run in parallel (``prange``), each with
    its own arrays and histogram row, summed at the end.
    """
    n_batches = (n_endpoints + 63) // 64
    hist = np.zeros((n_batches, n_nodes + 1), dtype=np.int64)
    reached = np.zeros(n_batches, dtype=np.int64)
    for bt in prange(n_batches):
        s0 = bt * 64
        width = min(64, n_endpoints - s0)
        visited = np.zeros(n_nodes, dtype=np.uint64)
        frontier = np.zeros(n_nodes, dtype=np.uint64)
        nxt = np.zeros(n_nodes, dtype=np.uint64)
        for i in range(width):
            bit = np.uint64(1) << np.uint64(i)
            visited[s0 + i] |= bit
            frontier[s0 + i] |= bit
        level = 0
        active = True
        while active:
            level += 1
            active = False
            for v in range(n_nodes):
                acc = np.uint64(0)
                for e in range(indptr[v], indptr[v + 1]):
                    acc |= frontier[indices[e]]
                new = acc & ~visited[v]
                nxt[v] = new
                if new != np.uint64(0):
                    visited[v] |= new
                    active = True
                    if v < n_endpoints:
                        cnt = np.int64(_popcount(new))
                        hist[bt, level] += cnt
                        reached[bt] += cnt
            for v in range(n_nodes):
                frontier[v] = nxt[v]
    out = np.zeros(n_nodes + 1, dtype=np.int64)
    for bt in range(n_batches):
        out += hist[bt]
    return out, np.int64(n_endpoints) * (n_endpoints - 1) - reached.sum()


def hop_histogram(topo: Topology) -> np.ndarray:
    """``h[d]`` = number of ordered pairs of distinct chips whose shortest path has ``d`` hops."""
    if topo.n_endpoints < 2:
        raise ValueError("hop statistics need at least two chips")
    hist, unreachable = _hop_histogram(topo.indptr, topo.indices, topo.n_nodes, topo.n_endpoints)
    if unreachable:
        raise ValueError(f"{topo.name} is not connected: {unreachable} ordered pairs of chips cannot reach each other")
    last = int(np.nonzero(hist)[0].max())
    return hist[: last + 1]


def hop_stats(topo: Topology) -> dict:
    """``diameter``, ``mean_hops`` (over ordered pairs of distinct chips), ``histogram``, ``n_pairs``."""
    h = hop_histogram(topo)
    pairs = int(h.sum())
    return {"diameter": len(h) - 1, "mean_hops": float(np.arange(len(h)) @ h) / pairs, "histogram": h,
            "n_pairs": pairs, "n_chips": topo.n_endpoints, "n_links": topo.n_links}


def torus_mean_hops(dims, wraparound=True) -> float:
    """Analytic mean hops over ordered pairs of distinct nodes of a torus/mesh (sum over dimensions)."""
    dims = tuple(dims)
    wrap = (wraparound,) * len(dims) if isinstance(wraparound, bool) else tuple(wraparound)
    n = math.prod(dims)
    total = 0.0  # mean over all ordered pairs including identical ones, then rescaled
    for k, w in zip(dims, wrap):
        if w and k > 2:
            per_dim = sum(min(d, k - d) for d in range(k)) / k          # mean ring distance
        else:
            per_dim = (k * k - 1) / (3 * k)                              # mean |i - j| on a line
        total += per_dim
    return total * n / (n - 1)


def torus_diameter(dims, wraparound=True) -> int:
    wrap = (wraparound,) * len(dims) if isinstance(wraparound, bool) else tuple(wraparound)
    return sum(k // 2 if (w and k > 2) else k - 1 for k, w in zip(dims, wrap))


def bisection_links(topo: Topology) -> int:
    """Links crossing the natural halving cut, counted on the graph.

    Tori, meshes, rings: across the middle of the longest dimension. Fat trees: half the pods on
    each side, core switches with the first half. Dragonflies and BoardFly: half the groups on
    each side. Switched domains: half the chips on each side of the switch. Compare with
    :func:`bisection_links_analytic`.
    """
    side = _halving(topo)
    e = topo.edges()
    return int(np.sum(side[e[:, 0]] != side[e[:, 1]]))


def _halving(topo: Topology) -> np.ndarray:
    n = topo.n_nodes
    if topo.kind in ("torus", "mesh", "ring", "tpu_pod"):
        axis = int(np.argmax(topo.dims))
        k = topo.dims[axis]
        stride = math.prod(topo.dims[axis + 1:])
        return ((np.arange(n) // stride) % k) < k // 2
    if topo.kind == "fat_tree":
        k, o = topo.params["k"], topo.params["oversubscription"]
        h = k // 2
        hosts = topo.n_endpoints
        side = np.zeros(n, dtype=bool)
        pod_of_host = np.arange(hosts) // (h * o * h)
        side[:hosts] = pod_of_host < h
        pod_of_edge = np.arange(k * h) // h
        side[hosts:hosts + k * h] = pod_of_edge < h
        side[hosts + k * h:hosts + 2 * k * h] = pod_of_edge < h
        side[hosts + 2 * k * h:] = True
        return side
    if topo.kind in ("dragonfly", "boardfly"):
        g = topo.params["groups"]
        chips_per_group = topo.n_endpoints // g
        side = np.zeros(n, dtype=bool)
        side[:topo.n_endpoints] = (np.arange(topo.n_endpoints) // chips_per_group) < g // 2
        if topo.kind == "dragonfly":
            a = topo.params["a"]
            side[topo.n_endpoints:] = (np.arange(n - topo.n_endpoints) // a) < g // 2
        return side
    if topo.kind == "switched":
        side = np.zeros(n, dtype=bool)
        side[: topo.n_endpoints // 2] = True
        side[topo.n_endpoints:] = True
        return side
    raise ValueError(f"no natural bisection for a {topo.kind} network")


def bisection_links_analytic(topo: Topology) -> int:
    """Textbook bisection link counts: torus 2N/k (wraparound) or N/k, fat tree k³/8 core links,
    dragonfly/BoardFly ⌊g/2⌋·⌈g/2⌉ global links (one per group pair), switch N/2 chip links."""
    if topo.kind in ("torus", "mesh", "ring", "tpu_pod"):
        axis = int(np.argmax(topo.dims))
        k = topo.dims[axis]
        wraps = topo.wraparound[axis] and k > 2
        return (2 if wraps else 1) * topo.n_endpoints // k if k > 1 else 0
    if topo.kind == "fat_tree":
        return topo.params["k"] ** 3 // 8
    if topo.kind in ("dragonfly", "boardfly"):
        g = topo.params["groups"]
        return (g // 2) * (g - g // 2)
    if topo.kind == "switched":
        return topo.n_endpoints // 2
    raise ValueError(f"no textbook bisection for a {topo.kind} network")


def gpu_cluster(nodes: int, gpus_per_node: int = 8, nic_bw_bytes_per_s: float = 50e9,
                nic_latency_s: float = 5e-6) -> Topology:
    """GPU nodes (an NVSwitch each) joined by a rail-optimised, non-blocking InfiniBand fabric.

    Each GPU has its own NIC; NIC ``g`` of every node sits on rail switch ``g`` (NVIDIA's DGX
    SuperPOD design, drawn as one non-blocking switch per rail). Chips: ``nodes·gpus_per_node``.
    """
    nodes, g = _whole("nodes", nodes), _whole("gpus_per_node", gpus_per_node)
    n = nodes * g
    nvs0 = n
    rail0 = n + nodes
    edges = [(node * g + i, nvs0 + node) for node in range(nodes) for i in range(g)]
    edges += [(node * g + i, rail0 + i) for node in range(nodes) for i in range(g)] if nodes > 1 else []
    return _from_edges(f"{nodes} nodes × {g} GPUs (NVSwitch + IB rails)", "cluster", n, rail0 + g, edges,
                       params={"nodes": nodes, "gpus_per_node": g, "nic_bw_bytes_per_s": nic_bw_bytes_per_s,
                               "nic_latency_s": nic_latency_s},
                       assumptions="each rail's IB fabric is non-blocking; one NIC per GPU")


# -- systems with published link figures (data/fabrics.toml; notebook 03) -------------------------------
def _links(fabric: str) -> dict:
    f = fabrics()[fabric]
    d = {"link_bw_bytes_per_s": f["link_bw_bytes_per_s"], "hop_latency_s": f["hop_latency_s"],
         "efficiency": f["efficiency"], "protocols": f.get("protocols", ())}
    for k in ("in_network_latency_s", "in_network_efficiency"):
        if k in f:
            d[k] = f[k]
    return d


def hgx_h100(nvls: bool = True) -> Topology:
    """8 H100 SXM on NVSwitch, NVLink 4 figures and NCCL's protocols from data/fabrics.toml."""
    return dataclasses.replace(switched(8, "HGX H100"), **_links("nvlink4"), in_network_reduction=nvls)


def h100_cluster(nodes: int) -> Topology:
    """HGX H100 nodes on NDR InfiniBand rails (one 400 Gb/s NIC per GPU), from data/fabrics.toml."""
    ib = fabrics()["ndr-infiniband"]
    c = gpu_cluster(nodes, 8, ib["link_bw_bytes_per_s"], ib["hop_latency_s"])
    params = {**c.params, "nic_protocols": ib.get("protocols", ()), "nic_efficiency": ib["efficiency"]}
    return dataclasses.replace(c, **_links("nvlink4"), params=params)


_ICI = {"v4": "ici-v4-v5e", "v5e": "ici-v4-v5e", "v5p": "ici-v5p-v6e", "v6e": "ici-v5p-v6e"}


def tpu_slice(generation: str, shape) -> Topology:
    """A TPU slice: ICI links of 45 GB/s (v4, v5e) or 90 GB/s (v5p, v6e) per direction, ~1 µs a hop.

    v4/v5p slices wrap along whole 4-chip cubes; v5e/v6e 2D slices wrap only along full 16-chip axes.
    """
    if generation not in _ICI:
        raise ValueError(f"generation must be one of {sorted(_ICI)}, got {generation!r}")
    if generation in ("v4", "v5p"):
        t = tpu_pod(tuple(shape))
    else:
        dims = tuple(_whole("each dimension", d) for d in shape)
        t = torus(dims, wraparound=tuple(d == 16 for d in dims))
    return dataclasses.replace(t, name=f"TPU {generation} {'×'.join(map(str, t.dims))}", **_links(_ICI[generation]))


def tpu_axis(generation: str, length: int) -> Topology:
    """One axis of a TPU slice (a ring if it spans a full wraparound, else a line)."""
    wraps = {"v4": 4, "v5p": 4, "v5e": 16, "v6e": 16}
    if generation not in wraps:
        raise ValueError(f"generation must be one of {sorted(wraps)}, got {generation!r}")
    length = _whole("length", length)
    full = length % wraps[generation] == 0
    return dataclasses.replace(torus((length,), wraparound=full), name=f"TPU {generation} axis of {length}",
                               **_links(_ICI[generation]))


def tpu_multislice(generation: str, slice_shape, slices: int) -> Topology:
    """``slices`` TPU slices of ``slice_shape`` (ICI inside each, as :func:`tpu_slice`) joined by the
    data-centre network (DCN, "multislice"): each chip's share of its host's NICs, from the pod's
    entry in ``data/clusters.toml``. The DCN is drawn as one non-blocking switch node.
    """
    from accelbook.specs.clusters import cluster_for

    one = tpu_slice(generation, slice_shape)
    slices = _whole("slices", slices)
    dcn = cluster_for(f"tpu-{generation}")
    n = one.n_endpoints
    p = n * slices
    inside = one.edges()
    edges = np.concatenate([inside + k * n for k in range(slices)] +
                           ([np.stack([np.arange(p), np.full(p, p)], axis=1)] if slices > 1 else []))
    t = _from_edges(f"{slices} × TPU {generation} slice {'×'.join(map(str, one.dims))} (DCN)", "multislice", p,
                    p + (1 if slices > 1 else 0), edges,
                    params={"slice": one, "slices": slices,
                            "dcn_bw_bytes_per_s": dcn.network_bw_bytes_per_s * dcn.network_efficiency,
                            "dcn_latency_s": dcn.network_latency_s},
                    assumptions=f"ICI inside each slice; {dcn.name}: DCN per chip as in data/clusters.toml, "
                                "shown as one non-blocking switch")
    return dataclasses.replace(t, **_links(_ICI[generation]))


PRESETS = {"hgx_h100": hgx_h100, "h100_cluster": h100_cluster, "tpu_slice": tpu_slice, "tpu_axis": tpu_axis,
           "tpu_multislice": tpu_multislice}


# -- link load under minimal routing (Numba) -------------------------------------------------------------
@njit(cache=True, parallel=True)
def _link_load(indptr, indices, n_nodes, n_endpoints, dest, demand):
    """Load on every directed link (CSR position) when each source sends one unit to each of its
    destinations, split equally over all shortest paths (minimal routing with ECMP).

    ``dest[s] = -1``: source s sends to every other chip (uniform all-to-all); otherwise to dest[s];
    ``dest[s] = -2``: source s sends ``demand[s, t]`` to each chip t (a traffic matrix).
    Brandes' dependency accumulation restricted to chip destinations; sources run in parallel
    chunks, each with its own buffers and load array, summed at the end.
    """
    n_edges = len(indices)
    n_chunks = min(n_endpoints, 64)
    load = np.zeros((n_chunks, n_edges), dtype=np.float64)
    for c in prange(n_chunks):
        dist = np.empty(n_nodes, dtype=np.int64)
        sigma = np.empty(n_nodes, dtype=np.float64)
        delta = np.empty(n_nodes, dtype=np.float64)
        order = np.empty(n_nodes, dtype=np.int64)
        wants = np.zeros(n_nodes, dtype=np.float64)
        for s in range(c, n_endpoints, n_chunks):
            if dest[s] == -1:
                for t in range(n_endpoints):
                    wants[t] = 1.0
                wants[s] = 0.0
            elif dest[s] == -2:
                for t in range(n_endpoints):
                    wants[t] = demand[s, t]
                wants[s] = 0.0
            else:
                wants[dest[s]] = 1.0
                if dest[s] == s:
                    wants[s] = 0.0
            dist[:] = -1
            sigma[:] = 0.0
            delta[:] = 0.0
            dist[s] = 0
            sigma[s] = 1.0
            head = 0
            tail = 1
            order[0] = s
            while head < tail:
                u = order[head]
                head += 1
                for e in range(indptr[u], indptr[u + 1]):
                    v = indices[e]
                    if dist[v] < 0:
                        dist[v] = dist[u] + 1
                        order[tail] = v
                        tail += 1
                    if dist[v] == dist[u] + 1:
                        sigma[v] += sigma[u]
            # walk back from the farthest node: flow through u->v is sigma[u]/sigma[v] of what reaches v
            for i in range(tail - 1, -1, -1):
                u = order[i]
                for e in range(indptr[u], indptr[u + 1]):
                    v = indices[e]
                    if dist[v] == dist[u] + 1:
                        f = sigma[u] / sigma[v] * (wants[v] + delta[v])
                        load[c, e] += f
                        delta[u] += f
            if dest[s] < 0:
                for t in range(n_endpoints):
                    wants[t] = 0.0
            else:
                wants[dest[s]] = 0.0
    out = np.zeros(n_edges, dtype=np.float64)
    for c in range(n_chunks):
        out += load[c]
    return out


def link_loads(topo: Topology, traffic="uniform", seed: int = 0) -> np.ndarray:
    """Flow on each directed link (in CSR order: link ``indptr[u]+i`` goes u -> indices[...]).

    ``traffic``: ``"uniform"`` (every chip sends one unit to every other chip), ``"permutation"``
    (each chip sends one unit to one other chip of a seeded random permutation), or a chips × chips
    array of what each chip sends to each other (bytes, say; the diagonal is ignored). Routing: minimal,
    split equally over all shortest paths. On a torus this equals dimension-ordered routing's load
    for uniform traffic (every link of a dimension carries the same load, by symmetry); on a fat tree
    shortest paths are the up-down paths; on a dragonfly they are the minimal paths.
    """
    demand = np.zeros((0, 0))
    if not isinstance(traffic, str):
        traffic = np.asarray(traffic, dtype=np.float64)
    if isinstance(traffic, np.ndarray):
        demand = np.ascontiguousarray(traffic, dtype=np.float64)
        if demand.shape != (topo.n_endpoints, topo.n_endpoints):
            raise ValueError(f"a traffic matrix for {topo.name} must be {topo.n_endpoints}×{topo.n_endpoints}, "
                             f"got {demand.shape}")
        if not np.isfinite(demand).all() or (demand < 0).any():
            raise ValueError("a traffic matrix must hold finite amounts >= 0")
        dest = np.full(topo.n_endpoints, -2, dtype=np.int64)
    elif traffic == "uniform":
        dest = np.full(topo.n_endpoints, -1, dtype=np.int64)
    elif traffic == "permutation":
        rng = np.random.default_rng(seed)
        dest = rng.permutation(topo.n_endpoints).astype(np.int64)
    else:
        raise ValueError(f"traffic must be 'uniform' or 'permutation', got {traffic!r}")
    hop_histogram(topo)  # raises a clear error if the network is not connected
    return _link_load(topo.indptr, topo.indices, topo.n_nodes, topo.n_endpoints, dest, demand)


def all_to_all_load(topo: Topology) -> dict:
    """Uniform all-to-all: the busiest directed link's flow, and the mean (units: one message per pair)."""
    load = link_loads(topo, "uniform")
    return {"max_link_load": float(load.max()), "mean_link_load": float(load.mean()),
            "total_link_load": float(load.sum()), "n_directed_links": len(load)}


def torus_all_to_all_max_load(dims) -> float:
    """Analytic busiest-link flow for uniform all-to-all on a torus with wraparound: max over
    dimensions of ``N·m_d / 2``, with ``m_d`` the mean ring distance of dimension d (k > 2)."""
    n = math.prod(dims)
    return max(n * (sum(min(d, k - d) for d in range(k)) / k) / 2 for k in dims if k > 2)


# -- dimension-ordered routing on tori (Numba) --------------------------------------------------------------
@njit(cache=True)
def _edge_index(indptr, indices, u, v):
    for e in range(indptr[u], indptr[u + 1]):
        if indices[e] == v:
            return e
    return -1


@njit(cache=True)
def _dor_load(indptr, indices, dims, wrap, src, dst):
    """Directed-link loads when each (src[i], dst[i]) pair sends one unit by dimension-ordered routing:
    dimension 0 first, then 1, ...; on a ring the shorter way round, a tie split half each way."""
    nd = len(dims)
    strides = np.ones(nd, dtype=np.int64)
    for a in range(nd - 2, -1, -1):
        strides[a] = strides[a + 1] * dims[a + 1]
    load = np.zeros(len(indices), dtype=np.float64)
    for i in range(len(src)):
        s, d = src[i], dst[i]
        if s == d:
            continue
        # walk dimension by dimension; a tie (k even, distance k/2) splits the unit into two halves
        cur = np.empty(2, dtype=np.int64)
        wgt = np.empty(2, dtype=np.float64)
        cur[0] = s
        wgt[0] = 1.0
        n_paths = 1
        for a in range(nd):
            k = dims[a]
            cs = (cur[0] // strides[a]) % k
            cd = (d // strides[a]) % k
            if cs == cd:
                continue
            fwd = (cd - cs) % k
            dirs = np.zeros(2, dtype=np.int64)
            n_dirs = 1
            if wrap[a] and k > 2:
                if fwd * 2 < k:
                    dirs[0] = 1
                elif fwd * 2 > k:
                    dirs[0] = -1
                else:
                    dirs[0] = 1
                    dirs[1] = -1
                    n_dirs = 2
            else:
                dirs[0] = 1 if cd > cs else -1
            new_n = 0
            new_cur = np.empty(4, dtype=np.int64)
            new_w = np.empty(4, dtype=np.float64)
            for p in range(n_paths):
                for q in range(n_dirs):
                    node = cur[p]
                    w = wgt[p] / n_dirs
                    c = (node // strides[a]) % k
                    while c != cd:
                        c2 = (c + dirs[q]) % k
                        nxt = node + (c2 - c) * strides[a]
                        load[_edge_index(indptr, indices, node, nxt)] += w
                        node = nxt
                        c = c2
                    new_cur[new_n] = node
                    new_w[new_n] = w
                    new_n += 1
            # all branches end at the same node: merge them
            cur[0] = new_cur[0]
            total = 0.0
            for p in range(new_n):
                total += new_w[p]
            wgt[0] = total
            n_paths = 1
    return load


def dor_link_loads(topo: Topology, traffic: str = "uniform", seed: int = 0) -> np.ndarray:
    """Directed-link loads under dimension-ordered routing on a torus or mesh (CSR order, as
    :func:`link_loads`). ``traffic``: ``"uniform"`` or a seeded ``"permutation"``."""
    if topo.kind not in ("torus", "mesh", "ring", "tpu_pod") or not topo.dims:
        raise ValueError("dimension-ordered routing needs a torus or mesh")
    if any(topo.wraparound) and topo.params.get("twisted"):
        raise ValueError("dimension-ordered routing is not defined here for twisted tori")
    n = topo.n_endpoints
    if traffic == "uniform":
        s, d = np.divmod(np.arange(n * n, dtype=np.int64), n)
    elif traffic == "permutation":
        s = np.arange(n, dtype=np.int64)
        d = np.random.default_rng(seed).permutation(n).astype(np.int64)
    else:
        raise ValueError(f"traffic must be 'uniform' or 'permutation', got {traffic!r}")
    return _dor_load(topo.indptr, topo.indices, np.array(topo.dims, dtype=np.int64),
                     np.array(topo.wraparound, dtype=np.bool_), s, d)
