"""Dump every number accelbook computes to JSON, and compare two dumps (a refactoring check).

Purpose: prove that a behaviour-preserving change (e.g. moving modules into sub-packages) changed
no number. The dump is a flat JSON object of named entries; each value is a number, a string, a
list, ``null``/``true``/``false``, or a table ``{"columns", "index", "values"}`` (a DataFrame);
floats are written with ``repr`` precision, NaN and infinities as the strings ``"nan"``, ``"inf"``
and ``"-inf"``. It holds:

a. every validation table (collectives, inference, training, claims, SCALE-Sim, FLOP accounting,
   published runs/results) and the catalogues (chips, models, clusters, fabrics, chip-design
   constants);
b. a fixed grid of estimates from every model (training, inference, collectives, topology, MoE,
   serving, economics, migration, fleet, chip design, roofline, tiling, systolic), the expected
   answer of every exercise, and every dashboard's default view (its data, table and summary);
c. every notebook's numbers: each ``notebooks/*.ipynb`` is executed in a fresh plain-Python
   subprocess (no Jupyter kernel; ``display`` and ``get_ipython`` are stubs, magics are skipped),
   cell errors are recorded as entries, and at the end every global of simple type is dumped as
   ``nb:<notebook>:<name>``, plus what each cell printed (``nb:<notebook>:cell[i].stdout``, with
   wall-clock timings masked).

Keys name what was called with what, by the OLD flat module name (``training.estimate[...]``), never
by where the function lives now: every function is looked up through :func:`fn`, which takes
``accelbook.<old module>.<name>`` when that is a plain module (the flat layout, or a shim) and
otherwise searches every submodule of ``accelbook`` (ties between different objects of the same name
are broken by words of the old module name, :data:`HINTS`). Dashboards come from ``ALL_SPECS`` (or,
if it is gone or split, every ``*_spec`` function under ``accelbook.ui``) and are keyed by the spec's
name. So the same script runs unchanged against the flat layout and a layout with sub-packages, and
the two dumps have the same keys. A call that raises is recorded as ``<key>!error`` with the
exception's type and message (invalid combinations are part of the behaviour too); a name that
cannot be found anywhere shows up the same way (``LookupError``).

Usage: make a dump of the old commit in a worktree, one of the new tree, compare them. Run with the
repository's virtual environment; PYTHONPATH makes the tree you point at the ``accelbook`` that is
imported (it wins over the venv's editable install of this checkout; the dump prints which one it
imported); NUMBA_CACHE_DIR must be writable. From the repository root (REPO)::

    # 1. the old commit, in a worktree (once); REV is the commit before the refactor
    git worktree add ../baseline REV
    cd ../baseline && PYTHONPATH=$PWD NUMBA_CACHE_DIR=$PWD/.numba_cache \\
        REPO/.venv/bin/python REPO/benchmarks/dump_numbers.py dump /tmp/baseline_dump.json
    # 2. the new tree
    cd REPO && PYTHONPATH=$PWD NUMBA_CACHE_DIR=$PWD/.numba_cache \\
        .venv/bin/python benchmarks/dump_numbers.py dump /tmp/new_dump.json
    # 3. compare: prints every key whose values differ (relative difference > 1e-12, or a string,
    #    a length/shape, a type or a NaN pattern differs) and every key missing on one side, then
    #    the count; exit status 1 if anything differs, 0 if the dumps are identical
    .venv/bin/python benchmarks/dump_numbers.py compare /tmp/baseline_dump.json /tmp/new_dump.json

Options of ``dump``: ``--notebooks DIR`` (default: ``notebooks/`` next to the imported package),
``--no-notebooks``, ``--only SECTION`` (repeatable; see ``SECTIONS``), ``--jobs N`` (notebooks run
at once, default 2), ``--show-resolved`` (print where each old name was found). The dump prints the
time of each section to stderr: about 1 minute on 2 idle cores (numba cache warm or cold); the
notebooks are most of it. ``compare --limit N`` shows at most N differing values.

Excluded because they are not deterministic: wall-clock timings a notebook stores or prints
(globals named like ``t0``/``elapsed``; "in 1.23 s" in printed text becomes "in <time> s"), temporary
directory names and the repository path in printed text, and ``Dashboard.last_update_s``.
Run twice on the same tree, the dumps compare identical.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import importlib
import io
import json
import math
import os
import pkgutil
import re
import subprocess
import sys
import tempfile
import time
import traceback
import types
from collections.abc import Mapping
from pathlib import Path

import numpy as np
import pandas as pd

REL_TOL = 1e-12
MAX_ARRAY = 200_000          # larger arrays are dumped as shape + sum/min/max/mean
MAX_FRAME_CELLS = 400_000    # larger frames are dumped as shape + column sums
MAX_DEPTH = 7
NOTEBOOK_TIMEOUT_S = 240
NOTEBOOK_JOBS = 2            # notebooks run in parallel subprocesses


# ================================================================================================
# Finding a function wherever the package keeps it now
# ================================================================================================
# For each OLD flat module, words that name it (or its new home) in a module path, best first.
# They only break ties when several different objects share a name (estimate, sweep, simulate...).
HINTS: dict[str, tuple[str, ...]] = {
    "catalogue": ("catalogue", "specs.loader", "loader", "specs"),
    "chip": ("specs.chips", "specs.chip", "specs"),
    "llm": ("llm", "specs.models", "models", "specs"),
    "clusters": ("clusters", "specs.clusters", "efficiency", "specs"),
    "roofline": ("roofline",),
    "tiling": ("tiling",),
    "systolic": ("systolic",),
    "chipdesign": ("chipdesign", "chip.design", "design", "chip"),
    "topology": ("topology", "fabrics", "network"),
    "collectives": ("collectives", "network"),
    "training": ("training",),
    "moe": ("moe",),
    "inference": ("inference",),
    "serving": ("serving", "inference"),
    "economics": ("economics",),
    "migration": ("migration", "economics"),
    "fleet": ("fleet", "economics"),
    "claims": ("claims", "economics"),
    "charts": ("charts", "ui"),
    "dashboard": ("ui.dashboard", "dashboard", "ui"),
    "dashboards": ("dashboards", "ui"),
    "exercises": ("exercises", "ui"),
    "notebook": ("ui.notebook", "notebook", "ui"),
}

# Names the reorganisation may have changed: (old module, old name) -> other names to try, in order,
# when the old name is found nowhere.
RENAMES: dict[tuple[str, str], tuple[str, ...]] = {
    ("chipdesign", "Training"): ("TrainingWorkload",),
    ("chipdesign", "Decode"): ("DecodeWorkload",),
}

_RESOLVED: dict[tuple[str, str], object] = {}
_ALL_MODULES: list[types.ModuleType] | None = None
_WALK_ERRORS: list[str] = []


def _package():
    return importlib.import_module("accelbook")


def all_modules() -> list[types.ModuleType]:
    """``accelbook`` and every submodule, imported (those that fail to import are skipped, noted)."""
    global _ALL_MODULES
    if _ALL_MODULES is None:
        pkg = _package()
        mods = [pkg]
        for info in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + ".", onerror=_WALK_ERRORS.append):
            if info.name.rsplit(".", 1)[-1] == "__main__":
                continue
            try:
                mods.append(importlib.import_module(info.name))
            except Exception as exc:  # noqa: BLE001
                _WALK_ERRORS.append(f"{info.name}: {type(exc).__name__}: {exc}")
        _ALL_MODULES = mods
    return _ALL_MODULES


def _path_matches(path: str, hint: str) -> bool:
    segs, h = path.split("."), hint.split(".")
    return any(segs[i:i + len(h)] == h for i in range(len(segs) - len(h) + 1))


def fn(old_module: str, name: str):
    """The object ``name`` of the OLD flat module ``accelbook.<old_module>``, wherever it lives now.

    1. ``accelbook.<old_module>.<name>`` when ``accelbook.<old_module>`` is a plain module (the flat
       layout, or a compatibility shim), or a package whose ``name`` is defined in a module that
       :data:`HINTS` names for the old module (``accelbook.training.estimate``; but not
       ``accelbook.chip.provenance_table``, which is the chip-design one);
    2. else every submodule of ``accelbook`` is imported and searched for an attribute ``name``:
       one object (however many modules import it) is the answer; several different objects are
       narrowed to those defined (``__module__``) or found in a module whose path contains a word
       of :data:`HINTS` for the old module (tried in order); still several is an error;
    3. found nowhere: the same with the names of :data:`RENAMES`.
    """
    key = (old_module, name)
    if key not in _RESOLVED:
        err = None
        for n in (name,) + RENAMES.get(key, ()):
            try:
                _RESOLVED[key] = _find(old_module, n)
                break
            except LookupError as exc:
                err = err or exc
                if "ambiguous" in str(exc):
                    raise
        else:
            raise err
    return _RESOLVED[key]


def _homes(obj, found: set[str]) -> set[str]:
    where = getattr(obj, "__module__", None)
    return {where} if isinstance(where, str) and where.startswith("accelbook") else found


def _find(old_module: str, name: str):
    hints = HINTS.get(old_module, (old_module,))
    try:
        m = importlib.import_module(f"accelbook.{old_module}")
    except ImportError:
        m = None
    if m is not None and not isinstance(getattr(m, name, None), (types.NoneType, types.ModuleType)):
        obj = getattr(m, name)
        if not hasattr(m, "__path__"):
            return obj
        if any(_path_matches(p, h) for p in _homes(obj, {m.__name__}) for h in hints):
            return obj
    cands: dict[int, tuple[object, set[str]]] = {}
    for mod in all_modules():
        if name in vars(mod):
            obj = vars(mod)[name]
            if isinstance(obj, types.ModuleType):
                continue
            ident = id(obj)
            if ident not in cands:
                cands[ident] = (obj, set())
            cands[ident][1].add(mod.__name__)
    if not cands:
        raise LookupError(f"no attribute {name!r} in any accelbook module (old home: accelbook.{old_module})")

    def homes(item):
        return _homes(*item)

    items = list(cands.values())
    if len(items) > 1:
        for hint in HINTS.get(old_module, (old_module,)) + (old_module,):
            hit = [it for it in items if any(_path_matches(p, hint) for p in homes(it))]
            if len(hit) == 1:
                items = hit
                break
            if len(hit) > 1:
                items = hit   # narrow and keep trying finer hints
        if len(items) > 1:  # substring match as the last resort ("collective" in "collectives")
            for hint in HINTS.get(old_module, (old_module,)):
                hit = [it for it in items if any(hint in p for p in homes(it))]
                if len(hit) == 1:
                    items = hit
                    break
    if len(items) > 1:
        where = sorted(p for it in items for p in homes(it))
        raise LookupError(f"{name!r} (old home accelbook.{old_module}) is ambiguous: different objects in {where}")
    return items[0][0]


def _is_spec(obj) -> bool:
    return all(hasattr(obj, a) for a in ("name", "controls", "view", "defaults"))


def dashboard_specs() -> list:
    """The dashboard specs (built): from ``ALL_SPECS`` if it resolves to one object; if several
    modules have their own ``ALL_SPECS``, from all of them; if none has, every public function named
    ``*_spec`` that takes no argument and returns a spec, in modules under ``accelbook.ui`` (or named
    like dashboards). Duplicates (the same spec name) are dropped."""
    import inspect

    try:
        makers = list(fn("dashboards", "ALL_SPECS"))
    except LookupError:
        makers = []
        for mod in all_modules():
            v = vars(mod).get("ALL_SPECS")
            if isinstance(v, (list, tuple)):
                makers += [m for m in v if m not in makers]
        if not makers:
            for mod in all_modules():
                if not (_path_matches(mod.__name__, "ui") or "dashboards" in mod.__name__):
                    continue
                for k, v in vars(mod).items():
                    if not (k.endswith("_spec") and not k.startswith("_") and callable(v)) or v in makers:
                        continue
                    try:
                        sig = inspect.signature(v)
                    except (TypeError, ValueError):
                        continue
                    if all(p.default is not p.empty or p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD)
                           for p in sig.parameters.values()):
                        makers.append(v)
    specs, names = [], set()
    for make in makers:
        try:
            spec = make() if callable(make) and not _is_spec(make) else make
        except Exception as exc:  # noqa: BLE001
            specs.append((getattr(make, "__name__", repr(make)), exc))
            continue
        if _is_spec(spec) and spec.name not in names:
            names.add(spec.name)
            specs.append((spec.name, spec))
    return specs


# ================================================================================================
# Encoding values as JSON
# ================================================================================================
_ADDR = re.compile(r" (object )?at 0x[0-9a-fA-F]+")


def _safe_repr(v) -> str:
    return _ADDR.sub("", repr(v))[:300]


class _NotScalar(Exception):
    pass


def scalar(v):
    """A JSON scalar for ``v`` or :class:`_NotScalar`."""
    if v is None:
        return None
    if isinstance(v, (bool, np.bool_)):
        return bool(v)
    if isinstance(v, (int, np.integer)):
        return int(v)
    if isinstance(v, (float, np.floating)):
        f = float(v)
        if math.isnan(f):
            return "nan"
        if math.isinf(f):
            return "inf" if f > 0 else "-inf"
        return f
    if isinstance(v, str):
        return v
    if isinstance(v, (complex, np.complexfloating)):
        return str(v)
    if v is pd.NA:
        return "NA"
    if v is pd.NaT:
        return "NaT"
    if isinstance(v, (datetime.date, datetime.datetime, pd.Timestamp, pd.Timedelta, datetime.timedelta)):
        return str(v)
    raise _NotScalar


def cell(v, depth: int = 0):
    """Any value as a JSON value (nested lists/dicts), for table cells and list items."""
    try:
        return scalar(v)
    except _NotScalar:
        pass
    if depth > MAX_DEPTH:
        return "<too deep>"
    if isinstance(v, np.ndarray):
        return array(v)
    if isinstance(v, (list, tuple)):
        return [cell(x, depth + 1) for x in v]
    if isinstance(v, (set, frozenset)):
        return sorted((cell(x, depth + 1) for x in v), key=repr)
    if isinstance(v, Mapping):
        return {str(k): cell(x, depth + 1) for k, x in v.items()}
    if isinstance(v, pd.DataFrame):
        return frame(v)
    if isinstance(v, pd.Series):
        return series(v)
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return {f.name: cell(getattr(v, f.name), depth + 1) for f in dataclasses.fields(v)}
    return _safe_repr(v)


def array(a: np.ndarray):
    if a.dtype == object:
        return [cell(x, 1) for x in a.ravel()] if a.ndim != 1 else [cell(x, 1) for x in a]
    if a.size > MAX_ARRAY and np.issubdtype(a.dtype, np.number):
        f = a.astype(float)
        return {"shape": list(a.shape), "sum": scalar(f.sum()), "min": scalar(f.min()), "max": scalar(f.max()),
                "mean": scalar(f.mean()), "sum_sq": scalar((f * f).sum())}
    if a.ndim == 0:
        return scalar(a.item())
    if np.issubdtype(a.dtype, np.floating):
        return _floats(a)
    return a.tolist() if a.dtype.kind in "biu" else [cell(x, 1) for x in a.tolist()]


def _floats(a: np.ndarray):
    if a.ndim > 1:
        return [_floats(x) for x in a]
    return [scalar(x) for x in a.tolist()]


def _column(s: pd.Series) -> list:
    vals = s.to_numpy()
    if vals.dtype.kind == "f":
        return _floats(vals)
    if vals.dtype.kind in "iub":
        return vals.tolist()
    return [cell(x, 1) for x in vals.tolist()]


def frame(df: pd.DataFrame) -> dict:
    """A DataFrame as {columns, index, values} (rows of cells)."""
    if df.size > MAX_FRAME_CELLS:
        num = df.select_dtypes("number")
        return {"columns": [cell(c) for c in df.columns], "shape": list(df.shape),
                "column_sums": [scalar(x) for x in num.sum().to_numpy(dtype=float)]}
    cols = [_column(df.iloc[:, j]) for j in range(df.shape[1])]
    return {"columns": [cell(c) for c in df.columns], "index": [cell(i) for i in df.index],
            "values": [list(r) for r in zip(*cols)] if cols else [[] for _ in range(len(df))]}


def series(s: pd.Series) -> dict:
    return {"name": cell(s.name), "index": [cell(i) for i in s.index], "values": _column(s)}


class Dump:
    """The entries being written: ``put`` flattens mappings, dataclasses and objects into keys."""

    def __init__(self):
        self.entries: dict[str, object] = {}
        self.errors: list[str] = []

    def _set(self, key: str, value):
        if key in self.entries:
            raise KeyError(f"duplicate dump key {key!r}")
        self.entries[key] = value

    def put(self, key: str, v, depth: int = 0):
        try:
            self._set(key, scalar(v))
            return
        except _NotScalar:
            pass
        if depth > MAX_DEPTH:
            self._set(key, "<too deep>")
        elif isinstance(v, pd.DataFrame):
            self._set(key, frame(v))
            if v.attrs:
                self.put(key + ".attrs", {k: x for k, x in v.attrs.items()}, depth + 1)
        elif isinstance(v, pd.Series):
            self._set(key, series(v))
        elif isinstance(v, pd.Index):
            self._set(key, [cell(x) for x in v])
        elif isinstance(v, np.ndarray):
            self._set(key, array(v))
        elif isinstance(v, Mapping):
            if not v:
                self._set(key, {})
            for k, x in v.items():
                self.put(f"{key}.{k}", x, depth + 1)
        elif dataclasses.is_dataclass(v) and not isinstance(v, type):
            for f in dataclasses.fields(v):
                self.put(f"{key}.{f.name}", getattr(v, f.name), depth + 1)
        elif isinstance(v, (list, tuple, set, frozenset)):
            items = sorted(v, key=repr) if isinstance(v, (set, frozenset)) else list(v)
            simple = all(_is_simple(x) for x in items)
            if simple:
                self._set(key, [cell(x) for x in items])
            else:
                for i, x in enumerate(items):
                    self.put(f"{key}[{i}]", x, depth + 1)
        elif isinstance(v, (types.FunctionType, types.BuiltinFunctionType, types.MethodType, type, types.ModuleType)):
            self._set(key, f"<{type(v).__name__} {getattr(v, '__name__', '')}>")
        elif hasattr(v, "__dict__") and not callable(v):
            attrs = {k: x for k, x in vars(v).items() if not k.startswith("_")}
            self._set(key + ".__type__", type(v).__name__)
            for k, x in attrs.items():
                self.put(f"{key}.{k}", x, depth + 1)
        else:
            self._set(key, _safe_repr(v))

    def call(self, key: str, thunk, post=None):
        """``put(key, thunk())``; an exception is recorded as ``key!error`` (type and message)."""
        try:
            v = thunk()
        except Exception as exc:  # noqa: BLE001 - recorded, compared like any value
            self._set(key + "!error", f"{type(exc).__name__}: {exc}")
            self.errors.append(f"{key}: {type(exc).__name__}: {exc}")
            return None
        try:
            self.put(key, v if post is None else post(v))
        except Exception as exc:  # noqa: BLE001
            self._set(key + "!dump-error", f"{type(exc).__name__}: {exc}")
            self.errors.append(f"{key} (dumping): {type(exc).__name__}: {exc}")
        return v


def _is_simple(x) -> bool:
    try:
        scalar(x)
        return True
    except _NotScalar:
        return isinstance(x, (list, tuple)) and all(_is_simple(y) for y in x)


def _args(*args, **kw) -> str:
    parts = [a if isinstance(a, str) else repr(a) for a in args]
    parts += [f"{k}={v if isinstance(v, str) else repr(v)}" for k, v in kw.items()]
    return "[" + ",".join(parts) + "]"


def K(old: str, name: str, *args, **kw) -> str:
    """A dump key: ``old.name[args,k=v]``."""
    return f"{old}.{name}{_args(*args, **kw)}"


# ================================================================================================
# a. validation tables and catalogues
# ================================================================================================
def section_validation(d: Dump):
    for old, name in (("collectives", "validation_table"), ("inference", "validation_table"),
                      ("inference", "published_results"), ("training", "published_runs"),
                      ("training", "validation_table"), ("claims", "claims_table"), ("claims", "verdicts"),
                      ("systolic", "scalesim_comparison"), ("economics", "flop_accounting_table")):
        d.call(K(old, name), lambda o=old, n=name: fn(o, n)())
    # the catalogues every model reads
    d.call(K("chip", "chips"), lambda: fn("chip", "chips")())
    d.call(K("chip", "summary_table"), lambda: fn("chip", "summary_table")())
    d.call(K("chip", "summary_table", precision="fp8"), lambda: fn("chip", "summary_table")(precision="fp8"))
    d.call(K("chip", "disagreements"), lambda: fn("chip", "disagreements")())
    for c in ("h100", "tpu-v5p", "groq-lpu-v1"):
        d.call(K("chip", "provenance_table", c), lambda c=c: fn("chip", "provenance_table")(c))
    d.call(K("chip", "all_chips"), lambda: {c.id: c for c in fn("chip", "all_chips")()})
    d.call(K("llm", "models"), lambda: fn("llm", "models")())
    d.call(K("llm", "models", seq_len=8192), lambda: fn("llm", "models")(seq_len=8192))
    d.call(K("llm", "all_models"), lambda: {m.id: _model_numbers(m) for m in fn("llm", "all_models")()})
    d.call(K("clusters", "clusters"), lambda: dict(fn("clusters", "clusters")()))
    for c in ("h100", "h200", "b200", "tpu-v5p", "tpu-v6e", "a100"):
        for kind in ("bf16", "fp8", "attention"):
            d.call(K("clusters", "measured_efficiency", c, kind),
                   lambda c=c, kind=kind: fn("clusters", "measured_efficiency")(c, kind))
    d.call(K("topology", "fabrics"), lambda: dict(fn("topology", "fabrics")()))
    d.call(K("chipdesign", "params"), lambda: fn("chipdesign", "params")())
    d.call(K("chipdesign", "provenance_table"), lambda: fn("chipdesign", "provenance_table")())
    d.call(K("economics", "tco_inputs"), lambda: fn("economics", "tco_inputs")())


def _model_numbers(m) -> dict:
    out = {"params": m.params, "active_params": m.active_params, "matmul_params_active": m.matmul_params_active,
           "embedding_params": m.embedding_params, "lm_head_params": m.lm_head_params,
           "attention_kind": m.attention_kind, "attention_dim": list(m.attention_dim)}
    for s in (2048, 8192):
        for tr in (False, True):
            for causal in (False, True):
                out[f"flops_per_token[{s},training={tr},causal={causal}]"] = m.flops_per_token(s, tr, causal)
    for p in ("bf16", "fp8"):
        out[f"kv_cache_bytes_per_token[{p}]"] = m.kv_cache_bytes_per_token(p)
        out[f"weight_bytes[{p}]"] = m.weight_bytes(p)
    return out


# ================================================================================================
# b. the models on a fixed grid
# ================================================================================================
def section_training(d: Dump):
    est = lambda *a, **k: fn("training", "estimate")(*a, **k)  # noqa: E731
    grid = [
        ("llama-3.1-70b", "h100", 1024, 2**24, 8192, dict(tp=8, pp=4)),
        ("llama-3.1-70b", "h100", 1024, 2**24, 8192, dict(tp=8, pp=4, vp=2, microbatch=1)),
        ("llama-3.1-70b", "h100", 1024, 2**24, 8192, dict(tp=8, pp=4, recompute="full")),
        ("llama-3.1-70b", "h100", 1024, 2**24, 8192, dict(tp=8, pp=4, recompute="none")),
        ("llama-3.1-70b", "h100", 1024, 2**24, 8192, dict(tp=8, pp=1, zero_stage=3)),
        ("llama-3.1-70b", "h100", 1024, 2**24, 8192, dict(tp=8, pp=2, zero_stage=2)),
        ("llama-3.1-70b", "h100", 1024, 2**24, 8192, dict(tp=8, pp=4, zero_stage=0)),
        ("llama-3.1-70b", "h100", 1024, 2**24, 8192, dict(tp=8, pp=4, precision="fp8")),
        ("llama-3.1-70b", "h100", 1024, 2**24, 8192, dict(tp=8, pp=4, cp=2)),
        ("llama-3.1-70b", "h100", 1024, 2**24, 8192, dict(tp=8, pp=4, tp_overlap=0.5)),
        ("llama-3.1-70b", "h100", 1024, 2**24, 8192, dict(tp=8, pp=4, flash_attention=False,
                                                          recompute="selective")),
        ("llama-3.1-70b", "h100", 1024, 2**24, 8192, dict(tp=8, pp=4, sequence_parallel=False)),
        ("llama-3.1-70b", "h100", 1024, 2**24, 8192, dict(tp=4, pp=8, microbatch=2)),
        ("llama-3.1-405b", "h100", 8192, 2048 * 8192, 8192, dict(tp=8, pp=16, zero_stage=1)),
        ("llama-3.1-405b", "h100", 8192, 2048 * 8192, 8192, dict(tp=8, pp=16, zero_stage=3, recompute="full")),
        ("llama-3.1-8b", "h100", 64, 2**21, 4096, dict(tp=1, pp=1)),
        ("llama-3.1-8b", "a100", 64, 2**21, 4096, dict(tp=2, pp=1, zero_stage=3)),
        ("llama-3.1-70b", "tpu-v5p", 1024, 2**24, 8192, dict(tp=8, pp=4)),
        ("llama-3.1-70b", "tpu-v5p", 1024, 2**24, 8192, dict(tp=16, pp=1, zero_stage=3, recompute="full")),
        ("llama-3.1-70b", "tpu-v6e", 1024, 2**24, 8192, dict(tp=8, pp=8)),
        ("llama-3.1-70b", "tpu-v5e", 1024, 2**24, 8192, dict(tp=8, pp=8, recompute="full")),
        ("llama-3.1-70b", "b200", 1024, 2**24, 8192, dict(tp=8, pp=2, precision="fp8")),
        ("llama-3.1-70b", "gb200", 1024, 2**24, 8192, dict(tp=8, pp=2)),
        ("mixtral-8x7b", "h100", 256, 2**22, 4096, dict(tp=2, pp=1, ep=8)),
        ("deepseek-v3", "h100", 2048, 15360 * 4096, 4096, dict(tp=1, pp=16, ep=64, zero_stage=1)),
        ("deepseek-v3", "h800", 2048, 15360 * 4096, 4096, dict(tp=1, pp=16, ep=64, cluster="dgx-h100")),
        ("gpt3-175b", "a100", 1024, 1536 * 2048, 2048, dict(tp=8, pp=8, recompute="full")),
        ("llama-3.1-70b", None, 512, 2**23, 8192, dict(tp=8, pp=4, cluster="dgx-h200")),
        ("llama-3.1-70b", None, 1024, 2**24, 8192, dict(tp=8, pp=4, cluster="gb200-nvl72")),
    ]
    for model, chip, n, gbt, s, kw in grid:
        key = K("training", "estimate", model, chip, n, gbt=gbt, s=s, **kw)
        e = d.call(key, lambda a=(model, chip, n, gbt, s), k=kw: est(*a, **k))
        if e is not None:
            d.call(key + ".breakdown()", e.breakdown)
            d.call(key + ".why_not_fit()", e.why_not_fit)
            d.call(key + ".tokens_per_s", lambda e=e: e.tokens_per_s)
            d.call(key + ".overflow_bytes", lambda e=e: e.overflow_bytes)
            d.call(key + ".time_to_train(1e12)", lambda e=e: e.time_to_train(1e12))
            d.call(key + ".chip_hours(1e12)", lambda e=e: e.chip_hours(1e12))
            if chip is not None:
                d.call(key + ".cost_usd(1e12)", lambda e=e: e.cost_usd(1e12))
            d.call(key + ".cost_usd(1e12,2.5)", lambda e=e: e.cost_usd(1e12, 2.5))
    d.call(K("training", "estimate_auto", "llama-3.1-70b", "h100", 1024, 2**24, 8192, tp=8, pp=4),
           lambda: fn("training", "estimate_auto")("llama-3.1-70b", "h100", 1024, 2**24, 8192, tp=8, pp=4))
    d.call(K("training", "search_space", "llama-3.1-70b", 1024),
           lambda: fn("training", "search_space")(fn("llm", "get_model")("llama-3.1-70b"), 1024))
    search = lambda *a, **k: fn("training", "search")(*a, **k)  # noqa: E731
    for args, kw in ((("llama-3.1-70b", "h100", 1024, 2**24, 8192), dict(top=10)),
                     (("llama-3.1-8b", "h100", 64, 2**21, 4096), dict(top=10)),
                     (("llama-3.1-70b", "tpu-v5p", 512, 2**23, 8192), dict(top=10, precision="bf16")),
                     (("llama-3.1-70b", "h100", 1024, 2**24, 8192), dict(top=5, tp=8, recompute="full")),
                     (("mixtral-8x7b", "h100", 256, 2**22, 4096), dict(top=5)),
                     (("llama-3.1-70b", "h100", 256, 2**22, 8192), dict(top=5, include_unfit=True,
                                                                       precision="fp8"))):
        key = K("training", "search", *args, **kw)
        d.call(key, lambda a=args, k=kw: search(*a, **k))
    scaling = lambda *a, **k: fn("training", "scaling")(*a, **k)  # noqa: E731
    for args, kw in ((("llama-3.1-70b", "h100", [256, 512, 1024, 2048], 8192), dict(batch_tokens_per_chip=16384)),
                     (("llama-3.1-70b", "h100", [256, 512, 1024], 8192), dict(global_batch_tokens=2**24)),
                     (("llama-3.1-70b", "tpu-v5p", [256, 1024], 8192), dict(batch_tokens_per_chip=16384,
                                                                          layout="best")),
                     (("llama-3.1-8b", None, [8, 64, 512], 4096), dict(batch_tokens_per_chip=8192,
                                                                     cluster="gb200-nvl72"))):
        key = K("training", "scaling", *args, **kw)
        d.call(key, lambda a=args, k=kw: scaling(*a, **k))
    for rid, e in _try(lambda: fn("training", "published_runs")(), {}).items():
        d.call(K("training", "run_layout", rid), lambda e=e: fn("training", "run_layout")(e))


def _try(thunk, default):
    try:
        return thunk()
    except Exception:  # noqa: BLE001
        return default


def section_inference(d: Dump):
    est = lambda *a, **k: fn("inference", "estimate")(*a, **k)  # noqa: E731
    grid = [
        (("llama-3.1-70b", "h200", 1, 1, 2048, 256, "fp8"), {}),
        (("llama-3.1-70b", "h200", 8, 64, 2048, 256, "fp8"), {}),
        (("llama-3.1-70b", "h100", 8, 32, 1024, 1024, "bf16"), dict(tp=8)),
        (("llama-3.1-70b", "h100", 8, 32, 1024, 1024, "bf16"), dict(tp=4, pp=2)),
        (("llama-3.1-70b", "h100", 8, 256, 4096, 512, "fp8"), dict(kv_precision="bf16")),
        (("llama-3.1-70b", "h100", 8, 16, 1024, 256, "bf16"), dict(mem_efficiency=0.7, hop_latency_s=5e-6,
                                                                   price_usd_per_hour=4.0)),
        (("llama-3.1-8b", "h100", 1, 1, 128, 128, "bf16"), {}),
        (("llama-3.1-8b", "a100", 1, 128, 1024, 128, "int8"), {}),
        (("llama-3.1-405b", "b200", 8, 64, 2048, 256, "fp4"), {}),
        (("llama-3.1-405b", "h100", 8, 1, 2048, 256, "bf16"), {}),
        (("deepseek-v3", "h200", 16, 128, 4096, 1024, "fp8"), dict(tp=8, pp=2)),
        (("mixtral-8x7b", "h100", 2, 16, 1024, 256, "bf16"), {}),
        (("llama-3.1-70b", "groq-lpu-v1", 576, 1, 1024, 256, "int8"), dict(tp=8, pp=72)),
        (("llama-3.1-70b", "groq-lp30", 256, 8, 1024, 256, "fp8"), dict(tp=4, pp=64)),
        (("llama-3.1-70b", "cerebras-cs3", 4, 1, 1024, 256, "bf16"), {}),
        (("llama-3.1-70b", "cerebras-cs3", 1, 1, 1024, 256, "bf16"),
         dict(weight_streaming_bytes_per_s=1.2e12)),
        (("llama-3.1-70b", "tpu-v5p", 8, 32, 2048, 256, "bf16"), {}),
        (("llama-3.1-70b", "tpu-v6e", 8, 32, 2048, 256, "int8"), {}),
        (("llama-3.1-8b", "inferentia2", 2, 4, 512, 128, "bf16"), {}),
        (("llama-3.1-70b", "mi300x", 2, 16, 2048, 256, "fp8"), {}),
    ]
    for args, kw in grid:
        key = K("inference", "estimate", *args, **kw)
        e = d.call(key, lambda a=args, k=kw: est(*a, **k))
        if e is not None:
            d.call(key + ".why_not_fit()", e.why_not_fit)
    for m, c, p in (("llama-3.1-70b", "groq-lpu-v1", "int8"), ("llama-3.1-70b", "groq-lp30", "fp8"),
                    ("llama-3.1-70b", "h200", "fp8"), ("llama-3.1-405b", "h100", "bf16"),
                    ("llama-3.1-70b", "cerebras-cs3", "bf16"), ("deepseek-v3", "b200", "fp4")):
        d.call(K("inference", "min_chips", m, c, p), lambda a=(m, c, p): fn("inference", "min_chips")(*a))
    d.call(K("inference", "sweep", "llama-3.1-70b", "h100", 8, 1024, 256, "fp8"),
           lambda: fn("inference", "sweep")("llama-3.1-70b", "h100", 8, 1024, 256, "fp8"))
    d.call(K("inference", "sweep", "llama-3.1-8b", "h100", 4, 2048, 512, "bf16", batches=[1, 8, 64]),
           lambda: fn("inference", "sweep")("llama-3.1-8b", "h100", 4, 2048, 512, "bf16", batches=[1, 8, 64]))
    d.call(K("inference", "sweep", "llama-3.1-70b", "groq-lp30", 256, 1024, 256, "fp8"),
           lambda: fn("inference", "sweep")("llama-3.1-70b", "groq-lp30", 256, 1024, 256, "fp8"))
    for args, kw in ((("llama-3.1-70b", "h100", 8, 1024, 256, "fp8"), {}),
                     (("llama-3.1-70b", "h200", 8, 2048, 256, "fp8"), dict(tpot_target_s=0.02)),
                     (("llama-3.1-70b", "h200", 8, 2048, 256, "fp8"), dict(ttft_target_s=0.5, tpot_target_s=0.05)),
                     (("llama-3.1-8b", "a100", 1, 1024, 256, "bf16"), {})):
        d.call(K("inference", "max_throughput", *args, **kw),
               lambda a=args, k=kw: fn("inference", "max_throughput")(*a, **k))
    systems = {"8 x H200": ("h200", 8), "8 x B200": ("b200", 8), "256 x LP30": ("groq-lp30", 256)}
    d.call(K("inference", "frontier", "llama-3.1-70b", "H200,B200,LP30", 1024, 256, "fp8"),
           lambda: fn("inference", "frontier")("llama-3.1-70b", systems, 1024, 256, "fp8"))
    d.call(K("inference", "pareto", "sweep[llama-3.1-70b,h100,8,1024,256,fp8]"),
           lambda: fn("inference", "pareto")(fn("inference", "sweep")("llama-3.1-70b", "h100", 8, 1024, 256, "fp8")))
    for a, g in ((0.7, 4), (0.8, 3), (0.0, 2), (0.95, 8)):
        d.call(K("inference", "expected_accepted", a, g), lambda a=a, g=g: fn("inference", "expected_accepted")(a, g))
    for args, kw in ((("llama-3.1-70b", "llama-3.1-8b", "h100", 8, 8, 1024, 256), {}),
                     (("llama-3.1-70b", "llama-3.1-8b", "h200", 8, 32, 2048, 256), dict(gamma=3, acceptance=0.8,
                                                                                       precision="fp8")),
                     (("llama-3.1-405b", "llama-3.1-8b", "b200", 8, 1, 1024, 256), dict(tp=8))):
        d.call(K("inference", "speculative", *args, **kw), lambda a=args, k=kw: fn("inference", "speculative")(*a, **k))
    for args, kw in ((("llama-3.1-70b", "h100", 8, "groq-lp30", 160, 64, 4096), {}),
                     (("llama-3.1-70b", "h200", 8, "groq-lpu-v1", 640, 32, 8192), dict(precision="int8",
                                                                                      microbatches=2)),
                     (("llama-3.1-405b", "b200", 8, "groq-lp30", 512, 128, 2048), dict(link_bytes_per_s=200e9,
                                                                                      link_latency_s=2e-6))):
        d.call(K("inference", "heterogeneous_decode", *args, **kw),
               lambda a=args, k=kw: fn("inference", "heterogeneous_decode")(*a, **k))
    for args, kw in ((("llama-3.1-70b", "h200", 8, 2048, 256, 64), {}),
                     (("llama-3.1-70b", "h100", 8, 8192, 512, 32), dict(precision="bf16", link_bytes_per_s=25e9))):
        d.call(K("inference", "disaggregation", *args, **kw),
               lambda a=args, k=kw: fn("inference", "disaggregation")(*a, **k))
    for args, kw in ((("llama-3.1-70b", "h200", 8), {}), (("llama-3.1-8b", "h100", 1), dict(precision="bf16")),
                     (("llama-3.1-70b", "h100", 8), dict(tp=4, input_len=2048, output_len=512))):
        d.call(K("inference", "step_cost", *args, **kw), lambda a=args, k=kw: fn("inference", "step_cost")(*a, **k))


def _topologies() -> dict:
    """Small graphs of every builder, keyed by a stable label."""
    tp = lambda n: fn("topology", n)  # noqa: E731
    return {
        "ring(8)": lambda: tp("ring")(8),
        "torus((4,4,4))": lambda: tp("torus")((4, 4, 4)),
        "torus((4,4),twisted)": lambda: tp("torus")((4, 4), twisted=True),
        "torus((4,4,8),twisted)": lambda: tp("torus")((4, 4, 8), twisted=True),
        "torus((6,6))": lambda: tp("torus")((6, 6)),
        "mesh((4,4,4))": lambda: tp("mesh")((4, 4, 4)),
        "torus((8,),wrap=(False,))": lambda: tp("torus")((8,), wraparound=(False,)),
        "full_mesh(8)": lambda: tp("full_mesh")(8),
        "switched(16)": lambda: tp("switched")(16),
        "nvl72()": lambda: tp("nvl72")(),
        "fat_tree(4)": lambda: tp("fat_tree")(4),
        "fat_tree(4,oversub=2)": lambda: tp("fat_tree")(4, 2),
        "fat_tree(8)": lambda: tp("fat_tree")(8),
        "dragonfly(4,2,2)": lambda: tp("dragonfly")(4, 2, 2),
        "dragonfly(4,2,1,groups=3)": lambda: tp("dragonfly")(4, 2, 1, groups=3),
        "boardfly(4,2,2)": lambda: tp("boardfly")(4, 2, 2),
        "boardfly()": lambda: tp("boardfly")(),
        "tpu_pod((4,4,4))": lambda: tp("tpu_pod")((4, 4, 4)),
        "tpu_pod((4,4,8),twisted)": lambda: tp("tpu_pod")((4, 4, 8), twisted=True),
        "gpu_cluster(4)": lambda: tp("gpu_cluster")(4),
        "gpu_cluster(2,4)": lambda: tp("gpu_cluster")(2, 4, 25e9, 3e-6),
        "hgx_h100()": lambda: tp("hgx_h100")(),
        "hgx_h100(nvls=False)": lambda: tp("hgx_h100")(nvls=False),
        "h100_cluster(4)": lambda: tp("h100_cluster")(4),
        "tpu_slice(v5p,(4,4,4))": lambda: tp("tpu_slice")("v5p", (4, 4, 4)),
        "tpu_slice(v4,(4,4,8))": lambda: tp("tpu_slice")("v4", (4, 4, 8)),
        "tpu_slice(v5e,(16,16))": lambda: tp("tpu_slice")("v5e", (16, 16)),
        "tpu_slice(v6e,(8,8))": lambda: tp("tpu_slice")("v6e", (8, 8)),
        "tpu_axis(v5p,8)": lambda: tp("tpu_axis")("v5p", 8),
        "tpu_axis(v5e,6)": lambda: tp("tpu_axis")("v5e", 6),
        "tpu_multislice(v5p,(4,4,4),2)": lambda: tp("tpu_multislice")("v5p", (4, 4, 4), 2),
        "tpu_multislice(v5e,(16,16),4)": lambda: tp("tpu_multislice")("v5e", (16, 16), 4),
    }


def _topo_numbers(t) -> dict:
    """What describes a topology: sizes, kinds, link figures and protocols (not the CSR arrays)."""
    out = {"name": t.name, "kind": t.kind, "n_endpoints": t.n_endpoints, "n_nodes": t.n_nodes, "n_links": t.n_links,
           "dims": list(t.dims), "wraparound": list(t.wraparound), "assumptions": t.assumptions,
           "link_bw_bytes_per_s": t.link_bw_bytes_per_s, "hop_latency_s": t.hop_latency_s,
           "efficiency": t.efficiency, "in_network_reduction": t.in_network_reduction,
           "protocols": [cell(p) for p in t.protocols], "in_network_latency_s": t.in_network_latency_s,
           "in_network_efficiency": t.in_network_efficiency,
           "degree_sum": int(np.diff(t.indptr).sum()), "edges_checksum": int((t.edges() * [1, 3]).sum())}
    out["params"] = {k: (cell(v) if k != "slice" else v.name) for k, v in t.params.items()}
    return out


def section_topology(d: Dump):
    topos = {}
    for label, make in _topologies().items():
        t = d.call(K("topology", "build", label), make, post=_topo_numbers)
        if t is not None:
            topos[label] = t
    heavy_ok = lambda t: t.n_endpoints <= 300  # noqa: E731
    for label, t in topos.items():
        d.call(K("topology", "hop_stats", label), lambda t=t: fn("topology", "hop_stats")(t))
        d.call(K("topology", "bisection_links", label), lambda t=t: fn("topology", "bisection_links")(t))
        d.call(K("topology", "bisection_links_analytic", label),
               lambda t=t: fn("topology", "bisection_links_analytic")(t))
        if heavy_ok(t):
            d.call(K("topology", "link_loads", label, "uniform"), lambda t=t: fn("topology", "link_loads")(t))
            d.call(K("topology", "link_loads", label, "permutation", seed=3),
                   lambda t=t: fn("topology", "link_loads")(t, "permutation", seed=3))
            d.call(K("topology", "all_to_all_load", label), lambda t=t: fn("topology", "all_to_all_load")(t))
            if t.kind in ("torus", "mesh", "ring", "tpu_pod") and t.dims and not t.params.get("twisted"):
                d.call(K("topology", "dor_link_loads", label, "uniform"),
                       lambda t=t: fn("topology", "dor_link_loads")(t))
                d.call(K("topology", "dor_link_loads", label, "permutation", seed=1),
                       lambda t=t: fn("topology", "dor_link_loads")(t, "permutation", seed=1))
    t = topos.get("full_mesh(8)")
    if t is not None:
        demand = np.arange(64, dtype=float).reshape(8, 8)
        d.call(K("topology", "link_loads", "full_mesh(8)", "matrix arange(64)"),
               lambda: fn("topology", "link_loads")(t, demand))
    t = topos.get("torus((4,4,4))")
    if t is not None:
        d.call(K("topology", "with_links", "torus((4,4,4))", 50e9, 2e-6, 0.9),
               lambda: t.with_links(50e9, 2e-6, 0.9), post=_topo_numbers)
    t = topos.get("h100_cluster(4)")
    if t is not None:
        d.call(K("topology", "scaled", "h100_cluster(4)", 2.0, 0.5), lambda: t.scaled(2.0, 0.5), post=_topo_numbers)
    for dims, wrap in (((4, 4, 4), True), ((8, 8, 8), True), ((16, 16, 16), True), ((5, 7), True), ((4, 4), False),
                       ((3, 4, 5), (True, False, True)), ((2, 8), True)):
        d.call(K("topology", "torus_mean_hops", dims, wrap), lambda a=(dims, wrap): fn("topology", "torus_mean_hops")(*a))
        d.call(K("topology", "torus_diameter", dims, wrap), lambda a=(dims, wrap): fn("topology", "torus_diameter")(*a))
    for dims in ((4, 4, 4), (8, 8, 8), (4, 8), (16, 16, 16)):
        d.call(K("topology", "torus_all_to_all_max_load", dims),
               lambda dims=dims: fn("topology", "torus_all_to_all_max_load")(dims))
    d.call(K("topology", "hop_histogram", "torus((8,8,8))"),
           lambda: fn("topology", "hop_histogram")(fn("topology", "torus")((8, 8, 8))))


def section_collectives(d: Dump):
    est = lambda *a, **k: fn("collectives", "estimate")(*a, **k)  # noqa: E731
    tp = lambda n: fn("topology", n)  # noqa: E731
    systems = {
        "hgx_h100()": lambda: tp("hgx_h100")(),
        "hgx_h100(nvls=False)": lambda: tp("hgx_h100")(nvls=False),
        "h100_cluster(4)": lambda: tp("h100_cluster")(4),
        "h100_cluster(16)": lambda: tp("h100_cluster")(16),
        "tpu_slice(v5p,(4,4,4))": lambda: tp("tpu_slice")("v5p", (4, 4, 4)),
        "tpu_slice(v5e,(16,16))": lambda: tp("tpu_slice")("v5e", (16, 16)),
        "tpu_slice(v6e,(8,8))": lambda: tp("tpu_slice")("v6e", (8, 8)),
        "tpu_axis(v5p,8)": lambda: tp("tpu_axis")("v5p", 8),
        "tpu_axis(v5e,6)": lambda: tp("tpu_axis")("v5e", 6),
        "tpu_multislice(v5p,(4,4,4),4)": lambda: tp("tpu_multislice")("v5p", (4, 4, 4), 4),
        "ring(8)": lambda: tp("ring")(8),
        "full_mesh(8)": lambda: tp("full_mesh")(8),
        "torus((4,4,4))": lambda: tp("torus")((4, 4, 4)),
        "mesh((4,4))": lambda: tp("mesh")((4, 4)),
        "switched(16)": lambda: tp("switched")(16),
        "fat_tree(4)": lambda: tp("fat_tree")(4),
        "dragonfly(4,2,2)": lambda: tp("dragonfly")(4, 2, 2),
    }
    collectives = _try(lambda: tuple(fn("collectives", "COLLECTIVES")), ())
    d.put("collectives.COLLECTIVES", list(collectives))
    algorithms = _try(lambda: tuple(fn("collectives", "ALGORITHMS")), ())
    d.put("collectives.ALGORITHMS", list(algorithms))
    for c in collectives:
        for p in (2, 8, 64, 1024):
            d.call(K("collectives", "bus_factor", c, p), lambda c=c, p=p: fn("collectives", "bus_factor")(c, p))
    sizes = (1024.0, 65536.0, 2.0**20, 2.0**26, 2.0**30)
    for label, make in systems.items():
        try:
            topo = make()
        except Exception as exc:  # noqa: BLE001
            d.put(K("collectives", "system", label) + "!error", f"{type(exc).__name__}: {exc}")
            continue
        for c in collectives:
            for S in sizes:
                d.call(K("collectives", "estimate", c, S, label), lambda c=c, S=S, t=topo: est(c, S, t))
            d.call(K("collectives", "sweep", c, label), lambda c=c, t=topo: fn("collectives", "sweep")(c, t))
        for alg in algorithms:
            for c in ("all_reduce", "all_to_all"):
                d.call(K("collectives", "estimate", c, 2.0**24, label, algorithm=alg),
                       lambda c=c, t=topo, alg=alg: est(c, 2.0**24, t, alg))
    t = _try(lambda: tp("hgx_h100")(), None)
    if t is not None:
        d.call(K("collectives", "sweep", "all_reduce", "hgx_h100()", sizes="[8,4096,1e6,1e9]"),
               lambda: fn("collectives", "sweep")("all_reduce", t, [8, 4096, 1e6, 1e9]))
        d.call(K("collectives", "estimate", "all_reduce", 2**30, "hgx_h100().with_links(900e9)"),
               lambda: est("all_reduce", 2**30, t.with_links(900e9)))
        d.call(K("collectives", "estimate", "all_reduce", 2**20, "hgx_h100().with_links(hop=5e-6)"),
               lambda: est("all_reduce", 2**20, t.with_links(hop_latency_s=5e-6)))
    t = _try(lambda: tp("h100_cluster")(8), None)
    if t is not None:
        d.call(K("collectives", "estimate", "all_reduce", 2**28, "h100_cluster(8).scaled(2,0.5)"),
               lambda: est("all_reduce", 2**28, t.scaled(2.0, 0.5)))


def section_moe(d: Dump):
    sim = lambda *a, **k: fn("moe", "simulate_routing")(*a, **k)  # noqa: E731
    cases = [
        ((1024, 64, 2), dict(seed=0)),
        ((2048, 256, 8), dict(n_batches=4, seed=1)),
        ((2048, 64, 4), dict(skew=1.0, seed=2)),
        ((2048, 64, 4), dict(skew=1.0, capacity_factor=1.25, n_batches=3, seed=3)),
        ((2048, 64, 4), dict(skew=0.8, drift=2.0, n_batches=5, seed=4)),
        ((2048, 64, 4), dict(skew=1.2, bias_rate=0.01, n_batches=6, seed=5)),
        ((4096, 256, 8), dict(n_groups=8, node_limit=4, seed=6)),
        ((4096, 256, 8), dict(n_groups=8, node_limit=4, skew=0.5, capacity_factor=1.1, n_batches=2, seed=7,
                              n_shared=1)),
        ((1000, 16, 1), dict(capacity_factor=1.1, seed=8)),
        ((1024, 16, 2), dict(capacity_factor=1.1, seed=9)),
    ]
    routings = {}
    for args, kw in cases:
        key = K("moe", "simulate_routing", *args, **kw)
        r = d.call(key, lambda a=args, k=kw: sim(*a, **k))
        if r is not None:
            routings[key] = r
            d.call(key + ".summary()", r.summary)
            d.call(key + ".dropped_fraction", lambda r=r: r.dropped_fraction)
            d.call(key + ".imbalance", lambda r=r: r.imbalance)
            d.call(key + ".mean_groups_per_token", lambda r=r: r.mean_groups_per_token)
    for n in (4, 16):
        for E in (8, 64):
            d.call(K("moe", "exp_noise", 5, 2, n, E), lambda n=n, E=E: fn("moe", "exp_noise")(5, 2, n, E))
    for E, s in ((16, 0.0), (16, 1.0), (256, 1.2)):
        d.call(K("moe", "popularity", E, s), lambda E=E, s=s: fn("moe", "popularity")(E, s))
    for args in ((4096, 256, 8), (1024, 64, 2), (100, 16, 1)):
        d.call(K("moe", "expected_load_stats", *args), lambda a=args: fn("moe", "expected_load_stats")(*a))
    place = lambda *a, **k: fn("moe", "place_experts")(*a, **k)  # noqa: E731
    placements = {}
    for args, kw in (((64, 8), {}), ((64, 8), dict(scheme="round_robin")),
                     ((64, 8), dict(scheme="replicate_hot", hot=4, replicas=2)),
                     ((64, 8), dict(scheme="replicate_hot", hot=8, replicas=3, loads="skewed")),
                     ((256, 32), {}), ((16, 64), {})):
        kw2 = dict(kw)
        if kw2.get("loads") == "skewed":
            kw2["loads"] = 1.0 / np.arange(1, 65)
        key = K("moe", "place_experts", *args, **kw)
        p = d.call(key, lambda a=args, k=kw2: place(*a, **k))
        if p is not None:
            placements[key] = p
            d.call(key + ".n_replicas", lambda p=p: p.n_replicas)
            d.call(key + ".experts_per_chip()", p.experts_per_chip)
    pairs = [(K("moe", "simulate_routing", 2048, 64, 4, skew=1.0, seed=2), K("moe", "place_experts", 64, 8)),
             (K("moe", "simulate_routing", 2048, 64, 4, skew=1.0, seed=2),
              K("moe", "place_experts", 64, 8, scheme="round_robin")),
             (K("moe", "simulate_routing", 2048, 64, 4, skew=1.0, seed=2),
              K("moe", "place_experts", 64, 8, scheme="replicate_hot", hot=8, replicas=3, loads="skewed")),
             (K("moe", "simulate_routing", 4096, 256, 8, n_groups=8, node_limit=4, seed=6),
              K("moe", "place_experts", 256, 32)),
             (K("moe", "simulate_routing", 1024, 16, 2, capacity_factor=1.1, seed=9),
              K("moe", "place_experts", 16, 64))]
    demands = {}
    for rk, pk in pairs:
        r, p = routings.get(rk), placements.get(pk)
        if r is None or p is None:
            continue
        tag = f"<{rk}>,<{pk}>"
        d.call(f"moe.chip_loads[{tag}]", lambda r=r, p=p: fn("moe", "chip_loads")(r, p))
        tr = d.call(f"moe.dispatch_traffic[{tag},14336]", lambda r=r, p=p: fn("moe", "dispatch_traffic")(r, p, 14336.0))
        if tr is not None:
            demands[tag] = tr["demand"]
    tp = lambda n: fn("topology", n)  # noqa: E731
    nets = {"torus((2,2,2))": lambda: tp("torus")((2, 2, 2)), "switched(8)": lambda: tp("switched")(8),
            "full_mesh(8)": lambda: tp("full_mesh")(8), "torus((2,4,4))": lambda: tp("torus")((2, 4, 4)),
            "fat_tree(4)x2": None}
    for tag, dem in demands.items():
        C = dem.shape[0]
        for label, make in nets.items():
            if make is None:
                continue
            t = _try(make, None)
            if t is None or t.n_endpoints != C:
                continue
            d.call(f"moe.all_to_all_time[{tag},{label}]", lambda t=t, dem=dem: fn("moe", "all_to_all_time")(dem, t))
            t2 = _try(lambda t=t: fn("moe", "equal_injection")(t, 400e9, 1e-6), None)
            if t2 is not None:
                d.call(f"moe.all_to_all_time[{tag},equal_injection({label},400e9)]",
                       lambda t=t2, dem=dem: fn("moe", "all_to_all_time")(dem, t))
                d.call(f"moe.all_to_all_time[{tag},equal_injection({label},400e9),overhead=2e-7]",
                       lambda t=t2, dem=dem: fn("moe", "all_to_all_time")(dem, t, 2e-7))
    for label in ("torus((4,4,4))", "switched(16)", "fat_tree(4)", "dragonfly(4,2,2)"):
        make = {"torus((4,4,4))": lambda: tp("torus")((4, 4, 4)), "switched(16)": lambda: tp("switched")(16),
                "fat_tree(4)": lambda: tp("fat_tree")(4), "dragonfly(4,2,2)": lambda: tp("dragonfly")(4, 2, 2)}[label]
        d.call(K("moe", "chip_degree", label), lambda m=make: fn("moe", "chip_degree")(m()))
    d.call(K("moe", "uniform_demand", 8, 16.0, 8, 14336.0), lambda: fn("moe", "uniform_demand")(8, 16.0, 8, 14336.0))
    d.call(K("moe", "uniform_demand", 16, 4.0, 2, 8192.0, experts_per_chip=0.5),
           lambda: fn("moe", "uniform_demand")(16, 4.0, 2, 8192.0, experts_per_chip=0.5))

    def networks():
        inj = fn("moe", "equal_injection")
        return {"torus 4x4x4": inj(tp("torus")((4, 4, 4)), 400e9, 1e-6),
                "fat tree k=8 (128)": inj(tp("fat_tree")(8), 400e9, 1e-6),
                "switched 64": inj(tp("switched")(64), 400e9, 1e-6),
                "dragonfly 4,2,2": inj(tp("dragonfly")(4, 2, 2), 400e9, 1e-6)}
    nw = _try(networks, None)
    if nw is not None:
        grid = [2.0**k for k in range(0, 13, 2)]
        for kw in (dict(), dict(cae=True), dict(experts_per_chip=4.0), dict(message_overhead_s=5e-6)):
            d.call(K("moe", "crossover_sweep", "4 networks", "2^0..2^12", 8, 14336.0, **kw),
                   lambda k=kw: fn("moe", "crossover_sweep")(nw, grid, 8, 14336.0, **k))


def section_serving(d: Dump):
    wl = lambda *a, **k: fn("serving", "workload")(*a, **k)  # noqa: E731
    StepCost = lambda **k: fn("serving", "StepCost")(**k)  # noqa: E731
    cost_kw = dict(fixed_s=0.0, weight_read_s=0.015, per_token_s=0.05e-3, comm_per_token_s=0.0,
                   decode_per_ctx_token_s=2e-8, prefill_attn_per_token_s=0.05e-3, max_batch=64, max_kv_tokens=200_000)
    cost = d.call(K("serving", "StepCost", **cost_kw), lambda: StepCost(**cost_kw))
    if cost is not None:
        d.call(K("serving", "StepCost", **cost_kw) + ".decode_bound_tok_s()", cost.decode_bound_tok_s)
        d.call(K("serving", "StepCost", **cost_kw) + ".iteration_s(8,4096,512)", lambda: cost.iteration_s(8, 4096, 512))
    small_kw = dict(cost_kw, max_batch=8, max_kv_tokens=20_000, fixed_s=0.002)
    small = _try(lambda: StepCost(**small_kw), None)
    workloads = {
        "workload(300,4.0,seed=0)": ((300, 4.0), dict(seed=0)),
        "workload(300,6.0,bursty,2.0,lognormal,seed=1)": (
            (300, 6.0), dict(arrival="bursty", burstiness=2.0, prompt=("lognormal", 512, 0.5, 4096),
                             output=("lognormal", 128, 0.7), seed=1)),
        "workload(200,3.0,uniform,seed=2)": ((200, 3.0), dict(prompt=("uniform", 64, 1024), output=("uniform", 1, 64),
                                                               seed=2)),
        "workload(50,20.0,fixed 256/1,seed=3)": ((50, 20.0), dict(prompt=256, output=("fixed", 1), seed=3)),
    }
    wls = {}
    for label, (args, kw) in workloads.items():
        w = d.call(K("serving", "workload", *args, **kw), lambda a=args, k=kw: wl(*a, **k), post=lambda w: w.to_frame())
        if w is not None:
            wls[label] = w
    if cost is None:
        return
    runs = [
        ("workload(300,4.0,seed=0)", {}),
        ("workload(300,4.0,seed=0)", dict(chunk_tokens=128)),
        ("workload(300,6.0,bursty,2.0,lognormal,seed=1)", dict(n_instances=2)),
        ("workload(300,6.0,bursty,2.0,lognormal,seed=1)", dict(disaggregated=True, n_prefill=1, n_decode=2,
                                                               kv_bytes_per_token=131072.0, link_bytes_per_s=50e9)),
        ("workload(200,3.0,uniform,seed=2)", dict(disaggregated=True, kv_bytes_per_token=327680.0,
                                                  link_bytes_per_s=25e9, prefill_cost="small")),
        ("workload(200,3.0,uniform,seed=2)", dict(cost="small")),
        ("workload(50,20.0,fixed 256/1,seed=3)", {}),
        ("workload(50,20.0,fixed 256/1,seed=3)", dict(disaggregated=True)),
    ]
    for label, kw in runs:
        w = wls.get(label)
        if w is None:
            continue
        kw2 = dict(kw)
        c = small if kw2.pop("cost", None) == "small" else cost
        if kw2.get("prefill_cost") == "small":
            kw2["prefill_cost"] = small
        key = K("serving", "simulate", label, **kw)
        d.call(key, lambda w=w, c=c, k=kw2: fn("serving", "simulate")(w, c, **k), post=_serving_numbers)
    lkw = dict(n_requests=200, prompt=("lognormal", 512, 0.5), output=("lognormal", 128, 0.5), seed=0)
    d.call(K("serving", "load_sweep", "cost", [1.0, 4.0, 8.0], **lkw),
           lambda: fn("serving", "load_sweep")(cost, [1.0, 4.0, 8.0], **lkw))
    d.call(K("serving", "load_sweep", "cost", [2.0, 6.0], n_requests=150, arrival="bursty", burstiness=3.0,
             ttft_slo_s=0.5, tbt_slo_s=0.05, n_instances=2),
           lambda: fn("serving", "load_sweep")(cost, [2.0, 6.0], n_requests=150, arrival="bursty", burstiness=3.0,
                                               ttft_slo_s=0.5, tbt_slo_s=0.05, n_instances=2))
    sc = _try(lambda: fn("inference", "step_cost")("llama-3.1-70b", "h200", 8), None)
    if sc is not None:
        w = wls.get("workload(300,4.0,seed=0)")
        d.call(K("serving", "simulate", "workload(300,4.0,seed=0)", "inference.step_cost[llama-3.1-70b,h200,8]"),
               lambda: fn("serving", "simulate")(w, sc), post=_serving_numbers)


def _serving_numbers(r) -> dict:
    return {"summary": r.summary(), "requests": r.to_frame(), "iterations": r.iterations,
            "gap_s": r.gap_s, "gap_count": r.gap_count, "n_instances": r.n_instances,
            "disaggregated": r.disaggregated, "goodput(1.0,0.05)": r.goodput(1.0, 0.05),
            "meets_slo(0.5,0.03).mean": float(r.meets_slo(0.5, 0.03).mean()), "mean_resident": r.mean_resident(),
            "tbt_percentile(75)": r.tbt_percentile(75)}


def section_economics(d: Dump):
    gm, gc = (lambda n: fn("llm", "get_model")(n)), (lambda n: fn("chip", "get_chip")(n))
    for m, c, mfu in (("llama-3.1-70b", "h100", 0.4), ("llama-3.1-405b", "tpu-v5p", 0.5), ("llama-3.1-8b", "a100", 0.45)):
        d.call(K("economics", "training_tokens_per_s", m, c, mfu),
               lambda a=(m, c, mfu): fn("economics", "training_tokens_per_s")(gm(a[0]), gc(a[1]), a[2]))
        d.call(K("economics", "training_tokens_per_s", m, c, mfu, seq_len=8192, precision="fp8"),
               lambda a=(m, c, mfu): fn("economics", "training_tokens_per_s")(gm(a[0]), gc(a[1]), a[2], 8192, "fp8"))
        d.call(K("economics", "implied_mfu", 900.0, m, c), lambda a=(m, c): fn("economics", "implied_mfu")(
            900.0, gm(a[0]), gc(a[1])))
        d.call(K("economics", "implied_params", 900.0, mfu, c), lambda a=(mfu, c): fn("economics", "implied_params")(
            900.0, a[0], gc(a[1])))
        d.call(K("economics", "usd_per_token", 900.0, c), lambda c=c: fn("economics", "usd_per_token")(900.0, gc(c)))
        d.call(K("economics", "usd_per_token", 900.0, c, 3.0),
               lambda c=c: fn("economics", "usd_per_token")(900.0, gc(c), 3.0))
        d.call(K("economics", "peak_flop_per_usd", c), lambda c=c: fn("economics", "peak_flop_per_usd")(gc(c)))
    chips_list = ["a100", "h100", "h200", "b200", "tpu-v5e", "tpu-v5p", "tpu-v6e", "groq-lpu-v1", "cerebras-cs3"]
    for kw in (dict(mfu=0.4), dict(mfu=0.5, seq_len=8192, precision="fp8", price_scale=0.8, train_tokens=15e12)):
        d.call(K("economics", "training_cost_table", "llama-3.1-70b", ",".join(chips_list), **kw),
               lambda k=kw: fn("economics", "training_cost_table")(gm("llama-3.1-70b"), [gc(c) for c in chips_list],
                                                                   **k))
    own = lambda *a, **k: fn("economics", "own_cost_per_hour")(*a, **k)  # noqa: E731
    for args, kw in (((35000, 700), {}), ((35000, 700), dict(utilisation=0.6, pue=1.4, cost_of_capital=0.0)),
                     ((12000, 350), dict(lifetime_years=6.0, electricity_usd_per_kwh=0.15, staff_usd_per_chip_year=0.0))):
        d.call(K("economics", "own_cost_per_hour", *args, **kw), lambda a=args, k=kw: own(*a, **k))
    for u in (1.0, 0.5):
        d.call(K("economics", "rent_cost_per_hour", 10.8, u), lambda u=u: fn("economics", "rent_cost_per_hour")(10.8, u))
    for args, kw in ((("h100", 900.0), {}), (("h100", 900.0), dict(utilisation=0.4, pue=1.5)),
                     (("tpu-v5p", 1200.0), {}), (("b200", 2000.0), dict(purchase_usd=45000.0)),
                     (("groq-lp30", 300.0), dict(purchase_usd=20000.0))):
        d.call(K("economics", "rent_or_own", *args, **kw), lambda a=args, k=kw: fn("economics", "rent_or_own")(*a, **k))
    base = dict(purchase_usd=35000.0, tdp_w=700.0, utilisation=0.7, pue=1.2, lifetime_years=4.0)
    ranges = {"purchase_usd": (25000.0, 45000.0), "utilisation": (0.4, 0.95), "pue": (1.1, 1.6),
              "lifetime_years": (3.0, 6.0)}
    d.call(K("economics", "tornado", "own_cost_per_hour.usd_per_hour", **base),
           lambda: fn("economics", "tornado")(lambda **k: own(**k)["usd_per_hour"], base, ranges))
    # migration
    Mig = lambda **k: fn("migration", "Migration")(**k)  # noqa: E731
    cases = [dict(usd_per_m_tokens_old=2.0, usd_per_m_tokens_new=1.2, volume_m_tokens_per_month=100_000.0),
             dict(usd_per_m_tokens_old=2.0, usd_per_m_tokens_new=1.5, volume_m_tokens_per_month=5_000.0,
                  growth_per_month=0.05, churn_per_month=0.1, horizon_months=24),
             dict(usd_per_m_tokens_old=1.0, usd_per_m_tokens_new=1.2, volume_m_tokens_per_month=100_000.0),
             dict(usd_per_m_tokens_old=3.0, usd_per_m_tokens_new=1.0, volume_m_tokens_per_month=50_000.0,
                  churn_per_month=0.3, port_months=2, rework_share=0.8),
             dict(usd_per_m_tokens_old=2.0, usd_per_m_tokens_new=1.9, volume_m_tokens_per_month=100.0,
                  engineer_months=24.0, horizon_months=12)]
    for kw in cases:
        key = K("migration", "Migration", **kw)
        m = d.call(key, lambda k=kw: Mig(**k))
        if m is None:
            continue
        d.call(key + ".port_cost_usd", lambda m=m: m.port_cost_usd)
        for name in ("cash_flow", "payback_months", "break_even_volume", "verdict"):
            d.call(f"migration.{name}[{key}]", lambda m=m, n=name: fn("migration", n)(m))
    # fleet
    ef = d.call(K("fleet", "example_fleet"), lambda: fn("fleet", "example_fleet")())
    ef2 = d.call(K("fleet", "example_fleet", 300.0, 0.5), lambda: fn("fleet", "example_fleet")(300.0, 0.5))
    for label, case in (("example_fleet()", ef), ("example_fleet(300.0,0.5)", ef2)):
        if case is None:
            continue
        ws, ps = case
        rates = d.call(f"fleet.default_rates[{label}]", lambda ws=ws, ps=ps: fn("fleet", "default_rates")(ws, ps))
        if rates is None:
            continue
        d.call(f"fleet.place[{label}]", lambda ws=ws, ps=ps, r=rates: fn("fleet", "place")(ws, ps, r))
        d.call(f"fleet.compare_strategies[{label}]",
               lambda ws=ws, ps=ps, r=rates: fn("fleet", "compare_strategies")(ws, ps, r))
        allowed = {(w.name, p.name) for w in ws for p in ps if p.name.startswith("GPU")}
        d.call(f"fleet.place[{label},allowed=GPU only]",
               lambda ws=ws, ps=ps, r=rates, a=allowed: fn("fleet", "place")(ws, ps, r, a))
        small = [type(p)(p.name, p.chip, max(1, p.chips // 64), p.usd_per_chip_hour, p.group) for p in ps]
        d.call(f"fleet.place[{label},pools/64]", lambda ws=ws, ps=small, r=rates: fn("fleet", "place")(ws, ps, r))


def section_chipdesign(d: Dump):
    design = lambda *a, **k: fn("chipdesign", "design")(*a, **k)  # noqa: E731
    Training = lambda **k: fn("chipdesign", "Training")(**k)  # noqa: E731
    Decode = lambda **k: fn("chipdesign", "Decode")(**k)  # noqa: E731
    designs = {}
    for args, kw in (((400.0, 50.0, 5, 40.0), {}), ((300.0, 200.0, 6, 40.0), {}), ((500.0, 20.0, 8, 40.0), {}),
                     ((200.0, 400.0, 4, 40.0), dict(area_mm2=860.0, power_w=1000.0)),
                     ((700.0, 100.0, 10, 60.0), {})):
        key = K("chipdesign", "design", *args, **kw)
        dz = d.call(key, lambda a=args, k=kw: design(*a, **k), post=_design_numbers)
        if dz is not None:
            designs[key] = dz
    h = d.call(K("chipdesign", "h100_like"), lambda: fn("chipdesign", "h100_like")(), post=_design_numbers)
    if h is not None:
        designs[K("chipdesign", "h100_like")] = h
    workloads = {"Training()": lambda: Training(), "Training(shards=8,microbatch_tokens=4096)":
                 lambda: Training(shards=8, microbatch_tokens=4096),
                 "Decode()": lambda: Decode(), "Decode(batch_size=8,context_len=2048)":
                 lambda: Decode(batch_size=8, context_len=2048),
                 "Decode(llama-3.1-8b,n_chips=1,precision=fp8)": lambda: Decode(model="llama-3.1-8b", n_chips=1,
                                                                                 precision="fp8")}
    ws = {k: d.call(K("chipdesign", "workload", k), v) for k, v in workloads.items()}
    for wk, w in ws.items():
        if w is None:
            continue
        d.call(K("chipdesign", "need", wk), lambda w=w: fn("chipdesign", "need")(w))
        for dk, dz in designs.items():
            d.call(f"chipdesign.evaluate[<{dk}>,{wk}]", lambda dz=dz, w=w: fn("chipdesign", "evaluate")(dz, w))
    coarse = dict(grid_mm2=40.0)
    if ws.get("Training()") is not None and ws.get("Decode()") is not None:
        d.call(K("chipdesign", "sweep", "Training(),Decode()", **coarse),
               lambda: fn("chipdesign", "sweep")([ws["Training()"], ws["Decode()"]], **coarse))
        d.call(K("chipdesign", "sweep", "Decode()", area_mm2=600.0, power_w=500.0, grid_mm2=50.0),
               lambda: fn("chipdesign", "sweep")(ws["Decode()"], area_mm2=600.0, power_w=500.0, grid_mm2=50.0))
        for wk in ("Training()", "Decode()", "Decode(batch_size=8,context_len=2048)"):
            key = K("chipdesign", "best_design", wk, **coarse)
            d.call(key, lambda w=ws[wk]: fn("chipdesign", "best_design")(w, **coarse),
                   post=lambda r: {"design": _design_numbers(r[0]), "table_head": r[1].head(20),
                                   "table_rows": len(r[1])})
        d.call(K("chipdesign", "compare_8t_8i"), lambda: fn("chipdesign", "compare_8t_8i")())
        d.call(K("chipdesign", "compare_8t_8i", area_mm2=700.0, power_w=900.0, grid_mm2=20.0),
               lambda: fn("chipdesign", "compare_8t_8i")(area_mm2=700.0, power_w=900.0, grid_mm2=20.0))
    p = _try(lambda: fn("chipdesign", "params")(hbm_stack_bytes_per_s=1.6e12, j_per_flop=0.5e-12), None)
    if p is not None and ws.get("Decode()") is not None:
        d.call(K("chipdesign", "h100_like", "params(hbm_stack_bytes_per_s=1.6e12,j_per_flop=0.5e-12)"),
               lambda: fn("chipdesign", "h100_like")(p), post=_design_numbers)
        d.call(K("chipdesign", "evaluate", "h100_like(params(...))", "Decode()"),
               lambda: fn("chipdesign", "evaluate")(fn("chipdesign", "h100_like")(p), ws["Decode()"]))


def _design_numbers(dz):
    out = {f.name: getattr(dz, f.name) for f in dataclasses.fields(dz) if f.name != "params"}
    out.update(fits=dz.fits, why_not=dz.why_not, matrix_tflop_s=dz.matrix_tflop_s, sram_mb=dz.sram_mb,
               io_tb_s=dz.io_tb_s)
    return out


def section_chip(d: Dump):
    gm, gc = (lambda n: fn("llm", "get_model")(n)), (lambda n: fn("chip", "get_chip")(n))
    for c in ("h100", "tpu-v5p", "groq-lpu-v1", "b200"):
        for p in ("bf16", "fp8"):
            d.call(K("chip", "Chip.ridge_point", c, p), lambda c=c, p=p: gc(c).ridge_point(p))
    d.call(K("chip", "Chip.what_if_variant", "h100", hbm_bw_bytes_per_s=6.7e12),
           lambda: gc("h100").what_if_variant(hbm_bw_bytes_per_s=6.7e12))
    lr = lambda *a, **k: fn("roofline", "layer_roofline")(*a, **k)  # noqa: E731
    for m, c, ph, B, s, p in (("llama-3.1-70b", "h100", "decode", 1, 4096, "bf16"),
                              ("llama-3.1-70b", "h100", "training", 8, 4096, "bf16"),
                              ("llama-3.1-70b", "tpu-v5p", "prefill", 4, 8192, "bf16"),
                              ("llama-3.1-70b", "h200", "decode", 64, 8192, "fp8"),
                              ("deepseek-v3", "h100", "decode", 32, 4096, "fp8"),
                              ("deepseek-v3", "b200", "prefill", 2, 4096, "bf16"),
                              ("mixtral-8x7b", "tpu-v6e", "training", 4, 4096, "bf16"),
                              ("gpt3-175b", "a100", "decode", 16, 2048, "fp16"),
                              ("llama-3.1-8b", "groq-lpu-v1", "decode", 1, 2048, "fp16")):
        d.call(K("roofline", "layer_roofline", m, c, ph, B, s, p),
               lambda a=(m, c, ph, B, s, p): lr(gm(a[0]), gc(a[1]), *a[2:]))
    for c, p in (("h100", "bf16"), ("tpu-v5p", "bf16"), ("b200", "fp8")):
        d.call(K("roofline", "roofline_curve", c, p), lambda c=c, p=p: fn("roofline", "roofline_curve")(gc(c), p))
    d.call(K("roofline", "roofline_curve", "h100", "bf16", 1.0, 1e4, 8),
           lambda: fn("roofline", "roofline_curve")(gc("h100"), "bf16", 1.0, 1e4, 8))
    d.call(K("roofline", "ridge_point", [989e12, 459e12], [3.35e12, 2.765e12]),
           lambda: fn("roofline", "ridge_point")([989e12, 459e12], [3.35e12, 2.765e12]))
    d.call(K("roofline", "attainable_flop_s", [1, 10, 100, 1000], 989e12, 3.35e12),
           lambda: fn("roofline", "attainable_flop_s")([1, 10, 100, 1000], 989e12, 3.35e12))
    d.call(K("roofline", "time_bounds", [1e12, 1e9], [1e9, 1e9], 989e12, 3.35e12),
           lambda: fn("roofline", "time_bounds")([1e12, 1e9], [1e9, 1e9], 989e12, 3.35e12))
    d.call(K("roofline", "layer_ops", "llama-3.1-70b", "decode", 8, 4096, "bf16"),
           lambda: [dataclasses.asdict(o) for o in fn("roofline", "layer_ops")(gm("llama-3.1-70b"), "decode", 8, 4096)])
    # tiling
    for args in ((2048, 2048, 2048), (2304, 2304, 2304), (1, 4096, 4096), (8192, 28672, 8192), (4000, 3000, 100)):
        d.call(K("tiling", "gpu_gemm", *args), lambda a=args: fn("tiling", "gpu_gemm")(*a))
        d.call(K("tiling", "gpu_gemm", *args, sms=148, tile_m=256, tile_n=128, tile_k=32),
               lambda a=args: fn("tiling", "gpu_gemm")(*a, sms=148, tile_m=256, tile_n=128, tile_k=32))
        d.call(K("tiling", "tpu_gemm", *args), lambda a=args: fn("tiling", "tpu_gemm")(*a))
        d.call(K("tiling", "tpu_gemm", *args, mxu=256, n_mxu=2), lambda a=args: fn("tiling", "tpu_gemm")(*a, 256, 2))
    for dim, vals in (("M", [1, 64, 128, 129, 1000, 4096]), ("N", [100, 128, 300, 2048]), ("K", [64, 65, 1024])):
        d.call(K("tiling", "shape_sweep", dim, vals, 2048, 2048, 2048),
               lambda dim=dim, vals=vals: fn("tiling", "shape_sweep")(dim, vals, 2048, 2048, 2048))
    d.call(K("tiling", "shape_sweep", "M", [128, 1000], 512, 4096, 4096, sms=148, tile=256, mxu=256, n_mxu=4),
           lambda: fn("tiling", "shape_sweep")("M", [128, 1000], 512, 4096, 4096, sms=148, tile=256, mxu=256, n_mxu=4))
    # systolic
    for args in ((8, 8, 8, 8, 8), (6, 6, 6, 4, 4), (64, 48, 40, 16, 16), (100, 37, 53, 8, 32), (1, 128, 256, 32, 32),
                 (128, 128, 128, 128, 128)):
        for df in ("os", "ws", "is"):
            d.call(K("systolic", "simulate", *args, df), lambda a=args, df=df: fn("systolic", "simulate")(*a, df))
            d.call(K("systolic", "closed_form", *args, df), lambda a=args, df=df: fn("systolic", "closed_form")(*a, df))
            d.call(K("systolic", "cycles", *args, df), lambda a=args, df=df: fn("systolic", "cycles")(*a, df))
            d.call(K("systolic", "mapping", *args[:3], df), lambda a=args, df=df: fn("systolic", "mapping")(*a[:3], df))
    for df in ("os", "ws", "is"):
        d.call(K("systolic", "simulate", 6, 5, 4, 4, 4, df, trace=True),
               lambda df=df: fn("systolic", "simulate")(6, 5, 4, 4, 4, df, trace=True))
        d.call(K("systolic", "pe_states", 6, 6, 6, 4, 4, df, 3),
               lambda df=df: fn("systolic", "pe_states")(6, 6, 6, 4, 4, df, 3))
    d.call(K("systolic", "simulate_table", 16, 16, 16, 8, 8), lambda: fn("systolic", "simulate_table")(16, 16, 16, 8, 8))


def section_exercises(d: Dump):
    ex = _try(lambda: fn("exercises", "EXERCISES"), None)
    if ex is None:
        d.put("exercises.EXERCISES!error", "not found")
        return
    d.put("exercises.EXERCISES.ids", sorted(ex))
    for eid in sorted(ex):
        e = ex[eid]
        d.call(f"exercises.EXERCISES[{eid}].expected()", e.expected)
        d.put(f"exercises.EXERCISES[{eid}].meta", {"notebook": e.notebook, "question": e.question,
                                                   "rel_tol": e.rel_tol, "unit": e.unit})
        v = _try(e.expected, None)
        if isinstance(v, (int, float)) and not isinstance(v, bool):
            d.call(f"exercises.check[{eid},expected]", lambda eid=eid, v=v: fn("exercises", "check")(eid, v),
                   post=lambda r: {"correct": r.correct, "message": r.message})
        elif isinstance(v, set) and v:
            a = sorted(v)[0]
            d.call(f"exercises.check[{eid},{a}]", lambda eid=eid, a=a: fn("exercises", "check")(eid, a),
                   post=lambda r: {"correct": r.correct, "message": r.message})


def section_dashboards(d: Dump):
    specs = _try(dashboard_specs, [])
    names = []
    for label, spec in specs:
        if isinstance(spec, Exception):
            d.put(f"dashboards.{label}!error", f"{type(spec).__name__}: {spec}")
            continue
        key = f"dashboards[{spec.name}]"
        names.append(spec.name)
        d.put(key + ".defaults", {k: cell(v) for k, v in spec.defaults().items()})
        d.call(key + ".view(defaults)", lambda s=spec: s.view(**s.defaults()), post=_view_numbers)
    d.put("dashboards.names", sorted(names))


def _view_numbers(v) -> dict:
    out = {"data": v.data, "summary": v.summary}
    if v.table is not None:
        out["table"] = v.table
    return out


# ================================================================================================
# c. notebooks (each in a subprocess running this file with the hidden ``_notebook`` command)
# ================================================================================================
_TIMING_NAMES = re.compile(r"^(t\d+|t_?start|t_?end|start_?time|end_?time|elapsed\w*|\w*_elapsed\w*|wall\w*|\w*_wall_s)$")
_TIMING_TEXT = re.compile(r"\b(in|took|after) \d[\d,.]*(e-?\d+)? ?(ms|s|seconds|µs|us)\b")
_TMP_PATH = re.compile(r"(?:/[\w.\-]+)*/tmp[\w\-]{6,}(?=/)")


def _mask_text(text: str, root: Path) -> str:
    """Printed text without what changes from run to run or tree to tree: timings, temp dirs, the root."""
    text = _TIMING_TEXT.sub(r"\1 <time> \3", text)
    text = _TMP_PATH.sub("<tmpdir>", text)
    return text.replace(str(root), "<repo>")


def _simple_global(v) -> bool:
    if isinstance(v, (bool, int, float, np.number, np.bool_)):
        return True
    if isinstance(v, str):
        return len(v) < 300
    if isinstance(v, (tuple, list)):
        return len(v) > 0 and all(isinstance(x, (int, float, np.number, np.bool_)) for x in v)
    if isinstance(v, (pd.DataFrame, pd.Series)):
        return True
    if isinstance(v, np.ndarray):
        return v.dtype.kind in "biuf"
    if isinstance(v, Mapping):
        return len(v) > 0 and all(isinstance(x, (int, float, np.number, np.bool_)) for x in v.values())
    return False


def run_notebook(path: Path) -> dict:
    """Execute a notebook's code cells in one plain namespace; return its dump entries."""
    import nbformat
    from IPython.core.inputtransformer2 import TransformerManager

    os.environ.setdefault("ACCELBOOK_RENDERER", "browser")
    import IPython.display as ipd

    def display(*objs, **kw):  # noqa: ARG001 - a notebook's display() does nothing here
        return None

    ipd.display = display
    try:
        import IPython.core.display_functions as idf
        idf.display = display
    except ImportError:
        pass

    class _Shell:
        def run_line_magic(self, *a, **k):
            return None

        def run_cell_magic(self, *a, **k):
            return None

        def system(self, *a, **k):
            return None

        getoutput = system

        def __getattr__(self, name):
            return lambda *a, **k: None

    shell = _Shell()
    import altair as alt
    alt.renderers.enable("json")
    nb_name = path.stem
    nb = nbformat.read(str(path), as_version=4)
    tm = TransformerManager()
    ns: dict = {"__name__": "__main__", "display": display, "get_ipython": lambda: shell}
    out: dict[str, object] = {}
    os.chdir(path.parent)
    n_code = 0
    for cell_ in nb.cells:
        if cell_.cell_type != "code":
            continue
        i = n_code
        n_code += 1
        src = cell_.source
        if src.lstrip().startswith("%%"):
            out[f"nb:{nb_name}:cell[{i}].skipped"] = "cell magic"
            continue
        buf = io.StringIO()
        try:
            code = tm.transform_cell(src)
            old_out = sys.stdout
            sys.stdout = buf
            try:
                exec(compile(code, f"<{nb_name} cell {i}>", "exec"), ns)
            finally:
                sys.stdout = old_out
        except BaseException as exc:  # noqa: BLE001 - a failing cell is recorded, the next ones still run
            if isinstance(exc, KeyboardInterrupt):
                raise
            out[f"nb:{nb_name}:cell[{i}].error"] = _mask_text(f"{type(exc).__name__}: {exc}", path.parent.parent)
        text = buf.getvalue()
        if text:
            out[f"nb:{nb_name}:cell[{i}].stdout"] = _mask_text(text, path.parent.parent)
    out[f"nb:{nb_name}:n_code_cells"] = n_code
    d = Dump()
    for name, v in ns.items():
        if name.startswith("_") or _TIMING_NAMES.match(name) or isinstance(v, types.ModuleType):
            continue
        key = f"nb:{nb_name}:{name}"
        try:
            if _simple_global(v):
                d.put(key, v)
            elif hasattr(v, "last_view") and hasattr(v, "spec"):   # a dashboard shown by the notebook
                lv = v.last_view
                d.put(key + ".last_view", _view_numbers(lv) if lv is not None else None)
                d.put(key + ".values", {k: cell(x) for k, x in v.values.items()})
                d.put(key + ".last_error", v.last_error)
            elif dataclasses.is_dataclass(v) and not isinstance(v, type):   # a result object
                d.put(key, v)
        except Exception as exc:  # noqa: BLE001
            d.entries.pop(key, None)
            d.entries[key + "!dump-error"] = f"{type(exc).__name__}: {exc}"
    out.update(d.entries)
    return out


