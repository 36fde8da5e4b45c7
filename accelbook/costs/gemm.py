"""How much of peak one GEMM's shape lets a chip reach: ``η_shape`` of ``C[M×N] = A[M×K]·B[K×N]``.

One model, used by the training kernel (``training.compute.gemm_time``, ``lm_head_time``) and by the
inference model (``inference.rates.pass_shape_efficiency``, FLOP-weighted over a forward pass):

- GPU: output tiles of ``t_m × 128`` stepping through K in slices of 64 (:data:`GPU_TILE`), ``t_m`` the
  smallest power of two from 16 to 128 that covers ``M``; ``η = η_tile·η_k·η_wave`` (:func:`gpu_tile_factors`:
  ``⌈M/t_m⌉·⌈N/t_n⌉`` tiles on ``S`` SMs in ``waves = ⌈tiles/S⌉``, ``η_tile`` the padding of edge tiles,
  ``η_k`` of the last K slice, ``η_wave = tiles/(waves·S)``), the better of the plain tiling and split-K;
- TPU: weight-stationary MXU folds (:func:`tpu_fold_efficiency`).

:func:`gemm_k_efficiency` (``η_K``, a GPU tile's fixed fill and epilogue against the length of its K loop, relative
to the K the chip's efficiency was measured at; ``data/gemm_k_overhead.toml``) is applied by the training kernel
only: inference's prefill GEMMs keep ``η_shape`` alone.

The tile and fold formulas are :mod:`accelbook.chip.tiling`'s (which explains them, with checked entry
points ``gpu_gemm`` and ``tpu_gemm``); they live here, plain ``@njit`` arithmetic with no imports, so that
the chip layer imports this package and not the other way round.

Sources: CUTLASS's tile shapes and split-K (``cutlass/gemm/device/gemm_splitk_parallel.h``); cuBLAS's
heuristics pick short tiles and split-K for few rows; NVIDIA's "Matrix Multiplication Background" guide
(tile and wave quantisation).
"""

from __future__ import annotations

import math

from numba import njit

#: a thread block's output tile and K slice when none is given (CUTLASS's common 128×128×64 on H100)
GPU_TILE = (128, 128, 64)
#: SMs assumed for a GPU that publishes none: H100 SXM's 132, the most common training GPU of the catalogue
DEFAULT_SMS = 132
#: MXU side assumed for a TPU that publishes none: 128, the MXU of TPU v2 to v5p (v6e and later publish 256)
DEFAULT_MXU = 128
#: MXUs per chip assumed for a TPU that publishes none: 4, one TensorCore's (v5e; v4 and v5p have 2 × 4), so
#: an unpublished count is not taken for more parallel units than a single core has (v6e, TPU7, TPU 8 now)
DEFAULT_N_MXU = 4
#: the fewest rows of a GPU tile: the tensor-core MMA instruction's 16 (libraries instantiate 16-, 32-, 64-row tiles)
GPU_TILE_M_MIN = 16


@njit(cache=True)
def gpu_tile_factors(M, N, K, sms, tile_m, tile_n, tile_k):
    """(tiles, waves, η_tile, η_k, η_wave) of one GEMM on ``sms`` SMs with ``tile_m × tile_n`` output tiles
    and K slices of ``tile_k`` (:mod:`accelbook.chip.tiling`'s formulas):
    ``η_tile = M·N / (⌈M/t_m⌉·t_m·⌈N/t_n⌉·t_n)``, ``η_k = K / (⌈K/t_k⌉·t_k)``, ``η_wave = tiles / (waves·sms)``.
    2048³ on 132 SMs, 128×128×64: 256 tiles, 2 waves, ``η_wave = 256/264 = 0.970``.

    Plain numbers in, plain numbers out, so the training kernel calls it too (``@njit``; from Python
    it runs compiled). No checks: :func:`accelbook.chip.tiling.gpu_gemm` is the checked entry point.
    """
    tm = math.ceil(M / tile_m)
    tn = math.ceil(N / tile_n)
    tiles = tm * tn
    waves = math.ceil(tiles / sms)
    eta_tile = M * N / (tm * tile_m * tn * tile_n)
    eta_k = K / (math.ceil(K / tile_k) * tile_k)
    return tiles, waves, eta_tile, eta_k, tiles / (waves * sms)


@njit(cache=True)
def tpu_fold_efficiency(M, N, K, mxu, n_mxu):
    """Share of ``n_mxu`` weight-stationary ``mxu × mxu`` units' cycles doing useful MACs:
    M·N·K / (L · waves · mxu² · n_mxu), with ``⌈K/mxu⌉·⌈N/mxu⌉`` folds of ``L = 3·mxu + M - 2``
    cycles (preload, stream, drain: :func:`accelbook.chip.systolic.fold_length`) in
    ``waves = ⌈folds / n_mxu⌉``. 128 rows through 256×256 weights on four 128×128 MXUs: 4 folds of 510 cycles
    in one wave, ``128/510 = 0.251``. Tests check it against :func:`accelbook.chip.tiling.tpu_gemm`, which
    asks the systolic model.
    """
    folds = math.ceil(K / mxu) * math.ceil(N / mxu)
    fold_cycles = 2 * mxu + M + mxu - 2
    waves = math.ceil(folds / n_mxu)
    return M * N * K / (fold_cycles * waves * mxu * mxu * n_mxu)


