"""One inference layout on one chip: memory fit, decode step (TPOT), prefill (TTFT), throughput, power.

The formulas are the package's (``accelbook.inference``'s docstring has them with their symbols);
this module computes them in that order, one helper a quantity:

- ``_memory``: weights and KV cache per chip against ``(1 - reserve)`` of its memory;
- ``_decode``: ``t_stage = max(gemm_mem, gemm_cmp) + max(attn_mem, attn_cmp) + t_comm + t_launch``,
  ``TPOT = pp·t_stage + (pp-1)·hop``;
- ``_prefill``: ``TTFT = pp·(max(pf_cmp, pf_mem) + pf_comm + t_launch) + (pp-1)·hop``;

with four measured mechanisms, each its own term: memory reads at the chip's achievable HBM bandwidth
(``accelbook.specs.measured.achievable_hbm_fraction``, BabelStream Triad); GEMM compute divided by the
shapes' tile/wave efficiency (``rates.gemm_shape_efficiency``); each all-reduce's fixed part at the
measured small-message all-reduce time (``measured.allreduce_latency``, nccl-tests); and, without CUDA
graphs, the measured host and launch time per layer (``measured.launch_overhead_per_layer``).
- ``_throughput``: static batching, ``B·output_len / (t_prefill(B prompts) + output_len·TPOT)``;
- power: ``accelbook.inference.power.decode_power``, the whole system per chip at the wall.
"""

from __future__ import annotations

import math
from typing import NamedTuple

from accelbook.checks import at_most, fraction, instance, one_of, output_fields, real, whole
from accelbook.network.collectives import ring_time_s
from accelbook.specs.chips import Chip, get_chip
from accelbook.specs.efficiency import measured_efficiency
from accelbook.specs.measured import achievable_hbm_fraction, allreduce_latency, launch_overhead_per_layer
from accelbook.specs.models import Model, bytes_per_element, get_model
from accelbook.specs.system_power import default_pue

from .dataflow import link_terms, plausibility
from .parallel import (
    ceil_share,
    check_attention_layout,
    decode_attention_flops_per_context_token,
    dp_decode_terms,
    dp_weights_per_chip,
    expert_all_to_all_s,
    routed_active_params,
    weights_read_bytes,
)
from .power import PowerDraw, decode_power
from .rates import (
    DEFAULT_HOP_S,
    DEFAULT_LINK_BYTES_S,
    IDLE_POWER_SHARE,
    MEM_EFFICIENCY,
    MEMORY_BOUND_POWER,
    WEIGHT_PRECISIONS,
    elementwise_bytes_per_token,
    gemm_efficiency,
    gemm_shape_efficiency,
    nearest_peak_flop_s,
    peak_precision,
)
from .result import InferenceEstimate, usable_bytes


class _Layout(NamedTuple):
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


class _Rates(NamedTuple):
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


class _Memory(NamedTuple):
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


class _Decode(NamedTuple):
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


class _Prefill(NamedTuple):
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


#: bounds on one layout's arguments, far past any deployment (the largest serve on thousands of chips,
#: with contexts of millions of tokens), so that every product of them stays an exact, finite float
MAX_CHIPS = 2**24
MAX_BATCH = 2**24
MAX_TOKENS = 2**26
_WHERE = "accelbook.inference.estimate.MAX_{}"
#: the results of :func:`estimate` that are shares (at most 1); every number it returns is finite and >= 0
ESTIMATE_FRACTIONS = {"memory_share", "decode_gemm_shape_efficiency", "prefill_gemm_shape_efficiency"}


