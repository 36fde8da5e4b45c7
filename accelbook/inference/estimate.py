"""One inference layout on one chip: memory fit, decode step (TPOT), prefill (TTFT), throughput, power.

The formulas are the package's (``accelbook.inference``'s docstring has them with their symbols);
this module computes them in that order, one helper a quantity:

- ``_memory``: weights and KV cache per chip against ``(1 - reserve)`` of its memory;
- ``_decode``: ``t_stage = max(gemm_mem, gemm_cmp) + max(attn_mem, attn_cmp) + t_comm``,
  ``TPOT = pp·t_stage + (pp-1)·hop``;
- ``_prefill``: ``TTFT = pp·(max(pf_cmp, pf_mem) + pf_comm) + (pp-1)·hop``;
- ``_throughput``: static batching, ``B·output_len / (t_prefill(B prompts) + output_len·TPOT)``;
- ``_power``: ``P = P_idle + (TDP - P_idle)·activity``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

from accelbook.checks import fraction, one_of, positive, real, whole
from accelbook.chip.roofline import layer_ops
from accelbook.network.collectives import ring_time_s
from accelbook.specs.chips import MEMORY_RESERVE, Chip, get_chip, usable_memory_bytes
from accelbook.specs.efficiency import measured_efficiency
from accelbook.specs.models import Model, bytes_per_element, get_model

from .rates import (
    DEFAULT_HOP_S,
    DEFAULT_LINK_BYTES_S,
    IDLE_POWER_SHARE,
    MEM_EFFICIENCY,
    MEMORY_BOUND_POWER,
    WEIGHT_PRECISIONS,
    gemm_efficiency,
    nearest_peak_flop_s,
    peak_precision,
)


@dataclass(frozen=True)
class InferenceEstimate:
    """What :func:`estimate` returns, SI units; ``breakdown`` holds the terms of the formulas."""

    model: str
    chip: str
    n_chips: int
    config: dict
    ttft_s: float
    tpot_s: float
    tokens_per_s: float              # output tokens/s, all replicas
    tokens_per_s_per_user: float
    tokens_per_s_per_chip: float
    kv_cache_bytes: float            # per replica, the whole batch at full context
    max_batch_size: int              # per replica
    fits: bool
    memory_per_chip_bytes: float
    memory_capacity_bytes: float
    power_w_per_chip: float | None
    tokens_per_s_per_kw: float | None
    usd_per_million_tokens: float | None
    decode_bound: str
    prefill_bound: str
    breakdown: dict = field(repr=False, default_factory=dict)
    assumptions: tuple[str, ...] = field(repr=False, default=())

    def why_not_fit(self) -> str:
        if self.fits:
            return ""
        return (f"does not fit: {self.memory_per_chip_bytes / 1e9:.1f} GB per chip needed, "
                f"{self.memory_capacity_bytes / 1e9:.1f} GB usable; at most batch {self.max_batch_size} "
                "per replica fits" if self.max_batch_size > 0 else
                f"does not fit: the weights alone need {self.breakdown['weights_per_chip_bytes'] / 1e9:.2f} GB per "
                f"chip of {self.memory_capacity_bytes / 1e9:.2f} GB usable; use more chips")


def usable_bytes(chip: Chip) -> float:
    """Memory a model may fill on one chip: ``(1 - MEMORY_RESERVE)`` of HBM (activations and the
    runtime keep the rest), all of it on SRAM chips (their compilers place everything statically)."""
    return usable_memory_bytes(chip.memory_bytes, 0.0 if chip.hbm_bytes is None else MEMORY_RESERVE)


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


class _Prefill(NamedTuple):
    """One prompt at an idle server, seconds."""
    per_tok: float
    attn_tok: float
    pf_tok: float
    pf_cmp: float
    pf_mem: float
    pf_comm: float
    ttft: float


def _layout(model: Model, n_chips, batch_size, input_len, output_len, precision, tp, pp, kv_precision,
            mem_efficiency, hop_latency_s, price_usd_per_hour) -> _Layout:
    n = whole("n_chips", n_chips)
    B = whole("batch_size", batch_size)
    s_in, s_out = whole("input_len", input_len), whole("output_len", output_len)
    one_of("precision", precision, WEIGHT_PRECISIONS)
    kv_precision = kv_precision or ("fp8" if precision in ("fp8", "fp4", "int8") else "bf16")
    one_of("kv_precision", kv_precision, WEIGHT_PRECISIONS)
    for name, v in (("hop_latency_s", hop_latency_s), ("price_usd_per_hour", price_usd_per_hour)):
        if v is not None:
            positive(name, v, allow_zero=True)
    pp = whole("pp", pp)
    if tp is None:
        tp = n // pp
    tp = whole("tp", tp)
    if n % (tp * pp):
        raise ValueError(f"n_chips = {n} is not a whole number of replicas of tp·pp = {tp}·{pp} = {tp * pp} chips")
    if pp > model.n_layers:
        raise ValueError(f"pp = {pp} exceeds the {model.n_layers} layers of {model.name}")
    if model.n_heads % tp:
        raise ValueError(f"tp = {tp} does not divide the {model.n_heads} attention heads of {model.name}: "
                         "each chip of a tensor-parallel group holds whole heads")
    fraction("mem_efficiency", mem_efficiency, zero_ok=False)
    return _Layout(n, B, s_in, s_out, tp, pp, n // (tp * pp), precision, kv_precision)


def _rates(chip: Chip, precision: str, hop_latency_s: float | None) -> _Rates:
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
    return _Rates(usable_bytes(chip), mem_bw, peak, used, eta, why_eta, eta_att, peak_att, hop, link)


def _memory(model: Model, lay: _Layout, r: _Rates, mem_efficiency: float, streaming_bw: float | None) -> _Memory:
    """Weights (``resident``: none when they stream in) plus the batch's KV cache at full context."""
    if streaming_bw is not None:
        real("weight_streaming_bytes_per_s", streaming_bw, 0.0, lo_open=True, allow_inf=True)
    bpe, kvb = bytes_per_element(lay.precision), model.kv_cache_bytes_per_token(lay.kv_precision)
    kv_split = min(lay.tp, model.kv_heads) if model.mla is None else 1   # K/V heads shared out, replicated beyond
    w_chip = model.params * bpe / (lay.tp * lay.pp)
    resident = 0.0 if streaming_bw is not None else w_chip        # weights that occupy the chip's memory
    kv_tok_chip = kvb / (kv_split * lay.pp)
    ctx_full = lay.s_in + lay.s_out
    mem_chip = resident + lay.B * ctx_full * kv_tok_chip
    max_batch = max(0, int((r.usable - resident) // (ctx_full * kv_tok_chip)))
    w_bw = streaming_bw if streaming_bw is not None else mem_efficiency * r.mem_bw
    return _Memory(bpe, kvb, w_chip, resident, kv_tok_chip, ctx_full, mem_chip, max_batch, w_bw)


def weights_read_bytes(model: Model, bpe: float, tokens: float) -> float:
    """Bytes of weights one forward pass over ``tokens`` tokens reads: every matrix once, but of an
    untied embedding table only the tokens' rows (``tokens·d``, and a learned position's); a tied table
    is read whole as the LM head. Llama 3.1 8B: 7.50e9 of its 8.03e9 parameters at one token (the table
    is 6.5 %)."""
    tokens_table = model.vocab_size if model.tied_embeddings else tokens     # rows of the token table read
    positions = tokens if model.position == "learned" else 0
    return (model.params - model.embedding_params + (tokens_table + positions) * model.d_model) * bpe


def _allreduce(model: Model, lay: _Layout, r: _Rates) -> tuple[float, float]:
    """A stage's two ring all-reduces a layer of ``d_model`` bf16 activations per token, split into
    their latency (s, whatever the tokens: ``(L/pp)·2·2(tp-1)·hop``) and their bytes (s per token)."""
    per_stage = (model.n_layers / lay.pp) * 2
    return (per_stage * ring_time_s(2, 0.0, lay.tp, r.hop, r.link),
            per_stage * ring_time_s(2, model.d_model * 2, lay.tp, 0.0, r.link))


def decode_attention_flops_per_context_token(model: Model) -> float:
    """FLOPs one decoding token spends per token of context, summed over the layers: the roofline's
    decode attention (:func:`accelbook.chip.roofline.layer_ops`), ``2·(d_qk + d_v)`` a layer, or
    ``2·H·(2·d_c + d_r)`` for absorbed MLA, which attends over the cached latent (DeepSeek-V3: 2·128·1,088
    = 278,528 a layer, 3.4× the 81,920 of attention with K and V rebuilt per head)."""
    att = next(op for op in layer_ops(model, "decode", 1, 1) if op.kind == "attention")
    return model.n_layers * att.flops


def _decode(model: Model, lay: _Layout, r: _Rates, m: _Memory, mem_efficiency: float, q: int = 1) -> _Decode:
    """One step for every sequence: a microbatch of ``b = B/pp`` per stage at mean context ``c``, each
    sequence processing ``q`` tokens that share its context (``q = γ+1`` verifies ``γ`` draft tokens): the
    weights and the KV cache are read once, the matmuls, attention FLOPs and all-reduce bytes are ``q``×."""
    tp, pp, d = lay.tp, lay.pp, model.d_model
    b = max(lay.B / pp, 1.0)                             # a microbatch per stage (at least one sequence)
    bq = b * q                                           # tokens its matmuls process
    c = lay.s_in + lay.s_out / 2
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
    gemm_cmp = bq * 2 * n_act / (tp * pp) / (r.eta * r.peak)
    attn_mem = b * c * m.kv_tok_chip / (mem_efficiency * r.mem_bw)
    attn_cmp = bq * c * decode_attention_flops_per_context_token(model) / (tp * pp) / (r.eta_att * r.peak_att)
    ar_fixed, ar_tok = _allreduce(model, lay, r)
    t_comm = ar_fixed + bq * ar_tok                      # two all-reduces a layer
    t_stage = max(gemm_mem, gemm_cmp) + max(attn_mem, attn_cmp) + t_comm
    tpot = pp * t_stage + (pp - 1) * (r.hop + bq * d * 2 / r.link)
    return _Decode(gemm_mem, gemm_cmp, attn_mem, attn_cmp, t_comm, t_stage, tpot)


def _prefill(model: Model, lay: _Layout, r: _Rates, m: _Memory) -> _Prefill:
    """One prompt of ``s_in`` tokens at an idle server: causal attention, the stages one after another."""
    tp, pp, s_in = lay.tp, lay.pp, lay.s_in
    L, d = model.n_layers, model.d_model
    d_qk, d_v = model.attention_dim
    per_tok = 2 * model.matmul_params_active / (tp * pp) / (r.eta * r.peak)        # one token's matmuls
    attn_tok = L * s_in * (d_qk + d_v) / (tp * pp) / (r.eta_att * r.peak_att)     # its causal attention
    pf_tok = per_tok + attn_tok
    pf_cmp = s_in * pf_tok
    pf_mem = (weights_read_bytes(model, m.bpe, s_in) / (tp * pp)) / m.w_bw
    ar_fixed, ar_tok = _allreduce(model, lay, r)
    pf_comm = ar_fixed + s_in * ar_tok
    ttft = pp * (max(pf_cmp, pf_mem) + pf_comm) + (pp - 1) * (r.hop + s_in * d * 2 / r.link)
    return _Prefill(per_tok, attn_tok, pf_tok, pf_cmp, pf_mem, pf_comm, ttft)


def _throughput(lay: _Layout, dec: _Decode, pf: _Prefill) -> float:
    """Output tokens/s of all replicas, static batching: prefill the batch, then decode it."""
    B, pp, s_out = lay.B, lay.pp, lay.s_out
    # B prompts stream through the pp stages: (B + pp - 1) stage-slots, weights read once per batch
    pf_batch = (B + pp - 1) * max(pf.pf_cmp, pf.pf_mem / B) + B * pf.pf_comm
    replica_tps = B * s_out / (pf_batch + s_out * dec.tpot)
    return lay.replicas * replica_tps


def _power(chip: Chip, dec: _Decode) -> tuple[str, float | None]:
    """The decode step's binding unit and the chip's power (W; None without a TDP), an ESTIMATE."""
    t_mem, t_cmp = dec.gemm_mem + dec.attn_mem, dec.gemm_cmp + dec.attn_cmp
    bound = "memory" if t_mem >= t_cmp else "compute"
    if chip.tdp_w is None:
        return bound, None
    activity = (t_cmp / dec.t_stage) if bound == "compute" else MEMORY_BOUND_POWER * (t_mem / dec.t_stage)
    return bound, chip.tdp_w * (IDLE_POWER_SHARE + (1 - IDLE_POWER_SHARE) * min(1.0, activity))


def _assumptions(chip: Chip, precision: str, r: _Rates, mem_efficiency: float,
                 streaming_bw: float | None) -> tuple[str, ...]:
    widened = (() if r.peak_used == precision else
               (f"{chip.name} publishes no {precision} peak: the math runs at its {r.peak_used} peak "
                f"({r.peak / 1e12:,.0f} TFLOP/s), the {precision} weights widened",))
    return widened + (
        r.why_eta,
        f"decode reaches {mem_efficiency:.0%} of the memory bandwidth (ESTIMATE)",
        ("weights streamed in at " + f"{streaming_bw / 1e9:,.0f} GB/s per chip (what-if)" if streaming_bw is not None
         else "weights resident in the chip's memory"),
        f"chip-to-chip hop {r.hop * 1e6:.1f} µs, link {r.link / 1e9:.0f} GB/s per direction"
        + ("" if chip.link_latency_s and chip.link_bw_bytes_per_s else " (ESTIMATE: not in the catalogue)"),
        f"power: {IDLE_POWER_SHARE:.0%} of TDP idle, up to TDP when compute-bound, "
        f"{MEMORY_BOUND_POWER:.0%} of the dynamic range when memory-bound (ESTIMATE)",
        "throughput: static batching (prefill the batch, then decode it); TTFT at an idle server",
    )


def estimate(model: Model | str, chip: Chip | str, n_chips: int, batch_size: int, input_len: int, output_len: int,
             precision: str = "bf16", tp: int | None = None, pp: int = 1, kv_precision: str | None = None,
             mem_efficiency: float = MEM_EFFICIENCY, hop_latency_s: float | None = None,
             price_usd_per_hour: float | None = None,
             weight_streaming_bytes_per_s: float | None = None, tokens_per_seq: int = 1) -> InferenceEstimate:
    """TTFT, TPOT, tokens/s (total, per user, per chip), KV cache, the largest batch that fits,
    power, tokens/kW and USD per million output tokens for one layout (``accelbook.inference``'s docstring).

    ``weight_streaming_bytes_per_s``: for models too large for the chips' memory (Cerebras's weight
    streaming from MemoryX), the weights stay off-chip and stream in at this bandwidth every step;
    the chip's memory then holds only the KV cache. No published figure: a what-if.

    ``tokens_per_seq``: tokens each sequence processes in one decode step, sharing its context
    (``γ + 1`` when the target verifies ``γ`` draft tokens, :func:`~accelbook.inference.variants.speculative`);
    TPOT is then the time of that step."""
    model = model if isinstance(model, Model) else get_model(model)
    chip = chip if isinstance(chip, Chip) else get_chip(chip)
    lay = _layout(model, n_chips, batch_size, input_len, output_len, precision, tp, pp, kv_precision,
                  mem_efficiency, hop_latency_s, price_usd_per_hour)
    r = _rates(chip, precision, hop_latency_s)
    streaming = weight_streaming_bytes_per_s
    m = _memory(model, lay, r, mem_efficiency, streaming)
    dec = _decode(model, lay, r, m, mem_efficiency, whole("tokens_per_seq", tokens_per_seq))
    pf = _prefill(model, lay, r, m)
    tps = _throughput(lay, dec, pf)
    allreduce = _allreduce(model, lay, r)
    bound, power = _power(chip, dec)
    n = lay.n
    tpk = None if power is None else tps / (power * n / 1000)
    price = price_usd_per_hour if price_usd_per_hour is not None else chip.price_usd_per_hour
    usd = None if price is None else price * n / 3600 / tps * 1e6
    B, ctx_full = lay.B, m.ctx_full
    return InferenceEstimate(
        model=model.name, chip=chip.name, n_chips=n,
        config=dict(tp=lay.tp, pp=lay.pp, replicas=lay.replicas, batch_size=B, input_len=lay.s_in,
                    output_len=lay.s_out, precision=precision, kv_precision=lay.kv_precision),
        ttft_s=pf.ttft, tpot_s=dec.tpot, tokens_per_s=tps, tokens_per_s_per_user=1 / dec.tpot,
        tokens_per_s_per_chip=tps / n, kv_cache_bytes=B * ctx_full * m.kvb, max_batch_size=m.max_batch,
        fits=m.mem_chip <= r.usable, memory_per_chip_bytes=m.mem_chip, memory_capacity_bytes=r.usable,
        power_w_per_chip=power, tokens_per_s_per_kw=tpk, usd_per_million_tokens=usd, decode_bound=bound,
        prefill_bound="compute" if pf.pf_cmp >= pf.pf_mem else "memory",
        breakdown=dict(decode_memory_s=dec.gemm_mem + dec.attn_mem, decode_compute_s=dec.gemm_cmp + dec.attn_cmp,
                       decode_comm_s=dec.t_comm, stage_s=dec.t_stage,
                       decode_gemm_s=max(dec.gemm_mem, dec.gemm_cmp), decode_attention_s=max(dec.attn_mem, dec.attn_cmp),
                       prefill_compute_s=pf.pf_cmp, prefill_memory_s=pf.pf_mem, prefill_comm_s=pf.pf_comm,
                       weights_per_chip_bytes=m.w_chip, kv_per_chip_bytes=B * ctx_full * m.kv_tok_chip,
                       kv_token_per_chip_bytes=m.kv_tok_chip, decode_per_seq_s=pf.per_tok,
                       decode_per_ctx_token_s=m.kv_tok_chip / (mem_efficiency * r.mem_bw),
                       prefill_per_token_s=pf.pf_tok, prefill_attention_per_token_s=pf.attn_tok,
                       decode_weights_read_s=dec.gemm_mem, allreduce_fixed_s=allreduce[0],
                       allreduce_per_token_s=allreduce[1]),
        assumptions=_assumptions(chip, precision, r, mem_efficiency, streaming),
    )
