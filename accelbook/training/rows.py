"""One layout's row of results, from terms its search group shares (:mod:`.kernel` runs them).

A search group is the layouts of one (tp, cp, pp, dp, ep, microbatch, vp): they differ only in ZeRO
stage, gradient sync, pipeline schedule and recomputation. :func:`layout_terms` fills what the group
shares (a :data:`TERMS` record), :func:`dp_passes` the data-parallel passes of one ZeRO stage and schedule, and
:func:`finish_row` one row's result record (:data:`~.records.RESULT`) from them; :func:`memory_fields` is the row's memory
alone. :func:`step_floor` is a lower bound on the step time of a group's rows, from the same terms, that
lets a search skip rows that cannot rank (:func:`~.kernel.rank_layouts`).

All are ``@njit`` helpers of the kernels of :mod:`.kernel`; every formula lives in :mod:`.compute`,
:mod:`.communication`, :mod:`.pipeline` or :mod:`.memory`. The six large ones (``layout_terms``,
``dp_passes``, ``memory_fields``, ``count_fitting``, ``step_floor``, ``finish_row``) are compiled once and
called, not inlined into every kernel: inlined, a fresh install spent about 100 s compiling the search
(69 s for the ranking kernel, 30 s for the full one), called 34 s, at the same speed once compiled
(search and scaling dashboards' p95 alike within 1 %); the small ones are inlined.
"""

from __future__ import annotations

import numpy as np
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
from .records import record_dtype

#: the layout terms (:func:`layout_terms`): what a layout's step shares between the rows of a search that differ
#: only in ZeRO stage, gradient sync, pipeline schedule and recomputation. One microbatch on one chip: its
#: ``tokens`` T, the sequence-parallel split, the microbatches of a step, the busiest and the last stage's layers,
#: K/V heads per chip; one layer's times (forward GEMMs, attention FLOPs and score traffic, elementwise, the
#: forward and backward passes, the routed experts' GEMMs), the routed FFN width, the LM head, one tensor- and one
#: context-parallel pass, the expert all-to-all, MoE permutation and imbalance (forward), the pipeline sends; the
#: busiest stage's non-expert and expert parameters per chip
TERMS = record_dtype((
    "tokens", "seq_split", "n_microbatches", "stage_layers", "last_stage_layers", "kv_heads_per_chip", "t_gemm_s",
    "t_attention_s", "t_attention_mem_s", "t_elementwise_s", "t_fwd_s", "t_bwd_s", "t_routed_s", "routed_ffn_width",
    "t_head_s", "t_tp_pass_s", "t_cp_pass_s", "t_ep_s", "t_permute_s", "t_imbalance_s", "t_pp_s",
    "stage_params_non_expert", "stage_params_expert",
))
#: the data-parallel passes (:func:`~.communication.data_parallel_collectives`), one set per ZeRO stage and
#: schedule: the gradients' reduce-scatter and the parameters' all-gather, whole and of one DDP bucket
DP_PASSES = record_dtype(("t_rs_s", "t_ag_s", "t_bucket_rs_s", "t_bucket_ag_s"))
#: what the rows of a search group differ in (:func:`~.kernel.variants`): ZeRO stage, gradient sync, schedule
#: and recomputation, each as its index (``GRAD_SYNC``, ``SCHEDULES``, ``RECOMPUTE`` of :mod:`.records`)
VARIANT = record_dtype(("zero_stage", "grad_sync", "schedule", "recompute"), np.int64)


