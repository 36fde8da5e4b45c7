"""The training kernels: one layout's results (:func:`_evaluate`) and every layout's (:func:`_search_kernel`).

``_evaluate`` puts the formulas of :mod:`.compute`, :mod:`.communication`, :mod:`.pipeline` and
:mod:`.memory` together for one layout and writes a result record (:data:`~.records.RESULT`, by field name):

    t_layer = t_fwd + t_bwd + t_rec + t_tp + t_cp + t_ep + t_perm + t_imb + σ·(h_tp + h_cp + h_ep)   (one layer, one microbatch)
    step    = m·t_mb + bubble + t_dp + t_dp_bucket + t_opt + σ·h_dp,  t_opt = 30·Ψ_opt / B_hbm   (Adam)

with ``h_*`` the communication hidden behind compute (``h_ep`` only under DualPipe), σ (``overlap_slowdown``) the
measured slowdown of compute while a collective runs beside it, the bubble that of the schedule
(:func:`~.pipeline.bubble_time`: ``(pp-1)/vp·t_mb`` under 1F1B) and ``h_dp`` the data-parallel traffic
that hides (all of it less the exposed part and the last bucket); :func:`~.rows.finish_row` has each term.
    MFU     = tokens · FLOP_per_token(causal) / (n · P · step),  HFU = MFU · 4/3 under full recomputation

(the ``mfu`` field: causal attention over the peak at the run's precision; :func:`~.step.estimate` reports
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
and return records and structured arrays (:mod:`.records`, :data:`RANK_KEY`).

The formula helpers of :mod:`.compute` and :mod:`.communication` are ``@njit(inline="always")``: Numba
inlines them into the row helpers of :mod:`.rows` (called separately, when the model and chip were
arrays, each helper's reference counting made the search about 35 % slower). The six large row helpers are
compiled once and called from the kernels, not inlined into each: a fresh install compiles the search in
about 34 s instead of 100 s, and it runs as fast (``rows``' docstring has the figures). Numba's
on-disk cache does not notice a change to a function in another file: after editing a helper, clear
``.numba_cache``.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

from .pipeline import schedule_valid
from .records import LAYOUT, RESULT, new_record, record_dtype
from .rows import (
    DP_PASSES,
    TERMS,
    VARIANT,
    count_fitting,
    dp_passes,
    finish_row,
    layout_terms,
    memory_fields,
    optimizer_time,
    step_floor,
)

#: what :func:`rank_layouts` keeps of a candidate besides its layout: the fields the search ranks on
RANK_KEY = record_dtype(("step_time_s", "fits", "memory_per_chip_bytes"))


@njit(cache=True)
def _evaluate(mv, c, B, s, tp, cp, pp, vp, dp, ep, mb, zero, rec, gsync, sched, flash, seqpar, usable_bytes, opt, out):
    """Fill ``out`` (a :data:`~.records.RESULT` record) for one layout. ``B`` = global batch in sequences,
    ``s`` the sequence length; ``zero`` the ZeRO stage, ``rec`` the index in RECOMPUTE, ``gsync`` the index in
    GRAD_SYNC, ``sched`` in SCHEDULES; ``usable_bytes`` the HBM a chip may fill; ``mv``, ``c``, ``opt`` the
    model, chip and options records (:mod:`.records`). Every layout argument is a float except ``zero``,
    ``rec``, ``gsync`` and ``sched``. The layout's terms (:func:`~.rows.layout_terms`), its data-parallel passes
    (:func:`~.rows.dp_passes`), then the step from them (:func:`~.rows.finish_row`): the search runs the same
    three, sharing the first two between rows."""
    # one-element arrays indexed at each use: a record taken out of an array alone does not keep the array alive
    g = np.empty(1, dtype=TERMS)
    d = np.empty(1, dtype=DP_PASSES)
    layout_terms(mv, c, B, s, tp, cp, pp, vp, dp, ep, mb, flash, seqpar, g[0])
    dp_passes(c, g[0], tp, cp, dp, ep, zero, sched, d[0])
    finish_row(mv, c, g[0], d[0], B, s, tp, cp, pp, vp, dp, ep, zero, rec, gsync, sched, flash, usable_bytes, opt, out)


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
    """Fill ``var`` (:data:`~.rows.VARIANT` records) with the (ZeRO stage, gradient sync, schedule, recompute) of
    each row of a group with ``pp`` stages, ``vp`` chunks and ``m`` microbatches, in the search's order; returns
    how many. Valid: the gradient sync for the ZeRO stage (:func:`grad_sync_valid`), the schedule for the
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
                    var[q].zero_stage, var[q].grad_sync, var[q].schedule, var[q].recompute = zero, gs, sc, rec
                    q += 1
    return q


