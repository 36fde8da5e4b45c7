"""Issue 18, inference and serving: every public function survives bad input.

The issue's inference examples each have a test here that failed before the fix (a negative or zero
link bandwidth in ``disaggregation``, the unbounded layout loop behind ``max_throughput`` with a
billion chips, simulations and workloads that grew without bound), then junk in every argument of
the public inference functions (text, NaN, infinities, negatives, huge values, unknown names): a
``ValueError`` or ``TypeError`` naming the argument, or a finite, non-negative result. Results are
checked on the way out (:func:`accelbook.checks.output_fields`), and that check is tested too.
"""

from __future__ import annotations

import importlib
import math
import time

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import accelbook as ab
from accelbook import inference as inf
from accelbook import training
from accelbook.checks import output_fields
from accelbook.inference import mlperf, serving

sweep_module = importlib.import_module("accelbook.inference.sweep")   # the package exports sweep() by that name

M8 = "llama-3.1-8b"


def _refuses_fast(fn, match, seconds=5.0, exc=ValueError):
    t0 = time.perf_counter()
    with pytest.raises(exc, match=match):
        fn()
    assert time.perf_counter() - t0 < seconds


# -- the issue's examples ----------------------------------------------------------------------------------
@pytest.mark.parametrize("link", [-1.0, 0, 0.0, -math.inf, math.nan, "fast", None])
def test_disaggregation_refuses_a_link_that_is_not_a_positive_rate(link):
    with pytest.raises((ValueError, TypeError), match="link_bytes_per_s"):     # was a negative TTFT, or 1/0
        inf.disaggregation(M8, "h100", 1, 1024, 256, 8, link_bytes_per_s=link)


def test_disaggregation_with_an_instant_link_adds_no_transfer_time():
    d = inf.disaggregation(M8, "h100", 1, 1024, 256, 8, link_bytes_per_s=math.inf)
    assert d["kv_transfer_s"] == 0.0 and d["ttft_s"] > 0


def test_max_throughput_on_a_billion_chips_refuses_at_once_naming_the_limit():
    _refuses_fast(lambda: inf.max_throughput(M8, "h100", 10**9, 1024, 256), r"n_chips.*MAX_CHIPS")


def test_layouts_of_a_huge_chip_count_are_listed_without_a_loop_over_the_count():
    t0 = time.perf_counter()
    got = inf.layouts(M8, 2**40)                  # was a Python loop over 1..n
    assert time.perf_counter() - t0 < 2.0
    m = ab.get_model(M8)
    assert got and all(pp <= m.n_layers and m.n_heads % tp == 0 and 2**40 % (tp * pp) == 0 for tp, pp in got)


def test_max_throughput_at_the_chip_limit_still_answers():
    e = inf.max_throughput(M8, "h100", 2**20, 1024, 256)
    assert e.n_chips == 2**20 and math.isfinite(e.tokens_per_s) and e.tokens_per_s > 0


def test_a_tensor_parallel_degree_that_does_not_divide_the_heads_is_rejected():
    with pytest.raises(ValueError, match=r"tp = 3 does not divide the 32 attention heads"):
        inf.estimate(M8, "h100", 3, 8, 1024, 256, tp=3)


def test_min_chips_search_is_bounded_and_names_its_limit(monkeypatch):
    assert inf.min_chips("llama-3.1-70b", "h100", "bf16", 1024, 256) >= 2
    monkeypatch.setattr(sweep_module, "MAX_SEARCH_ESTIMATES", 1)
    _refuses_fast(lambda: inf.min_chips("llama-3.1-405b", "groq-lpu-v1", "bf16", 1024, 256),
                  "MAX_SEARCH_ESTIMATES")


# -- text where a number belongs, and numbers the model cannot use ------------------------------------------
_M8 = ab.get_model(M8)


