"""The terms of one inference layout's time, memory and throughput, one helper a quantity
(:func:`accelbook.inference.estimate.estimate` assembles them; ``accelbook.inference``'s docstring has the
formulas with their symbols):

- :func:`memory_terms`: weights and KV cache per chip against ``(1 - reserve)`` of its memory;
- :func:`decode_terms`: ``t_stage = max(gemm_mem, gemm_cmp) + max(attn_mem, attn_cmp) + t_comm + t_launch``,
  ``TPOT = pp·t_stage + (pp-1)·hop``;
- :func:`prefill_terms`: ``TTFT = pp·(max(pf_cmp, pf_mem) + pf_comm + t_launch) + (pp-1)·hop``;
- :func:`throughput`: static batching, ``B·output_len / (t_prefill(B prompts) + output_len·TPOT)``;

with four measured mechanisms, each its own term: memory reads at the chip's achievable HBM bandwidth
(``accelbook.specs.measured.achievable_hbm_fraction``, BabelStream Triad); GEMM compute divided by the
shapes' tile/wave efficiency (``rates.pass_shape_efficiency``); each all-reduce's fixed part at the
measured small-message all-reduce time (``measured.allreduce_latency``, nccl-tests); and, without CUDA
graphs, the measured host and launch time per layer (``measured.launch_overhead_per_layer``).

One formula, two shapes of input: a :class:`InferenceLayout` of plain numbers (one estimate), or one whose ``B``,
``tp``, ``pp`` and ``replicas`` are equal-length NumPy arrays (every layout and batch of a sweep at once,
:func:`accelbook.inference.sweep.sweep`), for tensor-parallel attention. The helpers below keep the two
alike (:mod:`accelbook.inference.arrays`): ``maximum``/``minimum`` are the builtins on numbers and NumPy's
on arrays, and ``each`` calls a function of plain numbers once per distinct value of an array.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from accelbook.checks import real
from accelbook.costs.experts import touched_expert_share
from accelbook.network.collectives import ring_time_s
from accelbook.specs.chips import Chip
from accelbook.specs.efficiency import measured_efficiency
from accelbook.specs.fabrics import get_fabric
from accelbook.specs.measured import (
    AllReduceLatency,
    achievable_hbm_fraction,
    allreduce_latency,
    launch_overhead_per_layer,
)
from accelbook.specs.models import Model, bytes_per_element

from .arrays import ceil_whole, each, maximum, minimum, whole_part
from .dataflow import layers_per_region, link_terms, tier_terms
from .parallel import (
    ceil_share,
    decode_attention_flops_per_context_token,
    dp_decode_terms,
    dp_weights_per_chip,
    expert_all_to_all_s,
    routed_active_params,
    weights_read_bytes,
)
from .rates import (
    DEFAULT_HOP_S,
    DEFAULT_LINK_BYTES_S,
    MEM_EFFICIENCY,
    WEIGHT_PRECISIONS,
    elementwise_bytes_per_token,
    gemm_efficiency,
    nearest_peak_flop_s,
    pass_shape_efficiency,
    peak_precision,
)
from .result import usable_bytes


class InferenceLayout(NamedTuple):
    """The checked arguments: ``B`` sequences per replica of ``tp·pp`` chips, ``n`` chips in all."""
    n: int
    B: int
    s_in: int
    s_out: int
    tp: int
    pp: int
    replicas: int
    precision: str
    kv_precision: str
    attention: str = "tp"     # "dp": data-parallel attention + expert parallelism over the tp chips


class Rates(NamedTuple):
    """What the chip delivers: memory (bytes, B/s), peaks (FLOP/s) and their measured shares, links."""
    usable: float
    mem_bw: float
    peak: float
    peak_used: str
    eta: float
    why_eta: str
    eta_att: float
    peak_att: float
    hop: float
    link: float
    ar_lat: float | None      # measured small-message all-reduce time (s), None: the hop formula
    why_ar: str
    eta_mem: float            # share of the memory bandwidth reads reach
    why_mem: str
    t_launch: float           # host and launch time per layer (s), 0 with CUDA graphs
    why_launch: str
    ar_curve: AllReduceLatency | None = None   # a measured all-reduce curve, charged at each message's size


class Memory(NamedTuple):
    """Bytes per chip, and the bandwidth the weights are read at (``w_bw``, B/s)."""
    bpe: float
    kvb: float
    w_chip: float
    resident: float
    kv_tok_chip: float
    ctx_full: int
    mem_chip: float
    max_batch: int
    w_bw: float


class Decode(NamedTuple):
    """One decode step, seconds: each kind of kernel's memory and compute time, the stage, TPOT."""
    gemm_mem: float
    gemm_cmp: float
    attn_mem: float
    attn_cmp: float
    t_comm: float
    t_stage: float
    tpot: float
    eta_shape: float
    t_launch: float
    t_elem: float = 0.0       # the elementwise kernels between the GEMMs (HBM-bound)
    elem_tok: float = 0.0     # ... per token
    tpot_roofline: float = 0.0  # TPOT with every core reading at once (differs on a region-mapped wafer)


