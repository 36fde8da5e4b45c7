"""Compute time of one transformer layer for one microbatch on one chip, and of the LM head.

All ``@njit`` on the model record ``mv`` and chip record ``c`` (:mod:`.records`), for ``T = mb·s/cp``
tokens of a microbatch on one chip:

- a GEMM ``[M×K]·[K×N]`` takes ``max(2MNK / (P·η_meas·η_shape·η_K), bytes / B_hbm)``: ``η_meas`` the
  measured large-GEMM fraction of peak, ``η_shape`` the tile/wave/split-K (GPU, tiles of 16 to 128 rows
  by 128×64) or MXU fold (TPU) efficiency of the shape (:mod:`accelbook.costs.gemm`, which inference uses too),
  ``η_K`` a GPU tile's fixed fill and epilogue against the length of its K loop, relative to the K the chip's
  efficiency was measured at (:func:`accelbook.costs.gemm.gemm_k_efficiency`, ``data/gemm_k_overhead.toml``:
  DeepGEMM's H800 table; training only, 1 on TPUs);
  the routed experts' GEMMs are one grouped GEMM, each group at ``η_meas·ρ_group`` (``ρ_group`` the share of
  the dense GEMM grouped kernels are measured to reach, ``c.grouped_gemm_fraction``:
  :func:`accelbook.specs.grouped_gemm.grouped_gemm_fraction`, DeepGEMM on H800, torchao on B200), without
  ``η_K``: ``ρ_group`` was measured at the experts' own K, so it holds their K loop's loss already;
- attention (FlashAttention) does ``2·T·s·(d_qk + d_v)/tp · ½ · attention_share`` causal FLOPs forward
  (``attention_share``: a window's share) at the
  measured attention efficiency; unfused attention runs its score GEMMs at GEMM efficiency and
  writes, reads and writes back the scores in HBM;
- norms, residuals, RoPE, activations and FP8 casts stream their bytes through HBM
  (:mod:`accelbook.costs.elementwise`) at the bandwidth such kernels are measured to reach, a fraction of the
  STREAM-like one (``c.elem_bw_bytes_per_s``: H100 RMSNorm kernels, ``data/elementwise_bandwidth.toml``);
- backward = 2× forward for GEMMs and elementwise work, 2.5× for attention (FlashAttention-2);
- recomputation: "full" re-runs the layer's forward; "selective" the norms and the FFN activation
  (and the attention scores when attention is unfused).
"""

from __future__ import annotations

from numba import njit

from accelbook.costs.elementwise import elementwise_bytes, routed_ffn_width
from accelbook.costs.gemm import gemm_k_efficiency, gemm_shape_efficiency


@njit(cache=True, inline="always")
def gemm_time_at(M, N, K, c, eta):
    """Forward time (s) of one GEMM at measured fraction ``eta``:
    ``max(2MNK / (P·eta·η_shape), bpe·(MK + KN + MN) / B_hbm)``; 0 when a dimension is empty."""
    if M <= 0 or N <= 0 or K <= 0:
        return 0.0
    eta_shape = gemm_shape_efficiency(M, N, K, c.is_tpu > 0, c.n_sms, c.mxu_side, c.n_mxu)
    t_flop = 2.0 * M * N * K / (c.peak_flop_s * eta * eta_shape)
    t_mem = c.bytes_per_element * (M * K + K * N + M * N) / c.hbm_bw_bytes_per_s
    return max(t_flop, t_mem)


@njit(cache=True, inline="always")
def gemm_time(M, N, K, c):
    """Forward time (s) of one dense GEMM: :func:`gemm_time_at` at ``η_meas·η_K``,
    ``max(2MNK / (P·η_meas·η_shape·η_K), bpe·(MK + KN + MN) / B_hbm)``, with
    ``η_K = gemm_k_efficiency(K, c.gemm_k0, c.gemm_k_ref)``: Llama 70B's out-projection at TP 8 on H100 in bf16
    (``K = 1024``) runs at 0.819 of the large-K rate."""
    return gemm_time_at(M, N, K, c, c.eta_gemm * gemm_k_efficiency(K, c.gemm_k0, c.gemm_k_ref))


@njit(cache=True, inline="always")
def grouped_gemm_time(M, N, K, c):
    """Forward time (s) of one group (expert) of a grouped GEMM, ``M`` its tokens: :func:`gemm_time_at` at
    ``η_meas·ρ_group`` (``c.eta_gemm·c.grouped_gemm_fraction``). H800 FP8, 8 experts of 4,096 tokens at
    N 4,096, K 7,168: ``2·4096·4096·7168 / (1979e12·0.709·0.913·0.970)`` = 193.8 µs each (η_shape: 1,024 tiles
    in 8 waves of 132 SMs)."""
    return gemm_time_at(M, N, K, c, c.eta_gemm * c.grouped_gemm_fraction)


