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

import functools

import numpy as np
import pandas as pd
from scipy import stats

from accelbook.checks import fraction
from accelbook.inference.serving import simulate
from accelbook.inference.step import step_cost
from accelbook.inference.workload import workload

from .engine import run
from .grid import ERROR

METRICS = ("ttft_p50_s", "ttft_p99_s", "tbt_p50_s", "tbt_p99_s", "e2e_p50_s", "throughput_tok_s", "goodput_req_s",
           "slo_attainment")


def default_grid() -> dict:
    return {"rate_per_s": [4.0, 8.0, 12.0, 16.0, 20.0, 24.0, 28.0, 32.0], "chunk_tokens": [256, 1024, 4096],
            "seed": [0, 1, 2, 3, 4], "model": ["llama-3.1-70b"], "chip": ["h200"], "n_chips": [8],
            "precision": ["fp8"], "n_requests": [2000], "prompt_mean": [1024], "output_mean": [256],
            "length_sigma": [0.5], "ttft_slo_s": [1.0], "tbt_slo_s": [0.05]}


@functools.lru_cache(maxsize=64)
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
                   output_mean: int = 256, length_sigma: float = 0.5):
    """The simulated run behind :func:`serving_point`: a :class:`~accelbook.inference.serving_result.ServingResult`
    (the latency objectives do not change the run, only what counts as good, so a dashboard keeps the run)."""
    cost = _cost(model, chip, int(n_chips), precision, int(prompt_mean), int(output_mean))
    w = workload(int(n_requests), float(rate_per_s), prompt=("lognormal", prompt_mean, length_sigma),
                 output=("lognormal", output_mean, length_sigma), seed=int(seed))
    return simulate(w, cost, chunk_tokens=int(chunk_tokens))


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


def confidence_intervals(df: pd.DataFrame, by=("rate_per_s", "chunk_tokens"), over: str = "seed",
                         metrics=METRICS, level: float = 0.95) -> pd.DataFrame:
    """Each metric's mean over ``over`` (the seeds) per group of ``by``, with its Student-t interval
    (module docstring). Tidy: one row per group and metric: ``mean``, ``lo``, ``hi``, ``half_width``, ``n``.
    Error rows are left out (``n`` counts the runs that worked)."""
    level = fraction("level", level, zero_ok=False)
    by = list(by)
    good = df[df[ERROR].isna()]
    if good.empty:
        raise ValueError("every run of the sweep failed: no interval to compute")
    if over not in df.columns:
        raise ValueError(f"no column {over!r} to replicate over")
    long = good.melt(id_vars=by, value_vars=list(metrics), var_name="metric")
    g = long.groupby(by + ["metric"], sort=True)["value"]
    out = g.agg(mean="mean", sd="std", n="count").reset_index()
    n = out["n"].to_numpy()
    t = np.where(n > 1, stats.t.ppf(0.5 + level / 2, np.maximum(n - 1, 1)), np.nan)
    out["half_width"] = t * out["sd"].to_numpy() / np.sqrt(n)
    out["lo"], out["hi"] = out["mean"] - out["half_width"], out["mean"] + out["half_width"]
    return out.drop(columns="sd")[by + ["metric", "mean", "lo", "hi", "half_width", "n"]]


__all__ = ["METRICS", "default_grid", "serving_point", "serving_sweep", "confidence_intervals"]
