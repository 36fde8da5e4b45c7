"""The serving simulator's vLLM-V0 schedule (``schedule="prefill_first"``: whole prompts, an iteration
that prefills decodes nothing), TensorRT-LLM's (``"inflight"``: whole prompts in what the decoders leave
of the budget) and the harness batcher (``batcher=(window_s, max_batch)``): the kernel
against the plain-Python reference, and small cases worked by hand from the module docstring."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from naive_serving import reference_simulate  # noqa: E402
from test_serving import REAL, TIGHT, assert_same_as_reference, decode_s, prefill_s  # noqa: E402

from accelbook.inference import serving as sv  # noqa: E402
from accelbook.inference.serving_kernel import harness_batches  # noqa: E402

GRID = [
    (dict(n_requests=200, rate_per_s=5.0, prompt=("uniform", 1, 800), output=("uniform", 1, 200)), REAL,
     dict(schedule="prefill_first", chunk_tokens=800)),
    (dict(n_requests=300, rate_per_s=60.0, prompt=("lognormal", 300, 0.8, 900), output=("lognormal", 100, 1.0)),
     REAL, dict(schedule="prefill_first", chunk_tokens=2000)),
    (dict(n_requests=150, rate_per_s=20.0, prompt=("uniform", 1, 500), output=("uniform", 1, 500)), TIGHT,
     dict(schedule="prefill_first", chunk_tokens=600)),                     # max_batch and KV pressure
    (dict(n_requests=300, rate_per_s=40.0, prompt=("uniform", 1, 600), output=("uniform", 1, 120)), REAL,
     dict(n_instances=3, chunk_tokens=200, batcher=(0.3, 8))),
    (dict(n_requests=300, rate_per_s=80.0, prompt=("uniform", 1, 600), output=("uniform", 1, 120)), REAL,
     dict(n_instances=2, chunk_tokens=4000, schedule="prefill_first", batcher=(0.25, 96))),
    (dict(n_requests=200, rate_per_s=2.0, arrival="bursty", burstiness=3.0, prompt=("uniform", 1, 300),
          output=("uniform", 1, 50)), TIGHT, dict(n_instances=2, schedule="prefill_first", chunk_tokens=300,
                                                  batcher=(0.1, 3))),
    (dict(n_requests=200, rate_per_s=30.0, prompt=("uniform", 1, 800), output=("uniform", 1, 200)), REAL,
     dict(kv_policy="paged", batcher=(0.2, 16))),
    (dict(n_requests=300, rate_per_s=60.0, prompt=("uniform", 1, 800), output=("uniform", 1, 200)), REAL,
     dict(schedule="inflight", chunk_tokens=820)),                          # decoders crowd out prompts
    (dict(n_requests=150, rate_per_s=20.0, prompt=("uniform", 1, 500), output=("uniform", 1, 500)), TIGHT,
     dict(schedule="inflight", chunk_tokens=500, n_instances=2, batcher=(0.2, 5))),
]


@pytest.mark.parametrize("wkw,cost,kw", GRID, ids=[f"case{i}" for i in range(len(GRID))])
def test_kernel_equals_reference(wkw, cost, kw):
    assert_same_as_reference(sv.workload(**wkw, seed=11), cost, **kw)


def _two(arrival, prompt, output):
    return sv.ServingWorkload(np.array(arrival, float), np.array(prompt), np.array(output),
                              np.zeros(len(arrival), np.int64), np.full(len(arrival), -1))


def test_prefill_first_by_hand():
    # A (100-token prompt, 3 tokens) at 0; B (50, 2) at 1 ms, admitted at A's first token.
    w = sv.workload(2, 1.0, prompt=("fixed", 100), output=("fixed", 3))
    w = type(w)(**{**w.__dict__, "arrival_s": np.array([0.0, 0.001]), "prompt_len": np.array([100, 50]),
                   "output_len": np.array([3, 2])})
    r = sv.simulate(w, REAL, chunk_tokens=512, schedule="prefill_first")
    t1 = prefill_s(100)                  # iteration 1: A's prompt
    t2 = t1 + prefill_s(50)              # iteration 2: B's prompt; A does not decode
    t3 = t2 + decode_s(2, 101 + 51)      # iteration 3: A's and B's next tokens; B is done
    t4 = t3 + decode_s(1, 102)           # iteration 4: A's last
    np.testing.assert_allclose(r.first_token_s, [t1, t2], rtol=1e-12)
    np.testing.assert_allclose(r.finish_s, [t4, t3], rtol=1e-12)
    np.testing.assert_allclose(np.sort(r.gaps()), np.sort([t3 - t1, t4 - t3, t3 - t2]), rtol=1e-12)
    # chunked (the default) decodes A beside B's prompt in iteration 2
    c = sv.simulate(w, REAL, chunk_tokens=512)
    assert c.first_token_s[1] == t1 + (0.002 + max(0.015, 51 * 0.04e-3) + 51 * 1e-6 + 101 * 2e-8 + 50 * 0.05e-3)


def test_inflight_by_hand():
    # A (100, 3 tokens) at 0; B (150, 2) at 1 ms: with A decoding, 149 tokens are left of a 150 budget
    w = sv.workload(2, 1.0, prompt=("fixed", 100), output=("fixed", 3))
    w = type(w)(**{**w.__dict__, "arrival_s": np.array([0.0, 0.001]), "prompt_len": np.array([100, 150]),
                   "output_len": np.array([3, 2])})
    r = sv.simulate(w, REAL, chunk_tokens=150, schedule="inflight")
    t1 = prefill_s(100)
    t3 = t1 + decode_s(1, 101) + decode_s(1, 102)      # A's second and last tokens; B waits
    t4 = t3 + prefill_s(150)                           # B's prompt alone
    np.testing.assert_allclose(r.first_token_s, [t1, t4], rtol=1e-12)
    np.testing.assert_allclose(r.finish_s, [t3, t4 + decode_s(1, 151)], rtol=1e-12)


def test_harness_batches_by_hand():
    rel, b = harness_batches(np.array([0.0, 0.1, 0.35, 0.36, 2.0]), 0.3, 2)
    np.testing.assert_array_equal(rel, [0.1, 0.1, 0.36, 0.36, 2.0])      # full at 2, full at 2, window passed
    np.testing.assert_array_equal(b, [0, 0, 1, 1, 2])
    rel, b = harness_batches(np.array([0.0, 0.1]), 0.3, 10)
    np.testing.assert_allclose(rel, [0.4, 0.4])                          # a timeout 0.3 s after the last event
    rel, b = harness_batches(np.array([0.0, 0.1, 0.32]), 0.3, 10)
    np.testing.assert_array_equal(rel, [0.32, 0.32, 0.32])               # the arrival after the window closes it
    np.testing.assert_array_equal(b, [0, 0, 0])


def test_batcher_round_robin_by_batch_and_ttft_from_arrival():
    w = sv.workload(4, 1.0, prompt=("fixed", 10), output=("fixed", 1))
    w = type(w)(**{**w.__dict__, "arrival_s": np.array([0.0, 0.1, 0.35, 0.36])})
    r = sv.simulate(w, REAL, n_instances=2, batcher=(0.3, 2))
    np.testing.assert_array_equal(r.instance, [0, 0, 1, 1])
    np.testing.assert_allclose(r.first_token_s, [0.1 + prefill_s(20)] * 2 + [0.36 + prefill_s(20)] * 2)
    np.testing.assert_allclose(r.ttft_s, r.first_token_s - w.arrival_s)


@pytest.mark.parametrize("kw,match", [
    (dict(schedule="prefill_first", kv_policy="paged"), "prefill_first"),
    (dict(schedule="prefill_first", disaggregated=True), "prefill_first"),
    (dict(schedule="prefill_first", chunk_tokens=64), "longest prompt"),
    (dict(schedule="inflight", chunk_tokens=64), "longest prompt"),
    (dict(schedule="inflight", kv_policy="paged"), "inflight"),
    (dict(schedule="fcfs"), "schedule"),
    (dict(batcher=(0.3,)), "batcher"),
    (dict(batcher=(0.0, 4)), "window_s"),
    (dict(batcher=(0.3, 0)), "max_batch"),
    (dict(batcher=(0.3, 4), disaggregated=True), "batcher"),
])
def test_bad_schedule_or_batcher(kw, match):
    w = sv.workload(5, 1.0, prompt=("fixed", 100), output=("fixed", 4))
    with pytest.raises(ValueError, match=match):
        sv.simulate(w, REAL, **kw)


def test_reference_agrees_on_one_by_hand_case():
    first, finish, _, _ = reference_simulate([0.0, 0.001], [100, 50], [3, 2], REAL, chunk_tokens=512,
                                             schedule="prefill_first")
    assert first == [prefill_s(100), prefill_s(100) + prefill_s(50)]
