"""One dashboard pattern for every notebook: controls -> pure view function -> DataFrame -> chart.

A dashboard is described as data (:class:`DashboardSpec`, in :mod:`accelbook.ui.controls`): a name,
its controls and a *pure* ``view(**values) -> View`` function that calls the model, builds a tidy
DataFrame and a chart (:mod:`accelbook.ui.charts`). The notebooks' dashboards are written on this
pattern in :mod:`accelbook.ui.dashboards`, one module per notebook. :func:`show` turns a spec into
ipywidgets; ``benchmarks/bench_dashboards.py`` samples the same controls and times the same view.

The chart never disagrees with the controls. Every view records the control values it was computed
from (``View.inputs``); where a setting has no result (a ``ValueError``: "this input is invalid"),
the chart, summary and table are replaced by an explicit "no result for these settings" placeholder,
the control just moved says so, and the nearest setting that has a result is offered (a button that
goes there in one click; at worst the defaults). Any other exception is shown too, marked as a bug,
and the dashboard keeps working. A control whose range depends on others (``DashboardSpec.limits``)
offers only the values it may take at the others' settings, and moves with them when they move; the
message line says which control moved that way.

Every dashboard saves and loads its state (:mod:`accelbook.ui.scenario`: a short string in the
"scenario" box, a JSON file) and saves its chart as SVG and PNG at slide resolution, offline.
"""

from __future__ import annotations

import html
import time
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from accelbook.ui.controls import (
    Choice,
    Control,
    DashboardSpec,
    LogSlider,
    Slider,
    Toggle,
    View,
    check_finite,
    nearest_feasible,
)
from accelbook.ui.scenario import Scenario, as_scenario, scenario_of
from accelbook.ui.tables import fmt_si, markdown_html, table_html

__all__ = ["FEASIBLE_SHARE", "Choice", "Control", "Dashboard", "DashboardSpec", "LogSlider", "Scenario", "Slider",
           "Toggle", "View", "chart_to_svg", "check_finite", "compare_scenarios", "feasibility_report",
           "feasible_fraction", "fmt_si", "message_html", "scenario_of", "show", "table_html", "time_views"]

NO_RESULT = "No result for these settings"


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
            f"please report it with the scenario string above. The dashboard still works.", "bug")


def _placeholder_html(text: str) -> str:
    return (f'<div class="accelbook-no-result" style="background:#eee;color:#555;padding:48px 16px;'
            f'text-align:center;width:480px">{html.escape(text)}</div>')


def _describe(spec: DashboardSpec, change: dict[str, Any]) -> str:
    return ", ".join(f"{spec.controls[k].label} = {v if not isinstance(v, tuple) else ', '.join(map(str, v)) or 'none'}"
                     for k, v in change.items())


