"""Communication of a training step in the two-level cluster: collectives and who sends what.

A :class:`~accelbook.specs.clusters.Cluster` is fast domains (NVLink/NVSwitch, or a TPU torus) joined
by a network. A group of ``g`` ranks at rank stride ``stride`` (Megatron order tp → cp → dp → pp,
tp innermost) puts ``g_in = min(g, ⌊domain/stride⌋)`` members in each domain and spans
``g_out = ⌈g/g_in⌉`` domains. A collective over it is a ring inside the domain
(:func:`accelbook.network.collectives.ring_time_s` at the domain's step latency and per-chip
bandwidth, 2 links per torus axis spanned, :func:`accelbook.network.geometry.torus_axes`); across GPU
domains one ring through all ``g`` ranks per rail, NVLink and NICs at once (NCCL); across TPU slices a
ring in each, then one of ``S/g_in`` across them on the network: :mod:`accelbook.costs.hierarchical`, which
the inference model's expert all-to-alls use too.

Per layer and microbatch (``T`` tokens of ``d`` on a chip, bf16):

- tensor parallel with sequence parallelism: 4 all-gathers + 4 reduce-scatters of ``2·T·d`` bytes
  (4 more with full recomputation), exposed except for the share ``tp_overlap``;
- context parallel: ring passes of K and V (3 all-gathers' worth), hidden behind 3.5× the
  attention time where that is long enough; or (``cp_comm="allgather"``, Llama 3) an all-gather of
  K and V before attention and a reduce-scatter of their gradients after, exposed;
- expert parallel: 4 all-to-alls of the routed tokens per MoE layer, exposed;
- pipeline: a send forward and one backward per microbatch and chunk, exposed;
- data parallel: the gradient reduce-scatter (fp32 gradients, 4 bytes a parameter, Megatron's
  default) and the parameter all-gather (bf16), in DDP buckets: the last
  gradient bucket and the first all-gather bucket exposed, the rest hidden behind one microbatch's
  backward and forward; with gradients synced every microbatch (ZeRO-2 ``gsync`` 1)
  one reduce-scatter per microbatch, each behind that microbatch's backward; ZeRO-3 gathers
  weights every microbatch, one layer at a time (each layer's collective paying its ring's steps),
  hidden behind that microbatch's work.
"""

from __future__ import annotations

from numba import njit

from accelbook.costs.hierarchical import (
    ALL_GATHER,
    ALL_TO_ALL,
    REDUCE_SCATTER,
    SEND,
    collective_time_s,
    domain_ring_bandwidth,
    domain_split,
)


@njit(cache=True, inline="always")
def collective_time(kind, S, g, stride, c):
    """Time (s) of a collective over ``g`` ranks at rank stride ``stride`` in the cluster of chip record
    ``c``: :func:`accelbook.costs.hierarchical.collective_time_s` on its domain and network fields
    (``kind``: ``ALL_REDUCE``, ``ALL_GATHER`` or ``REDUCE_SCATTER``, ``ALL_TO_ALL``, ``SEND``)."""
    return collective_time_s(kind, S, g, stride, c.domain_chips, c.domain_bw_bytes_per_s, c.torus_dims,
                             c.domain_latency_s, c.network_bw_bytes_per_s, c.network_latency_s)


@njit(cache=True, inline="always")
def tensor_parallel_pass(mv, c, T, tp):
    """Time (s) of one tensor-parallel all-gather (or reduce-scatter) of a layer's activations,
    ``2·T·d`` bytes over tp ranks at stride 1; 0 without tensor parallelism."""
    if tp <= 1:
        return 0.0
    A = T * mv.d_model * 2.0
    return collective_time(ALL_GATHER, A, tp, 1.0, c)


@njit(cache=True, inline="always")
def tensor_parallel_time(t_pass, tp, rec, tp_overlap):
    """(exposed, hidden) tensor-parallel time (s) of one layer: ``n·t_pass`` (:func:`tensor_parallel_pass`)
    with n = 8 all-gathers and reduce-scatters, 12 under full recomputation (``rec`` 2); the share
    ``tp_overlap`` hidden behind GEMMs, the rest exposed."""
    if tp <= 1:
        return 0.0, 0.0
    n_coll = 8.0 + (4.0 if rec == 2 else 0.0)
    t_raw = n_coll * t_pass
    return (1.0 - tp_overlap) * t_raw, tp_overlap * t_raw


@njit(cache=True, inline="always")
def context_parallel_pass(mv, c, T, tp, cp, kv_loc):
    """Time (s) of one context-parallel pass, over cp ranks at stride tp, of this chip's K and V
    (``2·T·2·kv_loc·d_head`` bytes, times ``kv_share`` under a sliding or chunked window: a local layer
    exchanges only its window's K and V, the mean over layers of ``min(s, W)/s``); 0 without cp."""
    if cp <= 1:
        return 0.0
    kv_bytes = T * 2.0 * kv_loc * mv.d_head * 2.0 * mv.kv_share
    return collective_time(ALL_GATHER, kv_bytes * cp, cp, tp, c)


