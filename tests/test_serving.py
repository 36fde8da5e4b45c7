"""LLM serving simulator: the Numba event loop against a plain-Python reference written from the
docstring (exact per-request times and the same multiset of gaps), single requests worked out by hand,
queueing sanity (Little's law, capacity bounds, monotone load sweeps), disaggregated serving, the
workload generator, and errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from naive_serving import reference_simulate

from accelbook.inference import serving as sv

# a realistic 8B-class instance: 2 ms of all-reduce latency and 15 ms to read the weights a step, 0.04 ms of
# matmuls and 1 µs of all-reduce bytes a token, 0.05 ms of causal attention a prompt token
REAL = sv.StepCost(fixed_s=0.002, weight_read_s=0.015, per_token_s=0.04e-3, comm_per_token_s=1e-6,
                   decode_per_ctx_token_s=2e-8, prefill_attn_per_token_s=0.05e-3, max_batch=64, max_kv_tokens=200_000)
# a small, tight instance: batch and KV pressure
TIGHT = sv.StepCost(fixed_s=0.003, weight_read_s=0.010, per_token_s=1e-4, comm_per_token_s=0.0,
                    decode_per_ctx_token_s=1e-7, prefill_attn_per_token_s=1e-4, max_batch=4, max_kv_tokens=1500)


def prefill_s(p):
    """REAL's iteration that only prefills ``p`` prompt tokens, by hand."""
    return 0.002 + max(0.015, p * 0.04e-3) + p * 1e-6 + p * 0.05e-3


def decode_s(n, ctx):
    """REAL's iteration that only decodes ``n`` sequences reading ``ctx`` tokens of KV cache, by hand."""
    return 0.002 + max(0.015, n * 0.04e-3) + n * 1e-6 + ctx * 2e-8


def assert_same_as_reference(w, cost, **kw):
    r = sv.simulate(w, cost, **kw)
    rec = {}
    first, finish, admit, gaps = reference_simulate(w.arrival_s, w.prompt_len, w.output_len, cost, **kw,
                                                    prefix_len=w.prefix_len, prefix_id=w.prefix_id, record=rec)
    np.testing.assert_array_equal(r.first_token_s, np.array(first, dtype=float), err_msg=f"first token {kw}")
    np.testing.assert_array_equal(r.finish_s, np.array(finish, dtype=float), err_msg=f"finish {kw}")
    np.testing.assert_array_equal(r.admit_s, np.array(admit, dtype=float), err_msg=f"admit {kw}")
    np.testing.assert_array_equal(np.sort(r.gaps()), np.sort(np.array(gaps, dtype=float)), err_msg=f"gaps {kw}")
    np.testing.assert_array_equal(r.preemptions, rec["preemptions"], err_msg=f"preemptions {kw}")
    np.testing.assert_array_equal(r.cached_tokens, rec["cached_tokens"], err_msg=f"cached tokens {kw}")
    cols = ["instance", *sv.ITERATION_COLUMNS]
    np.testing.assert_array_equal(r.iterations[cols].to_numpy(float), np.array(rec["iterations"], dtype=float),
                                  err_msg=f"iterations {kw}")
    assert r.gap_count.sum() == (w.output_len - 1).sum()
    np.testing.assert_array_equal(r.ttft_s, np.array(first) - w.arrival_s)
    np.testing.assert_array_equal(r.e2e_s, np.array(finish) - w.arrival_s)
    if len(gaps):
        for q in (50, 90, 99):
            assert r.tbt_percentile(q) == np.percentile(gaps, q, method="inverted_cdf")
    return r


# -- 1. kernel == reference ---------------------------------------------------------------------------------
GRID = [
    (dict(n_requests=200, rate_per_s=5.0, prompt=("uniform", 1, 800), output=("uniform", 1, 200)), REAL, {}),
    (dict(n_requests=300, rate_per_s=60.0, prompt=("lognormal", 400, 0.8), output=("lognormal", 100, 1.0)), REAL,
     dict(chunk_tokens=128)),
    (dict(n_requests=150, rate_per_s=20.0, prompt=("uniform", 1, 900), output=("uniform", 1, 500)), TIGHT,
     dict(chunk_tokens=64)),                                                        # max_batch and KV pressure
    (dict(n_requests=150, rate_per_s=50.0, prompt=("fixed", 700), output=("fixed", 800)), TIGHT, {}),  # KV-bound
    (dict(n_requests=300, rate_per_s=40.0, prompt=("uniform", 1, 600), output=("uniform", 1, 120)), REAL,
     dict(n_instances=3, chunk_tokens=200)),
    (dict(n_requests=200, rate_per_s=30.0, arrival="bursty", burstiness=4.0, prompt=("fixed", 1),
          output=("fixed", 1)), REAL, dict(chunk_tokens=1)),                         # one-token everything
    (dict(n_requests=250, rate_per_s=30.0, prompt=("uniform", 1, 800), output=("uniform", 1, 200)), REAL,
     dict(disaggregated=True)),
    (dict(n_requests=250, rate_per_s=40.0, prompt=("uniform", 1, 800), output=("uniform", 1, 200)), TIGHT,
     dict(disaggregated=True, n_prefill=2, n_decode=3, chunk_tokens=100, kv_bytes_per_token=131072,
          link_bytes_per_s=5e9, decode_cost=REAL)),
    (dict(n_requests=250, rate_per_s=15.0, arrival="bursty", burstiness=3.0, prompt=("lognormal", 300, 1.0, 1400),
          output=("uniform", 1, 60)), TIGHT, dict(disaggregated=True, n_prefill=3, n_decode=1, prefill_cost=REAL,
                                                 kv_bytes_per_token=1e6, link_bytes_per_s=1e9)),
]


