"""What a decode step reads and computes, and how a mixture-of-experts model is laid out on a group of chips.

Two layouts of a replica's ``tp`` chips (``estimate(..., attention=...)``):

- ``"tp"`` (default): tensor parallelism everywhere. Every weight matrix is split ``tp`` ways; a layer
  ends with two all-reduces. K/V heads are shared out, but MLA (DeepSeek-V3) caches one latent per
  token that every rank needs: the whole KV cache is copied on every chip (DeepSeek-V3 on 8 × H200 fp8 at
  4,096 + 1,024 tokens: at most 239 sequences).
- ``"dp"``: data-parallel attention with expert parallelism, as SGLang, TensorRT-LLM and DeepSeek serve
  DeepSeek-V3. The ``tp`` chips are ``ep = tp`` ranks. Each runs attention, the dense layers, the shared
  experts, the embedding and the LM head on its own ``B/ep`` sequences with its own copy of those weights
  (``W_rep``: what attention-DP costs, every rank holds and reads them, so less room for KV), and holds
  ``E/ep`` of every MoE layer's routed experts (``W_exp/ep``). A sequence's KV cache lives on its rank only.
  Memory per chip: ``(W_rep + W_exp/ep)·bytes/pp`` and ``⌈B/ep⌉·ctx·KV/pp``. No all-reduce.

  Per MoE layer a rank's ``T`` tokens go to their experts and come back: two all-to-alls (dispatch, combine)
  at their real size. A token is sent once to each rank that holds one of its ``k`` experts (DeepEP's
  layout), so it reaches ``ρ = ep·(1 - C(E - E/ep, k)/C(E, k))`` ranks, its own among them
  (:func:`ranks_per_token`; DeepSeek-V3 at ep 8: 5.30), in fp8 (``d`` bytes plus one fp32 scale per
  128, DeepEP's FP8 dispatch) when the weights are 8-bit or less, else bf16; it comes back in bf16. The
  busiest rank receives ``λ`` times the mean, ``λ`` the measured max/mean expert load of a router balanced
  without an auxiliary loss (``data/moe_balance.toml``, 1.04, Wang et al. 2024), which also scales its
  routed-expert matmuls. Each all-to-all is :func:`accelbook.costs.hierarchical.collective_time_s`
  (``ALL_TO_ALL``: ``S·(ep-1)/ep / B_link + (ep-1)·α``, ``S = λ·T·ρ·bytes``) inside one scale-up domain at
  the link rate after the fabric's efficiency (``data/fabrics.toml``: NVLink 4, 0.82; DeepEP's intranode
  dispatch and combine on H800, 153 and 158 GB/s of 200, 0.77 and 0.79, are the check) and hop latency.

  With in-flight batching the ranks meet at every MoE layer, so an iteration lasts as long as its slowest
  rank: a rank that prefills a prompt holds every other rank for it. A scheduler that sends requests to
  ranks round-robin (TensorRT-LLM's default; its blog 10, "ADP Balance Strategy", 2025: "contexts are
  processed sequentially across ranks", each such iteration taking ``time(ctx)``) prefills the replica's
  ``B`` prompts one rank at a time: :func:`accelbook.inference.terms.throughput` charges ``B`` prefills a
  replica, not ``⌈B/ep⌉``.
"""

from __future__ import annotations

import functools
import math

from accelbook.checks import instance, real, reals
from accelbook.chip.roofline import layer_ops
from accelbook.costs.experts import touched_expert_share
from accelbook.costs.hierarchical import ALL_TO_ALL, collective_time_s
from accelbook.specs.measured import expert_load_imbalance
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


def decode_attention_flops_per_context_token(model: Model) -> float:
    """FLOPs one decoding token spends per token of context, summed over the layers: the roofline's
    decode attention (:func:`accelbook.chip.roofline.layer_ops`), ``2·(d_qk + d_v)`` a layer, or
    ``2·H·(2·d_c + d_r)`` for absorbed MLA, which attends over the cached latent (DeepSeek-V3: 2·128·1,088
    = 278,528 a layer, 3.4× the 81,920 of attention with K and V rebuilt per head)."""
    # resolved before the cache: a name would key the cache and outlive a register(..., replace=True)
    return _decode_attention_flops(instance("model", model, Model, get_model))