@njit(cache=True)
def layout_terms(mv, c, B, s, tp, cp, pp, vp, dp, ep, mb, flash, seqpar, g):
    """Fill ``g`` (a :data:`TERMS` record) with the terms of a layout that do not depend on its ZeRO stage,
    gradient sync, schedule or recomputation: the microbatch's tokens ``T``, sequence-parallel split,
    microbatches ``m``, stage layers, K/V heads per chip, one layer's forward and backward times
    (:func:`~.compute.layer_pass_times`), the LM head, one tensor- and one context-parallel pass, the
    expert all-to-all, MoE permutation and imbalance (forward), the pipeline sends and the parameters of
    the busiest stage. Arguments as :func:`~.kernel._evaluate`'s."""
    L = mv.n_layers
    T = mb * s / cp                           # tokens of a microbatch on one chip
    sp = tp if seqpar else 1.0                # sequence parallelism splits norms/residuals by tp
    Lst, L_last = stage_layers(L, pp)
    kv_loc = kv_heads_per_chip(mv.kv_heads, tp)
    t_g, t_a, t_a_mem, t_e, t_fwd, t_bwd, t_routed, dff_eff = layer_pass_times(mv, c, T, s, tp, cp, ep, mb, sp,
                                                                               kv_loc, flash)
    g.tokens, g.seq_split, g.n_microbatches = T, sp, B / (dp * mb)
    g.stage_layers, g.last_stage_layers, g.kv_heads_per_chip = Lst, L_last, kv_loc
    g.t_gemm_s, g.t_attention_s, g.t_attention_mem_s = t_g, t_a, t_a_mem
    g.t_elementwise_s, g.t_fwd_s, g.t_bwd_s = t_e, t_fwd, t_bwd
    g.t_routed_s, g.routed_ffn_width = t_routed, dff_eff
    g.t_head_s = lm_head_time(mv, c, T, tp)
    g.t_tp_pass_s = tensor_parallel_pass(mv, c, T, tp)
    g.t_cp_pass_s = context_parallel_pass(mv, c, T, tp, cp, kv_loc)
    g.t_ep_s = expert_all_to_all_time(mv, c, T, tp, cp, ep)
    g.t_permute_s = moe_permute_time(mv, c, T)
    g.t_imbalance_s = imbalance_time(mv, ep, t_routed)
    g.t_pp_s = pipeline_send_time(mv, c, T, tp, cp, dp, pp, vp, sp)
    g.stage_params_non_expert, g.stage_params_expert = stage_params(mv, L, Lst, L_last, pp, tp, ep)


@njit(cache=True, inline="always")
def held_params(g, sched):
    """(non-expert, expert) parameters a chip of the busiest stage holds before ZeRO: the stage's
    (``stage_params_non_expert``, ``stage_params_expert``); DualPipe (``sched`` 2) holds two stages' parameters,
    one per direction."""
    if sched == 2:
        return 2.0 * g.stage_params_non_expert, 2.0 * g.stage_params_expert
    return g.stage_params_non_expert, g.stage_params_expert


@njit(cache=True, inline="always")
def dp_groups(dp, cp, ep):
    """(ranks holding the same non-expert weights, ranks holding the same experts): ``(dp·cp, dp·cp/ep)``,
    the first at rank stride tp, the second at stride tp·cp·ep (:func:`~.communication.data_parallel_collectives`)."""
    return dp * cp, dp * cp / ep


@njit(cache=True)
def dp_passes(c, g, tp, cp, dp, ep, zero, sched, d):
    """Fill ``d`` (a :data:`DP_PASSES` record) with the data-parallel passes of a layout whose terms are ``g``
    at ZeRO stage ``zero`` and schedule ``sched`` (:func:`~.communication.data_parallel_collectives`; ZeRO-3 in
    one collective per layer the chip holds: the stage's, two stages' under DualPipe)."""
    p_ne, p_e = held_params(g, sched)
    g_ne, g_e = dp_groups(dp, cp, ep)
    n_units = (2.0 if sched == 2 else 1.0) * g.stage_layers    # ZeRO-3 gathers layer by layer
    d.t_rs_s, d.t_ag_s, d.t_bucket_rs_s, d.t_bucket_ag_s = data_parallel_collectives(c, p_ne, p_e, g_ne, g_e, tp, cp,
                                                                                     ep, zero, n_units)


