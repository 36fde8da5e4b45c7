"""The training kernels: one layout's results (:func:`_evaluate`) and every layout's (:func:`_search_kernel`).

``_evaluate`` puts the formulas of :mod:`.compute`, :mod:`.communication`, :mod:`.pipeline` and
:mod:`.memory` together for one layout and writes the named result slots (:mod:`.slots`, ``R_*``):

    t_layer = t_fwd + t_bwd + t_rec + t_tp + t_cp + t_ep + t_perm + t_imb + σ·(h_tp + h_cp)   (one layer, one microbatch)
    step    = m·t_mb + (pp-1)/vp·t_mb + t_dp + t_dp_bucket + t_opt + σ·h_dp,  t_opt = 30·Ψ_opt / B_hbm   (Adam)

with ``h_*`` the communication hidden behind compute and σ (``C_OVL``) the measured slowdown of
compute while a collective runs beside it.
    MFU     = tokens · FLOP_per_token(causal) / (n · P · step),  HFU = MFU · 4/3 under full recomputation

The per-step time components (``t_gemm_s``, ...) are those of an average stage: ``m·L/pp`` layer
passes (forward + backward: ×3 for GEMMs and elementwise, ×3.5 attention FLOPs, ×3 score traffic), and
``t_stage_imbalance_s`` what the busiest stage (``⌈L/pp⌉`` layers, or the last with the LM head) adds,
so that the components sum to the step time.

``_enumerate`` lists the valid layouts and ``_search_kernel`` evaluates them a group at a time: the
rows of one (tp, cp, pp, dp, ep, microbatch, vp) share that layout's terms (:func:`_layout_terms`) and,
per ZeRO stage and schedule, its data-parallel passes, so only what ZeRO, gradient sync, schedule and
recomputation change is computed per row (:func:`_finish`), by the same functions as for one layout.
Call them through :func:`evaluate_layout` and :func:`evaluate_layouts`, which take checked inputs and
return arrays.

The formula helpers are ``@njit(inline="always")``: Numba inlines them into ``_evaluate`` and the
search kernel, each compiled to one function as when ``_evaluate`` was written as one (called separately, each helper that
takes the model and chip vectors costs reference counting; the search ran about 35 % slower). Numba's
on-disk cache does not notice a change to a function in another file: after editing a helper, clear
``.numba_cache``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .communication import (
    context_parallel_pass,
    context_parallel_time,
    data_parallel_collectives,
    data_parallel_times,
    expert_all_to_all_time,
    pipeline_send_time,
    tensor_parallel_pass,
    tensor_parallel_time,
)
from .compute import (
    imbalance_time,
    kv_heads_per_chip,
    layer_pass_times,
    lm_head_time,
    moe_permute_time,
    recompute_time,
)
from .memory import (
    activation_bytes,
    activation_bytes_per_token,
    logits_bytes,
    memory_per_chip,
    model_state_bytes,
    optimizer_params,
    optimizer_step_bytes,
    stage_params,
)
from .pipeline import bubble_time, microbatch_time, microbatches_in_flight, schedule_valid, stage_layers
from .slots import (
    C_HBMBW,
    C_OVL,
    C_PEAK,
    CFG_CP,
    CFG_DP,
    CFG_EP,
    CFG_GSYNC,
    CFG_MB,
    CFG_PP,
    CFG_REC,
    CFG_SCHED,
    CFG_TP,
    CFG_VP,
    CFG_ZERO,
    CONFIG_FIELDS,
    M_E,
    M_FLOP_CAUSAL,
    M_H,
    M_L,
    N_RESULTS,
    O_CP_ALLGATHER,
    O_TP_OVERLAP,
    R_FITS,
    R_HFU,
    R_MEM_ACTIVATIONS_BYTES,
    R_MEM_GRADS_BYTES,
    R_MEM_LOGITS_BYTES,
    R_MEM_OPTIMIZER_BYTES,
    R_MEM_WEIGHTS_BYTES,
    R_MEMORY_PER_CHIP_BYTES,
    R_MFU,
    R_N_MICROBATCHES,
    R_STEP_TIME_S,
    R_T_ATTENTION_S,
    R_T_BUBBLE_S,
    R_T_CP_COMM_S,
    R_T_DP_BUCKET_S,
    R_T_DP_COMM_S,
    R_T_DP_TOTAL_S,
    R_T_ELEMENTWISE_S,
    R_T_EP_COMM_S,
    R_T_GEMM_S,
    R_T_IMBALANCE_S,
    R_T_LM_HEAD_S,
    R_T_OPTIMIZER_S,
    R_T_OVERLAP_S,
    R_T_PERMUTE_S,
    R_T_PP_COMM_S,
    R_T_RECOMPUTE_S,
    R_T_STAGE_IMBALANCE_S,
    R_T_TP_COMM_S,
    R_TOKENS_PER_S_PER_CHIP,
)

#: the layout terms (``G_*`` slots, :func:`_layout_terms`): what a layout's step shares between the rows of a
#: search that differ only in ZeRO stage, gradient sync, pipeline schedule and recomputation
(G_T, G_SP, G_M, G_LST, G_LLAST, G_KV, G_TG, G_TA, G_TAMEM, G_TE, G_TFWD, G_TBWD, G_TROUTED, G_DFF, G_THEAD,
 G_TP_PASS, G_CP_PASS, G_TEP, G_PERM, G_IMB, G_TPP, G_PNE, G_PE, G_NVEC) = range(24)
#: the data-parallel passes (:func:`~.communication.data_parallel_collectives`), one set per ZeRO stage and schedule
N_DP_PASSES = 4


@njit(cache=True, inline="always")
def _layout_terms(mv, c, B, s, tp, cp, pp, vp, dp, ep, mb, flash, seqpar, g):
    """Fill ``g`` (``G_*`` slots) with the terms of a layout that do not depend on its ZeRO stage,
    gradient sync, schedule or recomputation: the microbatch's tokens ``T``, sequence-parallel split,
    microbatches ``m``, stage layers, K/V heads per chip, one layer's forward and backward times
    (:func:`~.compute.layer_pass_times`), the LM head, one tensor- and one context-parallel pass, the
    expert all-to-all, MoE permutation and imbalance (forward), the pipeline sends and the parameters of
    the busiest stage. Arguments as :func:`_evaluate`'s."""
    L = mv[M_L]
    T = mb * s / cp                           # tokens of a microbatch on one chip
    sp = tp if seqpar else 1.0                # sequence parallelism splits norms/residuals by tp
    Lst, L_last = stage_layers(L, pp)
    kv_loc = kv_heads_per_chip(mv, tp)
    t_g, t_a, t_a_mem, t_e, t_fwd, t_bwd, t_routed, dff_eff = layer_pass_times(mv, c, T, s, tp, cp, ep, mb, sp,
                                                                               kv_loc, flash)
    g[G_T], g[G_SP], g[G_M], g[G_LST], g[G_LLAST], g[G_KV] = T, sp, B / (dp * mb), Lst, L_last, kv_loc
    g[G_TG], g[G_TA], g[G_TAMEM], g[G_TE], g[G_TFWD], g[G_TBWD] = t_g, t_a, t_a_mem, t_e, t_fwd, t_bwd
    g[G_TROUTED], g[G_DFF] = t_routed, dff_eff
    g[G_THEAD] = lm_head_time(mv, c, T, tp)
    g[G_TP_PASS] = tensor_parallel_pass(mv, c, T, tp)
    g[G_CP_PASS] = context_parallel_pass(mv, c, T, tp, cp, kv_loc)
    g[G_TEP] = expert_all_to_all_time(mv, c, T, tp, cp, ep)
    g[G_PERM] = moe_permute_time(mv, c, T)
    g[G_IMB] = imbalance_time(mv, ep, t_routed)
    g[G_TPP] = pipeline_send_time(mv, c, T, tp, cp, dp, pp, vp, sp)
    g[G_PNE], g[G_PE] = stage_params(mv, L, Lst, L_last, pp, tp, ep)


