"""Notebook 10, *Number formats and quantisation*: memory and decode speed of one model on one chip in
every format, the chosen one highlighted."""

from __future__ import annotations

import pandas as pd

from accelbook.chip import number_formats as nf
from accelbook.specs.catalogue import catalogue_cache
from accelbook.specs.chips import all_chips, get_chip, usable_memory_bytes
from accelbook.specs.models import all_models, get_model
from accelbook.ui.charts.formats import precision_chart
from accelbook.ui.dashboard import Choice, DashboardSpec, LogSlider, View, fmt_si

#: weight formats offered: the storage formats of 16 bits or fewer (no chip in the catalogue publishes an fp32
#: or tf32 peak, and a wider format is never widened)
WEIGHT_OPTIONS = tuple(f for f in nf.TEACHING_FORMATS if nf.bits_per_element(f) <= 16)
#: KV-cache formats offered ("same": the weights' format)
KV_OPTIONS = (("same as the weights", "same"), ("bf16", "bf16"), ("fp8 E4M3", "fp8-e4m3"), ("NVFP4", "nvfp4"))


def _chip_options() -> list[tuple[str, str]]:
    """Chips with a memory, its bandwidth and a bf16 peak (the speed-up's baseline)."""
    return [(c.name, c.id) for c in all_chips() if c.memory_bytes is not None and c.memory_bw_bytes_per_s is not None
            and "bf16" in c.precisions and not c.id.endswith("lpx")]


def _dense_model_options() -> list[tuple[str, str]]:
    """Dense models only: the decode step reads every weight, which an MoE at small batch does not."""
    return [(m.name, m.id) for m in all_models() if m.moe is None]


def precision_view(fmt, kv_format, chip, model, context, batch) -> View:
    nf.check_format_id(fmt)
    c, m = get_chip(chip), get_model(model)
    kv = None if kv_format == "same" else kv_format
    sweep = nf.precision_sweep(m, c, kv, context, batch)
    if fmt not in set(sweep["format"]):
        raise ValueError(f"{c.name} publishes no peak that {fmt} can run at (no dense {nf.properties(fmt).chip_precision} "
                         "peak, and a format wider than 16 bits is not widened)")
    cap = usable_memory_bytes(c.memory_bytes)
    fig = precision_chart(sweep, fmt, cap, title=f"{m.name} on {c.name}: batch {batch}, {context:,} tokens of context")
    row = sweep[sweep["format"] == fmt].iloc[0]
    p = nf.properties(fmt)
    step = nf.decode_step(m, c, fmt, row["kv_format"], context, batch)
    scale = f" ({nf.bits_formula(fmt)}: the block scale's share included)" if p.family == "block" else ""
    peak = nf.peak_flop_s(c, fmt)
    base = nf.peak_flop_s(c, "bf16")
    peak_text = (f"{c.name}'s dense peak for it: {fmt_si(peak, 'FLOP/s')} ({peak / base:.2g}× its bf16 peak)" if peak
                 else f"{c.name} publishes no {p.chip_precision or fmt} peak: the weights are widened to "
                      f"{step.compute_precision} before the multiply")
    summary = (f"**{p.name}**, {p.bits_per_element:g} bits per element{scale}. Weights {fmt_si(row['weights_bytes'], 'B')} "
               f"+ KV cache in {row['kv_format']} {fmt_si(row['kv_bytes'], 'B')}: {step.chips_to_hold} × {c.name} "
               f"to hold them. Decode step **{row['speedup_vs_bf16']:.2f}× faster than bf16**: {step.why}. {peak_text}.")
    table = pd.DataFrame({
        "property": ["bits per element", "exponent / mantissa bits", "largest finite", "smallest normal",
                     "machine epsilon", "dynamic range (binades)", "block scale range (binades)"],
        "value": [f"{p.bits_per_element:g}", f"{p.exponent_bits} / {p.mantissa_bits}" if p.exponent_bits is not None
                  else "integer", f"{p.max_finite:.4g}", f"{p.min_normal:.4g}",
                  "—" if p.machine_epsilon != p.machine_epsilon else f"{p.machine_epsilon:.4g}",
                  f"{p.dynamic_range_binades:.1f}", f"{p.scale_binades:.1f}" if p.scale_binades else "—"]})
    return View(sweep.drop(columns=["peak_flop_s"]), fig, summary, table=table)


@catalogue_cache(maxsize=1)
def precision_spec() -> DashboardSpec:
    return DashboardSpec(
        name="precision",
        description="Memory and decode speed of one model on one chip in every number format.",
        controls={
            "fmt": Choice("weights format", list(WEIGHT_OPTIONS), "nvfp4"),
            "kv_format": Choice("KV-cache format", list(KV_OPTIONS), "bf16"),
            "chip": Choice("chip", _chip_options(), "b200"),
            "model": Choice("model", _dense_model_options(), "llama-3.1-70b"),
            "context": LogSlider("context (tokens)", 9, 17, 8192),
            "batch": LogSlider("batch", 0, 9, 1),
        },
        view=precision_view,
    )


SPECS = (precision_spec,)
