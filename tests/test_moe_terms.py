"""MoE terms of the training model against their published measurements, with expected values worked by hand:
the grouped-GEMM fraction (data/grouped_gemm_efficiency.toml: DeepGEMM's README on H800, torchao's MoE-training
README on B200) and one expert-parallel dispatch or combine (DeepEP's README on H800, data/term_measurements.toml).
"""

from __future__ import annotations

import pytest

from accelbook import training
from accelbook.specs.grouped_gemm import grouped_gemm_fraction, load_grouped_gemm_timings
from accelbook.specs.loader import CatalogueError
from accelbook.training.term_validation import grouped_model_time_s

H100_FP8_DENSE = 1402.6e12      # Bekman's MAMF search, H100 FP8 (data/matmul_efficiency.toml), which H800 borrows
B200_FP8_DENSE = 3432.5e12
B200_BF16_DENSE = 1745.0e12


def test_h800_fp8_fraction_is_the_median_of_deepgemms_contiguous_rows():
    # 1346 and 1214 TFLOPS (twice each) over 1402.6: median (0.8655 + 0.9597) / 2 = 0.9126
    g = grouped_gemm_fraction("h800", "fp8")
    assert g.fraction == pytest.approx((1346e12 + 1214e12) / 2 / H100_FP8_DENSE, rel=1e-9)
    assert g.fraction == pytest.approx(0.9126, abs=1e-4)
    assert g.measured_on == "h800" and len(g.rows) == 4 and "on this chip" in g.note


def test_b200_fractions_are_the_medians_of_torchaos_rows():
    flop = 2 * 131072 * 2048 * 7168                 # one pass of 8 experts x 16,384 tokens, N 2048, K 7168
    fp8 = grouped_gemm_fraction("b200", "fp8")      # forward 1671.2, dgrad 1683.4, wgrad 2103.3 us: dgrad is the median
    assert fp8.fraction == pytest.approx(flop / 1683.4e-6 / B200_FP8_DENSE, rel=1e-9)
    assert fp8.fraction == pytest.approx(0.666, abs=1e-3)
    fwd_bwd = 3 * 2 * 128000 * 2048 * 7168          # forward + backward of 128,000 tokens in G groups
    bf16 = grouped_gemm_fraction("b200", "bf16")    # 13064.8, 14900.2, 15823.6, 14966.8 us: the middle two
    assert bf16.fraction == pytest.approx((fwd_bwd / 14900.2e-6 + fwd_bwd / 14966.8e-6) / 2 / B200_BF16_DENSE, rel=1e-9)
    assert bf16.fraction == pytest.approx(0.4326, abs=1e-4)


def test_siblings_borrow_and_the_unmeasured_keep_the_dense_gemm():
    for chip, sibling in (("gb200", "b200"), ("gb300", "b200"), ("h100", "h800")):
        g = grouped_gemm_fraction(chip, "fp8")
        assert g.fraction == grouped_gemm_fraction(sibling, "fp8").fraction and "BORROWED" in g.note
    for chip, precision in (("h100", "bf16"), ("tpu-v5p", "bf16"), ("a100", "bf16")):
        g = grouped_gemm_fraction(chip, precision)
        assert g.fraction == 1.0 and g.rows == () and "no published grouped-GEMM timing" in g.note
    with pytest.raises(ValueError, match="precision"):
        grouped_gemm_fraction("h800", "fp16")


def test_an_expert_gemm_runs_at_the_dense_fraction_times_the_grouped_one():
    # H800 FP8, one expert of 4,096 tokens, N 4096, K 7168: 1,024 tiles of 128x128 in 8 waves of 132 SMs (0.970)
    want = 2 * 4096 * 4096 * 7168 / (H100_FP8_DENSE * 0.91259 * 1024 / (8 * 132))
    assert grouped_model_time_s("h800", "fp8", 1, 4096, 4096, 7168, 1) == pytest.approx(want, rel=1e-4)
    assert want == pytest.approx(193.8e-6, rel=1e-3)


def test_moe_estimates_say_which_grouped_fraction_they_use():
    est = training.estimate("deepseek-v3", "b200", 256, 4096 * 1024, 4096, pp=16, ep=8, precision="fp8")
    assert any("routed-expert GEMMs at 67%" in a for a in est.assumptions)
    dense = training.estimate("llama3-8b", "b200", 8, 4096 * 64, 4096, precision="fp8")
    assert not any("routed-expert" in a for a in dense.assumptions)


@pytest.fixture(scope="module")
def table():
    return training.term_validation_table().set_index("id")


def test_dispatch_over_two_nodes_is_bound_by_nvlink_forwarding(table):
    # EP16 over 2 H800 nodes, bf16 combine: every copy of 4,096 x 8 x 7,168 x 2 B lands in its destination node and
    # 7/8 of it crosses NVLink (200 GB/s x 0.82); a token reaches min(8, 4, 2) = 2 nodes, one remote, over 50 GB/s x
    # 0.82 of InfiniBand; plus 7 NVLink steps of 3.4 us and one network step of 14 us
    t_in = 4096 * 8 * 7168 * 2 * 7 / 8 / 164e9
    t_out = 4096 * 2 * 7168 * 2 * 1 / 2 / 41e9
    assert t_in > t_out
    assert table.loc["deepep-h800-internode-ep16-combine", "model_s"] == pytest.approx(
        t_in + 7 * 3.4e-6 + 14e-6, rel=1e-9)