@njit(cache=True, inline="always")
def _held_params(g, sched):
    """(non-expert, expert) parameters a chip of the busiest stage holds before ZeRO: the stage's
    (``G_PNE``, ``G_PE``); DualPipe (``sched`` 2) holds two stages' parameters, one per direction."""
    if sched == 2:
        return 2.0 * g[G_PNE], 2.0 * g[G_PE]
    return g[G_PNE], g[G_PE]


@njit(cache=True, inline="always")
def _dp_groups(dp, cp, ep):
    """(ranks holding the same non-expert weights, ranks holding the same experts)."""
    return dp * cp, dp * cp / ep


@njit(cache=True, inline="always")
def _dp_passes(c, g, tp, cp, dp, ep, zero, sched, d):
    """Fill ``d`` with the data-parallel passes (t_rs, t_ag, t_bk_rs, t_bk_ag) of a layout whose terms
    are ``g`` at ZeRO stage ``zero`` and schedule ``sched`` (:func:`~.communication.data_parallel_collectives`)."""
    p_ne, p_e = _held_params(g, sched)
    g_ne, g_e = _dp_groups(dp, cp, ep)
    d[0], d[1], d[2], d[3] = data_parallel_collectives(c, p_ne, p_e, g_ne, g_e, tp, cp, ep, zero)


