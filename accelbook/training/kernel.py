"""The training kernels: one layout's results (:func:`_evaluate`) and every layout's (:func:`_search_kernel`).

``_evaluate`` puts the formulas of :mod:`.compute`, :mod:`.communication`, :mod:`.pipeline` and
:mod:`.memory` together for one layout and writes the named result slots (:mod:`.slots`, ``R_*``):

    t_layer = t_fwd + t_bwd + t_rec + t_tp + t_cp + t_ep + t_perm + t_imb + σ·(h_tp + h_cp + h_ep)   (one layer, one microbatch)
    step    = m·t_mb + bubble + t_dp + t_dp_bucket + t_opt + σ·h_dp,  t_opt = 30·Ψ_opt / B_hbm   (Adam)

with ``h_*`` the communication hidden behind compute (``h_ep`` only under DualPipe), σ (``C_OVL``) the
measured slowdown of compute while a collective runs beside it, the bubble that of the schedule
(:func:`~.pipeline.bubble_time`: ``(pp-1)/vp·t_mb`` under 1F1B) and ``h_dp`` the data-parallel traffic
that hides (all of it less the exposed part and the last bucket); :func:`~.rows.finish_row` has each term.
    MFU     = tokens · FLOP_per_token(causal) / (n · P · step),  HFU = MFU · 4/3 under full recomputation

(the ``R_MFU`` slot: causal attention over the peak at the run's precision; :func:`~.step.estimate` reports
MFU with full attention over the bf16 peak, :mod:`.mfu`, and HFU in that convention).

The per-step time components (``t_gemm_s``, ...) are those of an average stage: ``m·L/pp`` layer
passes (forward + backward: ×3 for GEMMs and elementwise, ×3.5 attention FLOPs, ×3 score traffic), and
``t_stage_imbalance_s`` what the busiest stage (``⌈L/pp⌉`` layers, or the last with the LM head) adds,
so that the components sum to the step time.

``_enumerate`` lists the valid layouts and ``_search_kernel`` evaluates them a group at a time: the
rows of one (tp, cp, pp, dp, ep, microbatch, vp) share that layout's terms (:func:`~.rows.layout_terms`) and,
per ZeRO stage and schedule, its data-parallel passes, so only what ZeRO, gradient sync, schedule and
recomputation change is computed per row (:func:`~.rows.finish_row`), by the same functions as for one layout.
A search that wants only the fastest few (``_rank_kernel``) walks the groups fastest first by a lower
bound on their step time (:func:`~.rows.step_floor`) and skips what cannot rank. Every group's terms and
bound (:func:`_group_floors`) and the count of the skipped groups' fitting rows (:func:`_count_pending`)
are split over the threads: on a 2-core machine a 16,384-chip search went from 20 to 12 ms; the walk, whose
threshold each row may lower, stays on one thread. Call them through
:func:`evaluate_layout`, :func:`evaluate_layouts` and :func:`rank_layouts`, which take checked inputs
and return arrays.

The formula helpers of :mod:`.compute` and :mod:`.communication` are ``@njit(inline="always")``: Numba
inlines them into the row helpers of :mod:`.rows` (called separately, each helper that takes the model and
chip vectors costs reference counting; the search ran about 35 % slower). The six large row helpers are
compiled once and called from the kernels, not inlined into each: a fresh install compiles the search in
about 34 s instead of 100 s, and it runs as fast (``rows``' docstring has the figures). Numba's
on-disk cache does not notice a change to a function in another file: after editing a helper, clear
``.numba_cache``.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .pipeline import schedule_valid
from .rows import (
    G_M,
    G_NVEC,
    N_DP_PASSES,
    count_fitting,
    dp_passes,
    finish_row,
    layout_terms,
    memory_slots,
    optimizer_time,
    step_floor,
)
from .slots import (
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
    M_H,
    M_L,
    N_RESULTS,
    R_FITS,
    R_MEMORY_PER_CHIP_BYTES,
    R_STEP_TIME_S,
)


@njit(cache=True)
def _evaluate(mv, c, B, s, tp, cp, pp, vp, dp, ep, mb, zero, rec, gsync, sched, flash, seqpar, usable_bytes, opt, out):
    """Fill ``out`` (the ``R_*`` slots) for one layout. ``B`` = global batch in sequences, ``s`` the
    sequence length; ``zero`` the ZeRO stage, ``rec`` the index in RECOMPUTE, ``gsync`` the index in
    GRAD_SYNC, ``sched`` in SCHEDULES; ``usable_bytes`` the HBM a chip may fill; ``opt`` the run's
    options (``O_*`` slots). Every layout argument is a float except ``zero``, ``rec``, ``gsync`` and ``sched``.
    The layout's terms (:func:`~.rows.layout_terms`), its data-parallel passes (:func:`~.rows.dp_passes`), then the
    step from them (:func:`~.rows.finish_row`): the search runs the same three, sharing the first two between rows."""
    g = np.empty(G_NVEC)
    d = np.empty(N_DP_PASSES)
    layout_terms(mv, c, B, s, tp, cp, pp, vp, dp, ep, mb, flash, seqpar, g)
    dp_passes(c, g, tp, cp, dp, ep, zero, sched, d)
    finish_row(mv, c, g, d, B, s, tp, cp, pp, vp, dp, ep, zero, rec, gsync, sched, flash, usable_bytes, opt, out)


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


@njit(cache=True, inline="always")
def variants(zeros, gss, scheds, recs, pp, vp, m, var):
    """Fill the rows of ``var`` with the (ZeRO stage, gradient sync, schedule, recompute) of each row of a
    group with ``pp`` stages, ``vp`` chunks and ``m`` microbatches, in the search's order; returns how many.
    Valid: the gradient sync for the ZeRO stage (:func:`grad_sync_valid`), the schedule for the
    pipeline (:func:`~.pipeline.schedule_valid`)."""
    q = 0
    for zero in zeros:
        for gs in gss:
            if not grad_sync_valid(zero, gs):
                continue
            for sc in scheds:
                if not schedule_valid(sc, pp, vp, m):
                    continue
                for rec in recs:
                    var[q, 0], var[q, 1], var[q, 2], var[q, 3] = zero, gs, sc, rec
                    q += 1
    return q


@njit(cache=True)
def _enumerate(mv, n, B, s, tps, cps, pps, vps, dps, eps, mbs, zeros, recs, gss, scheds, cfg, starts, grp, write):
    """Fill the rows of ``cfg`` (``CFG_*`` columns) with every valid layout; returns (how many, how many
    groups). A group is the rows of one (tp, cp, pp, dp, ep, microbatch, vp), which differ only in ZeRO
    stage, gradient sync, schedule and recomputation (:func:`variants`): they are consecutive, group
    ``j`` the rows ``starts[j]`` to ``starts[j + 1]`` (``starts`` holds one more entry than there are
    groups), its (tp, cp, pp, vp, dp, ep, microbatch) in the ``CFG_*`` columns of ``grp[j]``. With
    ``write`` false it only counts (``cfg`` may then have no rows), so the caller can size ``cfg``.

    Validity: tp·cp·pp·dp = n with dp among the candidates ``dps``, ep | dp and ep | experts,
    dp·mb | B, vp > 1 only with pp > 1, (B/(dp·mb)) % pp == 0 and pp·vp ≤ layers, tp | heads,
    pp ≤ layers, s % 2cp == 0 (cp > 1), and :func:`variants`' rules.
    """
    k = 0
    n_groups = 0
    starts[0] = 0
    L = mv[M_L]
    var = np.empty((zeros.size * gss.size * scheds.size * recs.size, 4), dtype=np.int64)
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
                            grp[n_groups, CFG_TP], grp[n_groups, CFG_CP], grp[n_groups, CFG_PP] = tp, cp, pp
                            grp[n_groups, CFG_VP], grp[n_groups, CFG_DP], grp[n_groups, CFG_EP] = vp, dp, ep
                            grp[n_groups, CFG_MB] = mb
                            nv = variants(zeros, gss, scheds, recs, pp, vp, m, var)
                            if write:
                                for q in range(nv):
                                    cfg[k + q, CFG_TP], cfg[k + q, CFG_CP], cfg[k + q, CFG_PP] = tp, cp, pp
                                    cfg[k + q, CFG_VP], cfg[k + q, CFG_DP], cfg[k + q, CFG_EP] = vp, dp, ep
                                    cfg[k + q, CFG_MB] = mb
                                    cfg[k + q, CFG_ZERO], cfg[k + q, CFG_GSYNC] = var[q, 0], var[q, 1]
                                    cfg[k + q, CFG_SCHED], cfg[k + q, CFG_REC] = var[q, 2], var[q, 3]
                            k += nv
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
    (:func:`~.rows.layout_terms`) once per group, the data-parallel passes (:func:`~.rows.dp_passes`) once per ZeRO
    stage and schedule in the group, then :func:`~.rows.finish_row` per row. One thread: sharing the group's
    terms makes a row cost about 50 ns, and on a 2-core machine a parallel loop waited for its second
    thread longer than it saved (2 to 30 ms a search when other work held a core, against 3 ms steady)."""
    k, n_groups = _enumerate(mv, n, B, s, tps, cps, pps, vps, dps, eps, mbs, zeros, recs, gss, scheds, cfg, starts,
                             np.empty((starts.size, len(CONFIG_FIELDS))), True)
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
        layout_terms(mv, c, B, s, tp, cp, pp, vp, dp, ep, cfg[i0, CFG_MB], flash, seqpar, g)
        for i in range(i0, starts[j + 1]):
            zero, sched = int(cfg[i, CFG_ZERO]), int(cfg[i, CFG_SCHED])
            v = zero * n_sched + sched
            if not done[v]:
                dp_passes(c, g, tp, cp, dp, ep, zero, sched, d[v])
                done[v] = True
            finish_row(mv, c, g, d[v], B, s, tp, cp, pp, vp, dp, ep, zero, int(cfg[i, CFG_REC]), int(cfg[i, CFG_GSYNC]),
                    sched, flash, usable_bytes, opt, row)
            for q in range(cols.shape[0]):
                res[i, q] = row[cols[q]]
    return k


