"""Paths through a network: hop statistics and link loads (Numba kernels beside their wrappers).

A hop is one link; the load of a directed link is what crosses it (CSR position ``indptr[u] + i``
is the link ``u -> indices[indptr[u] + i]``, :mod:`accelbook.network.graph`).

- :func:`hop_stats` (kernel ``_hop_histogram``) runs a breadth-first search from every chip
  (bit-parallel: 64 sources per pass, batches in parallel with ``prange``, each with its own
  buffers) and returns the diameter, the mean hop count over ordered pairs of distinct chips and
  the hop histogram. Analytic check: a k×k×k torus with wraparound has diameter ``3·⌊k/2⌋`` and,
  for even k, mean hops ``3·(k/4)·k³/(k³-1)`` (:mod:`accelbook.network.geometry`).
- :func:`link_loads` (kernel ``_link_load``): minimal routing, each pair's traffic split equally
  over all its shortest paths (ECMP), for uniform, permutation or matrix traffic;
  :func:`all_to_all_load` summarises the uniform case.
- :func:`dor_link_loads` (kernel ``_dor_load``): dimension-ordered routing on a torus or mesh.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from accelbook.checks import instance, whole

from .geometry import axis_is_ring
from .graph import GRID_KINDS, Topology


# -- hop statistics ------------------------------------------------------------------------------------
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


#: the most work a path function may take on (node and link visits; about 10 s on two cores), and
#: the most memory (bytes) its buffers may hold: past these it refuses, saying so (:func:`path_work`)
MAX_PATH_WORK = 2e9
MAX_PATH_MEMORY_BYTES = 2**30


def _eccentricity(indptr, indices, n_nodes: int, source: int = 0) -> int:
    """Hops from ``source`` to the farthest node it reaches (one breadth-first search, vectorised)."""
    seen = np.zeros(n_nodes, dtype=bool)
    seen[source] = True
    frontier, level = np.array([source], dtype=np.int64), 0
    while True:
        counts = indptr[frontier + 1] - indptr[frontier]
        starts = np.repeat(indptr[frontier] - np.cumsum(counts) + counts, counts)
        nbrs = indices[starts + np.arange(counts.sum())]
        nbrs = np.unique(nbrs[~seen[nbrs]])
        if len(nbrs) == 0:
            return level
        seen[nbrs] = True
        frontier, level = nbrs, level + 1


def path_work(what: str, work: float, memory_bytes: float = 0.0) -> None:
    """A ``ValueError`` naming ``what`` when its estimated ``work`` (node and link visits) exceeds
    :data:`MAX_PATH_WORK` or its buffers ``memory_bytes`` exceed :data:`MAX_PATH_MEMORY_BYTES`."""
    if work > MAX_PATH_WORK or memory_bytes > MAX_PATH_MEMORY_BYTES:
        raise ValueError(f"{what} would take about {work:.2g} node and link visits and {memory_bytes / 2**20:,.0f} MiB; "
                         f"the limits are {MAX_PATH_WORK:.0e} visits and {MAX_PATH_MEMORY_BYTES / 2**20:,.0f} MiB "
                         "(accelbook.network.paths.MAX_PATH_WORK, MAX_PATH_MEMORY_BYTES). For a torus use the closed "
                         "forms of accelbook.network.geometry (torus_mean_hops, torus_diameter).")


def _topo(topo) -> Topology:
    return instance("topo", topo, Topology)


def _seed(seed) -> int:
    """A random seed: a whole number >= 0, checked whatever the traffic (a seed a mode ignores is still read)."""
    return whole("seed", seed, 0)


def hop_histogram(topo: Topology) -> np.ndarray:
    """``h[d]`` = number of ordered pairs of distinct chips whose shortest path has ``d`` hops.

    Refused (``ValueError``) past :data:`MAX_PATH_WORK`: the work is (chips / 64) searches × levels ×
    (nodes + directed links), the levels estimated from one search out of chip 0.
    """
    topo = _topo(topo)
    if topo.n_endpoints < 2:
        raise ValueError("hop statistics need at least two chips")
    batches = (topo.n_endpoints + 63) // 64
    levels = _eccentricity(topo.indptr, topo.indices, topo.n_nodes) + 1
    path_work(f"hop statistics of {topo.name}", batches * levels * (topo.n_nodes + len(topo.indices)),
              batches * (topo.n_nodes + 1) * 8)
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


# -- link loads under minimal routing -------------------------------------------------------------------
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
    topo, seed, demand = _topo(topo), _seed(seed), np.zeros((0, 0))
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
    path_work(f"link loads of {topo.name}", topo.n_endpoints * (topo.n_nodes + len(topo.indices)) * 2,
              min(topo.n_endpoints, 64) * len(topo.indices) * 8 + demand.size * 8)
    hop_histogram(topo)  # raises a clear error if the network is not connected
    return _link_load(topo.indptr, topo.indices, topo.n_nodes, topo.n_endpoints, dest, demand)


def all_to_all_load(topo: Topology) -> dict:
    """Uniform all-to-all: the busiest directed link's flow, and the mean (units: one message per pair)."""
    load = link_loads(topo, "uniform")
    return {"max_link_load": float(load.max()), "mean_link_load": float(load.mean()),
            "total_link_load": float(load.sum()), "n_directed_links": len(load)}


# -- dimension-ordered routing on tori -------------------------------------------------------------------
@njit(cache=True)
def _edge_index(indptr, indices, u, v):
    """CSR position of the directed link u -> v, or -1 if there is none."""
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
            if axis_is_ring(k, wrap[a]):
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
    topo, seed = _topo(topo), _seed(seed)
    if topo.kind not in GRID_KINDS or not topo.dims:
        raise ValueError("dimension-ordered routing needs a torus or mesh")
    if any(topo.wraparound) and topo.params.get("twisted"):
        raise ValueError("dimension-ordered routing is not defined here for twisted tori")
    n = topo.n_endpoints
    if traffic == "uniform":
        path_work(f"dimension-ordered link loads of {topo.name}", n * n * sum(topo.dims), n * n * 16)
        s, d = np.divmod(np.arange(n * n, dtype=np.int64), n)
    elif traffic == "permutation":
        s = np.arange(n, dtype=np.int64)
        d = np.random.default_rng(seed).permutation(n).astype(np.int64)
    else:
        raise ValueError(f"traffic must be 'uniform' or 'permutation', got {traffic!r}")
    return _dor_load(topo.indptr, topo.indices, np.array(topo.dims, dtype=np.int64),
                     np.array(topo.wraparound, dtype=np.bool_), s, d)
