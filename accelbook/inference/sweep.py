"""Searching layouts: every (tp, pp, batch) that fits, the best one, the fewest chips that hold a
model (:func:`min_chips`), and the throughput-interactivity front (tokens/s per chip against tokens/s
per user) across systems.

The searches are bounded: :func:`layouts` tries at most ``n_layers`` pipeline depths and ``max_tp``
tensor-parallel degrees whatever ``n`` (a chip count of a billion lists its layouts at once), and
:func:`min_chips` refuses a search of more than :data:`MAX_SEARCH_ESTIMATES` layouts, naming the limit."""

from __future__ import annotations

import inspect
import math

import numpy as np
import pandas as pd

from accelbook.checks import instance, one_of, positive, whole, within_budget
from accelbook.specs.chips import Chip, get_chip
from accelbook.specs.models import Model, bytes_per_element, get_model
from accelbook.specs.system_power import default_pue

from .dataflow import plausibility
from .estimate import MAX_BATCH, InferenceEstimate, checked_inputs, estimate
from .parallel import ATTENTION_LAYOUTS
from .power import decode_power
from .rates import WEIGHT_PRECISIONS
from .result import usable_bytes
from .terms import InferenceLayout, allreduce_terms, chip_rates, decode_terms, memory_terms, prefill_terms, throughput

#: the most layouts :func:`min_chips` evaluates (well under a millisecond each) before it refuses
MAX_SEARCH_ESTIMATES = 20_000


