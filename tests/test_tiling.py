"""GPU tile/wave quantisation and TPU MXU padding, by hand."""

from __future__ import annotations

import pytest

from accelbook.chip.tiling import gpu_gemm, shape_sweep, tpu_gemm


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