@pytest.mark.parametrize("wkw,cost,kw", GRID, ids=[f"case{i}" for i in range(len(GRID))])
def test_kernel_equals_reference_grid(wkw, cost, kw):
    assert_same_as_reference(sv.workload(**wkw, seed=7), cost, **kw)


@st.composite
def serving_case(draw):
    mb = draw(st.integers(1, 8))
    kv = draw(st.integers(100, 3000))
    cost = sv.StepCost(draw(st.sampled_from([0.0, 0.003])), draw(st.sampled_from([0.0, 0.001, 0.01])),
                       draw(st.sampled_from([1e-5, 1e-4])), draw(st.sampled_from([0.0, 1e-6])),
                       draw(st.sampled_from([0.0, 1e-7])), draw(st.sampled_from([0.0, 2e-4])), mb, kv)
    pmax = draw(st.integers(1, 400))
    omax = draw(st.integers(1, 300))
    pmax = min(pmax, kv - 1)
    omax = min(omax, kv - pmax)
    w = sv.workload(draw(st.integers(1, 60)), draw(st.sampled_from([0.5, 5.0, 50.0, 500.0])),
                    prompt=("uniform", 1, pmax), output=("uniform", 1, omax), seed=draw(st.integers(0, 2**31)))
    kw = dict(chunk_tokens=draw(st.sampled_from([1, 7, 64, 512])))
    if draw(st.booleans()):
        kw.update(disaggregated=True, n_prefill=draw(st.integers(1, 3)), n_decode=draw(st.integers(1, 3)),
                  kv_bytes_per_token=draw(st.sampled_from([0.0, 1e5])),
                  link_bytes_per_s=draw(st.sampled_from([math.inf, 1e8])))
    else:
        kw.update(n_instances=draw(st.integers(1, 3)))
    return w, cost, kw


@settings(max_examples=60, deadline=None)
@given(case=serving_case())
def test_kernel_equals_reference_random(case):
    w, cost, kw = case
    r = assert_same_as_reference(w, cost, **kw)
    assert np.all(r.ttft_s > 0) and np.all(r.finish_s >= r.first_token_s) and np.all(r.admit_s >= w.arrival_s)


# -- 2. single requests by hand ------------------------------------------------------------------------------
def one(prompt, output, at=0.0):
    return sv.ServingWorkload(np.array([at]), np.array([prompt]), np.array([output]))


def test_one_request_ttft_is_its_prefill_and_tbt_is_a_batch_of_one():
    r = sv.simulate(one(300, 5, at=2.0), REAL)
    assert r.ttft_s[0] == pytest.approx(0.002 + 0.015 + 300 * 1e-6 + 300 * 0.05e-3, rel=1e-12) == prefill_s(300)
    # tokens 2..5 decode with contexts 301..304 (prompt + tokens made so far)
    gaps = [0.002 + 0.015 + 1e-6 + (300 + g) * 2e-8 for g in (1, 2, 3, 4)]
    np.testing.assert_allclose(np.sort(r.gaps()), gaps, rtol=1e-12)
    assert r.tbt_mean_s[0] == pytest.approx(np.mean(gaps), rel=1e-12)
    assert r.e2e_s[0] == pytest.approx(prefill_s(300) + sum(gaps), rel=1e-12)
    assert r.admit_s[0] == 2.0 and r.finish_s[0] == pytest.approx(2.0 + r.e2e_s[0], rel=1e-12)
    assert r.output_tokens == 5 and len(r.iterations) == 5


def test_long_prompt_is_prefilled_in_chunks():
    r = sv.simulate(one(1100, 1), REAL, chunk_tokens=512)
    # 512 + 512 + 76: the latency once a chunk, the bytes and attention per token; a 512-token chunk's
    # matmuls (20.5 ms) outlast the 15 ms weight read, a 76-token one's do not
    assert r.ttft_s[0] == pytest.approx(3 * 0.002 + 2 * 512 * 0.04e-3 + 0.015 + 1100 * (1e-6 + 0.05e-3), rel=1e-12)
    assert r.iterations["prefill_tokens"].tolist() == [512, 512, 76]
    assert r.tbt_mean_s[0] == 0.0 and r.gap_s.size == 0 and r.tbt_percentile(99) == 0.0


def test_single_token_request_finishes_at_its_first_token():
    r = sv.simulate(one(10, 1), REAL)
    assert r.finish_s[0] == r.first_token_s[0] and r.e2e_s[0] == r.ttft_s[0]


def test_prefill_and_decode_share_an_iteration():
    # B arrives while A decodes: the iteration that prefills B also decodes A, and costs both terms
    w = sv.ServingWorkload(np.array([0.0, 0.0101]), np.array([100, 200]), np.array([10, 3]))
    r = sv.simulate(w, REAL)
    it = r.iterations
    both = it[(it["decoding"] > 0) & (it["prefill_tokens"] > 0)]
    assert len(both) == 1 and both["prefill_tokens"].iloc[0] == 200 and both["decoding"].iloc[0] == 1
    assert both["dt_s"].iloc[0] == pytest.approx(REAL.iteration_s(1, 100 + 1, 200), rel=1e-12)   # A made 1 token
    # one weight read and one all-reduce latency for both: the 201 tokens' matmuls hide under the read
    assert REAL.iteration_s(1, 101, 200) == pytest.approx(0.002 + 0.015 + 201 * 1e-6 + 101 * 2e-8 + 200 * 0.05e-3)
    assert REAL.iteration_s(1, 101, 200) < decode_s(1, 101) + prefill_s(200) - 0.015


