"""Distributed training: memory per chip, step time, MFU, scaling, and the search over parallel layouts.

One training step of a decoder-only transformer on ``n`` chips, split by tensor (``tp``), context
(``cp``), pipeline (``pp``, with ``vp`` interleaved chunks), data (``dp``) and expert (``ep``,
carved out of ``dp``) parallelism, Megatron-style rank order tp → cp → dp → pp (tp innermost).
Every term is a formula on published specs; nothing is fitted to the runs it is checked against.

**Compute** (per microbatch of ``mb`` sequences, one chip, ``T = mb·s/cp`` tokens):

- each GEMM takes ``max(2MNK / (P·η_meas·η_shape), bytes / B_hbm)``: ``η_meas`` is the measured
  large-GEMM fraction of peak (``data/matmul_efficiency.toml``), ``η_shape`` the tile/wave (GPU)
  or MXU padding/fold (TPU) efficiency of that shape (:mod:`accelbook.tiling`);
- attention (FlashAttention) does ``2·T·s·(d_qk + d_v)/tp · ½`` causal FLOPs forward at the
  measured attention efficiency; backward = 2.5× forward (FlashAttention-2 paper), GEMMs 2×;
- norms, residuals, RoPE, activations and FP8 casts stream their bytes through HBM;
- recomputation: "full" re-runs each layer's forward; "selective" re-runs the cheap, memory-heavy
  parts (the norms and the FFN activation; the attention scores too when attention is unfused),
  so it stores less than "none" for a few per cent of elementwise time.

**Communication**, each collective a ring in the two-level :class:`~accelbook.clusters.Cluster`
(inside the fast domain where the group fits, hierarchically where it spans domains):
tensor parallel with sequence parallelism, 4 all-gathers + 4 reduce-scatters of the microbatch's
activations per layer (exposed); context parallel, ring passes of K and V (hidden behind attention
where it is long enough); expert parallel, 4 all-to-alls per MoE layer (exposed); pipeline,
point-to-point sends per microbatch and chunk (exposed); data parallel, the gradient reduce-scatter
and parameter all-gather (hidden behind one microbatch's backward/forward; ZeRO-3 gathers weights
every microbatch, hidden behind that microbatch's compute).

**Step**: ``(m + (pp-1)/vp) · t_microbatch`` (1F1B, interleaved: Narayanan et al. 2021) + exposed
data-parallel time + the optimizer step (memory-bound Adam, 28 bytes per parameter held).

**Memory** per chip (busiest pipeline stage): bf16 weights 2Ψ, bf16 gradients 2Ψ, fp32 Adam
states 12Ψ (ZeRO, Rajbhandari et al. 2020), divided by the data-parallel group for ZeRO stages
3, ≥2, ≥1; activations per layer and token from the tensors the backward pass needs (Korthikanti
et al. 2022, without dropout; K/V replicated when tp exceeds the KV heads), times the microbatches in flight on the first stage
(``pp``, ×(1 + (pp-1)/(pp·vp)) interleaved); fp32 logits on the last stage. 10% of HBM is kept
free for the runtime, NCCL buffers and fragmentation (``memory_reserve``).

MFU counts the model's FLOPs (``Model.flops_per_token(s, training=True, causal=...)``) per second
over the chip's dense peak at the training precision; HFU adds recomputation.

The formulas live in one Numba kernel, :func:`_evaluate`; :func:`estimate` calls it for one
layout and :func:`search` enumerates and evaluates every layout in :func:`_search_kernel`.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from numba import njit, prange

from accelbook.specs.chips import Chip, get_chip
from accelbook.specs.clusters import Cluster, cluster_for, get_cluster
from accelbook.specs.efficiency import measured_efficiency
from accelbook.specs.models import Model, get_model

RECOMPUTE = ("none", "selective", "full")
PRECISIONS = ("bf16", "fp8")
HOURS = 3600.0

# -- kernel layout: indices into the model, chip and result vectors ----------------------------------------
(M_L, M_D, M_H, M_KV, M_DH, M_DFF, M_V, M_NM, M_E, M_TOPK, M_DFFE, M_NSH, M_FMOE, M_DQK, M_DV,
 M_WIN, M_PLAYER_NE, M_PLAYER_E, M_PEMB, M_PHEAD, M_FLOP_CAUSAL, M_FLOP_FULL, M_NVEC) = range(23)
(C_PEAK, C_PEAK_ATT, C_ETA, C_ETA_ATT, C_HBM, C_HBMBW, C_TPU, C_SMS, C_MXU, C_NMXU, C_BPE,
 C_DOM, C_DOMBW, C_TORUS, C_DOMLAT, C_NETBW, C_NETLAT, C_ETA_BF16, C_NVEC) = range(19)

RESULT_FIELDS = (
    "step_time_s", "t_gemm_s", "t_attention_s", "t_elementwise_s", "t_recompute_s", "t_lm_head_s",
    "t_tp_comm_s", "t_cp_comm_s", "t_ep_comm_s", "t_pp_comm_s", "t_bubble_s", "t_dp_comm_s",
    "t_optimizer_s", "mem_weights_bytes", "mem_grads_bytes", "mem_optimizer_bytes",
    "mem_activations_bytes", "mem_logits_bytes", "memory_per_chip_bytes", "fits", "mfu", "hfu",
    "tokens_per_s_per_chip", "n_microbatches", "t_dp_total_s",
)
R = {name: i for i, name in enumerate(RESULT_FIELDS)}
N_RESULTS = len(RESULT_FIELDS)
CONFIG_FIELDS = ("tp", "cp", "pp", "vp", "dp", "ep", "microbatch", "zero_stage", "recompute")


# -- model and hardware as flat vectors -----------------------------------------------------------------
def _model_vec(m: Model, seq_len: int) -> np.ndarray:
    v = np.zeros(M_NVEC)
    d, L = m.d_model, m.n_layers
    d_qk, d_v = m.attention_dim
    w_attn = sum(i * o for i, o in m.attention_matrices().values())
    nm = 3 if m.ffn == "swiglu" else 2
    v[M_L], v[M_D], v[M_H], v[M_KV], v[M_DH] = L, d, m.n_heads, m.kv_heads, m.d_head
    v[M_DFF], v[M_V], v[M_NM] = m.d_ff, m.vocab_size, nm
    v[M_DQK], v[M_DV], v[M_WIN] = d_qk, d_v, w_attn - d_v * d      # in-projections' weights
    attn_p = m.attention_params() + 2 * m.norm_params
    if m.moe is not None:
        mo = m.moe
        v[M_E], v[M_TOPK], v[M_DFFE], v[M_NSH] = mo.n_experts, mo.top_k, mo.d_ff_expert, mo.n_shared_experts
        f = m.n_moe_layers / L
        v[M_FMOE] = f
        ffn_e = m.ffn_matrices(mo.d_ff_expert)
        v[M_PLAYER_NE] = attn_p + (1 - f) * m.dense_ffn_params() + f * (mo.n_shared_experts * ffn_e + d * mo.n_experts)
        v[M_PLAYER_E] = f * mo.n_experts * ffn_e
    else:
        v[M_E], v[M_TOPK] = 1, 1
        v[M_PLAYER_NE] = attn_p + m.dense_ffn_params()
    v[M_PEMB] = m.embedding_params
    v[M_PHEAD] = m.lm_head_params + m.norm_params   # LM head and the final norm (last stage)
    v[M_FLOP_CAUSAL] = m.flops_per_token(seq_len, training=True, causal=True)
    v[M_FLOP_FULL] = m.flops_per_token(seq_len, training=True, causal=False)
    return v


def _chip_vec(chip: Chip, cl: Cluster, precision: str) -> tuple[np.ndarray, list[str]]:
    if chip.hbm_bytes is None or chip.hbm_bw_bytes_per_s is None:
        raise ValueError(f"{chip.name} has no HBM; the training model needs HBM capacity and bandwidth")
    v = np.zeros(C_NVEC)
    gemm, why_g = measured_efficiency(chip, precision)
    att, why_a = measured_efficiency(chip, "attention")
    v[C_PEAK] = chip.peak_flop_s(precision)
    v[C_PEAK_ATT] = chip.peak_flop_s("bf16")
    v[C_ETA], v[C_ETA_ATT] = gemm.fraction, att.fraction
    v[C_ETA_BF16] = measured_efficiency(chip, "bf16")[0].fraction
    v[C_HBM], v[C_HBMBW] = chip.hbm_bytes, chip.hbm_bw_bytes_per_s
    v[C_TPU] = 1.0 if chip.kind == "tpu" else 0.0
    v[C_SMS] = chip.compute_units or 132
    v[C_MXU] = chip.mxu_rows or 128
    v[C_NMXU] = chip.mxu_count or 4
    v[C_BPE] = 1.0 if precision == "fp8" else 2.0
    v[C_DOM], v[C_DOMBW], v[C_TORUS] = cl.domain_chips, cl.domain_bw_bytes_per_s * cl.domain_efficiency, cl.torus_dims
    v[C_DOMLAT] = cl.domain_latency_s
    v[C_NETBW], v[C_NETLAT] = cl.network_bw_bytes_per_s * cl.network_efficiency, cl.network_latency_s
    notes = [why_g, why_a]
    if chip.kind != "tpu" and chip.compute_units is None:
        notes.append(f"{chip.name}: SM count not published; 132 assumed for wave quantisation")
    if chip.kind == "tpu" and chip.mxu_count is None:
        notes.append(f"{chip.name}: MXU count not published; 4 assumed for wave quantisation")
    return v, notes


# -- kernels ------------------------------------------------------------------------------------------
@njit(cache=True)
def _gemm_shape_eff(M, N, K, c):
    """Tile/wave (GPU, 128×128×64 tiles over the SMs) or MXU fold (TPU) efficiency of one GEMM;
    the same formulas as :func:`accelbook.tiling.gpu_gemm` and ``tpu_gemm`` (tests compare)."""
    M = max(1.0, math.ceil(M))
    N = max(1.0, math.ceil(N))
    K = max(1.0, math.ceil(K))
    if c[C_TPU] > 0:
        r = c[C_MXU]
        folds = math.ceil(K / r) * math.ceil(N / r)
        fold_cycles = 2 * r + M + r - 2
        waves = math.ceil(folds / c[C_NMXU])
        return M * N * K / (fold_cycles * waves * r * r * c[C_NMXU])
    tm = math.ceil(M / 128.0)
    tn = math.ceil(N / 128.0)
    tiles = tm * tn
    waves = math.ceil(tiles / c[C_SMS])
    eta_tile = M * N / (tm * 128.0 * tn * 128.0)
    eta_k = K / (math.ceil(K / 64.0) * 64.0)
    return eta_tile * eta_k * tiles / (waves * c[C_SMS])


@njit(cache=True)
def _gemm_time(M, N, K, c):
    """Forward time of one GEMM: compute at measured × shape efficiency, or its bytes through HBM."""
    if M <= 0 or N <= 0 or K <= 0:
        return 0.0
    t_flop = 2.0 * M * N * K / (c[C_PEAK] * c[C_ETA] * _gemm_shape_eff(M, N, K, c))
    t_mem = c[C_BPE] * (M * K + K * N + M * N) / c[C_HBMBW]
    return max(t_flop, t_mem)


@njit(cache=True)
def _bw_in(g, c):
    """Per-chip bandwidth of a ring over g chips inside one domain (switch port or torus axes)."""
    if c[C_TORUS] == 0:
        return c[C_DOMBW]
    if g <= 1:
        return 2.0 * c[C_DOMBW]
    side = max(2.0, np.round(c[C_DOM] ** (1.0 / c[C_TORUS])))
    axes = max(1.0, min(c[C_TORUS], math.ceil(math.log(g) / math.log(side) - 1e-9)))
    return 2.0 * axes * c[C_DOMBW]


@njit(cache=True)
def _split(g, stride, c):
    """(members inside one domain, number of domains) for a group of g ranks at this stride."""
    inner = max(1.0, min(g, math.floor(c[C_DOM] / stride)))
    if inner > g:
        inner = g
    outer = math.ceil(g / inner)
    return inner, outer


@njit(cache=True)
def _collective(kind, S, g, stride, c):
    """Time of a collective over g ranks at rank stride ``stride``: kind 0 all-reduce, 1 all-gather
    or reduce-scatter (S = the full buffer), 2 all-to-all (S = bytes a rank sends in all), 3 one
    point-to-point send of S. Hierarchical: ring inside the domain, then ring across domains."""
    if g <= 1 or S <= 0:
        return 0.0
    gi, go = _split(g, stride, c)
    bi = _bw_in(gi, c)
    if kind == 3:
        if stride >= c[C_DOM]:
            return S / c[C_NETBW] + c[C_NETLAT]
        return S / bi + c[C_DOMLAT]
    if kind == 2:
        t_in = S * (gi - 1) / g / bi
        t_out = S * (g - gi) / g / c[C_NETBW]
        return max(t_in, t_out) + (gi - 1) * c[C_DOMLAT] + (go - 1) * c[C_NETLAT]
    f = 2.0 if kind == 0 else 1.0
    t = f * (gi - 1) / gi * S / bi + f * (gi - 1) * c[C_DOMLAT]
    if go > 1:
        t += f * (go - 1) / go * (S / gi) / c[C_NETBW] + f * (go - 1) * c[C_NETLAT]
    return t


@njit(cache=True)
def _evaluate(mv, c, B, s, tp, cp, pp, vp, dp, ep, mb, zero, rec, flash, seqpar, reserve, tp_overlap, out):
    """Fill ``out`` (RESULT_FIELDS) for one layout. B = global batch in sequences."""
    for i in range(out.shape[0]):
        out[i] = 0.0
    L = mv[M_L]
    d = mv[M_D]
    f = mv[M_FMOE]
    bpe = c[C_BPE]
    T = mb * s / cp
    sp = tp if seqpar else 1.0                # sequence parallelism splits norms/residuals by tp
    m = B / (dp * mb)                         # microbatches per step
    Lst = math.ceil(L / pp)
    L_last = max(0.0, L - (pp - 1) * Lst)
    nm1 = mv[M_NM] - 1.0
    kv_loc = max(mv[M_KV] / tp, 1.0)          # K/V heads per chip (replicated when tp > kv heads)
    # ---- forward compute of one layer, one microbatch
    t_g = _gemm_time(T, mv[M_WIN] / d / tp, d, c) + _gemm_time(T, d, mv[M_DV] / tp, c)
    if f < 1.0:
        t_g += (1.0 - f) * (_gemm_time(T, nm1 * mv[M_DFF] / tp, d, c) + _gemm_time(T, d, mv[M_DFF] / tp, c))
    if f > 0.0:
        e_loc = mv[M_E] / ep
        me = T * mv[M_TOPK] * ep / mv[M_E]
        t_moe = e_loc * (_gemm_time(me, nm1 * mv[M_DFFE] / tp, d, c) + _gemm_time(me, d, mv[M_DFFE] / tp, c))
        if mv[M_NSH] > 0:
            t_moe += _gemm_time(T, nm1 * mv[M_DFFE] * mv[M_NSH] / tp, d, c) + _gemm_time(T, d, mv[M_DFFE] * mv[M_NSH] / tp, c)
        t_moe += _gemm_time(T, mv[M_E], d, c)
        t_g += f * t_moe
    att_flop = 2.0 * T * s * (mv[M_DQK] + mv[M_DV]) / tp * 0.5
    if flash:
        t_a = att_flop / (c[C_PEAK_ATT] * c[C_ETA_ATT])
        t_a_mem = 0.0
    else:   # unfused: score GEMMs at GEMM efficiency, scores written, read and written back in HBM
        t_a = att_flop / (c[C_PEAK_ATT] * c[C_ETA])
        t_a_mem = 3.0 * 2.0 * mb * mv[M_H] / tp * (s / cp) * s / c[C_HBMBW]
    dff_eff = (1.0 - f) * mv[M_DFF] + f * (mv[M_TOPK] + mv[M_NSH]) * mv[M_DFFE]
    elem = 2.0 * (2.0 * 2.0 * d + 2.0 * 3.0 * d) / sp + 2.0 * 2.0 * (mv[M_H] / tp + kv_loc) * mv[M_DH] \
        + (mv[M_NM] * 2.0) * dff_eff / tp
    if bpe == 1.0:   # FP8 casts of every GEMM input (read bf16, write fp8)
        elem += 3.0 * (d + mv[M_DV] / tp + d + dff_eff / tp)
    t_e = T * elem / c[C_HBMBW]
    t_fwd = t_g + t_a + t_a_mem + t_e
    t_bwd = 2.0 * t_g + 2.5 * t_a + 2.0 * t_a_mem + 2.0 * t_e
    if rec == 2:
        t_rec = t_fwd
    elif rec == 1:   # norms and the FFN activation re-run; unfused attention scores too
        t_rec = T * (8.0 * d / sp + (mv[M_NM] + 1.0) * 2.0 * dff_eff / tp) / c[C_HBMBW]
        if not flash:
            t_rec += t_a + t_a_mem
    else:
        t_rec = 0.0
    # LM head and loss (last stage); the output layer stays in bf16 in FP8 recipes
    t_head_gemm = 2.0 * T * mv[M_V] / tp * d / (c[C_PEAK_ATT] * c[C_ETA_BF16] * _gemm_shape_eff(T, mv[M_V] / tp, d, c))
    t_head = 3.0 * t_head_gemm + 3.0 * 4.0 * T * mv[M_V] / tp / c[C_HBMBW]
    # ---- communication per layer per microbatch
    t_tp = 0.0
    if tp > 1:
        A = T * d * 2.0
        n_coll = 8.0 + (4.0 if rec == 2 else 0.0)
        t_tp = (1.0 - tp_overlap) * n_coll * _collective(1, A, tp, 1.0, c)
    t_cp = 0.0
    if cp > 1:
        kv_bytes = T * 2.0 * kv_loc * mv[M_DH] * 2.0
        t_cp_raw = 3.0 * _collective(1, kv_bytes * cp, cp, tp, c)
        t_cp = max(0.0, t_cp_raw - 3.5 * t_a)
    t_ep = 0.0
    if ep > 1 and f > 0:
        t_ep = f * 4.0 * _collective(2, T * mv[M_TOPK] * d * 2.0 / tp, ep, tp * cp, c)
    t_layer = t_fwd + t_bwd + t_rec + t_tp + t_cp + t_ep
    t_pp = 0.0
    if pp > 1:
        t_pp = 2.0 * vp * _collective(3, T * d * 2.0 / sp, 2.0, tp * cp * dp, c)
    t_mb = max(Lst * t_layer, L_last * t_layer + t_head) + t_pp
    if pp == 1:
        t_mb = L * t_layer + t_head
    bubble = (pp - 1.0) / vp * t_mb
    t_pipe = m * t_mb + bubble
    # ---- parameters held by the busiest stage (non-expert, expert), per chip before ZeRO
    p_ne_first = Lst * mv[M_PLAYER_NE] / tp + mv[M_PEMB] / tp
    p_ne_last = L_last * mv[M_PLAYER_NE] / tp + mv[M_PHEAD] / tp
    if pp == 1:
        p_ne_first = L * mv[M_PLAYER_NE] / tp + (mv[M_PEMB] + mv[M_PHEAD]) / tp
        p_ne_last = p_ne_first
    p_ne = max(p_ne_first, p_ne_last)
    p_e = Lst * mv[M_PLAYER_E] / (tp * ep)
    g_ne = dp * cp                            # ranks holding the same non-expert weights
    g_e = dp * cp / ep
    # ---- data-parallel communication
    t_f_mb = Lst * (t_fwd + t_tp / 2.0)
    t_b_mb = Lst * (t_bwd + t_rec + t_tp / 2.0)
    t_dp_ar = _collective(1, 2.0 * p_ne, g_ne, tp, c) + _collective(1, 2.0 * p_e, g_e, tp * cp * ep, c)
    if zero == 3:   # weights gathered for every microbatch, hidden behind that microbatch's work
        per_mb = 3.0 * t_dp_ar
        t_dp_total = m * per_mb
        t_dp = m * max(0.0, per_mb - Lst * t_layer)
    else:
        t_dp_total = 2.0 * t_dp_ar             # reduce-scatter of gradients + all-gather of weights
        t_dp = max(0.0, t_dp_ar - t_b_mb) + max(0.0, t_dp_ar - t_f_mb)
    # ---- optimizer (memory-bound Adam)
    p_loc = p_ne / (g_ne if zero >= 1 else 1.0) + p_e / (g_e if zero >= 1 else 1.0)
    t_opt = 28.0 * p_loc / c[C_HBMBW]
    step = t_pipe + t_dp + t_opt
    # ---- memory
    w_div_ne = g_ne if zero == 3 else 1.0
    w_div_e = g_e if zero == 3 else 1.0
    mem_w = 2.0 * (p_ne / w_div_ne + p_e / w_div_e)
    mem_g = 2.0 * (p_ne / (g_ne if zero >= 2 else 1.0) + p_e / (g_e if zero >= 2 else 1.0))
    mem_o = 12.0 * p_loc
    # bytes kept per token and layer for the backward pass: residual inputs of the 2 norms; the
    # norms' outputs (GEMM inputs) and the FFN activation output unless "selective" recomputes
    # them; q, k, v and the attention output; the FFN's up-projection outputs; the routed copies
    keep = 0.0 if rec == 1 else 1.0
    store_ffn = (mv[M_NM] - 1.0) * 2.0 + keep * 2.0
    a_tok = 2.0 * 2.0 * d / sp + keep * 2.0 * 2.0 * d / sp + 2.0 * (mv[M_H] / tp + 2.0 * kv_loc) * mv[M_DH] \
        + 2.0 * mv[M_DV] / tp + (1.0 - f) * store_ffn * mv[M_DFF] / tp \
        + f * (mv[M_TOPK] * (2.0 * d + store_ffn * mv[M_DFFE] / tp) + mv[M_NSH] * store_ffn * mv[M_DFFE] / tp)
    if not flash and rec == 0:   # softmax output, bf16 (no dropout: Korthikanti's 5as² counts 3 more for it)
        a_tok += 2.0 * mv[M_H] * s / tp
    in_flight = 1.0
    if pp > 1:
        in_flight = min(m, pp)
        if vp > 1:
            in_flight *= 1.0 + (pp - 1.0) / (pp * vp)
    if rec == 2:
        mem_a = T * Lst * (2.0 * d / sp) * in_flight + T * a_tok
    else:
        mem_a = T * Lst * a_tok * in_flight
    mem_l = 4.0 * T * mv[M_V] / tp
    if pp > 1:   # logits live on the last stage, which holds fewer activations in flight
        last = mem_w + mem_g + mem_o + mem_l + mem_a / max(1.0, in_flight)
        first = mem_w + mem_g + mem_o + mem_a
        total = max(first, last)
    else:
        total = mem_w + mem_g + mem_o + mem_a + mem_l
    # ---- results
    tokens = B * s
    n = tp * cp * pp * dp
    out[0] = step
    out[1] = m * L / pp * 3.0 * t_g
    out[2] = m * L / pp * (3.5 * t_a + 3.0 * t_a_mem)
    out[3] = m * L / pp * 3.0 * t_e
    out[4] = m * L / pp * t_rec
    out[5] = m * t_head / pp
    out[6] = m * L / pp * t_tp
    out[7] = m * L / pp * t_cp
    out[8] = m * L / pp * t_ep
    out[9] = m * t_pp
    out[10] = bubble
    out[11] = t_dp
    out[12] = t_opt
    out[13] = mem_w
    out[14] = mem_g
    out[15] = mem_o
    out[16] = mem_a
    out[17] = mem_l
    out[18] = total
    out[19] = 1.0 if total <= c[C_HBM] * (1.0 - reserve) else 0.0
    out[20] = tokens * mv[M_FLOP_CAUSAL] / (n * c[C_PEAK] * step)
    extra = (1.0 / 3.0) if rec == 2 else 0.0
    out[21] = out[20] * (1.0 + extra)
    out[22] = tokens / step / n
    out[23] = m
    out[24] = t_dp_total


@njit(cache=True)
def _enumerate(mv, n, B, s, tps, cps, pps, vps, eps, mbs, zeros, recs, cfg):
    """Fill ``cfg`` with every valid layout; returns how many. Validity: tp·cp·pp·dp = n, ep | dp and
    ep | experts, dp·mb | B, vp > 1 only with pp > 1, (B/(dp·mb)) % pp == 0 and pp·vp ≤ layers,
    tp | heads, s % 2cp == 0."""
    k = 0
    L = mv[M_L]
    for tp in tps:
        if mv[M_H] % tp != 0:
            continue
        for cp in cps:
            if cp > 1 and s % (2 * cp) != 0:
                continue
            for pp in pps:
                if pp > L:
                    continue
                tcp = tp * cp * pp
                if n % tcp != 0:
                    continue
                dp = n // tcp
                for ep in eps:
                    if dp % ep != 0 or mv[M_E] % ep != 0:
                        continue
                    for mb in mbs:
                        if B % (dp * mb) != 0:
                            continue
                        m = B // (dp * mb)
                        for vp in vps:
                            if vp > 1 and (pp == 1 or m % pp != 0 or pp * vp > L):
                                continue
                            for zero in zeros:
                                for rec in recs:
                                    cfg[k, 0] = tp
                                    cfg[k, 1] = cp
                                    cfg[k, 2] = pp
                                    cfg[k, 3] = vp
                                    cfg[k, 4] = dp
                                    cfg[k, 5] = ep
                                    cfg[k, 6] = mb
                                    cfg[k, 7] = zero
                                    cfg[k, 8] = rec
                                    k += 1
    return k


@njit(cache=True, parallel=True)
def _search_kernel(mv, c, n, B, s, tps, cps, pps, vps, eps, mbs, zeros, recs, flash, seqpar, reserve, tp_overlap,
                   cfg, res):
    """Enumerate every valid layout into the rows of ``cfg`` (:func:`_enumerate`), then evaluate them
    in parallel into the rows of ``res``; returns the number of rows filled."""
    k = _enumerate(mv, n, B, s, tps, cps, pps, vps, eps, mbs, zeros, recs, cfg)
    for i in prange(k):
        _evaluate(mv, c, B, s, cfg[i, 0], cfg[i, 1], cfg[i, 2], cfg[i, 3], cfg[i, 4], cfg[i, 5], cfg[i, 6],
                  int(cfg[i, 7]), int(cfg[i, 8]), flash, seqpar, reserve, tp_overlap, res[i])
    return k


# -- validation of inputs ---------------------------------------------------------------------------------
def _fraction01(name: str, v) -> float:
    if isinstance(v, bool) or not isinstance(v, numbers.Real) or not (0 <= v <= 1):
        raise ValueError(f"{name} must be a fraction in [0, 1], got {v!r}")
    return float(v)


def _whole(name: str, v, lo: int = 1) -> int:
    if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < lo:
        raise ValueError(f"{name} must be a whole number >= {lo}, got {v!r}")
    return int(v)


def _resolve(model, chip, cluster, precision):
    model = model if isinstance(model, Model) else get_model(model)
    if cluster is not None:
        cl = get_cluster(cluster)
        chip = chip if chip is not None else cl.chip_id
    chip = chip if isinstance(chip, Chip) else get_chip(chip)
    cl = get_cluster(cluster) if cluster is not None else cluster_for(chip)
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {PRECISIONS}, got {precision!r}")
    return model, chip, cl


def _batch_sequences(global_batch_tokens, seq_len) -> int:
    if not isinstance(global_batch_tokens, numbers.Real) or isinstance(global_batch_tokens, bool) \
            or not math.isfinite(global_batch_tokens) or global_batch_tokens < seq_len:
        raise ValueError(f"global_batch_tokens must be >= seq_len ({seq_len}), got {global_batch_tokens!r}")
    B = global_batch_tokens / seq_len
    if abs(B - round(B)) > 1e-9 * B:
        raise ValueError(f"global_batch_tokens ({global_batch_tokens:,}) must be a whole number of "
                         f"sequences of {seq_len:,} tokens")
    return int(round(B))


# -- one layout ----------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class TrainingEstimate:
    """A training step's time, utilisation, memory per chip and their breakdowns (SI units)."""

    model: str
    chip: str
    cluster: str
    n_chips: int
    config: dict
    step_time_s: float
    mfu: float
    hfu: float
    tokens_per_s_per_chip: float
    memory_per_chip_bytes: float
    memory_capacity_bytes: float
    fits: bool
    time: dict = field(repr=False)
    memory: dict = field(repr=False)
    assumptions: tuple[str, ...] = field(repr=False, default=())
    mfu_full_attention: float = field(repr=False, default=float("nan"))

    @property
    def tokens_per_s(self) -> float:
        return self.tokens_per_s_per_chip * self.n_chips

    @property
    def overflow_bytes(self) -> float:
        """How far memory exceeds what is usable (0 when it fits)."""
        return max(0.0, self.memory_per_chip_bytes - self.memory_capacity_bytes)

    def time_to_train(self, tokens: float) -> float:
        """Seconds to train ``tokens`` tokens at this rate (no restarts, no failures)."""
        if not (isinstance(tokens, numbers.Real) and math.isfinite(tokens) and tokens > 0):
            raise ValueError(f"tokens must be > 0, got {tokens!r}")
        return tokens / self.tokens_per_s

    def chip_hours(self, tokens: float) -> float:
        return self.time_to_train(tokens) * self.n_chips / HOURS

    def cost_usd(self, tokens: float, price_usd_per_hour: float | None = None) -> float:
        """Chip-hours × price (the catalogue's list price unless one is given)."""
        if price_usd_per_hour is None:
            p = get_chip(self.chip).price_usd_per_hour
            if p is None:
                raise ValueError(f"{self.chip} has no published price per chip-hour; give price_usd_per_hour")
            price_usd_per_hour = p
        if not (math.isfinite(price_usd_per_hour) and price_usd_per_hour > 0):
            raise ValueError(f"price must be > 0 USD/h, got {price_usd_per_hour!r}")
        return self.chip_hours(tokens) * price_usd_per_hour

    def breakdown(self) -> pd.DataFrame:
        """Tidy table: component, kind (time/memory), value (s or bytes), share of the total."""
        rows = [{"component": k, "kind": "time", "value": v, "share": v / self.step_time_s}
                for k, v in self.time.items()]
        rows += [{"component": k, "kind": "memory", "value": v, "share": v / self.memory_per_chip_bytes}
                 for k, v in self.memory.items()]
        return pd.DataFrame(rows)

    def why_not_fit(self) -> str:
        if self.fits:
            return ""
        big = max(self.memory, key=self.memory.get)
        return (f"does not fit: {self.memory_per_chip_bytes / 1e9:.1f} GB needed per chip, "
                f"{self.memory_capacity_bytes / 1e9:.1f} GB usable ({self.overflow_bytes / 1e9:.1f} GB over; "
                f"largest: {big} {self.memory[big] / 1e9:.1f} GB)")


