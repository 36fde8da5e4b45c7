"""Number formats: properties against the published specification values, the loader's errors, peaks per
format against the chip catalogue, memory per format, the notebook-10 dashboard and its exercises."""

from __future__ import annotations

import math

import pytest

from accelbook.chip import number_formats as nf
from accelbook.specs.chips import all_chips, get_chip
from accelbook.specs.formats import get_format, load_formats, load_quantisation_results
from accelbook.specs.loader import CatalogueError
from accelbook.specs.models import get_model
from accelbook.ui.dashboards import ALL_SPECS
from accelbook.ui.dashboards.nb10_number_formats import precision_spec
from accelbook.ui.exercises import EXERCISES, check

# Published values: OCP OFP8 table 2 (E4M3 max 448 = S.1111.110, min normal 2^-6, min subnormal 2^-9; E5M2 max
# 57344, min normal 2^-14, min subnormal 2^-16); IEEE 754 binary16 max 65504, binary32 max 3.4028235e38;
# bfloat16 max 3.3895314e38; OCP MX v1.0: E2M1 max 6, E3M2 max 28, E2M3 max 7.5, E8M0 2^-127..2^127.
SPEC = {
    "fp8-e4m3": (448.0, 2.0**-6, 2.0**-9),
    "fp8-e5m2": (57344.0, 2.0**-14, 2.0**-16),
    "fp16": (65504.0, 2.0**-14, 2.0**-24),
    "bf16": (3.3895313892515355e38, 2.0**-126, 2.0**-133),
    "fp32": (3.4028234663852886e38, 2.0**-126, 2.0**-149),
    "fp4-e2m1": (6.0, 1.0, 0.5),
    "fp6-e3m2": (28.0, 0.25, 0.0625),
    "fp6-e2m3": (7.5, 1.0, 0.125),
    "e8m0": (2.0**127, 2.0**-127, 2.0**-127),
}


@pytest.mark.parametrize("fid", sorted(SPEC))
def test_properties_match_the_specifications(fid):
    top, normal, smallest = SPEC[fid]
    assert nf.max_finite(fid) == pytest.approx(top, rel=1e-12)
    assert nf.min_normal(fid) == normal
    assert nf.min_positive(fid) == smallest


def test_epsilon_bits_and_binades():
    assert nf.machine_epsilon("bf16") == 2.0**-7 and nf.machine_epsilon("fp16") == 2.0**-10
    assert nf.machine_epsilon("fp32") == pytest.approx(1.1920929e-07)
    assert math.isnan(nf.machine_epsilon("int8"))
    # FP8 paper: E4M3 18 binades (17 with IEEE specials), E5M2 32
    assert math.ceil(nf.dynamic_range_binades("fp8-e4m3")) == 18
    assert math.ceil(nf.dynamic_range_binades("fp8-e5m2")) == 32
    assert nf.scale_binades("mxfp4") == 254 and nf.scale_binades("bf16") == 0
    # bits per element, the block scale's share included
    assert {f: nf.bits_per_element(f) for f in ("mxfp8", "mxfp6", "mxfp4", "nvfp4", "bf16", "int4")} == {
        "mxfp8": 8.25, "mxfp6": 6.25, "mxfp4": 4.25, "nvfp4": 4.5, "bf16": 16, "int4": 4}
    assert nf.bits_formula("nvfp4") == "4 + 8/16"
    assert nf.max_finite("int8") == 127 and nf.max_finite("int4") == 7
    assert nf.max_finite("nvfp4") == 6 and nf.max_finite("mxfp8") == 448


def test_format_table_and_lookup():
    t = nf.format_table()
    assert list(t["id"]) == list(nf.TEACHING_FORMATS)
    assert get_format("FP8 E4M3 (OCP OFP8)").id == "fp8-e4m3"
    with pytest.raises(KeyError, match="closest"):
        get_format("fp8-e4m4")


def _write(tmp_path, text):
    p = tmp_path / "formats.toml"
    p.write_text(text)
    load_formats.cache_clear()
    return p


@pytest.mark.parametrize("text, key", [
    ('[x]\nname = "x"\nfamily = "float"\nexponent_bits = 4\nmantissa_bits = { value = 3, src = "ocp-ofp8-spec" }\n'
     'bias = { value = 7, src = "ocp-ofp8-spec" }\nsigned = true\nspecials = "ieee"\nsubnormals = true\n', "exponent_bits"),
    ('[x]\nname = "x"\nfamily = "int"\nbits = { value = 8, src = "nowhere" }\nsigned = true\n', "bits"),
    ('[x]\nname = "x"\nfamily = "int"\nbits = { value = 8, src = "ocp-mx-spec-v1" }\nsigned = true\nbitz = 1\n', "bitz"),
    ('[x]\nname = "x"\nfamily = "int"\nbits = { value = 8, src = "ocp-mx-spec-v1" }\nsigned = "yes"\n', "signed"),
    ('[x]\nname = "x"\nfamily = "block"\nelement = "y"\nscale = "y"\nblock_size = { value = 32, src = "ocp-mx-spec-v1" }\n',
     "element"),
    ('[x]\nname = "x"\nfamily = "int"\nbits = { value = 8, src = "ocp-mx-spec-v1" }\nsigned = true\nchip_precision = "fp5"\n',
     "chip_precision"),
])
def test_loader_errors_name_file_entry_and_key(tmp_path, text, key):
    p = _write(tmp_path, text)
    with pytest.raises(CatalogueError) as err:
        load_formats(p)
    assert err.value.key == key and err.value.entry == "x" and str(p) in str(err.value)
    load_formats.cache_clear()


