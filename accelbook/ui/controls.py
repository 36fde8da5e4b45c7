"""Controls as data: the sliders, dropdowns and toggles of a dashboard, its view and its spec.

A dashboard is described as data (:class:`DashboardSpec`): a name, its controls (each a small
description: :class:`Slider`, :class:`LogSlider`, :class:`Choice`, :class:`Toggle`) and a *pure*
``view(**values) -> View`` function. Each control knows its allowed values: it samples one at
random (the tests and the benchmark), checks one (:meth:`Slider.check`: a starting value or a loaded
scenario outside the control is a ``ValueError`` naming the control and its range), converts one
read back from text or JSON (:meth:`Slider.coerce`), and lists its neighbours in the order an
arrow key reaches them (:meth:`Slider.neighbours`, used to offer the nearest setting that has a
result). The widgets are built in :mod:`accelbook.ui.dashboard`; nothing here imports ipywidgets.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd


def _steps(lo: float, hi: float, step: float) -> int:
    return int(round((hi - lo) / step))


@dataclass(frozen=True)
class Slider:
    """A numeric slider. Integer if ``min``, ``max`` and ``step`` are all ints."""

    label: str
    min: float
    max: float
    step: float
    value: float
    help: str = ""

    @property
    def is_int(self) -> bool:
        return all(isinstance(v, int) and not isinstance(v, bool) for v in (self.min, self.max, self.step))

    def sample(self, rng: np.random.Generator):
        v = self.min + self.step * int(rng.integers(0, _steps(self.min, self.max, self.step) + 1))
        return int(v) if self.is_int else float(v)

    def allowed(self) -> str:
        return f"a number from {self.min:g} to {self.max:g} in steps of {self.step:g}"

    def check(self, value) -> None:
        if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
            raise TypeError(f"{self.label!r}: {value!r} is not a number; allowed: {self.allowed()}")
        if not math.isfinite(value) or not self.min - 1e-9 * abs(self.step) <= value <= self.max + 1e-9 * abs(self.step):
            raise ValueError(f"{self.label!r} = {value!r} is outside its range: {self.allowed()}")
        if self.is_int and value != int(value):
            raise ValueError(f"{self.label!r} = {value!r} is not a whole number; allowed: {self.allowed()}")

    def coerce(self, value):
        """A value read back from text or JSON, as the slider holds it (int or float)."""
        v = float(value) if isinstance(value, str) else value
        return int(v) if self.is_int and float(v).is_integer() else (v if self.is_int else float(v))

    def neighbours(self, value) -> list:
        """The grid's values, nearest first: what the arrow keys reach after 1, 2, ... presses."""
        n = _steps(self.min, self.max, self.step)
        i = min(max(_steps(self.min, value, self.step), 0), n)
        out = []
        for d in range(1, n + 1):
            for j in (i - d, i + d):
                if 0 <= j <= n:
                    v = self.min + self.step * j
                    out.append(int(v) if self.is_int else round(float(v), 12))
        return out


@dataclass(frozen=True)
class LogSlider:
    """A slider over powers of ``base`` (batch sizes, sequence lengths): value = base**exponent."""

    label: str
    min_exp: int
    max_exp: int
    value: int | float
    base: int = 2
    help: str = ""

    @property
    def options(self) -> list[int]:
        return [self.base**e for e in range(self.min_exp, self.max_exp + 1)]

    def sample(self, rng: np.random.Generator):
        return self.options[int(rng.integers(0, len(self.options)))]

    def allowed(self) -> str:
        o = self.options
        return f"a power of {self.base} from {o[0]:g} to {o[-1]:g}"

    def check(self, value) -> None:
        if value not in self.options:
            raise ValueError(f"{self.label!r} = {value!r} is not one of its values: {self.allowed()}")

    def coerce(self, value):
        v = float(value) if isinstance(value, str) else value
        return next((o for o in self.options if o == v), v)

    def neighbours(self, value) -> list:
        return _by_distance(self.options, value)


@dataclass(frozen=True)
class Choice:
    """A dropdown (``multi=False``) or a multi-select list (``multi=True``) of options."""

    label: str
    options: Sequence[Any]
    value: Any
    multi: bool = False
    help: str = ""

    @property
    def values(self) -> list[Any]:
        """Option values; an option may be a (label, value) pair, as in ipywidgets."""
        return [o[1] if isinstance(o, tuple) else o for o in self.options]

    def sample(self, rng: np.random.Generator):
        opts = self.values
        if not self.multi:
            return opts[int(rng.integers(0, len(opts)))]
        k = int(rng.integers(1, len(opts) + 1))
        return tuple(opts[i] for i in sorted(rng.choice(len(opts), size=k, replace=False)))

    def allowed(self) -> str:
        opts = ", ".join(repr(v) for v in self.values)
        return ("any of " if self.multi else "one of ") + opts

    def check(self, value) -> None:
        if self.multi:
            if isinstance(value, (str, bytes)) or not isinstance(value, (tuple, list)):
                raise TypeError(f"{self.label!r}: {value!r} is not a list of options; allowed: {self.allowed()}")
            bad = [v for v in value if v not in self.values]
            if bad:
                raise ValueError(f"{self.label!r}: {bad!r} not among its options; allowed: {self.allowed()}")
        elif value not in self.values:
            raise ValueError(f"{self.label!r} = {value!r} is not one of its options; allowed: {self.allowed()}")

    def coerce(self, value):
        def one(v):  # an option from its text ("256" -> 256) when read back from a string
            return next((o for o in self.values if o == v or str(o) == str(v)), v)

        return tuple(one(v) for v in value) if self.multi else one(value)

    def neighbours(self, value) -> list:
        if self.multi:  # an empty or odd selection: its default is the nearest that works
            return [] if tuple(value) == tuple(self.value) else [tuple(self.value)]
        return _by_distance(self.values, value)