@pytest.mark.parametrize("call, arg", [
    (lambda: inf.heterogeneous_decode("llama-3.1-70b", "h200", 8, "groq-lp30", 256, 64, 4096,
                                      link_bytes_per_s="fast"), "link_bytes_per_s"),   # was '>' not supported
    (lambda: inf.heterogeneous_decode("llama-3.1-70b", "h200", 8, "groq-lp30", 256, 64, 4096,
                                      link_latency_s="1us"), "link_latency_s"),
    (lambda: inf.plausibility("cerebras-cs3", M8, "1000"), "tokens_per_s_per_user"),
    (lambda: inf.weights_read_bytes(_M8, "2", 8.0), "bpe"),
    (lambda: inf.weights_read_bytes(_M8, 2.0, "8"), "tokens"),
    (lambda: inf.layer_gemms(_M8, 128, "2"), "tp"),
    (lambda: inf.pass_shape_efficiency(_M8, "h100", "128", 2), "tokens"),
    (lambda: inf.max_throughput(M8, "h100", 8, 1024, 256, tpot_target_s="10ms"), "tpot_target_s"),
    (lambda: inf.sweep(M8, "h100", 8, 1024, 256, batches="8"), "batches"),
    (lambda: inf.error_band("tpot_s", table="table"), "table"),
    (lambda: inf.expected_accepted("0.7", 4), "acceptance"),
    (lambda: training.time_to_train_words("86400"), "ideal_s"),
    (lambda: training.model_flops_utilisation("3000", _M8, "h100", 4096), "tokens_per_s_per_chip"),
    (lambda: training.estimate(M8, "h100", 8, 2**21, 4096, cluster=["dgx"]), "cluster"),
])
def test_text_or_objects_where_numbers_belong_name_the_argument(call, arg):
    with pytest.raises((ValueError, TypeError), match=arg):
        call()


@pytest.mark.parametrize("call, arg", [
    (lambda: inf.weights_read_bytes(_M8, -1.0, 8.0), "bpe"),                      # was a negative byte count
    (lambda: inf.weights_read_bytes(_M8, math.inf, 8.0), "bpe"),                  # was inf
    (lambda: inf.layer_gemms(_M8, math.nan, 2), "M"),                             # was NaN rows
    (lambda: inf.layer_gemms(_M8, 128, -1), "tp"),                                # was negative columns
    (lambda: inf.layer_gemms(_M8, 128, 0), "tp"),                                 # was ZeroDivisionError
    (lambda: inf.heterogeneous_decode("llama-3.1-70b", "h200", 8, "groq-lp30", 256, 64, 4096,
                                      link_latency_s=math.inf), "link_latency_s"),  # was an infinite TPOT
    (lambda: training.model_flops_utilisation(-1.5, _M8, "h100", 4096), "tokens_per_s_per_chip"),   # was < 0
    (lambda: training.model_flops_utilisation(3000.0, _M8, "h100", 1e300), "seq_len"),            # was inf
    (lambda: inf.estimate(M8, "h100", 8, 10**30, 1024, 256), "batch_size"),        # was an OverflowError
    (lambda: inf.estimate(M8, "h100", 8, 8, 1024, 256, pp=10**9), "pp"),          # blamed tp
    (lambda: inf.estimate(M8, "h100", 8, 8, 1024, 256, hop_latency_s=1e300), "hop_latency_s"),
    (lambda: inf.estimate(M8, "h100", 8, 8, 1024, 256, tokens_per_seq=10**30), "tokens_per_seq"),
    (lambda: inf.min_chips(M8, "h100", "bf16", 10**9, 256), "input_len"),         # blamed no layout
    (lambda: inf.speculative("llama-3.1-70b", 3, "h100", 8, 8, 1024, 256), "draft"),
    (lambda: serving.simulate(serving.workload(5, 1.0), _cost(), chunk_tokens=10**30), "chunk_tokens"),
    (lambda: training.estimate(M8, "h100", 8, 2**21, 4096, zero_stage=True), "zero_stage"),     # was a 10 s compile
    (lambda: training.counted_flops_per_token(_M8, 4096, hardware_recompute="yes"), "hardware_recompute"),
])
def test_numbers_the_model_cannot_use_are_refused_by_name(call, arg):
    _refuses_fast(call, arg, exc=(ValueError, TypeError))