def test_low_load_ttft_and_tbt_match_the_hand_model():
    w = sv.workload(300, 0.05, prompt=("fixed", 256), output=("fixed", 32), seed=1)   # a request every 20 s
    r = sv.simulate(w, REAL)
    assert np.median(r.ttft_s) == pytest.approx(prefill_s(256), rel=1e-9)
    assert r.tbt_percentile(50) == pytest.approx(decode_s(1, 256 + 16), rel=1e-3)


# -- 3. queueing sanity --------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def moderate():
    w = sv.workload(4000, 6.0, prompt=("lognormal", 512, 0.5), output=("lognormal", 128, 0.7), seed=2)
    return w, sv.simulate(w, REAL)


def test_littles_law(moderate):
    w, r = moderate
    # exact accounting: resident-seconds over the iterations = sum of (finish - admit)
    assert (r.iterations["dt_s"] * r.iterations["resident"]).sum() == pytest.approx((r.finish_s - r.admit_s).sum(),
                                                                                      rel=1e-9)
    # L = λW: mean resident against the offered rate times the mean time in system
    assert r.mean_resident() == pytest.approx(6.0 * r.e2e_s.mean(), rel=0.06)


def test_fcfs_and_capacity_limits(moderate):
    w, r = moderate
    assert np.all(np.diff(r.admit_s) >= 0)                            # admitted in arrival order
    assert r.iterations["resident"].max() <= REAL.max_batch
    # KV reserved at every iteration start never exceeds the capacity
    need = w.prompt_len + w.output_len
    starts = r.iterations["start_s"].to_numpy()[::97]
    for t in starts:
        live = (r.admit_s <= t) & (r.finish_s > t)
        assert need[live].sum() <= REAL.max_kv_tokens


def test_tight_kv_blocks_admission():
    # 700 + 800 = 1,500 tokens each: one request at a time fits, whatever max_batch says
    w = sv.workload(40, 100.0, prompt=("fixed", 700), output=("fixed", 800), seed=0)
    r = sv.simulate(w, TIGHT)
    assert r.iterations["resident"].max() == 1
    assert np.all(r.admit_s[1:] >= r.finish_s[:-1])


def test_throughput_never_exceeds_the_batch_bound_and_reaches_it_at_overload():
    cost = sv.StepCost(fixed_s=0.0, weight_read_s=0.015, per_token_s=1e-5, comm_per_token_s=0.05e-3,
                       decode_per_ctx_token_s=0.0, prefill_attn_per_token_s=1e-6, max_batch=32, max_kv_tokens=10**7)
    bound = cost.decode_bound_tok_s()
    assert bound == pytest.approx(32 / (0.015 + 32 * 0.05e-3))
    for rate in (5.0, 50.0, 500.0):
        w = sv.workload(3000, rate, prompt=("fixed", 16), output=("lognormal", 200, 0.5), seed=3)
        r = sv.simulate(w, cost)
        decode_tokens = r.output_tokens - r.n                   # first tokens come from prefill iterations
        assert decode_tokens / r.span_s <= bound
        assert r.throughput_tok_s <= bound + r.n / r.span_s
    assert decode_tokens / r.span_s > 0.9 * bound               # overloaded: full batches
    r2 = sv.simulate(w, cost, n_instances=2)
    assert (r2.output_tokens - r2.n) / r2.span_s <= 2 * bound
    assert r2.throughput_tok_s > 1.7 * r.throughput_tok_s


def test_goodput_is_at_most_the_request_rate(moderate):
    _, r = moderate
    assert r.goodput(math.inf, math.inf) == pytest.approx(r.request_rate)
    assert r.goodput(0.0, 0.0) == 0.0
    g = [r.goodput(s, 0.05) for s in (0.1, 0.3, 1.0, 3.0)]
    assert all(0 <= x <= r.request_rate for x in g) and g == sorted(g)
    assert r.goodput(0.5, 0.05) == pytest.approx(((r.ttft_s <= 0.5) & (r.tbt_mean_s <= 0.05)).sum() / r.span_s)


def test_load_sweep_p99_ttft_rises_with_load():
    df = sv.load_sweep(REAL, [1, 2, 4, 8, 12, 16], n_requests=1500, seed=4)   # saturates near 14/s
    assert list(df.columns[:5]) == ["rate_per_s", "ttft_p50_s", "ttft_p99_s", "tbt_p50_s", "tbt_p99_s"]
    p99 = df["ttft_p99_s"].to_numpy()
    assert np.all(np.diff(p99) >= -0.02 * p99[:-1])
    assert p99[-1] > 3 * p99[0]
    assert np.all(df["goodput_req_s"] <= df["request_rate"] + 1e-12)
    assert df["tbt_p99_s"].iloc[-1] >= df["tbt_p99_s"].iloc[0]


def test_larger_chunks_lower_ttft_at_low_load():
    w = sv.workload(400, 0.5, prompt=("lognormal", 2000, 0.5), output=("fixed", 64), seed=5)
    ttft = [sv.simulate(w, REAL, chunk_tokens=c).ttft_s.mean() for c in (64, 256, 1024, 8192)]
    assert ttft == sorted(ttft, reverse=True) and ttft[0] > ttft[-1] + 0.05


