"""Bisection: how many links cross the cut that halves a network, counted and by the textbook.

:func:`bisection_links` counts the links of the graph that cross its natural halving cut;
:func:`bisection_links_analytic` gives the textbook count for the same cut. The tests hold the two
equal. The cuts:

- tori, meshes, rings: across the middle of the longest dimension ``k``: ``2N/k`` links if that
  axis is a ring, ``N/k`` if a line;
- k-ary fat trees: half the pods on each side, core switches with the first half: ``k³/8``;
- dragonflies and BoardFly: half the groups on each side, one global link per pair of groups:
  ``⌊g/2⌋·⌈g/2⌉``;
- one switch: half the chips on each side, the switch with the first half: ``N/2``.
"""

from __future__ import annotations

import math

import numpy as np

from .geometry import axis_is_ring
from .graph import GRID_KINDS, Topology


def _longest_axis(topo: Topology) -> tuple[int, int]:
    """The axis the cut crosses (the longest; the first of equals) and its length."""
    axis = int(np.argmax(topo.dims))
    return axis, topo.dims[axis]


def bisection_links(topo: Topology) -> int:
    """Links crossing the natural halving cut, counted on the graph (module docstring).

    Compare with :func:`bisection_links_analytic`.
    """
    side = _halving(topo)
    e = topo.edges()
    return int(np.sum(side[e[:, 0]] != side[e[:, 1]]))


def _halving(topo: Topology) -> np.ndarray:
    """For every node, whether it is on the first side of the natural cut."""
    n = topo.n_nodes
    if topo.kind in GRID_KINDS:
        axis, k = _longest_axis(topo)
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
    if topo.kind in GRID_KINDS:
        axis, k = _longest_axis(topo)
        wraps = axis_is_ring(k, topo.wraparound[axis])
        return (2 if wraps else 1) * topo.n_endpoints // k if k > 1 else 0
    if topo.kind == "fat_tree":
        return topo.params["k"] ** 3 // 8
    if topo.kind in ("dragonfly", "boardfly"):
        g = topo.params["groups"]
        return (g // 2) * (g - g // 2)
    if topo.kind == "switched":
        return topo.n_endpoints // 2
    raise ValueError(f"no textbook bisection for a {topo.kind} network")
