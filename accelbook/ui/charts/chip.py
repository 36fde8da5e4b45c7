"""Charts of one chip: rooflines, layer times, peak against bandwidth, systolic dataflows, traces, PE grids, tile efficiency, the chip-design map (notebooks 00-02, 09)."""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from accelbook.specs.catalogue import catalogue_cache

from .base import (
    BOUND_COLOURS,
    CHAR_PX,
    HEIGHT,
    LINE_PX,
    STATUS_SHAPES,
    WIDTH,
    Figure,
    log_px,
    log_value,
    message_figure,
    named_data,
    place_labels,
    records,
    stack,
)


# -- roofline ---------------------------------------------------------------------------------
@catalogue_cache(maxsize=2)
def _template_roofline(with_ops: bool) -> dict:
    # the x domain is set per chart to the curves' span (roofline_chart); legends in one column on the
    # right keep the chart inside a notebook's output area
    x = alt.X("intensity_flop_per_byte:Q", scale=alt.Scale(type="log", nice=False),
              title="arithmetic intensity (FLOP/byte)")
    y = alt.Y("attainable_tflop_s:Q", scale=alt.Scale(type="log"), title="attainable (TFLOP/s)")
    colour = alt.Color("chip:N", title="chip", legend=alt.Legend(orient="right", columns=1, labelLimit=190))
    lines = alt.Chart(named_data("curves")).mark_line(strokeWidth=2).encode(x=x, y=y, color=colour)
    ridges = alt.Chart(named_data("ridges")).mark_rule(strokeDash=[4, 4], opacity=0.6).encode(
        x=alt.X("ridge_flop_per_byte:Q", scale=alt.Scale(type="log", nice=False)), color=colour)
    layers = [lines, ridges]
    if with_ops:
        layers.append(alt.Chart(named_data("ops")).mark_point(size=90, filled=True, opacity=0.85).encode(
            x=x, y=y, color=colour, shape=alt.Shape("op:N", title="operation", legend=alt.Legend(orient="right", columns=1, labelLimit=190)),
            tooltip=["chip:N", "op:N", alt.Tooltip("intensity_flop_per_byte:Q", format=".3g"),
                     alt.Tooltip("t_us:Q", title="time (µs)", format=".3g"), "bound:N"]))
    return alt.layer(*layers).properties(width=WIDTH, height=HEIGHT).to_dict()


#: the columns of an operation's row on the roofline (a point) and on the layer-time bars
ROOFLINE_OP_KEYS = ("chip", "op", "intensity_flop_per_byte", "bound", "attainable_tflop_s", "t_us")
LAYER_TIME_KEYS = ("chip", "op", "bound", "t_us")


def _op_rows(ops, keys: tuple[str, ...]) -> list[dict]:
    """Chart rows of ``ops`` (a frame or a dict of columns of :func:`accelbook.chip.roofline.layer_roofline`):
    ``keys`` among :data:`ROOFLINE_OP_KEYS`, FLOP/s in TFLOP/s and seconds in µs."""
    made = {"attainable_tflop_s": lambda: np.asarray(ops["attainable_flop_s"]) / 1e12,
            "t_us": lambda: np.asarray(ops["t_s"]) * 1e6}
    return records(pd.DataFrame({k: made[k]() if k in made else np.asarray(ops[k]) for k in keys}))


def roofline_chart(curves, ops=None, title: str = "") -> Figure:
    """Log-log roofline per chip (lines), its ridge point (dashed rule) and operations (points).

    ``curves``: chip, intensity_flop_per_byte, attainable_flop_s, ridge_flop_per_byte
    (:func:`accelbook.chip.roofline.roofline_curve`). ``ops``: op, chip, intensity_flop_per_byte,
    attainable_flop_s, bound, t_s (:func:`accelbook.chip.roofline.layer_roofline`). Either may be a
    DataFrame or a dict of columns.
    """
    return _roofline_figure(curves, None if ops is None else _op_rows(ops, ROOFLINE_OP_KEYS), title)


