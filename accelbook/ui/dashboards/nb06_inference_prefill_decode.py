"""Notebook 06, *Inference: prefill and decode*: decode latency against throughput as the batch grows,
and what fits in memory."""

from __future__ import annotations

from typing import Mapping

import pandas as pd

from accelbook import inference
from accelbook.specs.catalogue import catalogue_cache
from accelbook.specs.chips import all_chips
from accelbook.specs.models import get_model
from accelbook.specs.system_power import default_pue
from accelbook.ui import charts
from accelbook.ui.dashboard import Choice, DashboardSpec, LogSlider, Slider, View, fmt_si

from .common import model_options


def _memory_chip_options() -> list[tuple[str, str]]:
    return [(c.name, c.id) for c in all_chips() if c.memory_bytes is not None and c.memory_bw_bytes_per_s is not None
            and not c.id.endswith("lpx")]


@catalogue_cache(maxsize=64)
def _batch_sweep(model, chip, n_chips, input_len, output_len, precision, tp) -> pd.DataFrame:
    """Every batch of the layout ``tp`` × one stage (cached: the batch slider only moves the marker)."""
    return inference.sweep(model, chip, n_chips, input_len, output_len, precision,
                           batches=[2**k for k in range(0, 13)], max_tp=tp, layout=(tp, 1))


@catalogue_cache(maxsize=1)
def _trust() -> str:
    """The model's error bands, in words (computed once: they do not move with the sliders)."""
    return ("\n\nHow far to trust these numbers: against published TensorRT-LLM runs the model's tokens/s per chip "
            f"is off by {inference.error_band('tokens_per_s_per_chip').text()}, its TTFT by "
            f"{inference.error_band('ttft_ms').text()} (the validation table in section 4).")


def inference_view(model, chip, n_chips, tp, batch, input_len, output_len, precision, pue=None) -> View:
    pue = default_pue() if pue is None else pue
    if not _tp_limits(dict(model=model, chip=chip, n_chips=n_chips, precision=precision))["n_chips"]:
        m, fewest = get_model(model), inference.min_chips(model, chip, precision)
        raise ValueError(f"{m.name}'s {precision} weights need at least {fewest:,} chips of this kind, more than the "
                         f"{m.n_heads} attention heads a tensor-parallel replica can split over; this dashboard has no "
                         "pipeline stages: pick a chip with more memory or a smaller precision")
    if n_chips % tp:
        raise ValueError(f"{n_chips} chips do not split into replicas of tp = {tp}")
    e = inference.estimate(model, chip, n_chips, batch, input_len, output_len, precision, tp=tp, pue=pue)
    sw = _batch_sweep(model, chip, n_chips, input_len, output_len, precision, tp)
    if not sw.empty:
        sw = sw[(sw["tp"] == tp) & (sw["pp"] == n_chips // tp // e.config["replicas"])]
    if sw.empty:
        raise ValueError(e.why_not_fit() or "no batch fits")
    fig = charts.batch_sweep_chart(sw, batch, e.max_batch_size,
                                   title=f"{e.model} on {n_chips} × {e.chip}, TP{tp}, {input_len:,} in / {output_len:,} out")
    pw = (f"{e.power_w_per_chip:,.0f} W per chip at the wall ({e.accelerator_power_w:,.0f} W the chip; the rest its "
          f"share of the server, times PUE {pue:.2f}; an estimate), {e.tokens_per_s_per_kw:,.0f} tokens/s per kW"
          if e.power_w_per_chip else "no published power, so no power figure")
    usd = f"USD {e.usd_per_million_tokens:.2f} per million output tokens" if e.usd_per_million_tokens else "no published price"
    fit = "fits" if e.fits else f"**{e.why_not_fit()}**"
    reach = (f"\n\n**The per-user speed is {e.flag}.** Hollow grey points on the chart are out of reach too."
             if e.flag else "")
    summary = (f"TTFT **{fmt_si(e.ttft_s, 's')}** (idle server), TPOT **{fmt_si(e.tpot_s, 's')}** = "
               f"**{e.tokens_per_s_per_user:,.0f} tokens/s per user**, **{e.tokens_per_s_per_chip:,.0f} tokens/s per chip** "
               f"(what binds: below). KV cache {fmt_si(e.kv_cache_bytes, 'B')} "
               f"per replica; the largest batch that fits is {e.max_batch_size:,}; {fit}. {pw}; {usd}.{reach}"
               f"\n\nWhich limit binds: {e.limit}."
               + _trust())
    b = e.breakdown
    table = pd.DataFrame({"part": ["decode: matmuls", "decode: attention over the KV cache", "decode: all-reduces",
                                   "prefill (one prompt): compute", "prefill: weights read"],
                          "time": [fmt_si(b[k], "s") for k in ("decode_gemm_s", "decode_attention_s", "decode_comm_s",
                                                                "prefill_compute_s", "prefill_memory_s")]})
    return View(sw, fig, summary, table=table)


def _tp_limits(values: Mapping) -> dict[str, list]:
    """The ranges of tensor parallelism and chips that hold the model (this dashboard's limits).

    A replica is ``tp`` chips (one pipeline stage); it must hold the weights (``tp`` at least
    :func:`accelbook.inference.min_chips`, weights only: the KV cache comes on top, and the view
    says when that does not fit), its chips whole attention heads (tp divides the heads), and the
    chips a whole number of replicas (both powers of two: tp at most the chips). The chips start at
    the smallest such replica. tp gives way first, then the chips."""
    heads = get_model(values["model"]).n_heads
    fewest = inference.min_chips(values["model"], values["chip"], values["precision"])
    ok = [t for t in TP_OPTIONS if t >= fewest and heads % t == 0]
    return {"tp": [t for t in ok if t <= values["n_chips"]],
            "n_chips": [n for n in TP_OPTIONS if ok and n >= ok[0]]}


#: the values of the chips and tensor-parallel sliders, 1 to 1,024; tp is offered only up to the chips and the
#: model's heads (128 at most here) and from the fewest chips that hold the weights (:func:`_tp_limits`)
TP_OPTIONS = [2**k for k in range(0, 11)]


@catalogue_cache(maxsize=1)
def inference_spec() -> DashboardSpec:
    return DashboardSpec(
        name="inference",
        description="Decode latency against throughput as the batch grows, and what fits in memory.",
        controls={
            "model": Choice("model", model_options(), "llama-3.1-70b"),
            "chip": Choice("chip", _memory_chip_options(), "h200"),
            "n_chips": LogSlider("chips", 0, 10, 8),  # narrowed by _tp_limits
            "tp": LogSlider("tensor parallel", 0, 10, 8),  # narrowed by _tp_limits
            "batch": LogSlider("batch", 0, 12, 64),
            "input_len": LogSlider("input tokens", 4, 17, 2048),
            "output_len": LogSlider("output tokens", 0, 14, 256),
            "precision": Choice("weights", inference.WEIGHT_PRECISIONS, "fp8"),
            "pue": Slider("site PUE (wall / IT power)", 1.0, 2.0, 0.05, default_pue()),
        },
        view=inference_view, limits=_tp_limits,
    )


SPECS = (inference_spec,)
