"""The Chip API: forgiving look-up, derived quantities, what-if variants."""

from __future__ import annotations

import pytest

import accelbook as ab
from accelbook.specs.loader import UnknownNameError


@pytest.mark.parametrize("name, cid", [
    ("h100", "h100"), ("H100", "h100"), ("H100 SXM", "h100"), ("h100-sxm", "h100"), ("NVIDIA H100", "h100"),
    ("tpu-v5p", "tpu-v5p"), ("TPU v5p", "tpu-v5p"), ("tpu_v5p", "tpu-v5p"), ("v5p", "tpu-v5p"),
    ("Trillium", "tpu-v6e"), ("trillium", "tpu-v6e"), ("TPU v6e", "tpu-v6e"),
    ("Ironwood", "tpu7"), ("MI300X", "mi300x"), ("GroqChip", "groq-lpu-v1"), ("WSE-3", "cerebras-cs3"),
    ("  h100 ", "h100"),
])
def test_forgiving_names(name, cid):
    assert ab.get_chip(name).id == cid


@pytest.mark.parametrize("chip", ab.load_chips(ab.specs.loader.DATA_DIR / "chips.toml"), ids=lambda c: c.id)
def test_every_alias_resolves_to_its_own_chip(chip):
    # no alias of one chip may be shadowed by another chip's id, name or alias
    for name in (chip.id, chip.name, *chip.aliases):
        assert ab.get_chip(name).id == chip.id, name


@pytest.mark.parametrize("name, close", [("h1000", "h100"), ("tpu v5q", "tpu-v5p"), ("trilium", "TPU v6e")])
def test_unknown_name_lists_close_matches(name, close):
    with pytest.raises(UnknownNameError) as info:
        ab.get_chip(name)
    msg = str(info.value)
    assert name in msg and close in msg
    assert not msg.startswith('"')  # not KeyError's quoted repr


def test_close_matches_name_each_chip_once():
    with pytest.raises(UnknownNameError) as info:
        ab.get_chip("trilium")
    # suggestions read "id (display name), id (display name)"
    suggestions = str(info.value).split("closest: ")[1].split(". See")[0].split("), ")
    chips = [ab.get_chip(s.split(" (")[0]).id for s in suggestions]
    assert len(chips) == len(set(chips)), suggestions


def test_unknown_name_is_both_key_and_value_error():
    for exc in (KeyError, ValueError):
        with pytest.raises(exc):
            ab.get_chip("no such accelerator at all")


def test_unknown_name_without_close_match_still_readable():
    with pytest.raises(UnknownNameError, match=r"unknown chip 'zzzzqqq'.*accelbook\.chips\(\)"):
        ab.get_chip("zzzzqqq")


def test_non_string_name_is_a_type_error():
    with pytest.raises(TypeError, match="string"):
        ab.get_chip(100)


def test_peak_at_missing_precision_is_a_readable_value_error():
    # TPU v5e publishes bf16 and int8 only (Google Cloud docs: no FP8)
    with pytest.raises(ValueError, match=r"TPU v5e.*fp8.*published: bf16, int8"):
        ab.get_chip("tpu-v5e").peak_flop_s("fp8")
    with pytest.raises(ValueError, match="unknown precision 'fp7'"):
        ab.get_chip("h100").peak_flop_s("fp7")


def test_precisions_listed_in_order():
    assert ab.get_chip("h100").precisions == ("bf16", "fp8", "int8")
    assert ab.get_chip("a100").precisions == ("bf16", "fp16", "int8")  # Ampere: no FP8


def test_sram_chip_uses_sram_as_its_memory():
    # Groq LPU v1: no HBM; 230 MB SRAM at 80 TB/s (TechPowerUp)
    g = ab.get_chip("groq-lpu-v1")
    assert g.hbm_bytes is None and g.memory_kind == "SRAM"
    assert g.memory_bytes == pytest.approx(230e6)
    assert g.memory_bw_bytes_per_s == pytest.approx(80e12)
    assert g.ridge_point("fp16") == pytest.approx(188e12 / 80e12)  # 2.35 FLOP/byte


def test_chip_without_dense_peak_has_no_ridge():
    with pytest.raises(ValueError, match="no published dense bf16"):
        ab.get_chip("cerebras-cs3").ridge_point("bf16")


def test_what_if_variant_doubles_bandwidth_and_halves_ridge():
    h100 = ab.get_chip("h100")
    v = h100.what_if_variant("2x HBM", hbm_bw_bytes_per_s=2 * 3.35e12)
    assert v.what_if and v.id == "h100+2x HBM" and "2x HBM" in v.name
    assert v.hbm_bw_bytes_per_s == pytest.approx(6.7e12)
    assert v.ridge_point() == pytest.approx(989.4e12 / 6.7e12)  # 147.7 FLOP/byte
    assert h100.hbm_bw_bytes_per_s == pytest.approx(3.35e12) and not h100.what_if  # original untouched


def test_what_if_variant_changes_peaks():
    v = ab.get_chip("h100").what_if_variant(peak_dense_flop_s={"bf16": 2e15})
    assert v.peak_flop_s("bf16") == 2e15
    assert v.ridge_point() == pytest.approx(2e15 / 3.35e12)  # 597 FLOP/byte
    with pytest.raises(ValueError):
        v.peak_flop_s("fp8")  # only the given peaks remain


