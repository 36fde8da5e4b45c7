"""The FP8 cast rows of the term table (term "fp8_cast", data/term_measurements.toml).

Published times are the kernel times the sources print (torchao's blockwise FP8 benchmark README on an H100 and
its MXFP8 cast table on a B200), typed here by hand. The model's time is the cast the training model charges an
FP8 GEMM input: 3 bytes an element (read bf16, write fp8) at the elementwise bandwidth, worked by hand from the
H100's BabelStream figure (2.97 TB/s, data/hbm_bandwidth.toml) and Liger's RMSNorm share (0.732).
"""

from __future__ import annotations

import pytest

from accelbook import training
from accelbook.specs.loader import CatalogueError

# row id -> published seconds (a sample: two per source table)
HAND = {
    "ao-blockwise-act-quant-lhs-32k": 150.86e-6,       # act_quant_lhs 32768x4096: 150.86 us, 2696.8 GB/s
    "ao-blockwise-weight-quant-rhs-128k": 555.30e-6,   # weight_quant_rhs 131072x4096: 555.30 us
    "ao-moe-fwd-act-quant-lhs": 253.5e-6,              # MoE grouped table, fwd act_quant_lhs
    "ao-moe-bwd-wgrad-quant-a": 275.3e-6,
    "ao-mxfp8-dim0-mxfp8-triton-rceil": 138.18e-6,     # B200, 16384x16384
    "ao-mxfp8-dim0-mxfp8-rceil": 220.10e-6,
}


@pytest.fixture(scope="module")
def table():
    t = training.term_validation_table().set_index("id")
    return t[t["term"] == "fp8_cast"]


def test_published_times_are_the_sources_figures(table):
    assert len(table) == 22
    for rid, want in HAND.items():
        assert table.loc[rid, "published_s"] == pytest.approx(want, rel=1e-12), rid


def test_the_published_bandwidths_follow_from_the_times():
    # the logical IO the source divides by: 2 B read + 1 B written + a 4-byte scale per 128 elements
    rows = training.term_measurements()
    n = rows["ao-blockwise-act-quant-lhs-32k"]["elements"]
    assert n == 32768 * 4096
    assert n * (3 + 4 / 128) / 150.86e-6 == pytest.approx(2696.8e9, rel=2e-3)


def test_model_time_is_three_bytes_an_element_at_the_elementwise_bandwidth(table):
    elem = (4 * 4096 * 4096 / 0.033e-3 + 4 * 4096 * 4096 / 0.029e-3) / 2     # 2.174 TB/s, as the elementwise rows
    assert table.loc["ao-blockwise-act-quant-lhs-32k", "model_s"] == pytest.approx(3 * 32768 * 4096 / elem, rel=1e-3)
    # 402.7 MB at 2.174 TB/s = 185.2 us against 150.86 us: +22.8 %
    assert table.loc["ao-blockwise-act-quant-lhs-32k", "error"] == pytest.approx(0.228, abs=3e-3)


def test_the_model_charges_casts_slower_than_the_kernels_recipes_run(table):
    others = table.drop("ao-mxfp8-dim0-mxfp8-rceil")
    assert (others["error"] > 0).all()
    assert table.loc["ao-mxfp8-dim0-mxfp8-rceil", "error"] < 0   # torch.compile's RCEIL cast, not used


GOOD = '''[c]
term = "fp8_cast"
case = "a cast"
chip = "h100"
elements = 1000000
published_us = { value = 2, src = "torchao-blockwise-fp8-bench" }
'''


def test_a_users_row_is_read(tmp_path):
    p = tmp_path / "terms.toml"
    p.write_text(GOOD, encoding="utf-8")
    assert training.term_validation_table(p)["published_s"].iloc[0] == pytest.approx(2e-6)


@pytest.mark.parametrize("bad, key", [
    (GOOD.replace("elements = 1000000", "elements = 0"), "elements"),
    (GOOD.replace("elements = 1000000", "elements = 1.5"), "elements"),
    (GOOD.replace("elements = 1000000\n", ""), "elements"),
    (GOOD.replace('{ value = 2, src = "torchao-blockwise-fp8-bench" }', "2"), "published_us"),
])
def test_a_malformed_row_names_its_key(tmp_path, bad, key):
    p = tmp_path / "terms.toml"
    p.write_text(bad, encoding="utf-8")
    with pytest.raises(CatalogueError) as err:
        training.term_measurements(p)
    assert err.value.key == key and "[c]" in str(err.value)
