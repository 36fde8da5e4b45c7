"""Attention efficiency by sequence length (data/attention_efficiency.toml), checked by hand."""

import math

import pytest

from accelbook.specs.chips import get_chip
from accelbook.specs.clusters import cluster_for
from accelbook.specs.efficiency import attention_efficiency, measured_efficiency
from accelbook.specs.models import get_model
from accelbook.training.compute import attention_time
from accelbook.training.records import chip_record, model_record


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
        cv, notes = chip_record(c, cluster_for(c), "bf16", s)
        mv = model_record(m, s)
        T, tp = 4 * s, 8
        t_a, _ = attention_time(mv, cv, T, s, tp, 1, 4, True)
        per_flop[s] = t_a / (2.0 * T * s * (mv.d_qk + mv.d_v) / tp * 0.5)
        assert any(f"{s:,} tokens" in n for n in notes)
    assert per_flop[131072] / per_flop[2048] == pytest.approx(397.5 / 492)


# ---- head dimension, masks and the measured FlashAttention-3 / -4 tables ----

from accelbook.specs.efficiency import load_attention_curves  # noqa: E402
from accelbook.specs.loader import DATA_DIR, CatalogueError  # noqa: E402


def fwd_bwd(fwd, bwd):
    """Forward and backward TFLOP/s combined with the papers' FLOP count (backward = 2.5 x forward)."""
    return 3.5 / (1 / fwd + 2.5 / bwd)


def test_every_table_loads():
    tables = load_attention_curves(DATA_DIR / "attention_efficiency.toml")
    got = {(cv.label, cv.chip_id, cv.head_dim, cv.head_dim_v, cv.causal) for cvs in tables.values() for cv in cvs}
    assert got == {("a100", "a100", 128, 128, True), ("h100", "h100", 128, 128, True),
                   ("h100-fa3-hd64-full", "h100", 64, 64, False), ("h100-fa3-hd128-full", "h100", 128, 128, False),
                   ("b200-fa4-hd128", "b200", 128, 128, True), ("b200-fa4-hd128-full", "b200", 128, 128, False),
                   ("b200-fa4-hd192", "b200", 192, 128, True), ("b200-fa4-hd192-full", "b200", 192, 128, False)}


def test_fa3_h100_full_mask_points_typed_from_the_figures():
    peak = get_chip("h100").peak_flop_s("bf16")
    # FA3 paper, H100: Fig. 5(c) forward 638 and Fig. 6(b) backward 542 TFLOP/s at 4k, head dim 128, no mask
    assert attention_efficiency("h100", 4096, 128, causal=False)[0] == pytest.approx(
        fwd_bwd(638, 542) * 1e12 / peak, rel=1e-3)
    # Fig. 5(a) 497 and Fig. 6(a) 474 at 16k, head dim 64; clamped beyond
    assert attention_efficiency("h100", 65536, 64, causal=False)[0] == pytest.approx(
        fwd_bwd(497, 474) * 1e12 / peak, rel=1e-3)


def test_fa4_b200_points_typed_from_the_pull_requests():
    peak = get_chip("b200").peak_flop_s("bf16")
    # PR #2280: causal, head dim 128, seqlen 8192: fwd 1418.1, bwd (2-CTA) 1208.6 TFLOP/s
    f, why = attention_efficiency("b200", 8192)
    assert f == pytest.approx(fwd_bwd(1418.1, 1208.6) * 1e12 / peak, rel=1e-3)
    assert "#2280" in why and "one point at 8192" in why
    # PR #2270: causal, DeepSeek MLA shape 192 (q,k) / 128 (v): fwd 1494.1, bwd 971.1; one point, so any length
    f, why = attention_efficiency("b200", 131072, head_dim=192)
    assert f == pytest.approx(fwd_bwd(1494.1, 971.1) * 1e12 / peak, rel=1e-3)
    assert "192/128" in why and "clamped" in why