@njit(cache=True, inline="always")
def set_variant(lay, zero, gs, sc, rec):
    """Write a row's (ZeRO stage, gradient sync, schedule, recompute) into the layout record ``lay``."""
    lay.zero_stage, lay.grad_sync, lay.schedule, lay.recompute = zero, gs, sc, rec


@njit(cache=True)
def _enumerate(mv, n, B, s, tps, cps, pps, vps, dps, eps, mbs, zeros, recs, gss, scheds, cfg, starts, grp, write):
    """Fill ``cfg`` (:data:`~.records.LAYOUT` records) with every valid layout; returns (how many, how many
    groups). A group is the rows of one (tp, cp, pp, dp, ep, microbatch, vp), which differ only in ZeRO
    stage, gradient sync, schedule and recomputation (:func:`variants`): they are consecutive, group
    ``j`` the rows ``starts[j]`` to ``starts[j + 1]`` (``starts`` holds one more entry than there are
    groups), its (tp, cp, pp, vp, dp, ep, microbatch) in the fields of ``grp[j]`` (a LAYOUT record whose
    other fields are not set). With ``write`` false it only counts (``cfg`` may then have no rows), so the
    caller can size ``cfg``.

    Validity: tp·cp·pp·dp = n with dp among the candidates ``dps``, ep | dp and ep | experts,
    dp·mb | B, vp > 1 only with pp > 1, (B/(dp·mb)) % pp == 0 and pp·vp ≤ layers, tp | heads,
    pp ≤ layers, s % 2cp == 0 (cp > 1), and :func:`variants`' rules.
    """
    k = 0
    n_groups = 0
    starts[0] = 0
    L = mv.n_layers
    var = np.empty(zeros.size * gss.size * scheds.size * recs.size, dtype=VARIANT)
    for tp in tps:
        if mv.n_heads % tp != 0:
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
                    if dp % ep != 0 or mv.n_experts % ep != 0:
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
                            gr = grp[n_groups]
                            gr.tp, gr.cp, gr.pp, gr.vp, gr.dp, gr.ep, gr.microbatch = tp, cp, pp, vp, dp, ep, mb
                            nv = variants(zeros, gss, scheds, recs, pp, vp, m, var)
                            if write:
                                for q in range(nv):
                                    row = cfg[k + q]
                                    row.tp, row.cp, row.pp, row.vp, row.dp, row.ep = tp, cp, pp, vp, dp, ep
                                    row.microbatch = mb
                                    set_variant(row, var[q].zero_stage, var[q].grad_sync, var[q].schedule,
                                                var[q].recompute)
                            k += nv
    if k > starts[n_groups]:
        n_groups += 1
    starts[n_groups] = k
    return k, n_groups


@njit(cache=True)
def _search_kernel(mv, c, n, B, s, tps, cps, pps, vps, dps, eps, mbs, zeros, recs, gss, scheds, flash, seqpar,
                   usable_bytes, opt, cfg, res, starts):
    """Enumerate every valid layout into ``cfg`` (:func:`_enumerate`), then evaluate them into the
    :data:`~.records.RESULT` records of ``res``, a group of rows at a time; returns the number of rows filled.

    Each row gets what :func:`_evaluate` computes, from the same three steps: the group's terms
    (:func:`~.rows.layout_terms`) once per group, the data-parallel passes (:func:`~.rows.dp_passes`) once per ZeRO
    stage and schedule in the group, then :func:`~.rows.finish_row` per row. One thread: sharing the group's
    terms makes a row cost about 50 ns, and on a 2-core machine a parallel loop waited for its second
    thread longer than it saved (2 to 30 ms a search when other work held a core, against 3 ms steady)."""
    k, n_groups = _enumerate(mv, n, B, s, tps, cps, pps, vps, dps, eps, mbs, zeros, recs, gss, scheds, cfg, starts,
                             np.empty(starts.size, dtype=LAYOUT), True)
    n_sched = max(1, int(scheds.max()) + 1) if scheds.size else 1
    n_var = (int(zeros.max()) + 1) * n_sched if zeros.size else 1
    g = np.empty(1, dtype=TERMS)      # indexed at each use (a record alone does not keep its array alive)
    d = np.empty(n_var, dtype=DP_PASSES)
    done = np.zeros(n_var, dtype=np.bool_)
    for j in range(n_groups):
        i0 = starts[j]
        done[:] = False
        first = cfg[i0]
        tp, cp, pp, vp, dp, ep = first.tp, first.cp, first.pp, first.vp, first.dp, first.ep
        layout_terms(mv, c, B, s, tp, cp, pp, vp, dp, ep, first.microbatch, flash, seqpar, g[0])
        for i in range(i0, starts[j + 1]):
            lay = cfg[i]
            zero, sched = int(lay.zero_stage), int(lay.schedule)
            v = zero * n_sched + sched
            if not done[v]:
                dp_passes(c, g[0], tp, cp, dp, ep, zero, sched, d[v])
                done[v] = True
            finish_row(mv, c, g[0], d[v], B, s, tp, cp, pp, vp, dp, ep, zero, int(lay.recompute), int(lay.grad_sync),
                       sched, flash, usable_bytes, opt, res[i])
    return k