def _layout(model: Model, n_chips, batch_size, input_len, output_len, precision, tp, pp, kv_precision,
            mem_efficiency, hop_latency_s, price_usd_per_hour, attention="tp") -> _Layout:
    n = at_most("n_chips", whole("n_chips", n_chips), MAX_CHIPS, _WHERE.format("CHIPS"))
    B = at_most("batch_size", whole("batch_size", batch_size), MAX_BATCH, _WHERE.format("BATCH"))
    s_in = at_most("input_len", whole("input_len", input_len), MAX_TOKENS, _WHERE.format("TOKENS"))
    s_out = at_most("output_len", whole("output_len", output_len), MAX_TOKENS, _WHERE.format("TOKENS"))
    one_of("precision", precision, WEIGHT_PRECISIONS)
    kv_precision = kv_precision or ("fp8" if precision in ("fp8", "fp4", "int8") else "bf16")
    one_of("kv_precision", kv_precision, WEIGHT_PRECISIONS)
    for name, v, hi in (("hop_latency_s", hop_latency_s, 1.0), ("price_usd_per_hour", price_usd_per_hour, 1e6)):
        if v is not None:
            real(name, v, 0.0, hi)
    pp = whole("pp", pp)
    if pp > n:
        raise ValueError(f"pp = {pp:,} pipeline stages need at least as many chips, got n_chips = {n:,}")
    if tp is None:
        tp = n // pp
    tp = whole("tp", tp)
    if n % (tp * pp):
        raise ValueError(f"n_chips = {n} is not a whole number of replicas of tp·pp = {tp}·{pp} = {tp * pp} chips")
    if pp > model.n_layers:
        raise ValueError(f"pp = {pp} exceeds the {model.n_layers} layers of {model.name}")
    check_attention_layout(model, attention)
    if attention == "tp" and model.n_heads % tp:
        raise ValueError(f"tp = {tp} does not divide the {model.n_heads} attention heads of {model.name}: "
                         "each chip of a tensor-parallel group holds whole heads")
    if mem_efficiency is not None:
        fraction("mem_efficiency", mem_efficiency, zero_ok=False)
    return _Layout(n, B, s_in, s_out, tp, pp, n // (tp * pp), precision, kv_precision, attention)


def _memory_share(chip: Chip, mem_efficiency: float | None) -> tuple[float, str]:
    """Share of the memory bandwidth reads reach: ``mem_efficiency`` if given (a what-if), else the chip's
    measured achievable HBM fraction (BabelStream Triad; borrowed or the mean where not measured, and the
    note says so), else (SRAM chips, no measurement) ``MEM_EFFICIENCY``, an ESTIMATE."""
    if mem_efficiency is not None:
        return mem_efficiency, f"memory reads at {mem_efficiency:.0%} of the memory bandwidth (set by the caller)"
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
    why_ar = ("all-reduce latency: each of a tensor-parallel layer's two all-reduces pays "
              f"{ar.latency_s * 1e6:.0f} µs, the measured nccl-tests small-message time on {ar.n_gpus} GPUs "
              f"({ar.message_bytes:,} B at {ar.message_bytes * 2 * (ar.n_gpus - 1) / ar.n_gpus / ar.latency_s / 1e9:.2f}"
              f" GB/s busbw; {ar.provenance.source.title})"
              + (f", borrowed from {ar.borrowed_from}" if ar.borrowed_from else "") + ", plus its bytes at the link rate"
              if ar is not None else
              "all-reduce latency: 2(tp-1) hops per all-reduce (no small-message measurement on this chip)")
    t_launch, lm = launch_overhead_per_layer(cuda_graphs)
    why_launch = ("CUDA graphs on (TensorRT-LLM's and vLLM's default): no host or launch time added; no published "
                  "figure isolates what a replayed graph still loses between kernels" if cuda_graphs else
                  f"CUDA graphs off: {t_launch * 1e3:.2f} ms of host and launch time per layer, measured "
                  f"({lm.eager_s * 1e3:.0f} ms eager against {lm.graph_s * 1e3:.0f} ms graphed per token over "
                  f"{lm.n_layers} layers; {lm.provenance.source.title})")
    return (ar.latency_s if ar is not None else None), why_ar, t_launch, why_launch


_RATES_SEEN: dict = {}     # (id(chip), arguments) -> (chip, _Rates): a sweep asks the same for every layout


def _rates(chip: Chip, precision: str, hop_latency_s: float | None, mem_efficiency: float | None = None,
           cuda_graphs: bool = True) -> _Rates:
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
              cuda_graphs: bool) -> _Rates:
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
    if hop_latency_s is not None:        # a hop latency set by the caller is a what-if of the hop formula
        ar_lat, why_ar = None, "all-reduce latency: 2(tp-1) hops per all-reduce at the hop latency set by the caller"
    return _Rates(usable_bytes(chip), mem_bw, peak, used, eta, why_eta, eta_att, peak_att, hop, link,
                  ar_lat, why_ar, eta_mem, why_mem, t_launch, why_launch)