#: a row is skipped when its :func:`~.rows.step_floor` exceeds the rank's threshold by this factor (the floor is
#: exact; the margin only guards against a compiler reordering a sum)
FLOOR_MARGIN = 1.0 + 1e-9


@njit(cache=True, parallel=True)
def _group_floors(mv, c, B, s, scheds, flash, seqpar, opt, grp, n_groups, terms, floor):
    """Each group's terms (:func:`~.rows.layout_terms`, into ``terms[j]``) and the least over its schedules
    of its :func:`~.rows.step_floor` (``floor[j]``, inf when no schedule is valid), the groups split over
    the threads (each group's are its own: the same numbers in any order)."""
    for j in prange(n_groups):
        g = terms[j]
        tp, cp, pp, vp = grp[j, CFG_TP], grp[j, CFG_CP], grp[j, CFG_PP], grp[j, CFG_VP]
        layout_terms(mv, c, B, s, tp, cp, pp, vp, grp[j, CFG_DP], grp[j, CFG_EP], grp[j, CFG_MB], flash, seqpar, g)
        f = np.inf
        for sc in scheds:
            if schedule_valid(sc, pp, vp, g[G_M]):
                f = min(f, step_floor(mv, c, g, tp, cp, pp, vp, sc, opt, 0.0, 0.0))
        floor[j] = f