def _roofline_figure(curves, op_rows: list[dict] | None, title: str) -> Figure:
    chip, x = np.asarray(curves["chip"]), np.asarray(curves["intensity_flop_per_byte"], dtype=float)
    c = pd.DataFrame({"chip": chip, "intensity_flop_per_byte": x,
                      "attainable_tflop_s": np.asarray(curves["attainable_flop_s"]) / 1e12})
    seen: dict = {}
    for i, name in enumerate(chip):
        seen.setdefault(name, i)
    first = list(seen.values())   # each chip's first row, in order
    ridges = pd.DataFrame({"chip": chip[first], "ridge_flop_per_byte": np.asarray(curves["ridge_flop_per_byte"])[first]})
    frames = {"curves": c, "ridges": ridges}
    if op_rows is not None:
        frames["ops"] = op_rows
    fig = Figure.from_template(_template_roofline(op_rows is not None), title=title, **frames)
    span = [float(x.min()), float(x.max())]
    for layer in fig.spec["layer"]:  # the axis ends where the lines end: nothing drawn past it, no empty decade
        layer["encoding"]["x"]["scale"]["domain"] = span
    return fig


@catalogue_cache(maxsize=1)
def _template_layer_time() -> dict:
    return alt.Chart(named_data("ops")).mark_bar().encode(
        y=alt.Y("op:N", title=None, sort=None),
        x=alt.X("t_us:Q", title="lower-bound time per layer (µs)"),
        color=alt.Color("bound:N", scale=BOUND_COLOURS, title="bound"),
        # the chip's name above its panel, not beside it: the stacked roofline keeps its width
        row=alt.Row("chip:N", title=None, sort=None,
                    header=alt.Header(labelAngle=0, labelOrient="top", labelAnchor="start", labelFontWeight="bold")),
        tooltip=["chip:N", "op:N", alt.Tooltip("t_us:Q", format=".3g"), "bound:N"],
    ).properties(width=WIDTH - 140, height=alt.Step(14)).to_dict()


def layer_time_chart(ops, title: str = "") -> Figure:
    """Lower-bound time of each operation of a layer, one panel per chip, coloured by its bound."""
    return Figure.from_template(_template_layer_time(), title=title, ops=_op_rows(ops, LAYER_TIME_KEYS))


def roofline_and_layer_time_chart(curves, ops, title: str = "") -> Figure:
    """:func:`roofline_chart` above :func:`layer_time_chart` (untitled), the operations' rows made once."""
    rows = _op_rows(ops, ROOFLINE_OP_KEYS)
    bars = Figure.from_template(_template_layer_time(), title="", ops=[{k: r[k] for k in LAYER_TIME_KEYS} for r in rows])
    return stack(_roofline_figure(curves, rows, title), bars)


# -- the catalogue: peak against bandwidth ---------------------------------------------------------
PEAK_BW_SIZE = (WIDTH, HEIGHT + 60)  # plot width and height (px): the labels are placed for this size
#: vendors' colours (Vega's tableau10 and then some), given out in the order of the catalogue's vendor list
VENDOR_COLOURS = ("#4c78a8", "#f58518", "#e45756", "#72b7b2", "#54a24b", "#eeca3b", "#b279a2", "#ff9da6",
                  "#9d755d", "#bcbd22", "#1f77b4", "#17becf")


@catalogue_cache(maxsize=8)
def _template_peak_bandwidth(precision: str) -> dict:
    x = alt.X("bw_tb_s:Q", scale=alt.Scale(type="log", nice=False, zero=False), title="memory bandwidth (TB/s)")
    y = alt.Y("peak_tflop_s:Q", scale=alt.Scale(type="log", nice=False, zero=False),
              title=f"dense {precision} peak (TFLOP/s)")
    lines = alt.Chart(named_data("diagonals")).mark_line(color="grey", strokeDash=[3, 3], opacity=0.5).encode(
        x=x, y=y, detail="I:N")
    line_labels = alt.Chart(named_data("diagonal_labels")).mark_text(
        align="center", baseline="middle", color="grey", fontSize=10).encode(x=x, y=y, text="I:N")
    pts = alt.Chart(named_data("chips")).mark_point(size=110, filled=True).encode(
        x=x, y=y, color=alt.Color("vendor:N"), shape=alt.Shape("status:N", scale=STATUS_SHAPES),
        tooltip=["name:N", "status:N", alt.Tooltip("peak_tflop_s:Q", format=",.0f"),
                 alt.Tooltip("bw_tb_s:Q", format=".3g"), alt.Tooltip("ridge:Q", format=".0f", title="ridge FLOP/B"),
                 "memory_kind:N"])
    # each label sits at its own place (computed in pixels by place_labels), centred there; a label
    # pushed away from its chip by a crowd gets a thin line to it
    lx = alt.X("label_bw:Q", scale=alt.Scale(type="log", nice=False, zero=False))
    ly = alt.Y("label_peak:Q", scale=alt.Scale(type="log", nice=False, zero=False))
    labels = alt.Chart(named_data("labels")).mark_text(align="center", baseline="middle", fontSize=10).encode(
        x=lx, y=ly, text="ids:N")
    leaders = alt.Chart(named_data("leaders")).mark_rule(color="grey", strokeWidth=0.6).encode(
        x=x, y=y, x2="label_bw:Q", y2="label_peak:Q")
    return alt.layer(lines, line_labels, leaders, pts, labels).properties(
        width=PEAK_BW_SIZE[0], height=PEAK_BW_SIZE[1]).to_dict()


