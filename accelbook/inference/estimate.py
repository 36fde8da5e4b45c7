"""One inference layout on one chip: memory fit, decode step (TPOT), prefill (TTFT), throughput, power.

:func:`estimate` checks its arguments, then computes the terms of :mod:`accelbook.inference.terms` in
order (memory, decode, prefill, throughput; ``accelbook.inference``'s docstring has the formulas with
their symbols), the power of :func:`accelbook.inference.power.decode_power` (the whole system per chip
at the wall), and returns them as an :class:`~accelbook.inference.result.InferenceEstimate` with the
assumptions in words and the reason a per-user speed is out of the model's reach, if it is.
"""

from __future__ import annotations

from accelbook.checks import at_most, fraction, instance, one_of, output_fields, real, whole
from accelbook.specs.chips import Chip, get_chip
from accelbook.specs.models import Model, get_model
from accelbook.specs.system_power import default_pue

from .dataflow import link_terms, mapping, plausibility
from .parallel import check_attention_layout
from .power import PowerDraw, decode_power
from .rates import IDLE_POWER_SHARE, MEMORY_BOUND_POWER, WEIGHT_PRECISIONS
from .result import InferenceEstimate
from .terms import (
    Decode,
    InferenceLayout,
    Prefill,
    Rates,
    allreduce_terms,
    chip_rates,
    decode_terms,
    memory_terms,
    prefill_terms,
    throughput,
)

#: bounds on one layout's arguments, far past any deployment (the largest serve on thousands of chips,
#: with contexts of millions of tokens), so that every product of them stays an exact, finite float
MAX_CHIPS = 2**24
MAX_BATCH = 2**24
MAX_TOKENS = 2**26
_WHERE = "accelbook.inference.estimate.MAX_{}"
#: the results of :func:`estimate` that are shares (at most 1); every number it returns is finite and >= 0
ESTIMATE_FRACTIONS = {"memory_share", "decode_gemm_shape_efficiency", "prefill_gemm_shape_efficiency"}


