"""A random walk of 200 control moves on every dashboard: the chart always matches the controls.

Each move goes through the same code path as a user's: the widget's value is set, its observer
updates the dashboard. Most moves are one arrow-key press (the next value of a slider or a
dropdown), some jump to a random value the widget offers, some add or drop an option of a
multi-select (a control whose range depends on others offers only the values within it). After each
move: the widgets show the dashboard's values; either the chart, summary and table on screen were
computed from exactly those values (``View.inputs``), or the dashboard says there is no result and
shows the "no result" placeholder instead of a stale chart, with no bug (unexpected exception).
"""

from __future__ import annotations

import numpy as np
import pytest

from accelbook.ui.controls import Choice, Slider, Toggle
from accelbook.ui.dashboard import NO_RESULT, Dashboard
from accelbook.ui.dashboards import ALL_SPECS
from accelbook.ui.tables import markdown_html

MOVES = 200
SPECS = [f() for f in ALL_SPECS]


def _reachable(c, w) -> list:
    """The values the widget ``w`` of control ``c`` offers now (a control whose range depends on others
    offers part of its own: ``DashboardSpec.limits``)."""
    if isinstance(c, Slider):
        return [v for v in [c.min, *c.neighbours(c.min)] if w.min <= v <= w.max]
    return [o[1] if isinstance(o, tuple) else o for o in w.options]


def _move(rng: np.random.Generator, c, value, w):
    """One move of control ``c`` (widget ``w``) from ``value``, as a user would make it."""
    if isinstance(c, Toggle):
        return not value
    if isinstance(c, Choice) and c.multi:  # click one option in or out of the selection
        opt = c.values[int(rng.integers(len(c.values)))]
        return tuple(v for v in c.values if (v in value) != (v == opt))
    offered = _reachable(c, w)
    if rng.random() < 0.15:
        return offered[int(rng.integers(len(offered)))]
    near = [v for v in c.neighbours(value) if v in offered][:2] or [value]  # one arrow-key press, either way
    return near[int(rng.integers(len(near)))]


def _shown(w):
    return tuple(w.value) if isinstance(w.value, tuple) else w.value


def _check_consistent(d: Dashboard, step: int) -> str:
    where = f"{d.spec.name}, move {step}, {d.scenario.to_string()}"
    assert {k: _shown(w) for k, w in d.controls.items()} == d.values, where
    if d.last_error is None:
        assert d.last_view is not None and d.last_view.inputs == d.values, where
        if d.renderer == "browser":
            assert d.chart.spec == d.last_view.chart.to_dict(), where
        assert d.summary.value == markdown_html(d.last_view.summary), where
        return "ok"
    assert d.last_error_kind == "error", f"{where}: {d.last_error}"  # a bug would be an unhandled error
    assert d.last_view is None and d.summary.value == "" and d.table.value == "", where
    shown = str(d.chart.spec) if d.renderer == "browser" else d.chart.value
    assert NO_RESULT in shown, where
    assert d.last_error.split(":")[0] in d.message.value, where
    return "no result"


@pytest.mark.parametrize("i", range(len(SPECS)), ids=[s.name for s in SPECS])
def test_random_walk_chart_matches_controls(i):
    spec = SPECS[i]
    rng = np.random.default_rng(20240700 + i)
    d = Dashboard(spec)
    counts = {"ok": 0, "no result": 0}
    counts[_check_consistent(d, 0)] += 1
    keys = list(spec.controls)
    for step in range(1, MOVES + 1):
        k = keys[int(rng.integers(len(keys)))]
        d.controls[k].value = _move(rng, spec.controls[k], d.values[k], d.controls[k])
        outcome = _check_consistent(d, step)
        counts[outcome] += 1
        if outcome == "no result" and d.suggestion:  # the offered setting has a result
            assert set(d.suggestion) <= set(spec.controls)
    assert counts["ok"] > 0, counts
