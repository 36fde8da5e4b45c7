"""One layout's row of results, from terms its search group shares (:mod:`.kernel` runs them).

A search group is the layouts of one (tp, cp, pp, dp, ep, microbatch, vp): they differ only in ZeRO
stage, gradient sync, pipeline schedule and recomputation. :func:`layout_terms` fills what the group
shares (``G_*`` slots), :func:`dp_passes` the data-parallel passes of one ZeRO stage and schedule, and
:func:`finish_row` one row's result slots (``R_*``) from them; :func:`memory_slots` is the row's memory
alone. :func:`step_floor` is a lower bound on the step time of a group's rows, from the same terms, that
lets a search skip rows that cannot rank (:func:`~.kernel.rank_layouts`).

All are ``@njit`` helpers of the kernels of :mod:`.kernel`; every formula lives in :mod:`.compute`,
:mod:`.communication`, :mod:`.pipeline` or :mod:`.memory`. The six large ones (``layout_terms``,
``dp_passes``, ``memory_slots``, ``count_fitting``, ``step_floor``, ``finish_row``) are compiled once and
called, not inlined into every kernel: inlined, a fresh install spent about 100 s compiling the search
(69 s for the ranking kernel, 30 s for the full one), called 34 s, at the same speed once compiled
(search and scaling dashboards' p95 alike within 1 %); the small ones are inlined.
"""

from __future__ import annotations

from numba import njit

