"""Charts of mixture-of-experts routing and all-to-all (notebook 05)."""

from __future__ import annotations

import altair as alt
import pandas as pd

from accelbook.specs.catalogue import catalogue_cache

from .base import WIDTH, Figure, named_data

# -- MoE all-to-all (notebook 05) ----------------------------------------------------------------------
#: legend entries of the MoE load chart (what each bar colour means)
OVERLOADED, BALANCED = "more than 20 % above the mean", "within 20 % of the mean"
KEPT, DROPPED = "processed", "dropped (over capacity)"


@catalogue_cache(maxsize=1)
def _template_moe_loads() -> dict:
    legend = alt.Legend(orient="bottom", direction="vertical")
    chip = alt.Chart(named_data("chips")).transform_calculate(
        state=f"datum.load > datum.mean * 1.2 ? '{OVERLOADED}' : '{BALANCED}'").mark_bar().encode(
        x=alt.X("chip:O", title="chip (expert-parallel rank)", axis=alt.Axis(labels=False, ticks=False)),
        y=alt.Y("load:Q", title="token-expert assignments processed"),
        color=alt.Color("state:N", title="chip load (dashed: the mean)", legend=legend,
                        scale=alt.Scale(domain=[BALANCED, OVERLOADED], range=["#1f77b4", "#d62728"])),
        tooltip=["chip:O", alt.Tooltip("load:Q", format=",.0f"), alt.Tooltip("experts:Q", title="experts held")])
    mean = alt.Chart(named_data("chips")).mark_rule(color="black", strokeDash=[4, 3]).encode(y="mean(mean):Q")
    # routed = processed + dropped, stacked: the pink top of a bar is what the capacity turned away
    hist = alt.Chart(named_data("experts")).transform_calculate(
        **{"kept": "datum.routed - datum.dropped"}).transform_fold(["kept", "dropped"], as_=["part", "tokens"]).transform_calculate(
        part=f"datum.part == 'kept' ? '{KEPT}' : '{DROPPED}'").mark_bar().encode(
        x=alt.X("expert:O", title="expert (0 = most popular)", axis=alt.Axis(labels=False, ticks=False)),
        y=alt.Y("tokens:Q", title="routed to the expert", stack="zero"),
        color=alt.Color("part:N", title="routed tokens", legend=legend,
                        scale=alt.Scale(domain=[KEPT, DROPPED], range=["#9467bd", "#ff9896"])),
        order=alt.Order("part:N", sort="descending"),
        tooltip=["expert:O", alt.Tooltip("routed:Q", format=",.0f"), alt.Tooltip("dropped:Q", format=",.0f")])
    return alt.hconcat(alt.layer(chip, mean).properties(width=300, height=220),
                       hist.properties(width=300, height=220)).resolve_scale(color="independent").to_dict()


def moe_load_chart(chips: pd.DataFrame, experts: pd.DataFrame, title: str = "") -> Figure:
    """Load per chip (red: more than 20% above the mean; dashed: the mean) and per expert (routed,
    stacked as processed and, in pink, dropped at the capacity), each colour in a legend.
    ``chips``: chip, load, mean, experts; ``experts``: expert, routed, dropped."""
    return Figure.from_template(_template_moe_loads(), title=title, chips=chips[["chip", "load", "mean", "experts"]],
                                experts=experts[["expert", "routed", "dropped"]])


@catalogue_cache(maxsize=1)
def _template_crossover() -> dict:
    x = alt.X("tokens_per_chip:Q", scale=alt.Scale(type="log", base=2), title="tokens per chip per step")
    line = alt.Chart(named_data("sweep")).mark_line().encode(
        x=x, y=alt.Y("time_us:Q", scale=alt.Scale(type="log"), title="dispatch + combine time (µs)"),
        color=alt.Color("network:N", title=None, legend=alt.Legend(orient="bottom", columns=2)),
        tooltip=["network:N", alt.Tooltip("tokens_per_chip:Q", format=",.0f"), alt.Tooltip("time_us:Q", format=",.1f"),
                 "bound:N", alt.Tooltip("peers:Q", format=",.0f"), "diameter:Q"])
    pts = alt.Chart(named_data("sweep")).mark_point(filled=True, size=30).encode(
        x=x, y="time_us:Q", color="network:N", shape=alt.Shape("bound:N", title="bound"))
    here = alt.Chart(named_data("here")).mark_rule(strokeDash=[4, 4], color="black").encode(x=x)
    return alt.layer(line, pts, here).properties(width=WIDTH, height=300).to_dict()


def crossover_chart(sweep: pd.DataFrame, tokens_per_chip: float, title: str = "") -> Figure:
    """All-to-all time against tokens per chip, one line per network, latency- or bandwidth-bound
    points marked, the chosen token count dashed."""
    s = sweep.assign(time_us=sweep["time_s"] * 1e6)
    return Figure.from_template(_template_crossover(), title=title,
                                sweep=s[["network", "tokens_per_chip", "time_us", "bound", "peers", "diameter"]],
                                here=pd.DataFrame({"tokens_per_chip": [float(tokens_per_chip)]}))
