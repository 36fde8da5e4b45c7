"""The dashboards of notebooks 00 and 01, built on :mod:`accelbook.dashboard`.

Each ``*_spec()`` returns a :class:`DashboardSpec`: controls as data plus a pure view function.
Notebooks call ``show(roofline_spec())``; the benchmark times the same specs.
"""

from __future__ import annotations

import functools

import pandas as pd

from . import charts
from .chip import PRECISIONS, all_chips, chips as chips_table, get_chip, summary_table
from .dashboard import Choice, DashboardSpec, LogSlider, Slider, View, fmt_si
from .economics import training_cost_table
from .llm import all_models, get_model
from .roofline import PHASES, concat_columns, layer_roofline_columns, roofline_curve_columns

# Presets: what a first look should compare (a GPU and TPU of each generation).
DEFAULT_ROOFLINE_CHIPS = ("h100", "tpu-v5p", "b200", "tpu-v6e")
DEFAULT_COST_CHIPS = ("a100", "h100", "h200", "tpu-v5e", "tpu-v5p", "tpu-v6e")


def _chip_options() -> list[tuple[str, str]]:
    return [(c.name, c.id) for c in all_chips()]


def _model_options() -> list[tuple[str, str]]:
    return [(m.name, m.id) for m in all_models()]


def _existing(ids) -> tuple[str, ...]:
    have = {c.id for c in all_chips()}
    return tuple(i for i in ids if i in have)


# -- 00: the catalogue ------------------------------------------------------------------------
def catalogue_view(vendors, statuses, precision) -> View:
    df = chips_table()
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
    return View(chart_data, charts.peak_bandwidth_chart(shown, precision), summary,
                table=table.reset_index(drop=True))


@functools.lru_cache(maxsize=1)
def catalogue_spec() -> DashboardSpec:
    df = chips_table()
    vendors = sorted(df["vendor"].unique())
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


# -- 01: GPUs and TPUs on one roofline --------------------------------------------------------
def roofline_view(chips, model, phase, batch, seq_len, precision, bw_scale=1.0) -> View:
    if not chips:
        raise ValueError("pick at least one chip")
    m = get_model(model)
    curves, ops, skipped, lines = [], [], [], []
    for cid in chips:
        chip = get_chip(cid)
        if precision not in chip.peak_dense_flop_s:
            skipped.append(f"{chip.name} (no dense {precision} peak published)")
            continue
        if bw_scale != 1.0:
            field = "hbm_bw_bytes_per_s" if chip.hbm_bw_bytes_per_s else "sram_bw_bytes_per_s"
            chip = chip.what_if_variant(f"{bw_scale:g}x memory BW", **{field: chip.memory_bw_bytes_per_s * bw_scale})
        curves.append(roofline_curve_columns(chip, precision, i_min=0.3, i_max=3e4, n=48))
        o = layer_roofline_columns(m, chip, phase, batch, seq_len, precision)
        ops.append(o)
        t = o["t_s"].sum()
        mem_share = o["t_s"][o["bound"] == "memory"].sum() / t
        lines.append(f"| {chip.name} | {fmt_si(t, 's')} | {mem_share:.0%} | {chip.ridge_point(precision):.0f} |")
    if not curves:
        raise ValueError(f"none of the chosen chips publishes a dense {precision} peak: " + "; ".join(skipped))
    curves, ops = concat_columns(curves), concat_columns(ops)
    chart = charts.stack(
        charts.roofline_chart(curves, ops, title=f"{m.name}, one layer, {phase}: B={batch}, s={seq_len}, {precision}"),
        charts.layer_time_chart(ops),
    )
    summary = "\n".join(["| chip | layer time (lower bound) | memory-bound share | ridge (FLOP/B) |",
                         "|---|---|---|---|", *lines])
    if skipped:
        summary += "\n\nLeft out: " + "; ".join(skipped) + "."
    return View(ops, chart, summary)


@functools.lru_cache(maxsize=1)
def roofline_spec() -> DashboardSpec:
    return DashboardSpec(
        name="roofline",
        description="Operations of one transformer layer on each chip's roofline.",
        controls={
            "chips": Choice("chips", _chip_options(), _existing(DEFAULT_ROOFLINE_CHIPS), multi=True),
            "model": Choice("model", _model_options(), "llama-3.1-70b"),
            "phase": Choice("phase", PHASES, "decode"),
            "batch": LogSlider("batch", 0, 12, 8, help="sequences per step (B)"),
            "seq_len": LogSlider("sequence length", 7, 17, 4096, help="tokens per sequence / context (s)"),
            "precision": Choice("precision", ("bf16", "fp8", "int8", "fp4"), "bf16"),
            "bw_scale": Slider("memory BW ×", 0.5, 4.0, 0.25, 1.0, help="what if memory bandwidth changes?"),
        },
        view=roofline_view,
    )


# -- 01: tokens/s per chip and dollars per million training tokens ------------------------------
def training_cost_view(chips, model, mfu, price_scale, seq_len, precision="bf16") -> View:
    if not chips:
        raise ValueError("pick at least one chip")
    m = get_model(model)
    df, skipped = training_cost_table(m, [get_chip(c) for c in chips], mfu, seq_len, precision, price_scale)
    if df.empty:
        raise ValueError("none of the chosen chips has both a published price and a dense "
                         f"{precision} peak: " + "; ".join(skipped))
    best = df.loc[df["usd_per_million_tokens"].idxmin()]
    summary = (f"At {mfu:.0%} MFU, {m.name} (s = {seq_len}) needs "
               f"{m.flops_per_token(seq_len, training=True):.3g} FLOP per training token. "
               f"Cheapest per token here: **{best['chip']}** at ${best['usd_per_million_tokens']:.2f} per million tokens.")
    if skipped:
        summary += "\n\nLeft out: " + "; ".join(skipped) + "."
    table = pd.DataFrame({
        "chip": df["chip"], "tokens/s per chip": df["tokens_per_s_per_chip"],
        "USD per 1M tokens": df["usd_per_million_tokens"], "USD/h (after ×)": df["price_usd_per_hour"],
        "chip-hours per 1T tokens": df["chip_hours"],
    })
    return View(df, charts.training_cost_chart(df), summary, table=table)


@functools.lru_cache(maxsize=1)
def training_cost_spec() -> DashboardSpec:
    return DashboardSpec(
        name="training cost",
        description="Training tokens/s per chip and USD per million tokens at a given MFU and price.",
        controls={
            "chips": Choice("chips", _chip_options(), _existing(DEFAULT_COST_CHIPS), multi=True),
            "model": Choice("model", _model_options(), "llama-3.1-70b"),
            "mfu": Slider("MFU", 0.05, 0.80, 0.01, 0.40, help="model FLOPs utilisation"),
            "price_scale": Slider("price × list", 0.25, 2.0, 0.05, 1.0, help="discount or premium on list price"),
            "seq_len": LogSlider("sequence length", 10, 15, 4096),
        },
        view=training_cost_view,
    )


ALL_SPECS = (catalogue_spec, roofline_spec, training_cost_spec)