# -- size guards in the serving simulator -----------------------------------------------------------------
def _cost():
    return inf.step_cost(M8, "h100", 1, input_len=256, output_len=64)


@pytest.mark.parametrize("kw, match", [
    (dict(n_instances=10**9), "n_instances.*MAX_INSTANCES"),               # was 4 GiB and growing
    (dict(disaggregated=True, n_prefill=10**9), "n_prefill.*MAX_INSTANCES"),
    (dict(disaggregated=True, n_decode=10**9), "n_decode.*MAX_INSTANCES"),
    (dict(disaggregated=True, kv_bytes_per_token=1e5, link_bytes_per_s=1e-300), "link_bytes_per_s"),
])
def test_simulate_refuses_sizes_past_its_limits(kw, match):
    w = serving.workload(20, 5.0)
    _refuses_fast(lambda: serving.simulate(w, _cost(), **kw), match)


@pytest.mark.parametrize("kw, match", [
    (dict(n_requests=10**9), "n_requests.*MAX_REQUESTS"),                    # was a hang (8 GB of arrays)
    (dict(prompt=("fixed", 10**30)), "prompt length.*MAX_LEN"),              # was an OverflowError
    (dict(output=("uniform", 1, 10**30)), "output hi.*MAX_LEN"),
    (dict(prefix=(64, 0.5, 10**30)), "n_prefixes.*MAX_REQUESTS"),
])
def test_workload_refuses_sizes_past_its_limits(kw, match):
    args = dict(n_requests=10, rate_per_s=1.0)
    args.update(kw)
    _refuses_fast(lambda: serving.workload(**args), match)


def test_load_sweep_names_rates():
    for bad in (["a"], [None], [1.0, math.nan], [], [1e300]):
        with pytest.raises(ValueError, match="rates"):
            serving.load_sweep(_cost(), bad, n_requests=10)


def test_highest_rate_checks_its_arguments():
    with pytest.raises(TypeError, match="cost"):
        mlperf.highest_rate("cost", 1, ("fixed", 64), ("fixed", 16), 1.0, 0.1)
    with pytest.raises(ValueError, match="replicas.*MAX_INSTANCES"):
        mlperf.highest_rate(_cost(), 10**9, ("fixed", 64), ("fixed", 16), 1.0, 0.1)
    with pytest.raises(ValueError, match="percentile"):
        mlperf.highest_rate(_cost(), 1, ("fixed", 64), ("fixed", 16), 1.0, 0.1, percentile=101)
    res = serving.simulate(serving.workload(20, 5.0, prompt=("fixed", 64), output=("fixed", 16)), _cost())
    with pytest.raises(TypeError, match="result"):
        mlperf.rate_meets_limits({"ttft_s": []}, 1.0, 0.1)
    with pytest.raises(ValueError, match="ttft_limit_s"):
        mlperf.rate_meets_limits(res, "1", 0.1)


# -- outputs checked on the way out ------------------------------------------------------------------------
def test_output_fields_names_the_function_and_the_quantity():
    assert output_fields("f", {"t_s": 1.0, "share": 1.0, "note": "x", "n": None}, fractions={"share"})
    with pytest.raises(ValueError, match=r"f returned t_s = nan"):
        output_fields("f", {"t_s": math.nan})
    with pytest.raises(ValueError, match=r"f returned t_s = -1"):
        output_fields("f", {"t_s": -1.0})
    with pytest.raises(ValueError, match=r"f returned d\['share'\] = 1.5.*\[0, 1\]"):
        output_fields("f", {"d": {"share": 1.5}}, fractions={"share"})
    with pytest.raises(ValueError, match=r"\['mfu'\] = 1.2"):
        output_fields("f", pd.DataFrame({"mfu": [0.5, 1.2]}), fractions={"mfu"})
    with pytest.raises(ValueError, match="inf"):
        output_fields("f", np.array([1.0, math.inf]))
    assert output_fields("f", {"err": -0.3}, signed={"err"})
    assert output_fields("f", pd.DataFrame({"t": [1.0, math.nan]}), missing_ok=True) is not None