#: a row is skipped when its :func:`~.rows.step_floor` exceeds the rank's threshold by this factor (the floor is
#: exact; the margin only guards against a compiler reordering a sum)
FLOOR_MARGIN = 1.0 + 1e-9


@njit(cache=True, parallel=True)
def _group_floors(mvs, cs, B, s, scheds, flash, seqpar, opts, grp, n_groups, terms, floor):
    """Each group's terms (:func:`~.rows.layout_terms`, into the :data:`~.rows.TERMS` record ``terms[j]``) and
    the least over its schedules of its :func:`~.rows.step_floor` (``floor[j]``, inf when no schedule is valid),
    the groups split over the threads (each group's are its own: the same numbers in any order). ``mvs``,
    ``cs``, ``opts``: the model, chip and options records as one-element arrays, taken apart inside the loop
    (Numba's parallel loop cannot take a record from outside it)."""
    for j in prange(n_groups):
        mv, c, opt = mvs[0], cs[0], opts[0]
        g = terms[j]
        gr = grp[j]
        tp, cp, pp, vp = gr.tp, gr.cp, gr.pp, gr.vp
        layout_terms(mv, c, B, s, tp, cp, pp, vp, gr.dp, gr.ep, gr.microbatch, flash, seqpar, g)
        f = np.inf
        for sc in scheds:
            if schedule_valid(sc, pp, vp, g.n_microbatches):
                f = min(f, step_floor(mv, c, g, tp, cp, pp, vp, sc, opt, 0.0, 0.0))
        floor[j] = f