@njit(cache=True)
def _evaluate(mv, c, B, s, tp, cp, pp, vp, dp, ep, mb, zero, rec, gsync, sched, flash, seqpar, usable_bytes, opt, out):
    """Fill ``out`` (the ``R_*`` slots) for one layout. ``B`` = global batch in sequences, ``s`` the
    sequence length; ``zero`` the ZeRO stage, ``rec`` the index in RECOMPUTE, ``gsync`` the index in
    GRAD_SYNC, ``sched`` in SCHEDULES; ``usable_bytes`` the HBM a chip may fill; ``opt`` the run's
    options (``O_*`` slots). Every layout argument is a float except ``zero``, ``rec``, ``gsync`` and ``sched``.
    The layout's terms (:func:`_layout_terms`), its data-parallel passes (:func:`_dp_passes`), then the
    step from them (:func:`_finish`): the search runs the same three, sharing the first two between rows."""
    g = np.empty(G_NVEC)
    d = np.empty(N_DP_PASSES)
    _layout_terms(mv, c, B, s, tp, cp, pp, vp, dp, ep, mb, flash, seqpar, g)
    _dp_passes(c, g, tp, cp, dp, ep, zero, sched, d)
    _finish(mv, c, g, d, B, s, tp, cp, pp, vp, dp, ep, zero, rec, gsync, sched, flash, usable_bytes, opt, out)


