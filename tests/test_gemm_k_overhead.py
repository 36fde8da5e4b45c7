"""A GPU GEMM tile's fixed cost against the length of its K loop (accelbook.costs.gemm.gemm_k_efficiency,
data/gemm_k_overhead.toml) and the gemm rows of the term table (data/term_measurements.toml).

Expected values are worked by hand from the formula in the docstrings and the sources' printed figures
(DeepGEMM's README table, float8_experimental PR 38, pyptx's performance page, MAMF's table).
"""

from __future__ import annotations

import pytest

from accelbook import training
from accelbook.costs.gemm import gemm_k_efficiency
from accelbook.specs.chips import get_chip
from accelbook.specs.clusters import cluster_for
from accelbook.specs.efficiency import gemm_k_overhead, measured_efficiency
from accelbook.specs.loader import CatalogueError
from accelbook.training.compute import gemm_time
from accelbook.training.records import chip_record


def test_k_efficiency_by_hand():
    # H100 bf16: K0 = 250, MAMF's best K = 13312. Llama 70B's out-projection at TP 8 (K = 1024):
    assert gemm_k_efficiency(1024.0, 250.0, 13312.0) == pytest.approx((1024 / 1274) / (13312 / 13562), rel=1e-15)
    assert gemm_k_efficiency(1024.0, 250.0, 13312.0) == pytest.approx(0.8189, abs=1e-4)
    assert gemm_k_efficiency(13312.0, 250.0, 13312.0) == pytest.approx(1.0, rel=1e-15)   # the measured K itself
    assert gemm_k_efficiency(16384.0, 250.0, 13312.0) == 1.0                             # never above MAMF
    assert gemm_k_efficiency(512.0, 500.0, 0.0) == pytest.approx(512 / 1012, rel=1e-15)  # no measured shape
    assert gemm_k_efficiency(512.0, 0.0, 14336.0) == 1.0                                 # no overhead (TPU)
    assert gemm_k_efficiency(0.5, 500.0, 0.0) == pytest.approx(1 / 501, rel=1e-15)       # K rounded up to 1


def test_k_overhead_per_precision():
    assert gemm_k_overhead("fp8") == 500.0      # data/gemm_k_overhead.toml, fit to DeepGEMM's table
    assert gemm_k_overhead("bf16") == 250.0     # a bf16 slice of K takes twice an fp8 one
    with pytest.raises(ValueError, match="precision"):
        gemm_k_overhead("fp4")


def test_measured_shapes_are_mamfs():
    assert measured_efficiency("h100", "bf16")[0].shape == (2048, 2048, 13312)
    assert measured_efficiency("h100", "fp8")[0].shape == (1024, 9216, 14336)
    assert measured_efficiency("h800", "fp8")[0].shape == (1024, 9216, 14336)   # borrowed with H100's figure
    assert measured_efficiency("tpu-v5e", "bf16")[0].shape is None


def test_chip_record_carries_the_overhead_on_gpus_only():
    h = chip_record(get_chip("h100"), cluster_for("h100"), "fp8")[0]
    assert (h["gemm_k0"], h["gemm_k_ref"], h["gemm_k0_bf16"], h["gemm_k_ref_bf16"]) == (500.0, 14336.0, 250.0, 13312.0)
    t = chip_record(get_chip("tpu-v5p"), cluster_for("tpu-v5p"), "bf16")[0]
    assert t["gemm_k0"] == 0.0 and t["gemm_k0_bf16"] == 0.0


def test_gemm_time_by_hand():
    c = chip_record(get_chip("h100"), cluster_for("h100"), "bf16")[0]
    # 16384 x 8192 x 1024 bf16 on H100: 128 x 64 = 8192 tiles of 128 x 128 in 63 waves on 132 SMs
    eta = 794.5 / 989.4 * (8192 / (63 * 132)) * (1024 / 1274) / (13312 / 13562)
    want = 2 * 16384 * 8192 * 1024 / (989.4e12 * eta)
    assert gemm_time(16384.0, 8192.0, 1024.0, c) == pytest.approx(want, rel=1e-3)