_TIME_NAMES = {"t_gemm_s": "matmuls", "t_attention_s": "attention", "t_elementwise_s": "elementwise",
               "t_recompute_s": "recompute", "t_lm_head_s": "LM head + loss", "t_tp_comm_s": "tensor-parallel comm",
               "t_cp_comm_s": "context-parallel comm", "t_ep_comm_s": "expert all-to-all",
               "t_pp_comm_s": "pipeline sends", "t_bubble_s": "pipeline bubble",
               "t_dp_comm_s": "data-parallel comm (exposed)", "t_optimizer_s": "optimizer step"}
_MEM_NAMES = {"mem_weights_bytes": "weights", "mem_grads_bytes": "gradients", "mem_optimizer_bytes": "optimizer states",
              "mem_activations_bytes": "activations", "mem_logits_bytes": "logits"}


def _assumptions(notes: list[str], cl: Cluster, flash: bool) -> tuple[str, ...]:
    base = [
        f"network: {cl.name}",
        "sequence parallelism on whenever tp > 1; expert and pipeline communication exposed; tensor-parallel "
        "communication exposed unless tp_overlap says otherwise",
        "data-parallel reduce-scatter hidden behind one microbatch's backward, all-gather behind a forward",
        "bf16 gradients reduced; Adam with fp32 master weights and moments (16 bytes/parameter, ZeRO paper)",
        "no dropout; " + ("FlashAttention (scores never stored)" if flash else "unfused attention (scores stored)"),
        "10% of HBM kept for runtime, communication buffers and fragmentation",
        "no failures, restarts or checkpoint stalls (real runs lose some time to these)",
    ]
    return tuple(notes + base)


