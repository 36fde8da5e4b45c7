"""Plain-Python references for :mod:`accelbook.costs`, written from its docstrings with the checked,
uncompiled functions of :mod:`accelbook.chip.tiling` (not from the kernels' code)."""

from __future__ import annotations

import math

from accelbook.chip.tiling import GPU_TILE, gpu_gemm, tpu_gemm


def gemm_eta_reference(M, N, K, is_tpu, sms, mxu, n_mxu):
    """:func:`accelbook.costs.gemm.gemm_shape_efficiency` by its docstring: dimensions rounded up (at least
    1); TPU, the systolic model's folds (``tiling.tpu_gemm``); GPU, the smallest power-of-two tile of at
    least 16 rows covering M (at most 128), the better of plain tiling and split-K (``tiling.gpu_gemm``)."""
    M, N, K = (max(1, math.ceil(x)) for x in (M, N, K))
    if is_tpu:
        return tpu_gemm(M, N, K, int(mxu), int(n_mxu))["efficiency"]
    sms = int(sms)
    tm = min(GPU_TILE[0], max(16, 1 << (M - 1).bit_length()))
    plain = gpu_gemm(M, N, K, sms, tile_m=tm)
    s = min(sms // plain["tiles"], K // GPU_TILE[2])
    if s < 2:
        return plain["efficiency"]
    return max(plain["efficiency"], gpu_gemm(M, N * s, math.ceil(K / s), sms, tile_m=tm)["efficiency"])
