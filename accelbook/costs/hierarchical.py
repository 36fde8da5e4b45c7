"""The alpha-beta time of a collective in a two-level cluster: fast domains joined by a network.

A cluster is domains of ``domain_chips`` chips (an NVLink/NVSwitch node, or a TPU torus of
``torus_dims`` dimensions) joined by a scale-out network. A group of ``g`` ranks at rank stride
``stride`` puts ``g_in = min(g, max(1, ⌊domain_chips/stride⌋))`` members in each domain and spans
``g_out = ⌈g/g_in⌉`` domains. Inside one domain (``g_out`` 1) a collective is a ring
(:func:`accelbook.network.collectives.ring_time_s` at ``domain_latency_s`` a step and the ring's per-chip
bandwidth, :func:`domain_ring_bandwidth`). Across domains it depends on who drives it:

- a switched domain (NVSwitch, ``torus_dims`` 0: NCCL) runs one ring through all ``g`` ranks per rail, each
  carrying ``1/g_in`` of the data and leaving the domain through a different chip's NIC, so the NVLink hops
  and the network hops work at once; every step waits for the ring's slowest hop, the network's:

      t = passes·(g-1)·α_net + passes·(g-1)/g·S · max((g_in-1)/g_in / B_ring, 1/(g_in·B_net))

- a torus domain (TPU slices joined by the data-centre network) is hierarchical, one level after the other:

      t = ring(passes, S, g_in, α_dom, B_ring) + ring(passes, S/g_in, g_out, α_net, B_net)

with ``passes`` 2 for an all-reduce and 1 for an all-gather or reduce-scatter. With ``g_in`` 1 (a group at a
stride of a whole domain) both are the network ring alone. Bandwidths are after the fabric's efficiency, per
chip and direction. The training model (every collective of a step) and the inference model (the expert
all-to-alls of data-parallel attention) both take this time. Sources: Patarasuk and Yuan 2009
(bandwidth-optimal rings); NCCL's rings, one per rail (the per-rail formula of
:mod:`accelbook.network.collectives`); nccl-tests issue 290 (a two-node ring all-reduce reaches 46-48 GB/s per
NIC, the NICs' rate, not the sum of a node ring and a network ring) and NCCL issue 1218 (an all-gather over
256 H100s at about 200 GB/s, latency-bound by its 255 steps) are the rows of ``data/term_measurements.toml``
that check it.
"""

from __future__ import annotations

import math

from numba import njit

from accelbook.network.collectives import ring_bytes_per_link, ring_time_s
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

    Worked numbers: an all-reduce of 1 GB over 8 GPUs of one NVLink node (stride 1, 450 GB/s, 5 µs a step):
    ``2·7·5 µs + 2·(7/8)·1e9/450e9 = 70 µs + 3.889 ms = 3.959 ms``, nothing across domains. Over 16 GPUs of
    two such nodes, NICs at 41 GB/s and 14 µs a step: ``2·15·14 µs + 2·(15/16)·1e9·max(7/8/450e9, 1/(8·41e9))
    = 0.42 ms + 1.875e9 · 3.049e-12 s = 0.42 + 5.716 ms = 6.136 ms``, the NICs binding.
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
    if go > 1 and torus_dims == 0:   # NCCL: one ring through all g ranks per rail (module docstring)
        per_byte = max((gi - 1) / gi / bi, 1.0 / (gi * network_bw_bytes_per_s))
        return passes * (g - 1) * network_latency_s + ring_bytes_per_link(passes, S, g) * per_byte
    return ring_time_s(passes, S, gi, domain_latency_s, bi) \
        + ring_time_s(passes, S / gi, go, network_latency_s, network_bw_bytes_per_s)
