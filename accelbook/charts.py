"""Chart functions: tidy DataFrames in, a :class:`Figure` (a Vega-Lite chart) out. No model code here.

Each chart is written once in Altair, over *named* datasets (``alt.Data(name="ops")``), and turned
into a Vega-Lite dict once per process (``_template_*``, cached). A call then only copies that dict
and fills in the data, which takes about a millisecond; building the Altair objects again would take
50-150 ms on a 2-core machine, too slow for a slider. ``Figure.altair()`` gives the Altair chart back
for anyone who wants to restyle it.

Axis titles carry units; numbers are shown in the unit a reader expects (TFLOP/s, TB/s, µs), the
conversion done here and nowhere else.
"""

from __future__ import annotations

import copy
import functools
import json
from pathlib import Path
from typing import Any

import altair as alt
import numpy as np
import pandas as pd

WIDTH = 480
HEIGHT = 320
STATUS_SHAPES = alt.Scale(domain=["shipping", "announced", "estimated"], range=["circle", "triangle-up", "diamond"])
BOUND_COLOURS = alt.Scale(domain=["compute", "memory"], range=["#1f77b4", "#d62728"])


class Figure:
    """A Vega-Lite spec with its data inlined. Displays as SVG in a notebook; saves PNG/SVG offline."""

    def __init__(self, spec: dict[str, Any]):
        self.spec = spec

    @classmethod
    def from_template(cls, template: dict[str, Any], title: str | None = None, **frames: pd.DataFrame) -> "Figure":
        spec = copy.deepcopy(template)
        spec["datasets"] = {name: _records(df) for name, df in frames.items()}
        if title is not None:
            spec["title"] = title
        return cls(spec)

    def to_dict(self) -> dict[str, Any]:
        return self.spec

    def to_svg(self) -> str:
        import vl_convert as vlc

        return vlc.vegalite_to_svg(self.spec, vl_version=_vl_version())

    def save(self, path: str | Path, scale: float = 2.0) -> Path:
        """Write ``.png`` or ``.svg`` (drawn offline by vl-convert)."""
        import vl_convert as vlc

        path = Path(path)
        if path.suffix == ".svg":
            path.write_text(self.to_svg())
        elif path.suffix == ".png":
            path.write_bytes(vlc.vegalite_to_png(self.spec, vl_version=_vl_version(), scale=scale))
        else:
            raise ValueError(f"save as .png or .svg, not {path.suffix!r}")
        return path

    def altair(self) -> alt.TopLevelMixin:
        return alt.Chart.from_dict(self.spec, validate=False)

    def _repr_mimebundle_(self, include=None, exclude=None):
        return {"image/svg+xml": self.to_svg()}


@functools.lru_cache(maxsize=1)
def _vl_version() -> str:
    """vl-convert's name for the Vega-Lite version Altair writes (e.g. 'v6_4')."""
    major, minor = alt.SCHEMA_VERSION.lstrip("v").split(".")[:2]
    return f"v{major}_{minor}"


def _records(df: pd.DataFrame) -> list[dict[str, Any]]:
    return json.loads(df.to_json(orient="records", double_precision=10))


def _data(name: str) -> alt.Data:
    return alt.Data(name=name)


def message_figure(message: str) -> Figure:
    """A chart-sized box with a message, for an empty selection."""
    return Figure.from_template(_template_message(), msg=pd.DataFrame({"t": [message]}))


@functools.lru_cache(maxsize=1)
def _template_message() -> dict:
    return alt.Chart(_data("msg")).mark_text(size=14).encode(text="t:N").properties(width=WIDTH, height=60).to_dict()


