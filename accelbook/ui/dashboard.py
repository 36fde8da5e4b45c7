"""One dashboard pattern for every notebook: controls -> pure view function -> DataFrame -> chart.

A dashboard is described as data (:class:`DashboardSpec`): a name, its controls (each a small
description: :class:`Slider`, :class:`LogSlider`, :class:`Choice`, :class:`Toggle`) and a *pure*
``view(**values) -> View`` function that calls the model, builds a tidy DataFrame and a chart
(:mod:`accelbook.ui.charts`). The notebooks' dashboards are written on this pattern in
:mod:`accelbook.ui.dashboards`, one module per notebook (``nb01_gpu_vs_tpu.roofline_spec``, ...).
:func:`show` turns a spec into ipywidgets; ``benchmarks/bench_dashboards.py`` samples the same
controls at random and times the same view, with no widgets involved.

Errors: a ``ValueError`` (the library's way of saying "this input is invalid") is shown as a
readable message under the controls and the previous chart stays; any other exception is shown
too, marked as a bug, and the dashboard keeps working.

Charts are drawn to SVG here, in the kernel, by vl-convert (offline; no CDN, no JupyterLab Vega
extension), and shown in an HTML widget, so the same output works in JupyterLab, Voila, nbval and
a headless browser.
"""

from __future__ import annotations

import html
import math
import time
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np
import pandas as pd


# -- controls as data ---------------------------------------------------------------------------
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
        n = int(round((self.max - self.min) / self.step))
        v = self.min + self.step * int(rng.integers(0, n + 1))
        return int(v) if self.is_int else float(v)


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


@dataclass(frozen=True)
class Toggle:
    label: str
    value: bool
    help: str = ""

    def sample(self, rng: np.random.Generator):
        return bool(rng.integers(0, 2))


Control = Slider | LogSlider | Choice | Toggle


@dataclass(frozen=True)
class View:
    """What a view function returns.

    ``data`` is the tidy frame the chart draws (checked: no NaN or inf may reach a chart);
    ``table`` an optional frame for people to read (may have blanks for unpublished values);
    ``summary`` Markdown shown under the chart.
    """

    data: pd.DataFrame
    chart: Any = None  # a charts.Figure (or an Altair chart)
    summary: str = ""
    table: pd.DataFrame | None = None


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

    def render(self, **values) -> View:
        """Call the view with defaults for any control not given; check it for NaNs."""
        v = self.defaults()
        unknown = set(values) - set(v)
        if unknown:
            raise ValueError(f"{self.name}: unknown control(s) {sorted(unknown)}; have {sorted(v)}")
        v.update(values)
        view = self.view(**v)
        check_finite(view.data, self.name)
        return view


def check_finite(df: pd.DataFrame, where: str = "chart data") -> None:
    """Raise if a numeric column holds NaN or inf: a chart must never silently drop points."""
    num = df.select_dtypes(include=[np.number])
    if num.size and not np.isfinite(num.to_numpy(dtype=float)).all():
        cols = [c for c in num.columns if not np.isfinite(num[c].to_numpy(dtype=float)).all()]
        raise FloatingPointError(f"{where}: non-finite values in column(s) {cols}")


# -- rendering ----------------------------------------------------------------------------------
def chart_to_svg(chart) -> str:
    """Draw a :class:`~accelbook.ui.charts.Figure` (or an Altair chart) to an SVG string, offline."""
    if hasattr(chart, "to_svg"):
        return chart.to_svg()
    import vl_convert as vlc

    from .charts import vl_version

    return vlc.vegalite_to_svg(chart.to_dict(), vl_version=vl_version())


def message_html(text: str, kind: str = "error") -> str:
    colour = {"error": "#b00020", "bug": "#6a1b9a", "info": "#1b5e20"}[kind]
    return (f'<div class="accelbook-message accelbook-{kind}" style="border-left:4px solid {colour};'
            f'padding:4px 8px;margin:4px 0;color:{colour};white-space:pre-wrap">{html.escape(text)}</div>')


