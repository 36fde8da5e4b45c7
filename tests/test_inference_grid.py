"""The sweep's array path against the one-at-a-time estimate, and its helpers against plain references.

``inference.sweep`` computes every layout and batch at once on arrays (:mod:`accelbook.inference.terms`);
each row must be exactly what :func:`accelbook.inference.estimate` returns for that layout and batch.
The compiled GPU tile rule (``costs.gemm.gemm_shape_efficiency``) must equal the rule written with
``tiling.gpu_gemm``, the compiled FLOP-weighting of ``pass_shape_efficiency`` a plain loop over ``layer_gemms``, and
:func:`inference.pareto` a plain loop over the sorted points.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from naive_costs import gemm_eta_reference

from accelbook import inference
from accelbook.costs.gemm import chip_gemm_units, gemm_shape_efficiency
from accelbook.inference import rates
from accelbook.specs.chips import get_chip
from accelbook.specs.models import get_model

CASES = [
    ("llama-2-70b", "h100", 8, 1024, 256, "fp8", {}),
    ("llama-2-70b", "groq-lpu-v1", 640, 1024, 256, "fp8", {}),           # SRAM chips: flags per row
    ("llama-3.1-8b", "cerebras-cs3", 4, 2048, 128, "bf16", {}),
    ("llama-3.1-70b", "tpu-v6e", 8, 1024, 256, "bf16", {}),
    ("deepseek-v3", "h200", 8, 4096, 1024, "fp8", {}),                   # MoE, MLA
    ("mixtral-8x7b", "mi300x", 8, 512, 512, "fp8", {"cuda_graphs": False}),
    ("gemma-3-27b", "b200", 8, 32768, 512, "bf16", {"tokens_per_seq": 3}),  # sliding windows, speculation
    ("llama-3.1-8b", "h100", 8, 128, 128, "fp8",
     {"mem_efficiency": 0.7, "hop_latency_s": 2e-6, "price_usd_per_hour": 3.0, "pue": 1.4}),
    ("llama-2-70b", "custom-asic", 8, 1024, 256, "fp8", {"weight_streaming_bytes_per_s": 1e12}),
    ("llama-2-70b", "inferentia2", 12, 1024, 256, "bf16", {}),
]
COLUMNS = {"ttft_s": "ttft_s", "tpot_s": "tpot_s", "tokens_per_s_per_user": "tokens_per_s_per_user",
           "tokens_per_s_per_chip": "tokens_per_s_per_chip", "tokens_per_s": "tokens_per_s",
           "tokens_per_s_per_kw": "tokens_per_s_per_kw", "usd_per_million_tokens": "usd_per_million_tokens",
           "decode_bound": "decode_bound", "flag": "flag"}


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c[0]}-{c[1]}")
def test_every_sweep_row_is_the_estimate_of_its_layout_and_batch(case):
    model, chip, n, s_in, s_out, precision, kw = case
    df = inference.sweep(model, chip, n, s_in, s_out, precision, batches=[1, 3, 8, 64, 100_000], **kw)
    assert len(df) > 0
    for r in df.itertuples():
        e = inference.estimate(model, chip, n, r.batch, s_in, s_out, precision, tp=r.tp, pp=r.pp, **kw)
        for col, attr in COLUMNS.items():
            assert getattr(r, col) == getattr(e, attr), (col, r.tp, r.pp, r.batch)
        assert (r.replicas, r.attention) == (e.config["replicas"], e.config["attention"])
        assert r.batch <= e.max_batch_size


@pytest.mark.parametrize("case", CASES[:5], ids=lambda c: f"{c[0]}-{c[1]}")
def test_sweep_tries_each_layouts_batches_up_to_its_largest(case):
    """Default batches: powers of two to 4,096 and the largest that fits, per layout; a layout that holds
    no sequence has no rows."""
    model, chip, n, s_in, s_out, precision, kw = case
    df = inference.sweep(model, chip, n, s_in, s_out, precision, **kw)
    for tp, pp in inference.layouts(model, n):
        most = inference.estimate(model, chip, n, 1, s_in, s_out, precision, tp=tp, pp=pp, **kw).max_batch_size
        want = sorted(b for b in {2**k for k in range(13)} | {most} if 1 <= b <= most) if most >= 1 else []
        assert sorted(df.loc[(df.tp == tp) & (df.pp == pp), "batch"]) == want


def _gemm_eta_reference(chip, M, N, K):
    """The GPU rule written with the checked ``tiling.gpu_gemm`` (:func:`naive_costs.gemm_eta_reference`)."""
    return gemm_eta_reference(max(1, int(M)), max(1, int(N)), max(1, int(K)), False, chip.compute_units or 132, 128, 4)


@pytest.mark.parametrize("chip", ["h100", "b200", "mi300x"])
def test_compiled_gpu_tile_rule_equals_the_checked_one(chip):
    c = get_chip(chip)
    rng = np.random.default_rng(3)
    shapes = [(1, 1, 1), (16, 128, 64), (17, 8192, 8192), (129, 1280, 8192), (4096, 28672, 8192)]
    shapes += [tuple(int(v) for v in rng.integers(1, 20_000, 3)) for _ in range(300)]
    M, N, K = (np.array(col, dtype=np.float64) for col in zip(*shapes))
    units = chip_gemm_units(c)
    many = rates._gemm_etas(M, N, K, *units)
    for i, (m, n, k) in enumerate(shapes):
        want = _gemm_eta_reference(c, m, n, k)
        assert gemm_shape_efficiency(m, n, k, *units) == want == many[i], (m, n, k)


def _shape_efficiency_reference(model, chip, tokens, tp):
    """Σ F_i / Σ (F_i / η_i) over ``layer_gemms``, in a plain loop, η from ``tiling``'s checked functions."""
    from accelbook.chip.tiling import tpu_gemm

    flops = time = 0.0
    for n, M, N, K in rates.layer_gemms(model, tokens, tp):
        f = n * 2.0 * M * N * K
        flops += f
        m, nn, k = max(1, int(M)), max(1, math.ceil(N)), max(1, math.ceil(K))
        eta = (tpu_gemm(m, nn, k, chip.mxu_rows or 128, chip.mxu_count or 4)["efficiency"] if chip.kind == "tpu"
               else _gemm_eta_reference(chip, m, nn, k))
        time += f / eta
    return flops / time


