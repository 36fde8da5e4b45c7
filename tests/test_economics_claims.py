"""Economics (MFU -> tokens/s -> dollars) and the article claims, checked with hand numbers."""

from __future__ import annotations

import math

import pytest

import accelbook as ab
from accelbook import economics as ec
from accelbook import training
from accelbook.economics import claims as cl
from accelbook.specs.loader import CatalogueError

# Llama 3.1 70B training FLOPs per token at s = 4096, by hand (see test_models.test_llama31_70b_flops_by_hand):
# N_mm = 69,501,714,432; C_fwd = 2*N_mm + 4*80*4096*8192 = 149,740,847,104; C_train = 3*C_fwd = 449,222,541,312
C_TRAIN_70B = 3 * (2 * 69_501_714_432 + 4 * 80 * 4096 * 8192)


def test_worked_number_from_module_docstring():
    # 0.40 * 989.4e12 / 4.492e11 = 881.0 tokens/s; 10.8 USD/h = 3.0e-3 USD/s; 3.0e-3 / 881.0 * 1e6 = 3.405 USD / M tokens
    m, h100 = ab.get_model("llama-3.1-70b"), ab.get_chip("h100")
    assert C_TRAIN_70B == 449_222_541_312
    tps = ec.training_tokens_per_s(m, h100, 0.40, 4096)
    assert tps == pytest.approx(0.40 * 989.4e12 / C_TRAIN_70B, rel=1e-9)
    assert tps == pytest.approx(881, rel=0.01)
    usd_m = ec.usd_per_token(tps, h100) * 1e6
    assert usd_m == pytest.approx(3.41, rel=0.01)


def test_worked_number_roughly_from_published_param_count():
    # cruder: 6N with the published N = 70.6e9 plus the attention term 12*L*H*d_h*s = 12*80*8192*4096
    # = 4.236e11 + 3.221e10 = 4.558e11 FLOP/token -> 0.4*989.4e12/4.558e11 = 868 tokens/s (1.5% below 881)
    approx_c = 6 * 70.6e9 + 12 * 80 * 8192 * 4096
    tps = ec.training_tokens_per_s(ab.get_model("llama-3.1-70b"), ab.get_chip("h100"), 0.40, 4096)
    assert tps == pytest.approx(0.40 * 989.4e12 / approx_c, rel=0.02)


def test_price_override_and_scaling():
    h100 = ab.get_chip("h100")
    # 1,000 tokens/s at USD 3.6/h = 1e-3 USD/s -> 1e-6 USD per token
    assert ec.usd_per_token(1000, h100, price_usd_per_hour=3.6) == pytest.approx(1e-6)
    # peak FLOPs per dollar: 989.4e12 / (10.8 / 3600) = 3.298e17 FLOP/USD
    assert ec.peak_flop_per_usd(h100) == pytest.approx(989.4e12 * 3600 / 10.8)


@pytest.mark.parametrize("mfu", [0.05, 0.4, 0.52, 1.0])
def test_implied_mfu_inverts_tokens_per_s(mfu):
    m, c = ab.get_model("llama-3.1-70b"), ab.get_chip("tpu-v5p")
    tps = ec.training_tokens_per_s(m, c, mfu, 4096)
    assert ec.implied_mfu(tps, m, c, 4096) == pytest.approx(mfu, rel=1e-12)


def test_implied_mfu_by_hand():
    # 1,000 tokens/s * 4.492e11 FLOP/token / 989.4e12 FLOP/s = 0.4540
    m, h100 = ab.get_model("llama-3.1-70b"), ab.get_chip("h100")
    assert ec.implied_mfu(1000, m, h100, 4096) == pytest.approx(1000 * C_TRAIN_70B / 989.4e12, rel=1e-9)
    assert ec.implied_mfu(1000, m, h100, 4096) == pytest.approx(0.4540, abs=1e-4)


def test_implied_params_by_hand():
    # the claims' arithmetic: 0.52 * 989.4e12 / (6 * 3800) = 22.56e9 parameters
    assert ec.implied_params(3800, 0.52, ab.get_chip("h100")) == pytest.approx(22.56e9, rel=1e-3)