class Prefill(NamedTuple):
    """One prompt at an idle server, seconds."""
    per_tok: float
    attn_tok: float
    pf_tok: float
    pf_cmp: float
    pf_mem: float
    pf_comm: float
    ttft: float
    eta_shape: float
    pf_elem: float = 0.0      # the prompt's elementwise kernels, one stage



def _memory_share(chip: Chip, mem_efficiency: float | None) -> tuple[float, str]:
    """Share of the memory bandwidth reads reach: ``mem_efficiency`` if given (a what-if), else the chip's
    measured achievable HBM fraction (BabelStream Triad; borrowed or the mean where not measured, and the
    note says so), else (SRAM chips, no measurement) ``MEM_EFFICIENCY``, an ESTIMATE."""
    if mem_efficiency is not None:
        return mem_efficiency, f"memory reads at {mem_efficiency:.0%} of the memory bandwidth (set by the caller)"
    tt = tier_terms(chip)
    if tt is not None:       # a tiered chip's vendor share at decode (data/dataflow.toml), not a STREAM figure
        return tt.decode_bw_share, "memory reads: " + tt.sentence()
    if chip.hbm_bw_bytes_per_s is not None and chip.memory_bw_bytes_per_s == chip.hbm_bw_bytes_per_s:
        m = achievable_hbm_fraction(chip)
        src = f"{m.provenance.source.title}" if m.provenance is not None else "no measurement"
        return m.fraction, (f"memory reads (weights, KV cache) at the achievable HBM bandwidth, {m.fraction:.0%} of "
                            f"peak: {m.note} [{src}]")
    return MEM_EFFICIENCY, (f"memory reads at {MEM_EFFICIENCY:.0%} of the on-chip memory bandwidth (ESTIMATE: "
                            "no STREAM-like measurement of this memory)")


