"""Chart basics: the :class:`Figure` every chart function returns, shared sizes and colours.

Chart functions: tidy DataFrames in, a :class:`Figure` (a Vega-Lite chart) out. No model code here.

Each chart is written once in Altair, over *named* datasets (``alt.Data(name="ops")``), and turned
into a Vega-Lite dict once per process (``_template_*``, cached). A call then only copies that dict
and fills in the data, which takes about a millisecond; building the Altair objects again would take
50-150 ms on a 2-core machine, too slow for a slider. ``Figure.altair()`` gives the Altair chart back
for anyone who wants to restyle it.

Axis titles carry units; numbers are shown in the unit a reader expects (TFLOP/s, TB/s, µs), the
conversion done here and nowhere else.
"""

from __future__ import annotations

import json
import pickle
from pathlib import Path
from typing import Any

import altair as alt
import numpy as np
import pandas as pd

from accelbook.specs.catalogue import catalogue_cache

WIDTH = 480
HEIGHT = 320
STATUS_SHAPES = alt.Scale(domain=["shipping", "announced", "estimated"], range=["circle", "triangle-up", "diamond"])
BOUND_COLOURS = alt.Scale(domain=["compute", "memory"], range=["#1f77b4", "#d62728"])


class Figure:
    """A Vega-Lite spec with its data inlined. Displays as SVG in a notebook; saves PNG/SVG offline."""

    def __init__(self, spec: dict[str, Any]):
        self.spec = spec

    @classmethod
    def from_template(cls, template: dict[str, Any], title: str | None = None,
                      **frames: pd.DataFrame | list[dict[str, Any]]) -> "Figure":
        spec = pickle.loads(pickle.dumps(template, pickle.HIGHEST_PROTOCOL))   # a deep copy, 5x faster than deepcopy
        spec["datasets"] = {name: records(df) for name, df in frames.items()}
        if title is not None:
            spec["title"] = title
        return cls(spec)

    def to_dict(self) -> dict[str, Any]:
        return self.spec

    def to_svg(self) -> str:
        import vl_convert as vlc

        return vlc.vegalite_to_svg(self.spec, vl_version=vl_version())

    def save(self, path: str | Path, scale: float = 2.0) -> Path:
        """Write ``.png`` or ``.svg`` (drawn offline by vl-convert)."""
        import vl_convert as vlc

        path = Path(path)
        if path.suffix == ".svg":
            path.write_text(self.to_svg())
        elif path.suffix == ".png":
            path.write_bytes(vlc.vegalite_to_png(self.spec, vl_version=vl_version(), scale=scale))
        else:
            raise ValueError(f"save as .png or .svg, not {path.suffix!r}")
        return path

    def altair(self) -> alt.TopLevelMixin:
        return alt.Chart.from_dict(self.spec, validate=False)

    def _repr_mimebundle_(self, include=None, exclude=None):
        return {"image/svg+xml": self.to_svg()}


@catalogue_cache(maxsize=1)
def vl_version() -> str:
    """vl-convert's name for the Vega-Lite version Altair writes (e.g. 'v6_4')."""
    major, minor = alt.SCHEMA_VERSION.lstrip("v").split(".")[:2]
    return f"v{major}_{minor}"


