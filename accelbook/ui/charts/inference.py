"""Charts of inference: batch sweeps, the throughput-interactivity frontier, serving under load (notebooks 06, 07).

A point whose per-user speed is out of the model's reach (a non-empty ``flag``, from
:func:`accelbook.inference.dataflow.plausibility`) is drawn hollow and grey, with the reason in its tooltip
and in a note under the chart, never as if it were real."""

from __future__ import annotations

import textwrap

import altair as alt
import numpy as np
import pandas as pd

from accelbook.specs.catalogue import catalogue_cache

from .base import WIDTH, Figure, named_data

# -- inference (notebooks 06 and 07) ---------------------------------------------------------------
OUT_OF_REACH = "out of the model's reach: "
#: characters per line of the note under a chart: its 11 px text is about 4.7 px a character (measured on the
#: browser test's screenshots, where 110 ran 50 px past the chart), so 96 stay inside its WIDTH of 480 px
NOTE_WIDTH = int(WIDTH // 5)


def _note_chart() -> alt.Chart:
    """The note under a chart: one text line per row of the ``note`` dataset (``i``, ``line``)."""
    return alt.Chart(named_data("note")).mark_text(align="left", baseline="top", fontSize=11, color="#555").encode(
        x=alt.value(0), y=alt.Y("i:O", axis=None), text="line:N").properties(width=WIDTH, height=alt.Step(14))


def flag_note(df: pd.DataFrame, label: str = "system") -> pd.DataFrame:
    """The note's lines: for each ``label`` with flagged points, that its hollow points are out of the model's
    reach and why (the reason of its fastest flagged point), wrapped to ``NOTE_WIDTH`` characters; one line
    saying all points are real otherwise."""
    lines = []
    flag = _flags(df)
    out = flag != ""
    if out.any():
        keys, speed, why = df[label].to_numpy(dtype=object)[out], df["tokens_per_s_per_user"].to_numpy(float)[out], flag[out]
        for key in sorted(set(keys)):
            mine = np.flatnonzero(keys == key)
            fastest = mine[np.argmax(speed[mine])]           # the first of the fastest, as idxmax takes
            lines += textwrap.wrap(f"{key}: hollow grey points are out of the model's reach ({len(mine)} of them): "
                                   f"{why[fastest].removeprefix(OUT_OF_REACH)}", NOTE_WIDTH, subsequent_indent="    ")
    else:
        lines = ["every point is within the model's reach (no flag)"]
    return pd.DataFrame({"i": range(len(lines)), "line": lines})


def _flags(df: pd.DataFrame) -> np.ndarray:
    """Each point's ``flag`` (the reason it is out of the model's reach), ``""`` where it has none."""
    return df["flag"].fillna("").to_numpy(dtype=object) if "flag" in df else np.full(len(df), "", dtype=object)


def _with_flags(df: pd.DataFrame) -> pd.DataFrame:
    flag = _flags(df)
    return df.assign(flag=flag, out_of_reach=flag != "")


@catalogue_cache(maxsize=1)
def _template_batch_sweep() -> dict:
    x = alt.X("batch:Q", scale=alt.Scale(type="log", base=2), title="batch (sequences per replica)",
              axis=alt.Axis(format="~s", labelOverlap="greedy"))
    tip = ["batch:Q", "decode_bound:N", alt.Tooltip("flag:N", title="out of reach")]

    def panel(col: str, title: str, color: str, fmt: str) -> alt.LayerChart:
        base = alt.Chart(named_data("sweep")).encode(x=x, y=alt.Y(f"{col}:Q", title=title),
                                                     tooltip=tip + [alt.Tooltip(f"{col}:Q", format=fmt)])
        line = base.mark_line(color=color).transform_filter("!datum.out_of_reach")
        real = base.mark_point(filled=True, color=color).transform_filter("!datum.out_of_reach")
        hollow = base.mark_point(filled=False, color="#999999").transform_filter("datum.out_of_reach")
        return alt.layer(line, real, hollow, here, cap).properties(width=260, height=220)

    here = alt.Chart(named_data("here")).mark_rule(strokeDash=[4, 4], color="black").encode(x=x)
    cap = alt.Chart(named_data("cap")).mark_rule(color="#ff7f0e", size=2).encode(
        x=x, tooltip=[alt.Tooltip("batch:Q", title="largest batch that fits")])
    charts = alt.hconcat(panel("tpot_ms", "time per output token (ms)", "#d62728", ".2f"),
                         panel("tokens_per_s_per_chip", "output tokens/s per chip", "#1f77b4", ",.0f"))
    return alt.vconcat(charts, _note_chart()).to_dict()


def batch_sweep_chart(sweep: pd.DataFrame, batch: int, max_batch: int, title: str = "") -> Figure:
    """TPOT and tokens/s per chip against batch: the latency-throughput trade of decode; the chosen
    batch dashed, the largest batch that fits in memory in orange; points out of the model's reach hollow
    and grey, the reason in the tooltip and the note under the chart."""
    s = _with_flags(sweep.assign(tpot_ms=sweep["tpot_s"] * 1e3))
    return Figure.from_template(_template_batch_sweep(), title=title,
                                sweep=s[["batch", "tpot_ms", "tokens_per_s_per_chip", "decode_bound", "flag",
                                         "out_of_reach"]],
                                note=flag_note(s.assign(system="this layout")),
                                here=pd.DataFrame({"batch": [float(batch)]}),
                                cap=pd.DataFrame({"batch": [float(max(max_batch, 1))]}))


@catalogue_cache(maxsize=2)
def _template_frontier(per: str) -> dict:
    y = {"chip": ("tokens_per_s_per_chip", "output tokens/s per chip"),
         "kw": ("tokens_per_s_per_kw", "output tokens/s per kW (power ESTIMATE)")}[per]
    x = alt.X("tokens_per_s_per_user:Q", scale=alt.Scale(type="log"), title="tokens/s per user (interactivity)")
    base = alt.Chart(named_data("front")).encode(
        x=x, y=alt.Y(f"{y[0]}:Q", scale=alt.Scale(type="log"), title=y[1]),
        tooltip=["system:N", alt.Tooltip("tokens_per_s_per_user:Q", format=",.0f"), alt.Tooltip(f"{y[0]}:Q", format=",.1f"),
                 "tp:Q", "pp:Q", "batch:Q", alt.Tooltip("flag:N", title="out of reach")])
    color = alt.Color("system:N", title=None, legend=alt.Legend(orient="bottom", columns=2))
    line = base.mark_line(point=True).encode(color=color).transform_filter("!datum.out_of_reach")
    hollow = base.mark_point(filled=False, color="#999999", size=40).transform_filter("datum.out_of_reach")
    hollow_line = base.mark_line(strokeDash=[2, 3], color="#bbbbbb", opacity=0.6).encode(
        detail="system:N").transform_filter("datum.out_of_reach")
    target = alt.Chart(named_data("target")).mark_rule(strokeDash=[4, 4], color="black").encode(x=x)
    return alt.vconcat(alt.layer(line, hollow_line, hollow, target).properties(width=WIDTH, height=300),
                       _note_chart()).to_dict()


def frontier_chart(front: pd.DataFrame, target_tps_user: float, per: str = "chip", title: str = "") -> Figure:
    """Throughput against interactivity, one Pareto front per system; the per-user target dashed; points
    out of the model's reach (``flag``) hollow and grey on a dotted line, the reason in the tooltip and
    in the note under the chart."""
    col = "tokens_per_s_per_chip" if per == "chip" else "tokens_per_s_per_kw"
    keep = front[col].notna().to_numpy()          # the points with a figure to plot (one frame, not four copies)
    flag = _flags(front)
    f = pd.DataFrame({**{c: front[c].to_numpy()[keep] for c in ("system", "tokens_per_s_per_user", col, "tp", "pp", "batch")},
                      "flag": flag[keep], "out_of_reach": flag[keep] != ""})
    return Figure.from_template(_template_frontier(per), title=title, front=f,
                                note=flag_note(f),
                                target=pd.DataFrame({"tokens_per_s_per_user": [float(target_tps_user)]}))


#: the axes of vLLM's and NVIDIA's serving plots: interactivity along x, throughput per GPU up y
INTERACTIVITY_TITLE = "interactivity: output tokens/s per user"
THROUGHPUT_PER_GPU_TITLE = "output tokens/s per GPU (per chip for other accelerators)"


@catalogue_cache(maxsize=1)
def _template_throughput_interactivity() -> dict:
    base = alt.Chart(named_data("points")).encode(
        x=alt.X("tokens_per_s_per_user:Q", title=INTERACTIVITY_TITLE),
        y=alt.Y("tokens_per_s_per_chip:Q", title=THROUGHPUT_PER_GPU_TITLE),
        color=alt.Color("system:N", title=None, legend=alt.Legend(orient="bottom", columns=2)),
        tooltip=["system:N", alt.Tooltip("tokens_per_s_per_user:Q", format=",.0f"),
                 alt.Tooltip("tokens_per_s_per_chip:Q", format=",.0f"), "tp:Q", "batch:Q"])
    # no text label per point: along a front the batches repeat (one run per tensor-parallel degree) and the
    # labels drew over each other; the batch is in the tooltip
    return base.mark_line(point=True).properties(width=WIDTH, height=300).to_dict()


def throughput_interactivity_chart(front: pd.DataFrame, title: str = "") -> Figure:
    """Output tokens/s per GPU (y) against output tokens/s per user (x), linear axes, one line per
    ``system``, each point's batch (the concurrency of vLLM's and NVIDIA's plots) in its tooltip: the
    serving engineer's view of :func:`accelbook.inference.frontier`'s rows (``system``,
    ``tokens_per_s_per_user``, ``tokens_per_s_per_chip``, ``tp``, ``batch``). Points out of the model's
    reach (a ``flag``) are left out: this chart shows only what the model stands behind."""
    keep = (_flags(front) == "") & front["tokens_per_s_per_chip"].notna().to_numpy()
    f = front.loc[keep, ["system", "tokens_per_s_per_user", "tokens_per_s_per_chip", "tp", "batch"]]
    return Figure.from_template(_template_throughput_interactivity(), title=title,
                                points=f.sort_values(["system", "tokens_per_s_per_user"]))


@catalogue_cache(maxsize=1)
def _template_serving() -> dict:
    x = alt.X("rate_per_s:Q", title="offered load (requests/s)")
    lat = alt.Chart(named_data("lat")).mark_line(point=True).encode(
        x=x, y=alt.Y("seconds:Q", scale=alt.Scale(type="log"), title="latency (s)"),
        color=alt.Color("metric:N", title=None, legend=alt.Legend(orient="bottom")),
        strokeDash=alt.StrokeDash("setup:N", title=None),
        tooltip=["setup:N", "metric:N", "rate_per_s:Q", alt.Tooltip("seconds:Q", format=".3g")])
    good = alt.Chart(named_data("good")).mark_line(point=True).encode(
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