def _collective_rates(chip: Chip, cuda_graphs: bool) -> tuple[float | None, str, float, str]:
    """The measured all-reduce floor (s, or None) and the host/launch time per layer (s), with their sentences."""
    ar = allreduce_latency(chip)
    if ar is not None and ar.curve_bytes:
        cp = ar.curve_provenance
        why_ar = (f"all-reduce: on {ar.n_gpus} chips each of a tensor-parallel layer's two all-reduces takes the "
                  f"measured time at its message size (the published busbw table, {ar.curve_bytes[0]:,.0f} B to "
                  f"{ar.curve_bytes[-1]:,.0f} B, read as S·2(n-1)/n / busbw: {ar.latency_s * 1e6:.0f} µs at "
                  f"{ar.message_bytes:,} B, {ar.line_at(4 * 2**20)[0] * 1e6 + ar.line_at(4 * 2**20)[1] * 4 * 2**20 * 1e6:.0f}"
                  f" µs at 4 MiB; {cp.source.title}); on fewer chips the {ar.latency_s * 1e6:.0f} µs floor plus its "
                  "bytes at the link rate")
        t_launch, why_launch = _launch_rates(cuda_graphs)
        return ar.latency_s, why_ar, t_launch, why_launch
    why_ar = ("all-reduce latency: each of a tensor-parallel layer's two all-reduces pays "
              f"{ar.latency_s * 1e6:.0f} µs, the measured nccl-tests small-message time on {ar.n_gpus} GPUs "
              f"({ar.message_bytes:,} B at {ar.message_bytes * 2 * (ar.n_gpus - 1) / ar.n_gpus / ar.latency_s / 1e9:.2f}"
              f" GB/s busbw; {ar.provenance.source.title})"
              + (f", borrowed from {ar.borrowed_from}" if ar.borrowed_from else "") + ", plus its bytes at the link rate"
              if ar is not None else
              "all-reduce latency: 2(tp-1) hops per all-reduce (no small-message measurement on this chip)")
    t_launch, why_launch = _launch_rates(cuda_graphs)
    return (ar.latency_s if ar is not None else None), why_ar, t_launch, why_launch


def _launch_rates(cuda_graphs: bool) -> tuple[float, str]:
    """The host and launch time per layer (s) and its sentence."""
    t_launch, lm = launch_overhead_per_layer(cuda_graphs)
    why_launch = ("CUDA graphs on (TensorRT-LLM's and vLLM's default): no host or launch time added; no published "
                  "figure isolates what a replayed graph still loses between kernels" if cuda_graphs else
                  f"CUDA graphs off: {t_launch * 1e3:.2f} ms of host and launch time per layer, measured "
                  f"({lm.eager_s * 1e3:.0f} ms eager against {lm.graph_s * 1e3:.0f} ms graphed per token over "
                  f"{lm.n_layers} layers; {lm.provenance.source.title})")
    return t_launch, why_launch


_RATES_SEEN: dict = {}     # (id(chip), arguments) -> (chip, Rates): a sweep asks the same for every layout


def chip_rates(chip: Chip, precision: str, hop_latency_s: float | None, mem_efficiency: float | None = None,
           cuda_graphs: bool = True) -> Rates:
    """What ``chip`` delivers at ``precision``, remembered per chip object (a Chip holds mappings, so it is
    not hashable; the object itself is kept with its answer, so an id is never reused for another chip)."""
    key = (id(chip), precision, hop_latency_s, mem_efficiency, cuda_graphs)
    seen = _RATES_SEEN.get(key)
    if seen is not None and seen[0] is chip:
        return seen[1]
    if len(_RATES_SEEN) > 512:
        _RATES_SEEN.clear()
    r = _rates_of(chip, precision, hop_latency_s, mem_efficiency, cuda_graphs)
    _RATES_SEEN[key] = (chip, r)
    return r


