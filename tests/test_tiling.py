"""GPU tile/wave quantisation and TPU MXU padding, by hand; the @njit formulas against the checked
functions and a tile-by-tile reference."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from accelbook.chip.tiling import GPU_TILE, gpu_gemm, gpu_tile_factors, shape_sweep, tpu_gemm
from accelbook.costs.gemm import tpu_fold_efficiency


def test_h100_waves_by_hand():
    # 2048^2 output in 128x128 tiles: 16 * 16 = 256 tiles on 132 SMs -> 2 waves, 256 / 264 busy
    g = gpu_gemm(2048, 2048, 2048, sms=132)
    assert (g["tiles"], g["waves"]) == (256, 2)
    assert g["efficiency"] == pytest.approx(256 / 264)
    # 2304^2: 18 * 18 = 324 tiles -> 3 waves, 324 / 396
    g = gpu_gemm(2304, 2304, 2304, sms=132)
    assert (g["tiles"], g["waves"]) == (324, 3)
    assert g["eta_wave"] == pytest.approx(324 / 396)


def test_gpu_padding_by_hand():
    # 129 x 128 output: 2 x 1 tiles of 128 x 128 -> 129*128 / (256*128); K = 65 in slices of 64 -> 65 / 128
    g = gpu_gemm(129, 128, 65, sms=132)
    assert g["eta_pad"] == pytest.approx(129 / 256)
    assert g["eta_inner"] == pytest.approx(65 / 128)
    assert g["eta_wave"] == pytest.approx(2 / 132)


def test_tpu_by_hand():
    # 1 x 4096 x 4096 on eight 128x128 MXUs: 32 x 32 = 1024 weight tiles, 128 waves of 8,
    # each tile 2*128 + 1 + 128 - 2 = 383 cycles: efficiency = 4096^2 / (383 * 128 waves * 128^2 * 8)
    t = tpu_gemm(1, 4096, 4096, mxu=128, n_mxu=8)
    assert (t["tiles"], t["waves"]) == (1024, 128)
    assert t["efficiency"] == pytest.approx(4096 * 4096 / (383 * 128 * 128 * 128 * 8))
    # K = N = 200 on a 256 MXU pads to 256 x 256
    assert tpu_gemm(1000, 200, 200, mxu=256, n_mxu=1)["eta_pad"] == pytest.approx(200 * 200 / 256**2)


def test_efficiency_is_a_fraction_and_sweep_has_both():
    df = shape_sweep("N", [1, 100, 128, 129, 1000, 4096], 512, 512, 512)
    assert set(df["arch"]) == {"GPU", "TPU"}
    assert ((df["efficiency"] > 0) & (df["efficiency"] <= 1)).all()


@pytest.mark.parametrize("bad", [dict(M=0), dict(N=1.5), dict(K=-1), dict(sms=0)])
def test_invalid_input(bad):
    args = dict(M=8, N=8, K=8, sms=132)
    args.update(bad)
    with pytest.raises(ValueError, match="whole number"):
        gpu_gemm(**args)


# -- the @njit formulas the training kernel calls, against the checked entry points and a reference ---------
def _naive_gpu(M, N, K, sms, tile_m, tile_n, tile_k):
    """Tiles placed one by one: the padded output area, the padded K, SMs filled wave by wave."""
    tiles, padded_area = 0, 0
    for m0 in range(0, M, tile_m):
        for n0 in range(0, N, tile_n):
            tiles += 1
            padded_area += tile_m * tile_n
    padded_k = sum(tile_k for _ in range(0, K, tile_k))
    waves, placed = 0, 0
    while placed < tiles:
        waves += 1
        placed += sms
    return tiles, waves, M * N / padded_area, K / padded_k, tiles / (waves * sms)


def _shapes(n=60, seed=0):
    """Hand-picked edges (1, one past a tile, not dividing the tile) and a seeded random grid."""
    edges = [(1, 1, 1), (1, 4096, 4096), (4096, 1, 1), (128, 128, 64), (129, 128, 65), (127, 129, 63),
             (2304, 2304, 2304), (1000, 3, 7), (256, 255, 257)]
    rng = np.random.default_rng(seed)
    rand = [tuple(int(x) for x in rng.integers(1, 5000, size=3)) for _ in range(n)]
    return edges + rand


@pytest.mark.parametrize("sms,tile", [(132, GPU_TILE), (108, (64, 256, 32)), (1, (128, 128, 64)), (7, (16, 8, 8))])
def test_gpu_tile_factors_match_gpu_gemm_and_a_reference(sms, tile):
    for M, N, K in _shapes():
        f = gpu_tile_factors(M, N, K, sms, *tile)
        g = gpu_gemm(M, N, K, sms, *tile)
        assert (f[0], f[1]) == (g["tiles"], g["waves"])
        assert (f[2], f[3], f[4]) == (g["eta_pad"], g["eta_inner"], g["eta_wave"])
        assert g["efficiency"] == f[2] * f[3] * f[4]
        ref = _naive_gpu(M, N, K, sms, *tile)
        assert f[:2] == ref[:2]
        np.testing.assert_allclose(f[2:], ref[2:], rtol=1e-15)


@pytest.mark.parametrize("mxu,n_mxu", [(128, 8), (256, 1), (128, 4), (8, 3)])
def test_tpu_fold_efficiency_equals_tpu_gemm(mxu, n_mxu):
    # tpu_gemm takes its fold length from the systolic model; tpu_fold_efficiency writes it out
    for M, N, K in _shapes(40, seed=1):
        assert tpu_fold_efficiency(M, N, K, mxu, n_mxu) == tpu_gemm(M, N, K, mxu, n_mxu)["efficiency"]


def test_gpu_gemm_tile_defaults_are_gpu_tile():
    defaults = inspect.signature(gpu_gemm).parameters
    assert tuple(defaults[k].default for k in ("tile_m", "tile_n", "tile_k")) == GPU_TILE
    assert gpu_gemm(1000, 3000, 500) == gpu_gemm(1000, 3000, 500, 132, *GPU_TILE)
