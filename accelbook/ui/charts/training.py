"""Charts of distributed training: step-time and memory breakdowns, scaling, the model against published runs and
the waterfall of one run's error (notebook 04)."""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from accelbook.specs.catalogue import catalogue_cache
from accelbook.training import MEMORY_LABELS, TIME_LABELS

from .base import WIDTH, Figure, named_data

# -- distributed training (notebook 04) ---------------------------------------------------------------
# The components and their labels are the model's (``training.TIME_LABELS``, ``MEMORY_LABELS``: result
# field -> label, in the step's order); only the colours are chosen here, by field.
TIME_COLOURS_BY_FIELD = {"t_gemm_s": "#1f77b4", "t_attention_s": "#6baed6", "t_elementwise_s": "#9ecae1",
                         "t_recompute_s": "#c6dbef", "t_lm_head_s": "#17becf", "t_tp_comm_s": "#d62728",
                         "t_cp_comm_s": "#ff9896", "t_ep_comm_s": "#e377c2", "t_pp_comm_s": "#8c564b",
                         "t_bubble_s": "#ff7f0e", "t_dp_comm_s": "#bcbd22", "t_dp_bucket_s": "#dbdb8d",
                         "t_optimizer_s": "#7f7f7f", "t_permute_s": "#f7b6d2", "t_imbalance_s": "#c5b0d5",
                         "t_overlap_s": "#9edae5", "t_stage_imbalance_s": "#e7969c"}
MEM_COLOURS_BY_FIELD = {"mem_weights_bytes": "#2ca02c", "mem_grads_bytes": "#98df8a",
                        "mem_optimizer_bytes": "#9467bd", "mem_activations_bytes": "#ffbb78",
                        "mem_logits_bytes": "#c49c94"}
#: colours for a time term not yet given one above (the chart still draws; the test asks for a colour)
SPARE_COLOURS = ("#393b79", "#637939", "#8c6d31", "#843c39", "#7b4173", "#5254a3", "#8ca252", "#bd9e39")
TIME_ORDER = list(TIME_LABELS.values())
TIME_COLOUR_LIST = [TIME_COLOURS_BY_FIELD.get(k, SPARE_COLOURS[i % len(SPARE_COLOURS)]) for i, k in enumerate(TIME_LABELS)]
TIME_COLOURS = alt.Scale(domain=TIME_ORDER, range=TIME_COLOUR_LIST)
MEM_ORDER = list(MEMORY_LABELS.values())
#: a component label's place in TIME_ORDER and MEM_ORDER (``list.index``: its first)
_TIME_RANK = {c: TIME_ORDER.index(c) for c in TIME_ORDER}
_MEM_RANK = {c: MEM_ORDER.index(c) for c in MEM_ORDER}
MEM_COLOURS = alt.Scale(domain=MEM_ORDER, range=[MEM_COLOURS_BY_FIELD[k] for k in MEMORY_LABELS])


@catalogue_cache(maxsize=1)
def _template_step() -> dict:
    time_bar = alt.Chart(named_data("time")).mark_bar().encode(
        y=alt.Y("layout:N", title=None, sort=None, axis=alt.Axis(labelLimit=420)),
        x=alt.X("seconds:Q", title="time per training step (s)", stack="zero"),
        color=alt.Color("component:N", scale=TIME_COLOURS, title="time", sort=TIME_ORDER,
                        legend=alt.Legend(orient="right")),
        order=alt.Order("order:Q"),
        tooltip=["layout:N", "component:N", alt.Tooltip("seconds:Q", format=".3g"), alt.Tooltip("share:Q", format=".1%")],
    ).properties(width=WIDTH - 60, height=alt.Step(26))
    mem_bar = alt.Chart(named_data("memory")).mark_bar().encode(
        y=alt.Y("layout:N", title=None, sort=None, axis=alt.Axis(labelLimit=420)),
        x=alt.X("gb:Q", title="memory per chip (GB)", stack="zero"),
        color=alt.Color("component:N", title="memory", sort=MEM_ORDER, scale=MEM_COLOURS),
        order=alt.Order("order:Q"),
        tooltip=["layout:N", "component:N", alt.Tooltip("gb:Q", format=".1f")],
    )
    cap = alt.Chart(named_data("capacity")).mark_rule(color="black", strokeDash=[5, 3], size=2).encode(
        x="gb:Q", tooltip=[alt.Tooltip("gb:Q", format=".1f", title="usable GB")])
    mem = alt.layer(mem_bar, cap).properties(width=WIDTH - 60, height=alt.Step(26))
    return alt.vconcat(time_bar, mem).resolve_scale(color="independent").to_dict()


