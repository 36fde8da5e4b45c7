"""The model against published training runs (``data/training_runs.toml``).

Each run's published layout values are pinned; the ones its authors did not publish (listed under
``assumed``) are chosen by :func:`~accelbook.training.search`, the fastest layout that fits, as a
practitioner would tune them. The prediction is expressed as the authors reported it: their metric
(TFLOP/s, MFU, tokens/s, seconds per iteration) and their FLOP-counting convention (the model's
FLOPs with causal or full attention, or every executed FLOP: Narayanan et al. 2021, eq. 3).
"""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from accelbook.checks import one_of
from accelbook.specs.catalogue import catalogue_cache
from accelbook.specs.chips import Chip, get_chip
from accelbook.specs.loader import DATA_DIR, CatalogueError, check_keys, parse_quantity, read_table_file, user_sources
from accelbook.specs.models import Model, get_model

from .layouts import search
from .mfu import counted_flops_per_token, model_flops_utilisation, reference_peak_flop_s
from .step import TrainingEstimate, estimate

METRICS = ("tflop_s", "mfu", "tokens_per_s", "iteration_s")
CONVENTIONS = ("hardware_full", "model_full", "model_causal")
ROLES = ("target", "context")
#: a run's set: "check" (the default: the rows mechanisms were chosen and checked against) or "held-out"
#: (added after the mechanisms were chosen, looked at only to report; never used to choose or check one)
SETS = ("check", "held-out")
_RUN_REQUIRED = {"name", "model", "chip", "n_chips", "seq_len", "global_batch_sequences", "metric", "convention",
                 "reported", "role"}
#: a run's layout keys and the value taken when the run does not give one
RUN_LAYOUT_DEFAULTS = {"tp": 1, "pp": 1, "cp": 1, "ep": 1, "vp": 1, "microbatch": 1, "zero_stage": 1,
                       "recompute": "auto", "precision": "bf16", "flash_attention": True, "sequence_parallel": True,
                       "cluster": None, "cp_comm": "ring", "schedule": "1f1b"}
#: the layout keys the search may choose when a run lists them under ``assumed``
SEARCHABLE = ("tp", "pp", "cp", "ep", "vp", "microbatch", "zero_stage", "recompute", "schedule")


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
    one_of("metric", metric, METRICS)
    one_of("convention", convention, CONVENTIONS)
    if metric == "tokens_per_s":
        return est.tokens_per_s_per_chip
    if metric == "iteration_s":
        return est.step_time_s
    s, c = est.config["seq_len"], est.config
    attention = "causal" if convention == "model_causal" else "full"
    # hardware_full (Narayanan et al. 2021, eq. 3): full recomputation runs the layers' forward twice
    hardware = convention == "hardware_full" and c["recompute"] == "full"
    flops = counted_flops_per_token(model, s, attention, hardware_recompute=hardware)
    if metric == "tflop_s":
        return est.tokens_per_s_per_chip * flops / 1e12
    if not hardware:   # the one MFU (accelbook.training.mfu), in the authors' attention count, bf16 peak
        return model_flops_utilisation(est.tokens_per_s_per_chip, model, chip, s, c["precision"], attention, "bf16")
    return est.tokens_per_s_per_chip * flops / reference_peak_flop_s(chip, c["precision"], "bf16")


def published_runs(path=None) -> dict[str, dict]:
    """The rows of ``data/training_runs.toml``, checked, each with ``reported_value`` and
    ``reported_provenance`` added. Read once per version of the file and of ``sources.toml`` (their
    modification times and sizes); each call returns its own copy of the rows."""
    path = Path(path or DATA_DIR / "training_runs.toml")
    try:
        stamp = tuple((st.st_mtime_ns, st.st_size) for st in (path.stat(), (DATA_DIR / "sources.toml").stat()))
    except (OSError, TypeError):   # not a readable file: the reader says why
        return _read_runs(path)
    return {rid: dict(e) for rid, e in _published_runs(str(path), stamp).items()}


@functools.lru_cache(maxsize=8)
def _published_runs(path: str, stamp: tuple) -> dict[str, dict]:
    return _read_runs(path)


def _read_runs(path) -> dict[str, dict]:
    raw = read_table_file(path)
    sources = user_sources(Path(path), raw, None)   # the file's own [sources.<id>] tables, for this file only
    runs = {}
    for rid, e in raw.items():
        check_keys(path, rid, e, required=_RUN_REQUIRED,
                   optional=set(RUN_LAYOUT_DEFAULTS) | {"assumed", "moe_balancing", "unmodelled", "set"})
        if e["metric"] not in METRICS or e["convention"] not in CONVENTIONS or e["role"] not in ROLES:
            raise CatalogueError(path, rid, "metric", f"metric in {METRICS}, convention in {CONVENTIONS}, "
                                                      "role 'target' or 'context'")
        if e.get("set", "check") not in SETS:
            raise CatalogueError(path, rid, "set", f"one of {SETS} (default 'check'), got {e['set']!r}")
        q = parse_quantity(path, rid, "reported", e["reported"], "count", sources)
        for k, v in e.items():
            if isinstance(v, dict) and k != "reported" and v.get("src") not in sources:
                raise CatalogueError(path, rid, k, f"a setting given with its source needs a src in sources.toml "
                                                   f"or in the file's [sources], "
                                                   f"got {v.get('src')!r}")
        runs[rid] = dict(e, set=e.get("set", "check"), reported_value=q.value, reported_provenance=q.provenance)
    return runs