def test_estimates_leave_checked():
    e = inf.estimate(M8, "h100", 8, 8, 1024, 256)
    assert output_fields("again", e, fractions={"memory_share"}) is e
    t = training.estimate(M8, "h100", 8, 2**21, 4096)
    assert 0 < t.mfu <= 1 and 0 < t.hfu <= 1


# -- junk in every argument ----------------------------------------------------------------------------------
JUNK = [None, "abc", "8", math.nan, math.inf, -math.inf, -1, -1.5, 0, 0.5, True, 1e300, 10**30, [1, 2], "no-such"]
FAST = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

EST = dict(model=M8, chip="h100", n_chips=8, batch_size=8, input_len=1024, output_len=256, precision="bf16",
           tp=None, pp=1, kv_precision=None, mem_efficiency=None, hop_latency_s=None, price_usd_per_hour=None,
           weight_streaming_bytes_per_s=None, tokens_per_seq=1, cuda_graphs=True, attention="tp")
CALLS = {
    "estimate": (inf.estimate, EST),
    "disaggregation": (inf.disaggregation, dict(model=M8, chip="h100", chips_per_instance=8, input_len=1024,
                                                output_len=256, decode_batch=32, precision="fp8",
                                                link_bytes_per_s=50e9)),
    "heterogeneous_decode": (inf.heterogeneous_decode, dict(
        model="llama-3.1-70b", gpu="h200", n_gpus=8, lpu="groq-lp30", n_lpus=256, batch_size=64, context_len=4096,
        precision="fp8", link_bytes_per_s=100e9, link_latency_s=5e-6, microbatches=4)),
    "speculative": (inf.speculative, dict(model="llama-3.1-70b", draft=M8, chip="h100", n_chips=8, batch_size=8,
                                          input_len=1024, output_len=256, gamma=4, acceptance=0.7, precision="fp8")),
    "expected_accepted": (inf.expected_accepted, dict(acceptance=0.7, gamma=4)),
    "min_chips": (inf.min_chips, dict(model=M8, chip="h100", precision="bf16", input_len=1024, output_len=256,
                                      batch_size=1, max_tp=64)),
    "sweep": (inf.sweep, dict(model=M8, chip="h100", n_chips=8, input_len=1024, output_len=256, batches=[1, 8])),
    "max_throughput": (inf.max_throughput, dict(model=M8, chip="h100", n_chips=8, input_len=1024, output_len=256,
                                                tpot_target_s=None, ttft_target_s=None)),
    "layouts": (inf.layouts, dict(model=M8, n=8, max_tp=64, attention="tp")),
    "step_cost": (inf.step_cost, dict(model=M8, chip="h100", n_chips=1, precision="fp8", input_len=1024,
                                      output_len=256)),
    "plausibility": (inf.plausibility, dict(chip="cerebras-cs3", model=M8, tokens_per_s_per_user=1000.0)),
    "link_terms": (inf.link_terms, dict(chip="groq-lpu-v1")),
    "nearest_peak_flop_s": (inf.nearest_peak_flop_s, dict(chip="h100", precision="fp8")),
    "gemm_efficiency": (inf.gemm_efficiency, dict(chip="h100", precision="fp8")),
    "pass_shape_efficiency": (inf.pass_shape_efficiency, dict(model=M8, chip="h100", tokens=128, tp=2)),
    "layer_gemms": (inf.layer_gemms, dict(model=M8, M=128, tp=2)),
    "weights_read_bytes": (inf.weights_read_bytes, dict(model=M8, bpe=2.0, tokens=8.0)),
    "workload": (serving.workload, dict(n_requests=20, rate_per_s=5.0, arrival="poisson", burstiness=1.0,
                                        prompt=("fixed", 64), output=("fixed", 16), seed=0)),
}
ARGS = sorted((name, arg) for name, (_, kw) in CALLS.items() for arg in kw)