def step_chart(time: pd.DataFrame, memory: pd.DataFrame, capacity_gb: float, title: str = "") -> Figure:
    """Stacked bars, one per layout: where a step's time goes, and what fills each chip's memory
    against the usable capacity (dashed line).

    ``time``: layout, component, seconds, share; ``memory``: layout, component, bytes; a component
    is a display label of ``training.TIME_LABELS`` or ``MEMORY_LABELS``.
    """
    keep = time["seconds"].to_numpy() > 0
    comp = time["component"].to_numpy()[keep]
    t = pd.DataFrame({"layout": time["layout"].to_numpy()[keep], "component": comp,
                      "seconds": time["seconds"].to_numpy()[keep], "share": time["share"].to_numpy()[keep],
                      "order": np.array([_TIME_RANK[c] for c in comp], dtype=np.int64)})
    keep = memory["bytes"].to_numpy() > 0
    comp = memory["component"].to_numpy()[keep]
    m = pd.DataFrame({"layout": memory["layout"].to_numpy()[keep], "component": comp,
                      "gb": memory["bytes"].to_numpy()[keep] / 1e9,
                      "order": np.array([_MEM_RANK[c] for c in comp], dtype=np.int64)})
    return Figure.from_template(_template_step(), title=title, time=t, memory=m,
                                capacity=pd.DataFrame({"gb": [capacity_gb]}))


@catalogue_cache(maxsize=1)
def _template_scaling() -> dict:
    x = alt.X("n_chips:Q", scale=alt.Scale(type="log", base=2), title="chips")
    # from 0, so that a 1 % loss looks like 1 % (an auto-zoomed axis made 0.02 % fill the chart)
    y = alt.Y("efficiency:Q", title="scaling efficiency (tokens/s per chip ÷ smallest)",
              scale=alt.Scale(domainMin=0), axis=alt.Axis(format="%"))
    tip = ["system:N", "n_chips:Q", alt.Tooltip("efficiency:Q", format=".2%"), alt.Tooltip("mfu:Q", format=".1%"),
           alt.Tooltip("mfu_flag:N", title="⚑ MFU above the published maximum"),
           alt.Tooltip("comm_share:Q", format=".1%", title="comm + bubble share"), "layout:N",
           alt.Tooltip("efficiency_note:N", title="above 100 % because")]
    data = named_data("scaling")
    eff = alt.Chart(data).mark_line(point=True).encode(
        x=x, y=y, color=alt.Color("system:N", title=None, legend=alt.Legend(orient="bottom")), tooltip=tip)
    ideal = alt.Chart(data).mark_rule(color="black", strokeDash=[4, 3], opacity=0.5).encode(y=alt.datum(1))
    # every point above 1 is ringed, and the largest such point of each system says why
    above = eff.mark_point(size=140, shape="diamond", filled=False, strokeWidth=2).transform_filter(
        "datum.efficiency > 1")
    why = alt.Chart(named_data("notes")).mark_text(align="left", baseline="top", fontSize=9, lineBreak="\n").encode(
        x=alt.value(6), y=alt.Y("y_px:Q", scale=None), text="text:N", color=alt.Color("system:N", title=None))
    comm = alt.Chart(data).mark_line(point=True, strokeDash=[4, 2]).encode(
        x=x, y=alt.Y("comm_share:Q", title="share of the step: exposed comm + bubble", axis=alt.Axis(format="%")),
        color=alt.Color("system:N", title=None),
        tooltip=["system:N", "n_chips:Q", alt.Tooltip("comm_share:Q", format=".1%"), "layout:N"])
    left = alt.layer(eff, ideal, above, why).properties(width=300, height=240)
    return alt.hconcat(left, comm.properties(width=300, height=240)).to_dict()


def scaling_chart(df: pd.DataFrame, title: str = "") -> Figure:
    """Scaling efficiency (axis from 0, dashed line at 100 %) and the communication share against chip
    count, one line per system. A point above 100 % is ringed and labelled with its reason
    (``efficiency_note``, from :func:`accelbook.training.scaling`); a frame without that column has none. An MFU
    above the highest MFU published on its chip family (``mfu_flag``, :func:`accelbook.training.mfu_flags`) says
    so in the tooltip beside the MFU; the chart plots efficiency, not MFU, so no point is drawn differently."""
    if "efficiency_note" not in df:
        df = df.assign(efficiency_note="")
    if "mfu_flag" not in df:
        df = df.assign(mfu_flag="")
    cols = ["system", "n_chips", "efficiency", "efficiency_note", "mfu", "mfu_flag", "comm_share", "layout"]
    # the reason of each system's largest point above 100 %, written in the empty lower half
    above = np.flatnonzero(df["efficiency"].to_numpy() > 1)
    last = above[largest_per_system(df["system"].to_numpy()[above], df["n_chips"].to_numpy()[above])]
    systems, why = df["system"].to_numpy()[last], df["efficiency_note"].to_numpy()[last]
    notes = pd.DataFrame({"system": systems, "y_px": 130 + 26 * np.arange(len(last)),
                          "text": [f"{s} above 100 %:\n{n.removeprefix('superlinear: ')}" for s, n in zip(systems, why)]})
    return Figure.from_template(_template_scaling(), title=title, scaling=df[cols], notes=notes)


