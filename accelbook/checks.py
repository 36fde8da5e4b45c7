"""Argument checks shared by every public function: one message per kind of mistake.

Each check takes the argument's *name* first, so the error names it::

    whole("n_chips", 0)            ValueError: n_chips must be a whole number >= 1, got 0
    real("utilisation", 1.5, hi=1) ValueError: utilisation must be a number in [0.0, 1], got 1.5
    one_of("phase", "train", PHASES)

:func:`integral` is :func:`whole` that also takes a whole float (``8.0``, a grid's column of floats) and
never truncates ``1.5``; :func:`flag` takes only ``True`` or ``False``.

Booleans are refused where a number is expected (``True`` is an ``int`` to Python, never a chip
count to a user). NumPy integers and floats are accepted like Python's.

:func:`at_most` caps a size at a documented limit, far past any real system, that keeps products
of the arguments exact and finite (``n_chips must be at most 16,777,216 (accelbook.inference.estimate.MAX_CHIPS)``).

Three more kinds of check sit at a function's edges: :func:`instance` (an object of the right type,
or a catalogue name resolved to one), :func:`within_budget` (work or memory estimated before a loop
or an allocation, refused past a documented limit) and :func:`output` (a result checked on the way
out: no NaN, no infinity, no negative time or memory), with :func:`output_fields` for a whole result
(a dataclass or dict: every number in it, utilisations and probabilities at most 1).
"""

from __future__ import annotations

import dataclasses
import functools
import math
import numbers
from typing import Any, Callable, Iterable

import numpy as np

__all__ = ["whole", "integral", "flag", "real", "positive", "fraction", "one_of", "positive_array", "instance", "within_budget",
           "output", "output_fields", "at_most"]


def whole(name: str, v: Any, lo: int = 1) -> int:
    """``v`` as an ``int`` if it is a whole number ``>= lo``; else a ``ValueError`` naming ``name``."""
    if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < lo:
        raise ValueError(f"{name} must be a whole number >= {lo}, got {v!r}")
    return int(v)


def integral(name: str, v: Any, lo: int = 1) -> int:
    """:func:`whole`, also of a whole number written as a float (``8.0``: a grid's or a table's column of
    floats); ``1.5``, NaN or text is a ``ValueError`` naming ``name``, never truncated by ``int()``."""
    if isinstance(v, (float, np.floating)) and math.isfinite(v) and float(v).is_integer():
        v = int(v)
    return whole(name, v, lo)


def flag(name: str, v: Any) -> bool:
    """``v`` if it is ``True`` or ``False`` (a NumPy boolean too); else a ``TypeError`` naming ``name``:
    ``"yes"``, 1 or ``None`` are not a choice a user meant."""
    if not isinstance(v, (bool, np.bool_)):
        raise TypeError(f"{name} must be True or False, got {type(v).__name__} {v!r}"[:200])
    return bool(v)


def at_most(name: str, v: Any, hi: float, where: str) -> Any:
    """``v`` if ``v <= hi``; else a ``ValueError`` naming ``name``, the limit and ``where`` it is set
    (a bound far past any real system, so that products of the arguments stay exact floats)."""
    if not v <= hi:
        raise ValueError(f"{name} must be at most {hi:,} ({where}), got {v:,}")
    return v


def real(name: str, v: Any, lo: float = 0.0, hi: float = math.inf, lo_open: bool = False,
         allow_inf: bool = False) -> float:
    """``v`` as a ``float`` if it is a number in ``[lo, hi]`` (``(lo, hi]`` with ``lo_open``).

    NaN is always refused; infinity only with ``allow_inf`` (a rate of ``inf``: "all at once").
    """
    ok = (not isinstance(v, bool) and isinstance(v, numbers.Real) and not math.isnan(v)
          and (allow_inf or math.isfinite(v)) and lo <= v <= hi and not (lo_open and v == lo))
    if not ok:
        rng = f"({lo}, {hi}]" if lo_open else f"[{lo}, {hi}]"
        raise ValueError(f"{name} must be a number in {rng}, got {v!r}")
    return float(v)


def reals(name: str, v: Any, lo: float = 0.0, hi: float = math.inf) -> Any:
    """:func:`real` of a number, or of every element of a NumPy array (returned as it is): a sweep's
    arrays of batches or tokens are checked once, not element by element."""
    if type(v) is not np.ndarray:
        return real(name, v, lo, hi)
    ok = (v.dtype.kind in "iuf") & np.isfinite(v) & (v >= lo) & (v <= hi) if v.dtype.kind in "iuf" else None
    if ok is None or not ok.all():
        bad = v.ravel()[:3] if ok is None else v[~ok].ravel()[:3]
        raise ValueError(f"{name} must be numbers in [{lo}, {hi}], got {', '.join(repr(x) for x in bad.tolist())}")
    return v