def estimate(model: Model | str, chip: Chip | str | None, n_chips: int, global_batch_tokens: float, seq_len: int,
             tp: int = 1, pp: int = 1, dp: int | None = None, ep: int = 1, cp: int = 1, zero_stage: int = 1,
             recompute: str = "selective", microbatch: int = 1, vp: int = 1, precision: str = "bf16",
             cluster: Cluster | str | None = None, flash_attention: bool = True,
             sequence_parallel: bool = True, memory_reserve: float = 0.10, tp_overlap: float = 0.0) -> TrainingEstimate:
    """Step time, MFU, tokens/s and memory per chip of one parallel layout.

    ``global_batch_tokens`` must be a whole number of ``seq_len`` sequences; ``dp`` defaults to
    ``n_chips / (tp·cp·pp)``. ``recompute``: "none", "selective" (norms and FFN activation, plus
    attention scores without FlashAttention), "full". ``vp``: interleaved pipeline chunks per
    stage (1 = plain 1F1B). ``tp_overlap``: share of tensor-parallel communication hidden behind
    GEMMs (0 = none, the default: no published measurement of the overlap achieved). ``cluster``: a preset id from ``data/clusters.toml``
    (default: the chip's own, e.g. DGX H100, TPU v5p pod).
    """
    model, chip, cl = _resolve(model, chip, cluster, precision)
    n = _whole("n_chips", n_chips)
    s = _whole("seq_len", seq_len, 2)
    tp, pp, cp, ep, mb, vp = (_whole(k, v) for k, v in
                              (("tp", tp), ("pp", pp), ("cp", cp), ("ep", ep), ("microbatch", microbatch), ("vp", vp)))
    if zero_stage not in (0, 1, 2, 3):
        raise ValueError(f"zero_stage must be 0, 1, 2 or 3, got {zero_stage!r}")
    if recompute not in RECOMPUTE:
        raise ValueError(f"recompute must be one of {RECOMPUTE}, got {recompute!r}")
    if isinstance(memory_reserve, bool) or not (isinstance(memory_reserve, numbers.Real) and 0 <= memory_reserve < 1):
        raise ValueError(f"memory_reserve must be a fraction in [0, 1), got {memory_reserve!r}")
    if n % (tp * cp * pp):
        raise ValueError(f"n_chips = {n} is not divisible by tp·cp·pp = {tp}·{cp}·{pp} = {tp * cp * pp}")
    dp_auto = n // (tp * cp * pp)
    if dp is None:
        dp = dp_auto
    elif _whole("dp", dp) != dp_auto:
        raise ValueError(f"tp·cp·pp·dp = {tp * cp * pp * dp} but n_chips = {n}; dp must be {dp_auto}")
    if model.n_heads % tp:
        raise ValueError(f"tp = {tp} must divide the {model.n_heads} attention heads of {model.name}")
    if cp > 1 and s % (2 * cp):
        raise ValueError(f"seq_len = {s} must be divisible by 2·cp = {2 * cp} (load-balanced context parallelism)")
    n_exp = model.moe.n_experts if model.moe else 1
    if ep > 1 and (model.moe is None or n_exp % ep or dp % ep):
        why = "it has no experts" if model.moe is None else f"ep must divide both its {n_exp} experts and dp = {dp}"
        raise ValueError(f"ep = {ep} is not possible for {model.name}: {why}")
    if pp > model.n_layers:
        raise ValueError(f"pp = {pp} is more stages than {model.name}'s {model.n_layers} layers")
    B = _batch_sequences(global_batch_tokens, s)
    if B % (dp * mb):
        raise ValueError(f"the global batch of {B} sequences does not split into dp·microbatch = {dp}·{mb} "
                         f"= {dp * mb} equal parts; choose a batch that is a multiple of {dp * mb} sequences")
    m = B // (dp * mb)
    if vp > 1 and (pp == 1 or m % pp or pp * vp > model.n_layers):
        raise ValueError(f"interleaving (vp = {vp}) needs pp > 1, a number of microbatches ({m}) divisible "
                         f"by pp = {pp}, and pp·vp ≤ {model.n_layers} layers")
    mv = _model_vec(model, s)
    cv, notes = _chip_vec(chip, cl, precision)
    out = np.empty(N_RESULTS)
    _evaluate(mv, cv, float(B), float(s), float(tp), float(cp), float(pp), float(vp), float(dp), float(ep),
              float(mb), zero_stage, RECOMPUTE.index(recompute), bool(flash_attention), bool(sequence_parallel),
              float(memory_reserve), _fraction01("tp_overlap", tp_overlap), out)
    return _to_estimate(out, model, chip, cl, n, dict(tp=tp, cp=cp, pp=pp, vp=vp, dp=dp, ep=ep, microbatch=mb,
                        zero_stage=zero_stage, recompute=recompute, precision=precision, seq_len=s,
                        global_batch_sequences=B, flash_attention=bool(flash_attention),
                        sequence_parallel=bool(sequence_parallel)), mv, notes, flash_attention, memory_reserve)


