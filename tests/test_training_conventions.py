"""One MFU everywhere (training, economics, the validation table) and a weak-scaling curve that never
shows an efficiency above 1 without its reason (issue 14)."""

from __future__ import annotations

import pytest

import accelbook as ab
from accelbook import economics as ec
from accelbook import training

H100_BF16, H100_FP8 = 989.4e12, 1978.9e12
LLAMA70 = dict(model="llama-3.1-70b", chip="h100", n_chips=1024, global_batch_tokens=2**24, seq_len=8192,
               tp=8, pp=4, microbatch=1)


@pytest.fixture(scope="module")
def runs():
    return {p: training.estimate(**LLAMA70, precision=p) for p in ("bf16", "fp8")}


def test_mfu_by_hand():
    """PaLM App. B: MFU = tokens/s · (6N + 12·L·H·d_h·s) / bf16 dense peak."""
    m, c = ab.get_model("llama-3.1-70b"), ab.get_chip("h100")
    full = m.flops_per_token(4096, training=True)
    assert training.model_flops_utilisation(1000.0, m, c, 4096) == pytest.approx(1000.0 * full / H100_BF16, rel=1e-12)
    assert training.model_flops_utilisation(1000.0, m, c, 4096, precision="fp8") == pytest.approx(1000.0 * full / H100_BF16, rel=1e-12)
    assert training.model_flops_utilisation(1000.0, m, c, 4096, precision="fp8", peak="precision") == \
        pytest.approx(1000.0 * full / H100_FP8, rel=1e-4)
    causal = m.flops_per_token(4096, training=True, causal=True)
    assert training.model_flops_utilisation(1000.0, m, c, 4096, attention="causal") == pytest.approx(1000.0 * causal / H100_BF16, rel=1e-12)
    with pytest.raises(ValueError, match="attention"):
        training.model_flops_utilisation(1000.0, m, c, 4096, attention="half")
    with pytest.raises(ValueError, match="peak"):
        training.model_flops_utilisation(1000.0, m, c, 4096, peak="fp8")


def test_estimate_reports_the_named_convention(runs):
    e = runs["bf16"]
    m, c = ab.get_model("llama-3.1-70b"), ab.get_chip("h100")
    assert e.mfu_convention == "model FLOPs (full attention) / dense bf16 peak"
    assert e.mfu == pytest.approx(e.tokens_per_s_per_chip * m.flops_per_token(8192, training=True) / H100_BF16,
                                  rel=1e-12)
    assert e.mfu_as(attention="full", peak="bf16") == e.mfu
    causal = e.tokens_per_s_per_chip * m.flops_per_token(8192, training=True, causal=True) / c.peak_flop_s("bf16")
    assert e.mfu_as(attention="causal") == pytest.approx(causal, rel=1e-12)
    assert e.mfu_as(attention="causal") < e.mfu


def test_fp8_run_that_is_faster_has_the_higher_mfu(runs):
    """The issue's example: an fp8 step 28 % faster must not print a lower MFU than bf16."""
    bf16, fp8 = runs["bf16"], runs["fp8"]
    assert fp8.step_time_s < bf16.step_time_s
    assert fp8.mfu / bf16.mfu == pytest.approx(bf16.step_time_s / fp8.step_time_s, rel=1e-12)
    # against its own (fp8) peak it is lower: that figure is still there, by name
    assert fp8.mfu_as(peak="precision") == pytest.approx(fp8.mfu * H100_BF16 / H100_FP8, rel=1e-4)


def test_economics_uses_the_same_mfu(runs):
    """economics.implied_mfu of the model's own rate is the model's MFU, at either precision."""
    m, c = ab.get_model("llama-3.1-70b"), ab.get_chip("h100")
    for p, e in runs.items():
        assert ec.implied_mfu(e.tokens_per_s_per_chip, m, c, 8192, precision=p) == pytest.approx(e.mfu, rel=1e-12)
        assert ec.training_tokens_per_s(m, c, e.mfu, 8192, precision=p) == \
            pytest.approx(e.tokens_per_s_per_chip, rel=1e-12)
        causal = e.mfu_as(attention="causal", peak="precision")
        assert ec.implied_mfu(e.tokens_per_s_per_chip, m, c, 8192, precision=p, attention="causal",
                              peak="precision") == pytest.approx(causal, rel=1e-12)


def test_validation_mfu_goes_through_the_one_function(runs):
    """The validation table's MFU rows are the estimate's MFU in the run's convention."""
    m, c = ab.get_model("llama-3.1-70b"), ab.get_chip("h100")
    for e in runs.values():
        assert training.predicted_metric(e, m, c, "mfu", "model_full") == pytest.approx(e.mfu, rel=1e-12)
        assert training.predicted_metric(e, m, c, "mfu", "model_causal") == \
            pytest.approx(e.mfu_as(attention="causal"), rel=1e-12)


# -- weak scaling ---------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def scaling_default():
    from accelbook.ui.dashboards import nb04_distributed_training as nb04
    spec = nb04.scaling_spec()
    return nb04.scaling_view(**spec.defaults())


def test_no_efficiency_above_one_without_its_reason(scaling_default):
    df = scaling_default.data
    assert df["efficiency"].notna().all() and len(df) > 0
    above = df[df["efficiency"] > 1.0 + 1e-12]
    assert "efficiency_note" in df
    assert (above["efficiency_note"].str.len() > 0).all()
    assert (df.loc[df["efficiency"] <= 1.0 + 1e-12, "efficiency_note"] == "").all()


def test_scaling_axis_starts_at_zero(scaling_default):
    """The efficiency axis is not zoomed onto a fraction of a per cent: it starts at 0."""
    spec = scaling_default.chart.to_dict()

    def y_scales(node):
        if isinstance(node, dict):
            enc = node.get("encoding", {})
            if enc.get("y", {}).get("field") == "efficiency":
                yield enc["y"].get("scale", {})
            for v in node.values():
                yield from y_scales(v)
        elif isinstance(node, list):
            for v in node:
                yield from y_scales(v)

    scales = list(y_scales(spec))
    assert scales
    for sc in scales:
        assert sc.get("zero", True) is not False
        assert sc.get("domainMin") == 0 or sc.get("domain", [None])[0] == 0