def run_model(e: dict) -> Model:
    """A published run's model, with the run's own router balancing where it gives one
    (``moe_balancing = "forced"``: a benchmark that forces every expert to the mean load)."""
    model = get_model(e["model"])
    if "moe_balancing" in e and model.moe is not None:
        model = dataclasses.replace(model, moe=dataclasses.replace(model.moe, balancing=e["moe_balancing"]))
    return model


def run_layout(e: dict) -> tuple[dict, dict]:
    """(fixed settings, pinned layout) of a published run: published values and accelbook's stated
    choices are pinned; layout keys listed in ``assumed`` but not given are left to the search."""
    assumed = set(e.get("assumed", []))
    # a setting may carry its source: { value = "allgather", src = "...", note = "..." }
    settings = {k: (lambda x: x["value"] if isinstance(x, dict) else x)(e.get(k, v))
                for k, v in RUN_LAYOUT_DEFAULTS.items() if k not in SEARCHABLE}
    pinned = {}
    for k in SEARCHABLE:
        if k in e:
            pinned[k] = e[k]
        elif k not in assumed:
            pinned[k] = RUN_LAYOUT_DEFAULTS[k]
    if pinned.get("recompute") == "auto":
        del pinned["recompute"]
    return settings, pinned


def validation_table(path=None) -> pd.DataFrame:
    """Predicted against reported for every published run. Published layout values are pinned;
    the unpublished ones (``assumed`` in the data, not given) are chosen by :func:`search`, the
    fastest that fits memory, as a practitioner would tune them. The metric is expressed in the
    authors' FLOP-counting convention; ``error`` = predicted / reported - 1. ``mfu_ceiling`` is the highest
    MFU published on the run's chip family and precision (NaN where none is), ``mfu_flag`` why the
    predicted ``mfu`` is above it (``""`` when it is not; :func:`~accelbook.training.plausibility.plausibility`).
    ``set`` is the run's set (:data:`SETS`): ``"check"`` (the default) or ``"held-out"``.

    ``path``: a TOML file of runs in the schema of ``data/training_runs.toml`` (default: that file).
    Each top-level table ``[run-id]`` is one run: ``name``, ``model`` and ``chip`` (catalogue ids,
    registered ones included), ``n_chips``, ``seq_len``, ``global_batch_sequences``, ``metric``,
    ``convention``, ``role`` (and optionally ``set``) and ``reported = { value = 41.2, src = "my-report", note = "..." }``, with
    the optional layout keys of :data:`RUN_LAYOUT_DEFAULTS`, ``assumed``, ``moe_balancing`` and
    ``unmodelled`` (their meaning: the header of ``data/training_runs.toml``). A user's file may cite
    its own publications in a ``[sources]`` table, one ``[sources.<id>]`` each with ``title``, ``url``,
    ``date`` (YYYY, YYYY-MM or YYYY-MM-DD) and ``kind`` (one of
    :data:`~accelbook.specs.loader.SOURCE_KINDS`: the schema of ``data/sources.toml``)::

        [sources.my-report]
        title = "Our 8B run on 64 H100"
        url = "https://example.org/report"
        date = "2025-06"
        kind = "primary"

        [my-8b-run]
        name = "Llama 3.1 8B on 64 H100 (our report)"
        model = "llama-3.1-8b"
        ...
        reported = { value = 0.41, src = "my-report", note = "Table 2" }

    Those sources extend ``data/sources.toml`` for that file only (an id already there is read as the
    file's; the package's catalogue is unchanged). A ``src`` found in neither, or a malformed entry, is
    a :class:`~accelbook.specs.loader.CatalogueError` naming the file, the entry and the key."""
    rows = []
    for rid, e in published_runs(path).items():
        _, pinned = run_layout(e)
        try:
            model, chip, est = run_estimate(e)
        except ValueError as err:
            rows.append({"id": rid, "run": e["name"], "role": e["role"], "set": e["set"],
                         "note": f"not evaluated: {err}"})
            continue
        pred = predicted_metric(est, model, chip, e["metric"], e["convention"])
        rep = e["reported_value"]
        c = est.config
        searched = [k for k in SEARCHABLE if k not in pinned]
        rows.append({
            "id": rid, "run": e["name"], "role": e["role"], "set": e["set"], "chips": e["n_chips"], "metric": e["metric"],
            "convention": e["convention"], "reported": rep, "predicted": pred, "error": pred / rep - 1,
            "mfu": est.mfu, "mfu_convention": est.mfu_convention,
            "mfu_ceiling": np.nan if est.mfu_ceiling is None else est.mfu_ceiling, "mfu_flag": est.mfu_flag,
            "fits": est.fits, "recompute": c["recompute"],
            "layout": f"tp{c['tp']} cp{c['cp']} pp{c['pp']} vp{c['vp']} dp{c['dp']} ep{c['ep']} "
                      f"mb{c['microbatch']} zero{c['zero_stage']} {c['recompute']} {c['precision']} sync:{c['grad_sync']} {c['schedule']}",
            "searched": ", ".join(searched), "source": e["reported_provenance"].source.title,
            "note": e.get("unmodelled", ""),
        })
    return pd.DataFrame(rows)