class Dashboard:
    """The widgets for a :class:`DashboardSpec`. ``Dashboard(spec).widget`` is what a notebook shows.

    ``renderer="browser"`` (default) sends the Vega-Lite spec to the page, where Vega draws it in
    a few ms (Altair's JupyterChart, its JavaScript bundled offline once per kernel);
    ``renderer="svg"`` draws the chart in the kernel with vl-convert (100-600 ms a chart, but
    needs no JavaScript: for static exports and plain HTML). Without ``anywidget`` installed,
    "browser" falls back to "svg". ``scenario`` (a :class:`~accelbook.ui.scenario.Scenario`, its
    string or JSON file) sets every control; ``initial`` sets some (after the scenario). A value
    outside a control's range is a ``ValueError`` naming the control and its range.
    """

    def __init__(self, spec: DashboardSpec, renderer: str | None = None, scenario=None, **initial):
        import os

        if renderer is None:  # ACCELBOOK_RENDERER=svg for kernel-side drawing everywhere
            renderer = os.environ.get("ACCELBOOK_RENDERER", "browser")
        if renderer not in ("browser", "svg"):
            raise ValueError(f"renderer must be 'browser' or 'svg', got {renderer!r}")
        if renderer == "browser" and not _browser_charts_available():
            renderer = "svg"
        self.renderer = renderer
        self.spec = spec
        self.values = spec.defaults()
        if scenario is not None:
            self.values.update(as_scenario(scenario).for_spec(spec))
        given = spec.check(initial)
        self.values.update(given)
        # a scenario is shown as saved; around starting values, the limited controls give way
        start = self.values
        self.values = spec.fit(start, keep=tuple(spec.controls) if scenario is not None else tuple(given))
        #: the controls that moved with the last change to stay within their range (``DashboardSpec.limits``)
        self.adjusted: dict[str, Any] = {k: v for k, v in self.values.items() if v != start[k]}
        self.last_view: View | None = None
        self.last_error: str | None = None
        self.last_error_kind: str | None = None
        self.suggestion: dict[str, Any] | None = None
        self.last_update_s: float | None = None
        self._moved: str | None = None
        self._holding = False
        self._build_widgets()
        self.update()

    def _build_widgets(self) -> None:
        import ipywidgets as W

        width = _label_width(self.spec)
        allowed = self.spec.allowed(self.values)
        self.controls = {k: _make_widget(c, self.values[k], width, allowed.get(k))
                         for k, c in self.spec.controls.items()}
        self.notes = {k: W.HTML(value="", layout=W.Layout(display="none")).add_class("accelbook-control-note")
                      for k in self.controls}
        if self.renderer == "browser":
            self.chart = _jupyter_chart().add_class("accelbook-chart")
        else:
            self.chart = W.HTML(value="").add_class("accelbook-chart")
        self.message = W.HTML(value="").add_class("accelbook-status")
        self.fix = W.Button(description="use nearest setting", layout=W.Layout(display="none", width="auto"))
        self.fix.on_click(lambda _b: self.apply_suggestion())
        self.summary = W.HTML(value="").add_class("accelbook-summary")
        self.table = W.HTML(value="").add_class("accelbook-table")
        for k, w in self.controls.items():
            w.observe(lambda change, key=k: self._on_change(key, change["new"]), names="value")
        cells = [W.VBox([w, self.notes[k]]) for k, w in self.controls.items()]
        box = W.GridBox(cells, layout=W.Layout(grid_template_columns=f"repeat(auto-fill, minmax({width + 190}px, 1fr))"))
        self.toolbar, self.scenario_box = _toolbar(self)
        self.widget = W.VBox([box, self.toolbar, self.message, self.fix, self.chart, self.summary,
                              self.table]).add_class("accelbook-dashboard")

    # -- state -----------------------------------------------------------------------------------
    @property
    def chart_spec(self) -> dict | None:
        """The Vega-Lite spec now on screen (None while the settings have no result)."""
        return None if self.last_view is None or self.last_view.chart is None else self.last_view.chart.to_dict()

    @property
    def scenario(self) -> Scenario:
        """Every control's value now, as a :class:`~accelbook.ui.scenario.Scenario`."""
        return Scenario(self.spec.name, dict(self.values))

    def _on_change(self, key: str, new: Any) -> None:
        if self._holding:  # the dashboard itself is setting the widgets (_apply)
            return
        c = self.spec.controls[key]
        self._apply({key: tuple(new) if isinstance(c, Choice) and c.multi else new}, moved=key)

    def set(self, **values) -> None:
        """Set controls programmatically (as a user moving sliders would), then update once."""
        checked = self.spec.check(values)
        self._apply(checked, moved=next(iter(checked)) if len(checked) == 1 else None)

    def _apply(self, changes: dict[str, Any], moved: str | None) -> None:
        """Take ``changes``; move the limited controls they push out of range back in (the changed
        ones stay); set every widget (its range too) to the values; update once."""
        before = self.values
        self.values = self.spec.fit({**before, **changes}, keep=tuple(changes))
        self.adjusted = {k: v for k, v in self.values.items() if k not in changes and v != before[k]}
        self._moved = moved
        allowed = self.spec.allowed(self.values)
        self._holding = True
        try:
            for k, w in self.controls.items():
                if k in allowed:
                    _narrow(w, self.spec.controls[k], allowed[k], self.values[k])
                if _widget_value(w) != self.values[k]:
                    w.value = self.values[k]
        finally:
            self._holding = False
        self.update()

    def load(self, scenario) -> None:
        """Set every control from a scenario (a Scenario, its string, or a JSON file's path)."""
        self.set(**as_scenario(scenario).for_spec(self.spec))

    def apply_suggestion(self) -> None:
        if self.suggestion:
            self.set(**self.suggestion)

    def save_scenario(self, path: str | Path | None = None) -> Path:
        """Write the scenario as JSON (default ``scenario-<dashboard>.json`` here)."""
        return self.scenario.save(path or f"scenario-{_slug(self.spec.name)}.json")

    def save_chart(self, stem: str | Path | None = None, width_px: int = 1920, height_px: int = 1080):
        """Save the chart now on screen as ``<stem>.svg`` and ``<stem>.png`` sized for a slide
        (fits ``width_px`` × ``height_px``), drawn offline by vl-convert. Returns the two paths."""
        from accelbook.ui.charts import save_for_slides

        if self.last_view is None or self.last_view.chart is None:
            raise ValueError(f"{self.spec.name}: no chart for these settings, nothing to save")
        return save_for_slides(self.last_view.chart, stem or f"chart-{_slug(self.spec.name)}", width_px, height_px)

    # -- drawing ---------------------------------------------------------------------------------
    def update(self) -> None:
        t0 = time.perf_counter()
        values = dict(self.values)
        try:
            view = self.spec.render(**values)
            spec = view.chart.to_dict() if view.chart is not None else None
            svg = chart_to_svg(view.chart) if (self.renderer == "svg" and spec is not None) else ""
        except Exception as exc:  # noqa: BLE001 - every failure is shown, none escapes the widget
            self._show_no_result(exc, values)
            return
        self.last_error = self.last_error_kind = self.suggestion = None
        self.last_view = view
        self.message.value = message_html(self._adjusted_words(), "info") if self.adjusted else ""
        if self.fix.layout.display != "none":
            self.fix.layout.display = "none"
        self._note(None, "")
        if self.renderer == "svg":
            self.chart.value = f'<div class="accelbook-svg">{svg}</div>'
        elif spec is not None:
            self.chart.spec = spec
        self.summary.value = markdown_html(view.summary)
        self.table.value = table_html(view.table) if view.table is not None else ""
        self.scenario_box.value = self.scenario.to_string()
        self.last_update_s = time.perf_counter() - t0

    def _adjusted_words(self) -> str:
        return f"Also moved, to stay within its range at these settings: {_describe(self.spec, self.adjusted)}."

    def _show_no_result(self, exc: BaseException, values: dict[str, Any]) -> None:
        text, kind = _format_error(exc)
        if self.adjusted:
            text += "\n" + self._adjusted_words()
        self.last_error, self.last_error_kind, self.last_view = text, kind, None
        self.suggestion = nearest_feasible(self.spec, values, self._moved) if kind == "error" else None
        if self.suggestion:
            text += f"\nNearest setting with a result: {_describe(self.spec, self.suggestion)}."
            self.fix.description = f"use {_describe(self.spec, self.suggestion)}"
        self.fix.layout.display = "" if self.suggestion else "none"
        self.message.value = message_html(text, kind)
        self._note(self._moved, "no result at this value" + (
            f"; nearest: {_describe(self.spec, self.suggestion)}" if self.suggestion else ""))
        placeholder = f"{NO_RESULT} ({_describe(self.spec, {self._moved: values[self._moved]})})" \
            if self._moved else NO_RESULT
        if self.renderer == "svg":
            self.chart.value = _placeholder_html(placeholder)
        else:
            from accelbook.ui.charts import message_figure

            self.chart.spec = message_figure(placeholder).to_dict()
        self.summary.value = ""
        self.table.value = ""
        self.scenario_box.value = self.scenario.to_string()

    def _note(self, key: str | None, text: str) -> None:
        for k, n in self.notes.items():
            want = text if k == key else ""
            if n.value != want:
                n.value = f'<span style="color:#b00020;font-size:90%">⚠ {html.escape(want)}</span>' if want else ""
                n.layout.display = "" if want else "none"

    def _ipython_display_(self):  # so a bare ``Dashboard(spec)`` at the end of a cell shows itself
        from IPython.display import display

        display(self.widget)