def _format_error(exc: BaseException) -> tuple[str, str]:
    if isinstance(exc, (ValueError, KeyError, FloatingPointError)):
        msg = exc.args[0] if exc.args and isinstance(exc.args[0], str) else str(exc)
        return f"Cannot compute this combination: {msg}", "error"
    return (f"Unexpected error ({type(exc).__name__}: {exc}). This is a bug in accelbook; "
            f"please report it with the slider values. The dashboard still works.", "bug")


class Dashboard:
    """The widgets for a :class:`DashboardSpec`. ``Dashboard(spec).widget`` is what a notebook shows.

    ``renderer="browser"`` (default) sends the Vega-Lite spec to the page, where Vega draws it in
    a few ms (Altair's JupyterChart, its JavaScript bundled offline once per kernel);
    ``renderer="svg"`` draws the chart in the kernel with vl-convert (100-600 ms a chart, but
    needs no JavaScript: for static exports and plain HTML). Without ``anywidget`` installed,
    "browser" falls back to "svg".
    """

    def __init__(self, spec: DashboardSpec, renderer: str | None = None, **initial):
        import os

        import ipywidgets as W

        if renderer is None:  # ACCELBOOK_RENDERER=svg for kernel-side drawing everywhere
            renderer = os.environ.get("ACCELBOOK_RENDERER", "browser")

        if renderer not in ("browser", "svg"):
            raise ValueError(f"renderer must be 'browser' or 'svg', got {renderer!r}")
        if renderer == "browser" and not _browser_charts_available():
            renderer = "svg"
        self.renderer = renderer
        self.spec = spec
        self.values = spec.defaults()
        self.values.update(initial)
        self.controls = {k: _make_widget(c, self.values[k]) for k, c in spec.controls.items()}
        if renderer == "browser":
            self.chart = _jupyter_chart().add_class("accelbook-chart")
        else:
            self.chart = W.HTML(value="").add_class("accelbook-chart")
        self.message = W.HTML(value="").add_class("accelbook-status")
        self.summary = W.HTML(value="").add_class("accelbook-summary")
        self.table = W.HTML(value="").add_class("accelbook-table")
        self.last_view: View | None = None
        self.last_error: str | None = None
        self.last_update_s: float | None = None
        for k, w in self.controls.items():
            w.observe(lambda change, key=k: self._on_change(key, change["new"]), names="value")
        box = W.GridBox(list(self.controls.values()),
                        layout=W.Layout(grid_template_columns="repeat(auto-fill, minmax(320px, 1fr))"))
        self.widget = W.VBox([box, self.message, self.chart, self.summary, self.table]).add_class("accelbook-dashboard")
        self.update()

    @property
    def chart_spec(self) -> dict | None:
        """The Vega-Lite spec now on screen (None before the first successful update)."""
        return None if self.last_view is None or self.last_view.chart is None else self.last_view.chart.to_dict()

    def _on_change(self, key: str, new: Any) -> None:
        c = self.spec.controls[key]
        self.values[key] = tuple(new) if isinstance(c, Choice) and c.multi else new
        self.update()

    def set(self, **values) -> None:
        """Set controls programmatically (as a user moving sliders would)."""
        for k, v in values.items():
            if k not in self.controls:
                raise ValueError(f"unknown control {k!r}; have {sorted(self.controls)}")
            self.controls[k].value = v  # fires _on_change

    def update(self) -> None:
        t0 = time.perf_counter()
        try:
            view = self.spec.render(**self.values)
            spec = view.chart.to_dict() if view.chart is not None else None
            svg = chart_to_svg(view.chart) if (self.renderer == "svg" and spec is not None) else ""
        except Exception as exc:  # noqa: BLE001 - every failure is shown, none escapes the widget
            text, kind = _format_error(exc)
            self.last_error = text
            self.message.value = message_html(text, kind)
            return
        self.last_error = None
        self.last_view = view
        self.message.value = ""
        if self.renderer == "svg":
            self.chart.value = f'<div class="accelbook-svg">{svg}</div>'
        elif spec is not None:
            self.chart.spec = spec
        self.summary.value = _markdown(view.summary)
        self.table.value = table_html(view.table) if view.table is not None else ""
        self.last_update_s = time.perf_counter() - t0

    def _ipython_display_(self):  # so a bare ``Dashboard(spec)`` at the end of a cell shows itself
        from IPython.display import display

        display(self.widget)


