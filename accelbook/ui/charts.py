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


@functools.lru_cache(maxsize=1)
def vl_version() -> str:
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
    x = alt.X("size_mib:Q", scale=alt.Scale(type="log", nice=False), title="message size (MiB)",
              axis=alt.Axis(values=[10.0**k for k in range(-3, 5)], format="~g"))
    line = alt.Chart(_data("curve")).mark_line().encode(
        x=x, y=alt.Y("busbw_gb_s:Q", title="bus bandwidth (GB/s)"), color=alt.Color("system:N", title=None,
                                                                                   legend=alt.Legend(orient="bottom")),
        tooltip=["system:N", "algorithm:N", "protocol:N", alt.Tooltip("size_mib:Q", format=".3g"),
                 alt.Tooltip("busbw_gb_s:Q", format=".1f")])
    pts = alt.Chart(_data("curve")).mark_point(size=25, filled=True).encode(
        x=x, y="busbw_gb_s:Q", color="system:N", shape=alt.Shape("algorithm:N", title="algorithm chosen"),
        tooltip=["system:N", "algorithm:N", "protocol:N", alt.Tooltip("size_mib:Q", format=".3g"),
                 alt.Tooltip("busbw_gb_s:Q", format=".1f")])
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
                                curve=c[["system", "algorithm", "protocol", "size_mib", "busbw_gb_s"]],
                                here=pd.DataFrame({"size_mib": [size_bytes / 2**20]}),
                                measured=m[["case", "size_mib", "busbw_gb_s"]])


# -- distributed training (notebook 04) ---------------------------------------------------------------
TIME_ORDER = ["matmuls", "attention", "elementwise", "recompute", "LM head + loss", "tensor-parallel comm",
              "context-parallel comm", "expert all-to-all", "pipeline sends", "pipeline bubble",
              "data-parallel comm (exposed)", "optimizer step"]
TIME_COLOURS = alt.Scale(domain=TIME_ORDER, range=["#1f77b4", "#6baed6", "#9ecae1", "#c6dbef", "#17becf",
                                                   "#d62728", "#ff9896", "#e377c2", "#8c564b", "#ff7f0e",
                                                   "#bcbd22", "#7f7f7f"])
MEM_ORDER = ["weights", "gradients", "optimizer states", "activations", "logits"]


@functools.lru_cache(maxsize=1)
def _template_step() -> dict:
    time_bar = alt.Chart(_data("time")).mark_bar().encode(
        y=alt.Y("layout:N", title=None, sort=None, axis=alt.Axis(labelLimit=420)),
        x=alt.X("seconds:Q", title="time per training step (s)", stack="zero"),
        color=alt.Color("component:N", scale=TIME_COLOURS, title="time", sort=TIME_ORDER,
                        legend=alt.Legend(orient="right")),
        order=alt.Order("order:Q"),
        tooltip=["layout:N", "component:N", alt.Tooltip("seconds:Q", format=".3g"), alt.Tooltip("share:Q", format=".1%")],
    ).properties(width=WIDTH - 60, height=alt.Step(26))
    mem_bar = alt.Chart(_data("memory")).mark_bar().encode(
        y=alt.Y("layout:N", title=None, sort=None, axis=alt.Axis(labelLimit=420)),
        x=alt.X("gb:Q", title="memory per chip (GB)", stack="zero"),
        color=alt.Color("component:N", title="memory", sort=MEM_ORDER,
                        scale=alt.Scale(domain=MEM_ORDER, range=["#2ca02c", "#98df8a", "#9467bd", "#ffbb78", "#c49c94"])),
        order=alt.Order("order:Q"),
        tooltip=["layout:N", "component:N", alt.Tooltip("gb:Q", format=".1f")],
    )
    cap = alt.Chart(_data("capacity")).mark_rule(color="black", strokeDash=[5, 3], size=2).encode(
        x="gb:Q", tooltip=[alt.Tooltip("gb:Q", format=".1f", title="usable GB")])
    mem = alt.layer(mem_bar, cap).properties(width=WIDTH - 60, height=alt.Step(26))
    return alt.vconcat(time_bar, mem).resolve_scale(color="independent").to_dict()