# -- roofline ---------------------------------------------------------------------------------
@functools.lru_cache(maxsize=2)
def _template_roofline(with_ops: bool) -> dict:
    x = alt.X("intensity_flop_per_byte:Q", scale=alt.Scale(type="log"), title="arithmetic intensity (FLOP/byte)")
    y = alt.Y("attainable_tflop_s:Q", scale=alt.Scale(type="log"), title="attainable (TFLOP/s)")
    colour = alt.Color("chip:N", title="chip", legend=alt.Legend(orient="bottom", columns=2, labelLimit=300))
    lines = alt.Chart(_data("curves")).mark_line(strokeWidth=2).encode(x=x, y=y, color=colour)
    ridges = alt.Chart(_data("ridges")).mark_rule(strokeDash=[4, 4], opacity=0.6).encode(
        x="ridge_flop_per_byte:Q", color=colour)
    layers = [lines, ridges]
    if with_ops:
        layers.append(alt.Chart(_data("ops")).mark_point(size=90, filled=True, opacity=0.85).encode(
            x=x, y=y, color=colour, shape=alt.Shape("op:N", title="operation", legend=alt.Legend(orient="bottom", columns=3, labelLimit=260)),
            tooltip=["chip:N", "op:N", alt.Tooltip("intensity_flop_per_byte:Q", format=".3g"),
                     alt.Tooltip("t_us:Q", title="time (µs)", format=".3g"), "bound:N"]))
    return alt.layer(*layers).properties(width=WIDTH, height=HEIGHT).to_dict()


def roofline_chart(curves: pd.DataFrame, ops: pd.DataFrame | None = None, title: str = "") -> Figure:
    """Log-log roofline per chip (lines), its ridge point (dashed rule) and operations (points).

    ``curves``: chip, intensity_flop_per_byte, attainable_flop_s, ridge_flop_per_byte
    (:func:`accelbook.roofline.roofline_curve`). ``ops``: op, chip, intensity_flop_per_byte,
    attainable_flop_s, bound, t_s (:func:`accelbook.roofline.layer_roofline`).
    """
    c = curves[["chip", "intensity_flop_per_byte"]].assign(attainable_tflop_s=curves["attainable_flop_s"] / 1e12)
    ridges = curves.drop_duplicates("chip")[["chip", "ridge_flop_per_byte"]]
    frames = {"curves": c, "ridges": ridges}
    if ops is not None:
        frames["ops"] = ops[["chip", "op", "intensity_flop_per_byte", "bound"]].assign(
            attainable_tflop_s=ops["attainable_flop_s"] / 1e12, t_us=ops["t_s"] * 1e6)
    return Figure.from_template(_template_roofline(ops is not None), title=title, **frames)


@functools.lru_cache(maxsize=1)
def _template_layer_time() -> dict:
    return alt.Chart(_data("ops")).mark_bar().encode(
        y=alt.Y("op:N", title=None, sort=None),
        x=alt.X("t_us:Q", title="lower-bound time per layer (µs)"),
        color=alt.Color("bound:N", scale=BOUND_COLOURS, title="bound"),
        row=alt.Row("chip:N", title=None, sort=None, header=alt.Header(labelAngle=0, labelAlign="left")),
        tooltip=["chip:N", "op:N", alt.Tooltip("t_us:Q", format=".3g"), "bound:N"],
    ).properties(width=WIDTH - 140, height=alt.Step(14)).to_dict()


def layer_time_chart(ops: pd.DataFrame, title: str = "") -> Figure:
    """Lower-bound time of each operation of a layer, one panel per chip, coloured by its bound."""
    o = ops[["chip", "op", "bound"]].assign(t_us=ops["t_s"] * 1e6)
    return Figure.from_template(_template_layer_time(), title=title, ops=o)


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
        parts.append(_rename_data(spec, rename))
    spec = {"$schema": figures[0].spec.get("$schema"), key: parts, "datasets": datasets,
            "resolve": {"scale": {"color": "independent", "shape": "independent"}}}
    if "config" in figures[0].spec:
        spec["config"] = figures[0].spec["config"]
    if title:
        spec["title"] = title
    return Figure(spec)


