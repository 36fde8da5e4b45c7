"""The per-term validation table (accelbook.training.term_validation) against data/term_measurements.toml.

Published values are the sources' figures, typed here by hand (Korthikanti et al. 2022, Table 4 and Sec. 6.2;
the QuACK blog post); each model value is compared with the call the row names, made directly here.
"""

from __future__ import annotations

import dataclasses
import math

import pytest

from accelbook import training
from accelbook.specs.chips import get_chip
from accelbook.specs.loader import CatalogueError
from accelbook.specs.measured import achievable_hbm_fraction
from accelbook.specs.models import get_model

# row id -> the published time in seconds, from the sources' own numbers
HAND = {
    "korthikanti-22b-baseline": 19.6e-3,        # Table 4: 7.7 + 11.9 ms
    "korthikanti-22b-sp": 19.0e-3,              # 7.2 + 11.8
    "korthikanti-22b-full-recompute": 27.2e-3,  # 7.7 + 19.5
    "korthikanti-22b-selective": 20.9e-3,       # 7.7 + 13.2
    "korthikanti-22b-selective-sp": 20.3e-3,    # 7.2 + 13.1
    "korthikanti-22b-full-recompute-overhead": 7.6e-3,   # Sec. 6.2: "7.6ms"
    "korthikanti-22b-selective-overhead": 1.3e-3,        # Sec. 6.2: "1.3ms"
    # QuACK: 16,384 x 131,072 fp32 read + written = 17,179,869,184 B at 3.01 TB/s -> 5.7076 ms
    "quack-softmax-fp32-16k-131k": 17_179_869_184 / 3.01e12,
    "torch-compile-softmax-fp32-16k-131k": 17_179_869_184 / 2.0e12,   # ~2.0 TB/s -> 8.5899 ms
    "liger-softmax-fp32-16k-65k": 8_589_934_592 / 2.0e12,             # ~2.0 TB/s at 65,536 wide
}
# DeepGEMM README (2025-04-09), H800 FP8: groups x M per group, N, K and TFLOPS; time = 2 G M N K / TFLOPS
DEEPGEMM = {"masked-1x1024-n4096-k7168": (1, 1024, 4096, 7168, 1233), "masked-1x1024-n7168-k2048": (1, 1024, 7168, 2048, 925),
            "masked-2x512-n4096-k7168": (2, 512, 4096, 7168, 1040), "masked-2x512-n7168-k2048": (2, 512, 7168, 2048, 916),
            "masked-4x256-n4096-k7168": (4, 256, 4096, 7168, 932), "masked-4x256-n7168-k2048": (4, 256, 7168, 2048, 815),
            "contiguous-4x8192-n4096-k7168": (4, 8192, 4096, 7168, 1346),
            "contiguous-4x8192-n7168-k2048": (4, 8192, 7168, 2048, 1214),
            "contiguous-8x4096-n4096-k7168": (8, 4096, 4096, 7168, 1346),
            "contiguous-8x4096-n7168-k2048": (8, 4096, 7168, 2048, 1214)}
for _k, (_g, _m, _n, _kk, _tf) in DEEPGEMM.items():
    HAND[f"deepgemm-h800-{_k}"] = 2 * _g * _m * _n * _kk / (_tf * 1e12)
# its CUTLASS 3.6 baseline: DeepGEMM's TFLOPS over the speedup (1.3x, 1.3x, 1.3x, 1.2x), rounded to a TFLOPS
for _k, _tf in (("4x8192-n4096-k7168", 1035), ("4x8192-n7168-k2048", 934), ("8x4096-n4096-k7168", 1035),
                ("8x4096-n7168-k2048", 1012)):
    _g, _m, _n, _kk, _ = DEEPGEMM["contiguous-" + _k]
    HAND[f"cutlass36-h800-contiguous-{_k}"] = 2 * _g * _m * _n * _kk / (_tf * 1e12)