@njit(cache=True, inline="always")
def _finish(mv, c, g, d, B, s, tp, cp, pp, vp, dp, ep, zero, rec, gsync, sched, flash, usable_bytes, opt, out):
    """Fill ``out`` (the ``R_*`` slots) for one layout from its terms ``g`` (:func:`_layout_terms`) and
    data-parallel passes ``d`` (:func:`_dp_passes`); the other arguments as :func:`_evaluate`'s.

    Length: one function on purpose. Each stage feeds the next (a layer's time sets the microbatch's,
    which sets the bubble and the windows data parallelism hides behind) and the result slots are
    written from the same locals; every formula lives in :mod:`.compute`, :mod:`.communication`,
    :mod:`.pipeline` or :mod:`.memory`, and this function only puts them together."""
    for i in range(out.shape[0]):
        out[i] = 0.0
    L = mv[M_L]
    T, sp, m, Lst, L_last, kv_loc = g[G_T], g[G_SP], g[G_M], g[G_LST], g[G_LLAST], g[G_KV]
    t_g, t_a, t_a_mem, t_e, t_fwd, t_bwd = g[G_TG], g[G_TA], g[G_TAMEM], g[G_TE], g[G_TFWD], g[G_TBWD]
    # ---- one layer, one microbatch: compute, then the communication it exposes
    t_rec = recompute_time(mv, c, T, tp, sp, g[G_DFF], rec, flash, t_fwd, t_a, t_a_mem)
    t_head = g[G_THEAD]
    t_tp, h_tp = tensor_parallel_time(g[G_TP_PASS], tp, rec, opt[O_TP_OVERLAP])
    t_cp, h_cp = context_parallel_time(g[G_CP_PASS], cp, t_a, rec, opt[O_CP_ALLGATHER])
    t_ep = g[G_TEP]
    # MoE: permutation (forward, backward, and the recomputed forward) and the busiest rank's extra GEMMs
    n_fwd = 1.0 if rec == 2 else 0.0
    t_perm = (2.0 + n_fwd) * g[G_PERM]
    t_imb = (3.0 + n_fwd) * g[G_IMB]
    h_ep = 0.0
    if sched == 2:   # DualPipe hides the all-to-all behind the other direction's compute
        h_ep = min(t_ep, t_fwd + t_bwd + t_rec)
        t_ep -= h_ep
    t_ovl_layer = c[C_OVL] * (h_tp + h_cp + h_ep)    # compute slowed by the communication hidden behind it
    t_layer = t_fwd + t_bwd + t_rec + t_tp + t_cp + t_ep + t_perm + t_imb + t_ovl_layer
    # ---- the pipeline
    t_pp = g[G_TPP]
    t_ovl_pp = 0.0
    if sched == 2:   # ... and its sends
        t_ovl_pp = c[C_OVL] * t_pp
        t_pp = 0.0
    t_mb = microbatch_time(L, Lst, L_last, pp, t_layer, t_head, t_pp + t_ovl_pp)
    t_w = Lst * t_g                                  # weight-gradient GEMMs of a microbatch on the stage
    bubble = bubble_time(pp, vp, t_mb, Lst * (t_bwd - t_g + t_rec), t_w, sched)
    # ---- data parallelism and the optimizer, on the parameters of the busiest stage
    p_ne, p_e = _held_params(g, sched)
    g_ne, g_e = _dp_groups(dp, cp, ep)
    t_dp, t_bk, t_dp_total = data_parallel_times(d[0], d[1], d[2], d[3], zero, gsync, m, Lst * t_layer,
                                                 Lst * (t_fwd + t_tp / 2.0), Lst * (t_bwd + t_rec + t_tp / 2.0))
    t_ovl_dp = c[C_OVL] * max(0.0, t_dp_total - t_dp - t_bk)   # the hidden part slows what hides it
    p_opt = optimizer_params(p_ne, p_e, g_ne, g_e, zero)
    t_opt = optimizer_step_bytes(c) * p_opt / c[C_HBMBW]
    step = m * t_mb + bubble + t_dp + t_bk + t_opt + t_ovl_dp
    # ---- memory
    mem_w, mem_g, mem_o = model_state_bytes(c, p_ne, p_e, g_ne, g_e, zero, gsync, p_opt)
    in_flight = microbatches_in_flight(m, pp, vp, sched)
    mem_a = activation_bytes(mv, T, Lst, sp, activation_bytes_per_token(mv, s, tp, sp, kv_loc, rec, flash),
                             in_flight, rec)
    mem_l = logits_bytes(mv, T, tp)
    total = memory_per_chip(mem_w, mem_g, mem_o, mem_a, mem_l, in_flight, pp)
    # ---- results: per-step components of the busiest stage (m·L/pp layer passes)
    layer_passes = m * L / pp
    tokens = B * s
    n = tp * cp * pp * dp
    out[R_STEP_TIME_S] = step
    out[R_T_GEMM_S] = layer_passes * 3.0 * t_g
    out[R_T_ATTENTION_S] = layer_passes * (3.5 * t_a + 3.0 * t_a_mem)
    out[R_T_ELEMENTWISE_S] = layer_passes * 3.0 * t_e
    out[R_T_RECOMPUTE_S] = layer_passes * t_rec
    out[R_T_LM_HEAD_S] = m * t_head / pp
    out[R_T_TP_COMM_S] = layer_passes * t_tp
    out[R_T_CP_COMM_S] = layer_passes * t_cp
    out[R_T_EP_COMM_S] = layer_passes * t_ep
    out[R_T_PP_COMM_S] = m * t_pp
    out[R_T_BUBBLE_S] = bubble
    out[R_T_DP_COMM_S] = t_dp
    out[R_T_DP_BUCKET_S] = t_bk
    out[R_T_OPTIMIZER_S] = t_opt
    out[R_T_PERMUTE_S] = layer_passes * t_perm
    out[R_T_IMBALANCE_S] = layer_passes * t_imb
    out[R_T_OVERLAP_S] = layer_passes * t_ovl_layer + t_ovl_dp + m * t_ovl_pp
    # the step waits for the busiest stage (⌈L/pp⌉ layers, or the last stage's layers and the LM head);
    # the lines above count an average stage (L/pp layers, the LM head / pp): the difference is its own line
    out[R_T_STAGE_IMBALANCE_S] = m * max(0.0, t_mb - t_pp - t_ovl_pp - (L / pp) * t_layer - t_head / pp)
    out[R_MEM_WEIGHTS_BYTES] = mem_w
    out[R_MEM_GRADS_BYTES] = mem_g
    out[R_MEM_OPTIMIZER_BYTES] = mem_o
    out[R_MEM_ACTIVATIONS_BYTES] = mem_a
    out[R_MEM_LOGITS_BYTES] = mem_l
    out[R_MEMORY_PER_CHIP_BYTES] = total
    out[R_FITS] = 1.0 if total <= usable_bytes else 0.0
    out[R_MFU] = tokens * mv[M_FLOP_CAUSAL] / (n * c[C_PEAK] * step)
    out[R_HFU] = out[R_MFU] * (1.0 + ((1.0 / 3.0) if rec == 2 else 0.0))   # full recomputation: 4 passes, not 3
    out[R_TOKENS_PER_S_PER_CHIP] = tokens / step / n
    out[R_N_MICROBATCHES] = m
    out[R_T_DP_TOTAL_S] = t_dp_total