@njit(cache=True, inline="always")
def layer_gemm_time(mv, c, T, tp, ep):
    """Forward GEMM time (s) of one layer for ``T`` tokens: (all GEMMs, the routed experts' share).
    Attention in- and out-projections, the dense FFN on the share ``1-f`` of layers, and on the MoE
    share ``f`` the local experts (each gets ``T·top_k·ep/E`` tokens on average; one grouped GEMM,
    :func:`grouped_gemm_time`), the shared experts and the router (dense GEMMs); the second value is the local
    routed experts' time alone, ``f·e_loc·t_expert``."""
    d = mv.d_model
    f = mv.moe_layer_share
    nm1 = mv.n_ffn_matrices - 1.0
    t_g = gemm_time(T, mv.attn_in_params / d / tp, d, c) + gemm_time(T, d, mv.d_v / tp, c)
    if f < 1.0:
        t_g += (1.0 - f) * (gemm_time(T, nm1 * mv.d_ff / tp, d, c) + gemm_time(T, d, mv.d_ff / tp, c))
    t_routed = 0.0
    if f > 0.0:
        e_loc = mv.n_experts / ep
        me = T * mv.top_k * ep / mv.n_experts
        t_moe = e_loc * (grouped_gemm_time(me, nm1 * mv.d_ff_expert / tp, d, c)
                         + grouped_gemm_time(me, d, mv.d_ff_expert / tp, c))
        t_routed = f * t_moe
        if mv.n_shared_experts > 0:
            t_moe += gemm_time(T, nm1 * mv.d_ff_expert * mv.n_shared_experts / tp, d, c) \
                + gemm_time(T, d, mv.d_ff_expert * mv.n_shared_experts / tp, c)
        t_moe += gemm_time(T, mv.n_experts, d, c)
        t_g += f * t_moe
    return t_g, t_routed


@njit(cache=True, inline="always")
def moe_permute_time(mv, c, T):
    """Forward time (s) of sorting one layer's tokens to their experts and back (Megatron Core's
    permute and unpermute), HBM-bound, on the MoE share ``f`` of layers: permute reads ``T`` tokens
    of ``d`` (bf16) and writes their ``T·top_k`` copies; unpermute reads the copies and writes the
    weighted sums: ``f·2·2·T·d·(1 + top_k)`` bytes, at the bandwidth elementwise kernels reach
    (``c.elem_bw_bytes_per_s``: gathers and scatters of rows are such kernels; published permute timings on
    H200, TileOPs and vLLM at 4,096 tokens of 7,168, reach 2.40 and 1.92 TB/s, below even that, and are
    rows of the term table). The backward moves the same bytes."""
    f = mv.moe_layer_share
    if f <= 0.0 or mv.n_experts <= 1.0:
        return 0.0
    return f * 2.0 * 2.0 * T * mv.d_model * (1.0 + mv.top_k) / c.elem_bw_bytes_per_s


@njit(cache=True, inline="always")
def imbalance_time(mv, ep, t_routed):
    """Extra forward time (s) of the busiest expert-parallel rank: its routed experts get ``router_imbalance``
    times the mean load (the router's measured max/mean), so ``(router_imbalance - 1)·t_routed``; none without
    expert parallelism (one chip runs every expert's tokens, whatever their split)."""
    if ep <= 1.0:
        return 0.0
    return (mv.router_imbalance - 1.0) * t_routed


@njit(cache=True, inline="always")
def attention_time(mv, c, T, s, tp, cp, mb, flash):
    """Forward attention time (s) of one layer: (t_a, t_a_mem), the FLOPs' time and, unfused, the
    scores' HBM traffic (written, read, written back: ``3·2·mb·(h/tp)·(s/cp)·s`` bytes)."""
    att_flop = 2.0 * T * s * (mv.d_qk + mv.d_v) / tp * 0.5 * mv.attention_share   # a window's share (1.0 without)
    if flash:
        return att_flop / (c.peak_bf16_flop_s * c.eta_attention), 0.0
    t_a = att_flop / (c.peak_bf16_flop_s * c.eta_gemm_bf16)   # the score GEMMs run in bf16, as the LM head
    t_a_mem = 3.0 * 2.0 * mb * mv.n_heads / tp * (s / cp) * s / c.hbm_bw_bytes_per_s
    return t_a, t_a_mem