def test_round_robin_over_instances():
    w = sv.workload(30, 10.0, seed=0)
    r = sv.simulate(w, REAL, n_instances=4)
    assert r.instance.tolist() == [i % 4 for i in range(30)]
    assert sorted(r.iterations["instance"].unique()) == [0, 1, 2, 3]


# -- 4. disaggregated -----------------------------------------------------------------------------------------
def test_disaggregated_single_request_by_hand():
    kvb, link = 131072.0, 1e9
    r = sv.simulate(one(300, 4), REAL, disaggregated=True, kv_bytes_per_token=kvb, link_bytes_per_s=link)
    assert r.ttft_s[0] == pytest.approx(prefill_s(300), rel=1e-12)
    transfer = 300 * kvb / link
    step = [decode_s(1, 300 + g) for g in (1, 2, 3)]
    gaps = np.sort(r.gaps())
    np.testing.assert_allclose(gaps, sorted([transfer + step[0], step[1], step[2]]), rtol=1e-12)
    assert r.decode_instance[0] == 0 and set(r.iterations["role"]) == {"prefill", "decode"}


def test_disaggregation_removes_prefill_interference_from_tbt():
    w = sv.workload(2000, 6.0, prompt=("lognormal", 1024, 0.5), output=("lognormal", 128, 0.5), seed=6)
    colo = sv.simulate(w, REAL, n_instances=2)
    dis = sv.simulate(w, REAL, disaggregated=True, n_prefill=1, n_decode=1)
    # colocated decode iterations often carry a 512-token prefill chunk (~49 ms); decode-only ones never do
    assert colo.tbt_percentile(99) > 0.04
    assert dis.tbt_percentile(90) < 0.025
    assert dis.iterations.query("role == 'decode'")["prefill_tokens"].max() == 0
    assert dis.iterations.query("role == 'prefill'")["decoding"].max() == 0


def test_single_token_requests_never_reach_a_decode_instance():
    w = sv.workload(50, 10.0, prompt=("fixed", 100), output=("uniform", 1, 2), seed=1)
    r = sv.simulate(w, REAL, disaggregated=True, n_decode=2)
    assert np.all((r.decode_instance == -1) == (w.output_len == 1))
    np.testing.assert_array_equal(r.finish_s[w.output_len == 1], r.first_token_s[w.output_len == 1])


# -- 5. workload ----------------------------------------------------------------------------------------------
def test_workload_is_reproducible_and_rescales_with_rate():
    a = sv.workload(1000, 5.0, prompt=("lognormal", 500, 0.6), output=("uniform", 10, 20), seed=3)
    b = sv.workload(1000, 5.0, prompt=("lognormal", 500, 0.6), output=("uniform", 10, 20), seed=3)
    c = sv.workload(1000, 10.0, prompt=("lognormal", 500, 0.6), output=("uniform", 10, 20), seed=3)
    np.testing.assert_array_equal(a.arrival_s, b.arrival_s)
    np.testing.assert_array_equal(a.prompt_len, c.prompt_len)
    np.testing.assert_allclose(c.arrival_s, a.arrival_s / 2, rtol=1e-12)
    assert a.output_len.min() >= 10 and a.output_len.max() <= 20
    assert not np.array_equal(a.arrival_s, sv.workload(1000, 5.0, seed=4).arrival_s)


def test_poisson_is_bursty_with_cv_one():
    a = sv.workload(500, 3.0, "poisson", seed=9)
    b = sv.workload(500, 3.0, "bursty", burstiness=1.0, seed=9)
    np.testing.assert_array_equal(a.arrival_s, b.arrival_s)


@pytest.mark.parametrize("cv", [0.5, 1.0, 3.0])
def test_interarrival_mean_and_cv(cv):
    w = sv.workload(200_000, 4.0, "poisson" if cv == 1.0 else "bursty", burstiness=cv, seed=1)
    g = np.diff(np.concatenate([[0.0], w.arrival_s]))
    assert g.mean() == pytest.approx(0.25, rel=0.02 * cv)
    assert g.std() / g.mean() == pytest.approx(cv, rel=0.03 * max(cv, 1))


def test_lognormal_lengths_have_the_mean():
    w = sv.workload(100_000, 1.0, prompt=("lognormal", 800, 0.8), output=("lognormal", 50, 0.3, 60), seed=2)
    assert w.prompt_len.mean() == pytest.approx(800, rel=0.02)
    assert w.output_len.max() == 60 and w.prompt_len.min() >= 1


# -- 6. errors ----------------------------------------------------------------------------------------------------
def cost_with(**kw):
    base = dict(fixed_s=0.0, weight_read_s=0.01, per_token_s=1e-4, comm_per_token_s=0.0, decode_per_ctx_token_s=0.0,
                prefill_attn_per_token_s=1e-4, max_batch=8, max_kv_tokens=10_000)
    return sv.StepCost(**{**base, **kw})


@pytest.mark.parametrize("bad,name", [
    (dict(weight_read_s=-1.0), "weight_read_s"), (dict(fixed_s=float("nan")), "fixed_s"),
    (dict(per_token_s=float("inf")), "per_token_s"), (dict(decode_per_ctx_token_s="0"), "decode_per_ctx"),
    (dict(prefill_attn_per_token_s=True), "prefill_attn_per_token_s"), (dict(comm_per_token_s=-1e-9), "comm_per"),
    (dict(max_batch=0), "max_batch"), (dict(max_batch=2.5), "max_batch"), (dict(max_kv_tokens=-5), "max_kv_tokens"),
    (dict(weight_read_s=0.0, per_token_s=0.0), "weight_read_s"),
])
def test_bad_step_cost_names_the_field(bad, name):
    with pytest.raises(ValueError, match=name):
        cost_with(**bad)


