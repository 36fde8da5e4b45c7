"""The measurement kit (accelbook.measure): its counting against hand arithmetic, its file against the chip loader
(ab.register), the roofline of what it measured, its command line. No timing is asserted: the CPU runs use tiny
sizes and only check that what was written equals what was reported. The GPU path runs only where a GPU is."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest

import accelbook as ab
from accelbook import measure
from accelbook.chip.roofline import roofline_curve, roofline_curves_columns
from accelbook.measure import cpu, gpu, timing
from accelbook.measure.results import allreduce_bus_bytes_per_s, gemm_flop, stream_bytes, stream_bytes_per_s
from accelbook.specs.catalogue import is_registered
from accelbook.specs.loader import CatalogueError
from accelbook.ui.charts.chip import roofline_chart

TINY = dict(shapes=((32, 32, 32), (8, 64, 16)), stream_n=4096, repeats=1, warmup=0, threads=2, log=None)
GPU, WHY_NO_GPU = gpu.available("auto")


@pytest.fixture
def kit_file(tmp_path):
    path = tmp_path / "mine.toml"
    (m,) = measure.run("numpy", out=path, **TINY)
    yield path, m
    if is_registered(m.chip_id):
        ab.unregister(m.chip_id)


# -- counting, against hand arithmetic ------------------------------------------------------------------------
def test_stream_bytes_count_reads_and_the_write_as_stream_does():
    # McCalpin: Copy, Scale 2 arrays per element; Add, Triad 3 (two reads, one write; no write-allocate)
    assert stream_bytes("triad", 10_000_000, 8) == 240_000_000
    assert stream_bytes("add", 10_000_000, 8) == 240_000_000
    assert stream_bytes("copy", 10_000_000, 8) == 160_000_000
    assert stream_bytes("scale", 1000, 4) == 8000
    assert stream_bytes_per_s("triad", 10_000_000, 8, 0.02) == pytest.approx(1.2e10, rel=1e-15)
    assert stream_bytes_per_s("copy", 2**20, 4, 0.5) == 2**23 / 0.5 * 2 / 2   # 2 arrays x 4 MiB / 0.5 s


def test_gemm_and_allreduce_counting():
    assert gemm_flop(2, 3, 4) == 48
    assert gemm_flop(1024, 1024, 1024) == 2_147_483_648
    # nccl-tests: busbw = S/t * 2(n-1)/n: 1 GB in 0.1 s on 8 ranks -> 1e10 * 14/8
    assert allreduce_bus_bytes_per_s(1e9, 8, 0.1) == pytest.approx(1.75e10, rel=1e-15)


@pytest.mark.parametrize("call, name", [
    (lambda: stream_bytes("dot", 10, 8), "kernel"), (lambda: stream_bytes("copy", 0, 8), "n"),
    (lambda: stream_bytes_per_s("copy", 10, 8, 0.0), "seconds"), (lambda: gemm_flop(1, 2.5, 3), "k"),
    (lambda: allreduce_bus_bytes_per_s(1e6, 1, 1.0), "ranks"), (lambda: timing.check_shapes([(1, 2)]), "shapes[0]"),
    (lambda: measure.run("tpu"), "backend"), (lambda: measure.run("numpy", repeats=0), "repeats"),
])
def test_bad_arguments_name_themselves(call, name):
    with pytest.raises(ValueError) as err:
        call()
    assert str(err.value).startswith(f"{name} "), err.value


def test_median_of_repeats_after_warmup(monkeypatch):
    # a fake clock: the warm-up call is not timed; three timed calls take 1, 3 and 2 s -> median 2
    ticks = iter([0.0, 1.0, 1.0, 4.0, 4.0, 6.0])
    monkeypatch.setattr(timing.time, "perf_counter", lambda: next(ticks))
    calls = []
    assert timing.median_seconds(lambda: calls.append(1), repeats=3, warmup=1) == 2.0
    assert len(calls) == 4


def test_stream_array_size_follows_streams_rule():
    assert cpu.stream_elements(32 * 2**20, 8) == 4 * 32 * 2**20 // 8   # four times the last-level cache
    assert cpu.stream_elements(1024, 8) == 2**20                       # and never tiny


# -- the CPU kit's file, through the chip loader -------------------------------------------------------------
def test_cpu_kit_writes_a_chip_that_register_accepts(kit_file):
    path, m = kit_file
    (chip,) = ab.register(path, replace=True)
    assert chip.id == m.chip_id and chip.kind == "cpu" and ab.get_chip(m.chip_id) == chip
    best = max(g.flop_s for g in m.gemm if g.dtype == "fp32")
    triad = next(s for s in m.stream if s.kernel == "triad")
    assert math.isfinite(best) and best > 0 and math.isfinite(triad.bytes_per_s) and triad.bytes_per_s > 0
    assert chip.peak_flop_s("fp32") == pytest.approx(best, rel=1e-12)          # the timing it reported
    assert chip.memory_bw_bytes_per_s == pytest.approx(triad.bytes_per_s, rel=1e-12)
    assert chip.precisions == ("fp32",)   # fp64 is measured but is no catalogue precision
    assert "DRAM, not HBM" in chip.provenance["hbm_bw_bytes_per_s"].note
    assert chip.provenance["peak_dense_fp32"].source.date == m.provenance["date"]


def test_the_file_holds_every_timing_with_provenance(kit_file):
    path, m = kit_file
    back = measure.read_measurements(path)[m.chip_id]
    assert back.gemm == m.gemm and back.stream == m.stream and back.skipped == m.skipped
    assert len(m.gemm) == 4 and {g.dtype for g in m.gemm} == {"fp32", "fp64"}
    for key in ("kind", "date", "host", "cpu_model", "numpy", "blas", "python"):
        assert back.provenance[key], key
    assert back.provenance["kind"] == "measured" and back.provenance["numpy"] == np.__version__
    assert any("all-reduce" in s for s in m.skipped)
    for s in m.stream:   # the rate is the bytes STREAM counts over the median time
        assert s.bytes_moved == {"copy": 2, "scale": 2, "add": 3, "triad": 3}[s.kernel] * 4096 * 8
        assert s.bytes_per_s == pytest.approx(s.bytes_moved / s.seconds, rel=1e-15)
    for g in m.gemm:
        assert g.flop_s == pytest.approx(2 * g.m * g.k * g.n / g.seconds, rel=1e-15)


def test_the_registered_chips_roofline_is_drawable(kit_file):
    path, m = kit_file
    (chip,) = ab.register(path, replace=True)
    cols = roofline_curves_columns([chip], "fp32")
    ridge = chip.peak_flop_s("fp32") / chip.memory_bw_bytes_per_s
    assert cols["ridge_flop_per_byte"][0] == pytest.approx(ridge, rel=1e-12)
    high = cols["intensity_flop_per_byte"] >= ridge
    assert np.allclose(cols["attainable_flop_s"][high], chip.peak_flop_s("fp32"), rtol=1e-12)
    fig = roofline_chart(pd.concat([roofline_curve(chip, "fp32"), roofline_curve("h100", "bf16")]))
    ridges = {r["chip"]: r["ridge_flop_per_byte"] for r in fig.spec["datasets"]["ridges"]}
    assert ridges == pytest.approx({chip.name: ridge, ab.get_chip("h100").name: 989.4e12 / 3.35e12}, rel=1e-9)
    assert "<svg" in fig.to_svg()


def test_loader_checks_the_measured_tables(kit_file, tmp_path):
    path, m = kit_file
    text = path.read_text()
    stray = tmp_path / "stray.toml"
    stray.write_text(text + "\n[measured.nobody]\nkind = \"measured\"\n")
    with pytest.raises(CatalogueError, match=r"measured\.nobody"):
        ab.load_chips(stray)
    extra = tmp_path / "extra.toml"
    extra.write_text(text.replace("fraction_of_peak =", "colour = 1, fraction_of_peak =", 1))
    with pytest.raises(CatalogueError, match="colour"):
        measure.read_measurements(extra)
    assert len(ab.load_chips(extra)) == 1   # the chip loader leaves the timings to read_measurements
    negative = tmp_path / "negative.toml"
    negative.write_text(text.replace("seconds = ", "seconds = -", 1))
    with pytest.raises(CatalogueError, match="seconds"):
        measure.read_measurements(negative)
    typo = tmp_path / "typo.toml"   # the chip entry's own key checks are untouched
    typo.write_text(text.replace("hbm_bw_gb_s", "hbm_bw_gbs"))
    with pytest.raises(CatalogueError, match="hbm_bw"):
        ab.load_chips(typo)


# -- the command line ---------------------------------------------------------------------------------------
def test_main_writes_and_prints_json(monkeypatch, tmp_path, capsys):
    monkeypatch.setattr(measure, "QUICK_SHAPES", ((16, 16, 16),))
    monkeypatch.setattr(cpu, "last_level_cache_bytes", lambda: 2**14)   # STREAM's floor: 2**20 elements
    out = tmp_path / "cli.toml"
    assert measure.main(["--backend", "numpy", "--quick", "--json", "--out", str(out)]) == 0
    doc = json.loads(capsys.readouterr().out)
    (row,) = doc["measurements"]
    assert doc["out"] == str(out) and row["backend"] == "numpy" and row["provenance"]["kind"] == "measured"
    assert row["stream"][0]["n"] == 2**20
    chip = ab.load_chips(out)[0]
    assert chip.peak_flop_s("fp32") == pytest.approx(row["peak_flop_s"]["fp32"], rel=1e-12)
    assert chip.hbm_bw_bytes_per_s == pytest.approx(row["bandwidth_bytes_per_s"], rel=1e-12)


def test_main_refuses_a_bad_backend(capsys):
    with pytest.raises(SystemExit) as exc:
        measure.main(["--backend", "tpu"])
    assert exc.value.code == 2 and "--backend" in capsys.readouterr().err


@pytest.mark.skipif(GPU is not None, reason="a GPU is usable here: the unusable-backend message is not shown")
def test_an_unusable_gpu_backend_is_a_clear_error(capsys):
    assert measure.main(["--backend", "torch"]) == 2
    err = capsys.readouterr().err
    assert "torch" in err and ("PyTorch" in err), err


# -- the GPU path: only where PyTorch with a GPU, or CuPy with a device, is present -------------------------
@pytest.mark.skipif(GPU is None, reason=f"no usable GPU backend: {WHY_NO_GPU}")
def test_gpu_kit_writes_a_chip_that_register_accepts(tmp_path):
    path = tmp_path / "gpu.toml"
    ms = measure.run("auto", quick=True, out=path, shapes=((16, 16, 16),), gpu_shapes=((256, 256, 256),),
                     stream_n=4096, repeats=2, warmup=1, log=None)
    gpu_m = next(m for m in ms if m.device != "cpu")
    chips = {c.id: c for c in ab.register(path, replace=True)}
    try:
        chip = chips[gpu_m.chip_id]
        assert chip.kind == "gpu"
        for dtype in gpu_m.dtypes:
            if dtype in chip.precisions:
                assert chip.peak_flop_s(dtype) == pytest.approx(gpu_m.peak_flop_s(dtype), rel=1e-12)
        assert chip.memory_bw_bytes_per_s == pytest.approx(gpu_m.bandwidth_bytes_per_s, rel=1e-12)
        assert roofline_curves_columns([chip], gpu_m.dtypes[0])["attainable_flop_s"].max() > 0
    finally:
        ab.unregister(*chips)
