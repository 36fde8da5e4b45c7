"""Notebook 04, *Distributed training*: one parallel layout's step time, MFU and memory next to the
search's best, the search's fastest layouts, weak scaling on GPU clusters and TPU pods, and the
waterfall of one published run's error."""

from __future__ import annotations

from typing import Callable, Mapping

import numpy as np
import pandas as pd

from accelbook import training
from accelbook.specs.catalogue import catalogue_cache
from accelbook.specs.chips import get_chip
from accelbook.specs.clusters import clusters, get_cluster
from accelbook.specs.models import get_model
from accelbook.ui import charts
from accelbook.ui.charts.training import largest_per_system
from accelbook.ui.dashboard import Choice, DashboardSpec, LogSlider, Slider, View, fmt_si

from .common import model_options, require_some

DEFAULT_TRAINING = dict(model="llama-3.1-70b", chip="h100", n_chips=1024, batch_tokens=2**24, seq_len=8192)
#: the layout keys that :func:`layout_label` reads (a ``TrainingEstimate.config``, or a row of ``training.search``)
LAYOUT_KEYS = ("tp", "cp", "pp", "vp", "dp", "ep", "microbatch", "zero_stage", "recompute")


def layout_label(config: Mapping) -> str:
    """A parallel layout in a few words, for a chart axis or a table: ``"tp8 pp4 dp32 mb1 ZeRO-1 recompute selective"``.

    ``config`` is a ``TrainingEstimate.config`` or a row of ``training.search`` (the keys of
    :data:`LAYOUT_KEYS`). Degrees of 1 are left out, except ``dp``; ``vp`` and ``ep`` appear when above 1.
    """
    return training.label_of(config)


def _training_chip_options() -> list[tuple[str, str]]:
    ids = []
    for cl in clusters().values():
        if cl.chip_id not in ids:
            ids.append(cl.chip_id)
    return [(get_chip(i).name, i) for i in ids]


def _cluster_controls() -> dict:
    """The model, chip, fleet and batch controls the training and search dashboards share."""
    d = DEFAULT_TRAINING
    return {
        "model": Choice("model", model_options(), d["model"]),
        "chip": Choice("chip (cluster)", _training_chip_options(), d["chip"]),
        "n_chips": LogSlider("chips", 3, 15, d["n_chips"]),
        "batch_tokens": LogSlider("global batch (tokens)", 17, 26, d["batch_tokens"]),
        "seq_len": LogSlider("sequence length", 11, 17, d["seq_len"]),
    }


def _precision_limits(values: Mapping) -> dict[str, list]:
    """The precisions the chip publishes a dense peak for (TPU v5e and A100 have no FP8 peak)."""
    return {"precision": [p for p in training.PRECISIONS if p in get_chip(values["chip"]).precisions]}


