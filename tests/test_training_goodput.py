"""Goodput in time to train and cost (Llama 3's published effective training time), and the model's
error band from the validation table, as printed next to MFU and tokens/s.

Published numbers are typed from the source: Grattafiori et al. 2024 (arXiv:2407.21783, §3.3.4),
466 interruptions in 54 days, 419 unexpected, "higher than 90% effective training time".
"""

from __future__ import annotations

import math

import pandas as pd
import pytest

from accelbook import training as T
from accelbook.specs.chips import get_chip


@pytest.fixture(scope="module")
def est():
    return T.estimate("llama-3.1-8b", "h100", 16, 64 * 4096, 4096, tp=2)


def test_published_goodput_is_llama3s_and_cited():
    g = T.published_goodput()
    assert g.fraction == 0.90
    assert (g.interruptions, g.unexpected_interruptions) == (466, 419)
    assert g.snapshot_s == 54 * 86400
    assert "2407.21783" in g.provenance.source.url and g.provenance.kind == "primary"


def test_default_time_to_train_is_ideal_over_goodput(est):
    tokens = 1e12
    ideal = tokens / (est.tokens_per_s_per_chip * 16)
    assert est.time_to_train(tokens, goodput=1.0) == pytest.approx(ideal, rel=1e-12)
    assert est.time_to_train(tokens) == pytest.approx(ideal / 0.90, rel=1e-12)
    assert est.time_to_train(tokens, goodput=0.5) == pytest.approx(2 * ideal, rel=1e-12)
    assert est.chip_hours(tokens) == pytest.approx(ideal / 0.90 * 16 / 3600, rel=1e-12)
    price = get_chip("h100").price_usd_per_hour
    assert est.cost_usd(tokens) == pytest.approx(ideal / 0.90 * 16 / 3600 * price, rel=1e-12)
    assert est.cost_usd(tokens, goodput=1.0) == pytest.approx(ideal * 16 / 3600 * price, rel=1e-12)


@pytest.mark.parametrize("bad", [0, 0.0, -0.1, 1.01, 2, float("nan"), float("inf"), True, "0.9"])
def test_goodput_outside_zero_one_raises(est, bad):
    with pytest.raises(ValueError, match=r"goodput .*\(0, 1\]"):
        est.time_to_train(1e12, goodput=bad)
    with pytest.raises(ValueError, match="goodput"):
        est.cost_usd(1e12, goodput=bad)


def test_time_to_train_summary_names_both_times(est):
    tokens = 1e12
    ideal_days = tokens / est.tokens_per_s / 86400
    s = est.time_to_train_summary(tokens)
    assert f"{ideal_days:,.1f} days at 100 %" in s
    assert f"{ideal_days / 0.9:,.1f} days" in s and "90 % effective training time Llama 3 reported" in s
    assert "75 % goodput" in est.time_to_train_summary(tokens, 0.75)


def test_estimate_assumptions_name_goodput(est):
    assert any("goodput" in a for a in est.assumptions)


# -- the error band ------------------------------------------------------------------------------
def test_error_band_on_a_hand_made_table():
    t = pd.DataFrame({"role": ["target", "target", "target", "context", "target"],
                      "error": [0.10, -0.05, 0.30, 2.0, float("nan")]})
    b = T.error_band(t)
    assert (b.median, b.low, b.high, b.n) == (pytest.approx(0.10), -0.05, 0.30, 3)
    assert b.words() == "model +10 % median over 3 published runs, range \u22125…+30 %"
    assert T.error_band(t, role="context").n == 1
    with pytest.raises(ValueError, match="role"):
        T.error_band(t, role="all")
    with pytest.raises(ValueError, match="no evaluated"):
        T.error_band(t[t["role"] == "context"])


def test_default_error_band_is_the_validation_tables():
    v = T.validation_table()
    errs = sorted(e for r, e in zip(v["role"], v["error"]) if r == "target" and not math.isnan(e))
    n = len(errs)
    median = (errs[(n - 1) // 2] + errs[n // 2]) / 2
    b = T.error_band()
    assert b.n == n and b.low == errs[0] and b.high == errs[-1]
    assert b.median == pytest.approx(median, rel=1e-12)