# torchao README, one B200: the times themselves
HAND.update({"torchao-b200-mxfp8-fprop": 1671.2e-6, "torchao-b200-mxfp8-dgrad": 1683.4e-6,
             "torchao-b200-mxfp8-wgrad": 2103.3e-6, "torchao-b200-bf16-fwd-bwd-g1": 13064.8e-6,
             "torchao-b200-bf16-fwd-bwd-g2": 14900.2e-6, "torchao-b200-bf16-fwd-bwd-g4": 15823.6e-6,
             "torchao-b200-bf16-fwd-bwd-g8": 14966.8e-6})
# TileOPs PR 2125, one H200: the permute times themselves (4,096 tokens x top-8, hidden 7,168, bf16)
HAND.update({"tileops-h200-permute-4096x8-h7168": 220.384e-6, "vllm-h200-permute-4096x8-h7168": 274.944e-6})
# DeepEP README (2025-04-22), H800: 4,096 tokens x destinations x 7,168 x bytes (FP8 dispatch 1 + 4/128, bf16 combine 2)
# over the bandwidth; destinations 8 (1 - C(224,8)/C(256,8)) = 5.295 ranks, 1.993 / 3.614 / 3.983 nodes
for _name, _ep, _dst, _bw_d, _bw_c in (("intranode-ep8", 8, 5.295, 153, 158), ("internode-ep16", 16, 1.993, 43, 43),
                                       ("internode-ep32", 32, 3.614, 58, 57), ("internode-ep64", 64, 3.983, 51, 50)):
    HAND[f"deepep-h800-{_name}-dispatch"] = 4096 * _dst * 7168 * 1.03125 / (_bw_d * 1e9)
    HAND[f"deepep-h800-{_name}-combine"] = 4096 * _dst * 7168 * 2 / (_bw_c * 1e9)


@pytest.fixture(scope="module")
def table():
    return training.term_validation_table().set_index("id")


def _22b():
    return dataclasses.replace(get_model("gpt3-175b"), n_layers=48, d_model=6144, n_heads=64, d_ff=24576,
                               vocab_size=51200)


def _layer_s(recompute, sp):
    e = training.estimate(_22b(), "a100", 8, 4 * 2048, 2048, tp=8, microbatch=4, recompute=recompute,
                          sequence_parallel=sp, flash_attention=False)
    parts = ("t_gemm_s", "t_attention_s", "t_elementwise_s", "t_recompute_s", "t_tp_comm_s")
    return sum(e.time[k] for k in parts) / 48


def test_published_values_are_the_sources_figures(table):
    assert set(table.index) == set(HAND)
    for rid, want in HAND.items():
        assert table.loc[rid, "published_s"] == pytest.approx(want, rel=1e-12), rid
    assert table.loc["quack-softmax-fp32-16k-131k", "published_s"] == pytest.approx(5.7076e-3, rel=1e-4)


def test_at_least_six_rows_over_three_terms_with_sources(table):
    assert len(table) >= 6 and set(table["term"]) == {"layer", "recompute", "elementwise", "grouped_gemm", "all_to_all",
                                                           "permute"}
    assert table["source"].str.len().gt(10).all() and table["case"].str.len().gt(10).all()


def test_layer_rows_are_the_estimate_of_the_published_layout(table):
    for rid, rec, sp in (("korthikanti-22b-baseline", "none", False), ("korthikanti-22b-sp", "none", True),
                         ("korthikanti-22b-full-recompute", "full", False),
                         ("korthikanti-22b-selective", "selective", False),
                         ("korthikanti-22b-selective-sp", "selective", True)):
        assert table.loc[rid, "model_s"] == pytest.approx(_layer_s(rec, sp), rel=1e-12), rid


def test_recompute_rows_are_the_difference_of_two_estimates(table):
    base = _layer_s("none", False)
    assert table.loc["korthikanti-22b-full-recompute-overhead", "model_s"] == pytest.approx(
        _layer_s("full", False) - base, rel=1e-12)
    assert table.loc["korthikanti-22b-selective-overhead", "model_s"] == pytest.approx(
        _layer_s("selective", False) - base, rel=1e-12)
    assert (table.loc[table["term"] == "recompute", "model_s"] > 0).all()


