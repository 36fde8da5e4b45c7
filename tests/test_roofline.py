"""Roofline: hand-worked operations, the bounds of one layer, invalid inputs, and properties."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import accelbook as ab
from accelbook.chip.roofline import (
    PHASES,
    attainable_flop_s,
    layer_ops,
    layer_roofline,
    ridge_point,
    roofline_curve,
    time_bounds,
)
from accelbook.specs.chips import all_chips
from accelbook.specs.models import all_models

H100_P, H100_B = 989.4e12, 3.35e12  # NVIDIA H100 SXM5 datasheet: dense bf16, HBM3
PROPS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _ops(df):
    return df.set_index("op")


# -- the formulas, by hand ---------------------------------------------------------------------
def test_time_bounds_gemm_by_hand():
    # F = 2e12 FLOP, D = 1e9 B on an H100: t_math = 2e12 / 989.4e12 = 2.021 ms; t_mem = 1e9 / 3.35e12 = 0.2985 ms
    t_math, t_mem, t = time_bounds(2e12, 1e9, H100_P, H100_B)
    assert t_math == pytest.approx(2.0214e-3, rel=1e-4)
    assert t_mem == pytest.approx(2.9851e-4, rel=1e-4)
    assert t == pytest.approx(2.0214e-3, rel=1e-4)  # compute-bound: I = 2000 FLOP/B > 295


def test_time_bounds_broadcast():
    t_math, t_mem, t = time_bounds(np.array([0.0, 1e12]), np.array([1e9, 0.0]), H100_P, H100_B)
    # row 0: pure data movement 1e9 / 3.35e12 = 0.2985 ms; row 1: pure math 1e12 / 989.4e12 = 1.0107 ms
    assert t == pytest.approx([1e9 / 3.35e12, 1e12 / 989.4e12])


def test_ridge_point_by_hand():
    assert ridge_point(H100_P, H100_B) == pytest.approx(295.34, abs=0.01)  # 989.4 / 3.35
    assert ridge_point(459e12, 2.765e12) == pytest.approx(166.00, abs=0.01)  # 459 / 2.765


def test_attainable_below_at_and_above_ridge():
    # below the ridge: I*B, e.g. 100 FLOP/B * 3.35e12 B/s = 3.35e14 FLOP/s
    assert attainable_flop_s(100, H100_P, H100_B) == pytest.approx(3.35e14)
    # at the ridge: both bounds meet at the peak
    assert attainable_flop_s(989.4 / 3.35, H100_P, H100_B) == pytest.approx(H100_P)
    # above: flat at the peak
    assert attainable_flop_s(1000, H100_P, H100_B) == pytest.approx(H100_P)


@pytest.mark.parametrize("fn, args", [
    (time_bounds, (-1.0, 1e9, H100_P, H100_B)),
    (time_bounds, (1.0, float("nan"), H100_P, H100_B)),
    (time_bounds, (1.0, 1.0, 0.0, H100_B)),
    (time_bounds, (1.0, 1.0, H100_P, float("inf"))),
    (attainable_flop_s, (0.0, H100_P, H100_B)),
    (ridge_point, (H100_P, -3.35e12)),
])
def test_formula_inputs_checked(fn, args):
    with pytest.raises(ValueError, match="must be"):
        fn(*args)


def test_roofline_curve_contains_ridge_and_is_capped():
    c = roofline_curve(ab.get_chip("h100"), i_min=1, i_max=1e4, n=16)
    i = c["intensity_flop_per_byte"].to_numpy()
    a = c["attainable_flop_s"].to_numpy()
    assert np.any(np.isclose(i, 989.4 / 3.35))
    assert np.all(np.diff(i) > 0) and np.all(np.diff(a) >= 0)
    assert a.max() == pytest.approx(H100_P) and a.min() == pytest.approx(1 * 3.35e12)
    with pytest.raises(ValueError):
        roofline_curve(ab.get_chip("h100"), i_min=10, i_max=1)


# -- one layer ---------------------------------------------------------------------------------
def test_decode_batch1_llama70b_on_h100_is_memory_bound_everywhere():
    df = layer_roofline(ab.get_model("llama-3.1-70b"), ab.get_chip("h100"), "decode", 1, 4096)
    assert set(df["bound"]) == {"memory"}
    assert (df["t_mem_s"] > df["t_math_s"]).all()
    assert (df["intensity_flop_per_byte"] < 295).all()


def test_decode_ffn_up_gate_intensity_is_about_one():
    # Y[1 x 57344] = X[1 x 8192] W[8192 x 57344] (up + gate, 2 x 28672): F = 2*1*8192*57344 = 939,524,096
    # D = (1*8192 + 8192*57344 + 1*57344) * 2 B = 939,655,168  ->  I = 0.99986 FLOP/B (every weight read for 2 FLOPs)
    ops = _ops(layer_roofline(ab.get_model("llama-3.1-70b"), ab.get_chip("h100"), "decode", 1, 4096))
    up = ops.loc["FFN up + gate"]
    assert up["flops"] == 2 * 1 * 8192 * 57344
    assert up["bytes"] == (8192 + 8192 * 57344 + 57344) * 2
    assert up["intensity_flop_per_byte"] == pytest.approx(1.0, abs=1e-3)
    assert up["bound"] == "memory"
    # t = D / B = 939,655,168 / 3.35e12 = 280.5 us
    assert up["t_s"] == pytest.approx(939_655_168 / 3.35e12)


def test_decode_attention_reads_the_kv_cache():
    # one layer's KV for 4096 tokens: 4096 * 2 * 8 KV heads * 128 * 2 B = 16,777,216 B, plus q and output
    # (64*128 each) 2 * 8192 * 2 B = 32,768 B;  F = 2 * 4096 * (8192 + 8192) = 134,217,728
    att = _ops(layer_roofline(ab.get_model("llama-3.1-70b"), ab.get_chip("h100"), "decode", 1, 4096)).loc[
        "attention (QK^T, softmax, AV)"]
    assert att["bytes"] == 4096 * 2 * 8 * 128 * 2 + 2 * 8192 * 2
    assert att["flops"] == 2 * 4096 * (8192 + 8192)


def test_training_ffn_gemms_are_compute_bound_on_h100():
    # T = B*s = 8*4096 = 32768 tokens; up+gate k=8192, n=57344:
    # I = 2Tkn / (2(Tk + kn + Tn)) = 3.078e13 / 5.234e9 = 5882 FLOP/B >> 295 (ridge)
    ops = _ops(layer_roofline(ab.get_model("llama-3.1-70b"), ab.get_chip("h100"), "training", 8, 4096))
    T, k, n = 32768, 8192, 57344
    hand = 2 * T * k * n / (2 * (T * k + k * n + T * n))
    assert hand == pytest.approx(5882, rel=1e-3)
    assert ops.loc["FFN up + gate", "intensity_flop_per_byte"] == pytest.approx(hand, rel=1e-9)
    assert ops.loc["FFN up + gate", "bound"] == "compute"
    assert ops.loc["FFN down", "bound"] == "compute"


def test_training_is_three_forward_passes():
    m = ab.get_model("llama-3.1-8b")
    fwd = layer_ops(m, "prefill", 2, 1024)
    train = layer_ops(m, "training", 2, 1024)
    assert [o.name for o in fwd] == [o.name for o in train]
    for f, t in zip(fwd, train):
        assert t.flops == pytest.approx(3 * f.flops) and t.bytes == pytest.approx(3 * f.bytes)


def test_decode_gemm_intensity_grows_with_batch():
    m, c = ab.get_model("llama-3.1-70b"), ab.get_chip("h100")
    i = [_ops(layer_roofline(m, c, "decode", b, 1024)).loc["FFN down", "intensity_flop_per_byte"]
         for b in (1, 16, 256)]
    assert i[0] < i[1] < i[2]
    assert i[1] == pytest.approx(16, rel=0.02)  # I ~= T for T << k, n (bf16)


def test_moe_layer_has_router_and_experts():
    names = [o.name for o in layer_ops(ab.get_model("deepseek-v3"), "decode", 4, 2048)]
    assert "router" in names and "routed experts" in names and "shared expert up + gate" in names


@pytest.mark.parametrize("kwargs, match", [
    (dict(phase="decode", batch=0, seq_len=4096), "batch"),
    (dict(phase="decode", batch=1, seq_len=-1), "seq_len"),
    (dict(phase="decode", batch=1.5, seq_len=4096), "batch"),
    (dict(phase="decode", batch=True, seq_len=4096), "batch"),
    (dict(phase="decode", batch=float("nan"), seq_len=4096), "batch"),
    (dict(phase="inference", batch=1, seq_len=4096), "phase"),
    (dict(phase="decode", batch=1, seq_len=4096, precision="fp7"), "precision"),
])
def test_invalid_layer_inputs(kwargs, match):
    with pytest.raises(ValueError, match=match):
        layer_roofline(ab.get_model("llama-3.1-70b"), ab.get_chip("h100"), **kwargs)


@pytest.mark.parametrize("cid", ["tpu-v5e", "tpu-v4", "a100"])  # none of them publishes an FP8 peak
def test_precision_the_chip_lacks(cid):
    with pytest.raises(ValueError, match="no published dense fp8"):
        layer_roofline(ab.get_model("llama-3.1-70b"), ab.get_chip(cid), "decode", 1, 4096, precision="fp8")


# -- properties ---------------------------------------------------------------------------------
pos = st.floats(min_value=1e-3, max_value=1e20, allow_nan=False, allow_infinity=False)
nonneg = st.floats(min_value=0.0, max_value=1e20, allow_nan=False, allow_infinity=False)
scale = st.floats(min_value=1.0, max_value=1e3, allow_nan=False, allow_infinity=False)


@PROPS
@given(f=nonneg, d=nonneg, p=pos, b=pos)
def test_prop_time_is_the_larger_bound(f, d, p, b):
    t_math, t_mem, t = time_bounds(f, d, p, b)
    assert t >= t_math and t >= t_mem
    assert t == max(t_math, t_mem)


@PROPS
@given(f=nonneg, d=nonneg, p=pos, b=pos, k=scale)
def test_prop_more_bandwidth_or_peak_never_slower(f, d, p, b, k):
    t = time_bounds(f, d, p, b)[2]
    assert time_bounds(f, d, p, b * k)[2] <= t
    assert time_bounds(f, d, p * k, b)[2] <= t


@PROPS
@given(i=pos, p=pos, b=pos)
def test_prop_attainable_under_both_roofs(i, p, b):
    a = attainable_flop_s(i, p, b)
    assert a <= p and a <= i * b


phase_st = st.sampled_from(PHASES)
batch_st = st.integers(min_value=1, max_value=4096)
seq_st = st.integers(min_value=1, max_value=131072)
MODELS = [m.id for m in all_models()]
BF16_CHIPS = [c.id for c in all_chips() if "bf16" in c.peak_dense_flop_s]


@PROPS
@given(mid=st.sampled_from(MODELS), cid=st.sampled_from(BF16_CHIPS), phase=phase_st, batch=batch_st,
       seq=seq_st, k=st.floats(min_value=1.0, max_value=16.0))
def test_prop_more_memory_bandwidth_never_slows_a_layer(mid, cid, phase, batch, seq, k):
    chip = ab.get_chip(cid)
    field = "hbm_bw_bytes_per_s" if chip.hbm_bw_bytes_per_s is not None else "sram_bw_bytes_per_s"
    faster = chip.what_if_variant("faster memory", **{field: chip.memory_bw_bytes_per_s * k})
    m = ab.get_model(mid)
    base = layer_roofline(m, chip, phase, batch, seq)["t_s"].to_numpy()
    new = layer_roofline(m, faster, phase, batch, seq)["t_s"].to_numpy()
    assert np.all(new <= base)
    assert new.sum() <= base.sum()


@PROPS
@given(mid=st.sampled_from(MODELS), cid=st.sampled_from(BF16_CHIPS), phase=phase_st, batch=batch_st, seq=seq_st)
def test_prop_layer_roofline_is_finite(mid, cid, phase, batch, seq):
    df = layer_roofline(ab.get_model(mid), ab.get_chip(cid), phase, batch, seq)
    num = df.select_dtypes(include=[np.number]).to_numpy(dtype=float)
    assert np.isfinite(num).all()
    assert (df["flops"] > 0).all() and (df["bytes"] > 0).all() and (df["t_s"] > 0).all()
    assert set(df["bound"]) <= {"compute", "memory"}
    peak = ab.get_chip(cid).peak_flop_s("bf16")
    assert (df["attainable_flop_s"] <= peak * (1 + 1e-12)).all()


def test_all_models_by_all_bf16_chips_grid():
    # a deterministic sweep beside the random one: no NaN at the corners of the dashboard's ranges
    for mid in MODELS:
        for cid in BF16_CHIPS:
            for phase in PHASES:
                for batch, seq in ((1, 1), (4096, 131072)):
                    df = layer_roofline(ab.get_model(mid), ab.get_chip(cid), phase, batch, seq)
                    num = df.select_dtypes(include=[np.number]).to_numpy(dtype=float)
                    assert np.isfinite(num).all() and math.isfinite(df["t_s"].sum()), (mid, cid, phase, batch, seq)
