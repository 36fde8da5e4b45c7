"""Notebook 01, *GPUs and TPUs*: one transformer layer on each chip's roofline, and the training cost
per token at a given MFU and price."""

from __future__ import annotations

import pandas as pd

from accelbook import training
from accelbook.chip.roofline import PHASES, columns_limit, layers_roofline_columns, roofline_curves_columns
from accelbook.economics import training_cost_table
from accelbook.specs.catalogue import catalogue_cache
from accelbook.specs.chips import get_chip
from accelbook.specs.models import get_model
from accelbook.ui import charts
from accelbook.ui.charts.chip import roofline_and_layer_time_chart
from accelbook.ui.dashboard import Choice, DashboardSpec, LogSlider, Slider, View, fmt_si

from .common import chip_options, existing, markdown_table, model_options, require_some

# Presets: what a first look should compare (a GPU and TPU of each generation).
DEFAULT_ROOFLINE_CHIPS = ("h100", "tpu-v5p", "b200", "tpu-v6e")
DEFAULT_COST_CHIPS = ("a100", "h100", "h200", "tpu-v5e", "tpu-v5p", "tpu-v6e")


def roofline_view(chips, model, phase, batch, seq_len, precision, bw_scale=1.0) -> View:
    require_some(chips, "chip")
    m = get_model(model)
    shown, skipped = [], []
    for cid in chips:
        chip = get_chip(cid)
        if precision not in chip.peak_dense_flop_s:
            skipped.append(f"{chip.name} (no dense {precision} peak published)")
            continue
        if bw_scale != 1.0:
            field = "hbm_bw_bytes_per_s" if chip.hbm_bw_bytes_per_s else "sram_bw_bytes_per_s"
            chip = chip.what_if_variant(f"{bw_scale:g}x memory BW", **{field: chip.memory_bw_bytes_per_s * bw_scale})
        shown.append(chip)
    if not shown:
        raise ValueError(f"none of the chosen chips publishes a dense {precision} peak: " + "; ".join(skipped))
    cols = layers_roofline_columns(m, shown, phase, batch, seq_len, precision)   # chip after chip
    n = len(cols["op"]) // len(shown)
    lines, limits = [], []
    for k, chip in enumerate(shown):
        o = {name: v[k * n:(k + 1) * n] for name, v in cols.items()}
        t = o["t_s"].sum()
        mem_share = o["t_s"][o["bound"] == "memory"].sum() / t
        lines.append(f"| {chip.name} | {fmt_si(t, 's')} | {mem_share:.0%} | {chip.ridge_point(precision):.0f} |")
        limits.append(f"- {chip.name}: {columns_limit(o)}")
    ops = pd.DataFrame(cols)
    # the rooflines span every operation (with room either side), so no point lies past a line's end
    i_min = min(0.3, float(cols["intensity_flop_per_byte"].min()) / 2)
    i_max = max(3e4, float(cols["intensity_flop_per_byte"].max()) * 2)
    curves = roofline_curves_columns(shown, precision, i_min=i_min, i_max=i_max, n=48)
    chart = roofline_and_layer_time_chart(
        curves, cols, title=f"{m.name}, one layer, {phase}: B={batch}, s={seq_len}, {precision}")
    summary = markdown_table(("chip", "layer time (lower bound)", "memory-bound share", "ridge (FLOP/B)"), lines)
    summary += "\n\nWhich limit binds:\n\n" + "\n".join(limits)
    if skipped:
        summary += "\n\nLeft out: " + "; ".join(skipped) + "."
    return View(ops, chart, summary)


@catalogue_cache(maxsize=1)
def roofline_spec() -> DashboardSpec:
    return DashboardSpec(
        name="roofline",
        description="Operations of one transformer layer on each chip's roofline.",
        controls={
            "chips": Choice("chips", chip_options(), existing(DEFAULT_ROOFLINE_CHIPS), multi=True),
            "model": Choice("model", model_options(), "llama-3.1-70b"),
            "phase": Choice("phase", PHASES, "decode"),
            "batch": LogSlider("batch", 0, 12, 8, help="sequences per step (B)"),
            "seq_len": LogSlider("sequence length", 7, 17, 4096, help="tokens per sequence / context (s)"),
            "precision": Choice("precision", ("bf16", "fp8", "int8", "fp4"), "bf16"),
            "bw_scale": Slider("memory BW ×", 0.5, 4.0, 0.25, 1.0, help="what if memory bandwidth changes?"),
        },
        view=roofline_view,
    )


def training_cost_view(chips, model, mfu, price_scale, seq_len, precision="bf16", goodput=None) -> View:
    require_some(chips, "chip")
    m = get_model(model)
    df, skipped = training_cost_table(m, [get_chip(c) for c in chips], mfu, seq_len, precision, price_scale,
                                      goodput=goodput)
    if df.empty:
        raise ValueError("none of the chosen chips has both a published price and a dense "
                         f"{precision} peak: " + "; ".join(skipped))
    best = df.loc[df["usd_per_million_tokens"].idxmin()]
    summary = (f"At {mfu:.0%} MFU, {m.name} (s = {seq_len}) needs "
               f"{m.flops_per_token(seq_len, training=True):.3g} FLOP per training token. "
               f"Cheapest per token here: **{best['chip']}** at ${best['usd_per_million_tokens']:.2f} per million tokens "
               f"while it trains; {best['chip_hours'] / 1e6:,.2f} M chip-hours and "
               f"${best['train_cost_usd'] / 1e6:,.1f} M for 1T tokens at {training.goodput_words(goodput)}. "
               f"MFU is your input, not a prediction (notebook 04's model, which predicts it: "
               f"{training.error_band().words()}).")
    if skipped:
        summary += "\n\nLeft out: " + "; ".join(skipped) + "."
    table = pd.DataFrame({
        "chip": df["chip"], "tokens/s per chip": df["tokens_per_s_per_chip"],
        "USD per 1M tokens": df["usd_per_million_tokens"], "USD/h (after ×)": df["price_usd_per_hour"],
        f"chip-hours per 1T tokens (goodput {df['goodput'].iloc[0]:.2f})": df["chip_hours"],
    })
    return View(df, charts.training_cost_chart(df), summary, table=table)


@catalogue_cache(maxsize=1)
def training_cost_spec() -> DashboardSpec:
    return DashboardSpec(
        name="training cost",
        description="Training tokens/s per chip and USD per million tokens at a given MFU and price.",
        controls={
            "chips": Choice("chips", chip_options(), existing(DEFAULT_COST_CHIPS), multi=True),
            "model": Choice("model", model_options(), "llama-3.1-70b"),
            "mfu": Slider("MFU", 0.05, 0.80, 0.01, 0.40, help="model FLOPs utilisation"),
            "price_scale": Slider("price × list", 0.25, 2.0, 0.05, 1.0, help="discount or premium on list price"),
            "seq_len": LogSlider("sequence length", 10, 15, 4096),
            "goodput": Slider("goodput", 0.5, 1.0, 0.01, training.published_goodput().fraction,
                              help="failures, restarts and checkpoints take the rest; default: "
                                   + training.goodput_words()),
        },
        view=training_cost_view,
    )


SPECS = (roofline_spec, training_cost_spec)
