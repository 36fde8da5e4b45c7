"""The serving simulator's fast paths give what the plain paths give, to the bit: a run without records
(per-request times only), the workload generator's remembered draws, the records' growth past their first
size, the confidence intervals computed without pandas' groupby, the serving-SLO dashboard's goodput
intervals, and its chart's data."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from accelbook.checks import fraction
from accelbook.inference import serving as sv
from accelbook.sweep.grid import ERROR
from accelbook.sweep.serving_mc import METRICS, confidence_intervals, replication_intervals, serving_point
from accelbook.ui.charts.base import records
from accelbook.ui.charts.sweep import goodput_ci_chart
from accelbook.ui.dashboards.nb11_design_spaces_at_scale import goodput_intervals, slo_spec

REAL = sv.StepCost(fixed_s=0.002, weight_read_s=0.015, per_token_s=0.04e-3, comm_per_token_s=1e-6,
                   decode_per_ctx_token_s=2e-8, prefill_attn_per_token_s=0.05e-3, max_batch=64, max_kv_tokens=200_000)
TIGHT = sv.StepCost(fixed_s=0.003, weight_read_s=0.010, per_token_s=1e-4, comm_per_token_s=0.0,
                    decode_per_ctx_token_s=1e-7, prefill_attn_per_token_s=1e-4, max_batch=4, max_kv_tokens=1500)
PER_REQUEST = ("ttft_s", "tbt_mean_s", "e2e_s", "finish_s", "first_token_s", "admit_s", "instance", "decode_instance",
               "preemptions", "cached_tokens")

CASES = [
    (dict(n_requests=300, rate_per_s=60.0, prompt=("lognormal", 400, 0.8), output=("lognormal", 100, 1.0)), REAL,
     dict(chunk_tokens=128)),
    (dict(n_requests=150, rate_per_s=20.0, prompt=("uniform", 1, 900), output=("uniform", 1, 500)), TIGHT,
     dict(chunk_tokens=64, n_instances=2)),
    (dict(n_requests=250, rate_per_s=40.0, prompt=("uniform", 1, 800), output=("uniform", 1, 200)), TIGHT,
     dict(disaggregated=True, n_prefill=2, n_decode=3, chunk_tokens=100, kv_bytes_per_token=131072,
          link_bytes_per_s=5e9, decode_cost=REAL)),
    (dict(n_requests=150, rate_per_s=20.0, prompt=("uniform", 1, 700), output=("uniform", 1, 500)), TIGHT,
     dict(kv_policy="paged", chunk_tokens=64)),
    (dict(n_requests=200, rate_per_s=20.0, prompt=("uniform", 1, 600), output=("uniform", 1, 400),
          prefix=(96, 0.7, 3)), TIGHT, dict(kv_policy="paged", prefix_caching=True, block_tokens=8, chunk_tokens=100)),
]


@pytest.mark.parametrize("wkw,cost,kw", CASES, ids=[f"case{i}" for i in range(len(CASES))])
def test_a_run_without_records_has_the_same_per_request_results(wkw, cost, kw):
    w = sv.workload(**wkw, seed=11)
    full, lean = sv.simulate(w, cost, **kw), sv.simulate(w, cost, **kw, records=False)
    for name in PER_REQUEST:
        np.testing.assert_array_equal(getattr(lean, name), getattr(full, name), err_msg=name)
    assert lean.span_s == full.span_s and lean.throughput_tok_s == full.throughput_tok_s
    assert lean.goodput(0.5, 0.05) == full.goodput(0.5, 0.05)
    assert lean.gap_s.size == 0 and full.gap_s.size > 0
    for read in (lean.percentiles, lambda: lean.tbt_percentile(50), lambda: lean.iterations, lean.summary):
        with pytest.raises(ValueError, match="records=False"):
            read()
    with pytest.raises(ValueError, match="records"):
        sv.simulate(w, cost, **kw, records=1)


def test_records_grow_past_their_first_size():
    # one request of 1.1 million tokens: more iterations than the records' first size (2**20), so both the
    # iteration and the gap records grow while the run goes on; nothing written before is lost
    cost = sv.StepCost(fixed_s=0.0, weight_read_s=1e-3, per_token_s=0.0, comm_per_token_s=0.0,
                       decode_per_ctx_token_s=1e-12, prefill_attn_per_token_s=1e-6, max_batch=2,
                       max_kv_tokens=2_000_000)
    out = 1_100_000
    w = sv.ServingWorkload(np.array([0.0]), np.array([1000]), np.array([out]))
    r = sv.simulate(w, cost, chunk_tokens=4096)
    start, dt = r.runs[0][2].start_s, r.runs[0][2].dt_s
    assert start.size == out > 2**20 and r.gap_count.sum() == out - 1
    np.testing.assert_array_equal(start[1:], start[:-1] + dt[:-1])       # every iteration starts as the last ends
    assert r.finish_s[0] == start[-1] + dt[-1]
    np.testing.assert_array_equal(r.gap_s, (start[1:] + dt[1:]) - start[1:])   # alone: each gap is a step
    assert sv.simulate(w, cost, chunk_tokens=4096, records=False).finish_s[0] == r.finish_s[0]


def test_remembered_workload_draws_equal_fresh_ones():
    spec = dict(prompt=("lognormal", 700, 0.5), output=("uniform", 3, 90), prefix=(64, 0.4, 3))
    arrivals = {}
    for n in (50, 5000):                       # 5,000 requests are drawn afresh every time
        first = sv.workload(n, 7.0, seed=4, **spec)
        arrivals[n] = first.arrival_s
        again = sv.workload(n, 7.0, seed=4, **spec)
        fresh = sv.workload(n, 7.0, seed=4, **{k: list(v) for k, v in spec.items()})   # a list is never remembered
        for w in (again, fresh):
            for name in ("arrival_s", "prompt_len", "output_len", "prefix_len", "prefix_id"):
                np.testing.assert_array_equal(getattr(w, name), getattr(first, name), err_msg=name)
                assert getattr(w, name).dtype == np.int64 or name == "arrival_s"
                assert not getattr(w, name).flags.writeable
        assert isinstance(first, sv.ServingWorkload) and first.n == n
    # twice the rate: the same draws, each gap divided by twice the rate (common random numbers)
    np.testing.assert_allclose(sv.workload(50, 14.0, seed=4, **spec).arrival_s, arrivals[50] / 2, rtol=1e-12)
    with pytest.raises(ValueError, match="arrival_s must be finite"), np.errstate(over="ignore"):
        sv.workload(50, 1e-320, seed=4)


def pandas_intervals(df, by=("rate_per_s", "chunk_tokens"), over="seed", metrics=METRICS, level=0.95):
    """confidence_intervals as it was written before, through pandas' melt and groupby."""
    level = fraction("level", level, zero_ok=False)
    by = list(by)
    good = df[df[ERROR].isna()]
    long = good.melt(id_vars=by, value_vars=list(metrics), var_name="metric")
    out = long.groupby(by + ["metric"], sort=True)["value"].agg(mean="mean", sd="std", n="count").reset_index()
    n = out["n"].to_numpy()
    t = np.where(n > 1, stats.t.ppf(0.5 + level / 2, np.maximum(n - 1, 1)), np.nan)
    out["half_width"] = t * out["sd"].to_numpy() / np.sqrt(n)
    out["lo"], out["hi"] = out["mean"] - out["half_width"], out["mean"] + out["half_width"]
    return out.drop(columns="sd")[by + ["metric", "mean", "lo", "hi", "half_width", "n"]]


