"""The HBM bytes of a layer's elementwise kernels, between its GEMMs, on one chip.

Norms, residual adds, RoPE, the FFN activation and (FP8 GEMMs) the casts of every GEMM input are
separate, bandwidth-bound kernels: each reads and writes its activations through HBM, so their time is
bytes over bandwidth and adds to the GEMMs'. The training kernel (forward, backward, recomputation) and
the inference model (decode, prefill, serving steps) both charge :func:`elementwise_bytes`; the widths it
takes on one of ``tp`` tensor-parallel chips come from :func:`kv_heads_per_chip` and
:func:`routed_ffn_width`. Activations are bf16 (2 bytes an element). Source: Megatron-LM's kernels
(Korthikanti et al. 2022 count the same activations for memory).
"""

from __future__ import annotations

from numba import njit


@njit(cache=True, inline="always")
def kv_heads_per_chip(kv_heads, tp):
    """K/V heads one of ``tp`` tensor-parallel chips holds: ``max(kv_heads/tp, 1)`` (replicated when
    ``tp`` exceeds the K/V heads). Llama 3.1 70B (8 K/V heads) on 16 chips: ``max(0.5, 1) = 1``."""
    return max(kv_heads / tp, 1.0)


@njit(cache=True, inline="always")
def routed_ffn_width(moe_share, d_ff, top_k, n_shared, d_ff_expert):
    """FFN width a token passes through on average, over the layers:
    ``(1 - moe_share)·d_ff + moe_share·(top_k + n_shared)·d_ff_expert``, with ``moe_share`` the share of
    MoE layers (0 for a dense model, whose width is ``d_ff``). Mixtral 8x7B (every layer MoE, top 2 of
    14,336): ``2·14,336 = 28,672``."""
    return (1.0 - moe_share) * d_ff + moe_share * (top_k + n_shared) * d_ff_expert


@njit(cache=True, inline="always")
def elementwise_bytes(T, d, n_heads, kv_loc, d_head, n_mats, d_v, dff_eff, tp, sp, fp8):
    """HBM bytes of one layer's elementwise work for ``T`` tokens on one chip (bf16 activations):

        elem = 2·(2·2·d + 2·3·d)/sp + 2·2·(n_heads/tp + kv_loc)·d_head + (n_mats·2)·dff_eff/tp
               [+ 3·(d + d_v/tp + d + dff_eff/tp) when fp8]
        bytes = T·elem

    two norms (read and write ``d``) and two residual adds (read two, write one), split by sequence
    parallelism ``sp``; RoPE on q and k (``n_heads/tp`` query heads, ``kv_loc`` K/V heads of ``d_head``:
    :func:`kv_heads_per_chip`); the FFN activation over ``dff_eff`` (:func:`routed_ffn_width`; SwiGLU,
    ``n_mats`` 3, reads gate and up and writes one, 6 bytes an element; GELU, 2, reads one and writes one);
    and, when the GEMMs take FP8 inputs (``fp8``), the casts of every GEMM input (read bf16, write fp8: 3
    bytes an element) of the QKV projection (``d``), the output projection (``d_v/tp``, the heads' width),
    the FFN up (``d``) and down (``dff_eff/tp``).

    Worked number: Llama 3.1 70B (d 8192, 64 heads, 8 K/V heads of 128, SwiGLU d_ff 28,672), one token,
    one chip, fp8: ``20·8192 + 4·72·128 + 6·28,672 + 3·(3·8192 + 28,672) = 532,480`` bytes a layer,
    42,598,400 over its 80 layers.
    """
    elem = 2.0 * (2.0 * 2.0 * d + 2.0 * 3.0 * d) / sp + 2.0 * 2.0 * (n_heads / tp + kv_loc) * d_head \
        + (n_mats * 2.0) * dff_eff / tp
    if fp8:   # FP8 casts of every GEMM input (read bf16, write fp8)
        elem += 3.0 * (d + d_v / tp + d + dff_eff / tp)
    return T * elem