def _finite_non_negative(r) -> bool:
    if isinstance(r, (bool, str)) or r is None:
        return True
    if isinstance(r, (int, float)):
        return math.isfinite(r) and r >= 0
    if isinstance(r, dict):
        return all(_finite_non_negative(v) for v in r.values())
    if isinstance(r, (list, tuple)):
        return all(_finite_non_negative(v) for v in r)
    if isinstance(r, pd.DataFrame):
        num = r.select_dtypes("number").to_numpy(dtype=float)
        return bool(np.all(np.isfinite(num)) and np.all(num >= 0))
    if hasattr(r, "__dataclass_fields__"):
        return all(_finite_non_negative(getattr(r, f)) for f in r.__dataclass_fields__)
    return True


@FAST
@given(target=st.sampled_from(ARGS), junk=st.sampled_from(JUNK))
def test_inference_junk_is_refused_by_name_or_gives_a_finite_result(target, junk):
    name, arg = target
    fn, base = CALLS[name]
    kw = dict(base, **{arg: junk})
    t0 = time.perf_counter()
    try:
        r = fn(**kw)
    except (ValueError, TypeError) as exc:
        msg = str(exc)
        assert arg in msg or (isinstance(junk, str) and repr(junk) in msg), \
            f"{name}({arg}={junk!r}): {type(exc).__name__} does not name {arg!r}: {msg}"
    else:
        assert _finite_non_negative(r), f"{name}({arg}={junk!r}) returned an impossible result: {r!r}"[:400]
    assert time.perf_counter() - t0 < 10, f"{name}({arg}={junk!r}) took {time.perf_counter() - t0:.1f} s"


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(n=st.sampled_from([1, 2, 4, 8, 16]), B=st.integers(1, 512), s_in=st.integers(1, 32768),
       s_out=st.integers(1, 4096), prec=st.sampled_from(["bf16", "fp8"]))
def test_valid_estimates_are_finite_with_shares_at_most_one(n, B, s_in, s_out, prec):
    e = inf.estimate(M8, "h100", n, B, s_in, s_out, prec)
    assert all(math.isfinite(v) and v > 0 for v in (e.ttft_s, e.tpot_s, e.tokens_per_s, e.memory_per_chip_bytes))
    assert 0 < e.breakdown["memory_share"] <= 1
    assert e.tokens_per_s_per_user == pytest.approx(1 / e.tpot_s)


def test_output_check_fast_path_agrees_with_the_named_check():
    """checks.output_fields decides on a fast walk that builds no names; whenever the walk fails, the
    named walk decides and names the quantity. The two agree on what passes."""
    from dataclasses import dataclass

    from accelbook.checks import output_fields

    @dataclass
    class R:
        t_s: float
        share: float
        parts: dict
        err: float

    ok = R(1.0, 0.5, {"a_s": 2.0, "b": (1.0, 2.0)}, -0.2)
    assert output_fields("f", ok, fractions={"share"}, signed={"err"}) is ok
    for bad, name in ((R(-1.0, 0.5, {}, 0.0), "t_s"), (R(1.0, 1.5, {}, 0.0), "share"),
                      (R(1.0, 0.5, {"a_s": float("nan")}, 0.0), "a_s"), (R(1.0, 0.5, {"b": (1.0, -2.0)}, 0.0), "b"),
                      (R(1.0, 0.5, {}, float("inf")), "err")):
        with pytest.raises(ValueError, match=name):
            output_fields("f", bad, fractions={"share"}, signed={"err"})


def test_an_unknown_name_is_reported_with_the_argument_it_was_given_for():
    from accelbook import inference, training
    from accelbook.specs.loader import UnknownNameError

    with pytest.raises(UnknownNameError, match=r"^draft: unknown model 'llama-9'; closest: "):
        inference.speculative("llama-3.1-70b", "llama-9", "h100", 8, 8, 1024, 256)
    with pytest.raises(UnknownNameError, match=r"^chip: unknown chip 'h1000'; closest: h100"):
        inference.estimate("llama-3.1-70b", "h1000", 8, 8, 1024, 256)
    with pytest.raises(UnknownNameError, match=r"^model: unknown model"):
        training.estimate("llama-7", "h100", 8, 2**20, 4096)
    with pytest.raises(TypeError, match="chip must be a Chip or its name, got int 42"):
        inference.estimate("llama-3.1-70b", 42, 8, 8, 1024, 256)
