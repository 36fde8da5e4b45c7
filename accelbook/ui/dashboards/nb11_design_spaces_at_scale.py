"""Notebook 11, *Design spaces at scale*: one slice of the serving Monte Carlo, run here serially.

The dashboard runs :func:`accelbook.sweep.serving_mc.serving_point` over a few arrival rates and seeds
in this process (no cluster: a slider move must answer at once) and draws the mean goodput with its
95 % interval over the seeds (:func:`accelbook.sweep.serving_mc.confidence_intervals`), the same
numbers the notebook's distributed sweep computes over a larger grid.
"""

from __future__ import annotations

import functools

import numpy as np
import pandas as pd

from accelbook.sweep.serving_mc import confidence_intervals, point_metrics, simulate_point
from accelbook.ui.charts.sweep import goodput_ci_chart
from accelbook.ui.dashboard import Choice, DashboardSpec, Slider, View

#: arrival rates the dashboard samples (requests/s) up to its largest
RATE_STEPS = 6
#: requests a run: small enough for a slider (a few milliseconds each)
N_REQUESTS = 400


@functools.lru_cache(maxsize=512)
def _simulated(rate, chunk, seed):
    """One run, kept whatever the objectives: moving an objective re-counts the runs, it does not re-run them."""
    return simulate_point(rate, chunk, seed, n_requests=N_REQUESTS)


@functools.lru_cache(maxsize=2048)
def _run(rate, chunk, seed, ttft_slo_s, tbt_slo_s):
    return point_metrics(_simulated(rate, chunk, seed), ttft_slo_s, tbt_slo_s)


def slo_view(max_rate, chunk_tokens, seeds, ttft_slo_s, tbt_slo_s) -> View:
    rates = np.linspace(max_rate / RATE_STEPS, max_rate, RATE_STEPS).round(2)
    rows = [dict(rate_per_s=float(r), chunk_tokens=int(chunk_tokens), seed=s, error=None,
                 **_run(float(r), int(chunk_tokens), s, float(ttft_slo_s), float(tbt_slo_s)))
            for r in rates for s in range(int(seeds))]
    ci = confidence_intervals(pd.DataFrame(rows))
    fig = goodput_ci_chart(ci, title=f"goodput under TTFT ≤ {ttft_slo_s:g} s and TBT ≤ {tbt_slo_s * 1e3:g} ms "
                                     f"({int(seeds)} seeds a rate)")
    g = ci[ci["metric"] == "goodput_req_s"].sort_values("mean")
    best = g.iloc[-1]
    summary = (f"Llama 3.1 70B in fp8 on 8 × H200, {N_REQUESTS} requests a run, prefill chunks of "
               f"{int(chunk_tokens)} tokens: the best goodput is **{best['mean']:.2f} ± {best['half_width']:.2f} "
               f"requests/s** (95 % over {int(best['n'])} seeds) at {best['rate_per_s']:g} requests/s offered. "
               + ("Goodput still rises at the largest rate offered: move *largest rate* up to find where queueing "
                  "takes over." if best["rate_per_s"] == g["rate_per_s"].max() else
                  "Past it, queueing pushes the time to first token or between tokens over its objective and "
                  "goodput falls."))
    table = g[["rate_per_s", "mean", "lo", "hi", "n"]].rename(columns={
        "rate_per_s": "offered (req/s)", "mean": "goodput (req/s)", "lo": "95 % low", "hi": "95 % high",
        "n": "seeds"})
    return View(ci, fig, summary, table=table)


@functools.lru_cache(maxsize=1)
def slo_spec() -> DashboardSpec:
    return DashboardSpec(
        name="serving SLOs",
        description="Goodput with its confidence interval over seeds, as the arrival rate grows.",
        controls={
            "max_rate": Slider("largest rate (req/s)", 4.0, 40.0, 2.0, 24.0),
            "chunk_tokens": Choice("prefill chunk", [256, 1024, 4096], 1024),
            "seeds": Slider("seeds", 2, 8, 1, 4),
            "ttft_slo_s": Slider("TTFT objective (s)", 0.25, 3.0, 0.25, 1.0),
            "tbt_slo_s": Slider("TBT objective (s)", 0.02, 0.2, 0.01, 0.05),
        },
        view=slo_view,
    )


SPECS = (slo_spec,)