@pytest.mark.parametrize("mfu", [0, 1.5, float("nan"), -0.1, float("inf"), "0.4", None])
def test_bad_mfu(mfu):
    with pytest.raises(ValueError, match="mfu"):
        ec.training_tokens_per_s(ab.get_model("llama-3.1-70b"), ab.get_chip("h100"), mfu)


@pytest.mark.parametrize("tps", [0, -5, float("nan")])
def test_bad_token_rate(tps):
    with pytest.raises(ValueError, match="tokens_per_s"):
        ec.usd_per_token(tps, ab.get_chip("h100"))
    with pytest.raises(ValueError, match="tokens_per_s"):
        ec.implied_mfu(tps, ab.get_model("llama-3.1-70b"), ab.get_chip("h100"))


def test_bad_price_and_missing_price():
    with pytest.raises(ValueError, match="price"):
        ec.usd_per_token(1000, ab.get_chip("h100"), price_usd_per_hour=-1)
    with pytest.raises(ValueError, match="no published price"):
        ec.usd_per_token(1000, ab.get_chip("a100"))  # the catalogue lists no A100 price


def test_training_cost_table():
    m = ab.get_model("llama-3.1-70b")
    chips = [ab.get_chip(c) for c in ("h100", "tpu-v5p", "a100", "groq-lpu-v1")]
    df, skipped = ec.training_cost_table(m, chips, 0.5, 4096, price_scale=0.5, train_tokens=1e12, goodput=1.0)
    assert list(df["chip"]) == [chips[0].name, chips[1].name]
    assert any("A100" in s and "price" in s for s in skipped)
    assert any("Groq" in s and "bf16" in s for s in skipped)
    v5p = df.set_index("chip").loc[chips[1].name]
    # v5p at 50% MFU: 0.5 * 459e12 / 4.492e11 = 510.9 tok/s; half of the 4.20 USD/h list price = 2.10 USD/h
    # -> (2.10/3600) / 510.9 * 1e6 = 1.142 USD per million tokens; 1e12 tokens / 510.9 / 3600 = 543,700 chip-hours
    assert v5p["tokens_per_s_per_chip"] == pytest.approx(0.5 * 459e12 / C_TRAIN_70B)
    assert v5p["price_usd_per_hour"] == pytest.approx(2.10)
    assert v5p["usd_per_million_tokens"] == pytest.approx(2.10 / 3600 / (0.5 * 459e12 / C_TRAIN_70B) * 1e6)
    assert v5p["chip_hours"] == pytest.approx(1e12 / (0.5 * 459e12 / C_TRAIN_70B) / 3600)
    assert v5p["train_cost_usd"] == pytest.approx(v5p["usd_per_million_tokens"] * 1e6)
    for bad in (dict(price_scale=0), dict(train_tokens=-1), dict(price_scale=float("nan"))):
        with pytest.raises(ValueError):
            ec.training_cost_table(m, chips, 0.5, **bad)


def test_training_cost_table_divides_time_and_cost_by_goodput():
    m = ab.get_model("llama-3.1-70b")
    chips = [ab.get_chip(c) for c in ("h100", "tpu-v5p")]
    ideal, _ = ec.training_cost_table(m, chips, 0.4, goodput=1.0)
    half, _ = ec.training_cost_table(m, chips, 0.4, goodput=0.5)
    default, _ = ec.training_cost_table(m, chips, 0.4)
    assert half["chip_hours"].to_numpy() == pytest.approx(2 * ideal["chip_hours"].to_numpy(), rel=1e-12)
    assert half["train_cost_usd"].to_numpy() == pytest.approx(2 * ideal["train_cost_usd"].to_numpy(), rel=1e-12)
    # the rate while training and its price per token do not depend on the goodput
    assert half["tokens_per_s_per_chip"].equals(ideal["tokens_per_s_per_chip"])
    assert half["usd_per_million_tokens"].equals(ideal["usd_per_million_tokens"])
    # None is the published goodput: Llama 3's 90 % effective training time
    assert (default["goodput"] == 0.90).all()
    assert default["chip_hours"].to_numpy() == pytest.approx(ideal["chip_hours"].to_numpy() / 0.90, rel=1e-12)
    # the same time as TrainingEstimate.time_to_train at that goodput
    e = training.estimate("llama-3.1-70b", "h100", 64, 2**21, 4096, tp=8)
    row, _ = ec.training_cost_table(m, chips[:1], e.mfu, 4096, goodput=0.8)
    assert row["chip_hours"].iloc[0] == pytest.approx(e.chip_hours(1e12, goodput=0.8), rel=1e-9)
    for bad in (0, 1.5, -0.1, float("nan")):
        with pytest.raises(ValueError, match="goodput"):
            ec.training_cost_table(m, chips, 0.4, goodput=bad)