@pytest.mark.parametrize("bad,name", [
    (dict(n_requests=0), "n_requests"), (dict(n_requests=2.0), "n_requests"), (dict(rate_per_s=0), "rate_per_s"),
    (dict(rate_per_s=float("nan")), "rate_per_s"), (dict(arrival="uniform"), "arrival"),
    (dict(arrival="bursty", burstiness=0), "burstiness"), (dict(burstiness=2.0), "burstiness"),
    (dict(prompt=("normal", 5)), "prompt"), (dict(prompt=("fixed", 0)), "prompt"),
    (dict(output=("uniform", 9, 3)), "output"), (dict(output=("lognormal", 100, -1.0)), "output"),
    (dict(output=("lognormal", 100)), "output"), (dict(seed=-1), "seed"),
])
def test_bad_workload_arguments_name_themselves(bad, name):
    with pytest.raises(ValueError, match=name):
        sv.workload(**{**dict(n_requests=10, rate_per_s=1.0), **bad})


@pytest.mark.parametrize("arrays,name", [
    (([1.0, 0.5], [1, 1], [1, 1]), "arrival_s"), (([], [], []), "arrival_s"), (([-1.0], [1], [1]), "arrival_s"),
    (([0.0, float("nan")], [1, 1], [1, 1]), "arrival_s"), (([0.0], [0], [1]), "prompt_len"),
    (([0.0], [1.5], [1]), "prompt_len"), (([0.0, 1.0], [1], [1, 1]), "prompt_len"), (([0.0], [3], [-2]), "output_len"),
])
def test_bad_workload_arrays_name_themselves(arrays, name):
    with pytest.raises(ValueError, match=name):
        sv.ServingWorkload(*(np.array(a) for a in arrays))


@pytest.mark.parametrize("kw,name", [
    (dict(n_instances=0), "n_instances"), (dict(chunk_tokens=0), "chunk_tokens"), (dict(chunk_tokens=1.5), "chunk_tokens"),
    (dict(disaggregated="yes"), "disaggregated"), (dict(prefill_cost=REAL), "prefill_cost"),
    (dict(disaggregated=True, n_prefill=0), "n_prefill"), (dict(disaggregated=True, n_decode=-1), "n_decode"),
    (dict(disaggregated=True, n_instances=2), "n_instances"),
    (dict(disaggregated=True, link_bytes_per_s=0.0), "link_bytes_per_s"),
    (dict(disaggregated=True, kv_bytes_per_token=-1.0), "kv_bytes_per_token"),
    (dict(disaggregated=True, decode_cost="fast"), "decode_cost"),
])
def test_bad_simulate_arguments_name_themselves(kw, name):
    with pytest.raises(ValueError, match=name):
        sv.simulate(sv.workload(5, 1.0), REAL, **kw)


def test_a_request_that_never_fits_is_an_error_up_front():
    w = sv.ServingWorkload(np.array([0.0, 1.0]), np.array([100, 1000]), np.array([10, 600]))
    with pytest.raises(ValueError, match="max_kv_tokens.*request 1"):
        sv.simulate(w, TIGHT)
    with pytest.raises(ValueError, match="prefill_cost.max_kv_tokens"):
        sv.simulate(sv.ServingWorkload(np.array([0.0]), np.array([2000]), np.array([1])), TIGHT, disaggregated=True)
    with pytest.raises(ValueError, match="workload"):
        sv.simulate({"arrival_s": [0.0]}, REAL)
    with pytest.raises(ValueError, match="cost"):
        sv.simulate(w, None)


def test_bad_slo_and_sweep_arguments():
    r = sv.simulate(sv.workload(5, 1.0), REAL)
    with pytest.raises(ValueError, match="ttft_slo_s"):
        r.goodput(-1.0, 0.1)
    with pytest.raises(ValueError, match="tbt_slo_s"):
        r.goodput(1.0, float("nan"))
    with pytest.raises(ValueError, match="rates"):
        sv.load_sweep(REAL, [1.0, -2.0])


def test_public_paths_and_the_serving_workload_name():
    import accelbook
    from accelbook import inference

    assert accelbook.serving is sv                      # the short name is the module
    assert sv.StepCost is inference.StepCost and sv.workload(3, 1.0).n == 3
    assert not hasattr(sv, "Workload")                  # one meaning: fleet's Workload is another thing
    assert isinstance(sv.workload(3, 1.0), sv.ServingWorkload)


def test_kernel_outputs_by_name_match_the_iterations_and_gaps():
    r = sv.simulate(sv.workload(40, 5.0, seed=2), TIGHT, n_instances=2)
    assert tuple(r.iterations.columns[2:]) == sv.ITERATION_COLUMNS
    assert sv.InstanceRun._fields == sv.ITERATION_COLUMNS + ("gap_s", "gap_count")
    assert int(r.gap_count.sum()) == int((r.workload.output_len - 1).sum())   # every gap once
    per_instance = r.iterations.groupby("instance")["dt_s"].sum()
    assert (per_instance > 0).all() and len(per_instance) == 2