@njit(cache=True)
def _rank_kernel(mv, c, B, s, zeros, recs, gss, scheds, flash, usable_bytes, opt, top, count_fit, starts, grp,
                 n_groups, terms, floor, cand_cfg, cand_key, cand_id, low_cfg, pending):
    """Walk the groups (:func:`_enumerate`'s ``n_groups``, their terms and floors from :func:`_group_floors`)
    and keep the fitting rows that may rank in the first ``top`` by step time: ``cand_cfg`` (LAYOUT records),
    ``cand_key`` (:data:`RANK_KEY` records) and ``cand_id`` (the row's place in the enumeration) for the first
    ``n_cand`` rows, in no order. Returns ``(n_cand, n_fit, low_id, low_bytes, n_pending)``: the candidates; the
    rows that fit (with ``count_fit``, all but those of the groups in ``pending``; else only 0 when none fits);
    the row with the least memory (meaningful when none fits), its place, its memory ``low_bytes`` and its layout
    in ``low_cfg[0]``; and how many groups ``pending`` lists: with ``count_fit``, the skipped groups whose fitting
    rows remain to be counted (:func:`_count_pending`).

    Branch and bound: the groups are walked fastest floor first; the threshold is the ``top``-th smallest
    step of the fitting rows seen so far. A group, or a row (its floor with its last bucket and optimizer
    step), whose floor exceeds the threshold cannot rank, and is skipped (a skipped row's memory is still
    evaluated, to count it); once a group's floor exceeds it, so do every later group's. A row that is
    evaluated gets what :func:`_search_kernel` gives it.

    Length: one function on purpose: the walk, the threshold and the candidates share their locals; the
    formulas are :mod:`.rows`'."""
    n_sched = max(1, int(scheds.max()) + 1) if scheds.size else 1
    n_var = (int(zeros.max()) + 1) * n_sched if zeros.size else 1
    d = np.empty(n_var, dtype=DP_PASSES)
    done = np.zeros(n_var, dtype=np.bool_)
    var = np.empty(zeros.size * gss.size * scheds.size * recs.size, dtype=VARIANT)
    out = np.empty(1, dtype=RESULT)   # indexed at each use: a record alone does not keep its array alive
    best = np.full(top, np.inf)     # the smallest steps of the fitting rows so far, ascending
    n_fit, n_cand, low, low_id, v, n_pending = 0, 0, np.inf, -1, 0, 0
    for j in np.argsort(floor):
        skip = floor[j] > best[top - 1] * FLOOR_MARGIN
        if skip and not count_fit:
            break
        g = terms[j]
        gr = grp[j]
        tp, cp, pp, vp, dp, ep = gr.tp, gr.cp, gr.pp, gr.vp, gr.dp, gr.ep
        if skip:    # a threshold means some row fits: the least-memory row is not needed, only the count
            pending[n_pending] = j
            n_pending += 1
            continue
        nv = variants(zeros, gss, scheds, recs, pp, vp, g.n_microbatches, var)
        done[:] = False
        for q in range(nv):
            zero, gs, sc, rec = var[q].zero_stage, var[q].grad_sync, var[q].schedule, var[q].recompute
            full = not skip
            if full:
                v = zero * n_sched + sc
                if not done[v]:
                    dp_passes(c, g, tp, cp, dp, ep, zero, sc, d[v])
                    done[v] = True
                t_opt = optimizer_time(c, g, cp, dp, ep, zero, sc)
                full = not (step_floor(mv, c, g, tp, cp, pp, vp, sc, opt, d[v].t_bucket_rs_s + d[v].t_bucket_ag_s,
                                       t_opt) > best[top - 1] * FLOOR_MARGIN)
            if full:
                finish_row(mv, c, g, d[v], B, s, tp, cp, pp, vp, dp, ep, zero, rec, gs, sc, flash, usable_bytes, opt,
                           out[0])
            elif count_fit:
                memory_fields(mv, c, g, s, tp, cp, pp, vp, dp, ep, zero, rec, gs, sc, flash, usable_bytes, out[0])
            else:
                continue
            i = starts[j] + q
            mem = out[0].memory_per_chip_bytes
            if mem < low or (mem == low and i < low_id):
                low, low_id = mem, i
                low_cfg[0] = gr
                set_variant(low_cfg[0], zero, gs, sc, rec)
            if out[0].fits <= 0.5:
                continue
            n_fit += 1
            step = out[0].step_time_s
            if not full or step > best[top - 1]:
                continue
            cand_cfg[n_cand] = gr
            set_variant(cand_cfg[n_cand], zero, gs, sc, rec)
            key = cand_key[n_cand]
            key.step_time_s, key.fits, key.memory_per_chip_bytes = step, 1.0, mem
            cand_id[n_cand] = i
            n_cand += 1
            p = top - 1          # insert the step into the ascending list (a NaN step stays out)
            if step < best[p]:
                while p > 0 and best[p - 1] > step:
                    best[p] = best[p - 1]
                    p -= 1
                best[p] = step
    return n_cand, n_fit, low_id, low, n_pending