# -- claims ------------------------------------------------------------------------------------
def _verdicts():
    return {v.claim.id: v for v in cl.verdicts()}


def test_every_claim_gets_one_of_three_verdicts():
    vs = cl.verdicts()
    assert len(vs) == len(cl.load_claims()) >= 5
    for v in vs:
        assert v.verdict in {"supported", "not supported", "cannot tell"}
        assert v.reason and v.model_says
        assert all(math.isfinite(x) for x in v.numbers.values())


def test_h100_v5p_throughput_not_supported():
    # N = MFU*P / (6*tokens/s): H100 0.52*989.4e12/(6*3800) = 22.6e9; v5p 0.58*459e12/(6*3450) = 12.9e9;
    # ratio 1.75 > 1.25: the two halves describe models of different sizes
    v = _verdicts()["h100-v5p-throughput"]
    assert v.verdict == "not supported"
    assert v.numbers["implied_params_a"] == pytest.approx(22.6e9, rel=0.005)
    assert v.numbers["implied_params_b"] == pytest.approx(12.9e9, rel=0.005)
    assert v.numbers["ratio"] == pytest.approx((0.52 * 989.4 / (6 * 3800)) / (0.58 * 459 / (6 * 3450)))


def test_v5p_760gb_supported():
    # 8 x 95 GiB = 760 GiB (= 816.0 GB); H100 "80 GB" = 81,559 MiB in nvidia-smi = 79.6 GiB (85.5 GB): both binary
    v = _verdicts()["v5p-760gb"]
    assert v.verdict == "supported"
    assert v.numbers["b_gib"] == pytest.approx(760)
    assert v.numbers["b_gb"] == pytest.approx(8 * 95 * 2**30 / 1e9)  # 816.04
    assert v.numbers["a_gib"] == pytest.approx(81559 / 1024)        # 79.65
    assert v.numbers["a_gb"] == pytest.approx(81559 * 2**20 / 1e9)  # 85.52
    assert "80 GiB" in v.reason and "760 GiB" in v.reason


def test_v6e_4x_price_performance_not_supported():
    # (918 TFLOP/s / 2.70 USD/h) / (197 / 1.20) = 340.0 / 164.2 = 2.07x, not 4x
    v = _verdicts()["v6e-4x-price-performance"]
    assert v.verdict == "not supported"
    assert v.numbers["vs_tpu-v5e"] == pytest.approx((918 / 2.70) / (197 / 1.20), rel=1e-9)
    assert v.numbers["vs_tpu-v5e"] == pytest.approx(2.07, abs=0.005)


def test_h100_v5p_price_not_supported():
    # list prices 10.8 (H100) and 4.20 (v5p) USD/h fall outside the claimed 12-15 and 8-11
    v = _verdicts()["h100-v5p-price"]
    assert v.verdict == "not supported"
    assert v.numbers["price_h100"] == pytest.approx(10.8) and v.numbers["price_tpu-v5p"] == pytest.approx(4.20)