@njit(cache=True, inline="always")
def contains(values, x):
    """Whether ``x`` is one of ``values`` (a loop: no temporary array in the enumeration)."""
    for v in values:
        if v == x:
            return True
    return False


@njit(cache=True, inline="always")
def grad_sync_valid(zero, gsync):
    """Whether ZeRO stage ``zero`` can sync its gradients that way: ZeRO-0/1 once a step (``gsync`` 0),
    ZeRO-3 every microbatch (1), ZeRO-2 either."""
    if zero == 3:
        return gsync == 1
    return gsync == 0 or zero == 2


@njit(cache=True)
def _enumerate(mv, n, B, s, tps, cps, pps, vps, dps, eps, mbs, zeros, recs, gss, scheds, cfg, starts, write):
    """Fill the rows of ``cfg`` (``CFG_*`` columns) with every valid layout; returns (how many, how many
    groups). A group is the rows of one (tp, cp, pp, dp, ep, microbatch, vp), which differ only in ZeRO
    stage, gradient sync, schedule and recomputation: they are consecutive, group ``j`` the rows
    ``starts[j]`` to ``starts[j + 1]`` (``starts`` holds one more entry than there are groups). With
    ``write`` false it only counts (``cfg`` may then have no rows), so the caller can size ``cfg``.

    Validity: tp·cp·pp·dp = n with dp among the candidates ``dps``, ep | dp and ep | experts,
    dp·mb | B, vp > 1 only with pp > 1, (B/(dp·mb)) % pp == 0 and pp·vp ≤ layers, tp | heads,
    pp ≤ layers, s % 2cp == 0 (cp > 1), the gradient sync valid for the ZeRO stage
    (:func:`grad_sync_valid`) and the schedule for the pipeline (:func:`~.pipeline.schedule_valid`).
    """
    k = 0
    n_groups = 0
    starts[0] = 0
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
                if not contains(dps, dp):
                    continue
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
                            if k > starts[n_groups]:    # the previous group has rows: open a new one
                                n_groups += 1
                            starts[n_groups] = k
                            for zero in zeros:
                                for gs in gss:
                                    if not grad_sync_valid(zero, gs):
                                        continue
                                    for sc in scheds:
                                        if not schedule_valid(sc, pp, vp, m):
                                            continue
                                        for rec in recs:
                                            if not write:
                                                k += 1
                                                continue
                                            cfg[k, CFG_TP] = tp
                                            cfg[k, CFG_CP] = cp
                                            cfg[k, CFG_PP] = pp
                                            cfg[k, CFG_VP] = vp
                                            cfg[k, CFG_DP] = dp
                                            cfg[k, CFG_EP] = ep
                                            cfg[k, CFG_MB] = mb
                                            cfg[k, CFG_ZERO] = zero
                                            cfg[k, CFG_REC] = rec
                                            cfg[k, CFG_GSYNC] = gs
                                            cfg[k, CFG_SCHED] = sc
                                            k += 1
    if k > starts[n_groups]:
        n_groups += 1
    starts[n_groups] = k
    return k, n_groups