def _rename_data(node: Any, rename: dict[str, str]) -> Any:
    if isinstance(node, dict):
        if set(node) == {"name"} and node["name"] in rename:
            return {"name": rename[node["name"]]}
        return {k: _rename_data(v, rename) for k, v in node.items()}
    if isinstance(node, list):
        return [_rename_data(v, rename) for v in node]
    return node


# -- the catalogue: peak against bandwidth ---------------------------------------------------------
@functools.lru_cache(maxsize=8)
def _template_peak_bandwidth(precision: str) -> dict:
    x = alt.X("bw_tb_s:Q", scale=alt.Scale(type="log", nice=False), title="memory bandwidth (TB/s)")
    y = alt.Y("peak_tflop_s:Q", scale=alt.Scale(type="log", nice=False), title=f"dense {precision} peak (TFLOP/s)")
    lines = alt.Chart(_data("diagonals")).mark_line(color="grey", strokeDash=[3, 3], opacity=0.5).encode(
        x=x, y=y, detail="I:N")
    line_labels = alt.Chart(_data("diagonal_labels")).mark_text(
        align="left", dx=4, dy=-4, color="grey", fontSize=10).encode(x=x, y=y, text="I:N")
    pts = alt.Chart(_data("chips")).mark_point(size=110, filled=True).encode(
        x=x, y=y, color=alt.Color("vendor:N"), shape=alt.Shape("status:N", scale=STATUS_SHAPES),
        tooltip=["name:N", "status:N", alt.Tooltip("peak_tflop_s:Q", format=",.0f"),
                 alt.Tooltip("bw_tb_s:Q", format=".3g"), alt.Tooltip("ridge:Q", format=".0f", title="ridge FLOP/B"),
                 "memory_kind:N"])
    labels = alt.Chart(_data("labels")).mark_text(align="left", dx=7, dy=-6, fontSize=10).encode(x=x, y=y, text="ids:N")
    return alt.layer(lines, line_labels, pts, labels).properties(width=WIDTH, height=HEIGHT + 60).to_dict()


def peak_bandwidth_chart(df: pd.DataFrame, precision: str = "bf16", intensities=(1, 10, 100, 1000)) -> Figure:
    """Peak FLOP/s against memory bandwidth, one point per chip, with diagonals of constant ridge point.

    ``df``: rows of :func:`accelbook.chips` (``peak_<precision>_flop_s``, ``memory_bw_bytes_per_s``,
    id, name, vendor, status, memory_kind). A chip lies on the diagonal of its ridge point I* = P/B.
    """
    col = f"peak_{precision}_flop_s"
    d = df.dropna(subset=[col, "memory_bw_bytes_per_s"])
    if d.empty:
        return message_figure(f"No chip in the selection publishes a dense {precision} peak.")
    d = d[["id", "name", "vendor", "status", "memory_kind"]].assign(
        peak_tflop_s=d[col] / 1e12, bw_tb_s=d["memory_bw_bytes_per_s"] / 1e12,
        ridge=d[col] / d["memory_bw_bytes_per_s"])
    lo, hi = d["bw_tb_s"].min() / 1.5, d["bw_tb_s"].max() * 1.5
    ylo, yhi = d["peak_tflop_s"].min() / 1.5, d["peak_tflop_s"].max() * 1.5
    # each diagonal P = I·B, clipped to the box so the axes stay on the chips
    rows = []
    for i in intensities:
        b0, b1 = max(lo, ylo / i), min(hi, yhi / i)
        if b0 < b1:
            rows += [{"bw_tb_s": b0, "peak_tflop_s": i * b0, "I": f"I* = {i} FLOP/B"},
                     {"bw_tb_s": b1, "peak_tflop_s": i * b1, "I": f"I* = {i} FLOP/B"}]
    diag = pd.DataFrame(rows, columns=["bw_tb_s", "peak_tflop_s", "I"])
    # label each diagonal at the middle of its visible part (on a log scale: the geometric mean)
    labels = (diag.groupby("I", as_index=False).agg(bw_tb_s=("bw_tb_s", lambda v: float(np.sqrt(v.prod()))))
              if len(diag) else diag)
    if len(labels):
        labels["peak_tflop_s"] = labels["bw_tb_s"] * labels["I"].str.extract(r"= (\d+)")[0].astype(float)
    # chips at the same spot (H100 and H800 differ only in links) share one label
    chip_labels = d.groupby(["bw_tb_s", "peak_tflop_s"], as_index=False).agg(ids=("id", ", ".join))
    return Figure.from_template(_template_peak_bandwidth(precision), chips=d, diagonals=diag,
                                diagonal_labels=labels, labels=chip_labels)