def table_html(df: pd.DataFrame) -> str:
    """A DataFrame as a compact HTML table: 4 significant digits, '—' for unpublished values."""
    return df.to_html(index=False, na_rep="—", float_format=lambda x: f"{x:,.4g}", border=0,
                      classes="accelbook-df")


def _browser_charts_available() -> bool:
    import importlib.util

    return importlib.util.find_spec("anywidget") is not None


_OFFLINE_DONE = False


def _jupyter_chart():
    """An empty Altair JupyterChart whose JavaScript is bundled locally (no CDN), once per kernel."""
    import altair as alt

    global _OFFLINE_DONE
    if not _OFFLINE_DONE:
        alt.JupyterChart.enable_offline()
        _OFFLINE_DONE = True
    placeholder = alt.Chart(pd.DataFrame({"x": [0]})).mark_point(opacity=0)
    return alt.JupyterChart(placeholder, embed_options={"renderer": "svg", "actions": False})


def _markdown(text: str) -> str:
    if not text:
        return ""
    try:
        import markdown  # optional nicety

        return markdown.markdown(text, extensions=["tables"])
    except ImportError:
        return "<br>".join(html.escape(line) for line in text.splitlines())


def _make_widget(c: Control, value):
    import ipywidgets as W

    style = {"description_width": "150px"}
    layout = W.Layout(width="95%")
    common = dict(description=c.label, style=style, layout=layout, continuous_update=False)
    if isinstance(c, Slider):
        cls = W.IntSlider if c.is_int else W.FloatSlider
        w = cls(min=c.min, max=c.max, step=c.step, value=value, **common)
    elif isinstance(c, LogSlider):
        w = W.SelectionSlider(options=c.options, value=value, **common)
    elif isinstance(c, Choice):
        common.pop("continuous_update")
        if c.multi:  # a list of long names: give it two grid columns
            common["layout"] = W.Layout(width="95%", grid_column="span 2")
            w = W.SelectMultiple(options=list(c.options), value=tuple(value), rows=min(8, len(c.options)), **common)
        else:
            w = W.Dropdown(options=list(c.options), value=value, **common)
    elif isinstance(c, Toggle):
        common.pop("continuous_update")
        w = W.Checkbox(value=value, indent=False, **common)
    else:  # pragma: no cover
        raise TypeError(c)
    if c.help:
        w.tooltip = c.help
    return w


def show(spec: DashboardSpec, **initial) -> Dashboard:
    """Build and display the dashboard; returns it so a notebook can read ``last_view``."""
    from IPython.display import display

    d = Dashboard(spec, **initial)
    display(d.widget)
    return d


def time_views(spec: DashboardSpec, n: int = 100, seed: int = 0, svg: bool = False) -> np.ndarray:
    """Seconds per update over ``n`` random control settings: view + chart spec (``to_dict``).

    With ``svg=True`` the SVG drawing is timed too. Invalid combinations count (they are timed
    up to the error, as a user would wait for the message).
    """
    rng = np.random.default_rng(seed)
    times = []
    for _ in range(n):
        values = spec.sample(rng)
        t0 = time.perf_counter()
        try:
            view = spec.render(**values)
            if view.chart is not None:
                view.chart.to_dict()
                if svg:
                    chart_to_svg(view.chart)
        except (ValueError, KeyError, FloatingPointError):
            pass
        times.append(time.perf_counter() - t0)
    return np.asarray(times)


def fmt_si(x: float, unit: str = "", digits: int = 3) -> str:
    """``fmt_si(2.765e12, 'B/s') -> '2.77 TB/s'``."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "n/a"
    prefixes = [(1e18, "E"), (1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"), (1, ""),
                (1e-3, "m"), (1e-6, "µ"), (1e-9, "n")]
    ax = abs(x)
    for f, p in prefixes:
        if ax >= f:
            return f"{x / f:.{digits}g} {p}{unit}".strip()
    return f"{x:.{digits}g} {unit}".strip()