def runs_frame(seed, shuffle):
    rng = np.random.default_rng(seed)
    rows = [dict(rate_per_s=1.5 * r, chunk_tokens=c, chip=["h100", "b200"][s % 2], seed=s, error=None,
                 **{m: rng.random() * 10.0 ** rng.integers(-3, 4) for m in METRICS})
            for r in range(1, 5) for c in (256, 1024) for s in range(int(rng.integers(1, 9)))]
    df = pd.DataFrame(rows)
    df.loc[1, ERROR] = "failed"
    df.loc[2, "ttft_p50_s"] = np.nan
    df.loc[3, "rate_per_s"] = np.nan                  # a group key missing: pandas drops the row
    return df.sample(frac=1, random_state=seed).reset_index(drop=True) if shuffle else df


@pytest.mark.parametrize("seed", range(6))
def test_confidence_intervals_equal_the_pandas_groupby_to_the_bit(seed):
    df = runs_frame(seed, shuffle=seed % 2 == 1)
    for by, metrics, level in ((("rate_per_s", "chunk_tokens"), METRICS, 0.95), (("chip",), METRICS[:3], 0.9),
                               (("rate_per_s",), ("goodput_req_s", "e2e_p50_s"), 0.99)):
        pd.testing.assert_frame_equal(confidence_intervals(df, by=by, metrics=metrics, level=level),
                                      pandas_intervals(df, by=by, metrics=metrics, level=level), check_exact=True)
    # one metric over rows sorted by group: pandas summed by ``reduceat`` there, not by its compensated sum
    one = confidence_intervals(df, metrics=("goodput_req_s",))
    pd.testing.assert_frame_equal(one, pandas_intervals(df, metrics=("goodput_req_s",)), rtol=1e-13)