def test_peaks_per_format_are_the_catalogues():
    for c in all_chips():
        for f in nf.TEACHING_FORMATS:
            cp = get_format(f).chip_precision
            expected = c.peak_dense_flop_s.get(cp) if cp else None
            assert nf.peak_flop_s(c, f) == expected, (c.id, f)
    t = nf.peak_ratio_table([get_chip(i) for i in ("h100", "b200", "tpu-8i", "rubin")]).set_index("chip")
    assert t["ratio"].tolist() == pytest.approx([1.0, 2.0, 10100 / 8808, 50000 / 16700])
    assert t["published"].tolist() == [False, True, True, True]


def test_compute_precision_widens_narrow_formats_only():
    h100 = get_chip("h100")
    assert nf.compute_precision(h100, "nvfp4") == "bf16" and nf.compute_precision(h100, "int4") == "bf16"
    assert nf.compute_precision(get_chip("b200"), "nvfp4") == "fp4"
    with pytest.raises(ValueError, match="fp32"):
        nf.compute_precision(h100, "fp32")


def test_memory_halves_from_bf16_to_fp8_and_kv_does_not_follow_the_weights():
    m = get_model("llama-3.1-70b")
    bf16 = nf.serving_memory(m, "bf16", "bf16", 8192, 32)
    fp8 = nf.serving_memory(m, "fp8-e4m3", "bf16", 8192, 32)
    assert fp8["weights_bytes"] == bf16["weights_bytes"] / 2 == m.params
    assert fp8["kv_bytes"] == bf16["kv_bytes"] == 32 * 8192 * 327680
    both = nf.serving_memory(m, "fp8-e4m3", "fp8-e4m3", 8192, 32)
    assert both["total_bytes"] == bf16["total_bytes"] / 2
    nv = nf.serving_memory(m, "nvfp4", "bf16", 8192, 32)
    assert nv["weights_bytes"] == pytest.approx(m.params * 4.5 / 8)
    assert nv["total_bytes"] / bf16["total_bytes"] > 0.5  # not a quarter
    with pytest.raises(ValueError, match="batch"):
        nf.serving_memory(m, "bf16", "bf16", 8192, 0)


def test_decode_speedup_is_the_byte_ratio_when_memory_bound():
    m, c = get_model("llama-3.1-70b"), get_chip("b200")
    s = nf.decode_step(m, c, "nvfp4", "bf16", 8192, 1)
    assert s.bound == "memory" and s.t_s == s.t_mem_s == (s.weights_bytes + s.kv_bytes) / c.hbm_bw_bytes_per_s
    hand = (m.params * 2 + 8192 * 327680) / (m.params * 4.5 / 8 + 8192 * 327680)
    assert nf.decode_speedup(m, c, "nvfp4", "bf16", 8192, 1) == pytest.approx(hand, rel=1e-12)
    assert 3.3 < hand < 3.5
    assert "memory-bound" in s.why and "GB" in s.why


def test_published_results_load():
    rs = load_quantisation_results()
    assert len(rs) >= 5 and {r.format for r in rs} >= {"nvfp4", "int4", "fp8-e4m3"}
    t = nf.results_table(rs)
    awq = t[(t["model"] == "Llama 2 70B") & (t["reported"] == 3.41)].iloc[0]
    assert awq["gain"] == pytest.approx(-0.09)  # perplexity up is a loss


def test_dashboard_is_registered_and_follows_its_controls():
    assert precision_spec in ALL_SPECS
    spec = precision_spec()
    v = spec.render(fmt="fp8-e4m3", chip="h100", batch=8, context=4096, kv_format="same")
    chart = v.chart.to_dict()["datasets"]
    sel = [r for r in chart["speed"] if r["selected"]]
    assert [r["format"] for r in sel] == ["fp8-e4m3"]
    m, c = get_model("llama-3.1-70b"), get_chip("h100")
    assert sel[0]["speedup_vs_bf16"] == pytest.approx(nf.decode_speedup(m, c, "fp8-e4m3", "fp8-e4m3", 4096, 8))
    mem = {(r["format"], r["part"]): r["gb"] for r in chart["mem"]}
    assert mem[("fp8-e4m3", "weights")] == pytest.approx(m.params / 1e9)
    assert mem[("fp8-e4m3", "KV cache")] == pytest.approx(8 * 4096 * 327680 / 2 / 1e9)
    assert "2×" in v.summary or "2×" in v.summary.replace(" ", "")
    assert v.summary != spec.render(fmt="nvfp4", chip="h100").summary


def test_exercises_of_notebook_10():
    ours = {k: e for k, e in EXERCISES.items() if e.notebook == "10"}
    assert len(ours) >= 5 and any(getattr(e, "model_answer", "") for e in ours.values())
    # hand answers: (2 - 2^-2) x 2^8 = 448; 4 + 8/32; 10,100 / 8,808; 70.55e9 x 1 byte; 125.6 / 227.0 GB; 64 x 32768 x 327,680 B
    for eid, hand in {"e4m3-max": 448, "mxfp4-bits": 4.25, "fp4-over-fp8-tpu8i": 1.147, "weights-70b-fp8-gb": 70.55,
                      "predict-nvfp4-speedup": 3.39, "nvfp4-memory-share": 55.3, "what-if-long-context-kv": 687.2}.items():
        assert check(eid, hand).correct, eid