@pytest.mark.parametrize("model", ["llama-2-70b", "deepseek-v3", "mixtral-8x7b", "gemma-3-27b"])
@pytest.mark.parametrize("chip", ["h100", "mi355x", "tpu-v6e"])
def test_shape_efficiency_one_at_a_time_and_on_arrays_equals_a_plain_loop(model, chip):
    from accelbook.specs.models import get_model

    m, c = get_model(model), get_chip(chip)
    tokens = np.array([1, 3, 16, 17, 128, 1000, 4096, 1, 3], dtype=np.int64)
    tp = np.array([1, 2, 4, 8, 1, 2, 4, 8, 1], dtype=np.int64)
    rates._SHAPE_ETA.clear()
    many = inference.pass_shape_efficiency(m, c, tokens, tp)
    rates._SHAPE_ETA.clear()
    for i, (t, p) in enumerate(zip(tokens.tolist(), tp.tolist())):
        want = _shape_efficiency_reference(m, c, t, p)
        assert inference.pass_shape_efficiency(m, c, t, p) == want == many[i], (t, p)


def _pareto_reference(df, x, y):
    d = df.sort_values([x, y], ascending=[False, False])
    best, keep = -np.inf, []
    for i, v in zip(d.index, d[y]):
        if v > best:
            keep.append(i)
            best = v
    return df.loc[keep].sort_values(x)


def test_pareto_equals_a_plain_loop_with_ties_and_missing_values():
    rng = np.random.default_rng(0)
    for t in range(500):
        n = int(rng.integers(1, 30))
        a, b = rng.integers(0, 6, n).astype(float), rng.integers(0, 6, n).astype(float)
        if t % 3 == 0:
            b[rng.random(n) < 0.2] = np.nan
        if t % 5 == 0:
            a[rng.random(n) < 0.2] = np.nan
        df = pd.DataFrame({"a": a, "b": b, "c": range(n)}, index=rng.permutation(n) * 3)
        pd.testing.assert_frame_equal(inference.pareto(df, "a", "b"), _pareto_reference(df, "a", "b"))


def test_frontier_is_each_systems_pareto_front_of_its_sweep():
    systems = {"8 × H200": ("h200", 8), "640 × LPU": ("groq-lpu-v1", 640)}
    f = inference.frontier("llama-2-70b", systems, 1024, 256, "fp8")
    for label, (chip, n) in systems.items():
        want = inference.pareto(inference.sweep("llama-2-70b", chip, n, 1024, 256, "fp8")).reset_index(drop=True)
        got = f[f.system == label].drop(columns="system").reset_index(drop=True)
        pd.testing.assert_frame_equal(got, want, check_dtype=False)   # per kW: None where a chip has no power