def _diagonal_labels(diag: list[dict], xd, yd, chips_px) -> tuple[list[dict], list]:
    """One label per diagonal (``diag``: its two ends, one after the other), on its visible part, where
    it hides no chip and leaves the plot by no pixel (a diagonal too short for that goes unlabelled);
    returns the labels and their boxes (px)."""
    w_px, h_px = PEAK_BW_SIZE
    rows, boxes = [], []
    for a, b in zip(diag[::2], diag[1::2]):
        name = a["I"]
        x0, x1 = log_px([a["bw_tb_s"], b["bw_tb_s"]], xd, w_px)
        y0, y1 = log_px([a["peak_tflop_s"], b["peak_tflop_s"]], yd, h_px, flip=True)
        w, h = CHAR_PX * len(name) + 2, LINE_PX
        length = float(np.hypot(x1 - x0, y1 - y0)) or 1.0
        nx, ny = (y1 - y0) / length, -(x1 - x0) / length  # the normal on the upper-left side of the line
        off = w / 2 * abs(nx) + h / 2 * abs(ny) + 3       # the box clears the line by 3 px
        for f in (0.5, 0.35, 0.65, 0.2, 0.8):
            cx, cy = x0 + f * (x1 - x0) + off * nx, y0 + f * (y1 - y0) + off * ny
            box = (cx - w / 2, cy - h / 2, cx + w / 2, cy + h / 2)
            if box[0] >= 0 and box[2] <= w_px and box[1] >= 0 and box[3] <= h_px and \
                    not any(abs(px - cx) < w / 2 + 6 and abs(py - cy) < h / 2 + 6 for px, py in chips_px):
                rows.append({"I": name, "bw_tb_s": float(log_value(cx, xd, w_px)),
                             "peak_tflop_s": float(log_value(cy, yd, h_px, flip=True))})
                boxes.append(box)
                break
    return rows, boxes