def step_chart(time: pd.DataFrame, memory: pd.DataFrame, capacity_gb: float, title: str = "") -> Figure:
    """Stacked bars, one per layout: where a step's time goes, and what fills each chip's memory
    against the usable capacity (dashed line).

    ``time``: layout, component, seconds, share; ``memory``: layout, component, bytes.
    """
    t = time[time["seconds"] > 0].assign(order=lambda d: d["component"].map(TIME_ORDER.index))
    m = memory[memory["bytes"] > 0].assign(gb=lambda d: d["bytes"] / 1e9,
                                           order=lambda d: d["component"].map(MEM_ORDER.index))
    return Figure.from_template(_template_step(), title=title, time=t[["layout", "component", "seconds", "share", "order"]],
                                memory=m[["layout", "component", "gb", "order"]],
                                capacity=pd.DataFrame({"gb": [capacity_gb]}))


@functools.lru_cache(maxsize=1)
def _template_scaling() -> dict:
    x = alt.X("n_chips:Q", scale=alt.Scale(type="log", base=2), title="chips")
    eff = alt.Chart(_data("scaling")).mark_line(point=True).encode(
        x=x, y=alt.Y("efficiency:Q", title="scaling efficiency (tokens/s per chip ÷ smallest)",
                     scale=alt.Scale(zero=False)),
        color=alt.Color("system:N", title=None, legend=alt.Legend(orient="bottom")),
        tooltip=["system:N", "n_chips:Q", alt.Tooltip("efficiency:Q", format=".1%"), alt.Tooltip("mfu:Q", format=".1%"),
                 alt.Tooltip("comm_share:Q", format=".1%", title="comm + bubble share"), "layout:N"])
    comm = alt.Chart(_data("scaling")).mark_line(point=True, strokeDash=[4, 2]).encode(
        x=x, y=alt.Y("comm_share:Q", title="share of the step: exposed comm + bubble", axis=alt.Axis(format="%")),
        color=alt.Color("system:N", title=None),
        tooltip=["system:N", "n_chips:Q", alt.Tooltip("comm_share:Q", format=".1%"), "layout:N"])
    return alt.hconcat(eff.properties(width=300, height=240), comm.properties(width=300, height=240)).to_dict()


def scaling_chart(df: pd.DataFrame, title: str = "") -> Figure:
    """Scaling efficiency and the communication share against chip count, one line per system."""
    cols = ["system", "n_chips", "efficiency", "mfu", "comm_share", "layout"]
    return Figure.from_template(_template_scaling(), title=title, scaling=df[cols])


@functools.lru_cache(maxsize=1)
def _template_validation() -> dict:
    base = alt.Chart(_data("runs"))
    band = alt.Chart(_data("band")).mark_area(opacity=0.15, color="#2ca02c").encode(
        x=alt.X("x:Q"), y="lo:Q", y2="hi:Q")
    diag = alt.Chart(_data("band")).mark_line(color="black", strokeDash=[4, 3]).encode(x="x:Q", y="x:Q")
    pts = base.mark_point(filled=True, size=90).encode(
        x=alt.X("reported_pct:Q", title="reported (% of peak)", scale=alt.Scale(zero=False)),
        y=alt.Y("predicted_pct:Q", title="predicted (% of peak)", scale=alt.Scale(zero=False)),
        color=alt.Color("era:N", title=None, legend=alt.Legend(orient="bottom")),
        shape=alt.Shape("role:N", title=None),
        tooltip=["run:N", alt.Tooltip("reported_pct:Q", format=".1f"), alt.Tooltip("predicted_pct:Q", format=".1f"),
                 alt.Tooltip("error:Q", format="+.0%"), "layout:N"])
    return alt.layer(band, diag, pts).properties(width=WIDTH - 80, height=WIDTH - 80).to_dict()


