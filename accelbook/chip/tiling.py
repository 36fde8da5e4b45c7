"""Where a GEMM's shape wastes peak: GPU thread-block tiles and waves, TPU MXU padding and folds.

GPU. A GEMM ``C[M×N] = A[M×K]·B[K×N]`` is cut into output tiles of ``t_m × t_n`` (one thread
block each, stepping through K in ``t_k`` slices); ``⌈M/t_m⌉·⌈N/t_n⌉`` tiles run on ``S`` SMs in
``waves = ⌈tiles / S⌉``. Three quantisations multiply:

    η_tile = M·N / (⌈M/t_m⌉·t_m · ⌈N/t_n⌉·t_n)        (padding of partial edge tiles)
    η_k    = K / (⌈K/t_k⌉·t_k)                         (padding of the last K slice)
    η_wave = tiles / (waves · S)                        (idle SMs in the last wave)

Worked number: 2048×2048×2048 on an H100 (132 SMs) with 128×128 tiles: 256 tiles, 2 waves,
η_wave = 256 / 264 = 97 %; 2304×2304: 324 tiles, 3 waves, 324 / 396 = 82 %.

TPU. A matrix unit of ``R × C`` (128×128 on v5p, 256×256 on v6e) holds a ``K``-by-``N`` weight tile
(weight stationary) and streams the ``M`` rows of A through it. η_pad = K·N / (⌈K/R⌉·R·⌈N/C⌉·C) is
the padding loss; the full cycle count, fill and drain included, comes from the systolic model
(:func:`accelbook.chip.systolic.closed_form`), spread over the chip's ``n_mxu`` units in waves of folds.

The ``@njit`` formulas (:func:`gpu_tile_factors`, ``tpu_fold_efficiency``) and :data:`GPU_TILE` live in
:mod:`accelbook.costs.gemm`, beside the one GEMM efficiency the training and inference models take from
them; this module's :func:`gpu_gemm` and :func:`tpu_gemm` are their checked, explained entry points.

These are shape losses only: a lower bound on waste. Memory bandwidth (the roofline) and
instruction overheads come on top; notebook 02 says when each dominates.
"""

from __future__ import annotations

import math

import pandas as pd

from accelbook.checks import whole
from accelbook.costs.gemm import GPU_TILE, gpu_tile_factors

from .systolic import closed_form


def gpu_gemm(M: int, N: int, K: int, sms: int = 132, tile_m: int = GPU_TILE[0], tile_n: int = GPU_TILE[1],
             tile_k: int = GPU_TILE[2]) -> dict:
    """Tile, K-slice and wave quantisation of a GEMM on a GPU; ``efficiency`` is their product.

    The tile defaults are :data:`GPU_TILE`; the formulas are :func:`gpu_tile_factors`.

    Returns arch, tiles, waves, eta_pad (η_tile), eta_inner (η_k), eta_wave, efficiency.
    """
    for name, v in (("M", M), ("N", N), ("K", K), ("sms", sms), ("tile_m", tile_m), ("tile_n", tile_n),
                    ("tile_k", tile_k)):
        whole(name, v)
    tiles, waves, eta_tile, eta_k, eta_wave = gpu_tile_factors(M, N, K, sms, tile_m, tile_n, tile_k)
    return {"arch": "GPU", "tiles": tiles, "waves": waves, "eta_pad": eta_tile, "eta_inner": eta_k,
            "eta_wave": eta_wave, "efficiency": eta_tile * eta_k * eta_wave}


def tpu_gemm(M: int, N: int, K: int, mxu: int = 128, n_mxu: int = 8) -> dict:
    """A GEMM on ``n_mxu`` weight-stationary ``mxu × mxu`` units: padding, pipeline and wave losses.

    ``efficiency`` = M·N·K / (cycles_per_fold · waves · mxu² · n_mxu), where each unit takes folds in turn
    (``waves = ⌈folds / n_mxu⌉``) and a fold lasts ``2R + M + C - 2`` cycles (preload, stream, drain),
    from the systolic model. ``eta_pad`` is the padding share alone, ``eta_inner`` the share of a
    fold spent streaming (M / fold cycles), ``eta_wave`` the busy share of the last wave of folds.
    """
    for name, v in (("M", M), ("N", N), ("K", K), ("mxu", mxu), ("n_mxu", n_mxu)):
        whole(name, v)
    r = closed_form(M, N, K, mxu, mxu, "ws")
    fold_cycles = r.trace_cycles // r.n_folds
    waves = math.ceil(r.n_folds / n_mxu)
    eta_pad = K * N / (math.ceil(K / mxu) * mxu * math.ceil(N / mxu) * mxu)
    eta_pipe = M / fold_cycles                       # share of a fold's cycles spent streaming rows
    eta_wave = r.n_folds / (waves * n_mxu)
    return {"arch": "TPU", "tiles": r.n_folds, "waves": waves, "eta_pad": eta_pad, "eta_inner": eta_pipe,
            "eta_wave": eta_wave, "efficiency": M * N * K / (fold_cycles * waves * mxu * mxu * n_mxu)}


def shape_sweep(dim: str, values, M: int, N: int, K: int, sms: int = 132, tile: int = GPU_TILE[0],
                mxu: int = 128, n_mxu: int = 8) -> pd.DataFrame:
    """Efficiency of GPU and TPU as one dimension (``"M"``, ``"N"`` or ``"K"``) sweeps ``values``
    (GPU: square ``tile × tile`` output tiles, the K slice of :data:`GPU_TILE`)."""
    if dim not in ("M", "N", "K"):
        raise ValueError(f"dim must be 'M', 'N' or 'K', got {dim!r}")
    rows = []
    for v in values:
        shape = {"M": M, "N": N, "K": K, dim: int(v)}
        g = gpu_gemm(shape["M"], shape["N"], shape["K"], sms, tile, tile)
        t = tpu_gemm(shape["M"], shape["N"], shape["K"], mxu, n_mxu)
        for res in (g, t):
            rows.append({dim: int(v), "arch": res["arch"], "efficiency": res["efficiency"],
                         "eta_pad": res["eta_pad"], "eta_inner": res["eta_inner"], "eta_wave": res["eta_wave"]})
    return pd.DataFrame(rows)
