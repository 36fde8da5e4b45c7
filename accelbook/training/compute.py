"""Compute time of one transformer layer for one microbatch on one chip, and of the LM head.

All ``@njit`` on the model vector ``mv`` and chip vector ``c`` (:mod:`.slots`), for ``T = mb·s/cp``
tokens of a microbatch on one chip:

- a GEMM ``[M×K]·[K×N]`` takes ``max(2MNK / (P·η_meas·η_shape), bytes / B_hbm)``: ``η_meas`` the
  measured large-GEMM fraction of peak, ``η_shape`` the tile/wave (GPU, 128×128×64 tiles) or MXU
  fold (TPU) efficiency of the shape (:mod:`accelbook.chip.tiling`);
- attention (FlashAttention) does ``2·T·s·(d_qk + d_v)/tp · ½ · M_ATT`` causal FLOPs forward (M_ATT: a window's share) at the
  measured attention efficiency; unfused attention runs its score GEMMs at GEMM efficiency and
  writes, reads and writes back the scores in HBM;
- norms, residuals, RoPE, activations and FP8 casts stream their bytes through HBM;
- backward = 2× forward for GEMMs and elementwise work, 2.5× for attention (FlashAttention-2);
- recomputation: "full" re-runs the layer's forward; "selective" the norms and the FFN activation
  (and the attention scores when attention is unfused).
"""

from __future__ import annotations

import math

from numba import njit

from accelbook.chip.tiling import GPU_TILE, gpu_tile_factors, tpu_fold_efficiency

from .slots import (
    C_BPE,
    C_ETA,
    C_ETA_ATT,
    C_ETA_BF16,
    C_HBMBW,
    C_MXU,
    C_NMXU,
    C_PEAK,
    C_PEAK_ATT,
    C_SMS,
    C_TPU,
    M_ATT,
    M_D,
    M_DFF,
    M_DFFE,
    M_DH,
    M_DQK,
    M_DV,
    M_E,
    M_FMOE,
    M_H,
    M_IMB,
    M_KV,
    M_NM,
    M_NSH,
    M_TOPK,
    M_V,
    M_WIN,
)

TILE_M, TILE_N, TILE_K = GPU_TILE


@njit(cache=True, inline="always")
def gemm_shape_efficiency(M, N, K, c):
    """Tile/wave (GPU) or MXU fold (TPU) efficiency of one ``[M×K]·[K×N]`` GEMM on chip ``c``.

    M, N and K are rounded up to whole numbers (at least 1) first; then
    :func:`accelbook.chip.tiling.gpu_tile_factors` (η_tile·η_k·η_wave over the chip's SMs) or
    :func:`accelbook.chip.tiling.tpu_fold_efficiency`, the formulas of ``tiling.gpu_gemm`` and ``tpu_gemm``.
    """
    M = max(1.0, math.ceil(M))
    N = max(1.0, math.ceil(N))
    K = max(1.0, math.ceil(K))
    if c[C_TPU] > 0:
        return tpu_fold_efficiency(M, N, K, c[C_MXU], c[C_NMXU])
    tiles, waves, eta_tile, eta_k, _ = gpu_tile_factors(M, N, K, c[C_SMS], TILE_M, TILE_N, TILE_K)
    # = η_tile·η_k·η_wave, multiplied in this order so that every number (and the search's ranking
    # of layouts whose step times tie to the last bit) stays what it was before the formula moved
    return eta_tile * eta_k * tiles / (waves * c[C_SMS])


@njit(cache=True, inline="always")
def gemm_time(M, N, K, c):
    """Forward time (s) of one GEMM: ``max(2MNK / (P·η_meas·η_shape), bpe·(MK + KN + MN) / B_hbm)``;
    0 when a dimension is empty."""
    if M <= 0 or N <= 0 or K <= 0:
        return 0.0
    t_flop = 2.0 * M * N * K / (c[C_PEAK] * c[C_ETA] * gemm_shape_efficiency(M, N, K, c))
    t_mem = c[C_BPE] * (M * K + K * N + M * N) / c[C_HBMBW]
    return max(t_flop, t_mem)


@njit(cache=True, inline="always")
def kv_heads_per_chip(mv, tp):
    """K/V heads a chip holds: ``max(kv/tp, 1)`` (replicated when tp exceeds the K/V heads)."""
    return max(mv[M_KV] / tp, 1.0)