def validation_chart(df: pd.DataFrame, title: str = "") -> Figure:
    """Predicted against reported utilisation of published runs; the green band is ±15%.

    ``df``: run, role, era, reported_pct, predicted_pct, error, layout (per cent of peak in the
    authors' own FLOP convention, so the two axes compare like with like).
    """
    lo = float(min(df["reported_pct"].min(), df["predicted_pct"].min())) * 0.9
    hi = float(max(df["reported_pct"].max(), df["predicted_pct"].max())) * 1.05
    x = np.linspace(lo, hi, 20)
    band = pd.DataFrame({"x": x, "lo": x * 0.85, "hi": x * 1.15})
    return Figure.from_template(_template_validation(), title=title,
                                runs=df[["run", "role", "era", "reported_pct", "predicted_pct", "error", "layout"]],
                                band=band)


# -- MoE all-to-all (notebook 05) ----------------------------------------------------------------------
@functools.lru_cache(maxsize=1)
def _template_moe_loads() -> dict:
    chip = alt.Chart(_data("chips")).mark_bar().encode(
        x=alt.X("chip:O", title="chip (expert-parallel rank)", axis=alt.Axis(labels=False, ticks=False)),
        y=alt.Y("load:Q", title="token-expert assignments processed"),
        color=alt.condition("datum.load > datum.mean * 1.2", alt.value("#d62728"), alt.value("#1f77b4")),
        tooltip=["chip:O", alt.Tooltip("load:Q", format=",.0f"), alt.Tooltip("experts:Q", title="experts held")])
    mean = alt.Chart(_data("chips")).mark_rule(color="black", strokeDash=[4, 3]).encode(y="mean(mean):Q")
    hist = alt.Chart(_data("experts")).mark_bar(color="#9467bd").encode(
        x=alt.X("expert:O", title="expert (0 = most popular)", axis=alt.Axis(labels=False, ticks=False)),
        y=alt.Y("routed:Q", title="routed to the expert"),
        tooltip=["expert:O", alt.Tooltip("routed:Q", format=",.0f"), alt.Tooltip("dropped:Q", format=",.0f")])
    drop = alt.Chart(_data("experts")).mark_bar(color="#ff9896").encode(x="expert:O", y="dropped:Q")
    return alt.hconcat(alt.layer(chip, mean).properties(width=300, height=220),
                       alt.layer(hist, drop).properties(width=300, height=220)).to_dict()


def moe_load_chart(chips: pd.DataFrame, experts: pd.DataFrame, title: str = "") -> Figure:
    """Load per chip (red: more than 20% above the mean; dashed: the mean) and per expert (routed;
    pink: dropped at the capacity). ``chips``: chip, load, mean, experts; ``experts``: expert, routed, dropped."""
    return Figure.from_template(_template_moe_loads(), title=title, chips=chips[["chip", "load", "mean", "experts"]],
                                experts=experts[["expert", "routed", "dropped"]])


@functools.lru_cache(maxsize=1)
def _template_crossover() -> dict:
    x = alt.X("tokens_per_chip:Q", scale=alt.Scale(type="log", base=2), title="tokens per chip per step")
    line = alt.Chart(_data("sweep")).mark_line().encode(
        x=x, y=alt.Y("time_us:Q", scale=alt.Scale(type="log"), title="dispatch + combine time (µs)"),
        color=alt.Color("network:N", title=None, legend=alt.Legend(orient="bottom", columns=2)),
        tooltip=["network:N", alt.Tooltip("tokens_per_chip:Q", format=",.0f"), alt.Tooltip("time_us:Q", format=",.1f"),
                 "bound:N", alt.Tooltip("peers:Q", format=",.0f"), "diameter:Q"])
    pts = alt.Chart(_data("sweep")).mark_point(filled=True, size=30).encode(
        x=x, y="time_us:Q", color="network:N", shape=alt.Shape("bound:N", title="bound"))
    here = alt.Chart(_data("here")).mark_rule(strokeDash=[4, 4], color="black").encode(x=x)
    return alt.layer(line, pts, here).properties(width=WIDTH, height=300).to_dict()


