"""Dashboards: every spec renders at defaults and at random settings, and the widget survives bad input."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from accelbook.ui import dashboard as dsh
from accelbook.ui.dashboard import Dashboard, DashboardSpec, Slider, View, check_finite, fmt_si, time_views
from accelbook.ui.dashboards import ALL_SPECS, roofline_spec

SPECS = [f() for f in ALL_SPECS]


def _check_view(view):
    assert isinstance(view, View)
    num = view.data.select_dtypes(include=[np.number]).to_numpy(dtype=float)
    assert np.isfinite(num).all()
    d = view.chart.to_dict()
    assert isinstance(d, dict) and "datasets" in d


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
def test_defaults_render(spec):
    view = spec.render()
    _check_view(view)
    assert len(view.data) > 0 and view.summary


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
def test_random_settings_render_or_explain(spec):
    rng = np.random.default_rng(20240601)
    ok = 0
    for _ in range(50):
        values = spec.sample(rng)
        assert set(values) == set(spec.controls)
        try:
            view = spec.render(**values)
        except ValueError as exc:
            assert str(exc).strip(), values
            continue
        _check_view(view)
        ok += 1
    assert ok > 0  # most settings are valid; a spec that always fails is broken


def test_render_rejects_unknown_control():
    with pytest.raises(ValueError, match="unknown control"):
        roofline_spec().render(batchsize=4)


def test_check_finite_catches_nan():
    with pytest.raises(FloatingPointError, match="x"):
        check_finite(pd.DataFrame({"x": [1.0, np.nan], "s": ["a", "b"]}), "test")
    check_finite(pd.DataFrame({"x": [1.0, 2.0], "s": ["a", "b"]}))


def test_roofline_dashboard_survives_invalid_setting_and_recovers():
    d = Dashboard(roofline_spec(), renderer="svg")
    assert d.last_error is None and "<svg" in d.chart.value
    before = d.chart.value
    d.set(chips=())
    assert d.last_error and "pick at least one chip" in d.last_error
    assert "pick at least one chip" in d.message.value
    # no stale chart: an explicit placeholder, the control says so, and the nearest setting is offered
    assert dsh.NO_RESULT in d.chart.value and d.last_view is None and d.summary.value == ""
    assert "no result" in d.notes["chips"].value and d.suggestion == {"chips": roofline_spec().defaults()["chips"]}
    d.set(chips=("h100",))
    assert d.last_error is None and d.message.value == ""
    assert "<svg" in d.chart.value and d.chart.value != before  # one chip instead of four


def test_roofline_dashboard_chart_follows_batch():
    d = Dashboard(roofline_spec(), renderer="svg", chips=("h100",))
    d.set(batch=1)
    one = d.chart.value
    d.set(batch=1024)
    assert d.last_error is None
    assert d.chart.value != one
    assert d.last_view.data["t_s"].sum() > 0


def test_roofline_dashboard_precision_none_publish():
    d = Dashboard(roofline_spec(), renderer="svg", chips=("tpu-v4",))
    before = d.chart.value
    d.set(precision="fp4")  # TPU v4 publishes no FP4 peak
    assert "fp4" in d.last_error and d.chart.value != before and dsh.NO_RESULT in d.chart.value
    assert d.suggestion and d.suggestion.get("precision") != "fp4"
    d.set(precision="bf16")
    assert d.last_error is None


def test_browser_renderer_survives_invalid_setting_and_follows_batch():
    # the default renderer sends the Vega-Lite spec to the page instead of an SVG string
    d = Dashboard(roofline_spec(), chips=("h100",))
    first = d.chart_spec
    assert d.last_error is None and isinstance(first, dict) and "datasets" in first
    d.set(chips=())
    assert "pick at least one chip" in d.last_error and "pick at least one chip" in d.message.value
    assert d.chart_spec is None and dsh.NO_RESULT in str(d.chart.spec)  # a placeholder, never the old chart
    d.set(chips=("h100",))
    assert d.last_error is None and d.message.value == ""
    d.set(batch=1024)
    assert d.last_error is None and d.chart_spec != first


def test_unknown_renderer():
    with pytest.raises(ValueError, match="renderer"):
        Dashboard(roofline_spec(), renderer="png")


def test_unexpected_exception_is_shown_as_bug_and_widget_keeps_working():
    def view(x):
        if x > 5:
            raise RuntimeError("boom")
        return View(pd.DataFrame({"x": [float(x)]}))

    spec = DashboardSpec("toy", {"x": Slider("x", 0, 10, 1, 1)}, view)
    d = Dashboard(spec, renderer="svg")
    assert d.last_error is None
    d.set(x=8)
    assert "bug" in d.last_error and "boom" in d.last_error
    assert "accelbook-bug" in d.message.value
    d.set(x=2)
    assert d.last_error is None and d.last_view.data["x"].iloc[0] == 2.0


def test_dashboard_set_unknown_control():
    d = Dashboard(DashboardSpec("toy", {"x": Slider("x", 0, 10, 1, 1)}, lambda x: View(pd.DataFrame({"x": [x]}))),
                  renderer="svg")
    with pytest.raises(ValueError, match="unknown control"):
        d.set(y=1)


def test_message_escapes_html():
    assert "&lt;b&gt;" in dsh.message_html("<b>", "error")


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
def test_time_views_returns_one_duration_per_sample(spec):
    t = time_views(spec, n=5, seed=1)
    assert t.shape == (5,) and np.isfinite(t).all() and (t >= 0).all()


@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
def test_samples_are_valid_control_values(spec):
    rng = np.random.default_rng(7)
    for _ in range(20):
        for k, v in spec.sample(rng).items():
            c = spec.controls[k]
            if isinstance(c, dsh.Slider):
                assert c.min - 1e-9 <= v <= c.max + 1e-9
            elif isinstance(c, dsh.LogSlider):
                assert v in c.options
            elif isinstance(c, dsh.Choice) and c.multi:
                assert len(v) >= 1 and set(v) <= set(c.values)
            elif isinstance(c, dsh.Choice):
                assert v in c.values


@pytest.mark.parametrize("x, unit, text", [
    (2.765e12, "B/s", "2.77 TB/s"),     # the docstring's own example
    (989.4e12, "FLOP/s", "989 TFLOP/s"),
    (2.5e-4, "s", "250 µs"),
    (0, "s", "0 s"),
])
def test_fmt_si(x, unit, text):
    assert fmt_si(x, unit) == text


# -- every discrete setting, with the continuous ones at their extremes ------------------------------
def _extremes(control):
    if isinstance(control, dsh.LogSlider):
        return [control.options[0], control.options[-1]]
    if isinstance(control, Slider):
        return [control.min, control.max]
    raise TypeError(control)


def test_roofline_every_model_phase_precision_at_the_extremes():
    """All chips at once, so each chip meets every model, phase and precision, at B and s both minimal and
    both maximal (1 x 128 and 4096 x 131072 tokens): a chart with finite numbers or a readable refusal."""
    spec = roofline_spec()
    c = spec.controls
    all_chips = tuple(c["chips"].values)
    corners = list(zip(_extremes(c["batch"]), _extremes(c["seq_len"])))
    rendered = 0
    for model in c["model"].values:
        for phase in c["phase"].values:
            for precision in c["precision"].values:
                for batch, seq_len in corners:
                    for bw_scale in _extremes(c["bw_scale"]):
                        view = spec.render(chips=all_chips, model=model, phase=phase, batch=batch,
                                           seq_len=seq_len, precision=precision, bw_scale=bw_scale)
                        _check_view(view)
                        assert (view.data["t_s"] > 0).all()
                        rendered += 1
    assert rendered == len(c["model"].values) * 3 * 4 * 2 * 2 and len(c["model"].values) >= 9


def test_training_cost_every_model_at_the_extremes():
    from accelbook.ui.dashboards import training_cost_spec

    spec = training_cost_spec()
    c = spec.controls
    for model in c["model"].values:
        for mfu in _extremes(c["mfu"]):
            for price in _extremes(c["price_scale"]):
                for seq_len in _extremes(c["seq_len"]):
                    view = spec.render(chips=tuple(c["chips"].values), model=model, mfu=mfu,
                                       price_scale=price, seq_len=seq_len)
                    _check_view(view)
                    assert (view.data["usd_per_million_tokens"] > 0).all()


def test_catalogue_every_precision_and_status():
    from accelbook.ui.dashboards import catalogue_spec

    spec = catalogue_spec()
    c = spec.controls
    for precision in c["precision"].values:
        for status in c["statuses"].values:
            try:
                view = spec.render(vendors=tuple(c["vendors"].values), statuses=(status,), precision=precision)
            except ValueError as exc:  # e.g. no estimated chip publishes an fp4 peak
                assert "no chip" in str(exc) or str(exc).strip()
                continue
            _check_view(view)


def test_notebook_table_formats_errors_signed_and_shares_unsigned():
    import pandas as pd

    from accelbook.ui import notebook

    df = pd.DataFrame({"case": ["a", "b"], "error": [0.05, -0.1], "share": [0.25, 1.0], "x": [1234.5678, None]})
    html = notebook.table(df, percent=["error"], shares=["share"]).to_html()
    assert "+5.00%" in html and "-10.00%" in html          # errors keep their sign
    assert "25.0%" in html and "100.0%" in html and "+25.0%" not in html
    assert "1,235" in html and "—" in html                  # 4 significant digits; missing shown as a dash


# -- the layout: one module per notebook -----------------------------------------------------------
def test_each_notebooks_dashboards_live_in_its_module():
    """Every ``show(x_spec())`` of notebook NN calls a spec of ``accelbook.ui.dashboards.nbNN_<name>``,
    and ALL_SPECS is every module's SPECS in the notebooks' order. A notebook that shows no dashboard (the
    capstone walkthrough, which calls the earlier notebooks' functions) has no module."""
    import importlib
    import json
    import re
    from pathlib import Path

    from accelbook.ui import dashboards

    root = Path(__file__).resolve().parent.parent
    chained = []
    for nb in sorted((root / "notebooks").glob("*.ipynb")):
        code = "".join("".join(c["source"]) for c in json.loads(nb.read_text())["cells"] if c["cell_type"] == "code")
        shown = set(re.findall(r"show\((\w+_spec)\(\)", code))
        if not shown and nb.stem == "12_capstone":
            continue
        module = importlib.import_module(f"accelbook.ui.dashboards.nb{nb.stem}")
        assert shown and shown <= {f.__name__ for f in module.SPECS}, (nb.name, shown)
        chained += module.SPECS
    assert tuple(chained) == dashboards.ALL_SPECS


def test_layout_label():
    from accelbook import training
    from accelbook.ui.dashboards import layout_label

    e = training.estimate("llama-3.1-70b", "h100", 1024, 2**24, 8192, tp=8, pp=4)
    assert layout_label(e.config) == "tp8 pp4 dp32 mb1 ZeRO-1 recompute selective"
    # degrees of 1 are left out (dp always shown); vp and ep only when above 1; a search row works too
    c = dict(tp=1, cp=2, pp=1, dp=64, vp=1, ep=8, microbatch=2, zero_stage=3, recompute="full")
    assert layout_label(c) == "cp2 dp64 ep8 mb2 ZeRO-3 recompute full"
    assert layout_label(dict(c, pp=4, vp=2, ep=1)) == "cp2 pp4 dp64 vp2 mb2 ZeRO-3 recompute full"
    row = training.search("llama-3.1-70b", "h100", 1024, 2**24, 8192, top=1).iloc[0]
    assert layout_label(row) == layout_label(training.search("llama-3.1-70b", "h100", 1024, 2**24, 8192,
                                                             top=1).attrs["best"].config)


def test_step_chart_components_are_the_models_labels():
    from accelbook import training
    from accelbook.ui.charts import training as tc

    assert tc.TIME_ORDER == list(training.TIME_LABELS.values())
    assert tc.MEM_ORDER == list(training.MEMORY_LABELS.values())
    assert set(tc.TIME_COLOURS_BY_FIELD) == set(training.TIME_LABELS)
    assert set(tc.MEM_COLOURS_BY_FIELD) == set(training.MEMORY_LABELS)


def test_training_dashboard_names_goodput_and_the_error_band():
    from accelbook import training
    from accelbook.ui.dashboards import training_spec

    spec = training_spec()
    assert spec.controls["goodput"].value == training.published_goodput().fraction == 0.90
    values = {k: c.value for k, c in spec.controls.items()}
    e = training.estimate(values["model"], values["chip"], values["n_chips"], values["batch_tokens"],
                          values["seq_len"], tp=values["tp"], pp=values["pp"])
    ideal_days = 15e12 / e.tokens_per_s / 86400
    text = spec.view(**values).summary
    assert "90 % effective training time Llama 3 reported" in text
    assert f"{ideal_days:,.1f} days at 100 %" in text and f"{ideal_days / 0.9:,.1f} days" in text
    assert training.error_band().words() in text
    text = spec.view(**dict(values, goodput=0.5)).summary
    assert "50 % goodput" in text and f"{ideal_days / 0.5:,.1f} days" in text


# -- legibility: whole labels, readable tables ---------------------------------------------------------
@pytest.mark.parametrize("spec", SPECS, ids=lambda s: s.name)
def test_labels_fit_and_tables_are_readable(spec):
    import re

    d = Dashboard(spec, renderer="browser")
    for k, c in spec.controls.items():
        if not isinstance(c, dsh.Toggle):  # about 7 px a character at the widgets' font size
            assert int(d.controls[k].style.description_width.rstrip("px")) >= 7 * len(c.label), c.label
    if d.last_view is not None and d.last_view.table is not None:
        head = re.findall(r"<th>(.*?)</th>", d.table.value)
        assert head and not [h for h in head if re.fullmatch(r"[a-z0-9]+(_[a-z0-9]+)+", h)], head
        cells = re.findall(r"<td>(.*?)</td>", d.table.value)
        assert not [c for c in cells if re.fullmatch(r"-?[\d.]+e[+-]\d+", c)], cells


def test_table_numbers_in_units_not_e_notation():
    from accelbook.ui.tables import readable

    df = pd.DataFrame({"peak_tflop_s": [989.4], "step_time_s": [2.5e-4], "usd_per_month": [123456.7],
                       "mfu": [0.456], "error": [-0.1], "tokens_per_s_per_chip": [1.5e5]})
    r = readable(df)
    assert list(r.columns) == ["peak (TFLOP/s)", "step time", "USD per month", "MFU", "error", "tokens/s per chip"]
    assert list(r.iloc[0]) == ["989.4", "250 µs", "123,457", "45.6%", "-10.0%", "150,000"]


def test_tornado_axis_and_inputs_in_words():
    from accelbook.ui.dashboards import tco_spec

    v = tco_spec().render()
    spec = v.chart.to_dict()
    assert "USD per million tokens" in str(spec) and "'title': 'result'" not in str(spec)
    assert "purchase price" in set(v.table["input"]) and "purchase_usd" not in set(v.table["input"])


def test_moe_summary_counts_nodes_as_the_control_does():
    from accelbook.ui.dashboards import moe_routing_spec

    text = moe_routing_spec().render(n_chips=512, n_experts=512).summary
    assert "of 64 nodes of 8 chips" in text


def test_moe_summary_says_when_its_figures_are_of_a_sample():
    """Past the routing budget the dashboard simulates fewer tokens per batch; a smaller batch averages out
    less, so its imbalance overstates the full batch's: the summary must say the figures are sampled, and
    only then. Checked against the full simulation for the docstring's case."""
    from accelbook import moe
    from accelbook.ui.dashboards import moe_routing_spec
    from accelbook.ui.dashboards.nb05_moe_all_to_all import _routing_sample

    spec = moe_routing_spec()
    big = spec.render(n_experts=256, n_chips=256, tokens_per_chip=512, n_batches=4, top_k=8, capacity_factor=1.25)
    assert "**Sampled**" in big.summary and "8,192 of the 131,072 tokens" in big.summary
    assert "Sampled" not in spec.render(n_experts=256, n_chips=64, tokens_per_chip=64).summary
    T, T_full = _routing_sample(256, 256, 512, 4, None)
    sample, full = (moe.simulate_routing(t, 256, 8, capacity_factor=1.25, n_batches=4, n_groups=32) for t in (T, T_full))
    assert sample.imbalance.mean() > full.imbalance.mean() * 1.05


# -- settings that have a result (issue 31): ranges that follow each other, the one-click way back ----------
def test_feasibility_report_counts_settings_with_a_result():
    from accelbook.ui.dashboard import feasibility_report, feasible_fraction

    def view(x):
        if x >= 5:
            raise ValueError("x must be below 5")
        return View(pd.DataFrame({"x": [float(x)]}))

    spec = DashboardSpec("toy", {"x": Slider("x", 0, 9, 1, 1)}, view)
    rng, n = np.random.default_rng(3), 40
    expected = sum(spec.sample(rng)["x"] < 5 for _ in range(n))
    assert feasible_fraction(spec, n=n, seed=3) == expected / n
    row = feasibility_report([spec], n=n, seed=3).iloc[0]
    assert (row["dashboard"], row["with_result"], row["n"]) == ("toy", expected, n)
    assert row["ok"] == (expected / n >= dsh.FEASIBLE_SHARE) and "x must be below 5" in row["commonest_no_result"]


#: the dashboards whose ranges follow other controls or were cut (the rest: bench_dashboards --feasibility-only)
LIMITED = ("training", "search", "moe routing", "inference", "design")


@pytest.mark.parametrize("name", LIMITED)
def test_most_random_settings_have_a_result(name):
    from accelbook.ui.dashboard import feasible_fraction

    spec = next(s for s in SPECS if s.name == name)
    assert feasible_fraction(spec, n=30, seed=0) >= dsh.FEASIBLE_SHARE


@pytest.mark.parametrize("spec", [s for s in SPECS if s.limits is not None], ids=lambda s: s.name)
def test_random_settings_keep_limited_controls_in_range(spec):
    rng = np.random.default_rng(9)
    inside = 0
    for _ in range(40):
        values = spec.sample(rng)
        allowed = spec.allowed(values)
        assert set(allowed) <= set(spec.controls)
        assert all(set(a) <= set(_values_of(spec.controls[k])) for k, a in allowed.items())
        inside += all(values[k] in a for k, a in allowed.items())
    # a few settings have no value in range at all: one sequence on 32,768 chips (training), a model whose
    # weights need more SRAM chips than its heads can split over (inference on an LPU)
    assert inside >= 30


def _values_of(c):
    if isinstance(c, Slider):
        return [c.min, *c.neighbours(c.min)]
    return c.options if isinstance(c, dsh.LogSlider) else c.values


def test_training_layout_follows_the_chips():
    """Fewer chips than tp·cp·pp: the pipeline gives way (said in the message line); the sliders then offer
    only the degrees that fit, so no move of one of them asks for more chips than there are."""
    from accelbook.ui.dashboards import training_spec

    d = Dashboard(training_spec())
    assert (d.values["tp"], d.values["pp"]) == (8, 4) and d.adjusted == {}
    d.controls["n_chips"].value = 8
    assert d.values["n_chips"] == 8 and (d.values["tp"], d.values["pp"]) == (8, 1) and d.adjusted == {"pp": 1}
    assert d.last_error is None and d.last_view.inputs == d.values
    assert "Also moved" in d.message.value and "pipeline stages = 1" in d.message.value
    assert tuple(d.controls["tp"].options) == (1, 2, 4, 8) and tuple(d.controls["pp"].options) == (1,)
    d.controls["tp"].value = 2  # now pp may go up to 4 again
    assert tuple(d.controls["pp"].options) == (1, 2, 4) and d.adjusted == {} and d.message.value == ""
    d.controls["chip"].value = "tpu-v5e"  # no published FP8 peak: the precision offers bf16 only
    assert tuple(d.controls["precision"].options) == ("bf16",) and d.last_error is None


def test_the_fix_button_goes_to_the_nearest_setting_with_a_result():
    from accelbook.ui.dashboards import training_spec
    from accelbook.ui.scenario import scenario_of

    spec = training_spec()
    d = Dashboard(spec)
    d.load(scenario_of(spec, dict(n_chips=8, tp=64, pp=4)))  # a scenario is shown as saved: 256 chips' worth
    assert d.values["tp"] == 64 and "not divisible" in d.last_error and dsh.NO_RESULT in str(d.chart.spec)
    assert d.fix.layout.display != "none" and d.suggestion and d.fix.description.startswith("use ")
    before, wanted = dict(d.values), dict(d.suggestion)
    d.fix.click()
    assert d.last_error is None and d.values == {**before, **wanted} and d.values != before
    assert {k: w.value for k, w in d.controls.items()} == d.values
    assert d.last_view.inputs == d.values and d.chart.spec == d.last_view.chart.to_dict()
    assert d.fix.layout.display == "none" and d.message.value == ""


def test_the_fix_button_falls_back_to_the_defaults():
    """Where no one control's move has a result, the button still leads back: to the defaults."""
    def view(x, y):
        if x + y > 2:
            raise ValueError("x + y must be at most 2")
        return View(pd.DataFrame({"x": [float(x)], "y": [float(y)]}))

    spec = DashboardSpec("toy", {"x": Slider("x", 0, 10, 1, 0), "y": Slider("y", 0, 10, 1, 0)}, view)
    d = Dashboard(spec, renderer="svg")
    d.set(x=10, y=10)
    assert d.last_error and d.suggestion == {"x": 0, "y": 0}
    d.fix.click()
    assert d.last_error is None and d.values == {"x": 0, "y": 0} and d.last_view.inputs == d.values
    assert dsh.NO_RESULT not in d.chart.value and d.fix.layout.display == "none"


def test_static_book_prints_every_controls_value():
    """A SelectionSlider left at its first option has an empty ``label``; the book printed "context parallel = ;"."""
    import ipywidgets as W

    from accelbook.ui import book
    from accelbook.ui.dashboards import training_spec

    assert book._setting(W.SelectionSlider(options=[1, 2, 4], value=1, description="cp")) == ("cp", "1")
    assert book._setting(W.Dropdown(options=[("one", 1), ("two", 2)], value=2, description="d")) == ("d", "two")
    html = book.dashboard_html(Dashboard(training_spec(), renderer="svg").widget)
    assert "context parallel = 1;" in html and "microbatch (seqs) = 1;" in html and " = ;" not in html