@njit(cache=True)
def _rank_kernel(mv, c, B, s, zeros, recs, gss, scheds, flash, usable_bytes, opt, top, count_fit, starts, grp,
                 n_groups, terms, floor, cand_cfg, cand_key, cand_id, low_cfg, pending, stats):
    """Walk the groups (:func:`_enumerate`'s ``n_groups``, their terms and floors from :func:`_group_floors`)
    and keep the fitting rows that may rank in the first ``top`` by step time: ``cand_cfg`` (``CFG_*``),
    ``cand_key`` (step, fits, memory per chip) and ``cand_id`` (the row's place in the enumeration) for the
    first ``stats[2]`` rows, in no order. ``stats[1:]``: rows that fit (with ``count_fit``, all but those of
    the groups in ``pending``; else only 0 when none fits), candidates, the row with the least memory
    (meaningful when none fits) whose config is ``low_cfg`` and memory ``stats[4]``, and how many groups
    ``pending`` lists: with ``count_fit``, the skipped groups whose fitting rows remain to be counted
    (:func:`_count_pending`).

    Branch and bound: the groups are walked fastest floor first; the threshold is the ``top``-th smallest
    step of the fitting rows seen so far. A group, or a row (its floor with its last bucket and optimizer
    step), whose floor exceeds the threshold cannot rank, and is skipped (a skipped row's memory is still
    evaluated, to count it); once a group's floor exceeds it, so do every later group's. A row that is
    evaluated gets what :func:`_search_kernel` gives it.

    Length: one function on purpose: the walk, the threshold and the candidates share their locals; the
    formulas are :mod:`.rows`'."""
    n_sched = max(1, int(scheds.max()) + 1) if scheds.size else 1
    n_var = (int(zeros.max()) + 1) * n_sched if zeros.size else 1
    d = np.empty((n_var, N_DP_PASSES))
    done = np.zeros(n_var, dtype=np.bool_)
    var = np.empty((zeros.size * gss.size * scheds.size * recs.size, 4), dtype=np.int64)
    row = np.empty(N_RESULTS)
    best = np.full(top, np.inf)     # the smallest steps of the fitting rows so far, ascending
    n_fit, n_cand, low, low_id, v, n_pending = 0, 0, np.inf, -1, 0, 0
    for j in np.argsort(floor):
        skip = floor[j] > best[top - 1] * FLOOR_MARGIN
        if skip and not count_fit:
            break
        g = terms[j]
        tp, cp, pp, vp, dp, ep = grp[j, CFG_TP], grp[j, CFG_CP], grp[j, CFG_PP], grp[j, CFG_VP], grp[j, CFG_DP], \
            grp[j, CFG_EP]
        if skip:    # a threshold means some row fits: the least-memory row is not needed, only the count
            pending[n_pending] = j
            n_pending += 1
            continue
        nv = variants(zeros, gss, scheds, recs, pp, vp, g[G_M], var)
        done[:] = False
        for q in range(nv):
            zero, gs, sc, rec = var[q, 0], var[q, 1], var[q, 2], var[q, 3]
            full = not skip
            if full:
                v = zero * n_sched + sc
                if not done[v]:
                    dp_passes(c, g, tp, cp, dp, ep, zero, sc, d[v])
                    done[v] = True
                t_opt = optimizer_time(c, g, cp, dp, ep, zero, sc)
                full = not (step_floor(mv, c, g, tp, cp, pp, vp, sc, opt, d[v, 2] + d[v, 3], t_opt)
                            > best[top - 1] * FLOOR_MARGIN)
            if full:
                finish_row(mv, c, g, d[v], B, s, tp, cp, pp, vp, dp, ep, zero, rec, gs, sc, flash, usable_bytes, opt,
                           row)
            elif count_fit:
                memory_slots(mv, c, g, s, tp, cp, pp, vp, dp, ep, zero, rec, gs, sc, flash, usable_bytes, row)
            else:
                continue
            i = starts[j] + q
            mem = row[R_MEMORY_PER_CHIP_BYTES]
            if mem < low or (mem == low and i < low_id):
                low, low_id = mem, i
                low_cfg[:] = grp[j]
                low_cfg[CFG_ZERO], low_cfg[CFG_GSYNC], low_cfg[CFG_SCHED], low_cfg[CFG_REC] = zero, gs, sc, rec
            if row[R_FITS] <= 0.5:
                continue
            n_fit += 1
            step = row[R_STEP_TIME_S]
            if not full or step > best[top - 1]:
                continue
            cand_cfg[n_cand] = grp[j]
            cand_cfg[n_cand, CFG_ZERO], cand_cfg[n_cand, CFG_GSYNC] = zero, gs
            cand_cfg[n_cand, CFG_SCHED], cand_cfg[n_cand, CFG_REC] = sc, rec
            cand_key[n_cand, 0], cand_key[n_cand, 1], cand_key[n_cand, 2] = step, 1.0, mem
            cand_id[n_cand] = i
            n_cand += 1
            p = top - 1          # insert the step into the ascending list (a NaN step stays out)
            if step < best[p]:
                while p > 0 and best[p - 1] > step:
                    best[p] = best[p - 1]
                    p -= 1
                best[p] = step
    stats[1], stats[2], stats[3], stats[4], stats[5] = n_fit, n_cand, low_id, low, n_pending
    return n_cand