def wholes(name: str, v: Any, lo: int = 1) -> Any:
    """:func:`whole` of a number, or of every element of an integer NumPy array (returned as it is)."""
    if type(v) is not np.ndarray:
        return whole(name, v, lo)
    if v.dtype.kind not in "iu" or not (v >= lo).all():
        raise ValueError(f"{name} must be whole numbers >= {lo}, got {v.ravel()[:3].tolist()!r}")
    return v


def positive(name: str, v: Any, allow_zero: bool = False) -> float:
    """``v`` as a ``float`` if finite and ``> 0`` (``>= 0`` with ``allow_zero``)."""
    if isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(v) or v < 0 \
            or (v == 0 and not allow_zero):
        raise ValueError(f"{name} must be a finite number {'>= 0' if allow_zero else '> 0'}, got {v!r}")
    return float(v)


def fraction(name: str, v: Any, zero_ok: bool = True) -> float:
    """``v`` as a ``float`` in ``[0, 1]`` (``(0, 1]`` when ``zero_ok`` is false)."""
    if isinstance(v, bool) or not isinstance(v, numbers.Real) or not math.isfinite(v) \
            or not (0 <= v <= 1) or (v == 0 and not zero_ok):
        raise ValueError(f"{name} must be a fraction in {'[0, 1]' if zero_ok else '(0, 1]'}, got {v!r}")
    return float(v)


def one_of(name: str, v: Any, options: Iterable[Any]) -> Any:
    """``v`` if it is one of ``options``; else a ``ValueError`` listing them."""
    options = tuple(options)
    try:
        ok = v in options
    except TypeError:  # unhashable or incomparable
        ok = False
    if not ok:
        raise ValueError(f"{name} must be one of {options}, got {v!r}")
    return v


def positive_array(name: str, value: Any, allow_zero: bool = False) -> np.ndarray:
    """``value`` as a float array whose every element is finite and ``> 0`` (``>= 0``)."""
    try:
        raw = np.asarray(value)
        if raw.dtype.kind in "USb" or (raw.dtype.kind == "O" and any(isinstance(x, (str, bytes, bool))
                                                                     for x in raw.ravel())):
            raise TypeError("text or booleans are not numbers")   # np.asarray("1e9", dtype=float) would parse
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be numbers {'>= 0' if allow_zero else '> 0'}, got {value!r}"[:300]) from None
    bad = ~np.isfinite(arr) | ((arr < 0) if allow_zero else (arr <= 0))
    if np.any(bad):
        raise ValueError(f"{name} must be {'>= 0' if allow_zero else '> 0'} and finite, got {value!r}")
    return arr


def instance(name: str, v: Any, cls: type | tuple[type, ...], resolve: Callable[[str], Any] | None = None) -> Any:
    """``v`` if it is a ``cls``; a string resolved with ``resolve`` (a catalogue look-up such as
    ``get_chip``) when given, an unknown name's error then led by the argument's name (``draft: unknown
    model 'llama-9'; closest: ...``); else a ``TypeError`` naming ``name`` and what is accepted."""
    if isinstance(v, cls):
        return v
    if resolve is not None and isinstance(v, str):
        try:
            return resolve(v)
        except KeyError as err:       # the catalogue's UnknownNameError (a KeyError and a ValueError)
            msg = str(err.args[0]) if err.args else str(err)
            if msg.startswith(f"{name}: "):
                raise
            raise type(err)(f"{name}: {msg}") from None
    names = " or ".join(c.__name__ for c in (cls if isinstance(cls, tuple) else (cls,)))
    raise TypeError(f"{name} must be a {names}" + (" or its name" if resolve is not None else "")
                    + f", got {type(v).__name__} {v!r}"[:200])


def within_budget(what: str, estimate: float, limit: float, unit: str, where: str) -> None:
    """A ``ValueError`` when ``estimate`` (the work or memory ``what`` would take, in ``unit``) exceeds
    ``limit``; the message gives both and ``where`` the limit is set, so a user can change it."""
    if not estimate <= limit:
        raise ValueError(f"{what} would take about {estimate:.3g} {unit}, past the limit of {limit:.3g} {unit} "
                         f"({where})")


def output(what: str, v: Any, lo: float = 0.0, hi: float = math.inf) -> Any:
    """``v`` (a number or an array) if every element is finite and in ``[lo, hi]``; else a
    ``ValueError`` saying which result of which function is impossible (a model bug or inputs at
    the edge of float range), never a silent NaN or a negative time."""
    if type(v) is float and lo <= v <= hi and v - v == 0:      # a plain number in range (the common case)
        return v
    arr = np.asarray(v, dtype=float)
    if not (np.all(np.isfinite(arr)) and np.all(arr >= lo) and np.all(arr <= hi)):
        bad = arr[~(np.isfinite(arr) & (arr >= lo) & (arr <= hi))].ravel()[:3]
        raise ValueError(f"{what} came out as {', '.join(f'{x:g}' for x in bad)}, outside [{lo:g}, {hi:g}]: "
                         "the inputs are outside what the model can represent")
    return v