@njit(cache=True, inline="always")
def routed_ffn_width(mv):
    """FFN width a token passes through on average: ``(1-f)·d_ff + f·(top_k + shared)·d_ff_expert``."""
    f = mv[M_FMOE]
    return (1.0 - f) * mv[M_DFF] + f * (mv[M_TOPK] + mv[M_NSH]) * mv[M_DFFE]


@njit(cache=True, inline="always")
def layer_gemm_time(mv, c, T, tp, ep):
    """Forward GEMM time (s) of one layer for ``T`` tokens: (all GEMMs, the routed experts' share).
    Attention in- and out-projections, the dense FFN on the share ``1-f`` of layers, and on the MoE
    share ``f`` the local experts (each gets ``T·top_k·ep/E`` tokens on average), the shared experts
    and the router; the second value is the local routed experts' time alone, ``f·e_loc·t_expert``."""
    d = mv[M_D]
    f = mv[M_FMOE]
    nm1 = mv[M_NM] - 1.0
    t_g = gemm_time(T, mv[M_WIN] / d / tp, d, c) + gemm_time(T, d, mv[M_DV] / tp, c)
    if f < 1.0:
        t_g += (1.0 - f) * (gemm_time(T, nm1 * mv[M_DFF] / tp, d, c) + gemm_time(T, d, mv[M_DFF] / tp, c))
    t_routed = 0.0
    if f > 0.0:
        e_loc = mv[M_E] / ep
        me = T * mv[M_TOPK] * ep / mv[M_E]
        t_moe = e_loc * (gemm_time(me, nm1 * mv[M_DFFE] / tp, d, c) + gemm_time(me, d, mv[M_DFFE] / tp, c))
        t_routed = f * t_moe
        if mv[M_NSH] > 0:
            t_moe += gemm_time(T, nm1 * mv[M_DFFE] * mv[M_NSH] / tp, d, c) \
                + gemm_time(T, d, mv[M_DFFE] * mv[M_NSH] / tp, c)
        t_moe += gemm_time(T, mv[M_E], d, c)
        t_g += f * t_moe
    return t_g, t_routed


@njit(cache=True, inline="always")
def moe_permute_time(mv, c, T):
    """Forward time (s) of sorting one layer's tokens to their experts and back (Megatron Core's
    permute and unpermute), HBM-bound, on the MoE share ``f`` of layers: permute reads ``T`` tokens
    of ``d`` (bf16) and writes their ``T·top_k`` copies; unpermute reads the copies and writes the
    weighted sums: ``f·2·2·T·d·(1 + top_k)`` bytes. The backward moves the same bytes."""
    f = mv[M_FMOE]
    if f <= 0.0 or mv[M_E] <= 1.0:
        return 0.0
    return f * 2.0 * 2.0 * T * mv[M_D] * (1.0 + mv[M_TOPK]) / c[C_HBMBW]


@njit(cache=True, inline="always")
def imbalance_time(mv, ep, t_routed):
    """Extra forward time (s) of the busiest expert-parallel rank: its routed experts get ``M_IMB``
    times the mean load (the router's measured max/mean), so ``(M_IMB - 1)·t_routed``; none without
    expert parallelism (one chip runs every expert's tokens, whatever their split)."""
    if ep <= 1.0:
        return 0.0
    return (mv[M_IMB] - 1.0) * t_routed


@njit(cache=True, inline="always")
def attention_time(mv, c, T, s, tp, cp, mb, flash):
    """Forward attention time (s) of one layer: (t_a, t_a_mem), the FLOPs' time and, unfused, the
    scores' HBM traffic (written, read, written back: ``3·2·mb·(h/tp)·(s/cp)·s`` bytes)."""
    att_flop = 2.0 * T * s * (mv[M_DQK] + mv[M_DV]) / tp * 0.5 * mv[M_ATT]   # M_ATT: a window's share (1.0 without)
    if flash:
        return att_flop / (c[C_PEAK_ATT] * c[C_ETA_ATT]), 0.0
    t_a = att_flop / (c[C_PEAK_ATT] * c[C_ETA])
    t_a_mem = 3.0 * 2.0 * mb * mv[M_H] / tp * (s / cp) * s / c[C_HBMBW]
    return t_a, t_a_mem


