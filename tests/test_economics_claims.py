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


def test_every_claim_gets_one_of_four_verdicts():
    vs = cl.verdicts()
    assert cl.VERDICTS == ("supported", "not supported", "cannot tell", "out of scope")
    assert len(vs) == len(cl.load_claims()) >= 25
    for v in vs:
        assert v.verdict in cl.VERDICTS
        assert v.reason and v.model_says
        assert all(isinstance(x, float) and math.isfinite(x) for x in v.numbers.values()), v.claim.id


def test_every_article_has_at_least_six_claims_and_evidence_resolves():
    from accelbook.specs.bibliography import ARTICLES
    from accelbook.specs.loader import load_sources

    counts = cl.tally()
    assert set(counts) == {a for a, _, _ in ARTICLES}
    assert all(sum(row.values()) >= 6 for row in counts.values()), counts
    sources = load_sources()
    for c in cl.load_claims():
        assert all(s in sources for s in c.evidence), c.id


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


# -- the ledger's generic checks, each with a hand-worked value and a param that flips its verdict ---------
from accelbook.economics import claim_checks as cc  # noqa: E402
from accelbook.economics import claim_scenarios as cs  # noqa: E402

MIGRATION = dict(usd_per_m_tokens_old=2.0, usd_per_m_tokens_new=1.2, volume_m_tokens_per_month=16384,
                 growth_per_month=0.05, engineer_months=12, churn_per_month=0.05, horizon_months=36)


def test_system_totals_is_a_consistency_check_when_the_sources_coincide():
    # 256 x 500 MB = 128 GB; 256 x 150 TB/s = 38.4 PB/s, 4 % under 40: both within 5 %
    claimed = {"sram_bytes": 128e9, "sram_bw": 40e15}
    _, verdict, reason, nums = cc.system_totals("groq-lp30", 256, claimed, rack="groq-lpx")
    assert nums["total_sram_bytes"] == pytest.approx(256 * 500e6)
    assert nums["total_sram_bw"] == pytest.approx(256 * 150e12)
    assert verdict == "cannot tell" and "consistency" in reason.lower()
    # without the rack entry the per-chip figures (secondary reports) count as independent
    assert cc.system_totals("groq-lp30", 256, claimed)[1] == "supported"
    # a total the chips do not reach: 256 x 500 MB is 36 % short of 200 GB
    assert cc.system_totals("groq-lp30", 256, {"sram_bytes": 200e9}, rack="groq-lpx")[1] == "not supported"


def test_system_totals_tpu8t_superpod():
    # 9,600 x 216 GiB = 2.2265e15 bytes; the claimed "2 PB" read as binary (2 PiB = 2.2518e15) is 1.1 % over it,
    # read as decimal 10.2 % under, so the binary reading is kept; 9,600 x 12.6 PF = 120.96 EF
    says, verdict, _, nums = cc.system_totals("tpu-8t", 9600, {"hbm_bytes": 2e15, "peak_fp4": 121e18},
                                              rel_tol=0.1, check_n=True)
    assert verdict == "supported" and "read as binary" in says
    assert nums["total_hbm_bytes"] == pytest.approx(9600 * 216 * 2**30) and nums["total_peak_fp4"] == pytest.approx(1.2096e20)
    assert nums["claimed_hbm_bytes"] == pytest.approx(2 * 2**50)
    assert cc.system_totals("tpu-8t", 9600, {"hbm_bytes": 2e15}, rel_tol=0.005)[1] == "not supported"
    # a total far from both readings stays a miss
    assert cc.system_totals("tpu-8t", 9600, {"hbm_bytes": 3e15}, rel_tol=0.1)[1] == "not supported"
    assert cc.system_totals("tpu-8t", 9000, {"hbm_bytes": 1.944e15}, check_n=True)[1] == "not supported"