def crossover_chart(sweep: pd.DataFrame, tokens_per_chip: float, title: str = "") -> Figure:
    """All-to-all time against tokens per chip, one line per network, latency- or bandwidth-bound
    points marked, the chosen token count dashed."""
    s = sweep.assign(time_us=sweep["time_s"] * 1e6)
    return Figure.from_template(_template_crossover(), title=title,
                                sweep=s[["network", "tokens_per_chip", "time_us", "bound", "peers", "diameter"]],
                                here=pd.DataFrame({"tokens_per_chip": [float(tokens_per_chip)]}))


# -- inference (notebooks 06 and 07) ---------------------------------------------------------------
@functools.lru_cache(maxsize=1)
def _template_batch_sweep() -> dict:
    x = alt.X("batch:Q", scale=alt.Scale(type="log", base=2), title="batch (sequences per replica)",
              axis=alt.Axis(format="~s", labelOverlap="greedy"))
    tpot = alt.Chart(_data("sweep")).mark_line(point=True, color="#d62728").encode(
        x=x, y=alt.Y("tpot_ms:Q", title="time per output token (ms)"),
        tooltip=["batch:Q", alt.Tooltip("tpot_ms:Q", format=".2f"), "decode_bound:N"])
    tput = alt.Chart(_data("sweep")).mark_line(point=True, color="#1f77b4").encode(
        x=x, y=alt.Y("tokens_per_s_per_chip:Q", title="output tokens/s per chip"),
        tooltip=["batch:Q", alt.Tooltip("tokens_per_s_per_chip:Q", format=",.0f"), "decode_bound:N"])
    here = alt.Chart(_data("here")).mark_rule(strokeDash=[4, 4], color="black").encode(x=x)
    cap = alt.Chart(_data("cap")).mark_rule(color="#ff7f0e", size=2).encode(
        x=x, tooltip=[alt.Tooltip("batch:Q", title="largest batch that fits")])
    return alt.hconcat(alt.layer(tpot, here, cap).properties(width=260, height=220),
                       alt.layer(tput, here, cap).properties(width=260, height=220)).to_dict()


def batch_sweep_chart(sweep: pd.DataFrame, batch: int, max_batch: int, title: str = "") -> Figure:
    """TPOT and tokens/s per chip against batch: the latency-throughput trade of decode; the chosen
    batch dashed, the largest batch that fits in memory in orange."""
    s = sweep.assign(tpot_ms=sweep["tpot_s"] * 1e3)
    return Figure.from_template(_template_batch_sweep(), title=title,
                                sweep=s[["batch", "tpot_ms", "tokens_per_s_per_chip", "decode_bound"]],
                                here=pd.DataFrame({"batch": [float(batch)]}),
                                cap=pd.DataFrame({"batch": [float(max(max_batch, 1))]}))


@functools.lru_cache(maxsize=2)
def _template_frontier(per: str) -> dict:
    y = {"chip": ("tokens_per_s_per_chip", "output tokens/s per chip"),
         "kw": ("tokens_per_s_per_kw", "output tokens/s per kW (power ESTIMATE)")}[per]
    x = alt.X("tokens_per_s_per_user:Q", scale=alt.Scale(type="log"), title="tokens/s per user (interactivity)")
    line = alt.Chart(_data("front")).mark_line(point=True).encode(
        x=x, y=alt.Y(f"{y[0]}:Q", scale=alt.Scale(type="log"), title=y[1]),
        color=alt.Color("system:N", title=None, legend=alt.Legend(orient="bottom", columns=2)),
        tooltip=["system:N", alt.Tooltip("tokens_per_s_per_user:Q", format=",.0f"), alt.Tooltip(f"{y[0]}:Q", format=",.1f"),
                 "tp:Q", "pp:Q", "batch:Q"])
    target = alt.Chart(_data("target")).mark_rule(strokeDash=[4, 4], color="black").encode(x=x)
    return alt.layer(line, target).properties(width=WIDTH, height=300).to_dict()


