"""Charts of inference: batch sweeps, the throughput-interactivity frontier, serving under load (notebooks 06, 07)."""

from __future__ import annotations

import functools

import altair as alt
import pandas as pd

from .base import WIDTH, Figure, named_data


# -- inference (notebooks 06 and 07) ---------------------------------------------------------------
@functools.lru_cache(maxsize=1)
def _template_batch_sweep() -> dict:
    x = alt.X("batch:Q", scale=alt.Scale(type="log", base=2), title="batch (sequences per replica)",
              axis=alt.Axis(format="~s", labelOverlap="greedy"))
    tpot = alt.Chart(named_data("sweep")).mark_line(point=True, color="#d62728").encode(
        x=x, y=alt.Y("tpot_ms:Q", title="time per output token (ms)"),
        tooltip=["batch:Q", alt.Tooltip("tpot_ms:Q", format=".2f"), "decode_bound:N"])
    tput = alt.Chart(named_data("sweep")).mark_line(point=True, color="#1f77b4").encode(
        x=x, y=alt.Y("tokens_per_s_per_chip:Q", title="output tokens/s per chip"),
        tooltip=["batch:Q", alt.Tooltip("tokens_per_s_per_chip:Q", format=",.0f"), "decode_bound:N"])
    here = alt.Chart(named_data("here")).mark_rule(strokeDash=[4, 4], color="black").encode(x=x)
    cap = alt.Chart(named_data("cap")).mark_rule(color="#ff7f0e", size=2).encode(
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
    line = alt.Chart(named_data("front")).mark_line(point=True).encode(
        x=x, y=alt.Y(f"{y[0]}:Q", scale=alt.Scale(type="log"), title=y[1]),
        color=alt.Color("system:N", title=None, legend=alt.Legend(orient="bottom", columns=2)),
        tooltip=["system:N", alt.Tooltip("tokens_per_s_per_user:Q", format=",.0f"), alt.Tooltip(f"{y[0]}:Q", format=",.1f"),
                 "tp:Q", "pp:Q", "batch:Q"])
    target = alt.Chart(named_data("target")).mark_rule(strokeDash=[4, 4], color="black").encode(x=x)
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