def layouts(model: Model | str, n: int, max_tp: int = 64, attention: str = "tp") -> list[tuple[int, int]]:
    """Every (tp, pp) with tp·pp dividing ``n``, ``tp`` dividing the model's attention heads (a chip
    holds whole heads; with ``attention="dp"`` the tp chips are expert-parallel ranks that each hold whole
    attention, so any tp), at most ``n_layers`` stages and ``max_tp`` tensor-parallel."""
    model = instance("model", model, Model, get_model)
    n, max_tp = whole("n", n), whole("max_tp", max_tp)
    one_of("attention", attention, ATTENTION_LAYOUTS)
    return [(tp, pp) for pp in range(1, min(n, model.n_layers) + 1) if n % pp == 0
            for tp in range(1, min(max_tp, n // pp) + 1)
            if (n // pp) % tp == 0 and (attention != "tp" or model.n_heads % tp == 0)]


def min_chips(model: Model | str, chip: Chip | str, precision: str = "bf16", input_len: int = 0,
              output_len: int = 0, batch_size: int = 1, max_tp: int = 64) -> int:
    """Fewest chips that hold the model: how many LPUs a 70B model needs.

    Without a context (``input_len = output_len = 0``): the weights alone,
    ``ceil(N·bytes per weight / usable memory per chip)``. With one: the fewest chips on which a
    layout of :func:`layouts` fits the weights and ``batch_size`` sequences' KV cache at
    ``input_len + output_len`` tokens (:func:`~accelbook.inference.estimate.estimate`'s ``fits``), so
    that :func:`sweep` is not empty there. Llama 2 70B in fp16 on Groq LPU v1: 600 chips hold the
    weights; with 1,024 + 256 tokens of cache the first count whose layouts fit is higher.

    Only layouts of one replica (``tp·pp = n``) are tried: a replica of fewer chips holds as much per
    chip as it would alone, and no layout spans more than ``max_tp·n_layers`` chips; past
    :data:`MAX_SEARCH_ESTIMATES` candidates the search is refused."""
    model = instance("model", model, Model, get_model)
    chip = instance("chip", chip, Chip, get_chip)
    one_of("precision", precision, WEIGHT_PRECISIONS)
    s_in, s_out = whole("input_len", input_len, 0), whole("output_len", output_len, 0)
    B, max_tp = whole("batch_size", batch_size), whole("max_tp", max_tp)
    if chip.memory_bytes is None:
        raise ValueError(f"chip {chip.name} publishes no memory capacity")
    lo = math.ceil(model.params * bytes_per_element(precision) / usable_bytes(chip))
    if s_in + s_out == 0:
        return lo
    if s_in == 0 or s_out == 0:
        raise ValueError("input_len and output_len must both be >= 1 to count the KV cache (both 0: weights only)")
    hi = min(2 * lo + 63, max_tp * model.n_layers)
    tps = [t for t in range(1, min(max_tp, model.n_heads) + 1) if model.n_heads % t == 0]
    cands = sorted((tp * pp, pp, tp) for pp in range(1, model.n_layers + 1) for tp in tps if lo <= tp * pp <= hi)
    within_budget(f"finding the fewest {chip.name} for {model.name}", len(cands), MAX_SEARCH_ESTIMATES, "layouts",
                  "accelbook.inference.sweep.MAX_SEARCH_ESTIMATES")
    for n, pp, tp in cands:
        if estimate(model, chip, n, B, s_in, s_out, precision, tp=tp, pp=pp).fits:
            return n
    raise ValueError(f"{model.name} with {B} × {s_in + s_out} tokens of KV cache fits no layout of {lo} to "
                     f"{hi} × {chip.name} (at most max_tp = {max_tp} × {model.n_layers} layers)")


def sweep(model, chip, n_chips: int, input_len: int, output_len: int, precision: str = "bf16",
          batches=None, max_tp: int = 64, layout: tuple[int, int] | None = None, **kw) -> pd.DataFrame:
    """Every (tp, pp, batch) that fits on ``n_chips``: one row each, for the frontier and the search.
    ``kw`` goes to :func:`~accelbook.inference.estimate.estimate` (``attention="dp"``: DP attention + EP).
    A row's ``flag`` says why its per-user speed is out of the model's reach (``""`` when it is not).
    ``batches``: the batch sizes tried (default: powers of two to 4,096 and the largest that fits).
    ``layout``: one ``(tp, pp)`` of :func:`layouts` only (a dashboard's chosen layout), else every one.

    Every row is :func:`~accelbook.inference.estimate.estimate`'s figures for its layout and batch; with
    tensor-parallel attention they are computed all at once on arrays (:mod:`accelbook.inference.terms`)."""
    cols = _sweep_columns(model, chip, n_chips, input_len, output_len, precision, batches, max_tp, layout, kw)
    return pd.DataFrame(cols) if len(cols["batch"]) else pd.DataFrame()


def _sweep_columns(model, chip, n_chips, input_len, output_len, precision, batches, max_tp, layout, kw) -> dict:
    """:func:`sweep`'s table as columns of equal length (arrays, or lists where a value is missing)."""
    model = instance("model", model, Model, get_model)
    chip = instance("chip", chip, Chip, get_chip)
    if batches is not None:
        if isinstance(batches, (str, bytes)) or not hasattr(batches, "__iter__"):
            raise TypeError(f"batches must be a list of whole numbers >= 1, got {batches!r}"[:200])
        batches = [whole("batches", b) for b in batches]
    n_chips = whole("n_chips", n_chips)
    every = layouts(model, n_chips, max_tp, kw.get("attention", "tp"))
    if layout is not None:
        if not (isinstance(layout, tuple) and len(layout) == 2 and tuple(layout) in every):
            raise ValueError(f"layout must be one (tp, pp) of inference.layouts for {n_chips} chips "
                             f"(max_tp {max_tp}): {every[:12]}, got {layout!r}"[:300])
        every = [tuple(layout)]
    if not every:
        return {"batch": []}
    args = (model, chip, n_chips, input_len, output_len, precision)
    if kw.get("attention", "tp") == "dp":       # the terms take arrays for tensor-parallel attention only
        rows = [_row(_estimate_at(args, B, lay, kw)) for lay in every
                for B in _batches(_estimate_at(args, 1, lay, kw).max_batch_size, batches)]
        return {c: [r[c] for r in rows] for c in rows[0]} if rows else {"batch": []}
    lay = checked_inputs(model, chip, n_chips, 1, input_len, output_len, precision, *every[0], **kw)[2]   # once
    return _grid(args, every, batches, lay.kv_precision, kw)


def _estimate_at(args: tuple, B: int, layout: tuple[int, int], kw: dict) -> InferenceEstimate:
    """:func:`estimate` of a sweep's ``args`` (model, chip, n_chips, input_len, output_len, precision)
    at batch ``B`` and ``layout = (tp, pp)``."""
    model, chip, n, s_in, s_out, precision = args
    return estimate(model, chip, n, int(B), s_in, s_out, precision, tp=int(layout[0]), pp=int(layout[1]), **kw)


def _batches(max_batch: int, batches) -> list[int]:
    """The batch sizes a sweep tries on a layout that holds at most ``max_batch`` sequences."""
    if max_batch < 1:
        return []
    bs = batches if batches is not None else sorted({2**k for k in range(0, 13)} | {max_batch})
    return [int(B) for B in bs if 1 <= B <= max_batch]


def _row(e: InferenceEstimate) -> dict:
    return {"chip": e.chip, "tp": e.config["tp"], "pp": e.config["pp"], "replicas": e.config["replicas"],
            "batch": e.config["batch_size"], "ttft_s": e.ttft_s, "tpot_s": e.tpot_s,
            "tokens_per_s_per_user": e.tokens_per_s_per_user, "tokens_per_s_per_chip": e.tokens_per_s_per_chip,
            "tokens_per_s": e.tokens_per_s, "tokens_per_s_per_kw": e.tokens_per_s_per_kw,
            "usd_per_million_tokens": e.usd_per_million_tokens, "decode_bound": e.decode_bound,
            "attention": e.config["attention"], "flag": e.flag}


def _grid(args: tuple, every: list, batches, kv_precision: str, kw: dict) -> dict:
    """:func:`sweep`'s columns, every layout and batch at once: the terms of :mod:`~accelbook.inference.terms`
    on arrays, the same formulas :func:`~accelbook.inference.estimate.estimate` evaluates one at a time. A
    row whose numbers leave the model's range is handed to :func:`estimate`, which says why."""
    model, chip, n, s_in, s_out, precision = args
    r = chip_rates(chip, precision, kw.get("hop_latency_s"), kw.get("mem_efficiency"), kw.get("cuda_graphs", True))
    streaming = kw.get("weight_streaming_bytes_per_s")
    tp, pp = (np.array(c, dtype=np.int64) for c in zip(*every))
    one = InferenceLayout(n, np.ones(len(tp), dtype=np.int64), s_in, s_out, tp, pp, n // (tp * pp), precision, kv_precision)
    per_layout = [_batches(mb, batches) for mb in memory_terms(model, one, r, streaming).max_batch.tolist()]
    B = np.array([b for bs in per_layout for b in bs], dtype=np.int64)
    if not len(B):
        return {"batch": []}
    k = [len(bs) for bs in per_layout]
    tp, pp = np.repeat(tp, k), np.repeat(pp, k)
    if B.max() > MAX_BATCH:      # past the estimate's bounds: it raises, naming the bound
        i = int(np.argmax(B))
        _estimate_at(args, B[i], (tp[i], pp[i]), kw)
    lay = InferenceLayout(n, B, s_in, s_out, tp, pp, n // (tp * pp), precision, kv_precision)
    m = memory_terms(model, lay, r, streaming)
    ar = allreduce_terms(model, lay, r)           # the same for decode and prefill: worked out once
    dec = decode_terms(model, chip, lay, r, m, kw.get("tokens_per_seq", 1), ar)
    pf = prefill_terms(model, chip, lay, r, m, ar)
    tps = throughput(lay, dec, pf)
    pue = kw["pue"] if kw.get("pue") is not None else default_pue()
    pw = decode_power(chip, dec.gemm_mem + dec.attn_mem, dec.gemm_cmp + dec.attn_cmp, dec.t_stage, pue)
    price = kw.get("price_usd_per_hour") if kw.get("price_usd_per_hour") is not None else chip.price_usd_per_hour
    out = {"ttft_s": pf.ttft, "tpot_s": dec.tpot,
           "tokens_per_s_per_user": 1 / dec.tpot, "tokens_per_s_per_chip": tps / n, "tokens_per_s": tps,
           "tokens_per_s_per_kw": None if pw.wall_w is None else tps / (pw.wall_w * n / 1000),
           "usd_per_million_tokens": None if price is None else price * n / 3600 / tps * 1e6}
    bad = ~np.all([np.isfinite(v) & (v >= 0) for v in out.values() if v is not None], axis=0)
    if bad.any():               # an impossible number: the estimate names it
        i = int(np.argmax(bad))
        _estimate_at(args, B[i], (tp[i], pp[i]), kw)
    k = len(B)
    flag = plausibility(chip, model, out["tokens_per_s_per_user"])
    one_user = np.flatnonzero(B == 1)          # a batch-1 point is checked against speeds published on n chips too
    if len(one_user):
        flag[one_user] = plausibility(chip, model, out["tokens_per_s_per_user"][one_user], n_chips=int(n))
    return {"chip": np.full(k, chip.name, dtype=object), "tp": tp, "pp": pp, "replicas": lay.replicas, "batch": B,
            **{c: v if v is not None else np.full(k, None, dtype=object) for c, v in out.items()},
            "decode_bound": pw.bound, "attention": np.full(k, "tp", dtype=object), "flag": flag}


def max_throughput(model, chip, n_chips: int, input_len: int, output_len: int, precision: str = "bf16",
                   tpot_target_s: float | None = None, ttft_target_s: float | None = None, **kw) -> InferenceEstimate:
    """The layout and batch with the most tokens/s per chip that fit (and meet the targets, if given).
    ``kw``: :func:`sweep`'s ``batches``, ``max_tp``, ``layout`` (the choice is among those) and
    :func:`~accelbook.inference.estimate.estimate`'s keywords; any other name is refused before the sweep."""
    for name, v in (("tpot_target_s", tpot_target_s), ("ttft_target_s", ttft_target_s)):
        if v is not None:
            positive(name, v)
    unknown = sorted(set(kw) - _MAX_THROUGHPUT_KEYWORDS)
    if unknown:
        raise TypeError(f"max_throughput got an unexpected keyword argument {unknown[0]!r}; it takes "
                        f"{', '.join(sorted(_MAX_THROUGHPUT_KEYWORDS))}")
    df = sweep(model, chip, n_chips, input_len, output_len, precision, **kw)
    if df.empty:
        m = model if isinstance(model, Model) else get_model(model)
        c = chip if isinstance(chip, Chip) else get_chip(chip)
        n_min = min_chips(m, c, precision, input_len, output_len, max_tp=kw.get("max_tp", 64))
        raise ValueError(f"{m.name} does not fit on {n_chips} × {c.name} at {precision}: at least {n_min} chips "
                         f"hold the weights and the KV cache of one sequence of {input_len + output_len:,} tokens")
    ok = df
    if tpot_target_s is not None:
        ok = ok[ok["tpot_s"] <= tpot_target_s]
    if ttft_target_s is not None:
        ok = ok[ok["ttft_s"] <= ttft_target_s]
    if ok.empty:
        raise ValueError(f"no layout meets the targets (tpot_target_s = {tpot_target_s}, ttft_target_s = "
                         f"{ttft_target_s}); the fastest TPOT that fits is {df['tpot_s'].min() * 1e3:.1f} ms, the "
                         f"fastest TTFT {df['ttft_s'].min() * 1e3:.1f} ms")
    r = ok.loc[ok["tokens_per_s_per_chip"].idxmax()]
    for k in _SWEEP_ONLY:            # a sweep's arguments, not an estimate's
        kw.pop(k, None)
    return estimate(model, chip, n_chips, int(r.batch), input_len, output_len, precision, tp=int(r.tp), pp=int(r.pp), **kw)


#: max_throughput's keywords: the sweep's own, and estimate's except those the search chooses
_SWEEP_ONLY = ("batches", "max_tp", "layout")
_MAX_THROUGHPUT_KEYWORDS = frozenset(_SWEEP_ONLY) | (frozenset(inspect.signature(checked_inputs).parameters)
                                                    - {"model", "chip", "n_chips", "batch_size", "input_len",
                                                       "output_len", "precision", "tp", "pp"})


def pareto(df: pd.DataFrame, x: str = "tokens_per_s_per_user", y: str = "tokens_per_s_per_chip") -> pd.DataFrame:
    """The points no other point beats on both ``x`` and ``y`` (higher is better), sorted by ``x``."""
    df = instance("df", df, pd.DataFrame)
    one_of("x", x, list(df.columns))
    one_of("y", y, list(df.columns))
    return df.iloc[_front(df[x].to_numpy(dtype=float), df[y].to_numpy(dtype=float))]


def _front(xs: np.ndarray, ys: np.ndarray) -> np.ndarray:
    """Positions of :func:`pareto`'s points, by ascending ``x``: going from the highest ``x`` down (ties by
    ``y``, highest first, then in order), a point is kept when its ``y`` beats every one before it; NaN
    never beats, and sorts last."""
    order = np.lexsort((-ys, -xs))
    y_sorted = ys[order]
    kept = order[y_sorted > np.fmax.accumulate(np.concatenate(([-np.inf], y_sorted[:-1])))]
    return kept[np.argsort(xs[kept], kind="stable")]     # the kept x are distinct: one order


def frontier(model, chips: dict, input_len: int, output_len: int, precision: str = "bf16", skip_errors: bool = False,
             **kw) -> pd.DataFrame:
    """Throughput against interactivity: for each ``{label: (chip, n_chips)}``, the Pareto front of
    tokens/s per chip against tokens/s per user over every layout and batch that fits (a ``system`` column
    says whose). A system on which no layout fits is left out; with ``skip_errors``, so is one whose sweep
    raises a ``ValueError`` (a chip that publishes no peak at ``precision``, say)."""
    if not isinstance(chips, dict) or not chips or not all(isinstance(v, tuple) and len(v) == 2 for v in chips.values()):
        raise TypeError(f"chips must be a non-empty dict {{label: (chip, n_chips)}}, got {chips!r}"[:200])
    max_tp = kw.pop("max_tp", 64)
    parts = []
    for label, (chip, n) in chips.items():
        try:
            cols = _sweep_columns(model, chip, n, input_len, output_len, precision, None, max_tp, None, kw)
        except ValueError:
            if skip_errors:
                continue
            raise
        if len(cols["batch"]):
            i = _front(np.asarray(cols["tokens_per_s_per_user"], dtype=float),
                       np.asarray(cols["tokens_per_s_per_chip"], dtype=float))
            parts.append({**{c: np.asarray(v)[i] for c, v in cols.items()}, "system": np.full(len(i), label, dtype=object)})
    if not parts:
        raise ValueError("the model fits on none of these systems")
    return pd.DataFrame({c: np.concatenate([p[c] for p in parts]) for c in parts[0]})
