"""Notebook 11, *Design spaces at scale*: one slice of the serving Monte Carlo, run here serially.

The dashboard runs :func:`accelbook.sweep.serving_mc.simulate_point` over a few arrival rates and seeds
in this process (no cluster: a slider move must answer at once) and draws the mean goodput with its
95 % interval over the seeds (:func:`accelbook.sweep.serving_mc.replication_intervals`, what
:func:`~accelbook.sweep.serving_mc.confidence_intervals` computes per group), the same numbers the
notebook's distributed sweep computes over a larger grid. It computes only what it draws: each run's
goodput (:func:`accelbook.inference.serving_result.goodput`), not its percentiles, and keeps of a run
only what goodput needs.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from accelbook.inference.serving_result import goodput
from accelbook.specs.catalogue import catalogue_cache
from accelbook.sweep.serving_mc import replication_intervals, simulate_point
from accelbook.ui.charts.sweep import goodput_ci_chart
from accelbook.ui.dashboard import Choice, DashboardSpec, Slider, View

#: arrival rates the dashboard samples (requests/s) up to its largest
RATE_STEPS = 6
#: requests a run: small enough for a slider (a few milliseconds each)
N_REQUESTS = 400


@catalogue_cache(maxsize=4096)
def _run(rate, chunk, seed):
    """What goodput needs of one run, kept whatever the objectives (moving an objective re-counts the runs,
    it does not re-run them): per request its TTFT and mean TBT, and the run's span. A few kB a run, so
    every run the controls can ask for fits (about 2,400)."""
    r = simulate_point(rate, chunk, seed, n_requests=N_REQUESTS, records=False)
    return r.ttft_s, r.tbt_mean_s, r.span_s


def goodput_intervals(rates, chunk_tokens, seeds, ttft_slo_s, tbt_slo_s) -> pd.DataFrame:
    """What :func:`~accelbook.sweep.serving_mc.confidence_intervals` gives for goodput over the runs
    (``rates`` × seeds ``0 .. seeds - 1``, every run worked), built from the seeds' goodputs a rate at once
    (:func:`~accelbook.sweep.serving_mc.replication_intervals`) rather than through a frame of runs."""
    runs = [_run(float(r), int(chunk_tokens), s) for r in rates for s in range(seeds)]
    good = goodput(np.stack([ttft for ttft, _, _ in runs]), np.stack([tbt for _, tbt, _ in runs]),
                   np.array([span for _, _, span in runs]), float(ttft_slo_s), float(tbt_slo_s))
    return pd.DataFrame({"rate_per_s": rates.astype(float), "chunk_tokens": int(chunk_tokens),
                         "metric": "goodput_req_s", **replication_intervals(good.reshape(len(rates), seeds))})


def slo_view(max_rate, chunk_tokens, seeds, ttft_slo_s, tbt_slo_s) -> View:
    rates = np.linspace(max_rate / RATE_STEPS, max_rate, RATE_STEPS).round(2)
    ci = goodput_intervals(rates, chunk_tokens, int(seeds), ttft_slo_s, tbt_slo_s)
    fig = goodput_ci_chart(ci, title=f"goodput under TTFT ≤ {ttft_slo_s:g} s and TBT ≤ {tbt_slo_s * 1e3:g} ms "
                                     f"({int(seeds)} seeds a rate)")
    order = np.argsort(ci["mean"].to_numpy(), kind="quicksort")    # as ci.sort_values("mean") orders the rows
    rate, mean, half, lo, hi, n = (ci[c].to_numpy()[order] for c in ("rate_per_s", "mean", "half_width", "lo", "hi",
                                                                      "n"))
    summary = (f"Llama 3.1 70B in fp8 on 8 × H200, {N_REQUESTS} requests a run, prefill chunks of "
               f"{int(chunk_tokens)} tokens: the best goodput is **{mean[-1]:.2f} ± {half[-1]:.2f} "
               f"requests/s** (95 % over {int(n[-1])} seeds) at {rate[-1]:g} requests/s offered. "
               + ("Goodput still rises at the largest rate offered: move *largest rate* up to find where queueing "
                  "takes over." if rate[-1] == rates.max() else
                  "Past it, queueing pushes the time to first token or between tokens over its objective and "
                  "goodput falls."))
    table = pd.DataFrame({"offered (req/s)": rate, "goodput (req/s)": mean, "95 % low": lo, "95 % high": hi,
                          "seeds": n}, index=order)
    return View(ci, fig, summary, table=table)


@catalogue_cache(maxsize=1)
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
