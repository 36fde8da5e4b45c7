"""Facts quoted in the prose of notebooks/02_inside_the_chip.ipynb (keys ``nb02.*``); see :mod:`accelbook.ui.facts`."""

from __future__ import annotations

from accelbook.chip.systolic import SystolicResult, closed_form, fold_length, scalesim_comparison
from accelbook.chip.tiling import gpu_gemm
from accelbook.specs.catalogue import catalogue_cache
from accelbook.ui.exercises import EXERCISES
from accelbook.ui.facts import fact

_SUPERSCRIPT = str.maketrans("-0123456789", "⁻⁰¹²³⁴⁵⁶⁷⁸⁹")


def _sci(x: float, digits: int = 3) -> str:
    """``1.34 × 10⁸``: ``x`` with ``digits`` significant digits."""
    mantissa, exponent = f"{x:.{digits - 1}e}".split("e")
    return f"{mantissa} × 10{str(int(exponent)).translate(_SUPERSCRIPT)}"


def _expected(exercise_id: str) -> float:
    return EXERCISES[exercise_id].expected()


# -- the animation's default: a 6×6×6 output-stationary GEMM on a 4×4 array ------------------------------
@catalogue_cache(maxsize=None)
def _anim() -> SystolicResult:
    return closed_form(6, 6, 6, 4, 4, "os")


@fact("nb02.anim_cycles")
def anim_cycles() -> str:
    return f"{_expected('predict-anim-cycles'):.0f}"


@fact("nb02.anim_folds")
def anim_folds() -> str:
    return f"{_anim().n_folds}"


@fact("nb02.anim_fold_cycles")
def anim_fold_cycles() -> str:
    r = _anim()
    return f"{fold_length(r.rows, r.cols, 6, 'os')}"


@fact("nb02.anim_macs")
def anim_macs() -> str:
    return f"{_anim().macs:,}"


@fact("nb02.anim_mapping_pct")
def anim_mapping_pct() -> str:
    return f"{_anim().mapping_efficiency * 100:.0f}"


@fact("nb02.anim_busy_pct")
def anim_busy_pct() -> str:
    """Busy PE-cycles over all PE-cycles of the trace."""
    r = _anim()
    return f"{r.busy_pe_cycles / (r.trace_cycles * r.rows * r.cols) * 100:.0f}"


# -- SRAM traffic: a 512³ GEMM, weight-stationary, on a 128×128 array -------------------------------------
@catalogue_cache(maxsize=None)
def _ws(M: int, N: int, K: int, R: int, C: int) -> SystolicResult:
    return closed_form(M, N, K, R, C, "ws")


def _ws512() -> SystolicResult:
    return _ws(512, 512, 512, 128, 128)


def _accesses(r: SystolicResult) -> int:
    return r.sram_ifmap_reads + r.sram_filter_reads + r.sram_ofmap_writes


@fact("nb02.ws512_macs")
def ws512_macs() -> str:
    return _sci(_ws512().macs)


@fact("nb02.ws512_reads_a_m")
def ws512_reads_a_m() -> str:
    return f"{_ws512().sram_ifmap_reads / 1e6:.2f}"


@fact("nb02.ws512_reads_b_m")
def ws512_reads_b_m() -> str:
    return f"{_ws512().sram_filter_reads / 1e6:.2f}"


@fact("nb02.ws512_writes_c_m")
def ws512_writes_c_m() -> str:
    return f"{_ws512().sram_ofmap_writes / 1e6:.2f}"


@fact("nb02.ws512_accesses_m")
def ws512_accesses_m() -> str:
    return f"{_accesses(_ws512()) / 1e6:.1f}"


@fact("nb02.ws512_per_mac")
def ws512_per_mac() -> str:
    return f"{_accesses(_ws512()) / _ws512().macs:.3f}"


@fact("nb02.ws512_saving")
def ws512_saving() -> str:
    """How many times fewer SRAM accesses than 2 per MAC."""
    return f"{2 * _ws512().macs / _accesses(_ws512()):.0f}"


@fact("nb02.ws512_util_pct")
def ws512_util_pct() -> str:
    return f"{_ws512().overall_util * 100:.0f}"


@fact("nb02.ws512_folds")
def ws512_folds() -> str:
    return f"{_ws512().n_folds}"


@fact("nb02.ws128_overhead_cycles")
def ws128_overhead_cycles() -> str:
    """Preload and drain of one weight-stationary fold on a 128×128 array: the fold less its streamed rows."""
    return f"{fold_length(128, 128, 0, 'ws')}"


@fact("nb02.ws256_overhead_cycles")
def ws256_overhead_cycles() -> str:
    return f"{fold_length(256, 256, 0, 'ws')}"


@fact("nb02.ws256_512_util_pct")
def ws256_512_util_pct() -> str:
    return f"{_ws(512, 512, 512, 256, 256).overall_util * 100:.0f}"


# -- the dataflow dashboard's K = 4 (M = N = 64 on a 32×32 array) -----------------------------------------
@fact("nb02.k4_ws_util_pct")
def k4_ws_util_pct() -> str:
    return f"{_expected('predict-ws-util-k4'):.1f}"


@fact("nb02.k4_ws_mapping_pct")
def k4_ws_mapping_pct() -> str:
    return f"{_ws(64, 64, 4, 32, 32).mapping_efficiency * 100:.1f}"


