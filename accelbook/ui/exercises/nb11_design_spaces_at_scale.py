"""Exercises of notebook 11: questions, hints, and answers computed by the models (see accelbook.ui.exercises)."""

from __future__ import annotations

import pandas as pd

from accelbook.specs.catalogue import catalogue_cache
from accelbook.sweep import choose_block_size, configurations
from accelbook.sweep.frontier import default_grid
from accelbook.sweep.serving_mc import confidence_intervals, serving_point
from accelbook.ui.exercises.core import Exercise

#: the serving dashboard's defaults (ui/dashboards/nb11_design_spaces_at_scale.py; a test keeps the two in step):
#: six rates up to 24 requests/s, prefill chunks of 1,024 tokens, seeds 0-3, 400 requests a run, TBT <= 50 ms
_SLO_RATES = (4.0, 8.0, 12.0, 16.0, 20.0, 24.0)
_SLO_SEEDS = 4
_SLO_REQUESTS = 400


def _frontier_configs_three_precisions() -> int:
    grid = {**default_grid(), "chip": ["h100", "h200", "b200", "tpu-v5p", "groq-lp30"],
            "precision": ["bf16", "fp8", "nvfp4"], "prompt_len": [1024, 8192, 32768]}
    return len(configurations(grid))


def _half_width_four_seeds() -> float:
    runs = pd.DataFrame({"rate_per_s": 16.0, "chunk_tokens": 1024, "seed": range(4), "error": None,
                         "goodput_req_s": [15.0, 17.0, 16.0, 18.0]})
    return float(confidence_intervals(runs, metrics=("goodput_req_s",))["half_width"].iloc[0])


@catalogue_cache(maxsize=4)
def _best_goodput(ttft_slo_s: float) -> float:
    rows = [dict(rate_per_s=r, chunk_tokens=1024, seed=s, error=None,
                 **serving_point(r, 1024, s, n_requests=_SLO_REQUESTS, ttft_slo_s=ttft_slo_s, tbt_slo_s=0.05))
            for r in _SLO_RATES for s in range(_SLO_SEEDS)]
    ci = confidence_intervals(pd.DataFrame(rows), metrics=("goodput_req_s",))
    return float(ci["mean"].max())


def _goodput_share_ttft_half_s() -> float:
    return 100 * _best_goodput(0.5) / _best_goodput(1.0)


EXERCISES: list[Exercise] = [
    Exercise("sweep-frontier-configs", "11", "The frontier grid of section 2 (2 models, 4 batches, one output length) on "
             "five chips (H100, H200, B200, TPU v5p, LP30), with three precisions (bf16, fp8, NVFP4) and three prompt "
             "lengths (1,024, 8,192 and 32,768 tokens): how many configurations?", _frontier_configs_three_precisions, 0.0,
             "A grid is the product of its lists' lengths.", "configurations"),
    Exercise("sweep-b-min", "11", "A million configurations at 0.5 ms each, on 4,096 worker threads, with 8 ms of "
             "overhead per task: how many configurations a task does the rule pick?",
             lambda: choose_block_size(10**6, 0.008, 0.0005, threads=4096)[0], 0.0,
             "b = max(b_min, min(b_balance, b_cap)): overhead ≤ 5 % needs b·c ≥ o / 0.05; four tasks per thread "
             "would give only n / (4 × 4,096).", "configurations"),
    Exercise("sweep-block-64", "11", "A million configurations at 30 ms each, on 64 worker threads, with 20 ms of "
             "overhead per task: how many configurations a task does the rule pick?",
             lambda: choose_block_size(10**6, 0.02, 0.03, threads=64)[0], 0.0,
             "Compute all three terms: b_min = o / (0.05·c), b_balance = n / (4·threads), b_cap = 60 s / c.",
             "configurations"),
    Exercise("sweep-ci-half-width", "11", "Four seeds give goodputs of 15, 17, 16 and 18 requests/s: the half-width "
             "of the 95 % Student-t interval of the mean, in requests/s?", _half_width_four_seeds, 0.02,
             "t(0.975, n − 1) · s / √n, with s the sample standard deviation (n − 1 in its denominator) and "
             "t(0.975, 3) = 3.182.", "req/s"),
    Exercise("predict-slo-ttft-half", "11", "Predict: on the serving dashboard at its defaults, tighten the time to "
             "first token objective from 1 s to 0.5 s. The best goodput then, as a percentage of the best goodput "
             "at 1 s?", _goodput_share_ttft_half_s, 0.03,
             "Below saturation the time to first token is one prefill, a fraction of a second; past it, queues make "
             "it seconds. How many requests sit between 0.5 and 1 s?", "%"),
    Exercise("whatif-cheap-model-tasks", "11", "What if the model were vectorised down to 20 µs a configuration: a "
             "million configurations on 64 worker threads with 20 ms of overhead per task. How many configurations "
             "a task does the rule pick, and what does that say about running this sweep on the cluster?",
             lambda: choose_block_size(10**6, 0.02, 20e-6, threads=64)[0], 0.0,
             "b_min = o / (0.05·c) with c = 2 × 10⁻⁵ s; compare it with n / (4·threads).", "configurations",
             model_answer="b_min = 0.02 / (0.05 × 2 × 10⁻⁵) = 20,000 configurations a task, above the 3,907 that "
             "four tasks per thread would give, so the overhead term decides: a million configurations make only "
             "50 tasks for 64 worker threads, and 14 workers sit idle. The whole sweep is 20 s of model work; each "
             "task is 0.4 s of work plus 20 ms of overhead. Spread over the cluster it finishes in about half a "
             "second of wall time, but a single process with a per-block model (per=\"block\") does the 20 s without "
             "any scheduler at all. A cluster pays off when the work per configuration is large against the "
             "per-task overhead; for cheap models, vectorise first and distribute only grids of billions."),
]