def _rates_of(chip: Chip, precision: str, hop_latency_s: float | None, mem_efficiency: float | None,
              cuda_graphs: bool) -> Rates:
    mem_bw, mem_cap = chip.memory_bw_bytes_per_s, chip.memory_bytes
    if mem_bw is None or mem_cap is None:
        raise ValueError(f"{chip.name} publishes no memory capacity or bandwidth")
    peak, used = nearest_peak_flop_s(chip, precision), peak_precision(chip, precision)
    eta, why_eta = gemm_efficiency(chip, used if used in WEIGHT_PRECISIONS else precision)
    try:
        eta_att = measured_efficiency(chip, "attention")[0].fraction
    except ValueError:
        eta_att = 0.75 * eta
    try:      # attention runs in 16-bit; a chip that publishes only 8-bit peaks is taken at that rate
        peak_att = nearest_peak_flop_s(chip, "bf16" if precision != "fp16" else "fp16")
    except ValueError:
        peak_att = peak
    hop = hop_latency_s if hop_latency_s is not None else (chip.link_latency_s or DEFAULT_HOP_S)
    link = (chip.link_bw_bytes_per_s / (2 if chip.link_bw_direction == "bidirectional" else 1)
            if chip.link_bw_bytes_per_s else DEFAULT_LINK_BYTES_S)
    lt = link_terms(chip)        # a dataflow chip's published chip-to-chip terms, where the catalogue has none
    if lt is not None:
        hop = hop_latency_s if hop_latency_s is not None else lt.hop_s
        link = lt.link_bytes_per_s
    eta_mem, why_mem = _memory_share(chip, mem_efficiency)
    ar_lat, why_ar, t_launch, why_launch = _collective_rates(chip, cuda_graphs)
    if tier_terms(chip) is not None and mem_efficiency is None:      # the share includes the synchronisation
        ar_lat, why_ar = 0.0, ("all-reduce latency: none charged apart from the decode bandwidth share, which "
                               "the vendor gives with the chips' synchronisation included; its bytes at the link rate")
    if hop_latency_s is not None:        # a hop latency set by the caller is a what-if of the hop formula
        ar_lat, why_ar = None, "all-reduce latency: 2(tp-1) hops per all-reduce at the hop latency set by the caller"
    curve = allreduce_latency(chip) if ar_lat is not None and ar_lat > 0 else None
    return Rates(usable_bytes(chip), mem_bw, peak, used, eta, why_eta, eta_att, peak_att, hop, link,
                  ar_lat, why_ar, eta_mem, why_mem, t_launch, why_launch,
                  curve if curve is not None and curve.curve_bytes else None)


