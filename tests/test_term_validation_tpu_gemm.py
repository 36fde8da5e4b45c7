"""The TPU GEMM rows of the term table (term "tpu_gemm", data/term_measurements.toml) and the TPU measured
GEMM efficiencies they check (data/matmul_efficiency.toml).

Published times are typed here from the sources' printed numbers: tpu-recipes' v6e matmul README (8192^3 bf16,
827.474 TFLOP/s from the trace, 754.221 on the host), the Ironwood microbenchmark sweep (TFLOP/s per TensorCore
device, two to a chip), the Pallas tutorial's v5e figures. Model times are worked by hand from
max(2MNK / (P·η_meas·η_shape), bytes / B) with the MXU fold model, which at M = N = K = n (a multiple of the MXU
side m, n_mxu = 4 and (n/m)² folds a multiple of 4) is η_shape = n / (3m + n - 2).
"""

from __future__ import annotations

import pytest

from accelbook import training
from accelbook.specs.loader import CatalogueError

HAND = {   # row id -> published seconds
    "pallas-v5e-xla-8192": 2 * 8192**3 / 181.8e12,
    "pallas-v5e-xla-4096": 2 * 4096**3 / 166.1e12,
    "tpu-recipes-v6e-8192-trace": 2 * 8192**3 / 827.47e12,      # 1.3288 ms, the README's median
    "tpu-recipes-v6e-8192-host": 2 * 8192**3 / 754.22e12,       # 1.4578 ms
    "ironwood-gemm-32768": 2 * 32768**3 / (2 * 956.3824592e12),
    "ironwood-gemm-16384": 2 * 16384**3 / (2 * 950.1286983e12),
    "ironwood-gemm-4096": 2 * 4096**3 / (2 * 892.9445127e12),
    "ironwood-gemm-2048": 2 * 2048**3 / (2 * 679.284728e12),
    "ironwood-gemm-1024": 2 * 1024**3 / (2 * 349.7270639e12),
}


@pytest.fixture(scope="module")
def table():
    t = training.term_validation_table().set_index("id")
    return t[t["term"] == "tpu_gemm"]


def test_published_times_are_the_sources_figures(table):
    assert set(table.index) == set(HAND)
    for rid, want in HAND.items():
        assert table.loc[rid, "published_s"] == pytest.approx(want, rel=1e-9), rid
    assert table.loc["tpu-recipes-v6e-8192-trace", "published_s"] == pytest.approx(1.328756e-3, rel=1e-5)


def test_model_times_by_hand(table):
    # v6e: η_meas = 827.5/918, m = 256: η_shape = 8192/(768 + 8190) = 8192/8958, so t = 2·8192²·8958 / 827.5e12
    assert table.loc["tpu-recipes-v6e-8192-trace", "model_s"] == pytest.approx(2 * 8192**2 * 8958 / 827.5e12, rel=1e-9)
    # TPU7x: η_meas = 1912.8/2307 per chip, m = 256 and 4 MXUs assumed: 4096/(768 + 4094) = 4096/4862
    assert table.loc["ironwood-gemm-4096", "model_s"] == pytest.approx(2 * 4096**2 * 4862 / 1912.8e12, rel=1e-9)
    # v5e: η_meas = 181.8/197, m = 128: 4096/(384 + 4094) = 4096/4478
    assert table.loc["pallas-v5e-xla-4096", "model_s"] == pytest.approx(2 * 4096**2 * 4478 / 181.8e12, rel=1e-9)


def test_the_fold_model_costs_what_it_adds_at_the_measured_shape(table):
    # at the shape η_meas was measured at, the model is slower by 1/η_shape - 1: 8958/8192 - 1 = +9.35 % (v6e)
    assert table.loc["tpu-recipes-v6e-8192-trace", "error"] == pytest.approx(8958 / 8192 * 827.47 / 827.5 - 1, rel=1e-6)
    assert table.loc["tpu-recipes-v6e-8192-trace", "error"] == pytest.approx(0.0935, abs=5e-4)


def _write(tmp_path, body):
    p = tmp_path / "terms.toml"
    p.write_text(body, encoding="utf-8")
    return p


GOOD = '''[g]
term = "tpu_gemm"
case = "a GEMM"
chip = "tpu-v5e"
mnk = [1024, 2048, 4096]
published_tflop_s = { value = 100, src = "jax-pallas-tpu-matmul" }
'''


def test_a_users_row_is_read(tmp_path):
    t = training.term_validation_table(_write(tmp_path, GOOD))
    assert t["published_s"].iloc[0] == pytest.approx(2 * 1024 * 2048 * 4096 / 100e12)


@pytest.mark.parametrize("bad, key", [
    (GOOD.replace("mnk = [1024, 2048, 4096]", "mnk = [1024, 2048]"), "mnk"),
    (GOOD.replace("mnk = [1024, 2048, 4096]", "mnk = [1024, 0, 4096]"), "mnk"),
    (GOOD + "devices_per_chip = 0\n", "devices_per_chip"),
    (GOOD.replace("{ value = 100, src = \"jax-pallas-tpu-matmul\" }", "100"), "published_tflop_s"),
])
def test_a_malformed_row_names_its_key(tmp_path, bad, key):
    with pytest.raises(CatalogueError) as err:
        training.term_measurements(_write(tmp_path, bad))
    assert err.value.key == key and "[g]" in str(err.value)
