"""Controls as data: the sliders, dropdowns and toggles of a dashboard, its view and its spec.

A dashboard is described as data (:class:`DashboardSpec`): a name, its controls (each a small
description: :class:`Slider`, :class:`LogSlider`, :class:`Choice`, :class:`Toggle`) and a *pure*
``view(**values) -> View`` function. Each control knows its allowed values: it samples one at
random (the tests and the benchmark), checks one (:meth:`Slider.check`: a starting value or a loaded
scenario outside the control is a ``ValueError`` naming the control and its range), converts one
read back from text or JSON (:meth:`Slider.coerce`), and lists its neighbours in the order an
arrow key reaches them (:meth:`Slider.neighbours`, used to offer the nearest setting that has a
result). The widgets are built in :mod:`accelbook.ui.dashboard`; nothing here imports ipywidgets.

Where a control's range depends on other controls (tp·cp·pp cannot exceed the chips; a chip without an
FP8 peak cannot train in FP8), the spec says so in :attr:`DashboardSpec.limits`: the dashboard narrows
that control's widget to the values it may take at the others' settings, moves it to the nearest of
them when another control's move leaves it outside (:meth:`DashboardSpec.fit`), and a random setting
(:meth:`DashboardSpec.sample`) draws it within that range, as a student moving the widgets could.
"""

from __future__ import annotations

import itertools
import math
import time
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


#: ``limits(values) -> {control: allowed values}``: see :attr:`DashboardSpec.limits`
Limits = Callable[[Mapping[str, Any]], Mapping[str, Sequence]]


@dataclass(frozen=True)
class DashboardSpec:
    """A dashboard as data: its name, its controls, its pure view.

    ``limits`` (optional): for the controls whose range depends on other controls, ``limits(values)``
    gives the values each may take at the *other* controls' values in ``values`` (a sub-list of its own
    options; its own value is not read). The keys' order is the order in which they give way when a
    move leaves them outside (:meth:`fit`). A limited control is a :class:`LogSlider`, a single
    :class:`Choice` or a :class:`Slider` (whose allowed values are then one run of its grid).
    """

    name: str
    controls: Mapping[str, Control]
    view: Callable[..., View]
    description: str = ""
    limits: Limits | None = None

    def defaults(self) -> dict[str, Any]:
        return {k: c.value for k, c in self.controls.items()}

    def sample(self, rng: np.random.Generator) -> dict[str, Any]:
        """A random setting: each control at random, a limited control within its range at the others'
        values (drawn again at random where the first draw fell outside it; see :meth:`fit`)."""
        values = {k: c.sample(rng) for k, c in self.controls.items()}
        return self.fit(values, rng=rng) if self.limits is not None else values

    def allowed(self, values: Mapping[str, Any]) -> dict[str, list]:
        """The limited controls' allowed values at ``values`` (empty without :attr:`limits`)."""
        return {} if self.limits is None else {k: list(v) for k, v in self.limits(values).items()}

    def fit(self, values: Mapping[str, Any], keep: Sequence[str] = (), rng: np.random.Generator | None = None
            ) -> dict[str, Any]:
        """``values`` with every limited control not in ``keep`` moved inside its range, in the order
        of :attr:`limits`' keys: to the nearest allowed value (an arrow key's order), or with ``rng`` to a
        random one. A move can narrow another control's range, so this runs until nothing moves. Where
        the others leave a control no value at all (tp, cp and pp all too large for the chips), the one
        move that leaves the fewest controls outside (then the most values allowed in all) is made
        first, and the others follow. A control in ``keep`` stays, and so does one that cannot get
        inside (the view then says why there is no result)."""
        v = dict(values)
        if self.limits is None:
            return v
        for _ in range(len(self.controls)):
            v = self._settle(v, keep, rng)
            step = self._best_step(v, keep) if self._outside(v) else None
            if step is None:
                break
            v = step
        return v

    def _outside(self, values: Mapping[str, Any]) -> list[str]:
        return [k for k, ok in self.limits(values).items() if values[k] not in ok]

    def _settle(self, v: dict, keep: Sequence[str], rng) -> dict:
        """Each limited control outside a range that is not empty to its nearest (or a random) allowed value."""
        for _ in range(len(self.controls)):
            moved = False
            for k in self.limits(v):
                ok = list(self.limits(v)[k])
                if k in keep or not ok or v[k] in ok:
                    continue
                v = {**v, k: ok[int(rng.integers(len(ok)))] if rng is not None else _nearest_in(self.controls[k], v[k], ok)}
                moved = True
            if not moved:
                break
        return v

    def _best_step(self, v: dict, keep: Sequence[str]) -> dict | None:
        """The one move of a limited control (not in ``keep``) that leaves the fewest controls outside
        their range, then the most values allowed in all; the first such in give-way and arrow-key order."""
        def score(w):
            lim = self.limits(w)
            return sum(w[k] not in ok for k, ok in lim.items()), -sum(len(ok) for ok in lim.values())

        best, best_score = None, score(v)
        for k in self.limits(v):
            for x in ([] if k in keep else self.controls[k].neighbours(v[k])):
                w = {**v, k: x}
                s = score(w)
                if s < best_score:
                    best, best_score = w, s
        return best

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