def _to_estimate(out, model, chip, cl, n, config, mv, notes, flash, reserve) -> TrainingEstimate:
    r = {k: float(out[i]) for k, i in R.items()}
    time = {_TIME_NAMES[k]: r[k] for k in _TIME_NAMES}
    memory = {_MEM_NAMES[k]: r[k] for k in _MEM_NAMES}
    config = dict(config, n_microbatches=int(round(r["n_microbatches"])))
    return TrainingEstimate(
        model=model.name, chip=chip.name, cluster=cl.name, n_chips=n, config=config,
        step_time_s=r["step_time_s"], mfu=r["mfu"], hfu=r["hfu"],
        tokens_per_s_per_chip=r["tokens_per_s_per_chip"], memory_per_chip_bytes=r["memory_per_chip_bytes"],
        memory_capacity_bytes=chip.hbm_bytes * (1 - reserve), fits=bool(r["fits"]),
        time=time, memory=memory, assumptions=_assumptions(notes, cl, flash),
        mfu_full_attention=r["mfu"] * mv[M_FLOP_FULL] / mv[M_FLOP_CAUSAL],
    )


# -- every layout ---------------------------------------------------------------------------------------------
def _pow2_upto(x: int) -> np.ndarray:
    out, v = [], 1
    while v <= x:
        out.append(v)
        v *= 2
    return np.array(out, dtype=np.float64)