@fact("nb02.k4_ws_folds")
def k4_ws_folds() -> str:
    return f"{_ws(64, 64, 4, 32, 32).n_folds}"


@fact("nb02.k4_ws_fold_cycles")
def k4_ws_fold_cycles() -> str:
    return f"{fold_length(32, 32, 64, 'ws')}"


@fact("nb02.k4_os_util_pct")
def k4_os_util_pct() -> str:
    return f"{closed_form(64, 64, 4, 32, 32, 'os').overall_util * 100:.1f}"


# -- SCALE-Sim's recorded run times (data/validation/scalesim_v2_calc.csv) --------------------------------
@catalogue_cache(maxsize=None)
def _scalesim_speed():
    """Cycles per second SCALE-Sim simulated on the cases that took it a second or more."""
    cmp = scalesim_comparison()
    slow = cmp[cmp["scalesim_seconds"] >= 1.0]
    return slow["scalesim_cycles"] / slow["scalesim_seconds"]


@fact("nb02.scalesim_slow_cases")
def scalesim_slow_cases() -> str:
    return f"{len(_scalesim_speed())}"


@fact("nb02.scalesim_median_cyc_s")
def scalesim_median_cyc_s() -> str:
    return f"{round(_scalesim_speed().median(), -2):,.0f}"


@fact("nb02.scalesim_min_cyc_s")
def scalesim_min_cyc_s() -> str:
    return f"{round(_scalesim_speed().min(), -2):,.0f}"


@fact("nb02.scalesim_max_cyc_s")
def scalesim_max_cyc_s() -> str:
    return f"{round(_scalesim_speed().max(), -2):,.0f}"


# -- tiles and waves on an H100 (128×128 tiles, 132 SMs) --------------------------------------------------
@catalogue_cache(maxsize=None)
def _gpu(n: int) -> dict:
    return gpu_gemm(n, n, n, sms=132)


def _last_wave_pct(n: int) -> float:
    g = _gpu(n)
    return (g["tiles"] - (g["waves"] - 1) * 132) / 132 * 100


def _register_gpu(n: int) -> None:
    """nb02.gpu<n>_tiles, _waves, _eff_pct (and _last_wave_pct) of an n×n×n GEMM."""
    fact(f"nb02.gpu{n}_tiles")(lambda: f"{_gpu(n)['tiles']:,}")
    fact(f"nb02.gpu{n}_waves")(lambda: f"{_gpu(n)['waves']}")
    fact(f"nb02.gpu{n}_eff_pct")(lambda: f"{_gpu(n)['efficiency'] * 100:.{1 if n == 2560 else 0}f}")
    if n != 2560:
        fact(f"nb02.gpu{n}_last_wave_pct")(lambda: f"{_last_wave_pct(n):.0f}")


for _n in (2048, 2304, 2560):
    _register_gpu(_n)
del _n


@fact("nb02.gpu2560_last_wave_tiles")
def gpu2560_last_wave_tiles() -> str:
    g = _gpu(2560)
    return f"{g['tiles'] - (g['waves'] - 1) * 132}"


@fact("nb02.gpu2304_tiles_per_sm")
def gpu2304_tiles_per_sm() -> str:
    return f"{_gpu(2304)['tiles'] / 132:.2f}"


# -- decode: a 1×4096×4096 GEMV, weight-stationary ---------------------------------------------------------
@fact("nb02.gemv_fold_cycles")
def gemv_fold_cycles() -> str:
    return f"{fold_length(128, 128, 1, 'ws')}"


@fact("nb02.gemv_util_pct")
def gemv_util_pct() -> str:
    return f"{_expected('gemv-util'):.2f}"


@fact("nb02.gemv_folds")
def gemv_folds() -> str:
    return f"{_ws(1, 4096, 4096, 128, 128).n_folds:,}"


@fact("nb02.gemv_total_cycles")
def gemv_total_cycles() -> str:
    return f"{_ws(1, 4096, 4096, 128, 128).total_cycles:,}"


@fact("nb02.gemv_macs")
def gemv_macs() -> str:
    return f"{_ws(1, 4096, 4096, 128, 128).macs:,}"


@fact("nb02.gemv256_folds")
def gemv256_folds() -> str:
    return f"{_ws(1, 4096, 4096, 256, 256).n_folds:,}"


@fact("nb02.gemv256_fold_cycles")
def gemv256_fold_cycles() -> str:
    return f"{fold_length(256, 256, 1, 'ws')}"


@fact("nb02.gemv256_total_cycles")
def gemv256_total_cycles() -> str:
    return f"{_ws(1, 4096, 4096, 256, 256).total_cycles:,}"


@fact("nb02.gemv256_util_pct")
def gemv256_util_pct() -> str:
    return f"{_expected('whatif-gemv-256'):.2f}"


# -- answer 1: an 8×8×8 GEMM, output-stationary, on an 8×8 array -------------------------------------------
@fact("nb02.os8_fold_cycles")
def os8_fold_cycles() -> str:
    return f"{fold_length(8, 8, 8, 'os')}"


@fact("nb02.os8_scalesim_cycles")
def os8_scalesim_cycles() -> str:
    return f"{_expected('os-cycles-8'):.0f}"