# -- training cost -------------------------------------------------------------------------------
@functools.lru_cache(maxsize=1)
def _template_training_cost() -> dict:
    colour = alt.Color("kind:N", title="kind")
    tps = alt.Chart(_data("cost")).mark_bar().encode(
        y=alt.Y("chip:N", sort="-x", title=None), color=colour,
        x=alt.X("tokens_per_s_per_chip:Q", title="training tokens/s per chip"),
        tooltip=["chip:N", alt.Tooltip("tokens_per_s_per_chip:Q", format=",.0f")])
    usd = alt.Chart(_data("cost")).mark_bar().encode(
        y=alt.Y("chip:N", sort="x", title=None), color=colour,
        x=alt.X("usd_per_million_tokens:Q", title="USD per million training tokens"),
        tooltip=["chip:N", alt.Tooltip("usd_per_million_tokens:Q", format=".2f"),
                 alt.Tooltip("price_usd_per_hour:Q", format=".2f")])
    return alt.hconcat(tps.properties(width=240, height=alt.Step(22)),
                       usd.properties(width=240, height=alt.Step(22))).to_dict()


def training_cost_chart(df: pd.DataFrame) -> Figure:
    """Bars of training tokens/s per chip and USD per million tokens, one bar per chip."""
    if df.empty:
        return message_figure("No chip with both a price and a peak at this precision.")
    cols = ["chip", "kind", "tokens_per_s_per_chip", "usd_per_million_tokens", "price_usd_per_hour"]
    return Figure.from_template(_template_training_cost(), cost=df[cols])


# -- inside the chip (notebook 02) ------------------------------------------------------------------
@functools.lru_cache(maxsize=1)
def _template_dataflows() -> dict:
    base = alt.Chart(_data("flows")).encode(y=alt.Y("dataflow:N", title=None, sort=["os", "ws", "is"]),
                                            color=alt.Color("dataflow:N", legend=None))
    cyc = base.mark_bar().encode(x=alt.X("cycles:Q", title="cycles"), tooltip=["dataflow:N", "cycles:Q"])
    util = base.mark_bar().encode(x=alt.X("overall_util_pct:Q", title="PE utilisation (%)",
                                          scale=alt.Scale(domain=[0, 100])))
    sram = base.mark_bar().encode(x=alt.X("sram_accesses_per_mac:Q", title="SRAM accesses per MAC"))
    return alt.hconcat(cyc.properties(width=170, height=90), util.properties(width=170, height=90),
                       sram.properties(width=170, height=90)).to_dict()


def dataflow_chart(df: pd.DataFrame, title: str = "") -> Figure:
    """Cycles, utilisation and SRAM accesses per MAC for each dataflow (rows of systolic.simulate_table)."""
    d = df[["dataflow", "cycles", "sram_accesses_per_mac"]].assign(overall_util_pct=df["overall_util"] * 100)
    return Figure.from_template(_template_dataflows(), title=title, flows=d)