@njit(cache=True, inline="always")
def optimizer_time(c, g, cp, dp, ep, zero, sched):
    """The Adam step (s) of the busiest stage's chip: :func:`~.memory.optimizer_step_bytes` per parameter
    it updates (:func:`~.memory.optimizer_params`), at the achievable HBM bandwidth."""
    p_ne, p_e = held_params(g, sched)
    g_ne, g_e = dp_groups(dp, cp, ep)
    return optimizer_step_bytes(c) * optimizer_params(p_ne, p_e, g_ne, g_e, zero) / c.hbm_bw_bytes_per_s


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
    T, sp, Lst = g.tokens, g.seq_split, g.stage_layers
    in_flight = microbatches_in_flight(g.n_microbatches, pp, vp, sched)
    mem_a = activation_bytes(mv, T, Lst, sp, activation_bytes_per_token(mv, s, tp, sp, g.kv_heads_per_chip, rec, flash),
                             in_flight, rec)
    return mem_a, in_flight


@njit(cache=True)
def memory_fields(mv, c, g, s, tp, cp, pp, vp, dp, ep, zero, rec, gsync, sched, flash, usable_bytes, out):
    """Write a row's memory fields (``mem_*_bytes``, ``memory_per_chip_bytes``, ``fits``) into ``out``
    and return the bytes per chip; arguments as :func:`finish_row`'s (memory needs no time)."""
    mem_w, mem_g, mem_o = state_bytes(c, g, cp, dp, ep, zero, gsync, sched)
    mem_a, in_flight = activation_state(mv, g, s, tp, pp, vp, rec, sched, flash)
    mem_l = logits_bytes(mv, g.tokens, tp)
    total = memory_per_chip(mem_w, mem_g, mem_o, mem_a, mem_l, in_flight, pp)
    out.mem_weights_bytes = mem_w
    out.mem_grads_bytes = mem_g
    out.mem_optimizer_bytes = mem_o
    out.mem_activations_bytes = mem_a
    out.mem_logits_bytes = mem_l
    out.memory_per_chip_bytes = total
    out.fits = 1.0 if total <= usable_bytes else 0.0
    return total


@njit(cache=True)
def count_fitting(mv, c, g, s, tp, cp, pp, vp, dp, ep, var, nv, flash, usable_bytes, act_bytes, act_in_flight,
                  act_done):
    """How many of a group's rows ``var[:nv]`` (:data:`VARIANT` records, :func:`~.kernel.variants`) fit:
    :func:`memory_fields`' total of each row against ``usable_bytes``, from the same functions, with the
    model states computed once per run of rows sharing (ZeRO stage, gradient sync, schedule) and the
    activations once per (recompute, schedule) (``act_bytes``, ``act_in_flight``, ``act_done``: scratch indexed
    by recompute and schedule, :func:`activation_state`'s two numbers)."""
    mem_l = logits_bytes(mv, g.tokens, tp)
    act_done[:, :] = False
    n_fit = 0
    mem_w, mem_g, mem_o = 0.0, 0.0, 0.0
    for q in range(nv):
        zero, gs, sc, rec = var[q].zero_stage, var[q].grad_sync, var[q].schedule, var[q].recompute
        if q == 0 or zero != var[q - 1].zero_stage or gs != var[q - 1].grad_sync or sc != var[q - 1].schedule:
            mem_w, mem_g, mem_o = state_bytes(c, g, cp, dp, ep, zero, gs, sc)
        if not act_done[rec, sc]:
            act_bytes[rec, sc], act_in_flight[rec, sc] = activation_state(mv, g, s, tp, pp, vp, rec, sc, flash)
            act_done[rec, sc] = True
        if memory_per_chip(mem_w, mem_g, mem_o, act_bytes[rec, sc], mem_l, act_in_flight[rec, sc], pp) <= usable_bytes:
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
    t_fwd, t_bwd, t_g, Lst = g.t_fwd_s, g.t_bwd_s, g.t_gemm_s, g.stage_layers
    t_tp, _ = tensor_parallel_time(g.t_tp_pass_s, tp, 0, opt.tp_overlap)
    t_cp, _ = context_parallel_time(g.t_cp_pass_s, cp, g.t_attention_s, 0, opt.cp_allgather)
    t_ep = 0.0 if sched == 2 else g.t_ep_s
    t_layer = t_fwd + t_bwd + 0.0 + t_tp + t_cp + t_ep + 2.0 * g.t_permute_s + 3.0 * g.t_imbalance_s + 0.0
    t_pp = 0.0 + c.overlap_slowdown * g.t_pp_s if sched == 2 else g.t_pp_s
    t_mb = microbatch_time(mv.n_layers, Lst, g.last_stage_layers, pp, t_layer, g.t_head_s, t_pp)
    bubble = bubble_time(pp, vp, t_mb, Lst * (t_bwd - t_g + 0.0), Lst * t_g, sched)
    return g.n_microbatches * t_mb + bubble + 0.0 + t_bk + t_opt + 0.0


