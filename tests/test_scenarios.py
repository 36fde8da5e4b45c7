"""Scenarios: every dashboard's state goes to a string and a JSON file and comes back exactly;
starting values outside a control are refused by name; charts save as SVG and PNG for a slide."""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest

from accelbook.ui.dashboard import Dashboard, compare_scenarios
from accelbook.ui.dashboards import ALL_SPECS, fleet_spec, roofline_spec
from accelbook.ui.scenario import Scenario, as_scenario, scenario_of

SPECS = [f() for f in ALL_SPECS]


def _same(a: dict, b: dict) -> None:
    assert a.keys() == b.keys()
    for k in a:
        assert a[k] == b[k] and type(a[k]) is type(b[k]), (k, a[k], b[k])


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
def test_round_trip_string_and_json_every_dashboard(spec, tmp_path):
    rng = np.random.default_rng(11)
    for values in [spec.defaults()] + [spec.sample(rng) for _ in range(10)]:
        s = scenario_of(spec, values)
        _same(Scenario.from_string(s.to_string()).for_spec(spec), s.values)
        _same(Scenario.from_json(s.to_json()).for_spec(spec), s.values)
        path = s.save(tmp_path / "s.json")
        _same(Scenario.load(path).for_spec(spec), s.values)
        assert json.loads(path.read_text())["dashboard"] == spec.name


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
def test_show_with_a_scenario_restores_every_control(spec):
    rng = np.random.default_rng(5)
    values = spec.sample(rng)
    s = scenario_of(spec, values)
    d = Dashboard(spec, scenario=s.to_string())
    assert d.values == s.values
    assert {k: (tuple(w.value) if isinstance(w.value, tuple) else w.value) for k, w in d.controls.items()} == s.values
    assert d.scenario.to_string() == s.to_string() == d.scenario_box.value
    if d.last_error is None:  # the chart is the scenario's, not the defaults'
        assert d.last_view.inputs == s.values


def test_load_box_and_load_call_restore_a_scenario(tmp_path):
    d = Dashboard(roofline_spec())
    text = scenario_of(roofline_spec(), dict(batch=1024, chips=("h100",))).to_string()
    d.scenario_box.value = text
    d.load(d.scenario_box.value)
    assert d.values["batch"] == 1024 and d.values["chips"] == ("h100",)
    assert d.last_view.inputs == d.values
    path = d.save_scenario(tmp_path / "mine.json")
    d.set(batch=1)
    d.load(path)
    assert d.values["batch"] == 1024


@pytest.mark.parametrize("bad, match", [
    ("roofline:batch=3", "'batch'.*power of 2"),
    ("roofline:nosuch=1", "unknown control"),
    ("fleet:interactive_target=64", "not 'roofline'"),
    ("no colon here", "not a scenario string"),
])
def test_bad_scenarios_name_what_is_wrong(bad, match):
    with pytest.raises(ValueError, match=match):
        s = as_scenario(bad)
        values = roofline_spec().defaults()
        values.update({k: v for k, v in s.values.items()})
        Scenario(s.dashboard, values).for_spec(roofline_spec())


def test_scenario_lacking_a_control_is_refused():
    with pytest.raises(ValueError, match="lacks control"):
        Scenario("roofline", {"batch": 4}).for_spec(roofline_spec())


@pytest.mark.parametrize("initial, match", [
    (dict(batch=3), "roofline, control 'batch'.*power of 2 from"),
    (dict(bw_scale=100.0), "control 'bw_scale'.*outside its range: a number from"),
    (dict(model="no-such-model"), "control 'model'.*not one of its options"),
    (dict(chips=("h100", "nope")), "control 'chips'.*not among its options"),
])
def test_show_refuses_a_start_outside_a_control(initial, match):
    with pytest.raises(ValueError, match=match):
        Dashboard(roofline_spec(), **initial)


def test_set_refuses_outside_values_too():
    d = Dashboard(fleet_spec())
    with pytest.raises(ValueError, match="demand_scale"):
        d.set(demand_scale=40.0)
    assert d.values == fleet_spec().defaults()


def test_compare_two_scenarios_side_by_side():
    spec = fleet_spec()
    a = scenario_of(spec, {})
    b = scenario_of(spec, dict(demand_scale=2.0, tpu_price=2.0))
    cmp_ = compare_scenarios(spec, a, b.to_string(), labels=("today", "cheap TPUs"))
    assert list(cmp_.differences["control"]) == [spec.controls["demand_scale"].label, spec.controls["tpu_price"].label]
    assert cmp_.views[0].inputs == a.values and cmp_.views[1].inputs == b.values
    d = cmp_.chart.to_dict()
    assert len(d["hconcat"]) == 2 and d["hconcat"][0]["title"].startswith("today: ")
    assert "<svg" in cmp_._repr_html_()


def test_save_chart_svg_and_png_at_slide_resolution(tmp_path):
    d = Dashboard(roofline_spec(), chips=("h100",))
    svg, png = d.save_chart(tmp_path / "roofline")
    assert svg.read_text().startswith("<svg")
    w, h = struct.unpack(">II", png.read_bytes()[16:24])
    assert (w == 1920 and h <= 1080) or (h == 1080 and w <= 1920), (w, h)
    d.set(chips=())
    with pytest.raises(ValueError, match="no chart"):
        d.save_chart(tmp_path / "none")