def largest_per_system(system: np.ndarray, n_chips: np.ndarray) -> np.ndarray:
    """The positions of each system's row at its largest chip count, ordered by that count: what
    ``df.sort_values("n_chips").groupby("system").tail(1)`` keeps, in its order (the same quicksort, so
    systems tied at a count come in the order it leaves them)."""
    order = np.argsort(n_chips, kind="quicksort")
    last = {s: i for i, s in enumerate(system[order])}
    return order[sorted(last.values())]


@catalogue_cache(maxsize=1)
def _template_validation() -> dict:
    base = alt.Chart(named_data("runs"))
    band = alt.Chart(named_data("band")).mark_area(opacity=0.15, color="#2ca02c").encode(
        x=alt.X("x:Q"), y="lo:Q", y2="hi:Q")
    diag = alt.Chart(named_data("band")).mark_line(color="black", strokeDash=[4, 3]).encode(x="x:Q", y="x:Q")
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


# -- the waterfall of one published run (training.waterfall) ------------------------------------------
#: the band the validation chart shades, ±15 % around the reported value
BAND = 0.15
WATERFALL_EXTRA = {"ideal": ("ideal: model FLOPs at peak", "#4d4d4d"), "rest": ("rest of the step", "#bdbdbd")}


@catalogue_cache(maxsize=1)
def _template_waterfall() -> dict:
    labels = [WATERFALL_EXTRA["ideal"][0], *TIME_ORDER, WATERFALL_EXTRA["rest"][0]]
    colours = [WATERFALL_EXTRA["ideal"][1], *TIME_COLOUR_LIST, WATERFALL_EXTRA["rest"][1]]
    x = alt.X("error:Q", title="predicted ÷ reported − 1, in the authors' metric", axis=alt.Axis(format="+%"))
    y = alt.Y("term:N", sort=None, title=None, axis=alt.Axis(labelLimit=260))
    ref = named_data("reference")
    band = alt.Chart(ref).mark_rect(color="#2ca02c", opacity=0.15).encode(x="lo:Q", x2="hi:Q")
    rule = alt.Chart(ref).mark_rule(color="black", size=2).encode(
        x=alt.X("reported_error:Q"), tooltip=[alt.Tooltip("label:N", title="rule")])
    bars = alt.Chart(named_data("bars")).mark_bar(height=14).encode(
        y=y, x=x, x2="start:Q",
        color=alt.Color("term:N", scale=alt.Scale(domain=labels, range=colours), legend=None),
        tooltip=["term:N", alt.Tooltip("seconds:Q", format=".3g", title="adds (s)"),
                 alt.Tooltip("cumulative_s:Q", format=".3g", title="step so far (s)"),
                 alt.Tooltip("predicted:Q", format=".4g"), alt.Tooltip("reported:Q", format=".4g"),
                 alt.Tooltip("error:Q", format="+.1%"), "note:N"])
    text = alt.Chart(named_data("bars")).mark_text(align="left", dx=4, fontSize=10).encode(
        y=y, x=alt.X("right:Q"), text=alt.Text("error:Q", format="+.0%"))
    return alt.layer(band, rule, bars, text).properties(width=WIDTH - 120, height=alt.Step(20)).to_dict()


def waterfall_chart(df: pd.DataFrame, title: str | None = None) -> Figure:
    """One published run's error built up term by term (``training.waterfall``): each bar runs from the
    error before a term to the error after it; the first from 0 to the error at the ideal step time. The
    black rule is the reported value (0 %), the green band ±15 %. Terms that add no time are left out.

    ``df``: one run's rows, with term, seconds, cumulative_s, predicted, reported, error (and note).
    """
    if df["run"].nunique() != 1:
        raise ValueError(f"waterfall_chart draws one run; got {df['run'].nunique()}: filter the table first")
    d = df.sort_values("step")
    d = d.assign(start=d["error"].shift(1, fill_value=0.0), note=d["note"] if "note" in d else "")
    d = d[(d["step"] == d["step"].min()) | (d["seconds"] != 0)]
    d = d.assign(right=d[["start", "error"]].max(axis=1))
    cols = ["term", "seconds", "cumulative_s", "predicted", "reported", "error", "start", "right", "note"]
    reference = pd.DataFrame({"reported_error": [0.0], "lo": [-BAND], "hi": [BAND],
                              "label": [f"reported: {d['reported'].iloc[0]:.4g} ({d['metric'].iloc[0]})"
                                        if "metric" in d else "reported"]})
    return Figure.from_template(_template_waterfall(), title=d["run"].iloc[0] if title is None else title,
                                bars=d[cols], reference=reference)