def records(df: pd.DataFrame | list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A frame as a list of JSON-ready rows; a list of rows (plain Python numbers and strings) as it is."""
    if isinstance(df, list):
        return df
    return json.loads(df.to_json(orient="records", double_precision=10))


def named_data(name: str) -> alt.Data:
    return alt.Data(name=name)


def message_figure(message: str) -> Figure:
    """A chart-sized box with a message, for an empty selection."""
    return Figure.from_template(_template_message(), msg=pd.DataFrame({"t": [message]}))


@catalogue_cache(maxsize=1)
def _template_message() -> dict:
    return alt.Chart(named_data("msg")).mark_text(size=14).encode(text="t:N").properties(width=WIDTH, height=60).to_dict()


def stack(*figures: Figure, direction: str = "v", title: str = "") -> Figure:
    """Put figures below each other (``"v"``) or side by side (``"h"``), data and all."""
    key = {"v": "vconcat", "h": "hconcat"}[direction]
    datasets: dict[str, Any] = {}
    parts = []
    for i, f in enumerate(figures):
        spec = {k: v for k, v in f.spec.items() if k not in ("$schema", "datasets", "config")}
        rename = {name: f"{name}_{i}" for name in f.spec.get("datasets", {})}
        for old, new in rename.items():
            datasets[new] = f.spec["datasets"][old]
        parts.append(_renamenamed_data(spec, rename))
    spec = {"$schema": figures[0].spec.get("$schema"), key: parts, "datasets": datasets,
            "resolve": {"scale": {"color": "independent", "shape": "independent"}}}
    if "config" in figures[0].spec:
        spec["config"] = figures[0].spec["config"]
    if title:
        spec["title"] = title
    return Figure(spec)


#: pixels per character and per line of a 10-px label (Vega's default sans-serif; a little generous)
CHAR_PX = 6.0
LINE_PX = 12.0


def log_px(values, domain: tuple[float, float], length: float, flip: bool = False):
    """Pixel positions of ``values`` on a log axis over ``domain`` drawn ``length`` pixels long
    (``flip``: a y axis, 0 at the top)."""
    lo, hi = np.log(domain[0]), np.log(domain[1])
    px = (np.log(np.asarray(values, dtype=float)) - lo) / (hi - lo) * length
    return length - px if flip else px


def log_value(px, domain: tuple[float, float], length: float, flip: bool = False):
    """The inverse of :func:`log_px`: the data value at pixel ``px``."""
    lo, hi = np.log(domain[0]), np.log(domain[1])
    frac = (length - np.asarray(px, dtype=float) if flip else np.asarray(px, dtype=float)) / length
    return np.exp(lo + frac * (hi - lo))


def _overlap(a, b) -> float:
    """Area shared by two boxes (x0, y0, x1, y1)."""
    return max(0.0, min(a[2], b[2]) - max(a[0], b[0])) * max(0.0, min(a[3], b[3]) - max(a[1], b[1]))


def place_labels(px, py, texts, width: float, height: float, radius: float = 6.0,
                 obstacles=()) -> list[tuple[float, float]]:
    """Centres (pixels) for a label beside each point (``px``, ``py``) such that labels overlap no other
    label, no point and no box of ``obstacles``, and stay inside ``width`` × ``height`` where they can.

    Greedy, from the most crowded point out: each label takes the nearest of the places around its
    point (right, left, above, below and the four corners; then the same one, two and three lines
    farther out) that collides least (overlap area with labels, twice that with points, plus ten times
    any area outside the plot), the first free one if there is one. A label box is ``CHAR_PX`` per
    character wide and ``LINE_PX`` high, centred on the returned point.
    """
    pts = [(x - radius, y - radius, x + radius, y + radius) for x, y in zip(px, py)]
    placed = [tuple(b) for b in obstacles]
    crowd = [sum(abs(x - x2) < 80 and abs(y - y2) < 30 for x2, y2 in zip(px, py)) for x, y in zip(px, py)]
    centres: list[tuple[float, float]] = [(0.0, 0.0)] * len(texts)
    for i in sorted(range(len(texts)), key=lambda k: -crowd[k]):
        w, h = CHAR_PX * len(str(texts[i])) + 2, LINE_PX
        cands = []
        for ring in range(4):
            g = radius + 3 + ring * h
            cands += [(g + w / 2, 0), (-g - w / 2, 0), (0, -g - h / 2), (0, g + h / 2), (g + w / 2, -g),
                      (-g - w / 2, -g), (g + w / 2, g), (-g - w / 2, g)]
        best, best_cost = None, None
        for dx, dy in cands:
            cx, cy = px[i] + dx, py[i] + dy
            box = (cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2)
            inside = _overlap(box, (0, 0, width, height))
            cost = sum(_overlap(box, b) for b in placed) + 2 * sum(_overlap(box, b) for b in pts) \
                + 10 * (w * h - inside)
            if best_cost is None or cost < best_cost - 1e-9:
                best, best_cost = (cx, cy, box), cost
            if cost == 0:
                break
        centres[i] = best[:2]
        placed.append(best[2])
    return centres


def _renamenamed_data(node: Any, rename: dict[str, str]) -> Any:
    if isinstance(node, dict):
        if set(node) == {"name"} and node["name"] in rename:
            return {"name": rename[node["name"]]}
        return {k: _renamenamed_data(v, rename) for k, v in node.items()}
    if isinstance(node, list):
        return [_renamenamed_data(v, rename) for v in node]
    return node




#: a slide's pixels (16:9 at full HD): :func:`save_for_slides` fits a chart inside them
SLIDE_PX = (1920, 1080)


def save_for_slides(chart, stem, width_px: int = SLIDE_PX[0], height_px: int = SLIDE_PX[1]) -> tuple[Path, Path]:
    """Save ``chart`` (a :class:`Figure` or an Altair chart) as ``<stem>.svg`` and ``<stem>.png``, offline.

    The PNG is scaled to fill ``width_px`` × ``height_px`` (a full-HD slide by default) without
    distortion: scale = min(width_px / w, height_px / h) of the chart's own size, at least 1.
    The SVG is the same drawing, resolution-free. Returns (svg path, png path).
    """
    import re

    import vl_convert as vlc

    spec = chart.to_dict()
    svg = vlc.vegalite_to_svg(spec, vl_version=vl_version())
    m = re.search(r'<svg[^>]*\bwidth="([\d.]+)"[^>]*\bheight="([\d.]+)"', svg)
    w, h = (float(m.group(1)), float(m.group(2))) if m else (float(WIDTH), float(HEIGHT))
    scale = max(1.0, min(width_px / w, height_px / h))
    stem = Path(stem)
    if stem.suffix in (".svg", ".png"):
        stem = stem.with_suffix("")
    svg_path, png_path = stem.with_name(stem.name + ".svg"), stem.with_name(stem.name + ".png")
    svg_path.write_text(svg, encoding="utf-8")
    png_path.write_bytes(vlc.vegalite_to_png(spec, vl_version=vl_version(), scale=scale))
    return svg_path, png_path
