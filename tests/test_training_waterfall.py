"""The waterfall of a published run: its step time from the ideal, term by term, and the error after each."""

from __future__ import annotations

import pytest

import accelbook as ab
from accelbook import training
from accelbook.training import TIME_LABELS, published_runs, run_estimate, waterfall, waterfall_table
from accelbook.ui.charts import waterfall_chart

RUNS = ("llama31-405b-8k", "gpt3-175b-ptdp-384")


@pytest.fixture(scope="module")
def validation():
    return training.validation_table().set_index("id")


@pytest.mark.parametrize("rid", RUNS)
def test_ends_at_the_step_time_and_the_validation_error(rid, validation):
    df = waterfall(rid)
    _, _, est = run_estimate(published_runs()[rid])
    assert df["cumulative_s"].iloc[-1] == pytest.approx(est.step_time_s, rel=1e-12)
    assert df["cumulative_s"].to_numpy() == pytest.approx(df["seconds"].cumsum().to_numpy(), rel=1e-12)
    assert abs(df["error"].iloc[-1] - validation.loc[rid, "error"]) < 1e-9
    assert df["predicted"].iloc[-1] == pytest.approx(validation.loc[rid, "predicted"], rel=1e-12)


def test_every_target_run_ends_at_its_validation_error(validation):
    table = waterfall_table()
    last = table.groupby("id").tail(1).set_index("id")
    evaluated = validation[(validation["role"] == "target") & validation["error"].notna()]
    assert set(last.index) == set(evaluated.index)
    assert (last["error"] - evaluated["error"]).abs().max() < 1e-9


@pytest.mark.parametrize("rid", RUNS)
def test_every_time_term_appears_in_order(rid):
    df = waterfall(rid)
    terms = df[df["field"].isin(list(TIME_LABELS))]
    assert list(terms["field"]) == list(TIME_LABELS)
    assert list(terms["term"]) == list(TIME_LABELS.values())
    assert list(df["step"]) == list(range(len(df)))
    assert df["term"].iloc[0] == "ideal: model FLOPs at peak"
    # a term's bar is its time less what the ideal bar already holds; never negative
    assert (terms["seconds"] >= 0).all() and (terms["seconds"] <= terms["term_s"]).all()
    assert terms["term_s"].sum() - terms["seconds"].sum() == pytest.approx(df["seconds"].iloc[0], rel=1e-12)
    # a rest bar only where the terms do not add up to the step
    _, _, est = run_estimate(published_runs()[rid])
    rest = est.step_time_s - sum(est.time.values())
    assert ("rest" in set(df["field"])) == (abs(rest) > 1e-12 * est.step_time_s)


def test_ideal_by_hand():
    # Llama 3.1 405B at 8K on 8,192 H100s: 2,048 sequences of 8,192 tokens = 2,048 tokens per chip and step;
    # C_causal = 6·N + 6·L·s·d (the causal half of 12·L·s·d) ≈ 6·4.05e11 + 6·126·8192·16384 = 2.53e12 FLOP/token;
    # the H100's dense bf16 peak is 989.4 TFLOP/s
    m = training.published_runs()["llama31-405b-8k"]
    assert (m["n_chips"], m["global_batch_sequences"], m["seq_len"]) == (8192, 2048, 8192)
    df = waterfall("llama31-405b-8k")
    c_causal = training.counted_flops_per_token(ab.get_model("llama-3.1-405b"), 8192, "causal")
    assert c_causal == pytest.approx(2.53e12, rel=0.01)
    assert df["seconds"].iloc[0] == pytest.approx(2048 * c_causal / 989.4e12, rel=1e-12)
    # at the ideal, MFU in the authors' convention (full attention, bf16 peak) is C_full / C_causal
    c_full = training.counted_flops_per_token(ab.get_model("llama-3.1-405b"), 8192)
    assert df["predicted"].iloc[0] == pytest.approx(c_full / c_causal, rel=1e-12)


@pytest.mark.parametrize("rid", RUNS)
def test_ideal_is_the_kernels_causal_mfu(rid):
    # the kernel counts MFU with causal attention over the precision's peak: MFU · t_step is the ideal step
    _, _, est = run_estimate(published_runs()[rid])
    assert waterfall(rid)["seconds"].iloc[0] == pytest.approx(est.mfu_as("causal", "precision") * est.step_time_s,
                                                              rel=1e-9)


def test_throughput_error_falls_as_time_is_added():
    df = waterfall("gpt3-175b-ptdp-384")   # TFLOP/s: every added second lowers the prediction
    terms = df[df["seconds"] >= 0]
    assert (terms["error"].diff().dropna() <= 1e-15).all()


def test_unknown_run_names_the_runs():
    with pytest.raises(ValueError, match="llama31-405b-8k"):
        waterfall("no-such-run")


def test_returns_a_copy():
    a = waterfall(RUNS[0])
    a["error"] = 0.0
    assert (waterfall(RUNS[0])["error"] != 0.0).any()


def test_chart_builds_with_the_reported_rule_and_band():
    df = waterfall(RUNS[0])
    spec = waterfall_chart(df).to_dict()
    marks = [layer["mark"]["type"] if isinstance(layer["mark"], dict) else layer["mark"] for layer in spec["layer"]]
    assert "rule" in marks and "bar" in marks and "rect" in marks
    ref = spec["datasets"]["reference"]
    assert ref == [{"reported_error": 0.0, "lo": -0.15, "hi": 0.15, "label": ref[0]["label"]}]
    bars = spec["datasets"]["bars"]
    # the first bar starts at 0; each later bar starts where the previous one ended; zero-time terms are left out
    assert bars[0]["start"] == 0.0
    assert all(b["start"] == pytest.approx(a["error"]) for a, b in zip(bars, bars[1:]))
    assert len(bars) == 1 + int((df["seconds"].iloc[1:] != 0).sum())
    with pytest.raises(ValueError, match="one run"):
        waterfall_chart(waterfall_table())


def test_dashboard_view_says_the_final_error():
    from accelbook.ui.dashboards.nb04_distributed_training import waterfall_spec

    spec = waterfall_spec()
    assert spec.controls["run"].value == "llama31-405b-8k"
    assert set(spec.controls["run"].values) == set(published_runs())
    view = spec.render(run="gpt3-175b-ptdp-384")
    last = waterfall("gpt3-175b-ptdp-384").iloc[-1]
    assert f"{last['error']:+.1%}".replace("-", "\u2212") in view.summary or f"{last['error']:+.1%}" in view.summary
    assert training.error_band().words() in view.summary
