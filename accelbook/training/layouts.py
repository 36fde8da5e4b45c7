"""Every parallel layout: :func:`search_space` (the candidates) and :func:`search` (all valid layouts
evaluated, the fastest that fits first), and :func:`best_config` (the winner, without the table)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from accelbook.checks import fraction, instance, one_of, output_fields, whole
from accelbook.specs.chips import MEMORY_RESERVE, Chip, usable_memory_bytes
from accelbook.specs.clusters import Cluster
from accelbook.specs.models import Model, get_model

from .arguments import batch_sequences, chip_count, memory_reserve_fraction, resolve, sequence_length
from .kernel import evaluate_layouts, evaluate_rows, rank_layouts
from .layout import ZERO_STAGES, Layout
from .mfu import model_flops_utilisation
from .plausibility import mfu_ceiling, mfu_flags
from .records import (
    CONFIG_FIELDS,
    CP_COMM,
    GRAD_SYNC,
    RECOMPUTE,
    RESULT_FIELDS,
    SCHEDULES,
    attention_head_dim,
    chip_record,
    model_record,
    options_record,
)
from .step import TIME_LABELS, estimate

#: the largest ``top`` ranked by :func:`~.kernel.rank_layouts` (a larger one evaluates every layout)
RANK_TOP_MAX = 64


def _pow2_upto(x: int) -> np.ndarray:
    out, v = [], 1
    while v <= x:
        out.append(v)
        v *= 2
    return np.array(out, dtype=np.float64)


def _divisors(x: int, cap: int) -> np.ndarray:
    k = np.arange(1, min(x, cap) + 1, dtype=np.int64)
    return k[x % k == 0].astype(np.float64)


def _values(v) -> list:
    return [] if v is None else list(v) if isinstance(v, (list, tuple, np.ndarray)) else [v]


def search_space(model: Model, n: int, max_tp: int = 64, max_cp: int = 32, **fixed) -> dict[str, np.ndarray]:
    """Candidate values per dimension (the kernel keeps the combinations that are valid).

    ``fixed``: any of :data:`~.records.CONFIG_FIELDS` (tp, cp, pp, vp, dp, ep, microbatch, zero_stage,
    recompute, grad_sync, schedule) — a value or a list of values to search instead of the default candidates
    (powers of two for tp and cp, every divisor of n up to the layer count for pp, every divisor of
    n for dp, 1/2/4/8 for vp and microbatch, every ZeRO stage, recompute mode, gradient sync and
    pipeline schedule).
    dp is otherwise what tp·cp·pp leave (``n / (tp·cp·pp)``); with dp pinned and cp not, cp is
    derived: ``n / (tp·pp·dp)`` when tp and pp are pinned too, else every divisor of ``n / dp``.
    """
    model, n = instance("model", model, Model, get_model), chip_count(n, "n")
    max_tp, max_cp = whole("max_tp", max_tp), whole("max_cp", max_cp)
    n_exp = model.moe.n_experts if model.moe else 1
    space = {
        "tp": _pow2_upto(min(max_tp, model.n_heads, n)),
        "cp": _pow2_upto(min(max_cp, n)),
        "pp": _divisors(n, model.n_layers),
        "vp": np.array([1, 2, 4, 8], dtype=np.float64),
        "dp": _divisors(n, n),
        "ep": _divisors(n_exp, n) if model.moe else np.array([1.0]),
        "microbatch": np.array([1, 2, 4, 8], dtype=np.float64),
        "zero_stage": np.array(ZERO_STAGES, dtype=np.int64),
        "recompute": np.arange(len(RECOMPUTE), dtype=np.int64),
        "grad_sync": np.arange(len(GRAD_SYNC), dtype=np.int64),
        "schedule": np.arange(len(SCHEDULES), dtype=np.int64),
    }
    for k, v in fixed.items():
        if k not in space:
            raise ValueError(f"cannot fix {k!r}; choose from {', '.join(space)}")
        if v is None:
            continue
        vals = _values(v)
        if k in ("recompute", "grad_sync", "schedule"):
            names = {"recompute": RECOMPUTE, "grad_sync": GRAD_SYNC, "schedule": SCHEDULES}[k]
            vals = [names.index(one_of(k, x, names)) for x in vals]
        elif k == "zero_stage":
            vals = [one_of("zero_stage", whole("zero_stage", x, 0), ZERO_STAGES) for x in vals]
        else:
            vals = [whole(k, x) for x in vals]
        space[k] = np.array(vals, dtype=space[k].dtype)
    cp = derived_cp(n, fixed)
    if cp is not None:
        space["cp"] = np.array(cp, dtype=np.float64)
    return space


def derived_cp(n: int, fixed: dict) -> list[int] | None:
    """cp's candidates when dp is pinned and cp is not (``None`` otherwise): ``n / (tp·pp·dp)`` when
    tp and pp are pinned to one value each, else every divisor of ``n / dp``. Raises a ``ValueError``
    saying why when a pinned dp cannot be: it does not divide n, or tp·pp·dp does not, or tp·cp·pp·dp ≠ n."""
    dps = [whole("dp", d) for d in _values(fixed.get("dp"))]
    for d in dps:
        if n % d:
            raise ValueError(f"dp = {d} must divide the {n} chips")
    one = {k: _values(fixed.get(k)) for k in ("tp", "cp", "pp")}
    if len(dps) == 1 and all(len(v) == 1 for v in one.values()):
        tp, cp, pp, dp = one["tp"][0], one["cp"][0], one["pp"][0], dps[0]
        if tp * cp * pp * dp != n:
            raise ValueError(f"tp·cp·pp·dp = {tp}·{cp}·{pp}·{dp} = {tp * cp * pp * dp} but n_chips = {n}")
    if not dps or one["cp"]:
        return None
    if len(dps) == 1 and len(one["tp"]) == 1 and len(one["pp"]) == 1:
        tp, pp, dp = one["tp"][0], one["pp"][0], dps[0]
        if n % (tp * pp * dp):
            raise ValueError(f"tp·pp·dp = {tp}·{pp}·{dp} = {tp * pp * dp} does not divide the {n} chips: "
                             "no cp = n / (tp·pp·dp) completes the layout")
        return [n // (tp * pp * dp)]
    return sorted({c for d in dps for c in range(1, n // d + 1) if (n // d) % c == 0})


def pins(n: int, fixed: dict) -> dict:
    """What a search was told and what it chose: ``pinned`` (dimensions given one value, as given),
    ``restricted`` (given a list), ``derived`` (cp, or dp, fixed by the others' pins) and ``searched``
    (every other dimension of :data:`~.records.CONFIG_FIELDS`, restricted ones included)."""
    given = {k: v for k, v in fixed.items() if v is not None}
    pinned = {k: _values(v)[0] for k, v in given.items() if len(_values(v)) == 1}
    restricted = {k: _values(v) for k, v in given.items() if len(_values(v)) > 1}
    derived = {}
    cp = derived_cp(n, fixed)
    if cp is not None and len(cp) == 1:
        derived["cp"] = cp[0]
    elif "dp" not in pinned and all(k in pinned for k in ("tp", "cp", "pp")):
        derived["dp"] = n // (pinned["tp"] * pinned["cp"] * pinned["pp"])
    searched = [k for k in CONFIG_FIELDS if k not in pinned and k not in derived]
    return dict(pinned=pinned, restricted=restricted, derived=derived, searched=searched)


def search(model: Model | str, chip: Chip | str | None, n_chips: int, global_batch_tokens: float, seq_len: int,
           precision: str = "bf16", cluster: Cluster | str | None = None, flash_attention: bool = True,
           sequence_parallel: bool = True, memory_reserve: float = MEMORY_RESERVE, tp_overlap: float = 0.0,
           top: int | None = 20, include_unfit: bool = False, cp_comm: str = "ring", **fixed) -> pd.DataFrame:
    """Every valid layout of ``model`` on ``n_chips`` evaluated; the fastest that fits first.

    Returns one row per layout (``top`` rows, or all with ``top=None``): the layout, step time,
    MFU, tokens/s per chip, memory per chip, whether it fits, every time and memory component, and
    ``why`` (how a runner-up loses to the best: its largest extra cost), ``mfu_flag`` (``""``, or why the
    MFU is above the highest MFU published on the chip's family at this precision:
    :func:`~accelbook.training.plausibility.plausibility`). ``df.attrs`` holds ``mfu_ceiling`` (that
    published maximum, a :class:`~accelbook.training.plausibility.MfuCeiling`, None where none is published),
    ``n_evaluated``, ``n_fit``, the best :class:`TrainingEstimate` under ``"best"``, and what was
    pinned, derived and searched (:func:`pins`). ``fixed`` pins any dimension of
    :data:`~.records.CONFIG_FIELDS` (``tp=8``, ``dp=64``, ``pp=[8, 16]``, ``recompute="full"``,
    ``grad_sync="step"``); see :func:`search_space`.
    """
    top = None if top is None else whole("top", top)
    model, chip, cl, n, s, cfg, res, k, n_fit = search_arrays(
        model, chip, n_chips, global_batch_tokens, seq_len, precision, cluster, flash_attention, sequence_parallel,
        memory_reserve, tp_overlap, include_unfit, fixed, cp_comm, top=top)
    cols = _columns(cfg[:top], res[:top])
    # the kernel's MFU is causal attention at the run's own peak; report the one convention (mfu.py)
    kernel_mfu = output_fields("training.search", {"kernel_mfu": cols["mfu"]}, fractions={"kernel_mfu"})["kernel_mfu"]
    cols["mfu"] = model_flops_utilisation(cols["tokens_per_s_per_chip"], model, chip, s, precision)
    cols["hfu"] = cols["mfu"] * np.divide(cols["hfu"], kernel_mfu, out=np.ones(len(kernel_mfu)), where=kernel_mfu > 0)
    cols["why"] = _why(cols)
    best = {k: v[0] for k, v in cols.items()}
    best_est = estimate(model, chip, n, global_batch_tokens, s, cluster=cl, memory_reserve=memory_reserve,
                        layout=Layout.from_mapping({**best, "precision": precision, "flash_attention": flash_attention,
                                                    "sequence_parallel": sequence_parallel, "tp_overlap": tp_overlap,
                                                    "cp_comm": cp_comm}))
    out = pd.DataFrame(cols)
    numbers = {k: v for k, v in cols.items() if v.dtype.kind in "iuf"}
    try:    # the check on the number columns; a failure is named as the table's columns are
        output_fields("training.search", numbers, fractions={"kernel_mfu"})
    except ValueError:
        output_fields("training.search", out, fractions={"kernel_mfu"})
    # the plausibility flag on the result rows, vectorised (never in the kernel): one ceiling per chip and precision
    out["mfu_flag"] = mfu_flags(chip, precision, cols["mfu"])
    # attrs last: pandas deep-copies them into every frame an operation makes (the checks above make many)
    out.attrs.update(mfu_ceiling=mfu_ceiling(chip, precision), n_evaluated=k, n_fit=n_fit, model=model.name, chip=chip.name, cluster=cl.name, **pins(n, fixed),
                     best=best_est)
    return out


def search_arrays(model, chip, n_chips, global_batch_tokens, seq_len, precision, cluster, flash_attention,
                  sequence_parallel, memory_reserve, tp_overlap, include_unfit, fixed, cp_comm="ring", top=None,
                  count_fit=True):
    """The search without tables: (model, chip, cluster, n, s, config rows and result rows in ranking
    order, number evaluated, number that fit). The ranking: fits first, then step time; ties to the
    lower ZeRO stage, then the smaller memory. With ``top`` (a checked whole number) the rows are exact
    in their first ``top`` places and may stop after them (:func:`_contenders`): up to
    :data:`RANK_TOP_MAX`, only the layouts that may rank are evaluated (:func:`~.kernel.rank_layouts`)
    and their full rows after (:func:`~.kernel.evaluate_rows`, the same numbers); ``count_fit`` false
    then leaves the number that fit uncounted (only 0 when none fits: :func:`best_config`). Raises a
    ``ValueError`` when no layout is valid, or none fits (``include_unfit`` false)."""
    model, chip, cl = resolve(model, chip, cluster, precision)
    n = chip_count(n_chips)
    s = sequence_length(seq_len)
    B = batch_sequences(global_batch_tokens, s)
    reserve = memory_reserve_fraction(memory_reserve)
    sp = search_space(model, n, **fixed)
    check_pinned(model, n, s, fixed)
    mv = model_record(model, s)
    cv, _ = chip_record(chip, cl, precision, s, attention_head_dim(model))
    usable = usable_memory_bytes(chip.hbm_bytes, reserve)
    opt = options_record(fraction("tp_overlap", tp_overlap), one_of("cp_comm", cp_comm, CP_COMM))
    if top is not None and not include_unfit and top <= RANK_TOP_MAX:
        return _ranked(model, chip, cl, n, s, B, mv, cv, sp, flash_attention, sequence_parallel, usable, opt, top,
                       count_fit, fixed)
    cfg, res = evaluate_layouts(mv, cv, n, B, s, sp, flash_attention, sequence_parallel, usable, opt)
    k = len(cfg)
    _check_found(model, chip, n, B, s, k, fixed)
    fits = res["fits"] > 0.5
    n_fit = int(fits.sum())
    if n_fit == 0 and not include_unfit:
        i = int(np.argmin(res["memory_per_chip_bytes"]))
        _none_fits(model, chip, n, B, s, cfg[i], res[i]["memory_per_chip_bytes"])
    keep = np.arange(k) if include_unfit else _contenders(np.flatnonzero(fits), res["step_time_s"], top)
    order = _ranking(keep, cfg["zero_stage"], res["step_time_s"], fits, res["memory_per_chip_bytes"])
    return model, chip, cl, n, s, cfg[order], res[order], k, n_fit


def _ranked(model, chip, cl, n, s, B, mv, cv, sp, flash, seqpar, usable, opt, top, count_fit, fixed):
    """:func:`search_arrays` for the first ``top`` (fitting) rows: only the layouts that may rank are
    evaluated (:func:`~.kernel.rank_layouts`), their full rows after (:func:`~.kernel.evaluate_rows`)."""
    cfg, key, k, n_fit, (low_cfg, low_mem) = rank_layouts(mv, cv, n, B, s, sp, flash, seqpar, usable, opt, top,
                                                          count_fit)
    _check_found(model, chip, n, B, s, k, fixed)
    if n_fit == 0:
        _none_fits(model, chip, n, B, s, low_cfg, low_mem)
    keep = _contenders(np.arange(len(cfg)), key["step_time_s"], top)
    order = _ranking(keep, cfg["zero_stage"], key["step_time_s"], key["fits"] > 0.5, key["memory_per_chip_bytes"])
    return model, chip, cl, n, s, cfg[order], evaluate_rows(mv, cv, B, s, cfg[order], flash, seqpar, usable, opt), \
        k, n_fit


def _ranking(keep: np.ndarray, zero: np.ndarray, step: np.ndarray, fits: np.ndarray, mem: np.ndarray) -> np.ndarray:
    """The rows ``keep`` in ranking order: fits first, then step time; ties to the lower ZeRO stage, then
    the smaller memory, then the enumeration's order."""
    return keep[np.lexsort((mem[keep], zero[keep], step[keep], ~fits[keep]))]


def _check_found(model, chip, n, B, s, k, fixed) -> None:
    if k == 0:
        raise ValueError(f"no valid layout of {model.name} on {n} chips with a batch of {B} × {s} tokens and "
                         f"{fixed or 'no constraints'}: check that the chip count and batch divide as the "
                         "layout needs (tp·cp·pp·dp = chips, dp·microbatch divides the batch)")


def _none_fits(model, chip, n, B, s, cfg_row, mem) -> None:
    """Raise the ``ValueError`` saying that no layout fits, with the one that needs the least memory."""
    raise ValueError(
        f"no layout of {model.name} fits on {n} × {chip.name} ({chip.hbm_bytes / 1e9:.0f} GB) with a batch of "
        f"{B} × {s} tokens: the smallest needs {mem / 1e9:.1f} GB per chip "
        f"(tp={int(cfg_row['tp'])}, pp={int(cfg_row['pp'])}, zero={int(cfg_row['zero_stage'])}, "
        f"recompute={RECOMPUTE[int(cfg_row['recompute'])]}). More chips, or a smaller microbatch or sequence.")


def _contenders(keep: np.ndarray, step: np.ndarray, top: int | None) -> np.ndarray:
    """The rows of ``keep`` (ascending, all of them fitting) that can rank in the first ``top``: those no
    slower than the ``top``-th fastest. The ranking sorts by step time first and is stable, so every row
    of its first ``top`` is among them, in the same order (ties at that step time are all kept)."""
    if top is None or top >= len(keep):
        return keep
    t = step[keep]
    bound = np.partition(t, top - 1)[top - 1]
    return keep[t <= bound] if bound == bound else keep    # a NaN bound: rank them all
def best_config(model, chip, n, global_batch_tokens, seq_len, precision, cl, fixed) -> dict:
    """The layout :func:`search` ranks first, as a config dict (no tables): tp, cp, pp, vp, dp, ep,
    microbatch, zero_stage, recompute and grad_sync (their names), precision, seq_len, flash_attention, sequence_parallel."""
    model, chip, cl, n, s, cfg, res, _, _ = search_arrays(
        model, chip, n, global_batch_tokens, seq_len, precision, cl, True, True, MEMORY_RESERVE, 0.0, False, fixed,
        top=1, count_fit=False)
    c = {f: int(cfg[0][f]) for f in CONFIG_FIELDS}
    c["recompute"] = RECOMPUTE[c["recompute"]]
    c["grad_sync"] = GRAD_SYNC[c["grad_sync"]]
    c["schedule"] = SCHEDULES[c["schedule"]]
    return dict(c, precision=precision, seq_len=s, flash_attention=True, sequence_parallel=True)


def check_pinned(model: Model, n: int, s: int, fixed: dict) -> None:
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


def _columns(cfg: np.ndarray, res: np.ndarray) -> dict[str, np.ndarray]:
    """:func:`search`'s columns: the config fields (names for recompute, grad_sync and schedule), then the
    result fields (``fits`` as booleans, ``n_microbatches`` whole)."""
    cols = {f: cfg[f].astype(np.int64) for f in CONFIG_FIELDS}
    for k, names in (("recompute", RECOMPUTE), ("grad_sync", GRAD_SYNC), ("schedule", SCHEDULES)):
        cols[k] = np.array(names, dtype=object)[cols[k]]
    cols.update((f, res[f]) for f in RESULT_FIELDS)
    cols["fits"] = cols["fits"] > 0.5
    cols["n_microbatches"] = cols["n_microbatches"].round().astype(np.int64)
    return cols


def _why(cols: dict[str, np.ndarray]) -> np.ndarray:
    """For each row of :func:`search`'s columns, the component that costs it most relative to the first
    (best) row (vectorised)."""
    if not len(cols["step_time_s"]):
        return np.array([], dtype=object)
    comps = list(TIME_LABELS)
    vals = np.column_stack([cols[k] for k in comps])
    best_step = cols["step_time_s"][0]
    delta = (vals - vals[0]) / best_step
    worst = delta.argmax(axis=1)
    slower = cols["step_time_s"] / best_step - 1
    names = np.array([TIME_LABELS[k] for k in comps], dtype=object)
    why = np.array([f"{sl:+.1%}: {nm} {dl:+.1%} of the best step" for sl, nm, dl in
                    zip(slower, names[worst], delta[np.arange(len(slower)), worst])], dtype=object)
    fits = cols["fits"]
    mem = cols["memory_per_chip_bytes"]
    why[~fits] = [f"does not fit ({x / 1e9:.0f} GB per chip)" for x in mem[~fits]]
    why[0] = "fastest that fits" if fits[0] else why[0]
    return why
