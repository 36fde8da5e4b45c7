"""Built-in sweep 2: the serving simulator's Monte Carlo over arrival rates × chunk sizes × seeds.

Each configuration draws a workload (:func:`accelbook.inference.workload.workload`: Poisson
arrivals at ``rate_per_s``, lognormal prompt and output lengths, ``seed``) and serves it with
:func:`accelbook.inference.serving.simulate` (continuous batching, chunked prefill of
``chunk_tokens``) on one replica whose step cost comes from the inference model
(:func:`accelbook.inference.step.step_cost`). One row per run: percentiles, throughput, goodput (the
requests per second that meet both service-level objectives, SLOs) and SLO attainment.

Seeds are independent replications: :func:`confidence_intervals` gives each metric's mean over the
seeds and its Student-t interval, ``mean ± t(1 - α/2, n - 1)·s/√n`` (``s`` the standard deviation
over the ``n`` seeds). Worked number: five seeds with goodput 18, 19, 20, 19, 19 req/s: mean 19.0,
s = 0.71, t(0.975, 4) = 2.776, so 19.0 ± 0.88 req/s.

Default grid: Llama 3.1 70B in fp8 on 8 × H200, 2,000 requests a run (1,024 tokens in, 256 out on
average), 8 rates × 3 chunk sizes × 5 seeds = 120 runs, a few seconds on two workers.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from accelbook.checks import flag, fraction, integral, real
from accelbook.inference.serving import simulate
from accelbook.inference.step import step_cost
from accelbook.inference.workload import workload
from accelbook.specs.catalogue import catalogue_cache

from .engine import run
from .grid import ERROR

METRICS = ("ttft_p50_s", "ttft_p99_s", "tbt_p50_s", "tbt_p99_s", "e2e_p50_s", "throughput_tok_s", "goodput_req_s",
           "slo_attainment")


def default_grid() -> dict:
    return {"rate_per_s": [4.0, 8.0, 12.0, 16.0, 20.0, 24.0, 28.0, 32.0], "chunk_tokens": [256, 1024, 4096],
            "seed": [0, 1, 2, 3, 4], "model": ["llama-3.1-70b"], "chip": ["h200"], "n_chips": [8],
            "precision": ["fp8"], "n_requests": [2000], "prompt_mean": [1024], "output_mean": [256],
            "length_sigma": [0.5], "ttft_slo_s": [1.0], "tbt_slo_s": [0.05]}


@catalogue_cache(maxsize=64)
def _cost(model, chip, n_chips, precision, prompt_mean, output_mean):
    return step_cost(model, chip, n_chips, precision, input_len=prompt_mean, output_len=output_mean)


def serving_point(rate_per_s: float, chunk_tokens: int, seed: int, model: str = "llama-3.1-70b", chip: str = "h200",
                  n_chips: int = 8, precision: str = "fp8", n_requests: int = 2000, prompt_mean: int = 1024,
                  output_mean: int = 256, length_sigma: float = 0.5, ttft_slo_s: float = 1.0,
                  tbt_slo_s: float = 0.05) -> dict:
    """One simulated run (module docstring): a dict of its metrics (:func:`simulate_point`, then
    :func:`point_metrics` under the two objectives)."""
    r = simulate_point(rate_per_s, chunk_tokens, seed, model, chip, n_chips, precision, n_requests, prompt_mean,
                       output_mean, length_sigma)
    return point_metrics(r, ttft_slo_s, tbt_slo_s)


def simulate_point(rate_per_s: float, chunk_tokens: int, seed: int, model: str = "llama-3.1-70b", chip: str = "h200",
                   n_chips: int = 8, precision: str = "fp8", n_requests: int = 2000, prompt_mean: int = 1024,
                   output_mean: int = 256, length_sigma: float = 0.5, records: bool = True):
    """The simulated run behind :func:`serving_point`: a :class:`~accelbook.inference.serving_result.ServingResult`
    (the latency objectives do not change the run, only what counts as good, so a dashboard keeps the run;
    ``records=False``: per-request times only, enough for goodput, see
    :func:`~accelbook.inference.serving.simulate`)."""
    n_chips, prompt_mean, output_mean = (integral(k, v) for k, v in (("n_chips", n_chips), ("prompt_mean", prompt_mean),
                                                                     ("output_mean", output_mean)))
    n_requests, seed, chunk_tokens = (integral("n_requests", n_requests), integral("seed", seed, 0),
                                      integral("chunk_tokens", chunk_tokens))
    cost = _cost(model, chip, n_chips, precision, prompt_mean, output_mean)
    w = workload(n_requests, real("rate_per_s", rate_per_s, 0.0, lo_open=True, allow_inf=True),
                 prompt=("lognormal", prompt_mean, length_sigma), output=("lognormal", output_mean, length_sigma),
                 seed=seed)
    return simulate(w, cost, chunk_tokens=chunk_tokens, records=flag("records", records))


def point_metrics(r, ttft_slo_s: float = 1.0, tbt_slo_s: float = 0.05) -> dict:
    """A run's metrics (:data:`METRICS`) under the objectives TTFT ≤ ``ttft_slo_s``, mean TBT ≤ ``tbt_slo_s``."""
    p = r.percentiles()
    return {"ttft_p50_s": p["ttft_p50_s"], "ttft_p99_s": p["ttft_p99_s"], "tbt_p50_s": p["tbt_p50_s"],
            "tbt_p99_s": p["tbt_p99_s"], "e2e_p50_s": p["e2e_p50_s"], "throughput_tok_s": r.throughput_tok_s,
            "goodput_req_s": r.goodput(ttft_slo_s, tbt_slo_s),
            "slo_attainment": float(r.meets_slo(ttft_slo_s, tbt_slo_s).mean())}


