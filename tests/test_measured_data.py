"""Measured mechanism data: achievable HBM bandwidth, compute slowdown under a concurrent collective, MoE
expert imbalance (data/hbm_bandwidth.toml, data/overlap_interference.toml, data/moe_balance.toml).

Expected numbers are typed from the cited tables (BabelStream results of the Azure AI Benchmarking Guide,
Lee et al. 2025's abstract, Wang et al. 2024's Table 2), never read back from accelbook. Malformed files are
written to ``tmp_path``; every CatalogueError must name the file, the entry and the key.
"""

from __future__ import annotations

import pytest

from accelbook.specs.chips import all_chips, get_chip
from accelbook.specs.loader import CatalogueError
from accelbook.specs.measured import (
    HBM_BORROW,
    achievable_hbm_fraction,
    default_hbm_fraction,
    expert_load_imbalance,
    load_hbm_bandwidth,
    load_moe_balance,
    load_overlap_interference,
    overlap_slowdown,
)

HBM_CHIPS = [c.id for c in all_chips() if c.hbm_bw_bytes_per_s is not None]


# -- every entry loads, in range ------------------------------------------------------------------------------
@pytest.mark.parametrize("cid", HBM_CHIPS)
def test_every_hbm_chip_has_a_fraction_in_range(cid):
    m = achievable_hbm_fraction(cid)
    assert 0 < m.fraction <= 1
    assert m.measured_bytes_per_s == pytest.approx(m.fraction * get_chip(cid).hbm_bw_bytes_per_s)
    assert m.note


def test_measured_entries_carry_provenance_and_borrowers_say_whom():
    table = load_hbm_bandwidth()
    assert set(table) >= {"a100", "h100", "h200", "mi300x"}
    for cid, m in table.items():
        assert m.provenance is not None and m.provenance.source.url.startswith("https://")
        assert m.borrowed_from is None and achievable_hbm_fraction(cid).borrowed_from is None
    for cid in HBM_BORROW:
        m = achievable_hbm_fraction(cid)
        assert m.borrowed_from in table and m.borrowed_from in m.note and m.provenance is not None
    assert achievable_hbm_fraction("gb200").borrowed_from == "h200"     # the chain gb200 -> b200 -> h200


def test_chip_without_sibling_gets_the_stated_default():
    m = achievable_hbm_fraction("tpu-v5p")
    assert m.provenance is None and m.borrowed_from is None and "ASSUMED" in m.note
    assert m.fraction == default_hbm_fraction()
    with pytest.raises(ValueError, match="no off-chip HBM"):
        achievable_hbm_fraction("cerebras-cs3")


def test_overlap_measurements_load_and_are_non_negative():
    ms = load_overlap_interference()
    assert {m.case for m in ms} == {"typical", "worst-case"}
    for m in ms:
        assert m.slowdown >= 0 and m.provenance.source.url.startswith("https://")
    for c in all_chips():
        for case in ("typical", "worst-case"):
            f, prov = overlap_slowdown(c, case)
            assert f >= 0 and prov.note
    assert overlap_slowdown("mi300x")[1].note.startswith("no measurement on")
    assert overlap_slowdown("tpu-v5p")[1].note.startswith("FALLBACK")
    with pytest.raises(ValueError, match="case"):
        overlap_slowdown("h100", "best")


def test_moe_balance_loads_and_unknown_kind_is_refused():
    table = load_moe_balance()
    assert set(table) >= {"aux_loss_free", "aux_loss"}
    for kind in table:
        r, prov = expert_load_imbalance(kind)
        assert r >= 1 and prov.source.url.startswith("https://")
    assert expert_load_imbalance("aux_loss_free")[0] < expert_load_imbalance("aux_loss")[0]
    with pytest.raises(ValueError, match="kind"):
        expert_load_imbalance("expert_choice")


# -- one published number per file, typed from the source -------------------------------------------------------
def test_h100_babelstream_triad():
    """Azure ND H100 v5 results, HBM Bandwidth table: Triad 2.97 TB/s; H100 SXM datasheet 3.35 TB/s."""
    m = achievable_hbm_fraction("h100")
    assert m.measured_bytes_per_s == pytest.approx(2.97e12)
    assert m.fraction == pytest.approx(2.97 / 3.35)


def test_lee_2025_average_overlap_slowdown():
    """Lee et al. 2025, abstract: 'an average computational slowdown of 18.9%'."""
    assert overlap_slowdown("a100")[0] == pytest.approx(0.189)


def test_wang_2024_maxvio_global():
    """Wang et al. 2024, Table 2: MaxVio_global 0.04 (Loss-Free), 0.52 (Loss-Controlled, 3B)."""
    assert expert_load_imbalance("aux_loss_free")[0] == pytest.approx(1.04)
    assert expert_load_imbalance("aux_loss")[0] == pytest.approx(1.52)


# -- malformed files name file, entry and key ----------------------------------------------------------------------
def _err(tmp_path, loader, text):
    p = tmp_path / "bad.toml"
    p.write_text(text)
    with pytest.raises(CatalogueError) as e:
        loader(p)
    assert str(p) in str(e.value)
    return e.value


def test_malformed_hbm_file(tmp_path):
    e = _err(tmp_path, load_hbm_bandwidth,
             '[h100]\nhbm_achievable_tb_s = { value = 3.9, src = "azure-aibench-nd-h100-v5" }\n')
    assert (e.entry, e.key) == ("h100", "hbm_achievable_tb_s") and "above" in e.problem
    e = _err(tmp_path, load_hbm_bandwidth, '[h100]\nhbm_achievable_tb_s = 2.9\n')
    assert (e.entry, e.key) == ("h100", "hbm_achievable_tb_s")
    e = _err(tmp_path, load_hbm_bandwidth, '[h100]\nhbm_achievable_tb_s = { value = 2.9, src = "lee-2025-overlap" }\n'
             'hbm_bw_tb_s = { value = 2.9, src = "azure-aibench-nd-h100-v5" }\n')
    assert (e.entry, e.key) == ("h100", "hbm_bw_tb_s") and "unknown key" in e.problem


def test_malformed_overlap_file(tmp_path):
    good = ('chips = ["h100"]\nvendors = ["NVIDIA"]\nconditions = "x"\n'
            'compute_slowdown_fraction = { value = 0.1, src = "lee-2025-overlap" }\n')
    e = _err(tmp_path, load_overlap_interference, '[m]\ncase = "sometimes"\n' + good)
    assert (e.entry, e.key) == ("m", "case")
    e = _err(tmp_path, load_overlap_interference,
             '[m]\ncase = "typical"\n' + good.replace('"lee-2025-overlap"', '"no-such-source"'))
    assert (e.entry, e.key) == ("m", "compute_slowdown_fraction")
    e = _err(tmp_path, load_overlap_interference, '[m]\ncase = "typical"\n' + good.replace('"h100"', '"h999"'))
    assert (e.entry, e.key) == ("m", "chips")


def test_malformed_moe_file(tmp_path):
    e = _err(tmp_path, load_moe_balance, '[aux_loss]\ngranularity = "global"\nmodel = "x"\n'
             'max_over_mean_ratio = { value = 0.9, src = "wang-2024-loss-free-balancing" }\n')
    assert (e.entry, e.key) == ("aux_loss", "max_over_mean_ratio")
    e = _err(tmp_path, load_moe_balance, '[aux_loss]\nmodel = "x"\n'
             'max_over_mean_ratio = { value = 1.5, src = "wang-2024-loss-free-balancing" }\n')
    assert (e.entry, e.key) == ("aux_loss", "granularity")
