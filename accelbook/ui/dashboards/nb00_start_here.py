"""Notebook 00, *Start here*: the chip catalogue, filtered, each chip placed by bandwidth and peak."""

from __future__ import annotations

import pandas as pd

from accelbook.specs.catalogue import catalogue_cache
from accelbook.specs.chips import PRECISIONS, summary_table
from accelbook.specs.chips import chips as chips_table
from accelbook.ui import charts
from accelbook.ui.dashboard import Choice, DashboardSpec, View


@catalogue_cache(maxsize=1)
def _catalogue_frame() -> pd.DataFrame:
    return chips_table()  # built once per session; views only filter it


def _vendors() -> tuple[str, ...]:
    """Every vendor of the catalogue, in the filter's order: each keeps its colour on the chart."""
    return tuple(sorted(_catalogue_frame()["vendor"].unique()))


def catalogue_view(vendors, statuses, precision) -> View:
    df = _catalogue_frame()
    sel = df[df["vendor"].isin(vendors) & df["status"].isin(statuses)]
    if sel.empty:
        raise ValueError("no chip matches this filter: pick at least one vendor and one status")
    col = f"peak_{precision}_flop_s"
    shown = sel.dropna(subset=[col, "memory_bw_bytes_per_s"])
    missing = sorted(set(sel["name"]) - set(shown["name"]))
    table = summary_table(sel, precision)
    summary = f"{len(sel)} chips selected; {len(shown)} publish a dense {precision} peak."
    if missing:
        summary += f" Not on the chart (no dense {precision} peak published): {', '.join(missing)}."
    chart_data = shown[["id", "name", "vendor", "status", "memory_kind", col, "memory_bw_bytes_per_s"]]
    return View(chart_data, charts.peak_bandwidth_chart(shown, precision, vendors=_vendors()), summary,
                table=table.reset_index(drop=True))


@catalogue_cache(maxsize=1)
def catalogue_spec() -> DashboardSpec:
    df = _catalogue_frame()
    vendors = list(_vendors())
    return DashboardSpec(
        name="catalogue",
        description="Filter the chip catalogue; the chart places each chip by bandwidth and peak.",
        controls={
            "vendors": Choice("vendors", vendors, tuple(vendors), multi=True),
            "statuses": Choice("status", ("shipping", "announced", "estimated"), ("shipping", "announced"), multi=True),
            "precision": Choice("precision", [p for p in PRECISIONS if df[f"peak_{p}_flop_s"].notna().any()], "bf16"),
        },
        view=catalogue_view,
    )


SPECS = (catalogue_spec,)
