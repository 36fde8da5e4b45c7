"""Where the model's error on a published run comes from: its step time built up term by term.

Each published run of :func:`~accelbook.training.validation.validation_table` is predicted from one
step time, the sum of the terms of ``TrainingEstimate.time`` (:data:`~accelbook.training.step.TIME_LABELS`).
The waterfall starts from the step a chip running at peak would take,

    t_ideal = (B·s / n) · C_causal / P,

``B·s / n`` the tokens one chip trains per step, ``C_causal`` the model's training FLOPs per token
with causal attention (the work a causal kernel does: :func:`~accelbook.training.mfu.counted_flops_per_token`)
and ``P`` the chip's dense peak at the run's precision (:func:`~accelbook.training.mfu.reference_peak_flop_s`),
then adds the terms in their order. The ideal time is carved out of the first terms (the matmuls), so
each bar is what a term costs *beyond* peak, and the last point is the step time itself:

    t_k = t_ideal + Σ_{i ≤ k} (t_i − a_i),   a_i = min(t_i, t_ideal − Σ_{j < i} a_j).

Should the terms not add up to the step time, a last bar (``rest of the step``) carries the
difference, so the waterfall always ends at the prediction of the validation table.

At every point the prediction is expressed as the authors reported it
(:func:`~accelbook.training.validation.predicted_metric`: their metric, their FLOP counting) and
compared with the reported value: ``error = predicted / reported − 1``. Worked number: Llama 3.1
405B at 8K on 8,192 H100s trains 2,048·8,192 / 8,192 = 2,048 tokens per chip and step, at
C_causal = 2.52e12 FLOP/token and P = 989.4 TFLOP/s: t_ideal = 2,048 · 2.52e12 / 989.4e12 = 5.2 s.

The ideal counts causal attention and no recomputation, so in a convention that counts more (full
attention, or the recomputed forward of Narayanan et al. 2021, eq. 3) it reads above 100 % of peak.
"""

from __future__ import annotations

import dataclasses

import pandas as pd

from accelbook.specs.catalogue import catalogue_cache

from .mfu import counted_flops_per_token, reference_peak_flop_s
from .step import TIME_LABELS, TrainingEstimate
from .validation import predicted_metric, published_runs, run_estimate

IDEAL_LABEL = "ideal: model FLOPs at peak"
REST_LABEL = "rest of the step"
#: a rest smaller than this share of the step is rounding, not a bar
REST_TOLERANCE = 1e-12


def ideal_step_time(est: TrainingEstimate, model, chip) -> float:
    """``t_ideal = (B·s / n) · C_causal / P`` (s): the step at the dense peak of the run's precision."""
    c = est.config
    tokens_per_chip = c["global_batch_sequences"] * c["seq_len"] / est.n_chips
    return tokens_per_chip * counted_flops_per_token(model, c["seq_len"], "causal") \
        / reference_peak_flop_s(chip, c["precision"], "precision")


def at_step_time(est: TrainingEstimate, step_time_s: float) -> TrainingEstimate:
    """``est`` as if its step took ``step_time_s``: the same work, every rate scaled by
    ``est.step_time_s / step_time_s`` (what :func:`predicted_metric` reads)."""
    f = est.step_time_s / step_time_s
    return dataclasses.replace(est, step_time_s=step_time_s, tokens_per_s_per_chip=est.tokens_per_s_per_chip * f,
                               mfu=est.mfu * f, hfu=est.hfu * f,
                               mfu_by_convention={k: v * f for k, v in est.mfu_by_convention.items()})


def step_bars(est: TrainingEstimate, ideal_s: float) -> pd.DataFrame:
    """The bars of the waterfall: field, term (display label), term_s (the term's own time), seconds
    (what the bar adds: the term less the share of ``ideal_s`` carved out of it) and cumulative_s."""
    rows = [{"field": "ideal", "term": IDEAL_LABEL, "term_s": ideal_s, "seconds": ideal_s}]
    left = ideal_s
    for k, t in est.time.items():   # TIME_LABELS order
        carved = min(t, left)
        left -= carved
        rows.append({"field": k, "term": TIME_LABELS[k], "term_s": t, "seconds": t - carved})
    df = pd.DataFrame(rows)
    df["cumulative_s"] = df["seconds"].cumsum()
    rest = est.step_time_s - df["cumulative_s"].iloc[-1]
    if abs(rest) > REST_TOLERANCE * est.step_time_s:
        df.loc[len(df)] = {"field": "rest", "term": REST_LABEL, "term_s": rest, "seconds": rest,
                           "cumulative_s": est.step_time_s}
    df.loc[df.index[-1], "cumulative_s"] = est.step_time_s   # the sum above, without its last rounding
    return df


@catalogue_cache(maxsize=64)
def _waterfall(run_id: str, path) -> pd.DataFrame:
    runs = published_runs(path)
    if run_id not in runs:
        raise ValueError(f"unknown run {run_id!r}; the published runs are {', '.join(runs)}")
    e = runs[run_id]
    model, chip, est = run_estimate(e)
    df = step_bars(est, ideal_step_time(est, model, chip))
    rep = e["reported_value"]
    pred = [predicted_metric(at_step_time(est, t), model, chip, e["metric"], e["convention"])
            for t in df["cumulative_s"]]
    df = df.assign(predicted=pred, reported=rep, error=[p / rep - 1 for p in pred])
    note = [f"{t - s:.3g} s of its {t:.3g} s are in the ideal bar" if k in TIME_LABELS and s < t else ""
            for k, t, s in zip(df["field"], df["term_s"], df["seconds"])]
    df.insert(0, "step", range(len(df)))
    df.insert(0, "run", e["name"])
    df.insert(0, "id", run_id)
    return df.assign(metric=e["metric"], convention=e["convention"], role=e["role"], note=note)


def waterfall(run_id: str, path=None) -> pd.DataFrame:
    """The step time of published run ``run_id`` built up from the ideal, term by term (module docstring).

    One row per bar: id, run, step (0 = the ideal, then :data:`TIME_LABELS` in order, then the rest
    of the step if the terms do not add up), field (result field, or "ideal"/"rest"), term (display
    label), term_s (the term's time, s), seconds (what the bar adds, s), cumulative_s, predicted
    (the authors' metric at that cumulative step time), reported, error (predicted / reported − 1),
    metric, convention, role, note. The last row's error is the validation table's.
    Cached per (run, path); a copy is returned.
    """
    return _waterfall(run_id, path).copy()


@catalogue_cache(maxsize=4)
def _waterfall_table(path) -> pd.DataFrame:
    frames = []
    for rid, e in published_runs(path).items():
        if e["role"] != "target":
            continue
        try:
            frames.append(_waterfall(rid, path))
        except ValueError:   # no layout fits: the validation table says why
            continue
    return pd.concat(frames, ignore_index=True)


def waterfall_table(path=None) -> pd.DataFrame:
    """:func:`waterfall` of every evaluated target run, concatenated (cached; a copy is returned)."""
    return _waterfall_table(path).copy()
