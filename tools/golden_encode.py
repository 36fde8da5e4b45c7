"""Values as golden entries: a flat mapping of keys to JSON scalars or lists of them.

A DataFrame becomes one entry per column (``key.<column>``, a list; ``key.index`` when the index is
not ``0..n-1``), a mapping, a dataclass or an object one entry per field (``key.<field>``), a list of
numbers one list; floats stay floats (``json`` writes them with ``repr``, so they round-trip exactly),
NaN and infinities become the strings ``"nan"``, ``"inf"`` and ``"-inf"``. A call that raises is an
entry too, ``key!error`` with the exception's type and message: which combinations are invalid is
behaviour as well.
"""

from __future__ import annotations

import dataclasses
import math
import re
import types
from collections.abc import Mapping

import numpy as np
import pandas as pd

MAX_DEPTH = 6
_ADDRESS = re.compile(r" (object )?at 0x[0-9a-fA-F]+")


class NotScalar(Exception):
    """Raised by :func:`scalar` for a value that is not one JSON scalar."""


def scalar(v):
    """``v`` as a JSON scalar (None, bool, int, float, str), or :class:`NotScalar`."""
    if v is None or isinstance(v, str):
        return v
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
    if v is pd.NA or v is pd.NaT:
        return "nan"
    if isinstance(v, (pd.Timestamp, pd.Timedelta)):
        return str(v)
    raise NotScalar


def text(v) -> str:
    """A repr without memory addresses (they change from run to run)."""
    return _ADDRESS.sub("", repr(v))[:300]


def cell(v, depth: int = 0):
    """Any value as a JSON value: a scalar, or (nested) lists of them, or a repr string."""
    try:
        return scalar(v)
    except NotScalar:
        pass
    if depth > MAX_DEPTH:
        return "<too deep>"
    if isinstance(v, np.ndarray):
        return [cell(x, depth + 1) for x in v.tolist()] if v.ndim else cell(v.item(), depth + 1)
    if isinstance(v, (list, tuple)):
        return [cell(x, depth + 1) for x in v]
    if isinstance(v, (set, frozenset)):
        return sorted((cell(x, depth + 1) for x in v), key=repr)
    if isinstance(v, Mapping):
        return [[cell(k, depth + 1), cell(x, depth + 1)] for k, x in v.items()]
    if dataclasses.is_dataclass(v) and not isinstance(v, type):
        return [[f.name, cell(getattr(v, f.name), depth + 1)] for f in dataclasses.fields(v)]
    return text(v)


def _column(s: pd.Series) -> list:
    vals = s.to_numpy()
    if vals.dtype.kind in "fiub":
        return [scalar(x) for x in vals.tolist()]
    return [cell(x, 1) for x in vals.tolist()]


def _is_simple(x) -> bool:
    try:
        scalar(x)
        return True
    except NotScalar:
        return isinstance(x, (list, tuple)) and all(_is_simple(y) for y in x)


class Entries:
    """The golden entries being gathered; :meth:`put` flattens a value into keys."""

    def __init__(self):
        self.values: dict[str, object] = {}

    def set(self, key: str, value) -> None:
        if key in self.values:
            raise KeyError(f"duplicate golden key {key!r}")
        self.values[key] = value

    def put(self, key: str, v, depth: int = 0) -> None:
        """``v`` under ``key``, flattened: see the module docstring."""
        try:
            self.set(key, scalar(v))
            return
        except NotScalar:
            pass
        if depth > MAX_DEPTH:
            self.set(key, "<too deep>")
        elif isinstance(v, pd.DataFrame):
            self._frame(key, v)
        elif isinstance(v, pd.Series):
            self._frame(key, v.to_frame(name=str(v.name)))
        elif isinstance(v, np.ndarray):
            self.set(key, cell(v))
        elif isinstance(v, Mapping):
            self._fields(key, v.items(), depth)
        elif dataclasses.is_dataclass(v) and not isinstance(v, type):
            self._fields(key, ((f.name, getattr(v, f.name)) for f in dataclasses.fields(v)), depth)
        elif isinstance(v, (list, tuple, set, frozenset)):
            self._sequence(key, v, depth)
        elif isinstance(v, (types.FunctionType, types.BuiltinFunctionType, types.MethodType, type)):
            self.set(key, f"<{type(v).__name__} {getattr(v, '__qualname__', '')}>")
        elif hasattr(v, "__dict__"):
            self._fields(key, ((k, x) for k, x in vars(v).items() if not k.startswith("_")), depth)
        else:
            self.set(key, text(v))

    def _fields(self, key: str, items, depth: int) -> None:
        n = 0
        for k, x in items:
            name = ",".join(map(str, k)) if isinstance(k, tuple) else k
            self.put(f"{key}.{name}", x, depth + 1)
            n += 1
        if not n:
            self.set(key, "<empty>")

    def _sequence(self, key: str, v, depth: int) -> None:
        items = sorted(v, key=repr) if isinstance(v, (set, frozenset)) else list(v)
        if all(_is_simple(x) for x in items):
            self.set(key, [cell(x) for x in items])
        else:
            for i, x in enumerate(items):
                self.put(f"{key}[{i}]", x, depth + 1)

    def _frame(self, key: str, df: pd.DataFrame) -> None:
        if df.shape[1] == 0 or not df.columns.is_unique:
            self.set(key, f"<frame {df.shape} columns {list(map(str, df.columns))}>")
            return
        if not df.index.equals(pd.RangeIndex(len(df))):
            self.set(f"{key}.index", [cell(i, 1) for i in df.index])
        for c in df.columns:
            self.set(f"{key}.{c}", _column(df[c]))
        for k, x in df.attrs.items():
            self.put(f"{key}.attrs.{k}", x, 1)

    def call(self, key: str, thunk, post=None):
        """``put(key, post(thunk()))``; an exception becomes the entry ``key!error``. Returns the value."""
        try:
            v = thunk()
        except Exception as exc:  # noqa: BLE001 - recorded, compared like any value
            self.set(key + "!error", f"{type(exc).__name__}: {exc}")
            return None
        self.put(key, v if post is None else post(v))
        return v


def args_key(name: str, *args, **kw) -> str:
    """A key naming a call: ``name[arg,arg,k=v]``."""
    parts = [a if isinstance(a, str) else repr(a) for a in args]
    parts += [f"{k}={v if isinstance(v, str) else repr(v)}" for k, v in kw.items()]
    return f"{name}[{','.join(parts)}]"