def _memory(model: Model, lay: _Layout, r: _Rates, streaming_bw: float | None) -> _Memory:
    """Weights (``resident``: none when they stream in) plus the batch's KV cache at full context."""
    if streaming_bw is not None:
        real("weight_streaming_bytes_per_s", streaming_bw, 1.0, allow_inf=True)
    bpe, kvb = bytes_per_element(lay.precision), model.kv_bytes_per_token_at(lay.s_in + lay.s_out, lay.kv_precision)
    dp = lay.attention == "dp"        # DP attention: a rank keeps its own sequences' whole KV cache
    kv_split = 1 if dp or model.mla is not None else min(lay.tp, model.kv_heads)   # K/V heads shared out
    w_chip = dp_weights_per_chip(model, bpe, lay.tp, lay.pp) if dp else model.params * bpe / (lay.tp * lay.pp)
    resident = 0.0 if streaming_bw is not None else w_chip        # weights that occupy the chip's memory
    kv_tok_chip = kvb / (kv_split * lay.pp)
    ctx_full = lay.s_in + lay.s_out
    mem_chip = resident + (ceil_share(lay.B, lay.tp) if dp else lay.B) * ctx_full * kv_tok_chip
    max_batch = max(0, int((r.usable - resident) // (ctx_full * kv_tok_chip))) * (lay.tp if dp else 1)
    w_bw = streaming_bw if streaming_bw is not None else r.eta_mem * r.mem_bw
    return _Memory(bpe, kvb, w_chip, resident, kv_tok_chip, ctx_full, mem_chip, max_batch, w_bw)


def _allreduce(model: Model, lay: _Layout, r: _Rates) -> tuple[float, float]:
    """A stage's two ring all-reduces a layer of ``d_model`` bf16 activations per token, split into
    their latency (s, whatever the tokens: ``(L/pp)·2·t_ar`` with ``t_ar`` the measured small-message
    all-reduce time, or ``2(tp-1)·hop`` where none was measured) and their bytes (s per token)."""
    per_stage = (model.n_layers / lay.pp) * 2
    fixed = ring_time_s(2, 0.0, lay.tp, r.hop, r.link) if r.ar_lat is None or lay.tp <= 1 else r.ar_lat
    return (per_stage * fixed,
            per_stage * ring_time_s(2, model.d_model * 2, lay.tp, 0.0, r.link))


def _decode(model: Model, chip: Chip, lay: _Layout, r: _Rates, m: _Memory, q: int = 1) -> _Decode:
    """One step for every sequence: a microbatch of ``b = B/pp`` per stage at mean context ``c``, each
    sequence processing ``q`` tokens that share its context (``q = γ+1`` verifies ``γ`` draft tokens): the
    weights and the KV cache are read once, the matmuls, attention FLOPs and all-reduce bytes are ``q``×."""
    tp, pp, d = lay.tp, lay.pp, model.d_model
    b = max(lay.B / pp, 1.0)                             # a microbatch per stage (at least one sequence)
    bq = b * q                                           # tokens its matmuls process
    c = lay.s_in + lay.s_out / 2
    if lay.attention == "dp":
        return _decode_dp(model, chip, lay, r, m, b, q, c)
    n_act = model.matmul_params_active
    w_read = weights_read_bytes(model, m.bpe, bq)
    if model.moe is not None:                            # experts a microbatch touches, expected
        mo = model.moe
        touched = 1 - (1 - mo.top_k / mo.n_experts) ** bq
        expert_bytes = model.n_moe_layers * mo.n_experts * model.ffn_matrices(mo.d_ff_expert) * m.bpe
        w_read -= expert_bytes * (1 - touched)
    # the matmuls (weights) and attention (KV cache) are different kernels: each is bound by its own
    # roofline, and their times add (a roofline per operation, as in notebook 01)
    gemm_mem = w_read / (tp * pp) / m.w_bw
    # GEMMs of bq rows: tile/wave losses on GPUs; on TPUs the fold model charges every fold its weight
    # preload, which at a decode step's few rows it cannot hide, and no measurement checks that: not applied
    eta_shape = gemm_shape_efficiency(model, chip, math.ceil(bq), tp) if chip.kind == "gpu" else 1.0
    gemm_cmp = bq * 2 * n_act / (tp * pp) / (r.eta * r.peak * eta_shape)
    attn_mem = b * c * m.kv_tok_chip * (model.kv_share(c) / model.kv_share(m.ctx_full)) / (r.eta_mem * r.mem_bw)
    attn_cmp = (bq * c * decode_attention_flops_per_context_token(model) * model.attention_share(c) / (tp * pp)
                / (r.eta_att * r.peak_att))
    ar_fixed, ar_tok = _allreduce(model, lay, r)
    t_comm = ar_fixed + bq * ar_tok                      # two all-reduces a layer
    t_launch = (model.n_layers / pp) * r.t_launch        # host and launch time, without CUDA graphs
    elem_tok = elementwise_bytes_per_token(model, tp, lay.precision) / pp / (r.eta_mem * r.mem_bw)
    t_stage = max(gemm_mem, gemm_cmp) + max(attn_mem, attn_cmp) + t_comm + t_launch + bq * elem_tok
    tpot = pp * t_stage + (pp - 1) * (r.hop + bq * d * 2 / r.link)
    return _Decode(gemm_mem, gemm_cmp, attn_mem, attn_cmp, t_comm, t_stage, tpot, eta_shape, t_launch,
                   bq * elem_tok, elem_tok)


def _decode_dp(model: Model, chip: Chip, lay: _Layout, r: _Rates, m: _Memory, b: float, q: int, c: float) -> _Decode:
    """One decode step with DP attention + EP (:mod:`accelbook.inference.parallel`): the busiest rank's
    reads and matmuls, its attention over its own sequences' cache, two all-to-alls per MoE layer."""
    ep, pp = lay.tp, lay.pp
    w = dp_decode_terms(model, b, q, ep, pp, c, m.bpe, m.kv_tok_chip * model.kv_share(c) / model.kv_share(m.ctx_full))
    gemm_mem = w["w_read"] / m.w_bw
    eta_shape = gemm_shape_efficiency(model, chip, math.ceil(w["rank_tokens"]), 1) if chip.kind == "gpu" else 1.0
    gemm_cmp = w["gemm_flops"] / (r.eta * r.peak * eta_shape)
    attn_mem = w["kv_bytes"] / (r.eta_mem * r.mem_bw)
    attn_cmp = w["attn_flops"] / (r.eta_att * r.peak_att)
    t_comm = (model.n_moe_layers / pp) * expert_all_to_all_s(model, w["rank_tokens"], ep, r.hop, r.link)
    t_launch = (model.n_layers / pp) * r.t_launch
    elem_tok = elementwise_bytes_per_token(model, 1, lay.precision) / pp / (r.eta_mem * r.mem_bw)
    t_elem = w["rank_tokens"] * elem_tok                 # the busiest rank's tokens, heads not split
    t_stage = max(gemm_mem, gemm_cmp) + max(attn_mem, attn_cmp) + t_comm + t_launch + t_elem
    tpot = pp * t_stage + (pp - 1) * (r.hop + b * q * model.d_model * 2 / r.link)
    return _Decode(gemm_mem, gemm_cmp, attn_mem, attn_cmp, t_comm, t_stage, tpot, eta_shape, t_launch,
                   t_elem, elem_tok)


def _prefill(model: Model, chip: Chip, lay: _Layout, r: _Rates, m: _Memory) -> _Prefill:
    """One prompt of ``s_in`` tokens at an idle server: causal attention, the stages one after another;
    the GEMMs at the efficiency of their ``s_in``-row shapes."""
    tp, pp, s_in = lay.tp, lay.pp, lay.s_in
    L, d = model.n_layers, model.d_model
    d_qk, d_v = model.attention_dim
    dp = lay.attention == "dp"        # DP attention: the prompt's rank runs all but the routed experts
    eta_shape = gemm_shape_efficiency(model, chip, s_in, 1 if dp else tp)
    a_exp = routed_active_params(model) if dp else 0
    per_tok = (2 * (model.matmul_params_active - a_exp) / (1 if dp else tp) + 2 * a_exp / tp) / pp \
        / (r.eta * r.peak * eta_shape)                                          # one token's matmuls
    attn_tok = L * s_in * (d_qk + d_v) * model.attention_share(s_in, True) / ((1 if dp else tp) * pp) / (r.eta_att * r.peak_att)
    pf_tok = per_tok + attn_tok
    pf_cmp = s_in * pf_tok
    pf_mem = (m.w_chip if dp else weights_read_bytes(model, m.bpe, s_in) / (tp * pp)) / m.w_bw
    ar_fixed, ar_tok = _allreduce(model, lay, r)
    pf_comm = ((model.n_moe_layers / pp) * expert_all_to_all_s(model, s_in, tp, r.hop, r.link) if dp
               else ar_fixed + s_in * ar_tok)
    pf_elem = s_in * elementwise_bytes_per_token(model, 1 if dp else tp, lay.precision) / pp / (r.eta_mem * r.mem_bw)
    ttft = (pp * (max(pf_cmp, pf_mem) + pf_comm + pf_elem + (L / pp) * r.t_launch)
            + (pp - 1) * (r.hop + s_in * d * 2 / r.link))
    return _Prefill(per_tok, attn_tok, pf_tok, pf_cmp, pf_mem, pf_comm, ttft, eta_shape, pf_elem)


def _throughput(lay: _Layout, dec: _Decode, pf: _Prefill) -> float:
    """Output tokens/s of all replicas, static batching: prefill the batch, then decode it."""
    B, pp, s_out = lay.B, lay.pp, lay.s_out
    Bp = ceil_share(B, lay.tp) if lay.attention == "dp" else B    # DP attention: each rank prefills its own prompts
    # B prompts stream through the pp stages: (B + pp - 1) stage-slots, weights read once per batch
    pf_batch = (Bp + pp - 1) * (max(pf.pf_cmp, pf.pf_mem / Bp) + pf.pf_elem) + Bp * pf.pf_comm
    replica_tps = B * s_out / (pf_batch + s_out * dec.tpot)
    return lay.replicas * replica_tps


def _assumptions(chip: Chip, precision: str, r: _Rates, dec: _Decode, pf: _Prefill,
                 streaming_bw: float | None, pw: PowerDraw) -> tuple[str, ...]:
    widened = (() if r.peak_used == precision else
               (f"{chip.name} publishes no {precision} peak: the math runs at its {r.peak_used} peak "
                f"({r.peak / 1e12:,.0f} TFLOP/s), the {precision} weights widened",))
    return widened + (
        r.why_eta,
        r.why_mem,
        ("GEMM shapes: " + (f"decode {dec.eta_shape:.0%}, prefill {pf.eta_shape:.0%} of the measured GEMM rate "
                            "(tile and wave quantisation, accelbook.chip.tiling)" if chip.kind == "gpu" else
                            f"prefill {pf.eta_shape:.0%} of the measured GEMM rate (MXU folds, accelbook.chip.tiling); "
                            "decode not charged (no measurement checks the fold model at a few rows)"
                            if chip.kind == "tpu" else "no tiling model for this chip: none charged")),
        r.why_ar,
        r.why_launch,
        ("weights streamed in at " + f"{streaming_bw / 1e9:,.0f} GB/s per chip (what-if)" if streaming_bw is not None
         else "weights resident in the chip's memory"),
        (link_terms(chip).sentence() if link_terms(chip) is not None else
         f"chip-to-chip hop {r.hop * 1e6:.1f} µs, link {r.link / 1e9:.0f} GB/s per direction"
         + ("" if chip.link_latency_s and chip.link_bw_bytes_per_s else " (ESTIMATE: not in the catalogue)")),
        f"power at the wall: {pw.basis}; it draws {IDLE_POWER_SHARE:.0%} of that idle, all of it when "
        f"compute-bound, {MEMORY_BOUND_POWER:.0%} of the dynamic range when memory-bound (ESTIMATE)",
        "throughput: static batching (prefill the batch, then decode it); TTFT at an idle server",
    )


def estimate(model: Model | str, chip: Chip | str, n_chips: int, batch_size: int, input_len: int, output_len: int,
             precision: str = "bf16", tp: int | None = None, pp: int = 1, kv_precision: str | None = None,
             mem_efficiency: float | None = None, hop_latency_s: float | None = None,
             price_usd_per_hour: float | None = None,
             weight_streaming_bytes_per_s: float | None = None, tokens_per_seq: int = 1,
             cuda_graphs: bool = True, attention: str = "tp", pue: float | None = None) -> InferenceEstimate:
    """TTFT, TPOT, tokens/s (total, per user, per chip), KV cache, the largest batch that fits,
    power, tokens/kW and USD per million output tokens for one layout (``accelbook.inference``'s docstring).

    ``weight_streaming_bytes_per_s``: for models too large for the chips' memory (Cerebras's weight
    streaming from MemoryX), the weights stay off-chip and stream in at this bandwidth every step;
    the chip's memory then holds only the KV cache. No published figure: a what-if.

    ``tokens_per_seq``: tokens each sequence processes in one decode step, sharing its context
    (``γ + 1`` when the target verifies ``γ`` draft tokens, :func:`~accelbook.inference.variants.speculative`);
    TPOT is then the time of that step.

    ``mem_efficiency``: share of the memory bandwidth reads reach; None (default) takes the chip's measured
    achievable HBM bandwidth (:func:`accelbook.specs.measured.achievable_hbm_fraction`).
    ``cuda_graphs``: kernels replayed as CUDA graphs (default, as TensorRT-LLM and vLLM do); False adds the
    measured host and launch time per layer (:func:`accelbook.specs.measured.launch_overhead_per_layer`).
    ``attention``: ``"tp"`` (tensor-parallel attention) or, for a mixture-of-experts model, ``"dp"``:
    data-parallel attention with expert parallelism over the ``tp`` chips (:mod:`accelbook.inference.parallel`).
    ``pue``: the site's power usage effectiveness (wall power / IT power), default ``data/tco.toml``'s 1.2;
    power and tokens per kW are at the wall, for the whole system per chip (:mod:`accelbook.specs.system_power`).
    ``flag``: on an SRAM-only chip, why the per-user speed is out of the model's reach
    (:func:`accelbook.inference.dataflow.plausibility`), else empty."""
    model = instance("model", model, Model, get_model)
    chip = instance("chip", chip, Chip, get_chip)
    lay = _layout(model, n_chips, batch_size, input_len, output_len, precision, tp, pp, kv_precision,
                  mem_efficiency, hop_latency_s, price_usd_per_hour, attention)
    if not isinstance(cuda_graphs, bool):
        raise ValueError(f"cuda_graphs must be True or False, got {cuda_graphs!r}")
    r = _rates(chip, precision, hop_latency_s, mem_efficiency, cuda_graphs)
    streaming = weight_streaming_bytes_per_s
    m = _memory(model, lay, r, streaming)
    dec = _decode(model, chip, lay, r, m, at_most("tokens_per_seq", whole("tokens_per_seq", tokens_per_seq), 4096,
                                                  "a verify step of at most 4,096 draft tokens"))
    pf = _prefill(model, chip, lay, r, m)
    tps = _throughput(lay, dec, pf)
    allreduce = _allreduce(model, lay, r) if attention == "tp" else (0.0, 0.0)
    pue = default_pue() if pue is None else real("pue", pue, lo=1.0, hi=3.0)
    pw = decode_power(chip, dec.gemm_mem + dec.attn_mem, dec.gemm_cmp + dec.attn_cmp, dec.t_stage, pue)
    bound, power = pw.bound, pw.wall_w
    n = lay.n
    tpk = None if power is None else tps / (power * n / 1000)
    price = price_usd_per_hour if price_usd_per_hour is not None else chip.price_usd_per_hour
    usd = None if price is None else price * n / 3600 / tps * 1e6
    B, ctx_full = lay.B, m.ctx_full
    return output_fields("inference.estimate", InferenceEstimate(
        model=model.name, chip=chip.name, n_chips=n,
        config=dict(tp=lay.tp, pp=lay.pp, replicas=lay.replicas, batch_size=B, input_len=lay.s_in,
                    output_len=lay.s_out, precision=precision, kv_precision=lay.kv_precision,
                    cuda_graphs=cuda_graphs, attention=attention),
        ttft_s=pf.ttft, tpot_s=dec.tpot, tokens_per_s=tps, tokens_per_s_per_user=1 / dec.tpot,
        tokens_per_s_per_chip=tps / n, kv_cache_bytes=B * ctx_full * m.kvb, max_batch_size=m.max_batch,
        fits=m.mem_chip <= r.usable, memory_per_chip_bytes=m.mem_chip, memory_capacity_bytes=r.usable,
        power_w_per_chip=power, tokens_per_s_per_kw=tpk, usd_per_million_tokens=usd, decode_bound=bound,
        accelerator_power_w=pw.chip_w, power_basis=pw.basis,
        prefill_bound="compute" if pf.pf_cmp >= pf.pf_mem else "memory",
        breakdown=dict(decode_memory_s=dec.gemm_mem + dec.attn_mem, decode_compute_s=dec.gemm_cmp + dec.attn_cmp,
                       decode_comm_s=dec.t_comm, stage_s=dec.t_stage,
                       decode_gemm_s=max(dec.gemm_mem, dec.gemm_cmp), decode_gemm_compute_s=dec.gemm_cmp,
                       decode_attention_compute_s=dec.attn_cmp, decode_attention_s=max(dec.attn_mem, dec.attn_cmp),
                       prefill_compute_s=pf.pf_cmp, prefill_memory_s=pf.pf_mem, prefill_comm_s=pf.pf_comm,
                       weights_per_chip_bytes=m.w_chip, kv_per_chip_bytes=m.mem_chip - m.resident,
                       kv_token_per_chip_bytes=m.kv_tok_chip, decode_per_seq_s=pf.per_tok,
                       decode_per_ctx_token_s=m.kv_tok_chip / (r.eta_mem * r.mem_bw),
                       prefill_per_token_s=pf.pf_tok, prefill_attention_per_token_s=pf.attn_tok,
                       decode_weights_read_s=dec.gemm_mem, allreduce_fixed_s=allreduce[0],
                       allreduce_per_token_s=allreduce[1], memory_share=r.eta_mem,
                       decode_gemm_shape_efficiency=dec.eta_shape, prefill_gemm_shape_efficiency=pf.eta_shape,
                       allreduce_latency_s=r.ar_lat, decode_launch_s=dec.t_launch, launch_per_layer_s=r.t_launch,
                       decode_elementwise_s=dec.t_elem, elementwise_per_token_s=dec.elem_tok,
                       prefill_elementwise_s=pf.pf_elem),
        assumptions=_assumptions(chip, precision, r, dec, pf, streaming, pw),
        flag=plausibility(chip, model, 1 / dec.tpot),
    ), fractions=ESTIMATE_FRACTIONS)
