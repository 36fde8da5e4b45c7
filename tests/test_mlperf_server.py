"""MLPerf Inference v4.1 Server rows (data/mlperf_server_runs.toml) and the continuous-batching
throughput search: the rows load with resolvable sources, one reported value as typed from its log
summary, the rate search respects the latency limits, and the error columns are predicted/reported - 1."""

from __future__ import annotations

import numpy as np
import pytest

from accelbook.inference import mlperf
from accelbook.inference import serving as sv
from accelbook.specs.loader import load_sources

COST = sv.StepCost(fixed_s=0.002, weight_read_s=0.015, per_token_s=0.04e-3, comm_per_token_s=1e-6,
                   decode_per_ctx_token_s=2e-8, prefill_attn_per_token_s=0.05e-3, max_batch=64, max_kv_tokens=200_000)
PROMPT, OUTPUT = ("lognormal", 512, 0.5, 1024), ("lognormal", 128, 0.5, 1024)


def test_rows_load_and_every_source_resolves():
    data = mlperf.published_server_runs()
    sources = load_sources()
    assert set(data["runs"]) == {"dgx-h100-8-server", "h200-8-server", "mi300x-8-server"}
    for section in data.values():
        for entry in section.values():
            for q in entry.values():
                if hasattr(q, "provenance"):
                    assert q.provenance.source.id in sources and q.provenance.date and q.provenance.note
    lim = data["limits"]["llama2-70b-server"]
    assert lim["ttft_ms"].value == 2.0 and lim["tpot_ms"].value == 0.2 and lim["latency_percentile_count"].value == 99


def test_one_reported_value_as_typed_from_the_log_summary():
    # closed/NVIDIA/results/H200-SXM-141GBx8_TRT/llama2-70b-99/Server/performance/run_1/mlperf_log_summary.txt:
    # "Completed tokens per second: 29228.22", mean first token latency 198269106 ns
    run = mlperf.published_server_runs()["runs"]["h200-8-server"]
    assert run["tokens_per_s"].value == 29228.22
    assert run["ttft_mean_ms"].value == pytest.approx(0.19827, rel=1e-4)
    assert run["tokens_per_s"].provenance.source.url.endswith("H200-SXM-141GBx8_TRT/llama2-70b-99/Server/performance/"
                                                             "run_1/mlperf_log_summary.txt")


def test_dataset_lengths_come_from_the_file():
    ds = mlperf.published_server_runs()["datasets"]["openorca-llama2-70b"]
    prompt, output = mlperf.dataset_lengths(ds)
    assert output == ("lognormal", 294.45, 0.5, 1024) and prompt[0] == "lognormal" and prompt[3] == 1024


def test_the_rate_search_respects_the_limits_and_the_next_rate_breaks_them():
    ttft, tpot = 1.0, 0.05
    rate, stats, complete = mlperf.highest_rate(COST, 1, PROMPT, OUTPUT, ttft, tpot, n_requests=1500, steps=10)
    assert complete and stats["ttft_pct_s"] <= ttft and stats["tpot_pct_s"] <= tpot
    # the same run, checked independently from the simulator's per-request times
    w = sv.workload(1500, rate, "poisson", 1.0, PROMPT, OUTPUT, 0)
    r = sv.simulate(w, COST)
    tp = (r.finish_s - r.first_token_s)[w.output_len > 1] / (w.output_len[w.output_len > 1] - 1)
    assert np.percentile(r.ttft_s, 99) <= ttft and np.percentile(tp, 99) <= tpot
    ok, _ = mlperf.rate_meets_limits(sv.simulate(sv.workload(1500, 1.2 * rate, "poisson", 1.0, PROMPT, OUTPUT, 0), COST),
                                     ttft, tpot)
    assert not ok                                            # 20 % more load misses a limit


def test_a_time_bound_stops_the_search_with_a_feasible_rate():
    rate, stats, complete = mlperf.highest_rate(COST, 1, PROMPT, OUTPUT, 1.0, 0.05, n_requests=1500, steps=50,
                                                max_seconds=0.0)
    assert not complete and stats["ttft_pct_s"] <= 1.0 and stats["tpot_pct_s"] <= 0.05


def test_unreachable_limits_are_an_error():
    with pytest.raises(ValueError, match="no Poisson rate"):
        mlperf.highest_rate(COST, 1, PROMPT, OUTPUT, 1e-3, 0.05, n_requests=200, steps=2)


def test_continuous_throughput_says_how_it_was_found():
    r = mlperf.continuous_throughput("llama-2-70b", "h200", 8, "fp8", PROMPT, OUTPUT, 2.0, 0.2, tp=8, chunk_tokens=2048,
                                     n_requests=1500, steps=6)
    assert r.method == mlperf.METHOD and r.tp == 8 and r.replicas == 1 and r.chunk_tokens == 2048
    assert r.tokens_per_s == pytest.approx(r.rate_per_s * 128, rel=0.05)
    assert r.ttft_pct_s <= 2.0 and r.tpot_pct_s <= 0.2


def test_the_error_columns_are_predicted_over_reported_minus_one():
    t = mlperf.server_validation_table(n_requests=1500, steps=4)
    assert len(t) == 3
    for k in ("tokens_per_s", "ttft_mean_ms", "tpot_mean_ms"):
        np.testing.assert_allclose(t[f"{k}_error"], t[f"{k}_predicted"] / t[f"{k}_reported"] - 1, rtol=0, atol=1e-15)
    assert (t["tokens_per_s_reported"] == [21605.79, 29228.22, 21028.23]).all()
    assert (t["ttft_p99_ms_predicted"] <= 2000).all() and (t["tpot_p99_ms_predicted"] <= 200).all()
    big = t[["tokens_per_s_error", "ttft_mean_ms_error", "tpot_mean_ms_error"]].abs().max(axis=1) > mlperf.TOLERANCE
    assert (t.loc[big, "note"] != "within ±25 %").all()


def test_the_rate_search_takes_the_kv_policy():
    # a pool too small to reserve prompt + output for many requests: paging admits more and carries more load
    tight = sv.StepCost(**{**COST.__dict__, "max_kv_tokens": 6000})
    kw = dict(n_requests=800, steps=6)
    reserve, _, _ = mlperf.highest_rate(tight, 1, PROMPT, OUTPUT, 2.0, 0.2, **kw)
    paged, stats, _ = mlperf.highest_rate(tight, 1, PROMPT, OUTPUT, 2.0, 0.2, kv_policy="paged", **kw)
    assert paged > reserve and stats["ttft_pct_s"] <= 2.0 and stats["tpot_pct_s"] <= 0.2
    with pytest.raises(ValueError, match="kv_policy"):
        mlperf.highest_rate(COST, 1, PROMPT, OUTPUT, 2.0, 0.2, kv_policy="lru", **kw)