@njit(cache=True)
def finish_row(mv, c, g, d, B, s, tp, cp, pp, vp, dp, ep, zero, rec, gsync, sched, flash, usable_bytes, opt, out):
    """Fill ``out`` (a :data:`~.records.RESULT` record) for one layout from its terms ``g`` (:func:`layout_terms`) and
    data-parallel passes ``d`` (:func:`dp_passes`); the other arguments as :func:`~.kernel._evaluate`'s.

    One layer, one microbatch: ``t_perm = n·t_permute`` and ``t_imb = (n + 1)·t_imbalance`` with n = 2
    passes (forward, backward), 3 under full recomputation (the forward again); DualPipe hides
    ``h_ep = min(t_ep, t_fwd + t_bwd + t_rec)`` of the all-to-all and all the pipeline sends, which cost
    ``σ·t_pp`` instead. The bubble (:func:`~.pipeline.bubble_time`) takes ``t_b = L_st·(t_bwd - t_g + t_rec)``
    and ``t_w = L_st·t_g`` (the weight gradients, as long as the forward GEMMs). Data parallelism
    (:func:`~.communication.data_parallel_times`) hides behind ``t_layers = L_st·t_layer``, a forward
    ``L_st·(t_fwd + t_tp/2)`` and a backward ``L_st·(t_bwd + t_rec + t_tp/2)`` of the busiest stage, and what
    hides costs ``σ·(t_dp_total - t_dp - t_bk)``. The per-step time fields are an average stage's:
    ``m·L/pp`` layer passes of ``3·t_g`` (GEMMs), ``3.5·t_a + 3·t_a_mem`` (attention), ``3·t_e``, ``t_rec``,
    ``t_tp``, ``t_cp``, ``t_ep``, ``t_perm``, ``t_imb``; ``m·t_head/pp``; ``m·t_pp``; and the stage
    imbalance ``m·max(0, t_mb - t_pp - σ·t_pp(DualPipe) - (L/pp)·t_layer - t_head/pp)``.

    Length: one function on purpose. Each stage feeds the next (a layer's time sets the microbatch's,
    which sets the bubble and the windows data parallelism hides behind) and the result fields are
    written from the same locals; every formula lives in :mod:`.compute`, :mod:`.communication`,
    :mod:`.pipeline` or :mod:`.memory`, and this function only puts them together."""
    L = mv.n_layers
    T, sp, m, Lst, L_last = g.tokens, g.seq_split, g.n_microbatches, g.stage_layers, g.last_stage_layers
    t_g, t_a, t_a_mem = g.t_gemm_s, g.t_attention_s, g.t_attention_mem_s
    t_e, t_fwd, t_bwd = g.t_elementwise_s, g.t_fwd_s, g.t_bwd_s
    # ---- one layer, one microbatch: compute, then the communication it exposes
    t_rec = recompute_time(mv, c, T, tp, sp, g.routed_ffn_width, rec, flash, t_fwd, t_a, t_a_mem)
    t_head = g.t_head_s
    t_tp, h_tp = tensor_parallel_time(g.t_tp_pass_s, tp, rec, opt.tp_overlap)
    t_cp, h_cp = context_parallel_time(g.t_cp_pass_s, cp, t_a, rec, opt.cp_allgather)
    t_ep = g.t_ep_s
    # MoE: permutation (forward, backward, and the recomputed forward) and the busiest rank's extra GEMMs
    n_fwd = 1.0 if rec == 2 else 0.0
    t_perm = (2.0 + n_fwd) * g.t_permute_s
    t_imb = (3.0 + n_fwd) * g.t_imbalance_s
    h_ep = 0.0
    if sched == 2:   # DualPipe hides the all-to-all behind the other direction's compute
        h_ep = min(t_ep, t_fwd + t_bwd + t_rec)
        t_ep -= h_ep
    t_ovl_layer = c.overlap_slowdown * (h_tp + h_cp + h_ep)    # compute slowed by the communication hidden behind it
    t_layer = t_fwd + t_bwd + t_rec + t_tp + t_cp + t_ep + t_perm + t_imb + t_ovl_layer
    # ---- the pipeline
    t_pp = g.t_pp_s
    t_ovl_pp = 0.0
    if sched == 2:   # ... and its sends
        t_ovl_pp = c.overlap_slowdown * t_pp
        t_pp = 0.0
    t_mb = microbatch_time(L, Lst, L_last, pp, t_layer, t_head, t_pp + t_ovl_pp)
    t_w = Lst * t_g                                  # weight-gradient GEMMs of a microbatch on the stage
    bubble = bubble_time(pp, vp, t_mb, Lst * (t_bwd - t_g + t_rec), t_w, sched)
    # ---- data parallelism and the optimizer, on the parameters of the busiest stage
    t_dp, t_bk, t_dp_total = data_parallel_times(d.t_rs_s, d.t_ag_s, d.t_bucket_rs_s, d.t_bucket_ag_s, zero, gsync,
                                                 m, Lst * t_layer, Lst * (t_fwd + t_tp / 2.0),
                                                 Lst * (t_bwd + t_rec + t_tp / 2.0))
    t_ovl_dp = c.overlap_slowdown * max(0.0, t_dp_total - t_dp - t_bk)   # the hidden part slows what hides it
    t_opt = optimizer_time(c, g, cp, dp, ep, zero, sched)
    step = m * t_mb + bubble + t_dp + t_bk + t_opt + t_ovl_dp
    memory_fields(mv, c, g, s, tp, cp, pp, vp, dp, ep, zero, rec, gsync, sched, flash, usable_bytes, out)
    # ---- results: per-step components of the busiest stage (m·L/pp layer passes)
    layer_passes = m * L / pp
    tokens = B * s
    n = tp * cp * pp * dp
    out.step_time_s = step
    out.t_gemm_s = layer_passes * 3.0 * t_g
    out.t_attention_s = layer_passes * (3.5 * t_a + 3.0 * t_a_mem)
    out.t_elementwise_s = layer_passes * 3.0 * t_e
    out.t_recompute_s = layer_passes * t_rec
    out.t_lm_head_s = m * t_head / pp
    out.t_tp_comm_s = layer_passes * t_tp
    out.t_cp_comm_s = layer_passes * t_cp
    out.t_ep_comm_s = layer_passes * t_ep
    out.t_pp_comm_s = m * t_pp
    out.t_bubble_s = bubble
    out.t_dp_comm_s = t_dp
    out.t_dp_bucket_s = t_bk
    out.t_optimizer_s = t_opt
    out.t_permute_s = layer_passes * t_perm
    out.t_imbalance_s = layer_passes * t_imb
    out.t_overlap_s = layer_passes * t_ovl_layer + t_ovl_dp + m * t_ovl_pp
    # the step waits for the busiest stage (⌈L/pp⌉ layers, or the last stage's layers and the LM head);
    # the lines above count an average stage (L/pp layers, the LM head / pp): the difference is its own line
    out.t_stage_imbalance_s = m * max(0.0, t_mb - t_pp - t_ovl_pp - (L / pp) * t_layer - t_head / pp)
    out.mfu = tokens * mv.flop_per_token_causal / (n * c.peak_flop_s * step)
    out.hfu = out.mfu * (1.0 + ((1.0 / 3.0) if rec == 2 else 0.0))   # full recomputation: 4 passes, not 3
    out.tokens_per_s_per_chip = tokens / step / n
    out.n_microbatches = m
    out.t_dp_total_s = t_dp_total