def test_ratio_within():
    a, b = {"chip": "h100", "quantity": "peak_bf16"}, {"chip": "tpu-v5p", "quantity": "peak_bf16"}
    says, verdict, _, nums = cc.ratio_within(a, b, 1.0, 1.3)
    assert nums["ratio"] == pytest.approx(989.4 / 459) and verdict == "not supported"   # 2.156
    assert cc.ratio_within(a, b, 1.0, 3.0)[1] == "supported"
    # 72 x 288 GiB / 128 GB = 72 x 309.2e9 / 128e9 = 173.9 (Rubin's HBM is binary; the LPX rack's SRAM is as printed)
    rack = cc.ratio_within({"chip": "rubin", "quantity": "hbm_bytes", "n": 72},
                           {"chip": "groq-lpx", "quantity": "sram_bytes"}, 10.0)
    assert rack[3]["ratio"] == pytest.approx(72 * 288 * 2**30 / 128e9) and rack[1] == "supported"
    # TPU 8i over 8t, HBM bandwidth per FP4 FLOP: (8601 / 10.1) / (6528 / 12.6) = 851.6 / 518.1 = 1.644
    per = cc.ratio_within({"chip": "tpu-8i", "quantity": "hbm_bw", "per": "peak_fp4"},
                          {"chip": "tpu-8t", "quantity": "hbm_bw", "per": "peak_fp4"}, 1.0)
    assert per[3]["ratio"] == pytest.approx((8601 / 10.1) / (6528 / 12.6)) and per[1] == "supported"
    # a derived figure (LP30's FP8 = 315 PF / 256) lands in range but cannot support: 1.23 / 1.9789 = 0.62
    derived = cc.ratio_within({"chip": "groq-lp30", "quantity": "peak_fp8"}, {"chip": "h100", "quantity": "peak_fp8"}, 0.5)
    assert derived[3]["ratio"] == pytest.approx(1.23 / 1.9789) and derived[1] == "cannot tell"
    with pytest.raises(ValueError, match="quantity"):
        cc.quantity("h100", "vibes")


def test_torus_diameter_by_hand():
    # 1,024 chips: 8x8x16 gives 4 + 4 + 8 = 16 (4x16x16 gives 2 + 8 + 8 = 18); 512: 8x8x8 gives 12
    says, verdict, _, nums = cc.torus_diameter(1024, 16)
    assert verdict == "supported" and nums["diameter"] == 16 and "8x8x16" in says
    assert cc.torus_diameter(512, 16)[1] == "not supported" and cc.torus_diameter(512, 12)[3]["diameter"] == 12


def test_reconstructed_diameter_never_supports():
    _, verdict, reason, nums = cc.reconstructed_diameter(7)
    assert verdict == "cannot tell" and nums["chips"] == 36 * 8 * 4 and "plausible" in reason
    _, verdict, reason, _ = cc.reconstructed_diameter(int(nums["diameter"]) - 1)
    assert verdict == "cannot tell" and "more than" in reason


def test_weak_scaling_threshold():
    _, verdict, _, nums = cc.weak_scaling([4, 8, 16], min_pace=0.9)
    assert verdict == "supported" and 0.9 <= nums["pace_big"] <= 1.0 and nums["pace_small"] < 0.5
    assert cc.weak_scaling([4, 8, 16], min_pace=nums["pace_big"] + 0.01)[1] == "not supported"


def test_chips_to_hold_by_hand():
    # CS-3, 44 GB: 8.03e9 x 2 B = 16.1 GB -> 1 wafer; 70.55e9 x 2 = 141 GB -> ceil(3.21) = 4; 405.9e9 x 2 -> ceil(18.45) = 19
    _, verdict, _, nums = cc.chips_to_hold("cerebras-cs3", ["llama-3.1-8b", "llama-3.1-70b", "llama-3.1-405b"],
                                           "bf16", 1, True)
    assert (nums["chips_llama-3.1-8b"], nums["chips_llama-3.1-70b"], nums["chips_llama-3.1-405b"]) == (1, 4, 19)
    assert verdict == "not supported"
    assert cc.chips_to_hold("cerebras-cs3", ["llama-3.1-8b"], "bf16", 1, True)[1] == "supported"
    # LP30, 500 MB: 70.55e9 / 5e8 -> 142 chips, fits a 256-chip rack; Kimi K2 1.026e12 / 5e8 -> 2,053, does not
    lpx = cc.chips_to_hold("groq-lp30", ["llama-3.1-70b", "kimi-k2"], "fp8", 256, False)
    assert lpx[3]["chips_llama-3.1-70b"] == 142 and lpx[3]["chips_kimi-k2"] == 2053 and lpx[1] == "supported"
    assert cc.chips_to_hold("groq-lp30", ["llama-3.1-70b"], "fp8", 256, False)[1] == "not supported"