def test_head_dim_selection_and_interpolation():
    peak = get_chip("h100").peak_flop_s("bf16")
    f64, _ = attention_efficiency("h100", 2048, 64, causal=False)
    f128, _ = attention_efficiency("h100", 2048, 128, causal=False)
    assert f64 == pytest.approx(fwd_bwd(460, 422) * 1e12 / peak, rel=1e-3)
    assert f128 == pytest.approx(fwd_bwd(625, 501) * 1e12 / peak, rel=1e-3)
    f96, why = attention_efficiency("h100", 2048, 96, causal=False)      # log2(96/64) = 0.585 of the way
    w = math.log(96 / 64) / math.log(2)
    assert f96 == pytest.approx((1 - w) * f64 + w * f128)
    assert "between the tables' 64 and 128" in why
    # outside the measured head dims: the nearest, said so
    f32, why = attention_efficiency("h100", 2048, 32, causal=False)
    assert f32 == f64 and "nearest, 64" in why
    f256, why = attention_efficiency("h100", 2048, 256)                  # causal H100: only head dim 128
    assert f256 == attention_efficiency("h100", 2048)[0] and "nearest, 128" in why
    # B200 between 128 and 192, both one-point tables (clamped to 8192)
    b = get_chip("b200").peak_flop_s("bf16")
    w = math.log(160 / 128) / math.log(192 / 128)
    assert attention_efficiency("b200", 2048, 160)[0] == pytest.approx(
        ((1 - w) * fwd_bwd(1418.1, 1208.6) + w * fwd_bwd(1494.1, 971.1)) * 1e12 / b, rel=1e-3)


def test_default_call_keeps_the_causal_head_dim_128_table():
    assert attention_efficiency("h100", 2048) == attention_efficiency("h100", 2048, 128, True)
    assert "DERIVED" in attention_efficiency("h100", 2048)[1]        # the FA2 x 1.5 table, labelled as such
    # a chip with only a causal table serves a full-mask request from it, and says so
    f, why = attention_efficiency("a100", 4096, causal=False)
    assert f == pytest.approx(182 / 312, rel=1e-3) and "no full-mask table" in why
    # sibling borrowing carries the head dim: GB200 uses B200's 192/128 table
    assert "borrowed from b200" in attention_efficiency("gb200", 8192, 192)[1]
    with pytest.raises(ValueError):
        attention_efficiency("h100", 2048, 0)


_GOOD = """
[h100-x]
chip = "h100"
head_dim = 64
causal = false
s512_tflop_s = { value = 300, src = "fa3-paper-figures", date = "2024-07", note = "n" }
"""


@pytest.mark.parametrize("text, key", [
    (_GOOD.replace("head_dim = 64\n", ""), "head_dim"),                       # missing head dim
    (_GOOD.replace("head_dim = 64", "head_dim = 6.4"), "head_dim"),           # not a whole number
    (_GOOD.replace("causal = false", "causal = 1"), "causal"),                # not a boolean
    (_GOOD.replace('chip = "h100"', 'chip = "no-such-chip"'), "chip"),        # unknown chip
    (_GOOD.replace('src = "fa3-paper-figures", ', ""), "src"),                # number without a source
    (_GOOD.replace("value = 300", "value = 5000"), "s512_tflop_s"),           # above the bf16 peak
    (_GOOD.replace("s512_tflop_s", "s512_tflops"), "s512_tflops"),            # unknown key
    (_GOOD + _GOOD.replace("[h100-x]", "[h100-y]"), "head_dim"),               # two tables for one head dim
])
def test_malformed_file_names_file_and_key(tmp_path, text, key):
    path = tmp_path / "attention_efficiency.toml"
    path.write_text(text)
    with pytest.raises(CatalogueError) as err:
        load_attention_curves(path)
    assert err.value.key == key and f"key '{key}'" in str(err.value)
    assert "attention_efficiency.toml" in str(err.value) and "h100-" in str(err.value)


def test_good_one_point_file_loads(tmp_path):
    path = tmp_path / "attention_efficiency.toml"
    path.write_text(_GOOD)
    (cv,) = load_attention_curves(path)["h100"]
    assert (cv.seq_lens, cv.flop_s, cv.head_dim, cv.causal) == ((512,), (300e12,), 64, False)