def test_dispatch_over_eight_nodes_is_bound_by_the_network(table):
    # EP64 over 8 nodes: min(8, 4, 8) = 4 nodes a token, 7/8 of them remote
    t_out = 4096 * 4 * 7168 * 2 * 7 / 8 / 41e9
    assert table.loc["deepep-h800-internode-ep64-combine", "model_s"] == pytest.approx(
        t_out + 7 * 3.4e-6 + 7 * 14e-6, rel=1e-9)
    # and the FP8 dispatch moves 1 + 4/128 bytes an element
    t_fp8 = 4096 * 4 * 7168 * 1.03125 * 7 / 8 / 41e9
    assert table.loc["deepep-h800-internode-ep64-dispatch", "model_s"] == pytest.approx(
        t_fp8 + 7 * 3.4e-6 + 7 * 14e-6, rel=1e-9)


def test_the_grouped_inputs_are_in_the_package_table_only(table, tmp_path):
    ids = {g.id for g in load_grouped_gemm_timings()}
    assert ids <= set(table.index)
    assert table.loc[sorted(ids), "case"].str.contains("an input of the grouped-GEMM fraction").all()
    p = tmp_path / "terms.toml"
    p.write_text('[k]\nterm = "elementwise"\ncase = "a kernel"\nchip = "h100"\nbytes_moved = 1e9\n'
                 'published_tb_s = { value = 2.5, src = "quack-membound-blog" }\n', encoding="utf-8")
    assert list(training.term_validation_table(p)["id"]) == ["k"]


def test_a_permute_streams_at_the_elementwise_kernels_bandwidth(table):
    # 4,096 tokens of 7,168 in bf16 read once and written as 8 copies: 2 x 4096 x 7168 x 9 B, at H200's BabelStream
    # 4.15 TB/s x 0.732 (the median of Liger PR 1257's H100 RMSNorm timings over H100's 2.97 TB/s, borrowed)
    frac = (4 * 4096 * 4096 / 0.033e-3 + 4 * 4096 * 4096 / 0.029e-3) / 2 / 2.97e12
    want = 2 * 4096 * 7168 * 9 / (4.15e12 * frac)
    assert table.loc["tileops-h200-permute-4096x8-h7168", "model_s"] == pytest.approx(want, rel=1e-3)
    # slower than STREAM, still faster than both published kernels (2.40 and 1.92 TB/s)
    assert want > 2 * 4096 * 7168 * 9 / 4.15e12 and want < 220.384e-6


GOOD_TIMING = '''[g]
chip = "h800"
precision = "fp8"
kernel = "a grouped GEMM"
groups = 2
m_per_group = 1024
n = 4096
k = 7168
gemms = 1
tflop_s = { value = 1000, src = "deepgemm-readme-2025-04" }
'''


@pytest.mark.parametrize("bad, key", [
    (GOOD_TIMING.replace('precision = "fp8"', 'precision = "fp16"'), "precision"),
    (GOOD_TIMING.replace("gemms = 1", "gemms = 2"), "gemms"),
    (GOOD_TIMING.replace("groups = 2", "groups = 0"), "groups"),
    (GOOD_TIMING + 'time_us = { value = 10, src = "deepgemm-readme-2025-04" }\n', "tflop_s"),
    (GOOD_TIMING.replace("value = 1000", "value = 5000"), "tflop_s"),     # above the H800's 1,979 TFLOP/s peak
])
def test_a_malformed_timing_names_its_key(tmp_path, bad, key):
    p = tmp_path / "grouped.toml"
    p.write_text(bad, encoding="utf-8")
    with pytest.raises(CatalogueError) as err:
        load_grouped_gemm_timings(p)
    assert err.value.key == key and "[g]" in str(err.value)


def test_a_good_timing_is_read(tmp_path):
    p = tmp_path / "grouped.toml"
    p.write_text(GOOD_TIMING, encoding="utf-8")
    (g,) = load_grouped_gemm_timings(p)
    assert g.time_s == pytest.approx(2 * 2 * 1024 * 4096 * 7168 / 1000e12)
    assert g.fraction == pytest.approx(1000e12 / H100_FP8_DENSE)


def test_an_all_to_all_row_with_no_ranks_names_ep(tmp_path):
    p = tmp_path / "terms.toml"
    p.write_text('[a]\nterm = "all_to_all"\ncase = "x"\ncluster = "dgx-h800"\nmodel = "deepseek-v3"\nep = 0\n'
                 'tokens = 4096\nbytes_per_element = 2\ndestinations_per_token = 5.3\n'
                 'published_gb_s = { value = 150, src = "deepep-readme-2025-04" }\n', encoding="utf-8")
    with pytest.raises(CatalogueError) as err:
        training.term_measurements(p)
    assert err.value.key == "ep"