# -- 7. the step cost from the inference model ----------------------------------------------------------------
def test_step_cost_charges_the_allreduce_latency_once_a_step_and_its_bytes_per_token():
    # Llama 3.1 70B on 8 × H200 (tp 8): two ring all-reduces a layer of one token's d_model bf16 activations
    from accelbook import get_chip, inference

    h200 = get_chip("h200")
    cost = inference.step_cost("llama-3.1-70b", "h200", 8, "fp8")
    L, d, tp = 80, 8192, 8
    link = h200.link_bw_bytes_per_s / 2                        # the catalogue's figure is bidirectional
    from accelbook.specs.measured import allreduce_latency

    ar = allreduce_latency("h200")                             # measured nccl-tests small-message time, if any
    fixed = L * 2 * (ar.latency_s if ar is not None else 2 * (tp - 1) * h200.link_latency_s)   # else 2.24 ms
    per_token = L * 2 * 2 * (tp - 1) / tp * d * 2 / link       # 10.2 µs
    assert cost.fixed_s == pytest.approx(fixed, rel=1e-12) and 2e-3 < fixed < 6e-3
    # plus the token's elementwise kernels (norms, RoPE, SwiGLU, fp8 casts), 252,928 bytes a layer on each of
    # the 8 chips (tests/test_inference.py, ELEM_70B_FP8_TP8), at the H200's BabelStream 4.15 TB/s: 4.9 µs
    elem = 80 * 252_928 / 4.15e12
    assert cost.comm_per_token_s == pytest.approx(per_token + elem, rel=1e-12)
    assert per_token == pytest.approx(10.2e-6, rel=0.01)
    # a 256-token chunk pays 2.24 ms of latency once, not the 12.7 ms of a whole 1,024-token prompt's all-reduces
    assert cost.iteration_s(0, 0, 256) < cost.iteration_s(0, 0, 1024) / 2


def test_a_mixed_step_reads_the_weights_once_and_its_matmuls_overlap_the_read():
    # 32 decoders (40,000 tokens of KV cache) and a 512-token chunk: 544 tokens of matmuls (21.8 ms) outlast the
    # 15 ms weight read, which is charged once for both
    assert REAL.iteration_s(32, 40_000, 512) == pytest.approx(
        0.002 + 544 * 0.04e-3 + 544 * 1e-6 + 40_000 * 2e-8 + 512 * 0.05e-3, rel=1e-12)
    # a small chunk rides on the decode step's weight read: 32 + 64 tokens of matmuls (3.8 ms) hide under it
    assert REAL.iteration_s(32, 40_000, 64) - REAL.iteration_s(32, 40_000, 0) == pytest.approx(64 * (1e-6 + 0.05e-3))
    assert REAL.iteration_s(32, 40_000, 512) < REAL.iteration_s(32, 40_000, 0) + REAL.iteration_s(0, 0, 512)
    assert REAL.decode_bound_tok_s() == pytest.approx(64 / (0.002 + 0.015 + 64 * 1e-6))


def test_small_chunks_keep_up_at_notebook_06_load():
    # notebook 06's comparison: 2 × (8 × H200) at 12 requests/s, prompts 2,048, outputs 256. With the fixed
    # latency charged once a step (not a whole prompt's all-reduces every chunk), 256-token chunks keep up
    from accelbook import inference

    cost = inference.step_cost("llama-3.1-70b", "h200", 8, "fp8")
    w = sv.workload(3000, 12.0, prompt=("lognormal", 2048, 0.5), output=("lognormal", 256, 0.5), seed=1)
    small = sv.simulate(w, cost, n_instances=2, chunk_tokens=256)
    big = sv.simulate(w, cost, n_instances=2, chunk_tokens=4096)
    assert small.goodput(1.0, 0.05) > 0.9 * big.goodput(1.0, 0.05)
    assert np.median(small.ttft_s) < 0.5
    assert small.tbt_percentile(99) < big.tbt_percentile(99)


# -- 8. paged KV, preemption by recomputation, prefix caching ------------------------------------------------------
PAGED_GRID = [
    (dict(n_requests=150, rate_per_s=20.0, prompt=("uniform", 1, 700), output=("uniform", 1, 500)), TIGHT,
     dict(kv_policy="paged", chunk_tokens=64)),                                    # preemptions
    (dict(n_requests=150, rate_per_s=50.0, prompt=("fixed", 700), output=("fixed", 700)), TIGHT,
     dict(kv_policy="paged", block_tokens=1)),                                     # token-sized blocks
    (dict(n_requests=200, rate_per_s=20.0, prompt=("uniform", 1, 600), output=("uniform", 1, 400),
          prefix=(96, 0.7, 3)), TIGHT, dict(kv_policy="paged", prefix_caching=True, block_tokens=8, chunk_tokens=100)),
    (dict(n_requests=300, rate_per_s=40.0, prompt=("lognormal", 300, 0.8, 900), output=("uniform", 1, 300),
          prefix=(200, 0.5, 5)), TIGHT, dict(kv_policy="paged", prefix_caching=True, n_instances=2)),
    (dict(n_requests=300, rate_per_s=60.0, prompt=("lognormal", 400, 0.8), output=("lognormal", 100, 1.0),
          prefix=(512, 0.9)), REAL, dict(kv_policy="paged", prefix_caching=True, chunk_tokens=128)),
]


@pytest.mark.parametrize("wkw,cost,kw", PAGED_GRID, ids=[f"paged{i}" for i in range(len(PAGED_GRID))])
def test_paged_kernel_equals_reference_grid(wkw, cost, kw):
    w = sv.workload(**wkw, seed=7)
    r = assert_same_as_reference(w, cost, **kw)
    if cost is TIGHT:
        assert r.preemptions.sum() > 0                   # the grid exercises preemption
    if kw.get("prefix_caching"):
        assert r.cached_tokens.sum() > 0                 # ... and prefix hits