def _numbers(prefix: str, v: Any):
    """(name, value) of every number inside ``v``: a number, a dataclass's fields, a dict's values, a
    tuple's items or an array, descending; text, booleans and ``None`` (a quantity not known) are skipped."""
    if v is None or isinstance(v, (bool, str, bytes, np.bool_)):
        return
    if isinstance(v, numbers.Real):
        yield prefix, float(v)
    elif dataclasses.is_dataclass(v) and not isinstance(v, type):
        for f in dataclasses.fields(v):
            yield from _numbers(f"{prefix}.{f.name}" if prefix else f.name, getattr(v, f.name))
    elif isinstance(v, dict):
        for k, x in v.items():
            yield from _numbers(f"{prefix}[{k!r}]" if prefix else str(k), x)
    elif isinstance(v, (tuple, list)):
        for i, x in enumerate(v):
            yield from _numbers(f"{prefix}[{i}]", x)
    elif isinstance(v, np.ndarray) and v.dtype.kind in "iuf" and v.size:
        a = v.astype(float, copy=False).ravel()
        fin, inf, nan = a[np.isfinite(a)], a[np.isinf(a)], a[np.isnan(a)]
        yield from ((prefix, float(x)) for x in (*inf[:1], *nan[:1], *((fin.min(), fin.max()) if fin.size else ())))
    elif hasattr(v, "columns") and hasattr(v, "select_dtypes"):          # a pandas DataFrame: its number columns
        for c in v.select_dtypes("number").columns:
            yield from _numbers(f"{prefix}[{c!r}]", v[c].to_numpy(dtype=float))


_SKIPPED = (bool, str, bytes, np.bool_, type(None))


@functools.lru_cache(maxsize=256)
def _field_names(cls: type) -> tuple[str, ...]:
    return tuple(f.name for f in dataclasses.fields(cls))


def _number_ok(x: float, leaf: str, fractions: set, signed: set, missing_ok: bool) -> bool:
    if x != x:                                   # NaN
        return missing_ok
    return x - x == 0 and (x >= 0 or leaf in signed) and (x <= 1.0 or leaf not in fractions)


def _all_ok(v: Any, leaf: str, fractions: set, signed: set, missing_ok: bool) -> bool:
    """True when every number inside ``v`` passes :func:`output_fields`' test (``leaf``: the name of the
    field, key or item that holds ``v``, as :func:`_numbers` names it); walks ``v`` as :func:`_numbers` does,
    without building names, plain numbers checked in the loop. False sends :func:`output_fields` to the named
    walk, which decides."""
    t = type(v)
    if t is float or t is int or t is np.float64 or t is np.int64:
        return _number_ok(float(v), leaf, fractions, signed, missing_ok)
    if t in _SKIPPED:
        return True
    if t is dict:
        items = ((k if type(k) is str else str(k), x) for k, x in v.items())
    elif t is tuple or t is list:
        items = ((str(i), x) for i, x in enumerate(v))
    elif dataclasses.is_dataclass(v) and not isinstance(v, type):
        items = ((n, getattr(v, n)) for n in _field_names(t))
    else:
        return False     # other numbers, arrays, tables: the named walk decides
    for name, x in items:
        tx = type(x)
        if tx is float or tx is int:
            if not _number_ok(x, name, fractions, signed, missing_ok):
                return False
        elif tx not in _SKIPPED and not _all_ok(x, name, fractions, signed, missing_ok):
            return False
    return True


def output_fields(where: str, result: Any, fractions: Iterable[str] = (), signed: Iterable[str] = (),
                  missing_ok: bool = False) -> Any:
    """``result`` (a dataclass, a dict, a number) if every number in it is finite and ``>= 0``, and those
    whose last name is in ``fractions`` (utilisations, probabilities, shares) also ``<= 1``; names in
    ``signed`` may be negative (a difference, an error); with ``missing_ok`` a NaN is a missing value (a
    table's row that says why it has none). Else a ``ValueError`` naming the function
    ``where`` and the quantity: an impossible result never leaves a public function silently::

        output_fields("inference.estimate", e, fractions={"memory_share"})
        ValueError: inference.estimate returned tpot_s = nan, ...
    """
    fractions, signed = set(fractions), set(signed)
    if _all_ok(result, "", fractions, signed, missing_ok):      # the fast path: no names built
        return result
    for name, x in _numbers("", result):
        if missing_ok and math.isnan(x):
            continue
        leaf = name.rsplit(".", 1)[-1].split("[")[-1].strip("'\"]")
        hi = 1.0 if leaf in fractions else math.inf
        if not (math.isfinite(x) and (leaf in signed or x >= 0) and x <= hi):
            allowed = "a finite number" + ("" if leaf in signed else f" in [0, {hi:g}]")
            raise ValueError(f"{where} returned {name or 'its result'} = {x:g}, not {allowed}: the inputs are "
                             "outside what the model can represent (or a model bug; please report it)")
    return result