def peak_bandwidth_chart(df: pd.DataFrame, precision: str = "bf16", intensities=(1, 10, 100, 1000),
                         vendors: tuple[str, ...] = ()) -> Figure:
    """Peak FLOP/s against memory bandwidth, one point per chip, with diagonals of constant ridge point.

    ``df``: rows of :func:`accelbook.chips` (``peak_<precision>_flop_s``, ``memory_bw_bytes_per_s``,
    id, name, vendor, status, memory_kind). A chip lies on the diagonal of its ridge point I* = P/B.
    The axes span the chips (×1.5 either way); each chip's label is placed beside it so that no two
    labels overlap and none covers a chip (:func:`place_labels`). ``vendors``: every vendor the filter
    offers, in order; each keeps its colour whichever are shown.
    """
    col = f"peak_{precision}_flop_s"
    # plain lists, not pandas: this runs on every move of the catalogue's filters
    peak_all = df[col].to_numpy(dtype=float)
    bw_all = df["memory_bw_bytes_per_s"].to_numpy(dtype=float)
    ok = np.isfinite(peak_all) & np.isfinite(bw_all)
    if not ok.any():
        return message_figure(f"No chip in the selection publishes a dense {precision} peak.")
    peak, bw = peak_all[ok] / 1e12, bw_all[ok] / 1e12
    text = {c: [str(v) for v in df[c].to_numpy(dtype=object)[ok]] for c in ("id", "name", "vendor", "status", "memory_kind")}
    chips = [{"id": i, "name": n, "vendor": v, "status": s, "memory_kind": k, "peak_tflop_s": float(p),
              "bw_tb_s": float(b), "ridge": float(p / b)}
             for i, n, v, s, k, p, b in zip(*text.values(), peak, bw)]
    xd = (float(bw.min() / 1.5), float(bw.max() * 1.5))
    yd = (float(peak.min() / 1.5), float(peak.max() * 1.5))
    # each diagonal P = I·B, clipped to the box so the axes stay on the chips
    rows = []
    for i in intensities:
        b0, b1 = max(xd[0], yd[0] / i), min(xd[1], yd[1] / i)
        if b0 < b1:
            rows += [{"bw_tb_s": b0, "peak_tflop_s": i * b0, "I": f"I* = {i} FLOP/B"},
                     {"bw_tb_s": b1, "peak_tflop_s": i * b1, "I": f"I* = {i} FLOP/B"}]
    diag = rows
    # chips at the same spot (H100 and H800 differ only in links) share one label
    spots: dict[tuple[float, float], list[str]] = {}
    for c in chips:
        spots.setdefault((c["bw_tb_s"], c["peak_tflop_s"]), []).append(c["id"])
    spots = dict(sorted(spots.items()))
    w_px, h_px = PEAK_BW_SIZE
    px = log_px([b for b, _ in spots], xd, w_px)
    py = log_px([p for _, p in spots], yd, h_px, flip=True)
    diag_labels, taken = _diagonal_labels(diag, xd, yd, list(zip(px, py)))
    ids = [", ".join(v) for v in spots.values()]
    centres = np.array(place_labels(px, py, ids, w_px, h_px, obstacles=taken)).reshape(-1, 2)
    label_bw, label_peak = log_value(centres[:, 0], xd, w_px), log_value(centres[:, 1], yd, h_px, flip=True)
    labels = [{"bw_tb_s": b, "peak_tflop_s": p, "ids": s, "label_bw": float(lb), "label_peak": float(lp)}
              for (b, p), s, lb, lp in zip(spots, ids, label_bw, label_peak)]
    far = np.hypot(centres[:, 0] - px, centres[:, 1] - py) > 40
    fig = Figure.from_template(_template_peak_bandwidth(precision), chips=chips, diagonals=diag,
                               diagonal_labels=diag_labels, labels=labels,
                               leaders=[r for r, f in zip(labels, far) if f])
    for layer in fig.spec["layer"]:  # the same fixed domain on every layer: the labels were placed for it
        for channel, domain in (("x", xd), ("y", yd)):
            if "scale" in layer["encoding"][channel]:
                layer["encoding"][channel]["scale"]["domain"] = list(domain)
        colour = layer["encoding"].get("color")
        if vendors and isinstance(colour, dict) and colour.get("field") == "vendor":
            domain = list(vendors) + sorted(set(text["vendor"]) - set(vendors))
            colour["scale"] = {"domain": domain, "range": [VENDOR_COLOURS[i % len(VENDOR_COLOURS)]
                                                          for i in range(len(domain))]}
            colour["legend"] = {"values": sorted(set(text["vendor"]), key=domain.index)}
    return fig


# -- inside the chip (notebook 02) ------------------------------------------------------------------
@catalogue_cache(maxsize=1)
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


@catalogue_cache(maxsize=1)
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
    """The simulator's per-cycle trace (binned to ``max_points``): busy PEs, operands in, outputs out.
    A bin shows its first cycle and the mean of each column over its cycles."""
    n = len(trace)
    bins = max(1, -(-n // max_points))
    cycle = trace["cycle"].to_numpy()
    keys = cycle // bins
    order = None if np.all(keys[1:] >= keys[:-1]) else np.argsort(keys, kind="stable")   # a trace is in order
    if order is not None:
        keys, cycle = keys[order], cycle[order]
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]]) if n else np.zeros(0, dtype=int)
    counts = np.diff(np.r_[starts, n])

    def mean(col):   # group means as pandas' groupby mean gives them (float64 sums of the column over the bin)
        v = trace[col].to_numpy()
        v = v if order is None else v[order]
        return np.add.reduceat(v, starts, dtype=np.float64) / counts if n else np.zeros(0)

    first = cycle[starts]
    streams = (("ifmap_in", "A in"), ("filter_in", "B in"), ("ofmap_out", "C out"))
    flow = pd.DataFrame({"cycle": np.tile(first, len(streams)),
                         "stream": np.repeat([label for _, label in streams], len(first)),
                         "per_cycle": np.concatenate([mean(col) for col, _ in streams])})
    return Figure.from_template(_template_trace(), title=title,
                                trace=pd.DataFrame({"cycle": first, "busy_pes": mean("busy_pes")}),
                                cap=pd.DataFrame({"pes": [pes]}), flow=flow)