def memory_terms(model: Model, lay: InferenceLayout, r: Rates, streaming_bw: float | None) -> Memory:
    """Weights (``resident``: none when they stream in) plus the batch's KV cache at full context."""
    if streaming_bw is not None:
        real("weight_streaming_bytes_per_s", streaming_bw, 1.0, allow_inf=True)
    bpe, kvb = bytes_per_element(lay.precision), model.kv_bytes_per_token_at(lay.s_in + lay.s_out, lay.kv_precision)
    dp = lay.attention == "dp"        # DP attention: a rank keeps its own sequences' whole KV cache
    kv_split = 1 if dp or model.mla is not None else minimum(lay.tp, model.kv_heads)   # K/V heads shared out
    w_chip = dp_weights_per_chip(model, bpe, lay.tp, lay.pp) if dp else model.params * bpe / (lay.tp * lay.pp)
    resident = 0.0 if streaming_bw is not None else w_chip        # weights that occupy the chip's memory
    kv_tok_chip = kvb / (kv_split * lay.pp)
    ctx_full = lay.s_in + lay.s_out
    mem_chip = resident + (ceil_share(lay.B, lay.tp) if dp else lay.B) * ctx_full * kv_tok_chip
    max_batch = whole_part(maximum((r.usable - resident) // (ctx_full * kv_tok_chip), 0)) * (lay.tp if dp else 1)
    w_bw = streaming_bw if streaming_bw is not None else r.eta_mem * r.mem_bw
    return Memory(bpe, kvb, w_chip, resident, kv_tok_chip, ctx_full, mem_chip, max_batch, w_bw)


def allreduce_terms(model: Model, lay: InferenceLayout, r: Rates, tokens=None) -> tuple[float, float]:
    """A stage's two ring all-reduces a layer of ``d_model`` bf16 activations per token, split into
    their latency (s, whatever the tokens: ``(L/pp)·2·t_ar`` with ``t_ar`` the measured small-message
    all-reduce time, or ``2(tp-1)·hop`` where none was measured) and their bytes (s per token).

    On a chip with a measured all-reduce curve (``r.ar_curve``, a group of its ``n_gpus``), each all-reduce
    of ``S = tokens·d_model·2`` bytes takes the measured time there: the line ``a + k·S`` of the curve's
    segment that holds ``S`` (:meth:`~accelbook.specs.measured.AllReduceLatency.line_at`) is returned as the
    latency ``(L/pp)·2·a`` and the bytes ``(L/pp)·2·k·d_model·2`` a token. ``tokens``: the tokens of one
    all-reduce, default a decode microbatch ``max(B/pp, 1)``. MI300X, Llama 70B (d = 8,192, 80 layers) at
    256 sequences on 8: S = 4 MiB, 160 × 88.9 µs = 14.2 ms a step (the 49 µs floor plus the bytes at the 448 GB/s link rate: 160 × 66 µs)."""
    per_stage = (model.n_layers / lay.pp) * 2
    d2 = model.d_model * 2
    cv = r.ar_curve
    if tokens is None:
        tokens = maximum(lay.B / lay.pp, 1.0)

    def on_curve(tp) -> bool:
        return cv is not None and tp == cv.n_gpus

    fixed = each(lambda tp, t: cv.line_at(t * d2)[0] if on_curve(tp) else
                 ring_time_s(2, 0.0, tp, r.hop, r.link) if r.ar_lat is None or tp <= 1 else r.ar_lat, lay.tp, tokens)
    tok = each(lambda tp, t: cv.line_at(t * d2)[1] * d2 if on_curve(tp) else
               ring_time_s(2, d2, tp, 0.0, r.link), lay.tp, tokens)
    return per_stage * fixed, per_stage * tok


def decode_terms(model: Model, chip: Chip, lay: InferenceLayout, r: Rates, m: Memory, q: int = 1,
                 ar: tuple | None = None) -> Decode:
    """One step for every sequence: a microbatch of ``b = B/pp`` per stage at mean context ``c``, each
    sequence processing ``q`` tokens that share its context (``q = γ+1`` verifies ``γ`` draft tokens): the
    weights and the KV cache are read once, the matmuls, attention FLOPs and all-reduce bytes are ``q``×.
    ``ar``: :func:`allreduce_terms` of this layout, when the caller has them already."""
    tp, pp, d = lay.tp, lay.pp, model.d_model
    b = maximum(lay.B / pp, 1.0)                            # a microbatch per stage (at least one sequence)
    bq = b * q                                           # tokens its matmuls process
    c = lay.s_in + lay.s_out / 2
    if lay.attention == "dp":
        return _decode_dp(model, chip, lay, r, m, b, q, c)
    n_act = model.matmul_params_active
    w_read = weights_read_bytes(model, m.bpe, bq)
    if model.moe is not None:                            # experts a microbatch touches, expected
        mo = model.moe
        touched = each(lambda t: touched_expert_share(mo.top_k, mo.n_experts, t), bq)  # Python pow, not NumPy's
        expert_bytes = model.n_moe_layers * mo.n_experts * model.ffn_matrices(mo.d_ff_expert) * m.bpe
        w_read -= expert_bytes * (1 - touched)
    # the matmuls (weights) and attention (KV cache) are different kernels: each is bound by its own
    # roofline, and their times add (a roofline per operation, as in notebook 01)
    # a wafer that maps each layer onto its own region of cores reads one region at a time at batch 1: k = L/pp
    # layers per wafer, so 1/k of its SRAM bandwidth (dataflow.layers_per_region; 1 on every other chip)
    # (weights streamed in from off the wafer arrive at the stream's rate, whatever region they feed)
    k_reg = layers_per_region(chip, model, pp)
    streamed = type(m.resident) is float and m.resident == 0.0
    gemm_mem = w_read / (tp * pp) / m.w_bw * (1.0 if streamed else k_reg)
    # GEMMs of bq rows: tile/wave losses on GPUs; on TPUs the fold model charges every fold its weight
    # preload, which at a decode step's few rows it cannot hide, and no measurement checks that: not applied
    eta_shape = pass_shape_efficiency(model, chip, ceil_whole(bq), tp) if chip.kind == "gpu" else 1.0
    gemm_cmp = bq * 2 * n_act / (tp * pp) / (r.eta * r.peak * eta_shape)
    attn_mem = (b * c * m.kv_tok_chip * (model.kv_share(c) / model.kv_share(m.ctx_full)) / (r.eta_mem * r.mem_bw)
                * k_reg)
    attn_cmp = (bq * c * decode_attention_flops_per_context_token(model) * model.attention_share(c) / (tp * pp)
                / (r.eta_att * r.peak_att))
    ar_fixed, ar_tok = allreduce_terms(model, lay, r) if ar is None else ar
    t_comm = ar_fixed + bq * ar_tok                      # two all-reduces a layer
    t_launch = (model.n_layers / pp) * r.t_launch        # host and launch time, without CUDA graphs
    elem_tok = each(lambda t: elementwise_bytes_per_token(model, t, lay.precision), tp) / pp / (r.eta_mem * r.mem_bw)
    t_stage = maximum(gemm_mem, gemm_cmp) + maximum(attn_mem, attn_cmp) + t_comm + t_launch + bq * elem_tok
    tpot = pp * t_stage + (pp - 1) * (r.hop + bq * d * 2 / r.link)
    # the SRAM roofline, every core reading at once: the UPPER BOUND a region-mapped wafer's speed stays under
    roof = tpot - pp * (maximum(gemm_mem, gemm_cmp) - maximum(gemm_mem / (1.0 if streamed else k_reg), gemm_cmp)
                        + maximum(attn_mem, attn_cmp) - maximum(attn_mem / k_reg, attn_cmp))
    return Decode(gemm_mem, gemm_cmp, attn_mem, attn_cmp, t_comm, t_stage, tpot, eta_shape, t_launch,
                   bq * elem_tok, elem_tok, roof)


def expert_link_bytes_per_s(chip: Chip, r: Rates) -> float:
    """The link rate an expert all-to-all runs at: the chip's link per direction after its scale-up fabric's
    efficiency (``data/fabrics.toml``; NVLink 4: 450·0.82 = 369 GB/s on an H200), the bare link without one."""
    return r.link * (get_fabric(chip.scale_up_fabric)["efficiency"] if chip.scale_up_fabric else 1.0)


def _decode_dp(model: Model, chip: Chip, lay: InferenceLayout, r: Rates, m: Memory, b: float, q: int, c: float) -> Decode:
    """One decode step with DP attention + EP (:mod:`accelbook.inference.parallel`): the busiest rank's
    reads and matmuls, its attention over its own sequences' cache, two all-to-alls per MoE layer."""
    ep, pp = lay.tp, lay.pp
    w = dp_decode_terms(model, b, q, ep, pp, c, m.bpe, m.kv_tok_chip * model.kv_share(c) / model.kv_share(m.ctx_full))
    gemm_mem = w["w_read"] / m.w_bw
    eta_shape = pass_shape_efficiency(model, chip, math.ceil(w["rank_tokens"]), 1) if chip.kind == "gpu" else 1.0
    gemm_cmp = w["gemm_flops"] / (r.eta * r.peak * eta_shape)
    attn_mem = w["kv_bytes"] / (r.eta_mem * r.mem_bw)
    attn_cmp = w["attn_flops"] / (r.eta_att * r.peak_att)
    t_comm = (model.n_moe_layers / pp) * expert_all_to_all_s(model, w["rank_tokens"], ep, r.hop,
                                                             expert_link_bytes_per_s(chip, r), lay.precision)
    t_launch = (model.n_layers / pp) * r.t_launch
    elem_tok = elementwise_bytes_per_token(model, 1, lay.precision) / pp / (r.eta_mem * r.mem_bw)
    t_elem = w["rank_tokens"] * elem_tok                 # the busiest rank's tokens, heads not split
    t_stage = max(gemm_mem, gemm_cmp) + max(attn_mem, attn_cmp) + t_comm + t_launch + t_elem
    tpot = pp * t_stage + (pp - 1) * (r.hop + b * q * model.d_model * 2 / r.link)
    return Decode(gemm_mem, gemm_cmp, attn_mem, attn_cmp, t_comm, t_stage, tpot, eta_shape, t_launch,
                   t_elem, elem_tok, tpot)


def prefill_terms(model: Model, chip: Chip, lay: InferenceLayout, r: Rates, m: Memory, ar: tuple | None = None) -> Prefill:
    """One prompt of ``s_in`` tokens at an idle server: causal attention, the stages one after another;
    the GEMMs at the efficiency of their ``s_in``-row shapes. ``ar`` as :func:`decode_terms`'."""
    tp, pp, s_in = lay.tp, lay.pp, lay.s_in
    L, d = model.n_layers, model.d_model
    d_qk, d_v = model.attention_dim
    dp = lay.attention == "dp"        # DP attention: the prompt's rank runs all but the routed experts
    eta_shape = pass_shape_efficiency(model, chip, s_in, 1 if dp else tp)
    a_exp = routed_active_params(model) if dp else 0
    per_tok = (2 * (model.matmul_params_active - a_exp) / (1 if dp else tp) + 2 * a_exp / tp) / pp \
        / (r.eta * r.peak * eta_shape)                                          # one token's matmuls
    attn_tok = L * s_in * (d_qk + d_v) * model.attention_share(s_in, True) / ((1 if dp else tp) * pp) / (r.eta_att * r.peak_att)
    pf_tok = per_tok + attn_tok
    pf_cmp = s_in * pf_tok
    pf_mem = (m.w_chip if dp else weights_read_bytes(model, m.bpe, s_in) / (tp * pp)) / m.w_bw
    # a measured curve is read at the prompt's own message size, not at the decode batch's
    ar_fixed, ar_tok = allreduce_terms(model, lay, r, s_in) if ar is None or r.ar_curve is not None else ar
    pf_comm = ((model.n_moe_layers / pp) * expert_all_to_all_s(model, s_in, tp, r.hop, expert_link_bytes_per_s(chip, r),
                                                                lay.precision) if dp
               else ar_fixed + s_in * ar_tok)
    pf_elem = s_in * each(lambda t: elementwise_bytes_per_token(model, t, lay.precision), 1 if dp else tp) / pp \
        / (r.eta_mem * r.mem_bw)
    ttft = (pp * (maximum(pf_cmp, pf_mem) + pf_comm + pf_elem + (L / pp) * r.t_launch)
            + (pp - 1) * (r.hop + s_in * d * 2 / r.link))
    return Prefill(per_tok, attn_tok, pf_tok, pf_cmp, pf_mem, pf_comm, ttft, eta_shape, pf_elem)


def throughput(lay: InferenceLayout, dec: Decode, pf: Prefill) -> float:
    """Output tokens/s of all replicas, static batching: prefill the batch, then decode it. With DP attention
    the ``B`` prompts prefill one rank at a time (a rank's prefill holds every rank at the MoE layers;
    round-robin scheduling, :mod:`accelbook.inference.parallel`), so ``B`` prefills a replica as with TP."""
    B, pp, s_out = lay.B, lay.pp, lay.s_out
    # B prompts stream through the pp stages: (B + pp - 1) stage-slots, weights read once per batch
    pf_batch = (B + pp - 1) * (maximum(pf.pf_cmp, pf.pf_mem / B) + pf.pf_elem) + B * pf.pf_comm
    replica_tps = B * s_out / (pf_batch + s_out * dec.tpot)
    return lay.replicas * replica_tps
