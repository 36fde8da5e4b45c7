"""Throughput against chip count: :func:`scaling`, weak or strong, with a fixed or a searched layout."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd

from accelbook.checks import output_fields, positive
from accelbook.limits import seconds_words
from accelbook.specs.chips import MEMORY_RESERVE, Chip, usable_memory_bytes
from accelbook.specs.clusters import Cluster
from accelbook.specs.models import Model

from .arguments import batch_sequences, chip_count, resolve, sequence_length
from .kernel import evaluate_layout
from .layouts import best_config
from .records import (
    GRAD_SYNC,
    RECOMPUTE,
    SCHEDULES,
    attention_head_dim,
    chip_record,
    model_record,
    options_record,
)
from .step import TIME_LABELS, reported_mfu, to_estimate

#: the ``TrainingEstimate.time`` keys counted as communication in ``comm_share`` (exposed
#: communication and the bubble)
COMM_COMPONENTS = ("t_tp_comm_s", "t_cp_comm_s", "t_ep_comm_s", "t_pp_comm_s", "t_bubble_s", "t_dp_comm_s",
                   "t_dp_bucket_s")
#: the number columns of :func:`scaling`'s rows besides n_chips (NaN where a chip count has no estimate)
_FLOAT_COLUMNS = ("tokens_per_s", "tokens_per_s_per_chip", "mfu", "comm_share", "step_time_s")


def scaling(model: Model | str, chip: Chip | str | None, chip_counts, seq_len: int,
            batch_tokens_per_chip: float | None = None, global_batch_tokens: float | None = None,
            precision: str = "bf16", cluster: Cluster | str | None = None, layout: str = "fixed",
            **fixed) -> pd.DataFrame:
    """Throughput against chip count.

    Weak scaling: ``batch_tokens_per_chip`` fixed (the global batch grows with the chips).
    Strong scaling: ``global_batch_tokens`` fixed. ``layout="fixed"``: the best layout at the
    LARGEST count is kept and only data parallelism changes (classic scaling: what is lost is
    communication); ``layout="best"``: searched anew at each count (it may change strategy, so
    efficiency can exceed 1 when more chips let a faster layout fit).
    Efficiency = (tokens/s per chip) / (that at the first count that fits). Columns: n_chips,
    tokens_per_s, tokens_per_s_per_chip, efficiency, efficiency_note, mfu, comm_share (exposed
    communication + bubble over the step), layout, note. ``fixed`` narrows the search as in :func:`search`.

    An efficiency above 1 always comes with its reason in ``efficiency_note`` (:func:`superlinear_reason`),
    empty otherwise. With a fixed layout it is the optimizer step: from ZeRO-1 on each chip updates
    ``1/dp`` of the parameters, so that step shrinks as data parallelism grows, while the model hides
    the data-parallel collectives (which grow with dp) behind compute.
    """
    return pd.DataFrame(scaling_columns(model, chip, chip_counts, seq_len, batch_tokens_per_chip, global_batch_tokens,
                                        precision, cluster, layout, **fixed))


def scaling_columns(model: Model | str, chip: Chip | str | None, chip_counts, seq_len: int,
                    batch_tokens_per_chip: float | None = None, global_batch_tokens: float | None = None,
                    precision: str = "bf16", cluster: Cluster | str | None = None, layout: str = "fixed",
                    **fixed) -> dict:
    """:func:`scaling`'s table as its columns: number columns as arrays (NaN where a chip count has no
    estimate, the reason in ``note``), the others as lists; a dashboard that stacks several curves builds
    one table of them."""
    if (batch_tokens_per_chip is None) == (global_batch_tokens is None):
        raise ValueError("give exactly one of batch_tokens_per_chip (weak scaling) or global_batch_tokens (strong)")
    if layout not in ("fixed", "best"):
        raise ValueError(f"layout must be 'fixed' or 'best', got {layout!r}")
    if isinstance(chip_counts, (str, bytes)) or not isinstance(chip_counts, Iterable):
        raise TypeError(f"chip_counts must be a list of chip counts, got {type(chip_counts).__name__} {chip_counts!r}")
    counts = sorted({chip_count(c, "each of chip_counts") for c in chip_counts})
    if not counts:
        raise ValueError("chip_counts must hold at least one chip count, got an empty list")
    seq_len = sequence_length(seq_len)
    if batch_tokens_per_chip is not None:
        positive("batch_tokens_per_chip", batch_tokens_per_chip)
    model, chip, cl = resolve(model, chip, cluster, precision)
    rows, base, times = [], None, {}

    def gbt_of(n):
        return global_batch_tokens if global_batch_tokens is not None else batch_tokens_per_chip * n

    if layout == "fixed":
        try:
            base = best_config(model, chip, counts[-1], gbt_of(counts[-1]), seq_len, precision, cl, fixed)
        except ValueError as e:
            raise ValueError(f"no layout fits at the largest of chip_counts ({counts[-1]:,} chips, a global batch of "
                             f"{gbt_of(counts[-1]):,} tokens from batch_tokens_per_chip or global_batch_tokens): "
                             f"{e}") from None
    vecs = (model_record(model, seq_len), *chip_record(chip, cl, precision, seq_len, attention_head_dim(model)))
    for n in counts:
        gbt = gbt_of(n)
        try:
            if layout == "best":
                base = best_config(model, chip, n, gbt, seq_len, precision, cl, fixed)
            out, c = _evaluate_fast(chip, n, gbt, seq_len, base, vecs)
        except ValueError as e:
            rows.append({"n_chips": n, "note": str(e)})
            continue
        row, times[n] = _point(model, chip, cl, n, out, c, vecs)
        rows.append(row)
    cols = _columns(rows)
    if "tokens_per_s_per_chip" in cols and not np.isnan(cols["tokens_per_s_per_chip"]).all():
        tps = cols["tokens_per_s_per_chip"]
        first = int(np.flatnonzero(~np.isnan(tps))[0])
        cols["efficiency"] = eff = tps / tps[first]
        ref_n = cols["n_chips"][first]
        cols["efficiency_note"] = [superlinear_reason(*times[ref_n], *times[n]) if e > 1.0 else ""
                                   for n, e in zip(cols["n_chips"], np.nan_to_num(eff, nan=0.0))]
    numbers = {k: v for k, v in cols.items() if isinstance(v, np.ndarray) and v.dtype.kind in "iuf"}
    try:    # the check on the number columns; a failure is named as the table's columns are (below)
        output_fields("training.scaling", numbers, fractions={"comm_share"}, missing_ok=True)
    except ValueError:
        output_fields("training.scaling", pd.DataFrame(cols), fractions={"comm_share"}, missing_ok=True)
        raise
    return cols


def _point(model, chip, cl, n, out, c, vecs) -> tuple[dict, tuple]:
    """One chip count's row of :func:`scaling` from its result record ``out`` and config ``c``, and (time
    components, tokens a step per chip, config) for :func:`superlinear_reason`: what :func:`~.step.to_estimate`
    would report, without building the estimate (only an unfit point needs it, for its note)."""
    time = {k: float(out[k]) for k in TIME_LABELS}
    step, tps = float(out["step_time_s"]), float(out["tokens_per_s_per_chip"])
    fits = bool(out["fits"])
    row = {"n_chips": n, "tokens_per_s": tps * n, "tokens_per_s_per_chip": tps,
           "mfu": reported_mfu(tps, model, chip, c["seq_len"], c["precision"]),
           "comm_share": sum(time[k] for k in COMM_COMPONENTS) / step, "step_time_s": step, "fits": fits,
           "layout": f"tp{c['tp']} cp{c['cp']} pp{c['pp']} vp{c['vp']} dp{c['dp']} ep{c['ep']} "
                     f"mb{c['microbatch']} zero{c['zero_stage']} {c['recompute']}",
           "note": "" if fits else to_estimate(out, model, chip, cl, n, c, vecs[0], vecs[2], c["flash_attention"],
                                               MEMORY_RESERVE).why_not_fit()}
    return row, (time, step * tps, c)


def _columns(rows: list[dict]) -> dict:
    """The columns ``pd.DataFrame(rows)`` would have, in its order (each key where it first appears), as
    arrays: numbers as float64 (int64 for n_chips), with NaN where a row lacks the key; other columns as lists."""
    keys = list(dict.fromkeys(k for r in rows for k in r))
    cols = {}
    for k in keys:
        vals = [r.get(k, np.nan) for r in rows]
        if k == "n_chips":
            cols[k] = np.array(vals, dtype=np.int64)
        elif k in _FLOAT_COLUMNS:
            cols[k] = np.array(vals, dtype=np.float64)
        else:
            cols[k] = vals
    return cols


def superlinear_reason(ref_time: dict, ref_tokens: float, ref_config: dict, time: dict, tokens: float,
                       config: dict) -> str:
    """Why a point is faster per chip than the reference: the step-time components (``time``, s, of a
    step of ``tokens`` tokens per chip) that cost less per token than at the reference, largest first.

    The optimizer step's shrinking is named as ZeRO's sharding over dp; a change of layout as such.
    """
    gains = sorted(((ref_time[k] / ref_tokens - time[k] / tokens, k) for k in time), reverse=True)
    parts = []
    for gain, k in gains[:2]:
        if gain <= 0:
            break
        a, b = ref_time[k] * tokens / ref_tokens, time[k]
        what = f"{TIME_LABELS[k]} {seconds_words(a)} → {seconds_words(b)}"
        if k == "t_optimizer_s" and config["zero_stage"] >= 1:
            what += f" (ZeRO-{config['zero_stage']} shards it over dp = {config['dp']:,})"
        parts.append(what)
    keys = ("tp", "cp", "pp", "vp", "ep", "microbatch", "zero_stage", "recompute")
    if any(ref_config[k] != config[k] for k in keys):
        parts.append("a different layout fits at this size")
    return "superlinear: " + "; ".join(parts or ["rounding"])


def _evaluate_fast(chip, n, gbt, s, c: dict, vecs) -> tuple[np.record, dict]:
    """The result record (:data:`~.records.RESULT`) and config of :func:`estimate` for a layout already checked by a
    search at another chip count, with the model and chip records built once: only what changes with the
    chip count is checked here."""
    mv, cv, _ = vecs
    tcp = c["tp"] * c["cp"] * c["pp"]
    if n % tcp:
        raise ValueError(f"{n} chips do not split into tp·cp·pp = {tcp}")
    dp = n // tcp
    B = batch_sequences(gbt, s)
    if B % (dp * c["microbatch"]) or dp % c["ep"]:
        raise ValueError(f"the batch of {B} sequences does not split over dp = {dp} × microbatch {c['microbatch']}")
    m = B // (dp * c["microbatch"])
    if c["vp"] > 1 and m % c["pp"]:
        raise ValueError(f"{m} microbatches are not a multiple of pp = {c['pp']} (needed for interleaving)")
    out = evaluate_layout(mv, cv, B, s, c["tp"], c["cp"], c["pp"], c["vp"], dp, c["ep"], c["microbatch"],
                          c["zero_stage"], RECOMPUTE.index(c["recompute"]), c["flash_attention"],
                          c["sequence_parallel"], usable_memory_bytes(chip.hbm_bytes, MEMORY_RESERVE),
                          options_record(0.0, c.get("cp_comm", "ring")),
                          GRAD_SYNC.index(c["grad_sync"]) if "grad_sync" in c else None,
                          SCHEDULES.index(c.get("schedule", "1f1b")))
    return out, dict(c, dp=dp, global_batch_sequences=B, n_microbatches=int(round(out["n_microbatches"])))