@njit(cache=True, inline="always")
def context_parallel_time(t_pass, cp, t_a, rec, allgather):
    """(exposed, hidden) context-parallel time (s) of one layer from its pass ``t_pass``
    (:func:`context_parallel_pass`):

    - ring attention (``allgather`` 0): 3 ring passes, less the 3.5·t_a of attention behind them;
    - all-gather (``allgather`` 1, Llama 3): K and V all-gathered before the forward's attention, their
      gradients reduce-scattered after the backward's, one more all-gather under full recomputation
      (``rec`` 2): 2 or 3 passes, all exposed (the Llama 3 paper says the all-gather sits in the critical
      path and is small because GQA keeps K and V small)."""
    if cp <= 1:
        return 0.0, 0.0
    if allgather > 0:
        return (3.0 if rec == 2 else 2.0) * t_pass, 0.0
    return max(0.0, 3.0 * t_pass - 3.5 * t_a), min(3.0 * t_pass, 3.5 * t_a)


@njit(cache=True, inline="always")
def expert_all_to_all_pass(mv, c, T, tp, cp, ep, elem_bytes):
    """Time (s) of ONE all-to-all of the routed tokens (a dispatch or a combine): ``S = T·top_k·d·e/tp`` bytes
    (``e`` bytes an element: 2 bf16, 1 + 4/128 an FP8 dispatch with its per-128 scales) over ep ranks at stride
    tp·cp (:func:`accelbook.costs.hierarchical.collective_time_s`).

    With node-limited routing (``node_limit`` = M > 0, DeepSeek-V3: 4) a token's experts lie on at most
    ``min(top_k, M, g_out)`` of the ``g_out`` domains the group spans, and it crosses the network once per remote
    domain (forwarded to its experts inside the domain, as DeepSeek-V3 and DeepEP dispatch): the network carries
    ``T·min(top_k, M, g_out)·d·e/tp·(g_out-1)/g_out`` bytes instead of ``S·(g - g_in)/g``, and the domain carries
    every copy that lands on another chip of its destination domain, from whichever domain it came:
    ``S·(g_in-1)/g_in``. (A token cannot reach more domains than the group spans: at EP16 over 2 nodes DeepEP's
    test routing reaches 1.99 of them, and DeepEP's EP16 kernels are bound by the NVLink forwarding.)"""
    S = T * mv.top_k * mv.d_model * elem_bytes / tp
    gi, go = domain_split(ep, tp * cp, c.domain_chips)
    if mv.node_limit <= 0 or go <= 1:
        return collective_time(ALL_TO_ALL, S, ep, tp * cp, c)
    t_in = S * (gi - 1) / gi / domain_ring_bandwidth(gi, c.domain_chips, c.domain_bw_bytes_per_s, c.torus_dims)
    nodes = min(mv.top_k, mv.node_limit, go)
    t_out = T * nodes * mv.d_model * elem_bytes / tp * (go - 1) / go / c.network_bw_bytes_per_s
    return max(t_in, t_out) + (gi - 1) * c.domain_latency_s + (go - 1) * c.network_latency_s


@njit(cache=True, inline="always")
def expert_all_to_all_time(mv, c, T, tp, cp, ep):
    """Expert-parallel time (s) of one layer: ``f·4`` all-to-alls of the routed tokens in bf16 (dispatch and
    combine, forward and backward; :func:`expert_all_to_all_pass` with ``e`` = 2) over ep ranks at stride tp·cp,
    on the MoE share ``f`` of layers."""
    f = mv.moe_layer_share
    if ep <= 1 or f <= 0:
        return 0.0
    return f * 4.0 * expert_all_to_all_pass(mv, c, T, tp, cp, ep, 2.0)


@njit(cache=True, inline="always")
def pipeline_send_time(mv, c, T, tp, cp, dp, pp, vp, sp):
    """Pipeline sends (s) of one microbatch: ``2·vp`` sends of ``2·T·d/sp`` bytes to the next stage
    (stride tp·cp·dp), one forward and one backward per chunk."""
    if pp <= 1:
        return 0.0
    return 2.0 * vp * collective_time(SEND, T * mv.d_model * 2.0 / sp, 2.0, tp * cp * dp, c)


@njit(cache=True, inline="always")
def bucket_params(p, g, c):
    """Parameters in the DDP bucket of a group of ``g`` ranks holding ``p`` parameters each:
    ``min(p, max(bucket_min_params, bucket_params_per_dp·g))`` (Megatron: max(40M, 1M·dp)); 0 without data parallelism."""
    if g <= 1:
        return 0.0
    return min(p, max(c.bucket_min_params, c.bucket_params_per_dp * g))


