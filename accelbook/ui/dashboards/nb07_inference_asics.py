"""Notebook 07, *Inference ASICs*: tokens/s per chip against tokens/s per user for GPUs, TPUs, LPUs,
wafers and Inferentia, at a target speed per user."""

from __future__ import annotations

import numpy as np
import pandas as pd

from accelbook import inference
from accelbook.inference.power import per_kw_at_pue
from accelbook.specs.catalogue import catalogue_cache
from accelbook.specs.chips import get_chip
from accelbook.specs.system_power import default_pue
from accelbook.ui import charts
from accelbook.ui.dashboard import Choice, DashboardSpec, LogSlider, Slider, View

from .common import markdown_table, model_options, require_some

FRONTIER_SYSTEMS = {   # label -> (chip id, chips): 8-GPU servers, and enough SRAM chips to hold a 70B model
    "8 × H100": ("h100", 8), "8 × H200": ("h200", 8), "8 × B200": ("b200", 8), "8 × B300": ("b300", 8),
    "8 × MI300X": ("mi300x", 8), "8 × MI325X": ("mi325x", 8), "8 × MI355X": ("mi355x", 8), "8 × Gaudi 3": ("gaudi3", 8),
    "8 × TPU v6e": ("tpu-v6e", 8), "12 × Inferentia2": ("inferentia2", 12),
    "640 × Groq LPU v1": ("groq-lpu-v1", 640), "320 × Groq LP30": ("groq-lp30", 320),
    "4 × Cerebras CS-3": ("cerebras-cs3", 4), "8 × custom ASIC (what-if)": ("custom-asic", 8),
}


@catalogue_cache(maxsize=64)
def _frontier(model, systems: tuple, input_len, output_len, precision) -> pd.DataFrame:
    """The systems' frontiers at the default PUE (cached: the PUE slider only restates tokens per kW); the
    systems the model does not fit are left out."""
    try:
        return inference.frontier(model, {s: FRONTIER_SYSTEMS[s] for s in systems}, input_len, output_len, precision,
                                  skip_errors=True)
    except ValueError:
        return pd.DataFrame()


def _best_rows(front: pd.DataFrame, systems, target_tps_user: float) -> list[str]:
    """The summary table's rows, one per system in ``systems``' order: its best tokens/s per chip among the
    points of ``front`` that reach the target."""
    col = {c: front[c].to_numpy() for c in ("system", "tokens_per_s_per_user", "tokens_per_s_per_chip", "tokens_per_s_per_kw",
                                           "usd_per_million_tokens", "flag", "tp", "pp", "batch")} if not front.empty else {}
    ok = np.flatnonzero(col["tokens_per_s_per_user"] >= target_tps_user) if col else np.array([], dtype=int)
    rows = []
    for system in systems:
        mine = ok[col["system"][ok] == system] if len(ok) else ok
        r = ({c: v[mine[np.argmax(col["tokens_per_s_per_chip"][mine])]] for c, v in col.items()} if len(mine)
             else None)           # the first of the best, as idxmax takes
        if r is None:
            rows.append(f"| {system} | cannot reach {target_tps_user:,.0f} tokens/s per user | | | |")
        elif r.get("flag", ""):
            rows.append(f"| {system} | out of the model's reach at this speed (hollow points; the reason is under the "
                        "chart) | | | |")
        else:
            kw = f"{r['tokens_per_s_per_kw']:,.0f}" if pd.notna(r["tokens_per_s_per_kw"]) else "—"
            usd = f"{r['usd_per_million_tokens']:.2f}" if pd.notna(r["usd_per_million_tokens"]) else "—"
            rows.append(f"| {system} | {r['tokens_per_s_per_chip']:,.0f} | {kw} | {usd} | TP{r['tp']} PP{r['pp']} "
                        f"batch {r['batch']} |")
    return rows