def _notebook_main(nb_path: str, out_path: str) -> int:
    try:
        entries = run_notebook(Path(nb_path).resolve())
    except Exception as exc:  # noqa: BLE001
        entries = {f"nb:{Path(nb_path).stem}!error": f"{type(exc).__name__}: {exc}\n{traceback.format_exc()}"}
    with open(out_path, "w") as fh:
        json.dump(entries, fh, allow_nan=False)
    return 0


def section_notebooks(d: Dump, nb_dir: Path | None, jobs: int = NOTEBOOK_JOBS, timeout: float = NOTEBOOK_TIMEOUT_S):
    if nb_dir is None or not nb_dir.is_dir():
        d.put("nb!error", f"no notebooks directory {nb_dir}")
        return
    paths = sorted(nb_dir.glob("*.ipynb"))
    d.put("nb.notebooks", [p.stem for p in paths])
    tmp = Path(tempfile.mkdtemp(prefix="dump_numbers_nb_"))
    pending = list(paths)
    running: list[tuple[Path, subprocess.Popen, Path, float, object]] = []
    results: dict[str, dict] = {}
    env = dict(os.environ)
    env.setdefault("ACCELBOOK_RENDERER", "browser")
    while pending or running:
        while pending and len(running) < max(1, jobs):
            p = pending.pop(0)
            out = tmp / (p.stem + ".json")
            log = open(tmp / (p.stem + ".log"), "w")
            proc = subprocess.Popen([sys.executable, str(Path(__file__).resolve()), "_notebook", str(p), str(out)],
                                    stdout=log, stderr=subprocess.STDOUT, env=env)
            running.append((p, proc, out, time.perf_counter(), log))
        time.sleep(0.05)
        for item in list(running):
            p, proc, out, t0, log = item
            rc = proc.poll()
            if rc is None and time.perf_counter() - t0 < timeout:
                continue
            if rc is None:
                proc.kill()
                proc.wait()
                results[p.stem] = {f"nb:{p.stem}!error": f"timed out after {timeout:.0f} s"}
            elif out.exists():
                with open(out) as fh:
                    results[p.stem] = json.load(fh)
            else:
                log.flush()
                tail = (tmp / (p.stem + ".log")).read_text()[-2000:]
                results[p.stem] = {f"nb:{p.stem}!error": f"subprocess exited {rc} without a result: {tail}"}
            log.close()
            print(f"  notebook {p.name}: {time.perf_counter() - t0:.1f} s", file=sys.stderr)
            running.remove(item)
    for p in paths:
        for k, v in results[p.stem].items():
            d._set(k, v)
    import shutil
    shutil.rmtree(tmp, ignore_errors=True)
    for r in results.values():
        d.errors.extend(f"{k}: {v}" for k, v in r.items() if k.endswith("].error") or k.endswith("!error"))