@functools.lru_cache(maxsize=256)
def _decode_attention_flops(model: Model) -> float:
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


def ranks_per_token(model: Model, ep: int) -> float:
    """``ρ``: expected ranks a token's ``k`` distinct experts land on, ``E/ep`` experts a rank, its own rank
    counted: ``ep·(1 - C(E - E/ep, k)/C(E, k))``. DeepSeek-V3 at ep 8 (E 256, k 8): C(224, 8)/C(256, 8) =
    0.3378, so 8·0.6622 = 5.30 ranks, of which 7/8 (4.64) are others; 1 for ep 1 or a dense model; ``k``
    when there are at least as many ranks as experts (one expert a rank at most)."""
    if model.moe is None or ep <= 1:
        return 1.0
    E, k = model.moe.n_experts, model.moe.top_k
    if ep >= E:
        return float(k)
    return ep * (1.0 - math.comb(E - E // ep, k) / math.comb(E, k))


def dispatch_bytes_per_token(model: Model, precision: str) -> float:
    """Bytes of one token's dispatched activation: fp8 with one fp32 scale per 128 values (DeepEP's FP8
    dispatch) when the weights are 8-bit or less, else bf16. DeepSeek-V3 fp8: 7,168·(1 + 4/128) = 7,392."""
    d = model.d_model
    return d * (1.0 + 4.0 / 128.0) if precision in ("fp8", "fp4", "int8") else 2.0 * d


def expert_all_to_all_s(model: Model, tokens: float, ep: int, hop_s: float, link_bytes_per_s: float,
                        precision: str = "bf16") -> float:
    """Dispatch + combine of one MoE layer on the busiest rank, seconds (module docstring): two all-to-alls
    of ``S = λ·T·ρ·bytes`` (:func:`ranks_per_token`; ``λ`` the measured expert load imbalance; dispatch bytes
    :func:`dispatch_bytes_per_token`, combine bf16) over ``ep`` ranks in one domain of ``ep`` switched chips
    (:func:`accelbook.costs.hierarchical.collective_time_s`, ``ALL_TO_ALL`` at stride 1, ``link_bytes_per_s``
    the link after the fabric's efficiency). 0 for ep 1 or a dense model.
    DeepSeek-V3 fp8, 128 tokens, 8 × H200 (450·0.82 = 369 GB/s, 1 µs): S = 1.04·128·5.30·7,392 = 5.22 MB and
    1.04·128·5.30·14,336 = 10.12 MB; (5.22 + 10.12)e6·7/8/369e9 + 2·7·1 µs = 36.4 + 14 = 50.4 µs."""
    if model.moe is None or ep <= 1 or tokens <= 0:
        return 0.0
    lam = expert_load_imbalance("aux_loss_free")[0]
    per_token = lam * ranks_per_token(model, ep)
    t = 0.0
    for b in (dispatch_bytes_per_token(model, precision), 2.0 * model.d_model):
        t += collective_time_s(ALL_TO_ALL, tokens * per_token * b, float(ep), 1.0, float(ep),
                               float(link_bytes_per_s), 0.0, float(hop_s), float(link_bytes_per_s), float(hop_s))
    return t


def dp_decode_terms(model: Model, b: float, q: int, ep: int, pp: int, c: float, bpe: float,
                    kv_tok_chip: float) -> dict:
    """Per-rank work of one DP-attention decode step of a stage: ``b`` sequences per stage over the ``ep``
    ranks, each processing ``q`` tokens at mean context ``c``. Returns the rank's weight bytes read
    (replicated weights for its ``b_r = max(b/ep, 1)`` sequences, plus its share of the experts the
    ``b·q`` tokens touch), its matmul FLOPs (the routed ones ``λ`` times the mean, module docstring), KV bytes and attention FLOPs, and its tokens."""
    br = max(b / ep, 1.0)
    w_exp, a_exp = routed_expert_params(model), routed_active_params(model)
    touched = touched_expert_share(model.moe.top_k, model.moe.n_experts, b * q)
    w_read = (weights_read_bytes(model, bpe, br * q) - w_exp * bpe) + w_exp * bpe * touched / ep
    lam = expert_load_imbalance("aux_loss_free")[0]       # the busiest rank's share of the routed tokens
    flops = br * q * 2 * (model.matmul_params_active - a_exp) + lam * b * q * 2 * a_exp / ep
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
