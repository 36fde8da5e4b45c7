"""What a decode step reads and computes, and how a mixture-of-experts model is laid out on a group of chips.

Two layouts of a replica's ``tp`` chips (``estimate(..., attention=...)``):

- ``"tp"`` (default): tensor parallelism everywhere. Every weight matrix is split ``tp`` ways; a layer
  ends with two all-reduces. K/V heads are shared out, but MLA (DeepSeek-V3) caches one latent per
  token that every rank needs: the whole KV cache is copied on every chip (DeepSeek-V3 on 8 × H200 fp8 at
  4,096 + 1,024 tokens: at most 239 sequences).
- ``"dp"``: data-parallel attention with expert parallelism, as SGLang and DeepSeek serve DeepSeek-V3.
  The ``tp`` chips are ``ep = tp`` ranks. Each runs attention, the dense layers, the shared experts,
  the embedding and the LM head on its own ``B/ep`` sequences with its own copy of those weights
  (``W_rep``), and holds ``E/ep`` of every MoE layer's routed experts (``W_exp/ep``). A sequence's KV
  cache lives on its rank only. Per MoE layer the routed tokens go to their experts and come back:
  two all-to-alls (dispatch, combine) of ``T·top_k·d`` bf16 activations over the ``ep`` ranks, timed
  as the training model times its own, :func:`accelbook.costs.hierarchical.collective_time_s` (``ALL_TO_ALL``:
  ``S·(ep-1)/ep / B_link + (ep-1)·α``) inside one scale-up domain at the chip's link rate and hop
  latency. No all-reduce. Memory per chip: ``(W_rep + W_exp/ep)·bytes/pp`` and ``⌈B/ep⌉·ctx·KV/pp``.
"""

from __future__ import annotations

import functools
import math

from accelbook.checks import instance, real, reals
from accelbook.chip.roofline import layer_ops
from accelbook.costs.experts import touched_expert_share
from accelbook.costs.hierarchical import ALL_TO_ALL, collective_time_s
from accelbook.specs.models import Model, get_model

ATTENTION_LAYOUTS = ("tp", "dp")


def weights_read_bytes(model: Model, bpe: float, tokens: float) -> float:
    """Bytes of weights one forward pass over ``tokens`` tokens reads: every matrix once, but of an
    untied embedding table only the tokens' rows (``tokens·d``, and a learned position's); a tied table
    is read whole as the LM head. Llama 3.1 8B: 7.50e9 of its 8.03e9 parameters at one token (the table
    is 6.5 %). ``tokens``: a number, or an array of them (one figure each)."""
    model = instance("model", model, Model, get_model)
    real("bpe", bpe, 0.0, 8.0, lo_open=True)
    reals("tokens", tokens, 0.0, 2.0**40)
    tokens_table = model.vocab_size if model.tied_embeddings else tokens     # rows of the token table read
    positions = tokens if model.position == "learned" else 0
    return (model.params - model.embedding_params + (tokens_table + positions) * model.d_model) * bpe


@functools.lru_cache(maxsize=256)
def decode_attention_flops_per_context_token(model: Model) -> float:
    """FLOPs one decoding token spends per token of context, summed over the layers: the roofline's
    decode attention (:func:`accelbook.chip.roofline.layer_ops`), ``2·(d_qk + d_v)`` a layer, or
    ``2·H·(2·d_c + d_r)`` for absorbed MLA, which attends over the cached latent (DeepSeek-V3: 2·128·1,088
    = 278,528 a layer, 3.4× the 81,920 of attention with K and V rebuilt per head)."""
    model = instance("model", model, Model, get_model)
    att = next(op for op in layer_ops(model, "decode", 1, 1) if op.kind == "attention")
    return model.n_layers * att.flops


def routed_expert_params(model: Model) -> int:
    """``W_exp``: the routed experts' weights over all MoE layers, ``L_moe·E·ffn(d_ff_expert)``; 0 for a
    dense model. DeepSeek-V3: 58·256·3·7,168·2,048 = 653.7e9 of its 671e9 parameters."""
    if model.moe is None:
        return 0
    return model.n_moe_layers * model.moe.n_experts * model.ffn_matrices(model.moe.d_ff_expert)