def _divisors(x: int, cap: int) -> np.ndarray:
    return np.array([k for k in range(1, min(x, cap) + 1) if x % k == 0], dtype=np.float64)


def search_space(model: Model, n: int, max_tp: int = 64, max_cp: int = 32, **fixed) -> dict[str, np.ndarray]:
    """Candidate values per dimension (the kernel keeps the combinations that are valid).

    ``fixed``: tp, cp, pp, vp, ep, microbatch, zero_stage, recompute — a value or a list of values
    to search instead of the default candidates (powers of two for tp and cp, every divisor of
    n up to the layer count for pp, 1/2/4/8 for vp and microbatch, every ZeRO stage and recompute).
    """
    n_exp = model.moe.n_experts if model.moe else 1
    space = {
        "tp": _pow2_upto(min(max_tp, model.n_heads, n)),
        "cp": _pow2_upto(min(max_cp, n)),
        "pp": _divisors(n, model.n_layers),
        "vp": np.array([1, 2, 4, 8], dtype=np.float64),
        "ep": _divisors(n_exp, n) if model.moe else np.array([1.0]),
        "microbatch": np.array([1, 2, 4, 8], dtype=np.float64),
        "zero_stage": np.array([0, 1, 2, 3], dtype=np.int64),
        "recompute": np.array([0, 1, 2], dtype=np.int64),
    }
    for k, v in fixed.items():
        if k not in space:
            raise ValueError(f"cannot fix {k!r}; choose from {', '.join(space)}")
        if v is None:
            continue
        vals = list(v) if isinstance(v, (list, tuple, np.ndarray)) else [v]
        if k == "recompute":
            bad = [x for x in vals if x not in RECOMPUTE]
            if bad:
                raise ValueError(f"recompute must be among {RECOMPUTE}, got {bad[0]!r}")
            vals = [RECOMPUTE.index(x) for x in vals]
        elif k == "zero_stage":
            if any(x not in (0, 1, 2, 3) for x in vals):
                raise ValueError(f"zero_stage must be 0, 1, 2 or 3, got {vals!r}")
        else:
            vals = [_whole(k, x) for x in vals]
        space[k] = np.array(vals, dtype=space[k].dtype)
    return space


