"""Exercises of notebook 02: questions, hints, and answers computed by the models (see accelbook.ui.exercises)."""

from __future__ import annotations

from accelbook.chip.systolic import closed_form, cycles
from accelbook.chip.tiling import gpu_gemm
from accelbook.ui.exercises.core import Exercise


def _gemv_util() -> float:
    return closed_form(1, 4096, 4096, 128, 128, "ws").overall_util * 100


def _waves_h100() -> float:
    return gpu_gemm(2304, 2304, 2304, sms=132)["waves"]


def _os_cycles() -> float:
    return cycles(8, 8, 8, 8, 8, "os")


EXERCISES: list[Exercise] = [
    Exercise("os-cycles-8", "02", "How many cycles does SCALE-Sim report for an 8×8×8 GEMM, output stationary, "
             "on an 8×8 array?", _os_cycles, 0.0,
             "One fold of T + R + C - 2 cycles; SCALE-Sim reports the index of the last cycle.", "cycles"),
    Exercise("gemv-util", "02", "PE utilisation (in %) of a 1×4096×4096 GEMV on one 128×128 weight-stationary "
             "array?", _gemv_util, 0.05,
             "Every weight tile (fold) costs 2R + T + C - 2 cycles but does only T = M = 1 row of MACs.", "%"),
    Exercise("waves-h100", "02", "How many waves of 128×128 tiles does a 2304×2304×2304 GEMM take on an H100 "
             "(132 SMs)?", _waves_h100, 0.0, "Count the tiles, ⌈M/128⌉·⌈N/128⌉, then divide by the SMs and round up.",
             "waves"),
    Exercise("predict-anim-cycles", "02", "Predict before moving the cycle slider: how many cycles does the animation's "
             "6×6×6 output-stationary GEMM last on the 4×4 array (the whole trace)?",
             lambda: closed_form(6, 6, 6, 4, 4, "os").trace_cycles, 0.0,
             "⌈6/4⌉ × ⌈6/4⌉ folds, each T + R + C - 2 cycles with T = K.", "cycles"),
    Exercise("predict-ws-util-k4", "02", "Predict before setting K = 4 on the dataflow dashboard (M = N = 64, 32×32 "
             "array): the overall PE utilisation (%) of weight-stationary?",
             lambda: closed_form(64, 64, 4, 32, 32, "ws").overall_util * 100, 0.1,
             "Weight-stationary maps K onto the array's rows: how many of the 32 rows hold a weight?", "%"),
    Exercise("predict-gpu-eff-2560", "02", "Predict before sweeping M on the shapes dashboard: the tile-and-wave "
             "efficiency (%) of a 2560×2560×2560 GEMM on an H100 (128×128 tiles, 132 SMs)?",
             lambda: gpu_gemm(2560, 2560, 2560, sms=132)["efficiency"] * 100, 0.03,
             "Tiles = ⌈M/128⌉·⌈N/128⌉; waves = ⌈tiles/132⌉; efficiency = tiles / (waves × 132).", "%"),
    Exercise("whatif-gemv-256", "02", "What if the weight-stationary array were 256×256 (as on TPU v6e) instead of "
             "128×128: PE utilisation (%) of the 1×4096×4096 GEMV?",
             lambda: closed_form(1, 4096, 4096, 256, 256, "ws").overall_util * 100, 0.05,
             "256 weight tiles of 2R + 1 + C - 2 cycles each; MACs ÷ (cycles × R·C).", "%", model_answer="256 folds "
             "of 2·256 + 1 + 256 - 2 = 767 cycles for 16.8 million MACs: 0.13 %, half the 128×128 array's 0.26 %. A "
             "bigger array holds four times the weights per fold but still multiplies each by a single row, and its "
             "fill and drain are twice as long. A larger MXU helps large batches and hurts decode, unless decode is "
             "batched to hundreds of rows."),
]
