"""A user's own runs and chips (issue 29): a runs file with its own [sources], registry changes seen by
every cached estimate, a registered chip slower than a measured bandwidth table for its id."""

from __future__ import annotations

import dataclasses
import importlib
import pkgutil
import warnings

import pytest

import accelbook
import accelbook as ab
from accelbook.specs import catalogue, measured
from accelbook.specs.chips import get_chip
from accelbook.specs.loader import CatalogueError
from accelbook.specs.measured import achievable_hbm_fraction, default_hbm_fraction
from accelbook.training import validation
from accelbook.training.step import estimate
from accelbook.training.validation import published_runs, run_estimate, validation_table

MY_SOURCE = '''
[sources.my-report]
title = "Our 8B run on 8 B200 (internal report)"
url = "https://example.org/our-8b-run"
date = "2025-06"
kind = "primary"
'''

# everything pinned: the search has one layout to try per recompute choice (fast, and the expected
# estimate is the one estimate() call below)
RUN = '''
[my-8b-run]
name = "Llama 3.1 8B on 8 B200 (our report)"
model = "llama-3.1-8b"
chip = "{chip}"
n_chips = 8
seq_len = 4096
global_batch_sequences = 64
tp = 1
pp = 1
zero_stage = 1
recompute = "none"
metric = "mfu"
convention = "model_causal"
reported = {{ value = 0.40, src = "{src}", note = "Table 2" }}
role = "target"
'''


def _runs_file(tmp_path, chip="b200", sources=True, src="my-report"):
    path = tmp_path / "my_runs.toml"
    path.write_text((MY_SOURCE if sources else "") + RUN.format(chip=chip, src=src))
    return path


@pytest.fixture(autouse=True)
def _isolated_registry():
    yield
    ab.clear_registered()


# -- 1. a user's file with its own [sources] --------------------------------------------------------------

def test_user_runs_file_cites_its_own_source(tmp_path):
    t = validation_table(_runs_file(tmp_path))
    assert list(t["id"]) == ["my-8b-run"]          # the [sources] table is not read as a run
    row = t.iloc[0]
    assert row["source"] == "Our 8B run on 8 B200 (internal report)"
    assert row["reported"] == 0.40 and 0 < row["predicted"] < 1


def test_user_sources_stay_in_their_file(tmp_path):
    validation_table(_runs_file(tmp_path))
    from accelbook.specs.loader import load_sources
    assert "my-report" not in load_sources()       # the shipped catalogue is unchanged


def test_run_citing_an_unknown_source_is_refused_naming_it(tmp_path):
    path = _runs_file(tmp_path, sources=False)
    with pytest.raises(CatalogueError) as e:
        validation_table(path)
    msg = str(e.value)
    assert "'my-report'" in msg and str(path) in msg and "[my-8b-run]" in msg and "'reported'" in msg


def test_malformed_user_source_names_the_file_and_key(tmp_path):
    path = tmp_path / "bad.toml"
    path.write_text(MY_SOURCE.replace('url = "https://example.org/our-8b-run"\n', "") + RUN.format(chip="b200", src="my-report"))
    with pytest.raises(CatalogueError) as e:
        validation_table(path)
    assert str(path) in str(e.value) and "[sources.my-report]" in str(e.value) and "'url'" in str(e.value)


# -- 2. register(replace=True) and unregister reach every cached estimate -----------------------------------

def test_replacing_a_chip_reaches_the_cached_validation_path(tmp_path):
    path = _runs_file(tmp_path, chip="b200", sources=False, src="narayanan-2021")   # a source of the package
    e = published_runs(path)["my-8b-run"]
    before_table = validation_table(path).iloc[0]["predicted"]
    before_step = run_estimate(e)[2].step_time_s
    b200 = get_chip("b200")
    slow = dataclasses.replace(b200, hbm_bw_bytes_per_s=b200.hbm_bw_bytes_per_s / 2)
    # what the model gives for the slow chip, from estimate() with the object (no id, no cache)
    direct = estimate("llama-3.1-8b", slow, 8, 64 * 4096, 4096, tp=1, pp=1, zero_stage=1, recompute="none")
    assert direct.step_time_s > before_step          # half the bandwidth: the HBM-bound terms take longer

    ab.register(slow, replace=True)
    assert get_chip("b200").hbm_bw_bytes_per_s == b200.hbm_bw_bytes_per_s / 2
    # b200 has no measurement: it borrows h200's fraction (4.15 / 4.8), applied to the user's peak
    assert achievable_hbm_fraction("b200").measured_bytes_per_s == pytest.approx(4.15 / 4.8 * 4e12)
    assert run_estimate(e)[2].step_time_s == pytest.approx(direct.step_time_s, rel=1e-12)
    assert validation_table(path).iloc[0]["predicted"] < before_table
    by_id = estimate("llama-3.1-8b", "b200", 8, 64 * 4096, 4096, tp=1, pp=1, zero_stage=1, recompute="none")
    assert by_id.step_time_s == pytest.approx(direct.step_time_s, rel=1e-12)

    ab.unregister("b200")
    assert run_estimate(e)[2].step_time_s == before_step
    assert validation_table(path).iloc[0]["predicted"] == before_table