def _layout_limits(controls: Mapping) -> Callable[[Mapping], dict[str, list]]:
    """The training dashboard's :attr:`~accelbook.ui.controls.DashboardSpec.limits`: the parallel degrees
    a layout may take at the other controls' values, as ``training.estimate`` checks them (every degree, the
    chips and the batch in sequences are powers of two here, so "divides" is "at most"):

    - tp·cp·pp divides the chips, and leaves dp = chips / (tp·cp·pp) with dp·microbatch dividing the batch;
    - tp divides the attention heads; pp is at most the layers; cp > 1 needs a sequence divisible by 2·cp;
    - interleaving (vp > 1) needs pp > 1, pp·vp ≤ the layers and at least pp microbatches a step;
    - the precision needs a published peak on the chip.

    The first key gives way first: vp, then the microbatch, pp, cp, tp (a smaller fleet loses its pipeline
    before its tensor parallelism, as practitioners would shrink it)."""
    def opts(k, lo, hi, ok=lambda x: True) -> list:
        return [x for x in controls[k].options if lo <= x <= hi and ok(x)]

    def limits(v: Mapping) -> dict[str, list]:
        m = get_model(v["model"])
        n, B, s = v["n_chips"], v["batch_tokens"] / v["seq_len"], v["seq_len"]
        tp, cp, pp, mb, vp = (v[k] for k in ("tp", "cp", "pp", "microbatch", "vp"))
        need = n * mb / B                  # the least tp·cp·pp for dp·microbatch to divide the batch
        il = vp > 1
        room = B * tp * cp >= n * mb       # microbatches a step (B·tp·cp·pp / (n·mb)) ≥ pp: interleaving's need
        il_lo = n * mb / B if il else 0.0  # interleaving: tp·cp ≥ n·mb / B
        return {
            "vp": [1] + ([x for x in controls["vp"].options if x > 1 and pp * x <= m.n_layers] if pp > 1 and room else []),
            "microbatch": opts("microbatch", 1, B * tp * cp * (1 if il else pp) / n),
            "pp": opts("pp", max(need / (tp * cp), 2 if il else 1), min(n / (tp * cp), m.n_layers // vp))
            if room or not il else [],
            "cp": opts("cp", max(need / (tp * pp), il_lo / tp), n / (tp * pp), lambda x: x == 1 or s % (2 * x) == 0),
            "tp": opts("tp", max(need / (cp * pp), il_lo / cp), n / (cp * pp), lambda x: m.n_heads % x == 0),
            **_precision_limits(v),
        }

    return limits


def _step_parts(e: training.TrainingEstimate) -> dict[str, float]:
    """An estimate's step time and components, keyed as a row of ``training.search`` is."""
    return {**e.time, **e.memory, "step_time_s": e.step_time_s}


def _step_frames(layouts: Mapping[str, Mapping[str, float]]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The step chart's two frames, one row per layout and component (its display label).

    ``layouts``: layout label -> ``step_time_s`` and the ``training.TIME_LABELS`` and
    ``MEMORY_LABELS`` fields (a search row, or :func:`_step_parts` of an estimate).
    """
    labs, rows = list(layouts), list(layouts.values())
    secs = np.array([[r[k] for k in training.TIME_LABELS] for r in rows], dtype=np.float64).reshape(len(rows), -1)
    step = np.array([r["step_time_s"] for r in rows], dtype=np.float64)
    mem = np.array([[r[k] for k in training.MEMORY_LABELS] for r in rows], dtype=np.float64).reshape(len(rows), -1)
    t = pd.DataFrame({"layout": [lab for lab in labs for _ in training.TIME_LABELS],
                      "component": list(training.TIME_LABELS.values()) * len(labs),
                      "seconds": secs.ravel(), "share": (secs / step[:, None]).ravel()})
    m = pd.DataFrame({"layout": [lab for lab in labs for _ in training.MEMORY_LABELS],
                      "component": list(training.MEMORY_LABELS.values()) * len(labs), "bytes": mem.ravel()})
    return t, m


#: the mark next to an MFU above the highest MFU any published run reached on its chip family and precision
FLAG = "⚑"


def mfu_check_words(p: training.Plausibility | None) -> str:
    """What an MFU was checked against, for the text beside it: the flag with the published maximum and its
    source where it is above it, the maximum where it is not, "no published run" where none is."""
    if p is None:
        return ""
    if p.flagged:
        return f"**{FLAG} {p.flag}**"
    if p.ceiling is None:
        return p.note
    return f"below the {p.ceiling:.1%} published maximum ({p.source})"


def mfu_cell(mfu: float, flag: str, ceiling: float | None) -> str:
    """A table's MFU cell: ``"63.7% ⚑ > 47.0%"`` when flagged, ``"41.2%"`` when not."""
    return f"{mfu:.1%} {FLAG} > {ceiling:.1%}" if flag else f"{mfu:.1%}"


def _estimate_summary(e: training.TrainingEstimate, train_tokens: float, goodput: float | None = None) -> str:
    fit = "fits" if e.fits else f"**{e.why_not_fit()}**"
    band = training.error_band().words()
    lines = [
        f"**{e.model}** on {e.n_chips:,} × {e.chip}: step {fmt_si(e.step_time_s, 's')}, "
        f"**MFU {e.mfu:.1%}** ({e.mfu_convention}, as PaLM and Megatron-LM count it; "
        f"{e.mfu_as('causal'):.1%} with causal attention; HFU {e.hfu:.1%}), {e.tokens_per_s_per_chip:,.0f} tokens/s per chip, "
        f"{e.memory_per_chip_bytes / 1e9:.1f} GB per chip of {e.memory_capacity_bytes / 1e9:.0f} usable: {fit}.",
        f"MFU check: {mfu_check_words(e.plausibility)}. "
        f"Error band of these MFU and tokens/s figures: {band} (predicted / reported − 1 on the validation table; "
        "positive = the model is optimistic).",
    ]
    if e.fits:
        price = get_chip(e.chip).price_usd_per_hour
        cost = f", USD {e.cost_usd(train_tokens, goodput=goodput) / 1e6:,.1f} M at the list price of " \
            f"USD {price:.2f}/chip-hour" if price else " (no published price)"
        lines.append(f"{train_tokens / 1e12:g}T tokens: {e.time_to_train_summary(train_tokens, goodput)}; "
                     f"{e.chip_hours(train_tokens, goodput) / 1e6:,.2f} M chip-hours{cost}.")
    return "\n\n".join(lines)


@catalogue_cache(maxsize=64)
def _best_layout(model, chip, n_chips, batch_tokens, seq_len, precision, tp_overlap):
    """The search's best layout (cached: moving a layout slider does not search again)."""
    return training.search(model, chip, n_chips, batch_tokens, seq_len, precision=precision, top=1,
                           tp_overlap=tp_overlap).attrs["best"]


def training_view(model, chip, n_chips, batch_tokens, seq_len, tp, pp, cp, vp, microbatch, zero_stage, recompute,
                  precision, tp_overlap=0.0, train_tokens_t=15.0, goodput=None) -> View:
    layout = dict(tp=tp, pp=pp, cp=cp, vp=vp, microbatch=microbatch, zero_stage=zero_stage, recompute=recompute,
                  precision=precision, tp_overlap=tp_overlap)
    mine = training.estimate(model, chip, n_chips, batch_tokens, seq_len, **layout)
    ests = {"your layout: " + layout_label(mine.config): _step_parts(mine)}
    note = ""
    try:
        best = _best_layout(model, chip, n_chips, batch_tokens, seq_len, precision, tp_overlap)
        ests["search's best: " + layout_label(best.config)] = _step_parts(best)
        note = (f"\n\nThe search's best layout is **{mine.step_time_s / best.step_time_s:.2f}× faster** "
                f"than yours (MFU {mfu_cell(best.mfu, best.mfu_flag, best.mfu_ceiling)})." if mine.step_time_s > best.step_time_s * 1.0005 or not mine.fits
                else "\n\nYour layout is the fastest that fits.")
    except ValueError as err:
        note = f"\n\nSearch: {err}"
    t, m = _step_frames(ests)
    fig = charts.step_chart(t, m, mine.memory_capacity_bytes / 1e9,
                            title=f"{mine.model}, {n_chips:,} × {mine.chip}, batch {batch_tokens / 2**20:g}M tokens")
    table = mine.breakdown().assign(value=lambda d: [fmt_si(v, "s" if k == "time" else "B")
                                                     for v, k in zip(d["value"], d["kind"])],
                                    share=lambda d: d["share"].map("{:.1%}".format))
    limit = f"\n\nYour layout: {mine.limit}."
    return View(t, fig, _estimate_summary(mine, train_tokens_t * 1e12, goodput) + limit + note, table=table)


@catalogue_cache(maxsize=1)
def training_spec() -> DashboardSpec:
    controls = {
        **_cluster_controls(),
        # tp up to 64 and cp up to 32, as far as the search goes (training.search_space's max_tp and max_cp),
        # pp up to 64 stages; at a given fleet, batch and model each slider offers only the degrees that fit
        # them (_layout_limits), so that no setting asks for more chips than there are
        "tp": LogSlider("tensor parallel", 0, 6, 8),
        "pp": LogSlider("pipeline stages", 0, 6, 4),
        "cp": LogSlider("context parallel", 0, 5, 1),
        "vp": LogSlider("interleaved chunks", 0, 3, 1),
        "microbatch": LogSlider("microbatch (seqs)", 0, 3, 1, help="sequences per microbatch"),
        "zero_stage": Choice("ZeRO stage", (0, 1, 2, 3), 1),
        "recompute": Choice("recompute", training.RECOMPUTE, "selective"),
        "precision": Choice("precision", training.PRECISIONS, "bf16"),
        "tp_overlap": Slider("TP comm hidden", 0.0, 1.0, 0.1, 0.0,
                             help="share of the tensor-parallel communication hidden behind compute"),
        "train_tokens_t": Slider("tokens to train (T)", 0.5, 30.0, 0.5, 15.0),
        "goodput": Slider("goodput", 0.5, 1.0, 0.01,
                          training.published_goodput().fraction,
                          help="share of the time spent training: failures, restarts and checkpoints take the "
                               "rest; default: "
                               + training.goodput_words()),
    }
    return DashboardSpec(
        name="training",
        description="One parallel layout: step time, MFU and memory per chip, next to the search's best layout.",
        controls=controls, view=training_view, limits=_layout_limits(controls),
    )


def search_view(model, chip, n_chips, batch_tokens, seq_len, precision) -> View:
    df = training.search(model, chip, n_chips, batch_tokens, seq_len, precision=precision, top=12)
    attrs, df.attrs = df.attrs, {}    # pandas would deep-copy them (the best estimate) into every frame below
    best = attrs["best"]
    head = df.head(6)
    fields = [*LAYOUT_KEYS, "step_time_s", *training.TIME_LABELS, *training.MEMORY_LABELS]
    recs = [dict(zip(fields, r)) for r in zip(*(head[k].tolist() for k in fields))]
    t, m = _step_frames({f"{i + 1}. {layout_label(r)}": r for i, r in enumerate(recs)})
    # the dashed line: the usable memory the search held every layout to (HBM less the reserve)
    fig = charts.step_chart(t, m, best.memory_capacity_bytes / 1e9,
                            title=f"the fastest layouts that fit ({attrs['n_fit']:,} of "
                                  f"{attrs['n_evaluated']:,} fit)")
    h, ceil = df.head(12), attrs["mfu_ceiling"]
    table = pd.DataFrame({**{k: h[k] for k in (*LAYOUT_KEYS, "grad_sync")},
                          "step": [fmt_si(v, "s") for v in h["step_time_s"].tolist()],
                          "MFU": [mfu_cell(v, f, ceil and ceil.mfu) for v, f in zip(h["mfu"].tolist(), h["mfu_flag"].tolist())],
                          "memory": ["{:.1f} GB".format(v) for v in (h["memory_per_chip_bytes"].to_numpy() / 1e9).tolist()],
                          "why": h["why"]})
    summary = (f"Evaluated **{attrs['n_evaluated']:,} layouts**, {attrs['n_fit']:,} fit in memory. Best: "
               f"**{layout_label(best.config)}**, gradients synced every {best.config['grad_sync']}, "
               f"MFU {best.mfu:.1%}, {best.tokens_per_s_per_chip:,.0f} tokens/s per chip "
               f"({training.error_band().words()}); MFU check: {mfu_check_words(best.plausibility)}. "
               f"Searched: {', '.join(attrs['searched'])}. "
               "`why` says what costs each runner-up most compared with the best.")
    return View(t, fig, summary, table=table)


@catalogue_cache(maxsize=1)
def search_spec() -> DashboardSpec:
    return DashboardSpec(
        name="search",
        description="Every data/tensor/pipeline/context/expert layout, microbatch, ZeRO stage and recompute; "
                    "the fastest that fit.",
        controls={**_cluster_controls(), "precision": Choice("precision", training.PRECISIONS, "bf16")},
        view=search_view, limits=_precision_limits,
    )


SCALING_SYSTEMS = {"DGX H100 + InfiniBand": "dgx-h100", "GB200 NVL72": "gb200-nvl72",
                   "TPU v5p pod (ICI + OCS)": "tpu-v5p-pod", "TPU v6e pods + DCN": "tpu-v6e-pod"}


#: the columns of the scaling dashboard's table, one row per (system, chip count), and their types
_SCALING_COLUMNS = {"system": object, "n_chips": np.int64, "efficiency": float, "efficiency_note": object,
                    "mfu": float, "comm_share": float, "layout": object, "tokens_per_s_per_chip": float}


@catalogue_cache(maxsize=64)
def _scaling_one(model, name, seqs_per_chip, seq_len, max_chips, bw_scale) -> dict[str, np.ndarray]:
    """One system's weak-scaling curve, the points with an efficiency, as read-only arrays (cached:
    toggling another system does not recompute it); no rows when nothing fits."""
    counts = [2**k for k in range(6, int(np.log2(max_chips)) + 1)]
    cl = get_cluster(SCALING_SYSTEMS[name])
    if bw_scale != 1.0:
        cl = cl.with_changes(network_bw_bytes_per_s=cl.network_bw_bytes_per_s * bw_scale)
    try:
        cols = training.scaling_columns(model, None, counts, seq_len, batch_tokens_per_chip=seqs_per_chip * seq_len,
                                        cluster=cl, microbatch=[1, 2], vp=[1, 4])
    except ValueError:   # nothing fits even at the largest size: the view says so
        cols = {}
    if "efficiency" not in cols:
        out = {k: np.empty(0, dtype=t) for k, t in _SCALING_COLUMNS.items()}
    else:
        keep = ~np.isnan(cols["efficiency"])
        out = {k: np.full(int(keep.sum()), name, dtype=object) if k == "system" else np.asarray(cols[k], dtype=t)[keep]
               for k, t in _SCALING_COLUMNS.items()}
    out["mfu_flag"] = training.mfu_flags(cl.chip_id, "bf16", out["mfu"])
    for v in out.values():
        v.flags.writeable = False
    return out


def scaling_view(model, systems, seqs_per_chip, seq_len, max_chips, bw_scale=1.0) -> View:
    require_some(systems, "system")
    parts = {name: _scaling_one(model, name, seqs_per_chip, seq_len, max_chips, bw_scale) for name in systems}
    missing = [name for name, p in parts.items() if not len(p["n_chips"])]
    data = pd.DataFrame({k: np.concatenate([p[k] for p in parts.values()]) for k in (*_SCALING_COLUMNS, "mfu_flag")})
    if data.empty:
        raise ValueError(f"{model} fits on none of these systems up to {max_chips:,} chips with "
                         f"{seqs_per_chip:g} sequences of {seq_len:,} tokens per chip; raise the largest fleet "
                         "or lower the sequences per chip")
    fig = charts.scaling_chart(data, title=f"weak scaling, {seqs_per_chip:g} sequence{'s' if seqs_per_chip != 1 else ''} "
                                                        f"of {seq_len:,} tokens per chip")
    last = {k: data[k].to_numpy() for k in ("system", "efficiency", "efficiency_note", "mfu", "comm_share", "layout",
                                            "mfu_flag")}
    at = largest_per_system(last["system"], data["n_chips"].to_numpy())
    last = [dict(zip(last, r)) for r in zip(*(v[at].tolist() for v in last.values()))]
    summary = "" if not missing else f"Nothing fits on {', '.join(missing)} at these settings. "
    summary += "At the largest size: " + "; ".join(
        f"**{r['system']}** {r['efficiency']:.1%} efficiency, MFU {r['mfu']:.0%}"
        f"{f' **{FLAG}**' if r['mfu_flag'] else ''}, comm + bubble {r['comm_share']:.0%} "
        f"({r['layout']})" for r in last) + f". MFU error band: {training.error_band().words()}."
    flagged = [r for r in last if r["mfu_flag"]]
    if flagged:
        summary += " " + FLAG + " " + "; ".join(f"{r['system']}: {r['mfu_flag']}" for r in flagged) + "."
    above = [r for r in last if r["efficiency"] > 1.0]
    if above:
        summary += ("\n\nAbove 100 %: " + "; ".join(f"**{r['system']}**, {r['efficiency_note']}" for r in above)
                    + ". Above 100 % the smallest fleet pays a cost that the largest does not (a torus slice with fewer "
                      "axes has fewer links per chip; ZeRO-3 shards the optimizer step over more chips), with the "
                      "same layout kept at every size; treat these gains as the model's upper bound, not a measurement.")
    return View(data[["system", "n_chips", "efficiency", "efficiency_note", "mfu", "comm_share"]], fig, summary,
                table=data[["system", "n_chips", "tokens_per_s_per_chip", "mfu", "mfu_flag", "efficiency",
                            "efficiency_note", "comm_share", "layout"]])


@catalogue_cache(maxsize=1)
def scaling_spec() -> DashboardSpec:
    return DashboardSpec(
        name="scaling",
        description="Throughput per chip as the fleet grows, with the best layout at each size.",
        controls={
            "model": Choice("model", model_options(), "gpt3-175b"),
            "systems": Choice("systems", tuple(SCALING_SYSTEMS), tuple(SCALING_SYSTEMS), multi=True),
            "seqs_per_chip": LogSlider("sequences per chip", -3, 3, 1),
            "seq_len": LogSlider("sequence length", 11, 15, 2048),
            "max_chips": LogSlider("largest fleet", 8, 15, 8192),
            "bw_scale": Slider("scale-out bandwidth ×", 0.25, 4.0, 0.25, 1.0),
        },
        view=scaling_view,
    )


#: the run the waterfall opens on
DEFAULT_WATERFALL_RUN = "llama31-405b-8k"


def waterfall_words(df: pd.DataFrame) -> str:
    """A run's waterfall (``training.waterfall``) in words: the ideal, the largest losses, the end."""
    first, last = df.iloc[0], df.iloc[-1]
    terms = df.iloc[1:].assign(points=lambda d: d["error"].shift(1, fill_value=first["error"]) - d["error"])
    top = terms.reindex(terms["points"].abs().sort_values(ascending=False).index).head(3)
    losses = "; ".join(f"{r.term} {fmt_si(r.seconds, 's')} ({-r.points * 100:+.0f} points)".replace("-", "\u2212")
                       for r in top.itertuples())
    return (f"**{first['run']}**: at the chip's peak the step would take {fmt_si(first['cumulative_s'], 's')} and "
            f"read {first['predicted']:.4g} ({first['metric']}, {first['error']:+.0%} against the reported "
            f"{first['reported']:.4g}). Largest terms beyond that: {losses}. The full step, "
            f"{fmt_si(last['cumulative_s'], 's')}, predicts {last['predicted']:.4g}: **{last['error']:+.1%}**, the "
            f"validation table's error (over all target runs: {training.error_band().words()}).")


def waterfall_view(run) -> View:
    df = training.waterfall(run)
    table = df[["term", "seconds", "cumulative_s", "predicted", "error", "note"]]
    return View(df.drop(columns=["note"]), charts.waterfall_chart(df), waterfall_words(df), table=table)


def _run_options() -> list[tuple[str, str]]:
    return [(e["name"], rid) for rid, e in training.published_runs().items()]


@catalogue_cache(maxsize=1)
def waterfall_spec() -> DashboardSpec:
    return DashboardSpec(
        name="waterfall",
        description="One published run: its step time built up from the ideal, term by term, and the error after each.",
        controls={"run": Choice("published run", _run_options(), DEFAULT_WATERFALL_RUN)},
        view=waterfall_view,
    )


SPECS = (training_spec, search_spec, scaling_spec, waterfall_spec)