def serving_sweep(grid=None, client=None, **run_kw) -> pd.DataFrame:
    """:func:`serving_point` over ``grid`` (default :func:`default_grid`) with :func:`~.engine.run`."""
    return run(serving_point, default_grid() if grid is None else grid, client=client, **run_kw)


def replication_intervals(table, level: float = 0.95) -> dict:
    """The Student-t interval of each row of ``table`` (groups × replications, NaN where a run is missing or
    failed; module docstring): ``mean``, ``lo``, ``hi``, ``half_width`` and ``n`` (the runs counted), arrays
    over the rows. Each row's values are taken in their order, the mean by compensated (Kahan) summation and
    the variance by Welford's update: the arithmetic of pandas' groupby kernels, so
    :func:`confidence_intervals` gives the numbers it gave through pandas, to the bit. Vectorised over the
    rows, one step per column."""
    level = fraction("level", level, zero_ok=False)
    table = np.asarray(table, dtype=float)
    rows = table.shape[0]
    total, comp, n = np.zeros(rows), np.zeros(rows), np.zeros(rows, dtype=np.int64)
    mean, m2 = np.zeros(rows), np.zeros(rows)
    with np.errstate(invalid="ignore", divide="ignore"):
        for x in table.T:
            ok = ~np.isnan(x)
            n += ok
            y = x - comp
            t = total + y
            c = t - total - y
            comp = np.where(ok, np.where(np.isnan(c), 0.0, c), comp)     # an infinite value leaves no compensation
            total = np.where(ok, t, total)
            old = mean
            mean = np.where(ok, old + (x - old) / n, old)
            m2 = np.where(ok, m2 + (x - mean) * (x - old), m2)
        avg = np.where(n > 0, total / n, np.nan)
        sd = np.where(n > 1, np.sqrt(m2 / (n - 1)), np.nan)
        t = np.where(n > 1, stats.t.ppf(0.5 + level / 2, np.maximum(n - 1, 1)), np.nan)
        half = t * sd / np.sqrt(n)
    return {"mean": avg, "lo": avg - half, "hi": avg + half, "half_width": half, "n": n}


def confidence_intervals(df: pd.DataFrame, by=("rate_per_s", "chunk_tokens"), over: str = "seed",
                         metrics=METRICS, level: float = 0.95) -> pd.DataFrame:
    """Each metric's mean over ``over`` (the seeds) per group of ``by``, with its Student-t interval
    (module docstring). Tidy: one row per group and metric: ``mean``, ``lo``, ``hi``, ``half_width``, ``n``,
    sorted by ``by`` then metric. Error rows are left out (``n`` counts the runs that worked; a group
    whose key is missing is dropped, as pandas' groupby does)."""
    level = fraction("level", level, zero_ok=False)
    by, metrics = list(by), list(metrics)
    worked = df[ERROR].isna().to_numpy()
    good = df if worked.all() else df[worked]
    if good.empty:
        raise ValueError("every run of the sweep failed: no interval to compute")
    if over not in df.columns:
        raise ValueError(f"no column {over!r} to replicate over")
    key, uniques = np.zeros(len(good), dtype=np.int64), []
    for c in by:                                     # one code per row: its group of ``by``, in sorted order
        codes, u = pd.factorize(good[c], sort=True)
        key = np.where((key < 0) | (codes < 0), -1, key * len(u) + codes)
        uniques.append(u)
    names = sorted(set(metrics))
    metric = np.repeat([names.index(m) for m in metrics], len(good))          # the rows, metric by metric
    rows = np.tile(key, len(metrics))
    values = np.concatenate([good[m].to_numpy() for m in metrics]).astype(float)[rows >= 0]
    groups, group = np.unique(rows[rows >= 0] * len(names) + metric[rows >= 0], return_inverse=True)
    group = group.ravel()
    order = np.argsort(group, kind="stable")                       # each group's values in their row order
    count = np.bincount(group, minlength=len(groups))
    table = np.full((len(groups), int(count.max(initial=0))), np.nan)
    table[group[order], np.arange(group.size) - (np.cumsum(count) - count)[group[order]]] = values[order]
    out, rest = {}, groups // len(names)
    for c, u in zip(reversed(by), reversed(uniques)):
        out[c] = u.take(rest % len(u))
        rest = rest // len(u)
    out = {c: out[c] for c in by}
    out["metric"] = np.asarray(names, dtype=object)[groups % len(names)]
    return pd.DataFrame({**out, **replication_intervals(table, level)})


__all__ = ["METRICS", "default_grid", "serving_point", "simulate_point", "point_metrics", "serving_sweep",
           "confidence_intervals", "replication_intervals"]