def search(model: Model | str, chip: Chip | str | None, n_chips: int, global_batch_tokens: float, seq_len: int,
           precision: str = "bf16", cluster: Cluster | str | None = None, flash_attention: bool = True,
           sequence_parallel: bool = True, memory_reserve: float = 0.10, tp_overlap: float = 0.0,
           top: int | None = 20, include_unfit: bool = False, **fixed) -> pd.DataFrame:
    """Every valid layout of ``model`` on ``n_chips`` evaluated; the fastest that fits first.

    Returns one row per layout (``top`` rows, or all with ``top=None``): the layout, step time,
    MFU, tokens/s per chip, memory per chip, whether it fits, every time and memory component, and
    ``why`` (how a runner-up loses to the best: its largest extra cost). ``df.attrs`` holds
    ``n_evaluated``, ``n_fit`` and the best :class:`TrainingEstimate` under ``"best"``.
    ``fixed`` pins dimensions (``tp=8``, ``pp=[8, 16]``, ``recompute="full"``); see :func:`search_space`.
    """
    model, chip, cl, n, s, cfg, res, order, n_fit = _search_arrays(
        model, chip, n_chips, global_batch_tokens, seq_len, precision, cluster, flash_attention, sequence_parallel,
        memory_reserve, tp_overlap, include_unfit, fixed)
    k = len(cfg)
    if top is not None:
        order = order[:_whole("top", top)]
    df = _frame(cfg[order], res[order])
    df["why"] = _why(df)
    df.attrs.update(n_evaluated=k, n_fit=n_fit, model=model.name, chip=chip.name, cluster=cl.name)
    best = df.iloc[0]
    df.attrs["best"] = estimate(model, chip, n, global_batch_tokens, s, tp=int(best.tp), pp=int(best.pp),
                                cp=int(best.cp), ep=int(best.ep), vp=int(best.vp), microbatch=int(best.microbatch),
                                zero_stage=int(best.zero_stage), recompute=best.recompute, precision=precision,
                                cluster=cl, flash_attention=flash_attention, sequence_parallel=sequence_parallel,
                                memory_reserve=memory_reserve, tp_overlap=tp_overlap)
    return df


def _search_arrays(model, chip, n_chips, global_batch_tokens, seq_len, precision, cluster, flash_attention,
                   sequence_parallel, memory_reserve, tp_overlap, include_unfit, fixed):
    """The search without tables: every layout's config and results, and the ranking (fits first,
    then step time; ties to the lower ZeRO stage, then the smaller memory)."""
    model, chip, cl = _resolve(model, chip, cluster, precision)
    n = _whole("n_chips", n_chips)
    s = _whole("seq_len", seq_len, 2)
    B = _batch_sequences(global_batch_tokens, s)
    if isinstance(memory_reserve, bool) or not (isinstance(memory_reserve, numbers.Real) and 0 <= memory_reserve < 1):
        raise ValueError(f"memory_reserve must be a fraction in [0, 1), got {memory_reserve!r}")
    sp = search_space(model, n, **fixed)
    _check_pinned(model, n, s, fixed)
    mv = _model_vec(model, s)
    cv, notes = _chip_vec(chip, cl, precision)
    cap = int(np.prod([len(v) for v in sp.values()]))
    cfg = np.zeros((cap, len(CONFIG_FIELDS)), dtype=np.float64)
    res = np.zeros((cap, N_RESULTS))
    k = _search_kernel(mv, cv, float(n), float(B), float(s), sp["tp"], sp["cp"], sp["pp"], sp["vp"], sp["ep"],
                       sp["microbatch"], sp["zero_stage"], sp["recompute"], bool(flash_attention),
                       bool(sequence_parallel), float(memory_reserve), _fraction01("tp_overlap", tp_overlap), cfg, res)
    if k == 0:
        raise ValueError(f"no valid layout of {model.name} on {n} chips with a batch of {B} × {s} tokens and "
                         f"{fixed or 'no constraints'}: check that the chip count and batch divide as the "
                         "layout needs (tp·cp·pp·dp = chips, dp·microbatch divides the batch)")
    cfg, res = cfg[:k], res[:k]
    fits = res[:, R["fits"]] > 0.5
    n_fit = int(fits.sum())
    if n_fit == 0 and not include_unfit:
        i = int(np.argmin(res[:, R["memory_per_chip_bytes"]]))
        raise ValueError(
            f"no layout of {model.name} fits on {n} × {chip.name} ({chip.hbm_bytes / 1e9:.0f} GB) with a batch of "
            f"{B} × {s} tokens: the smallest needs {res[i, R['memory_per_chip_bytes']] / 1e9:.1f} GB per chip "
            f"(tp={int(cfg[i, 0])}, pp={int(cfg[i, 2])}, zero={int(cfg[i, 7])}, "
            f"recompute={RECOMPUTE[int(cfg[i, 8])]}). More chips, or a smaller microbatch or sequence.")
    keep = np.arange(k) if include_unfit else np.flatnonzero(fits)
    order = keep[np.lexsort((res[keep, R["memory_per_chip_bytes"]], cfg[keep, 7], res[keep, R["step_time_s"]],
                             ~fits[keep]))]
    return model, chip, cl, n, s, cfg, res, order, n_fit