@pytest.fixture(scope="module")
def gemm_rows():
    t = training.term_validation_table()
    return t[t["term"] == "gemm"].set_index("id")


def test_gemm_rows_published_times(gemm_rows):
    t = gemm_rows["published_s"]
    assert t["deepgemm-h800-fp8-4096x7168x16384"] == pytest.approx(2 * 4096 * 7168 * 16384 / 1520e12, rel=1e-12)
    assert t["cutlass36-h800-fp8-4096x7168x16384"] == pytest.approx(2 * 4096 * 7168 * 16384 / (1520 / 1.4 * 1e12),
                                                                    rel=1e-3)
    assert t["f8exp-h100-bf16-llama70b-attn-w0"] == pytest.approx(5.00e-4, rel=1e-12)
    assert t["cublas-b200-bf16-8192x8192x8192"] == pytest.approx(2 * 8192**3 / 1610e12, rel=1e-12)
    assert t["mamf-h100-bf16-best"] == pytest.approx(2 * 2048 * 2048 * 13312 / 794.5e12, rel=1e-12)


def test_gemm_rows_sets_and_model_call(gemm_rows):
    assert (gemm_rows["set"] == "fit").sum() == 6                       # DeepGEMM's six M = 4,096 rows
    assert gemm_rows.loc[gemm_rows["set"] == "fit"].index.str.startswith("deepgemm-").all()
    assert (gemm_rows["set"] == "held-out").sum() >= 20
    c = chip_record(get_chip("h800"), cluster_for("h800"), "fp8")[0]
    assert gemm_rows.loc["deepgemm-h800-fp8-4096x32768x512", "model_s"] == pytest.approx(
        gemm_time(4096.0, 32768.0, 512.0, c), rel=1e-12)


def test_mamf_rows_are_reproduced_where_the_tile_model_is_whole(gemm_rows):
    # at MAMF's own shape eta_K is 1, so the model is off only by the tile/wave loss it sees there:
    # B200 1792 x 16128 x 3072 bf16: 14 x 126 = 1764 tiles in 12 waves of 148 SMs, 1764/1776
    assert gemm_rows.loc["mamf-b200-bf16-best", "error"] == pytest.approx(1776 / 1764 - 1, abs=1e-6)


GOOD_GEMM = '''[k]
term = "gemm"
case = "a GEMM"
chip = "h100"
precision = "bf16"
m = 4096
n = 4096
k = 4096
set = "held-out"
published_tflop_s = { value = 700, src = "pyptx-performance" }
'''


def test_a_users_gemm_row(tmp_path):
    p = tmp_path / "t.toml"
    p.write_text(GOOD_GEMM, encoding="utf-8")
    t = training.term_validation_table(p)
    assert t["published_s"].iloc[0] == pytest.approx(2 * 4096**3 / 700e12) and t["set"].iloc[0] == "held-out"


@pytest.mark.parametrize("bad, key", [
    (GOOD_GEMM.replace('precision = "bf16"', 'precision = "fp4"'), "precision"),
    (GOOD_GEMM.replace("m = 4096", "m = 0"), "m"),
    (GOOD_GEMM.replace("k = 4096", "k = 40.5"), "k"),
    (GOOD_GEMM.replace('set = "held-out"', 'set = "train"'), "set"),
    (GOOD_GEMM.replace('published_tflop_s = { value = 700, src = "pyptx-performance" }', ""), "published_tflop_s"),
    (GOOD_GEMM + 'published_ms = { value = 1, src = "pyptx-performance" }\n', "published_tflop_s"),
    (GOOD_GEMM.replace('set = "held-out"\n', ""), "set"),
])
def test_a_malformed_gemm_row_names_its_key(tmp_path, bad, key):
    p = tmp_path / "t.toml"
    p.write_text(bad, encoding="utf-8")
    with pytest.raises(CatalogueError) as err:
        training.term_measurements(p)
    assert err.value.key == key and "[k]" in str(err.value)
