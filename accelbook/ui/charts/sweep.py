"""Charts of sweeps (notebook 11): a tidy DataFrame from :mod:`accelbook.sweep` in, a :class:`Figure` out.

- :func:`pareto_chart`: every configuration that fits as a faint point, the Pareto front over all
  chips as a line, coloured by chip (log-log: tokens/s per user against tokens/s per chip);
- :func:`goodput_surface_chart`: the serving Monte Carlo's SLO goodput as a heat map over arrival
  rate × chunk size (the mean over seeds), with the confidence interval's half-width in the tooltip;
- :func:`goodput_ci_chart`: goodput against rate per chunk size, the interval as a band.
"""

from __future__ import annotations

import altair as alt
import pandas as pd

from accelbook.specs.catalogue import catalogue_cache
from accelbook.ui.tables import column_unit

from .base import HEIGHT, WIDTH, Figure, named_data


def pareto_chart(points: pd.DataFrame, front: pd.DataFrame, title: str | None = None) -> Figure:
    """``points`` and ``front``: rows of the frontier sweep (``chip_name``, ``tokens_per_s_per_user``,
    ``tokens_per_s_per_chip``, ``tp``, ``pp``, ``batch``)."""
    x = alt.X("tokens_per_s_per_user:Q", scale=alt.Scale(type="log"), title="tokens/s per user")
    y = alt.Y("tokens_per_s_per_chip:Q", scale=alt.Scale(type="log"), title="tokens/s per chip")
    cols = ["chip_name", "tokens_per_s_per_user", "tokens_per_s_per_chip", "tp", "pp", "batch"]
    base = alt.Chart(points[cols]).mark_circle(size=14, opacity=0.25).encode(
        x=x, y=y, color=alt.Color("chip_name:N", title="chip", legend=alt.Legend(columns=1, labelLimit=220)))
    line = alt.Chart(front[cols]).mark_line(point=True, color="black", interpolate="step-after").encode(
        x=x, y=y, tooltip=cols)
    chart = (base + line).properties(width=WIDTH, height=HEIGHT, title=title or "Pareto front over every chip")
    return Figure(chart.to_dict())


def goodput_surface_chart(ci: pd.DataFrame, metric: str = "goodput_req_s", title: str | None = None) -> Figure:
    """``ci``: :func:`accelbook.sweep.serving_mc.confidence_intervals` (rate_per_s, chunk_tokens, metric,
    mean, half_width, n)."""
    d = ci[ci["metric"] == metric][["rate_per_s", "chunk_tokens", "mean", "half_width", "n"]]
    chart = alt.Chart(d).mark_rect().encode(
        x=alt.X("rate_per_s:O", title="arrival rate (requests/s)"),
        y=alt.Y("chunk_tokens:O", title="prefill chunk (tokens)", sort="descending"),
        color=alt.Color("mean:Q", title="goodput (req/s)", scale=alt.Scale(scheme="viridis")),
        tooltip=["rate_per_s", "chunk_tokens", alt.Tooltip("mean:Q", format=".2f"),
                 alt.Tooltip("half_width:Q", format=".2f", title="± (95 %)"), "n"],
    ).properties(width=WIDTH, height=HEIGHT // 2, title=title or "SLO goodput: mean over seeds")
    text = chart.mark_text(fontSize=10).encode(text=alt.Text("mean:Q", format=".1f"), color=alt.value("white"))
    return Figure((chart + text).to_dict())


@catalogue_cache(maxsize=8)
def _template_goodput_ci(metric: str) -> dict:
    base = alt.Chart(named_data("ci")).encode(x=alt.X("rate_per_s:Q", title="arrival rate (requests/s)"),
                                              color=alt.Color("chunk_tokens:N", title="chunk (tokens)"))
    words, unit, _ = column_unit(metric)       # "goodput_req_s" -> "goodput (requests/s)", as the tables say it
    band = base.mark_area(opacity=0.25).encode(y=alt.Y("lo:Q", title=words + (f" ({unit})" if unit else "")), y2="hi:Q")
    line = base.mark_line(point=True).encode(y="mean:Q")
    return (band + line).properties(width=WIDTH, height=HEIGHT).to_dict()


def goodput_ci_chart(ci: pd.DataFrame, metric: str = "goodput_req_s", title: str | None = None) -> Figure:
    """The mean of ``metric`` against rate, one line per chunk size, its interval as a band (a cached
    template filled with the data: the serving-SLO dashboard redraws it on every move)."""
    rows = ci["metric"].to_numpy() == metric        # plain arrays: pandas' row and column selection costs ~1 ms
    d = pd.DataFrame({c: ci[c].to_numpy()[rows] for c in ("rate_per_s", "chunk_tokens", "mean", "lo", "hi")})
    return Figure.from_template(_template_goodput_ci(metric), title=title or f"{column_unit(metric)[0]}: mean and 95 % "
                                "interval over seeds",
                                ci=d)