def test_registry_changes_clear_the_session_caches(tmp_path):
    validation_table(_runs_file(tmp_path, sources=False, src="narayanan-2021"))
    assert validation._cached_run_best.cache_info().currsize > 0
    ab.register(dataclasses.replace(get_chip("b200"), hbm_bw_bytes_per_s=4e12), replace=True)
    for cached in (validation._cached_run_best, validation._default_table, validation._default_band,
                   measured.load_hbm_bandwidth):
        assert cached.cache_info().currsize == 0


# caches whose result reads no catalogue entry (a file of numbers, or a frozen object passed by value)
CATALOGUE_FREE = {
    "accelbook.checks._field_names", "accelbook.chip.design_params.builtin_params",
    "accelbook.economics.claim_scenarios._crossover", "accelbook.economics.tco._read_tco_inputs",
    "accelbook.inference.parallel._decode_attention_flops",
    "accelbook.inference.rates.elementwise_bytes_per_token", "accelbook.inference.workload._draw_remembered",
    "accelbook.specs.formats.load_formats", "accelbook.specs.formats.load_quantisation_results",
    "accelbook.specs.measured.load_launch_overhead", "accelbook.specs.measured.load_moe_balance",
    "accelbook.specs.system_power.default_pue", "accelbook.training.framework.framework_defaults",
    "accelbook.training.goodput.published_goodput", "accelbook.training.validation._published_runs",
}


def test_every_module_cache_is_cleared_by_the_registry_or_reads_no_catalogue_entry():
    for info in pkgutil.walk_packages(accelbook.__path__, "accelbook."):
        importlib.import_module(info.name)
    hooked = {id(clear.__self__) for clear in catalogue.invalidated()}
    unhooked = set()
    for info in pkgutil.walk_packages(accelbook.__path__, "accelbook."):
        mod = importlib.import_module(info.name)
        for name, obj in vars(mod).items():
            if callable(getattr(obj, "cache_clear", None)) and hasattr(obj, "cache_info") \
                    and getattr(obj, "__module__", None) == mod.__name__ and id(obj) not in hooked:
                unhooked.add(f"{mod.__name__}.{name}")
    assert unhooked == CATALOGUE_FREE


# -- 3. a registered chip slower than a measured bandwidth table for its id -------------------------------

def test_registered_chip_below_its_measured_bandwidth_drops_the_measurement():
    h100 = get_chip("h100")
    assert achievable_hbm_fraction("h100").measured_bytes_per_s == 2.97e12     # BabelStream Triad on H100
    shape = dict(model="llama-3.1-8b", n_chips=8, global_batch_tokens=64 * 4096, seq_len=4096, recompute="full")
    before = estimate(chip="h100", **shape).step_time_s
    slow = dataclasses.replace(h100, hbm_bw_bytes_per_s=1.5e12)               # below the measured 2.97 TB/s
    ab.register(slow, replace=True)                                           # accepted
    with pytest.warns(UserWarning) as rec:
        m = achievable_hbm_fraction("h100")
    msg = str(rec[0].message)
    assert "h100" in msg and "2.97 TB/s" in msg and "1.50 TB/s" in msg
    # h100 has no sibling to borrow from: the default, the mean of the other measured chips' fractions
    expected = (1.70 / 2.039 + 4.15 / 4.8 + 4.09 / 5.3) / 3
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert default_hbm_fraction() == pytest.approx(expected, rel=1e-12)
    assert m.provenance is None and m.fraction == pytest.approx(expected, rel=1e-12)
    assert m.measured_bytes_per_s == pytest.approx(expected * 1.5e12, rel=1e-12)
    assert "h100" not in measured.load_hbm_bandwidth()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert estimate(chip="h100", **shape).step_time_s > before            # estimated, with the user's bandwidth
    ab.unregister("h100")                                                     # the measurement is back
    assert achievable_hbm_fraction("h100").measured_bytes_per_s == 2.97e12


def test_shipped_chip_below_a_measured_figure_is_still_a_data_error(tmp_path):
    path = tmp_path / "hbm.toml"
    path.write_text('[h100]\nhbm_achievable_tb_s = { value = 3.9, src = "azure-aibench-nd-h100-v5" }\n')
    with pytest.raises(CatalogueError, match="above the chip's peak"):
        measured.load_hbm_bandwidth(path)


def test_registered_chip_below_its_measured_gemm_and_attention_drops_them():
    h100 = get_chip("h100")
    shape = dict(model="llama-3.1-8b", n_chips=8, global_batch_tokens=64 * 4096, seq_len=4096, recompute="full")
    before = estimate(chip="h100", **shape).step_time_s
    half = {p: v / 2 for p, v in h100.peak_dense_flop_s.items()}     # 495 bf16 TFLOP/s: below the measured GEMMs
    ab.register(dataclasses.replace(h100, peak_dense_flop_s=half), replace=True)
    with pytest.warns(UserWarning) as rec:
        after = estimate(chip="h100", **shape).step_time_s
    words = " ".join(str(r.message) for r in rec)
    assert "h100" in words and "TFLOP/s GEMM measured" in words and "attention measured" in words
    assert after > before
    from accelbook.specs.efficiency import measured_efficiency
    # the GEMM fraction measured on the package's H100 (794.5 of 989.4 TFLOP/s), applied to the user's peak
    assert measured_efficiency("h100")[0].fraction == pytest.approx(794.5 / 989.4, rel=1e-12)
    ab.unregister("h100")
    assert estimate(chip="h100", **shape).step_time_s == before
