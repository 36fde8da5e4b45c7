"""Charts of number formats (notebook 10): memory to serve a model and decode speed-up, per format."""

from __future__ import annotations

import altair as alt
import numpy as np
import pandas as pd

from accelbook.specs.catalogue import catalogue_cache

from .base import BOUND_COLOURS, Figure, named_data, records

PART_COLOURS = alt.Scale(domain=["weights", "KV cache"], range=["#1f77b4", "#ff7f0e"])


@catalogue_cache(maxsize=1)
def _template_precision() -> dict:
    y = alt.Y("format:N", sort=None, title=None)
    opacity = alt.condition(alt.datum.selected, alt.value(1.0), alt.value(0.35))
    mem = alt.Chart(named_data("mem")).mark_bar().encode(
        y=y, x=alt.X("gb:Q", stack="zero", title="memory to serve (GB)"),
        color=alt.Color("part:N", scale=PART_COLOURS, title=None, legend=alt.Legend(orient="bottom")),
        opacity=opacity, order=alt.Order("part:N", sort="descending"),
        tooltip=["format:N", "part:N", alt.Tooltip("gb:Q", format=",.1f"), "bits_per_element:Q"])
    cap = alt.Chart(named_data("cap")).mark_rule(color="black", strokeDash=[4, 4]).encode(
        x="gb:Q", tooltip=[alt.Tooltip("gb:Q", format=",.0f", title="usable memory of one chip (GB)")])
    speed = alt.Chart(named_data("speed")).mark_bar().encode(
        y=y, x=alt.X("speedup_vs_bf16:Q", title="decode step speed-up over bf16 (×)"),
        color=alt.Color("bound:N", scale=BOUND_COLOURS, title="bound", legend=alt.Legend(orient="bottom")),
        opacity=opacity,
        tooltip=["format:N", alt.Tooltip("speedup_vs_bf16:Q", format=".2f"), alt.Tooltip("t_step_ms:Q", format=".3g"),
                 "compute_precision:N", "bound:N"])
    one = alt.Chart(named_data("one")).mark_rule(color="grey").encode(x="x:Q")
    return alt.hconcat(alt.layer(mem, cap).properties(width=260, height=260),
                       alt.layer(speed, one).properties(width=220, height=260)
                       ).resolve_scale(color="independent").to_dict()


def precision_chart(sweep: pd.DataFrame, selected: str, capacity_bytes: float | None, title: str = "") -> Figure:
    """Left: weights and KV cache (GB) per format, stacked, one chip's usable memory dashed. Right: the
    decode step's speed-up over bf16 per format, coloured by what bounds it. ``selected`` is drawn solid.
    ``sweep``: rows of :func:`accelbook.chip.number_formats.precision_sweep`."""
    fmt = sweep["format"].to_numpy(dtype=object)
    sel = fmt == selected
    bits = sweep["bits_per_element"].to_numpy()
    n = len(fmt)
    mem = pd.DataFrame({"format": np.concatenate([fmt, fmt]),
                        "part": np.array(["weights"] * n + ["KV cache"] * n, dtype=object),
                        "gb": np.concatenate([sweep["weights_bytes"].to_numpy() / 1e9, sweep["kv_bytes"].to_numpy() / 1e9]),
                        "bits_per_element": np.concatenate([bits, bits]), "selected": np.concatenate([sel, sel])})
    speed = pd.DataFrame({"format": fmt, "speedup_vs_bf16": sweep["speedup_vs_bf16"].to_numpy(),
                          "t_step_ms": sweep["t_step_s"].to_numpy() * 1e3,
                          "compute_precision": sweep["compute_precision"].to_numpy(dtype=object),
                          "bound": sweep["bound"].to_numpy(dtype=object), "selected": sel})
    return Figure.from_template(_template_precision(), title=title, mem=mem, cap=_cap_rows(capacity_bytes),
                                speed=speed, one=_one_rows())


def _cap_rows(capacity_bytes: float | None) -> list[dict]:
    return [dict(r) for r in _cap_rows_cached(capacity_bytes)]


@catalogue_cache(maxsize=64)
def _cap_rows_cached(capacity_bytes: float | None) -> tuple:
    return tuple(records(pd.DataFrame({"gb": [capacity_bytes / 1e9]} if capacity_bytes else {"gb": []})))


@catalogue_cache(maxsize=1)
def _one_rows_cached() -> tuple:
    return tuple(records(pd.DataFrame({"x": [1.0]})))


def _one_rows() -> list[dict]:
    return [dict(r) for r in _one_rows_cached()]
