"""The alpha-beta time of a collective in a two-level cluster: fast domains joined by a network.

A cluster is domains of ``domain_chips`` chips (an NVLink/NVSwitch node, or a TPU torus of
``torus_dims`` dimensions) joined by a scale-out network. A group of ``g`` ranks at rank stride
``stride`` puts ``g_in = min(g, max(1, ⌊domain_chips/stride⌋))`` members in each domain and spans
``g_out = ⌈g/g_in⌉`` domains. A collective is hierarchical: a ring inside the domain
(:func:`accelbook.network.collectives.ring_time_s` at ``domain_latency_s`` a step and the ring's
per-chip bandwidth, :func:`domain_ring_bandwidth`), then a ring of ``S/g_in`` bytes across the domains
at ``network_bw_bytes_per_s`` and ``network_latency_s``:

    t = ring(passes, S, g_in, α_dom, B_ring) + ring(passes, S/g_in, g_out, α_net, B_net)

with ``passes`` 2 for an all-reduce and 1 for an all-gather or reduce-scatter. Bandwidths are after
the fabric's efficiency, per chip and direction. The training model (every collective of a step) and the
inference model (the expert all-to-alls of data-parallel attention) both take this time.
Sources: Patarasuk and Yuan 2009 (bandwidth-optimal rings); NCCL's hierarchical algorithms.
"""

from __future__ import annotations

import math

from numba import njit

from accelbook.network.collectives import ring_time_s
from accelbook.network.geometry import torus_axes

#: the collective kinds of :func:`collective_time_s`'s ``kind``
ALL_REDUCE = 0
ALL_GATHER = REDUCE_SCATTER = 1   # one ring pass over the full buffer either way
ALL_TO_ALL = 2
SEND = 3


@njit(cache=True, inline="always")
def domain_ring_bandwidth(g, domain_chips, domain_bw_bytes_per_s, torus_dims):
    """Per-chip bandwidth (bytes/s) of a ring over ``g`` chips inside one domain: the switch port
    (``torus_dims`` 0), or 2 links per torus axis the group spans
    (``2·torus_axes(g, domain_chips, torus_dims)·domain_bw_bytes_per_s``). TPU v4 (a 16×16×16 torus,
    45 GB/s links): 256 chips span 2 axes, ``2·2·45e9 = 180 GB/s``."""
    if torus_dims == 0:
        return domain_bw_bytes_per_s
    return 2.0 * torus_axes(g, domain_chips, torus_dims) * domain_bw_bytes_per_s


@njit(cache=True, inline="always")
def domain_split(g, stride, domain_chips):
    """``(g_in, g_out)``: members of a group of ``g`` ranks at rank stride ``stride`` inside one domain of
    ``domain_chips``, ``max(1, min(g, ⌊domain_chips/stride⌋))``, and the domains it spans, ``⌈g/g_in⌉``.
    64 ranks at stride 4 on 8-GPU nodes: ``g_in = 2``, ``g_out = 32``."""
    inner = max(1.0, min(g, math.floor(domain_chips / stride)))
    if inner > g:
        inner = g
    outer = math.ceil(g / inner)
    return inner, outer


@njit(cache=True, inline="always")
def collective_time_s(kind, S, g, stride, domain_chips, domain_bw_bytes_per_s, torus_dims, domain_latency_s,
                      network_bw_bytes_per_s, network_latency_s):
    """Time (s) of a collective of ``S`` bytes over ``g`` ranks at rank stride ``stride`` in a two-level cluster
    (module docstring); 0 for ``g <= 1`` or ``S <= 0``.

    ``kind``: :data:`ALL_REDUCE`; :data:`ALL_GATHER` or :data:`REDUCE_SCATTER` (``S`` the full buffer), the
    hierarchical rings above; :data:`ALL_TO_ALL` (``S`` the bytes a rank sends in all):
    ``max(S·(g_in-1)/g / B_ring, S·(g-g_in)/g / B_net) + (g_in-1)·α_dom + (g_out-1)·α_net``, the share for
    peers in the domain and the rest on the network at once; :data:`SEND`, one point-to-point send,
    ``S/B_net + α_net`` when ``stride >= domain_chips`` (the peer is in another domain), else ``S/B_ring + α_dom``.

    Worked number: an all-reduce of 1 GB over 8 GPUs of one NVLink node (stride 1, 450 GB/s, 5 µs a step):
    ``2·7·5 µs + 2·(7/8)·1e9/450e9 = 70 µs + 3.889 ms = 3.959 ms``, nothing across domains.
    """
    if g <= 1 or S <= 0:
        return 0.0
    gi, go = domain_split(g, stride, domain_chips)
    bi = domain_ring_bandwidth(gi, domain_chips, domain_bw_bytes_per_s, torus_dims)
    if kind == SEND:
        if stride >= domain_chips:
            return S / network_bw_bytes_per_s + network_latency_s
        return S / bi + domain_latency_s
    if kind == ALL_TO_ALL:
        t_in = S * (gi - 1) / g / bi
        t_out = S * (g - gi) / g / network_bw_bytes_per_s
        return max(t_in, t_out) + (gi - 1) * domain_latency_s + (go - 1) * network_latency_s
    passes = 2.0 if kind == ALL_REDUCE else 1.0
    return ring_time_s(passes, S, gi, domain_latency_s, bi) \
        + ring_time_s(passes, S / gi, go, network_latency_s, network_bw_bytes_per_s)