def test_v5p_price_performance_cannot_tell():
    # equal MFU: (459/4.20)/(989.4/10.8) = 109.3/91.61 = 1.193, inside 1.15-1.25;
    # with 58% vs 52% MFU: 1.193*0.58/0.52 = 1.331, outside -> it depends on MFU: "cannot tell"
    v = _verdicts()["v5p-price-performance"]
    assert v.numbers["ratio_equal_mfu"] == pytest.approx((459 / 4.20) / (989.4 / 10.8), rel=1e-9)
    assert v.numbers["ratio_claimed_mfu"] == pytest.approx(1.331, abs=0.001)
    assert v.verdict == "cannot tell"


def test_claims_table_one_row_per_claim():
    t = cl.claims_table()
    assert list(t["id"]) == [c.id for c in cl.load_claims()]
    assert set(t["verdict"]) <= set(cl.VERDICTS)


def test_claims_file_errors_name_file_and_key(tmp_path):
    p = tmp_path / "my_claims.toml"
    p.write_text('[x]\nclaim = "c"\norigin = "o"\npublished = "p"\nevidence = []\ncheck = "vibes"\nparams = {}\n')
    with pytest.raises(CatalogueError, match=r"my_claims\.toml.*\[x\].*check"):
        cl.load_claims(p)
    p.write_text('[x]\nclaim = "c"\norigin = "o"\npublished = "p"\nevidence = ["nope"]\n'
                 'check = "price_range"\nparams = {}\n')
    with pytest.raises(CatalogueError, match=r"my_claims\.toml.*\[x\].*evidence"):
        cl.load_claims(p)


def test_flop_accounting_megatron_bridge_counts_causal_attention():
    # Megatron-Bridge perf summary, Llama 3 70B on H100 at s = 8192: 719 TFLOP/s / 1602 tokens/s = 4.488e11 FLOP/token.
    # Causal count by hand: 3 * (2*N_mm + 2*80*8192*8192) = 3 * (139,003,428,864 + 10,737,418,240) = 4.492e11 (+0.09%);
    # full attention: 3 * (2*N_mm + 4*80*8192*8192) = 4.814e11 (+7.3%)  -> the report counts causal attention.
    t = ec.flop_accounting_table().set_index("run")
    assert set(t["convention"]) <= {"causal", "full attention"}
    row = t.loc["megatron-bridge-llama3-70b-h100"]
    assert row["reported_flop_per_token"] == pytest.approx(719e12 / 1602)
    assert row["causal_flop_per_token"] == pytest.approx(3 * (2 * 69_501_714_432 + 2 * 80 * 8192 * 8192))
    assert row["error_full"] == pytest.approx(3 * (2 * 69_501_714_432 + 4 * 80 * 8192 * 8192) / (719e12 / 1602) - 1)
    assert row["convention"] == "causal"


def test_summary_table_in_reader_units():
    from accelbook.specs.chips import summary_table

    row = summary_table().set_index("chip").loc[ab.get_chip("h100").name]
    # NVIDIA H100 SXM5 datasheet: 989.4 TFLOP/s dense bf16, 3.35 TB/s, NVLink 900 GB/s (both ways), 700 W; its
    # "80GB" is 81,559 MiB in nvidia-smi (NVIDIA/nccl#1264), which the table shows in SI GB: 85.5
    assert row["bf16 TFLOP/s"] == pytest.approx(989.4)
    assert row["memory TB/s"] == pytest.approx(3.35) and row["memory GB"] == pytest.approx(81559 * 2**20 / 1e9)
    assert row["link GB/s"] == pytest.approx(900) and row["link dir."] == "bidirectional"
    assert row["TDP W"] == pytest.approx(700) and row["ridge FLOP/B"] == pytest.approx(295.3, abs=0.05)


def test_claims_html_escapes_dollars_and_markup():
    from accelbook.economics.claims import claims_html

    out = claims_html()
    # one card per claim, each with its verdict; "$12-15" stays text (no LaTeX, no raw markup)
    assert out.count('class="accelbook-claim"') == len(cl.verdicts())
    assert "$12-15" in out and "<script" not in out
    assert "Verdict: not supported." in out and "Verdict: supported." in out