def _toolbar(d: Dashboard):
    """The scenario box (the state as a string: copy it, or paste one and press "load") and the
    save buttons; what they did is said in the dashboard's message line."""
    import ipywidgets as W

    box = W.Text(value="", description="scenario", style={"description_width": "70px"},
                 layout=W.Layout(width="60%")).add_class("accelbook-scenario")
    buttons = {"load": d.load, "save scenario": d.save_scenario, "save chart (SVG, PNG)": d.save_chart}

    def run(name):
        try:
            out = buttons[name](box.value) if name == "load" else buttons[name]()
        except Exception as exc:  # noqa: BLE001 - a bad paste is a message, not a traceback
            d.message.value = message_html(f"{name}: {exc}", "error")
            return
        if name != "load":
            paths = out if isinstance(out, tuple) else (out,)
            d.message.value = message_html(f"saved {', '.join(str(p) for p in paths)}", "info")

    row = [box]
    for name in buttons:
        b = W.Button(description=name, layout=W.Layout(width="auto"))
        b.on_click(lambda _b, name=name: run(name))
        row.append(b)
    return W.HBox(row).add_class("accelbook-toolbar"), box


def _slug(name: str) -> str:
    return "-".join(name.split())


def _label_width(spec: DashboardSpec) -> int:
    """Pixels for the controls' labels: the longest label whole (about 7 px a character), 150-230."""
    longest = max((len(c.label) for c in spec.controls.values() if not isinstance(c, Toggle)), default=0)
    return int(min(230, max(150, 7 * longest + 12)))


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