def test_checked_inputs_takes_the_estimates_arguments():
    """The sweep checks its arguments once with ``checked_inputs``: it must take exactly what ``estimate``
    takes, with the same defaults, so a sweep refuses what an estimate refuses."""
    import inspect

    from accelbook.inference.estimate import checked_inputs

    a = inspect.signature(inference.estimate).parameters
    b = inspect.signature(checked_inputs).parameters
    assert list(a) == list(b)
    assert [p.default for p in a.values()] == [p.default for p in b.values()]


@pytest.mark.parametrize("kw, words", [
    ({"pue": 0.5}, "pue"), ({"tokens_per_seq": 0}, "tokens_per_seq"), ({"cuda_graphs": 1}, "cuda_graphs"),
    ({"weight_streaming_bytes_per_s": -1.0}, "weight_streaming_bytes_per_s"), ({"kv_precision": "fp3"}, "kv_precision"),
])
def test_a_sweep_refuses_what_an_estimate_refuses(kw, words):
    with pytest.raises(ValueError, match=words) as est:
        inference.estimate("llama-2-70b", "h100", 8, 1, 1024, 256, "fp8", tp=8, **kw)
    with pytest.raises(ValueError, match=words) as sw:
        inference.sweep("llama-2-70b", "h100", 8, 1024, 256, "fp8", **kw)
    assert str(est.value) == str(sw.value)
    with pytest.raises(TypeError):
        inference.sweep("llama-2-70b", "h100", 8, 1024, 256, "fp8", no_such_argument=1)


def test_plausibility_on_an_array_is_each_speed_on_its_own():
    speeds = np.array([0.0, 10.0, 700.0, 721.0, 5e4, np.inf])
    for chip, model in (("groq-lpu-v1", "llama-2-70b"), ("cerebras-cs3", "llama-3.1-8b"), ("h100", "llama-2-70b"),
                        ("groq-lp30", "llama-3.1-405b")):
        got = inference.plausibility(chip, model, speeds)
        assert got.dtype == object and got.tolist() == [inference.plausibility(chip, model, float(v)) for v in speeds]
    with pytest.raises(ValueError, match="tokens_per_s_per_user"):
        inference.plausibility("groq-lpu-v1", "llama-2-70b", np.array([1.0, np.nan]))


@pytest.mark.parametrize("model", ["llama-2-70b", "deepseek-v3", "mixtral-8x7b", "llama-4-maverick", "gpt-oss-120b",
                                   "gemma-3-27b", "qwen3-30b-a3b"])
def test_layer_gemms_on_arrays_is_each_pair_on_its_own(model):
    """pass_shape_efficiency works out every (tokens, tp) pair's GEMMs at once: layer_gemms on arrays must
    give, pair by pair, exactly the plain-number list (the MoE rows and counts included)."""
    rng = np.random.default_rng(0)
    M = np.concatenate([[1, 2, 3, 7, 8, 255, 4096], rng.integers(1, 70000, 40)]).astype(np.int64)
    tp = rng.choice([1, 2, 4, 8, 16], len(M)).astype(np.int64)
    for Ms in (M, M.astype(float)):
        table = inference.layer_gemms(model, Ms, tp)
        for j in range(len(M)):
            one = inference.layer_gemms(model, Ms.tolist()[j], int(tp[j]))
            assert len(one) == len(table)
            got = [tuple(float(np.broadcast_to(x, M.shape)[j]) for x in g) for g in table]
            assert got == [tuple(float(x) for x in g) for g in one]


def test_shape_efficiency_of_many_pairs_is_each_pair_alone():
    """The pairs worked out together (one call) give each pair's η as it is alone."""
    for model, chip in (("deepseek-v3", "h200"), ("llama-2-70b", "h100"), ("mixtral-8x7b", "tpu-v6e")):
        m, c = get_model(model), get_chip(chip)
        pairs = [(t, p) for t in (1, 3, 64, 1000, 8192) for p in (1, 2, 8)]
        together = rates._shape_etas(m, c, pairs)
        assert together == [rates._shape_etas(m, c, [pair])[0] for pair in pairs]
