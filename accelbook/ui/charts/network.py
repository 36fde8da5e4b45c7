"""Charts of interconnects: hop histograms and collective times (notebook 03)."""

from __future__ import annotations

import altair as alt
import pandas as pd

from accelbook.specs.catalogue import catalogue_cache

from .base import WIDTH, Figure, named_data


# -- interconnects (notebook 03) ----------------------------------------------------------------------
@catalogue_cache(maxsize=1)
def _template_hops() -> dict:
    return alt.Chart(named_data("hops")).mark_bar(opacity=0.8).encode(
        x=alt.X("hops:O", title="hops between two chips"),
        y=alt.Y("share_pct:Q", title="share of chip pairs (%)"),
        color=alt.Color("network:N", title=None, legend=alt.Legend(orient="bottom", columns=1, labelLimit=500)),
        xOffset="network:N",
        tooltip=["network:N", "hops:O", alt.Tooltip("share_pct:Q", format=".2f")],
    ).properties(width=WIDTH, height=240).to_dict()


def hop_histogram_chart(df: pd.DataFrame) -> Figure:
    """Share of chip pairs at each hop count, one colour per network (columns network, hops, share)."""
    return Figure.from_template(_template_hops(), hops=df[["network", "hops"]].assign(share_pct=df["share"] * 100))


#: colours of the collectives chart's systems, given out in the order of the dashboard's full list
SERIES_COLOURS = ("#4c78a8", "#f58518", "#54a24b", "#e45756", "#72b7b2", "#b279a2", "#eeca3b", "#9d755d")
MEASURED = "published measurement"


@catalogue_cache(maxsize=2)
def _template_collective(measured: bool) -> dict:
    x = alt.X("size_mib:Q", scale=alt.Scale(type="log", nice=False), title="message size (MiB)",
              axis=alt.Axis(values=[10.0**k for k in range(-3, 5)], format="~g"))
    # collective_chart fixes the colour domain (a system keeps its colour when another is added or
    # removed) and lists the systems shown in the legend
    colour = alt.Color("system:N", title=None, legend=alt.Legend(orient="bottom", labelLimit=400))
    tips = ["system:N", "algorithm:N", "protocol:N", alt.Tooltip("size_mib:Q", format=".3g"),
            alt.Tooltip("busbw_gb_s:Q", format=".1f")]
    line = alt.Chart(named_data("curve")).mark_line().encode(
        x=x, y=alt.Y("busbw_gb_s:Q", title="bus bandwidth (GB/s)"), color=colour, tooltip=tips)
    pts = alt.Chart(named_data("curve")).mark_point(size=25, filled=True).encode(
        x=x, y="busbw_gb_s:Q", color=colour, tooltip=tips,
        shape=alt.Shape("algorithm:N", title="algorithm chosen",
                        scale=alt.Scale(range=["circle", "square", "triangle-up", "cross", "triangle-down"])))
    here = alt.Chart(named_data("here")).mark_rule(strokeDash=[4, 4], color="black").encode(x=x)
    layers = [line, pts, here]
    if measured:  # the diamonds get a legend entry of their own (an independent shape scale)
        layers.append(alt.Chart(named_data("measured")).transform_calculate(kind=f"'{MEASURED}'").mark_point(
            size=120, color="black", filled=True).encode(
            x=x, y="busbw_gb_s:Q", tooltip=["case:N", alt.Tooltip("busbw_gb_s:Q", format=".0f")],
            shape=alt.Shape("kind:N", title=None, scale=alt.Scale(domain=[MEASURED], range=["diamond"]),
                            legend=alt.Legend(orient="bottom"))))
    return alt.layer(*layers).resolve_scale(shape="independent").properties(width=WIDTH, height=280).to_dict()


def collective_chart(curve: pd.DataFrame, size_bytes: float, measured: pd.DataFrame | None = None,
                     title: str = "", systems: tuple[str, ...] = ()) -> Figure:
    """Bus bandwidth against message size (algorithm chosen at each size), the chosen size marked,
    and published measurements (black diamonds, in the legend) where they exist. ``systems``: every
    system the dashboard offers, in order; each keeps the same colour whichever are shown."""
    c = pd.DataFrame({"system": curve["system"], "algorithm": curve["algorithm"], "protocol": curve["protocol"],
                      "size_mib": curve["message_bytes"] / 2**20, "busbw_gb_s": curve["busbw_bytes_per_s"] / 1e9})
    m = measured if measured is not None else pd.DataFrame(columns=["case", "message_bytes", "busbw_gb_s"])
    fig = Figure.from_template(_template_collective(not m.empty), title=title, curve=c,
                               here=pd.DataFrame({"size_mib": [size_bytes / 2**20]}),
                               measured=pd.DataFrame({"case": m["case"], "size_mib": m["message_bytes"] / 2**20,
                                                      "busbw_gb_s": m["busbw_gb_s"]}))
    domain = list(systems) + [s for s in dict.fromkeys(c["system"]) if s not in systems]
    colours = [SERIES_COLOURS[i % len(SERIES_COLOURS)] for i in range(len(domain))]
    for layer in fig.spec["layer"][:2]:  # the line and its points
        colour = layer["encoding"]["color"]
        colour["scale"] = {"domain": domain, "range": colours}
        if "legend" in colour:
            colour["legend"]["values"] = list(dict.fromkeys(c["system"]))
    return fig