def test_lpu_waiting_share():
    from accelbook import inference as inf

    b = inf.estimate("llama-2-70b", "groq-lpu-v1", 320, 1, 1024, 256, "fp8", tp=4, pp=80).breakdown
    share = b["decode_comm_s"] / (b["decode_memory_s"] + b["decode_compute_s"] + b["decode_comm_s"])
    _, verdict, _, nums = cc.lpu_waiting("llama-2-70b", "groq-lpu-v1", 320, 4, 80, "fp8")
    assert nums["comm_share"] == pytest.approx(share) and share > 0.5 and verdict == "not supported"
    assert cc.lpu_waiting("llama-2-70b", "groq-lpu-v1", 320, 4, 80, "fp8", max_comm_share=0.99)[1] == "supported"


def test_sram_chip_speed_and_frontier_sides():
    # 16-bit peaks: LPU v1 188 TFLOP/s fp16 against H200 989.4 bf16 = 0.190
    _, verdict, _, nums = cc.sram_chip_speed("llama-2-70b", "h200", 8, "groq-lpu-v1", 640)
    assert nums["peak_ratio"] == pytest.approx(188 / 989.4) and verdict == "supported"
    assert cc.sram_chip_speed("llama-2-70b", "h200", 8, "groq-lpu-v1", 640, clearly=nums["per_user_ratio"] + 0.1)[1] \
        == "not supported"
    assert cc.frontier_sides("llama-2-70b", "h200", 8, "groq-lpu-v1", 640)[1] == "supported"
    assert cc.frontier_sides("llama-2-70b", "groq-lpu-v1", 640, "h200", 8)[1] == "not supported"


def test_decode_vs_batch_and_same_peak():
    _, verdict, _, nums = cc.decode_vs_batch("llama-3.1-70b", "h100", 8, [1, 256])
    assert verdict == "supported" and nums["small_memory_bound"] == 1.0 and nums["gain"] >= 10
    assert cc.decode_vs_batch("llama-3.1-70b", "h100", 8, [1, 2])[1] == "not supported"
    # H100 and H200: 989.4 TFLOP/s bf16 each (ratio 1); B200 2,250 against H100's 989.4 = 2.27
    _, verdict, _, nums = cc.same_peak_other_tokens("llama-3.1-70b", "h100", "h200", 8, 0.02)
    assert nums["peak_ratio"] == pytest.approx(1.0) and nums["tokens_ratio"] > 1.1 and verdict == "supported"
    other = cc.same_peak_other_tokens("llama-3.1-70b", "h100", "b200", 8, 0.02)
    assert other[3]["peak_ratio"] == pytest.approx(2250 / 989.4) and other[1] == "not supported"


def test_out_of_scope_and_vendor_factor():
    assert cs.out_of_scope("history")[1] == "out of scope"
    with pytest.raises(ValueError, match="kind"):
        cs.out_of_scope("vibes")
    # AWS: up to 50 % better performance per watt = 1.5x, not 4x
    v = cs.vendor_factor("inferentia2", 4.0, 1.5, "performance per watt")
    assert v[1] == "not supported" and "no TDP" in v[0]
    assert cs.vendor_factor("inferentia2", 4.0, 4.0, "performance per watt")[1] == "supported"


def test_published_stacks_and_split_chips():
    # 216 GiB / 36 GiB = 6 stacks (8t), 288 / 36 = 8 (8i)
    _, verdict, _, nums = cs.published_stacks(6, 8)
    assert verdict == "supported" and (nums["stacks_8t"], nums["stacks_8i"]) == (6, 8)
    assert cs.published_stacks(4, 8)[1] == "not supported"
    _, verdict, _, nums = cs.split_chips(0.05)
    assert verdict == "supported" and max(nums.values()) >= 0.05
    assert cs.split_chips(max(nums.values()) + 0.01)[1] == "not supported"