def _best_config(model, chip, n, global_batch_tokens, seq_len, precision, cl, fixed) -> dict:
    """The layout :func:`search` ranks first, as the config dict :func:`_estimate_fast` takes (no tables)."""
    model, chip, cl, n, s, cfg, res, order, _ = _search_arrays(
        model, chip, n, global_batch_tokens, seq_len, precision, cl, True, True, 0.10, 0.0, False, fixed)
    c = {f: int(v) for f, v in zip(CONFIG_FIELDS, cfg[order[0]])}
    c["recompute"] = RECOMPUTE[c["recompute"]]
    return dict(c, precision=precision, seq_len=s, flash_attention=True, sequence_parallel=True)


def _check_pinned(model: Model, n: int, s: int, fixed: dict) -> None:
    """Say plainly why a pinned value can never be valid (before the search says "no layout")."""
    def vals(k):
        v = fixed.get(k)
        return [] if v is None else list(v) if isinstance(v, (list, tuple, np.ndarray)) else [v]

    if any(t > 0 and model.n_heads % t for t in vals("tp")):
        raise ValueError(f"tp must divide the {model.n_heads} attention heads of {model.name}; got {vals('tp')}")
    if any(e > 1 for e in vals("ep")) and model.moe is None:
        raise ValueError(f"{model.name} has no experts: expert parallelism (ep > 1) is not possible")
    if any(p > model.n_layers for p in vals("pp")):
        raise ValueError(f"pp must not exceed the {model.n_layers} layers of {model.name}; got {vals('pp')}")
    if any(c > 1 and s % (2 * c) for c in vals("cp")):
        raise ValueError(f"seq_len = {s} must be divisible by 2·cp for context parallelism; got cp {vals('cp')}")
    for k in ("tp", "cp", "pp"):
        if any(n % v for v in vals(k)):
            raise ValueError(f"{k} must divide the {n} chips; got {vals(k)}")


def _frame(cfg: np.ndarray, res: np.ndarray) -> pd.DataFrame:
    df = pd.DataFrame(cfg.astype(np.int64), columns=list(CONFIG_FIELDS))
    df["recompute"] = np.array(RECOMPUTE, dtype=object)[df["recompute"].to_numpy()]
    r = pd.DataFrame(res, columns=list(RESULT_FIELDS))
    r["fits"] = r["fits"] > 0.5
    r["n_microbatches"] = r["n_microbatches"].round().astype(np.int64)
    return pd.concat([df, r], axis=1)


def _why(df: pd.DataFrame) -> np.ndarray:
    """For each row, the component that costs it most relative to the first (best) row (vectorised)."""
    if df.empty:
        return np.array([], dtype=object)
    comps = list(_TIME_NAMES)
    vals = df[comps].to_numpy()
    best_step = df["step_time_s"].iloc[0]
    delta = (vals - vals[0]) / best_step
    worst = delta.argmax(axis=1)
    slower = df["step_time_s"].to_numpy() / best_step - 1
    names = np.array([_TIME_NAMES[k] for k in comps], dtype=object)
    why = np.array([f"{sl:+.1%}: {nm} {dl:+.1%} of the best step" for sl, nm, dl in
                    zip(slower, names[worst], delta[np.arange(len(df)), worst])], dtype=object)
    fits = df["fits"].to_numpy()
    mem = df["memory_per_chip_bytes"].to_numpy()
    why[~fits] = [f"does not fit ({x / 1e9:.0f} GB per chip)" for x in mem[~fits]]
    why[0] = "fastest that fits" if fits[0] else why[0]
    return why


# -- scaling ----------------------------------------------------------------------------------------------
def scaling(model: Model | str, chip: Chip | str | None, chip_counts, seq_len: int,
            batch_tokens_per_chip: float | None = None, global_batch_tokens: float | None = None,
            precision: str = "bf16", cluster: Cluster | str | None = None, layout: str = "fixed",
            **fixed) -> pd.DataFrame:
    """Throughput against chip count.

    Weak scaling: ``batch_tokens_per_chip`` fixed (the global batch grows with the chips).
    Strong scaling: ``global_batch_tokens`` fixed. ``layout="fixed"``: the best layout at the
    LARGEST count is kept and only data parallelism changes (classic scaling: what is lost is
    communication); ``layout="best"``: searched anew at each count (it may change strategy, so
    efficiency can exceed 1 when more chips let a faster layout fit).
    Efficiency = (tokens/s per chip) / (that at the first count that fits). Columns: n_chips,
    tokens_per_s, tokens_per_s_per_chip, efficiency, mfu, comm_share (exposed communication +
    bubble over the step), layout, note. ``fixed`` narrows the search as in :func:`search`.
    """
    if (batch_tokens_per_chip is None) == (global_batch_tokens is None):
        raise ValueError("give exactly one of batch_tokens_per_chip (weak scaling) or global_batch_tokens (strong)")
    if layout not in ("fixed", "best"):
        raise ValueError(f"layout must be 'fixed' or 'best', got {layout!r}")
    counts = sorted({_whole("chip count", c) for c in chip_counts})
    model, chip, cl = _resolve(model, chip, cluster, precision)
    rows, base = [], None

    def gbt_of(n):
        return global_batch_tokens if global_batch_tokens is not None else batch_tokens_per_chip * n

    if layout == "fixed":
        try:
            base = _best_config(model, chip, counts[-1], gbt_of(counts[-1]), seq_len, precision, cl, fixed)
        except ValueError as e:
            raise ValueError(f"no layout fits at the largest count ({counts[-1]:,} chips): {e}") from None
    vecs = (_model_vec(model, seq_len), *_chip_vec(chip, cl, precision))
    for n in counts:
        gbt = gbt_of(n)
        try:
            if layout == "best":
                base = _best_config(model, chip, n, gbt, seq_len, precision, cl, fixed)
            est = _estimate_fast(model, chip, cl, n, gbt, seq_len, base, vecs)
        except ValueError as e:
            rows.append({"n_chips": n, "note": str(e)})
            continue
        comm = sum(est.time[k] for k in ("tensor-parallel comm", "context-parallel comm", "expert all-to-all",
                                         "pipeline sends", "pipeline bubble", "data-parallel comm (exposed)"))
        c = est.config
        rows.append({"n_chips": n, "tokens_per_s": est.tokens_per_s, "tokens_per_s_per_chip": est.tokens_per_s_per_chip,
                     "mfu": est.mfu, "comm_share": comm / est.step_time_s, "step_time_s": est.step_time_s,
                     "fits": est.fits,
                     "layout": f"tp{c['tp']} cp{c['cp']} pp{c['pp']} vp{c['vp']} dp{c['dp']} ep{c['ep']} "
                               f"mb{c['microbatch']} zero{c['zero_stage']} {c['recompute']}",
                     "note": "" if est.fits else est.why_not_fit()})
    out = pd.DataFrame(rows)
    if "tokens_per_s_per_chip" in out and out["tokens_per_s_per_chip"].notna().any():
        ref = out["tokens_per_s_per_chip"].dropna().iloc[0]
        out["efficiency"] = out["tokens_per_s_per_chip"] / ref
    return out