@pytest.mark.parametrize("changes, match", [
    ({"no_such_field": 1}, "no field"),
    ({"hbm_bw_bytes_per_s": -1.0}, "hbm_bw_bytes_per_s must be a finite number > 0"),
    ({"hbm_bw_bytes_per_s": 0.0}, "hbm_bw_bytes_per_s must be a finite number > 0"),
    ({"hbm_bw_bytes_per_s": float("nan")}, "hbm_bw_bytes_per_s must be a finite number > 0"),
    ({"price_usd_per_s": -0.001}, "price_usd_per_s must be a finite number > 0"),
    ({"tdp_w": 0}, "tdp_w must be a finite number > 0"),
])
def test_what_if_variant_rejects_bad_changes(changes, match):
    with pytest.raises(ValueError, match=match):
        ab.get_chip("h100").what_if_variant(**changes)


def test_what_if_variant_rejects_negative_peak():
    with pytest.raises(ValueError):
        ab.get_chip("h100").what_if_variant(peak_dense_flop_s={"bf16": -1.0})


def test_what_if_value_is_not_cited_to_the_datasheet():
    v = ab.get_chip("h100").what_if_variant(hbm_bw_bytes_per_s=7e12)
    prov = v.source_of("hbm_bw_bytes_per_s")
    assert prov is None or prov.kind == "what-if"


def test_source_of_returns_provenance():
    p = ab.get_chip("tpu-v5p").source_of("hbm_bw_bytes_per_s")
    assert p.source.id == "gcp-tpu-v5p-docs" and p.kind == "primary"
    # two published values disagree with 2.765 TB/s: scaling-book 2.8 and JAX tpu_info 2.46
    assert sorted(v for v, _, _ in p.alternatives) == pytest.approx([2.46e12, 2.8e12])
    assert ab.get_chip("tpu-v5p").source_of("no_such_field") is None


def test_disagreements_lists_price_spread():
    d = ab.disagreements().set_index(["chip", "field"])
    row = d.loc[("h100", "price_usd_per_s")]
    # Google Cloud USD 10.80/h used; listings from USD 1.65 (Vast.ai) to 6.88 (AWS): (10.80 - 1.65) / 10.80
    assert row["spread"] == pytest.approx((10.80 - 1.65) / 10.80)
    assert row["used"] == "10.8 USD/h" and "1.65 USD/h" in row["others"]
    assert (ab.disagreements()["spread"] >= 0).all()


# -- one description per link: NVLink GPUs take their link latency from data/fabrics.toml ----------------------
_MINIMAL = ('[mine]\nname = "Mine"\nvendor = "me"\nkind = "gpu"\nstatus = "announced"\n'
            'hbm_bw_tb_s = { value = 1, src = "what-if-template" }\n')


def test_nvlink_chips_take_the_fabrics_step_latency():
    from accelbook.specs.fabrics import get_fabric
    for cid, fid in (("h100", "nvlink4"), ("h200", "nvlink4"), ("h800", "nvlink4"), ("a100", "nvlink3"),
                     ("b200", "nvlink5"), ("gb200", "nvlink5")):
        c = ab.get_chip(cid)
        assert c.scale_up_fabric == fid
        # NCCL's hwLatencies[NVLINK][Ring][Simple]: the figure the training clusters and network presets use
        assert c.link_latency_s == get_fabric(fid)["hop_latency_s"] == pytest.approx(3.4e-6)
        assert c.provenance["link_latency_s"].source.id == "nccl-tuning"


def test_one_nvlink4_latency_in_the_data():
    # every entry of data/ that states an NVLink 4 step latency: only fabrics.toml's [nvlink4]
    import re
    data = ab.specs.loader.DATA_DIR
    hits = []
    for p in sorted(data.glob("*.toml")):
        entry = None
        for line in p.read_text().splitlines():
            if m := re.match(r"^\[([^\]]+)\]", line):
                entry = m.group(1)
            elif re.match(r"^\s*(link_latency|step_latency|domain_latency)_(us|ns)\s*=", line):
                hits.append((p.name, entry))
    nvlink4 = {cid for cid in ("h100", "h200", "h800", "gh200")}
    assert not [h for h in hits if h[0] == "chips.toml" and h[1] in nvlink4], hits
    assert ("fabrics.toml", "nvlink4") in hits
    assert not [h for h in hits if h[0] == "clusters.toml"], hits


@pytest.mark.parametrize("extra, problem", [
    ('scale_up_fabric = "nvlink9"\n', "must be a fabric id"),
    ('scale_up_fabric = "nvlink4"\nlink_latency_us = { value = 1, src = "what-if-template" }\n', "given twice"),
])
def test_a_bad_fabric_link_is_a_catalogue_error(tmp_path, extra, problem):
    p = tmp_path / "mine.toml"
    p.write_text(_MINIMAL + extra)
    with pytest.raises(ab.specs.loader.CatalogueError, match=rf"entry \[mine\].*{problem}"):
        ab.load_chips(p)