@st.composite
def paged_case(draw):
    bt = draw(st.sampled_from([1, 4, 16]))
    kv = draw(st.integers(8 * bt, 3000))
    cost = sv.StepCost(draw(st.sampled_from([0.0, 0.003])), draw(st.sampled_from([0.001, 0.01])),
                       draw(st.sampled_from([1e-5, 1e-4])), 0.0, draw(st.sampled_from([0.0, 1e-7])),
                       draw(st.sampled_from([0.0, 2e-4])), draw(st.integers(1, 8)), kv)
    room = kv // bt * bt                                 # the pool in tokens: prompt + output - 1 must fit
    plen = min(draw(st.sampled_from([0, 5, 3 * bt, 64])), room // 3)
    pmax = max(1, min(draw(st.integers(1, 400)), room // 2 - plen))
    omax = max(1, min(draw(st.integers(1, 300)), room - pmax - plen))
    prefix = (plen, draw(st.sampled_from([0.3, 1.0])), draw(st.integers(1, 4))) if plen > 0 else None
    w = sv.workload(draw(st.integers(1, 60)), draw(st.sampled_from([0.5, 5.0, 50.0, 500.0])),
                    prompt=("uniform", 1, pmax), output=("uniform", 1, omax), seed=draw(st.integers(0, 2**31)),
                    prefix=prefix)
    return w, cost, dict(kv_policy="paged", block_tokens=bt, prefix_caching=draw(st.booleans()),
                         chunk_tokens=draw(st.sampled_from([1, 7, 64, 512])), n_instances=draw(st.integers(1, 3)))


@settings(max_examples=60, deadline=None)
@given(case=paged_case())
def test_paged_kernel_equals_reference_random_and_keeps_its_invariants(case):
    w, cost, kw = case
    r = assert_same_as_reference(w, cost, **kw)
    n_blocks = cost.max_kv_tokens // kw["block_tokens"]
    assert r.block_tokens == kw["block_tokens"] and r.kv_policy == "paged"
    assert r.iterations["kv_blocks"].max() <= n_blocks                       # blocks never exceed the pool
    assert np.all(np.isfinite(r.finish_s)) and np.all(r.ttft_s > 0)         # every request finishes, TTFT > 0
    assert np.all(r.finish_s >= r.first_token_s) and np.all(r.admit_s >= w.arrival_s)
    # every prompt token is prefilled unless a prefix hit skips it; a preemption adds its recomputation
    assert r.iterations["prefill_tokens"].sum() >= w.prompt_len.sum() - r.cached_tokens.sum()
    if not kw["prefix_caching"]:
        assert r.cached_tokens.sum() == 0


# a step cost to work by hand: 10 ms a step, 1 ms a prompt token, nothing else
HAND = sv.StepCost(fixed_s=0.0, weight_read_s=0.01, per_token_s=0.0, comm_per_token_s=0.0, decode_per_ctx_token_s=0.0,
                   prefill_attn_per_token_s=1e-3, max_batch=8, max_kv_tokens=16)


def test_a_pool_of_four_blocks_and_three_requests_by_hand():
    # 4 blocks of 4 tokens; A, B, C arrive at 0 with 4-token prompts and 6, 6, 2 output tokens.
    # it1: all three admitted (one block each) and prefilled (12 tokens, 22 ms): first tokens at 22 ms.
    # it2: A's context 5 needs a 2nd block: the free one. B's too: none free, so C (newest) is preempted.
    #      C must recompute 4 + 1 tokens (2 blocks): no room. A and B decode (it2-it5, 10 ms each).
    # it6: A's context 9 needs a 3rd block: B (now newest, 5 tokens made) is preempted; A makes its 6th token.
    # it7: B recomputes 4 + 5 = 9 tokens (3 blocks; C behind it does not fit) and makes its 6th token.
    # it8: C recomputes 5 tokens and makes its 2nd token.
    w = sv.ServingWorkload(np.zeros(3), np.array([4, 4, 4]), np.array([6, 6, 2]))
    r = sv.simulate(w, HAND, kv_policy="paged", block_tokens=4)
    it = r.iterations
    assert it["prefill_tokens"].tolist() == [12, 0, 0, 0, 0, 0, 9, 5]        # the recomputations are paid
    assert it["resident"].tolist() == [3, 2, 2, 2, 2, 1, 1, 1]
    assert it["kv_blocks"].tolist() == [3, 4, 4, 4, 4, 3, 3, 2]
    assert r.preemptions.tolist() == [0, 1, 1]
    ends = np.cumsum([0.022, 0.01, 0.01, 0.01, 0.01, 0.01, 0.019, 0.015])
    np.testing.assert_allclose(r.first_token_s, [0.022] * 3, rtol=1e-12)
    np.testing.assert_allclose(r.finish_s, [ends[5], ends[6], ends[7]], rtol=1e-12)
    # B's 6th token waited for its preemption and recomputation: a gap of 91 - 62 ms; C's 2nd, 106 - 22 ms
    np.testing.assert_allclose(np.sort(r.gaps())[-2:], [ends[6] - ends[4], ends[7] - ends[0]], rtol=1e-12)
    # reserving prompt + output (10, 10, 6 of 16 tokens) admits A alone, then B and C together, never preempting
    res = sv.simulate(w, HAND)
    assert res.iterations["resident"].iloc[0] == 1 and res.preemptions.sum() == 0
    assert res.iterations["kv_blocks"].max() <= 16


def test_a_cached_prefix_skips_its_prefill_and_is_evicted_least_recently_released_first():
    # requests one at a time (1 s apart), 12-token prompts whose first 8 are a prefix (2 blocks of 4); 6 blocks
    def served(ids):
        n = len(ids)
        w = sv.ServingWorkload(np.arange(n, dtype=float), np.full(n, 12), np.ones(n, dtype=int), np.full(n, 8),
                               np.array(ids))
        return sv.simulate(w, sv.StepCost(**{**HAND.__dict__, "max_kv_tokens": 24}), kv_policy="paged",
                           block_tokens=4, prefix_caching=True)

    r = served([0, 0])
    assert r.cached_tokens.tolist() == [0, 8]
    np.testing.assert_allclose(r.ttft_s, [0.01 + 12e-3, 0.01 + 4e-3], rtol=1e-12)    # the hit prefills 4 tokens
    assert r.iterations["kv_blocks"].tolist() == [3, 3]                               # the prefix held once
    # 0 and 1 fill 4 blocks once served; 2 needs 3 of the 2 free: prefix 0 (released first) goes; then 0 misses
    # and evicts 1; 2 hits; 1 misses
    r = served([0, 1, 2, 0, 2, 1])
    assert r.cached_tokens.tolist() == [0, 0, 0, 0, 8, 0]
    assert r.iterations["kv_blocks"].tolist() == [3, 5, 5, 5, 5, 5]
    assert served([0, 1, 2, 1]).cached_tokens.tolist() == [0, 0, 0, 8]              # 1 survived, 0 did not
    # without caching every token is prefilled
    w = sv.workload(50, 5.0, prompt=("fixed", 20), output=("fixed", 3), prefix=(64, 1.0), seed=0)
    assert sv.simulate(w, REAL, kv_policy="paged").iterations["prefill_tokens"].sum() == 84 * 50
    assert sv.simulate(w, REAL, kv_policy="paged", prefix_caching=True).cached_tokens.sum() == 49 * 64


def test_paged_without_memory_pressure_is_the_reserve_policy():
    # nothing is ever short of blocks: both policies run the same iterations
    w = sv.workload(400, 8.0, prompt=("lognormal", 512, 0.5), output=("lognormal", 128, 0.7), seed=3)
    a, b = sv.simulate(w, REAL), sv.simulate(w, REAL, kv_policy="paged")
    np.testing.assert_array_equal(a.finish_s, b.finish_s)
    np.testing.assert_array_equal(np.sort(a.gaps()), np.sort(b.gaps()))
    assert b.preemptions.sum() == 0 and a.kv_policy == "reserve" and a.block_tokens == 1


def test_paging_admits_more_under_kv_pressure():
    # prompts 700, outputs 700 on 1,500 tokens: reserve holds one request at a time, paged two, preempting
    w = sv.workload(40, 100.0, prompt=("fixed", 700), output=("fixed", 700), seed=0)
    res, pag = sv.simulate(w, TIGHT), sv.simulate(w, TIGHT, kv_policy="paged")
    assert res.iterations["resident"].max() == 1 and pag.iterations["resident"].max() == 2
    assert pag.preemptions.sum() > 0 and np.median(pag.ttft_s) < np.median(res.ttft_s)


def test_workload_prefix_draws_after_the_lengths():
    a = sv.workload(1000, 5.0, prompt=("lognormal", 500, 0.6), seed=3)
    b = sv.workload(1000, 5.0, prompt=("lognormal", 500, 0.6), seed=3, prefix=(128, 0.25, 4))
    np.testing.assert_array_equal(a.arrival_s, b.arrival_s)                  # the same arrivals and outputs
    np.testing.assert_array_equal(a.output_len, b.output_len)
    shares = b.prefix_id >= 0
    np.testing.assert_array_equal(b.prompt_len, a.prompt_len + 128 * shares)  # the system prompt comes first
    assert 0.2 < shares.mean() < 0.3 and set(b.prefix_id[shares]) == {0, 1, 2, 3}
    assert np.all(b.prefix_len == 128 * shares) and np.all(a.prefix_id == -1)


@pytest.mark.parametrize("kw,name", [
    (dict(kv_policy="vllm"), "kv_policy"), (dict(kv_policy="paged", block_tokens=0), "block_tokens"),
    (dict(prefix_caching=True), "prefix_caching"), (dict(kv_policy="paged", prefix_caching=1), "prefix_caching"),
    (dict(kv_policy="paged", disaggregated=True), "colocated"),
])
def test_bad_paged_arguments_name_themselves(kw, name):
    with pytest.raises(ValueError, match=name):
        sv.simulate(sv.workload(5, 1.0), REAL, **kw)


def test_paged_requests_that_never_fit_and_bad_prefixes_are_errors():
    # 1,500 tokens are 93 blocks of 16 (1,488 tokens): a request whose last decode reads 1,490 never fits
    w = sv.ServingWorkload(np.array([0.0, 1.0]), np.array([100, 1000]), np.array([10, 491]))
    with pytest.raises(ValueError, match="request 1.*94 blocks"):
        sv.simulate(w, TIGHT, kv_policy="paged")
    for plen, pid, match in (([5], [-1], "prefix_len"), ([10], [0], "prefix_len"), ([0], [0], "prefix_len"),
                             ([3, 4], [0, 0], "more than one")):
        n = len(plen)
        with pytest.raises(ValueError, match=match):
            sv.ServingWorkload(np.zeros(n), np.full(n, 10), np.ones(n, dtype=int), np.array(plen), np.array(pid))
    with pytest.raises(ValueError, match="prefix"):
        sv.workload(5, 1.0, prefix=(10, 1.5))