def _estimate_fast(model, chip, cl, n, gbt, s, c: dict, vecs) -> TrainingEstimate:
    """:func:`estimate` for a layout already checked by a search at another chip count, with the
    model and chip vectors built once: only what changes with the chip count is checked here."""
    mv, cv, notes = vecs
    tcp = c["tp"] * c["cp"] * c["pp"]
    if n % tcp:
        raise ValueError(f"{n} chips do not split into tp·cp·pp = {tcp}")
    dp = n // tcp
    B = _batch_sequences(gbt, s)
    if B % (dp * c["microbatch"]) or dp % c["ep"]:
        raise ValueError(f"the batch of {B} sequences does not split over dp = {dp} × microbatch {c['microbatch']}")
    m = B // (dp * c["microbatch"])
    if c["vp"] > 1 and m % c["pp"]:
        raise ValueError(f"{m} microbatches are not a multiple of pp = {c['pp']} (needed for interleaving)")
    out = np.empty(N_RESULTS)
    _evaluate(mv, cv, float(B), float(s), float(c["tp"]), float(c["cp"]), float(c["pp"]), float(c["vp"]), float(dp),
              float(c["ep"]), float(c["microbatch"]), c["zero_stage"], RECOMPUTE.index(c["recompute"]),
              c["flash_attention"], c["sequence_parallel"], 0.10, 0.0, out)
    config = dict(c, dp=dp, global_batch_sequences=B)
    return _to_estimate(out, model, chip, cl, n, config, mv, notes, c["flash_attention"], 0.10)


# -- validation against published runs ----------------------------------------------------------------------
_RUN_REQUIRED = {"name", "model", "chip", "n_chips", "seq_len", "global_batch_sequences", "metric", "convention",
                 "reported", "role"}
_RUN_LAYOUT = {"tp": 1, "pp": 1, "cp": 1, "ep": 1, "vp": 1, "microbatch": 1, "zero_stage": 1, "recompute": "auto",
               "precision": "bf16", "flash_attention": True, "sequence_parallel": True, "cluster": None}
METRICS = ("tflop_s", "mfu", "tokens_per_s", "iteration_s")
CONVENTIONS = ("hardware_full", "model_full", "model_causal")


def estimate_auto(model, chip, n_chips, global_batch_tokens, seq_len, recompute="auto", **layout) -> TrainingEstimate:
    """:func:`estimate`, where ``recompute="auto"`` takes the least recomputation that fits memory."""
    if recompute != "auto":
        return estimate(model, chip, n_chips, global_batch_tokens, seq_len, recompute=recompute, **layout)
    options = ("none", "full") if layout.get("flash_attention", True) else ("none", "selective", "full")
    est = None
    for r in options:
        est = estimate(model, chip, n_chips, global_batch_tokens, seq_len, recompute=r, **layout)
        if est.fits:
            return est
    return est


def predicted_metric(est: TrainingEstimate, model: Model, chip: Chip, metric: str, convention: str) -> float:
    """The estimate expressed as the authors reported it (their metric, their FLOP counting)."""
    if metric not in METRICS:
        raise ValueError(f"metric must be one of {METRICS}, got {metric!r}")
    if convention not in CONVENTIONS:
        raise ValueError(f"convention must be one of {CONVENTIONS}, got {convention!r}")
    s = est.config["seq_len"]
    flops = model.flops_per_token(s, training=True, causal=convention == "model_causal")
    if convention == "hardware_full" and est.config["recompute"] == "full":
        # Narayanan et al. 2021, eq. 3: the transformer layers' forward runs twice, the logit layer once
        head = 6.0 * model.vocab_size * model.d_model
        flops = head + (flops - head) * 4.0 / 3.0
    if metric == "tokens_per_s":
        return est.tokens_per_s_per_chip
    if metric == "iteration_s":
        return est.step_time_s
    tflop_s = est.tokens_per_s_per_chip * flops
    if metric == "tflop_s":
        return tflop_s / 1e12
    return tflop_s / chip.peak_flop_s("bf16")


def published_runs(path=None) -> dict[str, dict]:
    """The rows of ``data/training_runs.toml``, checked."""
    from accelbook.specs.loader import DATA_DIR, check_keys, load_sources, parse_quantity, read_table_file

    path = path or DATA_DIR / "training_runs.toml"
    sources = load_sources()
    runs = {}
    for rid, e in read_table_file(path).items():
        check_keys(path, rid, e, required=_RUN_REQUIRED, optional=set(_RUN_LAYOUT) | {"assumed"})
        if e["metric"] not in METRICS or e["convention"] not in CONVENTIONS or e["role"] not in ("target", "context"):
            from accelbook.specs.loader import CatalogueError

            raise CatalogueError(path, rid, "metric", f"metric in {METRICS}, convention in {CONVENTIONS}, "
                                                      "role 'target' or 'context'")
        q = parse_quantity(path, rid, "reported", e["reported"], "count", sources)
        runs[rid] = dict(e, reported_value=q.value, reported_provenance=q.provenance)
    return runs


_SEARCHABLE = ("tp", "pp", "cp", "ep", "vp", "microbatch", "zero_stage", "recompute")


def run_layout(e: dict) -> tuple[dict, dict]:
    """(fixed settings, pinned layout) of a published run: published values and accelbook's stated
    choices are pinned; layout keys listed in ``assumed`` but not given are left to the search."""
    assumed = set(e.get("assumed", []))
    settings = {k: e.get(k, v) for k, v in _RUN_LAYOUT.items() if k not in _SEARCHABLE}
    pinned = {}
    for k in _SEARCHABLE:
        if k in e:
            pinned[k] = e[k]
        elif k not in assumed:
            pinned[k] = _RUN_LAYOUT[k]
    if pinned.get("recompute") == "auto":
        del pinned["recompute"]
    return settings, pinned


def validation_table(path=None) -> pd.DataFrame:
    """Predicted against reported for every published run. Published layout values are pinned;
    the unpublished ones (``assumed`` in the data, not given) are chosen by :func:`search`, the
    fastest that fits memory, as a practitioner would tune them. The metric is expressed in the
    authors' FLOP-counting convention; ``error`` = predicted / reported - 1."""
    rows = []
    for rid, e in published_runs(path).items():
        model, chip = get_model(e["model"]), get_chip(e["chip"])
        settings, pinned = run_layout(e)
        s = e["seq_len"]
        try:
            df = search(model, chip, e["n_chips"], e["global_batch_sequences"] * s, s, top=1, **settings, **pinned)
            est = df.attrs["best"]
        except ValueError as err:
            rows.append({"id": rid, "run": e["name"], "role": e["role"], "note": f"not evaluated: {err}"})
            continue
        pred = predicted_metric(est, model, chip, e["metric"], e["convention"])
        rep = e["reported_value"]
        c = est.config
        searched = [k for k in _SEARCHABLE if k not in pinned]
        rows.append({
            "id": rid, "run": e["name"], "role": e["role"], "chips": e["n_chips"], "metric": e["metric"],
            "convention": e["convention"], "reported": rep, "predicted": pred, "error": pred / rep - 1,
            "mfu": est.mfu, "fits": est.fits, "recompute": c["recompute"],
            "layout": f"tp{c['tp']} cp{c['cp']} pp{c['pp']} vp{c['vp']} dp{c['dp']} ep{c['ep']} "
                      f"mb{c['microbatch']} zero{c['zero_stage']} {c['recompute']} {c['precision']}",
            "searched": ", ".join(searched), "source": e["reported_provenance"].source.title,
            "note": "",
        })
    return pd.DataFrame(rows)