@njit(cache=True, inline="always")
def elementwise_bytes(mv, T, tp, sp, kv_loc, dff_eff, fp8):
    """HBM bytes of one layer's elementwise work for ``T`` tokens (bf16 activations), one chip's share:
    two norms (read and write ``d``: ``2·2·d``) and two residual adds (read two, write one: ``2·3·d``),
    split by sequence parallelism ``sp``; RoPE on q and k (``2·2·(h/tp + kv_loc)·d_head``); the FFN
    activation (``2·n_mats·d_ff/tp``: SwiGLU reads gate and up, writes one); and, when the GEMMs run in
    FP8, the casts of every GEMM input (read bf16, write fp8: ``3·(d + d_v/tp + d + d_ff/tp)``). The
    training kernel and the inference model (decode, prefill, serving steps) both charge these bytes."""
    d = mv[M_D]
    elem = 2.0 * (2.0 * 2.0 * d + 2.0 * 3.0 * d) / sp + 2.0 * 2.0 * (mv[M_H] / tp + kv_loc) * mv[M_DH] \
        + (mv[M_NM] * 2.0) * dff_eff / tp
    if fp8:   # FP8 casts of every GEMM input (read bf16, write fp8)
        elem += 3.0 * (d + mv[M_DV] / tp + d + dff_eff / tp)
    return T * elem


@njit(cache=True, inline="always")
def elementwise_time(mv, c, T, tp, sp, kv_loc, dff_eff):
    """Forward time (s) of the HBM-bound elementwise work of one layer (:func:`elementwise_bytes`) at
    the chip's achievable HBM bandwidth."""
    return elementwise_bytes(mv, T, tp, sp, kv_loc, dff_eff, c[C_BPE] == 1.0) / c[C_HBMBW]


@njit(cache=True, inline="always")
def recompute_time(mv, c, T, tp, sp, dff_eff, rec, flash, t_fwd, t_a, t_a_mem):
    """Time (s) re-running forward work in the backward pass: ``rec`` 2 (full) the whole forward
    ``t_fwd``; 1 (selective) the norms and the FFN activation, plus unfused attention scores; 0 none."""
    if rec == 2:
        return t_fwd
    if rec == 1:
        t_rec = T * (8.0 * mv[M_D] / sp + (mv[M_NM] + 1.0) * 2.0 * dff_eff / tp) / c[C_HBMBW]
        if not flash:
            t_rec += t_a + t_a_mem
        return t_rec
    return 0.0


@njit(cache=True, inline="always")
def layer_pass_times(mv, c, T, s, tp, cp, ep, mb, sp, kv_loc, flash):
    """One layer, one microbatch, before recomputation: (t_g, t_a, t_a_mem, t_e, t_fwd, t_bwd, t_routed,
    dff_eff), forward GEMM, attention FLOP and score traffic, elementwise (s); their forward and backward
    sums (``t_bwd = 2·t_g + 2.5·t_a + 2·t_a_mem + 2·t_e``); the routed experts' share of t_g; the FFN
    width a token passes through (:func:`routed_ffn_width`). :func:`recompute_time` adds the recomputation."""
    t_g, t_routed = layer_gemm_time(mv, c, T, tp, ep)
    t_a, t_a_mem = attention_time(mv, c, T, s, tp, cp, mb, flash)
    dff_eff = routed_ffn_width(mv)
    t_e = elementwise_time(mv, c, T, tp, sp, kv_loc, dff_eff)
    t_fwd = t_g + t_a + t_a_mem + t_e
    t_bwd = 2.0 * t_g + 2.5 * t_a + 2.0 * t_a_mem + 2.0 * t_e
    return t_g, t_a, t_a_mem, t_e, t_fwd, t_bwd, t_routed, dff_eff


@njit(cache=True, inline="always")
def lm_head_time(mv, c, T, tp):
    """LM head and loss (last stage), forward and backward, for ``T`` tokens: three bf16 GEMMs of
    ``2·T·(V/tp)·d`` FLOPs (the output layer stays bf16 in FP8 recipes) and three passes over the
    fp32 logits (``4·T·V/tp`` bytes each)."""
    d = mv[M_D]
    t_head_gemm = 2.0 * T * mv[M_V] / tp * d / (c[C_PEAK_ATT] * c[C_ETA_BF16] * gemm_shape_efficiency(T, mv[M_V] / tp, d, c))
    return 3.0 * t_head_gemm + 3.0 * 4.0 * T * mv[M_V] / tp / c[C_HBMBW]