@njit(cache=True, inline="always")
def data_parallel_collectives(c, p_ne, p_e, g_ne, g_e, tp, cp, ep, zero, n_units=1.0):
    """(t_rs, t_ag, t_bk_rs, t_bk_ag): the data-parallel passes (s) of a step, which
    :func:`data_parallel_times` hides behind compute.

    A pass is a ring over the ``g_ne`` ranks holding the same non-expert parameters ``p_ne`` (stride
    tp) + one over the ``g_e`` holding the same experts ``p_e`` (stride tp·cp·ep). The gradient
    reduce-scatter ``t_rs`` moves the framework's gradient bytes per parameter (``grad_bytes_per_param``: 4,
    Megatron reduces its fp32 main gradients unless told to reduce in bf16; Llama 3 reduce-scatters in
    fp32 too), the parameter all-gather ``t_ag`` the weight bytes (``weight_bytes_per_param``: 2, bf16; ZeRO-0's
    all-reduce moves gradients both ways, so both passes at the gradient bytes); ``t_bk_rs``,
    ``t_bk_ag`` the same over one DDP bucket of each (:func:`bucket_params`). Worked number: 8 H100 in
    one NVSwitch domain, dp = 8, a 40M-parameter bucket of fp32 gradients (160 MB): ``t_bk_rs`` ≈ 7/8·160 MB
    / B_domain + 7 α, about 0.4 ms.

    ZeRO-3 (FSDP) gathers and reduce-scatters layer by layer: a pass is ``n_units`` collectives of
    ``1/n_units`` of the bytes (the busiest stage's layers), each paying its ring's steps, so across many
    nodes the latency ``n_units·(g-1)·α_net`` can outweigh the bytes (Llama 3 70B's 80 layers over 1,024 H100s
    at stride 1: ``80·1,023·14 µs = 1.15 s`` a pass).
    """
    g_bytes = c.grad_bytes_per_param
    w_bytes = c.grad_bytes_per_param if zero == 0 else c.weight_bytes_per_param
    b_ne, b_e = bucket_params(p_ne, g_ne, c), bucket_params(p_e, g_e, c)
    n = n_units if zero == 3 else 1.0
    t_rs = n * (collective_time(REDUCE_SCATTER, g_bytes * p_ne / n, g_ne, tp, c)
                + collective_time(REDUCE_SCATTER, g_bytes * p_e / n, g_e, tp * cp * ep, c))
    t_ag = n * (collective_time(ALL_GATHER, w_bytes * p_ne / n, g_ne, tp, c)
                + collective_time(ALL_GATHER, w_bytes * p_e / n, g_e, tp * cp * ep, c))
    t_bk_rs = collective_time(REDUCE_SCATTER, g_bytes * b_ne, g_ne, tp, c) \
        + collective_time(REDUCE_SCATTER, g_bytes * b_e, g_e, tp * cp * ep, c)
    t_bk_ag = collective_time(ALL_GATHER, w_bytes * b_ne, g_ne, tp, c) \
        + collective_time(ALL_GATHER, w_bytes * b_e, g_e, tp * cp * ep, c)
    return t_rs, t_ag, t_bk_rs, t_bk_ag


@njit(cache=True, inline="always")
def data_parallel_times(t_rs, t_ag, t_bk_rs, t_bk_ag, zero, gsync, m, t_layers, t_f_mb, t_b_mb):
    """(exposed beyond compute, last bucket, total) data-parallel time (s) of a step, from its passes
    (:func:`data_parallel_collectives`).

    Gradients are reduced bucket by bucket as the backward produces them (Li et al. 2020; Megatron's
    DDP), so the last bucket's reduce-scatter starts when the backward ends and the first bucket of
    the parameter all-gather (ZeRO ≥ 1's updated shards, ZeRO-3's weights) must land before the
    forward can start: ``t_bk_rs + t_bk_ag`` is never hidden (the second value). The rest hides behind
    compute, what exceeds it exposed (the first value): ZeRO-3, two weight all-gathers and a
    reduce-scatter a microbatch (less the step's two buckets) behind its ``t_layers`` of work;
    gradients synced once a step (``gsync`` 0), a reduce-scatter behind the last microbatch's backward
    ``t_b_mb`` and an all-gather behind a forward ``t_f_mb``; synced every microbatch (``gsync`` 1,
    ZeRO-2), ``m`` reduce-scatters, each behind its microbatch's backward, and the all-gather; the last
    reduce-scatter and the all-gather less a bucket. Total traffic: ``t_rs + t_ag`` once a step,
    ``m·t_rs + t_ag`` every microbatch, ``m·(t_rs + 2·t_ag)`` ZeRO-3.
    """
    t_bk = t_bk_rs + t_bk_ag
    if zero == 3:   # weights gathered for every microbatch, hidden behind that microbatch's work
        return m * max(0.0, t_rs + 2.0 * t_ag - t_bk / m - t_layers), t_bk, m * (t_rs + 2.0 * t_ag)
    n_rs = m if gsync == 1 else 1.0
    hidden_rs = (n_rs - 1.0) * max(0.0, t_rs - t_b_mb) + max(0.0, t_rs - t_bk_rs - t_b_mb)
    return hidden_rs + max(0.0, t_ag - t_bk_ag - t_f_mb), t_bk, n_rs * t_rs + t_ag