@catalogue_cache(maxsize=2)
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
    grid = alt.layer(*layers).properties(width=360, height=360)
    bar = alt.Chart(named_data("progress")).mark_bar(height=10).encode(
        x=alt.X("start:Q", title="cycle of the whole GEMM", scale=alt.Scale(zero=True)), x2="end:Q",
        color=alt.Color("part:N", scale=alt.Scale(domain=["done", "to come"], range=["#1f77b4", "#dfe7ef"]),
                        title=None, legend=None),
        tooltip=["part:N", "start:Q", "end:Q"]).properties(width=360, height=14)
    return alt.vconcat(grid, bar).resolve_scale(color="independent").to_dict()


def pe_grid_chart(states: pd.DataFrame, title: str = "", cycle: int = 0, total_cycles: int = 1) -> Figure:
    """The array at one cycle: busy, idle or unmapped PEs; on small arrays, the MAC step each does.
    Below it, a bar of the whole GEMM's ``total_cycles`` with the part up to ``cycle`` filled."""
    s = states.assign(state=np.where(states["busy"], "busy", np.where(states["mapped"], "idle", "unmapped")),
                      label=np.where(states["busy"], "k=" + states["step"].astype(str), ""))
    labels = int(states["row"].max() + 1) <= 8 and int(states["col"].max() + 1) <= 8
    cols = ["row", "col", "state", "step", "a", "b", "c", "label"]
    progress = pd.DataFrame({"part": ["done", "to come"], "start": [0, cycle + 1], "end": [cycle + 1, total_cycles]})
    return Figure.from_template(_template_pe_grid(labels), title=title, pes=s[cols], progress=progress)


@catalogue_cache(maxsize=4)
def _template_sweep(dim: str) -> dict:
    x = alt.X(f"{dim}:Q", title=f"{dim} (elements)")
    y = alt.Y("efficiency_pct:Q", title="share of peak left by shape alone (%)", scale=alt.Scale(domain=[0, 100]))
    colour = alt.Color("arch:N", title=None, legend=alt.Legend(orient="bottom", columns=1, labelLimit=500))
    lines = alt.Chart(named_data("sweep")).mark_line(point=alt.OverlayMarkDef(size=14)).encode(
        x=x, y=y, color=colour, tooltip=[f"{dim}:Q", "arch:N", alt.Tooltip("efficiency_pct:Q", format=".1f")])
    rule = alt.Chart(named_data("here")).mark_rule(strokeDash=[4, 4], color="black").encode(x=x)
    dots = alt.Chart(named_data("at")).mark_point(size=90, filled=True, stroke="black").encode(
        x=x, y=y, color=colour, tooltip=[f"{dim}:Q", "arch:N", alt.Tooltip("efficiency_pct:Q", format=".1f")])
    return alt.layer(lines, rule, dots).properties(width=WIDTH, height=260).to_dict()


def efficiency_sweep_chart(df: pd.DataFrame, dim: str, here: float | None = None, title: str = "") -> Figure:
    """GPU and TPU shape efficiency as one GEMM dimension sweeps (rows of tiling.shape_sweep); the
    setting ``here`` of the swept dimension is marked (a dashed rule, and each curve's point on it)."""
    d = df[[dim, "arch"]].assign(efficiency_pct=df["efficiency"] * 100)
    at = d[d[dim] == here] if here is not None else d.iloc[:0]
    h = pd.DataFrame({dim: [] if here is None else [here]})
    return Figure.from_template(_template_sweep(dim), title=title, sweep=d, here=h, at=at)


# -- designing a chip (notebook 09) -------------------------------------------------------------------
@catalogue_cache(maxsize=1)
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