@njit(cache=True, inline="always")
def elementwise_time(mv, c, T, tp, sp, kv_loc, dff_eff):
    """Forward time (s) of the HBM-bound elementwise work of one layer
    (:func:`accelbook.costs.elementwise.elementwise_bytes`, FP8 casts when the GEMMs run in fp8) at the
    bandwidth elementwise kernels reach: the achievable HBM bandwidth × their measured fraction of it
    (``c.elem_bw_bytes_per_s``, :func:`accelbook.specs.measured.elementwise_stream_fraction`)."""
    return elementwise_bytes(T, mv.d_model, mv.n_heads, kv_loc, mv.d_head, mv.n_ffn_matrices, mv.d_v, dff_eff, tp, sp,
                             c.bytes_per_element == 1.0) / c.elem_bw_bytes_per_s


@njit(cache=True, inline="always")
def recompute_time(mv, c, T, tp, sp, dff_eff, rec, flash, t_fwd, t_a, t_a_mem):
    """Time (s) re-running forward work in the backward pass: ``rec`` 2 (full) the whole forward
    ``t_fwd``; 1 (selective) the norms and the FFN activation, plus unfused attention scores; 0 none.
    Re-running an operation moves its forward bytes again (:func:`accelbook.costs.elementwise.elementwise_bytes`):
    the two norms ``2·2·2·d/sp`` and the activation ``2·n_mats·d_ff_eff/tp`` per token (SwiGLU reads gate and
    up and writes one), at the elementwise kernels' bandwidth (``c.elem_bw_bytes_per_s``, as
    :func:`elementwise_time`)."""
    if rec == 2:
        return t_fwd
    if rec == 1:
        t_rec = T * (8.0 * mv.d_model / sp + mv.n_ffn_matrices * 2.0 * dff_eff / tp) / c.elem_bw_bytes_per_s
        if not flash:
            t_rec += t_a + t_a_mem
        return t_rec
    return 0.0


@njit(cache=True, inline="always")
def layer_pass_times(mv, c, T, s, tp, cp, ep, mb, sp, kv_loc, flash):
    """One layer, one microbatch, before recomputation: (t_g, t_a, t_a_mem, t_e, t_fwd, t_bwd, t_routed,
    dff_eff), forward GEMM, attention FLOP and score traffic, elementwise (s); their forward and backward
    sums (``t_bwd = 2·t_g + 2.5·t_a + 2·t_a_mem + 2·t_e``); the routed experts' share of t_g; the FFN
    width a token passes through (:func:`accelbook.costs.elementwise.routed_ffn_width`). :func:`recompute_time`
    adds the recomputation."""
    t_g, t_routed = layer_gemm_time(mv, c, T, tp, ep)
    t_a, t_a_mem = attention_time(mv, c, T, s, tp, cp, mb, flash)
    dff_eff = routed_ffn_width(mv.moe_layer_share, mv.d_ff, mv.top_k, mv.n_shared_experts, mv.d_ff_expert)
    t_e = elementwise_time(mv, c, T, tp, sp, kv_loc, dff_eff)
    t_fwd = t_g + t_a + t_a_mem + t_e
    t_bwd = 2.0 * t_g + 2.5 * t_a + 2.0 * t_a_mem + 2.0 * t_e
    return t_g, t_a, t_a_mem, t_e, t_fwd, t_bwd, t_routed, dff_eff


@njit(cache=True, inline="always")
def lm_head_time(mv, c, T, tp):
    """LM head and loss (last stage), forward and backward, for ``T`` tokens: three bf16 GEMMs of
    ``2·T·(V/tp)·d`` FLOPs (the output layer stays bf16 in FP8 recipes) and three passes over the
    fp32 logits (``4·T·V/tp`` bytes each)."""
    d = mv.d_model
    eta_shape = gemm_shape_efficiency(T, mv.vocab_size / tp, d, c.is_tpu > 0, c.n_sms, c.mxu_side, c.n_mxu)
    eta_shape *= gemm_k_efficiency(d, c.gemm_k0_bf16, c.gemm_k_ref_bf16)
    t_head_gemm = 2.0 * T * mv.vocab_size / tp * d / (c.peak_bf16_flop_s * c.eta_gemm_bf16 * eta_shape)
    return 3.0 * t_head_gemm + 3.0 * 4.0 * T * mv.vocab_size / tp / c.hbm_bw_bytes_per_s
