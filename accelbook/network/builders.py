"""Textbook networks as graphs: rings, tori and meshes, full meshes, switches, fat trees, dragonflies.

Each builder returns a :class:`~accelbook.network.graph.Topology` with the default link figures
(100 GB/s, 1 µs a hop); systems with published figures are in :mod:`accelbook.network.systems`.

- :func:`ring`, :func:`torus` (and :func:`mesh`, ``wraparound=False``; ``twisted=True`` for a
  twisted 2D/3D torus), :func:`full_mesh`;
- :func:`switched` (one non-blocking switch node, :func:`nvl72`), :func:`fat_tree` (k-ary, with
  oversubscription), :func:`gpu_cluster` (NVSwitch nodes on rail-optimised InfiniBand);
- :func:`dragonfly`, :func:`boardfly` (a labelled guess at TPU 8i's network) and :func:`tpu_pod`
  (4×4×4 cubes joined by optical switches).
"""

from __future__ import annotations

import itertools
import math

import numpy as np

from accelbook.checks import positive, whole

from .geometry import axis_is_ring
from .graph import Topology, check_size, from_edges


def torus(dims, wraparound=True, twisted: bool = False) -> Topology:
    """A torus (or mesh) of shape ``dims``; ``wraparound`` is one bool or one per dimension.

    ``twisted=True`` twists the wraparound of the first dimension by half the second (the
    twisted torus of TPU v4 slices, Jouppi et al. ISCA 2023), which shortens the longest paths.
    """
    dims = tuple(whole("each dimension", d) for d in dims)
    if not dims:
        raise ValueError("dims must name at least one dimension")
    wrap = tuple(bool(wraparound) for _ in dims) if isinstance(wraparound, bool) else tuple(map(bool, wraparound))
    if len(wrap) != len(dims):
        raise ValueError("give one wraparound flag per dimension")
    if twisted and (len(dims) < 2 or not wrap[0]):
        raise ValueError("a twisted torus needs two or more dimensions and wraparound on the first")
    n = math.prod(dims)
    check_size(f"torus{dims}", n, n * len(dims))
    coords = np.array(list(itertools.product(*[range(d) for d in dims])), dtype=np.int64).reshape(n, len(dims))
    strides = np.array([math.prod(dims[i + 1:]) for i in range(len(dims))], dtype=np.int64)
    edges = []
    for axis, (k, w) in enumerate(zip(dims, wrap)):
        if k == 1:
            continue
        nxt = coords.copy()
        nxt[:, axis] += 1
        inside = nxt[:, axis] < k
        if axis_is_ring(k, w):      # with k = 2 the wraparound would be the forward link again
            wrapped = ~inside
            nxt[wrapped, axis] = 0
            if twisted and axis == 0:
                nxt[wrapped, 1] = (nxt[wrapped, 1] + dims[1] // 2) % dims[1]
            inside = np.ones(n, dtype=bool)
        src = np.arange(n)[inside]
        edges.append(np.stack([src, nxt[inside] @ strides], axis=1))
    name = ("twisted " if twisted else "") + ("torus " if any(wrap) else "mesh ") + "×".join(map(str, dims))
    return from_edges(name, "torus" if any(wrap) else "mesh", n, n,
                      np.concatenate(edges) if edges else np.zeros((0, 2)), dims=dims, wraparound=wrap,
                      params={"twisted": twisted})


def mesh(dims) -> Topology:
    """A mesh of shape ``dims``: a torus without wraparound."""
    return torus(dims, wraparound=False)


def ring(n: int) -> Topology:
    """n chips in a bidirectional ring."""
    t = torus((whole("n", n),), wraparound=True)
    return Topology(f"ring of {n}", "ring", t.n_endpoints, t.n_nodes, t.indptr, t.indices, t.dims, t.wraparound)


def full_mesh(n: int) -> Topology:
    """Every chip linked directly to every other (e.g. 8 GPUs with point-to-point links)."""
    n = whole("n", n)
    check_size(f"full_mesh({n})", n, n * (n - 1) / 2)
    e = [(i, j) for i in range(n) for j in range(i + 1, n)]
    return from_edges(f"full mesh of {n}", "full_mesh", n, n, e if e else np.zeros((0, 2)))


def switched(n: int, name: str = "NVSwitch domain") -> Topology:
    """n chips on one non-blocking switch layer (NVSwitch node or rack), drawn as one switch node.

    Every chip-to-chip path is 2 hops (chip → switch → chip); bandwidth is per chip, not shared.
    """
    n = whole("n", n)
    check_size(f"switched({n})", n + 1, n)
    return from_edges(f"{name} ({n} chips)", "switched", n, n + 1, [(i, n) for i in range(n)],
                      assumptions="the switch fabric is non-blocking and shown as one node")


def nvl72() -> Topology:
    """GB200 NVL72: 72 GPUs on one NVLink switch domain (18 NVSwitch trays act as one layer)."""
    return switched(72, "NVL72 rack")


def fat_tree(k: int, oversubscription: int = 1) -> Topology:
    """A 3-level k-ary fat tree (Al-Fares et al. 2008): k pods of k/2 edge and k/2 aggregation
    switches, (k/2)² core switches; each edge switch serves ``oversubscription·k/2`` chips, so
    ``oversubscription`` = 2 halves the bandwidth up from the edge. ``k³/4 · oversubscription`` chips.
    """
    k = whole("k", k, 2)
    if k % 2:
        raise ValueError("k must be even")
    o = whole("oversubscription", oversubscription)
    h = k // 2
    check_size(f"fat_tree({k}, oversubscription={o})", k * h * o * h + 2 * k * h + h * h, k * h * o * h + 2 * k * h * h)
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
    return from_edges(f"{k}-ary fat tree" + (f", {o}:1 oversubscribed" if o > 1 else ""), "fat_tree",
                      n_hosts, n_nodes, edges, params={"k": k, "oversubscription": o})


def dragonfly(a: int, p: int, h: int, groups: int | None = None) -> Topology:
    """Dragonfly (Kim et al. ISCA 2008): groups of ``a`` all-to-all routers, ``p`` chips per router,
    ``h`` global links per router; ``groups`` defaults to the balanced ``a·h + 1`` (one global link
    between every pair of groups). Each pair of groups gets one global link, made in the order
    (0, 1), (0, 2), ..., (1, 2), ...; a group's links take its routers' global ports in turn (``h``
    per router), so global port n of group i leads to group n if n < i, else to group n + 1.
    """
    a, p, h = whole("a", a), whole("p", p), whole("h", h)
    g = a * h + 1 if groups is None else whole("groups", groups, 2)
    if g > a * h + 1:
        raise ValueError(f"{g} groups need more than a·h = {a * h} global links per group")
    n_chips = g * a * p
    check_size(f"dragonfly({a}, {p}, {h}, groups={g})", n_chips + g * a, n_chips + g * a * (a - 1) / 2 + g * (g - 1) / 2)
    r0 = n_chips
    edges = []
    for grp in range(g):
        for r in range(a):
            router = r0 + grp * a + r
            for x in range(p):
                edges.append(((grp * a + r) * p + x, router))
            for r2 in range(r + 1, a):
                edges.append((router, r0 + grp * a + r2))
    # group pairs (i, j), i < j, one link each, spread over the routers' global ports (h per router)
    edges += [(r0 + i * a + (pi // h) % a, r0 + j * a + (pj // h) % a) for i, pi, j, pj in _group_pairs(g)]
    return from_edges(f"dragonfly a={a} p={p} h={h}, {g} groups", "dragonfly", n_chips, r0 + g * a, edges,
                      params={"a": a, "p": p, "h": h, "groups": g})


def _group_pairs(g: int):
    """Every pair of groups ``i < j`` once, with the global port each end uses: a group's ports are
    numbered 0, 1, ... in the order its links are made (pairs by ``i``, then ``j``), so the links of
    a group spread round-robin over its ports. Yields ``(i, port_i, j, port_j)``."""
    port = [0] * g
    for i in range(g):
        for j in range(i + 1, g):
            yield i, port[i], j, port[j]
            port[i] += 1
            port[j] += 1


def boardfly(groups: int = 36, boards_per_group: int = 8, chips_per_board: int = 4) -> Topology:
    """A BoardFly-like network, our reconstruction (little is public; read the assumptions).

    Public: TPU 8i pods of up to 1,152 chips = 36 groups × 8 boards × 4 chips, a low-diameter
    "Boardfly" topology, at most 7 ICI hops (secondary reports of Google's Apr 2026 announcement).
    Assumed here, dragonfly-style with chips as routers: the 4 chips of a board are all linked; chip
    c of each board links to chip c of every other board in its group; every pair of groups is joined
    by one global link, spread round-robin over the group's chips.
    """
    g, b, c = (whole(n, v) for n, v in (("groups", groups), ("boards_per_group", boards_per_group),
                                          ("chips_per_board", chips_per_board)))
    per_group = b * c
    check_size(f"boardfly({g}, {b}, {c})", g * per_group,
               g * b * (c * (c - 1) / 2 + c * (b - 1) / 2) + g * (g - 1) / 2)
    node = lambda grp, brd, chip: (grp * b + brd) * c + chip  # noqa: E731
    edges = []
    for grp in range(g):
        for brd in range(b):
            for x in range(c):
                for y in range(x + 1, c):
                    edges.append((node(grp, brd, x), node(grp, brd, y)))
                for brd2 in range(brd + 1, b):
                    edges.append((node(grp, brd, x), node(grp, brd2, x)))
    edges += [(i * per_group + pi % per_group, j * per_group + pj % per_group) for i, pi, j, pj in _group_pairs(g)]
    n = g * per_group
    return from_edges(f"BoardFly-like, {g}×{b}×{c} = {n} chips", "boardfly", n, n, edges,
                      assumptions=" ".join(boardfly.__doc__.split("Assumed here, ")[1].split()),
                      params={"groups": g, "boards_per_group": b, "chips_per_board": c})


def tpu_pod(slice_shape=(4, 4, 4), twisted: bool = False) -> Topology:
    """A TPU v4/v5p slice built from 4×4×4 cubes joined by optical circuit switches (OCS).

    Each dimension of ``slice_shape`` must be 1, 2 or a multiple of 4. The OCS closes the ring of a
    dimension only when the slice spans whole cubes along it (a multiple of 4): then that dimension
    has wraparound; smaller slices are meshes along it (scaling-book, "How to think about TPUs").
    """
    dims = tuple(whole("each dimension", d) for d in slice_shape)
    if len(dims) != 3:
        raise ValueError("a TPU slice shape has three dimensions, e.g. (4, 4, 8)")
    for d in dims:
        if d not in (1, 2) and d % 4:
            raise ValueError(f"slice dimensions must be 1, 2 or multiples of 4 (whole cubes), got {dims}")
    t = torus(dims, wraparound=tuple(d % 4 == 0 for d in dims), twisted=twisted)
    return Topology(f"TPU slice {'×'.join(map(str, dims))}" + (" (twisted)" if twisted else ""), "tpu_pod",
                    t.n_endpoints, t.n_nodes, t.indptr, t.indices, t.dims, t.wraparound,
                    assumptions="OCS adds no hop; wraparound only along dimensions that span whole 4-chip cubes")


def gpu_cluster(nodes: int, gpus_per_node: int = 8, nic_bw_bytes_per_s: float = 50e9,
                nic_latency_s: float = 5e-6) -> Topology:
    """GPU nodes (an NVSwitch each) joined by a rail-optimised, non-blocking InfiniBand fabric.

    Each GPU has its own NIC; NIC ``g`` of every node sits on rail switch ``g`` (NVIDIA's DGX
    SuperPOD design, drawn as one non-blocking switch per rail). Chips: ``nodes·gpus_per_node``.
    """
    nodes, g = whole("nodes", nodes), whole("gpus_per_node", gpus_per_node)
    nic_bw_bytes_per_s = positive("nic_bw_bytes_per_s", nic_bw_bytes_per_s)
    nic_latency_s = positive("nic_latency_s", nic_latency_s)
    n = nodes * g
    check_size(f"gpu_cluster({nodes}, {g})", n + nodes + g, 2 * n)
    nvs0 = n
    rail0 = n + nodes
    edges = [(node * g + i, nvs0 + node) for node in range(nodes) for i in range(g)]
    edges += [(node * g + i, rail0 + i) for node in range(nodes) for i in range(g)] if nodes > 1 else []
    return from_edges(f"{nodes} nodes × {g} GPUs (NVSwitch + IB rails)", "cluster", n, rail0 + g, edges,
                      params={"nodes": nodes, "gpus_per_node": g, "nic_bw_bytes_per_s": nic_bw_bytes_per_s,
                              "nic_latency_s": nic_latency_s},
                      assumptions="each rail's IB fabric is non-blocking; one NIC per GPU")
