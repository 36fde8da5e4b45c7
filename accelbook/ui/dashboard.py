"""One dashboard pattern for every notebook: controls -> pure view function -> DataFrame -> chart.

A dashboard is described as data (:class:`DashboardSpec`, in :mod:`accelbook.ui.controls`): a name,
its controls and a *pure* ``view(**values) -> View`` function that calls the model, builds a tidy
DataFrame and a chart (:mod:`accelbook.ui.charts`). The notebooks' dashboards are written on this
pattern in :mod:`accelbook.ui.dashboards`, one module per notebook. :func:`show` turns a spec into
ipywidgets; ``benchmarks/bench_dashboards.py`` samples the same controls and times the same view.

The chart never disagrees with the controls. Every view records the control values it was computed
from (``View.inputs``); where a setting has no result (a ``ValueError``: "this input is invalid"),
the chart, summary and table are replaced by an explicit "no result for these settings" placeholder,
the control just moved says so, and the nearest setting that has a result is offered (a button).
Any other exception is shown too, marked as a bug, and the dashboard keeps working.

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

__all__ = ["Choice", "Control", "Dashboard", "DashboardSpec", "LogSlider", "Scenario", "Slider", "Toggle", "View",
           "chart_to_svg", "check_finite", "compare_scenarios", "fmt_si", "message_html", "scenario_of", "show",
           "table_html", "time_views"]

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
        self.values.update(spec.check(initial))
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
        self.controls = {k: _make_widget(c, self.values[k], width) for k, c in self.spec.controls.items()}
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
        c = self.spec.controls[key]
        self.values[key] = tuple(new) if isinstance(c, Choice) and c.multi else new
        self._moved = key
        if not self._holding:
            self.update()

    def set(self, **values) -> None:
        """Set controls programmatically (as a user moving sliders would), then update once."""
        checked = self.spec.check(values)
        self._holding = True
        try:
            for k, v in checked.items():
                self.controls[k].value = v  # fires _on_change, which holds the update
        finally:
            self._holding = False
        if len(checked) != 1:
            self._moved = None
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
        self.message.value = ""
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

    def _show_no_result(self, exc: BaseException, values: dict[str, Any]) -> None:
        text, kind = _format_error(exc)
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


def _make_widget(c: Control, value, label_px: int = 150):
    import ipywidgets as W

    style = {"description_width": f"{label_px}px"}
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