# ================================================================================================
# dump / compare
# ================================================================================================
SECTIONS = {
    "validation": section_validation,
    "training": section_training,
    "inference": section_inference,
    "topology": section_topology,
    "collectives": section_collectives,
    "moe": section_moe,
    "serving": section_serving,
    "economics": section_economics,
    "chipdesign": section_chipdesign,
    "chip": section_chip,
    "exercises": section_exercises,
    "dashboards": section_dashboards,
    "notebooks": None,
}


def dump(out_path: str, only=None, notebooks_dir: str | None = None, no_notebooks: bool = False,
         jobs: int = NOTEBOOK_JOBS, show_resolved: bool = False) -> int:
    t_all = time.perf_counter()
    ab = _package()
    pkg_dir = Path(ab.__file__).resolve().parent
    print(f"accelbook imported from {pkg_dir}", file=sys.stderr)
    nb_dir = Path(notebooks_dir) if notebooks_dir else pkg_dir.parent / "notebooks"
    d = Dump()
    sections = [s for s in SECTIONS if only is None or s in only]
    counts = {}
    # the notebooks run in subprocesses while this process dumps the rest
    nb_thread = None
    nb_dump = Dump()
    if "notebooks" in sections and not no_notebooks:
        import threading

        def _nb():
            t0 = time.perf_counter()
            section_notebooks(nb_dump, nb_dir, jobs=jobs)
            print(f"section notebooks: {len(nb_dump.entries)} entries, {time.perf_counter() - t0:.1f} s",
                  file=sys.stderr)

        nb_thread = threading.Thread(target=_nb)
        nb_thread.start()
    for s in sections:
        if SECTIONS[s] is None:
            continue
        t0 = time.perf_counter()
        before = len(d.entries)
        try:
            SECTIONS[s](d)
        except Exception as exc:  # noqa: BLE001 - a section that crashes is recorded, the rest still runs
            d._set(f"{s}!section-error", f"{type(exc).__name__}: {exc}")
            d.errors.append(f"section {s}: {traceback.format_exc()}")
        counts[s] = len(d.entries) - before
        print(f"section {s}: {counts[s]} entries, {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    if nb_thread is not None:
        nb_thread.join()
        counts["notebooks"] = len(nb_dump.entries)
        for k, v in nb_dump.entries.items():
            d._set(k, v)
        d.errors.extend(nb_dump.errors)
    if show_resolved:
        print("where each old name was found:", file=sys.stderr)
        for (old, name), obj in sorted(_RESOLVED.items()):
            where = getattr(obj, "__module__", None) or type(obj).__name__
            print(f"  {old}.{name} -> {where}", file=sys.stderr)
    if _WALK_ERRORS:
        print("modules that failed to import during the search:\n  " + "\n  ".join(_WALK_ERRORS), file=sys.stderr)
    d.entries = dict(sorted(d.entries.items()))
    with open(out_path, "w") as fh:   # one entry per line: greppable, diffable
        fh.write("{\n")
        fh.write(",\n".join(json.dumps(k) + ": " + json.dumps(v, allow_nan=False, ensure_ascii=False)
                             for k, v in d.entries.items()))
        fh.write("\n}\n")
    print(f"{len(d.entries)} entries written to {out_path} ({', '.join(f'{k} {v}' for k, v in counts.items())}); "
          f"{len(d.errors)} recorded errors; {time.perf_counter() - t_all:.1f} s", file=sys.stderr)
    expected = [e for e in d.errors if ": ValueError: " in e]
    other = [e for e in d.errors if ": ValueError: " not in e]
    print(f"{len(expected)} calls raised ValueError (invalid combinations; recorded as entries, like values)",
          file=sys.stderr)
    if other:
        print("other recorded errors (entries ending in !error / .error):", file=sys.stderr)
        for e in other:
            print("  " + e.splitlines()[0][:300], file=sys.stderr)
    return 0


def _differs(a, b, path: str = "") -> str | None:
    """Where ``a`` and ``b`` differ (a short description), or None if they are the same."""
    num = (int, float)
    if isinstance(a, bool) or isinstance(b, bool):
        return None if (type(a) is type(b) and a == b) else f"{path}: {a!r} != {b!r}"
    if isinstance(a, num) and isinstance(b, num):
        if a == b:
            return None
        scale = max(abs(a), abs(b))
        rel = abs(a - b) / scale
        return None if rel <= REL_TOL else f"{path}: {a!r} != {b!r} (rel {rel:.3g})"
    if isinstance(a, str) or isinstance(b, str) or a is None or b is None:
        if a == b:
            return None
        sa, sb = repr(a), repr(b)
        if isinstance(a, str) and isinstance(b, str) and len(a) + len(b) > 200:
            i = next((j for j, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
            sa, sb = repr(a[max(0, i - 40):i + 60]), repr(b[max(0, i - 40):i + 60])
            return f"{path}: strings differ at char {i}: {sa} != {sb}"
        return f"{path}: {sa} != {sb}"
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{path}: length {len(a)} != {len(b)}"
        for i, (x, y) in enumerate(zip(a, b)):
            r = _differs(x, y, f"{path}[{i}]")
            if r:
                return r
        return None
    if isinstance(a, dict) and isinstance(b, dict):
        if set(a) != set(b):
            return f"{path}: keys {sorted(set(a) ^ set(b))[:10]} on one side only"
        for k in a:
            r = _differs(a[k], b[k], f"{path}.{k}")
            if r:
                return r
        return None
    return f"{path}: {type(a).__name__} != {type(b).__name__}"


def compare(a_path: str, b_path: str, limit: int = 0) -> int:
    with open(a_path) as fh:
        A = json.load(fh)
    with open(b_path) as fh:
        B = json.load(fh)
    only_a = sorted(set(A) - set(B))
    only_b = sorted(set(B) - set(A))
    diffs = []
    for k in sorted(set(A) & set(B)):
        r = _differs(A[k], B[k])
        if r:
            diffs.append((k, r))
    for k in only_a:
        print(f"MISSING in {b_path}: {k}")
    for k in only_b:
        print(f"MISSING in {a_path}: {k}")
    for k, r in diffs[: limit or None]:
        print(f"DIFF {k}{r}")
    if limit and len(diffs) > limit:
        print(f"... {len(diffs) - limit} more differing keys not shown")
    n = len(diffs) + len(only_a) + len(only_b)
    print(f"{n} differing keys ({len(diffs)} values differ, {len(only_a)} only in {a_path}, "
          f"{len(only_b)} only in {b_path}); {len(set(A) & set(B))} keys compared")
    return 1 if n else 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True, metavar="{dump,compare}")
    p = sub.add_parser("dump", help="write the dump of the importable accelbook to OUT.json")
    p.add_argument("out")
    p.add_argument("--only", action="append", choices=list(SECTIONS), help="dump only these sections")
    p.add_argument("--notebooks", help="directory of the notebooks (default: ../notebooks next to the package)")
    p.add_argument("--no-notebooks", action="store_true", help="skip the notebooks")
    p.add_argument("--jobs", type=int, default=NOTEBOOK_JOBS, help="notebooks run at once (subprocesses)")
    p.add_argument("--show-resolved", action="store_true", help="print where each old name was found (stderr)")
    c = sub.add_parser("compare", help="print every key whose values differ; exit 1 if any")
    c.add_argument("a")
    c.add_argument("b")
    c.add_argument("--limit", type=int, default=0, help="show at most this many differing values (0: all)")
    n = sub.add_parser("_notebook", help=argparse.SUPPRESS)
    n.add_argument("notebook")
    n.add_argument("out")
    args = ap.parse_args(argv)
    if args.cmd == "dump":
        return dump(args.out, args.only, args.notebooks, args.no_notebooks, args.jobs, args.show_resolved)
    if args.cmd == "compare":
        return compare(args.a, args.b, args.limit)
    return _notebook_main(args.notebook, args.out)


if __name__ == "__main__":
    sys.exit(main())