def test_elementwise_rows_stream_at_the_training_kernels_bandwidth(table):
    h100 = get_chip("h100")
    bw = h100.hbm_bw_bytes_per_s * achievable_hbm_fraction(h100).fraction
    assert bw == pytest.approx(2.97e12, rel=1e-3)     # BabelStream Triad on H100 (data/hbm_bandwidth.toml)
    # elementwise kernels at 0.732 of it: the median of Liger PR 1257's six H100 RMSNorm forward timings,
    # (4·4096² B / 0.033 ms + 4·4096² B / 0.029 ms) / 2 = 2.174 TB/s (data/elementwise_bandwidth.toml)
    elem = (4 * 4096 * 4096 / 0.033e-3 + 4 * 4096 * 4096 / 0.029e-3) / 2
    assert table.loc["quack-softmax-fp32-16k-131k", "model_s"] == pytest.approx(17_179_869_184 / elem, rel=1e-3)
    # against QuACK's 3.01 TB/s: 3.01 / 2.174 - 1 = +38.5 %; against torch.compile's 2.0 TB/s: -8.0 %
    assert table.loc["quack-softmax-fp32-16k-131k", "error"] == pytest.approx(3.01e12 / elem - 1, abs=2e-3)
    assert table.loc["torch-compile-softmax-fp32-16k-131k", "error"] == pytest.approx(-0.080, abs=2e-3)


def test_error_is_model_over_published_minus_one(table):
    for rid, r in table.iterrows():
        assert r["error"] == pytest.approx(r["model_s"] / r["published_s"] - 1, rel=1e-12), rid
        assert math.isfinite(r["error"])


def test_worst_term_is_the_largest_median_abs_error(table):
    t = table.reset_index()
    med = {term: t.loc[t["term"] == term, "error"].abs().median() for term in set(t["term"])}
    assert training.worst_term(t) == max(med, key=med.get)
    assert training.term_errors(t).iloc[0] == pytest.approx(max(med.values()))


def _write(tmp_path, body: str):
    p = tmp_path / "terms.toml"
    p.write_text(body, encoding="utf-8")
    return p


GOOD_ELEMENTWISE = '''[k]
term = "elementwise"
case = "a kernel"
chip = "h100"
bytes_moved = 1e9
published_tb_s = { value = 2.5, src = "quack-membound-blog" }
'''


def test_a_users_file_is_read(tmp_path):
    t = training.term_validation_table(_write(tmp_path, GOOD_ELEMENTWISE))
    assert t["published_s"].iloc[0] == pytest.approx(1e9 / 2.5e12)


@pytest.mark.parametrize("bad, key", [
    (GOOD_ELEMENTWISE.replace('term = "elementwise"', 'term = "bubble"'), "term"),
    (GOOD_ELEMENTWISE.replace("bytes_moved = 1e9", "bytes_moved = -1"), "bytes_moved"),
    (GOOD_ELEMENTWISE.replace("bytes_moved = 1e9\n", ""), "bytes_moved"),
    (GOOD_ELEMENTWISE.replace('src = "quack-membound-blog"', 'src = "nowhere"'), "published_tb_s"),
    (GOOD_ELEMENTWISE.replace("published_tb_s = { value = 2.5, src = \"quack-membound-blog\" }", "published_tb_s = 2.5"),
     "published_tb_s"),
    (GOOD_ELEMENTWISE + "extra_ms = 1\n", "extra_ms"),
    ('[k]\nterm = "layer"\ncase = "x"\nchip = "a100"\nmodel = "gpt3-175b"\nlayout = { tp = 8 }\n'
     'published_ms = { value = 1, src = "korthikanti-2022-table4" }\n', "layout"),
])
def test_a_malformed_row_names_its_key(tmp_path, bad, key):
    with pytest.raises(CatalogueError) as err:
        training.term_measurements(_write(tmp_path, bad))
    assert err.value.key == key and "[k]" in str(err.value)
