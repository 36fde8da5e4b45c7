"""What a network is here: a :class:`Topology`, an undirected graph in CSR form with link figures.

Nodes ``0 .. n_endpoints-1`` are chips; any further nodes are switches (NVSwitch, fat-tree and
dragonfly routers; optical circuit switches are *not* nodes: an OCS is a patch panel that joins
links, so it adds no hop). A hop is one link. Each undirected link appears twice in the adjacency,
once from each end, so the CSR position ``indptr[u] + i`` names the directed link
``u -> indices[indptr[u] + i]`` (the link-load kernels of :mod:`accelbook.network.paths` report
loads in that order).

Builders live in :mod:`accelbook.network.builders` (textbook networks) and
:mod:`accelbook.network.systems` (real systems with published link figures); both make their graph
with :func:`from_edges`.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from accelbook.checks import fraction, positive

#: the largest network a builder makes (nodes: chips and switches; undirected links). Past these the
#: graph alone takes hundreds of MB and every path kernel minutes; a builder estimates the size from
#: its arguments first and refuses with :func:`check_size` (``fat_tree(200)`` would be 2 million chips).
MAX_NODES = 2**19
MAX_LINKS = 2**21


def check_size(what: str, n_nodes: float, n_links: float) -> None:
    """A ``ValueError`` naming ``what`` (the builder and its arguments) when a network would have more
    than :data:`MAX_NODES` nodes or :data:`MAX_LINKS` links."""
    if n_nodes > MAX_NODES or n_links > MAX_LINKS:
        raise ValueError(f"{what} would have {n_nodes:,.0f} nodes and {n_links:,.0f} links; the limit is "
                         f"{MAX_NODES:,} nodes and {MAX_LINKS:,} links (accelbook.network.graph.MAX_NODES, "
                         "MAX_LINKS); for a larger torus, accelbook.network.geometry has closed forms")


#: kinds whose chips sit on a grid (``dims``, ``wraparound``): what torus-aware code accepts
GRID_KINDS = ("torus", "mesh", "ring", "tpu_pod")


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
    # what collectives need (accelbook.network.collectives): one link's bandwidth per direction, one
    # step's latency, the share of line rate a collective library reaches, in-switch reduction (NVLS/SHARP)
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
        """A copy with other link parameters (what if the links were twice as fast?).

        ``link_bw_bytes_per_s`` (B/s per direction) and ``hop_latency_s`` (s) must be finite and
        > 0, ``efficiency`` in (0, 1]; ``None`` keeps the current value. A new ``hop_latency_s``
        moves every latency of the fabric with it (protocols, in-network reduction).
        """
        changes = {k: v for k, v in dict(link_bw_bytes_per_s=link_bw_bytes_per_s, hop_latency_s=hop_latency_s,
                                          efficiency=efficiency, in_network_reduction=in_network_reduction).items()
                   if v is not None}
        for k in ("link_bw_bytes_per_s", "hop_latency_s"):
            if k in changes:
                positive(k, changes[k])
        if "efficiency" in changes:
            fraction("efficiency", changes["efficiency"], zero_ok=False)
        if "hop_latency_s" in changes:   # every latency of the fabric moves with the per-step one
            r = changes["hop_latency_s"] / self.hop_latency_s
            changes["protocols"] = tuple(p.scaled(r) for p in self.protocols)
            changes["in_network_latency_s"] = self.in_network_latency_s * r
        return dataclasses.replace(self, **changes)

    def scaled(self, bandwidth: float = 1.0, latency: float = 1.0) -> "Topology":
        """A copy with every bandwidth (links and NICs) and every latency multiplied (what-if sliders)."""
        positive("bandwidth scale", bandwidth)
        positive("latency scale", latency)
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


def from_edges(name: str, kind: str, n_endpoints: int, n_nodes: int, edges, **kw) -> Topology:
    """A :class:`Topology` from a list of undirected links ``(u, v)``.

    Self-loops are dropped and a pair of nodes joined more than once gets one link. The CSR rows
    hold each node's neighbours in increasing order. ``kw`` sets the other fields (``dims``,
    ``params``, ``assumptions``, link figures).
    """
    e = np.asarray(edges, dtype=np.int64).reshape(-1, 2)
    e = e[e[:, 0] != e[:, 1]]
    lo, hi = np.minimum(e[:, 0], e[:, 1]), np.maximum(e[:, 0], e[:, 1])
    if n_nodes <= 2**16:   # sorted by (lo, hi): two stable radix sorts of 16-bit node numbers are quicker
        o = np.argsort(hi.astype(np.uint16), kind="stable")
        o = o[np.argsort(lo[o].astype(np.uint16), kind="stable")]
        key = lo[o] * n_nodes + hi[o]
    else:
        key = np.sort(lo * n_nodes + hi)
    key = key[np.r_[True, key[1:] != key[:-1]]] if len(key) else key   # a pair of nodes is joined by one link
    lo, hi = key // n_nodes, key % n_nodes              # sorted by (lo, hi)
    # CSR rows with sorted neighbours: node v's row is its lower neighbours (the links (u, v), u < v,
    # in order of u) then its higher ones (the links (v, w) in order of w, as sorted already)
    n_lower, n_higher = np.bincount(hi, minlength=n_nodes), np.bincount(lo, minlength=n_nodes)
    indptr = np.zeros(n_nodes + 1, dtype=np.int64)
    indptr[1:] = np.cumsum(n_lower + n_higher)
    by_hi = np.argsort(hi.astype(np.uint16) if n_nodes <= 2**16 else hi, kind="stable")   # keeps u in order
    dst = np.empty(2 * len(key), dtype=np.int64)
    first_hi = np.cumsum(n_lower) - n_lower                 # first link of each node in by_hi order
    hs = hi[by_hi]
    dst[indptr[hs] + np.arange(len(key)) - first_hi[hs]] = lo[by_hi]
    first_lo = np.cumsum(n_higher) - n_higher
    dst[indptr[lo] + n_lower[lo] + np.arange(len(key)) - first_lo[lo]] = hi
    return Topology(name, kind, n_endpoints, n_nodes, indptr, dst, **kw)