def frontier_chart(front: pd.DataFrame, target_tps_user: float, per: str = "chip", title: str = "") -> Figure:
    """Throughput against interactivity, one Pareto front per system; the per-user target dashed."""
    col = "tokens_per_s_per_chip" if per == "chip" else "tokens_per_s_per_kw"
    f = front.dropna(subset=[col])
    return Figure.from_template(_template_frontier(per), title=title,
                                front=f[["system", "tokens_per_s_per_user", col, "tp", "pp", "batch"]],
                                target=pd.DataFrame({"tokens_per_s_per_user": [float(target_tps_user)]}))


@functools.lru_cache(maxsize=1)
def _template_serving() -> dict:
    x = alt.X("rate_per_s:Q", title="offered load (requests/s)")
    lat = alt.Chart(_data("lat")).mark_line(point=True).encode(
        x=x, y=alt.Y("seconds:Q", scale=alt.Scale(type="log"), title="latency (s)"),
        color=alt.Color("metric:N", title=None, legend=alt.Legend(orient="bottom")),
        strokeDash=alt.StrokeDash("setup:N", title=None),
        tooltip=["setup:N", "metric:N", "rate_per_s:Q", alt.Tooltip("seconds:Q", format=".3g")])
    good = alt.Chart(_data("good")).mark_line(point=True).encode(
        x=x, y=alt.Y("value:Q", title="requests/s"), color=alt.Color("metric:N", title=None),
        strokeDash=alt.StrokeDash("setup:N", title=None),
        tooltip=["setup:N", "metric:N", "rate_per_s:Q", alt.Tooltip("value:Q", format=".2f")])
    return alt.hconcat(lat.properties(width=280, height=240), good.properties(width=240, height=240)).to_dict()


def serving_chart(sweep: pd.DataFrame, title: str = "") -> Figure:
    """TTFT and TBT percentiles against offered load (log scale), and throughput against goodput
    (requests/s meeting the SLOs). ``sweep``: rows of ``serving.load_sweep`` with a ``setup`` column."""
    s = sweep if "setup" in sweep else sweep.assign(setup="")
    lat = s.melt(id_vars=["setup", "rate_per_s"], value_vars=["ttft_p50_s", "ttft_p99_s", "tbt_p99_s"],
                 var_name="metric", value_name="seconds")
    lat["metric"] = lat["metric"].map({"ttft_p50_s": "TTFT p50", "ttft_p99_s": "TTFT p99", "tbt_p99_s": "TBT p99"})
    good = s.melt(id_vars=["setup", "rate_per_s"], value_vars=["request_rate", "goodput_req_s"],
                  var_name="metric", value_name="value")
    good["metric"] = good["metric"].map({"request_rate": "served", "goodput_req_s": "goodput (within SLOs)"})
    return Figure.from_template(_template_serving(), title=title, lat=lat[lat["seconds"] > 0], good=good)


# -- token economics (notebook 08) --------------------------------------------------------------------
@functools.lru_cache(maxsize=1)
def _template_tornado() -> dict:
    base = alt.Chart(_data("bars"))
    bar = base.mark_bar().encode(
        y=alt.Y("input:N", sort=None, title=None), x=alt.X("lo:Q", title="result"), x2="hi:Q",
        color=alt.value("#9ecae1"),
        tooltip=["input:N", alt.Tooltip("low:Q", format=",.3g", title="input low"),
                 alt.Tooltip("high:Q", format=",.3g", title="input high"),
                 alt.Tooltip("output_low:Q", format=",.3g"), alt.Tooltip("output_high:Q", format=",.3g")])
    rule = alt.Chart(_data("base")).mark_rule(color="black").encode(x="x:Q")
    return alt.layer(bar, rule).properties(width=WIDTH - 80, height=alt.Step(24)).to_dict()


def tornado_chart(df: pd.DataFrame, title: str = "") -> Figure:
    """A tornado chart: for each input, the result's range as the input goes from low to high."""
    d = df.assign(lo=df[["output_low", "output_high"]].min(axis=1), hi=df[["output_low", "output_high"]].max(axis=1))
    return Figure.from_template(_template_tornado(), title=title,
                                bars=d[["input", "low", "high", "output_low", "output_high", "lo", "hi"]],
                                base=pd.DataFrame({"x": [float(df["base_output"].iloc[0])]}))


