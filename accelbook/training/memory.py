"""Memory per chip of the busiest pipeline stage: model states, activations, logits.

- **Model states** (ZeRO, Rajbhandari et al. 2020, with Megatron's mixed precision: the distributed
  optimizer guide's "float16 param, fp32 grads: 18" bytes): bf16 weights 2Ψ, fp32 main gradients 4Ψ,
  fp32 Adam states (master weights and two moments) 12Ψ, for the Ψ parameters a chip holds (the
  byte counts are the chip record's ``weight_bytes_per_param``, ``grad_bytes_per_param``,
  ``optimizer_bytes_per_param``, from
  ``data/training_framework.toml``); divided by the
  data-parallel group that holds the same parameters for ZeRO stage 3 (weights), ≥ 1 (optimizer
  states), and for the gradients only when they are reduce-scattered every microbatch (``gsync`` 1,
  ZeRO ≥ 2): with gradient accumulation synced once a step, the full buffer lives until the last
  microbatch, so ZeRO-2 synced once a step holds what ZeRO-1 holds.
- **Activations** per layer and token: the tensors the backward pass needs (Korthikanti et al. 2022,
  without dropout; K/V replicated when tp exceeds the K/V heads), times the microbatches in flight
  on the first stage (:func:`accelbook.training.pipeline.microbatches_in_flight`). Full
  recomputation keeps each layer's input and one layer's full set.
- **Logits**: fp32, ``4·T·V/tp`` bytes, on the last stage.

Whether it fits is decided against ``(1 - reserve)`` of HBM (:func:`accelbook.specs.chips.usable_memory_bytes`).
"""

from __future__ import annotations

from numba import njit


@njit(cache=True, inline="always")
def stage_params(mv, L, Lst, L_last, pp, tp, ep):
    """(non-expert, expert) parameters a chip of the busiest stage holds before ZeRO: its layers'
    share ``/tp`` (experts ``/(tp·ep)``), with the embedding on the first stage and the LM head
    and final norm on the last (both on the one stage without a pipeline)."""
    p_ne_first = Lst * mv.layer_params_non_expert / tp + mv.embedding_params / tp
    p_ne_last = L_last * mv.layer_params_non_expert / tp + mv.head_params / tp
    if pp == 1:
        p_ne_first = L * mv.layer_params_non_expert / tp + (mv.embedding_params + mv.head_params) / tp
        p_ne_last = p_ne_first
    return max(p_ne_first, p_ne_last), Lst * mv.layer_params_expert / (tp * ep)


@njit(cache=True, inline="always")
def optimizer_params(p_ne, p_e, g_ne, g_e, zero):
    """Parameters whose Adam states a chip keeps: all it holds, or ``1/g`` of them from ZeRO-1 on."""
    return p_ne / (g_ne if zero >= 1 else 1.0) + p_e / (g_e if zero >= 1 else 1.0)


@njit(cache=True, inline="always")
def model_state_bytes(c, p_ne, p_e, g_ne, g_e, zero, gsync, p_opt):
    """(weights, gradients, optimizer states) in bytes, Megatron's 2 + 4 + 12 per parameter from the
    chip record ``c``: ``2Ψ/g`` (ZeRO-3), ``4Ψ/g`` (ZeRO ≥ 2 with gradients reduce-scattered every
    microbatch, ``gsync`` 1; else the full ``4Ψ``), ``12·p_opt``. Worked number: Llama 3.1 8B
    (8.03e9 parameters) on one chip, ZeRO-0: 16.1 + 32.1 + 96.4 = 144.5 GB, 18 bytes a parameter."""
    w_div_ne = g_ne if zero == 3 else 1.0
    w_div_e = g_e if zero == 3 else 1.0
    mem_w = c.weight_bytes_per_param * (p_ne / w_div_ne + p_e / w_div_e)
    shard = zero >= 2 and gsync == 1
    mem_g = c.grad_bytes_per_param * (p_ne / (g_ne if shard else 1.0) + p_e / (g_e if shard else 1.0))
    return mem_w, mem_g, c.optimizer_bytes_per_param * p_opt