def test_moe_spread_by_hand():
    # 8 chips of 32 experts, top-8 of 256: a chip is missed with C(224,8)/C(256,8) = 0.338, so a token reaches
    # 8 x 0.662 = 5.29 chips, 7/8 of them remote: 4.63 copies; 256 chips of one expert: 8 x 255/256 = 7.97
    _, verdict, _, nums = cs.moe_spread([8, 64, 256], 256, 8)
    assert nums["copies_8"] == pytest.approx(8 * (1 - math.comb(224, 8) / math.comb(256, 8)) * 7 / 8)
    assert nums["copies_256"] == pytest.approx(8 * 255 / 256) and verdict == "supported"
    assert cs.moe_spread([256, 64, 8], 256, 8)[1] == "not supported"


def test_low_diameter_decode_and_cae():
    _, verdict, _, nums = cs.low_diameter_decode(1, 512)
    assert verdict == "supported" and nums["gain_small"] > 1 > nums["gain_large"]
    assert cs.low_diameter_decode(512, 1)[1] == "not supported"
    _, verdict, _, nums = cs.cae_gain(1)
    assert verdict == "cannot tell" and nums["gain"] > 1


def test_fleet_and_migration_checks():
    assert cs.fleet_placement({"pre-training": "TPU", "batch inference": "GPU"})[1] == "supported"
    assert cs.fleet_placement({"pre-training": "GPU"})[1] == "not supported"
    assert cs.fleet_placement({"pre-training": "TPU"}, min_saving=0.99)[1] == "not supported"
    # port = 12 x 25,000 + 100,000 + 50,000 = USD 450,000
    says, verdict, _, nums = cs.migration_sensitivity(MIGRATION, "volume_m_tokens_per_month", 16384, 2000)
    assert "450,000" in says and verdict == "supported" and nums["payback_bad"] == -1.0
    assert cs.migration_sensitivity(MIGRATION, "volume_m_tokens_per_month", 2000, 16384)[1] == "not supported"


def test_cost_reduction_by_hand():
    # FLOP per USD: H100 989.4/10.8 = 91.61, v5p 459/4.20 = 109.29 -> 16.2 % lower at equal MFU,
    # 1 - 91.61 x 0.52 / (109.29 x 0.58) = 24.8 % lower at the article's MFUs; never "supported" on list prices
    _, verdict, reason, nums = cs.cost_reduction("tpu-v5p", "h100", 0.5, 0.58, 0.52)
    assert nums["reduction_equal_mfu"] == pytest.approx(1 - (989.4 / 10.8) / (459 / 4.20))
    assert nums["reduction_at_mfu"] == pytest.approx(1 - (989.4 / 10.8 * 0.52) / (459 / 4.20 * 0.58))
    assert verdict == "cannot tell" and "short of" in reason
    assert "reach" in cs.cost_reduction("tpu-v5p", "h100", 0.2, 0.58, 0.52)[2]


def test_serving_cost_and_mfu_gap():
    _, verdict, _, nums = cs.serving_cost("llama-3.1-70b", "tpu-v6e", ["h100", "h200"])
    assert verdict == "supported" and nums["usd_tpu-v6e"] < nums["usd_h200"] < nums["usd_h100"]
    assert cs.serving_cost("llama-3.1-70b", "h100", ["tpu-v6e"])[1] == "not supported"
    assert cs.mfu_gap("tpu-v5p", "h100")[1] == "cannot tell"


def test_lpx_rack_claim_is_not_supported_on_its_own_figures():
    v = _verdicts()["a3-lpx-rack"]
    assert v.verdict == "cannot tell" and "same report" in v.reason


def test_claims_html_filters():
    first = ("h100-v5p-throughput", "h100-v5p-price", "v5p-price-performance", "v6e-4x-price-performance", "v5p-760gb")
    assert cl.claims_html(ids=first).count('class="accelbook-claim"') == 5
    n1 = sum(cl.tally()["article-1"].values())
    assert cl.claims_html(article="article-1").count('class="accelbook-claim"') == n1
    with pytest.raises(KeyError, match="nope"):
        cl.claims_html(ids=("nope",))


def test_claims_page_has_every_claim_anchor_and_section():
    page = cl.render_claims_page()
    for c in cl.load_claims():
        assert f'<a id="{c.id}"></a>' in page
    for a in ("article-1", "article-2", "article-3"):
        assert f'<a id="{a}-claims"></a>' in page and f"(bibliography.md#{a})" in page
