"""Ways of serving beyond one layout on one kind of chip, built on :func:`~accelbook.inference.estimate.estimate`:

- speculative decoding: a draft model proposes ``γ`` tokens, the target verifies them in one step;
  ``(1 - a^(γ+1)) / (1 - a)`` tokens per step (Leviathan et al. 2023);
- heterogeneous decode: attention on GPUs (where the KV cache lives), the FFN on LPUs whose SRAM
  holds its weights, the activations crossing twice per layer;
- disaggregated prefill and decode: pools sized so that prefill and decode keep pace.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from accelbook.checks import at_most, instance, one_of, output_fields, real, whole
from accelbook.specs.chips import Chip, get_chip, usable_memory_bytes
from accelbook.specs.models import Model, bytes_per_element, get_model

from .estimate import MAX_BATCH, MAX_CHIPS, MAX_TOKENS, estimate
from .rates import MEM_EFFICIENCY, WEIGHT_PRECISIONS, gemm_efficiency, nearest_peak_flop_s, peak_precision


# -- speculative decoding -------------------------------------------------------------------------------
def expected_accepted(acceptance: float, gamma: int) -> float:
    """Tokens produced per verification step with ``gamma`` draft tokens, each accepted with
    probability ``acceptance`` independently: (1 - a^(γ+1)) / (1 - a) (Leviathan et al. 2023)."""
    if isinstance(acceptance, bool) or not (isinstance(acceptance, numbers.Real) and 0 <= acceptance < 1):
        raise ValueError(f"acceptance must be a probability in [0, 1), got {acceptance!r}")
    g = _gamma(gamma)
    return output_fields("inference.expected_accepted", (1 - acceptance ** (g + 1)) / (1 - acceptance))


def _gamma(gamma) -> int:
    """``gamma`` draft tokens: a whole number in [0, 4095] (a verify step of at most 4,096 tokens)."""
    return at_most("gamma", whole("gamma", gamma, 0), 4095, "a verify step of at most 4,096 tokens")


def speculative(model, draft, chip, n_chips: int, batch_size: int, input_len: int, output_len: int,
                gamma: int = 4, acceptance: float = 0.7, precision: str = "bf16", tp: int | None = None) -> dict:
    """Speculative decoding on one replica: the draft model proposes ``gamma`` tokens one by one,
    the target verifies all of them in one step. The ``γ+1`` tokens of a sequence share one context:
    the verify step reads the weights and the KV cache once and does ``(γ+1)×`` the FLOPs
    (:func:`~accelbook.inference.estimate.estimate` with ``tokens_per_seq = γ+1``), and the KV cache is
    reserved once. ``t_step = γ·TPOT_draft + t_verify``, ``TPOT = t_step / E[tokens per step]``.
    Returns TPOT and tokens/s per user with and without it, and the speed-up; ``fits`` when the
    target and the draft (weights and KV caches) share the chips' memory.

    Worked number (the issue's example): Llama 3.1 70B with an 8B draft on 8 × H100 in fp8, batch 32,
    8K context, γ 4, a 0.7: 4 × 2.08 ms + 8.9 ms verify = 17.2 ms for 2.77 tokens, 6.2 ms a token
    against 7.6 ms: 1.22× faster."""
    g = _gamma(gamma)
    acc = expected_accepted(acceptance, g)
    draft = instance("draft", draft, Model, get_model)
    base = estimate(model, chip, n_chips, batch_size, input_len, output_len, precision, tp=tp)
    verify = estimate(model, chip, n_chips, batch_size, input_len, output_len, precision, tp=tp, tokens_per_seq=g + 1)
    d = estimate(draft, chip, n_chips, batch_size, input_len, output_len, precision, tp=tp)
    t_step = g * d.tpot_s + verify.tpot_s
    tpot = t_step / acc
    fits = base.memory_per_chip_bytes + d.memory_per_chip_bytes <= base.memory_capacity_bytes
    return output_fields("inference.speculative", {
        "tpot_s": tpot, "tokens_per_s_per_user": 1 / tpot, "baseline_tpot_s": base.tpot_s,
        "speedup": base.tpot_s / tpot, "accepted_per_step": acc, "draft_tpot_s": d.tpot_s,
        "verify_step_s": verify.tpot_s, "fits": bool(fits)})


# -- heterogeneous decode: attention on GPUs (where the KV cache lives), FFN on LPUs ------------------------
def heterogeneous_decode(model, gpu, n_gpus: int, lpu, n_lpus: int, batch_size: int, context_len: int,
                         precision: str = "fp8", link_bytes_per_s: float = 100e9, link_latency_s: float = 5e-6,
                         microbatches: int = 4) -> dict:
    """One decode step split across two kinds of chip, per layer: attention (and its weights, and
    the KV cache) on the GPUs, the FFN on LPUs whose SRAM holds its weights, the activations crossing
    twice per layer. A layer's FFN lives on its own ``n_lpus / layers`` LPUs (at least one), which
    read it from SRAM. ``microbatches`` split the batch so the four stages (attention, send, FFN,
    return) overlap: a layer takes the sum of the stages for one microbatch plus (m - 1) times the
    slowest. A token's FFN FLOPs are those of the experts it uses (top-k routed and shared), its
    weight read all of the layer's FFN. Returns TPOT, tokens/s, where the time goes, whether the FFN
    weights fit in the LPUs (all of their SRAM) and the rest in the GPUs (less the memory reserve), and
    the LPU peak taken (``lpu_peak_precision``: fp8 on an LPU v1, which has none, runs at fp16)."""
    model = instance("model", model, Model, get_model)
    gpu, lpu = instance("gpu", gpu, Chip, get_chip), instance("lpu", lpu, Chip, get_chip)
    for name, ch in (("gpu", gpu), ("lpu", lpu)):
        if ch.memory_bytes is None or ch.memory_bw_bytes_per_s is None:
            raise ValueError(f"{name} {ch.name} publishes no memory capacity or bandwidth")
    G = at_most("n_gpus", whole("n_gpus", n_gpus), MAX_CHIPS, "accelbook.inference.estimate.MAX_CHIPS")
    P = at_most("n_lpus", whole("n_lpus", n_lpus), MAX_CHIPS, "accelbook.inference.estimate.MAX_CHIPS")
    B = at_most("batch_size", whole("batch_size", batch_size), MAX_BATCH, "accelbook.inference.estimate.MAX_BATCH")
    m = whole("microbatches", microbatches)
    c = at_most("context_len", whole("context_len", context_len), MAX_TOKENS, "accelbook.inference.estimate.MAX_TOKENS")
    one_of("precision", precision, WEIGHT_PRECISIONS)
    if m > B:
        raise ValueError(f"microbatches ({m}) cannot exceed the batch ({B})")
    real("link_bytes_per_s", link_bytes_per_s, 1.0, allow_inf=True)
    real("link_latency_s", link_latency_s, 0.0, 1.0)
    bpe = bytes_per_element(precision)
    L, d = model.n_layers, model.d_model
    attn_w = model.attention_params() * bpe                       # per layer
    ffn_w = (model.params - model.embedding_params - model.lm_head_params) * bpe / L - attn_w
    # the FFN weights one token multiplies (top-k routed and shared experts, router), per layer on average
    attn_mm = sum(i * o for i, o in model.attention_matrices().values())
    ffn_active = (model.matmul_params_active - model.vocab_size * d) / L - attn_mm
    kvb = model.kv_bytes_per_token_at(c, "fp8" if bpe <= 1 else "bf16") / L
    b = B / m
    g_bw = gpu.memory_bw_bytes_per_s * MEM_EFFICIENCY
    t_attn = (attn_w / G + b * c * kvb / G) / g_bw
    l_bw = lpu.memory_bw_bytes_per_s * MEM_EFFICIENCY
    per_layer = max(1.0, P / L)      # LPUs holding one layer's FFN (a layer's weights stay on its chips)
    used = peak_precision(lpu, precision)        # Groq LPU v1 at fp8: its fp16 peak (no fp8 units)
    eta, _ = gemm_efficiency(lpu, used if used in WEIGHT_PRECISIONS else precision)
    t_ffn = max(ffn_w / per_layer / l_bw,
                b * 2 * ffn_active / per_layer / (eta * nearest_peak_flop_s(lpu, precision)))
    t_x = link_latency_s + b * d * 2 / (link_bytes_per_s * min(G, per_layer))
    stages = (t_attn, t_x, t_ffn, t_x)
    t_layer = sum(stages) + (m - 1) * max(stages)
    tpot = L * t_layer
    ffn_total = ffn_w * L
    fits_lpu = ffn_total / P <= lpu.memory_bytes
    kv_total = B * c * kvb * L
    fits_gpu = (attn_w * L + model.embedding_params * bpe * 2 + kv_total) / G <= usable_memory_bytes(gpu.memory_bytes)
    return output_fields("inference.heterogeneous_decode", {
        "tpot_s": tpot, "tokens_per_s": B / tpot, "tokens_per_s_per_user": 1 / tpot,
        "attention_s": L * t_attn, "transfer_s": 2 * L * t_x, "ffn_s": L * t_ffn,
        "bottleneck": ("attention (GPU)", "transfer", "FFN (LPU)", "transfer")[int(np.argmax(stages))],
        "fits": bool(fits_lpu and fits_gpu), "lpus_needed": math.ceil(ffn_total / lpu.memory_bytes),
        "lpu_peak_precision": used})


# -- disaggregated prefill and decode ---------------------------------------------------------------------
def disaggregation(model, chip, chips_per_instance: int, input_len: int, output_len: int, decode_batch: int,
                   precision: str = "fp8", link_bytes_per_s: float = 50e9) -> dict:
    """Size prefill and decode pools for a steady stream of requests: a prefill instance serves
    1/t_prefill requests/s, a decode instance B/(output_len·TPOT); the P:D ratio balances them. The
    KV cache of each prompt crosses from the prefill to the decode pool at ``link_bytes_per_s``
    (at least 1 B/s; ``inf``: an instant transfer)."""
    at_most("chips_per_instance", whole("chips_per_instance", chips_per_instance), MAX_CHIPS,
            "accelbook.inference.estimate.MAX_CHIPS")
    at_most("decode_batch", whole("decode_batch", decode_batch), MAX_BATCH, "accelbook.inference.estimate.MAX_BATCH")
    link = real("link_bytes_per_s", link_bytes_per_s, 1.0, allow_inf=True)
    e = estimate(model, chip, chips_per_instance, decode_batch, input_len, output_len, precision)
    m = model if isinstance(model, Model) else get_model(model)
    kv = m.kv_cache_bytes(input_len, e.config["kv_precision"])
    prefill_rps = 1 / e.ttft_s
    decode_rps = decode_batch / (output_len * e.tpot_s)
    return output_fields("inference.disaggregation", {
        "prefill_requests_per_s": prefill_rps, "decode_requests_per_s": decode_rps,
        "p_to_d": decode_rps / prefill_rps, "kv_transfer_s": kv / link, "kv_bytes": kv,
        "ttft_s": e.ttft_s + kv / link, "tpot_s": e.tpot_s, "fits": e.fits})
