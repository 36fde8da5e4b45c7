"""Legibility of the dashboards' charts, checked on the Vega-Lite specs they produce: labels that do not
overlap, axes that hold what is drawn, colours that stay with their series, legends for every mark
that means something. The geometry here is written from Vega-Lite's rules (log scales, text
alignment), not taken from the chart code."""

from __future__ import annotations

import itertools
import math

import pytest

from accelbook.ui import dashboards as D

CHAR_PX = 5.5   # a 10-px sans-serif character, on average (the check is for clear overlaps)
TEXT_PX = 10.0


def _layers(spec: dict) -> list[dict]:
    out = []
    for key in ("layer", "vconcat", "hconcat"):
        for part in spec.get(key, []):
            out += _layers(part)
    if "mark" in spec:
        out.append(spec)
    return out


def _mark(layer: dict) -> dict:
    return layer["mark"] if isinstance(layer["mark"], dict) else {"type": layer["mark"]}


def _dataset(spec: dict, layer: dict) -> list[dict]:
    return spec["datasets"][layer["data"]["name"]]


def _log_axis(values: list[float], domain, length: float, flip: bool) -> list[float]:
    lo, hi = math.log(domain[0]), math.log(domain[1])
    out = [(math.log(v) - lo) / (hi - lo) * length for v in values]
    return [length - p for p in out] if flip else out


def _domain(spec: dict, channel: str) -> tuple[float, float]:
    """The explicit domain of a layered chart's shared scale, else the extent of all its data."""
    vals = []
    for layer in _layers(spec):
        enc = layer.get("encoding", {}).get(channel)
        if not enc or "field" not in enc:
            continue
        if "domain" in enc.get("scale", {}):
            return tuple(enc["scale"]["domain"])
        vals += [r[enc["field"]] for r in _dataset(spec, layer)]
    return min(vals), max(vals)


def _text_boxes(spec: dict, width: float, height: float) -> list[tuple[str, tuple[float, float, float, float]]]:
    """(text, box in pixels) of every text mark, on a log-log layered chart."""
    xd, yd = _domain(spec, "x"), _domain(spec, "y")
    out = []
    for layer in _layers(spec):
        mark = _mark(layer)
        if mark["type"] != "text":
            continue
        enc, rows = layer["encoding"], _dataset(spec, layer)
        xs = _log_axis([r[enc["x"]["field"]] for r in rows], xd, width, False)
        ys = _log_axis([r[enc["y"]["field"]] for r in rows], yd, height, True)
        size = mark.get("fontSize", TEXT_PX)
        for r, x, y in zip(rows, xs, ys):
            text = str(r[enc["text"]["field"]])
            w = CHAR_PX * size / 10 * len(text)
            x += mark.get("dx", 0)
            y += mark.get("dy", 0)
            x0 = {"left": x, "center": x - w / 2, "right": x - w}[mark.get("align", "center")]
            base = mark.get("baseline", "alphabetic")
            y0 = {"top": y, "middle": y - size / 2, "bottom": y - size}.get(base, y - 0.8 * size)
            out.append((text, (x0, y0, x0 + w, y0 + size)))
    return out


def _overlap(a, b) -> float:
    return max(0.0, min(a[2], b[2]) - max(a[0], b[0])) * max(0.0, min(a[3], b[3]) - max(a[1], b[1]))


# -- 00: the catalogue's point labels ------------------------------------------------------------------
@pytest.mark.parametrize("statuses", [("shipping", "announced"), ("shipping", "announced", "estimated")])
@pytest.mark.parametrize("precision", ["bf16", "fp8"])
def test_catalogue_labels_overlap_no_label_and_no_chip_and_stay_inside(statuses, precision):
    spec_ = D.catalogue_spec()
    try:
        view = spec_.render(statuses=statuses, precision=precision)
    except ValueError:
        pytest.skip("no chip for this filter")
    spec = view.chart.to_dict()
    width, height = spec["width"], spec["height"]
    boxes = _text_boxes(spec, width, height)
    assert len(boxes) >= 5
    clashes = [(a, b) for (a, ba), (b, bb) in itertools.combinations(boxes, 2) if _overlap(ba, bb) > 4]
    assert not clashes, clashes
    outside = [t for t, b in boxes if b[0] < -1 or b[1] < -1 or b[2] > width + 1 or b[3] > height + 1]
    assert not outside, outside
    # no label covers a chip's marker (radius ~5 px at size 110)
    pts = next(layer for layer in _layers(spec) if _mark(layer)["type"] == "point")
    rows = _dataset(spec, pts)
    xs = _log_axis([r["bw_tb_s"] for r in rows], _domain(spec, "x"), width, False)
    ys = _log_axis([r["peak_tflop_s"] for r in rows], _domain(spec, "y"), height, True)
    covered = [(t, r["id"]) for (t, b) in boxes for r, x, y in zip(rows, xs, ys)
               if _overlap(b, (x - 4, y - 4, x + 4, y + 4)) > 1]
    assert not covered, covered


# -- 01: the roofline holds its points and fits the page ---------------------------------------------
def _chart_width_px(view) -> float:
    import re

    svg = view.chart.to_svg()
    return float(re.search(r'<svg[^>]*\bwidth="([\d.]+)"', svg).group(1))


