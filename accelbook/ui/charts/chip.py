"""Charts of one chip: rooflines, layer times, peak against bandwidth, systolic dataflows, traces, PE grids, tile efficiency, the chip-design map (notebooks 00-02, 09)."""

from __future__ import annotations

import functools

import altair as alt
import numpy as np
import pandas as pd

from .base import BOUND_COLOURS, HEIGHT, STATUS_SHAPES, WIDTH, Figure, message_figure, named_data


# -- roofline ---------------------------------------------------------------------------------
@functools.lru_cache(maxsize=2)
def _template_roofline(with_ops: bool) -> dict:
    x = alt.X("intensity_flop_per_byte:Q", scale=alt.Scale(type="log"), title="arithmetic intensity (FLOP/byte)")
    y = alt.Y("attainable_tflop_s:Q", scale=alt.Scale(type="log"), title="attainable (TFLOP/s)")
    colour = alt.Color("chip:N", title="chip", legend=alt.Legend(orient="bottom", columns=2, labelLimit=300))
    lines = alt.Chart(named_data("curves")).mark_line(strokeWidth=2).encode(x=x, y=y, color=colour)
    ridges = alt.Chart(named_data("ridges")).mark_rule(strokeDash=[4, 4], opacity=0.6).encode(
        x="ridge_flop_per_byte:Q", color=colour)
    layers = [lines, ridges]
    if with_ops:
        layers.append(alt.Chart(named_data("ops")).mark_point(size=90, filled=True, opacity=0.85).encode(
            x=x, y=y, color=colour, shape=alt.Shape("op:N", title="operation", legend=alt.Legend(orient="bottom", columns=3, labelLimit=260)),
            tooltip=["chip:N", "op:N", alt.Tooltip("intensity_flop_per_byte:Q", format=".3g"),
                     alt.Tooltip("t_us:Q", title="time (µs)", format=".3g"), "bound:N"]))
    return alt.layer(*layers).properties(width=WIDTH, height=HEIGHT).to_dict()


def roofline_chart(curves: pd.DataFrame, ops: pd.DataFrame | None = None, title: str = "") -> Figure:
    """Log-log roofline per chip (lines), its ridge point (dashed rule) and operations (points).

    ``curves``: chip, intensity_flop_per_byte, attainable_flop_s, ridge_flop_per_byte
    (:func:`accelbook.chip.roofline.roofline_curve`). ``ops``: op, chip, intensity_flop_per_byte,
    attainable_flop_s, bound, t_s (:func:`accelbook.chip.roofline.layer_roofline`).
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
    return alt.Chart(named_data("ops")).mark_bar().encode(
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


# -- the catalogue: peak against bandwidth ---------------------------------------------------------
@functools.lru_cache(maxsize=8)
def _template_peak_bandwidth(precision: str) -> dict:
    x = alt.X("bw_tb_s:Q", scale=alt.Scale(type="log", nice=False), title="memory bandwidth (TB/s)")
    y = alt.Y("peak_tflop_s:Q", scale=alt.Scale(type="log", nice=False), title=f"dense {precision} peak (TFLOP/s)")
    lines = alt.Chart(named_data("diagonals")).mark_line(color="grey", strokeDash=[3, 3], opacity=0.5).encode(
        x=x, y=y, detail="I:N")
    line_labels = alt.Chart(named_data("diagonal_labels")).mark_text(
        align="left", dx=4, dy=-4, color="grey", fontSize=10).encode(x=x, y=y, text="I:N")
    pts = alt.Chart(named_data("chips")).mark_point(size=110, filled=True).encode(
        x=x, y=y, color=alt.Color("vendor:N"), shape=alt.Shape("status:N", scale=STATUS_SHAPES),
        tooltip=["name:N", "status:N", alt.Tooltip("peak_tflop_s:Q", format=",.0f"),
                 alt.Tooltip("bw_tb_s:Q", format=".3g"), alt.Tooltip("ridge:Q", format=".0f", title="ridge FLOP/B"),
                 "memory_kind:N"])
    labels = alt.Chart(named_data("labels")).mark_text(align="left", dx=7, dy=-6, fontSize=10).encode(x=x, y=y, text="ids:N")
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


# -- inside the chip (notebook 02) ------------------------------------------------------------------
@functools.lru_cache(maxsize=1)
def _template_dataflows() -> dict:
    base = alt.Chart(named_data("flows")).encode(y=alt.Y("dataflow:N", title=None, sort=["os", "ws", "is"]),
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
    busy = alt.Chart(named_data("trace")).mark_area(opacity=0.5, interpolate="step-after").encode(
        x=alt.X("cycle:Q", title="cycle"), y=alt.Y("busy_pes:Q", title="busy PEs (mean per bin)"))
    cap = alt.Chart(named_data("cap")).mark_rule(strokeDash=[4, 4], color="grey").encode(y="pes:Q")
    ops = alt.Chart(named_data("flow")).mark_line(interpolate="step-after", strokeWidth=1.2).encode(
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
    base = alt.Chart(named_data("pes")).encode(x=alt.X("col:O", title="array column"),
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
    return alt.Chart(named_data("sweep")).mark_line(point=alt.OverlayMarkDef(size=14)).encode(
        x=alt.X(f"{dim}:Q", title=f"{dim} (elements)"),
        y=alt.Y("efficiency_pct:Q", title="share of peak left by shape alone (%)", scale=alt.Scale(domain=[0, 100])),
        color=alt.Color("arch:N", title=None, legend=alt.Legend(orient="bottom", columns=1, labelLimit=500)),
        tooltip=[f"{dim}:Q", "arch:N", alt.Tooltip("efficiency_pct:Q", format=".1f")],
    ).properties(width=WIDTH, height=260).to_dict()


def efficiency_sweep_chart(df: pd.DataFrame, dim: str, title: str = "") -> Figure:
    """GPU and TPU shape efficiency as one GEMM dimension sweeps (rows of tiling.shape_sweep)."""
    d = df[[dim, "arch"]].assign(efficiency_pct=df["efficiency"] * 100)
    return Figure.from_template(_template_sweep(dim), title=title, sweep=d)


# -- designing a chip (notebook 09) -------------------------------------------------------------------
@functools.lru_cache(maxsize=1)
def _template_design_map() -> dict:
    base = alt.Chart(named_data("cells")).mark_rect().encode(
        x=alt.X("matrix_mm2:O", title="matrix-unit area (mm²)", axis=alt.Axis(labelOverlap=True)),
        y=alt.Y("n_hbm_stacks:O", title="HBM stacks", sort="descending"),
        color=alt.Color("share_of_best:Q", title="share of the best", scale=alt.Scale(scheme="viridis", domain=[0, 1])),
        tooltip=["workload:N", "matrix_mm2:Q", "n_hbm_stacks:Q", alt.Tooltip("sram_mb:Q", format=".0f", title="best SRAM (MB)"),
                 alt.Tooltip("tokens_per_s_per_chip:Q", format=",.0f"), alt.Tooltip("share_of_best:Q", format=".0%"), "limit:N"])
    best = alt.Chart(named_data("best")).mark_point(shape="diamond", size=160, color="white", filled=True, stroke="black").encode(
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