@functools.lru_cache(maxsize=1)
def _template_payback() -> dict:
    line = alt.Chart(_data("flow")).mark_line().encode(
        x=alt.X("month:Q", title="month"), y=alt.Y("cumulative_usd:Q", title="expected cumulative net (USD)"),
        color=alt.Color("case:N", title=None, legend=alt.Legend(orient="bottom")),
        tooltip=["case:N", "month:Q", alt.Tooltip("cumulative_usd:Q", format=",.0f")])
    zero = alt.Chart(_data("zero")).mark_rule(color="black", strokeDash=[4, 3]).encode(y="y:Q")
    return alt.layer(line, zero).properties(width=WIDTH, height=260).to_dict()


def payback_chart(flows: pd.DataFrame, title: str = "") -> Figure:
    """Expected cumulative net of a migration by month, one line per case; it pays back where a line
    crosses zero. ``flows``: case, month, cumulative_usd."""
    return Figure.from_template(_template_payback(), title=title, flow=flows[["case", "month", "cumulative_usd"]],
                                zero=pd.DataFrame({"y": [0.0]}))


@functools.lru_cache(maxsize=1)
def _template_fleet() -> dict:
    return alt.Chart(_data("hours")).mark_bar().encode(
        y=alt.Y("strategy:N", title=None, sort=None), x=alt.X("usd_per_month:Q", title="USD per month", stack="zero"),
        color=alt.Color("pool:N", title="pool"),
        tooltip=["strategy:N", "workload:N", "pool:N", alt.Tooltip("usd_per_month:Q", format=",.0f")],
    ).properties(width=WIDTH - 80, height=alt.Step(28)).to_dict()


def fleet_chart(df: pd.DataFrame, title: str = "") -> Figure:
    """Monthly cost of each strategy, stacked by pool. ``df``: strategy, workload, pool, usd_per_month."""
    return Figure.from_template(_template_fleet(), title=title, hours=df[["strategy", "workload", "pool", "usd_per_month"]])


# -- designing a chip (notebook 09) -------------------------------------------------------------------
@functools.lru_cache(maxsize=1)
def _template_design_map() -> dict:
    base = alt.Chart(_data("cells")).mark_rect().encode(
        x=alt.X("matrix_mm2:O", title="matrix-unit area (mm²)", axis=alt.Axis(labelOverlap=True)),
        y=alt.Y("n_hbm_stacks:O", title="HBM stacks", sort="descending"),
        color=alt.Color("share_of_best:Q", title="share of the best", scale=alt.Scale(scheme="viridis", domain=[0, 1])),
        tooltip=["workload:N", "matrix_mm2:Q", "n_hbm_stacks:Q", alt.Tooltip("sram_mb:Q", format=".0f", title="best SRAM (MB)"),
                 alt.Tooltip("tokens_per_s_per_chip:Q", format=",.0f"), alt.Tooltip("share_of_best:Q", format=".0%"), "limit:N"])
    best = alt.Chart(_data("best")).mark_point(shape="diamond", size=160, color="white", filled=True, stroke="black").encode(
        x="matrix_mm2:O", y=alt.Y("n_hbm_stacks:O", sort="descending"), tooltip=["design:N"])
    panels = [alt.layer(base.transform_filter(alt.datum.workload == w),
                        best.transform_filter(alt.datum.workload == w)).properties(width=260, height=200, title=w)
              for w in ("training", "decode")]
    return alt.hconcat(*panels).resolve_scale(color="shared").to_dict()


def design_map_chart(cells: pd.DataFrame, best: pd.DataFrame, title: str = "") -> Figure:
    """For each workload, throughput of every (matrix area, HBM stacks) split as a share of that
    workload's best, the best SRAM at each cell; diamonds mark the optima."""
    spec_cells = cells[["workload", "matrix_mm2", "n_hbm_stacks", "sram_mb", "tokens_per_s_per_chip", "share_of_best", "limit"]]
    spec = Figure.from_template(_template_design_map(), title=title, cells=spec_cells,
                                best=best[["workload", "matrix_mm2", "n_hbm_stacks", "design"]])
    return spec