@dataclass(frozen=True)
class ErrorBand:
    """The model's signed error (predicted / reported - 1) over published runs: median, range, count."""

    median: float
    low: float
    high: float
    n: int
    role: str = "target"
    set: str | None = None   # None: every set

    def words(self) -> str:
        """``"model +20 % median over 15 published runs, range −1…+69 %"``."""
        return (f"model {self.median * 100:+.0f} % median over {self.n} published runs, "
                f"range {_signed(self.low)}…{_signed(self.high)} %")


def _signed(x: float) -> str:
    return f"{x * 100:+.0f}".replace("-", "\u2212")


@catalogue_cache(maxsize=1)
def _default_table() -> pd.DataFrame:
    return validation_table()


def error_band(table: pd.DataFrame | None = None, role: str = "target", set: str | None = None) -> ErrorBand:
    """Median and range of the signed ``error`` over the evaluated ``role`` rows of ``table``
    (default: :func:`validation_table` of ``data/training_runs.toml``, computed once per session).

    ``set``: ``None`` (default) takes the rows of every set; ``"check"`` or ``"held-out"`` (:data:`SETS`)
    only that set's, e.g. ``error_band(set="held-out")`` for the runs added after the mechanisms were chosen.

    The band to print next to any MFU or tokens/s the model predicts: a positive median means the
    model is optimistic. Rows not evaluated (no ``error``) are left out of ``n``.
    """
    one_of("role", role, ROLES)
    if set is not None:
        one_of("set", set, SETS)
    if table is not None and not isinstance(table, pd.DataFrame):
        raise TypeError(f"table must be a DataFrame (validation_table()) or None, got {type(table).__name__}")
    return _default_band(role, set) if table is None else _band(table, role, set)


@catalogue_cache(maxsize=len(ROLES) * (len(SETS) + 1))
def _default_band(role: str, set_: str | None) -> ErrorBand:
    return _band(_default_table(), role, set_)


def _band(t: pd.DataFrame, role: str, set_: str | None = None) -> ErrorBand:
    rows = t["role"] == role
    if set_ is not None:
        rows &= (t["set"] if "set" in t else pd.Series("check", index=t.index)) == set_
    err = t.loc[rows, "error"].dropna() if "error" in t else pd.Series(dtype=float)
    if err.empty:
        which = role if set_ is None else f"{role}, set {set_}"
        raise ValueError(f"the validation table has no evaluated {which!r} rows to take an error band from")
    return ErrorBand(float(err.median()), float(err.min()), float(err.max()), int(err.size), role, set_)


def run_estimate(e: dict) -> tuple[Model, Chip, TrainingEstimate]:
    """A published run's (model, chip, estimate) as :func:`validation_table` compares it: the run's
    layout pinned (:func:`run_layout`), the rest chosen by :func:`search` (the fastest that fits).
    ``e`` is a row of :func:`published_runs`; a ValueError says why no layout was found."""
    model, chip = run_model(e), get_chip(e["chip"])
    settings, pinned = run_layout(e)
    s = e["seq_len"]
    try:
        key = (_frozen(settings), _frozen(pinned))
        hash(key)
    except TypeError:   # a value that cannot key the cache: search without it
        return model, chip, _run_best(model, chip, e["n_chips"], e["global_batch_sequences"] * s, s, settings, pinned)
    return model, chip, _cached_run_best(e["model"], e.get("moe_balancing"), e["chip"], e["n_chips"],
                                         e["global_batch_sequences"] * s, s, *key)


def _frozen(d: dict) -> tuple:
    return tuple((k, tuple(v) if isinstance(v, list) else v) for k, v in d.items())


def _thawed(items: tuple) -> dict:
    return {k: list(v) if isinstance(v, tuple) else v for k, v in items}


def _run_best(model, chip, n, gbt, s, settings, pinned) -> TrainingEstimate:
    return search(model, chip, n, gbt, s, top=1, **settings, **pinned).attrs["best"]


@catalogue_cache(maxsize=128)
def _cached_run_best(model_id, balancing, chip_id, n, gbt, s, settings, pinned) -> TrainingEstimate:
    """A run's best estimate, searched once per session (the validation table and the waterfall share it)."""
    e = {"model": model_id} if balancing is None else {"model": model_id, "moe_balancing": balancing}
    return _run_best(run_model(e), get_chip(chip_id), n, gbt, s, _thawed(settings), _thawed(pinned))