@njit(cache=True, parallel=True)
def _count_pending(mvs, cs, s, zeros, recs, gss, scheds, flash, usable_bytes, grp, terms, pending, n_pending):
    """How many rows of the groups ``pending[:n_pending]`` (their terms in ``terms``) fit
    (:func:`~.rows.count_fitting`), the groups split over the threads: the count a branch-and-bound search
    (:func:`_rank_kernel`) owes the groups it skipped. A search on 16,384 chips skips about 16,000 groups,
    1 µs each; two threads count them in half the time. ``mvs``, ``cs`` as :func:`_group_floors`' arguments."""
    n_sched = max(1, int(scheds.max()) + 1) if scheds.size else 1
    n_chunks = min(n_pending, 16)
    counts = np.zeros(n_chunks, dtype=np.int64)
    for ch in prange(n_chunks):      # each chunk of groups with its own scratch buffers
        mv, c = mvs[0], cs[0]
        var = np.empty(zeros.size * gss.size * scheds.size * recs.size, dtype=VARIANT)
        n_rec = int(recs.max()) + 1 if recs.size else 1
        act_bytes = np.empty((n_rec, n_sched))
        act_in_flight = np.empty((n_rec, n_sched))
        act_done = np.empty((n_rec, n_sched), dtype=np.bool_)
        tot = 0
        for i in range(ch * n_pending // n_chunks, (ch + 1) * n_pending // n_chunks):
            j = pending[i]
            g = terms[j]
            gr = grp[j]
            nv = variants(zeros, gss, scheds, recs, gr.pp, gr.vp, g.n_microbatches, var)
            tot += count_fitting(mv, c, g, s, gr.tp, gr.cp, gr.pp, gr.vp, gr.dp, gr.ep, var, nv, flash, usable_bytes,
                                 act_bytes, act_in_flight, act_done)
        counts[ch] = tot
    return counts.sum()


@njit(cache=True)
def _evaluate_rows(mv, c, B, s, cfg, flash, seqpar, usable_bytes, opt, res):
    """:func:`_evaluate` of each layout of ``cfg`` (LAYOUT records) into the same row of ``res`` (RESULT)."""
    for i in range(cfg.shape[0]):
        lay = cfg[i]
        _evaluate(mv, c, B, s, lay.tp, lay.cp, lay.pp, lay.vp, lay.dp, lay.ep, lay.microbatch, int(lay.zero_stage),
                  int(lay.recompute), int(lay.grad_sync), int(lay.schedule), flash, seqpar, usable_bytes, opt, res[i])


# -- the public wrappers -----------------------------------------------------------------------------------------
def _space_lists(space: dict[str, np.ndarray]) -> tuple:
    """The candidate values of ``space`` in the kernels' argument order (the layout fields')."""
    return (space["tp"], space["cp"], space["pp"], space["vp"], space["dp"], space["ep"], space["microbatch"],
            space["zero_stage"], space["recompute"], space["grad_sync"], space["schedule"])


def _group_starts(space: dict[str, np.ndarray]) -> np.ndarray:
    """Room for the groups' first rows: one group per (tp, cp, pp, vp, ep, microbatch) at most, dp following
    from tp·cp·pp, and one entry more."""
    return np.zeros(int(np.prod([len(space[k]) for k in ("tp", "cp", "pp", "vp", "ep", "microbatch")])) + 1,
                    dtype=np.int64)


def one_element(rec: np.record) -> np.ndarray:
    """A copy of the record ``rec`` as a one-element array of its dtype (what a parallel kernel takes)."""
    a = np.empty(1, dtype=rec.dtype)
    a[0] = rec
    return a


def evaluate_layout(mv: np.record, cv: np.record, B: int, s: int, tp: int, cp: int, pp: int, vp: int, dp: int,
                    ep: int, microbatch: int, zero_stage: int, rec: int, flash: bool, seqpar: bool,
                    usable_bytes: float, opt: np.record, grad_sync: int | None = None, schedule: int = 0) -> np.record:
    """The result record (:data:`~.records.RESULT`, fields :data:`~.records.RESULT_FIELDS`) of one layout.

    ``mv``, ``cv``: :func:`~.records.model_record`, :func:`~.records.chip_record`; ``B`` sequences of
    ``s`` tokens a step; ``rec`` the index of the recompute mode in RECOMPUTE; ``usable_bytes`` the
    HBM a chip may fill (bytes); ``opt`` the run's options (:func:`~.records.options_record`);
    ``grad_sync`` the index in GRAD_SYNC (default: every microbatch from ZeRO-2 on, else once a step);
    ``schedule`` the index in SCHEDULES (default 1F1B).
    The caller has checked that the layout is valid (:func:`accelbook.training.estimate` does).
    """
    gsync = (1 if zero_stage >= 2 else 0) if grad_sync is None else int(grad_sync)
    out = new_record(RESULT)
    _evaluate(mv, cv, float(B), float(s), float(tp), float(cp), float(pp), float(vp), float(dp), float(ep),
              float(microbatch), zero_stage, rec, gsync, int(schedule), bool(flash), bool(seqpar), float(usable_bytes),
              opt, out)
    return out


def evaluate_layouts(mv: np.record, cv: np.record, n: int, B: int, s: int, space: dict[str, np.ndarray],
                     flash: bool, seqpar: bool, usable_bytes: float, opt: np.record) -> tuple[np.ndarray, np.ndarray]:
    """Every valid layout of the candidate values ``space`` (:func:`accelbook.training.search_space`)
    on ``n`` chips: (layouts, :data:`~.records.LAYOUT` records; results, :data:`~.records.RESULT` records),
    in enumeration order."""
    lists = _space_lists(space)
    starts = _group_starts(space)
    # count first, then fill arrays of exactly that many rows (every field is written: no zeroing needed)
    k, _ = _enumerate(mv, float(n), float(B), float(s), *lists, np.empty(0, dtype=LAYOUT), starts,
                      np.empty(len(starts), dtype=LAYOUT), False)
    cfg = np.empty(k, dtype=LAYOUT)
    res = np.empty(k, dtype=RESULT)
    filled = _search_kernel(mv, cv, float(n), float(B), float(s), *lists, bool(flash), bool(seqpar), float(usable_bytes),
                            opt, cfg, res, starts)
    assert filled == k
    return cfg, res


def rank_layouts(mv: np.record, cv: np.record, n: int, B: int, s: int, space: dict[str, np.ndarray], flash: bool,
                 seqpar: bool, usable_bytes: float, opt: np.record, top: int, count_fit: bool = True):
    """The layouts that may rank in the first ``top`` (fitting, the fastest): what :func:`evaluate_layouts`
    gives for them, without evaluating the layouts that cannot (:func:`_rank_kernel`).

    Returns (layouts, keys, rows evaluated, rows that fit, (layout, memory) of the row with the least memory):
    the LAYOUT records and :data:`RANK_KEY` records (step time, fits, memory per chip) of every fitting layout
    whose step time is no more than the ``top``-th smallest, and maybe a few slower, in enumeration order. With
    ``count_fit`` false the count of fitting rows is only 0 when none fits; the least-memory row is only
    meaningful when none fits (then every row was evaluated)."""
    lists = _space_lists(space)
    starts = _group_starts(space)
    # room for every row (groups × variants); pages never written cost nothing
    n_rows = (len(starts) - 1) * int(np.prod([len(space[k]) for k in ("zero_stage", "recompute", "grad_sync",
                                                                      "schedule")]))
    cand_cfg, cand_key = np.empty(n_rows, dtype=LAYOUT), np.empty(n_rows, dtype=RANK_KEY)
    cand_id = np.empty(n_rows, dtype=np.int64)
    low_cfg = np.zeros(1, dtype=LAYOUT)
    grp = np.empty(len(starts), dtype=LAYOUT)
    usable = float(usable_bytes)
    k, n_groups = _enumerate(mv, float(n), float(B), float(s), *lists, np.empty(0, dtype=LAYOUT), starts, grp, False)
    terms, floor = np.empty(n_groups, dtype=TERMS), np.empty(n_groups)
    pending = np.empty(n_groups, dtype=np.int64)
    mvs, cs = one_element(mv), one_element(cv)
    _group_floors(mvs, cs, float(B), float(s), lists[10], bool(flash), bool(seqpar), one_element(opt), grp, n_groups,
                  terms, floor)
    n_cand, n_fit, _, low_bytes, n_pending = _rank_kernel(
        mv, cv, float(B), float(s), *lists[7:], bool(flash), usable, opt, int(top), bool(count_fit), starts, grp,
        n_groups, terms, floor, cand_cfg, cand_key, cand_id, low_cfg, pending)
    if n_pending > 0:
        n_fit += int(_count_pending(mvs, cs, float(s), lists[7], lists[8], lists[9], lists[10], bool(flash), usable, grp,
                                    terms, pending, int(n_pending)))
    order = np.argsort(cand_id[:n_cand])
    return cand_cfg[order], cand_key[order], k, int(n_fit), (low_cfg[0], float(low_bytes))


def evaluate_rows(mv: np.record, cv: np.record, B: int, s: int, cfg: np.ndarray, flash: bool, seqpar: bool,
                  usable_bytes: float, opt: np.record) -> np.ndarray:
    """The result records (:data:`~.records.RESULT`) of the layouts ``cfg`` (LAYOUT records of
    :func:`evaluate_layouts` or :func:`rank_layouts`: valid layouts), as :func:`evaluate_layouts` gives them."""
    cfg = np.ascontiguousarray(cfg, dtype=LAYOUT).reshape(-1)
    res = np.empty(len(cfg), dtype=RESULT)
    _evaluate_rows(mv, cv, float(B), float(s), cfg, bool(flash), bool(seqpar), float(usable_bytes), opt, res)
    return res