@njit(cache=True)
def _search_kernel(mv, c, n, B, s, tps, cps, pps, vps, dps, eps, mbs, zeros, recs, gss, scheds, flash, seqpar,
                   usable_bytes, opt, cfg, res, starts, cols):
    """Enumerate every valid layout into the rows of ``cfg`` (:func:`_enumerate`), then evaluate them
    into the rows of ``res``, a group of rows at a time; returns the number of rows filled. ``res`` keeps
    the result slots ``cols`` (``res[i, j]`` is slot ``cols[j]``), so a search that ranks on a few slots
    need not hold all of them for every layout.

    Each row gets what :func:`_evaluate` computes, from the same three steps: the group's terms
    (:func:`_layout_terms`) once per group, the data-parallel passes (:func:`_dp_passes`) once per ZeRO
    stage and schedule in the group, then :func:`_finish` per row. One thread: sharing the group's
    terms makes a row cost about 50 ns, and on a 2-core machine a parallel loop waited for its second
    thread longer than it saved (2 to 30 ms a search when other work held a core, against 3 ms steady)."""
    k, n_groups = _enumerate(mv, n, B, s, tps, cps, pps, vps, dps, eps, mbs, zeros, recs, gss, scheds, cfg, starts,
                             True)
    n_sched = max(1, int(scheds.max()) + 1) if scheds.size else 1
    n_var = (int(zeros.max()) + 1) * n_sched if zeros.size else 1
    g = np.empty(G_NVEC)
    d = np.empty((n_var, N_DP_PASSES))
    done = np.zeros(n_var, dtype=np.bool_)
    row = np.empty(N_RESULTS)
    for j in range(n_groups):
        i0 = starts[j]
        done[:] = False
        tp, cp, pp, vp, dp, ep = cfg[i0, CFG_TP], cfg[i0, CFG_CP], cfg[i0, CFG_PP], cfg[i0, CFG_VP], cfg[i0, CFG_DP], \
            cfg[i0, CFG_EP]
        _layout_terms(mv, c, B, s, tp, cp, pp, vp, dp, ep, cfg[i0, CFG_MB], flash, seqpar, g)
        for i in range(i0, starts[j + 1]):
            zero, sched = int(cfg[i, CFG_ZERO]), int(cfg[i, CFG_SCHED])
            v = zero * n_sched + sched
            if not done[v]:
                _dp_passes(c, g, tp, cp, dp, ep, zero, sched, d[v])
                done[v] = True
            _finish(mv, c, g, d[v], B, s, tp, cp, pp, vp, dp, ep, zero, int(cfg[i, CFG_REC]), int(cfg[i, CFG_GSYNC]),
                    sched, flash, usable_bytes, opt, row)
            for q in range(cols.shape[0]):
                res[i, q] = row[cols[q]]
    return k


@njit(cache=True)
def _evaluate_rows(mv, c, B, s, cfg, flash, seqpar, usable_bytes, opt, res):
    """:func:`_evaluate` of each row of ``cfg`` (``CFG_*`` columns) into the same row of ``res``."""
    for i in range(cfg.shape[0]):
        _evaluate(mv, c, B, s, cfg[i, CFG_TP], cfg[i, CFG_CP], cfg[i, CFG_PP], cfg[i, CFG_VP], cfg[i, CFG_DP],
                  cfg[i, CFG_EP], cfg[i, CFG_MB], int(cfg[i, CFG_ZERO]), int(cfg[i, CFG_REC]), int(cfg[i, CFG_GSYNC]),
                  int(cfg[i, CFG_SCHED]), flash, seqpar, usable_bytes, opt, res[i])