def test_replication_intervals_of_a_table_by_hand():
    iv = replication_intervals(np.array([[18.0, 19.0, 20.0, 19.0, 19.0], [1.0, np.nan, 3.0, np.nan, np.nan]]))
    assert iv["mean"][0] == 19.0 and iv["half_width"][0] == pytest.approx(0.878, abs=1e-3)   # the module's example
    assert iv["n"].tolist() == [5, 2] and iv["mean"][1] == 2.0


@pytest.mark.parametrize("settings", [dict(max_rate=24.0, chunk_tokens=1024, seeds=4, ttft_slo_s=1.0, tbt_slo_s=0.05),
                                      dict(max_rate=6.0, chunk_tokens=256, seeds=3, ttft_slo_s=0.25, tbt_slo_s=0.02)])
def test_the_dashboard_intervals_are_the_sweeps(settings):
    rates = np.linspace(settings["max_rate"] / 6, settings["max_rate"], 6).round(2)
    chunk, seeds, a, b = settings["chunk_tokens"], settings["seeds"], settings["ttft_slo_s"], settings["tbt_slo_s"]
    rows = [dict(rate_per_s=float(r), chunk_tokens=chunk, seed=s, error=None,
                 **serving_point(float(r), chunk, s, n_requests=400, ttft_slo_s=a, tbt_slo_s=b))
            for r in rates for s in range(seeds)]
    sweep = confidence_intervals(pd.DataFrame(rows), metrics=("goodput_req_s",))
    mine = goodput_intervals(rates, chunk, seeds, a, b)
    pd.testing.assert_frame_equal(mine, sweep, check_exact=True)
    view = slo_spec().render(**settings)
    pd.testing.assert_frame_equal(view.data, sweep, check_exact=True)
    table = sweep.sort_values("mean")
    np.testing.assert_array_equal(view.table["goodput (req/s)"].to_numpy(), table["mean"].to_numpy())
    np.testing.assert_array_equal(view.table.index.to_numpy(), table.index.to_numpy())
    best = table.iloc[-1]
    assert f"**{best['mean']:.2f} ± {best['half_width']:.2f} requests/s**" in view.summary
    assert f"at {best['rate_per_s']:g} requests/s offered" in view.summary


def test_goodput_chart_data_is_the_metrics_rows():
    ci = confidence_intervals(runs_frame(0, shuffle=True))
    for metric in ("goodput_req_s", "ttft_p99_s"):
        rows = ci[ci["metric"] == metric][["rate_per_s", "chunk_tokens", "mean", "lo", "hi"]]
        assert goodput_ci_chart(ci, metric, title="t").to_dict()["datasets"] == {"ci": records(rows)}