def routed_active_params(model: Model) -> int:
    """Routed-expert weights one token multiplies with: ``L_moe·top_k·ffn(d_ff_expert)``."""
    if model.moe is None:
        return 0
    return model.n_moe_layers * model.moe.top_k * model.ffn_matrices(model.moe.d_ff_expert)


def dp_weights_per_chip(model: Model, bpe: float, ep: int, pp: int) -> float:
    """Weight bytes per chip with DP attention + EP: ``(W_rep + W_exp/ep)·bpe/pp`` with ``W_rep`` every
    weight but the routed experts. DeepSeek-V3 fp8, ep 8: (17.5e9 + 653.7e9/8) = 99.2 GB."""
    w_exp = routed_expert_params(model)
    return ((model.params - w_exp) + w_exp / ep) * bpe / pp


def expert_all_to_all_s(model: Model, tokens: float, ep: int, hop_s: float, link_bytes_per_s: float) -> float:
    """Dispatch + combine of one MoE layer on one rank, seconds: two all-to-alls in which a rank sends
    its ``tokens`` tokens' bf16 activations to their ``top_k`` experts (``S = tokens·top_k·d·2`` bytes),
    over ``ep`` ranks in one domain of ``ep`` switched chips
    (:func:`accelbook.costs.hierarchical.collective_time_s`, ``ALL_TO_ALL`` at stride 1, the link's rate and
    hop latency in the domain and, unused, on the network).
    0 for ep 1 or a dense model. DeepSeek-V3, 1 token, 8 × H200 (450 GB/s, 1 µs): 2·(114,688·7/8/450e9 + 7·1e-6) = 14.4 µs."""
    if model.moe is None or ep <= 1 or tokens <= 0:
        return 0.0
    S = tokens * model.moe.top_k * model.d_model * 2.0
    return 2.0 * collective_time_s(ALL_TO_ALL, S, float(ep), 1.0, float(ep), float(link_bytes_per_s), 0.0,
                                   float(hop_s), float(link_bytes_per_s), float(hop_s))


def dp_decode_terms(model: Model, b: float, q: int, ep: int, pp: int, c: float, bpe: float,
                    kv_tok_chip: float) -> dict:
    """Per-rank work of one DP-attention decode step of a stage: ``b`` sequences per stage over the ``ep``
    ranks, each processing ``q`` tokens at mean context ``c``. Returns the rank's weight bytes read
    (replicated weights for its ``b_r = max(b/ep, 1)`` sequences, plus its share of the experts the
    ``b·q`` tokens touch), its matmul FLOPs, KV bytes and attention FLOPs, and its tokens."""
    br = max(b / ep, 1.0)
    w_exp, a_exp = routed_expert_params(model), routed_active_params(model)
    touched = touched_expert_share(model.moe.top_k, model.moe.n_experts, b * q)
    w_read = (weights_read_bytes(model, bpe, br * q) - w_exp * bpe) + w_exp * bpe * touched / ep
    flops = br * q * 2 * (model.matmul_params_active - a_exp) + b * q * 2 * a_exp / ep
    return dict(w_read=w_read / pp, gemm_flops=flops / pp, kv_bytes=br * c * kv_tok_chip,
                attn_flops=br * q * c * decode_attention_flops_per_context_token(model) * model.attention_share(c) / pp,
                rank_tokens=br * q)


def check_attention_layout(model: Model, attention: str) -> None:
    """``attention`` is ``"tp"`` or ``"dp"``, and ``"dp"`` only for a mixture-of-experts model."""
    if attention not in ATTENTION_LAYOUTS:
        raise ValueError(f"attention must be one of {ATTENTION_LAYOUTS}, got {attention!r}")
    if attention == "dp" and model.moe is None:
        raise ValueError(f"attention='dp' (data-parallel attention + expert parallelism) needs a mixture-of-experts "
                         f"model; {model.name} is dense")


def ceil_share(B: int, ep: int) -> int:
    """Sequences on the busiest of ``ep`` ranks: ``⌈B/ep⌉``."""
    return math.ceil(B / ep)
