"""Every parallel layout: :func:`search_space` (the candidates) and :func:`search` (all valid layouts
evaluated, the fastest that fits first), and :func:`best_config` (the winner, without the table)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from accelbook.checks import fraction, one_of, whole
from accelbook.specs.chips import MEMORY_RESERVE, Chip, usable_memory_bytes
from accelbook.specs.clusters import Cluster
from accelbook.specs.models import Model

from .arguments import batch_sequences, memory_reserve_fraction, resolve
from .kernel import evaluate_layouts
from .slots import (
    CFG_PP,
    CFG_REC,
    CFG_TP,
    CFG_ZERO,
    CONFIG_FIELDS,
    R_FITS,
    R_MEMORY_PER_CHIP_BYTES,
    R_STEP_TIME_S,
    RECOMPUTE,
    RESULT_FIELDS,
    chip_vector,
    model_vector,
)
from .step import TIME_LABELS, ZERO_STAGES, estimate


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
        "zero_stage": np.array(ZERO_STAGES, dtype=np.int64),
        "recompute": np.arange(len(RECOMPUTE), dtype=np.int64),
    }
    for k, v in fixed.items():
        if k not in space:
            raise ValueError(f"cannot fix {k!r}; choose from {', '.join(space)}")
        if v is None:
            continue
        vals = list(v) if isinstance(v, (list, tuple, np.ndarray)) else [v]
        if k == "recompute":
            vals = [RECOMPUTE.index(one_of("recompute", x, RECOMPUTE)) for x in vals]
        elif k == "zero_stage":
            vals = [one_of("zero_stage", x, ZERO_STAGES) for x in vals]
        else:
            vals = [whole(k, x) for x in vals]
        space[k] = np.array(vals, dtype=space[k].dtype)
    return space


def search(model: Model | str, chip: Chip | str | None, n_chips: int, global_batch_tokens: float, seq_len: int,
           precision: str = "bf16", cluster: Cluster | str | None = None, flash_attention: bool = True,
           sequence_parallel: bool = True, memory_reserve: float = MEMORY_RESERVE, tp_overlap: float = 0.0,
           top: int | None = 20, include_unfit: bool = False, **fixed) -> pd.DataFrame:
    """Every valid layout of ``model`` on ``n_chips`` evaluated; the fastest that fits first.

    Returns one row per layout (``top`` rows, or all with ``top=None``): the layout, step time,
    MFU, tokens/s per chip, memory per chip, whether it fits, every time and memory component, and
    ``why`` (how a runner-up loses to the best: its largest extra cost). ``df.attrs`` holds
    ``n_evaluated``, ``n_fit`` and the best :class:`TrainingEstimate` under ``"best"``.
    ``fixed`` pins dimensions (``tp=8``, ``pp=[8, 16]``, ``recompute="full"``); see :func:`search_space`.
    """
    model, chip, cl, n, s, cfg, res, order, n_fit = search_arrays(
        model, chip, n_chips, global_batch_tokens, seq_len, precision, cluster, flash_attention, sequence_parallel,
        memory_reserve, tp_overlap, include_unfit, fixed)
    k = len(cfg)
    if top is not None:
        order = order[:whole("top", top)]
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


def search_arrays(model, chip, n_chips, global_batch_tokens, seq_len, precision, cluster, flash_attention,
                  sequence_parallel, memory_reserve, tp_overlap, include_unfit, fixed):
    """The search without tables: (model, chip, cluster, n, s, config rows, result rows, ranking,
    number that fit). The ranking: fits first, then step time; ties to the lower ZeRO stage, then the
    smaller memory. Raises a ``ValueError`` when no layout is valid, or none fits (``include_unfit`` false)."""
    model, chip, cl = resolve(model, chip, cluster, precision)
    n = whole("n_chips", n_chips)
    s = whole("seq_len", seq_len, 2)
    B = batch_sequences(global_batch_tokens, s)
    reserve = memory_reserve_fraction(memory_reserve)
    sp = search_space(model, n, **fixed)
    check_pinned(model, n, s, fixed)
    mv = model_vector(model, s)
    cv, _ = chip_vector(chip, cl, precision)
    cfg, res = evaluate_layouts(mv, cv, n, B, s, sp, flash_attention, sequence_parallel,
                                usable_memory_bytes(chip.hbm_bytes, reserve), fraction("tp_overlap", tp_overlap))
    k = len(cfg)
    if k == 0:
        raise ValueError(f"no valid layout of {model.name} on {n} chips with a batch of {B} × {s} tokens and "
                         f"{fixed or 'no constraints'}: check that the chip count and batch divide as the "
                         "layout needs (tp·cp·pp·dp = chips, dp·microbatch divides the batch)")
    fits = res[:, R_FITS] > 0.5
    n_fit = int(fits.sum())
    if n_fit == 0 and not include_unfit:
        i = int(np.argmin(res[:, R_MEMORY_PER_CHIP_BYTES]))
        raise ValueError(
            f"no layout of {model.name} fits on {n} × {chip.name} ({chip.hbm_bytes / 1e9:.0f} GB) with a batch of "
            f"{B} × {s} tokens: the smallest needs {res[i, R_MEMORY_PER_CHIP_BYTES] / 1e9:.1f} GB per chip "
            f"(tp={int(cfg[i, CFG_TP])}, pp={int(cfg[i, CFG_PP])}, zero={int(cfg[i, CFG_ZERO])}, "
            f"recompute={RECOMPUTE[int(cfg[i, CFG_REC])]}). More chips, or a smaller microbatch or sequence.")
    keep = np.arange(k) if include_unfit else np.flatnonzero(fits)
    order = keep[np.lexsort((res[keep, R_MEMORY_PER_CHIP_BYTES], cfg[keep, CFG_ZERO], res[keep, R_STEP_TIME_S],
                             ~fits[keep]))]
    return model, chip, cl, n, s, cfg, res, order, n_fit


def best_config(model, chip, n, global_batch_tokens, seq_len, precision, cl, fixed) -> dict:
    """The layout :func:`search` ranks first, as a config dict (no tables): tp, cp, pp, vp, dp, ep,
    microbatch, zero_stage, recompute (its name), precision, seq_len, flash_attention, sequence_parallel."""
    model, chip, cl, n, s, cfg, res, order, _ = search_arrays(
        model, chip, n, global_batch_tokens, seq_len, precision, cl, True, True, MEMORY_RESERVE, 0.0, False, fixed)
    c = {f: int(v) for f, v in zip(CONFIG_FIELDS, cfg[order[0]])}
    c["recompute"] = RECOMPUTE[c["recompute"]]
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
    comps = list(TIME_LABELS)
    vals = df[comps].to_numpy()
    best_step = df["step_time_s"].iloc[0]
    delta = (vals - vals[0]) / best_step
    worst = delta.argmax(axis=1)
    slower = df["step_time_s"].to_numpy() / best_step - 1
    names = np.array([TIME_LABELS[k] for k in comps], dtype=object)
    why = np.array([f"{sl:+.1%}: {nm} {dl:+.1%} of the best step" for sl, nm, dl in
                    zip(slower, names[worst], delta[np.arange(len(df)), worst])], dtype=object)
    fits = df["fits"].to_numpy()
    mem = df["memory_per_chip_bytes"].to_numpy()
    why[~fits] = [f"does not fit ({x / 1e9:.0f} GB per chip)" for x in mem[~fits]]
    why[0] = "fastest that fits" if fits[0] else why[0]
    return why