def _nearest_in(c: Control, value, ok: Sequence) -> Any:
    """The value of ``ok`` nearest ``value`` along control ``c`` (arrow-key presses), else ``ok[0]``."""
    return next((v for v in c.neighbours(value) if v in ok), ok[0])


def nearest_feasible(spec: DashboardSpec, values: Mapping[str, Any], moved: str | None = None,
                     max_tries: int = 16, max_seconds: float = 1.5) -> dict[str, Any] | None:
    """The nearest setting that renders, as the controls to change (``{"interactive_target": 256}``),
    or None when none is found.

    Tried in order, up to ``max_tries`` renders or ``max_seconds``: where a limited control is outside
    its range (a loaded scenario), every control back inside (:meth:`DashboardSpec.fit`); the control
    just ``moved``, one arrow-key press at a time away from where it is; then every other control one
    press either way, then two (each with the limited controls it pushes out of range moved back in,
    so a suggestion may change more than one control). Then the controls back to their defaults one at
    a time, while time is left, and last, whatever the budget, all of them: the defaults have a result
    (``tests/test_dashboards.py`` renders them), so a dashboard always offers a way back.
    """
    t0 = time.perf_counter()
    pairs: list[tuple[str, Any]] = []
    if moved is not None:
        pairs += [(moved, v) for v in spec.controls[moved].neighbours(values[moved])]
    for depth in (0, 1):
        for k, c in spec.controls.items():
            if k != moved:
                near = c.neighbours(values[k])[2 * depth: 2 * depth + 2]
                pairs += [(k, v) for v in near]
    cands = itertools.chain([spec.fit(values)], (spec.fit({**values, k: v}, keep=(k,)) for k, v in pairs))
    tried = []
    for cand in cands:
        if len(tried) >= max_tries or time.perf_counter() - t0 > max_seconds:
            break
        if not _changes(values, cand) or cand in tried:
            continue
        tried.append(cand)
        if _renders(spec, cand):
            return _changes(values, cand)
    defaults = spec.defaults()
    for k, d in defaults.items():
        if time.perf_counter() - t0 > max_seconds:
            break
        cand = spec.fit({**values, k: d}, keep=(k,)) if values.get(k) != d else None
        if cand is not None and cand not in tried and _renders(spec, cand):
            return _changes(values, cand)
    return _changes(values, defaults) if _changes(values, defaults) and _renders(spec, defaults) else None


def _renders(spec: DashboardSpec, values: Mapping[str, Any]) -> bool:
    try:
        spec.render(**values)
    except Exception:  # noqa: BLE001 - any failure means "not this one"
        return False
    return True


def _changes(old: Mapping[str, Any], new: Mapping[str, Any]) -> dict[str, Any]:
    """The controls whose value differs between two settings, with their new values."""
    return {k: v for k, v in new.items() if old.get(k) != v}
