"""Chip-design calculator: area, power and edge sums of a design by hand; the one calibration (an
H100-like split against the H100 datasheet); the roofline with power cap and voltage floor by
hand; capacity; the search (best designs, 8t/8i direction, compromise, monotonicity); errors."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from accelbook.chip import design as cd
from accelbook.specs.chips import get_chip
from accelbook.specs.loader import DATA_DIR, CatalogueError
from accelbook.specs.models import get_model

# data/chipdesign.toml, in the units the hand calculations below use
UNCORE_MM2, STATIC_W_MM2 = 120.0, 0.12
TFLOPS_MM2, W_PER_TFLOPS = 2.0, 0.5
SRAM_MB_MM2, SRAM_TBS_MM2, SRAM_PJ = 1.0, 0.1, 0.5
PHY_MM2, STACK_GB, STACK_TBS, HBM_PJ, HBM_EDGE = 15.0, 16.0, 0.67, 3.5, 11.0
IO_MM2_TBS, IO_PJ, IO_EDGE = 60.0, 5.0, 20.0
FLOOR = 0.5
KV_70B = 2 * 80 * 8 * 128 * 2          # Llama 3.1 70B KV bytes per token, bf16


def test_constants_used_below():
    p = cd.params()
    assert (p.area_mm2, p.power_w, p.uncore_mm2, p.static_w_per_mm2) == (814, 700, UNCORE_MM2, STATIC_W_MM2)
    assert p.flop_s_per_mm2 == pytest.approx(TFLOPS_MM2 * 1e12)
    assert p.j_per_flop == pytest.approx(W_PER_TFLOPS * 1e-12)
    assert (p.energy_clock_exponent, p.voltage_floor_clock) == (1.0, FLOOR)
    assert p.sram_bytes_per_mm2 == SRAM_MB_MM2 * 1e6 and p.sram_bytes_per_s_per_mm2 == SRAM_TBS_MM2 * 1e12
    assert p.sram_j_per_byte == pytest.approx(8 * SRAM_PJ * 1e-12)
    assert (p.hbm_phy_mm2, p.hbm_stack_bytes, p.hbm_shoreline_mm) == (PHY_MM2, STACK_GB * 1e9, HBM_EDGE)
    assert p.hbm_stack_bytes_per_s == pytest.approx(STACK_TBS * 1e12)
    assert p.hbm_j_per_byte == pytest.approx(8 * HBM_PJ * 1e-12)
    assert p.io_mm2_per_byte_s == pytest.approx(IO_MM2_TBS * 1e-12)
    assert p.io_j_per_byte == pytest.approx(8 * IO_PJ * 1e-12)
    m = get_model("llama-3.1-70b")
    assert m.kv_cache_bytes_per_token("bf16") == KV_70B


def test_every_constant_has_a_known_source_and_estimates_say_so():
    t = cd.provenance_table()
    assert len(t) == 24 + 8
    assert set(t["kind"]) <= {"estimate", "primary", "secondary"}
    assert (t.loc[t["source"] == "estimate-chip-design", "kind"] == "estimate").all()
    assert (t["note"].str.len() > 0).all()


# -- 1. a design's sums by hand --------------------------------------------------------------------
def test_area_power_and_edge_sums_by_hand():
    d = cd.design(matrix_mm2=100, sram_mm2=50, n_hbm_stacks=2, io_mm2=30)
    assert d.area_mm2 == pytest.approx(100 + 50 + 2 * PHY_MM2 + 30 + UNCORE_MM2)   # 330
    assert d.peak_flop_s == pytest.approx(200e12)
    assert d.sram_bytes == pytest.approx(50e6) and d.sram_bw_bytes_per_s == pytest.approx(5e12)
    assert d.hbm_bytes == pytest.approx(32e9) and d.hbm_bw_bytes_per_s == pytest.approx(1.34e12)
    assert d.io_bytes_per_s == pytest.approx(0.5e12)
    static = 0.12 * 330 + 0.5e12 * 40e-12                       # 39.6 + 20 W
    assert d.static_power_w == pytest.approx(static)
    full = static + 200e12 * 0.5e-12 + 1.34e12 * 28e-12 + 5e12 * 4e-12   # + 100 + 37.52 + 20 W
    assert d.full_power_w == pytest.approx(full) and d.full_power_w == pytest.approx(217.12)
    assert d.shoreline_mm == pytest.approx(2 * 11 + 0.5 * 20)
    assert d.perimeter_mm == pytest.approx(4 * math.sqrt(330))
    assert d.fits and d.why_not == ""


def test_a_design_over_the_area_budget_does_not_fit():
    d = cd.design(700, 100, 0, 0)                               # 920 mm² > 814
    assert not d.fits and "area 920 mm² > budget 814" in d.why_not
    assert cd.design(700, 100, 0, 0, area_mm2=920).fits
    assert not cd.design(700, 100, 0, 0, area_mm2=919).fits


def test_too_many_stacks_for_the_die_edge_do_not_fit():
    d = cd.design(10, 0, 8, 0)                                  # 250 mm²: edge 63 mm < 8 x 11 mm
    assert d.area_mm2 == pytest.approx(250)
    assert not d.fits and "die edge" in d.why_not and "area" not in d.why_not


# -- 2. the one calibration: an H100-like split reproduces the H100 datasheet within 20% --------------
def test_h100_like_split_reproduces_the_datasheet():
    d, h100 = cd.h100_like(), get_chip("h100")
    assert d.fits
    assert d.peak_flop_s == pytest.approx(h100.peak_flop_s("bf16"), rel=0.2)
    assert d.sram_bytes == pytest.approx(h100.sram_bytes, rel=0.2)
    assert d.hbm_bytes == pytest.approx(h100.hbm_bytes, rel=0.2)
    assert d.hbm_bw_bytes_per_s == pytest.approx(h100.hbm_bw_bytes_per_s, rel=0.2)
    assert d.io_bytes_per_s * 1e-12 == pytest.approx(h100.link_bw_bytes_per_s * 1e-12, rel=0.2)
    assert d.full_power_w == pytest.approx(h100.tdp_w, rel=0.2)
    assert d.area_mm2 == pytest.approx(814, rel=0.2)


# -- 3. the roofline, power cap and capacity by hand -------------------------------------------------
SMALL_DECODE = cd.DecodeWorkload(batch_size=8, context_len=4096, n_chips=8)


def _decode_resident(w: cd.DecodeWorkload):
    m = get_model(w.model)
    return (2 * m.params + w.batch_size * w.context_len * KV_70B) / w.n_chips


def test_decode_memory_bound_by_hand_and_doubling_stacks_doubles_it():
    R = _decode_resident(SMALL_DECODE)                           # ~19 GB: fits 2 stacks
    assert cd.need(SMALL_DECODE).resident_bytes == pytest.approx(R)
    two = cd.evaluate(cd.design(200, 0, 2, 0, power_w=5000), SMALL_DECODE)
    four = cd.evaluate(cd.design(200, 0, 4, 0, power_w=5000), SMALL_DECODE)
    assert two["limit"] == four["limit"] == "memory bandwidth"
    steps = 2 * STACK_TBS * 1e12 / R
    assert two["tokens_per_s_per_user"] == pytest.approx(steps)
    assert two["tokens_per_s_per_chip"] == pytest.approx(steps * 8 / 8)
    assert four["tokens_per_s_per_chip"] == pytest.approx(2 * two["tokens_per_s_per_chip"])


def test_power_drawn_when_memory_bound_uses_the_voltage_floor():
    d = cd.design(200, 0, 2, 0, power_w=5000)
    r, nd = cd.evaluate(d, SMALL_DECODE), cd.need(SMALL_DECODE)
    x = r["units_per_s"]
    assert r["clock"] == pytest.approx(x * nd.flops / 400e12) and r["clock"] < FLOOR
    hand = d.static_power_w + x * nd.stream_bytes * 28e-12 + 0.5e-12 * x * nd.flops * FLOOR
    assert r["power_w"] == pytest.approx(hand)


def test_compute_bound_training_ignores_extra_stacks():
    w = cd.TrainingWorkload()
    m = get_model(w.model)
    F = 3 * (2 * m.matmul_params_active + 2 * 80 * 8192 * (8192 + 8192) * 0.5)
    assert cd.need(w).flops == pytest.approx(F)
    four = cd.evaluate(cd.design(300, 0, 4, 0, power_w=5000), w)
    eight = cd.evaluate(cd.design(300, 0, 8, 0, power_w=5000), w)
    assert four["limit"] == eight["limit"] == "compute"
    assert four["tokens_per_s_per_chip"] == pytest.approx(600e12 / F)
    assert eight["tokens_per_s_per_chip"] == four["tokens_per_s_per_chip"]
    assert four["tokens_per_s_per_user"] is None


def test_training_capacity_by_hand_and_too_few_stacks():
    w = cd.TrainingWorkload()
    m = get_model(w.model)
    R = 16 * m.params / 32 + 2 * 8192 * 80 * 8192 + 34 * 8192 * 8192      # ~48.3 GB
    assert cd.need(w).resident_bytes == pytest.approx(R)
    three = cd.evaluate(cd.design(300, 0, 3, 0), w)              # 48 GB + 0 SRAM < R
    assert three["limit"] == "memory capacity" and three["tokens_per_s_per_chip"] == 0
    assert cd.evaluate(cd.design(300, 0, 4, 0), w)["limit"] != "memory capacity"


def test_power_cap_binds_when_p_shrinks_and_matches_the_quadratic():
    w = cd.TrainingWorkload()
    roomy = cd.evaluate(cd.design(500, 0, 4, 0, power_w=2000), w)
    d = cd.design(500, 0, 4, 0, power_w=400)
    capped = cd.evaluate(d, w)
    assert roomy["limit"] == "compute" and capped["limit"] == "power"
    assert capped["tokens_per_s_per_chip"] < roomy["tokens_per_s_per_chip"]
    assert capped["power_w"] == pytest.approx(400)
    # above the voltage floor, P = static + x·M·e_hbm + J·F²/C·x²: solve the quadratic
    nd = cd.need(w)
    a, b, c = 0.5e-12 * nd.flops ** 2 / 1000e12, nd.stream_bytes * 28e-12, d.static_power_w - 400
    x = (-b + math.sqrt(b * b - 4 * a * c)) / (2 * a)
    assert capped["tokens_per_s_per_chip"] == pytest.approx(x, rel=1e-6)   # SRAM share 0: no SRAM
    assert FLOOR < capped["clock"] < 1


def test_dark_silicon_more_matrix_area_helps_sublinearly_under_the_cap():
    w = cd.TrainingWorkload()
    small = cd.evaluate(cd.design(300, 0, 4, 0, power_w=350), w)
    big = cd.evaluate(cd.design(600, 0, 4, 0, power_w=350), w)
    assert small["limit"] == big["limit"] == "power"
    assert 1 < big["tokens_per_s_per_chip"] / small["tokens_per_s_per_chip"] < 2
    assert big["clock"] < small["clock"]


def test_power_below_static_gives_nothing():
    r = cd.evaluate(cd.design(300, 0, 4, 0, power_w=50), cd.TrainingWorkload())
    assert r["tokens_per_s_per_chip"] == 0 and r["limit"] == "power"


def test_sram_only_chip_serves_decode_from_sram():
    w = cd.DecodeWorkload(batch_size=1, context_len=1024, n_chips=1024)
    R = _decode_resident(w)                                     # ~138 MB
    d = cd.design(100, 200, 0, 0, power_w=5000)                 # 200 MB SRAM, no HBM
    r = cd.evaluate(d, w)
    assert r["sram_share"] == 1 and r["limit"] == "memory bandwidth"
    assert r["tokens_per_s_per_user"] == pytest.approx(200 * SRAM_TBS_MM2 * 1e12 / R)
    assert cd.evaluate(cd.design(100, 100, 0, 0), w)["limit"] == "memory capacity"


def test_sram_serves_its_share_of_the_stream_in_parallel_with_hbm():
    w = SMALL_DECODE
    R = _decode_resident(w)
    r = cd.evaluate(cd.design(200, 400, 2, 0, power_w=5000), w)
    f = 400e6 / R
    assert r["sram_share"] == pytest.approx(f)
    assert r["tokens_per_s_per_user"] == pytest.approx(2 * STACK_TBS * 1e12 / ((1 - f) * R))


# -- 4. search ------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def comparison():
    return cd.compare_8t_8i().set_index("design")


def test_training_optimum_has_more_matrix_area_and_fewer_stacks_than_decode_optimum(comparison):
    t, d = comparison.loc["training optimum (8t-like)"], comparison.loc["decode optimum (8i-like)"]
    assert t["matrix_mm2"] > d["matrix_mm2"]
    assert d["n_hbm_stacks"] >= t["n_hbm_stacks"] and d["n_hbm_stacks"] > t["n_hbm_stacks"]
    assert d["sram_mb"] > t["sram_mb"]
    # the same direction as Google's choice
    g8t, g8i = comparison.loc["TPU 8t (published)"], comparison.loc["TPU 8i (published)"]
    assert g8i["n_hbm_stacks"] > g8t["n_hbm_stacks"] and g8i["sram_mb"] > g8t["sram_mb"]


def test_each_specialist_loses_on_the_other_workload_and_the_compromise_loses_on_both(comparison):
    t, d, c = (comparison.loc[k] for k in ("training optimum (8t-like)", "decode optimum (8i-like)", "compromise"))
    assert t["training_vs_best"] == 1 and d["decode_vs_best"] == 1
    assert t["decode_vs_best"] < 1 and d["training_vs_best"] < 1
    assert c["training_vs_best"] < 1 and c["decode_vs_best"] < 1
    gm = lambda r: math.sqrt(r["training_vs_best"] * r["decode_vs_best"])   # noqa: E731
    assert gm(c) >= gm(t) and gm(c) >= gm(d)


@pytest.mark.parametrize("workload", [cd.TrainingWorkload(), cd.DecodeWorkload()], ids=["training", "decode"])
def test_best_design_is_the_best_fitting_row_and_evaluates_the_same(workload):
    best, table = cd.best_design(workload, grid_mm2=20)
    col = f"{workload.name}_tokens_per_s_per_chip"
    assert best.fits
    assert (table["area_mm2"] <= 814 + 1e-9).all()
    assert table[col].is_monotonic_decreasing
    r = cd.evaluate(best, workload)
    assert r["tokens_per_s_per_chip"] == pytest.approx(table[col].iloc[0], rel=1e-9)
    assert r["tokens_per_s_per_chip"] == pytest.approx(table[col].max(), rel=1e-9)
    # the scalar path agrees with the vectorised one on some other row too
    row = table.iloc[len(table) // 2]
    other = cd.design(row["matrix_mm2"], row["sram_mm2"], int(row["n_hbm_stacks"]), row["io_mm2"])
    assert cd.evaluate(other, workload)["tokens_per_s_per_chip"] == pytest.approx(row[col], rel=1e-9)


@pytest.mark.parametrize("workload", [cd.TrainingWorkload(), cd.DecodeWorkload()], ids=["training", "decode"])
def test_more_area_or_power_never_lowers_the_best(workload):
    col = f"{workload.name}_tokens_per_s_per_chip"
    by_area = [cd.best_design(workload, area_mm2=a, grid_mm2=20)[1][col].iloc[0] for a in (500, 650, 814)]
    by_power = [cd.best_design(workload, power_w=p, grid_mm2=20)[1][col].iloc[0] for p in (250, 400, 700, 1200)]
    for seq in (by_area, by_power):
        assert all(b >= a * (1 - 1e-12) for a, b in zip(seq, seq[1:]))
    assert by_area[-1] > by_area[0] and by_power[-1] > by_power[0]


def test_what_if_params_change_the_answer_and_say_so():
    p = cd.params(hbm_stack_bytes_per_s=2 * STACK_TBS * 1e12)
    assert p.provenance["hbm_stack_bytes_per_s"].kind == "what-if"
    base = cd.evaluate(cd.design(200, 0, 2, 0, power_w=5000), SMALL_DECODE)
    fast = cd.evaluate(cd.design(200, 0, 2, 0, params=p, power_w=5000), SMALL_DECODE)
    assert fast["tokens_per_s_per_chip"] == pytest.approx(2 * base["tokens_per_s_per_chip"])
    assert cd.params() is cd.params() and cd.params().hbm_stack_bytes_per_s == pytest.approx(0.67e12)


# -- 5. errors ------------------------------------------------------------------------------------
@pytest.mark.parametrize("kw,name", [
    (dict(matrix_mm2=-1), "matrix_mm2"), (dict(sram_mm2=float("nan")), "sram_mm2"),
    (dict(n_hbm_stacks=2.5), "n_hbm_stacks"), (dict(n_hbm_stacks=True), "n_hbm_stacks"),
    (dict(io_mm2="10"), "io_mm2"), (dict(area_mm2=0), "area_mm2"), (dict(power_w=-5), "power_w"),
])
def test_bad_design_inputs_name_the_argument(kw, name):
    args = dict(matrix_mm2=100, sram_mm2=10, n_hbm_stacks=2, io_mm2=10) | kw
    with pytest.raises(ValueError, match=name):
        cd.design(**args)


@pytest.mark.parametrize("make,name", [
    (lambda: cd.DecodeWorkload(batch_size=0), "batch_size"), (lambda: cd.DecodeWorkload(n_chips=1.5), "n_chips"),
    (lambda: cd.DecodeWorkload(precision="fp7"), "fp7"), (lambda: cd.TrainingWorkload(shards=0), "shards"),
    (lambda: cd.TrainingWorkload(microbatch_tokens=-1), "microbatch_tokens"),
    (lambda: cd.best_design(cd.TrainingWorkload(), area_mm2=-1), "area_mm2"),
    (lambda: cd.best_design(cd.TrainingWorkload(), grid_mm2=0), "grid_mm2"),
    (lambda: cd.best_design(cd.TrainingWorkload(), power_w=float("inf")), "power_w"),
    (lambda: cd.best_design("training"), "workload"),
    (lambda: cd.evaluate("h100", cd.TrainingWorkload()), "design"),
    (lambda: cd.params(flops=1), "flops"), (lambda: cd.params(j_per_flop=0), "j_per_flop"),
    (lambda: cd.params(voltage_floor_clock=2), "voltage_floor_clock"),
])
def test_bad_inputs_raise_value_error(make, name):
    with pytest.raises(ValueError, match=name):
        make()


def test_unknown_model_is_an_error():
    with pytest.raises(ValueError, match="llama-9"):
        cd.need(cd.DecodeWorkload(model="llama-9"))


def test_best_design_with_no_room_says_so():
    with pytest.raises(ValueError, match="no room"):
        cd.best_design(cd.TrainingWorkload(), area_mm2=100)


@pytest.mark.parametrize("old,new,key", [
    ('src = "google-tpu8-deep-dive", note = "TPU 8t: 216', 'src = "nope", note = "TPU 8t: 216', "t_hbm_stacks"),
    ("phy_mm2 = ", "phy_mm = ", "phy_mm"),
    ("tflop_s_per_mm2 = { value = 2.0,", "tflop_s_per_mm2 = { value = -2.0,", "tflop_s_per_mm2"),
])
def test_malformed_file_is_a_catalogue_error_naming_the_key(tmp_path: Path, old, new, key):
    text = (DATA_DIR / "chipdesign.toml").read_text()
    assert text.count(old) == 1
    f = tmp_path / "cd.toml"
    f.write_text(text.replace(old, new))
    with pytest.raises(CatalogueError, match=key):
        cd.load_params(f)