@njit(cache=True, parallel=True)
def _count_pending(mv, c, s, zeros, recs, gss, scheds, flash, usable_bytes, grp, terms, pending, n_pending):
    """How many rows of the groups ``pending[:n_pending]`` (their terms in ``terms``) fit
    (:func:`~.rows.count_fitting`), the groups split over the threads: the count a branch-and-bound search
    (:func:`_rank_kernel`) owes the groups it skipped. A search on 16,384 chips skips about 16,000 groups,
    1 µs each; two threads count them in half the time."""
    n_sched = max(1, int(scheds.max()) + 1) if scheds.size else 1
    n_chunks = min(n_pending, 16)
    counts = np.zeros(n_chunks, dtype=np.int64)
    for ch in prange(n_chunks):      # each chunk of groups with its own scratch buffers
        var = np.empty((zeros.size * gss.size * scheds.size * recs.size, 4), dtype=np.int64)
        act = np.empty((int(recs.max()) + 1 if recs.size else 1, n_sched, 2))
        act_done = np.empty((act.shape[0], n_sched), dtype=np.bool_)
        tot = 0
        for i in range(ch * n_pending // n_chunks, (ch + 1) * n_pending // n_chunks):
            j = pending[i]
            g = terms[j]
            tp, cp, pp, vp, dp, ep = grp[j, CFG_TP], grp[j, CFG_CP], grp[j, CFG_PP], grp[j, CFG_VP], grp[j, CFG_DP], \
                grp[j, CFG_EP]
            nv = variants(zeros, gss, scheds, recs, pp, vp, g[G_M], var)
            tot += count_fitting(mv, c, g, s, tp, cp, pp, vp, dp, ep, var, nv, flash, usable_bytes, act, act_done)
        counts[ch] = tot
    return counts.sum()


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
    k, _ = _enumerate(mv, float(n), float(B), float(s), *lists, np.empty((0, len(CONFIG_FIELDS))), starts,
                      np.empty((len(starts), len(CONFIG_FIELDS))), False)
    cols = np.arange(N_RESULTS, dtype=np.int64) if fields is None else np.array(fields, dtype=np.int64)
    if cols.ndim != 1 or ((cols < 0) | (cols >= N_RESULTS)).any():
        raise ValueError(f"fields must be result slots in [0, {N_RESULTS}), got {fields!r}")
    cfg = np.empty((k, len(CONFIG_FIELDS)), dtype=np.float64)
    res = np.empty((k, len(cols)))
    filled = _search_kernel(mv, cv, float(n), float(B), float(s), *lists, bool(flash), bool(seqpar), float(usable_bytes),
                            np.ascontiguousarray(opt, dtype=np.float64), cfg, res, starts, cols)
    assert filled == k
    return cfg, res


def rank_layouts(mv: np.ndarray, cv: np.ndarray, n: int, B: int, s: int, space: dict[str, np.ndarray], flash: bool,
                 seqpar: bool, usable_bytes: float, opt: np.ndarray, top: int, count_fit: bool = True):
    """The layouts that may rank in the first ``top`` (fitting, the fastest): what :func:`evaluate_layouts`
    gives for them, without evaluating the layouts that cannot (:func:`_rank_kernel`).

    Returns (config rows, key rows, rows evaluated, rows that fit, (config, memory) of the row with the
    least memory): the config rows (``CFG_*``) and key rows (step time, fits, memory per chip) of every
    fitting layout whose step time is no more than the ``top``-th smallest, and maybe a few slower, in
    enumeration order. With ``count_fit`` false the count of fitting rows is only 0 when none fits;
    the least-memory row is only meaningful when none fits (then every row was evaluated)."""
    lists = (space["tp"], space["cp"], space["pp"], space["vp"], space["dp"], space["ep"], space["microbatch"],
             space["zero_stage"], space["recompute"], space["grad_sync"], space["schedule"])
    starts = np.zeros(int(np.prod([len(space[k]) for k in ("tp", "cp", "pp", "vp", "ep", "microbatch")])) + 1,
                      dtype=np.int64)
    # room for every row (groups × variants); pages never written cost nothing
    n_rows = (len(starts) - 1) * int(np.prod([len(space[k]) for k in ("zero_stage", "recompute", "grad_sync",
                                                                      "schedule")]))
    nf = len(CONFIG_FIELDS)
    cand_cfg, cand_key, cand_id = np.empty((n_rows, nf)), np.empty((n_rows, 3)), np.empty(n_rows, dtype=np.int64)
    low_cfg, stats = np.zeros(nf), np.zeros(6)
    grp = np.empty((len(starts), nf))
    usable, opt = float(usable_bytes), np.ascontiguousarray(opt, dtype=np.float64)
    k, n_groups = _enumerate(mv, float(n), float(B), float(s), *lists, np.empty((0, nf)), starts, grp, False)
    terms, floor, pending = np.empty((n_groups, G_NVEC)), np.empty(n_groups), np.empty(n_groups, dtype=np.int64)
    _group_floors(mv, cv, float(B), float(s), lists[10], bool(flash), bool(seqpar), opt, grp, n_groups, terms, floor)
    n_cand = _rank_kernel(mv, cv, float(B), float(s), *lists[7:], bool(flash), usable, opt, int(top), bool(count_fit),
                          starts, grp, n_groups, terms, floor, cand_cfg, cand_key, cand_id, low_cfg, pending, stats)
    n_fit = int(stats[1])
    if stats[5] > 0:
        n_fit += int(_count_pending(mv, cv, float(s), lists[7], lists[8], lists[9], lists[10], bool(flash), usable, grp,
                                    terms, pending, int(stats[5])))
    order = np.argsort(cand_id[:n_cand])
    return cand_cfg[order], cand_key[order], k, n_fit, (low_cfg, float(stats[4]))


def evaluate_rows(mv: np.ndarray, cv: np.ndarray, B: int, s: int, cfg: np.ndarray, flash: bool, seqpar: bool,
                  usable_bytes: float, opt: np.ndarray) -> np.ndarray:
    """The result rows (``R_*`` columns) of the layouts ``cfg`` (rows of :func:`evaluate_layouts`' configs:
    valid layouts, ``CFG_*`` columns), as :func:`evaluate_layouts` gives them."""
    cfg = np.ascontiguousarray(cfg, dtype=np.float64).reshape(-1, len(CONFIG_FIELDS))
    res = np.empty((len(cfg), N_RESULTS))
    _evaluate_rows(mv, cv, float(B), float(s), cfg, bool(flash), bool(seqpar), float(usable_bytes),
                   np.ascontiguousarray(opt, dtype=np.float64), res)
    return res