@pytest.mark.parametrize("settings", [{}, dict(phase="prefill", batch=4096, seq_len=131072, precision="fp8"),
                                      dict(phase="decode", batch=1, seq_len=128, precision="fp4")])
def test_roofline_lines_span_every_operation_and_the_axis_ends_with_them(settings):
    spec = D.roofline_spec().render(**settings).chart.to_dict()
    roof = spec["vconcat"][0]
    curves = [r["intensity_flop_per_byte"] for r in _dataset(spec, roof["layer"][0])]
    ops = [r["intensity_flop_per_byte"] for r in _dataset(spec, roof["layer"][2])]
    assert min(curves) <= min(ops) and max(ops) <= max(curves), (min(ops), max(ops), min(curves), max(curves))
    domain = roof["layer"][0]["encoding"]["x"]["scale"]["domain"]
    assert domain[0] <= min(ops) and max(ops) <= domain[1]


def test_roofline_with_its_legends_fits_a_notebook_page():
    """The legends (long chip and operation names) and the chip names of the lower panel used to push
    the chart to about 1,000 px, wider than a notebook's output area; the legends were cut off."""
    assert _chart_width_px(D.roofline_spec().render()) <= 880


# -- 02: every control moves the chart ------------------------------------------------------------------
def test_shapes_chart_marks_the_swept_dimensions_setting():
    spec = D.shapes_spec()
    a, b = spec.render(dim="M", M=300).chart.to_dict(), spec.render(dim="M", M=6000).chart.to_dict()
    assert a["datasets"] != b["datasets"]
    for chart, m in ((a, 300), (b, 6000)):
        marked = [r for layer in _layers(chart) if _mark(layer)["type"] == "rule" for r in _dataset(chart, layer)]
        assert marked == [{"M": m}]
        assert max(r["M"] for r in chart["datasets"]["sweep"]) >= m   # the curves reach the setting


def test_cycle_view_shows_the_gemm_shape():
    spec = D.animation_spec()
    a, b = spec.render(M=6, N=6, K=6, cycle=3), spec.render(M=16, N=16, K=16, cycle=3)
    assert a.chart.to_dict() != b.chart.to_dict()
    for view, (m, n, k) in ((a, (6, 6, 6)), (b, (16, 16, 16))):
        assert f"{m}×{k} · {k}×{n}" in view.chart.to_dict()["title"]


# -- 03: a series keeps its colour; measurements are in the legend ------------------------------------
def _colour_of(spec: dict) -> dict[str, str]:
    enc = next(layer for layer in _layers(spec) if _mark(layer)["type"] == "line")["encoding"]["color"]
    scale = enc["scale"]
    return dict(zip(scale["domain"], scale["range"]))


def test_collective_series_keep_their_colours_when_one_is_added():
    spec = D.collective_spec()
    two = ("HGX H100, NVLS off", "TPU v5p 4×4×4 slice")
    three = ("HGX H100, NVLS on",) + two
    a, b = _colour_of(spec.render(systems=two).chart.to_dict()), _colour_of(spec.render(systems=three).chart.to_dict())
    assert all(a[s] == b[s] for s in two) and len(set(b.values())) == len(b)


def test_collective_measurements_have_a_legend_entry():
    spec = D.collective_spec().render(systems=("HGX H100, NVLS off",), collective="all_reduce").chart.to_dict()
    diamonds = [layer for layer in _layers(spec) if layer.get("data", {}).get("name") == "measured"]
    assert diamonds and spec["datasets"]["measured"], "no measured points in the default view"
    shape = diamonds[0]["encoding"]["shape"]
    assert shape["scale"]["range"] == ["diamond"] and shape.get("legend", {}) is not None
    assert "measure" in " ".join(shape["scale"]["domain"])


# -- 05: dropped tokens and overloaded chips are named in legends -------------------------------------------
def test_moe_dropped_bars_and_overloaded_chips_have_legends():
    spec = D.moe_routing_spec().render(capacity_factor=1.0, skew=1.0).chart.to_dict()
    legends = []
    for layer in _layers(spec):
        colour = layer.get("encoding", {}).get("color", {})
        if "field" in colour and colour.get("legend", {}) is not None:
            legends += colour["scale"]["domain"]
    assert any("dropped" in entry for entry in legends), legends
    assert any("above the mean" in entry for entry in legends), legends


def test_catalogue_vendors_keep_their_colours_when_the_filter_changes():
    spec = D.catalogue_spec()
    every = spec.defaults()["vendors"]

    def colours(vendors):
        chart = spec.render(vendors=vendors).chart.to_dict()
        enc = next(layer for layer in _layers(chart) if _mark(layer)["type"] == "point")["encoding"]["color"]
        return dict(zip(enc["scale"]["domain"], enc["scale"]["range"])), enc["legend"]["values"]

    a, _ = colours(every)
    b, legend = colours(("Google", "NVIDIA"))
    assert a["Google"] == b["Google"] and a["NVIDIA"] == b["NVIDIA"] and a["Google"] != a["NVIDIA"]
    assert legend == ["Google", "NVIDIA"]