@functools.lru_cache(maxsize=1)
def _template_trace() -> dict:
    busy = alt.Chart(_data("trace")).mark_area(opacity=0.5, interpolate="step-after").encode(
        x=alt.X("cycle:Q", title="cycle"), y=alt.Y("busy_pes:Q", title="busy PEs (mean per bin)"))
    cap = alt.Chart(_data("cap")).mark_rule(strokeDash=[4, 4], color="grey").encode(y="pes:Q")
    ops = alt.Chart(_data("flow")).mark_line(interpolate="step-after", strokeWidth=1.2).encode(
        x=alt.X("cycle:Q", title="cycle"), y=alt.Y("per_cycle:Q", title="elements per cycle (mean per bin)"),
        color=alt.Color("stream:N", title=None, legend=alt.Legend(orient="bottom")))
    return alt.vconcat((busy + cap).properties(width=WIDTH, height=150),
                       ops.properties(width=WIDTH, height=130)).to_dict()


def trace_chart(trace: pd.DataFrame, pes: int, max_points: int = 600, title: str = "") -> Figure:
    """The simulator's per-cycle trace (binned to ``max_points``): busy PEs, operands in, outputs out."""
    n = len(trace)
    bins = max(1, -(-n // max_points))
    g = trace.groupby(trace["cycle"] // bins)
    binned = g[["busy_pes", "ifmap_in", "filter_in", "ofmap_out"]].mean().assign(cycle=g["cycle"].first())
    flow = binned.melt(id_vars="cycle", value_vars=["ifmap_in", "filter_in", "ofmap_out"],
                       var_name="stream", value_name="per_cycle")
    flow["stream"] = flow["stream"].map({"ifmap_in": "A in", "filter_in": "B in", "ofmap_out": "C out"})
    return Figure.from_template(_template_trace(), title=title, trace=binned[["cycle", "busy_pes"]],
                                cap=pd.DataFrame({"pes": [pes]}), flow=flow)


@functools.lru_cache(maxsize=2)
def _template_pe_grid(labels: bool) -> dict:
    base = alt.Chart(_data("pes")).encode(x=alt.X("col:O", title="array column"),
                                          y=alt.Y("row:O", title="array row"))
    rect = base.mark_rect(stroke="white", strokeWidth=1).encode(
        color=alt.Color("state:N", scale=alt.Scale(domain=["busy", "idle", "unmapped"],
                                                   range=["#1f77b4", "#dfe7ef", "#f4f4f4"]), title="PE"),
        tooltip=["row:O", "col:O", "state:N", "step:Q", "a:N", "b:N", "c:N"])
    layers = [rect]
    if labels:
        layers.append(base.mark_text(fontSize=9, color="white").encode(text="label:N"))
    return alt.layer(*layers).properties(width=360, height=360).to_dict()


def pe_grid_chart(states: pd.DataFrame, title: str = "") -> Figure:
    """The array at one cycle: busy, idle or unmapped PEs; on small arrays, the MAC step each does."""
    s = states.assign(state=np.where(states["busy"], "busy", np.where(states["mapped"], "idle", "unmapped")),
                      label=np.where(states["busy"], "k=" + states["step"].astype(str), ""))
    labels = int(states["row"].max() + 1) <= 8 and int(states["col"].max() + 1) <= 8
    cols = ["row", "col", "state", "step", "a", "b", "c", "label"]
    return Figure.from_template(_template_pe_grid(labels), title=title, pes=s[cols])


@functools.lru_cache(maxsize=4)
def _template_sweep(dim: str) -> dict:
    return alt.Chart(_data("sweep")).mark_line(point=alt.OverlayMarkDef(size=14)).encode(
        x=alt.X(f"{dim}:Q", title=f"{dim} (elements)"),
        y=alt.Y("efficiency_pct:Q", title="share of peak left by shape alone (%)", scale=alt.Scale(domain=[0, 100])),
        color=alt.Color("arch:N", title=None, legend=alt.Legend(orient="bottom", columns=1, labelLimit=500)),
        tooltip=[f"{dim}:Q", "arch:N", alt.Tooltip("efficiency_pct:Q", format=".1f")],
    ).properties(width=WIDTH, height=260).to_dict()


def efficiency_sweep_chart(df: pd.DataFrame, dim: str, title: str = "") -> Figure:
    """GPU and TPU shape efficiency as one GEMM dimension sweeps (rows of tiling.shape_sweep)."""
    d = df[[dim, "arch"]].assign(efficiency_pct=df["efficiency"] * 100)
    return Figure.from_template(_template_sweep(dim), title=title, sweep=d)


# -- interconnects (notebook 03) ----------------------------------------------------------------------
@functools.lru_cache(maxsize=1)
def _template_hops() -> dict:
    return alt.Chart(_data("hops")).mark_bar(opacity=0.8).encode(
        x=alt.X("hops:O", title="hops between two chips"),
        y=alt.Y("share_pct:Q", title="share of chip pairs (%)"),
        color=alt.Color("network:N", title=None, legend=alt.Legend(orient="bottom", columns=1, labelLimit=500)),
        xOffset="network:N",
        tooltip=["network:N", "hops:O", alt.Tooltip("share_pct:Q", format=".2f")],
    ).properties(width=WIDTH, height=240).to_dict()


def hop_histogram_chart(df: pd.DataFrame) -> Figure:
    """Share of chip pairs at each hop count, one colour per network (columns network, hops, share)."""
    return Figure.from_template(_template_hops(), hops=df[["network", "hops"]].assign(share_pct=df["share"] * 100))


@functools.lru_cache(maxsize=1)
def _template_collective() -> dict:
    x = alt.X("size_mib:Q", scale=alt.Scale(type="log"), title="message size (MiB)")
    line = alt.Chart(_data("curve")).mark_line().encode(
        x=x, y=alt.Y("busbw_gb_s:Q", title="bus bandwidth (GB/s)"), color=alt.Color("system:N", title=None,
                                                                                   legend=alt.Legend(orient="bottom")),
        tooltip=["system:N", "algorithm:N", alt.Tooltip("size_mib:Q", format=".3g"),
                 alt.Tooltip("busbw_gb_s:Q", format=".1f")])
    pts = alt.Chart(_data("curve")).mark_point(size=25, filled=True).encode(
        x=x, y="busbw_gb_s:Q", color="system:N", shape=alt.Shape("algorithm:N", title="algorithm chosen"))
    here = alt.Chart(_data("here")).mark_rule(strokeDash=[4, 4], color="black").encode(x=x)
    meas = alt.Chart(_data("measured")).mark_point(shape="diamond", size=120, color="black", filled=True).encode(
        x=x, y="busbw_gb_s:Q", tooltip=["case:N", alt.Tooltip("busbw_gb_s:Q", format=".0f")])
    return alt.layer(line, pts, here, meas).properties(width=WIDTH, height=280).to_dict()


def collective_chart(curve: pd.DataFrame, size_bytes: float, measured: pd.DataFrame | None = None,
                     title: str = "") -> Figure:
    """Bus bandwidth against message size (algorithm chosen at each size), the chosen size marked,
    and published measurements (black diamonds) where they exist."""
    c = curve.assign(size_mib=curve["message_bytes"] / 2**20, busbw_gb_s=curve["busbw_bytes_per_s"] / 1e9)
    m = measured if measured is not None else pd.DataFrame(columns=["case", "message_bytes", "busbw_gb_s"])
    m = m.assign(size_mib=m["message_bytes"] / 2**20)
    return Figure.from_template(_template_collective(), title=title,
                                curve=c[["system", "algorithm", "size_mib", "busbw_gb_s"]],
                                here=pd.DataFrame({"size_mib": [size_bytes / 2**20]}),
                                measured=m[["case", "size_mib", "busbw_gb_s"]])