@catalogue_cache(maxsize=1)
def _trust() -> str:
    """The model's error bands, in words (computed once: they do not move with the sliders); the single-user
    band over the rows on SRAM chips (not GPUs)."""
    t = inference.validation_table()
    sram = t[t["chip"].map(lambda c: get_chip(c).kind != "gpu")]
    return ("\n\nHow far to trust these numbers: on GPUs the model's tokens/s per chip is off by "
            f"{inference.error_band('tokens_per_s_per_chip').text()} (TensorRT-LLM); on SRAM chips only "
            "single-user speeds are published, and the model is off by "
            f"{inference.error_band('tokens_per_s_per_user', sram, role='context').text()} there (Groq; a Cerebras "
            "speed past what Cerebras has published is flagged, not predicted).")


def frontier_view(model, systems, input_len, output_len, precision, target_tps_user, per="chip", pue=None) -> View:
    require_some(systems, "system")
    pue = default_pue() if pue is None else pue
    front = _frontier(model, tuple(systems), input_len, output_len, precision)
    found = set() if front.empty else set(front["system"])
    missing = [s for s in systems if s not in found]
    if front.empty:
        raise ValueError(f"{model} at {precision} fits on none of these systems")
    front = front.assign(tokens_per_s_per_kw=per_kw_at_pue(pd.to_numeric(front["tokens_per_s_per_kw"]), pue, default_pue()))
    fig = charts.frontier_chart(front, target_tps_user, per, title=f"{model}, {input_len:,} in / {output_len:,} out, {precision}")
    table = markdown_table(("system", "best tokens/s per chip at the target", "per kW", "USD per M tokens", "layout"),
                           _best_rows(front, systems, target_tps_user))
    summary = (f"At **{target_tps_user:,.0f} tokens/s per user**:\n\n" + table
               + ("" if not missing else f"\n\nDoes not fit: {', '.join(missing)}."))
    flagged = (sorted(set(front["system"].to_numpy(dtype=object)[front["flag"].to_numpy(dtype=object) != ""]))
               if "flag" in front else [])
    if flagged:
        summary += (f"\n\n**Hollow grey points are out of the model's reach** ({', '.join(flagged)}): on these SRAM "
                    "chips the model has no published per-layer latency of a token crossing the chips or the wafer, "
                    "so a speed above what the vendor has published, or on a system with nothing published, is not "
                    "a prediction. The reason is in each point's tooltip and under the chart.")
    summary += (f"\n\nPer kW is at the wall for every system alike: the whole server's or system's power per chip "
                f"(a DGX's maximum input over its 8 GPUs, a CS-3's 23 kW), scaled with the chip's activity, times PUE "
                f"{pue:.2f}; chips with no published system figure scale their TDP by the DGX ratio (an estimate).")
    summary += _trust()
    if any("Cerebras" in s_ for s_ in systems):
        summary += "\n\nA CS-3 wafer has the silicon of dozens of GPUs, so per-chip figures do not compare."
    return View(front[["system", "tokens_per_s_per_user", "tokens_per_s_per_chip", "flag"]], fig, summary)


@catalogue_cache(maxsize=1)
def frontier_spec() -> DashboardSpec:
    return DashboardSpec(
        name="frontier",
        description="Tokens/s per chip against tokens/s per user: GPUs, TPUs, LPUs, wafers, Inferentia.",
        controls={
            "model": Choice("model", model_options(), "llama-2-70b"),
            "systems": Choice("systems", tuple(FRONTIER_SYSTEMS),
                              ("8 × H200", "8 × B200", "640 × Groq LPU v1", "320 × Groq LP30"), multi=True),
            "input_len": LogSlider("input tokens", 4, 15, 1024),
            "output_len": LogSlider("output tokens", 4, 14, 256),
            "precision": Choice("weights", inference.WEIGHT_PRECISIONS, "fp8"),
            "target_tps_user": LogSlider("target tokens/s per user", 3, 12, 256),
            "per": Choice("per", ("chip", "kw"), "chip"),
            "pue": Slider("site PUE (wall / IT power)", 1.0, 2.0, 0.05, default_pue()),
        },
        view=frontier_view,
    )


SPECS = (frontier_spec,)