def _widget_value(w):
    return tuple(w.value) if isinstance(w.value, (tuple, list)) else w.value


def _option_value(o):
    return o[1] if isinstance(o, tuple) else o


def _within(c: Control, allowed: list | None, value) -> Any:
    """What a widget of control ``c`` offers: its options narrowed to ``allowed`` (and the value it
    holds, should that be outside: a loaded scenario is shown as saved), or for a slider (min, max).
    Where the others leave it no value at all, all of its own, so that it can still be moved."""
    if isinstance(c, Slider):
        return (c.min, c.max) if not allowed else (min(value, *allowed), max(value, *allowed))
    if not allowed:
        return list(c.options)
    return [o for o in c.options if _option_value(o) in allowed or _option_value(o) == value]


def _narrow(w, c: Control, allowed: list, value) -> None:
    """Set widget ``w``'s range to what control ``c`` may take now (its value is set after)."""
    if isinstance(c, Slider):
        lo, hi = _within(c, allowed, value)
        if (w.min, w.max) != (lo, hi):
            w.max = max(w.max, hi)  # widen first, so that the value is never clamped on the way
            w.min, w.max = lo, hi
        return
    opts = _within(c, allowed, value)
    if tuple(tuple(o) if isinstance(o, list) else o for o in w.options) != tuple(opts):
        w.options = opts