from accelbook.costs.elementwise import kv_heads_per_chip

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
from .pipeline import bubble_time, microbatch_time, microbatches_in_flight, stage_layers
from .slots import (
    C_HBMBW,
    C_OVL,
    C_PEAK,
    M_FLOP_CAUSAL,
    M_KV,
    M_L,
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

#: the layout terms (``G_*`` slots, :func:`layout_terms`): what a layout's step shares between the rows of a
#: search that differ only in ZeRO stage, gradient sync, pipeline schedule and recomputation
(G_T, G_SP, G_M, G_LST, G_LLAST, G_KV, G_TG, G_TA, G_TAMEM, G_TE, G_TFWD, G_TBWD, G_TROUTED, G_DFF, G_THEAD,
 G_TP_PASS, G_CP_PASS, G_TEP, G_PERM, G_IMB, G_TPP, G_PNE, G_PE, G_NVEC) = range(24)
#: the data-parallel passes (:func:`~.communication.data_parallel_collectives`), one set per ZeRO stage and schedule
N_DP_PASSES = 4


@njit(cache=True)
def layout_terms(mv, c, B, s, tp, cp, pp, vp, dp, ep, mb, flash, seqpar, g):
    """Fill ``g`` (``G_*`` slots) with the terms of a layout that do not depend on its ZeRO stage,
    gradient sync, schedule or recomputation: the microbatch's tokens ``T``, sequence-parallel split,
    microbatches ``m``, stage layers, K/V heads per chip, one layer's forward and backward times
    (:func:`~.compute.layer_pass_times`), the LM head, one tensor- and one context-parallel pass, the
    expert all-to-all, MoE permutation and imbalance (forward), the pipeline sends and the parameters of
    the busiest stage. Arguments as :func:`~.kernel._evaluate`'s."""
    L = mv[M_L]
    T = mb * s / cp                           # tokens of a microbatch on one chip
    sp = tp if seqpar else 1.0                # sequence parallelism splits norms/residuals by tp
    Lst, L_last = stage_layers(L, pp)
    kv_loc = kv_heads_per_chip(mv[M_KV], tp)
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
def held_params(g, sched):
    """(non-expert, expert) parameters a chip of the busiest stage holds before ZeRO: the stage's
    (``G_PNE``, ``G_PE``); DualPipe (``sched`` 2) holds two stages' parameters, one per direction."""
    if sched == 2:
        return 2.0 * g[G_PNE], 2.0 * g[G_PE]
    return g[G_PNE], g[G_PE]


@njit(cache=True, inline="always")
def dp_groups(dp, cp, ep):
    """(ranks holding the same non-expert weights, ranks holding the same experts): ``(dp·cp, dp·cp/ep)``,
    the first at rank stride tp, the second at stride tp·cp·ep (:func:`~.communication.data_parallel_collectives`)."""
    return dp * cp, dp * cp / ep


@njit(cache=True)
def dp_passes(c, g, tp, cp, dp, ep, zero, sched, d):
    """Fill ``d`` with the data-parallel passes (t_rs, t_ag, t_bk_rs, t_bk_ag) of a layout whose terms
    are ``g`` at ZeRO stage ``zero`` and schedule ``sched`` (:func:`~.communication.data_parallel_collectives`)."""
    p_ne, p_e = held_params(g, sched)
    g_ne, g_e = dp_groups(dp, cp, ep)
    d[0], d[1], d[2], d[3] = data_parallel_collectives(c, p_ne, p_e, g_ne, g_e, tp, cp, ep, zero)


@njit(cache=True, inline="always")
def optimizer_time(c, g, cp, dp, ep, zero, sched):
    """The Adam step (s) of the busiest stage's chip: :func:`~.memory.optimizer_step_bytes` per parameter
    it updates (:func:`~.memory.optimizer_params`), at the achievable HBM bandwidth."""
    p_ne, p_e = held_params(g, sched)
    g_ne, g_e = dp_groups(dp, cp, ep)
    return optimizer_step_bytes(c) * optimizer_params(p_ne, p_e, g_ne, g_e, zero) / c[C_HBMBW]


@njit(cache=True, inline="always")
def state_bytes(c, g, cp, dp, ep, zero, gsync, sched):
    """(weights, gradients, optimizer states) bytes a chip of the busiest stage holds at ZeRO stage
    ``zero``, gradient sync ``gsync`` and schedule ``sched`` (:func:`~.memory.model_state_bytes`)."""
    p_ne, p_e = held_params(g, sched)
    g_ne, g_e = dp_groups(dp, cp, ep)
    p_opt = optimizer_params(p_ne, p_e, g_ne, g_e, zero)
    return model_state_bytes(c, p_ne, p_e, g_ne, g_e, zero, gsync, p_opt)


@njit(cache=True, inline="always")
def activation_state(mv, g, s, tp, pp, vp, rec, sched, flash):
    """(activation bytes on the first stage, microbatches in flight) of a row with recomputation ``rec``
    and schedule ``sched`` (:func:`~.memory.activation_bytes`)."""
    T, sp, Lst = g[G_T], g[G_SP], g[G_LST]
    in_flight = microbatches_in_flight(g[G_M], pp, vp, sched)
    mem_a = activation_bytes(mv, T, Lst, sp, activation_bytes_per_token(mv, s, tp, sp, g[G_KV], rec, flash),
                             in_flight, rec)
    return mem_a, in_flight


@njit(cache=True)
def memory_slots(mv, c, g, s, tp, cp, pp, vp, dp, ep, zero, rec, gsync, sched, flash, usable_bytes, out):
    """Write a row's memory slots (``R_MEM_*``, ``R_MEMORY_PER_CHIP_BYTES``, ``R_FITS``) into ``out``
    and return the bytes per chip; arguments as :func:`finish_row`'s (memory needs no time)."""
    mem_w, mem_g, mem_o = state_bytes(c, g, cp, dp, ep, zero, gsync, sched)
    mem_a, in_flight = activation_state(mv, g, s, tp, pp, vp, rec, sched, flash)
    mem_l = logits_bytes(mv, g[G_T], tp)
    total = memory_per_chip(mem_w, mem_g, mem_o, mem_a, mem_l, in_flight, pp)
    out[R_MEM_WEIGHTS_BYTES] = mem_w
    out[R_MEM_GRADS_BYTES] = mem_g
    out[R_MEM_OPTIMIZER_BYTES] = mem_o
    out[R_MEM_ACTIVATIONS_BYTES] = mem_a
    out[R_MEM_LOGITS_BYTES] = mem_l
    out[R_MEMORY_PER_CHIP_BYTES] = total
    out[R_FITS] = 1.0 if total <= usable_bytes else 0.0
    return total


@njit(cache=True)
def count_fitting(mv, c, g, s, tp, cp, pp, vp, dp, ep, var, nv, flash, usable_bytes, act, act_done):
    """How many of a group's rows ``var[:nv]`` (:func:`~.kernel.variants`: ZeRO stage, gradient sync,
    schedule, recompute) fit: :func:`memory_slots`' total of each row against ``usable_bytes``, from the
    same functions, with the model states computed once per run of rows sharing (ZeRO stage, gradient
    sync, schedule) and the activations once per (recompute, schedule) (``act``, ``act_done``: scratch
    indexed by recompute and schedule)."""
    mem_l = logits_bytes(mv, g[G_T], tp)
    act_done[:, :] = False
    n_fit = 0
    mem_w, mem_g, mem_o = 0.0, 0.0, 0.0
    for q in range(nv):
        zero, gs, sc, rec = var[q, 0], var[q, 1], var[q, 2], var[q, 3]
        if q == 0 or zero != var[q - 1, 0] or gs != var[q - 1, 1] or sc != var[q - 1, 2]:
            mem_w, mem_g, mem_o = state_bytes(c, g, cp, dp, ep, zero, gs, sc)
        if not act_done[rec, sc]:
            act[rec, sc, 0], act[rec, sc, 1] = activation_state(mv, g, s, tp, pp, vp, rec, sc, flash)
            act_done[rec, sc] = True
        if memory_per_chip(mem_w, mem_g, mem_o, act[rec, sc, 0], mem_l, act[rec, sc, 1], pp) <= usable_bytes:
            n_fit += 1
    return n_fit


@njit(cache=True)
def step_floor(mv, c, g, tp, cp, pp, vp, sched, opt, t_bk, t_opt):
    """A lower bound on the step time (s) of every row of a group (terms ``g``) with schedule ``sched``,
    whatever its recomputation and gradient sync: :func:`finish_row`'s step with each term that is at
    least 0 there (recomputation, the exposed data-parallel time, the overlap slowdowns, DualPipe's
    exposed all-to-all) set to 0, and the tensor- and context-parallel times at their least (no
    recomputation), the MoE permutation and imbalance at theirs. ``t_bk``, ``t_opt``: the row's last
    bucket and optimizer step (0 for a bound over every ZeRO stage). Each sum keeps :func:`finish_row`'s
    order and IEEE rounding is monotone, so the bound never exceeds the step it bounds (a test checks
    every row of several searches)."""
    t_fwd, t_bwd, t_g, Lst = g[G_TFWD], g[G_TBWD], g[G_TG], g[G_LST]
    t_tp, _ = tensor_parallel_time(g[G_TP_PASS], tp, 0, opt[O_TP_OVERLAP])
    t_cp, _ = context_parallel_time(g[G_CP_PASS], cp, g[G_TA], 0, opt[O_CP_ALLGATHER])
    t_ep = 0.0 if sched == 2 else g[G_TEP]
    t_layer = t_fwd + t_bwd + 0.0 + t_tp + t_cp + t_ep + 2.0 * g[G_PERM] + 3.0 * g[G_IMB] + 0.0
    t_pp = 0.0 + c[C_OVL] * g[G_TPP] if sched == 2 else g[G_TPP]
    t_mb = microbatch_time(mv[M_L], Lst, g[G_LLAST], pp, t_layer, g[G_THEAD], t_pp)
    bubble = bubble_time(pp, vp, t_mb, Lst * (t_bwd - t_g + 0.0), Lst * t_g, sched)
    return g[G_M] * t_mb + bubble + 0.0 + t_bk + t_opt + 0.0


@njit(cache=True)
def finish_row(mv, c, g, d, B, s, tp, cp, pp, vp, dp, ep, zero, rec, gsync, sched, flash, usable_bytes, opt, out):
    """Fill ``out`` (the ``R_*`` slots) for one layout from its terms ``g`` (:func:`layout_terms`) and
    data-parallel passes ``d`` (:func:`dp_passes`); the other arguments as :func:`~.kernel._evaluate`'s.

    One layer, one microbatch: ``t_perm = n·t_permute`` and ``t_imb = (n + 1)·t_imbalance`` with n = 2
    passes (forward, backward), 3 under full recomputation (the forward again); DualPipe hides
    ``h_ep = min(t_ep, t_fwd + t_bwd + t_rec)`` of the all-to-all and all the pipeline sends, which cost
    ``σ·t_pp`` instead. The bubble (:func:`~.pipeline.bubble_time`) takes ``t_b = L_st·(t_bwd - t_g + t_rec)``
    and ``t_w = L_st·t_g`` (the weight gradients, as long as the forward GEMMs). Data parallelism
    (:func:`~.communication.data_parallel_times`) hides behind ``t_layers = L_st·t_layer``, a forward
    ``L_st·(t_fwd + t_tp/2)`` and a backward ``L_st·(t_bwd + t_rec + t_tp/2)`` of the busiest stage, and what
    hides costs ``σ·(t_dp_total - t_dp - t_bk)``. The per-step time slots are an average stage's:
    ``m·L/pp`` layer passes of ``3·t_g`` (GEMMs), ``3.5·t_a + 3·t_a_mem`` (attention), ``3·t_e``, ``t_rec``,
    ``t_tp``, ``t_cp``, ``t_ep``, ``t_perm``, ``t_imb``; ``m·t_head/pp``; ``m·t_pp``; and the stage
    imbalance ``m·max(0, t_mb - t_pp - σ·t_pp(DualPipe) - (L/pp)·t_layer - t_head/pp)``.

    Length: one function on purpose. Each stage feeds the next (a layer's time sets the microbatch's,
    which sets the bubble and the windows data parallelism hides behind) and the result slots are
    written from the same locals; every formula lives in :mod:`.compute`, :mod:`.communication`,
    :mod:`.pipeline` or :mod:`.memory`, and this function only puts them together."""
    for i in range(out.shape[0]):
        out[i] = 0.0
    L = mv[M_L]
    T, sp, m, Lst, L_last = g[G_T], g[G_SP], g[G_M], g[G_LST], g[G_LLAST]
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
    t_dp, t_bk, t_dp_total = data_parallel_times(d[0], d[1], d[2], d[3], zero, gsync, m, Lst * t_layer,
                                                 Lst * (t_fwd + t_tp / 2.0), Lst * (t_bwd + t_rec + t_tp / 2.0))
    t_ovl_dp = c[C_OVL] * max(0.0, t_dp_total - t_dp - t_bk)   # the hidden part slows what hides it
    t_opt = optimizer_time(c, g, cp, dp, ep, zero, sched)
    step = m * t_mb + bubble + t_dp + t_bk + t_opt + t_ovl_dp
    memory_slots(mv, c, g, s, tp, cp, pp, vp, dp, ep, zero, rec, gsync, sched, flash, usable_bytes, out)
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
    out[R_MFU] = tokens * mv[M_FLOP_CAUSAL] / (n * c[C_PEAK] * step)
    out[R_HFU] = out[R_MFU] * (1.0 + ((1.0 / 3.0) if rec == 2 else 0.0))   # full recomputation: 4 passes, not 3
    out[R_TOKENS_PER_S_PER_CHIP] = tokens / step / n
    out[R_N_MICROBATCHES] = m
    out[R_T_DP_TOTAL_S] = t_dp_total