# -- the public wrappers -----------------------------------------------------------------------------------------
def evaluate_layout(mv: np.ndarray, cv: np.ndarray, B: int, s: int, tp: int, cp: int, pp: int, vp: int, dp: int,
                    ep: int, microbatch: int, zero_stage: int, rec: int, flash: bool, seqpar: bool,
                    usable_bytes: float, opt: np.ndarray, grad_sync: int | None = None, schedule: int = 0) -> np.ndarray:
    """The result vector (``R_*`` slots, :data:`~.slots.RESULT_FIELDS`) of one layout.

    ``mv``, ``cv``: :func:`~.slots.model_vector`, :func:`~.slots.chip_vector`; ``B`` sequences of
    ``s`` tokens a step; ``rec`` the index of the recompute mode in RECOMPUTE; ``usable_bytes`` the
    HBM a chip may fill (bytes); ``opt`` the run's options (:func:`~.slots.options_vector`);
    ``grad_sync`` the index in GRAD_SYNC (default: every microbatch from ZeRO-2 on, else once a step);
    ``schedule`` the index in SCHEDULES (default 1F1B).
    The caller has checked that the layout is valid (:func:`accelbook.training.estimate` does).
    """
    gsync = (1 if zero_stage >= 2 else 0) if grad_sync is None else int(grad_sync)
    out = np.empty(N_RESULTS)
    _evaluate(mv, cv, float(B), float(s), float(tp), float(cp), float(pp), float(vp), float(dp), float(ep),
              float(microbatch), zero_stage, rec, gsync, int(schedule), bool(flash), bool(seqpar), float(usable_bytes),
              np.ascontiguousarray(opt, dtype=np.float64), out)
    return out


def evaluate_layouts(mv: np.ndarray, cv: np.ndarray, n: int, B: int, s: int, space: dict[str, np.ndarray],
                     flash: bool, seqpar: bool, usable_bytes: float, opt: np.ndarray,
                     fields: tuple[int, ...] | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Every valid layout of the candidate values ``space`` (:func:`accelbook.training.search_space`)
    on ``n`` chips: (config rows, ``CFG_*`` columns; result rows, ``R_*`` columns), in enumeration order.
    ``fields``: the ``R_*`` slots to keep, in that order (default all, the ``R_*`` columns); the
    values are the same, a search that ranks on a few keeps less memory (:func:`evaluate_rows` then
    gives the full rows of the layouts it picks)."""
    lists = (space["tp"], space["cp"], space["pp"], space["vp"], space["dp"], space["ep"], space["microbatch"],
             space["zero_stage"], space["recompute"], space["grad_sync"], space["schedule"])
    # groups of rows: one per (tp, cp, pp, vp, ep, microbatch) at most, dp following from tp·cp·pp
    starts = np.zeros(int(np.prod([len(space[k]) for k in ("tp", "cp", "pp", "vp", "ep", "microbatch")])) + 1,
                      dtype=np.int64)
    # count first, then fill arrays of exactly that many rows (every row is written: no zeroing needed)
    k, _ = _enumerate(mv, float(n), float(B), float(s), *lists, np.empty((0, len(CONFIG_FIELDS))), starts, False)
    cols = np.arange(N_RESULTS, dtype=np.int64) if fields is None else np.array(fields, dtype=np.int64)
    if cols.ndim != 1 or ((cols < 0) | (cols >= N_RESULTS)).any():
        raise ValueError(f"fields must be result slots in [0, {N_RESULTS}), got {fields!r}")
    cfg = np.empty((k, len(CONFIG_FIELDS)), dtype=np.float64)
    res = np.empty((k, len(cols)))
    filled = _search_kernel(mv, cv, float(n), float(B), float(s), *lists, bool(flash), bool(seqpar), float(usable_bytes),
                            np.ascontiguousarray(opt, dtype=np.float64), cfg, res, starts, cols)
    assert filled == k
    return cfg, res


def evaluate_rows(mv: np.ndarray, cv: np.ndarray, B: int, s: int, cfg: np.ndarray, flash: bool, seqpar: bool,
                  usable_bytes: float, opt: np.ndarray) -> np.ndarray:
    """The result rows (``R_*`` columns) of the layouts ``cfg`` (rows of :func:`evaluate_layouts`' configs:
    valid layouts, ``CFG_*`` columns), as :func:`evaluate_layouts` gives them."""
    cfg = np.ascontiguousarray(cfg, dtype=np.float64).reshape(-1, len(CONFIG_FIELDS))
    res = np.empty((len(cfg), N_RESULTS))
    _evaluate_rows(mv, cv, float(B), float(s), cfg, bool(flash), bool(seqpar), float(usable_bytes),
                   np.ascontiguousarray(opt, dtype=np.float64), res)
    return res