def _make_widget(c: Control, value, label_px: int = 150, allowed: list | None = None):
    import ipywidgets as W

    style = {"description_width": f"{label_px}px"}
    layout = W.Layout(width="95%")
    common = dict(description=c.label, style=style, layout=layout, continuous_update=False)
    if isinstance(c, Slider):
        cls = W.IntSlider if c.is_int else W.FloatSlider
        lo, hi = _within(c, allowed, value)
        w = cls(min=lo, max=hi, step=c.step, value=value, **common)
    elif isinstance(c, LogSlider):
        w = W.SelectionSlider(options=_within(c, allowed, value), value=value, **common)
    elif isinstance(c, Choice):
        common.pop("continuous_update")
        if c.multi:  # a list of long names: give it two grid columns
            common["layout"] = W.Layout(width="95%", grid_column="span 2")
            w = W.SelectMultiple(options=list(c.options), value=tuple(value), rows=min(8, len(c.options)), **common)
        else:
            w = W.Dropdown(options=_within(c, allowed, value), value=value, **common)
    elif isinstance(c, Toggle):
        common.pop("continuous_update")
        w = W.Checkbox(value=value, indent=False, **common)
    else:  # pragma: no cover
        raise TypeError(c)
    w.tooltip = c.help or c.label  # the whole label on hover, whatever its width
    return w


def show(spec: DashboardSpec, scenario=None, **initial) -> Dashboard:
    """Build and display the dashboard; returns it so a notebook can read ``last_view``.

    ``scenario``: a saved state (a :class:`~accelbook.ui.scenario.Scenario`, its string, or the
    path of its JSON file); ``initial``: control values to start from (checked against the controls).
    """
    from IPython.display import display

    d = Dashboard(spec, scenario=scenario, **initial)
    display(d.widget)
    return d


def compare_scenarios(spec: DashboardSpec, a, b, labels: tuple[str, str] = ("A", "B")):
    """Two scenarios of one dashboard side by side: what differs, both charts, both summaries.
    Returns a :class:`~accelbook.ui.scenario.Comparison` (it displays itself in a notebook)."""
    from accelbook.ui.scenario import compare

    return compare(spec, a, b, labels)


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


#: the share of random settings that must have a result on every dashboard (issue 31: at least 2 of 3)
FEASIBLE_SHARE = 2 / 3


def _feasibility(spec: DashboardSpec, n: int, seed: int) -> tuple[int, str]:
    """How many of ``n`` random settings (``spec.sample``, seeded) have a result, and the commonest
    reason of those that have none (its first words)."""
    rng = np.random.default_rng(seed)
    ok, why = 0, {}
    for _ in range(n):
        try:
            spec.render(**spec.sample(rng))
        except (ValueError, KeyError, FloatingPointError) as exc:  # "no result": any other error is a bug
            reason = _format_error(exc)[0].removeprefix("Cannot compute this combination: ")[:70]
            why[reason] = why.get(reason, 0) + 1
            continue
        ok += 1
    return ok, max(why, key=why.get) if why else ""


def feasible_fraction(spec: DashboardSpec, n: int = 30, seed: int = 0) -> float:
    """The share of ``n`` random settings of ``spec`` that have a result (a view, not the explanation
    of why there is none). A random setting is what :meth:`DashboardSpec.sample` draws: every control
    at random, a control whose range depends on others within that range, as the widgets offer it."""
    return _feasibility(spec, n, seed)[0] / n


def feasibility_report(specs, n: int = 30, seed: int = 0) -> pd.DataFrame:
    """For every dashboard of ``specs`` (``[make() for make in accelbook.ui.dashboards.ALL_SPECS]`` for all):
    of ``n`` random settings, how many have a result, their share, whether it reaches
    :data:`FEASIBLE_SHARE`, and the commonest reason of those that have none."""
    rows = []
    for spec in specs:
        ok, why = _feasibility(spec, n, seed)
        rows.append({"dashboard": spec.name, "with_result": ok, "n": n, "share": ok / n,
                     "ok": ok / n >= FEASIBLE_SHARE - 1e-12, "commonest_no_result": why})
    return pd.DataFrame(rows)