@dataclass(frozen=True)
class Toggle:
    label: str
    value: bool
    help: str = ""

    def sample(self, rng: np.random.Generator):
        return bool(rng.integers(0, 2))

    def allowed(self) -> str:
        return "True or False"

    def check(self, value) -> None:
        if not isinstance(value, (bool, np.bool_)):
            raise TypeError(f"{self.label!r} = {value!r} is not True or False")

    def coerce(self, value):
        if isinstance(value, str):
            return value.strip().lower() in ("1", "true", "yes", "on")
        return bool(value)

    def neighbours(self, value) -> list:
        return [not value]


Control = Slider | LogSlider | Choice | Toggle


def _by_distance(options: Sequence, value) -> list:
    """``options`` ordered by their distance in position from ``value`` (the nearer side first on a tie)."""
    try:
        i = list(options).index(value)
    except ValueError:
        return list(options)
    out = []
    for d in range(1, len(options)):
        out += [options[j] for j in (i - d, i + d) if 0 <= j < len(options)]
    return out


@dataclass(frozen=True)
class View:
    """What a view function returns.

    ``data`` is the tidy frame the chart draws (checked: no NaN or inf may reach a chart);
    ``table`` an optional frame for people to read (may have blanks for unpublished values);
    ``summary`` Markdown shown under the chart; ``inputs`` the control values it was computed from
    (filled in by :meth:`DashboardSpec.render`, so a dashboard can prove its chart is current).
    """

    data: pd.DataFrame
    chart: Any = None  # a charts.Figure (or an Altair chart)
    summary: str = ""
    table: pd.DataFrame | None = None
    inputs: Mapping[str, Any] | None = None


@dataclass(frozen=True)
class DashboardSpec:
    name: str
    controls: Mapping[str, Control]
    view: Callable[..., View]
    description: str = ""

    def defaults(self) -> dict[str, Any]:
        return {k: c.value for k, c in self.controls.items()}

    def sample(self, rng: np.random.Generator) -> dict[str, Any]:
        return {k: c.sample(rng) for k, c in self.controls.items()}

    def check(self, values: Mapping[str, Any]) -> dict[str, Any]:
        """``values`` checked against the controls; a ``ValueError`` (or ``TypeError``) names the
        control, the value and what it allows. Multi-choice values come back as tuples."""
        unknown = set(values) - set(self.controls)
        if unknown:
            raise ValueError(f"{self.name}: unknown control(s) {sorted(unknown)}; have {sorted(self.controls)}")
        out = {}
        for k, v in values.items():
            c = self.controls[k]
            try:
                c.check(v)
            except (ValueError, TypeError) as exc:
                raise type(exc)(f"{self.name}, control {k!r}: {exc}") from None
            out[k] = tuple(v) if isinstance(c, Choice) and c.multi else v
        return out

    def render(self, **values) -> View:
        """Call the view with defaults for any control not given; check it for NaNs; record its inputs."""
        v = self.defaults()
        unknown = set(values) - set(v)
        if unknown:
            raise ValueError(f"{self.name}: unknown control(s) {sorted(unknown)}; have {sorted(v)}")
        v.update(values)
        view = self.view(**v)
        check_finite(view.data, self.name)
        return replace(view, inputs=v)


def check_finite(df: pd.DataFrame, where: str = "chart data") -> None:
    """Raise if a numeric column holds NaN or inf: a chart must never silently drop points."""
    num = df.select_dtypes(include=[np.number])
    if num.size and not np.isfinite(num.to_numpy(dtype=float)).all():
        cols = [c for c in num.columns if not np.isfinite(num[c].to_numpy(dtype=float)).all()]
        raise FloatingPointError(f"{where}: non-finite values in column(s) {cols}")


def nearest_feasible(spec: DashboardSpec, values: Mapping[str, Any], moved: str | None = None,
                     max_tries: int = 16, max_seconds: float = 1.5) -> dict[str, Any] | None:
    """The nearest setting that renders, as the controls to change (``{"interactive_target": 256}``),
    or None when none is found within ``max_tries`` renders or ``max_seconds``.

    Tried in order: the control just ``moved``, one arrow-key press at a time away from where it
    is; then every other control one press either way, then two.
    """
    import time

    t0 = time.perf_counter()
    cands: list[tuple[str, Any]] = []
    if moved is not None:
        cands += [(moved, v) for v in spec.controls[moved].neighbours(values[moved])]
    for depth in (0, 1):
        for k, c in spec.controls.items():
            if k != moved:
                near = c.neighbours(values[k])[2 * depth: 2 * depth + 2]
                cands += [(k, v) for v in near]
    for n, (k, v) in enumerate(cands):
        if n >= max_tries or time.perf_counter() - t0 > max_seconds:
            return None
        try:
            spec.render(**{**values, k: v})
        except Exception:  # noqa: BLE001 - any failure means "not this one"
            continue
        return {k: v}
    return None
