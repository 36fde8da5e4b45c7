"""Attention efficiency by sequence length (data/attention_efficiency.toml), checked by hand."""

import math

import pytest

from accelbook.specs.chips import get_chip
from accelbook.specs.clusters import cluster_for
from accelbook.specs.efficiency import attention_efficiency, measured_efficiency
from accelbook.specs.models import get_model
from accelbook.training.compute import attention_time
from accelbook.training.slots import M_DQK, M_DV, chip_vector, model_vector


def test_h100_table_points_and_clamp():
    peak = get_chip("h100").peak_flop_s("bf16")
    assert attention_efficiency("h100", 2048)[0] == pytest.approx(397.5e12 / peak)      # FA2 Fig. 7(d) 265 × 1.5
    assert attention_efficiency("h100", 131072)[0] == pytest.approx(492e12 / peak)     # clamped at 16K: 328 × 1.5
    assert attention_efficiency("h100", 256)[0] == pytest.approx(244.5e12 / peak)      # clamped at 512
    w = math.log(1448 / 1024) / math.log(2)                                              # log-linear, by hand
    assert attention_efficiency("h100", 1448)[0] == pytest.approx((331.5 + w * (397.5 - 331.5)) * 1e12 / peak)


def test_a100_fa2_figure_and_fallback():
    assert attention_efficiency("a100", 4096)[0] == pytest.approx(182 / 312, rel=1e-3)   # FA2 Fig. 4(d)
    # a chip with no table keeps the single figure, whatever the sequence length
    single = measured_efficiency("tpu-v5p", "attention")[0].fraction
    assert attention_efficiency("tpu-v5p", 131072)[0] == single == attention_efficiency("tpu-v5p", 2048)[0]
    assert attention_efficiency("h100", None)[0] == measured_efficiency("h100", "attention")[0].fraction


def test_attention_time_per_flop_follows_table():
    """H100: the kernel's attention time per FLOP at 128K is 397.5/492 of that at 2K (the table's ratio)."""
    m, c = get_model("llama-3.1-405b"), get_chip("h100")
    per_flop = {}
    for s in (2048, 131072):
        cv, notes = chip_vector(c, cluster_for(c), "bf16", s)
        mv = model_vector(m, s)
        T, tp = 4 * s, 8
        t_a, _ = attention_time(mv, cv, T, s, tp, 1, 4, True)
        per_flop[s] = t_a / (2.0 * T * s * (mv[M_DQK] + mv[M_DV]) / tp * 0.5)
        assert any(f"{s:,} tokens" in n for n in notes)
    assert per_flop[131072] / per_flop[2048] == pytest.approx(397.5 / 492)