@njit(cache=True, inline="always")
def optimizer_step_bytes(c):
    """HBM bytes the Adam step moves per parameter it updates: read and write the fp32 master weight
    and both moments (``2·optimizer_bytes_per_param`` = 24), read the fp32 main gradient
    (``grad_bytes_per_param`` = 4) and
    write the bf16 weight (``weight_bytes_per_param`` = 2): 30."""
    return 2.0 * c.optimizer_bytes_per_param + c.grad_bytes_per_param + c.weight_bytes_per_param


@njit(cache=True, inline="always")
def activation_bytes_per_token(mv, s, tp, sp, kv_loc, rec, flash):
    """Bytes one layer keeps per token for the backward pass (bf16): the residual inputs of the 2 norms
    (``2·2d/sp``); the norms' outputs (GEMM inputs, ``2·2d/sp``) and the FFN activation output unless
    "selective" (``rec`` 1) recomputes them; q, k, v (``2·(h/tp + 2·kv_loc)·d_head``) and the attention
    output (``2·d_v/tp``); per unit of FFN width ``w = 2·(n_mats - 1) + 2·keep`` bytes (the up-projection
    outputs, and the activation output when kept): ``(1-f)·w·d_ff/tp`` dense, and on the MoE share ``f``
    the ``top_k`` routed copies of the token (``2d`` each) with their experts' ``w·d_ff_expert/tp`` and the
    shared experts' ``n_shared·w·d_ff_expert/tp``; and, unfused without recomputation, the softmax output
    (``2·(h/tp)·s``)."""
    d = mv.d_model
    f = mv.moe_layer_share
    keep = 0.0 if rec == 1 else 1.0
    store_ffn = (mv.n_ffn_matrices - 1.0) * 2.0 + keep * 2.0
    a_tok = 2.0 * 2.0 * d / sp + keep * 2.0 * 2.0 * d / sp + 2.0 * (mv.n_heads / tp + 2.0 * kv_loc) * mv.d_head \
        + 2.0 * mv.d_v / tp + (1.0 - f) * store_ffn * mv.d_ff / tp \
        + f * (mv.top_k * (2.0 * d + store_ffn * mv.d_ff_expert / tp)
               + mv.n_shared_experts * store_ffn * mv.d_ff_expert / tp)
    if not flash and rec == 0:   # softmax output, bf16 (no dropout: Korthikanti's 5as² counts 3 more for it)
        a_tok += 2.0 * mv.n_heads * s / tp
    return a_tok


@njit(cache=True, inline="always")
def activation_bytes(mv, T, Lst, sp, a_tok, in_flight, rec):
    """Activation bytes on the first stage: ``T·L_st·a_tok·in_flight``; under full recomputation
    (``rec`` 2) each layer's input ``2d/sp`` per token in flight plus one layer's full set."""
    if rec == 2:
        return T * Lst * (2.0 * mv.d_model / sp) * in_flight + T * a_tok
    return T * Lst * a_tok * in_flight


@njit(cache=True, inline="always")
def logits_bytes(mv, T, tp):
    """fp32 logits of a microbatch on the last stage: ``4·T·V/tp`` bytes."""
    return 4.0 * T * mv.vocab_size / tp


@njit(cache=True, inline="always")
def memory_per_chip(mem_w, mem_g, mem_o, mem_a, mem_l, in_flight, pp):
    """Bytes on the busiest chip: everything on one stage; with a pipeline the larger of the first
    stage (all activations in flight) and the last (the logits, and one microbatch's activations
    per ``in_flight``)."""
    if pp > 1:   # logits live on the last stage, which holds fewer activations in flight
        last = mem_w + mem_g + mem_o + mem_l + mem_a / max(1.0, in_flight)
        first = mem_w + mem_g + mem_o + mem_a
        return max(first, last)
    return mem_w + mem_g + mem_o + mem_a + mem_l