def chip_gemm_units(chip) -> tuple[bool, int, int, int]:
    """``(is_tpu, sms, mxu, n_mxu)`` of a :class:`~accelbook.specs.chips.Chip` for :func:`gemm_shape_efficiency`:
    its published SM count, MXU side and MXU count, or :data:`DEFAULT_SMS`, :data:`DEFAULT_MXU`,
    :data:`DEFAULT_N_MXU` where it publishes none. H100: ``(False, 132, 128, 4)``."""
    return (chip.kind == "tpu", chip.compute_units or DEFAULT_SMS, chip.mxu_rows or DEFAULT_MXU,
            chip.mxu_count or DEFAULT_N_MXU)


@njit(cache=True)
def gemm_shape_efficiency(M, N, K, is_tpu, sms, mxu, n_mxu):
    """``η_shape`` of one ``[M×K]·[K×N]`` GEMM: the share of peak its shape leaves (in (0, 1], no unit).

    ``M``, ``N``, ``K`` are rounded up to whole numbers, at least 1. TPU (``is_tpu``):
    ``tpu_fold_efficiency(M, N, K, mxu, n_mxu)``. GPU of ``sms`` SMs: tiles of ``tm × 128 × 64`` with
    ``tm`` the smallest power of two from 16 to 128 with ``tm >= M`` (a decode step's few rows are not
    padded to 128); ``plain = η_tile·η_k·η_wave`` of :func:`gpu_tile_factors`. When
    the tiles leave SMs idle, split-K cuts K into ``s = min(⌊sms/tiles⌋, ⌊K/64⌋)`` slices, ``s`` times the
    tiles, the tiling of ``[M×⌈K/s⌉]·[⌈K/s⌉×N·s]`` (the slices' sums are not charged); ``η`` is
    ``max(plain, split)`` when ``s >= 2``, else ``plain``.

    Worked number (H100, 132 SMs): ``M, N, K = 128, 1280, 8192`` is ``1 × 10`` tiles of 128 rows, one
    wave: ``plain = 10/132 = 0.0758``; ``s = min(⌊132/10⌋, 128) = 13`` slices of ``⌈8192/13⌉ = 631``:
    ``[128×631]·[631×16640]``, 130 tiles, ``η_k = 631/640``, ``η_wave = 130/132``, so
    ``η = 0.9859·0.9848 = 0.9710``. ``2048³`` is 256 tiles in 2 waves: ``256/264 = 0.9697``.

    ``@njit``: the training kernel calls it in its loop, the inference model on arrays of shapes; from
    Python it runs compiled. No checks (plain scalars in, one float out).
    """
    M = max(1.0, math.ceil(M))
    N = max(1.0, math.ceil(N))
    K = max(1.0, math.ceil(K))
    if is_tpu:
        return tpu_fold_efficiency(M, N, K, mxu, n_mxu)
    tm = GPU_TILE_M_MIN
    while tm < M and tm < GPU_TILE[0]:
        tm *= 2
    tiles, _, eta_tile, eta_k, eta_wave = gpu_tile_factors(M, N, K, sms, tm, GPU_TILE[1], GPU_TILE[2])
    plain = eta_tile * eta_k * eta_wave
    s = min(sms // tiles, K // GPU_TILE[2])
    if s < 2:
        return plain
    # float(): the same whole number as the first call's K, so both calls share one compiled gpu_tile_factors
    _, _, eta_tile, eta_k, eta_wave = gpu_tile_factors(M, N * s, float(math.ceil(K / s)), sms, tm, GPU_TILE[1],
                                                       GPU_TILE[2])
    return max(plain, eta_tile * eta_k * eta_wave)


@njit(cache=True)
def gemm_k_efficiency(K, k0, k_ref):
    """``η_K`` of a GPU GEMM with reduction length ``K`` (elements): each output tile pays a fixed fill and
    epilogue worth ``k0`` elements of K, so it does ``K`` slices of work in the time of ``K + k0``; taken
    relative to ``k_ref``, the K of the shape the chip's efficiency was measured at, and at most 1:
    ``η_K = min(1, (K / (K + k0)) / (k_ref / (k_ref + k0)))``. ``k0 = 0`` gives 1 (no overhead: TPUs, whose
    fold model charges fill and drain itself); ``k_ref = 0`` (no measured shape) takes the overhead as it is,
    ``K / (K + k0)``. No unit; ``K`` is rounded up to a whole number, at least 1.

    Worked number (H100 bf16: ``k0 = 250``, MAMF's best K ``k_ref = 13312``): ``K = 1024`` (Llama 70B's
    out-projection at TP 8) gives ``(1024/1274) / (13312/13562) = 0.8038 / 0.9816 = 0.8189``; ``K = 16384``
    gives 1.
    """
    if k0 <= 0.0:
        return 1.0
    K = max(1.0, math.ceil(K))
    eta = K / (K + k0)
    if k_ref > 0.0:
        eta /= k_ref / (k_ref + k0)
    return min(1.0, eta)