def _layout(model: Model, n_chips, batch_size, input_len, output_len, precision, tp, pp, kv_precision,
            mem_efficiency, hop_latency_s, price_usd_per_hour, attention="tp") -> InferenceLayout:
    n = at_most("n_chips", whole("n_chips", n_chips), MAX_CHIPS, _WHERE.format("CHIPS"))
    B = at_most("batch_size", whole("batch_size", batch_size), MAX_BATCH, _WHERE.format("BATCH"))
    s_in = at_most("input_len", whole("input_len", input_len), MAX_TOKENS, _WHERE.format("TOKENS"))
    s_out = at_most("output_len", whole("output_len", output_len), MAX_TOKENS, _WHERE.format("TOKENS"))
    one_of("precision", precision, WEIGHT_PRECISIONS)
    if kv_precision is None:    # "" or False is a mistake, not "the default"
        kv_precision = "fp8" if precision in ("fp8", "fp4", "int8") else "bf16"
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
    return InferenceLayout(n, B, s_in, s_out, tp, pp, n // (tp * pp), precision, kv_precision, attention)


def _layer_mapping(chip: Chip, dec: Decode) -> tuple[str, ...]:
    """The sentence of a layer-mapped chip's placement (``data/dataflow.toml``), its SRAM roofline labelled."""
    mp = mapping(chip)
    if mp is None:
        return ()
    roof = (f"; the SRAM roofline, every core reading at once (other terms unchanged), is an UPPER BOUND: "
            f"{1 / dec.tpot_roofline:,.0f} tokens/s per user" if mp.placement == "region" else "")
    return (f"layer-mapped ({mp.placement}): {mp.note} [{mp.source.title}]{roof}; not modelled: {mp.missing}",)


def _assumptions(chip: Chip, precision: str, r: Rates, dec: Decode, pf: Prefill,
                 streaming_bw: float | None, pw: PowerDraw, lay: InferenceLayout) -> tuple[str, ...]:
    widened = (() if r.peak_used == precision else
               (f"{chip.name} publishes no {precision} peak: the math runs at its {r.peak_used} peak "
                f"({r.peak / 1e12:,.0f} TFLOP/s), the {precision} weights widened",))
    return widened + (
        r.why_eta,
        r.why_mem,
        ("GEMM shapes: " + (f"decode {dec.eta_shape:.0%}, prefill {pf.eta_shape:.0%} of the measured GEMM rate "
                            "(tile and wave quantisation with split-K, accelbook.costs.gemm)" if chip.kind == "gpu" else
                            f"prefill {pf.eta_shape:.0%} of the measured GEMM rate (MXU folds, accelbook.costs.gemm); "
                            "decode not charged (no measurement checks the fold model at a few rows)"
                            if chip.kind == "tpu" else "no tiling model for this chip: none charged")),
        r.why_ar,
        r.why_launch,
        ("weights streamed in at " + f"{streaming_bw / 1e9:,.0f} GB/s per chip (what-if)" if streaming_bw is not None
         else "weights resident in the chip's memory"),
        *_layer_mapping(chip, dec),
        (link_terms(chip).sentence() if link_terms(chip) is not None else
         f"chip-to-chip hop {r.hop * 1e6:.1f} µs, link {r.link / 1e9:.0f} GB/s per direction"
         + ("" if chip.link_latency_s and chip.link_bw_bytes_per_s else " (ESTIMATE: not in the catalogue)")),
        f"power at the wall: {pw.basis}; it draws {IDLE_POWER_SHARE:.0%} of that idle, all of it when "
        f"compute-bound, {MEMORY_BOUND_POWER:.0%} of the dynamic range when memory-bound (ESTIMATE)",
        "throughput: static batching (prefill the batch, then decode it); TTFT at an idle server",
    ) + _dp_sentence(chip, lay)


def _dp_sentence(chip: Chip, lay: InferenceLayout) -> tuple[str, ...]:
    """What DP attention + EP charges (:mod:`accelbook.inference.parallel`), for a ``"dp"`` layout only."""
    if lay.attention != "dp":
        return ()
    return (f"DP attention + EP over {lay.tp} ranks: dense and attention weights on every rank, the KV cache of "
            f"⌈B/{lay.tp}⌉ sequences a rank; dispatch and combine of each MoE layer at their real size (a token "
            "once to each rank holding one of its experts), the busiest rank at the measured expert imbalance, "
            f"the link after {chip.scale_up_fabric or 'no'} fabric efficiency; the B prompts prefill one rank at a "
            "time (round-robin in-flight batching: a rank's prefill holds every rank)",)


def checked_inputs(model, chip, n_chips, batch_size, input_len, output_len, precision="bf16", tp=None, pp=1,
                   kv_precision=None, mem_efficiency=None, hop_latency_s=None, price_usd_per_hour=None,
                   weight_streaming_bytes_per_s=None, tokens_per_seq=1, cuda_graphs=True, attention="tp", pue=None):
    """:func:`estimate`'s arguments (the same, with its defaults: a test holds the two signatures equal)
    checked before any term is computed: (model, chip, :class:`InferenceLayout`, the chip's rates, tokens_per_seq,
    pue), or a ``ValueError`` naming the argument. A sweep checks its arguments with it once, then computes
    every layout and batch on arrays."""
    model = instance("model", model, Model, get_model)
    chip = instance("chip", chip, Chip, get_chip)
    lay = _layout(model, n_chips, batch_size, input_len, output_len, precision, tp, pp, kv_precision,
                  mem_efficiency, hop_latency_s, price_usd_per_hour, attention)
    if not isinstance(cuda_graphs, bool):
        raise ValueError(f"cuda_graphs must be True or False, got {cuda_graphs!r}")
    r = chip_rates(chip, precision, hop_latency_s, mem_efficiency, cuda_graphs)
    if weight_streaming_bytes_per_s is not None:
        real("weight_streaming_bytes_per_s", weight_streaming_bytes_per_s, 1.0, allow_inf=True)
    tokens_per_seq = at_most("tokens_per_seq", whole("tokens_per_seq", tokens_per_seq), 4096,
                             "a verify step of at most 4,096 draft tokens")
    pue = default_pue() if pue is None else real("pue", pue, lo=1.0, hi=3.0)
    return model, chip, lay, r, tokens_per_seq, pue


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
    ``flag``: on an SRAM-only or tiered chip, why the per-user speed is out of the model's reach
    (:func:`accelbook.inference.dataflow.plausibility`; at batch 1 also against speeds published on
    ``n_chips`` chips), else empty."""
    model, chip, lay, r, tokens_per_seq, pue = checked_inputs(
        model, chip, n_chips, batch_size, input_len, output_len, precision, tp, pp, kv_precision, mem_efficiency,
        hop_latency_s, price_usd_per_hour, weight_streaming_bytes_per_s, tokens_per_seq, cuda_graphs, attention, pue)
    streaming = weight_streaming_bytes_per_s
    m = memory_terms(model, lay, r, streaming)
    ar = allreduce_terms(model, lay, r)
    dec = decode_terms(model, chip, lay, r, m, tokens_per_seq, ar)
    pf = prefill_terms(model, chip, lay, r, m, ar)
    tps = throughput(lay, dec, pf)
    allreduce = ar if attention == "tp" else (0.0, 0.0)
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
                       prefill_elementwise_s=pf.pf_elem, decode_roofline_tpot_s=dec.tpot_roofline),
        assumptions=_assumptions(chip, precision, r, dec, pf, streaming, pw, lay),
        flag=plausibility(chip, model, 1 / dec.tpot, n_chips=n if B == 1 else None),
    ), fractions=ESTIMATE_FRACTIONS)
