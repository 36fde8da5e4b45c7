"""Charts of cost: training cost per chip, tornado, payback, hybrid fleet (notebooks 01, 08)."""

from __future__ import annotations

import altair as alt
import pandas as pd

from accelbook.specs.catalogue import catalogue_cache

from .base import WIDTH, Figure, message_figure, named_data


# -- training cost -------------------------------------------------------------------------------
@catalogue_cache(maxsize=1)
def _template_training_cost() -> dict:
    colour = alt.Color("kind:N", title="kind")
    tps = alt.Chart(named_data("cost")).mark_bar().encode(
        y=alt.Y("chip:N", sort="-x", title=None), color=colour,
        x=alt.X("tokens_per_s_per_chip:Q", title="training tokens/s per chip"),
        tooltip=["chip:N", alt.Tooltip("tokens_per_s_per_chip:Q", format=",.0f")])
    usd = alt.Chart(named_data("cost")).mark_bar().encode(
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


# -- token economics (notebook 08) --------------------------------------------------------------------
@catalogue_cache(maxsize=8)
def _template_tornado(x_title: str) -> dict:
    base = alt.Chart(named_data("bars"))
    bar = base.mark_bar().encode(
        y=alt.Y("input:N", sort=None, title=None), x=alt.X("lo:Q", title=x_title), x2="hi:Q",
        color=alt.value("#9ecae1"),
        tooltip=["input:N", alt.Tooltip("low:Q", format=",.3g", title="input low"),
                 alt.Tooltip("high:Q", format=",.3g", title="input high"),
                 alt.Tooltip("output_low:Q", format=",.3g"), alt.Tooltip("output_high:Q", format=",.3g")])
    rule = alt.Chart(named_data("base")).mark_rule(color="black").encode(x="x:Q")
    return alt.layer(bar, rule).properties(width=WIDTH - 80, height=alt.Step(24)).to_dict()


def tornado_chart(df: pd.DataFrame, title: str = "", x_title: str = "result") -> Figure:
    """A tornado chart: for each input, the result's range as the input goes from low to high.

    ``x_title`` names the result with its unit (the x axis); ``df["input"]`` is shown as given, so
    pass the inputs' names in words."""
    d = df.assign(lo=df[["output_low", "output_high"]].min(axis=1), hi=df[["output_low", "output_high"]].max(axis=1))
    return Figure.from_template(_template_tornado(x_title), title=title,
                                bars=d[["input", "low", "high", "output_low", "output_high", "lo", "hi"]],
                                base=pd.DataFrame({"x": [float(df["base_output"].iloc[0])]}))


@catalogue_cache(maxsize=1)
def _template_payback() -> dict:
    line = alt.Chart(named_data("flow")).mark_line().encode(
        x=alt.X("month:Q", title="month"), y=alt.Y("cumulative_usd:Q", title="expected cumulative net (USD)"),
        color=alt.Color("case:N", title=None, legend=alt.Legend(orient="bottom")),
        tooltip=["case:N", "month:Q", alt.Tooltip("cumulative_usd:Q", format=",.0f")])
    zero = alt.Chart(named_data("zero")).mark_rule(color="black", strokeDash=[4, 3]).encode(y="y:Q")
    return alt.layer(line, zero).properties(width=WIDTH, height=260).to_dict()


def payback_chart(flows: pd.DataFrame, title: str = "") -> Figure:
    """Expected cumulative net of a migration by month, one line per case; it pays back where a line
    crosses zero. ``flows``: case, month, cumulative_usd."""
    return Figure.from_template(_template_payback(), title=title, flow=flows[["case", "month", "cumulative_usd"]],
                                zero=pd.DataFrame({"y": [0.0]}))


@catalogue_cache(maxsize=1)
def _template_fleet() -> dict:
    return alt.Chart(named_data("hours")).mark_bar().encode(
        y=alt.Y("strategy:N", title=None, sort=None), x=alt.X("usd_per_month:Q", title="USD per month", stack="zero"),
        color=alt.Color("pool:N", title="pool"),
        tooltip=["strategy:N", "workload:N", "pool:N", alt.Tooltip("usd_per_month:Q", format=",.0f")],
    ).properties(width=WIDTH - 80, height=alt.Step(28)).to_dict()


def fleet_chart(df: pd.DataFrame, title: str = "") -> Figure:
    """Monthly cost of each strategy, stacked by pool. ``df``: strategy, workload, pool, usd_per_month."""
    return Figure.from_template(_template_fleet(), title=title, hours=df[["strategy", "workload", "pool", "usd_per_month"]])
